"""URelief: the unsupervised member of the Relief family (Petković et al., 2020)."""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from scipy.spatial.distance import cdist
from sklearn.utils import check_random_state

from rankers.base import BaseRanker
from rankers.ties import kth_nearest
from rankers.utils.param_validation import Interval, RealNotInt
from rankers.validation import column_mask

__all__ = ["UReliefRanker"]

# largest block of (reference rows x samples) distances, or of (reference rows x neighbours
# x features) per-feature distances, held at once (~8 MB of float64)
_BLOCK_ELEMENTS = 1 << 20


class UReliefRanker(BaseRanker):
    """Rank features by URelief, the unsupervised extension of (R)ReliefF.

    Every feature is at once descriptive, clustering and target attribute. For two
    examples the per-feature distance is ``d_i = |x_i - y_i| / (max x_i - min x_i)`` for a
    numeric feature and ``d_i = 1[x_i != y_i]`` for a nominal one, and the distance in the
    clustering space is their mean ``d_X = (1/n) Σ_i d_i`` (Eq. 3 of the paper). For each of
    ``I`` reference examples ``r`` and each of its ``K`` nearest neighbours ``n_k`` (under
    ``d_X``), Algorithm 3 accumulates

        ``P_C = Σ d_X(r, n_k) / (IK)``,  ``P_A[i] = Σ d_i(r, n_k) / (IK)``,
        ``P_AC[i] = Σ d_i(r, n_k) d_X(r, n_k) / (IK)``

    and returns ``w_i = P_AC[i] / P_C - (P_A[i] - P_AC[i]) / (1 - P_C)``, the estimate of
    ``P(x_i differs | examples differ) - P(x_i differs | examples alike)`` (Eq. 4): a feature
    is relevant when it differs between neighbours exactly when the neighbours are far
    apart. ``w_i`` lies in [-1, 1] and is used as the score as it is (higher = more
    relevant). A term whose denominator is 0 (all neighbours identical, ``P_C = 0``; or all
    maximally apart, ``P_C = 1``) is taken as 0.

    The whole algorithm is vectorised: the reference rows are processed in blocks, each
    block's distances to all samples come from one ``cdist`` call, and the neighbours'
    contributions are summed with matrix products, so no ``n_samples x n_samples`` matrix
    is held at once. Time grows as ``I * n_samples * n_features`` (linear in the features;
    about 2 s of CPU for 800 x 4,000, ``benchmarks/speed/bench_width_rankers.py``) and memory as
    the data plus ~8 MB of blocks.

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.
    n_neighbors : int or float, default=30
        Neighbours ``K`` per reference example (the paper's value). An int is a count; a
        float in (0, 1) is a fraction of ``n_samples`` (rounded, at least 1), which keeps
        the neighbourhood scale fixed relative to the data as the number of rows changes
        (see **Where it works** below). Either is clipped to ``n_samples - 1``; the value
        used is stored in ``n_neighbors_``. Among samples at
        equal distance, lower row indices are taken first; the reference example itself
        is never its own neighbour (a duplicate of it may be).
    n_iterations : int, float or None, default=None
        Number ``I`` of reference examples. None uses every example once (``I = m``, the
        paper's default); an int is a count (clipped to ``n_samples``); a float in (0, 1]
        is a fraction of ``n_samples`` (rounded, at least 1). Reference examples are drawn
        without replacement, so ``I = m`` needs no randomness.
    nominal : array-like or None, default=None
        Which features are nominal (compared by equality in Eq. 3): column indices,
        column names (when ``X`` is a DataFrame) or a boolean mask over the features.
        None treats every feature as numeric; nothing is guessed from the values.
    random_state : int, RandomState instance or None, default=None
        Seeds the choice of reference examples when ``I < n_samples``.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        ``w_i`` for each feature, in [-1, 1]; constant features score -1 (they never
        differ, so Eq. 4 cannot rate them; they are ranked last).
    ranking_ : ndarray of shape (n_features,)
        Feature indices, best first.
    n_neighbors_ : int
        Neighbours per reference example actually used.
    n_iterations_ : int
        Number of reference examples actually used.
    sample_indices_ : ndarray of shape (n_iterations_,)
        Rows used as reference examples, ascending.
    nominal_ : ndarray of bool of shape (n_features,)
        Which features were treated as nominal.
    p_diff_cluster_ : float
        The estimate ``P_C`` of the probability that two neighbours differ.

    See Also
    --------
    rankers.unsupervised.laplacian.LaplacianRanker : another neighbourhood-based
        unsupervised score.

    Notes
    -----
    Algebraically ``w_i = Cov(d_i, d_X) / (P_C (1 - P_C))`` over the neighbour pairs: a
    feature scores high when its differences move with the overall distance among
    neighbours. Features that vary together across neighbourhoods (a shared cluster or
    latent factor seen by K-neighbourhoods wider than a cluster) score high; when every
    neighbourhood lies inside one tight cluster, the cluster-carrying features barely vary
    among neighbours and independent noise features, which make up most of ``d_X``
    there, can outscore them. ``n_neighbors`` sets this scale.

    ``n`` in Eq. 3 counts the non-constant features only: constant features add nothing
    to any distance, and counting them would rescale ``d_X`` and so change the other
    features' scores merely because a constant column is present.

    **Where it works.** On the planted-structure atlas (every structure; 200 samples, 200 and
    2,000 features, 0.5-50 % of them informative, 2 seeds; the mean share of the planted
    features in its top k, against a random ranking's), it recovers part of modules, imbalanced;
    it fails on clusters, xor, manifold, shift (within 0.1 of chance). The failures are the
    neighbourhood scale of the paragraph above: with 200 rows in four clusters of about 50, K =
    30 neighbours lie inside one cluster. ``n_neighbors=100`` recovers them, but on the ensemble
    paper's protocol (3 smallest data sets, 5 folds) it raised the MSE at 16 features on Yale
    and colon, so the default stays the paper's 30: on data with a few large groups, set K above
    the group size. A fixed K fails again once the groups outgrow it (at 60, 200 and 800
    samples), while a fraction of the rows, ``n_neighbors=0.5``, keeps recovering them; on the
    paper's protocol it raised the MSE at 16 features on all three data sets, so it is an option
    for data with a few large groups of rows, not the default (the measurements:
    ``benchmarks/results/atlas_defaults.md``). The shares are in
    ``benchmarks/results/atlas_grid/summary.md``; :doc:`/guide/which-ranker` has the tables and
    heat maps.

    References
    ----------
    .. [1] M. Petković, D. Kocev, B. Škrlj and S. Džeroski, "Ensemble- and Distance-Based
       Feature Ranking for Unsupervised Learning", 2020 (Algorithm 3, Eq. 3-4).
    .. [2] M. Robnik-Šikonja and I. Kononenko, "Theoretical and Empirical Analysis of
       ReliefF and RReliefF", Machine Learning (2003).

    Examples
    --------
    >>> import numpy as np
    >>> from rankers.unsupervised.urelief import UReliefRanker
    >>> rng = np.random.default_rng(0)
    >>> cluster = np.repeat([0.0, 1.0, 2.0], 10)
    >>> X = np.column_stack([
    ...     cluster + 0.2 * rng.normal(size=30),  # carries the clusters
    ...     cluster + 0.4 * rng.normal(size=30),  # a noisier copy
    ...     rng.normal(size=30),                   # noise
    ... ])
    >>> UReliefRanker().fit(X).ranking_.tolist()
    [0, 1, 2]
    """

    name = "urelief"
    target_kind = "unsupervised"
    accepts_sparse = False
    deterministic = False
    scale_invariant = True
    feature_scale_invariant = True  # diffs are range-normalised
    reference: ClassVar[str] = (
        "Petković, Kocev, Škrlj & Džeroski (2020), Ensemble- and Distance-Based Feature "
        "Ranking for Unsupervised Learning"
    )
    _constant_score: ClassVar[float] = -1.0

    _parameter_constraints: ClassVar[dict] = {
        **BaseRanker._parameter_constraints,
        "n_neighbors": [
            Interval(Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="neither"),
        ],
        "n_iterations": [
            None,
            Interval(Integral, 1, None, closed="left"),
            Interval(Real, 0, 1, closed="right"),
        ],
        "nominal": [None, "array-like"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        k=None,
        n_neighbors: int | float = 30,
        n_iterations=None,
        nominal=None,
        random_state=None,
    ):
        self.k = k
        self.n_neighbors = n_neighbors
        self.n_iterations = n_iterations
        self.nominal = nominal
        self.random_state = random_state

    def _check_input(self, X, lo, hi) -> None:
        self.nominal_ = column_mask(
            self.nominal, X.shape[1], getattr(self, "feature_names_in_", None), what="nominal"
        )

    def _score(self, X, y, context):
        m, n = X.shape
        nominal = self.nominal_[~self.constant_features_]
        K = self._neighbour_count(m)
        self.n_neighbors_ = K
        rows = self._reference_rows(m)
        n_iter = rows.size

        # numeric columns scaled by their range, so |a - b| is d_i of Eq. 3; shifting by
        # the minimum first keeps the values in [0, 1] (better rounding, affine invariance)
        # C order: fit hands over a Fortran-ordered X, and both the distances (cdist walks
        # rows) and the gathers of neighbour rows below run several times slower on it
        num = X.take(np.flatnonzero(~nominal), axis=1)  # a new C-ordered array
        lo = num.min(axis=0)
        span = num.max(axis=0) - lo
        num -= lo
        num /= np.where(span > 0, span, 1.0)  # minmax_scale's values, to the last bit
        nom = X.take(np.flatnonzero(nominal), axis=1)

        p_c = 0.0
        p_a = np.zeros(n)
        p_ac = np.zeros(n)
        block = max(1, min(_BLOCK_ELEMENTS // m, _BLOCK_ELEMENTS // max(1, K * n)))
        for start in range(0, n_iter, block):
            r = rows[start : start + block]
            dist = _clustering_distances(num, nom, r, n)
            nbr = _nearest(dist, r, K)
            d_sel = np.take_along_axis(dist, nbr, axis=1).ravel()
            p_c += d_sel.sum()
            # d_i of every (reference, neighbour) pair, one row per pair; updated in
            # place to keep a single (block * K, features) array alive
            if num.shape[1]:
                d_i = num[nbr]
                d_i -= num[r][:, None, :]
                d_i = np.abs(d_i, out=d_i).reshape(d_sel.size, -1)
                p_a[~nominal] += d_i.sum(axis=0)
                p_ac[~nominal] += d_sel @ d_i
            if nom.shape[1]:
                d_i = (nom[nbr] != nom[r][:, None, :]).reshape(d_sel.size, -1)
                p_a[nominal] += d_i.sum(axis=0)
                p_ac[nominal] += d_sel @ d_i
        total = n_iter * K
        p_c /= total
        p_a /= total
        p_ac /= total
        self.p_diff_cluster_ = float(p_c)
        first = p_ac / p_c if p_c > 0.0 else np.zeros(n)
        second = (p_a - p_ac) / (1.0 - p_c) if p_c < 1.0 else np.zeros(n)
        # the estimate is a difference of two probabilities; clip rounding beyond [-1, 1]
        return np.clip(first - second, -1.0, 1.0)

    def _neighbour_count(self, m: int) -> int:
        """``K`` for ``m`` rows: the count, or the fraction of ``m`` rounded (at least 1),
        clipped to ``m - 1``."""
        spec = self.n_neighbors
        K = int(spec) if isinstance(spec, Integral) else max(1, round(float(spec) * m))
        return min(K, m - 1)

    def _reference_rows(self, m: int) -> np.ndarray:
        spec = self.n_iterations
        if spec is None:
            n_iter = m
        elif isinstance(spec, Integral):
            n_iter = min(int(spec), m)
        else:
            n_iter = max(1, round(float(spec) * m))
        if n_iter >= m:
            rows = np.arange(m)
        else:
            rng = check_random_state(self.random_state)
            rows = np.sort(rng.choice(m, size=n_iter, replace=False))
        self.n_iterations_ = int(rows.size)
        self.sample_indices_ = rows
        return rows


def _clustering_distances(num: np.ndarray, nom: np.ndarray, rows: np.ndarray, n: int):
    """``d_X`` (Eq. 3) from the examples ``rows`` to every example."""
    dist = np.zeros((rows.size, num.shape[0]))
    if num.shape[1]:
        dist += cdist(num[rows], num, "cityblock")
    if nom.shape[1]:
        # hamming = fraction of differing nominal values; times their count = the sum
        dist += cdist(nom[rows], nom, "hamming") * nom.shape[1]
    return dist / n


def _nearest(dist: np.ndarray, rows: np.ndarray, K: int) -> np.ndarray:
    """Indices of the ``K`` nearest examples of each row, no self; distances within
    ``1e-9`` of each other (relative to the row's largest) are tied and taken by lower
    index (:func:`rankers.ties.kth_nearest`), whatever their last bits."""
    dist = dist.copy()
    dist[np.arange(dist.shape[0]), rows] = np.inf
    return np.sort(kth_nearest(dist, K), axis=1)
