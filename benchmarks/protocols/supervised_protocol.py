"""The error-curve paper's protocol (§5.2) on the scikit-feature data: ECA against random.

For every data set, each ranker (information gain, ReliefF, SVM-RFE, random forest, with
the settings of docs/design.md, "Method decisions") ranks the features from the whole
labelled data set, as in the paper; the FFA and RFA curves of that ranking are the
10-fold cross-validated accuracies of the paper's classifier (a quadratic-kernel SVM,
C = 0.1, on [0, 1]-scaled data: ``aggregation.evaluation.default_estimator``) on the
top-i and the bottom-i features.
The score is the ECA of the ranking against a uniformly random one (Eq. 4; > 0 = better
than random). With the position-only weightings (``uniform``, the paper's Table 5, and
``inverse_size``) the expected curve cancels exactly (§3.3); the magnitude weightings
(``magnitude``, ``inverse_size_magnitude``) use the expected curve sampled from
``--n-random`` random rankings (the paper's 100). Those are computed in parts of
``--random-part`` rankings (default 10), each a cell of its own (``random[0:10]``,
``random[10:20]``, ...): on the larger data sets one random ranking costs what a ranker's
cell does (madelon: ~13 CPU minutes), so the parts spread the expected curve over the
workers of a cluster and let a long grid resume part by part. The parts are rankings
``start .. start + part - 1`` of one seeded stream, and their pooled curve is the
expected curve of one call, to the last bit (``aggregation.evaluation.random_curves`` and
``pool_random_curves``). All curves of a data set share the folds (one seed). Methods
are compared by average ranks, Friedman / Iman-Davenport and Nemenyi's CD on the uniform
ECA (higher is better); the other weightings' average ranks and Friedman p-values are
listed too.

Deviation from the paper: it evaluates every subset size i = 1..n; on thousands of
features that is too slow, so the default grid is linear with about 32 points
(``--grid points:32``: step ceil(n / 32), the paper's own Δi speed-up, §3.1). Other
grids: ``every`` (the paper), ``step:S``, ``geometric`` (1, 2, 4, ..., n; it weights the
top of the ranking far more under the uniform weighting).

Examples::

    python -m benchmarks.protocols.supervised_protocol --smallest 4 --folds 5 --n-random 20
    python -m benchmarks.protocols.supervised_protocol --datasets madelon --random-part 5 \
        --n-jobs 64 --backend dask --scheduler tcp://SCHEDULER:8786
    python -m benchmarks.protocols.supervised_protocol --datasets colon --grid every --budget 7200
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks import _protocol as harness  # the protocols' harness: cells, cache, parts, tables
from benchmarks._common import load_dataset

PROTOCOL = "supervised"
RANKERS = ("info_gain", "relieff", "svm_rfe", "random_forest")
WEIGHTINGS = ("uniform", "inverse_size", "magnitude", "inverse_size_magnitude")


def resolve_grid(spec: str, n: int):
    """The ``curve_grid`` argument for ``--grid`` on ``n`` features."""
    if spec in ("every", "geometric"):
        return spec
    kind, _, value = spec.partition(":")
    if kind == "step" and value.isdigit() and int(value) >= 1:
        return int(value)
    if kind == "points" and value.isdigit() and int(value) >= 1:
        return max(1, math.ceil(n / int(value)))
    raise ValueError(f"--grid must be every, geometric, step:S or points:N; got {spec!r}")


def random_cell_name(start: int, stop: int) -> str:
    """The cell of random rankings ``start .. stop - 1``: ``random[start:stop]``."""
    return f"random[{start}:{stop}]"


def compute_cell(payload: dict) -> dict:
    """One ranker's FFA/RFA curves, or (a ``random[a:b]`` cell) random rankings' curves."""
    import rankers
    from aggregation.evaluation import ffa_rfa, random_curves

    s = payload["settings"]
    X, y = load_dataset(payload["path"])
    y = np.unique(y, return_inverse=True)[1]  # {-1, 1} and 1..C alike -> 0..C-1
    curve_args = {
        "cv": s["folds"],
        "grid": resolve_grid(s["grid"], X.shape[1]),
        "random_state": s["seed"],
    }
    if payload["ranker"].startswith("random["):
        parts_dir = payload.get("parts_dir")
        if parts_dir is None:
            part = random_curves(X, y, n_random=s["n_random"], start=s["start"], **curve_args)
        else:
            part = _random_in_parts(X, y, s["start"], s["n_random"], curve_args, parts_dir)
        columns = {c: part[c].tolist() for c in ("ranking", "i", "ffa", "rfa")}
        return {"samples": columns, "attrs": dict(part.attrs)}
    est = rankers.get(payload["ranker"], **s["params"])
    if est.get_params().get("random_state", 0) is None:
        est.set_params(random_state=s["seed"])
    start = time.perf_counter()
    est.fit(X, y)
    fit_seconds = time.perf_counter() - start
    curve = ffa_rfa(est.ranking_, X, y, **curve_args)
    out = {c: curve[c].tolist() for c in ("i", "ffa", "rfa", "ffa_std", "rfa_std")}
    return out | {"fit_seconds": fit_seconds}


#: a random ranking scored faster than this (s) is cheap: the cell's others share one call
QUICK_RANKING = 60.0


def _random_in_parts(X, y, start: int, n_random: int, curve_args: dict, parts_dir: str):
    """``random_curves`` of rankings ``start .. start + n_random - 1``, each saved as a part.

    Each ranking's curves are a part of the cell, so a cell cut short resumes at its
    first unscored ranking. The first missing ranking is scored alone; if it took more
    than ``QUICK_RANKING`` seconds (madelon's take ~13 CPU min), so do the others, one
    call and one saved part each; if less, the others go in one call (a call scores the
    set of every feature once, which a quick ranking's call would pay again and again).
    Every ranking is drawn from the same stream and scored on the same folds whatever
    the call it is in, so the frame is the one-call frame, bit for bit (the tests check
    it).
    """
    from aggregation.evaluation import random_curves

    stop = start + n_random
    blocks = {j: harness.load_part(parts_dir, f"random_{j}") for j in range(start, stop)}
    missing = [j for j, v in blocks.items() if not _is_curve_part(v)]
    attrs = harness.load_part(parts_dir, "attrs")
    quick = False
    while missing:
        first = missing[0]
        count = 1  # alone, until a ranking has proved quick; then the run of missing ones
        while quick and first + count in missing:
            count += 1
        tic = time.perf_counter()
        part = random_curves(X, y, n_random=count, start=first, **curve_args)
        quick = time.perf_counter() - tic < QUICK_RANKING * count
        if not isinstance(attrs, dict):
            attrs = dict(part.attrs)
            harness.save_part(parts_dir, "attrs", attrs)
        for j, rows in part.groupby("ranking", sort=True):
            blocks[int(j)] = rows[["i", "ffa", "rfa"]].to_numpy(dtype=float)
            harness.save_part(parts_dir, f"random_{int(j)}", blocks[int(j)])
        missing = missing[count:]
    ordered = [blocks[j] for j in range(start, stop)]
    frame = pd.DataFrame(
        {
            "ranking": np.repeat(np.arange(start, stop), len(ordered[0])),
            "i": np.concatenate([b[:, 0] for b in ordered]).astype(np.int64),
            "ffa": np.concatenate([b[:, 1] for b in ordered]),
            "rfa": np.concatenate([b[:, 2] for b in ordered]),
        }
    )
    frame.attrs.update(attrs | {"start": start, "n_random": n_random})
    return frame


def _is_curve_part(value) -> bool:
    return isinstance(value, np.ndarray) and value.ndim == 2 and value.shape[1] == 3


def feasible_folds(folds: int, path: str) -> int:
    """``folds``, or fewer when no class of the data set has ``folds`` samples.

    Stratified k-fold CV needs a class with at least k members (nci9: 60 samples in 9
    classes, the largest of 9); such a data set gets as many folds as its largest class
    has samples, and the summary names it.
    """
    _, y = load_dataset(path)
    return int(min(folds, np.unique(y, return_counts=True)[1].max()))


# the evaluation a cell's result depends on (the module that computes the curves)
_EVALUATION = ("aggregation.evaluation.error_curves",)


def make_cells(args, datasets) -> list[harness.Cell]:
    overrides = harness.parse_sets(args.set)
    cells = []
    for d in datasets:
        common = {"folds": feasible_folds(args.folds, d.path), "grid": args.grid}
        common["seed"] = args.seed
        common["data_sha256"] = d.sha256
        for name in args.rankers:
            settings = common | {"params": overrides.get(name, {})}
            settings["code"] = harness.code_fingerprint([name], _EVALUATION)
            cells.append(harness.Cell(PROTOCOL, d.name, name, settings, {"path": d.path}))
        for start in range(0, args.n_random, args.random_part):
            stop = min(start + args.random_part, args.n_random)
            settings = common | {"n_random": stop - start, "start": start}
            settings["code"] = harness.code_fingerprint(modules=_EVALUATION)
            name = random_cell_name(start, stop)
            cells.append(harness.Cell(PROTOCOL, d.name, name, settings, {"path": d.path}))
    return cells


def expected_curves(records: list[dict], n_random: int) -> dict[str, pd.DataFrame]:
    """Per data set, the expected curve pooled from its random parts, when all are ok."""
    from aggregation.evaluation import pool_random_curves

    parts: dict[str, list[pd.DataFrame]] = {}
    for r in records:
        if r["ranker"].startswith("random[") and r["status"] == "ok":
            frame = pd.DataFrame(r["result"]["samples"])
            frame.attrs.update(r["result"]["attrs"])
            parts.setdefault(r["dataset"], []).append(frame)
    return {
        name: pool_random_curves(frames)
        for name, frames in parts.items()
        if sum(f.attrs["n_random"] for f in frames) == n_random
    }


def summarise(records: list[dict], n_random: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(long ECA table: data set, ranker, weighting, eca; long curve table).

    The curve table has each ranker's curves and, as ranker ``random``, the expected
    curve of every data set whose ``n_random`` random rankings are all computed.
    """
    from aggregation.evaluation import eca

    expected = expected_curves(records, n_random)
    rows, curves = [], []
    for r in records:
        if r["ranker"].startswith("random["):
            continue
        if r["status"] == "ok":
            curve = pd.DataFrame(r["result"]).drop(columns="fit_seconds", errors="ignore")
            curves.append(curve.assign(dataset=r["dataset"], ranker=r["ranker"]))
        for w in WEIGHTINGS:
            value = np.nan
            if r["status"] == "ok":
                if w in ("uniform", "inverse_size"):
                    value = eca(curve, "random", weighting=w)
                elif r["dataset"] in expected:
                    value = eca(curve, expected[r["dataset"]], weighting=w)
            rows.append({"dataset": r["dataset"], "ranker": r["ranker"], "weighting": w})
            rows[-1]["eca"] = value
    long = pd.DataFrame(rows, columns=["dataset", "ranker", "weighting", "eca"])
    for name, curve in expected.items():
        columns = ["i", "ffa", "rfa", "std", "lower", "upper"]
        curves.append(curve[columns].assign(dataset=name, ranker="random"))
    lead = ["dataset", "ranker", "i", "ffa", "rfa"]
    curve_table = pd.concat(curves, ignore_index=True) if curves else pd.DataFrame(columns=lead)
    rest = [c for c in curve_table.columns if c not in lead]
    return long, curve_table[lead + rest]


def weighting_table(long: pd.DataFrame, weighting: str, order: list[str]) -> pd.DataFrame:
    part = long[long["weighting"] == weighting]
    table = part.pivot(index="dataset", columns="ranker", values="eca")
    table.columns.name = None
    return table.reindex(index=order)


def other_weightings(long: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    """Average rank per ranker and Friedman's p for every weighting (complete rows only)."""
    from aggregation.evaluation import stats

    rows = []
    for w in WEIGHTINGS:
        table = weighting_table(long, w, order).dropna()
        if table.shape[0] < 2 or table.shape[1] < 2:
            continue
        fried = stats.friedman(table, higher_is_better=True)
        rows.append(
            {"weighting": w, "n_datasets": fried.n, **fried.avg_ranks.to_dict()}
            | {"friedman_p": fried.pvalue, "iman_davenport_p": fried.f_pvalue}
        )
    return pd.DataFrame(rows)


def fewer_folds_text(fewer: dict[str, int]) -> str:
    """The summary's words for the data sets given fewer folds than asked ("" if none)."""
    if not fewer:
        return ""
    named = ", ".join(f"{name}: {k} folds" for name, k in fewer.items())
    return f" ({named}: no class has more samples, so stratification allows no more)"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", help="names (default: every one present)")
    parser.add_argument("--smallest", type=int, help="only the N smallest (n_samples*n_features)")
    parser.add_argument(
        "--rankers", nargs="*", default=list(RANKERS), help="none: the random parts only"
    )
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--grid", default="points:32", help="every | geometric | step:S | points:N")
    parser.add_argument(
        "--n-random", type=int, default=100, help="random rankings of the expected curve (0: none)"
    )
    parser.add_argument(
        "--random-part",
        type=int,
        default=10,
        help="random rankings per cell (the expected curve's parts; default 10)",
    )
    parser.add_argument("--set", action="append", help="RANKER.PARAM=VALUE (JSON value)")
    parser.add_argument("--data-dir", type=Path, default=harness.DEFAULT_DATA_DIR)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/supervised"))
    harness.add_run_arguments(parser, budget=3600.0)
    args = parser.parse_args(argv)
    resolve_grid(args.grid, 100)  # reject a bad grid before any cell runs
    if args.random_part < 1:
        parser.error("--random-part must be at least 1")
    datasets, skipped = harness.chosen_datasets(args)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)

    cells = make_cells(args, datasets)
    records = harness.run_cells(cells, script=__spec__.name, **harness.run_options(args))
    fewer = {c.dataset: c.settings["folds"] for c in cells if c.settings["folds"] < args.folds}
    long, curves = summarise(records, args.n_random)
    order = [d.name for d in datasets]
    table = weighting_table(long, "uniform", order)
    harness.write_table(table, out, "eca_uniform")
    long.to_csv(out / "eca_all.csv", index=False)
    curves.to_csv(out / "curves.csv", index=False)
    command = harness.command_line(__spec__.name, argv)
    status, info = harness.finish_run(
        out,
        table,
        records,
        higher_is_better=True,
        title="ECA (uniform)",
        command=command,
        skipped=skipped,
    )
    per_weighting = other_weightings(long, order)
    harness.write_table(per_weighting, out, "weightings", index=False)

    lines = [
        "# Supervised protocol (error-curve paper): ECA against a random ranking -- "
        "OPTIMISTIC (whole-data rankings)",
        "",
        f"Command: `{command}`",
        "",
        f"{args.folds}-fold stratified CV{fewer_folds_text(fewer)}, paper's SVM (quadratic "
        f"kernel, C = 0.1), grid "
        f"`{args.grid}`, seed {args.seed}; rankings fitted on the whole data set (the paper's "
        f"protocol, kept to reproduce it: the test folds helped choose the features, so these "
        f"ECAs are optimistic, and pure noise scores above random; the nested leaderboard, "
        f"every ranking refit on each training fold, is `leaderboard/supervised.csv`). The "
        f"`random[a:b]` cells score random rankings a..b-1; the expected curve "
        f"pools all {args.n_random} of them (computed in parts of {args.random_part}) and is "
        "used by the magnitude weightings only. Higher is better.",
        harness.skipped_line(skipped, named=bool(args.datasets)),
        "",
        "## ECA, uniform weighting (data set x ranker; empty = failed or timed out)",
        "",
        harness.to_markdown(table),
        "",
        "## Rank statistics (uniform)",
        "",
        harness.stats_markdown(info),
        "",
        "## Every weighting: average ranks and Friedman p (complete data sets)",
        "",
        harness.to_markdown(per_weighting, index=False) if len(per_weighting) else "none",
        "",
        *harness.summary_tail(status),
    ]
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    print(f"\nECA uniform ({out}):\n{harness.to_markdown(table)}\n\n{harness.stats_markdown(info)}")
    return {"table": table, "eca": long, "curves": curves, "status": status, "stats": info}


if __name__ == "__main__":
    main()
