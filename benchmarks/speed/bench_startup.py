"""CPU time of ``import moweights`` and ``moweights --help`` against baselines measured in the
same run: an empty interpreter (``python -c pass``) and ``import numpy``.

Each statement runs in a fresh interpreter; its CPU time (user + system of the child, from
``resource.getrusage(RUSAGE_CHILDREN)``) is measured ``--repeats`` times, statements
interleaved, and the medians are printed with their ratios to both baselines. The goal of
the deferred imports: ``import moweights`` and ``moweights --help`` cost about what an
empty interpreter costs, well under ``import numpy`` (and under 0.5 s of CPU).

    python -m benchmarks.speed.bench_startup
    python -m benchmarks.speed.bench_startup --repeats 9
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

from benchmarks._common import cpu_seconds_children

REPO = Path(__file__).resolve().parents[2]

BASELINES = {"python -c pass": "pass", "import numpy": "import numpy"}
STATEMENTS = {
    "import moweights": "import moweights",
    "moweights --help": (
        "from moweights.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass"
    ),
}


def interpreter_cpu_seconds(code: str) -> float:
    """CPU seconds (user + system) of a fresh interpreter running ``code``."""
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    before = cpu_seconds_children()
    subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return cpu_seconds_children() - before


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs of each statement")
    args = parser.parse_args(argv)
    every = {**BASELINES, **STATEMENTS}
    times: dict[str, list[float]] = {name: [] for name in every}
    for _ in range(args.repeats):  # interleaved, so a busy machine slows all alike
        for name, code in every.items():
            times[name].append(interpreter_cpu_seconds(code))
    median = {name: statistics.median(t) for name, t in times.items()}
    empty, numpy = median["python -c pass"], median["import numpy"]
    print(f"CPU seconds, median of {args.repeats} fresh interpreters")
    print(f"{'statement':<20} {'CPU s':>7} {'/ pass':>8} {'/ numpy':>8}")
    for name in every:
        print(f"{name:<20} {median[name]:7.3f} {median[name] / empty:8.2f} "
              f"{median[name] / numpy:8.2f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
