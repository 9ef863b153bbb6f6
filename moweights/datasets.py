"""Data: scikit-learn's bundled sets, files (csv, parquet, .mat, .h5ad, read by
:mod:`moweights.datafiles`), the papers' generators, the planted-structure generator and
the public benchmark sets (fetched, checked, cached)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from aggregation.federated.sites import split_sites
from aggregation.ranking import Ranking
from moweights import datafiles
from moweights.fetch import fetch_openml, fetch_pmlb, fetch_skfeature, missing_file_hint
from moweights.planted import Planted, make_planted
from rankers.exceptions import InvalidInputError

__all__ = [
    "BUILTIN",
    "DATASETS",
    "ERROR_CURVE_DATA",
    "GENERATED",
    "Planted",
    "check_data_path",
    "duplicate_columns",
    "fetch_openml",
    "fetch_pmlb",
    "fetch_skfeature",
    "load_builtin",
    "load_dataset",
    "load_file",
    "make_error_curve_data",
    "make_planted",
    "make_weighting_benchmark",
    "noisy_rankings",
    "read_columns",
    "read_file",
    "split_sites",
    "subsample",
]

#: bundled data sets (shipped with scikit-learn, so runs work offline): name -> loader
BUILTIN = {
    "breast_cancer": "load_breast_cancer",
    "wine": "load_wine",
    "iris": "load_iris",
    "digits": "load_digits",
    "diabetes": "load_diabetes",
}


def load_builtin(name: str) -> tuple[pd.DataFrame, pd.Series]:
    """One of scikit-learn's bundled data sets as (features, target).

    Parameters
    ----------
    name : {"breast_cancer", "wine", "iris", "digits", "diabetes"}
        ``diabetes`` has a continuous target; the others are classification data.

    Returns
    -------
    X : DataFrame
        Features, with the data set's own column names.
    y : Series
        The target, named ``target``.
    """
    import sklearn.datasets

    if name not in BUILTIN:
        raise InvalidInputError(
            f"unknown built-in data set {name!r}; choose one of {', '.join(sorted(BUILTIN))}"
        )
    bunch = getattr(sklearn.datasets, BUILTIN[name])(as_frame=True)
    X = bunch.data.copy()
    X.columns = [str(c) for c in X.columns]
    return X, bunch.target.rename("target")


def check_data_path(path) -> Path:
    """``path`` if it names a regular file; else the one-line error saying what it is.

    :func:`moweights.datafiles.check_data_path`, whose message for a missing file also
    names the command that downloads it when it is a known benchmark file
    (:func:`moweights.fetch.missing_file_hint`).

    Raises
    ------
    DataFileError
    """
    return datafiles.check_data_path(path, hint=missing_file_hint)


def read_columns(path) -> list[str]:
    """The column names of a data file, from its header only (a config check reads these).

    :func:`moweights.datafiles.read_columns` (see it for each format), after
    :func:`check_data_path`.

    Raises
    ------
    DataFileError
        When the file is missing, unreadable, or not in the format its name says.
    """
    return datafiles.read_columns(check_data_path(path))


def duplicate_columns(path) -> dict[str, int]:
    """Column names a csv/tsv file's header repeats, with how often: empty for other
    formats (:func:`moweights.datafiles.duplicate_columns`, after :func:`check_data_path`).

    Raises
    ------
    DataFileError
        When the file is missing or unreadable.
    """
    return datafiles.duplicate_columns(check_data_path(path))


def load_file(
    path, target: str | None = None, *, transpose: bool = False
) -> tuple[pd.DataFrame, pd.Series | None]:
    """Load a data table from csv / tsv (optionally gzipped), parquet, MATLAB .mat or AnnData.

    :func:`moweights.datafiles.read_data` (the one home of every format: see it for what
    each format holds and where its target is) after :func:`check_data_path`, whose message
    for a missing benchmark file names the command that downloads it.

    Parameters
    ----------
    path : str or Path
        ``.csv``, ``.tsv`` (``.gz`` allowed), ``.parquet``, ``.mat`` or ``.h5ad``.
    target : str, optional
        The target: a table's column (removed from the features), an ``.h5ad`` file's
        ``obs`` column, a transposed table's row; a ``.mat`` file's is its ``Y``.
    transpose : bool, default=False
        The file holds one row per feature (genes as rows), its first column naming them.

    Returns
    -------
    X : DataFrame
    y : Series or None

    Raises
    ------
    DataFileError
        A missing or unreadable file, one not in its format, or a target it lacks; a
        csv/tsv header that repeats a column name (pandas would read the second as
        ``a.1``); a row-index column without a name (``Unnamed: 0``, what
        ``DataFrame.to_csv`` writes unless ``index=False``) -- both refused as
        ``moweights run`` refuses them. The message is one line naming the file.
    """
    from moweights.errors import DataFileError

    path = check_data_path(path)
    repeated = {} if transpose else datafiles.duplicate_columns(path)
    if repeated:
        shown = ", ".join(f"{c!r} ({n} times)" for c, n in list(repeated.items())[:5])
        raise DataFileError(
            f"{path.name} repeats column names: {shown} (pandas would read them as 'name', "
            "'name.1', ...); rename them in the file so that every column has a name of its own"
        )
    X, y = read_file(path, target, transpose=transpose)
    unnamed = [c for c in X.columns if _is_unnamed_index(c, X[c])] if not transpose else []
    if unnamed:
        raise DataFileError(
            f"{path.name}: column {unnamed[0]!r} is a row index (0, 1, 2, ... under no "
            "name: what DataFrame.to_csv writes unless index=False), not a feature; write "
            "the file with index=False, or delete the column"
        )
    return X, y


def read_file(
    path, target: str | None = None, *, transpose: bool = False
) -> tuple[pd.DataFrame, pd.Series | None]:
    """:func:`load_file` without its checks of the header: for the run, which lists a
    repeated name or an index column among the data's problems, with the ``[data]``
    option that handles each (:mod:`moweights.pipeline.problems`)."""
    return datafiles.read_data(check_data_path(path), target, transpose=transpose)


def _is_unnamed_index(name, column: pd.Series) -> bool:
    """Whether a column is pandas' nameless index: "Unnamed: <i>" holding 0, 1, 2, ..."""
    if not str(name).startswith("Unnamed: ") or not pd.api.types.is_integer_dtype(column):
        return False
    values = column.to_numpy()
    return bool(len(values) > 1 and (values == np.arange(values[0], values[0] + len(values))).all())


def make_weighting_benchmark(
    n_samples: int = 100, random_state=None, *, class_means=(0.0, 1.0), sd: float = 1.0
) -> tuple[pd.DataFrame, pd.Series]:
    """The synthetic data of the multiobjective weighting paper (§3).

    Two classes and ten independent features ``f1``..``f10``:

    - ``f1`` is the class label itself (0 or 1): the most relevant feature;
    - ``f2``..``f6`` are drawn from normal distributions whose mean depends on the class
      (``class_means[c]``, standard deviation ``sd``; the paper gives no values — we use
      means 0 and 1 and sd 1, a separation of one standard deviation);
    - ``f7`` and ``f8`` are constant (0.5 and 1.0);
    - ``f9`` and ``f10`` are uniform on [0, 1].

    Classes are balanced (the first ``ceil(n/2)`` rows are class 0), rows are shuffled.

    Parameters
    ----------
    n_samples : int, default=100
        Number of rows (at least 4).
    random_state : int, Generator or None
        Seed.

    Returns
    -------
    X : DataFrame of shape (n_samples, 10)
    y : Series
        The class, named ``target`` (equal to ``f1``).
    """
    if not isinstance(n_samples, (int, np.integer)) or n_samples < 4:
        raise InvalidInputError(f"n_samples must be an integer >= 4; got {n_samples!r}")
    rng = np.random.default_rng(random_state)
    y = np.zeros(n_samples, dtype=np.int64)
    y[(n_samples + 1) // 2 :] = 1
    y = rng.permutation(y)
    means = np.asarray(class_means, dtype=np.float64)[y]
    X = np.empty((n_samples, 10))
    X[:, 0] = y
    X[:, 1:6] = means[:, None] + sd * rng.standard_normal((n_samples, 5))
    X[:, 6] = 0.5
    X[:, 7] = 1.0
    X[:, 8:10] = rng.uniform(0.0, 1.0, size=(n_samples, 2))
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(1, 11)])
    return frame, pd.Series(y, name="target")


# ------------------------------------------------------------------ error-curve paper (§4)
#: Table 2 of the error-curve paper: per data set, the interaction sets as (arity, P), where
#: arity 1 is a single feature f = F_i and arity 2 a pair with f = XOR(F_i, F_j), and
#: P = P(f = target). Each set has 3 copies (the set and its two redundant copies); the rest
#: of the 100 features are irrelevant.
ERROR_CURVE_DATA = {
    "single": ((1, 0.8), (1, 0.7), (1, 0.6)),
    "pair": ((2, 0.8), (2, 0.7), (2, 0.6)),
    "combined": ((2, 0.8), (2, 0.7), (2, 0.6), (1, 0.8), (1, 0.7), (1, 0.6)),
}
_COPIES = 3
_N_FEATURES = 100


def _binary_entropy(p: float) -> float:
    return float(-p * np.log2(p) - (1 - p) * np.log2(1 - p)) if 0 < p < 1 else 0.0


def make_error_curve_data(
    kind: str = "combined", n_samples: int = 1000, random_state=None
) -> tuple[pd.DataFrame, pd.Series, Ranking]:
    """The synthetic data of the error-curve paper (§4.1, Table 2) and its ground truth.

    A balanced binary target ``y`` and 100 binary features. Each relevant *interaction set*
    has a function ``f`` that equals ``y`` with probability ``P``:

    - a single feature ``F_i``: ``F_i = y`` flipped with probability ``1 - P``;
    - a pair with ``f = XOR(F_i, F_j)``: ``F_i`` is a fair coin and ``F_j = F_i ⊕ y ⊕ e``
      with ``e`` a flip of probability ``1 - P``, so each of ``F_i``, ``F_j`` alone is
      independent of ``y`` while the pair predicts it with accuracy ``P``.

    Every interaction set comes in 3 copies (the paper's "two additional redundant copies"):
    identically defined but independently realised, i.e. with their own coins and flips.
    The remaining features are irrelevant fair coins. "single" has 9 relevant features,
    "pair" 18, "combined" 27 (see :data:`ERROR_CURVE_DATA`). Columns are the relevant
    features in Table 2's order (copy by copy) followed by the irrelevant ones.

    The ground truth is the paper's ``rel(F_i) = I(F_int; y) / |F_int|`` computed from the
    definition, not estimated from the sample: with a uniform ``y`` both set kinds give
    ``I(F_int; y) = 1 - H_2(P)`` bits (for a pair, ``F_i`` is independent of ``(y, XOR)``),
    so a single feature with P = 0.8 scores 0.278, each feature of a 0.8-pair 0.139, and an
    irrelevant feature 0. Equally relevant features (copies, irrelevant ones) tie.

    Parameters
    ----------
    kind : {"single", "pair", "combined"}, default="combined"
    n_samples : int, default=1000
        Number of rows (at least 10); the paper uses 1000.
    random_state : int, Generator or None

    Returns
    -------
    X : DataFrame of shape (n_samples, 100)
        0/1 integers. Names say what a feature is: ``single0.8_1`` (copy 1 of the single
        feature with P = 0.8), ``xor0.7_2a`` / ``xor0.7_2b`` (copy 2 of the 0.7 pair),
        ``irrelevant01`` ...
    y : Series
        0/1 target, named ``target``.
    truth : aggregation.Ranking
        Scores = ``rel`` in bits, method ``"ground_truth"``.

    References
    ----------
    Slavkov, Petković, Kocev, Džeroski. Quantitative score for assessing the quality of
    feature rankings. Informatica 42 (2018), §4.1.

    Examples
    --------
    >>> X, y, truth = make_error_curve_data("pair", n_samples=200, random_state=0)
    >>> X.shape, truth.order[:2]
    ((200, 100), ['xor0.8_1a', 'xor0.8_1b'])
    """
    if kind not in ERROR_CURVE_DATA:
        raise InvalidInputError(
            f"unknown kind {kind!r}; choose one of {', '.join(map(repr, ERROR_CURVE_DATA))}"
        )
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)):
        raise InvalidInputError(f"n_samples must be an integer >= 10; got {n_samples!r}")
    if n_samples < 10:
        raise InvalidInputError(f"n_samples must be an integer >= 10; got {n_samples}")
    rng = np.random.default_rng(random_state)
    y = rng.integers(0, 2, size=n_samples)
    columns, names, relevance = [], [], []
    for arity, p in ERROR_CURVE_DATA[kind]:
        rel = (1.0 - _binary_entropy(p)) / arity
        flips = (rng.random((n_samples, _COPIES)) >= p).astype(np.int64)
        if arity == 1:
            columns.append(y[:, None] ^ flips)
            names += [f"single{p}_{c + 1}" for c in range(_COPIES)]
        else:
            first = rng.integers(0, 2, size=(n_samples, _COPIES))
            second = first ^ y[:, None] ^ flips
            # interleave so each copy's two features sit side by side: 1a 1b 2a 2b ...
            columns.append(np.stack([first, second], axis=2).reshape(n_samples, 2 * _COPIES))
            names += [f"xor{p}_{c + 1}{s}" for c in range(_COPIES) for s in "ab"]
        relevance += [rel] * (arity * _COPIES)
    n_irrelevant = _N_FEATURES - len(names)
    columns.append(rng.integers(0, 2, size=(n_samples, n_irrelevant)))
    names += [f"irrelevant{j + 1:02d}" for j in range(n_irrelevant)]
    relevance += [0.0] * n_irrelevant
    X = pd.DataFrame(np.hstack(columns).astype(np.int64), columns=names)
    truth = Ranking(names, relevance, method="ground_truth")
    return X, pd.Series(y, name="target"), truth


def noisy_rankings(
    truth: Ranking, theta: float, n_rankings: int = 100, random_state=None
) -> list[Ranking]:
    """Noisy versions of a ground-truth ranking (§4.2 of the error-curve paper).

    In each ranking a proportion ``theta`` of the features (``round(theta * n)`` of them,
    chosen at random) get a random relevance, drawn uniformly between the smallest and the
    largest true score; the other features keep their true score. ``theta = 0`` returns the
    truth itself; ``theta = 1`` gives uniformly random rankings (i.i.d. scores). Ties keep
    the truth's tie-break (the earlier feature first), so a noisy ranking differs from the
    truth only where the noise moved a feature.

    Parameters
    ----------
    truth : aggregation.Ranking
        The ground truth, e.g. from :func:`make_error_curve_data`.
    theta : float in [0, 1]
    n_rankings : int, default=100
    random_state : int, Generator or None

    Returns
    -------
    list of aggregation.Ranking
        Named like ``truth``, method ``"noisy(theta=...)"``.

    Examples
    --------
    >>> _, _, truth = make_error_curve_data("single", n_samples=50, random_state=0)
    >>> noisy_rankings(truth, 0.0, n_rankings=1)[0] == truth
    True
    """
    if not isinstance(truth, Ranking):
        raise InvalidInputError(f"truth must be an aggregation.Ranking, not {type(truth).__name__}")
    if isinstance(theta, bool) or not isinstance(theta, (int, float, np.floating, np.integer)):
        raise InvalidInputError(f"theta must be a number in [0, 1]; got {theta!r}")
    if not 0.0 <= float(theta) <= 1.0:
        raise InvalidInputError(f"theta must be in [0, 1]; got {theta}")
    if isinstance(n_rankings, bool) or not isinstance(n_rankings, (int, np.integer)):
        raise InvalidInputError(f"n_rankings must be an integer >= 1; got {n_rankings!r}")
    if n_rankings < 1:
        raise InvalidInputError(f"n_rankings must be an integer >= 1; got {n_rankings}")
    rng = np.random.default_rng(random_state)
    n = len(truth)
    n_noisy = round(float(theta) * n)
    low, high = float(truth.scores.min()), float(truth.scores.max())
    # all random numbers at once: a random subset per ranking (first n_noisy of a
    # permutation) and a candidate random relevance for every feature
    chosen = rng.permuted(np.tile(np.arange(n), (n_rankings, 1)), axis=1)[:, :n_noisy]
    values = rng.uniform(low, high, size=(n_rankings, n))
    scores = np.tile(truth.scores, (n_rankings, 1))
    rows = np.arange(n_rankings)[:, None]
    scores[rows, chosen] = values[rows, chosen]
    method = f"noisy(theta={float(theta):g})"
    return [Ranking(truth.names, s, method=method) for s in scores]


# ------------------------------------------------------------------ config-file data sets
#: data sets generated on demand (name -> generator); ``n_samples`` sets their size
GENERATED = {
    "weighting_benchmark": "make_weighting_benchmark",
    "error_curve_single": "make_error_curve_data",
    "error_curve_pair": "make_error_curve_data",
    "error_curve_combined": "make_error_curve_data",
}
#: every name ``load_dataset`` accepts
DATASETS = tuple(sorted({**BUILTIN, **GENERATED}))


def load_dataset(
    name: str, n_samples: int | None = None, random_state=None
) -> tuple[pd.DataFrame, pd.Series]:
    """A bundled or generated data set by name, as (features, target).

    Parameters
    ----------
    name : str
        One of :data:`DATASETS`: scikit-learn's bundled data (see :func:`load_builtin`),
        ``weighting_benchmark`` (:func:`make_weighting_benchmark`, 100 rows by default) or
        ``error_curve_single`` / ``_pair`` / ``_combined`` (:func:`make_error_curve_data`,
        1000 rows by default).
    n_samples : int, optional
        Rows of a generated data set; for bundled data a seeded random subsample of that
        many rows (all rows when the data has fewer), kept in the original row order.
    random_state : int, Generator or None
        Seeds the generator or the subsample.

    Returns
    -------
    X : DataFrame
    y : Series
        Named ``target``.

    Examples
    --------
    >>> X, y = load_dataset("weighting_benchmark", n_samples=40, random_state=0)
    >>> X.shape
    (40, 10)
    """
    if name in GENERATED:
        if name == "weighting_benchmark":
            size = 100 if n_samples is None else n_samples
            return make_weighting_benchmark(size, random_state=random_state)
        size = 1000 if n_samples is None else n_samples
        X, y, _ = make_error_curve_data(name.rsplit("_", 1)[1], size, random_state=random_state)
        return X, y
    X, y = load_builtin(name)
    return subsample(X, y, n_samples, random_state)


def subsample(X: pd.DataFrame, y: pd.Series | None, n_samples: int | None, random_state=None):
    """A seeded random subset of ``n_samples`` rows in their original order (all when fewer)."""
    if n_samples is None or n_samples >= len(X):
        return X, y
    rng = np.random.default_rng(random_state)
    rows = np.sort(rng.choice(len(X), size=n_samples, replace=False))
    X = X.iloc[rows].reset_index(drop=True)
    return X, (None if y is None else y.iloc[rows].reset_index(drop=True))
