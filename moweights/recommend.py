"""Which ranker for this data set: the atlas's measurements for the nearest shape.

``benchmarks/protocols/atlas.py`` fits every registered ranker on planted structures of many shapes
and records how many planted features each one recovers. :func:`recommend` reads a data
set's shape (samples, features, whether it has a class target and how balanced it is),
picks the atlas cells of the structures that shape can hold and the nearest measured
shape (width and rows), and ranks the rankers by the share of planted features they
recovered there, with the reason. The atlas summary shipped with the package
(``moweights/data/atlas.csv``) holds the committed runs: ``benchmarks/results/atlas_grid/``
(200 samples x 200 and 2,000 features, 0.5-50 % informative, 2 seeds; the slowest rankers
at 200 features only), ``benchmarks/results/atlas/`` (200 x 1,000) and the 60- and
800-sample cells of ``benchmarks/results/atlas_samples/`` (x 1,000; 17 fast rankers), the
200 x 200 cells replaced by ``benchmarks/results/atlas_v3_200/`` (every registered ranker,
the regression structures, the aggregates and the ensemble ``stacked``); written by
``python -m benchmarks.protocols.atlas --ship RUN ...``.
``atlas=`` takes another run's ``atlas.csv``.
See the guide page "Which ranker when".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from moweights.data import read_table
from rankers.exceptions import InvalidInputError
from rankers.ties import order_desc

__all__ = ["FileRecommendation", "load_atlas", "recommend", "recommend_file"]

#: structures a data set can hold, by whether it has a class target (or a numeric one)
UNSUPERVISED = ("clusters", "modules", "manifold")
SUPERVISED = ("shift", "xor")
REGRESSION = ("linear", "product")
#: atlas rows that are no single ranker: the leaderboards' aggregates of all the rankers of
#: the structure's kind, and the stacking ensemble (moweights.ensemble.StackedRanker)
AGGREGATES = ("mean_rank", "borda", "kemeny_top32", "generic_tol")
ENSEMBLE = "stacked"
#: a minority class below this share also reads the "imbalanced" cells
IMBALANCED_BELOW = 0.2
#: the rankers each kind of target reads: their registry ``target_kind``
TARGET_KINDS = {
    "classes": ("classification", "both"),
    "regression": ("regression", "both"),
    "none": ("unsupervised",),
}
_COLUMNS = {"structure", "informative", "n_features", "n_samples", "ranker", "precision"}


def load_atlas(path: str | Path | None = None) -> pd.DataFrame:
    """The atlas results: one row per cell (``benchmarks/protocols/atlas.py``'s ``atlas.csv``).

    Parameters
    ----------
    path : str or Path, optional
        Another run's ``atlas.csv`` (or a tsv/parquet copy); the shipped summary by default.

    Raises
    ------
    DataFileError
        The file is missing or not a readable table (an ``InvalidInputError``).
    InvalidInputError
        The table lacks the atlas's columns.
    """
    if path is None:
        source = resources.files("moweights.data").joinpath("atlas.csv")
        with resources.as_file(source) as file:
            frame = read_table(file, what="atlas")
    else:
        frame = read_table(path, what="atlas")  # DataFileError, an InvalidInputError
    missing = _COLUMNS - set(frame.columns)
    if missing:
        raise InvalidInputError(f"the atlas lacks the columns {sorted(missing)}")
    return frame


def _is_numeric_target(y) -> bool:
    """A quantity (regression), not class labels."""
    from sklearn.utils.multiclass import type_of_target

    return type_of_target(np.asarray(y)) == "continuous"


def _minority_share(y) -> float:
    counts = pd.Series(np.asarray(y)).value_counts()
    return float(counts.min() / counts.sum())


def recommend(X, y=None, *, top: int | None = 5, atlas=None) -> pd.DataFrame:
    """Rankers the atlas supports for a data set of this shape, best first.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_features)
        Only its shape is read.
    y : array-like, optional
        Class labels: supervised structures (class shifts, interactions, and imbalanced
        classes when the smallest class holds under 20% of the rows) and the rankers
        that read classes (registry ``target_kind`` "classification" or "both"); a
        numeric target: the regression structures (a linear signal, pair products) and
        the rankers that read one ("regression", "both"); without it, unsupervised
        structures (clusters, co-expression modules, a manifold) and unsupervised
        rankers. The aggregates and the ensemble of the structure's kind, and names the
        registry does not know, are kept.
    top : int or None, default=5
        How many rankers to return (None: all).
    atlas : DataFrame, str or Path, optional
        Atlas results (see :func:`load_atlas`); the shipped ones by default.

    Returns
    -------
    DataFrame
        One row per ranker: ``ranker``, ``recovered`` (mean share of planted features
        in its top k over the matching cells), one column per structure, ``worst_gap``
        (its precision minus the best single ranker's on its worst structure: 0 when it
        is never beaten), ``kind`` ("ranker"; "aggregate" for the rank aggregates of all
        the rankers of that kind, "ensemble" for :class:`moweights.ensemble.StackedRanker`),
        ``cpu_seconds`` (median fit time at that width) and ``why`` (one sentence).
    """
    shape = np.shape(X)
    if len(shape) != 2 or min(shape) < 1:
        raise InvalidInputError(f"X must be a 2-d table with rows and columns; got shape {shape}")
    m, n = shape
    frame = atlas if isinstance(atlas, pd.DataFrame) else load_atlas(atlas)
    if y is not None and len(y) != m:
        raise InvalidInputError(f"y has {len(y)} values for {m} rows of X")
    numeric = y is not None and _is_numeric_target(y)
    if numeric:
        structures = list(REGRESSION)
    else:
        structures = list(SUPERVISED if y is not None else UNSUPERVISED)
    if y is not None and not numeric and _minority_share(y) < IMBALANCED_BELOW:
        structures.append("imbalanced")
    cells = frame[frame["structure"].isin(structures)]
    if cells.empty:
        raise InvalidInputError(f"the atlas has no cells for the structures {structures}")
    # the nearest measured shape (width and rows together, on log scales): the atlas need
    # not hold every width at every number of rows; ties go to the smaller shape
    shapes = np.unique(cells[["n_features", "n_samples"]].to_numpy(dtype=float), axis=0)
    gap = np.abs(np.log(shapes[:, 0]) - np.log(n)) + np.abs(np.log(shapes[:, 1]) - np.log(m))
    width, rows = (int(v) for v in shapes[np.argmin(gap)])
    cells = cells[(cells["n_features"] == width) & (cells["n_samples"] == rows)]
    if y is None:  # supervised rankers need a target the user does not have
        unsupervised = set(cells.loc[cells["structure"].isin(UNSUPERVISED), "ranker"])
        cells = cells[cells["ranker"].isin(unsupervised)]
    # the rankers that read this kind of target (the aggregates and the ensemble of the
    # structure's kind, and names the registry does not know, stay)
    wanted = TARGET_KINDS["regression" if numeric else "classes" if y is not None else "none"]
    kinds = {r: ranker_kind(r) for r in cells["ranker"].unique()}
    # (``stacked`` runs with every kind of target: its rows are those of the structures')
    cells = cells[
        cells["ranker"].map(lambda r: r == ENSEMBLE or kinds[r] is None or kinds[r] in wanted)
    ]
    per = cells.pivot_table(index="ranker", columns="structure", values="precision", aggfunc="mean")
    per = per.reindex(columns=[s for s in structures if s in per.columns])
    out = per.copy()
    out.insert(0, "recovered", per.mean(axis=1))
    # how far below the best single ranker it falls on its worst structure: near 0 is the
    # safe choice whatever structure the data hold
    singles = [r for r in per.index if r not in (*AGGREGATES, ENSEMBLE, "random")]
    best = per.loc[singles].max(axis=0) if singles else per.max(axis=0)
    out["worst_gap"] = (per - best).min(axis=1)
    out["kind"] = [
        "ensemble" if r == ENSEMBLE else "aggregate" if r in AGGREGATES else "ranker"
        for r in out.index
    ]
    if "cpu_seconds" in cells.columns:
        out["cpu_seconds"] = cells.groupby("ranker")["cpu_seconds"].median()
    chance = out.loc["random", "recovered"] if "random" in out.index else np.nan
    out = out.drop(index="random", errors="ignore")
    # near-equal shares tie (the rankers' tie rule), then the ranker's name decides
    out = out.iloc[order_desc(out["recovered"].fillna(-1.0).to_numpy())]
    out["why"] = [
        _why(name, row, per.columns, width, rows, chance, kinds.get(name))
        for name, row in out.iterrows()
    ]
    out = out.reset_index()
    return out if top is None else out.head(int(top))


def _why(name, row, structures, width, rows, chance, kind=None) -> str:
    best = max(structures, key=lambda s: -np.inf if pd.isna(row[s]) else row[s])
    worst = min(structures, key=lambda s: np.inf if pd.isna(row[s]) else row[s])
    text = (
        f"on {rows} x {width} planted data it put {row['recovered']:.0%} of the planted "
        f"features in its top k (best on {best}: {row[best]:.0%}"
    )
    if worst != best:
        text += f"; worst on {worst}: {row[worst]:.0%}"
    text += ")"
    if name in AGGREGATES:
        text = f"the {name} aggregate of every ranker of this kind: " + text
    elif name == ENSEMBLE:
        # its rows on the numeric structures are its regression task: a config says so
        task = ", params = { task = \"regression\" }" if "linear" in structures else ""
        text = (
            f"the stacking ensemble (ranker 'stacked'{task}, "
            "moweights.ensemble.StackedRanker): " + text
        )
    elif kind is not None:
        text = f"{_KIND_WORDS[kind]}; " + text
    gap = row.get("worst_gap")
    if pd.notna(gap) and gap >= 0:
        text += "; never below the best single ranker of a structure"
    elif pd.notna(gap) and gap > -0.1:
        text += f"; never more than {-gap:.2f} below the best ranker of a structure"
    if np.isfinite(chance):
        text += f"; a random ranking finds {chance:.0%}"
    return text


_KIND_WORDS = {
    "classification": "a class ranker (reads the classes)",
    "regression": "a regression ranker (reads the numeric target)",
    "both": "reads the target (classes or numbers)",
    "unsupervised": "unsupervised (reads the features only)",
}


def ranker_kind(name: str) -> str | None:
    """The registered ranker's ``target_kind``; None for a name the registry does not
    hold (an aggregate, the ensemble, a ranker of another installation)."""
    import rankers

    try:
        return rankers.get_class(name).target_kind
    except rankers.MoweightsError:
        return None


# ------------------------------------------------------------------ a data file
#: column names that usually hold the target (whole name, case and separators ignored)
_TARGET_NAMES = re.compile(
    r"(?i)^(target|label|labels|class|classes|y|group|groups|condition|outcome|diagnosis|"
    r"status|response|phenotype|subtype|disease|tissue|celltype|cell_type)$"
)
#: a text column of at most this many values may be a class target
_MAX_CLASSES = 20


@dataclass
class FileRecommendation:
    """What :func:`recommend_file` read and recommends.

    Attributes
    ----------
    table : DataFrame
        :func:`recommend`'s table, best first.
    n_samples, n_features : int
        The shape the atlas was matched to (identifiers and text columns left out).
    target : str or None
        The target column used; None without one.
    target_kind : {"classes", "regression", "none"}
    notes : list of str
        What was dropped or guessed, and why.
    """

    table: pd.DataFrame
    n_samples: int
    n_features: int
    target: str | None
    target_kind: str
    notes: list[str] = field(default_factory=list)

    def describe(self, source) -> str:
        """The first line ``moweights recommend`` prints: the shape and the target."""
        if self.target_kind == "classes":
            what = f"classes in {self.target!r}"
        elif self.target_kind == "regression":
            what = f"a numeric target {self.target!r}"
        else:
            what = "no target"
        return f"{source}: {self.n_samples} rows x {self.n_features} features, {what}"


def _guess_target(X: pd.DataFrame, ids: dict) -> tuple[str | None, str | None]:
    """A column that is probably the target, and why; (None, note) when several might be."""
    named = [c for c in X.columns if c not in ids and _TARGET_NAMES.match(str(c).strip())]
    if len(named) == 1:
        return str(named[0]), f"its name says so ({named[0]!r})"
    if len(named) > 1:
        listed = ", ".join(repr(str(c)) for c in named)
        return None, f"several columns could be the target ({listed}): pass --target NAME"
    text = [  # the dtype first: no Series per numeric column of a wide table
        c
        for c, dtype in zip(X.columns, X.dtypes, strict=True)
        if c not in ids
        and not pd.api.types.is_numeric_dtype(dtype)
        and 2 <= X[c].nunique() <= min(_MAX_CLASSES, max(2, len(X) // 2))
    ]
    if len(text) == 1:
        return str(text[0]), f"the one text column of few values ({X[text[0]].nunique()})"
    if len(text) > 1:
        listed = ", ".join(repr(str(c)) for c in text)
        return None, f"several text columns could be the target ({listed}): pass --target NAME"
    return None, None


def recommend_file(
    path,
    target: str | None = None,
    *,
    guess_target: bool = True,
    top: int | None = 5,
    atlas=None,
    transpose: bool = False,
) -> FileRecommendation:
    """Rankers the atlas supports for a data file, read as a run would read it.

    The file is read with :func:`moweights.data.read_file`. Identifier columns (a
    different value in every row: sample names, row numbers; see
    :func:`moweights.pipeline.problems.identifier_columns`) are left out with a note, and
    so are other text columns (a run encodes them only when asked). Without ``target``
    a labelled file is still read as labelled: a column named like a target (``label``,
    ``class``, ``group``, ``condition``, ...), else the one text column of few values, is
    taken as the target, with a note saying so. The target's kind chooses the atlas rows
    (:func:`recommend`): classes read the class structures and the rankers that read
    classes, a numeric target the regression ones, no target the unsupervised ones.

    Parameters
    ----------
    path : str or Path
        A data file (csv, tsv, parquet, .mat, .h5ad).
    target : str, optional
        The target column (of ``obs`` for .h5ad).
    guess_target : bool, default=True
        Look for the target when ``target`` is not given (False: rank without one).
    top : int or None, default=5
        How many rankers.
    atlas : DataFrame, str or Path, optional
        See :func:`recommend`.
    transpose : bool, default=False
        The file holds one row per feature (genes as rows), its first column naming them
        (as ``[data] transpose``).

    Returns
    -------
    FileRecommendation

    Raises
    ------
    InvalidInputError
        No numeric feature is left (e.g. a genes-as-rows file read without
        ``transpose``: the message says so).
    """
    from moweights.data import read_file  # its own identifier handling
    from moweights.pipeline.problems import identifier_columns

    X, y = read_file(path, target=target, transpose=transpose)
    notes: list[str] = []
    ids = identifier_columns(X)
    if target is None and y is None and guess_target:
        guessed, why = _guess_target(X, ids)
        if guessed is not None:
            X, y, target = X.drop(columns=guessed), X[guessed], guessed
            notes.append(
                f"read {guessed!r} as the target: {why} (--target NAME picks another, "
                "--no-target ranks without one)"
            )
        elif why:
            notes.append(why)
    if ids:
        shown = ", ".join(f"{c!r} ({why})" for c, why in list(ids.items())[:8])
        notes.append(
            f"left out {len(ids)} identifier column(s), a different value in every row: "
            f"{shown}; a run needs [data] drop = {json.dumps(list(ids))}"
        )
        X = X.drop(columns=list(ids))
    numeric = [pd.api.types.is_numeric_dtype(d) for d in X.dtypes]  # not a Series per column
    text = [c for c, number in zip(X.columns, numeric, strict=True) if not number]
    if text:
        notes.append(
            f"left out {len(text)} text column(s) ({', '.join(map(repr, text[:8]))}"
            f"{', ...' if len(text) > 8 else ''}): a run encodes them with [data] categorical"
        )
        X = X.drop(columns=text)
    if X.shape[1] == 0:
        from rankers.exceptions import InvalidInputError

        rows = (
            ""
            if transpose
            else (
                "; if the file holds one row per feature (genes as rows, samples as columns), "
                "pass --transpose (a run: [data] transpose = true)"
            )
        )
        raise InvalidInputError(
            f"{Path(path).name}: no numeric feature column is left ({len(X)} rows; "
            f"identifier and text columns are left out){rows}"
        )
    if y is not None and y.isna().any():
        keep = y.notna().to_numpy()
        notes.append(f"{int((~keep).sum())} row(s) without a target left out")
        X, y = X.loc[keep], y.loc[keep]
    kind = "none" if y is None else "regression" if _is_numeric_target(y) else "classes"
    if kind == "classes":
        counts = pd.Series(np.asarray(y)).value_counts()
        sizes = " / ".join(str(int(n)) for n in counts.to_numpy()[:6])
        notes.append(
            f"{len(counts)} classes ({sizes}{' / ...' if len(counts) > 6 else ''} rows): "
            "rankers that read the classes; unsupervised ones are left out (--no-target "
            "lists them)"
        )
    table = recommend(X, y, top=None, atlas=atlas)
    structures = [c for c in table.columns if c in (*UNSUPERVISED, *SUPERVISED, *REGRESSION,
                                                     "imbalanced")]  # fmt: skip
    singles = table[table["kind"] == "ranker"]
    best = []
    for structure in structures:
        column = singles[structure].dropna()
        if len(column):
            top_share = column.max()
            leaders = singles.loc[column.index[column >= top_share - 0.01], "ranker"]
            best.append(f"{structure}: {', '.join(leaders)} ({top_share:.0%})")
    if len(best) > 1:
        notes.append(
            "ranked by the mean share over the structures the data may hold; the best on "
            "each alone: " + "; ".join(best)
        )
    table = table if top is None else table.head(int(top))
    return FileRecommendation(table, X.shape[0], X.shape[1], target, kind, notes)
