"""URelief (Petković et al. 2020, Algorithm 3)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankers.unsupervised.urelief as urelief_module
from rankers.exceptions import ConstantFeatureWarning, InvalidParameterError
from rankers.unsupervised.urelief import UReliefRanker


def loop_urelief(X, K, rows, nominal=None):
    """Algorithm 3 written out: one reference example, one neighbour, one feature at a time."""
    m, n = X.shape
    nominal = np.zeros(n, bool) if nominal is None else np.asarray(nominal)
    span = X.max(axis=0) - X.min(axis=0)

    def d(i, a, b):  # Eq. 3, per feature
        if nominal[i]:
            return float(X[a, i] != X[b, i])
        return abs(X[a, i] - X[b, i]) / span[i]

    def d_x(a, b):
        return sum(d(i, a, b) for i in range(n)) / n

    IK = len(rows) * K
    p_c, p_a, p_ac = 0.0, np.zeros(n), np.zeros(n)
    for r in rows:
        others = sorted((d_x(r, j), j) for j in range(m) if j != r)  # ties: lower index
        for _, nb in others[:K]:
            p_c += d_x(r, nb) / IK
            for i in range(n):
                p_a[i] += d(i, r, nb) / IK
                p_ac[i] += d(i, r, nb) * d_x(r, nb) / IK
    return p_ac / p_c - (p_a - p_ac) / (1 - p_c)


def test_hand_worked_example():
    # ranges 3 and 2. With K = 2 the neighbour pairs (r, n) and their (d_0, d_1, d_X) are
    #   (0,1) (1,0) (2,3) (3,2): (1/3, 0, 1/6);  (0,2) (3,1): (2/3, 1, 5/6);
    #   (1,2) (2,1): (1/3, 1, 2/3)
    # so with IK = 8: P_C = 11/24, P_A = (5/12, 1/2), P_AC = (2/9, 3/8) and
    #   w_0 = (2/9)/(11/24) - (5/12 - 2/9)/(13/24) = 16/33 - 14/39 = 18/143
    #   w_1 = (3/8)/(11/24) - (1/2 - 3/8)/(13/24) = 9/11 - 3/13 = 84/143
    X = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 2.0], [3.0, 2.0]])
    est = UReliefRanker(n_neighbors=2).fit(X)
    np.testing.assert_allclose(est.scores_, [18 / 143, 84 / 143], rtol=1e-13)
    assert est.p_diff_cluster_ == pytest.approx(float(Fraction(11, 24)), rel=1e-14)
    assert est.ranking_.tolist() == [1, 0]
    assert est.n_iterations_ == 4
    assert est.sample_indices_.tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize(
    ("m", "n", "K", "iters", "seed"),
    [(25, 4, 5, 10, 0), (30, 6, 30, None, 1), (12, 3, 3, 0.5, 2), (40, 5, 7, 40, 3)],
)
def test_matches_per_iteration_loop(m, n, K, iters, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, n)) * rng.uniform(0.1, 10, size=n)
    est = UReliefRanker(n_neighbors=K, n_iterations=iters, random_state=seed).fit(X)
    assert est.n_neighbors_ == min(K, m - 1)
    expected = loop_urelief(X, est.n_neighbors_, est.sample_indices_)
    np.testing.assert_allclose(est.scores_, expected, rtol=0, atol=1e-12)


def test_matches_loop_with_tied_distances():
    # small integer grid: many neighbours at exactly the same distance, broken by index
    rng = np.random.default_rng(5)
    X = rng.integers(0, 3, size=(20, 3)).astype(float)
    est = UReliefRanker(n_neighbors=4).fit(X)
    expected = loop_urelief(X, 4, np.arange(20))
    np.testing.assert_allclose(est.scores_, expected, rtol=0, atol=1e-12)


def test_matches_loop_with_nominal_features():
    rng = np.random.default_rng(6)
    X = np.column_stack([rng.normal(size=30), rng.integers(0, 3, 30), rng.normal(size=30)])
    X = np.column_stack([X, rng.integers(0, 2, 30)])
    nominal = [False, True, False, True]
    est = UReliefRanker(n_neighbors=6, nominal=nominal).fit(X)
    expected = loop_urelief(X, 6, np.arange(30), nominal=np.array(nominal))
    np.testing.assert_allclose(est.scores_, expected, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(est.nominal_, nominal)


def test_row_blocks_give_the_same_scores(monkeypatch):
    rng = np.random.default_rng(8)
    X = rng.normal(size=(50, 7))
    whole = UReliefRanker(n_neighbors=8).fit(X).scores_
    monkeypatch.setattr(urelief_module, "_BLOCK_ELEMENTS", 64)  # one reference row a block
    blocked = UReliefRanker(n_neighbors=8).fit(X).scores_
    np.testing.assert_allclose(blocked, whole, rtol=0, atol=1e-14)


@pytest.mark.parametrize("seed", range(5))
def test_planted_cluster_features_rank_above_noise(seed):
    # three clusters carried by x0..x3 (x2, x3 noisier copies); x4..x9 are pure noise.
    # URelief scores Cov(d_i, d_X) over neighbour pairs: with K = 30 of 40 samples the
    # neighbourhoods span clusters, and the cluster features' distances move together.
    rng = np.random.default_rng(seed)
    m = 40
    base = np.repeat([0.0, 1.0, 2.0], 14)[:m]
    carried = [base + s * rng.normal(size=m) for s in (0.2, 0.2, 0.5, 0.5)]
    X = np.column_stack([*carried, rng.normal(size=(m, 6))])
    est = UReliefRanker().fit(X)
    assert set(est.ranking_[:4].tolist()) == {0, 1, 2, 3}
    assert est.scores_[:4].min() > est.scores_[4:].max()


@settings(max_examples=25)
@given(
    col=st.integers(0, 4),
    scale=st.floats(0.01, 100.0),
    shift=st.floats(-100.0, 100.0),
)
def test_invariant_to_positive_affine_rescaling_of_a_feature(col, scale, shift):
    rng = np.random.default_rng(11)
    X = rng.normal(size=(30, 5))
    before = UReliefRanker(n_neighbors=6).fit(X).scores_
    Y = X.copy()
    Y[:, col] = scale * Y[:, col] + shift
    after = UReliefRanker(n_neighbors=6).fit(Y).scores_
    np.testing.assert_allclose(after, before, rtol=0, atol=1e-9)


@settings(max_examples=20)
@given(st.permutations(list(range(6))))
def test_permuting_features_permutes_scores(perm):
    rng = np.random.default_rng(12)
    X = rng.normal(size=(25, 6)) * np.arange(1, 7)
    base = UReliefRanker(n_neighbors=5).fit(X).scores_
    permuted = UReliefRanker(n_neighbors=5).fit(X[:, perm]).scores_
    np.testing.assert_allclose(permuted, base[perm], rtol=0, atol=1e-12)


def test_permuting_samples_leaves_scores_unchanged():
    rng = np.random.default_rng(13)
    X = rng.normal(size=(35, 5))
    base = UReliefRanker(n_neighbors=7).fit(X).scores_
    shuffled = UReliefRanker(n_neighbors=7).fit(X[rng.permutation(35)]).scores_
    np.testing.assert_allclose(shuffled, base, rtol=0, atol=1e-12)


def test_determinism_under_random_state():
    rng = np.random.default_rng(14)
    X = rng.normal(size=(60, 5))
    a = UReliefRanker(n_iterations=0.3, random_state=7).fit(X)
    b = UReliefRanker(n_iterations=0.3, random_state=7).fit(X)
    c = UReliefRanker(n_iterations=0.3, random_state=8).fit(X)
    np.testing.assert_array_equal(a.scores_, b.scores_)
    assert a.n_iterations_ == 18
    assert not np.array_equal(a.sample_indices_, c.sample_indices_)
    assert not np.array_equal(a.scores_, c.scores_)
    # every sample as reference (the default, I = m) needs no randomness
    d = UReliefRanker(random_state=1).fit(X).scores_
    e = UReliefRanker(random_state=2).fit(X).scores_
    np.testing.assert_array_equal(d, e)


def test_n_iterations_forms():
    X = np.random.default_rng(15).normal(size=(20, 3))
    assert UReliefRanker(n_iterations=5, random_state=0).fit(X).n_iterations_ == 5
    assert UReliefRanker(n_iterations=500).fit(X).n_iterations_ == 20
    assert UReliefRanker(n_iterations=0.01, random_state=0).fit(X).n_iterations_ == 1
    assert UReliefRanker(n_iterations=1.0).fit(X).n_iterations_ == 20
    with pytest.raises(InvalidParameterError, match="n_iterations"):
        UReliefRanker(n_iterations=1.5).fit(X)
    with pytest.raises(InvalidParameterError, match="n_neighbors"):
        UReliefRanker(n_neighbors=0).fit(X)


def test_fractional_n_neighbors_equals_the_integer_count():
    # the hand-worked example: 4 rows, so 0.5 of them is K = 2 and gives its scores
    X = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 2.0], [3.0, 2.0]])
    est = UReliefRanker(n_neighbors=0.5).fit(X)
    assert est.n_neighbors_ == 2
    np.testing.assert_allclose(est.scores_, [18 / 143, 84 / 143], rtol=1e-13)
    # 40 rows: 0.25 -> round(10.0) = 10, 0.26 -> round(10.4) = 10, 0.01 -> at least 1,
    # 0.99 -> round(39.6) = 40, clipped to m - 1 = 39
    Y = np.random.default_rng(17).normal(size=(40, 5))
    for frac, K in [(0.25, 10), (0.26, 10), (0.01, 1), (0.99, 39)]:
        a = UReliefRanker(n_neighbors=frac).fit(Y)
        b = UReliefRanker(n_neighbors=K).fit(Y)
        assert a.n_neighbors_ == K
        np.testing.assert_array_equal(a.scores_, b.scores_)
    assert UReliefRanker(n_neighbors=np.float64(0.25)).fit(Y).n_neighbors_ == 10


@pytest.mark.parametrize("bad", [0, -3, 0.0, 1.0, 1.5, -0.2, "30", float("nan")])
def test_bad_n_neighbors_is_named(bad):
    X = np.random.default_rng(18).normal(size=(20, 3))
    with pytest.raises(InvalidParameterError, match="n_neighbors"):
        UReliefRanker(n_neighbors=bad).fit(X)


def test_nominal_codes_are_labels_not_numbers():
    rng = np.random.default_rng(16)
    codes = rng.integers(0, 3, 40)
    X = np.column_stack([rng.normal(size=40), codes, rng.normal(size=40)])
    relabelled = X.copy()
    relabelled[:, 1] = np.array([5.0, -3.0, 100.0])[codes]  # a bijection of the labels
    a = UReliefRanker(n_neighbors=8, nominal=[1]).fit(X).scores_
    b = UReliefRanker(n_neighbors=8, nominal=[1]).fit(relabelled).scores_
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    # read as numbers the relabelling changes the distances, hence the scores
    c = UReliefRanker(n_neighbors=8).fit(X).scores_
    d = UReliefRanker(n_neighbors=8).fit(relabelled).scores_
    assert not np.allclose(c, d)


def test_nominal_by_index_name_or_mask():
    rng = np.random.default_rng(17)
    frame = pd.DataFrame(
        {"a": rng.normal(size=30), "b": rng.integers(0, 3, 30), "c": rng.normal(size=30)}
    )
    by_name = UReliefRanker(nominal=["b"]).fit(frame)
    by_index = UReliefRanker(nominal=[1]).fit(frame)
    by_negative = UReliefRanker(nominal=[-2]).fit(frame)
    by_mask = UReliefRanker(nominal=[False, True, False]).fit(frame)
    for est in (by_index, by_negative, by_mask):
        np.testing.assert_array_equal(est.scores_, by_name.scores_)
        np.testing.assert_array_equal(est.nominal_, [False, True, False])


@pytest.mark.parametrize(
    ("nominal", "message"),
    [
        ([3], "outside 0..2"),
        (["zz"], "unknown columns"),
        ([True, False], "one entry per feature"),
        ([0.5], "column indices, column names or a boolean mask"),
    ],
)
def test_bad_nominal_is_named(nominal, message):
    frame = pd.DataFrame(np.random.default_rng(18).normal(size=(10, 3)), columns=list("abc"))
    with pytest.raises(InvalidParameterError, match=message):
        UReliefRanker(nominal=nominal).fit(frame)


def test_nominal_names_need_column_names():
    X = np.random.default_rng(19).normal(size=(10, 3))
    with pytest.raises(InvalidParameterError, match="X has none"):
        UReliefRanker(nominal=["x1"]).fit(X)


def test_constant_feature_scores_lowest_and_changes_nothing_else():
    rng = np.random.default_rng(20)
    X = rng.normal(size=(30, 4))
    with_const = np.column_stack([X[:, :2], np.full(30, 7.0), X[:, 2:]])
    with pytest.warns(ConstantFeatureWarning):
        est = UReliefRanker(n_neighbors=5).fit(with_const)
    plain = UReliefRanker(n_neighbors=5).fit(X).scores_
    np.testing.assert_allclose(np.delete(est.scores_, 2), plain, rtol=0, atol=1e-14)
    assert est.scores_[2] == -1.0
    assert est.ranking_[-1] == 2


def test_degenerate_neighbourhoods_give_finite_scores():
    # two samples: every neighbour differs maximally (P_C = 1)
    two = UReliefRanker().fit(np.array([[0.0, 1.0], [1.0, 3.0]]))
    assert two.n_neighbors_ == 1
    np.testing.assert_array_equal(two.scores_, [1.0, 1.0])
    # every sample duplicated and K = 1: all neighbours identical (P_C = 0)
    X = np.repeat(np.random.default_rng(21).normal(size=(6, 3)), 2, axis=0)
    dup = UReliefRanker(n_neighbors=1).fit(X)
    assert dup.p_diff_cluster_ == 0.0
    np.testing.assert_array_equal(dup.scores_, np.zeros(3))


def test_scores_lie_in_minus_one_one():
    rng = np.random.default_rng(22)
    X = rng.exponential(size=(50, 8)) ** 3
    est = UReliefRanker(n_neighbors=10).fit(X)
    assert np.all(np.abs(est.scores_) <= 1.0)


def _pinned_data(seed, m, n):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, size=m)
    X = rng.normal(size=(m, n))
    X[:, : n // 3] += labels[:, None]
    return np.round(X, 3)


# scores of the code before the width work (commit 9b10018): the speed-ups change the
# engineering (memory layout, blocking), never the method
_PINNED = {
    (0, 30, 9): [
        0.005718571170694714,
        0.003589219676032318,
        0.00545225655522702,
        0.004514179830133608,
        0.006377855126252441,
        0.0032644013163588004,
        0.006373514712837952,
        0.012162847411824773,
        0.006196799010174059,
    ],
    (1, 40, 12): [
        0.00598776752048108,
        0.007636958979841624,
        0.0034192593692494444,
        0.009487519090878832,
        0.005259988379563624,
        0.010192268003685112,
        0.012196442977049055,
        0.007393569328959071,
        0.011535940497145208,
        0.00021134557784657781,
        0.009158190964591029,
        0.0035009240347791404,
    ],
}


@pytest.mark.parametrize("key", list(_PINNED))
def test_scores_pinned_to_the_previous_implementation(key):
    X = _pinned_data(*key)
    est = UReliefRanker(n_neighbors=5).fit(X)
    np.testing.assert_allclose(est.scores_, _PINNED[key], rtol=1e-9, atol=0)
    # a C-ordered and a Fortran-ordered copy give the same scores
    np.testing.assert_array_equal(
        UReliefRanker(n_neighbors=5).fit(np.asfortranarray(X)).scores_, est.scores_
    )
