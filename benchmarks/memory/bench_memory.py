"""Honesty of the memory estimates that guard the quadratic steps.

Every step whose memory grows with the square of the features or samples estimates its
peak before allocating (``rankers.memory.check_memory``). This script fits each such
step at two sizes, measures the peak with :mod:`tracemalloc` (which sees NumPy's
allocations) and prints estimate / measured: a ratio near 1 (the goal: within 1/1.5 to
1.5) keeps the refusals honest, neither refusing what fits nor letting through what
does not.

    python -m benchmarks.memory.bench_memory            # ~1 minute, peaks up to ~1 GB
    python -m benchmarks.memory.bench_memory --quick    # smaller shapes (~150 MB)
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

import rankers
from benchmarks._common import measure, print_table
from moweights.weighting import MOWeighting
from moweights.weighting.criteria import parse_objectives
from moweights.weighting.criteria import peak_bytes as weighting_bytes
from rankers.unsupervised.distance_rank import _peak_bytes as distance_rank_bytes
from rankers.unsupervised.frane import _peak_bytes as frane_bytes
from rankers.unsupervised.spec import _dense_peak_bytes as spec_bytes

MEDIAN, MEAN, PAIRS = "linear_median", "linear_mean", 20000


def _frane(m, n, **params):
    X = np.random.default_rng(0).normal(size=(m, n))
    est = rankers.get("frane", **params)
    peak = measure(lambda: est.fit(X)).peak_mb * 2**20
    # the streamed FRANe's estimate for the largest graph it scored (edges = degree n / 2)
    solved = np.isfinite(est.rqh_)
    edges = float((est.average_degrees_ * n / 2)[solved].max()) if solved.any() else 0.0
    return frane_bytes(m, n, est.similarity, edges, est.thresholds, est.n_thresholds), peak


def _distance_rank(m, n, ties=False, n_jobs=1):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 5, size=(m, n)).astype(float) if ties else rng.normal(size=(m, n))
    est = rankers.get("distance_rank", n_jobs=n_jobs)
    peak = measure(lambda: est.fit(X)).peak_mb * 2**20
    jobs = min(n_jobs, -(-n // est.block_size_))
    return distance_rank_bytes(m, n, est.n_pairs_, est.block_size_, jobs), peak


def _spec(m, n, style=3):
    X = np.random.default_rng(0).normal(size=(m, n))
    est = rankers.get("spec", style=style, random_state=0)
    return spec_bytes(m, n), measure(lambda: est.fit(X)).peak_mb * 2**20


def _weighting(m, n, objectives=("C4",), max_pairs=None, pop_size=80):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(m, n)), np.repeat([0, 1], m // 2)
    est = MOWeighting(
        objectives=objectives, max_pairs=max_pairs, pop_size=pop_size, n_gen=2, random_state=0
    )
    keys = [k for k, _ in parse_objectives(objectives)]
    peak = measure(lambda: est.fit(X, y)).peak_mb * 2**20
    return weighting_bytes(m, n, keys, max_pairs, pop_size), peak


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller shapes")
    args = parser.parse_args(argv)
    s = 0.5 if args.quick else 1.0
    cases = [
        ("frane", "abs_correlation", lambda k: _frane(100, int(k * 1500))),
        ("frane", "euclidean", lambda k: _frane(100, int(k * 1500), similarity="euclidean")),
        (
            "frane",
            "linear_median",
            lambda k: _frane(100, int(k * 1500), thresholds="linear_median"),
        ),
        ("frane", "linear_mean", lambda k: _frane(100, int(k * 1500), thresholds="linear_mean")),
        ("distance_rank", "no ties", lambda k: _distance_rank(int(k * 1200), 20)),
        ("distance_rank", "ties", lambda k: _distance_rank(int(k * 1200), 20, ties=True)),
        ("distance_rank", "n_jobs=2", lambda k: _distance_rank(int(k * 1200), 20, n_jobs=2)),
        ("spec", "style=3, rbf", lambda k: _spec(int(k * 1500), 20)),
        ("mo_weighting", "C4, all pairs", lambda k: _weighting(int(k * 500), 20)),
        (
            "mo_weighting",
            "C1,-C2,-C3,C4, pop 20",
            lambda k: _weighting(int(k * 500), 200, ("C1", "-C2", "-C3", "C4"), pop_size=20),
        ),
        (
            "mo_weighting",
            "C4, max_pairs",
            lambda k: _weighting(2000, int(k * 200), max_pairs=20000),
        ),
    ]
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for ranker, setting, run in cases:
            for k in (s, 2 * s):
                estimate, peak = run(k)
                rows.append(
                    {
                        "ranker": ranker,
                        "setting": setting,
                        "size": k,
                        "estimate_MB": estimate / 1e6,
                        "measured_MB": peak / 1e6,
                        "ratio": estimate / peak,
                    }
                )
    table = print_table(rows, "estimated / measured (tracemalloc) peak memory")
    worst = max(table["ratio"].max(), 1 / table["ratio"].min())
    print(f"\nworst ratio (either way): {worst:.3f}")


if __name__ == "__main__":
    main()
