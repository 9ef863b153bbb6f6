"""MCFS: features that best reproduce the data's spectral (multi-cluster) embedding."""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Lars
from sklearn.utils import check_random_state

from rankers.base import BaseRanker
from rankers.preprocessing import column_norms
from rankers.ties import duplicate_columns
from rankers.unsupervised._affinity import (
    METRICS,
    WEIGHT_MODES,
    graph_search_space,
    knn_affinity,
    nontrivial_eigenvectors,
)
from rankers.unsupervised._lars import lar_end_coef
from rankers.utils.param_validation import Interval, StrOptions

__all__ = ["MCFSRanker"]


class MCFSRanker(BaseRanker):
    """Rank features by Multi-Cluster Feature Selection (Cai, Zhang & He 2010).

    1. A symmetric k-nearest-neighbour graph ``W`` links the samples (sparse; by
       default scikit-feature's graph: cosine neighbours, 0-1 weights, k = 5).
    2. Spectral embedding: ``Y`` holds the ``n_clusters`` generalised eigenvectors of
       ``W y = μ D y`` with the largest ``μ`` (the smallest eigenvalues of the
       normalised Laplacian), leaving out the trivial constant one. They are computed
       as ``D^{-1/2} u`` from the normalised affinity ``D^{-1/2} W D^{-1/2}`` with the
       trivial direction ``D^{1/2} 1`` deflated, so a disconnected graph gives a
       well-defined embedding (its component indicators) instead of an arbitrary
       basis of the eigenvalue-1 space.
    3. For each column ``y_k``, least-angle regression of ``y_k`` on the features,
       stopped at ``n_nonzero_coefs`` non-zero coefficients ``a_k`` (the paper's L1
       problem with a cardinality constraint, solved by LARS as in the paper). The
       ``n_clusters`` paths advance together, one pass over ``X`` per step for all of
       them. A path run to its end on features of full column rank ends at the
       least-squares fit, which is then computed directly (one solve instead of
       ``n_features`` LARS steps per eigenvector; same coefficients).
    4. ``MCFS(j) = max_k |a_{k,j}|`` (higher = more relevant).

    **Scale.** Multiplying all of ``X`` by one constant ``c`` leaves the graph, the
    embedding and the ranking unchanged and divides the coefficients by ``c`` (the
    ranker computes on ``X`` rescaled by a power of two and converts ``coef_`` and
    ``scores_`` back), except with ``weight_mode="heat"`` and a fixed ``t``, a width in
    the squared units of ``X``. But the coefficients are in the units of each feature:
    a feature measured in millimetres instead of metres gets a coefficient 1000 times
    smaller, and the neighbours are found with every feature's own units. So the
    ranking depends on the scale of each feature: standardise ``X`` first (e.g.
    ``sklearn.preprocessing.StandardScaler``) when features are measured in different
    units.

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.
    n_clusters : int, default=5
        Number of eigenvectors (the paper's K, the number of clusters). scikit-feature's
        default is 5; the benchmark protocol sets it to the number of classes. Clipped
        to ``n_samples - 1`` (stored in ``n_clusters_``).
    n_nonzero_coefs : int or None, default=None
        Cardinality ``d`` at which each LARS path stops (at most
        ``min(n_features, n_samples - 1)``). None runs every path to its end, which is
        what scikit-feature's default ``d = n_features`` means; the paper sets ``d`` to
        the number of features to select, so use that when only the top ``d`` matter.
        Features outside every active set score 0 and tie.
    solver : {"auto", "lars"}, default="auto"
        ``"auto"``: a path run to its end (``n_nonzero_coefs`` None or ``>=
        n_features``, fewer features than samples, full column rank) is computed
        directly as its end point, the least-squares fit; every other case runs our
        batched LAR, scikit-learn's ``Lars`` steps with the paths in lockstep.
        ``"lars"``: scikit-learn's ``Lars``, one path per eigenvector, as
        scikit-feature does: its numbers, kept as the reference (see Notes for how
        the three differ in floating point).
    n_neighbors : int, default=5
        Neighbours per sample in the kNN graph (clipped to ``n_samples - 1``).
    metric : {"cosine", "euclidean"}, default="cosine"
        Distance that picks the neighbours (scikit-feature's default is cosine).
    weight_mode : {"binary", "heat", "cosine"}, default="binary"
        Edge weights: 1, a heat kernel ``exp(-||x_i - x_j||² / t)``, or the cosine
        similarity (scikit-feature's default is binary).
    t : "auto" or float > 0, default="auto"
        Heat-kernel width; ``"auto"`` = mean squared edge length. Only used by
        ``weight_mode="heat"``.
    random_state : int, RandomState instance or None, default=None
        Seeds the start vector of the sparse eigensolver (ARPACK).
    knn_components : int or None, default=None
        Where the neighbours are searched. None: among all features (the exact graph)
        up to :data:`rankers.neighbors.EXACT_MAX_SAMPLES` (10,000) samples, above it
        among the first 50 principal components, said in a ``UserWarning`` (the exact
        search costs samples² x features); an int: among the first ``knn_components``
        principal components (of the unit rows for ``metric="cosine"``), an
        approximate graph whose edge weights are still computed from the data (see
        :class:`~rankers.unsupervised.laplacian.LaplacianRanker`).

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        ``max_k |a_{k,j}|``; 0 for constant features.
    ranking_ : ndarray of shape (n_features,)
        Feature indices, best first.
    coef_ : ndarray of shape (n_features, n_clusters_)
        The LARS coefficients ``a_k`` (one column per eigenvector); rows of constant
        features are 0.
    eigenvalues_ : ndarray of shape (n_clusters_,)
        Eigenvalues ``μ`` of the embedding (descending; ``1 - μ`` are the normalised
        Laplacian's).
    n_clusters_ : int
        Eigenvectors actually used.
    n_neighbors_ : int
        Neighbours per sample actually used.
    knn_components_ : int or None
        The principal components the neighbours were searched among (None: the exact
        search).

    See Also
    --------
    rankers.unsupervised.ndfs.NDFSRanker : learns the cluster indicators and the
        sparse regression jointly (L2,1 penalty).
    rankers.unsupervised.laplacian.LaplacianRanker : scores each feature on its own.

    Notes
    -----
    Differences from scikit-feature's ``MCFS.mcfs`` (skfeature-chappers 1.2.1), each a
    defect there: it scores ``max_k a_{k,j}`` without the absolute value the paper
    uses; its default graph (``construct_W``) divides the caller's ``X`` by the row
    norms in place, so the regression runs on row-normalised data; its graph has
    self loops; and with a disconnected graph it drops one arbitrary vector of the
    eigenvalue-1 space. With more features than samples its ``d = n_features`` lets
    LARS go on past step ``n_samples - 1``, where the residual is already zero, adding
    degenerate columns at a cost that grows with ``n_features``; this ranker stops
    there. Original scikit-feature ran on scikit-learn < 1.2, where
    ``Lars`` normalised the columns by default; current scikit-learn (and this
    ranker) regress on the columns as given, so the scores depend on feature units.

    In exact arithmetic a LARS path run to its end reaches the least-squares fit.
    scikit-learn's ``Lars`` does not quite: ``n_nonzero_coefs = n_features`` stops
    when the last feature enters (one segment before the end), and its incremental
    Cholesky updates lose accuracy on ill-conditioned features (on digits, the full
    path ends with a residual norm of 131.58 against the least-squares 131.26, and
    coefficients off by up to 0.43 of a largest 2.2). ``solver="auto"`` computes the
    end point by a least-squares solve (SVD, backward stable): the true end of the
    path, and 5-15 times faster. ``solver="lars"`` reproduces scikit-feature's numbers.

    Every other path (``n_nonzero_coefs`` below the number of features, or more
    features than samples) runs, with ``solver="auto"``, a least-angle regression of
    our own (``rankers/unsupervised/_lars.py``) that takes scikit-learn's ``Lars``
    steps in exact arithmetic (pure LAR on centred data; its step lengths; its early
    stop; a coefficient crossing zero flips its sign and costs a step, as there) but
    advances the ``n_clusters`` paths together: each step is one ``n_clusters x
    n_samples`` by ``n_samples x n_features`` product instead of one matrix-vector
    product per path, and the equiangular directions come from incrementally updated
    inverse Cholesky factors. Coefficients agree with ``solver="lars"`` to about
    ``1e-12`` relative (4.8e-13 at 200 x 5,000 with 5 eigenvectors and 199 steps; the
    tests check ``1e-9`` on 51 random cases) and the rankings are equal. Where the two
    choose differently, scikit-learn's choice depends on rounding: an entering feature
    tied with another (within :data:`rankers.ties.TIE_RTOL`) is the lower index here,
    and a path in which a feature stays tied with the active ones after that (an exact
    tie, common when the eigenvectors are cluster indicators: scikit-learn lets it join
    or steps on without it, as rounding falls) is left to scikit-learn;
    a feature in the span of the active ones (Cholesky pivot below ``1e-4`` of its
    norm) is dropped for good, where scikit-learn's pivot test (``< 1e-7``) decides
    by rounding and, when it drops, hands the dropped feature's correlation to
    another (a defect in ``lars_path``). A path with a pivot near ``1e-7`` otherwise
    is left to scikit-learn. Cost: at 200 x 5,000, 5 eigenvectors, about 0.45 CPU s
    against about 1 s for scikit-learn's ``Lars`` (one BLAS thread); half of it is
    the product, which on OpenBLAS costs about as much as the five matrix-vector
    products it replaces (a memory-bound pass over ``X`` either way), the rest numpy
    call overhead of the ~60 small operations per step
    (``benchmarks/results/width/spectral_peers.md``).

    Features that are equal after centring (duplicated columns, or columns a constant
    apart) are one regressor: LARS would give the whole coefficient to one of them,
    chosen by the last bits of its correlations (which differ between machines), so
    each gets the coefficient of the first of its group and they tie, lower index first
    (:func:`rankers.ties.duplicate_columns`).

    **Where it works.** On the planted-structure atlas (every structure; 200 samples, 200 and
    2,000 features, 0.5-50 % of them informative, 2 seeds; the mean share of the planted
    features in its top k, against a random ranking's), it recovers part of modules; it fails on
    manifold, clusters, shift, imbalanced, xor (within 0.1 of chance). The shares are in
    ``benchmarks/results/atlas_grid/summary.md``; :doc:`/guide/which-ranker` has the tables and
    heat maps.

    References
    ----------
    .. [1] D. Cai, C. Zhang and X. He, "Unsupervised Feature Selection for
       Multi-Cluster Data", KDD 2010, 333-342.

    Examples
    --------
    >>> import numpy as np
    >>> from rankers.unsupervised.mcfs import MCFSRanker
    >>> rng = np.random.default_rng(0)
    >>> groups = np.repeat([0.0, 4.0], 20)
    >>> X = np.column_stack([rng.normal(size=40), groups + 0.3 * rng.normal(size=40)])
    >>> ranker = MCFSRanker(n_clusters=1, metric="euclidean", random_state=0).fit(X)
    >>> ranker.ranking_.tolist()
    [1, 0]
    """

    name = "mcfs"
    target_kind = "unsupervised"
    accepts_sparse = False
    # ARPACK's start vector is drawn from random_state; and LARS, like any L1 method,
    # gives one of two identical columns all the weight, so they do not tie
    deterministic = False
    scale_invariant = True
    reference: ClassVar[str] = (
        "Cai, Zhang & He (2010), Unsupervised Feature Selection for Multi-Cluster Data"
    )
    _constant_score: ClassVar[float] = 0.0

    _parameter_constraints: ClassVar[dict] = {
        **BaseRanker._parameter_constraints,
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "n_nonzero_coefs": [Interval(Integral, 1, None, closed="left"), None],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "knn_components": [Interval(Integral, 1, None, closed="left"), None],
        "metric": [StrOptions(set(METRICS))],
        "weight_mode": [StrOptions(set(WEIGHT_MODES))],
        "t": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "solver": [StrOptions({"auto", "lars"})],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        k=None,
        n_clusters: int = 5,
        n_nonzero_coefs: int | None = None,
        n_neighbors: int = 5,
        metric: str = "cosine",
        weight_mode: str = "binary",
        t="auto",
        solver: str = "auto",
        random_state=None,
        knn_components: int | None = None,
    ):
        self.k = k
        self.n_clusters = n_clusters
        self.n_nonzero_coefs = n_nonzero_coefs
        self.n_neighbors = n_neighbors
        self.metric = metric
        self.weight_mode = weight_mode
        self.t = t
        self.solver = solver
        self.random_state = random_state
        self.knn_components = knn_components

    def _score_units(self) -> int | None:
        # coefficients of the regression on X are in units of X**-1; a fixed heat-kernel
        # width, in units of X**2, makes the graph itself depend on the scale
        return None if self.weight_mode == "heat" and self.t != "auto" else -1

    def _score(self, X, y, context):
        m, n = X.shape
        space, self.knn_components_ = graph_search_space(
            X, self.knn_components, self.metric, "MCFSRanker"
        )
        graph = knn_affinity(
            X, self.n_neighbors, metric=self.metric, weight_mode=self.weight_mode, t=self.t,
            space=space,
        )  # fmt: skip
        self.n_neighbors_ = graph.n_neighbors
        K = min(int(self.n_clusters), m - 1)
        self.n_clusters_ = K
        mu, U, _, inv_sqrt = nontrivial_eigenvectors(
            graph.W, K, check_random_state(self.random_state)
        )
        self.eigenvalues_ = mu
        Y = inv_sqrt[:, None] * U  # generalised eigenvectors of W y = μ D y
        # Columns equal after centring (duplicates, or a constant apart) are one regressor
        # to LARS, which would give all of the coefficient to whichever rounding favours;
        # each duplicate gets the coefficient of the first of its group instead.
        rep = duplicate_columns(X - X.mean(axis=0))
        keep, member = np.unique(rep, return_inverse=True)
        Xu = X[:, keep] if keep.size < n else X
        nu = keep.size
        # the whole path: after centring X has rank <= m - 1, so the residual vanishes
        # by step m - 1 and later LARS steps only add numerically degenerate columns
        full = min(nu, m - 1)
        d = full if self.n_nonzero_coefs is None else min(int(self.n_nonzero_coefs), full)
        coef = None
        if d == nu and self.solver == "auto":  # the paths' end: the OLS fit at full rank
            coef = _least_squares_end(Xu, Y)
        if coef is None and self.solver == "auto":
            coef = lar_end_coef(Xu, Y, d)
        if coef is None:
            coef = self._lars(Xu, Y, d, K)
        coef = coef[member]
        self.coef_ = np.zeros((self.constant_features_.size, K))
        self.coef_[~self.constant_features_] = context.to_data_units(coef, -1)
        return np.abs(coef).max(axis=1)

    @staticmethod
    def _lars(X, Y, d, K):
        """LARS coefficients (n_features, K), each path stopped at ``d`` non-zeros."""
        m, n = X.shape
        # XᵀX is shared by the n_clusters paths only when it is the smaller matrix;
        # scikit-learn's "auto" would also build it (n_features square) for every
        # multi-target fit, which is slower and far larger when n_features >> n_samples
        lars = Lars(n_nonzero_coefs=d, fit_intercept=True, precompute=m > n)
        with warnings.catch_warnings():
            # A path run to its end (d >= rank) stops on a zero residual, and collinear
            # columns are dropped from the active set; LARS says so with advice about
            # parameters this ranker does not expose. Both are the expected behaviour.
            warnings.filterwarnings("ignore", "Early stopping the lars path", ConvergenceWarning)
            warnings.filterwarnings("ignore", "Regressors in active set", ConvergenceWarning)
            lars.fit(X, Y)
        return np.asarray(lars.coef_, dtype=np.float64).reshape(K, n).T


def _least_squares_end(X, Y):
    """The end of every LARS path of ``Y`` on ``X`` (with intercept), or None.

    When the centred ``X`` has full column rank, the least-angle path ends at the
    ordinary least-squares fit, so a path run to its end is one least-squares solve
    instead of ``n_features`` LARS steps per target. None when the rank is deficient
    (LARS then drops collinear columns, which least squares does not do).
    """
    Xc = X - X.mean(axis=0)
    Yc = Y - Y.mean(axis=0)
    # scale the columns so the rank test does not depend on feature units
    norms = column_norms(Xc)
    coef, _, rank, sv = np.linalg.lstsq(Xc / norms, Yc, rcond=None)
    if rank < X.shape[1] or sv[-1] < 1e-8 * sv[0]:
        return None
    return coef / norms[:, None]
