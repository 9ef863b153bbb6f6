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

``--tax`` measures the pipeline's own cost instead (issue 39 item 2, "no pipeline tax at
width"): a ``variance``-only run with the evaluation off on a 200 x 20,000 numeric CSV
(seeded standard normal values at full precision, as ``DataFrame.to_csv`` writes them;
``--data`` names another file), ``moweights run CONFIG -o OUT --quiet`` into a fresh
folder, against the floor ``pandas.read_csv(FILE).var()`` in a fresh interpreter, the
two alternating ``--repeat`` times. It prints the median CPU seconds (user + system, the
child's imports included) of each, and their ratio. Goal: the run within 4x the floor.

Examples::

    python -m benchmarks.scale.bench_width_run --features 2000            # a quick look
    python -m benchmarks.scale.bench_width_run --rankers variance laplacian spec mcfs frane
    python -m benchmarks.scale.bench_width_run \\
        --out benchmarks/results/width/config_run_20000.md
    python -m benchmarks.scale.bench_width_run --tax --out benchmarks/results/width/tax.md
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

from benchmarks._common import ONE_BLAS_THREAD, cpu_seconds_children, rows_markdown_4g

ROOT = Path(__file__).resolve().parents[2]

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


def _config_block(config: Path, workdir: Path) -> list[str]:
    """The run's config as a markdown TOML block, its working folder written <workdir>."""
    return [
        "Config:",
        "",
        "```toml",
        config.read_text().replace(workdir.as_posix(), "<workdir>"),
        "```",
    ]


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
    from moweights.data import make_planted

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


#: issue 39's pipeline-tax run: one cheap ranker, no evaluation
TAX_CONFIG = """\
# issue 39 item 2: the pipeline's own cost at width
[data]
path = "{data}"

[[rankers]]
name = "variance"

[evaluation]
enabled = false

[run]
random_state = 0
"""
#: the floor: what any user of the file pays to read it and compute the ranker's statistic
FLOOR = "import sys, pandas as pd; X = pd.read_csv(sys.argv[1]); X.var()"


def write_tax_data(path: Path, m: int, n: int, seed: int = 0) -> None:
    """Standard normal values, columns ``g0``..., written at full precision."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.standard_normal((m, n)), columns=[f"g{j}" for j in range(n)])
    frame.to_csv(path, index=False)


def timed_child(command: list[str], timeout: float, cwd: Path | None = None) -> dict:
    """``command`` in a child on one BLAS thread: exit code, wall and CPU seconds, peak
    RSS (from ``/usr/bin/time -v`` when it exists)."""
    env = {**os.environ, **ONE_BLAS_THREAD, "PYTHONPATH": str(ROOT)}
    timer = shutil.which("time") or ("/usr/bin/time" if Path("/usr/bin/time").exists() else None)
    if timer:
        command = [timer, "-v", *command]
    before, start = cpu_seconds_children(), time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd,
                              timeout=timeout, check=False)  # fmt: skip
        code, err = done.returncode, done.stderr
    except subprocess.TimeoutExpired:
        code, err = "timeout", ""
    wall, cpu = time.monotonic() - start, cpu_seconds_children() - before
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    return {"exit": code, "wall_s": wall, "cpu_s": cpu,
            "peak_mb": int(peak.group(1)) / 1024 if peak else float("nan"),
            "stderr": err}  # fmt: skip


def tax(args, work: Path) -> None:
    """The pipeline tax: the variance-only run against read_csv + var, alternating."""
    data = args.data
    if data is None:
        data = work / "tax.csv"
        start = time.monotonic()
        write_tax_data(data, args.samples, args.features)
        print(f"data {args.samples} x {args.features}: {data} ({time.monotonic() - start:.0f} s)")
    config = work / "tax.toml"
    config.write_text(TAX_CONFIG.format(data=Path(data).resolve().as_posix()))
    load = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    runs, floors = [], []
    for i in range(args.repeat):
        floors.append(timed_child([sys.executable, "-c", FLOOR, str(data)], args.timeout))
        out = work / f"out{i}"
        shutil.rmtree(out, ignore_errors=True)
        command = [sys.executable, "-m", "moweights", "run", str(config), "-o", str(out), "-q"]
        runs.append(timed_child(command, args.timeout))
        shutil.rmtree(out, ignore_errors=True)
        for what, r in (("floor", floors[-1]), ("run", runs[-1])):
            print(f"{i}: {what:5s} exit {r['exit']}, CPU {r['cpu_s']:.2f} s, wall "
                  f"{r['wall_s']:.2f} s, peak RSS {r['peak_mb']:.0f} MB")  # fmt: skip
    failed = [r for r in runs + floors if r["exit"] != 0]
    if failed:
        tail = failed[0]["stderr"].strip().splitlines()[-5:]
        raise SystemExit("a child failed:\n" + "\n".join(tail))

    def median(rows, key):
        return float(np.median([r[key] for r in rows]))

    ratio = median(runs, "cpu_s") / median(floors, "cpu_s")
    rows = [
        {"what": what, "CPU s": f"{median(rs, 'cpu_s'):.2f}",
         "CPU s each": " ".join(f"{r['cpu_s']:.2f}" for r in rs),
         "wall s": f"{median(rs, 'wall_s'):.2f}", "peak RSS MB": f"{median(rs, 'peak_mb'):.0f}"}
        for what, rs in (("moweights run (variance, evaluation off)", runs),
                         ("floor: pd.read_csv + var", floors))
    ]  # fmt: skip
    summary = (
        f"run / floor = {ratio:.2f}x in CPU (medians of {args.repeat}); "
        f"goal (<= 4x): {'met' if ratio <= 4 else 'NOT met'}"
    )
    table = rows_markdown_4g(rows)
    print(table)
    print(summary)
    if args.out:
        command = f"python -m {__spec__.name} " + " ".join(args.argv)
        text = [
            "# The pipeline tax at width (issue 39 item 2)",
            "",
            f"Command: `{command.strip()}`",
            "",
            _environment(load),
            "",
            f"Data: {Path(data).name}, {args.samples} x {args.features}"
            + (" (seeded standard normal, full precision)" if args.data is None else "")
            + f", {Path(data).stat().st_size / 2**20:.0f} MiB. Each child is a fresh "
            "interpreter (imports included), the two alternating.",
            "",
            table,
            "",
            f"**{summary}**",
            "",
            *_config_block(config, Path(data).resolve().parent),
        ]
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(text) + "\n", encoding="utf-8")


def _environment(load: str) -> str:
    import sklearn

    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True, check=False).stdout.strip()  # fmt: skip
    return (
        f"Tree {commit}; Python {platform.python_version()}, numpy {np.__version__}, "
        f"scikit-learn {sklearn.__version__}; {os.cpu_count()} CPUs shared with other "
        f"jobs, load average {load} at the start; BLAS on one thread; "
        "wall time includes the waits for the other jobs."
    )


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
    parser.add_argument(
        "--tax",
        action="store_true",
        help="the pipeline tax (issue 39): a variance-only run, evaluation off, against "
        "pandas.read_csv + var on the same file",
    )
    parser.add_argument("--data", type=Path, help="--tax: this CSV instead of a generated one")
    parser.add_argument("--repeat", type=int, default=3, help="--tax: alternations")
    args = parser.parse_args(argv)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="moweights_width_"))
    work.mkdir(parents=True, exist_ok=True)
    if args.tax:
        args.argv = sys.argv[1:] if argv is None else argv
        tax(args, work)
        return
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

        command = f"python -m {__spec__.name} " + " ".join(sys.argv[1:] if argv is None else argv)
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
            *_config_block(config, work),
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
