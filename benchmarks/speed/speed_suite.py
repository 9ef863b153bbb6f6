"""Speed suite: every registered ranker on fixed synthetic shapes, the peers side by side.

The runner of the classes in ``benchmarks/speed/suite.py`` (asv's shape; ``asv run`` runs
them too) without asv: shapes (rows x features) small 200 x 100, medium 1,000 x 500, wide
100 x 5,000 of seeded Gaussian clusters (5 classes shift the first 20 features, the others
are noise, everything shifted to positive values; the class is the label of supervised
rankers and the ``n_clusters`` of MCFS and NDFS). Each (shape, ranker) is one cell, in a
child process under ``--budget`` and cached (``benchmarks/_protocol.py``): the class's
``setup`` (one untimed fit on a 60 x 30 sample pays the child's lazy imports), then its
``run`` timed (best of ``--repeat``) and its peak memory traced
(``benchmarks._common.measure``: tracemalloc sees NumPy and Python allocations, not BLAS
scratch).

Peers run on the same data in their own cells, where they implement the same method:

* scikit-feature (``skfeature-chappers``): ``lap_score``, ``SPEC``, ``MCFS``, ``NDFS`` as
  a user calls them (their defaults; their graphs and kernels differ from ours, see
  ``benchmarks/speed/bench_spectral.py`` for the aligned comparison);
* skrebate ``ReliefF`` (k = 10, every feature continuous);
* PyPI ``frane`` 0.1.0 (``metric="correlation"``) against ours with
  ``similarity="correlation"``, run by the Python of ``--frane-python`` (default
  /tmp/frane_venv, made as ``benchmarks/speed/bench_frane.py`` says; skipped when absent).

The table gives per shape and ranker our time and memory, the peer's, the time ratio
(peer / ours, > 1 = we are faster) and Spearman's rho between the two score vectors.

Examples::

    python -m benchmarks.speed.speed_suite --budget 300
    python -m benchmarks.speed.speed_suite --shapes small --rankers variance laplacian relieff
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks._common import FRANE_PEER_PRELUDE, make_clusters, measure
from benchmarks._protocol import (
    Cell,
    add_run_arguments,
    code_fingerprint,
    failed_cells_markdown,
    run_cells,
    run_options,
    status_table,
    to_markdown,
    versions,
    write_table,
)
from benchmarks.speed.suite import (
    N_CLASSES,
    PEERS,
    SHAPES,
    peer_fit,
    prepare,
    ranker_fit,
    ranker_params,
)

PROTOCOL = "speed"

_FRANE_PEER = (
    FRANE_PEER_PRELUDE
    + r"""best = float("inf")
for _ in range(int(sys.argv[3])):
    start = time.perf_counter()
    scores = frane.FRANe(metric="correlation").fit(X.copy()).feature_importances_
    best = min(best, time.perf_counter() - start)
tracemalloc.start()
frane.FRANe(metric="correlation").fit(X.copy())
peak = tracemalloc.get_traced_memory()[1] / 2**20
tracemalloc.stop()
np.save(sys.argv[2], np.asarray(scores, dtype=float))
print(json.dumps({"seconds": best, "peak_mb": peak}))
"""
)


def _frane_peer(python: str, X: np.ndarray, repeat: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        data, out = Path(tmp) / "X.npy", Path(tmp) / "scores.npy"
        np.save(data, X)
        done = subprocess.run(
            [python, "-c", _FRANE_PEER, str(data), str(out), str(repeat)],
            capture_output=True,
            text=True,
            check=True,
        )
        info = json.loads(done.stdout.strip().splitlines()[-1])
        return info | {"scores": np.load(out).tolist()}


def compute_cell(payload: dict) -> dict:
    """Time and trace one ranker (ours or a peer) on one shape (runs in the cell's child):
    the suite's ``RankerFit`` / ``PeerFit`` set-up, ``run`` measured by ``measure``."""
    s = payload["settings"]
    kind, _, name = payload["ranker"].partition(":")
    if kind == "peer" and name == "frane 0.1.0":
        X, _ = make_clusters(*s["shape"], seed=s["seed"], n_classes=N_CLASSES)
        return _frane_peer(payload["frane_python"], X, s["repeat"])
    shape = next(k for k, v in SHAPES.items() if list(v) == list(s["shape"]))
    make = peer_fit(name) if kind == "peer" else ranker_fit(s["ranker"], s["params"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = measure(prepare(make, shape, seed=s["seed"]), repeat=s["repeat"], memory=True)
    return {"seconds": result.seconds, "peak_mb": result.peak_mb, "scores": result.result}


def make_cells(args) -> tuple[list[Cell], list[str]]:
    """Cells for ours and the peers, and notes on peers that cannot run here."""

    cells, notes = [], []
    peers = []
    for peer, (ours, extra, module) in PEERS.items():
        if ours not in args.rankers:
            continue
        if module and importlib.util.find_spec(module) is None:
            notes.append(f"{peer}: skipped, `{module}` is not installed")
        elif module is None and not Path(args.frane_python).is_file():
            notes.append(f"{peer}: skipped, {args.frane_python} is absent")
        else:
            peers.append((peer, ours, extra))
    for shape in args.shapes:
        base = {"shape": list(SHAPES[shape]), "seed": args.seed, "repeat": args.repeat}
        base["warmup"] = True
        for name in args.rankers:
            settings = base | {"ranker": name, "params": ranker_params(name, args.seed)}
            settings["code"] = code_fingerprint([name])
            cells.append(Cell(PROTOCOL, shape, f"ours:{name}", settings))
        for peer, ours, extra in peers:
            if extra:  # ours with the peer's settings, in its own cell
                settings = base | {"ranker": ours, "params": extra}
                settings["code"] = code_fingerprint([ours])
                label = f"ours:{ours}(" + ",".join(f"{k}={v}" for k, v in extra.items()) + ")"
                cells.append(Cell(PROTOCOL, shape, label, settings))
            settings = base | {"peer": peer}
            payload = {"frane_python": args.frane_python} if peer.startswith("frane") else {}
            cells.append(Cell(PROTOCOL, shape, f"peer:{peer}", settings, payload))
    return cells, notes


def build_table(records: list[dict]) -> pd.DataFrame:
    """One row per (shape, our ranker), with its peer's numbers when there is one."""
    from scipy.stats import spearmanr

    by = {(r["dataset"], r["ranker"]): r for r in records}
    rows = []
    for r in records:
        kind, _, name = r["ranker"].partition(":")
        if kind != "ours":
            continue
        m, n = r["settings"]["shape"]
        row = {"shape": f"{r['dataset']} {m}x{n}", "ranker": name}
        row |= _numbers(r, "ours")
        peer = next((p for p, (o, extra, _) in PEERS.items() if _label(o, extra) == name), None)
        peer_rec = by.get((r["dataset"], f"peer:{peer}")) if peer else None
        if peer_rec is not None:
            row |= {"peer": peer} | _numbers(peer_rec, "peer")
            if r["status"] == peer_rec["status"] == "ok":
                row["time ratio"] = peer_rec["result"]["seconds"] / r["result"]["seconds"]
                rho = spearmanr(r["result"]["scores"], peer_rec["result"]["scores"])[0]
                row["spearman"] = float(rho)
        rows.append(row)
    cols = ["shape", "ranker", "ours s", "ours MB", "peer", "peer s", "peer MB"]
    table = pd.DataFrame(rows).reindex(columns=[*cols, "time ratio", "spearman"])
    # shapes in their fixed order, a ranker's peer-aligned row right after its default one
    position = table["shape"].str.split().str[0].map(list(SHAPES).index)
    return (
        table.assign(_pos=position)
        .sort_values(["_pos", "ranker"], kind="stable")
        .drop(columns="_pos")
        .reset_index(drop=True)
    )


def _label(ours: str, extra: dict) -> str:
    if not extra:
        return ours
    return f"{ours}(" + ",".join(f"{k}={v}" for k, v in extra.items()) + ")"


def _numbers(record: dict, who: str) -> dict:
    if record["status"] != "ok":
        what = "timeout" if record["status"] == "timeout" else "error"
        return {f"{who} s": what, f"{who} MB": np.nan}
    res = record["result"]
    return {f"{who} s": res["seconds"], f"{who} MB": res["peak_mb"]}


def main(argv: list[str] | None = None) -> dict:
    import rankers

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="+", choices=sorted(SHAPES), default=list(SHAPES))
    parser.add_argument("--rankers", nargs="+", help="default: every registered ranker")
    parser.add_argument("--repeat", type=int, default=1, help="timing repeats (best is kept)")
    parser.add_argument("--frane-python", default="/tmp/frane_venv/bin/python")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/speed"))
    add_run_arguments(parser, budget=300.0)
    args = parser.parse_args(argv)
    args.rankers = args.rankers or sorted(rankers.available()["name"])
    out = args.out
    out.mkdir(parents=True, exist_ok=True)

    cells, notes = make_cells(args)
    from rankers.registry import broken

    notes += [
        f"ranker {name} not timed: its plugin failed to load ({why})"
        for name, why in broken().items()
    ]
    records = run_cells(cells, script=__spec__.name, **run_options(args))
    table = build_table(records)
    write_table(table, out, "speed", index=False)
    status = status_table(records)
    status.to_csv(out / "cells.csv", index=False)
    command = f"python -m {__spec__.name} " + " ".join(sys.argv[1:] if argv is None else argv)
    lines = [
        "# Speed suite: every ranker on synthetic shapes, peers side by side",
        "",
        f"Command: `{command}`",
        "",
        f"Seconds: best of {args.repeat} fit(s); MB: peak traced memory (tracemalloc); "
        f"{args.threads or 'default'} BLAS thread(s) per cell; budget {args.budget:g} s per "
        "cell. time ratio = peer s / ours s (> 1: ours is faster); spearman = rank "
        "correlation of the two score vectors (peers at their defaults, see the docstring).",
        "",
        to_markdown(table, index=False),
        "",
        "Not run: " + ("; ".join(notes) if notes else "nothing") + ".",
        "",
        *failed_cells_markdown(status),
    ]
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    (out / "run.json").write_text(
        json.dumps({"command": command, "versions": versions(), "notes": notes}, indent=2)
    )
    print(to_markdown(table, index=False))
    return {"table": table, "status": status, "notes": notes}


if __name__ == "__main__":
    main()
