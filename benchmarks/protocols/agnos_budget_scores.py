"""AgnoS-S's training budget judged by the unsupervised protocol's scores, over seeds.

Reads protocol outputs written as ``ROOT/<budget>_s<seed>`` (the ensemble variant's
``mse_at_16.csv``) and ``ROOT/<budget>_s<seed>_frane`` (``rmae_at_16.csv``), one run per
(budget, seed) of ``unsupervised_protocol.py --rankers agnos_s --seed <seed>``, and
compares every budget with ``default`` at the same seed: the same folds, the same
initial weights, so each (seed, data set) is a pair. Lower is better in both metrics.
Prints, per variant, how often and by how much a budget is worse than the default
(Wilcoxon signed-rank over the pairs), how often each beats the random row, and how far
the default's score moves with the seed alone. How the budgets were produced is in
``benchmarks/results/width/agnos_budget.md``.

Example::

    python -m benchmarks.protocols.agnos_budget_scores --root /tmp/agnos
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import wilcoxon

from benchmarks._protocol import to_markdown

#: variant -> (directory suffix, score file)
VARIANTS = {"ensemble": ("", "mse_at_16.csv"), "frane": ("_frane", "rmae_at_16.csv")}


def read_runs(root: Path) -> pd.DataFrame:
    """One row per (variant, budget, seed, data set): agnos_s's score and random's."""
    rows = []
    for run in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.endswith("_frane")):
        budget, _, seed = run.name.rpartition("_s")
        for variant, (suffix, name) in VARIANTS.items():
            path = run.parent / (run.name + suffix) / name
            if not path.is_file():
                continue
            table = pd.read_csv(path, index_col=0)
            for dataset, row in table.iterrows():
                rows.append(
                    {
                        "variant": variant,
                        "budget": budget,
                        "seed": int(seed),
                        "dataset": dataset,
                        "agnos_s": row["agnos_s"],
                        "random": row["random"],
                    }
                )
    return pd.DataFrame(rows)


def summarise(runs: pd.DataFrame, reference: str = "default") -> pd.DataFrame:
    """Per variant and budget: paired comparison with ``reference`` and with random."""
    out = []
    for variant, group in runs.groupby("variant", sort=False):
        scores = group.pivot_table(index=["seed", "dataset"], columns="budget", values="agnos_s")
        rand = group.groupby(["seed", "dataset"])["random"].first().loc[scores.index]
        ref = scores[reference]
        by_seed = ref.unstack("seed")
        spread = by_seed.max(axis=1) / by_seed.min(axis=1) - 1.0
        for budget in scores.columns:
            pair = pd.DataFrame({"b": scores[budget], "ref": ref}).dropna()
            row = {
                "variant": variant,
                "budget": budget,
                "pairs": len(pair),
                "beats random": int((pair["b"] < rand.loc[pair.index]).sum()),
                "median vs random": float(np.median(pair["b"] / rand.loc[pair.index] - 1)),
            }
            if budget == reference:
                row["seed spread (median)"] = float(spread.median())
                row["seed spread (max)"] = float(spread.max())
            else:
                rel = pair["b"] / pair["ref"] - 1.0
                row["worse than default"] = int((rel > 0).sum())
                row["median vs default"] = float(rel.median())
                row["Wilcoxon p"] = float(wilcoxon(pair["b"], pair["ref"]).pvalue)
            out.append(row)
    return pd.DataFrame(out)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--reference", default="default")
    args = parser.parse_args(argv)
    runs = read_runs(args.root)
    if runs.empty:
        raise SystemExit(f"no <budget>_s<seed> protocol outputs under {args.root}")
    for variant, group in runs.groupby("variant", sort=False):
        wide = group.pivot_table(index=["seed", "dataset"], columns="budget", values="agnos_s")
        wide["random"] = group.groupby(["seed", "dataset"])["random"].first()
        print(f"\n## {variant}: agnos_s by budget (lower is better)\n")
        print(to_markdown(wide.round(4)))
    print("\n## summary\n")
    print(to_markdown(summarise(runs, args.reference), index=False))


if __name__ == "__main__":
    main()
