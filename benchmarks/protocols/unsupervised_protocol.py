"""The unsupervised papers' benchmark protocol on the scikit-feature data (top-k curves).

The ensemble/URelief paper (§5.2-6): 10-fold cross-validation; on every training fold
the ranking is computed again; a 1NN regressor trained on the training fold with the 16
top-ranked features predicts *all* features of the test fold; the mean squared error,
averaged over the folds, is the ranking's score at 16 features (lower is better). The
whole top-k curve (k = 1, 2, 4, ..., 2^floor(log2 n), n) is kept too. Methods are
compared by average ranks, Friedman's test (with the Iman-Davenport F_F) and Nemenyi's
critical difference, drawn as a CD diagram. ``--variant frane`` is the FRANe paper's
version of it: 5NN and RMAE (mean over features of MAE / sigma) at 16 features.

Every comparison includes a ``random`` row: the mean of ``--n-random`` seeded random
rankings per fold. Rankers that take ``n_clusters`` (MCFS, NDFS) get the data set's
number of classes, as in both papers; labels are otherwise unused. Features are
standardised with the training fold's mean and standard deviation before the neighbour
search and the error (``aggregation.evaluation.topk.topk_curve``, ``scale=True``);
rankers see the raw data (cast to float).

Examples::

    python -m benchmarks.protocols.unsupervised_protocol --smallest 5 --folds 5 --budget 120
    python -m benchmarks.protocols.unsupervised_protocol --variant frane --datasets colon GLIOMA
    python -m benchmarks.protocols.unsupervised_protocol --n-jobs 8 --backend dask --scheduler tcp://...
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from benchmarks import _protocol as harness  # the protocols' harness: cells, cache, parts, tables
from benchmarks._common import load_dataset

PROTOCOL = "unsupervised"
#: variant -> (metric, neighbours, top features compared)
VARIANTS = {"ensemble": ("mse", 1, 16), "frane": ("rmae", 5, 16)}


def unsupervised_rankers() -> list[str]:
    """Every registered ranker whose target kind is unsupervised."""
    import rankers

    table = rankers.available()
    return sorted(table.loc[table["target_kind"] == "unsupervised", "name"])


def ranker_params(name: str, n_classes: int, overrides: dict) -> dict:
    """The protocol's parameters of ``name``: n_clusters = number of classes, then --set."""
    import rankers

    params = {}
    if name != "random":
        defaults = rankers.get(name).get_params()
        if "n_clusters" in defaults:
            params["n_clusters"] = int(n_classes)
    return params | overrides.get(name, {})


class _FittedOnce(BaseEstimator):
    """A registry ranker whose fit on a given training fold runs once per process.

    ``topk_curve`` refits its ranker on every training fold; scoring the same folds for a
    second variant would fit every ranker again. This wrapper remembers each fold's
    ranking (keyed by the training rows and the seed ``topk_curve`` hands down), so the
    second variant reuses the first one's rankings and the evaluation itself stays
    ``topk_curve``'s. Clones share the memory: it is the module's, one cell per process.
    Each ranking is also saved as a part of the cell (when the harness gives the cell a
    parts folder), so a cell cut short resumes at its first unfinished fold.
    """

    def __init__(self, name: str = "variance", params: dict | None = None, random_state=None):
        self.name = name
        self.params = params
        self.random_state = random_state

    def fit(self, X, y=None):
        import rankers

        key = (self.name, hashlib.sha1(np.ascontiguousarray(X).tobytes()).hexdigest())
        key += (json.dumps(self.params, sort_keys=True), repr(self.random_state))
        if key not in _RANKINGS:
            part = "fold_" + hashlib.sha1(repr(key).encode()).hexdigest()[:16]
            ranking = harness.load_part(_PARTS["dir"], part)
            if ranking is None or ranking.shape != (X.shape[1],):
                est = rankers.get(self.name, **(self.params or {}))
                # the seeding topk_curve gives a ranker whose random_state is None
                if est.get_params().get("random_state", 0) is None:
                    est.set_params(random_state=self.random_state)
                ranking = est.fit(X, y).ranking_
                harness.save_part(_PARTS["dir"], part, ranking)
            _RANKINGS[key] = ranking
        self.ranking_ = _RANKINGS[key]
        return self


_RANKINGS: dict[tuple, np.ndarray] = {}
#: the running cell's parts folder (set by compute_cell from its payload)
_PARTS: dict[str, str | None] = {"dir": None}


def compute_cell(payload: dict) -> dict:
    """One (data set, ranker): per-fold top-k curves of every variant (in the cell's child).

    The folds, and the rankings fitted on them, are the same for every variant: each
    ranker is fitted once per fold and its ranking scored by every variant.
    """
    from aggregation.evaluation.topk import geometric_grid, topk_curve

    s = payload["settings"]
    _PARTS["dir"] = payload.get("parts_dir")
    X, _ = load_dataset(payload["path"])
    n = X.shape[1]
    ranker = payload["ranker"]
    est = "random" if ranker == "random" else _FittedOnce(ranker, s["params"] or None)
    out = {}
    for variant, (metric, neighbours, top_k) in s["variants"].items():
        ks = sorted(set(geometric_grid(n)) | {min(top_k, n)})
        curve = topk_curve(
            est,
            X,
            ks=ks,
            metric=metric,
            n_neighbors=neighbours,
            cv=s["folds"],
            n_random=s["n_random"],
            random_state=s["seed"],
            return_folds=True,
        )
        out[variant] = {c: curve[c].tolist() for c in ("k", "fold", "value")}
    return out


#: the module a cell's numbers go through (the fingerprint follows its imports)
_EVALUATION = ("aggregation.evaluation.topk",)


def make_cells(args, datasets) -> list[harness.Cell]:
    """One cell per (data set, ranker), computing every variant: its key names no variant."""
    overrides = harness.parse_sets(args.set)
    cells = []
    for d in datasets:
        for name in [*args.rankers, "random"]:
            settings = {
                "variants": {v: list(spec) for v, spec in VARIANTS.items()},
                "folds": args.folds,
                "seed": args.seed,
                "n_random": args.n_random,
                "params": ranker_params(name, d.n_classes, overrides),
                "data_sha256": d.sha256,
                "code": harness.code_fingerprint([name], _EVALUATION),
            }
            cells.append(harness.Cell(PROTOCOL, d.name, name, settings, {"path": d.path}))
    return cells


def summarise(records: list[dict], variant: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(table data set x ranker of the fold-mean error at the variant's top k, curves)."""
    top_k = VARIANTS[variant][2]
    rows, cells = [], {}
    for r in records:
        value = np.nan
        if r["status"] == "ok":
            folds = pd.DataFrame(r["result"][variant])
            curve = folds.groupby("k")["value"].agg(["mean", "std", "count"]).reset_index()
            for c in curve.itertuples(index=False):
                rows.append(
                    {"dataset": r["dataset"], "ranker": r["ranker"], "k": c.k}
                    | {"mean": c.mean, "std": c.std, "n_folds": c.count}
                )
            at = min(top_k, int(curve["k"].max()))
            value = float(curve.loc[curve["k"] == at, "mean"].iloc[0])
        cells[(r["dataset"], r["ranker"])] = value
    table = pd.Series(cells).unstack()
    table.index.name, table.columns.name = "dataset", None
    order = [c for c in table.columns if c != "random"] + ["random"]
    return table[order], pd.DataFrame(rows)


def write_summary(args, variant, out: Path, table, status, info, skipped, command) -> None:
    metric, neighbours, top_k = VARIANTS[variant]
    lines = [
        f"# Unsupervised protocol ({variant}): {metric.upper()} of {neighbours}NN "
        f"at {top_k} features",
        "",
        f"Command: `{command}`",
        "",
        f"{args.folds}-fold CV, ranking refit on every training fold (once for all "
        f"variants), seed {args.seed}; random = mean of {args.n_random} random rankings per "
        "fold. Lower is better.",
        harness.skipped_line(skipped, named=bool(args.datasets)),
        "",
        f"## {metric.upper()}@{top_k} (data set x ranker; empty = failed or timed out)",
        "",
        harness.to_markdown(table),
        "",
        "## Rank statistics",
        "",
        harness.stats_markdown(info),
        "",
        *harness.summary_tail(status),
    ]
    (out / "summary.md").write_text("\n".join(lines) + "\n")


def output_dirs(args) -> dict[str, Path]:
    """variant -> folder of its tables: ``--out``, or ``--out`` and ``--frane-out`` for both."""
    if args.variant != "both":
        return {args.variant: args.out}
    frane_out = args.frane_out or args.out.with_name(args.out.name + "_frane")
    return {"ensemble": args.out, "frane": frane_out}


def write_variant(args, variant, out, records, datasets, skipped, command) -> dict:
    """The tables, rank statistics and summary of one variant in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    metric, _, top_k = VARIANTS[variant]
    table, curves = summarise(records, variant)
    table = table.reindex([d.name for d in datasets])
    stem = f"{metric}_at_{top_k}"
    harness.write_table(table, out, stem)
    curves.to_csv(out / "curves.csv", index=False)
    status, info = harness.finish_run(
        out,
        table,
        records,
        higher_is_better=False,
        title=f"{metric.upper()}@{top_k}",
        command=command,
        skipped=skipped,
    )
    write_summary(args, variant, out, table, status, info, skipped, command)
    print(f"\n{stem} ({out}):\n{harness.to_markdown(table)}\n\n{harness.stats_markdown(info)}")
    return {"table": table, "curves": curves, "status": status, "stats": info}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--variant",
        choices=[*sorted(VARIANTS), "both"],
        default="ensemble",
        help="tables to write; every cell computes both variants from the same rankings",
    )
    parser.add_argument("--datasets", nargs="+", help="names (default: every one present)")
    parser.add_argument("--smallest", type=int, help="only the N smallest (n_samples*n_features)")
    parser.add_argument("--rankers", nargs="+", help="default: every unsupervised ranker")
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--n-random", type=int, default=10, help="random rankings per fold")
    parser.add_argument("--set", action="append", help="RANKER.PARAM=VALUE (JSON value)")
    parser.add_argument("--data-dir", type=Path, default=harness.DEFAULT_DATA_DIR)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/unsupervised"))
    parser.add_argument(
        "--frane-out", type=Path, help="with --variant both: the frane tables (default OUT_frane)"
    )
    harness.add_run_arguments(parser, budget=3600.0)
    args = parser.parse_args(argv)
    args.rankers = [r for r in (args.rankers or unsupervised_rankers()) if r != "random"]
    datasets, skipped = harness.chosen_datasets(args)

    records = harness.run_cells(
        make_cells(args, datasets), script=__spec__.name, **harness.run_options(args)
    )
    command = harness.command_line(__spec__.name, argv)
    results = {
        variant: write_variant(args, variant, out, records, datasets, skipped, command)
        for variant, out in output_dirs(args).items()
    }
    # the first variant's tables at the top level, as with one variant
    return next(iter(results.values())) | {"variants": results}


if __name__ == "__main__":
    main()
