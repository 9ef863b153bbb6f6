"""What in a run's data would stop it or mislead it, found before anything is fitted.

``moweights validate`` reads the data as the run would (:func:`moweights.pipeline.data.
load_units`: the file, its sites, ``[data] drop``) and reports every problem at once, each
with the option that handles it; ``moweights run`` stops on the same problems before it
makes a run folder (:func:`load_checked`). A problem is *blocking* when the run could not
go on, or would compute something wrong, without the user's choice:

============  ==========================================================  ===================
kind          found                                                       handled by
============  ==========================================================  ===================
unreadable    the file cannot be read (ragged, binary, a missing row)     the file itself
duplicate     a column name the header repeats (pandas would rename it)   renaming columns
mismatch      a site whose feature columns differ from the other sites'   ``[data] on_mismatch``
              (not blocking with on_mismatch = 'drop': the site is left out)
identifier    a column with a different value in every row: text, or      ``[data] drop``
              integers counting rows or named like an id (sample, id, ...)
missing       gaps in features (columns and counts) or in the target      ``[data] missing``
text          non-numeric columns (with their number of values)           ``[data] categorical``
transform     negative values under a log transform                       ``[data] transform``
classes       one class, a class of one row, a class smaller than the     ``[evaluation] cv``,
              evaluation's folds                                          the target
constant      a column holding one value (not blocking: it ranks last)    ``[data] drop``
============  ==========================================================  ===================

A target that is not in the file is the config check's (:mod:`moweights.config.check`,
with a did-you-mean), since it needs only the header.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

import rankers
from moweights.config import RunConfig
from moweights.errors import DataProblemsError
from moweights.pipeline.data import is_classes, load_units
from rankers.exceptions import FeatureMismatchError, MoweightsError

__all__ = [
    "KINDS",
    "PREPARED",
    "DataProblem",
    "data_problems",
    "drop_odd_sites",
    "identifier_columns",
    "load_checked",
    "raise_blocking",
    "site_mismatch",
    "table_problems",
]

#: the kinds of problems, in the order they are reported
KINDS = (
    "unreadable",
    "duplicate",
    "mismatch",
    "identifier",
    "missing",
    "text",
    "transform",
    "classes",
    "constant",
)
_SHOWN = 8  # names listed before "and N more"
#: a column with a different value in each of at least this many rows may be an identifier
_ID_MIN_ROWS = 10
#: names that say a column identifies rows (whole name, case-insensitive), or ends in "id"
_ID_NAME = re.compile(
    r"(?i)^(?:id|ids|index|idx|key|uid|uuid|name|names|row|rows|record|sample|samples|subject|"
    r"patient|donor|case|barcode|cell|obs|obs_names|unnamed: ?\d+)$|(?:[_ .-]id|ID|Id)$"
)
_MISSING_FIX = (
    "[data] missing = 'impute_median' (or 'drop_rows', 'drop_columns', 'impute_mean', "
    "'impute_most_frequent')"
)


@dataclass(frozen=True)
class DataProblem:
    """One problem of a data set: what, where, and the option that handles it.

    Attributes
    ----------
    kind : str
        One of :data:`KINDS`.
    message : str
        What was found, naming the columns (and counts).
    fix : str
        The option (or action) that handles it.
    blocking : bool
        Whether the run stops on it (``validate`` exits 2); a non-blocking problem is a
        note.
    where : str
        The data set or site it was found in ("" for a single data set).
    columns : tuple of str
        The columns concerned.
    """

    kind: str
    message: str
    fix: str
    blocking: bool = True
    where: str = ""
    columns: tuple[str, ...] = ()

    def __str__(self) -> str:
        where = f"{self.where}: " if self.where else ""
        return f"{where}{self.message}; {self.fix}"


def _names(columns, limit: int = _SHOWN) -> str:
    columns = [str(c) for c in columns]
    more = len(columns) - limit
    return ", ".join(repr(c) for c in columns[:limit]) + (f" and {more} more" if more > 0 else "")


def _list(columns, limit: int = _SHOWN) -> str:
    """A TOML list of names, for a fix the user can paste."""
    columns = [str(c) for c in columns]
    shown = ", ".join(f'"{c}"' for c in columns[:limit])
    return f"[{shown}{', ...' if len(columns) > limit else ''}]"


def _is_text(series: pd.Series) -> bool:
    return not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series))


def _is_time(series: pd.Series) -> bool:
    return _is_time_dtype(series.dtype)


def _is_time_dtype(dtype) -> bool:
    return (
        pd.api.types.is_datetime64_any_dtype(dtype)
        or pd.api.types.is_timedelta64_dtype(dtype)
        or isinstance(dtype, pd.PeriodDtype)
    )


def _identifier(name, series: pd.Series) -> str | None:
    """Why ``series`` looks like a row identifier, or None.

    Text with a different value in every row (of at least 10) is one; so are integers with
    a different value in every row that count the rows (a run of consecutive values, as
    ``0 .. n-1`` or a sample number) or sit in a column named like an id. Other distinct
    integers (counts of a gene, say) are features. Dates and times are not identifiers.
    """
    values = series.dropna()
    if len(values) < _ID_MIN_ROWS or _is_time(series) or values.nunique() != len(values):
        return None
    if _is_text(series):
        return f"{len(values)} distinct text values"
    if not pd.api.types.is_integer_dtype(series):
        return None
    low, high = int(values.min()), int(values.max())
    if high - low == len(values) - 1:
        return f"the consecutive numbers {low}..{high}"
    if _ID_NAME.search(str(name)):
        return f"{len(values)} distinct numbers"
    return None


def _by_dtype(frame: pd.DataFrame, test) -> np.ndarray:
    """``test(dtype)`` for each column of ``frame``, decided once per distinct dtype (a wide
    table has thousands of columns and one or two dtypes)."""
    dtypes = list(frame.dtypes)
    answer = {dtype: bool(test(dtype)) for dtype in set(dtypes)}
    return np.fromiter((answer[d] for d in dtypes), dtype=bool, count=len(dtypes))


def _text_dtype(dtype) -> bool:
    return not (pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype))


def _numpy_kind(dtype, kinds: str) -> bool:
    return isinstance(dtype, np.dtype) and dtype.kind in kinds


def _blocks(frame: pd.DataFrame, mask: np.ndarray):
    """The columns where ``mask`` holds, as ``(positions, 2-d array)`` per dtype: one
    ``to_numpy`` per block (no upcast of int64 to float64, no per-column Series)."""
    positions = np.flatnonzero(mask)
    dtypes = frame.dtypes.to_numpy()[positions]
    for dtype in dict.fromkeys(dtypes):
        where = positions[dtypes == dtype]
        part = frame if len(where) == frame.shape[1] else frame.iloc[:, where]
        yield where, part.to_numpy(dtype=dtype)


def _identifiers(X: pd.DataFrame) -> dict:
    """:func:`_identifier` for every column of ``X`` (unique names), in column order.

    Only integer and text columns can be identifiers: numpy integer columns (no gaps) are
    checked as whole blocks (sorted, a different value in every row when no two neighbours
    are equal), the others (text, nullable integers) one by one.
    """
    if len(X) < _ID_MIN_ROWS:  # fewer rows than an identifier needs, gaps or not
        return {}
    found: dict[int, str] = {}
    ints = _by_dtype(X, lambda d: _numpy_kind(d, "iu"))
    rest = ~ints & _by_dtype(
        X, lambda d: pd.api.types.is_integer_dtype(d) or (_text_dtype(d) and not _is_time_dtype(d))
    )
    n = len(X)
    for where, block in _blocks(X, ints):
        ordered = np.sort(block, axis=0)  # differences wrap around, never to 0: no overflow
        distinct = (np.diff(ordered, axis=0) != 0).all(axis=0)
        for j in np.flatnonzero(distinct):
            low, high = int(ordered[0, j]), int(ordered[-1, j])
            if high - low == n - 1:
                found[where[j]] = f"the consecutive numbers {low}..{high}"
            elif _ID_NAME.search(str(X.columns[where[j]])):
                found[where[j]] = f"{n} distinct numbers"
    for i in np.flatnonzero(rest):
        why = _identifier(X.columns[i], X.iloc[:, i])
        if why is not None:
            found[i] = why
    return {X.columns[i]: found[i] for i in sorted(found)}


def _constant(frame: pd.DataFrame) -> np.ndarray:
    """Whether each column of ``frame`` holds at most one value besides gaps (pandas'
    ``nunique() <= 1``; an empty column counts): numeric blocks by their min and max."""
    if len(frame) == 0:
        return np.ones(frame.shape[1], dtype=bool)
    out = np.zeros(frame.shape[1], dtype=bool)
    numeric = _by_dtype(frame, lambda d: _numpy_kind(d, "biuf"))
    for where, block in _blocks(frame, numeric):
        if block.dtype.kind == "f":  # fmin/fmax skip NaN, and an all-NaN column gives NaN
            low, high = np.fmin.reduce(block, axis=0), np.fmax.reduce(block, axis=0)
            out[where] = (low == high) | np.isnan(low)
        else:
            out[where] = block.min(axis=0) == block.max(axis=0)
    for i in np.flatnonzero(~numeric):
        out[i] = frame.iloc[:, i].nunique(dropna=True) <= 1
    return out


def identifier_columns(X: pd.DataFrame) -> dict[str, str]:
    """The columns of ``X`` that identify rows rather than measure them, each with why
    (see the module's table): text with a different value in every row, or distinct
    integers that count the rows or sit in a column named like an id."""
    return {str(c): why for c, why in _identifiers(X).items()}


def table_problems(
    X: pd.DataFrame,
    y: pd.Series | None,
    config: RunConfig,
    *,
    where: str = "",
    supervised: bool | None = None,
) -> list[DataProblem]:
    """Every problem of one table as read (before the ``[data]`` options are applied).

    Parameters
    ----------
    X : DataFrame
        The features as loaded (``[data] drop`` applied), never modified.
    y : Series or None
        The target.
    config : RunConfig
        The run's settings (``[data]`` options, the evaluation's folds, the rankers).
    where : str
        Prefix naming the data set or site.
    supervised : bool, optional
        Whether the target is used by a ranker or the class evaluation (default: from
        ``config``).

    Returns
    -------
    list of DataProblem
        In the order of :data:`KINDS`.
    """
    data = config.data
    out: list[DataProblem] = []

    def add(kind, message, fix, columns=(), blocking=True):
        out.append(DataProblem(kind, message, fix, blocking, where, tuple(map(str, columns))))

    repeated = X.columns[X.columns.duplicated()].unique()
    if len(repeated):
        add(
            "duplicate",
            f"repeated column names: {_names(repeated)}",
            "rename them so that every column has a name of its own",
            repeated,
        )
        X = X.loc[:, ~X.columns.duplicated()]
    ids = _identifiers(X)
    # categorical = 'drop' leaves text columns out, text identifiers with them
    reported = {c: w for c, w in ids.items() if not (data.categorical == "drop" and _is_text(X[c]))}
    if reported:
        ids = reported
        shown = ", ".join(f"{c!r} ({why})" for c, why in list(ids.items())[:_SHOWN])
        more = len(ids) - _SHOWN
        add(
            "identifier",
            f"identifier column(s), a different value in every row: {shown}"
            + (f" and {more} more" if more > 0 else "")
            + "; an identifier is no feature (a ranker would rank the sample ids)",
            f"leave them out: [data] drop = {_list(ids)}",
            ids,
        )
    features = X.drop(columns=list(ids))
    gaps = features.isna().sum()
    gaps = gaps[gaps > 0]
    if len(gaps) and data.missing == "error":
        shown = ", ".join(f"{c!r} ({n} of {len(X)} rows)" for c, n in gaps.iloc[:_SHOWN].items())
        more = len(gaps) - _SHOWN
        rows = int(features.isna().any(axis=1).sum())
        add(
            "missing",
            f"missing values in {len(gaps)} column(s): {shown}"
            + (f" and {more} more" if more > 0 else "")
            + f"; {rows} of {len(X)} rows have a gap",
            _MISSING_FIX,
            gaps.index,
        )
    elif len(gaps) and data.missing.startswith("impute"):
        empty = [c for c in gaps.index if gaps[c] == len(X)]
        if empty:
            add(
                "missing",
                f"column(s) with no value at all cannot be imputed: {_names(empty)}",
                f"[data] drop = {_list(empty)} (or missing = 'drop_columns')",
                empty,
            )
    if y is not None and y.isna().any() and data.missing == "error":
        add(
            "missing",
            f"the target is missing in {int(y.isna().sum())} of {len(y)} rows",
            "[data] missing = 'drop_rows' (any missing option drops rows without a target)",
        )
    text = list(features.columns[_by_dtype(features, _text_dtype)])
    times = [c for c in text if _is_time(features[c])]
    if text and data.categorical == "error":
        shown = ", ".join(f"{c!r} ({features[c].nunique()} values)" for c in text[:_SHOWN]) + (
            f" and {len(text) - _SHOWN} more" if len(text) > _SHOWN else ""
        )
        add(
            "text",
            f"text (non-numeric) column(s): {shown}",
            "[data] categorical = 'onehot' (one 0/1 column per value), 'ordinal' or 'drop', "
            f"or leave them out: [data] drop = {_list(text)}",
            text,
        )
    elif times and data.categorical == "onehot":
        add(
            "text",
            f"date/time column(s) {_names(times)} are no categories",
            f"[data] categorical = 'ordinal' (codes in time order), or [data] drop = "
            f"{_list(times)}",
            times,
        )
    transform = data.get("transform") or "none"
    if transform != "none":
        from moweights.data import negative_columns

        negative = negative_columns(features)
        if negative:
            shown = ", ".join(f"{c!r} (min {v:.4g})" for c, v in list(negative.items())[:_SHOWN])
            more = len(negative) - _SHOWN
            add(
                "transform",
                f"transform = {transform!r} takes values >= 0; {len(negative)} column(s) hold "
                f"negative values: {shown}" + (f" and {more} more" if more > 0 else ""),
                "[data] transform = 'none' (data already on a log scale, or centred)",
                negative,
            )
    out += _class_problems(y, config, where, supervised)
    constant = list(features.columns[_constant(features)])
    if constant:
        everything = len(constant) == features.shape[1]
        add(
            "constant",
            f"{len(constant)} constant column(s), one value in every row: {_names(constant)}"
            + ("; nothing is left to rank" if everything else "; every ranker ranks them last"),
            f"leave them out: [data] drop = {_list(constant)}",
            constant,
            blocking=everything,
        )
    return out


def _uses_target(config: RunConfig) -> bool:
    if config.markers.enabled:
        return True  # each class against the rest
    from moweights.pipeline.steps import make_ranker, needs_y

    ev = config.evaluation
    if ev.enabled and (ev.classification.enabled is not False or ev.error_curves.enabled):
        return True  # "auto" evaluations use classes when there are some
    return any(needs_y(make_ranker(spec, config, main=False)) for spec in config.rankers)


def _label(value) -> str:
    """A class label as the user wrote it (numpy scalars as Python's)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _continuous_problems(y, config: RunConfig, where: str) -> list[DataProblem]:
    """A continuous target (e.g. labels 1.5 and 2.5) for rankers that need classes: what
    ``run`` refuses when the first of them is fitted, found by ``validate`` too."""
    from sklearn.utils.multiclass import type_of_target

    from moweights.pipeline.steps import make_ranker

    values = y.dropna()
    if not len(values) or type_of_target(np.asarray(values)) != "continuous":
        return []
    need = [
        spec.label
        for spec in config.rankers
        if rankers.ranker_tags(make_ranker(spec, config, main=False)).target_kind
        == "classification"
    ]
    if config.markers.enabled:
        need.append("[markers]")
    if not need:
        return []
    table = rankers.available()
    fit = table[table["target_kind"].isin(["regression", "both"])]["name"].tolist()
    distinct = np.unique(np.asarray(values, dtype=float))
    shown = ", ".join(f"{v:g}" for v in distinct[:_SHOWN])
    return [
        DataProblem(
            "classes",
            f"the target is continuous ({len(distinct)} distinct values: {shown}"
            f"{', ...' if len(distinct) > _SHOWN else ''}), but {', '.join(need)} "
            "need(s) class labels (every distinct value would be a class)",
            "give the target as classes (whole numbers or text labels; bin a quantity "
            f"with pandas.qcut), or rank with rankers for a continuous target ({', '.join(fit)})",
            True,
            where,
            (),
        )
    ]


def _class_problems(y, config: RunConfig, where: str, supervised) -> list[DataProblem]:
    if y is not None and not is_classes(y.dropna()):
        return _continuous_problems(y, config, where)
    if y is None:
        if not config.markers.enabled:
            return []
        return [
            DataProblem(
                "classes",
                "[markers] compares each class with the rest, but the data has no target",
                "set [data] target (a .mat file: its Y matrix), or [markers] enabled = false",
                True,
                where,
            )
        ]
    counts = pd.Series(np.asarray(y.dropna())).value_counts()
    supervised = _uses_target(config) if supervised is None else supervised
    if not supervised:
        return []
    out = []
    if pd.api.types.is_numeric_dtype(y) and len(counts) > max(20, len(y) // 10):
        # whole numbers of many values (a count, a score): the evaluation reads them as
        # classes (scikit-learn's type_of_target), but they are more likely a quantity
        singles = int((counts < 2).sum())
        out.append(
            DataProblem(
                "classes",
                f"the target holds {len(counts)} distinct whole numbers in {len(y)} "
                f"rows ({singles} of a single row): the evaluation reads them as classes",
                "if the target is a quantity, store it with decimals that are not all .0; if it "
                "holds classes, merge the rare ones",
                False,
                where,
            )
        )
        return out
    if len(counts) < 2:
        value = counts.index[0] if len(counts) else None
        out.append(
            DataProblem(
                "classes",
                f"the target holds a single class ({_label(value)} in every row)",
                "supervised rankers and class prediction need two classes or more: check "
                "[data] target",
                True,
                where,
            )
        )
        return out
    rare = counts[counts < 2]
    if len(rare):
        shown = ", ".join(f"{_label(k)} (1 row)" for k in list(rare.index)[:_SHOWN])
        out.append(
            DataProblem(
                "classes",
                f"{len(rare)} class(es) of a single row: {shown}",
                "a class needs at least 2 rows (one to fit on, one to test): merge or drop the "
                "rare classes in the file",
                True,
                where,
            )
        )
        return out
    cv = config.evaluation.cv
    smallest = int(counts.min())
    if config.evaluation.enabled and smallest < cv:
        small = counts[counts < cv]
        shown = ", ".join(f"{_label(k)} ({n} rows)" for k, n in list(small.items())[:_SHOWN])
        out.append(
            DataProblem(
                "classes",
                f"too few samples per class for {cv}-fold evaluation: {shown}; each "
                "fold's test part would miss the class",
                f"[evaluation] cv = {smallest} (the smallest class's size), or enabled = false",
                True,
                where,
            )
        )
    return out


def _where(config: RunConfig, site: str, n_units: int) -> str:
    name = config.data.get("name")
    if n_units > 1:
        return f"site {site!r}"
    return f"data set {name!r}" if name else ""


def _header_problems(config: RunConfig, where: str) -> list[DataProblem]:
    """Repeated names in the header of a csv/tsv file (pandas renames them on reading)."""
    from moweights.data import duplicate_columns

    paths = [s.path for s in config.sites if s.get("path")] or [config.data.get("path")]
    out = []
    for path in paths:
        if path is None or config.data.get("transpose"):
            continue
        try:
            repeated = duplicate_columns(path)
        except MoweightsError:
            continue  # the reading itself reports it
        if repeated:
            shown = ", ".join(f"{c!r} ({n} times)" for c, n in list(repeated.items())[:_SHOWN])
            out.append(
                DataProblem(
                    "duplicate",
                    f"{Path(path).name} repeats column names: {shown} (read as "
                    f"'name', 'name.1', ...)",
                    "rename them in the file so that every column has a name of its own",
                    True,
                    where,
                    tuple(repeated),
                )
            )
    return out


def site_mismatch(
    config: RunConfig, units: dict, *, stage: str = ""
) -> tuple[list[DataProblem], list[str]]:
    """Sites whose feature columns differ, as ``[data] on_mismatch`` handles them.

    The columns are compared by name as :func:`aggregation.federated.rank_sites` compares
    them (the target is not among a unit's columns, ``[data] drop`` is applied already).
    With on_mismatch = "raise" (the default) every differing site is a blocking problem
    naming its missing and extra columns and the option; with "drop" the sites whose
    columns differ from the set more than half of the sites hold are notes, and returned
    to be left out; without such a majority (two sites, two camps) they block.

    Parameters
    ----------
    config : RunConfig
    units : dict
        Site -> (X, y), as :func:`~moweights.pipeline.data.load_units` gives them.
    stage : str, optional
        Said after "feature columns" (e.g. "as [data] options prepared them").

    Returns
    -------
    problems : list of DataProblem
    dropped : list of str
        The sites to leave out of the run (only with on_mismatch = "drop").
    """
    if len(units) < 2:
        return [], []
    from aggregation.federated.sites import check_same_features, odd_sites

    names = {site: [str(c) for c in X.columns] for site, (X, _) in units.items()}
    try:
        check_same_features(names)
    except FeatureMismatchError as exc:
        differ = exc
    else:
        return [], []
    how = config.data.get("on_mismatch") or "raise"
    columns = f"feature columns{f' ({stage})' if stage else ''}"
    dropped: dict[str, str] = {}
    if how == "drop":
        try:
            dropped = odd_sites(names)
        except FeatureMismatchError:
            fix = (
                f"no column set is held by more than half of the {len(names)} sites, so "
                "[data] on_mismatch = 'drop' cannot tell the odd one: make the sites' columns "
                "agree (or leave the extra ones out with [data] drop)"
            )
        else:
            fix = "[data] on_mismatch = 'drop' (set 'raise' to stop instead)"
    else:
        fix = (
            "set [data] on_mismatch = 'drop' to leave such sites out of the run (the sites "
            "holding the columns more than half of the sites share are kept), or make the "
            "sites' columns agree"
        )
    out = []
    for site in units:
        if site not in differ.missing:
            continue
        missing, extra = differ.missing[site], differ.extra[site]
        what = f"missing {_names(missing) or 'none'}; extra {_names(extra) or 'none'}"
        if site in dropped:
            message = f"left out of the run: its {columns} differ from the other sites': {what}"
        else:
            message = f"its {columns} differ from the other sites': {what}"
        out.append(
            DataProblem(
                "mismatch",
                message,
                fix,
                site not in dropped,
                f"site {site!r}",
                tuple(map(str, [*missing, *extra])),
            )
        )
    return out, list(dropped)


#: how a site mismatch found after [data] missing / categorical names the columns
PREPARED = "as the [data] missing and categorical options prepared them"


def _prepared_mismatch(config: RunConfig, units: dict) -> list[DataProblem]:
    """A site mismatch that only [data] missing / categorical make (one-hot codes, dropped
    columns differing by site), as the run finds it after preparing the data."""
    data = config.data
    if len(units) < 2 or (data.missing, data.categorical) == ("error", "error"):
        return []  # under the defaults preparing keeps every column as it was read
    from moweights.pipeline.data import prepare_units

    dropped = site_mismatch(config, units)[1]
    try:
        prepared = prepare_units(config, {s: u for s, u in units.items() if s not in dropped})[0]
    except MoweightsError:
        return []  # what stops preparing is among the problems found already
    return site_mismatch(config, prepared, stage=PREPARED)[0]


def drop_odd_sites(config: RunConfig, units: dict, *, stage: str = "") -> tuple[dict, list[str]]:
    """``units`` without the sites ``[data] on_mismatch = 'drop'`` leaves out, and a note for
    each; a mismatch it does not handle raises :class:`~moweights.errors.DataProblemsError`
    (exit code 2), naming the sites, their columns and the option."""
    problems, dropped = site_mismatch(config, units, stage=stage)
    raise_blocking(config, problems)
    kept = {s: u for s, u in units.items() if s not in dropped}
    return kept, [f"data: {p}" for p in problems]


def unit_problems(config: RunConfig, units: dict) -> list[DataProblem]:
    """Every problem of a single data set's loaded units (one, or one per site); a site
    ``[data] on_mismatch = 'drop'`` leaves out is one note, its table not checked."""
    out = _header_problems(config, _where(config, "", 1))
    mismatch, dropped = site_mismatch(config, units)
    out += mismatch
    for site, (X, y) in units.items():
        if site not in dropped:
            out += table_problems(X, y, config, where=_where(config, site, len(units)))
    return out


def data_problems(config: RunConfig) -> list[DataProblem]:
    """Every problem of every data set of ``config`` (each of a study's), read as its run
    would read it; a file that cannot be read is one ``unreadable`` problem."""
    out = []
    for data in config.datasets or (config.data,):
        sub = config.for_dataset(data) if config.datasets else config
        where = f"data set {data.name!r}" if config.datasets else ""
        try:
            units = load_units(sub)
        except MoweightsError as exc:
            out.append(
                DataProblem(
                    "unreadable",
                    " ".join(str(exc).split()),
                    "fix the file or the [data] options",
                    True,
                    where,
                )
            )
            continue
        found = unit_problems(sub, units)
        if not any(p.blocking for p in found):
            found += _prepared_mismatch(sub, units)
        if where:
            found = [
                DataProblem(
                    p.kind,
                    p.message,
                    p.fix,
                    p.blocking,
                    f"{where}: {p.where}" if p.where else where,
                    p.columns,
                )
                for p in found
            ]
        out += found
    order = {k: i for i, k in enumerate(KINDS)}
    return sorted(out, key=lambda p: (not p.blocking, order.get(p.kind, len(order))))


def raise_blocking(config: RunConfig, problems: list[DataProblem]) -> None:
    """Raise :class:`~moweights.errors.DataProblemsError` (a ``ConfigError``: exit code
    2 from the command line) listing the blocking problems; nothing when there are none."""
    blocking = [p for p in problems if p.blocking]
    if blocking:
        lines = [f"{config.source}: data: {p}" for p in blocking]
        raise DataProblemsError(lines, path=config.source)


def load_checked(config: RunConfig) -> tuple[dict, list[str]]:
    """A single data set's units, loaded once and checked: every blocking problem at once
    as a :class:`~moweights.errors.DataProblemsError`, the others as notes.

    Returns
    -------
    units : dict
        As :func:`~moweights.pipeline.data.load_units` gives them (for
        :func:`~moweights.pipeline.data.prepare_units`).
    notes : list of str
        The non-blocking problems, for the run's notes.
    """
    units = load_units(config)
    problems = unit_problems(config, units)
    raise_blocking(config, problems)
    dropped = site_mismatch(config, units)[1]
    units = {s: u for s, u in units.items() if s not in dropped}
    return units, [f"data: {p}" for p in problems if not p.blocking]
