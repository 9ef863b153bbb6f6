"""The expected curve with the default model: three evaluations of the same rankings.

``expected_curve`` scores ``n_random`` random rankings at every grid point on every fold
(the supervised protocol: 100 x ~33 x 2 x 10 = ~66,000 SVM fits per data set). Compared
here, on the same folds and the same random rankings, CPU time, one BLAS thread, one
after another in one process:

* per-call: a clone, a scaler and a scorer per (subset, fold) (``_fold_scores``);
* direct: folds min-max scaled once, one kernel product per (subset, fold)
  (``_fold_accuracies``; bit-identical to per-call);
* chains (what ``expected_curve`` runs): each ranking's kernels grown from one grid
  point to the next (``_chain_accuracies``), one pass over its features per fold.

The chains' kernels differ from the direct product in rounding only; the table counts the
fold accuracies that differ (a libsvm decision moved by the last bits).

Run: ``python -m benchmarks.speed.bench_expected_curve [--datasets colon arcene] [--n-random 3]``.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from aggregation.evaluation import error_curves
from benchmarks._common import cpu_call, load_dataset
from benchmarks._protocol import DEFAULT_DATA_DIR, list_datasets, to_markdown


def compare(name: str, n_random: int, repeat: int, per_call: bool) -> dict:
    present, _ = list_datasets(DEFAULT_DATA_DIR)
    path = next(d.path for d in present if d.name == name)
    X, y = load_dataset(path)
    y = np.unique(y, return_inverse=True)[1]
    grid = max(1, -(-X.shape[1] // 32))  # the protocol's points:32
    setup = error_curves._Setup(X, y, None, None, 10, grid, 0)
    rng = np.random.default_rng(setup.perm_seed)
    orders = [rng.permutation(X.shape[1]) for _ in range(n_random)]
    times: dict[str, list[float]] = {"per-call": [], "direct": [], "chains": []}
    for _ in range(repeat):
        t, chains = cpu_call(lambda: error_curves._evaluate_chains(setup, orders, 1))
        times["chains"].append(t)
        t, direct = cpu_call(lambda: error_curves._evaluate(setup, orders, 1))
        times["direct"].append(t)
        if per_call:
            setup.default_accuracy = False
            t, slow = cpu_call(lambda: error_curves._evaluate(setup, orders, 1))
            setup.default_accuracy = True
            times["per-call"].append(t)
            np.testing.assert_array_equal(slow, direct)  # the same floats, bit for bit
    chains, direct = np.asarray(chains), np.asarray(direct)
    best = {k: min(v) for k, v in times.items() if v}
    row = {"data": f"{name} {X.shape[0]}x{X.shape[1]}", "n_random": n_random}
    row |= {f"{k} CPU s": v for k, v in best.items()}
    if per_call:
        row["chains vs per-call"] = best["per-call"] / best["chains"]
    row["chains vs direct"] = best["direct"] / best["chains"]
    row["fold accuracies differing"] = f"{np.count_nonzero(chains != direct)} of {chains.size}"
    row["largest curve difference"] = float(np.abs(chains.mean(-1) - direct.mean(-1)).max())
    return row


def main(argv: list[str] | None = None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["colon", "arcene"])
    parser.add_argument("--n-random", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--no-per-call", action="store_true", help="skip the slowest way")
    args = parser.parse_args(argv)
    with threadpool_limits(1):
        rows = [
            compare(name, args.n_random, args.repeat, not args.no_per_call)
            for name in args.datasets
        ]
    table = pd.DataFrame(rows)
    print(to_markdown(table, index=False))
    return table


if __name__ == "__main__":
    main()
