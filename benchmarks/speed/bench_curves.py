"""Cost of FFA/RFA error curves: one curve pair on a 1,000 x 100 set, and n_jobs=2 vs 1.

Data: the error-curve paper's synthetic set (``--kind``, default "combined", 1,000 x 100),
ranked by its ground truth; the paper's classifier (quadratic-kernel SVM, C = 0.1 on
[0, 1]-normalised data) under ``--cv``-fold CV. The same ``ffa_rfa`` call runs with
``n_jobs=1`` (the baseline) and ``n_jobs=2`` side by side, and both results must be equal.
A control, a pure-Python busy loop split into 8 joblib tasks, shows the speed-up the
machine can give at that moment (on cores shared with other work it may be none).

A full grid (every i, the paper) scores 2n - 1 = 199 subsets x 10 folds; by default the
benchmark evaluates every ``--grid``-th size and extrapolates the full-grid cost from the
measured time per subset (curve cost is linear in the number of distinct subsets).

    python -m benchmarks.speed.bench_curves
    python -m benchmarks.speed.bench_curves --grid 1          # the paper's full grid (minutes)
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from aggregation.evaluation import curve_grid, ffa_rfa
from benchmarks._common import measure, print_table
from moweights.data import make_error_curve_data


def _busy(n: int) -> int:
    total = 0
    for i in range(n):
        total += i
    return total


def _control(n_jobs: int) -> float:
    from joblib import Parallel, delayed

    start = time.perf_counter()
    Parallel(n_jobs=n_jobs)(delayed(_busy)(3_000_000) for _ in range(8))
    return time.perf_counter() - start


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", default="combined", choices=["single", "pair", "combined"])
    parser.add_argument("--n-samples", type=int, default=1000)
    parser.add_argument("--cv", type=int, default=10)
    parser.add_argument("--grid", type=int, default=10, help="grid step (1 = every i)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    X, y, truth = make_error_curve_data(args.kind, n_samples=args.n_samples, random_state=0)
    n = X.shape[1]
    grid = curve_grid(args.grid, n)
    n_subsets = 2 * len(grid) - 1  # FFA(n) = RFA(n) is scored once
    print(f"data: {args.kind}, {X.shape[0]} x {n}; grid step {args.grid} -> {len(grid)} sizes, ")
    print(f"{n_subsets} distinct subsets x {args.cv} folds = {n_subsets * args.cv} SVM fits")

    def run(n_jobs):
        return ffa_rfa(
            truth, X, y, cv=args.cv, grid=args.grid, n_jobs=n_jobs, random_state=args.seed
        )

    ffa_rfa(truth, X.iloc[:100], y.iloc[:100], cv=2, grid=[1, n], n_jobs=2)  # start workers
    rows, results = [], {}
    for n_jobs in (1, 2):
        m = measure(lambda n_jobs=n_jobs: run(n_jobs), repeat=args.repeat, memory=False)
        results[n_jobs] = m.result
        rows.append(
            {
                "n_jobs": n_jobs,
                "seconds": m.seconds,
                "ms per fit": 1000 * m.seconds / (n_subsets * args.cv),
                "full grid (s, extrapolated)": m.seconds / n_subsets * (2 * n - 1),
            }
        )
    table = print_table(rows, title="one FFA/RFA curve pair")
    speedup = table.loc[0, "seconds"] / table.loc[1, "seconds"]
    control = _control(1) / _control(2)
    print(f"\nspeed-up of n_jobs=2 over n_jobs=1: {speedup:.2f}x")
    print(f"control (pure-Python busy loop, same pool): {control:.2f}x")
    pd.testing.assert_frame_equal(results[1], results[2])
    print("results of n_jobs=1 and n_jobs=2: identical")
    print(f"FFA(1) = {results[1].loc[0, 'ffa']:.3f}, RFA(1) = {results[1].loc[0, 'rfa']:.3f}")


if __name__ == "__main__":
    main()
