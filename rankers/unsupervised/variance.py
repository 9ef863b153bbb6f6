"""Variance score: the spread of each feature."""

from __future__ import annotations

from numbers import Integral
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from rankers.base import BaseRanker
from rankers.columns import column_extremes
from rankers.exceptions import InvalidInputError, InvalidParameterError
from rankers.preprocessing import scale_features
from rankers.utils.param_validation import Interval, StrOptions

__all__ = ["VarianceRanker"]

#: column maxima within which no square or sum of squares under- or overflows
_SAFE = (1e-100, 1e100)
#: stored values per block of the sparse sums of squares (about 8 MB of each temporary)
_SPARSE_BLOCK = 1 << 20


def _from_sums(X: np.ndarray, s1: np.ndarray, s2: np.ndarray) -> np.ndarray:
    """``sum((x - mean)^2)`` per column from the sums fit gathered (no second pass over X),
    recomputed around the mean where that loses more than a few digits.

    ``s2 - s1^2 / m`` cancels when the mean is large against the spread: its rounding error
    is about ``eps (1 + mean^2 / variance)`` relative, so columns whose ``mean^2`` exceeds
    100 variances (error above ~1e-13) are summed again around their mean.
    """
    m = X.shape[0]
    mean_sq = s1 * s1 / m
    ss = np.maximum(s2 - mean_sq, 0.0)
    redo = np.flatnonzero(~(mean_sq <= 100.0 * ss))
    for j in range(0, redo.size, 256):
        cols = redo[j : j + 256]
        block = X[:, cols]
        d = block - block.mean(axis=0)
        ss[cols] = np.einsum("ij,ij->j", d, d)
    return ss


def _centred_squares(X, exponent: np.ndarray) -> np.ndarray:
    """``sum((x - mean)^2)`` of every column of ``X * 2**-exponent``, dense or sparse.

    Dense ``X`` is read in blocks of columns (about 1 MB each), so no copy of it is made;
    a sparse matrix's implicit zeros each add ``mean^2``. Around the mean: no cancellation
    of ``sum(x^2) - m mean^2``.
    """
    m, n = X.shape
    if sp.issparse(X):
        return _sparse_centred_squares(X.tocsr(), exponent)
    out = np.empty(n)
    width = int(max(16, min(4096, (1 << 17) // max(m, 1))))
    for j in range(0, n, width):
        cols = slice(j, min(j + width, n))
        block = X[:, cols]
        if exponent[cols].any():
            block = np.ldexp(block, -exponent[cols])
        d = block - block.mean(axis=0)
        out[cols] = np.einsum("ij,ij->j", d, d)
    return out


def _sparse_centred_squares(X, exponent: np.ndarray) -> np.ndarray:
    """:func:`_centred_squares` of a CSR matrix from its stored values as they lie (no
    CSC copy): the sums, then the squares around the means, each one pass over the
    stored values (scikit-learn's ``mean_variance_axis``; for columns divided by powers
    of two, ours in blocks of :data:`_SPARSE_BLOCK`, whose temporaries stay small)."""
    m, n = X.shape
    if not exponent.any():
        # scikit-learn's compiled two passes over CSR (sums, then squares around the mean
        # with Chan, Golub & LeVeque's correction): the same sums, without temporaries
        from sklearn.utils.sparsefuncs import mean_variance_axis

        return mean_variance_axis(X, axis=0)[1] * m
    cols, values = X.indices, X.data

    def blocks():
        for a in range(0, values.size, _SPARSE_BLOCK):
            c = cols[a : a + _SPARSE_BLOCK]  # bincount copies int32 indices to intp: a block
            yield c, np.ldexp(values[a : a + _SPARSE_BLOCK], -exponent[c])

    total = np.zeros(n)
    nnz = np.zeros(n)
    for c, v in blocks():
        total += np.bincount(c, weights=v, minlength=n)
        nnz += np.bincount(c, minlength=n)
    mean = total / m
    stored = np.zeros(n)
    for c, v in blocks():
        d = v - mean[c]
        d *= d
        stored += np.bincount(c, weights=d, minlength=n)
    # the zeros of a column each add mean^2 to its sum of squares around the mean
    return stored + (m - nnz) * mean**2


class VarianceRanker(BaseRanker):
    """Rank features by their variance (higher variance = more relevant).

    The simplest unsupervised baseline: a feature that barely varies cannot separate
    samples. The score depends on the units of each feature, so scale the data first
    when features are measured on different scales. The variances are computed on ``X``
    divided by a power of two (exact) and converted back, so they are right however
    large or small the values; variances beyond float64's range (above about 1e308, or
    below 2.2e-308) are refused with an error rather than returned as inf or 0.

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.
    ddof : int, default=0
        Delta degrees of freedom (0 = population variance, 1 = sample variance); it
        rescales every score alike and never changes the ranking.
    scale : {"minmax", None}, default=None
        ``"minmax"`` scores each feature's variance after mapping it onto [0, 1] (a
        unit-free dispersion, the convention of the Distance Rank paper's comparisons);
        None scores raw variances.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        Variance of each feature; constant features score 0.
    ranking_ : ndarray of shape (n_features,)
        Feature indices, best first.

    See Also
    --------
    sklearn.feature_selection.VarianceThreshold : drops low-variance features.

    Notes
    -----
    **Where it works.** On the planted-structure atlas (every structure; 200 samples, 200 and
    2,000 features, 0.5-50 % of them informative, 2 seeds; the mean share of the planted
    features in its top k, against a random ranking's), it fails on xor, shift, clusters,
    imbalanced, manifold, modules (within 0.1 of chance). The shares are in
    ``benchmarks/results/atlas_grid/summary.md``; :doc:`/guide/which-ranker` has the tables and
    heat maps.

    Examples
    --------
    >>> import numpy as np
    >>> from rankers.unsupervised.variance import VarianceRanker
    >>> X = np.array([[0.0, 0.0], [2.0, 1.0], [4.0, 2.0]])
    >>> VarianceRanker().fit(X).scores_.round(3).tolist()
    [2.667, 0.667]
    """

    name = "variance"
    target_kind = "unsupervised"
    accepts_sparse = True
    deterministic = True
    scale_invariant = True
    reference: ClassVar[str] = "Unsupervised baseline (variance of each feature)"

    _parameter_constraints: ClassVar[dict] = {
        **BaseRanker._parameter_constraints,
        "ddof": [Interval(Integral, 0, None, closed="left")],
        "scale": [StrOptions({"minmax"}), None],
    }

    def __init__(self, k=None, ddof: int = 0, scale: str | None = None):
        self.k = k
        self.ddof = ddof
        self.scale = scale

    # raw variances are computed per column at a power-of-two scale and converted back
    # here (no copy of X); min-max scaled ones are unit-free
    _rescales_columns = True

    def _column_pass(self, X, y):
        # sums and sums of squares come with fit's pass over X (dense X only)
        lo, hi, s1, s2 = column_extremes(X, sums=True)
        return lo, hi, None if s1 is None else (s1, s2)

    def _score_units(self) -> int:
        # a raw variance is in the squared units of X; min-max scaled ones are unit-free
        return 2 if self.scale is None else 0

    def _feature_scale_invariant(self) -> bool:
        return self.scale is not None  # a raw variance is in each feature's units

    def _score(self, X, y, context):
        m = X.shape[0]
        if self.ddof >= m:
            raise InvalidParameterError(f"ddof={self.ddof} must be smaller than n_samples={m}")
        if self.scale is not None:
            X = scale_features(X, self.scale)
            top = np.ones(X.shape[1])
        else:
            top = context.top
        # each column at a power of two near 1 when its squares could leave float64's range
        exponent = np.zeros(X.shape[1], dtype=np.int64)
        unsafe = ~((top >= _SAFE[0]) & (top <= _SAFE[1]))
        if unsafe.any():
            exponent[unsafe] = np.frexp(top[unsafe])[1]
        sums = context.column_pass if self.scale is None else None
        if sums is not None and not unsafe.any() and not sp.issparse(X):
            keep = context.informative
            ss = _from_sums(X, sums[0][keep], sums[1][keep])
        else:
            ss = _centred_squares(X, exponent)
        var = ss / (m - self.ddof)
        if not unsafe.any():
            return var
        return self._to_data_units_per_column(var, 2 * exponent)

    def _to_data_units_per_column(self, values, exponent) -> np.ndarray:
        """Variances computed at ``X * 2**-e`` back in the units of X; an error when one is
        not representable in float64 (the module's refusal, never inf or 0)."""
        with np.errstate(over="ignore", under="ignore"):
            out = np.ldexp(values, exponent)
        lost = (values != 0) & (~np.isfinite(out) | (out < np.finfo(np.float64).tiny))
        if lost.any():
            labels = self._feature_labels()[~self.constant_features_][lost]
            raise InvalidInputError(
                f"the variances of columns {', '.join(map(str, labels[:5]))} are not "
                "representable in float64 (about 1e-308 to 1e308) at the scale of X; rescale "
                "X first (e.g. multiply it by a constant, or standardise it)"
            )
        return out
