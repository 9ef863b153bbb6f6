"""Information gain and chi-squared: how much a (discretised) feature tells about the class."""

from __future__ import annotations

from numbers import Integral
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from scipy import special

from rankers.base import BaseRanker
from rankers.exceptions import InvalidInputError
from rankers.preprocessing import scale_by_power_of_two
from rankers.ties import TIE_RTOL, tied_ranks
from rankers.utils.param_validation import Interval, StrOptions

__all__ = ["Chi2Ranker", "InfoGainRanker", "discretise"]


def discretise(X: np.ndarray, n_bins: int) -> np.ndarray:
    """Bin codes (int64, same shape as ``X``) of every feature, all features at once.

    A feature with at most ``n_bins`` distinct values is discrete: one code per value.
    Otherwise equal-frequency bins from the ranks: ``floor((rank - 1) * n_bins / m)``
    with the average (mid) rank, so ties share a bin and any strictly increasing
    transform of the feature gives the same codes. The mid rank keeps a heavily tied
    smallest or largest value apart from the rest (a "min" or "max" rank would put a
    feature that is 95% zeros, or 95% at its maximum, into a single bin).
    """
    m = X.shape[0]
    # values within 1e-9 of each other (relative to the feature's range) are one value
    # (rankers.ties): a bin must not depend on the last bits of a computed input
    dense, mid = tied_ranks(X)
    n_distinct = dense.max(axis=0)
    binned = np.floor((mid - 1.0) * n_bins / m).astype(np.int64)
    return np.where(n_distinct <= n_bins, dense - 1, binned)


def _by_blocks(X: np.ndarray, score):
    """``score`` of blocks of columns of ``X`` (~1 MB each), put together: the binning's
    temporaries (ranks, codes, tables: about ten arrays the size of what they bin) are a
    block's, not the whole data's."""
    m, n = X.shape
    width = max(16, (1 << 17) // max(m, 1))
    if width >= n:
        return score(_in_range(X))
    parts = [score(_in_range(X[:, j : j + width])) for j in range(0, n, width)]
    if isinstance(parts[0], tuple):
        return tuple(np.concatenate(p) for p in zip(*parts, strict=True))
    return np.concatenate(parts)


def _in_range(X: np.ndarray) -> np.ndarray:
    """``X``, its columns divided by a power of two (exact; ranks do not move) when their
    values are so large or small that a range could overflow or underflow."""
    top = np.maximum(X.max(axis=0), -X.min(axis=0))
    if ((top <= 1e100) & (top >= 1e-100)).all():
        return X
    _, exponent = np.frexp(top)
    return scale_by_power_of_two(X, -exponent)


def _contingency(codes: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Counts of shape (n_features, n_codes, n_classes): one bincount over all features."""
    n = codes.shape[1]
    n_codes = int(codes.max()) + 1
    n_classes = int(y.max()) + 1
    index = (np.arange(n) * n_codes + codes) * n_classes + y[:, None]
    counts = np.bincount(index.ravel(), minlength=n * n_codes * n_classes)
    return counts.reshape(n, n_codes, n_classes).astype(np.float64)


def _binned_contingency(X: np.ndarray, y: np.ndarray, n_bins: int) -> np.ndarray:
    """``_contingency(discretise(X, n_bins), y)``, the same counts, without writing the
    codes back into the shape of ``X``.

    All members of a group of tied values share their mid rank, hence their bin: codes are
    computed once per group, and the (code, class) pairs counted in each column's sorted
    order (the classes gathered along it). The columns are sorted as rows of ``X.T``
    (contiguous), with :func:`rankers.ties.tied_ranks`' rule: a new group where the gap to
    the previous sorted value exceeds ``TIE_RTOL`` times the column's range.
    """
    m, w = X.shape
    rows = np.ascontiguousarray(X.T)
    # no stable sort needed: tied values share their code, so their order is not counted
    order = np.argsort(rows, axis=1)
    xs = np.take_along_axis(rows, order, axis=1)
    del rows
    new = np.ones((w, m), dtype=bool)
    np.greater(np.diff(xs, axis=1), (TIE_RTOL * (xs[:, -1] - xs[:, 0]))[:, None], out=new[:, 1:])
    del xs
    n_classes = int(y.max()) + 1
    # columns without a tie (continuous data: nearly all): every value is its own group, its
    # mid rank its position + 1, so its code depends on its position only (the same float
    # operations as below); with more values than bins, no such column is discrete
    plain = new.all(axis=1) if m > n_bins else np.zeros(w, dtype=bool)
    if plain.any():
        by_position = np.floor((np.arange(1, m + 1) - 1.0) * n_bins / m).astype(np.int64)
        tied = np.flatnonzero(~plain)
        if tied.size:
            general = _binned_contingency_of(new[tied], order[tied], y, n_bins, m)
        n_codes = max(int(by_position[-1]), int(general.shape[1]) - 1 if tied.size else 0) + 1
        counts = np.zeros((w, n_codes, n_classes), dtype=np.float64)
        cols = np.flatnonzero(plain)
        index = (np.arange(cols.size)[:, None] * n_codes + by_position) * n_classes
        index += y[order[cols]]
        counts[cols] = np.bincount(index.ravel(), minlength=cols.size * n_codes * n_classes
                                   ).reshape(cols.size, n_codes, n_classes)  # fmt: skip
        if tied.size:
            counts[tied, : general.shape[1]] = general
        return counts
    return _binned_contingency_of(new, order, y, n_bins, m)


def _binned_contingency_of(new: np.ndarray, order: np.ndarray, y: np.ndarray, n_bins: int, m: int):
    """:func:`_binned_contingency`'s tables from each column's sorted order (``order``) and
    where its groups of tied values start (``new``), both of shape (columns, m)."""
    w = new.shape[0]
    column, first = np.nonzero(new)  # every group: its column, its first sorted position
    del new
    stop = np.empty_like(first)  # one past its last position
    stop[:-1] = first[1:]
    stop[:-1][first[1:] == 0] = m  # the next group opens the next column
    stop[-1] = m
    # 1-based mid ranks, exactly as tied_ranks computes them (integers: exact in float64)
    mid = (first + stop + 1) / 2.0
    code = np.floor((mid - 1.0) * n_bins / m).astype(np.int64)
    per_column = np.bincount(column, minlength=w)
    few = (per_column <= n_bins)[column]  # discrete columns: one code per value
    if few.any():
        dense = np.arange(first.size) - (np.cumsum(per_column) - per_column)[column]
        code[few] = dense[few]
    n_codes = int(code.max()) + 1
    n_classes = int(y.max()) + 1
    index = np.repeat(column * n_codes + code, stop - first)
    index *= n_classes
    index += y[order].ravel()
    counts = np.bincount(index, minlength=w * n_codes * n_classes)
    return counts.reshape(w, n_codes, n_classes).astype(np.float64)


def _information_gain(counts: np.ndarray) -> np.ndarray:
    """IG = H(Y) - H(Y | X) in bits, from per-feature contingency tables."""
    total = counts.sum(axis=(1, 2), keepdims=True)
    rows = counts.sum(axis=2, keepdims=True)
    cols = counts.sum(axis=1, keepdims=True)
    expected = rows * cols / total  # nonzero wherever counts is
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(counts > 0, counts * np.log2(counts / expected), 0.0)
    # mutual information is >= 0; the clip only removes rounding error
    return np.maximum(terms.sum(axis=(1, 2)) / total.ravel(), 0.0)


def _chi2_sf(stat: np.ndarray, dof) -> np.ndarray:
    """Upper-tail p-values of chi² with ``dof`` degrees of freedom (scalar or per value).

    ``special.chdtrc`` (scikit-learn's and ``scipy.stats.chi2.sf``'s own function) iterates
    an incomplete gamma series per value: at ~1 µs a value it cost more than the statistic
    itself. One and two degrees of freedom (two classes; 2 x 2 and 3 x 2 tables) have closed forms,
    ``erfc(sqrt(x / 2))`` and ``exp(-x / 2)``, the same values to ~1e-14 relative.
    """
    stat = np.asarray(stat, dtype=np.float64)
    if np.ndim(dof) == 0:  # one for all (method="sklearn"): no masks
        if dof == 1:
            out = stat / 2.0
            np.sqrt(out, out=out)
            return special.erfc(out, out=out)
        return np.exp(-stat / 2.0) if dof == 2 else special.chdtrc(dof, stat)
    dof = np.asarray(dof)
    out = np.empty_like(stat)
    one, two = dof == 1, dof == 2
    rest = ~(one | two)
    out[one] = special.erfc(np.sqrt(stat[one] / 2.0))
    out[two] = np.exp(-stat[two] / 2.0)
    if rest.any():
        out[rest] = special.chdtrc(dof[rest], stat[rest])
    return out


def _sklearn_chi2(X, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`sklearn.feature_selection.chi2` of non-negative ``X`` (dense or sparse) and
    class codes ``y``: observed per-class sums against those expected from the class
    shares, computed as it does (one product with the class indicators, one column sum),
    without its input checks, which :meth:`BaseRanker.fit` has made already."""
    n_classes = int(y.max()) + 1
    onehot = np.zeros((y.size, n_classes))
    onehot[np.arange(y.size), y] = 1.0
    observed = np.asarray(X.T @ onehot).T if sp.issparse(X) else onehot.T @ X
    feature_count = np.asarray(X.sum(axis=0)).ravel()
    class_prob = onehot.mean(axis=0)[:, None]
    expected = class_prob * feature_count
    del feature_count
    stat = observed  # our own product: the statistic is computed in its memory
    stat -= expected
    stat **= 2
    with np.errstate(invalid="ignore", divide="ignore"):
        stat /= expected
    stat = stat.sum(axis=0)
    return stat, _chi2_sf(stat, n_classes - 1)


def _pearson_chi2(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pearson's chi² statistic and its degrees of freedom per contingency table."""
    total = counts.sum(axis=(1, 2), keepdims=True)
    rows = counts.sum(axis=2, keepdims=True)
    cols = counts.sum(axis=1, keepdims=True)
    expected = rows * cols / total
    with np.errstate(divide="ignore", invalid="ignore"):
        # empty bins (rows of zeros) carry no information and are left out
        terms = np.where(expected > 0, (counts - expected) ** 2 / expected, 0.0)
    stat = terms.sum(axis=(1, 2))
    dof = ((rows > 0).sum(axis=(1, 2)) - 1) * ((cols > 0).sum(axis=(1, 2)) - 1)
    return stat, dof


class InfoGainRanker(BaseRanker):
    """Rank features by information gain about the class, ``IG = H(Y) - H(Y | X_i)``.

    Information gain (mutual information) is measured in bits on discretised features:
    a feature with at most ``n_bins`` distinct values is taken as discrete (one bin per
    value); a continuous one is cut into ``n_bins`` equal-frequency bins computed from
    its ranks, with tied values always in the same bin. The score depends only on the
    order of a feature's values, so it is unchanged by any strictly increasing transform
    (scaling, log, ...) of the feature. Values closer than ``1e-9`` times the feature's
    range are one value (:func:`rankers.ties.tied_ranks`), so that bins do not depend on
    the last bits of computed data.

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.
    n_bins : int, default=10
        Number of equal-frequency bins of a continuous feature, and the largest number
        of distinct values of a feature taken as discrete.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        Information gain in bits, between 0 and ``log2(n_classes)``; constant features
        score 0.
    ranking_ : ndarray of shape (n_features,)
        Feature indices, best first.

    See Also
    --------
    Chi2Ranker : chi-squared statistic of the same contingency tables.
    sklearn.feature_selection.mutual_info_classif : a kNN estimate of mutual
        information for continuous features.

    Notes
    -----
    **Where it works.** On the planted-structure atlas (the structures with a class; 200
    samples, 200 and 2,000 features, 0.5-50 % of them informative, 2 seeds; the mean share of
    the planted features in its top k, against a random ranking's), it recovers imbalanced,
    shift; it fails on xor (within 0.1 of chance). The shares are in
    ``benchmarks/results/atlas_grid/summary.md``; :doc:`/guide/which-ranker` has the tables and
    heat maps.

    References
    ----------
    .. [1] T. M. Cover and J. A. Thomas, "Elements of Information Theory", 2nd ed.,
       Wiley, 2006 (entropy and mutual information).
    .. [2] J. R. Quinlan, "Induction of Decision Trees", Machine Learning 1, 1986
       (information gain as a relevance measure).

    Examples
    --------
    >>> import numpy as np
    >>> from rankers.supervised.information import InfoGainRanker
    >>> y = np.array([0, 0, 1, 1])
    >>> X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    >>> InfoGainRanker().fit(X, y).scores_.tolist()
    [1.0, 0.0]
    """

    name = "info_gain"
    target_kind = "classification"
    requires_y = True
    accepts_sparse = False
    deterministic = True
    scale_invariant = True
    _rescales_columns = True  # bins come from ranks: no scale to protect, no copy of X
    feature_scale_invariant = True  # bins follow each feature's own range
    reference: ClassVar[str] = "Information gain H(Y) - H(Y|X) on discretised features"

    _parameter_constraints: ClassVar[dict] = {
        **BaseRanker._parameter_constraints,
        "n_bins": [Interval(Integral, 2, None, closed="left")],
    }

    def __init__(self, k=None, n_bins: int = 10):
        self.k = k
        self.n_bins = n_bins

    def _score(self, X, y, context):
        return _by_blocks(X, lambda b: _information_gain(_binned_contingency(b, y, self.n_bins)))


class Chi2Ranker(BaseRanker):
    """Rank features by the chi-squared statistic of their association with the class.

    With ``method="contingency"`` (default) each feature is discretised as in
    :class:`InfoGainRanker` and the score is Pearson's χ² statistic of its
    (bin x class) contingency table, as Weka's ChiSquaredAttributeEval does. It works on
    any real-valued data and is unchanged by any strictly increasing transform of a
    feature. ``method="sklearn"`` gives exactly the statistic of
    :func:`sklearn.feature_selection.chi2`, which treats each feature as a count or
    frequency: it is meant for non-negative data (bag of words, counts), depends on the
    scale of each feature, and refuses negative values — hence not the default. It keeps a
    sparse (CSR) ``X`` sparse; the contingency tables sort every column of a dense copy.

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.
    method : {"contingency", "sklearn"}, default="contingency"
        How the statistic is computed (see above).
    n_bins : int, default=10
        Bins of a continuous feature for ``method="contingency"`` (see
        :class:`InfoGainRanker`); unused by ``method="sklearn"``.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        The χ² statistic (not the p-value); constant features score 0.
    pvalues_ : ndarray of shape (n_features,)
        Upper-tail p-values ``scipy.stats.chi2.sf(statistic, dof)``. For
        ``"contingency"`` ``dof = (non-empty bins - 1) * (n_classes - 1)`` per feature;
        for ``"sklearn"`` ``dof = n_classes - 1``, as scikit-learn computes them.
        Constant features (and features left in one bin) get 1.
    ranking_ : ndarray of shape (n_features,)
        Feature indices, best first.

    See Also
    --------
    InfoGainRanker : information gain of the same contingency tables.
    sklearn.feature_selection.chi2 : the count-data statistic of ``method="sklearn"``.

    Notes
    -----
    **Where it works.** On the planted-structure atlas (the structures with a class; 200
    samples, 200 and 2,000 features, 0.5-50 % of them informative, 2 seeds; the mean share of
    the planted features in its top k, against a random ranking's), it recovers imbalanced,
    shift; it fails on xor (within 0.1 of chance). The shares are in
    ``benchmarks/results/atlas_grid/summary.md``; :doc:`/guide/which-ranker` has the tables and
    heat maps.

    References
    ----------
    .. [1] K. Pearson, "On the criterion that a given system of deviations from the
       probable ...", Philosophical Magazine 50(302), 1900.
    .. [2] H. Liu and R. Setiono, "Chi2: Feature selection and discretization of numeric
       attributes", Proc. IEEE ICTAI, 1995.

    Examples
    --------
    >>> import numpy as np
    >>> from rankers.supervised.information import Chi2Ranker
    >>> y = np.array([0] * 5 + [1] * 5)
    >>> X = np.column_stack([[0, 0, 0, 0, 1, 0, 1, 1, 1, 1], np.arange(10) % 2])
    >>> Chi2Ranker().fit(X, y).scores_.round(3).tolist()  # 2x2 tables [[4,1],[1,4]], [[3,2],[2,3]]
    [3.6, 0.4]
    """

    name = "chi2"
    target_kind = "classification"
    requires_y = True
    accepts_sparse = False
    deterministic = True
    scale_invariant = True
    reference: ClassVar[str] = "Pearson chi-squared statistic of feature-class contingency tables"

    _parameter_constraints: ClassVar[dict] = {
        **BaseRanker._parameter_constraints,
        "method": [StrOptions({"contingency", "sklearn"})],
        "n_bins": [Interval(Integral, 2, None, closed="left")],
    }

    def __init__(self, k=None, method: str = "contingency", n_bins: int = 10):
        self.k = k
        self.method = method
        self.n_bins = n_bins

    def _score_units(self) -> int | None:
        # scikit-learn's statistic reads the values as counts: it and its p-values
        # change with their scale (the contingency tables do not)
        return None if self.method == "sklearn" else 0

    @property
    def _rescales_columns(self) -> bool:
        # the contingency tables' bins come from ranks: no scale to protect, no copy of X
        return self.method != "sklearn"

    def _feature_scale_invariant(self) -> bool:
        return self.method != "sklearn"  # counts: a feature's chi2 grows with its scale

    def _accepts_sparse(self) -> bool:
        # scikit-learn's statistic is a product and a column sum: a CSR matrix stays sparse
        # (the contingency tables sort every column: dense)
        return self.method == "sklearn"

    def _check_input(self, X, lo, hi) -> None:
        # all-constant data never reaches _score: every p-value is then 1
        self.pvalues_ = np.ones(X.shape[1])
        if self.method != "sklearn":
            return
        bad = np.flatnonzero(lo < 0)  # every column's minimum, from fit's pass
        if bad.size:
            labels = self._feature_labels()
            shown = ", ".join(repr(str(s)) for s in labels[bad[:10]])
            more = f" and {bad.size - 10} more" if bad.size > 10 else ""
            raise InvalidInputError(
                f"chi2 with method='sklearn' needs non-negative (count or frequency) features; "
                f"negative values in columns {shown}{more}. Use method='contingency', which "
                "works on any real data"
            )

    def _score(self, X, y, context):
        if self.method == "sklearn":
            stat, pvalues = _sklearn_chi2(X, y)
        else:
            stat, dof = _by_blocks(
                X, lambda b: _pearson_chi2(_binned_contingency(b, y, self.n_bins))
            )
            pvalues = np.ones_like(stat)
            tested = dof > 0
            pvalues[tested] = _chi2_sf(stat[tested], dof[tested])
        self.pvalues_ = self._to_all_features(pvalues, fill=1.0)
        return stat
