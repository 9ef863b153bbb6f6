"""MCFS and the Laplacian score against scikit-feature in CPU time, alternating (issue 17).

``bench_spectral.py`` times the peer once, in wall time, in a spawned child whose call
also imports scikit-feature; on a shared machine that swings by several times. Here both
sides run in this process, warmed up, on one BLAS thread, alternating ours and the peer
``--repeat`` times, timed in CPU seconds (user + system, ``_common.cpu_seconds``);
"speed-up" is the ratio of the best CPU times (peer / ours). The peer is fed our graph and
settings exactly as in ``bench_spectral.peer_aligned`` (and builds that graph with its own
``construct_W`` inside the timed call, as a user would); "rho" is the Spearman correlation
of the scores (1 = same ranking).

For MCFS a last row, "mcfs floor", times only the work no implementation of the method
can skip, with our own code for each piece: the kNN graph and its eigenvectors (the
ranker's settings), the centring of X, and the LAR's one product per step: the LAR runs
the whole path (``min(n, m - 1)`` steps, all features ranked) for each of the
``n_clusters`` eigenvectors, and every step needs the correlations of the new direction
with every feature, one ``n_clusters x m`` by ``m x n`` product (scikit-learn's ``Lars``,
the peer's solver, does the same work as one matrix-vector product per path). Its
"speed-up" is the most any such implementation could reach against the peer.

Run: ``python -m benchmarks.speed.bench_spectral_cpu [--data blobs200x5000]``.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr
from threadpoolctl import threadpool_limits

from benchmarks._common import cpu_call, cpu_seconds
from benchmarks._protocol import to_markdown
from benchmarks.speed import bench_spectral

VARIANTS = {
    "laplacian": [("laplacian", {})],
    "mcfs": [("mcfs", {}), ("mcfs lars", {"solver": "lars"})],
}


def compare(name: str, methods: list[str], repeat: int) -> list[dict]:
    """One row per (method, our variant): best CPU seconds of both sides, ratio, rho."""
    X, k = bench_spectral.datasets([name])[name]
    rows = []
    for method in methods:
        variants = VARIANTS[method]
        ours = {label: [] for label, _ in variants}
        peer = []
        fitted = {}
        for i in range(repeat + 1):  # the first round warms both sides up, untimed
            for label, params in variants:
                r = bench_spectral.ours_ranker(method, k, **params)
                seconds, fitted[label] = cpu_call(lambda r=r: r.fit(X))
                if i:
                    ours[label].append(seconds)
            ref = fitted[variants[0][0]]
            seconds, peer_scores = cpu_call(
                lambda m=method, r=ref: bench_spectral.peer_aligned(m, X, k, r)
            )
            if i:
                peer.append(seconds)
        for label, _ in variants:
            rows.append(
                {
                    "data": f"{name} {X.shape[0]}x{X.shape[1]}",
                    "method": label,
                    "ours CPU s": min(ours[label]),
                    "peer CPU s": min(peer),
                    "speed-up": min(peer) / min(ours[label]),
                    "rho": spearmanr(fitted[label].scores_, peer_scores)[0],
                }
            )
            print(pd.DataFrame(rows[-1:]).to_string(index=False), flush=True)
        if method == "mcfs":
            ref = fitted[variants[0][0]]
            steps = min(X.shape[1], X.shape[0] - 1)  # the whole path (all features ranked)
            floor = min(_mcfs_floor(X, ref, steps) for _ in range(repeat))
            rows.append(
                {
                    "data": rows[-1]["data"],
                    "method": f"mcfs floor (graph, eigenvectors, {steps} products)",
                    "ours CPU s": floor,
                    "peer CPU s": min(peer),
                    "speed-up": min(peer) / floor,
                    "rho": float("nan"),
                }
            )
            print(pd.DataFrame(rows[-1:]).to_string(index=False), flush=True)
    return rows


def _mcfs_floor(X, fitted, steps: int) -> float:
    """CPU seconds of MCFS's unavoidable work: graph, eigenvectors, ``steps`` products."""
    from sklearn.utils import check_random_state

    from rankers.unsupervised._affinity import knn_affinity, nontrivial_eigenvectors

    p = fitted.get_params()
    start = cpu_seconds()
    graph = knn_affinity(
        X, p["n_neighbors"], metric=p["metric"], weight_mode=p["weight_mode"], t=p["t"]
    )
    _, U, _, inv_sqrt = nontrivial_eigenvectors(graph.W, fitted.n_clusters_, check_random_state(0))
    Yt = np.ascontiguousarray((inv_sqrt[:, None] * U).T)  # one direction per path
    Xc = np.ascontiguousarray(X - X.mean(axis=0))  # the layout the product is fastest in
    for _ in range(steps):
        Yt @ Xc
    return cpu_seconds() - start


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="blobs200x5000", help="digits or blobsMxN")
    parser.add_argument("--methods", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--repeat", type=int, default=3, help="timed rounds (best of)")
    parser.add_argument("--out", type=Path, help="also write the table as markdown")
    args = parser.parse_args(argv)
    threadpool_limits(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = compare(args.data, args.methods, args.repeat)
    table = pd.DataFrame(rows)
    print(table.to_string(index=False))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(to_markdown(table, index=False) + "\n")


if __name__ == "__main__":
    main()
