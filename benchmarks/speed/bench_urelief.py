"""URelief: the vectorised ranker against a straightforward per-iteration loop.

The baseline is Algorithm 3 of the paper as one would first write it: a Python loop over
the I reference examples; in each, the per-feature distances of the reference example to
every sample (one numpy expression), its K nearest neighbours by a stable sort, and the
three probability estimates updated from those K rows. Our ranker processes blocks of
reference examples with one ``cdist`` call each and sums all contributions with matrix
products. Both use every sample as a reference example (I = m) and must give the same
scores (the max difference is printed). Peak memory is traced with tracemalloc.

BLAS runs single-threaded by default (``--blas-threads``): both sides make small
matrix-vector products, and on a shared, loaded machine OpenBLAS's spinning threads make
those tens of times slower, which would measure the machine rather than the algorithms.

Run: ``python -m benchmarks.speed.bench_urelief`` (``--quick`` for a smoke test).
"""

from __future__ import annotations

import argparse

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks._common import measure, print_table
from rankers.unsupervised.urelief import UReliefRanker


def loop_urelief(X: np.ndarray, n_neighbors: int = 30) -> np.ndarray:
    """Algorithm 3 with one Python iteration per reference example (I = m)."""
    m, n = X.shape
    K = min(n_neighbors, m - 1)
    Xs = (X - X.min(axis=0)) / np.ptp(X, axis=0)
    p_c, p_a, p_ac = 0.0, np.zeros(n), np.zeros(n)
    for r in range(m):
        d_i = np.abs(Xs - Xs[r])  # (m, n) per-feature distances, Eq. 3
        d_x = d_i.mean(axis=1)
        d_x[r] = np.inf
        nbrs = np.argsort(d_x, kind="stable")[:K]
        p_c += d_x[nbrs].sum()
        p_a += d_i[nbrs].sum(axis=0)
        p_ac += d_x[nbrs] @ d_i[nbrs]
    p_c, p_a, p_ac = p_c / (m * K), p_a / (m * K), p_ac / (m * K)
    return p_ac / p_c - (p_a - p_ac) / (1 - p_c)


def _data(m: int, n: int, seed: int = 0) -> np.ndarray:
    """Noise plus a few groups of features that share a cluster label."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 4, size=m)
    X = rng.normal(size=(m, n))
    X[:, : n // 10] += labels[:, None]
    return X


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        nargs="+",
        default=["500x1000", "2000x200"],
        help="data sizes as MxN (samples x features); default: 500x1000 2000x200",
    )
    parser.add_argument("--neighbors", type=int, default=30, help="K (default 30)")
    parser.add_argument("--repeat", type=int, default=3, help="timing repeats (best of)")
    parser.add_argument("--blas-threads", type=int, default=1, help="BLAS threads (default 1)")
    parser.add_argument("--quick", action="store_true", help="one small size, one repeat")
    args = parser.parse_args(argv)
    with threadpool_limits(args.blas_threads, user_api="blas"):
        _run(args)


def _run(args) -> None:
    sizes = ["200x300"] if args.quick else args.sizes
    repeat = 1 if args.quick else args.repeat

    rows = []
    for size in sizes:
        m, n = (int(v) for v in size.lower().split("x"))
        X = _data(m, n)
        ours = measure(lambda X=X: UReliefRanker(n_neighbors=args.neighbors).fit(X), repeat)
        loop = measure(lambda X=X: loop_urelief(X, args.neighbors), repeat)
        rows.append(
            {
                "m x n": f"{m} x {n}",
                "ours s": ours.seconds,
                "loop s": loop.seconds,
                "speed-up": loop.seconds / ours.seconds,
                "ours peak MB": ours.peak_mb,
                "loop peak MB": loop.peak_mb,
                "max |diff|": float(np.abs(ours.result.scores_ - loop.result).max()),
            }
        )
    print_table(rows, title=f"URelief (K={args.neighbors}, I=m): vectorised vs per-iteration loop")


if __name__ == "__main__":
    main()
