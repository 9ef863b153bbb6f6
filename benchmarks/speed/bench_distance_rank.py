"""Distance Rank Score: speed against a straightforward SciPy implementation, and memory.

The baseline is the formula written the obvious way: min-max scale, ``pdist`` of the
whole data, then per feature ``pdist`` of that column and ``scipy.stats.spearmanr``
against the total distances. Both run in this process on the same matrix; the script
prints their times, the ratio and the largest score difference. Wall and process-CPU
times are both shown (CPU time is steadier on a shared machine). A second table traces
the peak memory (tracemalloc: NumPy arrays and Python objects) of our ranker alone on a
larger matrix, for a few block sizes.

Example::

    python -m benchmarks.speed.bench_distance_rank
    python -m benchmarks.speed.bench_distance_rank --features 200 --memory-features 500
"""

from __future__ import annotations

import argparse
import gc
import time

import numpy as np
from scipy.spatial.distance import pdist
from scipy.stats import spearmanr

from benchmarks._common import cpu_seconds, print_table, traced_call
from rankers.unsupervised.distance_rank import DistanceRankRanker


def imbalanced_clusters(n_samples: int, n_features: int, seed: int) -> np.ndarray:
    """Imbalanced clusters (one large group, several groups of 10) in continuous features.

    A tenth of the features carry group means, the rest are noise with a few heavy
    tails, roughly the shape of the paper's tsfresh matrices.
    """
    rng = np.random.default_rng(seed)
    n_minor = min(9, max(1, n_samples // 20))
    labels = np.concatenate(
        [np.zeros(n_samples - 10 * n_minor, int), np.repeat(np.arange(1, n_minor + 1), 10)]
    )
    X = rng.normal(size=(n_samples, n_features))
    informative = max(1, n_features // 10)
    X[:, :informative] += 3.0 * rng.normal(size=(n_minor + 1, informative))[labels]
    heavy = rng.choice(n_features, size=n_features // 10, replace=False)
    X[:, heavy] = np.exp(X[:, heavy])
    return X


def baseline_scores(X: np.ndarray) -> np.ndarray:
    """The paper's score, written straightforwardly with SciPy."""
    lo = X.min(axis=0)
    Xs = (X - lo) / (X.max(axis=0) - lo)
    total = pdist(Xs, "sqeuclidean")
    return np.array(
        [spearmanr(total, pdist(Xs[:, [r]], "sqeuclidean")).statistic for r in range(X.shape[1])]
    )


def timed(fn, repeat: int = 1):
    """Best wall and best process-CPU time of ``repeat`` calls, and the last result.

    CPU time is reported besides wall time because it is steadier on a shared machine.
    """
    wall = cpu = np.inf
    result = None
    for _ in range(repeat):
        gc.collect()
        w, c = time.perf_counter(), cpu_seconds()
        result = fn()
        wall = min(wall, time.perf_counter() - w)
        cpu = min(cpu, cpu_seconds() - c)
    return wall, cpu, result


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=500, help="rows of the speed matrix")
    parser.add_argument("--features", type=int, default=1043, help="columns of the speed matrix")
    parser.add_argument(
        "--baseline-features",
        type=int,
        default=None,
        help="time the baseline (and ours) on only the first N columns (default: all)",
    )
    parser.add_argument("--repeat", type=int, default=1, help="best of N timings of ours")
    parser.add_argument("--memory-samples", type=int, default=2000)
    parser.add_argument("--memory-features", type=int, default=5000)
    parser.add_argument(
        "--block-sizes",
        type=int,
        nargs="*",
        default=[0, 4],
        help="block sizes for the memory table (0 = the default)",
    )
    parser.add_argument("--skip-memory", action="store_true", help="only the speed table")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    X = imbalanced_clusters(args.samples, args.features, args.seed)
    if args.baseline_features:
        X = X[:, : args.baseline_features]
    # warm both up (imports, lazy initialisation) so the timings compare steady states
    DistanceRankRanker().fit(X[:50, :3])
    baseline_scores(X[:50, :3])
    ours_wall, ours_cpu, ours = timed(lambda: DistanceRankRanker().fit(X).scores_, args.repeat)
    base_wall, base_cpu, base = timed(lambda: baseline_scores(X))
    diff = float(np.max(np.abs(ours - base)))
    print_table(
        [
            {
                "shape": f"{X.shape[0]}x{X.shape[1]}",
                "clock": clock,
                "ours_s": ours_s,
                "scipy_baseline_s": base_s,
                "ratio": base_s / ours_s,
            }
            for clock, ours_s, base_s in [
                ("wall", ours_wall, base_wall),
                ("cpu", ours_cpu, base_cpu),
            ]
        ],
        title="Distance Rank Score: ours vs pdist + spearmanr per feature",
    )
    print(f"largest score difference between the two: {diff:.3g}")
    if args.skip_memory:
        return

    Xm = imbalanced_clusters(args.memory_samples, args.memory_features, args.seed + 1)
    rows = []
    for block in args.block_sizes:
        est = DistanceRankRanker(block_size=block or None)
        seconds, peak = traced_call(lambda est=est: est.fit(Xm))
        rows.append(
            {
                "shape": f"{Xm.shape[0]}x{Xm.shape[1]}",
                "block_size": est.block_size_,
                "pairs": est.n_pairs_,
                "seconds": seconds,
                "peak_MiB": peak,
                "input_MiB": Xm.nbytes / 2**20,
            }
        )
    print_table(rows, title="Distance Rank Score: traced peak memory of fit (ours only)")


if __name__ == "__main__":
    main()
