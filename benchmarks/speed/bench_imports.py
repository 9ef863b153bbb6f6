"""CPU time of importing the packages and of ``moweights --help``, against a baseline tree.

Each statement runs in a fresh interpreter (``python -c ...``); its CPU time (user + system,
from ``resource.getrusage(RUSAGE_CHILDREN)``) is measured for the current tree and for the
baseline tree given with ``--baseline`` (e.g. ``git archive <commit> | tar -x -C /tmp/base``),
alternating, ``--repeats`` times each; the medians and their ratio are printed. BLAS is kept
to one thread. The goal of the lazy imports: ``import moweights`` and ``moweights --help``
under 0.5 s of CPU.

    python -m benchmarks.speed.bench_imports --baseline /tmp/base
    python -m benchmarks.speed.bench_imports --baseline /tmp/base --repeats 9 --importtime rankers
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

STATEMENTS = {
    "import rankers": "import rankers",
    "import aggregation": "import aggregation",
    "from aggregation import Ranking": "from aggregation import Ranking",
    "import moweights": "import moweights",
    "moweights --help": (
        "import sys; sys.argv = ['moweights', '--help']\n"
        "from moweights.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass"
    ),
}


def _env(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        PYTHONPATH=str(tree),
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        PYTHONDONTWRITEBYTECODE="1",
    )
    return env


def interpreter_cpu_seconds(code: str, tree: Path) -> float:
    """CPU seconds (user + system) of a fresh interpreter running ``code`` on ``tree``."""
    before = cpu_seconds_children()
    subprocess.run(
        [sys.executable, "-c", code],
        cwd=tree,
        env=_env(tree),
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return cpu_seconds_children() - before


def heaviest_imports(module: str, tree: Path, top: int = 8) -> list[str]:
    """The ``top`` largest cumulative entries of ``python -X importtime -c 'import module'``."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        cwd=tree,
        env=_env(tree),
        capture_output=True,
        text=True,
        check=True,
    )
    rows = []
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    return [f"{us / 1e6:8.3f} s  {name}" for us, name in sorted(rows, reverse=True)[:top]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="the baseline source tree")
    parser.add_argument("--repeats", type=int, default=5, help="runs per statement and tree")
    parser.add_argument("--importtime", metavar="MODULE", help="also list MODULE's heaviest")
    args = parser.parse_args(argv)
    trees = {"baseline": args.baseline.resolve(), "current": REPO}
    print(f"{'statement':<34}{'baseline s':>12}{'current s':>12}{'ratio':>8}")
    for label, code in STATEMENTS.items():
        times: dict[str, list[float]] = {name: [] for name in trees}
        for _ in range(args.repeats):  # alternating, so load changes hit both alike
            for name, tree in trees.items():
                times[name].append(interpreter_cpu_seconds(code, tree))
        base, cur = (statistics.median(times[n]) for n in trees)
        print(f"{label:<34}{base:>12.3f}{cur:>12.3f}{cur / base:>8.2f}")
    if args.importtime:
        for name, tree in trees.items():
            print(f"\n{name}: python -X importtime -c 'import {args.importtime}' (cumulative)")
            print("\n".join(heaviest_imports(args.importtime, tree)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
