"""The real Flower deployment under load: N sites on 127.0.0.1, some killed mid-round.

A SuperLink and one SuperNode per site (``moweights.federated.LocalDeployment``), each
site with its own csv file. Every site ranks with a plugin ranker that sleeps ``--delay``
seconds before ranking (the window in which ``--kill`` sites are killed: SIGKILL to their
SuperNode's process group, once they have started ranking). Reported: the run's wall time
against the baseline, ``rank_sites`` in one process on the surviving files, measured in the
same run; the failed sites; whether the aggregate equals ``rank_sites`` on the survivors;
and per site the peak resident memory (VmHWM from /proc, Linux) of its SuperNode and of
the processes it started (Flower's SuperExec and ClientApp), read every 0.1 s.

Example::

    python -m benchmarks.scale.bench_federation_load --sites 20 --kill 2 \\
        --out benchmarks/results/federation_load
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from site import addsitedir

import numpy as np
import pandas as pd

from benchmarks._common import print_table

PLUGIN = """
import os
import time
from pathlib import Path

from rankers import BaseRanker


class SleepyVariance(BaseRanker):
    \"\"\"Variance, after ``delay`` seconds; marks its start as <rows>.<pid> in $SLEEPY_MARKS.\"\"\"

    def __init__(self, delay=0.0):
        self.delay = delay

    def fit(self, X, y=None):
        marks = os.environ.get("SLEEPY_MARKS")
        if marks:
            Path(marks, f"{len(X)}.{os.getpid()}").touch()
        time.sleep(self.delay)
        return super().fit(X, y)

    def _score(self, X, y, context):
        return X.var(axis=0)
"""


def write_plugin(folder: Path) -> None:
    """The sleepy ranker as an installed distribution in ``folder`` (put it on the path)."""
    (folder / "sleepy_plugin.py").write_text(PLUGIN)
    info = folder / "sleepy_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sleepy-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[moweights.rankers]\nsleepy_variance = sleepy_plugin:SleepyVariance\n"
    )


def install_plugin(folder: Path) -> None:
    """The sleepy ranker as an installed distribution on this process's and Flower's path."""
    write_plugin(folder)
    addsitedir(str(folder))  # a folder of installed distributions, as site-packages is
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(folder), *filter(None, [os.environ.get("PYTHONPATH")])]
    )


def write_sites(folder: Path, n_sites: int, n_rows: int, n_features: int) -> dict[str, Path]:
    """One csv per site; site i has n_rows + i rows (its rows tell it apart)."""
    rng = np.random.default_rng(0)
    paths = {}
    for i in range(1, n_sites + 1):
        X = rng.normal(size=(n_rows + i, n_features)) * np.linspace(0.5, 3.0, n_features)
        paths[f"site{i:02d}"] = folder / f"site{i:02d}.csv"
        columns = [f"f{j}" for j in range(n_features)]
        pd.DataFrame(X, columns=columns).to_csv(paths[f"site{i:02d}"], index=False)
    return paths


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        tree.setdefault(ppid, []).append(int(stat.parent.name))
    return tree


def _hwm_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


class MemoryWatch(threading.Thread):
    """Peak RSS (VmHWM) of every process under each site's SuperNode, read every 0.1 s."""

    def __init__(self, roots: dict[str, int]) -> None:
        super().__init__(daemon=True)
        self.roots, self.peaks = roots, {s: {} for s in roots}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            tree = _children()
            for site, root in self.roots.items():
                todo = [root]
                while todo:
                    pid = todo.pop()
                    todo += tree.get(pid, [])
                    hwm = _hwm_mb(pid)
                    if hwm is not None:
                        self.peaks[site][pid] = max(hwm, self.peaks[site].get(pid, 0.0))
            time.sleep(0.1)

    def table(self) -> dict[str, dict[str, float]]:
        out = {}
        for site, root in self.roots.items():
            peaks = self.peaks[site]
            node = peaks.get(root, float("nan"))
            others = [v for p, v in peaks.items() if p != root]
            out[site] = {"supernode MB": node, "its processes": len(others)}
            out[site]["largest child MB"] = max(others, default=float("nan"))
            out[site]["sum of peaks MB"] = node + sum(others)
        return out


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", type=int, default=20)
    parser.add_argument("--kill", type=int, default=2, help="sites killed mid-round")
    parser.add_argument("--rows", type=int, default=200, help="rows per site (plus its index)")
    parser.add_argument("--features", type=int, default=50)
    parser.add_argument("--delay", type=float, default=10.0, help="seconds each site sleeps")
    parser.add_argument("--reply-timeout", type=float, default=120.0)
    parser.add_argument("--out", type=Path, help="folder for the tables (default: print only)")
    args = parser.parse_args(argv)

    import moweights.federated.flower as fl
    import rankers
    from moweights.federated import rank_sites

    work = Path(tempfile.mkdtemp(prefix="fedload_"))
    install_plugin(work)
    marks = work / "marks"
    marks.mkdir()
    os.environ["SLEEPY_MARKS"] = str(marks)
    rankers.reload()
    paths = write_sites(work, args.sites, args.rows, args.features)
    killed = list(paths)[1 :: max(args.sites // max(args.kill, 1), 1)][: args.kill]
    rows = {s: args.rows + i for i, s in enumerate(paths, start=1)}
    nodes = {s: {"data-path": str(p)} for s, p in paths.items()}

    start = time.perf_counter()
    with fl.LocalDeployment(nodes, work / "flower", startup_timeout=120) as deployment:
        started = time.perf_counter()
        watch = MemoryWatch({s: p.pid for s, p in deployment.site_processes.items()})
        watch.start()
        outcome: dict = {}

        def run() -> None:
            try:
                outcome["result"] = deployment.run(
                    timeout=args.reply_timeout + 300,
                    ranker="sleepy_variance",
                    ranker_params=json.dumps({"delay": args.delay}),
                    sites=",".join(paths),
                    node_timeout=120.0,
                    reply_timeout=args.reply_timeout,
                )
            except BaseException as exc:
                outcome["error"] = exc

        runner = threading.Thread(target=run, daemon=True)
        run_start = time.perf_counter()
        runner.start()
        kill_times: dict[str, float] = {}
        deadline = time.monotonic() + 300  # Flower starts the ServerApp first
        while len(kill_times) < len(killed):  # each doomed site as soon as it ranks
            for site in [s for s in killed if s not in kill_times]:
                if any(marks.glob(f"{rows[site]}.*")):
                    deployment.kill_site(site)
                    kill_times[site] = time.perf_counter() - run_start
            if time.monotonic() > deadline:
                raise SystemExit(f"not every site of {killed} started ranking")
            time.sleep(0.1)
        runner.join()
        run_wall = time.perf_counter() - run_start
        watch.done.set()
        watch.join()
    total = time.perf_counter() - start
    if "error" in outcome:
        raise outcome["error"]
    got = outcome["result"]

    survivors = {s: p for s, p in paths.items() if s not in killed}
    base_start = time.perf_counter()
    ref = rank_sites(survivors, "sleepy_variance", {"delay": args.delay})
    baseline = time.perf_counter() - base_start
    equal = got.aggregated == ref.aggregated and all(
        got.rankings[s] == ref.rankings[s] for s in survivors
    )

    memory = watch.table()
    rows_out = [
        {"site": s, "killed": s in killed, "status": "failed" if s in got.failed else "ok"}
        | memory[s]
        for s in paths
    ]
    table = print_table(rows_out, f"{args.sites} sites, {len(killed)} killed mid-round")
    summary = {
        "command": f"python -m {__spec__.name} " + " ".join(sys.argv[1:] if argv is None else argv),
        "sites": args.sites,
        "killed": killed,
        "killed_after_s": {s: round(t, 2) for s, t in kill_times.items()},
        "failed": got.failed,
        "ranked": list(got.rankings),
        "aggregate_equals_rank_sites_on_survivors": bool(equal),
        "startup_s": round(started - start, 2),
        "flwr_run_wall_s": round(run_wall, 2),
        "deployment_total_s": round(total, 2),
        "baseline_rank_sites_one_process_s": round(baseline, 2),
        "ratio_run_over_baseline": round(run_wall / baseline, 2),
        "delay_s": args.delay,
        "reply_timeout_s": args.reply_timeout,
        "peak_mb_sum_median": float(np.nanmedian(table["sum of peaks MB"])),
        "peak_mb_sum_max": float(np.nanmax(table["sum of peaks MB"])),
    }
    print(json.dumps(summary, indent=2))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        table.to_csv(args.out / "sites.csv", index=False)
        (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


if __name__ == "__main__":
    main()
