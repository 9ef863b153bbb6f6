"""ReliefF and RReliefF: how well a feature separates near neighbours of another class or target."""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from scipy.spatial.distance import cdist

from rankers.base import BaseRanker
from rankers.exceptions import InvalidInputError
from rankers.preprocessing import minmax_scale
from rankers.ties import kth_nearest
from rankers.utils.param_validation import Interval
from rankers.validation import column_mask

__all__ = ["RReliefFRanker", "ReliefFRanker"]

# elements of the largest temporary held at once: a (rows x samples) block of distances
# or a (rows x neighbours x features) block of differences, ~8 MB of float64
_BLOCK_ELEMENTS = 1 << 20
# up to this many samples the whole distance matrix (<= 64 MB) is kept, which halves the
# distance computations by symmetry
_FULL_SAMPLES = 2896
_STRIP = 128


class _ReliefBase(BaseRanker):
    """What ReliefF and RReliefF share: the diff function, the neighbours and the blocks."""

    _constant_score: ClassVar[float] = -1.0  # both estimates lie in [-1, 1]
    scale_invariant = True  # diffs are range-normalised
    feature_scale_invariant = True
    _parameter_constraints: ClassVar[dict] = {
        **BaseRanker._parameter_constraints,
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "nominal": ["array-like", None],
        "weight_by_distance": ["boolean"],
        "sigma": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(
        self,
        k=None,
        n_neighbors: int = 10,
        nominal=None,
        weight_by_distance: bool = False,
        sigma: float = 2.0,
    ):
        self.k = k
        self.n_neighbors = n_neighbors
        self.nominal = nominal
        self.weight_by_distance = weight_by_distance
        self.sigma = sigma

    def _check_input(self, X, lo, hi) -> None:
        self.nominal_ = column_mask(
            self.nominal, X.shape[1], getattr(self, "feature_names_in_", None), what="nominal"
        )

    def _prepare(self, X) -> tuple[np.ndarray, np.ndarray]:
        """Range-normalised numeric columns (nominal codes kept) and the nominal mask."""
        nominal = self.nominal_[~self.constant_features_]
        Xn = np.where(nominal, X, minmax_scale(X))  # constant features never reach _score
        return np.ascontiguousarray(Xn), nominal

    def _neighbour_blocks(self, Xn: np.ndarray, nominal: np.ndarray, kk: int):
        """Yield (rows, distances from those rows to every sample), self-distance = inf.

        Up to ``_FULL_SAMPLES`` samples the whole symmetric matrix is built first from
        the upper-triangle blocks only (half the work of all rows against all samples);
        beyond it each block of rows is computed on its own, so memory stays bounded.
        """
        m, n = Xn.shape
        size = max(1, min(m, _BLOCK_ELEMENTS // max(m, kk * n, 1)))
        starts = range(0, m, size)
        full = None
        if m <= _FULL_SAMPLES:
            full = np.empty((m, m))
            # thin strips keep the computed part close to the upper triangle
            for s in range(0, m, _STRIP):
                d = _distances(Xn[s : s + _STRIP], Xn[s:], nominal)
                full[s : s + _STRIP, s:] = d
                full[s:, s : s + _STRIP] = d.T
            np.fill_diagonal(full, np.inf)  # never one's own neighbour
        for s in starts:
            rows = np.arange(s, min(m, s + size))
            if full is not None:
                yield rows, full[s : s + size]
                continue
            D = _distances(Xn[rows], Xn, nominal)
            D[np.arange(rows.size), rows] = np.inf
            yield rows, D

    def _rank_weights(self, valid: np.ndarray) -> np.ndarray:
        """Neighbour weights d(i, j), each row summing to 1 over its valid neighbours."""
        if self.weight_by_distance:
            rank = np.arange(1, valid.shape[1] + 1)  # 1 = nearest, as in the paper's d1(i, j)
            w = np.exp(-((rank / self.sigma) ** 2)) * valid
        else:
            w = valid.astype(np.float64)
        total = w.sum(axis=1, keepdims=True)
        return np.divide(w, total, out=np.zeros_like(w), where=total > 0)


def _distances(Xb: np.ndarray, Xn: np.ndarray, nominal: np.ndarray) -> np.ndarray:
    """Sum over features of diff(A, R, I): Manhattan on the range-normalised numeric
    columns plus the number of nominal columns whose codes differ."""
    if not nominal.any():
        return cdist(Xb, Xn, "cityblock")
    numeric = ~nominal
    d = cdist(Xb[:, nominal], Xn[:, nominal], "hamming") * nominal.sum()
    if numeric.any():
        d += cdist(Xb[:, numeric], Xn[:, numeric], "cityblock")
    return d


def _diffs(Xb: np.ndarray, neighbours: np.ndarray, nominal: np.ndarray) -> np.ndarray:
    """diff(A, R, I) of every feature for every (row, neighbour): shape (rows, k, n)."""
    d = neighbours - Xb[:, None, :]
    np.abs(d, out=d)
    if nominal.any():
        d[..., nominal] = d[..., nominal] != 0
    return d


def _weighted_sum(coef: np.ndarray, diffs: np.ndarray) -> np.ndarray:
    """Σ over (row, neighbour) of coef · diffs, per feature. einsum rather than a BLAS
    matrix-vector product: the work is memory-bound, and multithreaded BLAS gemv was
    several times slower on a busy machine."""
    return np.einsum("rj,rjn->n", coef, diffs)


def _nearest(D: np.ndarray, kk: int, scale=None) -> np.ndarray:
    """Columns of the ``kk`` smallest entries of each row of ``D``, nearest first.

    Distances within ``1e-9`` of each other (relative to ``scale``, per row, default the
    row's largest finite distance) are tied and taken by lower column
    (:func:`rankers.ties.kth_nearest`): the neighbours depend neither on the sorting
    algorithm nor on the last bits of the distances.
    """
    return kth_nearest(D, kk, scale=scale)


class ReliefFRanker(_ReliefBase):
    """Rank features by ReliefF: differences to the nearest misses minus to the nearest hits.

    For every sample R (all samples are reference instances, m = n_samples), ReliefF
    finds its ``n_neighbors`` nearest hits H_j (same class) and, for every other class
    C, its ``n_neighbors`` nearest misses M_j(C), and updates (Robnik-Šikonja &
    Kononenko 2003, Fig. 2)

        ``W[A] -= Σ_j diff(A, R, H_j) / (m k)``
        ``W[A] += Σ_{C≠class(R)} P(C) / (1 − P(class(R))) Σ_j diff(A, R, M_j(C)) / (m k)``

    ``diff`` is ``|a − b| / (max A − min A)`` for a numeric feature and 0/1 (equal or
    not) for a nominal one; the distance that picks the neighbours is the sum of the
    diffs over all features (Manhattan on range-normalised data, as in the paper, Weka
    and skrebate). Class priors P(C) are the class frequencies. A class with fewer than
    k members other than R supplies all of them, and the mean is over those used (the
    1/k becomes 1/k_used, as Weka does); a sample alone in its class has no hit term.
    Equal distances are broken by the lower sample index, so the result is deterministic.

    All samples are processed at once: distances in blocks of rows (bounded memory),
    per-class nearest neighbours by partial sorting, updates as one matrix product per
    block and class; there is no Python loop over samples.

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.
    n_neighbors : int, default=10
        Nearest hits and nearest misses per class (k = 10 in the error-curve benchmark).
    nominal : array-like of int, bool or str, default=None
        Nominal features: column indices, a boolean mask or column names. Their diff is
        0/1 on the codes. None: every feature is numeric.
    weight_by_distance : bool, default=False
        Weight the neighbours of each list by ``exp(−(rank/sigma)²)`` (rank 1 = nearest),
        normalised to sum to 1, instead of equally (the paper's d(i, j); Weka's
        ``weightByDistance``, which counts ranks from 0). Off in standard ReliefF.
    sigma : float, default=2.0
        Width of the rank weighting (Weka's default); unused unless weighted.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        ReliefF estimates W[A] in [-1, 1]; constant features get -1.
    ranking_ : ndarray of shape (n_features,)
        Feature indices, best first.
    nominal_ : ndarray of bool of shape (n_features,)
        Which features were treated as nominal.
    class_priors_ : ndarray of shape (n_classes,)
        Class frequencies P(C) weighting the misses.

    See Also
    --------
    RReliefFRanker : the regression version.
    rankers.supervised.information.InfoGainRanker : a univariate score, blind to
        interactions such as XOR that ReliefF detects.

    Notes
    -----
    **Where it works.** On the planted-structure atlas (the structures with a class; 200
    samples, 200 and 2,000 features, 0.5-50 % of them informative, 2 seeds; the mean share of
    the planted features in its top k, against a random ranking's), it recovers imbalanced,
    shift, xor. The shares are in ``benchmarks/results/atlas_grid/summary.md``;
    :doc:`/guide/which-ranker` has the tables and heat maps.

    References
    ----------
    .. [1] M. Robnik-Šikonja and I. Kononenko, "Theoretical and empirical analysis of
       ReliefF and RReliefF", Machine Learning 53, 23-69, 2003.
    .. [2] I. Kononenko, "Estimating attributes: analysis and extensions of RELIEF",
       ECML 1994.

    Examples
    --------
    >>> import numpy as np
    >>> from rankers.supervised.relief import ReliefFRanker
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.integers(0, 2, size=(2, 200))
    >>> X = np.column_stack([rng.normal(size=(200, 3)), a, b])
    >>> ReliefFRanker().fit(X, a ^ b).ranking_[:2].tolist()  # the XOR pair
    [3, 4]
    """

    name = "relieff"
    target_kind = "classification"
    requires_y = True
    accepts_sparse = False
    deterministic = True
    reference: ClassVar[str] = "Robnik-Šikonja & Kononenko (2003), ReliefF (k nearest hits/misses)"

    def _score(self, X, y, context):
        Xn, nominal = self._prepare(X)
        m, n = Xn.shape
        counts = np.bincount(y)
        priors = counts / m
        self.class_priors_ = priors
        # samples grouped by class (stable: original order kept inside a class, so the
        # lower-index tie rule is unchanged) make each class a contiguous block of columns
        order = np.argsort(y, kind="stable")
        Xn, y = Xn[order], y[order]
        bounds = np.concatenate([[0], np.cumsum(counts)])
        k = int(self.n_neighbors)
        # the miss weight of each reference sample: P(C) / (1 - P(class(R)))
        miss_scale = 1.0 / (1.0 - priors[y])
        total = np.zeros(n)
        for rows, D in self._neighbour_blocks(Xn, nominal, k):
            # one tie tolerance per reference sample, whichever class its neighbours are in
            scale = np.where(np.isfinite(D), D, 0.0).max(axis=1)
            for c in np.flatnonzero(counts):
                lo, hi = bounds[c], bounds[c + 1]
                Dc = D[:, lo:hi]
                nb = _nearest(Dc, min(k, hi - lo), scale)
                # only R itself is infinitely far: it is drawn only when its class is small
                valid = np.isfinite(np.take_along_axis(Dc, nb, axis=1))
                sign = np.where(y[rows] == c, -1.0, priors[c] * miss_scale[rows])
                coef = self._rank_weights(valid) * sign[:, None]
                diffs = _diffs(Xn[rows], Xn[lo + nb], nominal)
                total += _weighted_sum(coef, diffs)
        return total / m


class RReliefFRanker(_ReliefBase):
    """Rank features by RReliefF: how much a feature's difference goes with the target's.

    RReliefF (Robnik-Šikonja & Kononenko 2003, Fig. 3) estimates, over the
    ``n_neighbors`` nearest neighbours I_j of every sample R_i (all samples, m =
    n_samples), the probabilities behind ReliefF with the accumulators

        ``N_dC     += diff(τ, R_i, I_j) · d(i, j)``
        ``N_dA[A]  += diff(A, R_i, I_j) · d(i, j)``
        ``N_dCdA[A] += diff(τ, R_i, I_j) · diff(A, R_i, I_j) · d(i, j)``

    and ``W[A] = N_dCdA[A] / N_dC − (N_dA[A] − N_dCdA[A]) / (m − N_dC)``, where
    ``diff(τ, ·, ·) = |τ(R) − τ(I)| / (max τ − min τ)`` on the target and ``diff(A, ·, ·)``
    and the neighbour distance are those of :class:`ReliefFRanker`. The neighbour weights
    ``d(i, j)`` are ``1/k`` by default (equal influence, Weka's default and the paper's
    constant-influence variant); ``weight_by_distance=True`` gives the paper's
    ``exp(−(rank/σ)²)`` normalised over the k neighbours. With fewer than k + 1 samples
    all others are neighbours. Ties in distance are broken by the lower sample index.

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.
    n_neighbors : int, default=10
        Nearest neighbours per sample.
    nominal : array-like of int, bool or str, default=None
        Nominal features (indices, boolean mask or names), diff 0/1; None: all numeric.
    weight_by_distance : bool, default=False
        Rank-based neighbour weights ``exp(−(rank/sigma)²)`` (rank 1 = nearest) instead
        of ``1/k``.
    sigma : float, default=2.0
        Width of the rank weighting; unused unless weighted.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        RReliefF estimates W[A] in [-1, 1]; constant features get -1.
    ranking_ : ndarray of shape (n_features,)
        Feature indices, best first.
    nominal_ : ndarray of bool of shape (n_features,)
        Which features were treated as nominal.

    See Also
    --------
    ReliefFRanker : the classification version.

    References
    ----------
    .. [1] M. Robnik-Šikonja and I. Kononenko, "Theoretical and empirical analysis of
       ReliefF and RReliefF", Machine Learning 53, 23-69, 2003.

    Examples
    --------
    >>> import numpy as np
    >>> from rankers.supervised.relief import RReliefFRanker
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(300, 5))
    >>> y = X[:, 3] * X[:, 1]  # no linear correlation with either feature
    >>> sorted(RReliefFRanker().fit(X, y).ranking_[:2].tolist())
    [1, 3]
    """

    name = "rrelieff"
    target_kind = "regression"
    requires_y = True
    accepts_sparse = False
    deterministic = True
    reference: ClassVar[str] = "Robnik-Šikonja & Kononenko (2003), RReliefF for regression"

    def _score(self, X, y, context):
        span = float(np.ptp(y))
        if span == 0.0:
            raise InvalidInputError(
                "y is constant: RReliefF needs a target that varies to estimate how features "
                "go with it"
            )
        Xn, nominal = self._prepare(X)
        m, n = Xn.shape
        kk = min(int(self.n_neighbors), m - 1)
        n_dc = 0.0
        n_da = np.zeros(n)
        n_dcda = np.zeros(n)
        for rows, D in self._neighbour_blocks(Xn, nominal, kk):
            nb = _nearest(D, kk)
            w = self._rank_weights(np.ones(nb.shape, dtype=bool))
            wdc = w * (np.abs(y[rows, None] - y[nb]) / span)
            diffs = _diffs(Xn[rows], Xn[nb], nominal)
            n_dc += wdc.sum()
            n_da += _weighted_sum(w, diffs)
            n_dcda += _weighted_sum(wdc, diffs)
        # A term whose denominator is 0 has a numerator of 0 as well and is taken as 0:
        # N_dC = 0 when no neighbours differ in the target (well-separated groups of
        # equal targets), m - N_dC = 0 when all neighbour pairs span the target's range.
        tiny = 1e-12 * m
        first = n_dcda / n_dc if n_dc > tiny else np.zeros(n)
        rest = m - n_dc
        second = (n_da - n_dcda) / rest if rest > tiny else np.zeros(n)
        return first - second
