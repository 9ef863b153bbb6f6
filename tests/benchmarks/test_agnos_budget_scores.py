"""benchmarks/protocols/agnos_budget_scores.py: budgets paired with the default by seed."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest


def _write(root: Path, budget: str, seed: int, agnos: list[float], rand: list[float]) -> None:
    for suffix, name in (("", "mse_at_16.csv"), ("_frane", "rmae_at_16.csv")):
        out = root / f"{budget}_s{seed}{suffix}"
        out.mkdir(parents=True)
        table = pd.DataFrame({"agnos_s": agnos, "random": rand}, index=["a", "b", "c"])
        table.rename_axis("dataset").to_csv(out / name)


def test_summary_pairs_each_budget_with_the_default_at_the_same_seed(bench_script, tmp_path):
    m = bench_script("protocols.agnos_budget_scores")
    rand = [1.0, 1.0, 1.0]
    for seed in (0, 1):
        _write(tmp_path, "default", seed, [0.8, 0.9 + 0.01 * seed, 1.2], rand)
        _write(tmp_path, "300", seed, [0.9, 1.1, 1.1], rand)  # worse on a and b
    runs = m.read_runs(tmp_path)
    assert len(runs) == 2 * 2 * 2 * 3  # variants x budgets x seeds x data sets
    summary = m.summarise(runs).set_index(["variant", "budget"])
    short = summary.loc[("ensemble", "300")]
    assert short["pairs"] == 6 and short["worse than default"] == 4
    assert short["beats random"] == 2  # a (0.9 < 1) at both seeds
    default = summary.loc[("frane", "default")]
    assert default["beats random"] == 4  # a and b at both seeds
    assert default["seed spread (max)"] == pytest.approx(0.91 / 0.9 - 1)
    assert default["seed spread (median)"] == 0.0
