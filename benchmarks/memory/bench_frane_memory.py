"""FRANe's peak memory on independent and correlated features, against the code before.

Issue 39 item 4: at 200 x 20,000 with correlated features FRANe must stay within 2.5 GB,
and its memory estimate (what ``check_memory`` is called with) within 1.3x of the
measured peak, on both kinds of data. Three data sets (``latent_factor_data``), each of 200
samples:

* ``independent``: every feature N(0, 1);
* ``blocks``: 30 % of the features are one of 5 latent factors (N(0, 1), one each) plus
  N(0, 1) noise (correlation ~0.5 within a block), the rest N(0, 1);
* ``mixed``: 30 % of the features are random combinations (N(0, 1) loadings) of the same
  5 latent factors plus N(0, 1) noise: all of them correlated with each other, so the
  densest graphs' RQH bounds stay above the best RQH and those graphs must be scored.

Two implementations, each cell in a child process of its own (BLAS on one thread):

* ``new``: ``rankers.unsupervised.frane`` as it is in this tree;
* ``old``: ``frane.py`` and ``_frane_graph.py`` as of ``--base`` (the tree before the
  change), loaded from ``git show`` into a temporary module.

Per cell: CPU seconds of ``fit``; the peak resident memory of the whole process
(``ru_maxrss``: the interpreter, numpy and the data included, ~250 MB) and of the fit
alone (``VmHWM`` after the fit minus ``VmRSS`` before it, the high-water mark reset by
``/proc/self/clear_refs`` just before the fit); the largest estimate the fit passed to
``check_memory`` and its ratio to the fit's measured peak; whether the two rankings are
the same.

    python -m benchmarks.memory.bench_frane_memory --out benchmarks/results/frane_memory.md
    python -m benchmarks.memory.bench_frane_memory --features 2000 --impl new     # a quick look
    python -m benchmarks.memory.bench_frane_memory --kinds mixed --cap 2.07G \\
        --out benchmarks/results/frane_refusal.md       # refused at once, or after the work

``--cap SIZE`` runs the fits under ``MOWEIGHTS_MAX_MEMORY=SIZE`` (issue 50 item 4): a cap
between the code before's first estimate and its later ones shows when each refuses.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks._common import cpu_seconds, rows_markdown_4g, run_json_child

ROOT = Path(__file__).resolve().parents[2]
#: the tree before issue 39's change of FRANe's memory
BASE = "3198998"
KINDS = ("independent", "blocks", "mixed")


def latent_factor_data(kind: str, m: int, n: int, seed: int = 0) -> np.ndarray:
    """The benchmark's data (see the module docstring)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, n))
    k = int(0.3 * n)
    latent = rng.normal(size=(m, 5))
    if kind == "blocks":
        X[:, :k] += latent[:, rng.integers(0, 5, size=k)]
    elif kind == "mixed":
        X[:, :k] += latent @ rng.normal(size=(5, k))
    elif kind != "independent":
        raise ValueError(f"unknown data kind {kind!r}; one of {', '.join(KINDS)}")
    return X


def _old_module(base: str):
    """``frane.py`` and ``_frane_graph.py`` as of ``base``, as one temporary package."""
    folder = Path(tempfile.mkdtemp())
    for name in ("frane", "_frane_graph"):
        source = subprocess.run(
            ["git", "show", f"{base}:rankers/unsupervised/{name}.py"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        source = source.replace(
            "from rankers.unsupervised._frane_graph import", "from _old_graph import"
        )
        (folder / ("_old_graph.py" if name == "_frane_graph" else "frane_old.py")).write_text(
            source
        )
    # loaded from their files, the graph first under the name frane_old imports it by
    module = None
    for name in ("_old_graph", "frane_old"):
        spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return module


def _status(key: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(key)


def run_cell(impl: str, kind: str, m: int, n: int, base: str, ranking_file: str) -> dict:
    """One measurement, in this (child) process."""
    import resource

    module = (
        _old_module(base)
        if impl == "old"
        else __import__("rankers.unsupervised.frane", fromlist=["FRANeRanker"])
    )
    estimates = []
    check = module.check_memory

    def record(n_bytes, what, options):
        estimates.append(float(n_bytes))
        return check(n_bytes, what, options)

    module.check_memory = record
    X = latent_factor_data(kind, m, n)
    module.FRANeRanker().fit(X[:, :50])  # every module loaded before the measurement
    estimates.clear()
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")  # reset VmHWM to the current resident size
    before = _status("VmRSS")
    start, wall = cpu_seconds(), time.perf_counter()
    try:
        est = module.FRANeRanker().fit(X)
    except MemoryError as exc:  # under --cap: when, and by which check, the fit was refused
        return {
            "seconds": cpu_seconds() - start,
            "wall_s": time.perf_counter() - wall,
            "refused by check": f"{len(estimates)} of the fit's checks",
            "refused_mb": getattr(exc, "needed", float("nan")) / 2**20,
            "first_estimate_mb": estimates[0] / 2**20 if estimates else float("nan"),
            "fit_peak_mb": (_status("VmHWM") - before) / 2**20,
            "process_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        }
    seconds = cpu_seconds() - start
    fit_peak = _status("VmHWM") - before
    np.save(ranking_file, est.ranking_)
    return {
        "seconds": seconds,
        "process_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "fit_peak_mb": fit_peak / 2**20,
        "estimate_mb": max(estimates) / 2**20 if estimates else float("nan"),
        "checks": len(estimates),
        "scored": int(np.isfinite(est.rqh_).sum()),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--features", type=int, default=20000)
    parser.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    parser.add_argument("--impl", nargs="+", default=["new", "old"], choices=["new", "old"])
    parser.add_argument("--base", default=BASE, help="the commit whose FRANe is 'old'")
    parser.add_argument("--budget", type=float, default=3600.0, help="seconds per cell")
    parser.add_argument("--cap", help="MOWEIGHTS_MAX_MEMORY for the fits (e.g. 2.07G): "
                        "how long each takes to be refused, and by which check")  # fmt: skip
    parser.add_argument("--out", type=Path, help="also write the results (markdown) here")
    parser.add_argument("--cell", nargs=6, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.cell:
        impl, kind, m, n, base, ranking_file = args.cell
        print(json.dumps(run_cell(impl, kind, int(m), int(n), base, ranking_file)))
        return
    if args.cap:
        from rankers.memory import MAX_MEMORY_ENV

        os.environ[MAX_MEMORY_ENV] = args.cap  # the children inherit it

    load = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    header = [
        "# FRANe's peak memory on independent and correlated features (issue 39 item 4)",
        "",
        f"Command: `python -m {__spec__.name} {' '.join(argv or sys.argv[1:])}`  ",
        f"Tree: {_head()}; old = {args.base}; python {platform.python_version()}, numpy "
        f"{np.__version__}; {platform.platform()}; {os.cpu_count()} CPUs (shared)  ",
        f"Load average before: {load}  ",
        "Each cell in a child process, BLAS on one thread; CPU seconds of fit; "
        "process_peak = ru_maxrss (interpreter, numpy and the data included); fit_peak = "
        "VmHWM after fit - VmRSS before it; estimate = the largest figure fit passed to "
        "check_memory."
        + (
            f" Memory capped at MOWEIGHTS_MAX_MEMORY={args.cap}: seconds and wall_s = CPU "
            "and wall time until the fit was refused, refused by check = how many checks "
            "the fit had made (1: the first, before anything was computed)."
            if args.cap
            else ""
        ),
        "",
    ]
    print("\n".join(header), flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.kinds:
            result = {}
            for impl in args.impl:
                ranking = str(Path(tmp) / f"{kind}_{impl}.npy")
                cell = [sys.executable, "-m", __spec__.name, "--cell", impl, kind,
                        str(args.samples), str(args.features), args.base, ranking]  # fmt: skip
                result[impl] = run_json_child(cell, args.budget)
                row = {"data": kind, "shape": f"{args.samples}x{args.features}", "impl": impl}
                row.update(result[impl])
                if "estimate_mb" in result[impl]:
                    row["estimate / fit_peak"] = (
                        result[impl]["estimate_mb"] / result[impl]["fit_peak_mb"]
                    )
                rows.append(row)
                print(json.dumps(row), flush=True)
            finished = ("seconds" in r and "refused by check" not in r for r in result.values())
            if len(result) == 2 and all(finished):
                same = np.array_equal(
                    np.load(Path(tmp) / f"{kind}_new.npy"), np.load(Path(tmp) / f"{kind}_old.npy")
                )
                for row in rows[-2:]:
                    row["same ranking"] = same
                    row["new / old peak"] = (
                        result["new"]["process_peak_mb"] / result["old"]["process_peak_mb"]
                    )
                    row["new / old cpu"] = result["new"]["seconds"] / result["old"]["seconds"]
    columns = ["data", "shape", "impl", "seconds", "wall_s", "refused by check", "refused_mb",
               "first_estimate_mb", "process_peak_mb", "fit_peak_mb",
               "estimate_mb", "estimate / fit_peak", "checks", "scored", "same ranking",
               "new / old peak", "new / old cpu", "error"]  # fmt: skip
    rows = [{k: row.get(k, "") for k in columns if any(k in r for r in rows)} for row in rows]
    load = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    text = "\n".join(header) + rows_markdown_4g(rows) + f"\n\nLoad average after: {load}\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


def _head() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True)  # fmt: skip
    return done.stdout.strip() or "?"


if __name__ == "__main__":
    main()
