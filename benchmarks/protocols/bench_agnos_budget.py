"""AgnoS-S: how far a smaller training budget moves the ranking, on real data.

AgnoS-S's cost is its training budget (``epochs="auto"``: about 3,000 Adam steps whatever
the number of samples); a default below it needs evidence that the ranking hardly moves.
This script measures it on scikit-feature data sets. For each one:

* the noise floor: the default budget with two seeds, Spearman's rho of their scores and
  the overlap of their top-k sets (a smaller budget cannot be asked to agree with the
  full training better than two full trainings agree with each other);
* every budget in ``--steps``: seed 0 against the default budget's seed 0 (rho, top-k
  overlap), and against seed 1 (so it is compared with what the seed alone changes);
* CPU seconds of each fit (one BLAS thread).

Example::

    python -m benchmarks.protocols.bench_agnos_budget --datasets colon GLIOMA Yale --steps 300 1000
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from scipy.stats import spearmanr
from threadpoolctl import threadpool_limits

from benchmarks._common import cpu_seconds, load_skfeature
from benchmarks._protocol import to_markdown
from rankers.unsupervised.agnos import AgnosSRanker


def fit(X: np.ndarray, steps: int | None, seed: int) -> tuple[np.ndarray, float, int]:
    """Scores, CPU seconds and optimiser steps of one fit (``steps`` None: the default)."""
    est = AgnosSRanker(random_state=seed)
    if steps is not None:
        per_epoch = -(-X.shape[0] // est.batch_size)
        est.set_params(epochs=max(1, -(-steps // per_epoch)))
    start = cpu_seconds()
    est.fit(X)
    return est.scores_, cpu_seconds() - start, est.n_steps_


def top_overlap(a: np.ndarray, b: np.ndarray, k: int) -> float:
    """Share of the k best features of ``a`` that are among the k best of ``b``."""
    top_a = np.argsort(-a, kind="stable")[:k]
    top_b = np.argsort(-b, kind="stable")[:k]
    return len(np.intersect1d(top_a, top_b)) / k


def compare(name: str, budgets: list[int], k: int) -> list[dict]:
    data = load_skfeature(name)
    if data is None:
        print(f"{name}: not found, skipped")
        return []
    X = data[0]
    full = [fit(X, None, seed) for seed in (0, 1)]
    rows = []

    def row(label, scores, seconds, steps):
        return {
            "data": f"{name} {X.shape[0]}x{X.shape[1]}",
            "budget": label,
            "steps": steps,
            "CPU s": seconds,
            "rho vs default seed 0": spearmanr(scores, full[0][0])[0],
            "rho vs default seed 1": spearmanr(scores, full[1][0])[0],
            f"top-{k} overlap vs default seed 0": top_overlap(scores, full[0][0], k),
        }

    rows.append(row("default, seed 1", *full[1]))
    for steps in budgets:
        rows.append(row(f"{steps} steps, seed 0", *fit(X, steps, 0)))
    rows.append(row("default, seed 0", *full[0]))
    return rows


def main(argv: list[str] | None = None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["colon", "GLIOMA", "Yale"])
    parser.add_argument("--steps", nargs="+", type=int, default=[300, 1000])
    parser.add_argument("--top", type=int, default=50, help="k of the top-k overlap")
    args = parser.parse_args(argv)
    with threadpool_limits(1):
        rows = [r for name in args.datasets for r in compare(name, args.steps, args.top)]
    table = pd.DataFrame(rows)
    print(to_markdown(table.round(3), index=False))
    return table


if __name__ == "__main__":
    main()
