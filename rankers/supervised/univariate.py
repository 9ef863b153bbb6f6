"""Univariate tests of a feature against the class: ANOVA F, Welch's t-test, Fisher score.

The rankers a bioinformatician reaches for first. Each scores every feature on its own
from per-class means and variances (one pass over the data), reports the test's p-values
and their Benjamini–Hochberg q-values where the statistic has a null distribution.

Within-class variance below ``1e-9`` of a feature's total variance is rounding, not
signal (the tie rule of :mod:`rankers.ties`): it is floored there, so that a feature
constant inside every class (a perfect separator) gets a large finite statistic instead
of an infinite one, and ranks above every other; its p-value is then 0 or nearly.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from scipy import special

from rankers.base import BaseRanker
from rankers.columns import class_moments
from rankers.context import Scores
from rankers.exceptions import InvalidInputError
from rankers.preprocessing import scale_by_power_of_two
from rankers.ties import TIE_RTOL

__all__ = [
    "ANOVAFRanker",
    "FisherScoreRanker",
    "TTestRanker",
    "benjamini_hochberg",
    "f_statistic",
    "one_vs_rest_welch",
]


def benjamini_hochberg(pvalues, order=None) -> np.ndarray:
    """Benjamini–Hochberg q-values (false discovery rate adjusted p-values).

    ``q_(i) = min_{j >= i} p_(j) n / j`` over the p-values sorted ascending, capped at 1:
    rejecting every hypothesis with ``q <= alpha`` controls the false discovery rate at
    ``alpha`` for independent (or positively dependent) tests. The numbers of
    :func:`scipy.stats.false_discovery_control` with ``method="bh"`` (the same steps),
    without its per-call overhead, which filters called in loops pay many times.

    ``order``, optional, is a permutation the caller already has that may sort the
    p-values ascending (a ranker's order of its statistic): it is used when it does,
    which one comparison of neighbours checks, and saves the sort. Any ascending order
    gives the same q-values (equal p-values share theirs), so it never changes them.

    Examples
    --------
    >>> benjamini_hochberg([0.01, 0.04, 0.03, 0.5]).round(4).tolist()
    [0.04, 0.0533, 0.0533, 0.5]
    """
    p = np.asarray(pvalues, dtype=np.float64)
    n = p.size
    if n == 0:
        return p.copy()
    # from the largest p-value down (contiguous: the running minimum runs forwards)
    down = None
    if order is not None and len(order) == n:
        down = np.asarray(order, dtype=np.intp)[::-1]
        ranked = p[down]
        with np.errstate(invalid="ignore"):
            if not (ranked[:-1] >= ranked[1:]).all():  # not ascending (or a NaN)
                down = None
    if down is None:
        down = np.argsort(p)[::-1]
        ranked = p[down]
    ranked *= n / np.arange(n, 0, -1, dtype=np.float64)
    np.minimum.accumulate(ranked, out=ranked)
    np.clip(ranked, 0.0, 1.0, out=ranked)
    q = np.empty(n)
    q[down] = ranked
    return q


#: column maxima within which no square or sum of squares under- or overflows
_SAFE = (1e-100, 1e100)


def _chunk_width(m: int) -> int:
    """Columns per block of the one-pass statistics: about 4 MB of float64 per block, so a
    block stays in cache across the reductions over it (min, max, sums, deviations) and no
    copy of the whole ``X`` is ever made. Measured on 72 x 7,129 ... 1,000 x 50,000 (two
    classes): 4 MB blocks took 0.77-0.94x the time of 1 MB ones, 0.41-0.67x that of
    256 kB ones (fewer calls per column; the deviations' buffer is reused)."""
    return int(max(16, (1 << 19) // max(m, 1)))


def _class_moments(X, y: np.ndarray, top: np.ndarray | None = None):
    """Per-class counts, means and within-class sums of squares, and the between-class
    sum of squares, of every column of ``X`` (dense or sparse).

    Means come from each class's own rows; sums of squares are taken around each class's
    own mean (no cancellation of ``Σx² - n μ²``), and the between-class sum
    ``Σ_c n_c (μ_c - μ)²`` from the class means directly (no cancellation of
    ``total - within`` for a feature whose classes barely differ). A column whose largest
    absolute value is outside ``_SAFE`` is first divided by a power of two near it
    (exact): every statistic here is a ratio, and a feature in units of 1e300 beside
    others must not overflow; its means and sums are returned in those units (``top``,
    each column's largest absolute value, saves a pass when the caller has it). Dense
    ``X`` is read once, in blocks of columns with the rows grouped by class
    (:func:`_dense_moments`); sparse ``X`` stays sparse.
    """
    counts = np.bincount(y, minlength=int(y.max()) + 1).astype(np.float64)
    if sp.issparse(X):
        if top is None:
            top = abs(X).max(axis=0).toarray().ravel()
        means, per_class = _sparse_moments(X.tocsr(), y, counts, top)
    else:
        if top is None:
            top = np.maximum(X.max(axis=0), -X.min(axis=0))
        means, per_class, _, _ = _dense_moments(X, y, counts, top)
    return _combine(counts, means, per_class, y.size)


def _combine(counts: np.ndarray, means: np.ndarray, per_class: np.ndarray, m: int):
    """:func:`_class_moments`' results from the per-class means and sums of squares."""
    within = per_class.sum(axis=0)
    grand = (counts @ means) / m
    between = counts @ ((means - grand) ** 2)
    return counts, means, within, per_class, between


def _dense_moments(X: np.ndarray, y: np.ndarray, counts: np.ndarray, top=None):
    """Per-class means and sums of squares of dense ``X``, in one read of it: blocks of
    columns (:func:`_chunk_width`), the rows of each class together; with ``top=None``
    also every column's smallest and largest value (else None, None), taken from the
    block while it is in cache, for :meth:`BaseRanker.fit`'s checks.

    Returns ``means, per_class, lo, hi``; the only memory taken beside ``X`` is a block's
    deviations (one buffer, reused) and the per-class results.
    """
    m, n = X.shape
    n_classes = counts.size
    # the rows of each class together; data sets often come grouped by class already,
    # and then the blocks are views of X, not copies
    grouped = bool((y[1:] >= y[:-1]).all())
    order = None if grouped else np.argsort(y, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(counts.astype(np.intp))]).tolist()
    means = np.zeros((n_classes, n))
    per_class = np.zeros((n_classes, n))
    lo = hi = None
    if top is None:
        lo, hi = np.empty(n), np.empty(n)
    width = _chunk_width(m)
    scratch = np.empty(int(counts.max()) * min(width, n))
    for j in range(0, n, width):
        cols = slice(j, min(j + width, n))
        # one block of columns, rows grouped by class (a copy unless they were already)
        block = X[:, cols] if order is None else X[order, cols]
        if lo is None:
            big = top[cols]
        else:
            np.min(block, axis=0, out=lo[cols])
            np.max(block, axis=0, out=hi[cols])
            big = np.negative(lo[cols])
            np.maximum(big, hi[cols], out=big)
        with np.errstate(invalid="ignore"):  # NaN: fit refuses it after this pass
            safe = (big >= _SAFE[0]) & (big <= _SAFE[1])
        if not safe.all():
            # squares could under- or overflow: scale those columns (exactly) near 1;
            # otherwise the numbers are the same, scaled or not (and all-zero columns
            # and safe ones are left as they are: 2**0)
            _, exponent = np.frexp(big)
            exponent[safe] = 0
            block = scale_by_power_of_two(block, -exponent)
        w = block.shape[1]
        for c in range(n_classes):
            part = block[bounds[c] : bounds[c + 1]]
            if not len(part):
                continue
            mu = part.sum(axis=0)
            mu /= len(part)
            d = np.subtract(part, mu, out=scratch[: len(part) * w].reshape(len(part), w))
            means[c, cols] = mu
            per_class[c, cols] = np.einsum("ij,ij->j", d, d)
    return means, per_class, lo, hi


def _unsafe_exponents(top: np.ndarray) -> np.ndarray | None:
    """The power of two each column is divided by before its squares are summed (0 for a
    column whose largest absolute value ``top`` is inside ``_SAFE``), or None when every
    column is safe: the class moments of such a column are in those units."""
    with np.errstate(invalid="ignore"):
        safe = (top >= _SAFE[0]) & (top <= _SAFE[1])
    if safe.all():
        return None
    exponent = np.frexp(top)[1]
    exponent[safe] = 0
    return exponent


def _sparse_moments(X, y: np.ndarray, counts: np.ndarray, top: np.ndarray):
    """:func:`_dense_moments` of a CSR matrix from its stored values, every class at once
    (:func:`rankers.columns.class_moments`: one pass over the stored values, and a second
    around the class means only for the columns where ``Σx² - n_c μ_c²`` cancels)."""
    return class_moments(X, y, counts, exponent=_unsafe_exponents(top))


def _one_vs_rest(counts: np.ndarray, means: np.ndarray, per_class: np.ndarray, c: int):
    """Counts, means and sums of squares of the two groups "the other classes" (row 0)
    and class ``c`` (row 1), combined from the per-class ones exactly (Chan, Golub &
    LeVeque): the rest's sum of squares is ``Σ_k SS_k + n_k (μ_k - μ_rest)²`` over the
    other classes, with no cancellation and no pass over ``X``."""
    rest = np.arange(counts.size) != c
    n_rest = counts[rest].sum()
    mu_rest = (counts[rest] @ means[rest]) / n_rest
    ss_rest = per_class[rest].sum(axis=0) + counts[rest] @ ((means[rest] - mu_rest) ** 2)
    return (
        np.array([n_rest, counts[c]]),
        np.stack([mu_rest, means[c]]),
        np.stack([ss_rest, per_class[c]]),
    )


def _log2_expm1(mu: np.ndarray) -> np.ndarray:
    """``log2(expm1(mu) + 1e-9)`` without overflow: above 30 (expm1 overflows past ~709,
    and there ``expm1(mu) + 1e-9 = e^mu (1 - e^-mu (1 - 1e-9))``) from ``mu`` itself, so a
    fold change of large means (data that were not log1p-transformed) is finite, not
    inf - inf; NaN where ``expm1(mu) + 1e-9`` is not positive."""
    mu = np.asarray(mu, dtype=np.float64)
    small = mu <= 30.0
    out = np.empty_like(mu)
    out[small] = np.log2(np.expm1(mu[small]) + 1e-9)
    big = mu[~small]
    out[~small] = (big + np.log1p(-np.exp(-big) * (1.0 - 1e-9))) / np.log(2.0)
    return out


class _UnivariateBase(BaseRanker):
    """Class tests share the target kind, the contract attributes and the q-values."""

    target_kind = "classification"
    requires_y = True
    accepts_sparse = True  # the class moments read the stored values of a CSR matrix
    deterministic = True
    scale_invariant = True  # every statistic is a ratio of variances (or a t)
    feature_scale_invariant = True  # each feature's statistic is free of its units
    _rescales_columns = True  # the class moments divide each column by a power of two

    def _check_input(self, X, lo, hi) -> None:
        # constant features never reach _score: they are "no evidence", p = q = 1
        self.pvalues_ = np.ones(X.shape[1])
        self.qvalues_ = np.ones(X.shape[1])
        # two-class outputs: set by _score for two classes only (no stale ones from a refit)
        self.__dict__.pop("statistic_", None)
        self.__dict__.pop("log_fold_change_", None)

    def _column_pass(self, X, y):
        # dense X: fit's pass for the columns' extremes takes the class moments too (one
        # read of X); _score picks the non-constant columns' from them
        if sp.issparse(X) or not self._fused(y):
            return super()._column_pass(X, y)
        counts = np.bincount(y, minlength=int(y.max()) + 1).astype(np.float64)
        means, per_class, lo, hi = _dense_moments(X, y, counts)
        return lo, hi, (counts, means, per_class)

    def _fused(self, y: np.ndarray) -> bool:
        """Whether ``_score`` reads the class moments of ``y`` itself (from fit's pass)."""
        return True

    def _moments(self, X, y: np.ndarray, context):
        """:func:`_class_moments` of the columns ``_score`` sees (``X``), from fit's pass
        over all columns when it took them (``context.column_pass``)."""
        stats = context.column_pass
        if stats is None:
            return _class_moments(X, y, context.top)
        counts, means, per_class = stats
        keep = context.informative
        if not keep.all():  # C order, as _class_moments' own (BLAS products follow it)
            keep = np.flatnonzero(keep)
            means, per_class = means.take(keep, axis=1), per_class.take(keep, axis=1)
        return _combine(counts, means, per_class, y.size)

    def _two_groups(
        self, means: np.ndarray, top: np.ndarray, statistic: np.ndarray | None = None
    ) -> None:
        """``log_fold_change_`` (and ``statistic_``, when given) of a two-class fit from
        the class means of the columns ``_score`` sees (``top``: their largest absolute
        values, ``context.top``): scanpy's fold change for ``log1p`` data,
        ``log2((expm1(μ_1) + 1e-9) / (expm1(μ_0) + 1e-9))``, the second class (code 1)
        over the first; 0 for constant features."""
        exponent = _unsafe_exponents(top)  # the moments' units, back to X's
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            mu = means if exponent is None else np.ldexp(means, exponent)
            lfc = np.log2((np.expm1(mu[1]) + 1e-9) / (np.expm1(mu[0]) + 1e-9))
            large = (mu[1] > 30.0) | (mu[0] > 30.0)  # expm1 near overflow: in log space
            lfc[large] = _log2_expm1(mu[1][large]) - _log2_expm1(mu[0][large])
        self.log_fold_change_ = self._to_all_features(lfc, 0.0)
        if statistic is not None:
            self.statistic_ = self._to_all_features(statistic, 0.0)

    def _set_pvalues(self, p: np.ndarray, order: np.ndarray | None = None) -> None:
        """``pvalues_`` and ``qvalues_`` of all features from ``p`` of the scored ones;
        ``order``, the scores' stable order best first, sorts ``p`` ascending when the
        p-value falls as the score grows (checked by :func:`benjamini_hochberg`); ``_score``
        hands it to fit's ranking too (:class:`~rankers.context.Scores`), so neither sorts
        again."""
        constant = self.constant_features_
        self.pvalues_ = self._to_all_features(p, 1.0) if constant.any() else p
        if order is not None and constant.any():
            # p = 1 for constant features: last, in ascending order
            order = np.concatenate([np.flatnonzero(~constant)[order], np.flatnonzero(constant)])
        self.qvalues_ = benjamini_hochberg(self.pvalues_, order)


class ANOVAFRanker(_UnivariateBase):
    """Rank features by the one-way ANOVA F statistic of their values across the classes.

    ``F = (SS_between / (C - 1)) / (SS_within / (m - C))`` with ``C`` classes and ``m``
    samples: the variance of the class means against the variance inside the classes.
    The same statistic as :func:`sklearn.feature_selection.f_classif` (its ``F``), computed
    around each class's mean. Every feature has the same degrees of freedom, so ranking by
    ``F`` is ranking by p-value. For two classes it is the square of the pooled-variance
    t statistic (:class:`TTestRanker` uses Welch's unpooled one).

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        The F statistic; constant features score 0.
    pvalues_ : ndarray of shape (n_features,)
        Upper-tail p-values of ``F(C - 1, m - C)``; 1 for constant features.
    qvalues_ : ndarray of shape (n_features,)
        Benjamini–Hochberg q-values of ``pvalues_`` (:func:`benjamini_hochberg`).
    statistic_ : ndarray of shape (n_features,)
        Two classes only: the pooled-variance t, ``sqrt(F)`` signed by
        ``μ_1 - μ_0`` (the second class in sorted order minus the first); 0 for constant
        features. Not set for more classes (``F`` has no sign).
    log_fold_change_ : ndarray of shape (n_features,)
        Two classes only: scanpy's log fold change for ``log1p`` data, as
        :class:`TTestRanker` gives it. Not set for more classes.
    ranking_ : ndarray of shape (n_features,)
        Feature indices, best first.

    Notes
    -----
    Time ``O(m n)`` (sparse ``X``: ``O(nnz + C n)``, one pass over the stored values for
    every class), memory one copy of ``X``. Needs at least one class with two samples
    (``m > C``).

    **Where it works.** On the planted-structure atlas (the structures with a class; 200
    samples, 200 and 2,000 features, 0.5-50 % of them informative, 2 seeds; the mean share of
    the planted features in its top k, against a random ranking's), it recovers imbalanced,
    shift; it fails on xor (within 0.1 of chance). The shares are in
    ``benchmarks/results/atlas_grid/summary.md``; :doc:`/guide/which-ranker` has the tables and
    heat maps.

    See Also
    --------
    TTestRanker : Welch's t-test, two classes, unequal variances.
    FisherScoreRanker : ``SS_between / SS_within``, the same ranking.

    References
    ----------
    .. [1] R. A. Fisher, "Statistical Methods for Research Workers", 1925 (analysis of
       variance).

    Examples
    --------
    >>> import numpy as np
    >>> from rankers.supervised.univariate import ANOVAFRanker
    >>> X = np.array([[1.0, 0.0], [2.0, 1.0], [3.0, 0.0], [4.0, 1.0]])
    >>> y = np.array([0, 0, 1, 1])
    >>> ANOVAFRanker().fit(X, y).scores_.tolist()  # means 1.5 | 3.5; 0.5 | 0.5
    [8.0, 0.0]
    """

    name = "anova_f"
    reference: ClassVar[str] = "One-way analysis of variance F test (Fisher 1925)"

    def __init__(self, k=None):
        self.k = k

    def _score(self, X, y, context):
        moments = self._moments(X, y, context)
        F, p = _f_test(moments, X.shape[0])
        order = np.argsort(-F, kind="stable")
        self._set_pvalues(p, order)
        means = moments[1]
        if means.shape[0] == 2:  # the pooled-variance t: sqrt(F), signed by μ_1 - μ_0
            self._two_groups(means, context.top, np.sign(means[1] - means[0]) * np.sqrt(F))
        return Scores(F, order)


def f_statistic(X, y: np.ndarray, *, _top=None) -> tuple[np.ndarray, np.ndarray]:
    """One-way ANOVA F statistic of every column of ``X`` across the classes ``y``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        Non-constant features.
    y : ndarray of int of shape (n_samples,)
        Class codes 0..C-1.

    Returns
    -------
    F, pvalues : ndarray of shape (n_features,)
        The statistic (within-class variance floored at the tie tolerance of the total)
        and its upper-tail p-values on ``(C - 1, m - C)`` degrees of freedom.
    """
    return _f_test(_class_moments(X, y, _top), X.shape[0])


def _f_test(moments, m: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`f_statistic` from :func:`_class_moments`' results on ``m`` samples."""
    counts, _, within, _, between = moments
    C = int((counts > 0).sum())
    if C < 2:
        raise InvalidInputError("the F statistic needs at least two classes in y")
    if m <= C:
        raise InvalidInputError(
            f"the F statistic needs more samples than classes ({m} samples, {C} classes): "
            "with one sample per class there is no within-class variance"
        )
    within = np.maximum(within, TIE_RTOL * (within + between))
    F = (between / (C - 1)) / (within / (m - C))
    return F, special.fdtrc(C - 1, m - C, F)  # stats.f.sf's own function


class FisherScoreRanker(_UnivariateBase):
    """Rank features by the Fisher score: between-class over within-class scatter.

    ``S = Σ_c n_c (μ_c - μ)² / Σ_c n_c σ_c²`` with ``σ_c²`` the class's variance (Duda,
    Hart & Stork; scikit-feature's ``fisher_score``, which computes it through a graph
    Laplacian). It equals ``SS_between / SS_within``, so it ranks the features exactly as
    :class:`ANOVAFRanker` does (``F = S (m - C) / (C - 1)``); it is here because users
    look for it by this name.

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        The Fisher score, >= 0; constant features score 0.
    pvalues_, qvalues_ : ndarray of shape (n_features,)
        Those of the equivalent F test (see :class:`ANOVAFRanker`).
    log_fold_change_ : ndarray of shape (n_features,)
        Two classes only: scanpy's log fold change for ``log1p`` data, as
        :class:`TTestRanker` gives it. Not set for more classes. The score has no sign,
        so there is no ``statistic_`` (:class:`ANOVAFRanker` gives the signed t).
    ranking_ : ndarray of shape (n_features,)
        Feature indices, best first.

    Notes
    -----
    Time ``O(m n)`` (sparse ``X``: ``O(nnz + C n)``), memory one copy of ``X``.

    **Where it works.** On the planted-structure atlas (the structures with a class; 200
    samples, 200 and 2,000 features, 0.5-50 % of them informative, 2 seeds; the mean share of
    the planted features in its top k, against a random ranking's), it recovers imbalanced,
    shift; it fails on xor (within 0.1 of chance). The shares are in
    ``benchmarks/results/atlas_grid/summary.md``; :doc:`/guide/which-ranker` has the tables and
    heat maps.

    References
    ----------
    .. [1] R. O. Duda, P. E. Hart and D. G. Stork, "Pattern Classification", 2nd ed.,
       Wiley, 2001.
    .. [2] Q. Gu, Z. Li and J. Han, "Generalized Fisher Score for Feature Selection",
       UAI 2011.

    Examples
    --------
    >>> import numpy as np
    >>> from rankers.supervised.univariate import FisherScoreRanker
    >>> X = np.array([[1.0, 0.0], [2.0, 1.0], [3.0, 0.0], [4.0, 1.0]])
    >>> FisherScoreRanker().fit(X, [0, 0, 1, 1]).scores_.tolist()  # 4 / 1; 0 / 1
    [4.0, 0.0]
    """

    name = "fisher_score"
    reference: ClassVar[str] = "Fisher score (Duda, Hart & Stork 2001; Gu, Li & Han 2011)"

    def __init__(self, k=None):
        self.k = k

    def _score(self, X, y, context):
        m = X.shape[0]
        counts, means, within, _, between = self._moments(X, y, context)
        if means.shape[0] == 2:
            self._two_groups(means, context.top)
        C = int((counts > 0).sum())
        if C < 2:
            raise InvalidInputError("fisher_score needs at least two classes in y")
        within = np.maximum(within, TIE_RTOL * (within + between))
        S = between / within
        order = np.argsort(-S, kind="stable")
        if m > C:
            self._set_pvalues(special.fdtrc(C - 1, m - C, S * (m - C) / (C - 1)), order)
        else:
            self._set_pvalues(np.ones(X.shape[1]), order)
        return Scores(S, order)


def one_vs_rest_welch(
    counts: np.ndarray, means: np.ndarray, per_class: np.ndarray, classes: np.ndarray
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Welch's t of each of ``classes`` against the other classes, from every class's
    moments, as :class:`TTestRanker` tests them on more than two classes.

    The rest's moments are combined from the other classes' exactly (Chan, Golub &
    LeVeque): no pass over the data per class.

    Parameters
    ----------
    counts : ndarray of shape (n_classes,)
        Samples per class.
    means, per_class : ndarray of shape (n_classes, n_features)
        Every class's means and sums of squares around them.
    classes : ndarray of int
        The classes to test, each with two samples or more and two or more outside it.

    Returns
    -------
    list of (t, df, log_p)
        Per tested class: the statistic (the class minus the rest), its Welch-Satterthwaite
        degrees of freedom and the log of the two-sided p-value (finite where the p-value
        underflows); ``TTestRanker.class_scores_`` is ``max(-log_p / log(10), 0)``.
    """
    m = int(counts.sum())
    return [
        _welch_of_moments(_combine(*_one_vs_rest(counts, means, per_class, c), m), m)
        for c in classes
    ]


def _welch(X, y: np.ndarray, top=None, moments=None):
    """Welch's t (class 1 minus class 0), its degrees of freedom and the log of the
    two-sided p-value, per column; ``y`` holds 0/1 with at least two of each
    (``moments``: :func:`_class_moments` of ``X`` and ``y``, when the caller has them)."""
    if moments is None:
        moments = _class_moments(X, y, top)
    return _welch_of_moments(moments, X.shape[0])


def _welch_of_moments(moments, m: int):
    """:func:`_welch` from :func:`_class_moments`' results on ``m`` samples."""
    counts, means, within, per_class, between = moments
    total = within + between
    var = per_class / (counts[:, None] - 1.0)
    # class variances below the tie tolerance of the feature's spread are rounding
    var = np.maximum(var, TIE_RTOL * total / (m - 1.0))
    se2 = var[0] / counts[0] + var[1] / counts[1]
    t = (means[1] - means[0]) / np.sqrt(se2)
    df = se2**2 / (
        (var[0] / counts[0]) ** 2 / (counts[0] - 1.0)
        + (var[1] / counts[1]) ** 2 / (counts[1] - 1.0)
    )
    return t, df, np.log(2.0) + _log_t_sf(np.abs(t), df)


def _log_t_sf(t: np.ndarray, df: np.ndarray) -> np.ndarray:
    """``log P(T > t)`` for Student's t, finite where scipy's ``logsf`` underflows.

    ``P(T > t) = I_x(df/2, 1/2) / 2`` with ``x = df / (df + t²)``; there the regularised
    incomplete beta function is evaluated in log space from its continued fraction
    (modified Lentz, as in Numerical Recipes §6.4), which converges for
    ``x < (a + 1) / (a + b + 2)``, i.e. wherever the p-value is small.
    """
    with np.errstate(divide="ignore"):  # stats.t.logsf for t >= 0, without its overhead
        out = np.log(special.stdtr(df, -t))
    deep = ~np.isfinite(out)
    if deep.any():
        a = df[deep] / 2.0
        x = df[deep] / (df[deep] + t[deep] ** 2)
        front = a * np.log(x) + 0.5 * np.log1p(-x) - np.log(a) - special.betaln(a, 0.5)
        out[deep] = np.log(0.5) + front + np.log(_beta_fraction(a, 0.5, x))
    return out


def _beta_fraction(a: np.ndarray, b: float, x: np.ndarray, steps: int = 300) -> np.ndarray:
    """The continued fraction of ``I_x(a, b)`` (``I = x^a (1-x)^b / (a B(a, b)) · cf``)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = np.ones_like(x)
    d = 1.0 - qab * x / qap
    d = 1.0 / np.where(np.abs(d) < tiny, tiny, d)
    h = d.copy()
    for m in range(1, steps + 1):
        m2 = 2.0 * m
        for coef in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                     -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):  # fmt: skip
            d = 1.0 + coef * d
            d = 1.0 / np.where(np.abs(d) < tiny, tiny, d)
            c = 1.0 + coef / c
            c = np.where(np.abs(c) < tiny, tiny, c)
            h *= d * c
        if np.all(np.abs(d * c - 1.0) < 1e-15):
            break
    return h


class TTestRanker(_UnivariateBase):
    """Rank features by Welch's two-sample t-test between the two classes.

    ``t = (μ_1 - μ_0) / sqrt(s_0² / n_0 + s_1² / n_1)`` with unbiased class variances,
    and Welch–Satterthwaite degrees of freedom, which differ from feature to feature: the
    ranking is therefore by p-value (two-sided), not by ``|t|``. The score is
    ``-log10(p)``, computed from the t distribution's log survival function so that it
    stays finite and ordered far below the smallest representable p-value. Same
    statistic and p-values as ``scipy.stats.ttest_ind(..., equal_var=False)``.

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        ``-log10`` of the two-sided p-value; constant features score 0.
    t_ : ndarray of shape (n_features,) or (n_classes, n_features)
        Welch's t statistic, class 1 minus class 0 (the classes in sorted order); with
        more than two classes, one row per class: that class minus the rest. 0 for
        constant features.
    df_ : ndarray, shaped like ``t_``
        Welch–Satterthwaite degrees of freedom (NaN for constant features).
    class_scores_ : ndarray of shape (n_classes, n_features)
        More than two classes only: each class's own test against the rest, scored as
        a two-class fit of "that class vs the rest" scores it (``-log10`` of its p-value,
        before the Bonferroni step; NaN for a class not tested). Its order under
        ``rankers.ties.ranking_order`` is that fit's ``ranking_``, up to the tie rule:
        the markers of every group come from one fit (:func:`moweights.scverse.find_markers`).
    statistic_ : ndarray of shape (n_features,)
        Two classes only: the signed Welch t, the second class minus the first (the
        labels in sorted order, as ``numpy.unique`` gives them: positive where the
        second is higher), the same numbers as ``t_``; 0 for constant features. Not set
        for more classes.
    log_fold_change_ : ndarray of shape (n_features,)
        Two classes only: ``log2((expm1(μ_1) + 1e-9) / (expm1(μ_0) + 1e-9))`` of the
        class means, the second class over the first, as scanpy's
        ``rank_genes_groups`` defines it for ``log1p`` data (meaningful only for such
        data; where a mean is above 30 as ``log2(expm1(μ_1) + 1e-9) - log2(expm1(μ_0) +
        1e-9)`` with the large means in log space, so it stays finite where ``expm1``
        overflows;
        NaN where a mean is below ``log1p(-1e-9)``); 0 for constant features. Not set
        for more classes.
    pvalues_ : ndarray of shape (n_features,)
        Two-sided p-values (they may underflow to 0; ``scores_`` does not).
    qvalues_ : ndarray of shape (n_features,)
        Benjamini–Hochberg q-values of ``pvalues_``.
    ranking_ : ndarray of shape (n_features,)
        Feature indices, best first.

    Notes
    -----
    Both classes need at least two samples. With more than two classes each class with
    at least two samples is tested against the rest (as single-cell toolkits rank marker
    genes; ``t_`` has a row per class, 0 for a class not tested) and a feature's p-value
    is its smallest one times the number of tests (Bonferroni, capped at 1);
    :class:`ANOVAFRanker` is the one test of all classes at once. Time
    ``O(C m n)`` for ``C > 2`` classes, ``O(m n)`` for two; on sparse ``X``
    ``O(nnz + C² n)`` for any number of classes: every class's moments come from one
    pass over the stored values, and each class against the rest is combined from them.

    **Where it works.** On the planted-structure atlas (the structures with a class; 200
    samples, 200 and 2,000 features, 0.5-50 % of them informative, 2 seeds; the mean share of
    the planted features in its top k, against a random ranking's), it recovers imbalanced,
    shift; it fails on xor (within 0.1 of chance). The shares are in
    ``benchmarks/results/atlas_grid/summary.md``; :doc:`/guide/which-ranker` has the tables and
    heat maps.

    References
    ----------
    .. [1] B. L. Welch, "The generalization of 'Student's' problem when several different
       population variances are involved", Biometrika 34, 1947.

    Examples
    --------
    >>> import numpy as np
    >>> from rankers.supervised.univariate import TTestRanker
    >>> X = np.array([[0.0, 1.0], [2.0, 0.0], [4.0, 1.0], [6.0, 0.0]])
    >>> est = TTestRanker().fit(X, [0, 0, 1, 1])
    >>> est.t_.round(4).tolist()  # (5 - 1) / sqrt(2/2 + 2/2); 0
    [2.8284, 0.0]
    """

    name = "t_test"
    reference: ClassVar[str] = "Welch (1947), two-sample t-test with unequal variances"

    def __init__(self, k=None):
        self.k = k

    def _score(self, X, y, context):
        n_classes = int(y.max()) + 1
        counts = np.bincount(y, minlength=n_classes)
        if n_classes == 2:
            if (counts < 2).any():
                small = int(np.flatnonzero(counts < 2)[0])
                raise InvalidInputError(
                    f"t_test needs at least two samples in each class; class {small} has "
                    f"{int(counts[small])}"
                )
            moments = self._moments(X, y, context)
            t, df, log_p = _welch(X, y, moments=moments)
            self._two_groups(moments[1], context.top, t)
        else:  # one class against the rest, each; the best class decides (Bonferroni)
            tested = np.flatnonzero((counts >= 2) & (y.size - counts >= 2))
            if tested.size == 0:
                raise InvalidInputError("t_test needs a class with at least two samples")
            if sp.issparse(X):
                # every class's moments in one pass over the stored values; each class
                # against the rest combined from them (no pass per class)
                every, means, _, per_class, _ = self._moments(X, y, context)
                parts = one_vs_rest_welch(every, means, per_class, tested)
            else:
                parts = [_welch(X, (y == c).astype(np.intp), context.top) for c in tested]
            t = np.array([part[0] for part in parts])
            df = np.array([part[1] for part in parts])
            logs = np.array([part[2] for part in parts])
            log_p = np.minimum(logs.min(axis=0) + np.log(tested.size), 0.0)
            # each class's own test as a two-class fit of "class vs rest" scores it
            # (constant features at the lowest, as fit puts them)
            self.class_scores_ = np.full((n_classes, self.constant_features_.size), np.nan)
            for row, c in enumerate(tested):
                own = np.maximum(-logs[row] / np.log(10.0), 0.0)
                fill = min(float(self._constant_score), float(own.min()))
                self.class_scores_[c] = self._to_all_features(own, fill)
        if t.ndim == 1:
            self.t_ = self._to_all_features(t, 0.0)
            self.df_ = self._to_all_features(df, np.nan)
        else:
            self.t_ = np.zeros((n_classes, self.constant_features_.size))
            self.df_ = np.full((n_classes, self.constant_features_.size), np.nan)
            for row, c in enumerate(tested):
                self.t_[c] = self._to_all_features(t[row], 0.0)
                self.df_[c] = self._to_all_features(df[row], np.nan)
        scores = np.maximum(-log_p / np.log(10.0), 0.0)
        order = np.argsort(-scores, kind="stable")
        self._set_pvalues(np.exp(log_p), order)
        return Scores(scores, order)

    def _fused(self, y: np.ndarray) -> bool:
        return int(y.max()) == 1  # more classes: one test per class against the rest

    def _check_input(self, X, lo, hi) -> None:
        super()._check_input(X, lo, hi)
        self.t_ = np.zeros(X.shape[1])
        self.df_ = np.full(X.shape[1], np.nan)
        self.__dict__.pop("class_scores_", None)  # more classes only: none from a refit
