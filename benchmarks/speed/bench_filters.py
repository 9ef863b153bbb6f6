"""The univariate filters against their scikit-learn/scipy peers and a one-pass numpy floor.

Issue 39, item 1: ``variance``, ``anova_f``, ``t_test``, ``fisher_score`` and ``chi2``
must be at least as fast as their peer at every shape from 50 x 500 to 1,000 x 50,000,
take at most 1.5x the peer's peak memory, and stay within 2x a one-pass numpy floor at
1,000 x 50,000. Users call these filters inside bootstraps, CV loops and stability
selection, so both the fixed cost per call (small shapes) and copies of X (large ones)
count.

CPU time (``_common.cpu_seconds``, user + system, BLAS on one thread: set ``OMP_NUM_THREADS=1
OPENBLAS_NUM_THREADS=1``), best of ``--repeat`` calls with ours and the peer alternating,
so a busy machine slows both alike; peak memory by :mod:`tracemalloc` (NumPy's
allocations) for one call each, beyond the data itself.

Peers: ``variance`` -- ``sklearn.feature_selection.VarianceThreshold().fit`` (its
``variances_``); ``anova_f`` and ``fisher_score`` (which ranks as the F test) --
``sklearn.feature_selection.f_classif``; ``t_test`` -- ``scipy.stats.ttest_ind(...,
equal_var=False)`` on the two classes' rows; ``chi2`` -- ``sklearn.feature_selection.chi2``
against ours with ``method="sklearn"`` (the same statistic), and our default (the
contingency chi2 of equal-frequency bins, which sorts every column) reported beside it.
Floors: the sums a one-pass implementation needs (``X.sum(0)`` and ``einsum`` of the
squares, per class for the class tests), computed once. The default chi2 (contingency
tables of equal-frequency bins) cannot come from one pass: its bins are order statistics,
so its floor (``sort_floor_s``) sorts every column with its classes gathered along it and
counts the (position bin, class) pairs, ties not grouped (on tie-free data these are its
very tables: ``tests/benchmarks/test_bench_filters.py``); ``value_sort_s`` sorts the values
alone, a bound below that.

The peers' times depend on the state of glibc's allocator: their temporaries (copies of
``X``, megabytes each) are fresh pages from the kernel until enough large blocks have been
freed to raise malloc's dynamic mmap threshold, after which they come from the heap, and
``f_classif`` runs twice as fast (seen at 72 x 7,129: 7.7 ms, then 3.7 ms in a later row of
the same run). Ours allocate little, so a warm allocator helps the peer; for the peer at
its best in every row, fix the thresholds for the run:
``MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=268435456``.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m benchmarks.speed.bench_filters
    python -m benchmarks.speed.bench_filters --shapes 50x500 72x7129 --repeat 20
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.feature_selection import VarianceThreshold, chi2, f_classif

import rankers
from benchmarks._common import cpu_call, traced_call

SHAPES = ["50x500", "72x7129", "200x2000", "200x20000", "1000x5000", "1000x50000"]
FILTERS = ["variance", "anova_f", "t_test", "fisher_score", "chi2"]


def _peak_mb(fn) -> float:
    return traced_call(fn)[1]  # the shared helper (times the same call: harmless here)


def _data(m: int, n: int, seed: int = 0, counts: bool = False):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], [m // 2, m - m // 2])
    # chi2 needs non-negative features (counts)
    X = rng.poisson(3.0, size=(m, n)).astype(np.float64) if counts else rng.normal(size=(m, n))
    X[:, : max(1, n // 100)] += y[:, None]
    return X, y


def _floor(name: str, X: np.ndarray, y: np.ndarray):
    """The sums a one-pass implementation needs, once."""
    if name == "variance":
        s1 = X.sum(axis=0)
        s2 = np.einsum("ij,ij->j", X, X)
        return s2 / len(X) - (s1 / len(X)) ** 2
    onehot = np.zeros((len(y), 2))
    onehot[np.arange(len(y)), y] = 1.0
    s1 = onehot.T @ X
    s2 = onehot.T @ (X * X)
    return s1, s2


def _sort_floor(X: np.ndarray, y: np.ndarray, n_bins: int = 10):
    """The least the contingency chi2 needs: every column sorted with its classes gathered
    along it (equal-frequency bins come from the order statistics), the (position bin,
    class) pairs counted; by blocks of ~1 MB of columns as ours. Ties are not looked at
    (ours groups near-equal values and gives a group its mid rank's bin)."""
    m, n = X.shape
    width = max(16, (1 << 17) // max(m, 1))
    n_classes = int(y.max()) + 1
    position_bin = (np.arange(m) * n_bins) // m
    out = []
    for j in range(0, n, width):
        block = np.ascontiguousarray(X[:, j : j + width].T)
        order = np.argsort(block, axis=1)
        index = (np.arange(block.shape[0])[:, None] * n_bins + position_bin) * n_classes
        index += y[order]
        out.append(np.bincount(index.ravel(), minlength=block.shape[0] * n_bins * n_classes))
    return out


def _value_sort_floor(X: np.ndarray):
    """A lower bound below that one: every column's values sorted, nothing else."""
    return np.sort(X, axis=0)


def _peer(name: str, X: np.ndarray, y: np.ndarray):
    if name == "variance":
        return lambda: VarianceThreshold().fit(X).variances_
    if name in ("anova_f", "fisher_score"):
        return lambda: f_classif(X, y)
    if name == "t_test":
        return lambda: stats.ttest_ind(X[y == 1], X[y == 0], equal_var=False)
    return lambda: chi2(X, y)


def _ours(name: str, X, y, params=None):
    est = rankers.get(name, **(params or {}))
    target = None if name == "variance" else y
    return lambda: est.fit(X, target)


def run(shapes: list[str], filters: list[str], repeat: int) -> pd.DataFrame:
    rows = []
    for shape in shapes:
        m, n = (int(v) for v in shape.split("x"))
        for name in filters:
            X, y = _data(m, n, counts=name == "chi2")
            variants = [
                ("ours", _ours(name, X, y, {"method": "sklearn"} if name == "chi2" else None))
            ]
            if name == "chi2":
                variants.append(("ours (contingency)", _ours(name, X, y)))
            peer = _peer(name, X, y)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                times = {label: [] for label, _ in variants}
                times["peer"] = []
                for _ in range(repeat):  # alternate, so load slows both alike
                    for label, fn in variants:
                        times[label].append(cpu_call(fn)[0])
                    times["peer"].append(cpu_call(peer)[0])
                peer_mb = _peak_mb(peer)
                for label, fn in variants:
                    ours_s, peer_s = min(times[label]), min(times["peer"])
                    ours_mb = _peak_mb(fn)
                    row = {
                        "shape": shape,
                        "filter": name if label == "ours" else f"{name} {label[5:]}",
                        "ours_s": ours_s,
                        "peer_s": peer_s,
                        "speed_vs_peer": peer_s / ours_s if ours_s else np.inf,
                        "ours_mb": ours_mb,
                        "peer_mb": peer_mb,
                        "memory_vs_peer": ours_mb / peer_mb if peer_mb else np.nan,
                    }
                    if m * n >= 1000 * 50000:
                        floor_s = min(
                            cpu_call(lambda X=X, y=y, f=name: _floor(f, X, y))[0] for _ in range(3)
                        )
                        row["floor_s"] = floor_s
                        row["ours_vs_floor"] = ours_s / floor_s
                    if label == "ours (contingency)":
                        # the floor of this statistic includes a sort of every column
                        times_sort = [cpu_call(lambda X=X, y=y: _sort_floor(X, y))[0]
                                      for _ in range(min(repeat, 5))]  # fmt: skip
                        times_vsort = [cpu_call(lambda X=X: _value_sort_floor(X))[0]
                                       for _ in range(min(repeat, 5))]  # fmt: skip
                        row["sort_floor_s"] = min(times_sort)
                        row["ours_vs_sort_floor"] = ours_s / min(times_sort)
                        row["value_sort_s"] = min(times_vsort)
                    rows.append(row)
            print(pd.DataFrame(rows[-len(variants):]).to_string(index=False, header=False,
                                                                 float_format=lambda v: f"{v:.4g}"),
                  flush=True)  # fmt: skip
            del X
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="+", default=SHAPES, help="m x n shapes")
    parser.add_argument("--filters", nargs="+", default=FILTERS, choices=FILTERS)
    parser.add_argument("--repeat", type=int, default=5, help="calls each (best is kept)")
    parser.add_argument("--out", help="also write the table as markdown to this file")
    args = parser.parse_args(argv)
    table = run(args.shapes, args.filters, args.repeat)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(table.to_markdown(index=False, floatfmt=".4g") + "\n")


if __name__ == "__main__":
    main()
