"""Sparse k-nearest-neighbour affinity graphs shared by the spectral rankers.

One place builds the symmetric kNN graph that SPEC (its ``affinity="knn"`` option),
MCFS and NDFS use: an edge joins two samples when either is among the other's
``n_neighbors`` nearest (the union, i.e. ``max(S, Sᵀ)`` of the directed graph, as in
scikit-feature's ``construct_W``), weighted 0/1, by a heat kernel, or by the cosine
similarity. The result is a sparse ``n_samples x n_samples`` matrix with about
``2 * n_neighbors * n_samples`` stored entries, never a dense one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import LinearOperator, eigsh

from rankers.neighbors import (
    approximate_neighbors,
    choose_components,
    edge_sq_lengths,
    nearest_neighbors,
    search_space,
)
from rankers.ties import TIE_RTOL

__all__ = ["KnnAffinity", "knn_affinity", "nontrivial_eigenvectors", "normalized_degrees"]

# largest (edges x features) block held at once when edge weights need the raw rows
_BLOCK_ELEMENTS = 1 << 22

METRICS = ("cosine", "euclidean")
WEIGHT_MODES = ("binary", "heat", "cosine")


@dataclass(frozen=True)
class KnnAffinity:
    """A symmetric kNN affinity graph and the settings actually used to build it.

    Attributes
    ----------
    W : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        Symmetric, non-negative edge weights (explicitly stored, zeros included).
    n_neighbors : int
        Neighbours per sample, after clipping to ``n_samples - 1``.
    t : float
        Heat-kernel width (NaN unless ``weight_mode="heat"``).
    """

    W: sp.csr_matrix
    n_neighbors: int
    t: float


def knn_affinity(
    X: np.ndarray,
    n_neighbors: int = 5,
    *,
    metric: str = "cosine",
    weight_mode: str = "binary",
    t: float | str = "auto",
    space: np.ndarray | None = None,
) -> KnnAffinity:
    """Build the symmetric kNN affinity graph of the rows of ``X``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Samples, one per row.
    n_neighbors : int, default=5
        Neighbours per sample (a sample is never its own neighbour; duplicates of it
        are). Clipped to ``n_samples - 1``.
    metric : {"cosine", "euclidean"}, default="cosine"
        Distance that picks the neighbours. Cosine distance of a zero row to any row
        is 1 (scikit-learn's convention).
    weight_mode : {"binary", "heat", "cosine"}, default="binary"
        Edge weight: 1; ``exp(-||x_i - x_j||² / t)`` (Euclidean length whatever
        ``metric`` picked the edge); or the cosine similarity clipped at 0 so the
        graph Laplacian stays positive semi-definite.
    t : "auto" or float > 0, default="auto"
        Heat-kernel width; ``"auto"`` is the mean squared Euclidean length of the
        edges (He et al.'s choice, also the Laplacian ranker's), which makes the
        weights invariant to scaling all features by one constant.
    space : ndarray, optional
        Where the neighbours are searched, approximately
        (:func:`rankers.neighbors.approximate_neighbors` in
        :func:`rankers.neighbors.search_space`, e.g. the first principal components), by
        Euclidean distance: for ``metric="cosine"`` a space made with
        ``search_space(..., metric="cosine")``, of the unit rows. The edge weights are
        still computed from ``X`` (dense or sparse). Default: the exact search in ``X``
        itself.

    Returns
    -------
    KnnAffinity
        The graph and the settings used.
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}; got {metric!r}")
    if weight_mode not in WEIGHT_MODES:
        raise ValueError(f"weight_mode must be one of {WEIGHT_MODES}; got {weight_mode!r}")
    m = X.shape[0]
    k = int(min(n_neighbors, m - 1))
    own = space is None
    if own:  # ties: lower index first, on any machine
        dist, ind = nearest_neighbors(X, k, metric)
    else:
        dist, ind = None, approximate_neighbors(space, k, "euclidean")
    rows = np.repeat(np.arange(m, dtype=np.int64), k)
    cols = ind.ravel().astype(np.int64)
    # the union graph, each undirected edge once; built from index pairs rather than
    # with sparse max(G, Gᵀ), which would drop zero-length edges between duplicates
    lo, hi = np.minimum(rows, cols), np.maximum(rows, cols)
    keys, first = np.unique(lo * m + hi, return_index=True)
    r, c = np.divmod(keys, m)
    t_used = float("nan")
    if weight_mode == "binary":
        w = np.ones(r.size)
    elif weight_mode == "cosine":
        w = 1.0 - dist.ravel()[first] if metric == "cosine" and own else _pair_cosine(X, r, c)
        w = np.maximum(w, 0.0)
    else:
        if metric == "euclidean" and own:
            d2 = dist.ravel()[first] ** 2
        elif sp.issparse(X):
            d2 = np.sqrt(edge_sq_lengths(X, r, c)) ** 2
        else:
            d2 = _pair_sq_dist(X, r, c)
        if t == "auto":
            t_used = float(d2.mean())
            if t_used <= 0.0:  # every edge joins duplicates: the weights are 1 whatever t
                t_used = 1.0
        else:
            t_used = float(t)
        w = np.exp(-d2 / t_used)
    # no self loops: scikit-feature's construct_W counts each sample among its own
    # k + 1 nearest and so puts 1 on the diagonal; the papers' graphs do not
    W = sp.csr_matrix((np.r_[w, w], (np.r_[r, c], np.r_[c, r])), shape=(m, m))
    return KnnAffinity(W=W, n_neighbors=k, t=t_used)


def normalized_degrees(W) -> tuple[np.ndarray, np.ndarray]:
    """Degrees ``d = W 1`` and ``d^{-1/2}``, with 0 where a sample has degree 0.

    A zero-degree sample (all its heat weights underflowed) is cut off from the graph;
    giving it ``d^{-1/2} = 0`` (as scikit-feature's SPEC does) keeps it out of the
    normalised matrices instead of producing infinities.
    """
    d = np.asarray(W.sum(axis=1)).ravel()
    inv_sqrt = np.zeros_like(d)
    positive = d > 0
    inv_sqrt[positive] = 1.0 / np.sqrt(d[positive])
    return d, inv_sqrt


def nontrivial_eigenvectors(W, n_components: int, random_state):
    """Leading eigenvectors of ``N = D^{-1/2} W D^{-1/2}`` once the trivial one is removed.

    An eigenvalue of multiplicity > 1 (a graph with several connected components gives
    the eigenvalue 1 once per component) has no preferred basis: an eigensolver returns
    whichever rotation its BLAS and start vector lead to, and a method that reads the
    vectors one by one (MCFS regresses on each) would then depend on the machine. Here
    eigenvalues within ``1e-9`` of each other are one eigenvalue (:mod:`rankers.ties`) and
    its eigenspace gets a canonical basis: Gram-Schmidt, in sample order, of the
    projections of the unit vectors ``e_i`` onto the space (for components: their
    normalised indicators, lowest-numbered sample's component first). When such an
    eigenspace straddles ``n_components`` the first vectors of its canonical basis are
    kept. Every vector's sign makes its first clearly non-zero entry positive.

    Parameters
    ----------
    W : sparse matrix or ndarray of shape (n_samples, n_samples)
        Symmetric non-negative affinities.
    n_components : int
        Number of eigenvectors, at most ``n_samples - 1``.
    random_state : RandomState
        Draws ARPACK's start vector (the result does not depend on it).

    Returns
    -------
    mu : ndarray of shape (n_components,)
        Eigenvalues, descending (``1 - mu`` are the normalised Laplacian's, ascending).
    U : ndarray of shape (n_samples, n_components)
        Unit eigenvectors in that order. ``D^{-1/2} U`` are the generalised eigenvectors
        of ``W y = μ D y``.
    sqrt_d, inv_sqrt_d : ndarray of shape (n_samples,)
        ``D^{1/2}`` and ``D^{-1/2}`` (0 for samples of degree 0).
    """
    m = W.shape[0]
    d, inv_sqrt = normalized_degrees(W)
    if sp.issparse(W):
        N = sp.diags(inv_sqrt) @ W @ sp.diags(inv_sqrt)
    else:
        N = inv_sqrt[:, None] * W * inv_sqrt[None, :]
    # The trivial eigenvector D^{1/2} 1 (eigenvalue 1) is moved to -1, below every other
    # (N's spectrum lies in [-1, 1]), so the top of the spectrum is exactly the
    # non-trivial part whatever the multiplicity of 1.
    sqrt_d = np.sqrt(d)
    K = n_components
    if not d.any():
        # every weight underflowed (a fixed heat-kernel width far too small for the scale
        # of X): N = 0, no trivial vector, any basis is an eigenbasis (eigenvalue 0), and
        # D^{-1/2} U = 0, so the rankers built on it give every feature its floor score
        return np.zeros(K), np.eye(m, K), sqrt_d, inv_sqrt
    u0 = sqrt_d / np.linalg.norm(sqrt_d)
    # The eigenvalue 1 has one eigenvector per connected component, D^{1/2} times its
    # indicator. Its non-trivial part is built exactly (an eigensolver may miss copies of
    # a repeated eigenvalue) in its canonical basis, and deflated like u0.
    B = _component_space(W, sqrt_d, u0)
    if B.shape[1] >= K:
        return np.ones(K), _canonical_signs(B[:, :K]), sqrt_d, inv_sqrt
    deflate = np.column_stack([u0, B])
    rest = K - B.shape[1]
    extra = 2  # look past the last wanted eigenvalue for the end of its eigenspace
    while True:
        count = min(rest + extra, m - deflate.shape[1])
        mu, U = _top_eigenpairs(N, deflate, count, random_state)
        groups = _eigenvalue_groups(mu)
        # the group holding the last wanted value must end before the last one computed,
        # unless every remaining eigenvalue was computed
        if groups[rest - 1] != groups[-1] or count == m - deflate.shape[1]:
            break
        extra *= 2
    for g in np.unique(groups[:rest]):
        members = np.flatnonzero(groups == g)
        if members.size > 1:
            U[:, members] = _canonical_basis(U[:, members])
    mu = np.concatenate([np.ones(B.shape[1]), mu[:rest]])
    U = np.column_stack([B, U[:, :rest]])
    return mu, _canonical_signs(U), sqrt_d, inv_sqrt


def _component_space(W, sqrt_d: np.ndarray, u0: np.ndarray) -> np.ndarray:
    """Canonical orthonormal basis of the eigenvalue-1 eigenspace of ``N`` minus ``u0``."""
    m = W.shape[0]
    if not sp.issparse(W) and np.count_nonzero(W) >= m * (m - 1):
        return np.zeros((m, 0))  # a dense kernel with every weight positive: connected
    _, labels = connected_components(sp.csr_matrix(W) != 0, directed=False)
    live = np.unique(labels[sqrt_d > 0])  # a sample of degree 0 spans nothing
    if live.size < 2:
        return np.zeros((m, 0))
    V = np.zeros((m, live.size))
    for j, c in enumerate(live):
        inside = labels == c
        V[inside, j] = sqrt_d[inside]
    V /= np.linalg.norm(V, axis=0)
    V -= np.outer(u0, u0 @ V)  # u0 lies in span(V): one dimension less
    left = np.linalg.svd(V, full_matrices=False)[0]
    return _canonical_basis(left[:, : live.size - 1])


def _top_eigenpairs(N, deflate: np.ndarray, count: int, random_state):
    """The ``count`` largest eigenpairs of ``N - 2 Q Qᵀ`` (``Q = deflate``, orthonormal
    eigenvectors of ``N`` at eigenvalue 1, moved to -1), eigenvalues descending."""
    m = N.shape[0]
    if m <= 4 * (count + deflate.shape[1] + 1):
        # a handful of samples: the dense solver is cheaper than ARPACK's set-up
        dense = N.toarray() if sp.issparse(N) else np.array(N)
        for q in deflate.T:  # dense -= 2 q qᵀ in place (BLAS rank-one update, no m x m temp)
            sla.blas.dger(-2.0, q, q, a=dense.T, overwrite_a=True)
        mu, U = sla.eigh(dense, subset_by_index=(m - count, m - 1))
    else:

        def matvec(x):
            x = np.ravel(x)
            return N @ x - 2.0 * (deflate @ (deflate.T @ x))

        op = LinearOperator((m, m), matvec=matvec, dtype=np.float64)
        mu, U = eigsh(op, k=count, which="LA", v0=random_state.uniform(-1.0, 1.0, m))
    order = np.argsort(mu)[::-1]
    return mu[order], U[:, order]


def _eigenvalue_groups(mu: np.ndarray) -> np.ndarray:
    """Group ids of descending eigenvalues: values within ``TIE_RTOL`` (absolute, the
    spectrum lies in [-1, 1]) of their neighbour are one eigenvalue."""
    return np.concatenate([[0], np.cumsum(-np.diff(mu) > TIE_RTOL)])


def _canonical_basis(U: np.ndarray, rtol: float = 1e-6) -> np.ndarray:
    """The orthonormal basis of ``span(U)`` got by Gram-Schmidt, in sample order, of the
    projections of the unit vectors: the same whatever basis ``U`` holds.

    The projection of ``e_i`` is ``U u_i`` with ``u_i = U[i]``; Gram-Schmidt on those is
    ``U`` times Gram-Schmidt on the ``u_i``. A sample whose ``u_i`` lies (within ``rtol`` of
    the largest row norm) in the span of the earlier ones is passed over.
    """
    g = U.shape[1]
    rows = U
    floor = rtol * float(np.sqrt(np.einsum("ij,ij->i", rows, rows)).max())
    Q = np.zeros((g, g))
    found = 0
    for i in range(rows.shape[0]):
        v = rows[i] - Q[:, :found] @ (Q[:, :found].T @ rows[i])
        norm = float(np.linalg.norm(v))
        if norm > floor:
            Q[:, found] = v / norm
            found += 1
            if found == g:
                break
    if found < g:  # cannot happen for an orthonormal U; keep it as it is
        return U
    return U @ Q


def _canonical_signs(U: np.ndarray, rtol: float = 1e-6) -> np.ndarray:
    """Each column times the sign of its first entry above ``rtol`` of its largest."""
    big = np.abs(U) > rtol * np.abs(U).max(axis=0, initial=0.0)
    first = np.argmax(big, axis=0)
    signs = np.sign(U[first, np.arange(U.shape[1])])
    signs[signs == 0] = 1.0
    return U * signs


def _pair_sq_dist(X: np.ndarray, r: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Squared Euclidean lengths of the edges (r, c), in blocks of edges."""
    out = np.empty(r.size)
    step = max(1, _BLOCK_ELEMENTS // max(1, X.shape[1]))
    for s in range(0, r.size, step):
        diff = X[r[s : s + step]] - X[c[s : s + step]]
        out[s : s + step] = np.einsum("ij,ij->i", diff, diff)
    return out


def _pair_cosine(X: np.ndarray, r: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Cosine similarity of the edges (r, c); 0 where a row is zero."""
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    out = np.empty(r.size)
    step = max(1, _BLOCK_ELEMENTS // max(1, X.shape[1]))
    for s in range(0, r.size, step):
        out[s : s + step] = np.einsum("ij,ij->i", X[r[s : s + step]], X[c[s : s + step]])
    den = norms[r] * norms[c]
    return np.divide(out, den, out=np.zeros_like(out), where=den > 0)


def graph_search_space(
    X, knn_components: int | None, metric: str, who: str
) -> tuple[np.ndarray | None, int | None]:
    """Where a kNN-graph ranker's ``_score`` searches its neighbours: ``(None, None)``
    for the exact search in ``X``, else the first principal components of ``X`` (of its
    unit rows for ``metric="cosine"``) and their number, by
    :func:`rankers.neighbors.choose_components` (which warns when many samples make it
    choose them)."""
    m, n = X.shape
    # the warning points at the user's fit: here <- _score <- BaseRanker.fit <- caller
    components = choose_components(knn_components, m, n, who, stacklevel=5)
    if components is None:
        return None, None
    return search_space(X, components, metric=metric), components
