"""Which ranker when: every registered ranker on planted structures of many shapes.

Each cell generates one data set with :func:`moweights.data.planted.make_planted` (structure ×
share of informative features × width × samples × seed), fits one ranker on it and scores
the ranking by the precision and recall of the planted features among its first k (k =
the number planted, so precision = recall; ``--k-factor 2`` looks at twice as many), with
the fit's CPU seconds and the child process's peak memory. With ``--curves-max-width W``,
the cells of the first seed (``--curves-seeds``) of data with a target (every structure
but ``modules`` and ``manifold``) up to W features also get the shared error curves'
score: the ECA of the ranking against a random one (``aggregation.evaluation.eca``,
uniform weights, the paper's quadratic SVM, 5 folds, subsets of 1, 2, 4, ... features),
> 0 when the ranking's top features predict the target better than its bottom ones. That
ECA is **whole-data (optimistic)**: the ranking was fitted on all the cell's rows and the
curve's folds test on rows it saw, the selection bias a run's nested protocol removes; it
compares rankers with one another on planted data, it is no estimate of held-out error.
Every column is standardised (mean 0, variance 1) unless ``--raw``: a planted signal also
adds variance, and on raw columns the variance alone finds it. Unsupervised rankers run on
every structure (on X alone); supervised rankers only where the structure has a class
(``shift``, ``xor``, ``imbalanced``), the rankers for a numeric target (``rrelieff`` and the
``both`` kind: ``random_forest``, ``estimator_importance`` with its default model, a
logistic regression or RidgeCV on z-scores, ``multisurf``) on the regression structures
(``linear``, ``product``). Every cell keeps its ranking's whole order, so the aggregates
of the leaderboards (``mean_rank``, ``borda``, ``kemeny_top32``, ``generic_tol``: of the
rankers of the structure's kind that finished on that data set) are rows too, and the
ensemble ``stacked_top3`` (``moweights.ensemble.StackedRanker``, its classification task
on class structures, its regression task on the regression structures, the unsupervised
one on the others) runs as a cell; the summary compares them with the best single ranker
per structure. A ranker that picks features at random recovers the share of informative
features on average: the ``random`` row of every table.

Cells run through the benchmark harness (``benchmarks/_protocol.py``): each in its own
process under a time budget, cached on disk (resumable), ``--n-jobs`` at a time through
joblib, or on a Dask cluster with ``--backend dask --scheduler ADDRESS``, or one after
another in this process with ``--backend inline`` (no start-up cost, no time budget).
``--set genie3.min_samples_leaf=10`` adds a run of a ranker with other parameters beside
its default one (its rows are labelled ``genie3(min_samples_leaf=10)``; repeat ``--set``
for more variants); ``--max-width agnos_s=1000`` skips a ranker on
wider data (the summary names what was skipped).

    python -m benchmarks.protocols.atlas --quick                     # a smoke run, a minute
    python -m benchmarks.protocols.atlas --out benchmarks/results/atlas   # the default grid
    python -m benchmarks.protocols.atlas --ship benchmarks/results/atlas_samples \\
        benchmarks/results/atlas benchmarks/results/atlas_grid \\
        benchmarks/results/atlas_v3_200               # what recommend reads

The output folder gets ``atlas.csv`` (one row per cell), ``summary.md`` (per structure:
mean precision by ranker × share of informative features), one heat map per structure
(``atlas_<structure>.png``) and ``status.md`` (failed and timed-out cells, named).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks._protocol import (
    Cell,
    add_run_arguments,
    code_fingerprint,
    failed_cells_markdown,
    parse_sets,
    run_cells,
    run_options,
    status_table,
    to_markdown,
    versions,
)
from benchmarks.protocols.leaderboard import (
    aggregate,  # the leaderboards' aggregates, fold by fold there
)

PROTOCOL = "atlas"
GRID = {
    "structure": (
        "clusters",
        "modules",
        "manifold",
        "shift",
        "xor",
        "imbalanced",
        "linear",
        "product",
    ),
    "informative": (0.005, 0.02, 0.1, 0.5),
    "n_features": (100, 1000, 5000),
    "n_samples": (200,),
    "seeds": 2,
}
QUICK = {
    "structure": ("clusters", "shift"),
    "informative": (0.05,),
    "n_features": (60,),
    "n_samples": (60,),
    "seeds": 1,
}
SUPERVISED_STRUCTURES = ("shift", "xor", "imbalanced")
#: structures with a numeric target: rankers of target kind "regression" or "both"
REGRESSION_STRUCTURES = ("linear", "product")
#: rankers left out of the default grid (none: estimator_importance runs with its default
#: model, a logistic regression (C = 1) on z-scores for a class, RidgeCV for a number)
#: registered rankers the default grid leaves out: ``stacked`` is the ensemble below, run
#: under its settings' names (``stacked_auto`` is the registered default)
SKIP = ("stacked",)
#: the rows computed from the members' rankings of a data set (leaderboard.aggregate)
AGGREGATES = ("mean_rank", "borda", "kemeny_top32", "generic_tol")
#: the ensemble of the leaderboards (moweights.ensemble.StackedRanker), on structures with
#: classes (its classification task, supervised pool), with a numeric target (its regression
#: task) and without a target (unsupervised)
ENSEMBLES = {"stacked_top3": 3, "stacked_auto": "auto", "stacked_nsga2": "auto"}
#: how each ensemble combines its members (``StackedRanker(combine=...)``): the NSGA-II
#: member weights (leaderboard/README.md, their pre-registration) or the mean rank
COMBINE = {"stacked_nsga2": "nsga2"}


def planted_data(s: dict):
    """The planted data set of a cell's settings (the same for its ranker and aggregates)."""
    from moweights.data import make_planted

    return make_planted(
        s["structure"],
        n_samples=s["n_samples"],
        n_features=s["n_features"],
        informative=s["informative"],
        standardize=s.get("standardize", True),
        random_state=s["seed"],
    )


def compute_cell(payload: dict) -> dict:
    """Fit one ranker on one planted data set; precision/recall of the planted features."""
    import resource

    import rankers

    s = payload["settings"]
    name = s.get("name", payload["ranker"])
    data = planted_data(s)
    n_planted = int(data.truth.sum())
    k = max(1, min(round(s["k_factor"] * n_planted), data.X.shape[1]))
    if payload["ranker"] == "random":
        # the expected precision of a random ranking: the share of planted features
        share = n_planted / data.X.shape[1]
        return {
            "precision": share,
            "recall": k * share / n_planted,
            "k": k,
            "n_planted": n_planted,
            "cpu_seconds": 0.0,
            "peak_mb": 0.0,
            "eca": 0.0 if s.get("curves") else np.nan,  # the expected curve's own ECA
        }
    if payload["ranker"] in ENSEMBLES:
        from moweights.ensemble import StackedRanker

        task = (
            "classification"
            if s["structure"] in SUPERVISED_STRUCTURES
            else "regression"
            if s["structure"] in REGRESSION_STRUCTURES
            else "unsupervised"
        )
        size = ENSEMBLES[payload["ranker"]]
        combine = COMBINE.get(payload["ranker"], "mean_rank")
        est = StackedRanker(task=task, n_members=size, combine=combine, random_state=s["seed"])
    else:
        est = rankers.get(name, **s["params"])
    if "random_state" in est.get_params():
        est.set_params(random_state=s["seed"])
    y = data.y if rankers.ranker_tags(est).requires_y else None
    start = time.process_time()
    est.fit(data.X, y)
    cpu = time.process_time() - start
    order = data.X.columns[est.ranking_]
    precision, recall = data.recovery(order, k)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # kB on Linux
    score = np.nan
    if s.get("curves"):
        from aggregation.evaluation import eca, ffa_rfa

        curve = ffa_rfa(list(order), data.X, data.y, cv=5, grid="geometric", random_state=0)
        score = eca(curve)
    out = {
        "precision": precision,
        "recall": recall,
        "k": k,
        "n_planted": n_planted,
        "cpu_seconds": cpu,
        "peak_mb": peak,
        "eca": score,
        # the whole order, for the aggregates computed from the members' rankings
        "order": [int(i) for i in est.ranking_],
    }
    if payload["ranker"] in ENSEMBLES:
        out["members"] = list(est.members_)
    return out


def ranker_names(selected: list[str] | None) -> tuple[list[str], list[str], list[str]]:
    """(unsupervised, classification, regression) registered rankers, or those named
    (``stacked_top3`` and ``stacked_auto``, the ensemble under its settings' names, run
    when named or by default; the registered ``stacked`` only when named)."""
    import rankers

    table = rankers.available()
    if selected:
        unknown = sorted(set(selected) - set(table["name"]) - set(ENSEMBLES))
        if unknown:
            raise SystemExit(f"unknown rankers: {', '.join(unknown)}")
        table = table[table["name"].isin(selected)]
    else:
        table = table[~table["name"].isin(SKIP)]
    unsup = table.loc[~table["requires_y"], "name"].tolist()
    sup = table.loc[table["requires_y"] & (table["target_kind"] != "regression"), "name"]
    reg = table.loc[table["requires_y"] & table["target_kind"].isin(["regression", "both"]), "name"]
    unsup += [e for e in ENSEMBLES if not selected or e in selected]
    return unsup, sup.tolist(), reg.tolist()


def _label(name: str, params: dict) -> str:
    """A ranker's row label: its name, with the parameters it runs with when not default."""
    if not params:
        return name
    return f"{name}({','.join(f'{k}={v}' for k, v in sorted(params.items()))})"


def _max_widths(items: list[str] | None) -> dict[str, int]:
    out = {}
    for item in items or []:
        name, _, width = item.partition("=")
        if not width.isdigit():
            raise SystemExit(f"--max-width expects RANKER=WIDTH, got {item!r}")
        out[name] = int(width)
    return out


def make_cells(args, grid: dict) -> list[Cell]:
    unsup, sup, reg = ranker_names(args.rankers)
    variants: dict[str, list[dict]] = {}
    for item in args.set or []:
        for name, given in parse_sets([item]).items():
            variants.setdefault(name, []).append(given)
    unknown = sorted(set(variants) - set(unsup) - set(sup) - set(reg))
    if unknown:
        raise SystemExit(f"--set names rankers not in the run: {', '.join(unknown)}")
    max_width = _max_widths(args.max_width)
    cells = []
    for structure in grid["structure"]:
        names = [n for n in unsup if n not in ENSEMBLES]
        if structure in SUPERVISED_STRUCTURES:
            names += sup
        elif structure in REGRESSION_STRUCTURES:
            names += reg
        names += [e for e in ENSEMBLES if e in unsup]
        for share in grid["informative"]:
            for width in grid["n_features"]:
                for m in grid["n_samples"]:
                    for seed in range(args.seed, args.seed + grid["seeds"]):
                        curves = (
                            structure not in ("modules", "manifold", *REGRESSION_STRUCTURES)
                            and width <= args.curves_max_width
                            and seed < args.seed + args.curves_seeds
                        )
                        common = {
                            "structure": structure,
                            "informative": share,
                            "n_features": width,
                            "n_samples": m,
                            "seed": seed,
                            "k_factor": args.k_factor,
                            "standardize": not args.raw,
                        }
                        if curves:  # only then: older cached cells stay valid
                            common["curves"] = True
                        dataset = f"{structure}-{share:g}-{m}x{width}-s{seed}"
                        gen = code_fingerprint(modules=["moweights.data.planted"])
                        for name in names:
                            if width > max_width.get(name, width):
                                continue
                            for given in [{}, *variants.get(name, [])]:
                                code = (
                                    code_fingerprint(modules=["moweights.ensemble"])
                                    if name in ENSEMBLES
                                    else code_fingerprint([name])
                                )
                                settings = common | {"params": given, "code": code + gen}
                                if given:
                                    settings["name"] = name
                                label = _label(name, given)
                                cells.append(Cell(PROTOCOL, dataset, label, settings))
                        cells.append(Cell(PROTOCOL, dataset, "random", common | {"code": gen}))
    return cells


def results_frame(records: list[dict]) -> pd.DataFrame:
    rows = []
    for rec in records:
        if rec["status"] != "ok":
            continue
        s = rec["settings"]
        result = {k: v for k, v in rec["result"].items() if k not in ("order", "members")}
        if "members" in rec["result"]:
            result["members"] = " ".join(rec["result"]["members"])
        rows.append({**cell_columns(s, rec["ranker"]), **result})
    return pd.DataFrame(rows + aggregate_rows(records))


def beside(frame: pd.DataFrame, committed: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with ``committed``'s rows of the same cells (grid points) for the rankers
    ``frame`` lacks: a run of one new ranker, summarised beside a committed run's others."""
    keys = ["structure", "informative", "n_features", "n_samples", "seed"]
    cells = frame[keys].drop_duplicates()
    rows = committed.merge(cells, on=keys)
    rows = rows[~rows["ranker"].isin(set(frame["ranker"]))]
    return pd.concat([frame, rows], ignore_index=True)


def cell_columns(s: dict, ranker: str) -> dict:
    """The columns that name a cell of ``atlas.csv``: its grid point and the ranker."""
    keys = ("structure", "informative", "n_features", "n_samples", "seed")
    return {**{key: s[key] for key in keys}, "ranker": ranker}


def _members_of(structure: str, table: pd.DataFrame) -> set[str]:
    """The rankers an aggregate combines on a structure: those of its kind of target."""
    if structure in SUPERVISED_STRUCTURES:
        keep = table["requires_y"] & (table["target_kind"] != "regression")
    elif structure in REGRESSION_STRUCTURES:
        keep = table["requires_y"] & table["target_kind"].isin(["regression", "both"])
    else:
        keep = ~table["requires_y"]
    return set(table.loc[keep, "name"]) - set(SKIP)


def aggregate_rows(records: list[dict]) -> list[dict]:
    """Mean rank, Borda, Kemeny (top 32) and the tolerant generic ranking of the members'
    rankings of each data set (``leaderboard.aggregate``, the leaderboards' own), scored
    like a ranker. Members: every default ranker of the structure's kind that finished on
    that data set (``n_members`` says how many)."""
    import rankers
    from aggregation.ranking import Ranking

    table = rankers.available()
    by_set: dict[str, list[dict]] = {}
    for rec in records:
        if rec["status"] == "ok" and "order" in rec["result"] and "(" not in rec["ranker"]:
            by_set.setdefault(rec["dataset"], []).append(rec)
    rows = []
    for recs in by_set.values():
        s = recs[0]["settings"]
        members = _members_of(s["structure"], table)
        recs = sorted((r for r in recs if r["ranker"] in members), key=lambda r: r["ranker"])
        if len(recs) < 2:
            continue
        data = planted_data(s)
        names = list(data.X.columns)
        n = len(names)
        rankings = []
        for r in recs:
            order = np.asarray(r["result"]["order"], dtype=np.intp)
            position = np.empty(n)
            position[order] = np.arange(n)
            rankings.append(Ranking(names, n - position, r["ranker"], order_idx=order))
        k = recs[0]["result"]["k"]
        for name in AGGREGATES:
            order = aggregate(name, rankings)
            precision, recall = data.recovery([names[i] for i in order], k)
            rows.append(
                {
                    **cell_columns(s, name),
                    "precision": precision,
                    "recall": recall,
                    "k": k,
                    "n_planted": recs[0]["result"]["n_planted"],
                    "n_members": len(recs),
                }
            )
    return rows


def robustness_markdown(frame: pd.DataFrame) -> list[str]:
    """Per structure: each aggregate's and the ensemble's mean precision against the best
    single ranker's there (over the same cells), and the worst structure of each."""
    combined = [*AGGREGATES, *ENSEMBLES]
    singles = frame[
        ~frame["ranker"].isin([*combined, "random"]) & ~frame["ranker"].str.contains("[(]")
    ]
    rows = []
    for structure, part in frame.groupby("structure", sort=False):
        single = singles[singles["structure"] == structure]
        if single.empty:
            continue
        for name in combined:
            mine = part[part["ranker"] == name]
            if mine.empty:
                continue
            keys = ["informative", "n_features", "n_samples", "seed"]
            cells = mine[keys].drop_duplicates()
            same = single.merge(cells, on=keys)  # the best single ranker on these cells
            best = same.groupby("ranker")["precision"].mean()
            rows.append(
                {
                    "structure": structure,
                    "method": name,
                    "precision": mine["precision"].mean(),
                    "best_single": best.idxmax(),
                    "best_single_precision": best.max(),
                    "gap": mine["precision"].mean() - best.max(),
                }
            )
    if not rows:
        return []
    table = pd.DataFrame(rows)
    worst = table.loc[table.groupby("method")["gap"].idxmin()].set_index("method")
    lines = [
        "",
        "## Aggregates and the ensemble against the best single ranker",
        "",
        "Mean precision per structure next to the best single ranker's on the same cells "
        "(gap < 0: below it; the ensemble's goal is a gap above -0.1 on every structure).",
        "",
        to_markdown(table.set_index(["structure", "method"]), floatfmt=".2f"),
        "",
        "Worst structure of each:",
        "",
        to_markdown(worst, floatfmt=".2f"),
    ]
    return lines


def heatmap(frame: pd.DataFrame, structure: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    part = frame[frame["structure"] == structure]
    table = part.pivot_table(
        index="ranker", columns="informative", values="precision", aggfunc="mean"
    )
    table = table.loc[table.mean(axis=1).sort_values(ascending=False).index]
    label = max(len(str(name)) for name in table.index)
    fig, ax = plt.subplots(
        figsize=(1.6 + 0.08 * label + 0.9 * table.shape[1], 0.8 + 0.32 * table.shape[0])
    )
    im = ax.imshow(table.to_numpy(), vmin=0, vmax=1, cmap="viridis", aspect="auto")
    ax.set_xticks(range(table.shape[1]), [f"{c:g}" for c in table.columns])
    ax.set_yticks(range(table.shape[0]), table.index)
    ax.set_xlabel("share of informative features")
    ax.set_title(f"{structure}: precision of the planted features in the top k")
    for (i, j), v in np.ndenumerate(table.to_numpy()):
        if np.isfinite(v):
            ax.text(
                j,
                i,
                f"{v:.2f}",
                ha="center",
                va="center",
                fontsize=7,
                color="white" if v < 0.6 else "black",
            )
    fig.colorbar(im, ax=ax, fraction=0.04)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def summary_markdown(frame: pd.DataFrame, args, seconds: float) -> str:
    lines = ["# Atlas: which ranker recovers which planted structure", ""]
    lines.append(f"Command: `python -m {__spec__.name} {' '.join(args.argv)}`  ")
    lines.append(f"Wall time: {seconds:.0f} s; versions: {versions()}")
    if getattr(args, "skipped", None):
        lines.append("")
        lines.append(f"Skipped (too slow at that width, `--max-width`): {args.skipped}.")
    lines.append("")
    lines.append(
        "Precision of the planted features among each ranking's first k (k = the "
        "number planted), averaged over widths, sample sizes and seeds; `random` is "
        "the share of planted features (what a random ranking recovers on average)."
    )
    widths = sorted(frame["n_features"].unique())
    if len(widths) > 1:
        lines.append(
            "Each structure's first table averages the widths; the tables after it give "
            "each width apart."
        )
    for structure, part in frame.groupby("structure", sort=False):
        table = part.pivot_table(
            index="ranker", columns="informative", values="precision", aggfunc="mean"
        )
        table["mean"] = table.mean(axis=1)
        table = table.sort_values("mean", ascending=False)
        table.columns = [c if isinstance(c, str) else f"{c:g}" for c in table.columns]
        lines += ["", f"## {structure}", "", to_markdown(table, floatfmt=".2f")]
        if len(widths) > 1:
            for width, sub in part.groupby("n_features"):
                t = sub.pivot_table(
                    index="ranker", columns="informative", values="precision", aggfunc="mean"
                )
                t["mean"] = t.mean(axis=1)
                t = t.sort_values("mean", ascending=False)
                t.columns = [c if isinstance(c, str) else f"{c:g}" for c in t.columns]
                lines += ["", f"### {structure}, {width} features", "", to_markdown(t, ".2f")]
        if "eca" in part.columns and part["eca"].notna().any():
            sub = part[part["eca"].notna()]
            t = sub.pivot_table(index="ranker", columns="informative", values="eca")
            t["mean"] = t.mean(axis=1)
            t = t.sort_values("mean", ascending=False)
            t.columns = [c if isinstance(c, str) else f"{c:g}" for c in t.columns]
            at = ", ".join(str(w) for w in sorted(sub["n_features"].unique()))
            lines += [
                "",
                f"### {structure}: ECA against a random ranking ({at} features; whole-data, "
                "optimistic: the ranking saw every fold's test rows)",
                "",
                to_markdown(t, ".3f"),
            ]
    lines += robustness_markdown(frame)
    cost = frame[frame["cpu_seconds"].notna() & (frame["ranker"] != "random")].pivot_table(
        index="ranker", columns="n_features", values="cpu_seconds", aggfunc="median"
    )
    cost.columns = [f"{c} features" for c in cost.columns]
    lines += ["", "## Median CPU seconds of a fit, by width", "", to_markdown(cost, ".3g")]
    return "\n".join(lines) + "\n"


#: the columns of the atlas shipped with the package (moweights/data/atlas.csv)
SHIPPED_COLUMNS = [
    "structure", "informative", "n_features", "n_samples", "seed", "ranker", "precision",
    "recall", "k", "n_planted", "cpu_seconds", "peak_mb", "eca",
]  # fmt: skip
#: the ensemble's rows under the registered ranker's name: ``stacked`` is StackedRanker with
#: its default ``n_members="auto"``; other settings stay in their run's folder
SHIPPED_NAMES = {"stacked_auto": "stacked"}


def ship(runs: list[Path], dest: Path) -> pd.DataFrame:
    """The atlas ``recommend`` reads: the rows of the given runs' ``atlas.csv``, a later run
    replacing an earlier one's cells of the same shape (width x samples); the ensemble under
    its registered name (:data:`SHIPPED_NAMES`), its other settings left out."""
    out = pd.DataFrame(columns=SHIPPED_COLUMNS)
    for run in runs:
        frame = pd.read_csv(Path(run) / "atlas.csv").reindex(columns=SHIPPED_COLUMNS)
        frame = frame[~frame["ranker"].isin(set(ENSEMBLES) - set(SHIPPED_NAMES))]
        frame["ranker"] = frame["ranker"].replace(SHIPPED_NAMES)
        shapes = set(map(tuple, frame[["n_features", "n_samples"]].to_numpy().tolist()))
        kept = [tuple(s) not in shapes for s in out[["n_features", "n_samples"]].to_numpy()]
        out = pd.concat([out[kept], frame], ignore_index=True) if len(out) else frame
    key = ["n_features", "n_samples", "structure", "informative", "seed", "ranker"]
    out = out.sort_values(key, kind="stable").reset_index(drop=True)
    dest.parent.mkdir(parents=True, exist_ok=True)
    out.to_csv(dest, index=False)
    return out


def main(argv: list[str] | None = None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--ship",
        nargs="+",
        type=Path,
        metavar="RUN",
        help="write moweights/data/atlas.csv (what recommend reads) from these runs' folders, "
        "a later run replacing an earlier one's shapes, and stop",
    )
    parser.add_argument("--quick", action="store_true", help="a small grid, about a minute")
    parser.add_argument("--rankers", nargs="+", help="only these rankers")
    parser.add_argument("--structures", nargs="+", help="only these structures")
    parser.add_argument("--widths", nargs="+", type=int, help="n_features values")
    parser.add_argument("--shares", nargs="+", type=float, help="informative shares")
    parser.add_argument("--samples", nargs="+", type=int, help="n_samples values")
    parser.add_argument("--seeds", type=int, help="seeds per grid point")
    parser.add_argument(
        "--k-factor",
        type=float,
        default=1.0,
        help="look at k = this times the number of planted features",
    )
    parser.add_argument(
        "--raw",
        action="store_true",
        help="keep each column's scale (by default every column has variance 1, so the planted "
        "signal cannot be found by its variance alone)",
    )
    parser.add_argument(
        "--set",
        action="append",
        metavar="RANKER.PARAM=VALUE",
        help="also run a ranker with this parameter (repeatable; its rows get a labelled name)",
    )
    parser.add_argument(
        "--max-width",
        nargs="+",
        metavar="RANKER=WIDTH",
        help="skip a ranker on data wider than WIDTH features",
    )
    parser.add_argument(
        "--curves-max-width",
        type=int,
        default=0,
        help="ECA of the error curves for cells with a target up to this width (0: none)",
    )
    parser.add_argument(
        "--curves-seeds", type=int, default=1, help="seeds that get the ECA (default 1)"
    )
    parser.add_argument("--out", type=Path, help="folder for the tables and figures")
    parser.add_argument(
        "--beside",
        type=Path,
        metavar="DIR",
        help="add DIR/atlas.csv's rows of this run's cells for the rankers it did not run "
        "(a committed run), so a new ranker is summarised against them",
    )
    add_run_arguments(parser, budget=300.0)
    args = parser.parse_args(argv)
    if args.ship:
        dest = Path(__file__).resolve().parents[2] / "moweights" / "data" / "atlas.csv"
        return ship(args.ship, dest)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    grid = dict(QUICK if args.quick else GRID)
    for key, value in (
        ("structure", args.structures),
        ("n_features", args.widths),
        ("informative", args.shares),
        ("n_samples", args.samples),
        ("seeds", args.seeds),
    ):
        if value:
            grid[key] = value
    args.skipped = ", ".join(
        f"{name} above {w} features"
        for name, w in _max_widths(args.max_width).items()
        if any(width > w for width in grid["n_features"])
    )
    start = time.perf_counter()
    records = run_cells(make_cells(args, grid), script=__spec__.name, **run_options(args))
    seconds = time.perf_counter() - start
    frame = results_frame(records)
    if args.beside is not None and len(frame):
        frame = beside(frame, pd.read_csv(args.beside / "atlas.csv"))
    status = status_table(records)
    text = summary_markdown(frame, args, seconds) if len(frame) else "no finished cells\n"
    print(text)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        frame.to_csv(args.out / "atlas.csv", index=False)
        (args.out / "summary.md").write_text(text)
        failed = failed_cells_markdown(status)
        (args.out / "status.md").write_text("\n".join(failed) + "\n")
        for structure in frame["structure"].unique():
            heatmap(frame, structure, args.out / f"atlas_{structure}.png")
    return frame


if __name__ == "__main__":
    main()
