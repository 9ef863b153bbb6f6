"""Sparse filters against scanpy on single-cell sizes: CPU s and extra memory, side by side.

Issue 47, item 3: ``t_test``, ``anova_f``, ``fisher_score`` and ``variance`` on sparse CSR
counts of 10^5 and 10^6 cells x 2,000 genes (about 5 % stored, ``log1p`` of Poisson
counts, 10 cell types with marker genes) against scanpy:

* the class tests against ``sc.tl.rank_genes_groups(adata, "type", method="t-test")``
  (every type against the rest, Welch's t; our ``t_test`` does the same tests, the
  ANOVA F and Fisher score one test of all types), and so are the markers
  (``moweights.scverse.find_markers(X, types, rankers="t_test")``: every type against the
  rest with fold changes, p, q and fractions in and out, from one multiclass t_test fit);
* ``variance`` against ``sc.pp.highly_variable_genes(adata)`` (flavor "seurat": per-gene
  means and variances, then dispersions) and against the plain per-gene variance of
  scikit-learn's ``mean_variance_axis`` (C code over CSR);
* a one-pass floor: per-class sums and sums of squares of every gene, read once from the
  stored values, three ways (an indicator matrix times ``X`` and ``X.power(2)``; a
  weighted ``bincount`` of class-and-gene codes; ``np.add.at`` of the same), and for the
  variance per-gene sums and sums of squares (``bincount`` over the column indices). The
  fastest of them is the floor.

Every call runs in a fresh child process (one BLAS, OpenMP and numba thread), ours and
scanpy's alternating, ``--repeats`` times each: the first call in the process (scanpy's
numba kernels compile or load from their cache there) and then a repeated call. CPU s is
the process's CPU time of the call; extra MB is the peak resident memory during the call
(``VmHWM``, reset just before it through ``/proc/self/clear_refs``) less the resident
memory before it, so the data (loaded before, ~1.2 GB at 10^6 cells) is not counted.
A third call in the same process gives the peak of the arrays it allocates
(``tracemalloc``; unlike the resident figures of a repeated call it does not depend on
what the allocator kept from the first). Ratios are scanpy's CPU s over ours (above 1:
ours faster) and our extra MB over scanpy's.
The counts are generated once per size into ``--cache`` and loaded by each child.

Needs scanpy beside moweights: a venv of its own (scanpy pins clash with the main one)::

    python3 -m venv /work/venv-scanpy && /work/venv-scanpy/bin/pip install scanpy
    /work/venv-scanpy/bin/pip install -e . --no-deps   # plus moweights' own needs
    nice -n 10 /work/venv-scanpy/bin/python -m benchmarks.scale.bench_sparse_scanpy \\
        --out benchmarks/results/single_cell/sparse_scanpy.md
    /work/venv-scanpy/bin/python -m benchmarks.scale.bench_sparse_scanpy --agreement \\
        --out benchmarks/results/single_cell/two_group_vs_scanpy.json

``--agreement``: our two-class ``t_test``'s ``statistic_``, ``log_fold_change_`` and
p-values against scanpy's on the same ``log1p`` counts.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks._common import ONE_BLAS_THREAD, child_env

GENES = 2_000
DENSITY = 0.05
TYPES = 10

#: each task: (its name, the side that runs it, what it is compared with)
OURS_CLASS = ("t_test", "anova_f", "fisher_score")
TASKS = {
    "t_test": "ours",
    "anova_f": "ours",
    "fisher_score": "ours",
    "variance": "ours",
    "markers": "ours",
    "rank_genes_groups": "scanpy",
    "highly_variable_genes": "scanpy",
    "mean_variance_axis": "sklearn",
    "floor_classes": "floor",
    "floor_genes": "floor",
}


def make_counts(cells: int, genes: int = GENES, seed: int = 0):
    """CSR ``log1p`` counts (about ``DENSITY`` stored, sorted unique indices per row) and
    the cells' types: each row draws ``DENSITY * genes`` genes (duplicates dropped), with
    Poisson counts whose rates are higher on its type's marker genes."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    types = rng.integers(0, TYPES, size=cells)
    marker_of = rng.integers(0, TYPES, size=genes)
    marked = rng.random(genes) < 0.1
    per_row = round(DENSITY * genes)
    data, indices, lengths = [], [], []
    for s in range(0, cells, 50_000):
        t = types[s : s + 50_000]
        cols = np.sort(rng.integers(0, genes, size=(t.size, per_row)), axis=1).astype(np.int32)
        keep = np.ones(cols.shape, dtype=bool)
        keep[:, 1:] = cols[:, 1:] != cols[:, :-1]
        rate = np.where(marked[cols] & (marker_of[cols] == t[:, None]), 4.0, 0.6)
        counts = rng.poisson(rate) + 1.0  # stored values are nonzero counts
        data.append(np.log1p(counts[keep]))
        indices.append(cols[keep])
        lengths.append(keep.sum(axis=1))
    indptr = np.concatenate([[0], np.cumsum(np.concatenate(lengths))]).astype(np.int64)
    X = sp.csr_matrix((np.concatenate(data), np.concatenate(indices), indptr), shape=(cells, genes))
    X.has_sorted_indices = True
    return X, types


def _cached(cells: int, cache: Path):
    """The counts of ``cells`` cells from ``cache`` (generated there the first time)."""
    import scipy.sparse as sp

    folder = cache / f"cells_{cells}"
    if not (folder / "types.npy").exists():
        X, types = make_counts(cells)
        folder.mkdir(parents=True, exist_ok=True)
        for part in ("data", "indices", "indptr"):
            np.save(folder / f"{part}.npy", getattr(X, part))
        np.save(folder / "types.npy", types)
    parts = [np.load(folder / f"{p}.npy") for p in ("data", "indices", "indptr")]
    X = sp.csr_matrix(tuple(parts), shape=(cells, GENES))
    X.has_sorted_indices = True
    return X, np.load(folder / "types.npy")


def _rss_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024.0
    raise RuntimeError(f"no {field} in /proc/self/status")


def _measured(fn) -> tuple[float, float]:
    """CPU s of ``fn()`` and its extra peak resident MB (the peak reset before it)."""
    import gc

    gc.collect()
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS
    before = _rss_mb("VmRSS")
    start = time.process_time()
    result = fn()
    cpu = time.process_time() - start
    extra = _rss_mb("VmHWM") - before
    del result
    return cpu, extra


def _traced(fn) -> float:
    """The peak MB of the arrays ``fn()`` allocates beyond those alive before it
    (``tracemalloc``: numpy's and scipy's buffers, whatever the allocator keeps; a third
    call, as its tracing slows the CPU figures)."""
    import gc
    import tracemalloc

    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    result = fn()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    del result
    return peak / 2**20


def _call(task: str, X, types):
    """The call of ``task`` on ``X`` (built before, so its setup is not timed)."""
    if task in OURS_CLASS or task == "variance":
        import warnings

        import rankers

        est = rankers.get(task)
        y = None if task == "variance" else types

        def run():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return est.fit(X, y)

        return run
    if task == "markers":
        import warnings

        import rankers
        from moweights.scverse import find_markers

        # the member's module imported here, as the rankers' tasks above import theirs
        # (rankers.get) and scanpy's tasks at `import scanpy`: a session pays it once
        rankers.get_class("t_test")

        def markers():
            # the call closest to rank_genes_groups(method="t-test"): every type against
            # the rest, Welch's t, fold changes, p and q, fractions; t_test the one member
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return find_markers(X, types, rankers="t_test", test="t-test")

        return markers
    if task in ("rank_genes_groups", "highly_variable_genes"):
        import anndata as ad
        import pandas as pd
        import scanpy as sc

        obs = pd.DataFrame({"type": pd.Categorical(types.astype(str))})
        obs.index = obs.index.astype(str)
        adata = ad.AnnData(X=X, obs=obs)
        adata.uns["log1p"] = {"base": None}
        if task == "rank_genes_groups":
            return lambda: sc.tl.rank_genes_groups(adata, "type", method="t-test")
        return lambda: sc.pp.highly_variable_genes(adata, inplace=False)
    if task == "mean_variance_axis":
        from sklearn.utils.sparsefuncs import mean_variance_axis

        return lambda: mean_variance_axis(X, axis=0)
    if task == "floor_genes":
        n = X.shape[1]

        def genes():
            return (np.bincount(X.indices, weights=X.data, minlength=n),
                    np.bincount(X.indices, weights=X.data * X.data, minlength=n))  # fmt: skip

        return genes
    raise ValueError(task)


def _floor_classes(X, types) -> dict:
    """The three one-pass ways to every class's sums and sums of squares, each timed."""
    import scipy.sparse as sp

    m, n = X.shape
    C = int(types.max()) + 1

    def indicator():
        G = sp.csr_matrix((np.ones(m), (types, np.arange(m))), shape=(C, m))
        return (G @ X).toarray(), (G @ X.power(2)).toarray()

    def codes():
        key = np.repeat(types.astype(np.int64) * n, np.diff(X.indptr))
        key += X.indices
        return (np.bincount(key, weights=X.data, minlength=C * n),
                np.bincount(key, weights=X.data * X.data, minlength=C * n))  # fmt: skip

    def add_at():
        key = np.repeat(types.astype(np.int64) * n, np.diff(X.indptr))
        key += X.indices
        s1, s2 = np.zeros(C * n), np.zeros(C * n)
        np.add.at(s1, key, X.data)
        np.add.at(s2, key, X.data * X.data)
        return s1, s2

    out = {}
    for name, fn in (("indicator_product", indicator), ("bincount_codes", codes),
                     ("add_at_codes", add_at)):  # fmt: skip
        out[name] = _measured(fn)
    return out


def _child(task: str, cells: int, cache: Path) -> None:
    X, types = _cached(cells, cache)
    if task == "floor_classes":
        ways = _floor_classes(X, types)
        best = min(ways, key=lambda k: ways[k][0])
        ways_out = {k: {"cpu_s": v[0], "mb": v[1]} for k, v in ways.items()}
        print(json.dumps({"task": task, "first_cpu_s": ways[best][0], "first_mb": ways[best][1],
                          "repeat_cpu_s": None, "repeat_mb": None, "traced_mb": None,
                          "best": best, "ways": ways_out}))  # fmt: skip
        return
    fn = _call(task, X, types)
    first = _measured(fn)
    again = _measured(fn)
    traced = _traced(fn)
    density = X.nnz / (X.shape[0] * X.shape[1])
    print(json.dumps({"task": task, "first_cpu_s": first[0], "first_mb": first[1],
                      "repeat_cpu_s": again[0], "repeat_mb": again[1], "traced_mb": traced,
                      "nnz": int(X.nnz), "density": density}))  # fmt: skip


def _run(task: str, cells: int, cache: Path) -> dict:
    env = child_env(**ONE_BLAS_THREAD, NUMBA_NUM_THREADS="1")
    done = subprocess.run(
        [sys.executable, "-m", __spec__.name, "--child", task, "--cells", str(cells),
         "--cache", str(cache)],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        return {"task": task, "error": (done.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _median(rows: list[dict], key: str) -> float | None:
    values = [r[key] for r in rows if r.get(key) is not None]
    return float(np.median(values)) if values else None


def bench(cells: int, repeats: int, cache: Path, tasks: list[str]) -> dict[str, dict]:
    """Every task ``repeats`` times, in alternating order (ours, then the reference; then
    the reverse), one child each; the medians per task."""
    _cached(cells, cache)  # generate once, outside the children's timings
    runs: dict[str, list[dict]] = {t: [] for t in tasks}
    for r in range(repeats):
        order = tasks if r % 2 == 0 else tasks[::-1]
        for task in order:
            row = _run(task, cells, cache)
            print(f"  {cells} cells, {task}: {row}", flush=True)
            runs[task].append(row)
    out = {}
    for task, rows in runs.items():
        ok = [r for r in rows if "error" not in r]
        keys = ("first_cpu_s", "first_mb", "repeat_cpu_s", "repeat_mb", "traced_mb")
        out[task] = {k: _median(ok, k) for k in keys}
        out[task]["runs"] = len(ok)
        if len(ok) < len(rows):
            out[task]["error"] = next(r["error"] for r in rows if "error" in r)
        if ok and "best" in ok[0]:
            out[task]["best"] = ok[0]["best"]
            out[task]["ways"] = {
                w: _median([r["ways"][w] for r in ok], "cpu_s") for w in ok[0]["ways"]
            }
    return out


def _ratio(a, b) -> str:
    return "-" if a is None or b is None or b == 0 else f"{a / b:.2f}"


def report(results: dict[int, dict], repeats: int) -> str:
    lines = [
        "# Sparse filters against scanpy (issue 47)",
        "",
        f"`python -m benchmarks.scale.bench_sparse_scanpy` (median of {repeats} fresh child "
        f"processes per call, alternating; one BLAS/OpenMP/numba thread); {platform.machine()}, "
        f"Python {platform.python_version()}, numpy {np.__version__}, {_versions()}.",
        "",
        "speed = reference CPU s / ours (above 1: ours faster); memory = our extra MB / "
        "the reference's (below 1: ours smaller); floor = the fastest one-pass computation of "
        "the same sums (per-class for the class tests, per-gene for the variance).",
        "",
    ]
    for cells, res in results.items():
        lines += [f"## {cells:,} cells x {GENES:,} genes", "",
                  "| call | first CPU s | repeated CPU s | first extra MB | repeated extra MB "
                  "| traced MB |", "|---|---|---|---|---|---|"]  # fmt: skip
        for task, row in res.items():
            if "error" in row and not row["runs"]:
                lines.append(f"| {task} | error: {row['error']} | | | | |")
                continue
            keys = ("first_cpu_s", "repeat_cpu_s", "first_mb", "repeat_mb", "traced_mb")
            cells_ = [_fmt(row.get(k)) for k in keys]
            name = task + (f" (best: {row['best']})" if "best" in row else "")
            lines.append(f"| {name} | " + " | ".join(cells_) + " |")
        if "ways" in res.get("floor_classes", {}):
            ways = ", ".join(f"{w} {v:.3f} s" for w, v in res["floor_classes"]["ways"].items())
            lines += ["", f"One-pass ways to per-class sums and squares: {ways}."]
        lines += ["", "| ours | against | speed first | speed repeated | memory first | "
                  "memory traced | ours / floor (first) |",
                  "|---|---|---|---|---|---|---|"]  # fmt: skip
        pairs = [(t, "rank_genes_groups", "floor_classes") for t in (*OURS_CLASS, "markers")]
        pairs += [("variance", "highly_variable_genes", "floor_genes"),
                  ("variance", "mean_variance_axis", "floor_genes")]  # fmt: skip
        for ours, ref, floor in pairs:
            if ours not in res or ref not in res:
                continue
            a, b, f = res[ours], res[ref], res.get(floor, {})
            lines.append(
                f"| {ours} | {ref} | {_ratio(b['first_cpu_s'], a['first_cpu_s'])} | "
                f"{_ratio(b['repeat_cpu_s'], a['repeat_cpu_s'])} | "
                f"{_ratio(a['first_mb'], b['first_mb'])} | "
                f"{_ratio(a['traced_mb'], b['traced_mb'])} | "
                f"{_ratio(a['first_cpu_s'], f.get('first_cpu_s'))} |"
            )
        lines.append("")
    return "\n".join(lines)


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.3f}" if v < 10 else f"{v:.1f}"


def _versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for pkg in ("scipy", "scanpy", "anndata", "numba", "scikit-learn"):
        try:
            out.append(f"{pkg} {version(pkg)}")
        except PackageNotFoundError:
            out.append(f"{pkg} absent")
    return ", ".join(out)


def agreement(cells: int = 400, genes: int = 50, seed: int = 0) -> dict:
    """Our two-class ``t_test`` against ``rank_genes_groups(groups=["b"], reference="a",
    method="t-test")`` on ``log1p`` counts: the largest relative difference of Welch's t
    (``statistic_``) and the p-values, and the largest absolute difference of the log fold
    change (scanpy stores its results as float32: about 1e-7 relative)."""
    import warnings

    import anndata as ad
    import pandas as pd
    import scanpy as sc
    import scipy.sparse as sp

    import rankers

    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, cells)
    counts = rng.poisson(0.5, (cells, genes)).astype(float)
    counts[:, :5] += rng.poisson(3, (cells, 5)) * (y[:, None] == 1)
    X = sp.csr_matrix(np.log1p(counts))
    labels = np.where(y == 1, "b", "a")
    obs = pd.DataFrame({"g": pd.Categorical(labels)}, index=[str(i) for i in range(cells)])
    adata = ad.AnnData(X=X, obs=obs)
    adata.uns["log1p"] = {"base": None}
    sc.tl.rank_genes_groups(adata, "g", groups=["b"], reference="a", method="t-test",
                            n_genes=genes)  # fmt: skip
    res = adata.uns["rank_genes_groups"]
    where = np.array([adata.var_names.get_loc(v) for v in res["names"]["b"]])
    t, lfc, p = (np.asarray(res[k]["b"], dtype=np.float64)
                 for k in ("scores", "logfoldchanges", "pvals"))  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = rankers.get("t_test").fit(X, labels)
    return {
        "cells": cells, "genes": genes,
        "t_max_rel_diff": float(np.max(np.abs(est.statistic_[where] - t) / np.abs(t))),
        "logfc_max_abs_diff": float(np.max(np.abs(est.log_fold_change_[where] - lfc))),
        "logfc_max_abs": float(np.abs(lfc).max()),
        "p_max_rel_diff": float(np.max(np.abs(est.pvalues_[where] - p) / np.maximum(p, 1e-300))),
    }  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS))
    parser.add_argument("--cache", type=Path, default=Path("/tmp/bench_sparse_scanpy"))
    parser.add_argument("--out", type=Path, help="write the Markdown table and a .json beside it")
    parser.add_argument("--from-json", type=Path, help="print the tables of a run's .json")
    parser.add_argument("--agreement", action="store_true",
                        help="two-class t and fold change against scanpy")  # fmt: skip
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child, args.cells[0], args.cache)
        return
    if args.agreement:
        out = agreement()
        print(json.dumps(out, indent=1))
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(out, indent=1) + "\n")
        return
    if args.from_json:  # the tables again from a run's .json
        results = {int(k): v for k, v in json.loads(args.from_json.read_text()).items()}
    else:
        results = {}
        for cells in args.cells:
            results[cells] = bench(cells, args.repeats, args.cache, args.tasks)
    text = report(results, max(r["runs"] for res in results.values() for r in res.values()))
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
        args.out.with_suffix(".json").write_text(json.dumps(
            {str(k): v for k, v in results.items()}, indent=1) + "\n")  # fmt: skip


if __name__ == "__main__":
    main()
