"""NDFS: features that predict nonnegative spectral cluster indicators, with an L2,1 penalty."""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from rankers.base import BaseRanker
from rankers.kmeans import kmeans_labels
from rankers.unsupervised._affinity import (
    METRICS,
    WEIGHT_MODES,
    graph_search_space,
    knn_affinity,
    normalized_degrees,
)
from rankers.utils.param_validation import Interval, StrOptions

__all__ = ["NDFSRanker"]

# row norms of W below this are clipped before 1 / (2 ||w_i||), as in the paper's code
_ROW_NORM_FLOOR = 1e-16


class NDFSRanker(BaseRanker):
    """Rank features by Nonnegative Discriminative Feature Selection (Li et al. 2012).

    NDFS learns nonnegative scaled cluster indicators ``F`` (``n_samples x c``) and a
    feature weight matrix ``W`` (``n_features x c``) together by minimising

        ``Tr(Fᵀ L F) + α (||X W - F||²_F + β ||W||_{2,1}) + γ/4 ||FᵀF - I||²_F``,
        ``F >= 0``,

    where ``L`` is the Laplacian of a kNN graph of the samples. The updates are the
    paper's: with ``D = diag(1 / (2 ||w_i||))`` (reweighted L2,1),
    ``W = (XᵀX + β D)⁻¹ Xᵀ F``; then the multiplicative step
    ``F <- F ⊙ γF / (M F + γ F FᵀF)`` with ``M F = L F + α (F - X W)``, and the
    columns of ``F`` scaled to unit norm. Where ``(M F)_ij < 0`` its magnitude moves to
    the numerator instead (the paper's step could leave ``F >= 0`` there; same fixed
    points). A feature's score is the row norm ``||w_i||``.

    ``W`` is computed on the cheaper side: a Cholesky solve with the ``n_features``
    square ``XᵀX + βD`` when features are few, else the push-through (Woodbury) form
    ``W = (βD)⁻¹ Xᵀ (X (βD)⁻¹ Xᵀ + I)⁻¹ F`` with an ``n_samples`` square system; no
    matrix is ever inverted and ``M`` is never formed.

    **The result depends on the scale of X.** ``α``, ``β`` and ``γ`` are fixed numbers
    that weigh ``||XW - F||²`` and ``||W||_{2,1}`` (in units of ``X``) against the
    unit-free graph and orthogonality terms, so multiplying all of ``X`` by a constant
    changes the balance, and the ranking (on data in units of 1e-8 the L2,1 penalty
    drives every ``w_i`` to 0). The defaults are scikit-feature's, meant for features of
    unit order: standardise ``X`` first (e.g. ``sklearn.preprocessing.StandardScaler``,
    which also puts features measured in different units on one footing), or tune
    ``alpha`` and ``beta`` for the data's scale. Values whose squares leave float64's
    range (largest absolute value beyond 1e-140 ... 1e140) are refused.

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.
    n_clusters : int, default=5
        Number of clusters ``c`` (columns of ``F``); the benchmark protocol sets it to
        the number of classes. Clipped to ``n_samples``.
    alpha : float, default=1.0
        Weight ``α`` of the regression term (scikit-feature's default).
    beta : float, default=1.0
        Weight ``β`` of the L2,1 penalty (scikit-feature's default).
    gamma : float, default=1e9
        Weight ``γ`` of the orthogonality term; large, as the paper asks (scikit-feature's
        default).
    laplacian : {"unnormalized", "normalized"}, default="unnormalized"
        ``L = D - S`` (what scikit-feature's code means to build) or
        ``I - D^{-1/2} S D^{-1/2}``.
    n_neighbors : int, default=5
        Neighbours per sample in the kNN graph (clipped to ``n_samples - 1``).
    metric : {"cosine", "euclidean"}, default="cosine"
        Distance that picks the neighbours (scikit-feature's default is cosine).
    weight_mode : {"binary", "heat", "cosine"}, default="binary"
        Edge weights ``S``: 1, a heat kernel, or the cosine similarity.
    t : "auto" or float > 0, default="auto"
        Heat-kernel width (``"auto"`` = mean squared edge length).
    max_iter : int, default=1000
        Maximum number of iterations (scikit-feature's).
    tol : float, default=1e-4
        Stop when the objective changes by at most ``tol`` times its magnitude between
        two iterations.
    random_state : int, RandomState instance or None, default=None
        Seeds the k-means that initialises ``F``.
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
        Row norms ``||w_i||`` of ``W``; 0 for constant features.
    ranking_ : ndarray of shape (n_features,)
        Feature indices, best first.
    coef_ : ndarray of shape (n_features, n_clusters_)
        The feature weight matrix ``W`` (rows of constant features are 0).
    indicator_ : ndarray of shape (n_samples, n_clusters_)
        The learned nonnegative cluster indicator ``F``.
    objective_ : ndarray of shape (n_iter_,)
        The objective after each iteration.
    n_iter_ : int
        Iterations run.
    n_clusters_, n_neighbors_ : int
        Values actually used.
    knn_components_ : int or None
        The principal components the neighbours were searched among (None: the exact
        search).

    Warns
    -----
    sklearn.exceptions.ConvergenceWarning
        When ``max_iter`` iterations end before the objective settles.

    See Also
    --------
    rankers.unsupervised.mcfs.MCFSRanker : spectral embedding first, then sparse
        regression (L1).

    Notes
    -----
    ``F`` starts from k-means (10 restarts) as in scikit-feature: the one-hot labels
    ``Y`` scaled to ``Y (YᵀY)^{-1/2}``, plus 0.02 so that the multiplicative updates can
    move every entry. Differences from scikit-feature's ``NDFS.ndfs``
    (skfeature-chappers 1.2.1), each a defect there: its Laplacian line
    ``np.array(W.sum(1))[:, 0] - W`` broadcasts to ``d 1ᵀ - W`` instead of ``D - W``;
    its default graph divides the caller's ``X`` by the row norms in place; its graph
    has self loops; it inverts ``XᵀX + βD`` (``n_features`` square) every iteration and
    builds the dense ``n_samples`` square ``M``; its k-means is unseeded; and it stops
    when an objective without the square on the orthogonality term changes by less
    than 1e-3 in absolute terms.

    **Where it works.** On the planted-structure atlas (every structure; 200 samples, 200 and
    2,000 features, 0.5-50 % of them informative, 2 seeds; the mean share of the planted
    features in its top k, against a random ranking's), it recovers part of shift, clusters; it
    fails on imbalanced, manifold, xor, modules (within 0.1 of chance). The shares are in
    ``benchmarks/results/atlas_grid/summary.md``; :doc:`/guide/which-ranker` has the tables and
    heat maps.

    References
    ----------
    .. [1] Z. Li, Y. Yang, J. Liu, X. Zhou and H. Lu, "Unsupervised Feature Selection
       Using Nonnegative Spectral Analysis", AAAI 2012, 1026-1032.

    Examples
    --------
    >>> import numpy as np
    >>> from rankers.unsupervised.ndfs import NDFSRanker
    >>> rng = np.random.default_rng(0)
    >>> groups = np.repeat([0.0, 4.0], 20)
    >>> X = np.column_stack([rng.normal(size=40), groups + 0.3 * rng.normal(size=40)])
    >>> ranker = NDFSRanker(n_clusters=2, metric="euclidean", random_state=0).fit(X)
    >>> ranker.ranking_.tolist()
    [1, 0]
    """

    name = "ndfs"
    target_kind = "unsupervised"
    accepts_sparse = False
    deterministic = False  # k-means initialisation
    # alpha, beta and gamma weigh terms in the units of X against unit-free ones
    scale_invariant = False
    reference: ClassVar[str] = (
        "Li, Yang, Liu, Zhou & Lu (2012), Unsupervised Feature Selection Using "
        "Nonnegative Spectral Analysis"
    )
    _constant_score: ClassVar[float] = 0.0

    _parameter_constraints: ClassVar[dict] = {
        **BaseRanker._parameter_constraints,
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "beta": [Interval(Real, 0, None, closed="neither")],
        "gamma": [Interval(Real, 0, None, closed="neither")],
        "laplacian": [StrOptions({"unnormalized", "normalized"})],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "knn_components": [Interval(Integral, 1, None, closed="left"), None],
        "metric": [StrOptions(set(METRICS))],
        "weight_mode": [StrOptions(set(WEIGHT_MODES))],
        "t": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        k=None,
        n_clusters: int = 5,
        alpha: float = 1.0,
        beta: float = 1.0,
        gamma: float = 1e9,
        laplacian: str = "unnormalized",
        n_neighbors: int = 5,
        metric: str = "cosine",
        weight_mode: str = "binary",
        t="auto",
        max_iter: int = 1000,
        tol: float = 1e-4,
        random_state=None,
        knn_components: int | None = None,
    ):
        self.k = k
        self.n_clusters = n_clusters
        self.alpha = alpha
        self.beta = beta
        self.gamma = gamma
        self.laplacian = laplacian
        self.n_neighbors = n_neighbors
        self.metric = metric
        self.weight_mode = weight_mode
        self.t = t
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.knn_components = knn_components

    def _score(self, X, y, context):
        m = X.shape[0]
        rng = check_random_state(self.random_state)
        space, self.knn_components_ = graph_search_space(
            X, self.knn_components, self.metric, "NDFSRanker"
        )
        graph = knn_affinity(
            X, self.n_neighbors, metric=self.metric, weight_mode=self.weight_mode, t=self.t,
            space=space,
        )  # fmt: skip
        self.n_neighbors_ = graph.n_neighbors
        L = _laplacian(graph.W, normalized=self.laplacian == "normalized")
        c = min(int(self.n_clusters), m)
        self.n_clusters_ = c
        F = _kmeans_indicator(X, c, rng)
        W, F, objective = _ndfs_iterations(
            X, L, F, self.alpha, self.beta, self.gamma, self.max_iter, self.tol
        )
        self.n_iter_ = objective.size
        self.objective_ = objective
        if self.n_iter_ == self.max_iter and not _settled(objective, self.tol):
            warnings.warn(
                f"NDFS did not converge in max_iter={self.max_iter} iterations (last relative "
                f"change of the objective {_last_change(objective):.3g} > tol={self.tol}); "
                "raise max_iter or tol",
                ConvergenceWarning,
                stacklevel=3,
            )
        self.indicator_ = F
        self.coef_ = np.zeros((self.constant_features_.size, c))
        self.coef_[~self.constant_features_] = W
        return np.sqrt(np.einsum("ij,ij->i", W, W))


def _laplacian(S, normalized: bool) -> sp.csr_matrix:
    d, inv_sqrt = normalized_degrees(S)
    if normalized:
        N = sp.diags(inv_sqrt) @ S @ sp.diags(inv_sqrt)
        return (sp.diags((d > 0).astype(np.float64)) - N).tocsr()
    return (sp.diags(d) - S).tocsr()


def _kmeans_indicator(X: np.ndarray, c: int, rng) -> np.ndarray:
    """scikit-feature's start: scaled k-means indicator ``Y (YᵀY)^{-1/2}`` plus 0.02.

    The k-means is :func:`rankers.kmeans.kmeans_labels` (10 restarts, k-means++), whose
    partition does not depend on the last bits of its distances.
    """
    labels = kmeans_labels(X, c, rng, n_init=10, max_iter=300)
    counts = np.bincount(labels, minlength=c).astype(np.float64)
    scale = np.divide(1.0, np.sqrt(counts), out=np.zeros(c), where=counts > 0)
    F = np.zeros((X.shape[0], c))
    F[np.arange(X.shape[0]), labels] = scale[labels]
    return F + 0.02


def _ndfs_iterations(X, L, F, alpha, beta, gamma, max_iter, tol):
    """Alternate the W step and the multiplicative F step; return W, F, objectives."""
    m, n = X.shape
    c = F.shape[1]
    # cost per iteration of each side: Cholesky of XᵀX + βD (n³/3, XᵀX computed once)
    # versus forming X (βD)⁻¹ Xᵀ (m²n) and its Cholesky (m³/3)
    feature_side = n**3 / 3.0 <= m * m * n + m**3 / 3.0
    G = X.T @ X if feature_side else None
    dw = np.ones(n)  # diagonal of D, identity at the start (scikit-feature)
    objective = np.empty(max_iter)
    for it in range(max_iter):
        e = beta * dw
        if feature_side:
            A = G.copy()
            A[np.diag_indices(n)] += e
            W = sla.cho_solve(sla.cho_factor(A, overwrite_a=True), X.T @ F)
        else:
            Xe = X / e  # X (βD)⁻¹
            K = Xe @ X.T
            K[np.diag_indices(m)] += 1.0
            W = Xe.T @ sla.cho_solve(sla.cho_factor(K, overwrite_a=True), F)
        row_norms = np.sqrt(np.einsum("ij,ij->i", W, W))
        dw = 0.5 / np.maximum(row_norms, _ROW_NORM_FLOOR)
        XW = X @ W
        MF = L @ F + alpha * (F - XW)
        F = _f_step(F, MF, gamma)
        FtF = F.T @ F
        FtF[np.diag_indices(c)] -= 1.0
        R = XW - F
        objective[it] = (
            np.einsum("ij,ij->", F, L @ F)
            + alpha * (np.einsum("ij,ij->", R, R) + beta * row_norms.sum())
            + 0.25 * gamma * np.einsum("ij,ij->", FtF, FtF)
        )
        if it >= 1 and _settled(objective[: it + 1], tol):
            return W, F, objective[: it + 1]
    return W, F, objective


def _f_step(F: np.ndarray, MF: np.ndarray, gamma: float) -> np.ndarray:
    """The multiplicative update of F, then its columns scaled to unit norm.

    The paper's step is ``F ⊙ γF / (MF + γFFᵀF)``. ``MF`` has entries of both signs,
    and where a row of ``F`` has almost vanished ``γFFᵀF`` no longer outweighs a
    negative ``(MF)_ij``: the denominator turns negative and ``F`` leaves the
    nonnegative orthant (or, floored, explodes). Moving the negative part of ``MF``
    to the numerator (the usual rule for mixed signs in multiplicative updates) keeps
    ``F >= 0``; it is the paper's step wherever ``MF >= 0`` and has the same fixed
    points.
    """
    MF_pos = np.maximum(MF, 0.0)
    numerator = gamma * F + (MF_pos - MF)
    denominator = MF_pos + gamma * (F @ (F.T @ F))
    F = F * numerator / np.maximum(denominator, np.finfo(np.float64).tiny)
    # scikit-feature's normalisation, with its 1e-16 guard for a column at 0
    return F / np.sqrt(np.einsum("ij,ij->j", F, F) + 1e-16)


def _last_change(objective: np.ndarray) -> float:
    if objective.size < 2:
        return float("inf")
    prev, last = objective[-2], objective[-1]
    return abs(last - prev) / max(abs(prev), np.finfo(np.float64).tiny)


def _settled(objective: np.ndarray, tol: float) -> bool:
    return _last_change(objective) <= tol
