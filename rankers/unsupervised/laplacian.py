"""Laplacian score: how well a feature respects the local structure of the data."""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from rankers.base import BaseRanker
from rankers.neighbors import (
    AUTO_COMPONENTS,
    EXACT_MAX_SAMPLES,
    approximate_neighbors,
    choose_components,
    edge_sq_lengths,
    nearest_neighbors,
    search_space,
)
from rankers.preprocessing import scale_features
from rankers.utils.param_validation import Interval, StrOptions

__all__ = ["LaplacianRanker"]

# largest block of edge differences held at once, in float64 elements (1 MB: it stays in
# a core's L2 cache)
_BLOCK_ELEMENTS = 1 << 17
# column blocks are a multiple of this many features (see _score)
_BLOCK_COLUMNS = 64
# up to this many (edge, feature) differences (4 MB), one matrix holds them all: they are
# squared in place and serve the edge lengths and the numerators (one pass, no blocks)
_ONE_PASS_ELEMENTS = 1 << 19
#: with ``knn_components=None``, above this many samples the neighbours are searched among
#: the first ``_AUTO_COMPONENTS`` principal components (approximate), with a warning: the
#: exact search costs samples² x features (benchmarks/scale/bench_knn_samples.py measures
#: both paths; results/single_cell/knn_samples.md)
_EXACT_MAX_SAMPLES = EXACT_MAX_SAMPLES
_AUTO_COMPONENTS = AUTO_COMPONENTS


class LaplacianRanker(BaseRanker):
    """Rank features by the Laplacian score of He, Cai & Niyogi (2005).

    A feature is relevant when samples that are close in the data space also have close
    values of the feature. The samples are linked by a symmetric k-nearest-neighbour
    graph (an edge when either sample is among the other's ``n_neighbors`` nearest,
    no self loops) weighted by a heat kernel ``S_ij = exp(-||x_i - x_j||² / t)``. With
    ``D = diag(S 1)``, ``L = D - S`` and each feature centred with respect to ``D``,
    ``f~ = f - (fᵀD1 / 1ᵀD1) 1``, the Laplacian score is

        ``L_r = f~ᵀ L f~ / f~ᵀ D f~``  (lower is better, 0 <= L_r <= 2).

    ``scores_`` is ``2 - L_r`` so that higher is better, as for every ranker; the
    paper's statistic is kept in ``statistic_``. The graph is sparse throughout (no
    ``n_samples x n_samples`` dense matrix) and all features are scored at once.

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.
    n_neighbors : int, default=5
        Neighbours per sample in the kNN graph. When it is not smaller than
        ``n_samples`` it is clipped to ``n_samples - 1`` (the complete graph); the value
        used is stored in ``n_neighbors_``.
    t : "auto" or float > 0, default="auto"
        Heat-kernel width. ``"auto"`` picks it from the data: the mean squared length
        of the graph's edges. Scaling every feature by one constant then scales ``t``
        alike and leaves the weights, hence the scores and the ranking, unchanged. A
        fixed float is in the squared units of the data, so it depends on their scale.
    weight_mode : {"heat", "binary"}, default="heat"
        ``"heat"``: heat-kernel weights; ``"binary"``: every edge weighs 1 (the simple
        0-1 weighting He et al. also allow; ``t`` is then unused).
    scale : {"minmax", None}, default=None
        ``"minmax"`` maps every feature onto [0, 1] before the graph is built and the
        score computed (as the Distance Rank paper preprocesses data for every method,
        and as ``compactness`` and ``distance_rank`` do by default); None follows He et
        al. and scikit-feature, on raw values.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        ``2 - L_r`` for each feature, in [0, 2]; constant features score 0.
    statistic_ : ndarray of shape (n_features,)
        The Laplacian score ``L_r`` itself (lower = more relevant); 2 for constant
        features.
    ranking_ : ndarray of shape (n_features,)
        Feature indices, best first.
    n_neighbors_ : int
        Neighbours per sample actually used (``min(n_neighbors, n_samples - 1)``).
    t_ : float
        Heat-kernel width used (NaN for ``weight_mode="binary"``).
    knn_components_ : int or None
        The principal components the neighbours were searched among, None for the
        exact search.

    See Also
    --------
    rankers.unsupervised.variance.VarianceRanker : the variance baseline, which the
        Laplacian score refines with the local graph structure.

    Notes
    -----
    **Many samples.** ``knn_components`` (default None) chooses where the neighbours are
    searched: None, the exact search among all features, which costs samples² x
    features (hours on 10^5 cells x 2,000 genes); an int, among the samples' first
    ``knn_components`` principal components, an approximate graph that may differ from
    the exact one in a few of each sample's neighbours. Above 10,000 samples None takes
    the approximate search among 50 components by default and says so in a
    ``UserWarning`` (``knn_components_`` records the choice); pass
    ``knn_components`` explicitly to choose (``knn_components=n_features`` keeps every
    component: the exact distances, at the exact search's cost).

    **Where it works.** On the planted-structure atlas (every structure; 200 samples, 200 and
    2,000 features, 0.5-50 % of them informative, 2 seeds; the mean share of the planted
    features in its top k, against a random ranking's), it recovers manifold; it recovers part
    of clusters, modules, shift, imbalanced; it fails on xor (within 0.1 of chance). The shares
    are in ``benchmarks/results/atlas_grid/summary.md``; :doc:`/guide/which-ranker` has the
    tables and heat maps.

    References
    ----------
    .. [1] X. He, D. Cai and P. Niyogi, "Laplacian Score for Feature Selection",
       Advances in Neural Information Processing Systems 18 (NIPS 2005).

    Examples
    --------
    >>> import numpy as np
    >>> from rankers.unsupervised.laplacian import LaplacianRanker
    >>> rng = np.random.default_rng(0)
    >>> groups = np.repeat([0.0, 10.0], 10)
    >>> X = np.column_stack([groups, rng.normal(size=20)])
    >>> ranker = LaplacianRanker(n_neighbors=3).fit(X)
    >>> ranker.ranking_.tolist()
    [0, 1]
    >>> float(ranker.statistic_[0])
    0.0
    """

    name = "laplacian"
    target_kind = "unsupervised"
    accepts_sparse = True  # CSR stays sparse: the scores read it in blocks of columns
    deterministic = True
    scale_invariant = True
    reference: ClassVar[str] = "He, Cai & Niyogi (2005), Laplacian Score for Feature Selection"
    _constant_score: ClassVar[float] = 0.0

    _parameter_constraints: ClassVar[dict] = {
        **BaseRanker._parameter_constraints,
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "t": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "weight_mode": [StrOptions({"heat", "binary"})],
        "scale": [StrOptions({"minmax"}), None],
        "knn_components": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(
        self,
        k=None,
        n_neighbors: int = 5,
        t="auto",
        weight_mode: str = "heat",
        scale: str | None = None,
        knn_components: int | None = None,
    ):
        self.k = k
        self.n_neighbors = n_neighbors
        self.t = t
        self.weight_mode = weight_mode
        self.scale = scale
        self.knn_components = knn_components

    @staticmethod
    def _statistic_from_scores(scores: np.ndarray) -> np.ndarray:
        return 2.0 - scores

    def _score_units(self) -> int | None:
        # a fixed heat-kernel width is in the squared units of the raw data
        fixed_width = self.weight_mode == "heat" and self.t != "auto" and self.scale is None
        return None if fixed_width else 0

    def _feature_scale_invariant(self) -> bool:
        # the kNN graph and the score's variance term read each feature in its units
        return self.scale is not None

    def _score(self, X, y, context):
        if sp.issparse(X):
            return self._score_sparse(scale_features(X, self.scale).tocsr(), context)
        # C order: the edges gather rows of X, and a row gathered from a column-major
        # array is a strided copy (a DataFrame's values are often column-major)
        X = np.ascontiguousarray(scale_features(X, self.scale))
        m, n = X.shape
        # each undirected edge once, weight S_rc = S_cr; sq: (X[r] - X[c])² when small
        r, c, w, sq = self._edges(X, context)
        d = np.bincount(r, weights=w, minlength=m) + np.bincount(c, weights=w, minlength=m)
        vol = d.sum()
        if vol <= 0.0:  # every heat weight underflowed (a fixed t far too small)
            return np.zeros(n)
        # centre each feature with respect to D: f~ = f - (fᵀD1 / 1ᵀD1) 1
        centre = (d @ X) / vol
        # f~ᵀLf~ = ½ Σ_ij S_ij (f~_i - f~_j)² = Σ_edges S_rc (f_r - f_c)², summed over the
        # edge list (exactly 0 for a feature constant on every edge, unlike f~ᵀDf~ - f~ᵀSf~).
        # Unless _edges kept them, column blocks small enough to stay in cache (one large
        # (n_edges x n_features) difference matrix costs more in memory traffic and page
        # faults than in arithmetic). Blocks of a multiple of 64 columns: OpenBLAS's gemv
        # then sums each column as it does over the whole matrix, so the scores keep
        # their last bits.
        num, den = np.empty(n), np.empty(n)
        step = _BLOCK_COLUMNS * max(1, _BLOCK_ELEMENTS // (_BLOCK_COLUMNS * max(r.size, m)))
        if sq is not None:
            step = n  # one block: the squared differences _edges kept
        for j in range(0, n, step):
            cols = slice(j, j + step)
            Xb = X[:, cols]
            if sq is None:
                diff = Xb[r] - Xb[c]
                diff *= diff
            else:
                diff = sq
            num[cols] = w @ diff
            Xt = Xb - centre[cols]
            Xt *= Xt
            den[cols] = d @ Xt  # f~ᵀ D f~
        # Bounds: with S symmetric and S_ij >= 0, f~ᵀLf~ >= 0, and since
        # (a - b)² <= 2a² + 2b², ½ Σ_ij S_ij (f~_i - f~_j)² <= Σ_ij S_ij (f~_i² + f~_j²)
        # = 2 Σ_i d_i f~_i² = 2 f~ᵀDf~. Hence 0 <= L_r <= 2 and 2 - L_r is a score in
        # [0, 2]; the clip only removes rounding error.
        num = np.minimum(num, 2.0 * den)
        # f~ᵀDf~ = 0 when a feature varies only on samples of zero degree (heat weights
        # that underflow): the graph sees it as constant, so it gets the worst statistic.
        # The tolerance absorbs the rounding of the weighted mean.
        # (max |x| as the larger of max x and -min x: no |X| temporary)
        top = np.maximum(X.max(axis=0), -X.min(axis=0))
        scale = np.finfo(np.float64).eps * 64 * top
        seen = den > vol * scale**2
        stat = np.full(n, 2.0)
        stat[seen] = num[seen] / den[seen]
        return 2.0 - stat

    def _score_sparse(self, X, context) -> np.ndarray:
        """The scores of a CSR ``X``: the same sums as the dense path, each block of
        columns made dense in turn (memory: X, the graph and one block)."""
        m, n = X.shape
        r, c, w, _ = self._edges(X, context)
        d = np.bincount(r, weights=w, minlength=m) + np.bincount(c, weights=w, minlength=m)
        vol = d.sum()
        if vol <= 0.0:
            return np.zeros(n)
        centre = (X.T @ d) / vol
        columns = X.tocsc()
        num, den = np.empty(n), np.empty(n)
        width = _BLOCK_COLUMNS * max(1, (1 << 20) // (_BLOCK_COLUMNS * m))  # ~8 MB a block
        edges = max(1, _BLOCK_ELEMENTS // width)
        for j in range(0, n, width):
            cols = slice(j, min(j + width, n))
            Xb = columns[:, cols].toarray()
            part = np.zeros(Xb.shape[1])
            for s in range(0, r.size, edges):
                diff = Xb[r[s : s + edges]] - Xb[c[s : s + edges]]
                diff *= diff
                part += w[s : s + edges] @ diff
            num[cols] = part
            Xb -= centre[cols]
            Xb *= Xb
            den[cols] = d @ Xb
        num = np.minimum(num, 2.0 * den)
        top = np.maximum(X.max(axis=0).toarray().ravel(), -X.min(axis=0).toarray().ravel())
        scale = np.finfo(np.float64).eps * 64 * top
        seen = den > vol * scale**2
        stat = np.full(n, 2.0)
        stat[seen] = num[seen] / den[seen]
        return 2.0 - stat

    def _edges(self, X, context) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        """Edges (i < j) of the symmetric kNN graph, their weights S_ij, and (when they
        fit in one pass) their squared differences ``(X[i] - X[j])**2``, else None
        (``context``: fit's, for ``t_`` in the caller's units)."""
        m, n = X.shape
        k = min(int(self.n_neighbors), m - 1)
        self.n_neighbors_ = k
        components = choose_components(
            self.knn_components, m, n, "LaplacianRanker", exact_max=_EXACT_MAX_SAMPLES,
            components=_AUTO_COMPONENTS, stacklevel=5,
        )  # fmt: skip
        self.knn_components_ = components
        if components is None:  # ties: lower index first, on any machine
            space = search_space(X, None, what="the Laplacian score's graph")
            ind = nearest_neighbors(space, k, return_distance=False)
        else:
            ind = approximate_neighbors(search_space(X, components), k)
        rows = np.repeat(np.arange(m, dtype=np.int64), k)
        cols = ind.ravel().astype(np.int64)
        # i~j when i is among j's neighbours OR j among i's. Symmetrised on (min, max)
        # index pairs rather than with a sparse G.maximum(G.T): duplicate samples give
        # edges of length 0, which sparse arithmetic would drop although their weight is 1.
        lo, hi = np.minimum(rows, cols), np.maximum(rows, cols)
        r, c = np.divmod(np.unique(lo * m + hi), m)
        heat = self.weight_mode == "heat"
        # Squared lengths from the differences, rounded through the square root as the
        # distances nearest_neighbors returns (the scores do not move by a bit): in one
        # matrix when small, else in blocks of whole edges small enough to stay in cache.
        sq = None
        if sp.issparse(X):
            d2 = np.sqrt(edge_sq_lengths(X, r, c)) ** 2 if heat else None
        elif r.size * n <= _ONE_PASS_ELEMENTS:
            sq = X[r] - X[c]
            d2 = np.sqrt(np.einsum("ij,ij->i", sq, sq)) ** 2 if heat else None
            np.multiply(sq, sq, out=sq)
        elif heat:
            d2 = np.empty(r.size)
            step = max(1, _BLOCK_ELEMENTS // max(1, n))
            for s in range(0, r.size, step):
                diff = X[r[s : s + step]]
                diff -= X[c[s : s + step]]
                d2[s : s + step] = np.einsum("ij,ij->i", diff, diff)
            d2 = np.sqrt(d2) ** 2
        if not heat:
            self.t_ = float("nan")
            return r, c, np.ones(r.size), sq
        if self.t == "auto":
            t = float(d2.mean())
            if t <= 0.0:  # every edge joins duplicates: all weights are 1 whatever t
                t = 1.0
        else:
            t = float(self.t)
        # in the caller's squared units (X may have been rescaled by a power of two in
        # BaseRanker.fit), unless the data were min-max scaled first
        self.t_ = float(context.to_data_units(t, 2 if self.scale is None else 0))
        return r, c, np.exp(-d2 / t), sq
