"""FRANe: feature ranking by PageRank on a thresholded feature-similarity network."""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from rankers.base import BaseRanker
from rankers.memory import check_memory
from rankers.ties import TIE_RTOL, first_max
from rankers.unsupervised._frane_graph import (
    CHUNK,
    TILE,
    FiledPairs,
    dissimilarities,
    rqh_upper_bound,
    second_largest,
)
from rankers.utils.param_validation import Interval, StrOptions

__all__ = ["FRANeRanker", "pagerank", "ranking_quality"]

_DISTANCES = ("euclidean", "cityblock", "chebyshev", "canberra")
# relative residual at which the PageRank linear system counts as solved, and the
# relative gap below which two RQH values count as equal (well above the solver's error,
# about 1e-12 relative on the scores)
_CG_RTOL = 1e-13
_RQH_RTOL = 1e-9
# pairs scanned at once where a mask of all of them would be n² bytes
_ZERO_CHUNK = 2**22
# edges gathered at least at once (a pass over the filed pairs each time)
_EDGE_BATCH = 2**16
# bytes per edge while PageRank runs (_frane_graph.EdgeSet): column index, weight, first
# graph holding it, and the weights of the graph being solved
_EDGE_BYTES = 21.0
# bytes per pair that the first estimate keeps for the cut of the pairs (the columns, 4
# bytes, of at most half of them, written while all are held) and for the edges gathered
_CUT_BYTES = 2.0
# bytes per pair of a chunk's temporaries when pairs are filed, dropped or gathered
_CHUNK_BYTES = 64.0


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

    Only the graphs that can win are built. The pairs' dissimilarities are computed in
    tiles (one matrix product per block of features) and each pair is filed once under
    the first threshold that holds it, keeping per threshold its edge count and the
    nodes' weighted degrees. From the degrees alone an upper bound on a graph's RQH
    follows (:func:`~rankers.unsupervised._frane_graph.rqh_upper_bound`); graphs are
    scored from the sparsest up, and one whose bound lies below the best RQH found so far
    (by more than the tie tolerance) is skipped: it could neither be the largest nor tie
    with it, so the choice, the scores and the ranking are those of scoring every graph.
    The dense graphs, whose PageRank is nearly uniform, are ruled out this way without
    ever being built. A graph that is built is dropped as soon as its solve proves its RQH
    below the best (from the iterate and its residual, each score is known within a bound:
    ``_rqh_bound``), so on correlated data, where the degrees alone rule out little,
    the graphs that cannot win take a few products each instead of a full solve.

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
        RQH of each threshold's ranking; NaN where the graph was below ``min_edges`` or
        ruled out by a bound (``rqh_bounds_`` below the largest RQH).
    rqh_bounds_ : ndarray of shape (n_thresholds_tried,)
        The upper bound on each graph's RQH that decided whether to score it: from its
        degrees, or, where that did not rule it out and its solve did, the bound proven
        while solving (NaN where no bound was needed: below ``min_edges``, or the same
        edges as a scored graph).

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
    features (the reference includes the zero diagonal). Memory grows as ``n²``, but only
    by the pairs' dissimilarities (8 bytes a pair, 1 more for the threshold each is
    filed under; ``linear_median`` and ``quantile`` copy them once more to sort): 1.8 GB
    for 20,000 features, plus a few hundred MB of work space. The edges of the graphs
    scored take 21 bytes each; once the best RQH so far rules out the denser graphs,
    the pairs no graph still to be scored holds are dropped, so on correlated data, whose
    dense graphs must be scored (tens of millions of edges), those edges replace the
    pairs instead of adding to them: at 200 x 20,000 the fit's peak is about the same on
    independent features and on features driven by 5 latent factors
    (``benchmarks/results/frane_memory.md``). The ranker estimates the peak first and
    raises :class:`~rankers.exceptions.NotEnoughMemoryError` when the machine lacks it
    (see :func:`rankers.memory.check_memory`) before computing anything: that first
    estimate keeps room for cutting the pairs and for the edges gathered beside them, and
    the fit gathers fewer graphs at once where more would not fit in it, so a fit that
    would not fit is refused at once rather than after the similarities (only a graph
    whose edges alone outgrow that room needs more; each gathering is checked again).

    **Where it works.** On the planted-structure atlas (every structure; 200 samples, 200 and
    2,000 features, 0.5-50 % of them informative, 2 seeds; the mean share of the planted
    features in its top k, against a random ranking's), it recovers part of manifold, shift,
    clusters, modules, imbalanced; it fails on xor (within 0.1 of chance). The shares are in
    ``benchmarks/results/atlas_grid/summary.md``; :doc:`/guide/which-ranker` has the tables and
    heat maps.

    **Scale.** Time and memory grow faster than the features (measured at 200 samples
    from 500 to 20,000 features: the exponents and the cells are frane's rows of
    ``benchmarks/results/width/bench_width.md``; on correlated features more graphs are
    scored, ``benchmarks/results/frane_memory.md``) because the method requires it:
    its graphs are over all n(n - 1)/2 feature pairs, whose dissimilarities are computed
    and sorted once. The samples enter only the correlations (linear). Bounded by the
    memory estimate above, which refuses a width the machine cannot hold, and by
    ``n_thresholds``, the number of graphs scored.

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
    feature_scale_invariant = True  # feature_scaling (min-max or norm) is per feature
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
        fixed = self._fixed_bytes(m, n)
        self._check_memory(fixed, n)
        d = dissimilarities(X, self.similarity, self.feature_scaling)  # condensed, j < k
        d_max = max(float(d.max()), 0.0) if d.size else 0.0  # see dissimilarities
        lo = _zero_tiny(d, 1e-12 * d_max)
        thresholds = self._threshold_sequence(d, d_max, lo)
        # a pair within the tie tolerance of a threshold is under it: thresholds are
        # computed from the pairs (a quantile is one of them), so a pair equal to one in
        # exact arithmetic must not fall on either side by rounding
        filed = FiledPairs(d, d_max, thresholds, n, TIE_RTOL * d_max)
        del d  # filed holds the pairs from now on (and drops those no graph needs)
        degrees = 2.0 * filed.counts / n
        rqh = np.full(thresholds.size, np.nan)
        bounds = np.full(thresholds.size, np.nan)
        start, edges, best = None, None, -np.inf
        solved: dict[int, np.ndarray] = {}
        candidates = np.flatnonzero(degrees >= self.min_edges)
        for i, t in enumerate(candidates):
            size = int(filed.counts[t])
            if size in solved:  # thresholds with no pair between them: the same graph
                rqh[t] = ranking_quality(solved[size])
                continue
            bounds[t] = rqh_upper_bound(filed.degrees[:, t], self.damping)
            # a graph whose RQH is provably below the best so far (by more than the tie
            # tolerance) can be neither the largest nor tied with it: not built at all
            if bounds[t] < best * (1.0 - 4.0 * _RQH_RTOL):
                continue
            if edges is None or t > edges.last:
                edges = None  # release the smaller edge set before gathering anew
                # the densest graph that can still be scored: the pairs no graph up to
                # it holds are dropped, once that at least halves the pairs held
                needed = self._last_needed(filed, candidates[i:], best)
                keep = filed.counts[needed] <= filed.size // 2
                kept = filed.counts[needed] if keep else None
                last = self._last_graph(filed, candidates[i:], max(best, 0.0))
                # the first estimate holds: fewer graphs are gathered at once where all of
                # them would not fit in it; only a graph whose edges alone outgrow the room it
                # kept for them needs more (see _peak_bytes), so each gathering is checked
                ahead = candidates[i:][candidates[i:] <= last][::-1].tolist()
                needs = [_gather_bytes(m, n, filed, kept, filed.counts[g], self.n_thresholds)
                         for g in ahead]  # fmt: skip
                fits = [g for g, need in zip(ahead, needs, strict=True) if need <= fixed]
                last = fits[0] if fits else ahead[0]
                self._check_memory(needs[ahead.index(last)], n)
                if keep:
                    filed.shrink(needed)
                edges = filed.edges(last)
            product, deg = edges.matrix(t)
            below = best * (1.0 - 4.0 * _RQH_RTOL)
            x, y, bound = _solve_pagerank(product, deg, self.damping, start, True, below)
            del product
            if x is None:  # proven below the best while solving: not the best, nor tied
                bounds[t] = bound
                start = y
                continue
            solved[size], start = x, y
            rqh[t] = ranking_quality(solved[size])
            best = max(best, rqh[t])
        # the first threshold whose RQH ties with the largest: graphs that differ only in
        # a component that holds neither of the scores RQH reads have equal RQH in exact
        # arithmetic, and only a tolerance keeps rounding from choosing between them
        best = first_max(rqh, _RQH_RTOL)

        self.thresholds_ = thresholds
        self.average_degrees_ = degrees
        self.rqh_ = rqh
        self.rqh_bounds_ = bounds
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
        size = int(filed.counts[best])
        self.graph_ = edges.adjacency(best, np.flatnonzero(~self.constant_features_), n_all)
        return solved[size]

    def _last_needed(self, filed: FiledPairs, candidates: np.ndarray, best: float) -> int:
        """The last graph whose RQH bound is not below ``best``: no later one is scored."""
        for t in candidates[::-1]:
            if rqh_upper_bound(filed.degrees[:, t], self.damping) >= best * (1.0 - 4.0 * _RQH_RTOL):
                return int(t)
        return int(candidates[0])

    def _last_graph(self, filed: FiledPairs, candidates: np.ndarray, best: float) -> int:
        """Last graph whose edges to gather: those still possible, within a growing budget.

        Gathering is a pass over the filed pairs, so the graphs that may follow are taken
        along while their edges stay within twice the first one's (or 65,536 edges).
        """
        first = int(candidates[0])
        budget = max(2 * int(filed.counts[first]), _EDGE_BATCH)
        last = first
        for t in candidates[1:]:
            if filed.counts[t] > budget:
                break
            bound = rqh_upper_bound(filed.degrees[:, t], self.damping)
            if bound >= best * (1.0 - 4.0 * _RQH_RTOL):
                last = int(t)
        return last

    def _fixed_bytes(self, m: int, n: int) -> float:
        return _peak_bytes(m, n, self.similarity, 0.0, self.thresholds, self.n_thresholds)

    def _check_memory(self, n_bytes: float, n: int) -> None:
        """Stop before the similarities or the graphs outgrow the memory available."""
        check_memory(
            n_bytes,
            f"FRANe's feature graphs over {n} features ({n * (n - 1) / 2:.3g} feature pairs)",
            "rank fewer features (memory grows with their square: e.g. keep the most "
            "variable ones, rankers.get('variance')), or thresholds='linear_median' "
            "(sparser graphs, about half the memory)",
        )

    def _threshold_sequence(self, d: np.ndarray, d_max: float, lo: float | None) -> np.ndarray:
        if lo is None:
            return np.empty(0)
        num = int(self.n_thresholds)
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


def _solve_pagerank(product, deg, damping, start=None, full_output=False, below=None):
    """PageRank from the weighted degrees and the product ``v -> A v`` (see :func:`pagerank`).

    With ``below``, the solve stops as soon as the RQH of the solution is proven to lie
    below it (``_rqh_bound``), and returns ``None`` in place of the scores (with the
    bound, and the iterate as ``y``).
    """
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
        if below is not None and below > 1.0 and _rqh_bound(y, r, root, damping) < below:
            # confirmed on the residual computed anew (the recurrence's drifts)
            bound = _rqh_bound(y, b - op(y), root, damping)
            if bound < below:
                return (None, y, bound) if full_output else None
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
    if not full_output:
        return x
    return (x, y) if below is None else (x, y, np.nan)


def _rqh_bound(y, residual, root, damping) -> float:
    """An upper bound on the RQH of the exact solution, from an iterate and its residual.

    In ``r = y / root`` (``x = g r`` the unnormalised scores, ``g = root²`` the degrees, 1
    for an isolated node) the system is ``M r = 1`` with ``M = D - damping A``, whose row
    sums are at least ``(1 - damping) g``. ``M`` is a nonsingular M-matrix
    (``M^{-1} >= 0``), so with ``rho = root * residual`` (the residual of ``M r = 1``) the
    error of ``r`` is at most ``mu = max |rho| / ((1 - damping) g)`` in every component;
    row ``i`` of ``M`` then puts score ``i``'s error within ``|rho_i| + damping g_i mu``,
    and the l1 norm of all the scores' errors is at most ``sum |rho| / (1 - damping)``
    (the columns of ``damping A D^{-1}`` sum to at most ``damping``). Every score is at
    least 1. The second largest score is at most the second largest upper end, the second
    smallest at least the second smallest lower end (both normalised, and clipped as
    :func:`ranking_quality` clips).
    """
    if y.size < 3:
        return float("inf")
    rho = np.abs(residual) * root  # the residual of M r = 1
    g = root * root
    mu = float(np.max(rho / g)) / (1.0 - damping) * (1.0 + 1e-9)
    l1 = float(rho.sum()) / (1.0 - damping) * (1.0 + 1e-9)
    x = root * y
    # score i's error: g_i e_i = rho_i + damping sum_j A_ij e_j, at most rho_i + damping g_i mu
    # (its row of M r = 1); in l1, the errors of all scores are at most l1 together
    spread = np.minimum((rho + damping * g * mu) * (1.0 + 1e-9), l1)
    hi, lo = x + spread, np.maximum(x - spread, 1.0)  # every score is at least 1
    total_lo = lo.sum()
    top = second_largest(hi) / total_lo
    low = -second_largest(-lo) / hi.sum()
    return float(max(top, 1e-10) / max(low, 1e-10)) * (1.0 + 1e-9)


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


def _zero_tiny(d: np.ndarray, below: float) -> float | None:
    """Set the entries of ``d`` at or below ``below`` (``>= 0``) to 0, in place, and return
    the smallest positive entry left (None if there is none): one pass over ``d`` in
    chunks, without an n² mask. A chunk whose minimum is above ``below`` has nothing to set
    and that minimum is its smallest positive entry (nearly every chunk), so only the
    other chunks are masked."""
    best = np.inf
    for lo in range(0, d.size, _ZERO_CHUNK):
        part = d[lo : lo + _ZERO_CHUNK]
        low = float(part.min())
        if low > below:
            best = min(best, low)
            continue
        part[part <= below] = 0.0
        positive = part > 0.0
        if positive.any():
            best = min(best, float(part[positive].min()))
    return None if best == np.inf else best


def _peak_bytes(
    m: int,
    n: int,
    similarity: str,
    n_edges: float,
    thresholds: str = "geometric",
    n_thresholds: int = 100,
) -> float:
    """Peak bytes of :meth:`FRANeRanker._score` on ``m x n`` data when the graphs whose
    PageRank is computed use at most ``n_edges`` of the ``n(n-1)/2`` pairs at once.

    The condensed dissimilarities take 8 bytes a pair and the index of the first graph
    holding each pair 1 (2 beyond 254 thresholds); on top of them comes the largest of:
    the correlation tile (at most 2^23 entries, twice), the filing of a chunk of pairs
    (``CHUNK`` at most, ``_CHUNK_BYTES`` each) with the nodes' degrees per threshold
    (4 x 8 n T), a copy of the pairs for the median or the quantiles, and the graphs:
    the larger of ``_CUT_BYTES`` a pair and the edges gathered for PageRank
    (``_EDGE_BYTES`` each), with a chunk's temporaries. Copies of the data: 16 m n.

    With ``n_edges = 0`` this is the fit's first estimate, made before anything is
    computed, and the one that holds: the room of ``_CUT_BYTES`` a pair covers cutting
    the pairs to those still needed (the columns of at most half of them, 4 bytes each,
    while all are held) and the edges gathered beside them (``2 / 21`` of the pairs while
    all are held, ``4.5 / 21`` once they are cut to at most half, 13-14 bytes each); the
    fit gathers the edges of one graph at a time where more would not fit in it
    (:func:`_gather_bytes` is its estimate of each gathering). Only a graph with more
    edges than that room needs more, and the fit checks it again before gathering it.
    """
    pairs = n * (n - 1) / 2
    T = int(n_thresholds)
    held = 8.0 * pairs + (1.0 if T < 255 else 2.0) * pairs + 8.0 * (n + 1)  # + row starts
    tile = 16.0 * min(TILE, n * n) if similarity in ("abs_correlation", "correlation") else 0.0
    chunk = _CHUNK_BYTES * min(CHUNK, pairs)
    filing = chunk + 32.0 * n * T
    order = 8.0 * pairs if thresholds in ("linear_median", "quantile") else 0.0
    graphs = 16.0 * n * T + max(_CUT_BYTES * pairs, _EDGE_BYTES * n_edges) + chunk
    return held + max(tile, filing, order, graphs) + 16.0 * m * n


def _gather_bytes(
    m: int, n: int, filed: FiledPairs, kept: float | None, n_edges: float, n_thresholds: int
) -> float:
    """Peak bytes of the next gathering of edges: what ``filed`` holds, cut to ``kept``
    pairs first (None: not cut), and ``n_edges`` edges (``_EDGE_BYTES`` each).

    Cutting the condensed pairs writes the columns of those kept (4 bytes each) while all
    are still held; afterwards each kept pair holds 13 or 14 bytes. A chunk's temporaries
    and the work space of the graphs (16 n T) and copies of the data (16 m n) come on top.
    """
    held = float(filed.nbytes)
    per_pair = filed.d.itemsize + filed.first.itemsize + 4.0
    cut = held if kept is None else held + (4.0 * kept if filed.cols is None else 0.0)
    after = held if kept is None else per_pair * kept + 8.0 * n
    peak = max(cut, after + _EDGE_BYTES * n_edges) + _CHUNK_BYTES * min(CHUNK, filed.size)
    return peak + 16.0 * n * int(n_thresholds) + 16.0 * m * n
