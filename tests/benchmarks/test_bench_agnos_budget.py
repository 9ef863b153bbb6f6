"""benchmarks/protocols/bench_agnos_budget.py: its budget and overlap helpers on small data."""

from __future__ import annotations

import numpy as np


def test_top_overlap_counts_the_shared_best_features(bench_script):
    m = bench_script("protocols.bench_agnos_budget")
    a = np.array([5.0, 4.0, 3.0, 2.0, 1.0])
    assert m.top_overlap(a, a, 3) == 1.0
    assert m.top_overlap(a, a[::-1], 2) == 0.0
    assert m.top_overlap(a, np.array([5.0, 1.0, 4.0, 2.0, 3.0]), 2) == 0.5


def test_a_budget_in_steps_becomes_whole_epochs(bench_script):
    m = bench_script("protocols.bench_agnos_budget")
    X = np.random.default_rng(0).normal(size=(40, 12))  # 2 batches of 32 per epoch
    scores, seconds, steps = m.fit(X, 7, seed=0)
    assert steps <= 8 and steps % 2 == 0 and scores.shape == (12,) and seconds >= 0
    again, _, _ = m.fit(X, 7, seed=0)
    np.testing.assert_array_equal(scores, again)  # seeded
