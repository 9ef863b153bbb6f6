"""The §4.3 experiment of the error-curve paper: ECA against the noise in a ranking.

On the synthetic "combined" data (1,000 x 100, Table 2), for each noise level theta,
``--n-rankings`` noisy versions of the ground-truth ranking (§4.2: a proportion theta of the
features gets a random relevance) are scored with FFA/RFA curves; their mean curves
``E[FFA]_theta``, ``E[RFA]_theta`` are compared with the ground truth's curves by the ECA
(Eq. 4) under the four weightings: ECA(GT, theta) > 0, growing as the noise grows. The
baseline is the rank distance ``dist = 1 - mean Spearman rho(GT, R_theta)``; the last
column is Pearson's correlation of each row with ``dist`` across the noise levels (the
paper's Table 3). An extra row gives each level's ECA against a random ranking (the §3.3
shortcut, uniform weights), which should fall towards 0 as theta -> 1.

All curves share one seed, hence the same folds (paired points). The paper's settings
(100 rankings, every i, 10 folds, SVM with a quadratic kernel and C = 0.1) cost about
7 x 100 x 199 x 10 SVM fits, days on two cores; ``--quick`` scales down (10 rankings, every
10th subset size, 5 folds) and finishes in minutes. Nothing is tuned to the paper's numbers.

    python examples/eca_noise_experiment.py --quick [--n-jobs 2] [--plot fig2.png]
    python examples/eca_noise_experiment.py --n-rankings 100 --grid 1 --cv 10   # the paper
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from aggregation.compare import spearman
from aggregation.evaluation import WEIGHTINGS, eca, ffa_rfa, ffa_rfa_many
from moweights.data import make_error_curve_data, noisy_rankings

THETAS = (0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0)


def mean_curve(curves: list[pd.DataFrame]) -> pd.DataFrame:
    """E[FFA]_theta and E[RFA]_theta: the point-wise mean of N curves (§4.2)."""
    stacked = pd.concat(curves)
    mean = stacked.groupby("i", sort=True)[["ffa", "rfa"]].mean().reset_index()
    mean.attrs.update(curves[0].attrs)
    return mean


def run(args) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    X, y, truth = make_error_curve_data(args.kind, n_samples=args.n_samples, random_state=args.seed)
    kw = dict(cv=args.cv, grid=args.grid, n_jobs=args.n_jobs, random_state=args.seed)
    gt = ffa_rfa(truth, X, y, **kw)
    rows, curves = {}, {"ground truth": gt}
    for t, theta in enumerate(args.thetas):
        start = time.perf_counter()
        noisy = noisy_rankings(truth, theta, args.n_rankings, random_state=args.seed + 1 + t)
        mean = mean_curve(ffa_rfa_many(noisy, X, y, **kw))
        curves[f"theta = {theta:g}"] = mean
        row = {"dist": 1 - np.mean([spearman(truth, r) for r in noisy])}
        row.update({f"ECA {w}": eca(gt, mean, weighting=w) for w in WEIGHTINGS})
        row["ECA vs random"] = eca(mean, "random")
        rows[f"{theta:g}"] = row
        print(f"  theta = {theta:<5g} done in {time.perf_counter() - start:6.1f} s", flush=True)
    table = pd.DataFrame(rows)
    rows_to_correlate = [r for r in table.index if r.startswith("ECA") and r != "ECA vs random"]
    table["corr."] = np.nan
    for r in rows_to_correlate:
        table.loc[r, "corr."] = np.corrcoef(
            table.loc["dist", list(rows)], table.loc[r, list(rows)]
        )[0, 1]
    return table, gt, curves


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", default="combined", choices=["single", "pair", "combined"])
    parser.add_argument("--n-samples", type=int, default=1000)
    parser.add_argument("--n-rankings", type=int, default=100, help="noisy rankings per theta")
    parser.add_argument("--grid", type=int, default=1, help="subset-size step (1 = every i)")
    parser.add_argument("--cv", type=int, default=10)
    parser.add_argument("--thetas", type=float, nargs="+", default=list(THETAS))
    parser.add_argument("--n-jobs", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="10 rankings, grid step 10, 5 folds")
    parser.add_argument("--plot", default=None, help="save FFA/RFA curves (Fig. 2) to this file")
    args = parser.parse_args(argv)
    if args.quick:
        args.n_rankings, args.grid, args.cv = 10, 10, 5

    print(
        f"{args.kind} data, {args.n_samples} samples; {args.n_rankings} noisy rankings per "
        f"theta, grid step {args.grid}, {args.cv}-fold CV, seed {args.seed}"
    )
    start = time.perf_counter()
    table, _, curves = run(args)
    print(f"\nECA(GT, theta) and rank distance ({time.perf_counter() - start:.0f} s in all)")
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.to_string(float_format=lambda v: f"{v:.4f}"))
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        from aggregation.plots import plot_error_curves

        fig = plot_error_curves(curves, as_error=True, title=f"{args.kind} data")
        fig.savefig(args.plot, dpi=120)
        print(f"\ncurves saved to {args.plot}")


if __name__ == "__main__":
    main()
