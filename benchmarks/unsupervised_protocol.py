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
search and the error (``aggregation.curves.topk_curve``, ``scale=True``); rankers see
the raw data (cast to float).

Examples::

    python benchmarks/unsupervised_protocol.py --smallest 5 --folds 5 --budget 120
    python benchmarks/unsupervised_protocol.py --variant frane --datasets colon GLIOMA
    python benchmarks/unsupervised_protocol.py --n-jobs 8 --backend dask --scheduler tcp://...
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _protocol import (
    DEFAULT_DATA_DIR,
    NOT_INDEPENDENT,
    Cell,
    add_run_arguments,
    code_fingerprint,
    compare_methods,
    failed_cells_markdown,
    list_datasets,
    load_dataset,
    parse_sets,
    run_cells,
    run_options,
    select_datasets,
    stats_markdown,
    status_table,
    to_markdown,
    versions,
    write_table,
)

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


def compute_cell(payload: dict) -> dict:
    """One (data set, ranker): the per-fold top-k curve (runs in the cell's child)."""
    from aggregation.curves import geometric_grid, topk_curve

    s = payload["settings"]
    X, _ = load_dataset(payload["path"])
    n = X.shape[1]
    ks = sorted(set(geometric_grid(n)) | {min(s["top_k"], n)})
    ranker = payload["ranker"]
    curve = topk_curve(
        ranker,
        X,
        params=(s["params"] or None) if ranker != "random" else None,
        ks=ks,
        metric=s["metric"],
        n_neighbors=s["n_neighbors"],
        cv=s["folds"],
        n_random=s["n_random"],
        random_state=s["seed"],
        return_folds=True,
    )
    return {c: curve[c].tolist() for c in ("k", "fold", "value")}


def make_cells(args, datasets) -> list[Cell]:
    metric, neighbours, top_k = VARIANTS[args.variant]
    overrides = parse_sets(args.set)
    cells = []
    for d in datasets:
        for name in [*args.rankers, "random"]:
            settings = {
                "variant": args.variant,
                "metric": metric,
                "n_neighbors": neighbours,
                "top_k": top_k,
                "folds": args.folds,
                "seed": args.seed,
                "n_random": args.n_random,
                "params": ranker_params(name, d.n_classes, overrides),
                "data_sha256": d.sha256,
                "code": code_fingerprint([name], ["aggregation.curves"]),
            }
            cells.append(Cell(PROTOCOL, d.name, name, settings, {"path": d.path}))
    return cells


def summarise(records: list[dict], top_k: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(table data set x ranker of the fold-mean error at ``top_k``, long curve table)."""
    rows, cells = [], {}
    for r in records:
        value = np.nan
        if r["status"] == "ok":
            folds = pd.DataFrame(r["result"])
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


def write_summary(args, out: Path, table, status, info, skipped, command: str) -> None:
    metric, neighbours, top_k = VARIANTS[args.variant]
    lines = [
        f"# Unsupervised protocol ({args.variant}): {metric.upper()} of {neighbours}NN "
        f"at {top_k} features",
        "",
        f"Command: `{command}`",
        "",
        f"{args.folds}-fold CV, ranking refit on every training fold, seed {args.seed}; "
        f"random = mean of {args.n_random} random rankings per fold. Lower is better.",
        f"Data sets missing here (skipped by name): {', '.join(skipped) or 'none'}."
        + ("" if args.datasets else f" Left out as not independent (§5.1): {_NOT_INDEP}."),
        "",
        f"## {metric.upper()}@{top_k} (data set x ranker; empty = failed or timed out)",
        "",
        to_markdown(table),
        "",
        "## Rank statistics",
        "",
        stats_markdown(info),
        "",
        *failed_cells_markdown(status),
    ]
    (out / "summary.md").write_text("\n".join(lines) + "\n")


_NOT_INDEP = ", ".join(NOT_INDEPENDENT)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=sorted(VARIANTS), default="ensemble")
    parser.add_argument("--datasets", nargs="+", help="names (default: every one present)")
    parser.add_argument("--smallest", type=int, help="only the N smallest (n_samples*n_features)")
    parser.add_argument("--rankers", nargs="+", help="default: every unsupervised ranker")
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--n-random", type=int, default=10, help="random rankings per fold")
    parser.add_argument("--set", action="append", help="RANKER.PARAM=VALUE (JSON value)")
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/unsupervised"))
    add_run_arguments(parser, budget=3600.0)
    args = parser.parse_args(argv)
    args.rankers = [r for r in (args.rankers or unsupervised_rankers()) if r != "random"]
    datasets, skipped = select_datasets(*list_datasets(args.data_dir), args.datasets, args.smallest)
    if not datasets:
        raise SystemExit(f"no data sets found in {args.data_dir}")
    out = args.out
    out.mkdir(parents=True, exist_ok=True)

    records = run_cells(make_cells(args, datasets), script=__file__, **run_options(args))
    metric, _, top_k = VARIANTS[args.variant]
    table, curves = summarise(records, top_k)
    table = table.reindex([d.name for d in datasets])
    stem = f"{metric}_at_{top_k}"
    write_table(table, out, stem)
    curves.to_csv(out / "curves.csv", index=False)
    status = status_table(records)
    status.to_csv(out / "cells.csv", index=False)
    info = compare_methods(
        table, higher_is_better=False, out_dir=out, title=f"{metric.upper()}@{top_k}"
    )
    command = "python benchmarks/unsupervised_protocol.py " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    write_summary(args, out, table, status, info, skipped, command)
    (out / "run.json").write_text(
        json.dumps({"command": command, "versions": versions(), "skipped": skipped}, indent=2)
    )
    print(f"\n{stem} ({out}):\n{to_markdown(table)}\n\n{stats_markdown(info)}")
    return {"table": table, "curves": curves, "status": status, "stats": info}


if __name__ == "__main__":
    main()
