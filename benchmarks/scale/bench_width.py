"""Every registered ranker on wide data: CPU time and memory against features and samples.

Issue 17's rule: no ranker above features^1.2 in time or memory unless the method itself
requires it (then its docstring says so and what bounds it). For every ranker of
``rankers.available()`` (defaults as a user gets them, ``n_jobs=1``, ``random_state=0``;
supervised ones get the two-class target of ``make_planted("shift")``, RReliefF that
class plus Gaussian noise as a numeric target) the script fits two series of shapes:

* features: 200 samples x 500, 1,000, 2,000, 5,000 features, extended to 10,000 and
  20,000 while the projected time stays small (the fast rankers);
* samples: 100, 200, 400, 800 samples x 1,000 features.

Each cell runs in its own child process (forked from the benchmark after it imported every
ranker, so a cell starts in milliseconds), BLAS on one thread. Time is the CPU seconds of
``fit`` (``getrusage`` user + system; fits under half a second are repeated and the median
kept), memory the child's peak resident set (``ru_maxrss``) minus its resident set after
the imports (the idle interpreter with numpy, scipy, scikit-learn and ``rankers``:
what remains is the data plus everything the fit allocates, BLAS included). A cell over
``--timeout`` CPU seconds (``RLIMIT_CPU``; six times that in wall seconds) is killed and
the series stops there; a width whose time, projected from the two widths before it,
exceeds ``--cap`` CPU seconds is skipped.

Exponents are least-squares slopes on log-log over the completed cells of a series
(time and memory against features at 200 samples, against samples at 1,000 features).
Times under ~10 ms and memory that is mostly the input make flat (< 1) slopes; the
slopes that matter are those of the rankers whose larger cells take seconds.

Examples::

    python -m benchmarks.scale.bench_width --quick
    python -m benchmarks.scale.bench_width --out benchmarks/results/width/bench_width.md
    python -m benchmarks.scale.bench_width --rankers frane laplacian --cap 20
    python -m benchmarks.scale.bench_width --resume width.log > width2.log   # reuse its cells
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np

from benchmarks._common import cpu_seconds, print_table, rows_markdown

ROOT = Path(__file__).resolve().parents[2]
FEATURES = (500, 1000, 2000, 5000)
EXTRA_FEATURES = (10000, 20000)
SAMPLES = (100, 200, 400, 800)
FEATURE_ROWS, SAMPLE_COLUMNS = 200, 1000
QUICK = {"features": (100, 200, 400), "extra": (), "samples": (50, 100, 200), "rows": 60,
         "columns": 100}  # fmt: skip
# the slowest fits run last, so a spent --budget costs their wide cells, not whole rankers
SLOW_LAST = ("random_forest", "estimator_importance", "ndfs", "genie3", "rf_score",
             "mo_weighting", "agnos_s")  # fmt: skip
LIMIT_BYTES = 6 * 2**30  # address-space limit of a cell: the laptop


def _rss_mb() -> float:
    """Current resident set of this process (Linux /proc)."""
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def data(m: int, n: int, seed: int = 0):
    """``make_planted("shift")``: 5% of the features shifted by a two-class label."""
    from moweights.data import make_planted

    planted = make_planted("shift", n_samples=m, n_features=n, random_state=seed)
    return planted.X.to_numpy(float), planted.y.to_numpy()


def run_cell(name: str, m: int, n: int) -> dict:
    """One fit in this (forked child) process: CPU seconds, peak and idle resident MB."""
    import rankers

    row = rankers.available().set_index("name").loc[name]
    idle = _rss_mb()
    X, y = data(m, n)
    if row["target_kind"] == "regression":
        y = y + np.random.default_rng(1).normal(size=m)
    elif not row["requires_y"]:
        y = None
    params = {k: v for k, v in (("n_jobs", 1), ("random_state", 0)) if k in row["params"]}
    times = []
    while not times or (sum(times) < 0.3 and len(times) < 15):
        est = rankers.get(name, **params)
        start = cpu_seconds()
        est.fit(X, y)
        times.append(cpu_seconds() - start)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": float(np.median(times)), "peak_mb": peak, "idle_mb": idle,
            "fits": len(times)}  # fmt: skip


def _cell_main(conn, name: str, m: int, n: int, cpu_limit: float) -> None:
    with open("/proc/self/statm") as fh:
        virtual = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    # address space: what the imports mapped plus the laptop
    resource.setrlimit(resource.RLIMIT_AS, (virtual + LIMIT_BYTES, virtual + LIMIT_BYTES))
    # the machine is shared: the cell's limit is CPU time (SIGXCPU), not wall time
    spent = resource.getrusage(resource.RUSAGE_SELF)
    limit = int(spent.ru_utime + spent.ru_stime + cpu_limit) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 5))
    try:
        conn.send(run_cell(name, m, n))
    except BaseException as exc:  # reported as the cell's result
        conn.send({"error": f"{type(exc).__name__}: {str(exc)[:90]}"})


def child(name: str, m: int, n: int, timeout: float) -> dict:
    """Run one cell in a forked child (the imports are the parent's, done once); an
    ``error`` entry when it fails or uses over ``timeout`` CPU seconds (or six times
    that in wall seconds)."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_cell_main, args=(send, name, m, n, timeout))
    process.start()
    send.close()
    result = {"error": f"over {6 * timeout:.0f} wall s"}
    if receive.poll(6 * timeout):
        try:
            result = receive.recv()
        except EOFError:
            process.join(5)
            code = process.exitcode
            over = code == -signal.SIGXCPU
            result = {"error": f"over {timeout:.0f} CPU s" if over else f"died ({code})"}
    process.kill()
    process.join()
    return result


def slope(x, v) -> float:
    """Least-squares slope of log(v) against log(x); NaN with fewer than 2 points."""
    x, v = np.asarray(x, float), np.asarray(v, float)
    if x.size < 2:
        return float("nan")
    return float(np.polyfit(np.log(x), np.log(np.maximum(v, 1e-4)), 1)[0])


def series(name, shapes, timeout, cap, log, spent) -> list[tuple[int, int, dict]]:
    """Cells of one series in order; stops at a failure, skips projected overruns."""
    done = []
    for m, n in shapes:
        if spent["left"] <= 0 and not spent["resume"].get(f"{name} {m}x{n}"):
            log(f"{name} {m}x{n}: benchmark budget spent, skipped")
            break
        if len(done) >= 2:
            (m0, n0, a), (m1, n1, b) = done[-2], done[-1]
            x0, x1, x2 = (n0, n1, n) if n1 != n0 else (m0, m1, m)
            k = max(1.0, np.log(max(b["seconds"], 1e-3) / max(a["seconds"], 1e-3))
                    / np.log(x1 / x0))  # fmt: skip
            projected = b["seconds"] * (x2 / x1) ** k
            if projected > cap:
                log(f"{name} {m}x{n}: projected {projected:.0f} s > cap, skipped")
                break
        queue = spent["resume"].get(f"{name} {m}x{n}")
        cell = queue.pop(0) if queue else None
        if cell is None:
            start = time.monotonic()
            cell = child(name, m, n, timeout)
            spent["left"] -= time.monotonic() - start
        log(f"{name} {m}x{n}: {json.dumps(cell)}")
        if "error" in cell:
            done.append((m, n, cell))
            break
        done.append((m, n, cell))
    return done


def read_log(path: Path | None) -> dict:
    """Cells a previous run printed (``name MxN: {json}`` lines, in order: a shape in
    both series is listed twice), to resume from."""
    cells = {}
    for line in path.read_text().splitlines() if path else []:
        found = re.match(r"(\S+ \d+x\d+): (\{.*\})$", line)
        if found:
            cells.setdefault(found.group(1), []).append(json.loads(found.group(2)))
    return cells


def reach(done, axis: int, time_slope: float, mem_slope: float, seconds=60.0, mb=4096.0) -> str:
    """The size along ``axis`` a fit reaches within ``seconds`` CPU and ``mb`` memory,
    extrapolated from the largest completed cell with exponents of at least 1 (flat
    slopes are fixed overhead); at most ten times the largest measured (then ">")."""
    ok = [(mn, c) for *mn, c in done if "error" not in c]
    if not ok:
        return "-"
    mn, c = max(ok, key=lambda item: item[0][axis])
    x = mn[axis]
    a = max(time_slope, 1.0) if np.isfinite(time_slope) else 2.0
    b = max(mem_slope, 1.0) if np.isfinite(mem_slope) else 2.0
    used = max(c["peak_mb"] - c["idle_mb"], 1.0)
    size = x * min((seconds / max(c["seconds"], 1e-3)) ** (1 / a), (mb / used) ** (1 / b))
    failed = [mn2[axis] for *mn2, c2 in done if "error" in c2]
    if failed:
        size = min(size, failed[0])
    if size > 10 * x:
        return f">{10 * x:,}"
    return f"~{float(f'{size:.2g}'):,.0f}"


def bench(names, sizes, timeout, cap, budget, resume=None) -> tuple[list[dict], list[dict]]:
    def log(text):
        print(text, flush=True)

    spent = {"left": budget, "resume": read_log(resume)}
    cells, summary = [], []
    for name in names:
        feat = series(name, [(sizes["rows"], n) for n in sizes["features"] + sizes["extra"]],
                      timeout, cap, log, spent)  # fmt: skip
        samp = series(name, [(m, sizes["columns"]) for m in sizes["samples"]],
                      timeout, cap, log, spent)  # fmt: skip
        fits = {}
        for label, done, axis in (("features", feat, 1), ("samples", samp, 0)):
            ok = [(mn, c) for *mn, c in done if "error" not in c]
            x = [mn[axis] for mn, _ in ok]
            fits[f"time~{label}"] = slope(x, [c["seconds"] for _, c in ok])
            fits[f"mem~{label}"] = slope(x, [c["peak_mb"] - c["idle_mb"] for _, c in ok])
            for m, n, c in done:
                cells.append({"ranker": name, "series": label, "shape": f"{m}x{n}",
                              "cpu_s": c.get("seconds", np.nan),
                              "mem_MB": c.get("peak_mb", np.nan) - c.get("idle_mb", np.nan),
                              "peak_RSS_MB": c.get("peak_mb", np.nan),
                              "notes": c.get("error", "")})  # fmt: skip
        widest = max((n for _, n, c in feat if "error" not in c), default=0)
        last = next((c for _, n, c in feat if n == widest), {})
        failed = [f"{m}x{n}: {c['error']}" for m, n, c in feat + samp if "error" in c]
        laptop = {
            f"features@{sizes['rows']}_1min_4GB": reach(
                feat, 1, fits["time~features"], fits["mem~features"]),
            f"rows@{sizes['columns']}_1min_4GB": reach(
                samp, 0, fits["time~samples"], fits["mem~samples"]),
        }  # fmt: skip
        summary.append({"ranker": name, **fits,
                        "widest": f"{sizes['rows']}x{widest}",
                        "widest_cpu_s": last.get("seconds", np.nan),
                        "widest_mem_MB": last.get("peak_mb", np.nan) - last.get("idle_mb", np.nan),
                        "over_1.2": "yes" if max(fits["time~features"], fits["mem~features"]) > 1.2
                        else "", **laptop, "notes": "; ".join(failed)})  # fmt: skip
    return summary, cells


def header(command: str) -> str:
    import scipy
    import sklearn

    load = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True, check=False).stdout.strip()  # fmt: skip
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), platform.processor())  # fmt: skip
    return (
        f"# Width benchmark: every ranker against features and samples\n\n"
        f"Command: `{command}`\n\n"
        f"Tree {commit}; Python {platform.python_version()}, numpy {np.__version__}, "
        f"scipy {scipy.__version__}, scikit-learn {sklearn.__version__}; {cpu}, "
        f"{os.cpu_count()} CPUs shared with other jobs, load average {load} at the start; "
        "BLAS on one thread. cpu_s = CPU seconds of fit; mem_MB = the child's peak RSS minus "
        "its RSS after the imports (data + fit); exponents = log-log least-squares slopes; "
        "*_1min_4GB = the size a fit reaches in 60 CPU s and 4 GB, extrapolated from the "
        "largest cell with exponents of at least 1 (at most 10x it, then '>').\n"
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rankers", nargs="+", help="names (default: all registered)")
    parser.add_argument("--quick", action="store_true", help="small shapes: a smoke run")
    parser.add_argument("--timeout", type=float, default=120.0, help="CPU seconds per cell")
    parser.add_argument("--cap", type=float, default=40.0,
                        help="skip a shape whose projected CPU seconds exceed this")  # fmt: skip
    parser.add_argument("--budget", type=float, default=3600.0, help="wall seconds in all")
    parser.add_argument("--out", type=Path, help="also write the tables (markdown) here")
    parser.add_argument("--resume", type=Path,
                        help="a previous run's output: its cells are reused")  # fmt: skip
    args = parser.parse_args(argv)
    from threadpoolctl import threadpool_limits

    import rankers
    from moweights.data import make_planted

    threadpool_limits(1)
    # every ranker's module imported once here, so a forked cell starts in milliseconds
    rankers.available()
    for name in rankers.available()["name"]:
        rankers.get(name)
    make_planted("shift", n_samples=20, n_features=20, random_state=0)

    command = f"python -m {__spec__.name} " + " ".join(sys.argv[1:] if argv is None else argv)
    top = header(command.strip())
    names = args.rankers or sorted(rankers.available()["name"], key=SLOW_LAST.__contains__)
    if args.quick:
        sizes = QUICK
    else:
        sizes = {"features": FEATURES, "extra": EXTRA_FEATURES, "samples": SAMPLES,
                 "rows": FEATURE_ROWS, "columns": SAMPLE_COLUMNS}  # fmt: skip
    summary, cells = bench(names, sizes, args.timeout, args.cap, args.budget, args.resume)
    print_table(summary, title="exponents")
    tables = f"## Exponents\n\n{rows_markdown(summary)}\n\n## Cells\n\n{rows_markdown(cells)}\n"
    print(tables)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(top + "\n" + tables, encoding="utf-8")


if __name__ == "__main__":
    main()
