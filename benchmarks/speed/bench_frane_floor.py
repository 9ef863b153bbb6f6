"""FRANe against its floor, the tiled correlation GEMM, on independent and correlated features.

Issue 50 (item 3) measured FRANe at 15.6x a tiled GEMM floor on correlated 200 x 20,000
data and 7.7x on independent data. Per data kind (``latent_factor_data`` of
``benchmarks/memory/bench_frane_memory.py``: ``independent``, ``blocks``, ``mixed``) and
width, three implementations run, each in a child process of its own (BLAS on one thread),
in alternating order over the repeats:

* ``new``: ``rankers.unsupervised.frane`` as it is in this tree (defaults: |r|, 100
  geometric thresholds);
* ``base``: ``frane.py`` and ``_frane_graph.py`` as of ``--base`` (the tree before the
  change), loaded from ``git show`` into a temporary package;
* ``floor``: the least any exact FRANe computes: every pair's correlation, as one GEMM per
  tile of 2^23 entries (the columns standardised first), nothing kept.

Per cell: CPU seconds of ``fit`` (of the GEMMs for the floor; the best of ``--repeat``);
the ratios new / floor, base / floor and base / new; whether new's scores equal base's to
the last bit (``max |diff|`` otherwise); and the share of new's CPU in each step
(``--profile``: cProfile in one more child, the steps by their functions).

    python -m benchmarks.speed.bench_frane_floor --out benchmarks/results/frane_floor.md
    python -m benchmarks.speed.bench_frane_floor --widths 2000 --kinds mixed   # a quick look
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from benchmarks._common import cpu_seconds, rows_markdown_4g, run_json_child
from benchmarks.memory.bench_frane_memory import latent_factor_data

ROOT = Path(__file__).resolve().parents[2]
#: the tree before issue 50's changes to FRANe
BASE = "1557e30"
KINDS = ("independent", "blocks", "mixed")
TILE = 2**23
# steps of the fit, by the functions whose cumulative time they are (--profile)
STEPS = {
    "similarities": "dissimilarities",
    "smallest/zero": "_zero_tiny",
    "filing": "__init__",
    "pagerank": "_solve_pagerank",
    "gather": "edges",
    "cut": "shrink",
    "bounds": "rqh_upper_bound",
}


def floor(X: np.ndarray) -> None:
    """Every pair's correlation, one GEMM per tile of 2^23 entries (upper triangle)."""
    Z = X - X.mean(axis=0)
    Z /= np.linalg.norm(Z, axis=0)
    n = Z.shape[1]
    block = max(1, TILE // n)
    for a in range(0, n - 1, block):
        Z[:, a : a + block].T @ Z[:, a:]


def _base_module(base: str):
    """``frane.py`` and ``_frane_graph.py`` as of ``base``, as one temporary package."""
    folder = Path(tempfile.mkdtemp())
    for name, file in (("_frane_graph", "_base_graph.py"), ("frane", "frane_base.py")):
        source = subprocess.run(
            ["git", "show", f"{base}:rankers/unsupervised/{name}.py"],
            cwd=ROOT, check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip
        source = source.replace(
            "from rankers.unsupervised._frane_graph import", "from _base_graph import"
        )
        (folder / file).write_text(source)
    module = None
    for name in ("_base_graph", "frane_base"):
        spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return module


def run_cell(impl: str, kind: str, m: int, n: int, base: str, scores_file: str) -> dict:
    """One measurement, in this (child) process."""
    X = latent_factor_data(kind, m, n)
    if impl == "floor":
        start = cpu_seconds()
        floor(X)
        return {"seconds": cpu_seconds() - start}
    if impl == "base":
        module = _base_module(base)
    else:
        from rankers.unsupervised import frane as module
    module.FRANeRanker().fit(X[:, :50])  # every module loaded before the measurement
    est = module.FRANeRanker()
    if impl == "profile":
        import cProfile
        import pstats

        profile = cProfile.Profile()
        start = cpu_seconds()
        profile.runcall(est.fit, X)
        total = cpu_seconds() - start
        stats = pstats.Stats(profile).stats
        out = {"seconds": total}
        whole = next(v[3] for k, v in stats.items() if k[2] == "_score")
        for step, function in STEPS.items():
            cum = sum(v[3] for k, v in stats.items() if k[2] == function and "frane" in k[0])
            out[step] = cum / whole
        return out
    start = cpu_seconds()
    est.fit(X)
    seconds = cpu_seconds() - start
    np.save(scores_file, est.scores_)
    return {"seconds": seconds, "scored": int(np.isfinite(est.rqh_).sum())}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--widths", type=int, nargs="+", default=[20000])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--kinds", nargs="+", default=["independent", "mixed"], choices=KINDS)
    parser.add_argument("--repeat", type=int, default=1, help="best of this many runs a cell")
    parser.add_argument("--base", default=BASE, help="the commit the base code is taken from")
    parser.add_argument("--no-base", action="store_true", help="skip the base code")
    parser.add_argument("--profile", action="store_true", help="also new's steps (cProfile)")
    parser.add_argument("--budget", type=float, default=1800.0, help="seconds per cell")
    parser.add_argument("--quick", action="store_true", help="200 x 1,000, both kinds: a smoke run")
    parser.add_argument("--out", type=Path, help="also write the table (markdown) here")
    parser.add_argument("--cell", nargs=6, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.cell:
        impl, kind, m, n, base, scores_file = args.cell
        print(json.dumps(run_cell(impl, kind, int(m), int(n), base, scores_file)))
        return
    widths = [1000] if args.quick else args.widths
    impls = ["new", "floor"] + ([] if args.no_base else ["base"])
    me = [sys.executable, "-m", __spec__.name, "--cell"]
    tmp = Path(tempfile.mkdtemp())
    rows = []
    for kind in args.kinds:
        for n in widths:
            best: dict[str, dict] = {}
            for r in range(args.repeat):
                for impl in impls if r % 2 == 0 else impls[::-1]:
                    scores = str(tmp / f"{impl}.npy")
                    cell = [*me, impl, kind, str(args.samples), str(n), args.base, scores]
                    res = run_json_child(cell, args.budget)
                    if impl not in best or res.get("seconds", np.inf) < best[impl].get(
                        "seconds", np.inf
                    ):
                        best[impl] = res
            row = {"data": kind, "shape": f"{args.samples}x{n}"}
            for impl in impls:
                row[f"{impl} s"] = float(best[impl].get("seconds", np.nan))
            row["scored"] = best["new"].get("scored", "")
            row["new / floor"] = row["new s"] / row["floor s"]
            if not args.no_base:
                row["base / floor"] = row["base s"] / row["floor s"]
                row["base / new"] = row["base s"] / row["new s"]
                a, b = np.load(tmp / "new.npy"), np.load(tmp / "base.npy")
                diff = float(np.abs(a - b).max())
                row["same scores"] = (
                    "bit for bit" if np.array_equal(a, b) else f"max |diff| {diff:.2g}"
                )
            if args.profile:
                prof = run_json_child([*me, "profile", kind, str(args.samples), str(n),
                                       args.base, "-"], args.budget)  # fmt: skip
                for step in STEPS:
                    row[f"{step} %"] = 100.0 * float(prof.get(step, np.nan))
            notes = [f"{i}: {best[i]['error']}" for i in impls if "error" in best[i]]
            row["notes"] = "; ".join(notes)
            rows.append(row)
            print(json.dumps(row, default=float), flush=True)
    table = rows_markdown_4g(rows)
    tree = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    command = f"python -m {__spec__.name} " + " ".join(sys.argv[1:] if argv is None else argv)
    text = (
        "# FRANe against the tiled GEMM floor (issue 50 item 3)\n\n"
        f"Command: `{command.strip()}`  \n"
        f"Tree: {tree} (plus uncommitted edits, if any); base = {args.base}; python "
        f"{platform.python_version()}, numpy {np.__version__}; {platform.platform()}  \n"
        "CPU seconds of fit (floor: of the GEMMs), each cell in a child process, BLAS on one "
        f"thread, best of {args.repeat}; step shares (%) from cProfile's cumulative times.\n\n"
        f"{table}\n"
    )
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
