"""The default-style config run on omics width: 200 samples x 20,000 features (issue 17).

The script writes a seeded gene-expression-like table (``make_planted("clusters")``: four
sample groups that differ in 1% of the genes, Gaussian noise elsewhere, shifted to a
positive log-expression scale; a ``target`` column holds the group) as CSV and a config
modelled on ``examples/config.toml``: its five classic rankers (variance, laplacian,
info_gain, chi2, random_forest; ``--rankers`` names others, each with its defaults, e.g.
five unsupervised ones), the same aggregation and evaluation (10-fold top-k 1NN curves,
error curves, clustering, statistics), without the NSGA-II weighting. It then runs
``python -m moweights run -v CONFIG`` in a child process, under ``/usr/bin/time -v`` when
that exists, and reports the wall and CPU time, the peak resident set, whether progress
was shown and the run's slowest steps (from its verbose log).

Goal (issue 17): at most 10 minutes and 6 GB.

Examples::

    python benchmarks/bench_width_run.py --features 2000            # a quick look
    python benchmarks/bench_width_run.py --rankers variance laplacian spec mcfs frane
    python benchmarks/bench_width_run.py \\
        --out benchmarks/results/width/config_run_20000.md
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import cpu_seconds_children

ROOT = Path(__file__).resolve().parents[1]

#: examples/config.toml's five classic rankers, with its parameters
CLASSIC = """\
[[rankers]]
name = "variance"

[[rankers]]
name = "laplacian"
params = { n_neighbors = 5 }

[[rankers]]
name = "info_gain"

[[rankers]]
name = "chi2"

[[rankers]]
name = "random_forest"
params = { n_estimators = 100 }
"""

CONFIG = """\
# issue 17: {what} at omics width (no NSGA-II)
[data]
path = "{data}"
target = "target"

{rankers}
[aggregation]
methods = ["mean_rank", "borda", "generic"]
tolerance = 0.4
compare = ["spearman", "s_measure"]

[evaluation]
cv = 10

[evaluation.topk]
metric = "mse"
at_k = 16

[evaluation.error_curves]
grid = "geometric"
weighting = ["uniform", "inverse_size"]
n_random = 10

[evaluation.clustering]
k_features = [1, 2, 4, 8, 16]
n_restarts = 3

[output]
dir = "{out}"

[run]
random_state = 0
n_jobs = 1
"""


def config_text(data: Path, out: Path, rankers: list[str] | None) -> str:
    """The run's TOML: the classic five, or ``rankers`` with their defaults."""
    if rankers is None:
        what, blocks = "examples/config.toml's five classic rankers", CLASSIC
    else:
        what = ", ".join(rankers)
        blocks = "\n".join(f'[[rankers]]\nname = "{name}"\n' for name in rankers)
    return CONFIG.format(what=what, data=data.as_posix(), rankers=blocks, out=out.as_posix())


def write_data(path: Path, m: int, n: int, seed: int = 0) -> None:
    """The seeded expression-like table: features f00001..., then ``target``."""
    from moweights.planted import make_planted

    planted = make_planted("clusters", n_samples=m, n_features=n, informative=0.01,
                           random_state=seed)  # fmt: skip
    frame = planted.X + 8.0
    frame["target"] = planted.y.to_numpy()
    frame.to_csv(path, index=False, float_format="%.5g")


def run(config: Path, log: Path, timeout: float) -> dict:
    """``moweights run -v`` in a child: wall, CPU seconds, peak RSS, exit code."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}  # fmt: skip
    command = [sys.executable, "-m", "moweights", "run", "-v", "--no-cache", str(config)]
    timer = shutil.which("time") or ("/usr/bin/time" if Path("/usr/bin/time").exists() else None)
    if timer:
        command = [timer, "-v", *command]
    before = cpu_seconds_children()
    start = time.monotonic()
    with log.open("w") as fh:
        try:
            code = subprocess.run(command, stdout=fh, stderr=subprocess.STDOUT, env=env,
                                  timeout=timeout, check=False).returncode  # fmt: skip
        except subprocess.TimeoutExpired:
            code = "timeout"
    wall = time.monotonic() - start
    cpu = cpu_seconds_children() - before
    text = log.read_text(errors="replace")
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak_mb = int(peak.group(1)) / 1024 if peak else children.ru_maxrss / 1024
    return {"exit": code, "wall_s": wall, "cpu_s": cpu, "peak_mb": peak_mb, "log": text}


def progress_lines(text: str) -> list[str]:
    """The tqdm bars' final states (``name: 100%|...``) in the log."""
    bars = {}
    for chunk in re.split(r"[\r\n]", text):
        found = re.match(r"\s*([^:|]{1,60}):\s+(\d+)%\|", chunk)
        if found:
            bars[found.group(1).strip()] = chunk.strip()
    return list(bars.values())


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--features", type=int, default=20000)
    parser.add_argument("--workdir", type=Path, help="where data, config and results go")
    parser.add_argument("--timeout", type=float, default=1800.0, help="wall seconds")
    parser.add_argument("--out", type=Path, help="write the report (markdown) here")
    parser.add_argument(
        "--rankers",
        nargs="+",
        help="registered names, each with its defaults (default: "
        "examples/config.toml's five classic rankers)",
    )
    args = parser.parse_args(argv)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="moweights_width_"))
    work.mkdir(parents=True, exist_ok=True)
    data, config = work / "expression.csv", work / "config.toml"
    start = time.monotonic()
    write_data(data, args.samples, args.features)
    print(f"data {args.samples} x {args.features}: {data} ({time.monotonic() - start:.0f} s)")
    config.write_text(config_text(data, work / "results", args.rankers))
    load = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    result = run(config, work / "run.log", args.timeout)
    bars = progress_lines(result["log"])
    tail = [ln for ln in result["log"].splitlines() if ln.strip()][-60:]
    goal = result["wall_s"] <= 600 and result["peak_mb"] <= 6 * 1024
    summary = (
        f"exit {result['exit']}; wall {result['wall_s']:.0f} s, CPU {result['cpu_s']:.0f} s, "
        f"peak RSS {result['peak_mb']:.0f} MB; progress bars shown: {len(bars)}; "
        f"goal (<= 600 s, <= 6 GB): {'met' if goal else 'NOT met'}"
    )
    print(summary)
    if args.out:
        import sklearn

        command = "python benchmarks/bench_width_run.py " + " ".join(
            sys.argv[1:] if argv is None else argv
        )
        commit = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        text = [
            f"# Config run at {args.samples} x {args.features}",
            "",
            f"Command: `{command.strip()}`",
            "",
            f"Tree {commit}; Python {platform.python_version()}, numpy {np.__version__}, "
            f"scikit-learn {sklearn.__version__}; {os.cpu_count()} CPUs shared with other "
            f"jobs, load average {load} at the start; BLAS on one thread; "
            "wall time includes the waits for the other jobs.",
            "",
            f"**{summary}**",
            "",
            "Config:",
            "",
            "```toml",
            config.read_text().replace(work.as_posix(), "<workdir>"),
            "```",
            "",
            "Progress bars (final state):",
            "",
            "```",
            *bars,
            "```",
            "",
            "End of the log (`-v`, `/usr/bin/time -v`):",
            "",
            "```",
            *(ln.replace(work.as_posix(), "<workdir>") for ln in tail),
            "```",
        ]
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(text) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
