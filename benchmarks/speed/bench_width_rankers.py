"""Wide data: the rankers sped up for issue 17 against their code at commit 9b10018.

For every ranker and shape (samples x features) the script fits the ranker of today's
tree and the one of commit ``9b10018`` (``git show 9b10018:<path>`` loaded as a temporary
module, which imports today's ``rankers`` helpers) on the same data, and prints the CPU
time of the fit (user + system, ``_common.cpu_seconds``: the machine is shared, wall time
measures the other jobs), the peak traced memory (tracemalloc, same run), their ratios,
and per ranker the exponent of time and memory against the number of features (least
squares on log-log over the shapes of one sample count). A "goal" shape is then run with
today's code alone where the old code takes minutes (issue 17's figures).

Defaults are compared as a user gets them: ``svm_rfe`` old = ``step=1`` (its old default),
new = ``step=0.05`` of the remaining features; ``distance_rank`` old = every sample, new =
``max_samples=500``. ``urelief`` computes the same scores (max |difference| printed).

``--agreement`` also measures distance_rank's ``max_samples`` default against the full
computation (Spearman over the features, random_state 0-2) on Isolet (scikit-feature)
and german, australian and breast_w (PMLB), skipping any data set absent from ``../shared/data``.

BLAS runs on one thread (``OPENBLAS_NUM_THREADS=1`` and threadpoolctl).

Run: ``python -m benchmarks.speed.bench_width_rankers`` (``--quick`` for a smoke run,
``--rankers urelief svm_rfe`` for some, ``--out FILE`` to write the table as markdown).
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import platform
import sys
import tracemalloc
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
import pandas as pd
from scipy.stats import spearmanr
from threadpoolctl import threadpool_limits

from benchmarks._common import SHARED_DATA, cpu_seconds, load_skfeature, module_at, print_table

ROOT = Path(__file__).resolve().parents[2]
OLD_COMMIT = "9b10018"

# name -> (module path, class name, old kwargs, new kwargs, classification target?)
RANKERS = {
    "urelief": ("rankers/unsupervised/urelief.py", "UReliefRanker", {}, {}, False),
    "svm_rfe": ("rankers/supervised/svm_rfe.py", "SVMRFERanker", {"step": 1}, {}, True),
    "distance_rank": (
        "rankers/unsupervised/distance_rank.py",
        "DistanceRankRanker",
        {"n_jobs": 1},
        {"n_jobs": 1, "random_state": 0},
        False,
    ),
}

# (samples, feature counts) for the exponent, then goal shapes run with the new code only
SHAPES = {
    "urelief": ((400, (500, 1000, 2000, 4000)), [(800, 4000)]),
    "svm_rfe": ((200, (250, 500, 1000, 2000)), [(2000, 2000)]),
    "distance_rank": ((700, (100, 200, 400, 800)), [(2000, 2000)]),
}
QUICK_SHAPES = {
    "urelief": ((60, (50, 100, 200, 400)), []),
    "svm_rfe": ((60, (50, 100, 200, 400)), []),
    "distance_rank": ((60, (50, 100, 200, 400)), []),
}


def old_class(name: str):
    """The ranker class as it was at ``OLD_COMMIT``."""
    path, cls, *_ = RANKERS[name]
    module = module_at(OLD_COMMIT, path, f"_old_{name}")
    return getattr(module, cls)


def new_class(name: str):
    path, cls, *_ = RANKERS[name]
    module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
    return getattr(module, cls)


def data(m: int, n: int, classification: bool, seed: int = 0):
    """Noise plus a tenth of the features shifted by a 4-level label."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 4, size=m)
    X = rng.normal(size=(m, n))
    X[:, : max(1, n // 10)] += 0.5 * labels[:, None]
    y = (labels >= 2).astype(int) if classification else None
    return X, y


def run(cls, kwargs, X, y):
    """CPU seconds and peak traced MB of one fit, and the scores."""
    gc.collect()
    tracemalloc.start()
    start = cpu_seconds()
    try:
        scores = cls(**kwargs).fit(X, y).scores_
        seconds = cpu_seconds() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return seconds, peak / 2**20, scores


def exponent(features, values) -> float:
    """Slope of log(values) against log(features)."""
    return float(np.polyfit(np.log(features), np.log(values), 1)[0])


def bench(names, shapes) -> list[dict]:
    rows = []
    for name in names:
        _, _, old_kw, new_kw, classification = RANKERS[name]
        Old, New = old_class(name), new_class(name)
        (m, counts), goals = shapes[name]
        series = []
        for n in counts:
            X, y = data(m, n, classification)
            t_old, mb_old, s_old = run(Old, old_kw, X, y)
            t_new, mb_new, s_new = run(New, new_kw, X, y)
            rho = spearmanr(s_old, s_new)[0]
            series.append((n, t_old, t_new, mb_old, mb_new))
            rows.append(
                {
                    "ranker": name,
                    "shape": f"{m}x{n}",
                    "old_cpu_s": t_old,
                    "new_cpu_s": t_new,
                    "speed-up": t_old / t_new,
                    "old_peak_MB": mb_old,
                    "new_peak_MB": mb_new,
                    "mem_ratio": mb_old / mb_new,
                    "rho_old_new": rho,
                    "max_abs_diff": float(np.abs(s_old - s_new).max()),
                }
            )
            print(rows[-1], flush=True)
        n_, t_o, t_n, mb_o, mb_n = (np.array(v) for v in zip(*series, strict=True))
        rows.append(
            {
                "ranker": name,
                "shape": f"exponent vs features at m={m}",
                "old_cpu_s": exponent(n_, t_o),
                "new_cpu_s": exponent(n_, t_n),
                "old_peak_MB": exponent(n_, mb_o),
                "new_peak_MB": exponent(n_, mb_n),
            }
        )
        for gm, gn in goals:
            X, y = data(gm, gn, classification)
            t_new, mb_new, _ = run(New, new_kw, X, y)
            rows.append(
                {
                    "ranker": name,
                    "shape": f"goal {gm}x{gn}",
                    "new_cpu_s": t_new,
                    "new_peak_MB": mb_new,
                }
            )
            print(rows[-1], flush=True)
    return rows


def _pmlb(name: str):
    path = SHARED_DATA / "uci" / f"{name}.tsv.gz"
    if not path.is_file():
        return None
    frame = pd.read_csv(path, sep="\t")
    return frame.drop(columns="target").to_numpy(float)


def agreement(quick: bool) -> list[dict]:
    """distance_rank: the max_samples default against every sample, on real data."""
    from rankers.unsupervised.distance_rank import DistanceRankRanker

    sets = {name: _pmlb(name) for name in ("german", "australian", "breast_w")}
    if not quick:
        isolet = load_skfeature("Isolet")
        sets = {"Isolet": None if isolet is None else isolet[0], **sets}
    rows = []
    for name, X in sets.items():
        if X is None:
            print(f"{name}: absent from {SHARED_DATA}, skipped")
            continue
        X = X[:, np.ptp(X, axis=0) > 0]
        full = DistanceRankRanker(max_samples=None, n_jobs=1).fit(X).scores_
        for size in (300, 500, 700):
            rhos = [
                spearmanr(
                    full,
                    DistanceRankRanker(max_samples=size, random_state=seed, n_jobs=1)
                    .fit(X)
                    .scores_,
                )[0]
                for seed in range(3)
            ]
            rows.append(
                {
                    "data": f"{name} {X.shape[0]}x{X.shape[1]}",
                    "max_samples": size,
                    "rho_min": min(rhos),
                    "rho_mean": float(np.mean(rhos)),
                }
            )
            print(rows[-1], flush=True)
    return rows


def markdown(frame: pd.DataFrame) -> str:
    """The table as markdown (no tabulate dependency); NaN cells left empty."""

    def cell(v):
        if isinstance(v, float):
            return "" if np.isnan(v) else f"{v:.4g}"
        return str(v)

    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(False)]
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rankers", nargs="+", default=list(RANKERS), choices=list(RANKERS))
    parser.add_argument("--quick", action="store_true", help="small shapes, no goal shapes")
    parser.add_argument("--no-goals", action="store_true", help="skip the goal shapes")
    parser.add_argument("--agreement", action="store_true", help="distance_rank agreement")
    parser.add_argument("--agreement-only", action="store_true", help="only the agreement")
    parser.add_argument("--out", type=Path, help="write the tables as markdown here")
    args = parser.parse_args(argv)
    threadpool_limits(1)
    shapes = QUICK_SHAPES if args.quick else SHAPES
    if args.no_goals:
        shapes = {k: (v[0], []) for k, v in shapes.items()}
    rows = [] if args.agreement_only else bench(args.rankers, shapes)
    frame = print_table(rows, title=f"width: today vs {OLD_COMMIT}")
    agree = None
    if args.agreement or args.agreement_only:
        agree = print_table(agreement(args.quick), title="distance_rank max_samples agreement")
    if args.out:
        command = f"python -m {__spec__.name} " + " ".join(argv or sys.argv[1:])
        text = [
            f"Command: `{command.strip()}`",
            "",
            f"Python {platform.python_version()}, numpy {np.__version__}, "
            f"{platform.machine()}, BLAS on 1 thread; CPU seconds (user + system, getrusage), "
            "peak MB traced by tracemalloc in the same run.",
        ]
        if rows:
            text += ["", markdown(frame)]
        if agree is not None:
            text += ["", markdown(agree)]
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(text) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
