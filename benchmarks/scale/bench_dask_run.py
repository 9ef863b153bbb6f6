"""A config run on a 2-worker Dask cluster against loky ``-j 2``, side by side (issue 39).

The default demo (``examples/config.toml``, or ``--config``) runs from the command line
with ``--no-cache`` alternately

* ``loky``: ``moweights run CONFIG -j 2`` (joblib's local process/thread pools);
* ``dask``: the same with ``--set run.backend="dask" --set run.scheduler=ADDRESS`` on a
  cluster this script starts as the tests' ``dask_cluster`` fixture does: ``dask
  scheduler`` and two ``dask worker --nthreads 1`` processes on 127.0.0.1, the same
  cores as loky's.

Per run: wall seconds, CPU seconds of the ``moweights`` process and of the cluster's
processes (scheduler, nannies, workers) over the run, and from the scheduler's task
stream the number of tasks, how many computed for less than 50 ms, and the median.
Both runs' result files must be the same bytes. The cluster is started once, before the
first run, and stopped at the end; a fresh one per ``--fresh`` run.

    python -m benchmarks.scale.bench_dask_run --repeat 3 --out benchmarks/results/dask_run.md
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks._common import ONE_BLAS_THREAD, cpu_seconds_children

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
FILES = ["scores.csv", "ranks.csv", "aggregated.json", "curves.csv", "curve_folds.csv"]


class Cluster:
    """``dask scheduler`` and two single-thread ``dask worker`` processes on 127.0.0.1."""

    def __init__(self, workers: int = 2, env: dict | None = None):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.address = f"tcp://127.0.0.1:{port}"
        local = ["--host", "127.0.0.1", "--no-dashboard"]
        env = {**os.environ, **ONE_BLAS_THREAD, **(env or {})}
        self.procs = [self._spawn(["scheduler", *local, "--port", str(port)], env)]
        for i in range(workers):
            args = ["worker", self.address, *local, "--nthreads", "1", "--name", f"w{i}"]
            self.procs.append(self._spawn(args, env))
        from distributed import Client

        with Client(self.address, timeout=600) as client:
            client.wait_for_workers(workers, timeout=600)

    @staticmethod
    def _spawn(args, env):
        return subprocess.Popen(
            [str(BIN / "dask"), *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )

    def cpu_seconds(self) -> float:
        """User + system CPU of the cluster's processes and their children so far."""
        return sum(self.cpu_by_role().values())

    def cpu_by_role(self) -> dict[str, float]:
        """:meth:`cpu_seconds` of the scheduler, of the nannies (``dask worker``'s own
        process) and of the worker processes they start."""
        import psutil

        roles = {"scheduler": 0.0, "nannies": 0.0, "workers": 0.0}
        for i, proc in enumerate(self.procs):
            try:
                root = psutil.Process(proc.pid)
                for depth, p in ((0, root), *((1, c) for c in root.children(recursive=True))):
                    times = p.cpu_times()
                    role = "scheduler" if i == 0 else ("nannies" if depth == 0 else "workers")
                    roles[role] += times.user + times.system
            except psutil.NoSuchProcess:
                pass
        return roles

    def stop(self) -> None:
        for proc in self.procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)


#: ``python -m moweights`` that also writes its own process's CPU seconds (without its
#: children's: loky's workers) to the file named by ``MOWEIGHTS_BENCH_SELF_CPU`` at exit
_SELF_CPU = (
    "import atexit, os, resource, runpy, sys\n"
    "def _own():\n"
    "    u = resource.getrusage(resource.RUSAGE_SELF)\n"
    "    open(os.environ['MOWEIGHTS_BENCH_SELF_CPU'], 'w').write(repr(u.ru_utime + u.ru_stime))\n"
    "atexit.register(_own)\n"
    "sys.argv[0] = 'moweights'\n"
    "runpy.run_module('moweights', run_name='__main__', alter_sys=True)\n"
)


def _run(config: Path, out: Path, extra: list[str], env: dict) -> dict:
    argv = [sys.executable, "-c", _SELF_CPU, "run", str(config), "-q", "-o", str(out),
            "--no-cache", "-j", "2", *extra]  # fmt: skip
    own = out.parent / f"{out.name}.self_cpu"
    before = cpu_seconds_children()
    start = time.perf_counter()
    run_env = {**os.environ, **ONE_BLAS_THREAD, **env, "MOWEIGHTS_BENCH_SELF_CPU": str(own)}
    subprocess.run(argv, check=True, cwd=ROOT, env=run_env)
    wall = time.perf_counter() - start
    cpu = cpu_seconds_children() - before
    main = float(own.read_text())
    return {"wall_s": wall, "client_cpu_s": cpu, "main_cpu_s": main, "pool_cpu_s": cpu - main}


def _dask_run(cluster: Cluster, config: Path, out: Path, env: dict) -> dict:
    from distributed import Client

    extra = ["--set", 'run.backend="dask"', "--set", f'run.scheduler="{cluster.address}"']
    with Client(cluster.address, timeout=600) as client:
        client.get_task_stream(start=0, stop=0)  # the task stream plugin is on
        roles0, start = cluster.cpu_by_role(), time.time()
        row = _run(config, out, extra, env)
        roles = cluster.cpu_by_role()
        row["cluster_cpu_s"] = sum(roles.values()) - sum(roles0.values())
        for role, cpu in roles.items():
            row[f"{role}_cpu_s"] = cpu - roles0[role]
        stream = client.get_task_stream(start=start)

    def seconds(r, action):
        return sum(s["stop"] - s["start"] for s in r["startstops"] if s["action"] == action)

    spent = np.array([seconds(r, "compute") for r in stream])
    row["task_compute_s"] = float(spent.sum())
    row["task_transfer_s"] = float(sum(seconds(r, "transfer") for r in stream))
    row["tasks"] = len(spent)
    row["tasks < 50 ms"] = int((spent < 0.05).sum())
    row["median task ms"] = float(np.median(spent) * 1000) if spent.size else float("nan")
    names = {}
    for r, s in zip(stream, spent, strict=True):
        key = r["key"][0] if isinstance(r["key"], tuple) else r["key"]
        name = str(key).rsplit("-", 1)[0]
        names.setdefault(name, []).append(s)
    row["kinds"] = "; ".join(
        f"{name} x{len(v)} (median {np.median(v) * 1000:.0f} ms)" for name, v in names.items()
    )
    return row


def _table(rows: list[dict], keys: list[str]) -> str:
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for row in rows:
        cells = [
            f"{v:.4g}" if isinstance(v, float) else str(v) for v in (row.get(k, "") for k in keys)
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, default=ROOT / "examples" / "config.toml")
    parser.add_argument("--repeat", type=int, default=3, help="runs per backend, alternating")
    parser.add_argument("--fresh", action="store_true", help="a new cluster for every dask run")
    parser.add_argument("--out", type=Path, help="also write the results (markdown) here")
    parser.add_argument(
        "--tree",
        type=Path,
        help="run the code of this checkout (e.g. a git worktree of an older commit) "
        "instead of the installed one, in the client and the cluster (PYTHONPATH)",
    )
    parser.add_argument(
        "--cluster-env",
        nargs="*",
        default=[],
        metavar="NAME=VALUE",
        help="environment of the cluster's processes only, e.g. Dask settings such as "
        "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False (the workers' sampling profiler)",
    )
    args = parser.parse_args(argv)
    env = {"PYTHONPATH": str(args.tree.resolve())} if args.tree else {}
    cluster_env = {**env, **dict(item.split("=", 1) for item in args.cluster_env)}

    load = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    config = args.config.resolve()
    config_name = config.relative_to(ROOT) if config.is_relative_to(ROOT) else config
    header = [
        "# A config run on a 2-worker Dask cluster against loky -j 2 (issue 39 item 5)",
        "",
        f"Command: `python -m {__spec__.name} {' '.join(argv or sys.argv[1:])}`  ",
        f"Config: {config_name}"
        f"; python {platform.python_version()}; {platform.platform()}; {os.cpu_count()} CPUs "
        "(shared with other jobs)  ",
        f"Code: {args.tree or 'this tree'}  ",
        f"Load average before: {load}",
        "",
    ]
    print("\n".join(header), flush=True)
    rows = []
    cluster = None if args.fresh else Cluster(env=cluster_env)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for r in range(args.repeat):
                for backend in ("loky", "dask") if r % 2 == 0 else ("dask", "loky"):
                    out = Path(tmp) / f"{backend}{r}"
                    if backend == "loky":
                        row = _run(args.config, out, [], env)
                    else:
                        fresh = Cluster(env=cluster_env) if args.fresh else None
                        try:
                            row = _dask_run(fresh or cluster, args.config, out, env)
                        finally:
                            if fresh is not None:
                                fresh.stop()
                    row = {"run": r, "backend": backend, **row}
                    rows.append(row)
                    print(row, flush=True)
            same = all(
                (Path(tmp) / f"dask{r}" / name).read_bytes()
                == (Path(tmp) / f"loky{r}" / name).read_bytes()
                for r in range(args.repeat)
                for name in FILES
            )
            # the cluster's own cost: its CPU while idle for as long as a dask run lasts
            walls = [row["wall_s"] for row in rows if row["backend"] == "dask"]
            idle_cluster = cluster or Cluster(env=cluster_env)
            try:
                time.sleep(5.0)  # past the start-up (and the last run's clean-up)
                roles0 = idle_cluster.cpu_by_role()
                time.sleep(float(np.median(walls)))
                roles = idle_cluster.cpu_by_role()
            finally:
                if idle_cluster is not cluster:
                    idle_cluster.stop()
            idle = {role: roles[role] - roles0[role] for role in roles}
    finally:
        if cluster is not None:
            cluster.stop()
    summary = []
    for backend in ("loky", "dask"):
        mine = [row for row in rows if row["backend"] == backend]
        summary.append(
            {
                "backend": backend,
                "wall_s (median)": float(np.median([row["wall_s"] for row in mine])),
                "client_cpu_s": float(np.median([row["client_cpu_s"] for row in mine])),
                "cluster_cpu_s": float(np.median([row.get("cluster_cpu_s", 0.0) for row in mine])),
            }
        )
    for row in summary:
        row["wall / loky"] = row["wall_s (median)"] / summary[0]["wall_s (median)"]
        row["cpu / loky"] = (row["client_cpu_s"] + row["cluster_cpu_s"]) / summary[0][
            "client_cpu_s"
        ]
    dask_rows = [row for row in rows if row["backend"] == "dask"]
    loky_cpu = summary[0]["client_cpu_s"]
    parts = {
        "client (the moweights process)": "client_cpu_s",
        "  of it the main process": "main_cpu_s",
        "  of it its children (loky's workers: none with dask)": "pool_cpu_s",
        "scheduler": "scheduler_cpu_s",
        "nannies": "nannies_cpu_s",
        "workers": "workers_cpu_s",
        "workers' task compute (task stream, wall)": "task_compute_s",
        "workers' transfers (task stream, wall)": "task_transfer_s",
    }
    breakdown = []
    for label, key in parts.items():
        median = float(np.median([row[key] for row in dask_rows]))
        role = key.removesuffix("_cpu_s")
        loky = [row[key] for row in rows if row["backend"] == "loky" and key in row]
        breakdown.append({
            "part": label,
            "loky run s (median)": float(np.median(loky)) if loky else float("nan"),
            "dask run s (median)": median,
            "idle cluster s": idle[role] if role in idle else float("nan"),
        })  # fmt: skip
    idle_total = sum(idle.values())
    dask_cpu = summary[1]["client_cpu_s"] + summary[1]["cluster_cpu_s"]
    net = {
        "loky CPU s": loky_cpu,
        "dask CPU s": dask_cpu,
        "idle cluster CPU s (same wall)": idle_total,
        "cpu / loky": dask_cpu / loky_cpu,
        "cpu / loky, net of the idle cluster": (dask_cpu - idle_total) / loky_cpu,
    }
    load = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    text = "\n".join(header) + "\n".join([
        "## Runs",
        "",
        _table(rows, ["run", "backend", "wall_s", "client_cpu_s", "main_cpu_s", "pool_cpu_s",
                      "cluster_cpu_s", "tasks", "tasks < 50 ms", "median task ms"]),
        "",
        "## Medians",
        "",
        _table(summary, list(summary[0])),
        "",
        "## Where the CPU goes",
        "",
        "Medians of the runs, and what the same cluster spent idle over the median "
        "dask run's wall (heartbeats, the workers' sampling profiler, system monitors); "
        "the task stream's times are wall seconds of single-thread workers.",
        "",
        _table(breakdown, list(breakdown[0])),
        "",
        _table([net], list(net)),
        "",
        f"Cluster environment: {' '.join(args.cluster_env) or 'Dask defaults'}",
        "",
        f"Same bytes ({', '.join(FILES)}): {same}",
        "",
        "Task kinds of the last dask run: " + next(r["kinds"] for r in rows[::-1] if "kinds" in r),
        "",
        f"Load average after: {load}",
        "",
    ])  # fmt: skip
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
