"""FRANe as of commit 9b10018 (before the streamed rewrite), kept as the reference for tests."""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import pdist, squareform
from sklearn.exceptions import ConvergenceWarning

from rankers.base import BaseRanker
from rankers.memory import check_memory
from rankers.preprocessing import column_norms, minmax_scale
from rankers.ties import TIE_RTOL, first_max
from rankers.utils.param_validation import Interval, StrOptions

__all__ = ["FRANeRanker", "pagerank", "ranking_quality"]

_DISTANCES = ("euclidean", "cityblock", "chebyshev", "canberra")
# relative residual at which the PageRank linear system counts as solved, and the
# relative gap below which two RQH values count as equal (well above the solver's error,
# about 1e-12 relative on the scores)
_CG_RTOL = 1e-13
_RQH_RTOL = 1e-9


class FRANeRanker(BaseRanker):
    """Rank features by FRANe (Feature Ranking via Attribute Networks).

    Features are the nodes of a graph whose edges join similar features. With a
    dissimilarity ``d_jk`` between features ``j != k`` and ``d_max = max d``, an edge of
    weight ``d_max - d_jk`` (the similarity) joins ``j`` and ``k`` when ``d_jk <= t``, for
    each threshold ``t`` of a progression between the smallest positive and the largest
    dissimilarity (Algorithm 1; its geometric progression on dissimilarities puts most
    thresholds among the most similar pairs). Graphs whose average degree
    ``2|E| / n`` is below ``min_edges`` are skipped. On every other graph the weighted
    PageRank (damping ``damping``) scores the features, and the scores with the largest
    ranking-quality heuristic ``RQH = s_(2) / s_(n-1)`` (second largest over second
    smallest score, i.e. the medians of the three largest and of the three smallest) are
    kept. RQH values within ``1e-9`` (relative) of the largest are ties, won by the first
    (lowest) threshold, so that rounding never chooses between graphs of equal RQH.

    This follows the reference implementation, PyPI ``frane`` 0.1.0: the same threshold
    sequence, edge weights, degree rule and heuristic (its ``metric="correlation"`` is
    ``similarity="correlation"`` here). PageRank is the stationary distribution of the
    random surfer that follows an edge with probability proportional to its weight and
    otherwise (and always from an isolated node) jumps to a uniformly chosen feature, as in
    ``networkx.pagerank``. It is computed exactly, as the solution of PageRank's linear
    system, by conjugate gradients on its symmetrised form (the graph is undirected),
    started from the previous graph's solution: a few dozen sparse products per graph
    where power iteration needs ~170. The reference's unnormalised power iteration (which
    drops an isolated node's mass instead of spreading it) gives the same scores up to
    one factor, hence the same ranking and the same RQH.

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.
    similarity : str, default="abs_correlation"
        How features are compared. ``"abs_correlation"``: ``d = 1 - |r|`` with ``r``
        Pearson's correlation (strong negative correlation counts as similar);
        ``"correlation"``: ``d = 1 - r`` (as the reference); ``"euclidean"``,
        ``"cityblock"``, ``"chebyshev"``, ``"canberra"``: that distance between the
        scaled feature vectors (the paper's distance-based similarities).
    feature_scaling : {"minmax", "norm"}, default="minmax"
        Scaling of the features before a distance-based similarity: ``"minmax"`` maps
        each to [0, 1] (invariant to positive affine rescaling of a feature); ``"norm"``
        divides each by its own distance to 0 under the chosen metric, as the reference
        does. Unused by the correlations, which are scale-free.
    thresholds : str, default="geometric"
        Threshold progression on the dissimilarities, from the smallest positive one:
        ``"geometric"`` (Algorithm 1) or ``"linear"`` to the largest; ``"linear_mean"`` /
        ``"linear_median"`` to their mean / median (sparser graphs);
        ``"quantile"``: the ``i / n_thresholds`` quantiles, ``i = 1..n_thresholds``.
    n_thresholds : int, default=100
        Number of thresholds ``I`` tried (the paper's value).
    min_edges : float, default=1.0
        Smallest average degree ``2|E| / n`` of a graph that is scored (the paper's
        ``ē = 1``, counted as the reference counts it).
    damping : float, default=0.85
        PageRank's damping factor (probability of following an edge).

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        PageRank of each feature in the chosen graph (they sum to 1 over the
        non-constant features); constant features score 0. When no graph reaches
        ``min_edges`` every non-constant feature scores ``1 / n`` (the PageRank of a
        graph without edges, and the reference's all-equal fallback) and a warning says so.
    ranking_ : ndarray of shape (n_features,)
        Feature indices, best first.
    graph_ : scipy.sparse.csr_matrix of shape (n_features, n_features)
        Symmetric weighted adjacency matrix of the chosen graph (no edges on fallback;
        constant features are isolated).
    threshold_ : float
        Dissimilarity threshold of the chosen graph (NaN on fallback).
    thresholds_ : ndarray of shape (n_thresholds_tried,)
        The thresholds tried, ascending (empty when no two features differ).
    average_degrees_ : ndarray of shape (n_thresholds_tried,)
        Average degree ``2|E| / n`` of each threshold's graph.
    rqh_ : ndarray of shape (n_thresholds_tried,)
        RQH of each threshold's ranking; NaN where the graph was below ``min_edges``.

    See Also
    --------
    pagerank : the PageRank solver used here.
    ranking_quality : the RQH heuristic.

    Notes
    -----
    Constant features are set aside before the graph is built (the reference replaces
    them by random noise); they score 0. Dissimilarities below ``1e-12 * d_max`` (e.g.
    duplicate features, whose correlation may round to just below 1) count as 0, so
    rounding cannot create a spurious smallest positive dissimilarity; a pair within
    ``1e-9 * d_max`` of a threshold counts as under it (thresholds are computed from the
    pairs: a quantile is one of them). PageRank values closer than ``1e-9`` times the
    largest are made equal (the tie rule of every ranker, :mod:`rankers.ties`), so that
    features in symmetric positions (duplicates) tie exactly and are ordered by index. The mean and
    median of ``"linear_mean"`` / ``"linear_median"`` are over the pairs of distinct
    features (the reference includes the zero diagonal). Memory grows as ``n²``: about
    112 bytes per pair of features at the peak (2.8 GB for 7,129 features, 22 GB for
    20,000); the ranker estimates it first and raises
    :class:`~rankers.exceptions.NotEnoughMemoryError` when the machine lacks it (see
    :func:`rankers.memory.check_memory`).

    References
    ----------
    .. [1] U. Primožič, B. Škrlj, S. Džeroski and M. Petković, "Unsupervised Feature
       Ranking via Attribute Networks" (Algorithm 1); reference implementation: PyPI
       ``frane`` 0.1.0.

    Examples
    --------
    >>> import numpy as np
    >>> from rankers.unsupervised.frane import FRANeRanker
    >>> rng = np.random.default_rng(0)
    >>> hub = rng.normal(size=50)
    >>> X = np.column_stack([hub + 0.5 * rng.normal(size=50) for _ in range(3)] + [hub])
    >>> int(FRANeRanker().fit(X).ranking_[0])
    3
    """

    name = "frane"
    target_kind = "unsupervised"
    accepts_sparse = False
    deterministic = True
    scale_invariant = True
    reference: ClassVar[str] = (
        "Primožič, Škrlj, Džeroski & Petković, Unsupervised Feature Ranking via Attribute "
        "Networks (FRANe)"
    )
    _constant_score: ClassVar[float] = 0.0
    _contract_test_params: ClassVar[dict] = {"n_thresholds": 20}

    _parameter_constraints: ClassVar[dict] = {
        **BaseRanker._parameter_constraints,
        "similarity": [StrOptions({"abs_correlation", "correlation", *_DISTANCES})],
        "feature_scaling": [StrOptions({"minmax", "norm"})],
        "thresholds": [
            StrOptions({"geometric", "linear", "linear_mean", "linear_median", "quantile"})
        ],
        "n_thresholds": [Interval(Integral, 1, None, closed="left")],
        "min_edges": [Interval(Real, 0, None, closed="left")],
        "damping": [Interval(Real, 0, 1, closed="neither")],
    }

    def __init__(
        self,
        k=None,
        similarity: str = "abs_correlation",
        feature_scaling: str = "minmax",
        thresholds: str = "geometric",
        n_thresholds: int = 100,
        min_edges: float = 1.0,
        damping: float = 0.85,
    ):
        self.k = k
        self.similarity = similarity
        self.feature_scaling = feature_scaling
        self.thresholds = thresholds
        self.n_thresholds = n_thresholds
        self.min_edges = min_edges
        self.damping = damping

    def _score(self, X, y, context):
        m, n = X.shape
        pairs = n * (n - 1) / 2
        # the sparser progressions keep about half the pairs as edges (measured: the
        # mean of 1 - |r| lies below its median on typical data); checked exactly below
        guess = pairs / 2 if self.thresholds in ("linear_mean", "linear_median") else pairs
        self._check_memory(m, n, guess)
        d = _dissimilarities(X, self.similarity, self.feature_scaling)  # condensed, j < k
        d_max = float(d.max()) if d.size else 0.0
        d[d <= 1e-12 * d_max] = 0.0
        thresholds = self._threshold_sequence(d, d_max)
        if thresholds.size:
            self._check_memory(m, n, np.count_nonzero((d < d_max) & (d <= thresholds[-1])))
        edges = _EdgeList(d, d_max, thresholds, n)
        del d
        degrees = 2.0 * edges.counts / n
        rqh = np.full(thresholds.size, np.nan)
        start = None
        solved: dict[int, np.ndarray] = {}
        for t in np.flatnonzero(degrees >= self.min_edges):
            size = int(edges.counts[t])
            if size not in solved:  # thresholds with no pair between them: the same graph
                solved[size], start = edges.pagerank(size, self.damping, start)
            rqh[t] = ranking_quality(solved[size])
        # the first threshold whose RQH ties with the largest: graphs that differ only in
        # a component that holds neither of the scores RQH reads have equal RQH in exact
        # arithmetic, and only a tolerance keeps rounding from choosing between them
        best = first_max(rqh, _RQH_RTOL)

        self.thresholds_ = thresholds
        self.average_degrees_ = degrees
        self.rqh_ = rqh
        n_all = self.constant_features_.size
        if best < 0:
            if n > 1:
                warnings.warn(
                    f"no threshold gives a graph with average degree >= min_edges="
                    f"{self.min_edges} (largest: {degrees.max(initial=0.0):.3g}); all "
                    "features score 1/n. Lower min_edges, or check that the features differ",
                    UserWarning,
                    stacklevel=3,
                )
            self.threshold_ = float("nan")
            self.graph_ = sp.csr_matrix((n_all, n_all))
            return np.full(n, 1.0 / n)
        self.threshold_ = float(thresholds[best])
        self.graph_ = edges.adjacency(
            int(edges.counts[best]), np.flatnonzero(~self.constant_features_), n_all
        )
        return solved[int(edges.counts[best])]

    def _check_memory(self, m: int, n: int, n_edges: float) -> None:
        """Stop before the similarities or the graphs outgrow the memory available."""
        check_memory(
            _peak_bytes(m, n, self.similarity, n_edges),
            f"FRANe's feature graphs over {n} features ({n * (n - 1) / 2:.3g} feature pairs)",
            "rank fewer features (memory grows with their square: e.g. keep the most "
            "variable ones, rankers.get('variance')), or thresholds='linear_median' "
            "(sparser graphs, about half the memory)",
        )

    def _threshold_sequence(self, d: np.ndarray, d_max: float) -> np.ndarray:
        positive = d[d > 0.0]
        if positive.size == 0:
            return np.empty(0)
        lo, num = float(positive.min()), int(self.n_thresholds)
        kind = self.thresholds
        if kind == "geometric":
            return np.geomspace(lo, d_max, num)
        if kind == "linear":
            return np.linspace(lo, d_max, num)
        if kind == "linear_mean":
            return np.linspace(lo, max(lo, float(d.mean())), num)
        if kind == "linear_median":
            return np.linspace(lo, max(lo, float(np.median(d))), num)
        return np.quantile(d, np.arange(1, num + 1) / num)


def pagerank(A, damping: float = 0.85, *, start=None, full_output: bool = False):
    """PageRank of an undirected weighted graph, solved exactly by conjugate gradients.

    The stationary distribution ``x`` of the random surfer that, with probability
    ``damping``, moves along an edge chosen in proportion to its weight and otherwise
    jumps to a uniformly chosen node; from an isolated (dangling) node it always jumps.
    This is ``networkx.pagerank(G, alpha=damping)`` with its defaults. ``x`` is
    proportional to ``(I - damping P)^{-1} 1`` with ``P = A D^{-1}`` (``D`` the weighted
    degrees); with ``x = D^{1/2} y`` the system becomes the symmetric positive definite
    ``(I - damping D^{-1/2} A D^{-1/2}) y = D^{-1/2} 1`` (eigenvalues in
    ``[1 - damping, 1 + damping]``), which conjugate gradients solve in few steps.

    Parameters
    ----------
    A : sparse matrix or ndarray of shape (n, n)
        Symmetric non-negative weights, zero diagonal.
    damping : float, default=0.85
        Probability of following an edge, in (0, 1).
    start : ndarray of shape (n,), default=None
        Starting point of the symmetrised solve (the ``full_output`` of a similar graph).
    full_output : bool, default=False
        Also return the symmetrised solution, to start a later solve from.

    Returns
    -------
    x : ndarray of shape (n,)
        PageRank values, positive, summing to 1.
    y : ndarray of shape (n,)
        Only when ``full_output``: the solution of the symmetrised system.
    """
    deg = np.asarray(A.sum(axis=1), dtype=np.float64).ravel()
    return _solve_pagerank(A.__matmul__, deg, damping, start, full_output)


def _solve_pagerank(product, deg, damping, start=None, full_output=False):
    """PageRank from the weighted degrees and the product ``v -> A v`` (see :func:`pagerank`)."""
    root = np.sqrt(np.where(deg > 0.0, deg, 1.0))
    s = 1.0 / root

    def op(v):
        return v - damping * s * product(s * v)

    b = s.copy()
    y = b.copy() if start is None else np.array(start, dtype=np.float64)
    r = b - op(y)
    p = r.copy()
    rr = r @ r
    goal = (_CG_RTOL * np.linalg.norm(b)) ** 2
    for _ in range(max(1000, 10 * b.size)):
        if rr <= goal:
            break
        q = op(p)
        alpha = rr / (p @ q)
        y += alpha * p
        r -= alpha * q
        rr, rr_old = r @ r, rr
        p = r + (rr / rr_old) * p
    else:
        warnings.warn(
            "PageRank's solver did not reach its tolerance", ConvergenceWarning, stacklevel=3
        )
    x = root * y
    x /= x.sum()
    return (x, y) if full_output else x


def ranking_quality(scores: np.ndarray) -> float:
    """FRANe's ranking-quality heuristic: the spread of a score vector.

    The second largest score over the second smallest one (the medians of the three
    largest and of the three smallest), or the largest over the smallest when there are
    fewer than three scores. Scores are clipped at 1e-10 from below, as in the reference.
    """
    s = np.sort(np.maximum(np.asarray(scores, dtype=np.float64), 1e-10))[::-1]
    if s.size <= 2:
        return float(s[0] / s[-1])
    return float(s[1] / s[-2])


def _peak_bytes(m: int, n: int, similarity: str, n_edges: float) -> float:
    """Peak bytes of :meth:`FRANeRanker._score` on ``m x n`` data whose graphs use ``n_edges``
    of the ``n(n-1)/2`` pairs.

    Measured with tracemalloc (``benchmarks/memory/bench_memory.py``): the correlations hold
    the Gram matrix and two condensed copies (24 bytes a pair; the distances 8); the
    edge lists hold the dissimilarities and, per edge, its endpoints, weight, sort keys
    and the CSR arrays of the largest graph (8 bytes a pair + 104 an edge); filing the
    pairs under their thresholds takes 19 bytes a pair. Copies of the data: 16 m n.
    """
    pairs = n * (n - 1) / 2
    per_pair = 24.0 if similarity in ("abs_correlation", "correlation") else 8.0
    return max(per_pair * pairs, 19.0 * pairs, 8.0 * pairs + 104.0 * n_edges) + 16.0 * m * n


def _dissimilarities(X: np.ndarray, similarity: str, scaling: str) -> np.ndarray:
    """Condensed dissimilarities between the columns of ``X`` (pairs j < k, row-major)."""
    if similarity in ("abs_correlation", "correlation"):
        Z = X - X.mean(axis=0)
        Z /= column_norms(Z)
        # the upper triangle only: a matrix product need not be exactly symmetric
        r = np.clip(squareform(Z.T @ Z, checks=False), -1.0, 1.0)
        return 1.0 - (np.abs(r) if similarity == "abs_correlation" else r)
    F = X.T
    if scaling == "minmax":
        F = minmax_scale(X).T
    else:  # the reference's normalize(x, metric): x / metric(x, 0)
        norm = {
            "euclidean": lambda V: np.linalg.norm(V, axis=1),
            "cityblock": lambda V: np.abs(V).sum(axis=1),
            "chebyshev": lambda V: np.abs(V).max(axis=1),
            "canberra": lambda V: np.count_nonzero(V, axis=1).astype(np.float64),
        }[similarity](F)
        F = F / np.where((norm > 0.0) & np.isfinite(norm), norm, 1.0)[:, None]
    return pdist(F, similarity)


class _EdgeList:
    """The edges of all thresholded graphs, ordered so that every graph is a prefix.

    Graph ``t`` holds the pairs ``j < k`` with ``d_jk <= thresholds[t]`` and a positive
    weight ``d_max - d_jk``. Each pair is filed under the first graph that holds it (one
    ``searchsorted`` against the thresholds, no sort of the dissimilarities) and the
    pairs are grouped by that graph, so graph ``t`` is the first ``counts[t]`` edges. The
    largest graph is also kept as a symmetric CSR matrix whose rows list their entries in
    that order: every smaller graph's rows are prefixes of its rows, and its CSR matrix is
    cut out with one gather, without sorting anything per graph.
    """

    def __init__(self, d: np.ndarray, d_max: float, thresholds: np.ndarray, n: int):
        # a pair within the tie tolerance of a threshold is under it: thresholds are
        # computed from the pairs (a quantile is one of them), so a pair equal to one in
        # exact arithmetic must not fall on either side by rounding
        tol = TIE_RTOL * d_max
        first = np.searchsorted(thresholds, d - tol, side="left")
        usable = np.flatnonzero((d < d_max - tol) & (first < thresholds.size))
        first = first[usable]
        pair = usable[np.argsort(_radix_key(first, thresholds.size), kind="stable")]
        self.rows, self.cols = _condensed_pairs(n, pair)
        self.weights = d_max - d[pair]
        self.counts = np.cumsum(np.bincount(first, minlength=thresholds.size))
        self.n = n
        # entry 2e is edge e seen from its row, entry 2e + 1 from its column; a stable
        # sort by row keeps each row's entries in edge order
        seen_from = np.column_stack([self.rows, self.cols]).ravel()
        by_row = np.argsort(_radix_key(seen_from, n), kind="stable")
        self._indices = np.column_stack([self.cols, self.rows]).ravel()[by_row]
        self._data = np.repeat(self.weights, 2)[by_row]
        self._starts = np.concatenate([[0], np.cumsum(np.bincount(seen_from, minlength=n))])

    def pagerank(self, size: int, damping: float, start=None):
        """PageRank (and the symmetrised solution) of the graph of the first ``size`` edges."""
        rows, cols, w = self.rows[:size], self.cols[:size], self.weights[:size]
        per_row = np.bincount(rows, minlength=self.n) + np.bincount(cols, minlength=self.n)
        indptr = np.concatenate([[0], np.cumsum(per_row)])
        take = np.arange(indptr[-1]) + np.repeat(self._starts[:-1] - indptr[:-1], per_row)
        A = sp.csr_matrix((self._data[take], self._indices[take], indptr), shape=(self.n, self.n))
        deg = np.bincount(rows, w, self.n) + np.bincount(cols, w, self.n)
        return _solve_pagerank(A.__matmul__, deg, damping, start, full_output=True)

    def adjacency(self, size: int, labels: np.ndarray, n_all: int) -> sp.csr_matrix:
        """Symmetric adjacency matrix of a graph, its nodes renamed by ``labels``."""
        rows, cols = labels[self.rows[:size]], labels[self.cols[:size]]
        w = self.weights[:size]
        return sp.csr_matrix(
            (np.concatenate([w, w]), (np.concatenate([rows, cols]), np.concatenate([cols, rows]))),
            shape=(n_all, n_all),
        )


def _radix_key(values: np.ndarray, bound: int) -> np.ndarray:
    """``values`` (all < ``bound``) as uint16 when they fit: numpy radix-sorts those."""
    return values.astype(np.uint16) if bound <= 2**16 else values


def _condensed_pairs(n: int, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row and column (j < k) of condensed (``pdist``-order) pair indices."""
    # row j holds the n - 1 - j pairs (j, j+1), ..., (j, n-1), from position start[j]
    counts = np.arange(n - 1, -1, -1, dtype=np.int64)
    start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    row_of = np.repeat(np.arange(n, dtype=np.int32), counts)
    rows = row_of[index]
    cols = index - start[rows] + rows + 1
    return rows, cols.astype(np.int32)
