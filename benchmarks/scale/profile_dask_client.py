"""Where the ``moweights`` process's CPU goes on a Dask cluster, against loky (issue 50 item 2).

``bench_dask_run`` measures the whole: on Dask the ``moweights`` process (the client)
spends more CPU than loky's main process. This script takes that difference apart. The
default demo runs once per backend, as ``bench_dask_run`` runs it (``-j 2``,
``--no-cache``, one BLAS thread, the same 2-worker cluster), with cProfile on the client's
main thread, and reports per backend:

* the process's own CPU seconds (every thread, ``getrusage``), and its children's (loky's
  workers) or the cluster's (scheduler, nannies, workers);
* the main thread's computing time (cProfile's own times, sleeps and waits left out);
* the jobs the process ran itself (``aggregation._tasks._run_all``'s cumulative time, on
  Dask only: the first job of each parallel call, timed to choose the tasks' grain, and
  the calls too small to send): work moved into the client, which the workers would do
  otherwise (a cumulative time: a job whose own loops were sent would count its wait);
* the rest of the main thread, and the other threads (joblib's, the Dask client's
  event loop).

    python -m benchmarks.scale.profile_dask_client --out benchmarks/results/dask_client_profile.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks._common import (
    ONE_BLAS_THREAD,
    cpu_seconds_children,
    emit_report,
    rows_markdown_4g,
)
from benchmarks.scale.bench_dask_run import Cluster

ROOT = Path(__file__).resolve().parents[2]

#: ``python -m moweights`` under cProfile; at exit the profile's sums go to ``argv[1]``
_PROFILED = """
import cProfile, json, pstats, resource, runpy, sys
out = sys.argv.pop(1)
sys.argv[0] = "moweights"
profile = cProfile.Profile()
profile.enable()
try:
    runpy.run_module("moweights", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
profile.disable()
stats = pstats.Stats(profile).stats
waits = ("sleep", "acquire", "wait", "select", "poll")
computing = sum(
    v[2] for k, v in stats.items() if not (k[0] == "~" and any(w in k[2] for w in waits))
)
local = sum(v[3] for k, v in stats.items() if k[2] == "_run_all" and k[0].endswith("_tasks.py"))
usage = resource.getrusage(resource.RUSAGE_SELF)
sums = {"own": usage.ru_utime + usage.ru_stime, "main": computing, "local": local}
json.dump(sums, open(out, "w"))
"""


def profiled_run(config: Path, folder: Path, extra: list[str], env: dict) -> dict:
    """One run of ``config``, profiled; its CPU seconds taken apart."""
    sums = folder / "sums.json"
    argv = [sys.executable, "-c", _PROFILED, str(sums), "run", str(config), "-q",
            "-o", str(folder / "out"), "--no-cache", "-j", "2", *extra]  # fmt: skip
    before, start = cpu_seconds_children(), time.perf_counter()
    subprocess.run(argv, check=True, cwd=ROOT, env={**os.environ, **ONE_BLAS_THREAD, **env})
    wall = time.perf_counter() - start
    got = json.loads(sums.read_text())
    children = cpu_seconds_children() - before - got["own"]
    return {"wall_s": wall, "process_cpu_s": got["own"], "children_cpu_s": children,
            "main_thread_s": got["main"], "jobs_run_here_s": got["local"],
            "main_rest_s": got["main"] - got["local"],
            "other_threads_s": got["own"] - got["main"]}  # fmt: skip


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, default=ROOT / "examples" / "config.toml")
    parser.add_argument(
        "--cluster-env", nargs="*", default=[], metavar="NAME=VALUE",
        help="environment of the cluster's processes and of the runs (e.g. Dask settings)",
    )  # fmt: skip
    parser.add_argument(
        "--warm-up", action="store_true",
        help="one unmeasured Dask run first (the workers' imports and first calls done)",
    )  # fmt: skip
    parser.add_argument("--out", type=Path, help="also write the table (markdown) here")
    args = parser.parse_args(argv)
    env = dict(item.split("=", 1) for item in args.cluster_env)
    cluster = Cluster(2, env)
    rows = []
    remote = ["--set", 'run.backend="dask"', "--set", f'run.scheduler="{cluster.address}"']
    try:
        if args.warm_up:
            profiled_run(args.config, Path(tempfile.mkdtemp()), remote, env)
        for backend in ("dask", "loky"):
            extra = [] if backend == "loky" else remote
            before = cluster.cpu_seconds()
            row = profiled_run(args.config, Path(tempfile.mkdtemp()), extra, env)
            if backend == "dask":
                row["children_cpu_s"] = cluster.cpu_seconds() - before
            total = row["process_cpu_s"] + row["children_cpu_s"]
            rows.append({"backend": backend, **row, "total_cpu_s": total})
            print(json.dumps(rows[-1]), flush=True)
    finally:
        cluster.stop()
    command = f"python -m {__spec__.name} " + " ".join(sys.argv[1:] if argv is None else argv)
    text = (
        "# The moweights process's CPU on Dask and on loky, taken apart (issue 50 item 2)\n\n"
        f"Command: `{command.strip()}`  \n"
        f"Config: {args.config.relative_to(ROOT)}; python {platform.python_version()}; "
        f"{platform.platform()}; {os.cpu_count()} CPUs  \n"
        "CPU seconds, one run per backend (cProfile on the main thread slows both alike). "
        "children: loky's workers, or the cluster's processes over the run; main thread: "
        "cProfile's own times without waits; jobs run here: the cumulative time of the jobs "
        "the process ran itself rather than send (Dask only)."
        + (" After one unmeasured Dask run (warm workers)." if args.warm_up else "")
        + "\n\n"
        f"{rows_markdown_4g(rows)}\n"
    )
    emit_report(text, args.out)


if __name__ == "__main__":
    main()
