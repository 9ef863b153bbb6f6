"""The PNG figures of a run folder, drawn from its saved tables (never the data)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd

from moweights.output.files import atomic_write, safe_name

__all__ = ["PLOTS", "STUDY", "draw", "draw_study", "is_study", "load"]

#: the sub-folder of a study's own tables and figures (see moweights.output.study)
STUDY = "study"


def listed(folder: Path) -> set[str] | None:
    """The files the folder's manifest lists (its own included), or None without one of
    ours: a figure is drawn only from tables the run wrote, never from a file of the same
    pattern kept in the folder (the user's, an earlier run's edited since)."""
    from moweights.output.files import MANIFEST, read_json

    try:
        manifest = read_json(Path(folder) / MANIFEST, what="manifest")
    except (OSError, ValueError):
        return None
    if not (isinstance(manifest, dict) and isinstance(manifest.get("files"), dict)):
        return None
    return {*manifest["files"], MANIFEST}


def tables(folder: Path, pattern: str) -> list[Path]:
    """The folder's files matching ``pattern`` that its manifest lists (see :func:`listed`)."""
    names = listed(folder)
    return sorted(p for p in folder.glob(pattern) if names is None or p.name in names)


def load(folder: Path, name: str, **kw) -> Any:
    """A table (CSV) or JSON file of the folder; None when it is not there (or not one
    the manifest lists: see :func:`listed`)."""
    path = folder / name
    if not path.is_file():
        return None
    names = listed(folder)
    if names is not None and name not in names:
        return None
    if name.endswith(".json"):
        return json.loads(path.read_text(encoding="utf-8"))
    return pd.read_csv(path, **kw)


def _save(fig, path: Path) -> bytes:
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    atomic_write(path, buffer.getvalue())
    return buffer.getvalue()


# ------------------------------------------------------------------ the plots
def _class_curves(folder: Path):
    return _curves(folder, "class_curves.csv", "Class prediction from the top k features "
                   "(higher is better)", higher=True)  # fmt: skip


def _curves(
    folder: Path,
    name: str = "curves.csv",
    what: str = "Top-k kNN curves (lower is better)",
    *,
    higher: bool = False,
):
    curves = load(folder, name)
    if curves is None or curves.empty:
        return None
    import matplotlib.pyplot as plt

    from aggregation.plots import plot_topk_curves

    sites = list(dict.fromkeys(curves["site"])) if "site" in curves else [None]
    fig, axes = plt.subplots(1, len(sites), figsize=(6.5 * len(sites), 4.3), squeeze=False)
    for ax, site in zip(axes[0], sites, strict=True):
        part = curves if site is None else curves[curves["site"] == site]
        by = {label: p for label, p in part.groupby("ranker", sort=False) if label != "random"}
        random = part[part["ranker"] == "random"]
        title = what if site is None else f"site {site}"
        plot_topk_curves(by, random if len(random) else None, ax=ax, title=title)
        if higher:  # a score, not an error: the axis says so as the title does
            metric = str(part["metric"].iloc[0]) if "metric" in part else "score"
            ax.set_ylabel(f"{metric} (higher is better)")
    fig.tight_layout()
    return fig


def _cd(folder: Path):
    st = load(folder, "statistics.json")
    if st is None:
        return None
    from aggregation.plots import plot_cd_diagram

    ne = st["nemenyi"]
    blocks = f"{st['friedman']['n']} {st['blocks']}"
    where = f" at k = {st['k']}" if st.get("k") else ""
    what = st.get("description") or f"{st['metric']}{where}"
    title = f"Average ranks over {blocks}; Friedman p = {st['friedman']['pvalue']:.3g}\n{what}"
    return plot_cd_diagram(pd.Series(ne["avg_ranks"]), ne["cd"], show_ranks=True, title=title)


def _error_curves(folder: Path):
    table = load(folder, "error_curves.csv")
    if table is None or table.empty:
        return None
    from aggregation.plots import plot_error_curves

    curves = {
        name: part.drop(columns="ranking") for name, part in table.groupby("ranking", sort=False)
    }
    expected = load(folder, "expected_curve.csv")
    return plot_error_curves(curves, expected, title="FFA (top-i) and RFA (bottom-i) curves")


def _clustering(folder: Path):
    table = load(folder, "clustering.csv")
    if table is None or table.empty:
        return None
    import matplotlib.pyplot as plt

    table = table[table["evaluation"] == "all"]
    metrics = list(dict.fromkeys(table["metric"]))
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 3.6), squeeze=False)
    for ax, metric in zip(axes[0], metrics, strict=True):
        for name, part in table[table["metric"] == metric].groupby("ranking", sort=False):
            style = {"color": "0.3", "linestyle": "--"} if name == "random" else {"marker": "o"}
            ax.plot(part["k_features"], part["mean"], label=name, **style)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("top features")
        ax.set_title(f"k-means {metric} (higher is better)", fontsize=10)
        ax.grid(alpha=0.3)
    axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.tight_layout()
    return fig


def _similarity(folder: Path):
    files = tables(folder, "similarity_*.csv")
    if not files:
        return None
    import matplotlib.pyplot as plt

    from aggregation.plots import plot_pairwise

    n = len(files)
    size = len(pd.read_csv(files[0], index_col=0))
    side = 2.5 + 0.45 * size
    fig, axes = plt.subplots(1, n, figsize=(side * n, side), squeeze=False)
    for ax, path in zip(axes[0], files, strict=True):
        matrix = pd.read_csv(path, index_col=0)
        measure = path.stem.removeprefix("similarity_")
        # the colours span the pairs of different rankers: the diagonal (a ranking with
        # itself: n for the s-measure, 1 for a correlation) would wash out every other cell
        values = matrix.to_numpy(dtype=float)
        off = values[~np.eye(len(values), dtype=bool)]
        off = off[np.isfinite(off)]
        limits = (off.min(), off.max()) if off.size and off.min() < off.max() else (None, None)
        plot_pairwise(matrix, ax=ax, title=f"rankers: {measure}", vmin=limits[0], vmax=limits[1])
    fig.tight_layout()
    return fig


def _generic(folder: Path):
    agg = load(folder, "aggregated.json")
    if not agg or "generic" not in agg:
        return None
    from aggregation import GenericRanking
    from aggregation.plots import plot_generic

    summary = load(folder, "summary.json") or {}
    tol = float(summary.get("generic_tolerance") or 0.0)
    fallback = summary.get("generic_fallback")
    g = GenericRanking(agg["generic"]["blocks"])
    how = f"tolerance {tol:g}" if tol else "strict: every ranker agrees on each boundary"
    title = f"generic ranking of the rankers ({how}): s = {len(g)} block(s)"
    if len(g) == 1 and fallback and fallback.get("tolerant"):
        g = GenericRanking(fallback["tolerant"]["blocks"])
        title = (
            f"no boundary all {fallback['q']} rankers agree on; letting one disagree on each "
            f"side (tolerance {fallback['tolerance']:g}): s = {len(g)} block(s)"
        )
    # names inside a block best first: by the mean rank when it was computed
    order = (agg.get("mean_rank") or {}).get("order")
    if order is None or set(order) != set(g.names):
        order = None
    return plot_generic(g, title=title, order=order)


def _site_maps(folder: Path) -> list[tuple[str, Callable]]:
    sims = load(folder, "site_similarity.csv")
    info = load(folder, "sites.json")
    if sims is None or not info:
        return []

    def draw(label: str):
        import matplotlib.pyplot as plt

        from aggregation.plots import plot_pairwise

        part = sims[sims["ranker"] == label]
        measures = list(dict.fromkeys(part["measure"]))
        q = part["site"].nunique()
        fig, axes = plt.subplots(
            1, len(measures), figsize=(3.2 + 2.4 * q, 1.6 + 0.7 * q), squeeze=False
        )
        for ax, measure in zip(axes[0], measures, strict=True):
            m = part[part["measure"] == measure].pivot(
                index="site", columns="other", values="value"
            )
            order = list(dict.fromkeys(part["site"]))
            plot_pairwise(m.loc[order, order], ax=ax, title=f"{measure}")
        verdict = {True: "compatible", False: "INCOMPATIBLE", None: "not assessed"}
        fig.suptitle(
            f"{label}: site similarity; generic ranking s = {info[label]['s']} "
            f"({verdict[info[label]['compatible']]})"
        )
        fig.tight_layout()
        return fig

    return [(f"sites_{safe_name(label)}.png", lambda _, lb=label: draw(lb)) for label in info]


def _pareto(folder: Path) -> list[tuple[str, Callable]]:
    from moweights.weighting.plots import plot_front, plot_front_weights

    ranks = load(folder, "ranks.csv", index_col=0)
    labels = {safe_name(r["label"]): r["label"] for r in load(folder, "summary.json")["rankers"]}
    out = []
    for path in tables(folder, "pareto_*_objectives.csv"):
        stem = path.name.removeprefix("pareto_").removesuffix("_objectives.csv")
        weights = pd.read_csv(folder / f"pareto_{stem}_weights.csv", index_col=0)
        label = labels.get(stem)
        if ranks is not None and label in ranks:  # the ranker's own ranking, best first
            order = ranks[label].reindex(weights.columns).to_numpy()
        else:
            order = -weights.mean(axis=0).fillna(-1.0).to_numpy()
        fitted = SimpleNamespace(
            pareto_objectives_=pd.read_csv(path, index_col=0),
            pareto_weights_=weights,
            ranking_=np.argsort(order, kind="stable"),
        )
        out.append((f"pareto_{stem}.png", lambda _, f=fitted: plot_front(f)))
        out.append((f"pareto_weights_{stem}.png", lambda _, f=fitted: plot_front_weights(f)))
    return out


def _markers(folder: Path):
    summary = load(folder, "summary.json") or {}
    info = summary.get("markers")
    table = load(folder, info["file"]) if info else None
    if table is None or table.empty:
        return None
    from moweights.scverse.plots import plot_markers

    table["group"] = pd.Categorical(
        table["group"].astype(str), categories=list(info["top"]) or None
    )
    direction = {"up": "higher", "down": "lower", "both": "most different"}[info["direction"]]
    title = f"Top {info['n_top']} markers per class ({direction} in the class than in the rest)"
    return plot_markers(table, n_top=int(info["n_top"]), title=title)


PLOTS: list[tuple[str, Callable, str]] = [
    ("class_curves.png", _class_curves, "Class prediction: a model trained on each ranking's "
     "top k features predicts the held-out classes (cross-validated; every ranking, aggregates "
     "included, is refit on each training fold); dashed: random features."),
    ("curves.png", _curves, "Top-k curves: a kNN model on each ranking's top k features "
     "predicts all features (cross-validated; every ranking, aggregates included, is refit on "
     "each training fold)."),
    ("cd_diagram.png", _cd, "Critical-difference diagram: average ranks; methods joined by a "
     "bar do not differ significantly (Nemenyi)."),
    ("error_curves.png", _error_curves, "FFA/RFA error curves with the expected curve of a "
     "random ranking (band: 5%-95% of the sampled random curves); see the section's text for "
     "whether the rankings were refit per fold."),
    ("clustering.png", _clustering, "k-means on each ranking's top features, scored against "
     "the classes (the rankings fitted on all samples: optimistic for supervised rankers)."),
    ("similarity.png", _similarity, "How alike the rankers' rankings are."),
    ("markers.png", _markers, "Marker features: each class against the rest; a dot's colour "
     "is the log2 fold change, its area the fraction of the class expressing the feature."),
    ("generic.png", _generic, "The generic ranking: ordered blocks of features, a boundary "
     "where the rankers agree on the features above it (strictly, or within the tolerance in "
     "the title); names inside a block by mean rank, best first."),
]  # fmt: skip


def draw(folder) -> list[tuple[str, bytes, str]]:
    """Draw every figure the folder's tables allow; each PNG is written as it is drawn.

    Returns
    -------
    list of (file name, PNG bytes, caption)
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    folder = Path(folder)
    jobs = list(PLOTS)
    jobs += [
        (name, fn, "Site similarity of one ranker's per-site rankings.")
        for name, fn in _site_maps(folder)
    ]
    jobs += [
        (name, fn, "NSGA-II weighting: the Pareto front and the weights of its solutions.")
        for name, fn in _pareto(folder)
    ]
    images = []
    for name, draw_one, caption in jobs:
        fig = draw_one(folder)
        if fig is None:
            continue
        images.append((name, _save(fig, folder / name), caption))
    return images


def is_study(folder) -> bool:
    """Whether a results folder is a study's (its summary.json says so)."""
    path = Path(folder) / "summary.json"
    if not path.is_file():
        return False
    return "study" in json.loads(path.read_text(encoding="utf-8"))


# ------------------------------------------------------------------ a study's figures
def draw_study(folder) -> list[tuple[str, bytes, str]]:
    """The CD diagram of every score with statistics, drawn from ``study/study.json``."""
    from aggregation.plots import plot_cd_diagram

    folder = Path(folder)
    study = load(folder, f"{STUDY}/study.json") or {}
    images = []
    for score, entry in study.items():
        if "nemenyi" not in entry:
            continue
        fr, ne = entry["friedman"], entry["nemenyi"]
        better = "higher" if entry["higher_is_better"] else "lower"
        title = (
            f"{score} ({better} is better): average ranks over {fr['n']} data sets; "
            f"Friedman p = {float(fr['pvalue']):.3g}"
        )
        fig = plot_cd_diagram(
            pd.Series(entry["average_ranks"]), float(ne["cd"]), show_ranks=True, title=title
        )
        name = f"{STUDY}/cd_{safe_name(score)}.png"
        caption = (
            f"Critical-difference diagram of {score} across the data sets: methods joined by "
            "a bar do not differ significantly (Nemenyi)."
        )
        images.append((name, _save(fig, folder / name), caption))
    return images
