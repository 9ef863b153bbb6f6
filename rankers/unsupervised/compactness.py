"""Compactness score: how little a feature varies among each sample's nearest neighbours."""

from __future__ import annotations

from numbers import Integral
from typing import ClassVar

import numpy as np

from rankers.base import BaseRanker
from rankers.neighbors import (
    approximate_neighbors,
    choose_components,
    nearest_neighbors,
    search_space,
)
from rankers.preprocessing import minmax_scale
from rankers.utils.param_validation import Interval, StrOptions

__all__ = ["CompactnessRanker"]

# largest (neighbour pairs x features) block of differences held at once (~128 MB)
_BLOCK_ELEMENTS = 1 << 24


class CompactnessRanker(BaseRanker):
    """Rank features by the Compactness score of Zhu, Hou, Wang & Nie (2023).

    A relevant feature keeps the samples that are neighbours in the data space close
    (a compact local structure), while varying over the whole data set. With ``S_i``
    the ``n_neighbors`` nearest neighbours of sample i in the data space (Euclidean,
    the sample itself excluded), the score of feature r is, as Eq. 2 of Firdová et al.
    write it,

        ``CS_r = Σ_i Σ_{j ∈ S_i} |x_ir - x_jr| / Var(x_r)``  (lower is better),

    with the population variance. The data are min-max scaled first (the preprocessing
    of both papers), so the statistic does not depend on any feature's units; without
    scaling it would (the numerator has the feature's units, the variance their
    square). The neighbour lists come from a tree or chunked search (sklearn's
    :class:`~sklearn.neighbors.NearestNeighbors`): no ``n_samples x n_samples``
    matrix is ever held.

    ``scores_`` is ``1 / (1 + CS_r)``, a decreasing transform into (0, 1] so that
    higher is better, as for every ranker; the statistic is kept in ``statistic_``.

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.
    n_neighbors : int, default=5
        Neighbours per sample. When it is not smaller than ``n_samples`` it is clipped
        to ``n_samples - 1``; the value used is stored in ``n_neighbors_``.
    scale : "minmax" or None, default="minmax"
        ``"minmax"`` rescales every feature to [0, 1] before the neighbour search and
        the statistic; None uses the data as given.
    n_jobs : int or None, default=None
        Parallel jobs of the neighbour search (joblib). The scores do not depend on it.
    knn_components : int or None, default=None
        Where the neighbours are searched. None: among all features (the exact search)
        up to :data:`rankers.neighbors.EXACT_MAX_SAMPLES` (10,000) samples, above it
        among the first 50 principal components (of the data as scaled), said in a
        ``UserWarning`` (the exact search costs samples² x features); an int: among the
        first ``knn_components`` principal components, approximate neighbours whose
        differences are still taken in the data (see
        :class:`~rankers.unsupervised.laplacian.LaplacianRanker`).

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        ``1 / (1 + CS_r)``, in (0, 1]; constant features score 0 (the floor: their
        statistic is taken as infinite).
    statistic_ : ndarray of shape (n_features,)
        The Compactness score ``CS_r`` (lower = more relevant); ``inf`` for constant
        features.
    ranking_ : ndarray of shape (n_features,)
        Feature indices, best first.
    n_neighbors_ : int
        Neighbours per sample actually used (``min(n_neighbors, n_samples - 1)``).
    knn_components_ : int or None
        The principal components the neighbours were searched among (None: the exact
        search).

    See Also
    --------
    rankers.unsupervised.laplacian.LaplacianRanker : the Laplacian score, a heat-kernel
        weighted relative of this statistic on a symmetric kNN graph.
    rankers.unsupervised.distance_rank.DistanceRankRanker : uses all pairs, not only
        neighbours.

    Notes
    -----
    Eq. 2 sums over each sample's own neighbours, so a pair of mutual neighbours counts
    twice and the graph is not symmetrised (unlike the Laplacian score's). Firdová et al.
    write the numerator with absolute differences, which is what is computed here.

    **Where it works.** On the planted-structure atlas (every structure; 200 samples, 200 and
    2,000 features, 0.5-50 % of them informative, 2 seeds; the mean share of the planted
    features in its top k, against a random ranking's), it recovers xor, clusters, manifold; it
    recovers part of shift, modules; it fails on imbalanced (within 0.1 of chance). The shares
    are in ``benchmarks/results/atlas_grid/summary.md``; :doc:`/guide/which-ranker` has the
    tables and heat maps.

    References
    ----------
    .. [1] P. Zhu, X. Hou, Z. Wang and F. Nie, "Compactness score: a fast filter method
       for unsupervised feature selection", Annals of Operations Research, 2023.
    .. [2] K. Firdová, C. Labart and A. Martel, "Distance Rank Score: unsupervised
       filter method for feature selection on imbalanced dataset", 2024, Eq. 2.

    Examples
    --------
    >>> import numpy as np
    >>> from rankers.unsupervised.compactness import CompactnessRanker
    >>> rng = np.random.default_rng(0)
    >>> groups = np.repeat([0.0, 10.0], 10)
    >>> X = np.column_stack([groups, rng.normal(size=20)])
    >>> ranker = CompactnessRanker(n_neighbors=3).fit(X)
    >>> ranker.ranking_.tolist()
    [0, 1]
    >>> float(ranker.statistic_[0])
    0.0
    """

    name = "compactness"
    target_kind = "unsupervised"
    accepts_sparse = False
    deterministic = True
    scale_invariant = True
    reference: ClassVar[str] = (
        "Zhu, Hou, Wang & Nie (2023), Compactness score: a fast filter method for "
        "unsupervised feature selection"
    )
    # scores lie in (0, 1]; a constant feature (infinite statistic) gets the floor 0
    _constant_score: ClassVar[float] = 0.0

    _parameter_constraints: ClassVar[dict] = {
        **BaseRanker._parameter_constraints,
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "knn_components": [Interval(Integral, 1, None, closed="left"), None],
        "scale": [StrOptions({"minmax"}), None],
        "n_jobs": [Integral, None],
    }

    def __init__(
        self,
        k=None,
        n_neighbors: int = 5,
        scale: str | None = "minmax",
        n_jobs: int | None = None,
        knn_components: int | None = None,
    ):
        self.k = k
        self.n_neighbors = n_neighbors
        self.scale = scale
        self.n_jobs = n_jobs
        self.knn_components = knn_components

    @staticmethod
    def _statistic_from_scores(scores: np.ndarray) -> np.ndarray:
        stat = np.full(scores.shape, np.inf)
        positive = scores > 0.0
        stat[positive] = 1.0 / scores[positive] - 1.0
        return np.maximum(stat, 0.0)  # 1/s - 1 can round just below 0 for s = 1

    def _score_units(self) -> int | None:
        # unscaled, CS_r is in units of X**-1 and 1 / (1 + CS_r) is no power of them
        return 0 if self.scale == "minmax" else None

    def _feature_scale_invariant(self) -> bool:
        return self.scale == "minmax"  # raw distances weigh each feature by its units

    def _score(self, X, y, context):
        m, n = X.shape
        if self.scale == "minmax":
            X = minmax_scale(X)  # one scaled copy; no constant column reaches _score
        k = min(int(self.n_neighbors), m - 1)
        self.n_neighbors_ = k
        components = choose_components(self.knn_components, m, n, "CompactnessRanker")
        self.knn_components_ = components
        if components is None:  # each sample's k nearest others; ties by lower index
            cols = nearest_neighbors(X, k, n_jobs=self.n_jobs)[1].ravel()
        else:
            cols = approximate_neighbors(search_space(X, components), k).ravel()
        rows = np.repeat(np.arange(m), k)
        num = np.empty(n)
        block = max(1, _BLOCK_ELEMENTS // rows.size)
        for j in range(0, n, block):  # column blocks bound the (m*k x block) differences
            diff = X[rows, j : j + block] - X[cols, j : j + block]
            num[j : j + block] = np.abs(diff, out=diff).sum(axis=0)
        var = X.var(axis=0)
        # var = 0 only for a feature whose spread underflows without scaling: the graph
        # and the variance see it as constant, so it gets the constant features' floor
        stat = np.divide(num, var, out=np.full(n, np.inf), where=var > 0.0)
        return 1.0 / (1.0 + stat)
