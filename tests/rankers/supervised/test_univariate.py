"""ANOVA F, Welch's t-test and the Fisher score (rankers.supervised.univariate)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.feature_selection import f_classif

import rankers
from rankers.exceptions import InvalidInputError
from rankers.supervised.univariate import (
    ANOVAFRanker,
    FisherScoreRanker,
    TTestRanker,
    benjamini_hochberg,
)
from rankers.ties import TIE_RTOL


def _data(n_classes=3, m=60, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(m) % n_classes
    X = rng.normal(size=(m, 8))
    X[:, 0] += 1.5 * y
    X[:, 3] -= 0.5 * (y == 1)
    X[:, 5] *= 1 + 2 * (y == 0)  # a variance difference only
    return X, y


def _quiet(fit):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fit()


# ------------------------------------------------------------------ ANOVA F
def test_anova_by_hand():
    # means 1.5 | 3.5, grand mean 2.5: SS_between = 2 * 1 + 2 * 1 = 4, SS_within = 4 * 0.25
    # = 1; F = (4 / 1) / (1 / 2) = 8 on (1, 2) degrees of freedom
    X = np.array([[1.0, 0.0], [2.0, 1.0], [3.0, 0.0], [4.0, 1.0]])
    est = _quiet(lambda: ANOVAFRanker().fit(X, [0, 0, 1, 1]))
    assert est.scores_.tolist() == [8.0, 0.0]
    assert est.pvalues_[0] == pytest.approx(stats.f.sf(8.0, 1, 2))
    assert est.pvalues_[1] == pytest.approx(1.0)


def test_anova_matches_scikit_learn():
    X, y = _data()
    est = ANOVAFRanker().fit(X, y)
    F, p = f_classif(X, y)
    np.testing.assert_allclose(est.scores_, F, rtol=1e-10)
    np.testing.assert_allclose(est.pvalues_, p, rtol=1e-8, atol=1e-300)
    np.testing.assert_allclose(est.qvalues_, stats.false_discovery_control(p), rtol=1e-8)


def test_anova_is_pooled_t_squared_for_two_classes():
    X, y = _data(n_classes=2)
    t = stats.ttest_ind(X[y == 1], X[y == 0]).statistic
    np.testing.assert_allclose(ANOVAFRanker().fit(X, y).scores_, t**2, rtol=1e-10)


def test_perfect_separator_ranks_first_with_a_finite_score():
    X, y = _data(n_classes=2)
    X[:, 7] = y * 2.0 + 1.0  # constant inside each class
    for est in (ANOVAFRanker(), FisherScoreRanker(), TTestRanker()):
        fitted = est.fit(X, y)
        assert np.isfinite(fitted.scores_).all()
        assert fitted.ranking_[0] == 7
        assert fitted.pvalues_[7] < 1e-100


# ------------------------------------------------------------------ Fisher score
def test_fisher_score_by_hand_and_its_f():
    # SS_between 4 over SS_within 1
    X = np.array([[1.0, 0.0], [2.0, 1.0], [3.0, 0.0], [4.0, 1.0]])
    est = _quiet(lambda: FisherScoreRanker().fit(X, [0, 0, 1, 1]))
    assert est.scores_.tolist() == [4.0, 0.0]
    X, y = _data()
    fisher, anova = FisherScoreRanker().fit(X, y), ANOVAFRanker().fit(X, y)
    np.testing.assert_allclose(fisher.scores_ * (60 - 3) / 2, anova.scores_, rtol=1e-10)
    np.testing.assert_array_equal(fisher.ranking_, anova.ranking_)
    np.testing.assert_allclose(fisher.pvalues_, anova.pvalues_, rtol=1e-10)


def test_fisher_score_ranks_like_scikit_feature():
    skfeature = pytest.importorskip(
        "skfeature.function.similarity_based.fisher_score",
        reason="needs the 'peers' extra: pip install '.[peers]'",
    )
    X, y = _data()
    order = np.ravel(skfeature.fisher_score(X, y, mode="index"))
    np.testing.assert_array_equal(FisherScoreRanker().fit(X, y).ranking_, order)


# ------------------------------------------------------------------ Welch's t-test
def test_t_test_by_hand():
    # class 0: 0, 2 (mean 1, var 2); class 1: 4, 6 (mean 5, var 2): t = 4 / sqrt(2/2 + 2/2)
    X = np.array([[0.0, 1.0], [2.0, 0.0], [4.0, 1.0], [6.0, 0.0]])
    est = _quiet(lambda: TTestRanker().fit(X, [0, 0, 1, 1]))
    assert est.t_[0] == pytest.approx(np.sqrt(8.0))
    assert est.df_[0] == pytest.approx(2.0)  # equal variances and sizes: n0 + n1 - 2
    p = 2 * stats.t.sf(np.sqrt(8.0), 2)
    assert est.pvalues_[0] == pytest.approx(p)
    assert est.scores_[0] == pytest.approx(-np.log10(p))


def test_t_test_matches_scipy_welch():
    X, y = _data(n_classes=2)
    est = TTestRanker().fit(X, y)
    ref = stats.ttest_ind(X[y == 1], X[y == 0], equal_var=False)
    np.testing.assert_allclose(est.t_, ref.statistic, rtol=1e-10)
    np.testing.assert_allclose(est.df_, ref.df, rtol=1e-10)
    np.testing.assert_allclose(est.pvalues_, ref.pvalue, rtol=1e-8)
    # ranked by p-value: degrees of freedom differ, so not always by |t|
    np.testing.assert_array_equal(est.ranking_, np.argsort(ref.pvalue, kind="stable"))


def test_t_test_scores_stay_ordered_below_the_smallest_float():
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1], 200)
    X = rng.normal(size=(400, 3))
    X[:, 0] += 30 * y  # p-value far below 1e-308
    X[:, 1] += 40 * y
    est = TTestRanker().fit(X, y)
    assert est.pvalues_[0] == 0.0 and est.pvalues_[1] == 0.0
    assert np.isfinite(est.scores_).all()
    assert est.ranking_.tolist()[:2] == [1, 0]


def test_t_test_one_class_against_the_rest():
    X, y = _data(n_classes=3)
    est = TTestRanker().fit(X, y)
    assert est.t_.shape == (3, 8)
    ref = [stats.ttest_ind(X[y == c], X[y != c], equal_var=False) for c in range(3)]
    np.testing.assert_allclose(est.t_, [r.statistic for r in ref], rtol=1e-10)
    expected = np.minimum(np.min([r.pvalue for r in ref], axis=0) * 3, 1.0)
    np.testing.assert_allclose(est.pvalues_, expected, rtol=1e-8)


def test_t_test_needs_two_samples_per_class():
    X, y = _data(n_classes=2, m=20)
    y[:] = 1
    y[0] = 0
    with pytest.raises(InvalidInputError, match="at least two samples"):
        _quiet(lambda: TTestRanker().fit(X, y))


# ------------------------------------------------------------------ q-values
def test_benjamini_hochberg_by_hand():
    # sorted p 0.01 0.03 0.04 0.5 -> p n / rank 0.04 0.06 0.0533 0.5, then running minimum
    # from the top: 0.04 0.0533 0.0533 0.5
    q = benjamini_hochberg([0.01, 0.04, 0.03, 0.5])
    np.testing.assert_allclose(q, [0.04, 0.16 / 3, 0.16 / 3, 0.5])


@settings(max_examples=40)
@given(p=st.lists(st.floats(0, 1), min_size=1, max_size=30))
def test_q_values_are_monotone_in_p_and_at_least_p(p):
    p = np.array(p)
    q = benjamini_hochberg(p)
    assert (q >= p - 1e-15).all() and (q <= 1.0).all()
    order = np.argsort(p, kind="stable")
    assert (np.diff(q[order]) >= -1e-15).all()


@pytest.mark.parametrize("name", ["anova_f", "t_test", "fisher_score"])
def test_registered_with_p_and_q_values(name):
    X, y = _data(n_classes=2)
    X[:, 2] = 1.0  # constant: no evidence
    est = _quiet(lambda: rankers.get(name).fit(X, y))
    assert est.pvalues_.shape == est.qvalues_.shape == (8,)
    assert est.pvalues_[2] == 1.0 and est.qvalues_[2] == 1.0
    assert est.ranking_[-1] == 2
    assert est.ranking_[0] == 0


@pytest.mark.parametrize("name", ["anova_f", "fisher_score", "t_test"])
def test_rows_grouped_by_class_give_the_same_numbers(name):
    # rows already grouped by class are read as views of X, others gathered class by class:
    # the same rows in the same order either way, so the same numbers to the last bit
    rng = np.random.default_rng(4)
    # two classes: t_test's one-against-the-rest tests regroup the rows of three
    y = rng.integers(0, 2, size=90) if name == "t_test" else rng.integers(0, 3, size=90)
    X = rng.normal(size=(90, 40)) + y[:, None] * rng.normal(size=40)
    grouped = np.argsort(y, kind="stable")
    assert not (np.diff(y) >= 0).all() and (np.diff(y[grouped]) >= 0).all()
    a = rankers.get(name).fit(X, y)
    b = rankers.get(name).fit(X[grouped], y[grouped])
    np.testing.assert_array_equal(a.scores_, b.scores_)
    np.testing.assert_array_equal(a.pvalues_, b.pvalues_)


# ------------------------------------------------------------ fit's one pass over X
def _edge_data(n_classes, seed=5):
    """Constant columns between informative ones, columns at 1e200 and 1e-200, rows not
    grouped by class, a copy of a column and one a few ulps from another."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, size=70)
    X = rng.normal(size=(70, 30)) + 0.7 * y[:, None] * (np.arange(30) % 4 == 0)
    X[:, 3] = 2.5
    X[:, 11] = 0.0
    X[:, 7] = X[:, 6] * 1e200
    X[:, 9] = X[:, 8] * 1e-200
    X[:, 13] = X[:, 12]
    X[:, 15] = X[:, 14] * (1.0 + 4 * np.finfo(float).eps)
    return X, y


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("name", ["anova_f", "fisher_score", "t_test"])
def test_the_moments_of_fits_pass_are_those_of_the_scored_columns(name, n_classes):
    # fit reads X once for the columns' extremes and the class moments of every column;
    # _score keeps the non-constant ones': the numbers are those of the class moments
    # computed on the non-constant columns alone, to the last bit
    from rankers.supervised.univariate import _class_moments

    X, y = _edge_data(n_classes)
    est = _quiet(lambda: rankers.get(name).fit(X, y))
    keep = ~est.constant_features_
    assert not keep[3] and not keep[11] and keep.sum() == 28
    if name == "t_test" and n_classes > 2:  # one test per class: no shared moments
        return
    counts, means, within, per_class, between = _class_moments(X[:, keep], y)
    floor = TIE_RTOL * (within + between)
    if name == "fisher_score":
        np.testing.assert_array_equal(est.scores_[keep], between / np.maximum(within, floor))
    elif name == "anova_f":
        m, C = len(y), n_classes
        F = (between / (C - 1)) / (np.maximum(within, floor) / (m - C))
        np.testing.assert_array_equal(est.scores_[keep], F)
    else:
        var = np.maximum(per_class / (counts[:, None] - 1.0), floor / (len(y) - 1.0))
        t = (means[1] - means[0]) / np.sqrt(var[0] / counts[0] + var[1] / counts[1])
        np.testing.assert_array_equal(est.t_[keep], t)
    # the copies tie, the lower index first
    pos = np.argsort(est.ranking_)
    assert pos[12] < pos[13] and pos[14] < pos[15]


@pytest.mark.parametrize("name", ["anova_f", "fisher_score", "t_test"])
def test_q_values_and_ranking_from_the_scores_order_are_the_sorted_ones(name):
    # the scores' order serves the q-values and the ranking (no second sort): both are
    # what a sort of their own gives, with constant features and exact ties about
    from rankers.ties import tie_groups

    X, y = _edge_data(2, seed=6)
    X = np.column_stack([X, X[:, :5]])  # exact ties of whole features
    est = _quiet(lambda: rankers.get(name).fit(X, y))
    np.testing.assert_array_equal(est.qvalues_, benjamini_hochberg(est.pvalues_))
    order, group = tie_groups(est.scores_)
    informative = ~est.constant_features_
    expected = order[np.argsort(2 * group + ~informative[order], kind="stable")]
    np.testing.assert_array_equal(est.ranking_, expected)


@pytest.mark.parametrize("name", ["anova_f", "fisher_score", "t_test"])
def test_near_tied_scores_keep_their_order_when_inputs_move_by_ulps(name, nudge):
    # features equal up to a few ulps score within the tie tolerance of each other: their
    # order is by index, before and after moving every input by a few ulps
    rng = np.random.default_rng(8)
    y = np.repeat([0, 1], 25)
    base = rng.normal(size=(50, 6)) + 0.8 * y[:, None] * np.array([1, 1, 0, 0, 1, 0])
    X = np.column_stack([base, base * (1 + 2 * np.finfo(float).eps), base[:, ::-1]])
    expected = _quiet(lambda: rankers.get(name).fit(X, y))
    pos = np.argsort(expected.ranking_)
    assert all(pos[j] < pos[j + 6] for j in range(6))
    for seed in range(4):
        Xm = nudge(X, np.random.default_rng(seed))
        moved = _quiet(lambda Xm=Xm: rankers.get(name).fit(Xm, y))
        np.testing.assert_array_equal(moved.ranking_, expected.ranking_)
        np.testing.assert_array_equal(moved.qvalues_, benjamini_hochberg(moved.pvalues_))


@settings(max_examples=60)
@given(
    p=st.lists(st.sampled_from([0.0, 0.01, 0.2, 0.2, 0.5, 1.0]) | st.floats(0, 1), max_size=25),
    seed=st.integers(0, 2**16),
)
def test_q_values_from_a_given_order_are_the_sorted_ones(p, seed):
    # a caller's order is used only when it sorts p ascending: any order gives the
    # q-values of a sort of their own, bit for bit (equal p-values share theirs)
    p = np.array(p, dtype=float)
    expected = benjamini_hochberg(p)
    rng = np.random.default_rng(seed)
    for order in (np.argsort(p, kind="stable"), np.argsort(-p, kind="stable"),
                  rng.permutation(p.size), np.argsort(p)[::-1][::-1]):  # fmt: skip
        np.testing.assert_array_equal(benjamini_hochberg(p, order), expected)
