"""Near-ties among computed floats: one rule (rankers.ties), the same answer on any machine.

Another CPU or BLAS kernel changes the last bits of computed values. The property tests
here stand in for that machine: they move every input value by a few ulps
(``np.nextafter``) and check that no choice moves.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankers
from rankers.ties import TIE_RTOL, first_max, kth_nearest, order_desc, snap_ties, tie_groups

NAMES = list(rankers.available()["name"])


# ------------------------------------------------------------------ the rule itself
def test_groups_by_hand():
    order, group = tie_groups([0.3, 1.0, 0.3 + 1e-12, 0.1])
    assert order.tolist() == [3, 0, 2, 1]
    assert group.tolist() == [0, 1, 1, 2]


def test_ties_chain_and_stop_at_a_gap():
    x = np.array([1.0, 1.0 - 0.6e-9, 1.0 - 1.2e-9, 1.0 - 5e-9])
    # the first three are within 1e-9 of a neighbour (a chain), the last is not
    _, group = tie_groups(x)
    assert group.tolist() == [0, 1, 1, 1]  # ascending: the last is alone at the bottom
    snapped = snap_ties(x)
    assert snapped[0] == snapped[1] == snapped[2] != snapped[3]
    assert snapped[3] == x[3]  # a group of one keeps its value bit for bit


def test_snap_keeps_the_callers_array():
    x = np.array([2.0, 2.0 + 1e-15])
    before = x.copy()
    snap_ties(x)
    np.testing.assert_array_equal(x, before)


def test_order_desc_breaks_ties_by_lower_index():
    assert order_desc([0.5, 0.9, 0.5 + 1e-13, 0.9 - 1e-13]).tolist() == [1, 3, 0, 2]


def test_first_max_ignores_nan_and_takes_the_first_tie():
    assert first_max([np.nan, 2.0, 3.0 - 1e-12, 3.0, 1.0]) == 2
    assert first_max([np.nan, np.nan]) == -1


def test_nearest_neighbours_by_hand():
    D = np.array(
        [
            [np.inf, 1.0, 1.0 + 1e-14, 0.5, 2.0],  # tie between columns 1 and 2
            [1.0, np.inf, 3.0, 3.0 - 1e-13, 0.1],
        ]
    )
    assert kth_nearest(D, 2).tolist() == [[3, 1], [4, 0]]
    assert kth_nearest(D, 3).tolist() == [[3, 1, 2], [4, 0, 2]]


@settings(max_examples=50)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 40))
def test_nearest_neighbours_survive_ulps(nudge, seed, n):
    rng = np.random.default_rng(seed)
    # points on a grid: many distances are equal in exact arithmetic
    P = rng.integers(0, 3, size=(n, 3)).astype(float) * 0.1
    D = np.sqrt(((P[:, None, :] - P[None, :, :]) ** 2).sum(axis=2))
    np.fill_diagonal(D, np.inf)
    k = int(rng.integers(1, n))
    expected = kth_nearest(D, k)
    moved = nudge(D, rng)
    np.testing.assert_array_equal(kth_nearest(moved, k), expected)
    # the answer agrees with a full sort of the exactly rounded grid distances
    exact = np.round(D, 9)
    ref = np.lexsort((np.broadcast_to(np.arange(n), D.shape), exact), axis=1)[:, :k]
    np.testing.assert_array_equal(expected, ref)


@settings(max_examples=50)
@given(seed=st.integers(0, 2**32 - 1))
def test_order_and_snap_survive_ulps(nudge, seed):
    rng = np.random.default_rng(seed)
    base = rng.normal(size=12)
    x = np.concatenate([base, base[rng.integers(0, 12, size=8)]])  # planted exact ties
    moved = nudge(x, rng)
    np.testing.assert_array_equal(order_desc(moved), order_desc(x))
    a, b = snap_ties(x), snap_ties(moved)
    np.testing.assert_array_equal(np.argsort(-a, kind="stable"), np.argsort(-b, kind="stable"))
    np.testing.assert_allclose(a, b, rtol=1e-14)


def test_tolerance_is_relative_to_the_largest_value():
    x = np.array([1e6, 1.0, 1.0 + 1e-4])  # 1e-4 < 1e-9 * 1e6 = 1e-3: tied
    assert snap_ties(x)[1] == snap_ties(x)[2]
    assert TIE_RTOL == 1e-9


# ------------------------------------------------------------------ every ranker
def _quick(name):
    est = rankers.get(name)
    est.set_params(**type(est)._contract_test_params)
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    return est


def _tied_data(target_kind, kind):
    """40 samples with exact ties: duplicated features and samples, or values on a grid."""
    rng = np.random.default_rng(7)
    y = np.repeat([0, 1], 20)
    if kind == "grid":  # small integers, scaled: many distances tie in exact arithmetic
        base = rng.integers(0, 3, size=(40, 5)) * 0.1
        base[:, 0] += 0.2 * y
    else:
        base = rng.normal(size=(40, 5))
        base[:, 0] += 2.5 * y
        base[:, 1] -= 1.5 * y
    X = np.column_stack([base, base[:, 0], base[:, 3]])  # x5 = x0, x6 = x3
    if kind == "duplicates":
        X[20:25] = X[:5] + 0.0  # samples 20..24 duplicate 0..4 ...
        y[20:25] = y[:5]  # ... labels included
    if target_kind == "regression":
        return X, base[:, 0] + 0.1 * rng.normal(size=40)
    return X, y


@pytest.mark.parametrize("data", ["duplicates", "grid"])
@pytest.mark.parametrize("name", NAMES)
def test_ranking_does_not_move_when_inputs_move_by_ulps(name, data, nudge):
    est = _quick(name)
    kind = est.target_kind
    X, y = _tied_data("regression" if kind == "regression" else "classification", data)
    y = y if est.requires_y else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = _quick(name).fit(X, y)
        for seed in range(3):
            moved = _quick(name).fit(nudge(X, np.random.default_rng(seed)), y)
            np.testing.assert_array_equal(moved.ranking_, expected.ranking_, err_msg=name)
    # duplicated features tie exactly and the lower index comes first
    pos = {f: i for i, f in enumerate(expected.ranking_)}
    # (a greedy selector ranks a copy below its original instead of tying them)
    assert (
        expected.scores_[5] == expected.scores_[0]
        or not est.deterministic
        or (est.redundancy_aware)
    )
    if est.deterministic:
        assert pos[0] < pos[5] and pos[3] < pos[6]
