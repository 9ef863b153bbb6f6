"""``scores_`` are the method's own values: the filters against their reference computations.

The tie rule of :mod:`rankers.ties` decides the order only. On heavy-tailed data (raw
expression-like values over many decades, whose variances span 10+ decades) every score
must still equal what the reference implementation computes, to a few ulps, and keep every
distinct value distinct.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.datasets import load_breast_cancer
from sklearn.feature_selection import chi2 as sklearn_chi2
from sklearn.feature_selection import f_classif

import rankers
from rankers.supervised.information import discretise


def _lognormal_genes(seed: int, m: int = 100, n: int = 2000, sigma: float = 3.0):
    """m samples of n log-normal "genes" (sigma 3: values over ~10 decades), two classes
    with a shift on 50 of them."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], m // 2)
    log_x = rng.normal(scale=sigma, size=(m, n)) + rng.normal(scale=2.0, size=n)
    log_x[y == 1, :50] += 1.5
    return np.exp(log_x), y


@pytest.fixture(params=[0, 1])
def genes(request):
    return _lognormal_genes(request.param)


def _fit(name, X, y=None, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rankers.get(name, **params).fit(X, y)


def test_variance_is_numpys_variance_on_heavy_tails(genes):
    X, _ = genes
    ref = X.var(axis=0)
    assert np.ptp(np.log10(ref)) > 10  # the data do span ten decades
    est = _fit("variance", X)
    np.testing.assert_allclose(est.scores_, ref, rtol=1e-12, atol=0)
    # every distinct variance stays distinct (no value is snapped to a neighbour's)
    assert np.unique(est.scores_).size == np.unique(ref).size == X.shape[1]
    np.testing.assert_array_equal(est.ranking_, np.argsort(-ref, kind="stable"))


def test_variance_on_breast_cancer_keeps_every_value():
    X = load_breast_cancer().data
    est = _fit("variance", X)
    np.testing.assert_allclose(est.scores_, X.var(axis=0), rtol=1e-12, atol=0)
    assert np.unique(est.scores_).size == 30


def _exact_between_within(X, y):
    """Between- and within-class sums of squares in extended precision, around the means
    (no cancellation): the reference the float64 statistics are held to."""
    Xl = X.astype(np.longdouble)
    mu = Xl.mean(axis=0)
    between = sum((y == c).sum() * (Xl[y == c].mean(axis=0) - mu) ** 2 for c in np.unique(y))
    within = sum(((Xl[y == c] - Xl[y == c].mean(axis=0)) ** 2).sum(axis=0) for c in np.unique(y))
    return between, within


def test_anova_f_is_the_f_statistic(genes):
    X, y = genes
    between, within = _exact_between_within(X, y)
    m, C = X.shape[0], 2
    exact = np.asarray((between / (C - 1)) / (within / (m - C)), dtype=np.float64)
    est = _fit("anova_f", X, y)
    np.testing.assert_allclose(est.scores_, exact, rtol=1e-10, atol=0)
    # scikit-learn's f_classif computes the between-class sum as total - within, which loses
    # digits where the classes barely differ: it agrees to 1e-9 where F is not tiny
    F, p = f_classif(X, y)
    big = F > 1e-3
    np.testing.assert_allclose(est.scores_[big], F[big], rtol=1e-9, atol=0)
    np.testing.assert_allclose(est.pvalues_[big], p[big], rtol=1e-6, atol=1e-300)
    ref_p = stats.f.sf(exact, C - 1, m - C)
    np.testing.assert_allclose(est.pvalues_, ref_p, rtol=1e-9, atol=1e-300)
    np.testing.assert_allclose(est.qvalues_, stats.false_discovery_control(ref_p), rtol=1e-9)


def test_t_test_is_scipys_welch(genes):
    X, y = genes
    ref = stats.ttest_ind(X[y == 1], X[y == 0], equal_var=False)
    est = _fit("t_test", X, y)
    np.testing.assert_allclose(est.t_, ref.statistic, rtol=1e-9, atol=0)
    np.testing.assert_allclose(est.pvalues_, ref.pvalue, rtol=1e-6, atol=1e-300)
    np.testing.assert_allclose(est.scores_, -np.log10(ref.pvalue), rtol=1e-6, atol=1e-12)


def test_fisher_score_is_between_over_within(genes):
    X, y = genes
    between, within = _exact_between_within(X, y)
    est = _fit("fisher_score", X, y)
    exact = np.asarray(between / within, dtype=np.float64)
    np.testing.assert_allclose(est.scores_, exact, rtol=1e-10, atol=0)


def test_chi2_is_the_contingency_chi2_of_its_bins(genes):
    X, y = genes
    X = X[:, :200]
    est = _fit("chi2", X, y)
    codes = discretise(X, est.n_bins)
    ref = []
    for j in range(X.shape[1]):
        table = np.array(
            [
                [np.sum((codes[:, j] == b) & (y == c)) for c in (0, 1)]
                for b in np.unique(codes[:, j])
            ]
        )
        ref.append(stats.chi2_contingency(table, correction=False).statistic)
    np.testing.assert_allclose(est.scores_, ref, rtol=1e-9, atol=1e-12)


def test_chi2_sklearn_method_is_sklearns(genes):
    X, y = genes
    est = _fit("chi2", X, y, method="sklearn")
    np.testing.assert_allclose(est.scores_, sklearn_chi2(X, y)[0], rtol=1e-9, atol=0)


@pytest.mark.parametrize("name", ["variance", "anova_f", "t_test", "fisher_score", "chi2"])
def test_order_survives_ulps_on_heavy_tails(name, nudge):
    X, y = _lognormal_genes(3, n=300)
    X = np.column_stack([X, X[:, :20]])  # exact copies: ties in exact arithmetic
    y = y if rankers.ranker_tags(rankers.get(name)).requires_y else None
    expected = _fit(name, X, y).ranking_
    for seed in range(3):
        moved = _fit(name, nudge(X, np.random.default_rng(seed)), y).ranking_
        np.testing.assert_array_equal(moved, expected)
    pos = np.empty_like(expected)
    pos[expected] = np.arange(expected.size)
    assert (pos[:20] < pos[300:]).all()  # an original before its copy
