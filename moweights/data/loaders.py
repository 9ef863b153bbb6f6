"""Data sets by name or by file: scikit-learn's bundled sets, the generated ones, a user's file.

- :func:`load_dataset`: a bundled (:data:`BUILTIN`, :func:`load_builtin`) or generated
  (:data:`GENERATED`, :mod:`moweights.data.synthetic`) data set by name, :data:`DATASETS`
  listing them;
- :func:`load_file` / :func:`read_file`: a data file (csv, tsv, parquet, .mat, .h5ad) read by
  :mod:`moweights.data.readers`, with and without the checks of its header;
- :func:`check_data_path`, :func:`read_columns`, :func:`duplicate_columns`: what a config
  check needs of a file, the path checked first by the one :func:`check_data_path`, whose
  message for a missing benchmark file names the command that downloads it
  (:func:`moweights.data.fetch.missing_file_hint`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from moweights.data import readers
from moweights.data.fetch import missing_file_hint
from moweights.data.synthetic import make_error_curve_data, make_weighting_benchmark
from rankers.exceptions import InvalidInputError

__all__ = [
    "BUILTIN",
    "DATASETS",
    "GENERATED",
    "check_data_path",
    "duplicate_columns",
    "load_builtin",
    "load_dataset",
    "load_file",
    "read_columns",
    "read_file",
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

    :func:`moweights.data.readers.check_data_path`, whose message for a missing file also
    names the command that downloads it when it is a known benchmark file
    (:func:`moweights.data.fetch.missing_file_hint`).

    Raises
    ------
    DataFileError
    """
    return readers.check_data_path(path, hint=missing_file_hint)


def read_columns(path) -> list[str]:
    """The column names of a data file, from its header only (a config check reads these).

    :func:`moweights.data.readers.read_columns` (see it for each format), after
    :func:`check_data_path`.

    Raises
    ------
    DataFileError
        When the file is missing, unreadable, or not in the format its name says.
    """
    return readers.read_columns(check_data_path(path))


def duplicate_columns(path) -> dict[str, int]:
    """Column names a csv/tsv file's header repeats, with how often: empty for other
    formats (:func:`moweights.data.readers.duplicate_columns`, after :func:`check_data_path`).

    Raises
    ------
    DataFileError
        When the file is missing or unreadable.
    """
    return readers.duplicate_columns(check_data_path(path))


def load_file(
    path, target: str | None = None, *, transpose: bool = False
) -> tuple[pd.DataFrame, pd.Series | None]:
    """Load a data table from csv / tsv (optionally gzipped), parquet, MATLAB .mat or AnnData.

    :func:`moweights.data.readers.read_data` (the one home of every format: see it for what
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
    repeated = {} if transpose else readers.duplicate_columns(path)
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
    return readers.read_data(check_data_path(path), target, transpose=transpose)


def _is_unnamed_index(name, column: pd.Series) -> bool:
    """Whether a column is pandas' nameless index: "Unnamed: <i>" holding 0, 1, 2, ..."""
    if not str(name).startswith("Unnamed: ") or not pd.api.types.is_integer_dtype(column):
        return False
    values = column.to_numpy()
    return bool(len(values) > 1 and (values == np.arange(values[0], values[0] + len(values))).all())


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
