"""The baseline rankers against their peers, in one run and one table (issue 6).

Same data for both sides: digits (1,797 x 64, constant pixels dropped) and seeded
synthetic 200 x 5,000 and 2,000 x 500 matrices (Gaussian clusters in a few features).

* SPEC, MCFS, NDFS and the Laplacian score against scikit-feature
  (``skfeature-chappers``), the peer fed our graph and settings ("peer s", "rho"); the
  peer's own default call is timed too ("peer default s"). MCFS is shown twice: our
  default (the end of a full LARS path computed as the least-squares fit) and
  ``solver="lars"`` (scikit-feature's computation). Details and the known differences:
  ``micro/bench_spectral.py``.
* ReliefF (k = 10, all instances) against skrebate's ReliefF (all features continuous):
  ``micro/bench_relief.py``.
* RReliefF alone (no peer implements it) and SVM-RFE against scikit-learn's
  ``RFE(SVC(kernel="linear"))`` (the straightforward loop; no peer package has SVM-RFE).

Every peer call runs in a child process under ``--budget`` seconds; one over budget is
reported as such with our numbers alone. BLAS runs on one thread for both sides.
"speed-up" = peer seconds / ours (best of ``--repeat`` for ours, one run for the peer);
MB = peak traced memory (tracemalloc). ``--out FILE.md`` also writes the table.

Run: ``python -m benchmarks.speed.bench_baselines`` (``--quick`` for a smoke test).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from benchmarks._common import print_table
from benchmarks._protocol import to_markdown, versions

# the rows come from the per-family scripts beside this one (one definition of each comparison)
from benchmarks.speed import bench_relief, bench_spectral

DATA = ["digits", "blobs200x5000", "blobs2000x500"]
COLUMNS = [
    "method",
    "data",
    "peer",
    "ours s",
    "peer s",
    "speed-up",
    "ours MB",
    "peer MB",
    "peer default s",
    "rho",
    "note",
]


def spectral_rows(data, repeat, budget, threads, methods=None) -> list[dict]:
    methods = list(bench_spectral.METHODS) if methods is None else methods
    rows = bench_spectral.compare(data, methods, repeat, budget, True, threads)
    out = []
    for r in rows:
        over = isinstance(r["peer s"], str)
        out.append(
            {
                "method": r["method"],
                "data": r["data"],
                "peer": "scikit-feature",
                "ours s": r["ours s"],
                "peer s": np.nan if over else r["peer s"],
                "speed-up": r["speed-up"],
                "ours MB": r["ours MB"],
                "peer MB": r["peer MB"],
                "peer default s": r["peer default s"],
                "rho": r["rho same"],
                "note": f"peer over the {r['peer s'][1:]} s budget" if over else "",
            }
        )
    return out


def relief_rows(quick, repeat, budget) -> list[dict]:
    sets = bench_relief.data_sets(quick)[:3]
    out = []
    for r in bench_relief.relief_rows(sets, budget, True, repeat):
        out.append(
            {
                "method": "relieff",
                "data": f"{r['data']} {r['shape']}",
                "peer": "skrebate",
                "ours s": r["ours_s"],
                "peer s": r["skrebate_s"],
                "speed-up": r["speedup"],
                "ours MB": r["ours_MB"],
                "peer MB": r["skrebate_MB"],
                "rho": r.get("spearman", np.nan),
                "note": r.get("note", ""),
            }
        )
    for r in bench_relief.rrelieff_rows(sets, repeat):
        out.append(
            {
                "method": "rrelieff",
                "data": f"{r['data']} {r['shape']}",
                "peer": "none",
                "ours s": r["ours_s"],
                "ours MB": r["ours_MB"],
                "note": "no peer implements RReliefF",
            }
        )
    for r in bench_relief.svm_rfe_rows(quick, repeat):
        out.append(
            {
                "method": "svm_rfe",
                "data": f"synthetic {r['shape']}",
                "peer": "sklearn RFE",
                "ours s": r["ours_s"],
                "peer s": r["sklearn_RFE_s"],
                "speed-up": r["speedup"],
                "ours MB": r["ours_MB"],
                "note": "same ranking" if r["same_ranking"] else "rankings differ",
            }
        )
    return out


def _provenance(argv) -> str:
    args = sys.argv[1:] if argv is None else list(argv)
    command = " ".join(["python -m", __spec__.name, *args])
    packages = ["skfeature-chappers", "skrebate"]
    found = versions() | {p: _version(p) for p in packages}
    listed = ", ".join(f"{k} {v}" for k, v in found.items())
    return f"Command: `{command}` (BLAS 1 thread)\n\nVersions: {listed}\n\n"


def _version(package: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "absent"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="timing runs of ours (best of)")
    parser.add_argument("--budget", type=float, default=300.0, help="seconds per peer call")
    parser.add_argument("--quick", action="store_true", help="small data (smoke test)")
    parser.add_argument("--out", type=Path, help="also write the table as markdown")
    parser.add_argument(
        "--only",
        nargs="+",
        choices=bench_spectral.METHODS,
        help="only these spectral methods (no Relief / SVM-RFE rows)",
    )
    parser.add_argument("--data", nargs="+", choices=DATA, help="only these data sets")
    args = parser.parse_args(argv)
    threadpool_limits(1)
    data, repeat, budget = DATA, args.repeat, args.budget
    if args.data:
        data = args.data
    if args.quick:
        data, repeat, budget = ["blobs150x40"], 1, 60.0

    rows = spectral_rows(data, repeat, budget, 1, args.only)
    if not args.only:
        rows += relief_rows(args.quick, repeat, budget)
    table = pd.DataFrame(rows).reindex(columns=COLUMNS)
    print_table(table.to_dict("records"), "Baselines vs peers (peer s / ours s = speed-up)")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(_provenance(argv) + to_markdown(table, index=False) + "\n")


if __name__ == "__main__":
    main()
