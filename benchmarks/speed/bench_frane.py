"""FRANe against the reference implementation, PyPI ``frane`` 0.1.0: agreement and speed.

Both get the same data and the same settings: 100 geometric thresholds, average degree
>= 1, damping 0.85. The reference's ``metric="correlation"`` (dissimilarity 1 - r) is our
``similarity="correlation"``, its ``metric="euclidean"`` our ``similarity="euclidean",
feature_scaling="norm"``. Printed per data set: Spearman's rho between the two score
vectors, Kendall's tau, how many of the reference's top 20 features are in ours, the
largest difference of the scores (ours sum to 1; the reference's are rescaled to sum to
1), the times and the speed ratio. Our default (``similarity="abs_correlation"``, |r|)
is compared as well, for information: it differs from the reference wherever features
correlate negatively.

How the peer runs: frane 0.1.0 fails on current scipy (its ``normalize`` calls
``metric(x, 0)`` with a scalar, which scipy >= 1.11 rejects), and no older scipy installs
on Python 3.11. It therefore runs, unchanged otherwise, in its own virtual environment
(``--peer-python``, default /tmp/frane_venv) with ``frane.frane.normalize`` replaced by
the one-line equivalent ``metric(x, zeros_like(x))``: for "correlation" that is NaN, so
the vector is left as it is (exactly what old scipy's broadcasting did); for the
distances it is the vector's norm. Create that environment with::

    python3.11 -m venv /tmp/frane_venv
    /tmp/frane_venv/bin/pip install frane==0.1.0 "numpy<2" "scipy==1.11.1" tqdm

The peer runs in a child process (its import configures the root logger, and it writes
into the array it is given); its time covers ``fit`` only.

Run: ``python -m benchmarks.speed.bench_frane`` (``--quick`` for a smoke test;
``--datasets colon ALLAML`` adds real data from ../shared/data/skfeature when present —
the reference needs minutes per thousand features there).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau, spearmanr

from benchmarks._common import FRANE_PEER_PRELUDE, load_skfeature, measure, print_table
from rankers.unsupervised.frane import FRANeRanker

_PEER = (
    FRANE_PEER_PRELUDE
    + r"""start = time.perf_counter()
est = frane.FRANe(metric=sys.argv[2]).fit(X.copy())
seconds = time.perf_counter() - start
np.save(sys.argv[3], np.asarray(est.feature_importances_, dtype=float))
print(json.dumps({"seconds": seconds, "python": sys.version.split()[0],
                  "numpy": np.__version__, "scipy": scipy.__version__,
                  "frane": frane.__version__}))
"""
)


def _synthetic(m: int, n: int, seed: int = 0) -> np.ndarray:
    """Groups of features around a few latent factors (some negatively), plus noise."""
    rng = np.random.default_rng(seed)
    n_groups = max(1, n // 20)
    latent = rng.normal(size=(m, n_groups))
    group = rng.integers(0, n_groups, size=n)
    sign = rng.choice([-1.0, 1.0], size=n, p=[0.2, 0.8])
    noise = rng.uniform(0.3, 3.0, size=n)
    X = sign * latent[:, group] + noise * rng.normal(size=(m, n))
    X[:, rng.random(n) < 0.2] = rng.normal(size=(m, 1))  # some features duplicate one
    return X + rng.normal(size=(m, n)) * 1e-3


def _run_peer(python: str, X: np.ndarray, metric: str, timeout: float):
    with tempfile.TemporaryDirectory() as tmp:
        data, out = Path(tmp) / "X.npy", Path(tmp) / "scores.npy"
        np.save(data, X)
        done = subprocess.run(
            [python, "-c", _PEER, str(data), metric, str(out)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        )
        info = json.loads(done.stdout.strip().splitlines()[-1])
        return np.load(out), info


def _compare(name, X, ours_params, metric, peer, args) -> dict:
    ours = measure(lambda: FRANeRanker(**ours_params).fit(X), repeat=args.repeat)
    row = {"data": name, "m x n": f"{X.shape[0]} x {X.shape[1]}", "ours": str(ours_params)}
    row["ours s"] = ours.seconds
    if peer is None:
        row["peer"] = "not run"
        return row
    ref, info = peer
    ref_norm = ref / ref.sum()
    top = min(20, ref.size)
    ref_top = set(np.lexsort((np.arange(ref.size), -ref))[:top].tolist())
    row.update(
        {
            "peer metric": metric,
            "peer s": info["seconds"],
            "speed-up": info["seconds"] / ours.seconds,
            "spearman": spearmanr(ref, ours.result.scores_).statistic,
            "kendall": kendalltau(ref, ours.result.scores_).statistic,
            f"top-{top} shared": len(ref_top & set(ours.result.ranking_[:top].tolist())),
            "max |diff|": float(np.abs(ref_norm - ours.result.scores_).max()),
        }
    )
    return row


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer-python", default="/tmp/frane_venv/bin/python")
    parser.add_argument(
        "--synthetic",
        nargs="+",
        default=["100x1000"],
        help="synthetic sizes as MxN (default 100x1000)",
    )
    parser.add_argument(
        "--datasets", nargs="*", default=["colon"], help="scikit-feature sets (default colon)"
    )
    parser.add_argument("--repeat", type=int, default=1, help="timing repeats of ours")
    parser.add_argument("--timeout", type=float, default=3600.0, help="peer time budget (s)")
    parser.add_argument("--quick", action="store_true", help="one small synthetic set only")
    args = parser.parse_args(argv)

    sets = []
    for size in ["60x200"] if args.quick else args.synthetic:
        m, n = (int(v) for v in size.lower().split("x"))
        sets.append((f"synthetic {size}", _synthetic(m, n)))
    for name in [] if args.quick else args.datasets:
        loaded = load_skfeature(name)
        if loaded is None:
            print(f"({name} not found under ../shared/data/skfeature; skipped)")
            continue
        sets.append((name, loaded[0]))

    # the peer's metric and, compared with it, our settings (the first one matches it)
    configs = [("correlation", [{"similarity": "correlation"}, {}])]
    rows, info = [], None
    for name, X in sets:
        X = X[:, np.ptp(X, axis=0) > 0]  # the reference would replace these by noise
        extra = [("euclidean", [{"similarity": "euclidean", "feature_scaling": "norm"}])]
        for metric, settings in configs + (extra if name.startswith("synthetic") else []):
            try:
                peer = _run_peer(args.peer_python, X, metric, args.timeout)
                info = peer[1]
            except (OSError, subprocess.SubprocessError) as exc:
                print(f"(peer not run on {name}, {metric}: {type(exc).__name__})")
                peer = None
            rows.extend(_compare(name, X, params, metric, peer, args) for params in settings)
    print_table(rows, title="FRANe: ours vs frane 0.1.0 (same data, I = 100, ē = 1, δ = 0.85)")
    if info is None:
        print(f"\nThe peer did not run: create {args.peer_python} as the module docstring says.")
    else:
        print(
            f"\nPeer: frane {info['frane']} on Python {info['python']}, numpy {info['numpy']}, "
            f"scipy {info['scipy']} ({args.peer_python}), in a child process, with "
            "frane.frane.normalize calling metric(x, zeros_like(x)) instead of metric(x, 0)."
        )


if __name__ == "__main__":
    main()
