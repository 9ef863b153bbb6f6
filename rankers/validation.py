"""Input validation: the one place where user data is checked and coerced.

Every function here returns new objects (or read-only views) and never writes into
what the caller passed, so no ranker can modify a user's array or frame in place.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from rankers.exceptions import (
    FewSamplesWarning,
    InvalidInputError,
    InvalidParameterError,
    TargetKindWarning,
)

__all__ = [
    "MIN_CLASS_SAMPLES",
    "MIN_SAMPLES",
    "check_X",
    "check_finite",
    "check_k",
    "check_ks",
    "check_n_jobs",
    "check_seed",
    "check_y",
    "column_mask",
    "default_feature_names",
    "feature_names_of",
    "target_task",
    "warn_few_samples",
    "warn_labels_as_quantity",
]

_MAX_LISTED = 10

#: below this many samples a ranking is mostly noise: :class:`FewSamplesWarning`
MIN_SAMPLES = 10
#: below this many samples in a class, what a supervised ranker learns about that class
#: is mostly noise (ReliefF, for one, looks for 10 near hits per class)
MIN_CLASS_SAMPLES = 5


def _list(names: Sequence, quote: bool = True) -> str:
    names = [str(n) for n in names]
    head = ", ".join(repr(n) if quote else n for n in names[:_MAX_LISTED])
    more = len(names) - _MAX_LISTED
    return head + (f" and {more} more" if more > 0 else "")


def default_feature_names(n_features: int) -> np.ndarray:
    """Names given to features of an array without column names: ``x0``, ``x1``, ..."""
    return np.asarray([f"x{i}" for i in range(n_features)], dtype=object)


def feature_names_of(X) -> np.ndarray | None:
    """Column names of ``X`` as an object array of str, or None when ``X`` has none.

    Raises
    ------
    InvalidInputError
        When the columns are not all strings (scikit-learn's rule) or repeat.
    """
    columns = getattr(X, "columns", None)
    if columns is None:
        return None
    names = list(columns)
    if not all(isinstance(n, str) for n in names):
        if all(isinstance(n, (int, np.integer)) for n in names):
            return None  # a frame with default integer columns has no names
        bad = [n for n in names if not isinstance(n, str)]
        raise InvalidInputError(f"column names must all be strings; these are not: {_list(bad)}")
    dup = pd.Index(names)
    if dup.has_duplicates:
        raise InvalidInputError(
            f"column names repeat: {_list(dup[dup.duplicated()].unique())}; "
            "every feature needs its own name"
        )
    return np.asarray(names, dtype=object)


def _column_labels(X, names: np.ndarray | None, idx) -> list[str]:
    if names is not None:
        return [str(names[i]) for i in idx]
    return [f"x{i}" for i in idx]


def _frame_to_array(X: pd.DataFrame, names) -> np.ndarray:
    dtypes = list(X.dtypes)  # decided once per distinct dtype: a wide frame has one or two
    numeric = {
        d: pd.api.types.is_numeric_dtype(d) or pd.api.types.is_bool_dtype(d) for d in set(dtypes)
    }
    non_numeric = [c for c, d in zip(X.columns, dtypes, strict=True) if not numeric[d]]
    if non_numeric:
        raise InvalidInputError(
            f"non-numeric columns: {_list(non_numeric)}; encode them as numbers "
            "(e.g. one-hot or ordinal codes) or drop them before ranking"
        )
    # pandas nullable dtypes turn pd.NA into NaN here, which the NaN check reports
    return X.to_numpy(dtype=np.float64, na_value=np.nan)


def _array_to_float(X: np.ndarray, names) -> np.ndarray:
    if X.dtype.kind in "biuf":
        return np.asarray(X, dtype=np.float64)
    if X.dtype.kind == "c":
        raise InvalidInputError("Complex data not supported: feature rankers need real numbers")
    bad = []
    for j in range(X.shape[1]):
        try:
            np.asarray(X[:, j], dtype=np.float64)
        except (TypeError, ValueError):
            bad.append(j)
    if bad:
        raise InvalidInputError(
            f"non-numeric columns: {_list(_column_labels(X, names, bad))}; encode them as "
            "numbers or drop them before ranking"
        )
    return np.asarray(X, dtype=np.float64)


def check_X(
    X,
    *,
    accepts_sparse: bool = False,
    min_samples: int = 2,
    min_features: int = 2,
    what: str = "X",
    finite: bool = True,
):
    """Validate a data matrix and return it as float64 with its feature names.

    Parameters
    ----------
    X : array-like, pandas DataFrame or scipy sparse matrix of shape (n_samples, n_features)
        The data. Never modified.
    accepts_sparse : bool, default=False
        Keep sparse input sparse (CSR). Otherwise sparse input is converted to a dense
        array with a warning.
    min_samples, min_features : int, default=2
        Smallest accepted shape.
    what : str, default="X"
        How the data is called in error messages.
    finite : bool, default=True
        Check that every value is finite. A caller that computes the columns' extremes
        anyway (NaN and inf reach them) may pass False and call :func:`check_finite`
        when they are not finite: one pass over the data less.

    Returns
    -------
    X : ndarray of float64 (read-only) or scipy.sparse.csr_matrix
        Never the caller's object: a new array or a read-only view of it.
    names : ndarray of str or None
        Column names when ``X`` had string column names.

    Raises
    ------
    InvalidInputError
        For non-numeric columns, NaN or infinite values (naming the columns), wrong
        dimensionality, or fewer than ``min_samples`` samples / ``min_features`` features.
    """
    import scipy.sparse as sp  # imported with the first X checked, not with the package

    if X is None:
        raise InvalidInputError(f"{what} is None; pass a 2-D array or DataFrame")
    names = feature_names_of(X)
    if sp.issparse(X):
        if accepts_sparse:
            Xc = _csr_float64(X)
            values = Xc.data
        else:
            warnings.warn(
                f"{what} is sparse and this ranker works on dense data; converting "
                f"{X.shape[0]}x{X.shape[1]} to a dense array",
                UserWarning,
                stacklevel=3,
            )
            Xc = np.asarray(X.toarray(), dtype=np.float64)
            values = Xc
    else:
        if isinstance(X, pd.Series):
            raise InvalidInputError(
                f"{what} is a pandas Series (one column); pass a DataFrame with "
                f"at least {min_features} feature columns"
            )
        if isinstance(X, pd.DataFrame):
            Xc = _frame_to_array(X, names)
        else:
            arr = np.asarray(X)
            if arr.ndim != 2:
                raise InvalidInputError(
                    f"{what} must be 2-D (n_samples, n_features); got an array with "
                    f"{arr.ndim} dimension(s) and shape {arr.shape}. Reshape a single "
                    "feature with X.reshape(-1, 1), a single sample with X.reshape(1, -1)"
                )
            Xc = _array_to_float(arr, names)
        values = Xc
    if Xc.ndim != 2:
        raise InvalidInputError(f"{what} must be 2-D; got shape {Xc.shape}")
    m, n = Xc.shape
    if m < min_samples:
        raise InvalidInputError(
            f"{what} has {m} sample(s) (shape={Xc.shape}) while a minimum of {min_samples} "
            "is required to rank features"
        )
    if n < min_features:
        raise InvalidInputError(
            f"{what} has {n} feature(s) (shape={Xc.shape}) while a minimum of {min_features} "
            "is required to rank features"
        )
    # one reduction says the values are all finite (a NaN or inf makes the sum non-finite;
    # an overflowing sum of finite values only sends it to the exact check)
    if finite and not np.isfinite(values.sum()):
        check_finite(Xc, X, names, what)
    if not sp.issparse(Xc):
        # a read-only view: no ranker can write into the caller's memory by accident
        Xc = Xc.view()
        Xc.flags.writeable = False
    return Xc, names


def check_finite(Xc, X=None, names=None, what: str = "X") -> None:
    """Raise :class:`InvalidInputError` naming the columns of ``Xc`` (as :func:`check_X`
    returned it; ``X`` as the caller gave it, for the names) holding NaN or inf."""
    import scipy.sparse as sp

    if sp.issparse(Xc):
        bad_cols = np.unique(Xc.indices[~np.isfinite(Xc.data)])
    else:
        bad_cols = np.flatnonzero(~np.isfinite(Xc).all(axis=0))
    if bad_cols.size == 0:
        return
    labels = _list(_column_labels(Xc if X is None else X, names, bad_cols))
    raise InvalidInputError(
        f"{what} has NaN or infinite values in columns {labels}; "
        "impute or drop them first (e.g. sklearn.impute.SimpleImputer)"
    )


def check_y(
    y,
    n_samples: int,
    *,
    kind: str = "classification",
    what: str = "y",
    ranker: str | None = None,
) -> np.ndarray:
    """Validate a target vector for a task, refusing targets of the wrong kind.

    Parameters
    ----------
    y : array-like or pandas Series of shape (n_samples,)
        Never modified.
    n_samples : int
        Number of rows of ``X``; ``y`` must match it.
    kind : {"classification", "regression"}
        Classification targets are class labels of any hashable type (at least 2
        classes), returned as integer codes 0..C-1. Regression targets are numbers (any
        numeric target counts as a quantity, 0/1 and integer counts included).
    what : str, default="y"
        How the target is called in messages.
    ranker : str, optional
        Registry name of the ranker asking; when given, a refusal lists the registered
        rankers that take the target found (from :func:`rankers.available`).

    Returns
    -------
    ndarray
        int64 class codes for classification, float64 for regression.

    Raises
    ------
    InvalidInputError
        For a target of the wrong shape, length, or with missing values, and for one of
        the wrong kind, naming the kind found by
        :func:`sklearn.utils.multiclass.type_of_target`: a continuous target given for
        classification (it would make one class per distinct value); a multiclass
        target where most samples are the only one of their class (a quantity or an
        identifier, not class labels); non-numeric
        labels given for regression; a multi-output target (no ranker takes one).

    Warns
    -----
    FewSamplesWarning
        When there are fewer than :data:`MIN_SAMPLES` samples, or (classification) a
        class has fewer than :data:`MIN_CLASS_SAMPLES`: see :func:`warn_few_samples`.
    """
    if y is None:
        raise InvalidInputError(f"{what} is required: this ranker is supervised")
    if isinstance(y, pd.DataFrame):
        if y.shape[1] != 1:
            raise InvalidInputError(
                f"{what} must be one column; got {y.shape[1]} columns "
                f"(type_of_target: {_type_of(y.to_numpy())!r}). {_NO_MULTIOUTPUT}"
            )
        y = y.iloc[:, 0]
    arr = np.asarray(y)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.ravel()
    if arr.ndim != 1:
        found = f" (type_of_target: {_type_of(arr)!r})" if arr.ndim == 2 else ""
        raise InvalidInputError(
            f"{what} must be 1-D; got shape {arr.shape}{found}. {_NO_MULTIOUTPUT}"
        )
    if arr.shape[0] != n_samples:
        raise InvalidInputError(f"{what} has {arr.shape[0]} values but X has {n_samples} samples")
    # the ranker asking, or (e.g. an evaluation's estimator) just the task
    who = ranker or f"a {kind} target"
    if kind == "regression":
        try:
            out = np.asarray(arr, dtype=np.float64)
        except (TypeError, ValueError):
            found = _type_of(arr)
            raise InvalidInputError(
                f"{what} must be numeric for {who}; it holds labels such as "
                f"{_first_label(arr)!r} (type_of_target: {found!r})."
                + _fitting(ranker, "class labels", "classification", numeric=False)
            ) from None
        if not np.isfinite(out).all():
            rows = _list(np.flatnonzero(~np.isfinite(out)), quote=False)
            raise InvalidInputError(f"{what} has NaN or infinite values at rows {rows}")
        warn_few_samples(n_samples)
        return out
    if kind != "classification":
        raise ValueError(f"kind must be 'classification' or 'regression', got {kind!r}")
    missing = pd.isna(arr)
    if missing.any():
        raise InvalidInputError(
            f"{what} has missing labels at rows {_list(np.flatnonzero(missing), quote=False)}"
        )
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise InvalidInputError(f"{what} has infinite labels")
    try:
        classes, codes, counts = np.unique(arr, return_inverse=True, return_counts=True)
    except TypeError:
        raise InvalidInputError(
            f"{what} mixes label types that cannot be compared (e.g. str and int)"
        ) from None
    if codes.max(initial=0) < 1:
        raise InvalidInputError(
            f"{what} has a single class ({_plain(arr[0])!r}); a supervised ranker needs at least 2"
        )
    numeric = arr.dtype.kind in "biuf"
    # scikit-learn's "continuous": float labels not all whole numbers (the only kind of a
    # 1-D target that is neither binary nor multiclass); its type_of_target is slow enough
    # to dominate a filter's fit on small data, so it is asked only for the messages
    if arr.dtype.kind == "f" and bool(np.any(np.mod(arr, 1.0) != 0.0)):
        raise InvalidInputError(
            f"{what} is a continuous target (type_of_target: 'continuous'; {classes.size} "
            f"distinct values in {n_samples} samples), but {who} needs class labels and "
            "every distinct value would be taken as a class."
            + _fitting(ranker, "a continuous target", "regression", numeric=True)
            + (
                f" If these {classes.size} values are class labels, pass them as integers or "
                f"strings (e.g. {what}.astype(str))."
                if classes.size <= LABEL_LIKE_VALUES and counts.min() >= 2
                else f" Or bin {what} into classes first (e.g. pandas.qcut)."
            )
        )
    singles = int(np.count_nonzero(counts == 1))
    if _mostly_singletons(counts):
        advice = (
            _fitting(ranker, "a numeric target", "regression", numeric=True)
            if numeric
            else " Pass a column of class labels, not an identifier."
        )
        raise InvalidInputError(
            f"{what} has {classes.size} classes among {n_samples} samples, {singles} of them "
            f"with a single sample (type_of_target: {_type_of(arr)!r}): that is a quantity or "
            f"an identifier, not class labels; {who} needs several samples per class." + advice
        )
    warn_few_samples(n_samples, classes, counts)
    return codes.astype(np.int64).reshape(-1)


_NO_MULTIOUTPUT = (
    "No registered ranker takes a multi-output target: rank against one target column at "
    "a time (e.g. fit(X, y[:, 0]))"
)


def _type_of(y) -> str:
    """scikit-learn's name for the kind of target ``y`` is, or "unknown"."""
    from sklearn.utils.multiclass import type_of_target  # scikit-learn only when needed

    try:
        return str(type_of_target(y))
    except (TypeError, ValueError):  # mixed label types, NaN, inf
        return "unknown"


def _first_label(arr: np.ndarray):
    """The first value that is not a number (as a plain Python object, for messages)."""
    for value in arr:
        try:
            float(value)
        except (TypeError, ValueError):
            return value.item() if isinstance(value, np.generic) else value
    return arr[0]


def _csr_float64(X):
    """Sparse ``X`` as the CSR float64 matrix a ranker reads, never written to.

    CSR float64 input shares the caller's arrays through read-only views (no copy of a
    matrix of 10^8 stored values: a gigabyte and its first-touch cost): a ranker that tried
    to write into them would fail, not change the caller's matrix. Other formats and
    dtypes are converted, which makes new arrays anyway."""
    import scipy.sparse as sp

    if X.format != "csr" or X.dtype != np.float64:
        return sp.csr_matrix(X, dtype=np.float64, copy=True)
    views = []
    for part in (X.data, X.indices, X.indptr):
        view = part.view()
        view.flags.writeable = False
        views.append(view)
    return sp.csr_matrix(tuple(views), shape=X.shape, copy=False)


def _plain(value):
    """A numpy scalar as the Python value it holds (``0``, not ``np.int64(0)``)."""
    return value.item() if isinstance(value, np.generic) else value


def target_task(y) -> str | None:
    """The task a 1-D target serves: "classification", "regression" or None.

    "regression" for what :func:`~sklearn.utils.multiclass.type_of_target` calls
    continuous, and for a numeric multiclass target where most samples are the only one
    of their value (integer-valued quantities such as prices, which type_of_target calls
    multiclass); "classification" for other binary and multiclass
    targets; None for multi-output targets and targets it cannot read (missing values,
    mixed types), which :func:`check_y` then reports.
    """
    arr = np.asarray(y.iloc[:, 0] if isinstance(y, pd.DataFrame) and y.shape[1] == 1 else y)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.ravel()
    found = _type_of(arr)
    if found == "continuous":
        return "regression"
    if found not in ("binary", "multiclass"):
        return None
    if found == "multiclass" and arr.dtype.kind in "biuf":
        _, counts = np.unique(arr, return_counts=True)
        if _mostly_singletons(counts):
            return "regression"
    return "classification"


#: at most this many distinct values, each repeated, make a numeric target look like labels
LABEL_LIKE_VALUES = 10


def warn_labels_as_quantity(y, ranker: str, *, stacklevel: int = 5) -> None:
    """Warn that a ranker for both kinds of target fits ``y`` as a quantity although it
    looks like class labels.

    A target of non-integer numbers (``type_of_target``: continuous) is fitted as a
    regression target by such a ranker, while a class ranker refuses it; when it has at most
    :data:`LABEL_LIKE_VALUES` distinct values and every one repeats (labels {1.5, 2.5}),
    that choice is said, with how to mean classes instead.

    Warns
    -----
    TargetKindWarning
    """
    arr = np.asarray(y, dtype=float).ravel()
    values, counts = np.unique(arr, return_counts=True)
    if not 0 < values.size <= LABEL_LIKE_VALUES or counts.min() < 2:
        return
    shown = ", ".join(f"{v:g}" for v in values)
    warnings.warn(
        f"y has {values.size} distinct values ({shown}), not integers: {ranker} ranks the "
        "features for y as a quantity (regression; task_ = 'regression'). If these are class "
        "labels, pass them as integers or strings (e.g. y.astype(str)): the class rankers "
        "refuse non-integer labels",
        TargetKindWarning,
        stacklevel=stacklevel,
    )


def _mostly_singletons(counts: np.ndarray) -> bool:
    """Whether most samples are the only one of their class (3 or more classes).

    Class labels repeat; quantities (prices, counts over a wide range) and identifiers
    mostly do not. A small class or two (a hand-worked example, a rare diagnosis) keeps a
    target a class target.
    """
    return counts.size >= 3 and 2 * int(np.count_nonzero(counts == 1)) > int(counts.sum())


def _kind_takes(target_kind: str, task: str, numeric: bool) -> bool:
    """Whether a ranker declaring ``target_kind`` takes a target of ``task``."""
    if target_kind == "classification":
        return task == "classification"
    if target_kind == "regression":
        return numeric  # any number is a quantity, 0/1 and integer counts included
    return target_kind == "both"


def _fitting(ranker: str | None, described: str, task: str, *, numeric: bool) -> str:
    """The sentence listing the registered rankers for such a target ("" without ranker)."""
    if ranker is None:
        return ""
    # imported here: the registry loads every ranker module, and they import this one
    from rankers.registry import available

    table = available()
    names = [
        str(row.name)
        for row in table.itertuples(index=False)
        if row.requires_y and _kind_takes(str(row.target_kind), task, numeric)
    ]
    listed = ", ".join(names) if names else "none"
    return f" Registered rankers for {described}: {listed}."


def warn_few_samples(n_samples: int, classes=None, counts=None, *, stacklevel: int = 5) -> None:
    """Warn when there are too few samples for a ranking to be more than noise.

    Fewer than :data:`MIN_SAMPLES` samples in all, or, for class targets (``classes``
    and their ``counts``), a class with fewer than :data:`MIN_CLASS_SAMPLES`. A ranker
    still runs: a small pilot study may want a first look, but it should know.

    Warns
    -----
    FewSamplesWarning
    """
    if n_samples < MIN_SAMPLES:
        warnings.warn(
            f"only {n_samples} samples: a ranking from fewer than {MIN_SAMPLES} is mostly "
            "noise (any two features are told apart by a handful of values)",
            FewSamplesWarning,
            stacklevel=stacklevel,
        )
        return
    if counts is None:
        return
    small = np.flatnonzero(np.asarray(counts) < MIN_CLASS_SAMPLES)
    if small.size:
        labels = np.asarray(classes, dtype=object)  # plain Python values: 'a', not np.str_
        shown = _list([f"{labels[i]!r} ({counts[i]})" for i in small], quote=False)
        warnings.warn(
            f"classes with fewer than {MIN_CLASS_SAMPLES} samples: {shown}; what a ranker "
            "learns about them is mostly noise",
            FewSamplesWarning,
            stacklevel=stacklevel,
        )


def column_mask(spec, n_features: int, names=None, *, what: str = "columns") -> np.ndarray:
    """A boolean mask over the features from column indices, names or a boolean mask.

    Parameters
    ----------
    spec : None, sequence of int, sequence of str, or boolean array of shape (n_features,)
        Which columns; None selects none. Names need ``names`` (the fitted column names).
    n_features : int
        Number of features.
    names : array of str, optional
        Column names of the data (``feature_names_in_``).
    what : str
        The parameter's name, for error messages.

    Raises
    ------
    InvalidParameterError
        For indices out of range, unknown names, names without column names, or a mask of
        the wrong length.
    """
    mask = np.zeros(n_features, dtype=bool)
    if spec is None:
        return mask
    spec = np.asarray(spec)
    if spec.dtype == bool:
        if spec.shape != (n_features,):
            raise InvalidParameterError(
                f"{what} as a boolean mask needs one entry per feature ({n_features}); "
                f"got shape {spec.shape}"
            )
        return spec.copy()
    spec = spec.ravel()
    if spec.size == 0:
        return mask
    if spec.dtype.kind in "iu":
        bad = spec[(spec < -n_features) | (spec >= n_features)]
        if bad.size:
            raise InvalidParameterError(
                f"{what} lists column indices {bad.tolist()} outside 0..{n_features - 1}"
            )
        mask[spec] = True
        return mask
    if spec.dtype.kind in "UO":
        if names is None:
            raise InvalidParameterError(
                f"{what} lists column names, but X has none; pass column indices or a "
                "boolean mask, or fit on a DataFrame"
            )
        where = {str(c): i for i, c in enumerate(names)}
        unknown = [str(s) for s in spec if str(s) not in where]
        if unknown:
            raise InvalidParameterError(
                f"{what} names unknown columns {unknown}; X has {list(names)[:10]}"
            )
        mask[[where[str(s)] for s in spec]] = True
        return mask
    raise InvalidParameterError(
        f"{what} must be None, column indices, column names or a boolean mask; "
        f"got values of dtype {spec.dtype}"
    )


def check_n_jobs(n_jobs, *, what: str = "n_jobs") -> int:
    """The number of joblib workers to start for ``n_jobs``: one parallel layer, never more
    workers than CPUs.

    - ``None``: the ``n_jobs`` of an enclosing ``joblib.parallel_config``, else 1.
    - negative: counted back from the CPUs available, joblib's convention: -1 all of them,
      -2 all but one, ..., at least 1.
    - more than the CPUs available: that many, with a warning (extra workers only add
      start-up and memory; asked for 100000, joblib would try to start them all).
    - inside a task of a parallel joblib call: 1, whatever was asked, so that parallel
      layers never multiply (e.g. a process pool over folds, each fold fitting a forest
      with n threads: folds x n workers on a few cores).
    - under a cluster backend (``parallel_config(backend="dask")``): as given, since the
      cluster's workers, not this machine's CPUs, bound the parallelism.

    The CPUs available are ``joblib.cpu_count()``: this process's affinity mask and
    cgroup quota, not the machine's core count. The number of workers never changes a
    result: every random choice is drawn up front from ``random_state``.

    Parameters
    ----------
    n_jobs : int or None
        The value a user gave.
    what : str
        The parameter's name, for messages.

    Returns
    -------
    int
        At least 1 on a local backend.

    Raises
    ------
    InvalidParameterError
        For 0 or a value that is not an integer.
    """
    from joblib import cpu_count
    from joblib.parallel import BACKENDS, get_active_backend

    if n_jobs is not None and (
        isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, (int, np.integer))
    ):
        raise InvalidParameterError(
            f"{what} must be an integer or None, got {n_jobs!r} ({type(n_jobs).__name__})"
        )
    if n_jobs == 0:
        raise InvalidParameterError(
            f"{what}=0 runs nothing; use 1 (no parallelism), k workers, or -1 (all CPUs)"
        )
    backend, default = get_active_backend()
    if n_jobs is None:
        n_jobs = 1 if default is None else int(default)
    local = tuple(BACKENDS[k] for k in ("loky", "threading", "multiprocessing", "sequential"))
    if not isinstance(backend, local):
        return int(n_jobs)
    if getattr(backend, "nesting_level", 0) > 0:  # a task of a parallel call: one layer only
        return 1
    cpus = cpu_count()
    wanted = int(n_jobs) if n_jobs > 0 else cpus + 1 + int(n_jobs)
    if wanted > cpus:
        warnings.warn(
            f"{what}={n_jobs} asks for more workers than the {cpus} CPU(s) this process "
            f"may use; using {cpus}",
            UserWarning,
            stacklevel=2,
        )
        return cpus
    return max(wanted, 1)


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_k(k, n_features: int, *, what: str = "k", upper: int | None = None) -> int:
    """One number of top features: an integer in ``1..upper`` (default ``n_features``).

    Booleans, floats (even ``2.0``) and strings are refused rather than converted: a
    count of features is a whole number, and a silent ``int(2.7)`` would hide a mistake.

    Parameters
    ----------
    k : int
        The value a user gave.
    n_features : int
        How many features there are (named in the message).
    what : str
        The parameter's name, for messages.
    upper : int, optional
        The largest valid value, when smaller than ``n_features``.

    Returns
    -------
    int

    Raises
    ------
    InvalidParameterError
        Naming the parameter, the value and the valid range.
    """
    upper = n_features if upper is None else upper
    if not _is_int(k):
        raise InvalidParameterError(f"{what} must be an integer in 1..{upper}, got {k!r}")
    if not 1 <= k <= upper:
        raise InvalidParameterError(
            f"{what} must be in 1..{upper} ({n_features} features), got {k}"
        )
    return int(k)


def check_ks(
    ks, n_features: int, *, what: str = "ks", of: str = "the number of features"
) -> list[int]:
    """Numbers of top features: one integer or a sequence of integers, each in ``1..n_features``.

    Returns them sorted, repeats dropped. Booleans and non-integers are refused (see
    :func:`check_k`); so is an empty sequence.

    Parameters
    ----------
    ks : int or sequence of int
        The value a user gave.
    n_features : int
        The largest valid number.
    what : str
        The parameter's name, for messages.
    of : str
        What ``n_features`` counts, for messages.

    Raises
    ------
    InvalidParameterError
        Naming the parameter and the offending values.
    """
    if _is_int(ks):
        ks = [ks]
    if isinstance(ks, (str, bytes)) or not isinstance(ks, (Sequence, np.ndarray, set, range)):
        raise InvalidParameterError(
            f"{what} must be an integer or a list of integers in 1..{n_features}, got {ks!r}"
        )
    values = list(np.asarray(ks, dtype=object).ravel()) if isinstance(ks, np.ndarray) else list(ks)
    if not values:
        raise InvalidParameterError(f"{what} lists no number; give integers in 1..{n_features}")
    wrong = [v for v in values if not _is_int(v)]
    if wrong:
        raise InvalidParameterError(f"{what} must hold integers, not {_list(wrong, quote=False)}")
    bad = sorted({int(v) for v in values if not 1 <= v <= n_features})
    if bad:
        raise InvalidParameterError(f"{what} must lie in 1..{n_features} ({of}); got {bad}")
    return sorted({int(v) for v in values})


def check_seed(random_state, *, what: str = "random_state") -> np.random.SeedSequence:
    """The :class:`numpy.random.SeedSequence` every random choice of a call flows from.

    - None: fresh entropy from the operating system (as scikit-learn reads None).
    - a non-negative int: ``SeedSequence(random_state)``, so the same int gives the same
      streams in every function, on every machine.
    - a ``SeedSequence``: itself (it is never consumed: the same one gives the same seeds).
    - a ``Generator`` or ``RandomState``: one draw from it (so it advances, as any use
      would) seeds the sequence.

    Parameters
    ----------
    random_state : None, int, SeedSequence, Generator or RandomState
    what : str
        The parameter's name, for messages.

    Raises
    ------
    InvalidParameterError
        For a negative int, a bool or any other type.

    Examples
    --------
    >>> check_seed(0).generate_state(1).tolist() == check_seed(0).generate_state(1).tolist()
    True
    """
    if random_state is None:
        return np.random.SeedSequence()
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if _is_int(random_state) and random_state >= 0:
        return np.random.SeedSequence(int(random_state))
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(int(random_state.integers(2**63)))
    if isinstance(random_state, np.random.RandomState):
        return np.random.SeedSequence(int(random_state.randint(2**63 - 1, dtype=np.int64)))
    raise InvalidParameterError(
        f"{what} must be None, a non-negative int, a numpy SeedSequence, Generator or "
        f"RandomState; got {random_state!r}"
    )
