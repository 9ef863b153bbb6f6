"""A path to single-cell sizes: five rankers on a sparse count matrix of many cells.

Issue 39, item 6: ``laplacian``, ``spec``, ``variance``, ``t_test`` and ``anova_f`` on a
100,000 x 2,000 sparse count matrix within 4 GB and 5 CPU minutes each. The filters read
the CSR matrix's stored values (no dense copy); the kNN-graph rankers find their
neighbours among the cells' first 50 principal components (``knn_components=50``: the exact
search over 2,000 genes would cost ``cells² x genes``) and compute the edge weights and the
scores on all genes, one block of columns made dense at a time.

Two parts:

* ``--agreement``: on ``--agreement-cells`` cells (default 5,000), the graph of the first
  50 components against the exact one: the share of each cell's exact neighbours the
  approximate graph keeps, the share of each graph's neighbours of the cell's own type,
  and the Spearman correlation and top-100 overlap of the Laplacian and SPEC scores
  computed on each graph.
* the scale run: each ranker in a child process of its own, on the same synthetic counts
  (``--cells`` x ``--genes``, seed 0), its CPU seconds and the child's peak resident
  memory (``ru_maxrss``, the data's generation included).

The data: cells of ``--types`` types, Poisson counts whose rates are low (mostly zeros,
about 10 % stored) and higher on each type's marker genes; ``log1p`` of the counts, as
single-cell pipelines rank them.

    python -m benchmarks.scale.bench_single_cell --agreement
    python -m benchmarks.scale.bench_single_cell --cells 100000 --genes 2000
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys

import numpy as np
import scipy.sparse as sp

from benchmarks._common import child_env, cpu_seconds

RANKERS = {
    "variance": {},
    "t_test": {},
    "anova_f": {},
    "laplacian": {"knn_components": 50},
    "spec": {"affinity": "knn", "knn_components": 50},
}


def make_counts(cells: int, genes: int, types: int = 10, seed: int = 0):
    """log1p of sparse Poisson counts with marker genes per cell type, and the types."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, types, size=cells)
    base = rng.gamma(0.5, 0.2, size=genes)  # most genes rarely seen
    markers = rng.integers(0, types, size=genes)
    marked = rng.random(genes) < 0.1
    parts = []
    for s in range(0, cells, 10_000):
        lab = labels[s : s + 10_000]
        rate = np.broadcast_to(base, (lab.size, genes)).copy()
        boost = marked[None, :] & (markers[None, :] == lab[:, None])
        rate[boost] *= 8.0
        parts.append(sp.csr_matrix(np.log1p(rng.poisson(rate))))
    return sp.vstack(parts).tocsr(), labels


def _child(name: str, cells: int, genes: int) -> None:
    import warnings

    import rankers

    X, labels = make_counts(cells, genes)
    y = labels if name in ("anova_f", "t_test") else None
    start = cpu_seconds()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = rankers.get(name, **RANKERS[name]).fit(X, y)
    cpu = cpu_seconds() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # GB (Linux: KB)
    top = [int(i) for i in est.ranking_[:5]]
    print(json.dumps({"ranker": name, "cpu_s": cpu, "peak_gb": peak, "top": top,
                      "density": X.nnz / (cells * genes)}))  # fmt: skip


def scale_run(cells: int, genes: int, names: list[str]) -> list[dict]:
    rows = []
    env = child_env(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    for name in names:
        out = subprocess.run(
            [sys.executable, "-m", __spec__.name, "--child", name, "--cells", str(cells),
             "--genes", str(genes)],
            capture_output=True, text=True, env=env, check=False,
        )  # fmt: skip
        if out.returncode != 0:
            rows.append({"ranker": name, "error": out.stderr.strip().splitlines()[-1]})
        else:
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(rows[-1], flush=True)
    return rows


def agreement(cells: int, genes: int, components: int = 50, k: int = 5) -> dict:
    from scipy.stats import spearmanr

    import rankers
    from rankers.neighbors import nearest_neighbors, search_space

    X, types = make_counts(cells, genes, seed=1)
    exact = nearest_neighbors(X.toarray(), k, return_distance=False)
    approx = nearest_neighbors(search_space(X, components), k, return_distance=False)
    shared = np.mean([len(set(a) & set(b)) / k for a, b in zip(exact, approx, strict=True)])
    # the share of each cell's neighbours of its own type: what a graph should capture
    purity = {name: float((types[g] == types[:, None]).mean())
              for name, g in (("exact", exact), ("approximate", approx))}  # fmt: skip
    out = {"cells": cells, "genes": genes, "components": components, "k": k,
           "shared_neighbours": float(shared), "same_type_exact": purity["exact"],
           "same_type_approximate": purity["approximate"]}  # fmt: skip
    for name, params in (("laplacian", {}), ("spec", {"affinity": "knn"})):
        a = rankers.get(name, **params).fit(X)
        b = rankers.get(name, **params, knn_components=components).fit(X)
        out[f"{name}_spearman"] = float(spearmanr(a.scores_, b.scores_).statistic)
        out[f"{name}_top100_overlap"] = len(set(a.ranking_[:100]) & set(b.ranking_[:100])) / 100
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=100_000)
    parser.add_argument("--genes", type=int, default=2_000)
    parser.add_argument("--rankers", nargs="+", default=list(RANKERS), choices=list(RANKERS))
    parser.add_argument("--agreement", action="store_true", help="the graph agreement part")
    parser.add_argument("--agreement-cells", type=int, default=5_000)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child, args.cells, args.genes)
        return
    if args.agreement:
        print(json.dumps(agreement(args.agreement_cells, args.genes), indent=1))
        return
    scale_run(args.cells, args.genes, args.rankers)


if __name__ == "__main__":
    main()
