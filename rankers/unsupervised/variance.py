"""Variance score: the spread of each feature."""

from __future__ import annotations

from numbers import Integral
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from rankers._param_validation import Interval, StrOptions
from rankers.base import BaseRanker
from rankers.exceptions import InvalidParameterError
from rankers.preprocessing import scale_features

__all__ = ["VarianceRanker"]


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
    **Where it works.** On the planted-structure atlas (every structure; 200 samples, 200
    and 2,000 features, 0.5-50 % of them informative, 2 seeds; the mean share of the planted
    features in its top k, where a random ranking gets about 0.16), it fails on xor 0.18,
    shift 0.16, clusters 0.16, imbalanced 0.16, manifold 0.15, modules 0.15 (within 0.1 of
    chance). See :doc:`/guide/which-ranker` for the tables and heat maps.

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

    def _score_units(self) -> int:
        # a raw variance is in the squared units of X; min-max scaled ones are unit-free
        return 2 if self.scale is None else 0

    def _score(self, X, y):
        X = scale_features(X, self.scale)
        m = X.shape[0]
        if self.ddof >= m:
            raise InvalidParameterError(f"ddof={self.ddof} must be smaller than n_samples={m}")
        if sp.issparse(X):
            mean = np.asarray(X.mean(axis=0)).ravel()
            sq = np.asarray(X.multiply(X).mean(axis=0)).ravel()
            var = np.maximum(sq - mean**2, 0.0)
            return var * m / (m - self.ddof)
        return np.var(X, axis=0, ddof=self.ddof)
