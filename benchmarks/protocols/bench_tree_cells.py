"""What a tree-ensemble cell of the unsupervised protocol costs, from a few of its trees.

The unsupervised grid fits genie3 and rf_score on each of 10 training folds (90 % of the
rows), 100 trees each: 1,000 multi-output trees per cell, every feature a target. On the
sparse text sets (RELATHE, PCMAC, BASEHOCK: 98-99 % zeros) these cells ran over a 900 s
budget. This script fits the ranker with ``--trees`` trees on one such fold (the first
90 % of a seeded permutation), one BLAS thread, and extrapolates its CPU time linearly
in the number of trees to the cell's 1,000; it also prints the trees' depth and leaf
count, which say why: splits of a mostly-zero feature peel off a few rows, so the trees
are hundreds of levels deep instead of ~log2(n).

The extrapolation charges the fit's fixed set-up to ``--trees`` trees instead of 100, so
with few trees it overstates a cell whose trees are cheap (madelon, dense 2,600 x 500:
2 trees give 0.07 h, 10 trees 0.03 h, and its cell took 105 s); where a tree costs
seconds, as on the text sets, the set-up is noise. The evaluation (seconds) is left out.
Times are CPU seconds; a cell's recorded time is wall time, which a loaded machine
stretches.

Example::

    python -m benchmarks.protocols.bench_tree_cells --datasets RELATHE PCMAC BASEHOCK
    python -m benchmarks.protocols.bench_tree_cells --datasets madelon --trees 5
"""

from __future__ import annotations

import argparse

import numpy as np
from threadpoolctl import threadpool_limits

import rankers
from benchmarks._common import cpu_seconds, load_skfeature, print_table

#: trees a protocol cell fits: 10 folds x the rankers' default n_estimators
CELL_TREES = 10 * 100


def probe(name: str, X: np.ndarray, ranker: str, n_trees: int, seed: int) -> dict:
    """CPU seconds of ``n_trees`` trees on one training fold, extrapolated to a cell."""
    rows = np.random.default_rng(seed).permutation(X.shape[0])[: int(0.9 * X.shape[0])]
    est = rankers.get(ranker, n_estimators=n_trees, random_state=seed, keep_estimator=True)
    with threadpool_limits(1):
        start = cpu_seconds()
        est.fit(X[rows])
        cpu = cpu_seconds() - start
    trees = est.estimator_.estimators_
    return {
        "data": f"{name} {X.shape[0]}x{X.shape[1]}",
        "zeros": round(float((X == 0).mean()), 3),
        "ranker": ranker,
        "trees": n_trees,
        "CPU s": round(cpu, 2),
        "cell CPU h (est.)": round(cpu * CELL_TREES / n_trees / 3600, 2),
        "depth": "-".join(str(d) for d in sorted({t.get_depth() for t in trees})),
        "leaves": int(np.mean([t.get_n_leaves() for t in trees])),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["RELATHE", "PCMAC", "BASEHOCK"])
    parser.add_argument("--rankers", nargs="+", default=["genie3", "rf_score"])
    parser.add_argument("--trees", type=int, default=2, help="trees fitted per probe")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rows = []
    for name in args.datasets:
        data = load_skfeature(name)
        if data is None:
            print(f"{name}: not in ../shared/data/skfeature, skipped")
            continue
        for ranker in args.rankers:
            rows.append(probe(name, data[0], ranker, args.trees, args.seed))
            print(rows[-1], flush=True)
    if rows:
        print_table(rows, "tree-ensemble cells: CPU time of a few trees, extrapolated")


if __name__ == "__main__":
    main()
