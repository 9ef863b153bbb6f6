"""Opt-in preparation of real-world tables: missing values, text columns, genes as rows.

Rankers take numbers without gaps, and refuse anything else with an error naming the
columns. Tables from the clinic or the lab often have both gaps and text. Nothing here
happens unless asked for: :func:`prepare_table` applies the options a user chose, in a
fixed order, with scikit-learn's imputers and encoders, and says what it did.

Order of the steps
------------------
1. ``transpose``: a table with one row per feature (genes as rows, samples as columns) is
   turned so that rows are samples as it is read (:func:`transpose_table`, at home with the
   readers in :mod:`moweights.data.readers.tables`); its first column names the features.
2. Rows whose target is missing are dropped whenever ``missing`` is not ``"error"`` (a
   target is never imputed).
3. ``missing``: ``"drop_rows"`` / ``"drop_columns"`` remove every row / column with a gap;
   ``"impute_median"``, ``"impute_mean"`` and ``"impute_most_frequent"`` fill numeric
   columns with that statistic (text columns always with their most frequent value).
4. ``categorical``: ``"onehot"`` replaces each text column by one 0/1 column per value
   (named ``column=value``), ``"ordinal"`` by the value's position in sorted order,
   ``"drop"`` removes it.

What is refused rather than encoded: repeated column names (under every option); a text
column holding a different value in every row of a table of 10 rows or more (an
identifier: one-hot would make one column per row, an ordinal code would rank the ids),
whose place is ``[data].drop``; date/time columns under ``"onehot"`` (one column per time
point), which ``"ordinal"`` codes in time order. A text column of more than 50 levels is
one-hot encoded with a :class:`~moweights.errors.DataPreparationWarning` naming it.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from moweights.data.readers.tables import transpose_table
from moweights.errors import DataPreparationWarning
from rankers.exceptions import InvalidInputError, InvalidParameterError

__all__ = ["CATEGORICAL", "MISSING", "PreparedTable", "prepare_table", "transpose_table"]

#: what ``missing`` may be; "error" (the default) refuses a table with gaps
MISSING = (
    "error",
    "drop_rows",
    "drop_columns",
    "impute_median",
    "impute_mean",
    "impute_most_frequent",
)
#: what ``categorical`` may be; "error" (the default) refuses a table with text columns
CATEGORICAL = ("error", "onehot", "ordinal", "drop")

_SHOWN = 8  # column names listed in a message before "and N more"
#: a text column with a different value in each of at least this many rows is an identifier
_ID_MIN_ROWS = 10
#: one-hot encoding a column of more levels than this warns
_MANY_LEVELS = 50


@dataclass
class PreparedTable:
    """A table ready for ranking, with a record of what was done to it.

    Attributes
    ----------
    X : DataFrame
        Numeric features, one row per sample.
    y : Series or None
        The target, aligned with ``X``.
    steps : list of str
        One sentence per change made (rows dropped, columns imputed or encoded); empty
        when the table needed nothing.
    """

    X: pd.DataFrame
    y: pd.Series | None
    steps: list[str] = field(default_factory=list)


def _names(columns) -> str:
    columns = [str(c) for c in columns]
    shown = ", ".join(repr(c) for c in columns[:_SHOWN])
    more = len(columns) - _SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def _is_text_dtype(dtype) -> bool:
    return not (pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype))


def _text_columns(X: pd.DataFrame) -> list:
    """The text (non-numeric, non-boolean) columns of ``X``, decided once per distinct
    dtype: a wide table has thousands of columns and one or two dtypes."""
    dtypes = list(X.dtypes)
    text = {dtype: _is_text_dtype(dtype) for dtype in set(dtypes)}
    return [c for c, dtype in zip(X.columns, dtypes, strict=True) if text[dtype]]


def _is_time(series: pd.Series) -> bool:
    """Dates, times, durations and periods: ordered values, not categories."""
    dtype = series.dtype
    return (
        pd.api.types.is_datetime64_any_dtype(dtype)
        or pd.api.types.is_timedelta64_dtype(dtype)
        or isinstance(dtype, pd.PeriodDtype)
    )


def _is_identifier(series: pd.Series) -> bool:
    """A different value in every row (of enough rows to tell): a sample id, not a category."""
    values = series.dropna()
    return len(values) >= _ID_MIN_ROWS and values.nunique() == len(values)


def prepare_table(
    X: pd.DataFrame,
    y: pd.Series | None = None,
    *,
    missing: str = "error",
    categorical: str = "error",
) -> PreparedTable:
    """Make a table with gaps and text columns rankable, as the user chose.

    Parameters
    ----------
    X : DataFrame
        Features, one row per sample; never modified.
    y : Series, optional
        Target aligned with ``X``; rows where it is missing are dropped unless
        ``missing="error"``.
    missing : {"error", "drop_rows", "drop_columns", "impute_median", "impute_mean", \
"impute_most_frequent"}, default="error"
        What to do with missing values (see the module's notes).
    categorical : {"error", "onehot", "ordinal", "drop"}, default="error"
        What to do with text (non-numeric) columns.

    Returns
    -------
    PreparedTable
        New ``X`` and ``y`` and the list of steps taken.

    Raises
    ------
    InvalidInputError
        Under ``"error"``, a table with gaps or text columns, naming the columns and the
        option that handles them; a table with nothing left after the chosen steps.
    InvalidParameterError
        An unknown option.

    Examples
    --------
    >>> X = pd.DataFrame({"age": [50, None, 70], "site": ["a", "b", "a"]})
    >>> prepared = prepare_table(X, missing="impute_median", categorical="onehot")
    >>> prepared.X.columns.tolist()
    ['age', 'site=a', 'site=b']
    >>> prepared.X["age"].tolist()
    [50.0, 60.0, 70.0]
    """
    if missing not in MISSING:
        raise InvalidParameterError(f"missing must be one of {MISSING}; got {missing!r}")
    if categorical not in CATEGORICAL:
        raise InvalidParameterError(
            f"categorical must be one of {CATEGORICAL}; got {categorical!r}"
        )
    if not isinstance(X, pd.DataFrame):
        raise InvalidInputError(f"prepare_table takes a DataFrame; got {type(X).__name__}")
    if y is not None and len(y) != len(X):
        raise InvalidInputError(f"y has {len(y)} values for {len(X)} rows of X")
    if not X.columns.is_unique:  # pandas' own column operations fail on them, unnamed
        raise InvalidInputError(
            f"repeated column names: {_names(X.columns[X.columns.duplicated()].unique())}; "
            "rename them so that every column has a name of its own"
        )
    X = X.copy()
    # by position, as the rankers pair them (a Series would be aligned by its labels)
    y = (
        None
        if y is None
        else pd.Series(np.asarray(y), index=X.index, name=getattr(y, "name", None))
    )
    steps: list[str] = []

    if y is not None and y.isna().any():
        if missing == "error":
            raise InvalidInputError(
                f"the target is missing in {int(y.isna().sum())} row(s); choose "
                "missing='drop_rows' (or any other missing option) to drop those rows"
            )
        keep = y.notna().to_numpy()
        steps.append(f"dropped {int((~keep).sum())} row(s) with a missing target")
        X, y = X.loc[keep], y.loc[keep]

    text = _text_columns(X)
    gaps = list(X.columns[X.isna().any().to_numpy()])  # one pass over each dtype's block
    if gaps:
        X, y = _handle_missing(X, y, gaps, text, missing, steps)
        text = _text_columns(X)
    if text and X.shape[0] > 0:
        X = _handle_text(X, text, categorical, steps)
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise InvalidInputError(
            f"nothing is left to rank after {'; '.join(steps) or 'the chosen steps'} "
            f"({X.shape[0]} rows, {X.shape[1]} columns)"
        )
    return PreparedTable(X, y, steps)


def _handle_missing(X, y, gaps, text, missing, steps):
    if missing == "error":
        raise InvalidInputError(
            f"missing values in {len(gaps)} column(s): {_names(gaps)}; choose missing = "
            "'drop_rows', 'drop_columns', 'impute_median', 'impute_mean' or "
            "'impute_most_frequent'"
        )
    if missing == "drop_rows":
        keep = X.notna().all(axis=1).to_numpy()
        steps.append(f"dropped {int((~keep).sum())} row(s) with missing values")
        return X.loc[keep], (None if y is None else y.loc[keep])
    if missing == "drop_columns":
        steps.append(f"dropped {len(gaps)} column(s) with missing values: {_names(gaps)}")
        return X.drop(columns=gaps), y
    from sklearn.impute import SimpleImputer

    strategy = missing.removeprefix("impute_")
    numeric = [c for c in gaps if c not in text]
    textual = [c for c in gaps if c in text]
    empty = [c for c in gaps if X[c].isna().all()]
    if empty:
        raise InvalidInputError(
            f"column(s) with no value at all cannot be imputed: {_names(empty)}; drop them "
            "(missing='drop_columns' or [data].drop)"
        )
    X = X.copy()
    if numeric:
        imputer = SimpleImputer(strategy=strategy)
        X[numeric] = imputer.fit_transform(X[numeric].astype(float))
        steps.append(f"filled the gaps of {len(numeric)} numeric column(s) with their {strategy}")
    if textual:
        imputer = SimpleImputer(strategy="most_frequent")
        filled = imputer.fit_transform(X[textual].astype(object))
        X[textual] = pd.DataFrame(filled, index=X.index, columns=textual)
        steps.append(
            f"filled the gaps of {len(textual)} text column(s) with their most frequent value"
        )
    return X, y


def _handle_text(X, text, categorical, steps):
    if categorical == "error":
        raise InvalidInputError(
            f"text (non-numeric) columns: {_names(text)}; choose categorical = 'onehot', "
            "'ordinal' or 'drop', or encode them as numbers yourself"
        )
    if categorical == "drop":
        steps.append(f"dropped {len(text)} text column(s): {_names(text)}")
        return X.drop(columns=text)
    times = [c for c in text if _is_time(X[c])]
    if categorical == "onehot" and times:
        raise InvalidInputError(
            f"date/time column(s) {_names(times)} are not categories: one-hot encoding would "
            "make a column per time point; choose categorical = 'ordinal' (codes in time "
            "order) or 'drop', or drop them ([data].drop)"
        )
    ids = [c for c in text if c not in times and _is_identifier(X[c])]
    if ids:
        raise InvalidInputError(
            f"text column(s) {_names(ids)} hold a different value in every row: an "
            "identifier, not a category, which no encoding makes a feature; drop them "
            f"([data] drop = {[str(c) for c in ids[:_SHOWN]]}, or categorical = 'drop')"
        )
    if categorical == "ordinal":
        blocks = {col: _ordinal(X[col], _is_time(X[col])) for col in text}
        steps.append(
            f"coded {len(text)} text column(s) by their values' sorted order: {_names(text)}"
        )
    else:
        from sklearn.preprocessing import OneHotEncoder

        for col in text:
            levels = int(X[col].nunique())
            if levels > _MANY_LEVELS:
                warnings.warn(
                    f"text column {str(col)!r} has {levels} levels: one-hot encoding makes "
                    f"{levels} columns of it; consider categorical = 'ordinal', or dropping "
                    "it ([data].drop)",
                    DataPreparationWarning,
                    stacklevel=4,
                )
        encoder = OneHotEncoder(
            sparse_output=False, dtype=np.float64, feature_name_combiner=_combine_name
        )
        codes = encoder.fit_transform(X[text].astype(str))
        names = list(encoder.get_feature_names_out(text))
        ends = np.cumsum([len(c) for c in encoder.categories_])
        blocks = {
            col: pd.DataFrame(codes[:, a:b], index=X.index, columns=names[a:b])
            for col, a, b in zip(text, np.r_[0, ends[:-1]], ends, strict=True)
        }
        steps.append(
            f"one-hot encoded {len(text)} text column(s) into {len(names)} 0/1 columns: "
            f"{_names(text)}"
        )
    # each encoded block takes its column's place, so the column order stays readable
    out = pd.concat([blocks[c] if c in blocks else X[[c]] for c in X.columns], axis=1)
    if out.columns.duplicated().any():
        raise InvalidInputError(
            f"encoding made column names that already exist: "
            f"{_names(out.columns[out.columns.duplicated()].unique())}; rename the columns"
        )
    return out


def _ordinal(column: pd.Series, is_time: bool) -> pd.DataFrame:
    """A column coded 0, 1, ... by its values' sorted order: times by time, text as text."""
    values = column if is_time else column.astype(str)
    codes, _ = pd.factorize(values, sort=True)
    return pd.DataFrame({column.name: codes.astype(np.float64)}, index=column.index)


def _combine_name(feature: str, category) -> str:
    return f"{feature}={category}"
