"""MultiSURF: Relief with a neighbourhood of each sample's own, adaptive radius."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from scipy.spatial.distance import cdist

from rankers.base import TASKS, BaseRanker
from rankers.ties import TIE_RTOL
from rankers.utils.param_validation import StrOptions
from rankers.validation import column_mask

__all__ = ["MultiSURFRanker"]

# elements of the largest temporary: a (rows x samples x features) block of differences
_BLOCK_ELEMENTS = 1 << 21


class MultiSURFRanker(BaseRanker):
    """Rank features by MultiSURF (Urbanowicz et al. 2018), the strongest Relief of skrebate.

    Every sample ``R`` has its own neighbourhood: the samples whose distance to it is below
    ``T_R - σ_R / 2``, with ``T_R`` the mean and ``σ_R`` the standard deviation of ``R``'s
    distances to all other samples (no ``k`` to choose). Within it, hits (same class) and
    misses (another class) update the weights as in ReliefF:

        ``W[A] += (Σ_misses diff(A, R, M) / |M| - Σ_hits diff(A, R, H) / |H|) / m``

    with ``diff`` the range-normalised absolute difference of a numeric feature and 0/1
    (equal or not) for a nominal one, and the distance the sum of the diffs (Manhattan on
    range-normalised data). With more than two classes each miss of class ``C`` weighs
    ``(n_classes - 1) |M_C| / |M|²`` (skrebate's normalisation); for a numeric target a
    neighbour is a hit when its target differs by less than the target's standard
    deviation. A side with no neighbour is left out, as in skrebate.

    All samples are processed at once, in blocks of rows and features (bounded memory,
    no Python loop over samples): time ``O(m² n)``, memory ``O(m²)`` for the distances of a
    block of rows, at most about 16 MB for the differences.

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.
    nominal : "auto", array-like of int, bool or str, or None, default=None
        Nominal features: column indices, a boolean mask or column names; ``"auto"`` takes
        every feature with at most ``discrete_threshold`` distinct values (skrebate's
        rule). None: every feature is numeric.
    discrete_threshold : int, default=10
        Distinct values up to which ``nominal="auto"`` calls a feature nominal.
    task : {"auto", "classification", "regression"}, default="auto"
        The kind of target: chosen from ``y`` (``"auto"``: a numeric target whose few
        values each repeat, such as counts or scores, is read as class labels), or the
        kind named (``"regression"`` fits such a target as a quantity).

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        MultiSURF weights in [-1, 1]; constant features get -1.
    nominal_ : ndarray of bool of shape (n_features,)
        Which features were treated as nominal.
    neighbourhood_sizes_ : ndarray of shape (n_samples,)
        How many neighbours each sample had.
    ranking_ : ndarray of shape (n_features,)
        Feature indices, best first.

    Notes
    -----
    The radius test ``d < T - σ/2`` compares computed distances: a distance within
    ``1e-9`` of the largest of its row from the radius counts as outside
    (:mod:`rankers.ties`), so the neighbourhoods do not depend on rounding. On numeric
    features, or on nominal ones alone, the weights are skrebate 0.62's (``MultiSURF``) to
    rounding. With nominal and numeric features together skrebate weighs a nominal
    mismatch by the number of all features and caps a numeric diff at 1 beyond one
    standard deviation (its "ramp"); here a nominal mismatch counts 1 and numeric diffs
    are range-normalised, as in ReliefF.

    **Where it works.** On the planted-structure atlas (the structures with a class; 200
    samples, 200 and 2,000 features, 0.5-50 % of them informative, 2 seeds; the mean share of
    the planted features in its top k, against a random ranking's), it recovers shift, xor; it
    recovers part of imbalanced. The shares are in ``benchmarks/results/atlas_grid/summary.md``;
    :doc:`/guide/which-ranker` has the tables and heat maps.

    See Also
    --------
    rankers.supervised.relief.ReliefFRanker : a fixed number ``k`` of neighbours.

    References
    ----------
    .. [1] R. J. Urbanowicz, R. S. Olson, P. Schmitt, M. Meeker and J. H. Moore,
       "Benchmarking relief-based feature selection methods for bioinformatics data
       mining", Journal of Biomedical Informatics 85, 2018.
    .. [2] skrebate (scikit-rebate), ``MultiSURF``.

    Examples
    --------
    >>> import numpy as np
    >>> from rankers.supervised.multisurf import MultiSURFRanker
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.integers(0, 2, size=(2, 200))
    >>> X = np.column_stack([rng.normal(size=(200, 3)), a, b])
    >>> MultiSURFRanker().fit(X, a ^ b).ranking_[:2].tolist()  # the XOR pair
    [3, 4]
    """

    name = "multisurf"
    target_kind = "both"
    requires_y = True
    accepts_sparse = False
    deterministic = True
    scale_invariant = True  # diffs are range-normalised
    feature_scale_invariant = True
    reference: ClassVar[str] = (
        "Urbanowicz et al. (2018), MultiSURF (Relief with adaptive neighbourhoods)"
    )
    _constant_score: ClassVar[float] = -1.0

    _parameter_constraints: ClassVar[dict] = {
        **BaseRanker._parameter_constraints,
        "nominal": ["array-like", str, None],
        "discrete_threshold": [int],
        "task": [StrOptions(set(TASKS))],
    }

    def __init__(self, k=None, nominal=None, discrete_threshold: int = 10, task: str = "auto"):
        self.k = k
        self.nominal = nominal
        self.discrete_threshold = discrete_threshold
        self.task = task

    def _check_input(self, X, lo, hi) -> None:
        if isinstance(self.nominal, str) and self.nominal == "auto":
            distinct = np.array([np.unique(X[:, j]).size for j in range(X.shape[1])])
            self.nominal_ = distinct <= int(self.discrete_threshold)
        else:
            self.nominal_ = column_mask(
                self.nominal, X.shape[1], getattr(self, "feature_names_in_", None), what="nominal"
            )

    def _score(self, X, y, context):
        m, n = X.shape
        nominal = self.nominal_[~self.constant_features_]
        lo = X.min(axis=0)
        Xn = np.where(nominal, X, (X - lo) / (X.max(axis=0) - lo))
        classes = self.task_ == "classification"
        if classes:
            n_classes = int(y.max()) + 1
            same = y[:, None] == y[None, :]
        else:
            bound = float(np.std(y, ddof=1))
            same = np.abs(y[:, None] - y[None, :]) < bound
        scores = np.zeros(n)
        sizes = np.zeros(m, dtype=np.int64)
        step = max(1, min(m, _BLOCK_ELEMENTS // max(1, m * min(n, 64))))
        for s in range(0, m, step):
            rows = np.arange(s, min(m, s + step))
            D = _distances(Xn[rows], Xn, nominal)
            near = _neighbourhoods(D, rows)
            sizes[rows] = near.sum(axis=1)
            hits = near & same[rows]
            misses = near & ~same[rows]
            W = np.zeros(D.shape)
            n_hit = hits.sum(axis=1, keepdims=True)
            n_miss = misses.sum(axis=1, keepdims=True)
            W -= np.divide(hits, n_hit, out=np.zeros(D.shape), where=n_hit > 0)
            if classes and n_classes > 2:
                # skrebate: a miss of class C weighs (C_total - 1) |M_C| / |M|²
                onehot = np.eye(n_classes, dtype=np.float64)[y]
                per_class = misses.astype(np.float64) @ onehot  # |M_C| for each row
                weight = (n_classes - 1) * per_class[:, y] / np.maximum(n_miss, 1) ** 2
                W += np.where(misses, weight, 0.0)
            else:
                W += np.divide(misses, n_miss, out=np.zeros(D.shape), where=n_miss > 0)
            scores += _weighted_diffs(W, Xn[rows], Xn, nominal)
        self.neighbourhood_sizes_ = sizes
        return scores / m


def _distances(A: np.ndarray, B: np.ndarray, nominal: np.ndarray) -> np.ndarray:
    """Sum of the diffs over the features: Manhattan on the scaled numeric columns plus
    the number of nominal columns that differ."""
    d = np.zeros((A.shape[0], B.shape[0]))
    if (~nominal).any():
        d += cdist(A[:, ~nominal], B[:, ~nominal], "cityblock")
    if nominal.any():
        d += cdist(A[:, nominal], B[:, nominal], "hamming") * nominal.sum()
    return d


def _neighbourhoods(D: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Each row's samples closer than its mean distance minus half its standard deviation
    (over the other samples), by more than the tie tolerance."""
    b, m = D.shape
    others = np.ones(D.shape, dtype=bool)
    others[np.arange(b), rows] = False
    mean = np.where(others, D, 0.0).sum(axis=1) / (m - 1)
    dev = np.where(others, D - mean[:, None], 0.0)
    std = np.sqrt((dev * dev).sum(axis=1) / (m - 1))
    tol = TIE_RTOL * D.max(axis=1)
    return others & ((mean - std / 2.0 - tol)[:, None] > D)


def _weighted_diffs(W: np.ndarray, A: np.ndarray, B: np.ndarray, nominal: np.ndarray):
    """``Σ_ij W_ij diff_f(A_i, B_j)`` for every feature f, in blocks of features."""
    b, m = W.shape
    n = A.shape[1]
    out = np.empty(n)
    width = max(1, _BLOCK_ELEMENTS // max(1, b * m))
    for j in range(0, n, width):
        cols = slice(j, min(n, j + width))
        diff = np.abs(A[:, None, cols] - B[None, :, cols])
        nom = nominal[cols]
        if nom.any():
            diff[..., nom] = diff[..., nom] != 0
        out[cols] = np.einsum("ij,ijf->f", W, diff)
    return out
