"""Generic rankings with uncertainty on three settings: how many blocks, and are they right?

For each setting the rankings are aggregated by the paper's generic ranking (tolerance 0)
and by the tolerant one at several tolerances (``aggregation.uncertainty``); ``s`` is the
number of blocks. Then the first block is judged the way the error-curve paper judges a
ranking: the cross-validated accuracy of an SVC (quadratic kernel, C = 0.1, 10 folds) on
the block's features (FFA at i = block size) against the expected accuracy of a random set
of the same size (``expected_curve``, 100 random rankings, its 5-95 % band).

1. The multiobjective weighting paper's distributed setting (§3, Table 3): NSGA-II
   weighting (C1, -C2, -C3) on five independent samples of its synthetic data
   (``make_weighting_benchmark``), aggregated across the samples; plus the bootstrap
   stability partition of one sample.
2. Breast cancer (569 x 30): the default config's five rankers (variance, laplacian,
   info_gain, chi2, random_forest) aggregated across methods; plus the stability of
   info_gain.
3. A federated gene example: a 240 x 2,000 matrix (20 shifted genes) split over 4 sites,
   each ranked by ``t_test`` (``rank_sites``), aggregated across sites.

Run: ``python -m benchmarks.robustness.bench_uncertainty`` (``--quick``: fewer generations,
resamples and features). ``--out FILE.md`` also writes the tables.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

import rankers
from aggregation import Ranking
from aggregation.evaluation import expected_curve, ffa_rfa
from aggregation.uncertainty import shared_top, stability_partition, tolerant_generic
from benchmarks._common import print_table
from benchmarks._protocol import to_markdown, versions

TOLERANCES = (0.0, 0.1, 0.2, 0.3, 0.4)


def first_block_vs_random(block, X, y, n_random, seed):
    """FFA of the block's features and the random expectation at the same size."""
    names = list(X.columns)
    rest = [f for f in names if f not in set(block)]
    order = Ranking.from_order([*block, *rest])
    k = len(block)
    if k >= len(names):
        return {"block size": k, "block acc": np.nan, "random acc": np.nan, "random 5-95%": ""}
    curve = ffa_rfa(order, X, y, grid=[k], random_state=seed)
    expected = expected_curve(X, y, n_random=n_random, grid=[k], random_state=seed)
    row = expected.iloc[0]
    return {
        "block size": k,
        "block acc": float(curve["ffa"].iloc[0]),
        "random acc": float(row["mean"]),
        "random 5-95%": f"{row['lower']:.3f}-{row['upper']:.3f}",
        "vs random": (
            "above its 95% band"
            if curve["ffa"].iloc[0] > row["upper"]
            else "above its mean"
            if curve["ffa"].iloc[0] > row["mean"]
            else "not above"
        ),
    }


def summarise(setting, rankings_, X, y, n_random, seed) -> list[dict]:
    rows = []
    for tol in TOLERANCES:
        g = tolerant_generic(rankings_, tol)
        row = {"setting": setting, "aggregate": f"generic, tolerance {tol:g}", "s": len(g)}
        if len(g) > 1:
            row.update(first_block_vs_random(list(g.blocks[0]), X, y, n_random, seed))
            row["first block"] = ", ".join(list(g.blocks[0])[:6]) + (
                " ..." if len(g.blocks[0]) > 6 else ""
            )
        rows.append(row)
    k, shared = shared_top(rankings_)
    rows.append({"setting": setting, "aggregate": f"shared top-{k}", "s": np.nan,
                 "first block": ", ".join(shared[:6]),
                 **first_block_vs_random(shared, X, y, n_random, seed)})  # fmt: skip
    return rows


def stability_rows(setting, ranker, X, y, n_boot, n_random, seed) -> list[dict]:
    rows = []
    for conf in (1.0, 0.9, 0.8):
        result = stability_partition(
            ranker, X, y, n_bootstrap=n_boot, confidence=conf, random_state=seed
        )
        block = list(result.partition.blocks[0])
        row = {"setting": setting, "aggregate": f"bootstrap {n_boot}, {conf:.0%} intervals",
               "s": result.s, "first block": ", ".join(block[:6]) + (" ..." if len(block) > 6
                                                                      else "")}  # fmt: skip
        if result.s > 1:
            row.update(first_block_vs_random(block, X, y, n_random, seed))
        rows.append(row)
    return rows


def weighting_setting(quick, seed):
    from moweights.data import make_weighting_benchmark
    from moweights.weighting import MOWeighting

    n_gen = 40 if quick else 250
    sites, first = [], None
    for site in range(5):
        X, y = make_weighting_benchmark(100, random_state=seed + site)
        est = MOWeighting(objectives=("C1", "-C2", "-C3"), n_gen=n_gen, random_state=seed)
        sites.append(Ranking.from_ranker(est.fit(X, y), method=f"sample {site + 1}"))
        first = first if first is not None else (X, y)
    return sites, first, MOWeighting(objectives=("C1", "-C2", "-C3"), n_gen=n_gen // 5)


def breast_cancer_setting(seed):
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    out = []
    for name in ("variance", "laplacian", "info_gain", "chi2", "random_forest"):
        est = rankers.get(name)
        if "random_state" in est.get_params():
            est.set_params(random_state=seed)
        needs = est.requires_y
        out.append(Ranking.from_ranker(est.fit(X, y if needs else None), method=name))
    return out, (X, y)


def gene_setting(quick, seed):
    from aggregation.federated import rank_sites

    rng = np.random.default_rng(seed)
    m, n = 240, 300 if quick else 2000
    y = rng.permutation(np.repeat([0, 1], m // 2))
    X = rng.normal(size=(m, n))
    X[:, :20] += 0.9 * y[:, None]
    frame = pd.DataFrame(X, columns=[f"gene{i}" for i in range(n)]).assign(label=y)
    sites = {f"site{s}": frame.iloc[s::4].reset_index(drop=True) for s in range(4)}
    result = rank_sites(sites, "t_test", target="label", aggregate=("generic",))
    return list(result.rankings.values()), (frame.drop(columns="label"), pd.Series(y))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="also write the tables (Markdown) to this file")
    args = parser.parse_args(argv)
    n_random = 20 if args.quick else 100
    n_boot = 10 if args.quick else 50
    rows = []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sites, (X1, y1), weighting = weighting_setting(args.quick, args.seed)
        rows += summarise("weighting, 5 samples", sites, X1, y1, n_random, args.seed)
        rows += stability_rows("weighting, sample 1", weighting, X1, y1, n_boot // 2, n_random,
                               args.seed)  # fmt: skip
        methods, (X2, y2) = breast_cancer_setting(args.seed)
        rows += summarise("breast cancer, 5 rankers", methods, X2, y2, n_random, args.seed)
        rows += stability_rows("breast cancer, info_gain", rankers.get("info_gain"), X2, y2,
                               n_boot, n_random, args.seed)  # fmt: skip
        genes, (X3, y3) = gene_setting(args.quick, args.seed)
        rows += summarise("genes over 4 sites (t_test)", genes, X3, y3, n_random, args.seed)
    columns = ["setting", "aggregate", "s", "block size", "block acc", "random acc",
               "random 5-95%", "vs random", "first block"]  # fmt: skip
    table = print_table([{c: r.get(c, "") for c in columns} for r in rows],
                        title="Generic rankings with uncertainty")  # fmt: skip
    if args.out:
        command = f"python -m {__spec__.name} " + " ".join(argv or sys.argv[1:])
        text = (
            f"Command: `{command.strip()}`\n\n{to_markdown(table, index=False)}\n\n{versions()}\n"
        )
        Path(args.out).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
