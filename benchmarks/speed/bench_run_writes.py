"""How often a run writes its folder: the default demo with the folder written after every
sub-step (``CHECKPOINT_SECONDS = 0``, the old behaviour) and as shipped (issue 50 item 1).

Both runs in one process, one after the other, on the bundled config
(``examples/config.toml``), each into a fresh folder with the step cache off (every step
computed). Counted through Python's audit events (``sys.addaudithook``; nothing patched):
files opened for writing and ``os.rename``/``os.replace`` calls under the run folder, and
the CPU seconds of the run (``time.process_time``, this process and its children are not
separated: run with ``[run] n_jobs = 1``, the config's default). The final files are
compared byte for byte (the timing fields of ``summary.json`` and ``manifest.json``
excepted, which differ between any two runs).

Run: ``python -m benchmarks.speed.bench_run_writes [--config FILE] [--out FILE.md]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: the files whose content holds the run's seconds or the files' checksums of them
TIMED = ("summary.json", "manifest.json", "report.html", "summary.txt")


def _measure(config_path: Path, out: Path, checkpoint: float) -> dict:
    from moweights.config import load_config
    from moweights.pipeline import run, runner

    counts = {"writes": 0, "renames": 0}
    root = str(out)

    def hook(event, args):
        if event == "open" and args and isinstance(args[0], str | Path):
            mode, flags = [*args, None, None][1:3]
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)
            )
            if writing and str(args[0]).startswith(root):
                counts["writes"] += 1
        elif event == "os.rename" and str(args[1]).startswith(root):
            counts["renames"] += 1

    saved = runner.CHECKPOINT_SECONDS
    runner.CHECKPOINT_SECONDS = checkpoint
    sys.addaudithook(hook)  # hooks cannot be removed: it counts only under ``out``
    try:
        cpu = time.process_time()
        run(load_config(config_path), out, cache=False)
        cpu = time.process_time() - cpu
    finally:
        runner.CHECKPOINT_SECONDS = saved
        root = "\0"  # later runs are not counted
    return {**counts, "cpu_s": cpu}


def _same_files(a: Path, b: Path) -> list[str]:
    differ = []

    def files(root: Path) -> set[Path]:
        return {
            p.relative_to(root) for p in root.rglob("*") if p.is_file() and ".cache" not in p.parts
        }

    names = sorted(files(a) | files(b))
    for name in names:
        if name.name in TIMED:
            continue
        pa, pb = a / name, b / name
        if not (pa.is_file() and pb.is_file()) or pa.read_bytes() != pb.read_bytes():
            differ.append(str(name))
    return differ


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=ROOT / "examples" / "config.toml")
    parser.add_argument("--out", type=Path, help="also write the table here (Markdown)")
    args = parser.parse_args(argv)
    from threadpoolctl import threadpool_limits

    from moweights.pipeline import runner

    threadpool_limits(1)
    with tempfile.TemporaryDirectory() as tmp:
        every = _measure(args.config, Path(tmp) / "every", 0.0)
        shipped = _measure(args.config, Path(tmp) / "shipped", runner.CHECKPOINT_SECONDS)
        differ = _same_files(Path(tmp) / "every", Path(tmp) / "shipped")
    rows = [
        ("after every sub-step (CHECKPOINT_SECONDS = 0)", every),
        (f"as shipped (CHECKPOINT_SECONDS = {runner.CHECKPOINT_SECONDS:g})", shipped),
    ]
    lines = [
        f"Default demo ({args.config.name}), step cache off, one BLAS thread.",
        "",
        "| folder written | file writes | renames | CPU s |",
        "|---|---|---|---|",
        *[f"| {label} | {r['writes']} | {r['renames']} | {r['cpu_s']:.1f} |" for label, r in rows],
        "",
        f"CPU ratio shipped / every sub-step: {shipped['cpu_s'] / every['cpu_s']:.2f}; "
        f"final files that differ (timing fields aside): {differ or 'none'}",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return {"every": every, "shipped": shipped, "differ": differ, "rows": json.dumps(rows)}


if __name__ == "__main__":
    main()
