"""Which ranker for this data set: the atlas's measurements for the nearest shape.

``benchmarks/atlas.py`` fits every registered ranker on planted structures of many shapes
and records how many planted features each one recovers. :func:`recommend` reads a data
set's shape (samples, features, whether it has a class target and how balanced it is),
picks the atlas cells of the structures that shape can hold and the nearest measured
shape (width and rows), and ranks the rankers by the share of planted features they
recovered there, with the reason. The atlas summary shipped with the package
(``moweights/data/atlas.csv``) holds the committed runs: ``benchmarks/results/atlas_grid/``
(200 samples x 200 and 2,000 features, 0.5-50 % informative, 2 seeds; the slowest rankers
at 200 features only), ``benchmarks/results/atlas/`` (200 x 1,000) and the 60- and
800-sample cells of ``benchmarks/results/atlas_samples/`` (x 1,000; 17 fast rankers).
``atlas=`` takes another run's ``atlas.csv``.
See the guide page "Which ranker when".
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from rankers.exceptions import InvalidInputError
from rankers.ties import order_desc

__all__ = ["load_atlas", "recommend"]

#: structures a data set can hold, by whether it has a class target (or a numeric one)
UNSUPERVISED = ("clusters", "modules", "manifold")
SUPERVISED = ("shift", "xor")
REGRESSION = ("linear", "product")
#: atlas rows that are no single ranker: the leaderboards' aggregates of all the rankers of
#: the structure's kind, and the stacking ensemble (moweights.ensemble.StackedRanker)
AGGREGATES = ("mean_rank", "borda", "kemeny_top32", "generic_tol")
ENSEMBLE = "stacked_top3"
#: a minority class below this share also reads the "imbalanced" cells
IMBALANCED_BELOW = 0.2
_COLUMNS = {"structure", "informative", "n_features", "n_samples", "ranker", "precision"}


def load_atlas(path: str | Path | None = None) -> pd.DataFrame:
    """The atlas results: one row per cell (``benchmarks/atlas.py``'s ``atlas.csv``).

    Parameters
    ----------
    path : str or Path, optional
        Another run's ``atlas.csv``; the shipped summary by default.
    """
    if path is None:
        source = resources.files("moweights").joinpath("data", "atlas.csv")
        with resources.as_file(source) as file:
            frame = pd.read_csv(file)
    else:
        try:
            frame = pd.read_csv(path)
        except (OSError, pd.errors.ParserError, UnicodeDecodeError) as exc:
            raise InvalidInputError(f"cannot read the atlas {path}: {exc}") from None
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
        classes when the smallest class holds under 20% of the rows) and every ranker;
        a numeric target: the regression structures (a linear signal, pair products);
        without it, unsupervised structures (clusters, co-expression modules, a
        manifold) and unsupervised rankers.
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
    out["why"] = [_why(name, row, per.columns, width, rows, chance) for name, row in out.iterrows()]
    out = out.reset_index()
    return out if top is None else out.head(int(top))


def _why(name, row, structures, width, rows, chance) -> str:
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
        text = "the stacking ensemble (moweights.ensemble.StackedRanker): " + text
    if pd.notna(row.get("worst_gap")) and row["worst_gap"] > -0.1:
        text += f"; never more than {-row['worst_gap']:.2f} below the best ranker of a structure"
    if np.isfinite(chance):
        text += f"; a random ranking finds {chance:.0%}"
    return text
