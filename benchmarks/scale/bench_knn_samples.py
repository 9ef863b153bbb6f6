"""A kNN-graph ranker's neighbour search against the number of samples: exact and approximate.

Issue 47, item 4: above ``rankers.unsupervised.laplacian._EXACT_MAX_SAMPLES`` samples,
``LaplacianRanker()`` searches the kNN graph among the first 50 principal components
instead of all features (the exact search costs samples² x features). This script fits
``LaplacianRanker()`` with its defaults on ``log1p`` sparse counts of 2,000 genes
(:func:`benchmarks.scale.bench_single_cell.make_counts`: 10 cell types) from 2,000 to
32,000 cells, each fit in a child process of its own (one BLAS thread): the approximate
path with the threshold lowered below the smallest size (so every size takes it, as
10,000+ cells do), and the exact path (``--exact-max`` cells, threshold raised), and
prints each path's CPU s and the exponent ``b`` of the least-squares fit
``CPU s ~ a cells^b`` on a log-log scale.

``--ranker`` fits another kNN-graph ranker the same way (``compactness``, ``mcfs``,
``ndfs``, ``spec`` with ``affinity="knn"``; the threshold is
``rankers.neighbors.EXACT_MAX_SAMPLES``); those that take no sparse input get the same
counts dense, and ``--params`` (JSON) sets parameters beside the defaults.

    python -m benchmarks.scale.bench_knn_samples --out benchmarks/results/single_cell/knn_samples.md
    python -m benchmarks.scale.bench_knn_samples --ranker compactness \
        --out benchmarks/results/single_cell/knn_samples_compactness.md
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from benchmarks._common import ONE_BLAS_THREAD, child_env, cpu_seconds


def _child(path: str, cells: int, genes: int, ranker: str, params: dict) -> None:
    import warnings

    import rankers
    from benchmarks.scale.bench_single_cell import make_counts
    from rankers import neighbors
    from rankers.unsupervised import laplacian

    X, _ = make_counts(cells, genes)
    threshold = 1 if path == "approximate" else 10**9
    laplacian._EXACT_MAX_SAMPLES = threshold
    neighbors.EXACT_MAX_SAMPLES = threshold
    est = rankers.get(ranker, **params)
    if not est.accepts_sparse:  # densified before the clock starts
        X = X.toarray()
    start = cpu_seconds()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X)
    cpu = cpu_seconds() - start
    noted = any("principal components" in str(w.message) for w in caught)
    print(json.dumps({"path": path, "cells": cells, "cpu_s": cpu, "noted": noted,
                      "knn_components_": est.knn_components_}))  # fmt: skip


def _run(path: str, cells: int, genes: int, ranker: str, params: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", __spec__.name, "--child", path, "--cells", str(cells),
         "--genes", str(genes), "--ranker", ranker, "--params", params],
        capture_output=True, text=True, env=child_env(**ONE_BLAS_THREAD), check=False,
    )  # fmt: skip
    if done.returncode != 0:
        return {"path": path, "cells": cells, "error": done.stderr.strip().splitlines()[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def exponent(rows: list[dict]) -> float | None:
    ok = [r for r in rows if "cpu_s" in r]
    if len(ok) < 2:
        return None
    b, _ = np.polyfit(np.log([r["cells"] for r in ok]), np.log([r["cpu_s"] for r in ok]), 1)
    return float(b)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, nargs="+", default=[2000, 4000, 8000, 16000, 32000])
    parser.add_argument("--genes", type=int, default=2000)
    parser.add_argument("--exact-max", type=int, default=8000, help="largest exact size")
    parser.add_argument("--ranker", default="laplacian", help="a kNN-graph ranker's name")
    parser.add_argument("--params", default="{}", help="its parameters, a JSON object")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--from-json", type=Path, help="print the table of a run's .json")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child, args.cells[0], args.genes, args.ranker, json.loads(args.params))
        return
    if args.from_json:  # the table again from a run's .json
        rows = json.loads(args.from_json.read_text())
    else:
        rows = {"approximate": [], "exact": []}
        for cells in args.cells:
            for path in ("approximate", "exact"):
                if path == "exact" and cells > args.exact_max:
                    continue
                rows[path].append(_run(path, cells, args.genes, args.ranker, args.params))
                print(rows[path][-1], flush=True)
    lines = [
        f"# {args.ranker}'s neighbour search against the number of samples (issue 47)",
        "",
        f"`python -m benchmarks.scale.bench_knn_samples --ranker {args.ranker} --params "
        f"'{args.params}'` (one child per fit, one BLAS thread, {args.genes:,} genes, log1p "
        f"counts); CPU s of `rankers.get({args.ranker!r}, **params).fit`.",
        "",
        "| cells | approximate (50 components) CPU s | warned | exact CPU s |",
        "|---|---|---|---|",
    ]
    exact = {r["cells"]: r for r in rows["exact"]}

    def cpu(row: dict) -> str:
        return f"{row['cpu_s']:.3g}" if "cpu_s" in row else row.get("error", "-")

    for r in rows["approximate"]:
        e = exact.get(r["cells"], {})
        lines.append(f"| {r['cells']:,} | {cpu(r)} | {r.get('noted')} | {cpu(e)} |")
    b_approx = exponent(rows["approximate"]) or float("nan")
    b_exact = exponent(rows["exact"]) or float("nan")
    last = exponent([r for r in rows["approximate"] if "cpu_s" in r][-2:]) or float("nan")
    lines += ["", f"Fitted exponent (CPU s ~ cells^b): approximate b = {b_approx:.2f} "
              f"(between the two largest sizes {last:.2f}), exact b = {b_exact:.2f}. The "
              "approximate path's principal components cost cells x (stored values per "
              "cell)², its brute-force search among 50 components cells² x 50: that "
              "search's share grows with the cells, so the exponent rises towards 2 "
              "beyond these sizes.", ""]  # fmt: skip
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
        args.out.with_suffix(".json").write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
