"""benchmarks/protocols/bench_tree_cells.py: a tree-ensemble cell's cost from a few trees."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.mark.parametrize("ranker", ["genie3", "rf_score"])
def test_probe_extrapolates_a_few_trees_to_the_cells_thousand(bench_script, ranker):
    m = bench_script("protocols.bench_tree_cells")
    X = np.random.default_rng(0).normal(size=(40, 6))
    X[X < 0.5] = 0.0  # mostly zeros, like the text sets
    row = m.probe("toy", X, ranker, n_trees=2, seed=0)
    assert row["data"] == "toy 40x6" and row["trees"] == 2 and row["ranker"] == ranker
    assert row["zeros"] == pytest.approx(float((X == 0).mean()), abs=1e-3)
    assert row["cell CPU h (est.)"] == pytest.approx(row["CPU s"] * 500 / 3600, abs=0.01)
    depths = [int(d) for d in row["depth"].split("-")]
    assert depths == sorted(depths) and 1 <= depths[0] <= 36  # 36 training rows
    assert 2 <= row["leaves"] <= 36
