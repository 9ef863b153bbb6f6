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
from scipy.sparse.linalg import LinearOperator, eigsh
from sklearn.neighbors import NearestNeighbors

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
    nn = NearestNeighbors(n_neighbors=k, metric=metric, algorithm="brute").fit(X)
    dist, ind = nn.kneighbors()  # without X: each sample's own row is left out
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
        w = 1.0 - dist.ravel()[first] if metric == "cosine" else _pair_cosine(X, r, c)
        w = np.maximum(w, 0.0)
    else:
        d2 = dist.ravel()[first] ** 2 if metric == "euclidean" else _pair_sq_dist(X, r, c)
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

    Parameters
    ----------
    W : sparse matrix or ndarray of shape (n_samples, n_samples)
        Symmetric non-negative affinities.
    n_components : int
        Number of eigenvectors, at most ``n_samples - 1``.
    random_state : RandomState
        Draws ARPACK's start vector.

    Returns
    -------
    mu : ndarray of shape (n_components,)
        Eigenvalues, descending (``1 - mu`` are the normalised Laplacian's, ascending).
    U : ndarray of shape (n_samples, n_components)
        Unit eigenvectors in that order (signs arbitrary). ``D^{-1/2} U`` are the
        generalised eigenvectors of ``W y = μ D y``.
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
    # non-trivial part whatever the multiplicity of 1: a disconnected graph gives its
    # component indicators rather than an arbitrary basis with one vector dropped.
    sqrt_d = np.sqrt(d)
    K = n_components
    if not d.any():
        # every weight underflowed (a fixed heat-kernel width far too small for the scale
        # of X): N = 0, no trivial vector, any basis is an eigenbasis (eigenvalue 0), and
        # D^{-1/2} U = 0, so the rankers built on it give every feature its floor score
        return np.zeros(K), np.eye(m, K), sqrt_d, inv_sqrt
    u0 = sqrt_d / np.linalg.norm(sqrt_d)
    if m <= 4 * (K + 1):
        # a handful of samples: the dense solver is cheaper than ARPACK's set-up
        dense = N.toarray() if sp.issparse(N) else np.array(N)
        dense -= 2.0 * np.outer(u0, u0)
        mu, U = sla.eigh(dense, subset_by_index=(m - K, m - 1))
    else:

        def matvec(x):
            x = np.ravel(x)
            return N @ x - (2.0 * (u0 @ x)) * u0

        op = LinearOperator((m, m), matvec=matvec, dtype=np.float64)
        mu, U = eigsh(op, k=K, which="LA", v0=random_state.uniform(-1.0, 1.0, m))
    order = np.argsort(mu)[::-1]
    return mu[order], U[:, order], sqrt_d, inv_sqrt


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
