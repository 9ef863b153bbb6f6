"""ReliefF and RReliefF: hand-worked examples, a per-instance reference loop, properties."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankers
import rankers.supervised.relief as relief
from rankers.exceptions import ConstantFeatureWarning, InvalidInputError, InvalidParameterError
from rankers.supervised.relief import ReliefFRanker, RReliefFRanker

# ------------------------------------------------------------- reference implementation


def _diff(X, nominal, span, i, j):
    """diff(A, R_i, I_j) for every feature, straight from the definition."""
    numeric = np.abs(X[i] - X[j]) / np.where(nominal, 1.0, span)
    return np.where(nominal, (X[i] != X[j]).astype(float), numeric)


def _weights(count, weighted, sigma):
    if not weighted:
        return np.full(count, 1.0 / count)
    w = np.exp(-((np.arange(1, count + 1) / sigma) ** 2))
    return w / w.sum()


def _neighbours(X, nominal, span, i, candidates, k):
    """The k candidates nearest to sample i, equal distances by lower index."""
    dist = [_diff(X, nominal, span, i, j).sum() for j in candidates]
    order = np.argsort(dist, kind="stable")  # candidates are in increasing index order
    return [candidates[o] for o in order[:k]]


def relieff_loop(X, y, k=10, nominal=None, weighted=False, sigma=2.0):
    """ReliefF of Robnik-Šikonja & Kononenko (2003, Fig. 2), one reference at a time."""
    X = np.asarray(X, dtype=float)
    m, n = X.shape
    nominal = np.zeros(n, dtype=bool) if nominal is None else nominal
    span = X.max(axis=0) - X.min(axis=0)
    prior = {c: np.mean(y == c) for c in np.unique(y)}
    W = np.zeros(n)
    for i in range(m):
        for c in prior:
            candidates = [j for j in range(m) if j != i and y[j] == c]
            near = _neighbours(X, nominal, span, i, candidates, k)
            if not near:
                continue
            w = _weights(len(near), weighted, sigma)
            term = sum(wj * _diff(X, nominal, span, i, j) for wj, j in zip(w, near, strict=True))
            if c == y[i]:
                W -= term
            else:
                W += prior[c] / (1.0 - prior[y[i]]) * term
    return W / m


def rrelieff_loop(X, y, k=10, nominal=None, weighted=False, sigma=2.0):
    """RReliefF (2003, Fig. 3), one reference at a time."""
    X = np.asarray(X, dtype=float)
    m, n = X.shape
    nominal = np.zeros(n, dtype=bool) if nominal is None else nominal
    span = X.max(axis=0) - X.min(axis=0)
    y_span = y.max() - y.min()
    n_dc, n_da, n_dcda = 0.0, np.zeros(n), np.zeros(n)
    for i in range(m):
        near = _neighbours(X, nominal, span, i, [j for j in range(m) if j != i], k)
        for wj, j in zip(_weights(len(near), weighted, sigma), near, strict=True):
            dc = abs(y[i] - y[j]) / y_span
            da = _diff(X, nominal, span, i, j)
            n_dc += dc * wj
            n_da += da * wj
            n_dcda += dc * da * wj
    return n_dcda / n_dc - (n_da - n_dcda) / (m - n_dc)


def _classes(seed, m=45, n=5, sizes=(20, 17, 8)):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(len(sizes)), sizes)[:m]
    X = rng.normal(size=(y.size, n))
    X[:, 1] += 1.5 * y
    return X, y


# ------------------------------------------------------------------ hand-worked examples


def test_relieff_hand_worked_two_classes():
    # x0 is the class, x1 noise; every sample's nearest hit differs only in x1 and its
    # nearest miss only in x0, so each reference adds +1 to x0 and -1 to x1
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=float)
    y = np.array([0, 0, 1, 1])
    est = ReliefFRanker(n_neighbors=1).fit(X, y)
    np.testing.assert_allclose(est.scores_, [1.0, -1.0], atol=1e-15)
    np.testing.assert_allclose(est.class_priors_, [0.5, 0.5])


def test_relieff_hand_worked_priors_and_lonely_classes():
    # A = {(0,0), (0,1)}, B = {(1,0)}, C = {(1,1)}: priors 1/2, 1/4, 1/4, k = 1.
    # (0,0): hit (0,1) -> x1 -1; misses B (1,0), C (1,1), each weight .25/.5 -> x0 +1, x1 +.5
    # (0,1): hit (0,0) -> x1 -1; misses B (1,0) d=2, C (1,1) d=1 -> x0 +1, x1 +.5
    # (1,0): no hit; miss A (0,0) weight .5/.75 -> x0 +2/3; miss C (1,1) weight 1/3 -> x1 +1/3
    # (1,1): no hit; miss A (0,1) -> x0 +2/3; miss B (1,0) -> x1 +1/3
    # W = [10/3, -1/3] / 4
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=float)
    y = np.array(["A", "A", "B", "C"])
    est = ReliefFRanker(n_neighbors=1).fit(X, y)
    np.testing.assert_allclose(est.scores_, [10 / 12, -1 / 12], atol=1e-15)


def test_rrelieff_hand_worked():
    # normalised x0 = 0, .5, 1 and x1 = 0, 1, 0; y range 2; k = 1.
    # s0 -> s2 (d 1): dC 1, dA (1, 0); s1 -> s0 (d 1.5, tie with s2): dC .5, dA (.5, 1);
    # s2 -> s0 (d 1): dC 1, dA (1, 0). N_dC 2.5, N_dA (2.5, 1), N_dCdA (2.25, .5), m 3:
    # W = N_dCdA / N_dC - (N_dA - N_dCdA) / (m - N_dC) = (.9 - .5, .2 - 1)
    X = np.array([[0, 0], [0.5, 1], [1, 0]])
    y = np.array([0.0, 1.0, 2.0])
    est = RReliefFRanker(n_neighbors=1).fit(X, y)
    np.testing.assert_allclose(est.scores_, [0.4, -0.8], atol=1e-15)


# ------------------------------------------------------ agreement with the reference loop


@pytest.mark.parametrize("k", [1, 3, 10])  # 10 > the 8 members of the smallest class
@pytest.mark.parametrize("weighted", [False, True])
def test_relieff_equals_the_reference_loop(k, weighted):
    X, y = _classes(seed=k)
    est = ReliefFRanker(n_neighbors=k, weight_by_distance=weighted, sigma=1.5).fit(X, y)
    expected = relieff_loop(X, y, k=k, weighted=weighted, sigma=1.5)
    np.testing.assert_allclose(est.scores_, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("k", [1, 4, 60])  # 60 > m - 1: every other sample
@pytest.mark.parametrize("weighted", [False, True])
def test_rrelieff_equals_the_reference_loop(k, weighted):
    rng = np.random.default_rng(k)
    X = rng.normal(size=(40, 4))
    y = X[:, 0] ** 2 + 0.3 * rng.normal(size=40)
    est = RReliefFRanker(n_neighbors=k, weight_by_distance=weighted).fit(X, y)
    expected = rrelieff_loop(X, y, k=k, weighted=weighted)
    np.testing.assert_allclose(est.scores_, expected, rtol=0, atol=1e-12)


def test_ties_in_distance_go_to_the_lower_index():
    # dyadic values with ranges 1: every distance is exact, and many are equal
    rng = np.random.default_rng(5)
    X = rng.choice([0.0, 0.25, 0.5, 1.0], size=(48, 4))
    X[:2] = [[0.0] * 4, [1.0] * 4]
    y = rng.integers(0, 3, size=48)
    yr = y.astype(float)
    for k, weighted in [(1, False), (2, False), (5, False), (5, True), (12, True)]:
        # with rank weights even the order of tied neighbours inside the k matters
        params = {"n_neighbors": k, "weight_by_distance": weighted}
        est = ReliefFRanker(**params).fit(X, y)
        np.testing.assert_allclose(est.scores_, relieff_loop(X, y, k, None, weighted), atol=1e-12)
        est = RReliefFRanker(**params).fit(X, yr)
        np.testing.assert_allclose(est.scores_, rrelieff_loop(X, yr, k, None, weighted), atol=1e-12)


def test_nominal_features_use_zero_one_differences():
    X, y = _classes(seed=7)
    rng = np.random.default_rng(7)
    X[:, 3] = rng.choice([0.0, 1.0, 5.0], size=X.shape[0])  # codes, not magnitudes
    mask = np.array([False, False, False, True, False])
    by_index = ReliefFRanker(n_neighbors=4, nominal=[3]).fit(X, y)
    np.testing.assert_allclose(by_index.scores_, relieff_loop(X, y, 4, mask), atol=1e-12)
    assert by_index.nominal_.tolist() == mask.tolist()
    # renaming the codes of a nominal feature changes nothing
    recoded = X.copy()
    recoded[:, 3] = np.select([X[:, 3] == 0, X[:, 3] == 1], [7.0, -2.0], 0.5)
    again = ReliefFRanker(n_neighbors=4, nominal=mask).fit(recoded, y)
    np.testing.assert_allclose(again.scores_, by_index.scores_, atol=1e-12)
    # as a numeric feature the codes' magnitudes count, and the score differs
    numeric = ReliefFRanker(n_neighbors=4).fit(X, y)
    assert abs(numeric.scores_[3] - by_index.scores_[3]) > 1e-3
    frame = pd.DataFrame(X, columns=list("abcde"))
    named = RReliefFRanker(n_neighbors=4, nominal=["d"]).fit(frame, X[:, 1])
    np.testing.assert_allclose(
        named.scores_, rrelieff_loop(X, X[:, 1], 4, mask), rtol=0, atol=1e-12
    )


def test_blocked_path_equals_the_full_matrix(monkeypatch):
    X, y = _classes(seed=11)
    full_f = ReliefFRanker(n_neighbors=5).fit(X, y).scores_
    full_r = RReliefFRanker(n_neighbors=5).fit(X, X[:, 0] + X[:, 1]).scores_
    monkeypatch.setattr(relief, "_FULL_SAMPLES", 0)  # no whole matrix
    monkeypatch.setattr(relief, "_BLOCK_ELEMENTS", 100)  # blocks of one or two rows
    np.testing.assert_allclose(ReliefFRanker(n_neighbors=5).fit(X, y).scores_, full_f, atol=1e-14)
    blocked_r = RReliefFRanker(n_neighbors=5).fit(X, X[:, 0] + X[:, 1]).scores_
    np.testing.assert_allclose(blocked_r, full_r, atol=1e-14)


# -------------------------------------------------------------------------- behaviour


def test_xor_pair_is_found_by_relieff_but_not_by_information_gain():
    rng = np.random.default_rng(0)
    m = 200
    a, b = rng.integers(0, 2, size=(2, m))
    noise = rng.normal(size=(m, 6))
    X = np.column_stack([noise, a, b])  # the pair is last: index order cannot help it
    y = a ^ b
    est = ReliefFRanker().fit(X, y)
    assert sorted(est.ranking_[:2].tolist()) == [6, 7]
    assert est.scores_[[6, 7]].min() > 0.3 > est.scores_[:6].max()
    ig = rankers.get("info_gain").fit(X, y)
    assert sorted(ig.ranking_[:2].tolist()) != [6, 7]
    assert ig.scores_[[6, 7]].max() < ig.scores_[:6].max()


def test_rrelieff_finds_the_two_features_of_a_product_target():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(300, 6))
    y = X[:, 2] * X[:, 4]  # uncorrelated with each feature alone
    est = RReliefFRanker().fit(X, y)
    assert sorted(est.ranking_[:2].tolist()) == [2, 4]
    assert est.scores_[[2, 4]].min() > 0 > est.scores_[[0, 1, 3, 5]].max()


def test_defaults_are_the_benchmark_settings():
    est = ReliefFRanker()
    assert (est.n_neighbors, est.weight_by_distance, est.nominal) == (10, False, None)
    assert rankers.get("relieff").get_params() == est.get_params()
    assert rankers.get("rrelieff").n_neighbors == 10


def test_constant_features_get_minus_one():
    X, y = _classes(seed=2)
    X[:, 2] = 4.0
    with pytest.warns(ConstantFeatureWarning):
        est = ReliefFRanker().fit(X, y)
    assert est.scores_[2] == -1.0
    assert est.ranking_[-1] == 2
    kept = ReliefFRanker().fit(np.delete(X, 2, axis=1), y).scores_
    np.testing.assert_allclose(np.delete(est.scores_, 2), kept, atol=1e-14)


def test_bad_parameters_and_targets():
    X, y = _classes(seed=3)
    with pytest.raises(InvalidParameterError, match=r"outside 0\.\.4"):
        ReliefFRanker(nominal=[7]).fit(X, y)
    with pytest.raises(InvalidParameterError, match="X has none"):
        ReliefFRanker(nominal=["a"]).fit(X, y)
    with pytest.raises(InvalidParameterError, match="one entry per feature"):
        ReliefFRanker(nominal=[True, False]).fit(X, y)
    with pytest.raises(InvalidParameterError, match="n_neighbors"):
        ReliefFRanker(n_neighbors=0).fit(X, y)
    with pytest.raises(InvalidParameterError, match="sigma"):
        RReliefFRanker(sigma=0).fit(X, y)
    with pytest.raises(InvalidInputError, match="y is constant"):
        RReliefFRanker().fit(X, np.ones(X.shape[0]))


def test_neighbour_groups_without_target_differences_do_not_divide_by_zero():
    # two tight groups, k = 3 < group size: no neighbour pair differs in y (N_dC = 0)
    rng = np.random.default_rng(2)
    y = np.repeat([0.0, 1.0], 10)
    X = np.column_stack([y * 10 + 0.01 * rng.normal(size=20), rng.normal(size=20)])
    with np.errstate(all="raise"):
        est = RReliefFRanker(n_neighbors=3).fit(X, y)
    np.testing.assert_allclose(est.scores_, rrelieff_loop_no_dc(X, 3), atol=1e-12)


def rrelieff_loop_no_dc(X, k):
    """With N_dC = 0 the first term is 0: W = -N_dA / m."""
    m, n = X.shape
    span = np.ptp(X, axis=0)
    nominal = np.zeros(n, dtype=bool)
    total = np.zeros(n)
    for i in range(m):
        near = _neighbours(X, nominal, span, i, [j for j in range(m) if j != i], k)
        total += sum(_diff(X, nominal, span, i, j) for j in near) / k
    return -total / m


# ------------------------------------------------------------------------- properties


@settings(max_examples=15)
@given(
    seed=st.integers(0, 10_000),
    scale=st.floats(1e-3, 1e3),
    shift=st.floats(-1e3, 1e3),
    regression=st.booleans(),
)
def test_invariant_to_positive_affine_rescaling_of_a_feature(seed, scale, shift, regression):
    X, y = _classes(seed, m=30, n=4, sizes=(12, 10, 8))
    Ranker = RReliefFRanker if regression else ReliefFRanker
    target = X[:, 1] - X[:, 0] if regression else y
    base = Ranker(n_neighbors=4).fit(X, target).scores_
    Xt = X.copy()
    Xt[:, seed % 4] = scale * X[:, seed % 4] + shift
    np.testing.assert_allclose(Ranker(n_neighbors=4).fit(Xt, target).scores_, base, atol=1e-9)


@settings(max_examples=15)
@given(seed=st.integers(0, 10_000), regression=st.booleans())
def test_permuting_features_permutes_scores(seed, regression):
    X, y = _classes(seed, m=30, n=5, sizes=(15, 15))
    perm = np.random.default_rng(seed).permutation(5)
    Ranker = RReliefFRanker if regression else ReliefFRanker
    target = X[:, 1] if regression else y
    a = Ranker(n_neighbors=3).fit(X, target).scores_
    b = Ranker(n_neighbors=3).fit(X[:, perm], target).scores_
    np.testing.assert_allclose(b, a[perm], atol=1e-12)


def test_deterministic_and_input_untouched():
    X, y = _classes(seed=9)
    before = X.copy()
    a = ReliefFRanker().fit(X, y).scores_
    b = ReliefFRanker().fit(X, y).scores_
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(X, before)
