"""The class tests on sparse counts (one pass over the stored values for every class) and
their two-group outputs (``statistic_``, ``log_fold_change_``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

import rankers
from rankers import columns
from rankers.columns import sparse_extremes
from rankers.supervised import univariate

CLASS_TESTS = ["anova_f", "t_test", "fisher_score"]


def _fit(name, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rankers.get(name).fit(X, y)


def _log1p_counts(n_classes, m=300, n=40, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, size=m)
    counts = rng.poisson(0.3, size=(m, n)).astype(float)
    counts[:, :4] += rng.poisson(3.0, size=(m, 4)) * (y[:, None] == 1)
    X = np.log1p(counts)
    X[:, 5] = 1e6 + rng.normal(size=m) * 1e-2  # every value stored, mean >> spread
    X[:, 6] = np.where(y == 0, 3.0, 5.0)  # constant inside every class
    return X, y


@pytest.mark.parametrize("n_classes", [2, 3, 6])
@pytest.mark.parametrize("name", CLASS_TESTS)
def test_sparse_counts_give_the_dense_numbers_in_blocks_of_rows(name, n_classes, monkeypatch):
    # blocks of 257 stored values: the one pass over them runs in many blocks of rows
    monkeypatch.setattr(columns, "_SPARSE_BLOCK", 257)
    X, y = _log1p_counts(n_classes)
    if n_classes > 2:  # a column with a huge offset is ill-conditioned for one-vs-rest t
        X[:, 5] -= 1e6 - 1.0
    dense = _fit(name, X, y)
    sparse = _fit(name, sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.scores_, dense.scores_, rtol=1e-9)
    np.testing.assert_array_equal(sparse.ranking_, dense.ranking_)
    np.testing.assert_allclose(sparse.pvalues_, dense.pvalues_, rtol=1e-8, atol=1e-300)
    if name == "t_test":
        np.testing.assert_allclose(sparse.t_, dense.t_, rtol=1e-9)


def test_sums_of_squares_that_cancel_are_summed_again_around_the_means():
    X, y = _log1p_counts(2)
    counts = np.bincount(y).astype(float)
    top = np.abs(X).max(axis=0)
    means, per_class = univariate._sparse_moments(sp.csr_matrix(X), y, counts, top)
    for c in (0, 1):
        part = X[y == c]
        np.testing.assert_allclose(means[c], part.mean(axis=0), rtol=1e-13)
        ss = ((part - part.mean(axis=0)) ** 2).sum(axis=0)
        # the column of 1e6 + noise: sum(x^2) - n mean^2 would keep no correct digit
        np.testing.assert_allclose(per_class[c], ss, rtol=1e-9, atol=1e-300)
        assert per_class[c, 6] == 0.0  # constant inside the class: exactly 0


def test_one_pass_for_all_classes(monkeypatch):
    # multi-class t_test on sparse input: the class moments are taken once, not per class
    calls = []
    original = univariate._sparse_moments

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(univariate, "_sparse_moments", counting)
    X, y = _log1p_counts(6)
    _fit("t_test", sp.csr_matrix(X), y)
    assert len(calls) == 1


def test_one_vs_rest_from_class_moments_is_the_direct_one():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 4, size=200)
    X = rng.gamma(2.0, size=(200, 5)) + y[:, None]
    counts = np.bincount(y).astype(float)
    means = np.stack([X[y == c].mean(axis=0) for c in range(4)])
    ss = np.stack([((X[y == c] - means[c]) ** 2).sum(axis=0) for c in range(4)])
    n2, mu2, ss2 = univariate._one_vs_rest(counts, means, ss, 2)
    rest = X[y != 2]
    np.testing.assert_allclose(n2, [rest.shape[0], (y == 2).sum()])
    np.testing.assert_allclose(mu2[0], rest.mean(axis=0), rtol=1e-13)
    np.testing.assert_allclose(ss2[0], ((rest - rest.mean(axis=0)) ** 2).sum(axis=0), rtol=1e-12)
    np.testing.assert_array_equal(ss2[1], ss[2])


def test_sparse_extremes_are_scipys():
    rng = np.random.default_rng(4)
    for seed in range(10):
        A = sp.random(30, 12, density=0.1 + 0.09 * seed, format="csr", random_state=seed)
        A.data = rng.normal(size=A.nnz)
        A.data[:2] = 0.0  # explicit zeros
        lo, hi = sparse_extremes(A)
        np.testing.assert_array_equal(lo, A.min(axis=0).toarray().ravel())
        np.testing.assert_array_equal(hi, A.max(axis=0).toarray().ravel())
    # counts (no value below 0): only the columns without a zero are read for the minimum;
    # and all values below 0 likewise for the maximum
    counts = rng.poisson(0.5, size=(40, 9)).astype(float)
    counts[:, 2] = rng.poisson(3.0, size=40) + 1.0  # no zero
    counts[:, 5] = 0.0
    for A in (sp.csr_matrix(counts), sp.csr_matrix(-counts)):
        lo, hi = sparse_extremes(A)
        np.testing.assert_array_equal(lo, A.min(axis=0).toarray().ravel())
        np.testing.assert_array_equal(hi, A.max(axis=0).toarray().ravel())
    # a full column (no implicit zero), duplicates (summed first) and NaN (propagated)
    dup = sp.csr_matrix(
        (np.array([1.0, -3.0, 2.0, 4.0, 5.0]), np.array([0, 0, 1, 0, 1]), np.array([0, 3, 5])),
        shape=(2, 2),
    )
    lo, hi = sparse_extremes(dup)
    np.testing.assert_array_equal(lo, [-2.0, 2.0])
    np.testing.assert_array_equal(hi, [4.0, 5.0])
    lo, hi = sparse_extremes(sp.csr_matrix(np.array([[np.nan, 1.0], [0.0, 2.0]])))
    assert np.isnan(lo[0]) and np.isnan(hi[0]) and (lo[1], hi[1]) == (1.0, 2.0)


def test_duplicate_entries_are_summed_before_the_statistics():
    X, y = _log1p_counts(2, n=10)
    coo = sp.coo_matrix(X)
    # every stored value split in two halves: the same matrix, written twice as long
    twice = sp.csr_matrix(
        (np.r_[coo.data / 2, coo.data / 2], (np.r_[coo.row, coo.row], np.r_[coo.col, coo.col])),
        shape=X.shape,
    )
    twice.has_canonical_format = False
    for name in [*CLASS_TESTS, "variance"]:
        target = None if name == "variance" else y
        a, b = _fit(name, X, target), _fit(name, twice, target)
        np.testing.assert_allclose(b.scores_, a.scores_, rtol=1e-9)


# ----------------------------------------------------------------- two-group outputs
def _scanpy_logfc(X, y):
    """scanpy's rank_genes_groups fold change, group 1 against group 0 (log1p data); where
    expm1 overflows (the column of 1e6: NaN in scanpy's formula) the same quantity in log
    space, log2(e) (mu1 - mu0), which ours gives instead of NaN."""
    mu1, mu0 = X[y == 1].mean(axis=0), X[y == 0].mean(axis=0)
    with np.errstate(over="ignore", invalid="ignore"):
        direct = np.log2((np.expm1(mu1) + 1e-9) / (np.expm1(mu0) + 1e-9))
    return np.where(np.isfinite(direct), direct, (mu1 - mu0) / np.log(2.0))


@pytest.mark.parametrize("sparse", [False, True])
def test_t_test_signed_statistic_and_log_fold_change(sparse):
    X, y = _log1p_counts(2)
    X[:, 7] = 0.0  # a constant feature: 0 for both
    est = _fit("t_test", sp.csr_matrix(X) if sparse else X, y)
    with warnings.catch_warnings():  # scipy warns about the constant-in-class column
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = stats.ttest_ind(X[y == 1], X[y == 0], equal_var=False)
    keep = np.ones(X.shape[1], dtype=bool)
    keep[[6, 7]] = False  # a perfect separator (floored variance) and a constant
    np.testing.assert_allclose(est.statistic_[keep], ref.statistic[keep], rtol=1e-8)
    assert est.statistic_[6] > 1e3 and est.statistic_[7] == 0.0  # class 1 (5.0) above 0 (3.0)
    np.testing.assert_array_equal(est.statistic_, est.t_)
    assert (est.statistic_[:4] > 0).all()  # the markers of class 1: positive, 1 minus 0
    # the column of 1e6: its fold change is a difference of means of 1e6 (atol)
    np.testing.assert_allclose(
        est.log_fold_change_[keep], _scanpy_logfc(X, y)[keep], rtol=1e-9, atol=1e-10
    )
    assert est.log_fold_change_[7] == 0.0
    assert np.isfinite(est.log_fold_change_).all()  # means of 1e6: no inf - inf
    # the hand number of one gene: log2(expm1(mean1) / expm1(mean0))
    mu1, mu0 = X[y == 1, 0].mean(), X[y == 0, 0].mean()
    hand = np.log2((np.expm1(mu1) + 1e-9) / (np.expm1(mu0) + 1e-9))
    assert est.log_fold_change_[0] == pytest.approx(hand, rel=1e-12)


def test_labels_order_the_sign():
    # the classes in sorted order: "b" is classes_[1], so t and the fold change are b over a
    X, y = _log1p_counts(2)
    labels = np.where(y == 1, "b", "a")
    est = _fit("t_test", X, labels)
    flipped = _fit("t_test", X, np.where(y == 1, "a", "b"))
    np.testing.assert_allclose(est.statistic_, -flipped.statistic_, rtol=1e-12)
    np.testing.assert_allclose(est.log_fold_change_, -flipped.log_fold_change_, rtol=1e-9)


def test_anova_f_two_classes_gives_the_pooled_t_and_fisher_score_the_fold_change():
    X, y = _log1p_counts(2)
    keep = np.ones(X.shape[1], dtype=bool)
    keep[6] = False
    anova = _fit("anova_f", X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        pooled = stats.ttest_ind(X[y == 1], X[y == 0], equal_var=True).statistic
    np.testing.assert_allclose(anova.statistic_[keep], pooled[keep], rtol=1e-8)
    np.testing.assert_allclose(anova.log_fold_change_, _scanpy_logfc(X, y), rtol=1e-9, atol=1e-10)
    fisher = _fit("fisher_score", X, y)
    assert not hasattr(fisher, "statistic_")
    np.testing.assert_allclose(fisher.log_fold_change_, _scanpy_logfc(X, y), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("name", CLASS_TESTS)
def test_no_two_group_outputs_for_more_classes_even_after_a_two_class_fit(name):
    X, y = _log1p_counts(2)
    est = _fit(name, X, y)
    assert hasattr(est, "log_fold_change_")
    X3, y3 = _log1p_counts(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X3, y3)
    assert not hasattr(est, "statistic_") and not hasattr(est, "log_fold_change_")


@pytest.mark.parametrize("sparse", [True, False])
def test_class_scores_of_a_multiclass_t_test_are_each_class_against_the_rest(sparse):
    """With more than two classes each row of ``class_scores_`` is what a two-class fit of
    "that class vs the rest" scores, and under the fit's own ordering rule it gives that
    fit's ranking_ (the markers of every group come from one fit)."""
    from rankers.ties import ranking_order

    X, y = _log1p_counts(4)
    X = X.copy()
    X[:, 3] = 0.0  # a constant feature: last, as a two-class fit puts it
    Xs = sp.csr_matrix(X) if sparse else X
    multi = _fit("t_test", Xs, y)
    assert multi.class_scores_.shape == (4, X.shape[1])
    for c in range(4):
        alone = _fit("t_test", Xs, (y == c).astype(int))
        # the same numbers up to rounding: column 5 (mean 1e6, spread 1e-2) keeps about ten
        # digits of its variance whichever way the rest's moments are summed
        np.testing.assert_allclose(multi.class_scores_[c], alone.scores_, rtol=1e-5, atol=0)
        others = np.arange(X.shape[1]) != 5
        np.testing.assert_allclose(
            multi.class_scores_[c][others], alone.scores_[others], rtol=1e-11, atol=0
        )
        order = ranking_order(multi.class_scores_[c], multi.constant_features_)
        np.testing.assert_array_equal(order, alone.ranking_)
    # a two-class fit has none (nor keeps one from an earlier fit)
    multi.fit(Xs, (y == 0).astype(int))
    assert not hasattr(multi, "class_scores_")
