"""Information gain and chi-squared rankers."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.stats import chi2 as chi2_distribution
from scipy.stats import chi2_contingency, rankdata
from sklearn.feature_selection import chi2 as sklearn_chi2
from sklearn.metrics import mutual_info_score

from rankers.exceptions import ConstantFeatureWarning, InvalidInputError, InvalidParameterError
from rankers.supervised.information import Chi2Ranker, InfoGainRanker

RANKERS = [InfoGainRanker, Chi2Ranker]


def equal_frequency_codes(f, n_bins):
    """The documented discretisation, one feature at a time."""
    values = np.unique(f)
    if values.size <= n_bins:
        return np.searchsorted(values, f)
    r = rankdata(f, method="min")
    return np.floor((r - 1) * n_bins / f.size).astype(int)


@pytest.fixture
def mixed():
    """Continuous, discrete (3 values) and binary features against 3 classes."""
    rng = np.random.default_rng(11)
    y = np.repeat([0, 1, 2], 30)
    X = np.column_stack(
        [
            rng.normal(size=90) + y,  # continuous, informative
            rng.normal(size=90),  # continuous noise
            (y + rng.integers(0, 2, size=90)) % 3,  # discrete, 3 values
            rng.integers(0, 2, size=90),  # binary noise
            rng.exponential(size=90) * (1 + y),  # continuous, skewed
        ]
    ).astype(float)
    return X, y


# ----------------------------------------------------------------- info gain
def test_info_gain_hand_example():
    # x0 == y (balanced): IG = H(Y) = 1 bit; x1 independent of y: IG = 0;
    # x2 splits {0,0,1} | {1}: H(Y|x2) = 3/4 * H(1/3) = 0.6887, IG = 0.3113
    y = np.array([0, 0, 1, 1])
    X = np.array([[0, 0, 0], [0, 1, 0], [1, 0, 0], [1, 1, 1]], dtype=float)
    est = InfoGainRanker().fit(X, y)
    h13 = -(1 / 3) * np.log2(1 / 3) - (2 / 3) * np.log2(2 / 3)
    assert est.scores_[0] == 1.0
    assert est.scores_[1] == 0.0
    assert est.scores_[2] == pytest.approx(1.0 - 0.75 * h13, abs=1e-12)
    assert est.ranking_.tolist() == [0, 2, 1]


def test_info_gain_matches_mutual_info_of_the_codes(mixed):
    X, y = mixed
    est = InfoGainRanker(n_bins=5).fit(X, y)
    expected = [
        mutual_info_score(y, equal_frequency_codes(X[:, j], 5)) / np.log(2)
        for j in range(X.shape[1])
    ]
    np.testing.assert_allclose(est.scores_, expected, rtol=1e-10, atol=1e-12)
    # the two class-driven features first, the two noise features last
    assert set(est.ranking_[:2]) == {0, 2}
    assert set(est.ranking_[-2:]) == {1, 3}


def test_info_gain_bounded_by_class_entropy(mixed):
    X, y = mixed
    scores = InfoGainRanker().fit(X, y).scores_
    assert np.all(scores >= 0)
    assert np.all(scores <= np.log2(3) + 1e-12)


def test_few_distinct_values_are_one_bin_each():
    # 4 distinct values <= n_bins: kept apart; with n_bins=2 they are binned by rank
    y = np.array([0, 1, 0, 1, 0, 1, 0, 1])
    f = np.array([0, 1, 2, 3, 0, 1, 2, 3], dtype=float)  # y = f mod 2
    X = np.column_stack([f, np.arange(8.0)])
    assert InfoGainRanker(n_bins=4).fit(X, y).scores_[0] == pytest.approx(1.0)
    # ranks 1,1,3,3,5,5,7,7 -> codes floor((r-1)*2/8) = 0,0,0,0,1,1,1,1: independent of y
    assert InfoGainRanker(n_bins=2).fit(X, y).scores_[0] == pytest.approx(0.0, abs=1e-12)


# ---------------------------------------------------------------------- chi2
def test_chi2_hand_2x2_table():
    # x0 vs y: [[4, 1], [1, 4]], expected 2.5 everywhere: chi² = 4 * 1.5² / 2.5 = 3.6
    # x1 vs y: [[3, 2], [2, 3]]: chi² = 4 * 0.5² / 2.5 = 0.4
    y = np.array([0] * 5 + [1] * 5)
    X = np.column_stack([[0, 0, 0, 0, 1, 0, 1, 1, 1, 1], np.arange(10) % 2]).astype(float)
    est = Chi2Ranker().fit(X, y)
    np.testing.assert_allclose(est.scores_, [3.6, 0.4], rtol=1e-12)
    np.testing.assert_allclose(est.pvalues_, chi2_distribution.sf([3.6, 0.4], 1), rtol=1e-12)


def test_chi2_matches_scipy_contingency(mixed):
    X, y = mixed
    est = Chi2Ranker(n_bins=4).fit(X, y)
    for j in range(X.shape[1]):
        table = pd.crosstab(equal_frequency_codes(X[:, j], 4), y).to_numpy()
        res = chi2_contingency(table, correction=False)
        assert est.scores_[j] == pytest.approx(res.statistic, rel=1e-10)
        assert est.pvalues_[j] == pytest.approx(res.pvalue, rel=1e-8)
    assert est.ranking_[0] == 0


def test_chi2_sklearn_mode_equals_sklearn():
    rng = np.random.default_rng(5)
    y = rng.integers(0, 3, size=50)
    X = rng.poisson(lam=[1.0, 3.0, 0.5, 2.0], size=(50, 4)).astype(float)
    X[:, 0] += 2 * y
    est = Chi2Ranker(method="sklearn").fit(X, y)
    stat, pval = sklearn_chi2(X, y)
    # the same formula; the per-class sums may add in another order (last bits)
    np.testing.assert_allclose(est.scores_, stat, rtol=1e-13, atol=0)
    np.testing.assert_allclose(est.pvalues_, pval, rtol=1e-12, atol=0)


def test_chi2_sklearn_mode_refuses_negative_columns():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.uniform(size=(20, 4)), columns=["a", "b", "c", "d"])
    frame.loc[3, "c"] = -1.0
    y = np.repeat([0, 1], 10)
    with pytest.raises(InvalidInputError, match="'c'") as info:
        Chi2Ranker(method="sklearn").fit(frame, y)
    assert "'a'" not in str(info.value)
    # the default method takes the same data
    assert Chi2Ranker().fit(frame, y).scores_.shape == (4,)


def test_contingency_chi2_is_scale_invariant_unlike_sklearn():
    rng = np.random.default_rng(2)
    y = np.repeat([0, 1], 20)
    X = rng.uniform(size=(40, 3)) + 0.3 * y[:, None]
    Xs = X * np.array([1.0, 100.0, 1.0])
    np.testing.assert_array_equal(Chi2Ranker().fit(X, y).scores_, Chi2Ranker().fit(Xs, y).scores_)
    a = Chi2Ranker(method="sklearn").fit(X, y).scores_
    b = Chi2Ranker(method="sklearn").fit(Xs, y).scores_
    assert b[1] == pytest.approx(100 * a[1])


# ------------------------------------------------------------ both rankers
@pytest.mark.parametrize("Ranker", RANKERS)
@settings(max_examples=20)
@given(seed=st.integers(0, 2**16), perm_seed=st.integers(0, 2**16))
def test_permuting_features_permutes_scores(Ranker, seed, perm_seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, size=40)
    X = rng.normal(size=(40, 5)) + 0.5 * y[:, None] * rng.normal(size=5)
    X[:, 3] = rng.integers(0, 4, size=40)
    perm = np.random.default_rng(perm_seed).permutation(5)
    a = Ranker().fit(X, y).scores_
    b = Ranker().fit(X[:, perm], y).scores_
    np.testing.assert_array_equal(b, a[perm])


TRANSFORMS = {
    "affine": lambda f: 3.5 * f - 2.0,
    "exp": np.exp,
    "cube": lambda f: f**3,
    "arctan": np.arctan,
    "shift_log": lambda f: np.log(f - f.min() + 1.0),
}


@pytest.mark.parametrize("Ranker", RANKERS)
@settings(max_examples=20)
@given(
    seed=st.integers(0, 2**16),
    column=st.integers(0, 3),
    transform=st.sampled_from(sorted(TRANSFORMS)),
    n_bins=st.integers(2, 12),
)
def test_increasing_transform_leaves_scores_unchanged(Ranker, seed, column, transform, n_bins):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=30)
    X = rng.normal(size=(30, 4)) + y[:, None]
    X[:, 2] = rng.integers(-2, 3, size=30)  # discrete, with ties
    Xt = X.copy()
    Xt[:, column] = TRANSFORMS[transform](X[:, column])
    # values within 1e-9 of the range are one value (rankers.ties): a transform that
    # squeezes two distinct values that close (a cube near 0) may merge them
    gaps = np.diff(np.unique(Xt[:, column]))
    assume(gaps.min() > 1e-8 * np.ptp(Xt[:, column]))
    a = Ranker(n_bins=n_bins).fit(X, y).scores_
    b = Ranker(n_bins=n_bins).fit(Xt, y).scores_
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("Ranker", RANKERS)
def test_deterministic(Ranker, mixed):
    X, y = mixed
    np.testing.assert_array_equal(Ranker().fit(X, y).scores_, Ranker().fit(X, y).scores_)


@pytest.mark.parametrize("Ranker", RANKERS)
def test_constant_feature_scores_lowest_with_warning(Ranker, mixed):
    X, y = mixed
    X = np.column_stack([X[:, :2], np.full(len(y), 3.0), X[:, 2:]])
    with pytest.warns(ConstantFeatureWarning, match="x2"):
        est = Ranker().fit(X, y)
    assert est.scores_[2] == 0.0
    assert est.ranking_[-1] == 2
    assert np.all(np.delete(est.scores_, 2) > 0)
    if Ranker is Chi2Ranker:
        assert est.pvalues_[2] == 1.0


@pytest.mark.parametrize("Ranker", RANKERS)
def test_needs_y(Ranker, mixed):
    X, _ = mixed
    with pytest.raises(InvalidInputError, match="supervised"):
        Ranker().fit(X)


@pytest.mark.parametrize("Ranker", RANKERS)
def test_bad_n_bins(Ranker, mixed):
    X, y = mixed
    with pytest.raises(InvalidParameterError, match="n_bins"):
        Ranker(n_bins=1).fit(X, y)


@pytest.mark.parametrize("Ranker", RANKERS)
def test_fit_does_not_modify_input(Ranker, mixed):
    X, y = mixed
    X_copy, y_copy = X.copy(), y.copy()
    Ranker().fit(X, y)
    np.testing.assert_array_equal(X, X_copy)
    np.testing.assert_array_equal(y, y_copy)
    frame = pd.DataFrame(X, columns=list("abcde"))
    frame_copy = frame.copy()
    Ranker().fit(frame, pd.Series(y))
    pd.testing.assert_frame_equal(frame, frame_copy)


def test_heavily_tied_extreme_value_keeps_its_own_bin():
    # 12 distinct values (> n_bins): 95 samples at the maximum, 11 below it.
    from rankers.supervised.information import discretise

    x = np.concatenate([np.arange(11.0), np.full(95, 20.0)])
    for col in (x, -x):
        codes = discretise(col[:, None], 10)[:, 0]
        assert len(np.unique(codes)) >= 2
        assert len(np.unique(codes[col == col[-1]])) == 1  # ties share one bin
    y = np.r_[np.zeros(11, int), np.ones(95, int)]
    ig = InfoGainRanker().fit(np.column_stack([x, np.sin(np.arange(106.0))]), y).scores_
    p1 = 11 / 106
    h = -(p1 * np.log2(p1) + (1 - p1) * np.log2(1 - p1))
    assert ig[0] == pytest.approx(h)  # the tied maximum alone identifies class 1


@pytest.mark.parametrize(
    "kind", ["normal", "counts", "few_values", "mostly_zeros", "near_ties", "mixed"]
)
@pytest.mark.parametrize("seed", range(4))
def test_binned_tables_equal_the_tables_of_the_codes(kind, seed):
    # the rankers count (bin, class) pairs in each column's sorted order; the tables must be
    # those of discretise's codes, count for count (ties, discrete columns, near-ties), and
    # of the same shape whether a block's columns without ties take the short way or not
    from rankers.supervised.information import (
        _binned_contingency,
        _binned_contingency_of,
        _contingency,
        discretise,
    )

    rng = np.random.default_rng(seed)
    m, w = int(rng.integers(12, 70)), int(rng.integers(2, 30))
    X = {
        "normal": lambda: rng.normal(size=(m, w)),
        "counts": lambda: rng.poisson(2.0, size=(m, w)).astype(float),
        "few_values": lambda: rng.integers(0, 4, size=(m, w)) * 1e-3,
        "mostly_zeros": lambda: rng.normal(size=(m, w)) * (rng.random((m, w)) < 0.3),
        "near_ties": lambda: np.round(rng.normal(size=(m, w)), 1) + 1e-13 * rng.normal(size=(m, w)),
        "mixed": lambda: np.where(
            np.arange(w) % 3 == 0, rng.poisson(2.0, size=(m, w)), rng.normal(size=(m, w))
        ),
    }[kind]()
    y = rng.integers(0, 3, size=m)
    for n_bins in (2, 5, 10, 40):
        tables = _binned_contingency(X, y, n_bins)
        np.testing.assert_array_equal(tables, _contingency(discretise(X, n_bins), y))
        rows = np.ascontiguousarray(X.T)
        order = np.argsort(rows, axis=1)
        xs = np.take_along_axis(rows, order, axis=1)
        new = np.ones((w, m), dtype=bool)
        new[:, 1:] = np.diff(xs, axis=1) > 1e-9 * (xs[:, -1] - xs[:, 0])[:, None]
        general = _binned_contingency_of(new, order, y, n_bins, m)
        assert general.shape == tables.shape
        np.testing.assert_array_equal(tables, general)


def test_chi2_sklearn_mode_two_classes_equals_sklearn():
    # two classes: the p-values come from erfc, not scikit-learn's chdtrc; the same numbers
    rng = np.random.default_rng(7)
    y = np.repeat([0, 1], 40)
    X = rng.poisson(lam=3.0, size=(80, 60)).astype(float)
    X[:, :6] += 8 * y[:, None]  # p-values far in the tail
    est = Chi2Ranker(method="sklearn").fit(X, y)
    stat, pval = sklearn_chi2(X, y)
    np.testing.assert_allclose(est.scores_, stat, rtol=1e-13, atol=0)
    np.testing.assert_allclose(est.pvalues_, pval, rtol=1e-12, atol=0)
    assert est.pvalues_.min() < 1e-20


def test_chi2_sklearn_mode_keeps_sparse_input_sparse():
    import scipy.sparse as sp

    from rankers.tags import ranker_tags

    rng = np.random.default_rng(3)
    y = np.repeat([0, 1, 2], 20)
    X = rng.poisson(0.4, size=(60, 30)).astype(float)
    X[:, 0] += y
    dense = Chi2Ranker(method="sklearn").fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # densifying would warn
        sparse = Chi2Ranker(method="sklearn").fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.scores_, dense.scores_, rtol=1e-13)
    np.testing.assert_allclose(sparse.pvalues_, dense.pvalues_, rtol=1e-12)
    np.testing.assert_array_equal(sparse.ranking_, dense.ranking_)
    assert ranker_tags(Chi2Ranker(method="sklearn")).accepts_sparse
    assert not ranker_tags(Chi2Ranker()).accepts_sparse  # the tables sort every column
    with pytest.warns(UserWarning, match="dense"):
        Chi2Ranker().fit(sp.csr_matrix(X), y)
