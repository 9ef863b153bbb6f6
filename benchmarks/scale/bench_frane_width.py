"""FRANe on wide data: CPU seconds and peak memory as the features grow (issue 17).

Per width (200 samples x 1,000 ... 20,000 features, ``_common.make_clusters``: clusters in
20 features, noise elsewhere) three implementations run, each in its own child process:

* ``new``: ``rankers.unsupervised.frane`` as it is in this tree (defaults: |r|, 100
  geometric thresholds);
* ``old``: the module as of commit 9b10018 (``git show 9b10018:rankers/...`` written to a
  temporary module), the implementation before the streamed rewrite; skipped where its
  projected peak (112 bytes a feature pair) exceeds ``--old-max-gb``;
* ``floor``: plain numpy doing the least any exact FRANe must do: the correlations of all
  pairs (one GEMM, in tiles into the condensed vector) and sorting the pairs once.

Optionally (``--peer``) PyPI ``frane`` 0.1.0 (``metric="correlation"``, against ours with
``similarity="correlation"``) runs in its own environment (``--peer-python``, made as
``benchmarks/speed/bench_frane.py`` says) at the widths up to ``--peer-max``.

Times are CPU seconds of ``fit`` (user + system in the child: ``_common.cpu_seconds``,
the peer's ``time.process_time``; BLAS on one thread: ``OPENBLAS_NUM_THREADS=1`` etc.
are set for the children); memory is the child's peak resident set (``ru_maxrss``, which
includes the interpreter and the data, ~100 MB). Ratios: old / new and new / floor
(time), and whether new and old rank identically.

Examples::

    python -m benchmarks.scale.bench_frane_width --quick
    python -m benchmarks.scale.bench_frane_width --peer --peer-max 5000 \\
        --out benchmarks/results/frane_width.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from benchmarks._common import (
    FRANE_PEER_PRELUDE,
    cpu_seconds,
    make_clusters,
    module_at,
    rows_markdown,
    run_json_child,
)

ROOT = Path(__file__).resolve().parents[2]
OLD_COMMIT = "9b10018"

_PEER = (
    FRANE_PEER_PRELUDE
    + r"""start = time.process_time()
scores = frane.FRANe(metric="correlation").fit(X.copy()).feature_importances_
seconds = time.process_time() - start
np.save(sys.argv[2], np.asarray(scores, dtype=float))
print(json.dumps({"seconds": seconds,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""
)


def floor(X: np.ndarray) -> np.ndarray:
    """All pairs' 1 - |r| (one GEMM, in tiles of 2^23 entries) sorted once."""
    Z = X - X.mean(axis=0)
    Z /= np.linalg.norm(Z, axis=0)
    n = Z.shape[1]
    d = np.empty(n * (n - 1) // 2)
    pos, block = 0, max(1, 2**23 // n)
    for a in range(0, n - 1, block):
        b = min(a + block, n - 1)
        tile = 1.0 - np.abs(Z[:, a:b].T @ Z[:, a:])
        for j in range(a, b):
            row = tile[j - a, j - a + 1 :]
            d[pos : pos + row.size] = row
            pos += row.size
    d.sort()
    return d


def _old_module():
    return module_at(OLD_COMMIT, "rankers/unsupervised/frane.py", "frane_old")


def run_cell(impl: str, m: int, n: int, similarity: str, ranking_file: str) -> dict:
    """One measurement, in this (child) process: CPU seconds of fit and peak RSS."""
    import resource

    X, _ = make_clusters(m, n, seed=0)
    if impl == "floor":
        start = cpu_seconds()
        floor(X)
        seconds = cpu_seconds() - start
        ranking = None
    else:
        if impl == "new":
            from rankers.unsupervised.frane import FRANeRanker
        else:
            FRANeRanker = _old_module().FRANeRanker
        est = FRANeRanker(similarity=similarity)
        start = cpu_seconds()
        est.fit(X)
        seconds = cpu_seconds() - start
        ranking = est.ranking_
        if ranking_file != "-":
            np.save(ranking_file, est.scores_)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {"seconds": seconds, "peak_mb": peak}
    if ranking is not None:
        out["ranking"] = ranking.tolist()
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="200 x {500, 1000}: a smoke run")
    parser.add_argument("--widths", type=int, nargs="+", default=[1000, 2000, 5000, 10000, 20000])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--old-max-gb", type=float, default=4.0,
                        help="skip the old code where its projected peak exceeds this")  # fmt: skip
    parser.add_argument("--peer", action="store_true", help="also run PyPI frane 0.1.0")
    parser.add_argument("--peer-python", default="/work/venv-frane-peer/bin/python")
    parser.add_argument("--peer-max", type=int, default=5000)
    parser.add_argument("--budget", type=float, default=1800.0, help="seconds per cell")
    parser.add_argument("--out", type=Path, help="also write the table (markdown) here")
    parser.add_argument("--cell", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.cell:
        impl, m, n, similarity, ranking_file = args.cell
        print(json.dumps(run_cell(impl, int(m), int(n), similarity, ranking_file)))
        return
    widths = [500, 1000] if args.quick else args.widths
    m = args.samples
    me = [sys.executable, "-m", __spec__.name, "--cell"]
    tmp = Path(tempfile.mkdtemp())
    rows = []
    for n in widths:
        cells = {}
        for impl in ("new", "old", "floor"):
            projected_gb = 112 * n * (n - 1) / 2 / 1e9
            if impl == "old" and projected_gb > args.old_max_gb:
                cells[impl] = {"error": f"skipped (projected {projected_gb:.0f} GB)"}
                continue
            cells[impl] = run_json_child(
                [*me, impl, str(m), str(n), "abs_correlation", "-"], args.budget
            )
        new, old = cells["new"], cells["old"]
        row = {"features": n}
        for name, c in cells.items():
            row[f"{name} s"] = c.get("seconds", np.nan)
            row[f"{name} MB"] = c.get("peak_mb", np.nan)
            if "error" in c:
                row.setdefault("notes", []).append(f"{name}: {c['error']}")
        row["old/new"] = row["old s"] / row["new s"]
        row["new/floor"] = row["new s"] / row["floor s"]
        row["same ranking"] = new.get("ranking") == old.get("ranking") if "ranking" in old else "-"
        if args.peer and n <= args.peer_max and Path(args.peer_python).exists():
            X, _ = make_clusters(m, n, seed=0)
            np.save(tmp / "X.npy", X)
            script = tmp / "peer.py"
            script.write_text(_PEER)
            peer = run_json_child([args.peer_python, str(script), str(tmp / "X.npy"),
                                   str(tmp / "peer.npy")], args.budget)  # fmt: skip
            ours = run_json_child(
                [*me, "new", str(m), str(n), "correlation", str(tmp / "ours.npy")], args.budget
            )
            row["peer s"] = peer.get("seconds", np.nan)
            row["new(r) s"] = ours.get("seconds", np.nan)
            row["peer/new(r)"] = row["peer s"] / row["new(r) s"]
            if "error" in peer:
                row.setdefault("notes", []).append(f"peer: {peer['error']}")
            elif "error" not in ours:
                from scipy.stats import spearmanr

                rho = spearmanr(np.load(tmp / "peer.npy"), np.load(tmp / "ours.npy"))[0]
                row["peer rho"] = rho
        row["notes"] = "; ".join(row.get("notes", []))
        rows.append(row)
        print(json.dumps(row, default=float), flush=True)
    table = rows_markdown(rows)
    print(table)
    if args.out:
        versions = {"python": platform.python_version(), "numpy": np.__version__}
        import scipy

        versions["scipy"] = scipy.__version__
        commit = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True, check=False,
        ).stdout.strip()  # fmt: skip
        command = f"python -m {__spec__.name} " + " ".join(sys.argv[1:] if argv is None else argv)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(
            f"# FRANe width benchmark\n\nCommand: `{command}` (BLAS on one thread)\n\n"
            f"Tree: {commit}; old = {OLD_COMMIT}; {versions}; {platform.platform()}; "
            f"{os.cpu_count()} CPUs (shared)\n\n{table}\n"
        )


if __name__ == "__main__":
    main()
