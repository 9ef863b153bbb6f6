"""Nearest neighbours of every sample, the same on every machine.

The rankers that build a k-nearest-neighbour graph of the samples (Laplacian score,
compactness, SPEC, MCFS, NDFS, AgnoS-S's dimension estimate) and the kNN models of the top-k
curves (:mod:`aggregation.evaluation.topk`) share this function instead of
scikit-learn's :class:`~sklearn.neighbors.NearestNeighbors`, whose choice among samples at
equal distance (duplicated samples, points on a grid) depends on the last bits of distances
computed by the machine's BLAS. Here distances are compared under the tie rule of
:mod:`rankers.ties` (within ``1e-9`` of the row's largest distance: tied, lower index
first), and the distances returned for the chosen pairs are recomputed from the
differences of the two rows, which is exact up to one rounding per term and does not
cancel as ``|x|² + |y|² - 2 x·y`` does for close points.
"""

from __future__ import annotations

import numpy as np
from joblib import Parallel, delayed

from rankers.ties import TIE_RTOL, kth_nearest
from rankers.validation import check_n_jobs

__all__ = ["METRICS", "nearest_neighbors"]

METRICS = ("euclidean", "cosine")
# largest (rows x samples) block of distances held at once, in float64 elements
_BLOCK_ELEMENTS = 1 << 22


def nearest_neighbors(
    X: np.ndarray,
    k: int,
    metric: str = "euclidean",
    rtol: float = TIE_RTOL,
    *,
    queries: np.ndarray | None = None,
    n_jobs: int | None = None,
    return_distance: bool = True,
) -> tuple[np.ndarray, np.ndarray] | np.ndarray:
    """The ``k`` nearest samples of ``X`` to every query (default: every other sample).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The samples.
    k : int
        Neighbours per query: ``1 <= k <= n_samples - 1`` without ``queries`` (a sample
        is never its own neighbour; a duplicate of it is, at distance 0), else
        ``1 <= k <= n_samples``.
    metric : {"euclidean", "cosine"}, default="euclidean"
        Cosine distance is ``1 - cos``; a zero row is at distance 1 from every row
        (scikit-learn's convention).
    rtol : float, default=TIE_RTOL
        Tie tolerance, relative to each query's largest distance (euclidean: squared
        distance; cosine: relative to 1).
    queries : ndarray of shape (n_queries, n_features), optional
        Points whose neighbours among ``X`` are wanted.
    n_jobs : int or None, default=None
        Blocks of queries searched in parallel (joblib threads); the answer does not
        depend on it.
    return_distance : bool, default=True
        False returns ``ind`` alone and skips recomputing the distances of the pairs
        from their differences (for callers that compute those differences anyway).

    Returns
    -------
    dist : ndarray of shape (n_queries, k)
        Distances to the neighbours, nearest first (only with ``return_distance``).
    ind : ndarray of shape (n_queries, k)
        Row indices into ``X``; at equal distance (within the tolerance) the lower index
        comes first.
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}; got {metric!r}")
    X = np.asarray(X, dtype=np.float64)
    m = X.shape[0]
    own = queries is None
    Q = X if own else np.asarray(queries, dtype=np.float64)
    if not 1 <= k <= m - own:
        raise ValueError(f"k must be in 1..{m - own}; got {k}")
    if metric == "euclidean":
        centre = X.mean(axis=0)  # distances do not move; |z|² stays comparable to them
        Z = X - centre
        ZQ = Z if own else Q - centre
        sq = np.einsum("ij,ij->i", Z, Z)
        sqQ = sq if own else np.einsum("ij,ij->i", ZQ, ZQ)
    else:
        Z, norms = _unit_rows(X)
        ZQ, normsQ = (Z, norms) if own else _unit_rows(Q)
    nq = Q.shape[0]

    def block(rows: slice) -> np.ndarray:
        # a slice, not an index array: ZQ[rows] stays a view, so for the whole own set
        # ZQ[rows] @ Z.T is Z @ Z.T, which numpy hands to BLAS syrk (half the flops of a
        # gemm, and no copy of Z)
        D = ZQ[rows] @ Z.T
        if metric == "euclidean":  # |q|² + |x|² - 2 q·x, in place
            D *= -2.0
            D += sqQ[rows, None]
            D += sq[None, :]
            np.maximum(D, 0.0, out=D)
            scale = D.max(axis=1)  # each row's largest squared distance
        else:
            np.subtract(1.0, D, out=D)
            D[normsQ[rows] == 0] = 1.0
            D[:, norms == 0] = 1.0
            scale = 1.0
        if own:
            D[np.arange(D.shape[0]), np.arange(rows.start, rows.stop)] = np.inf
        return kth_nearest(D, k, rtol, scale)

    step = max(1, _BLOCK_ELEMENTS // m)
    blocks = [slice(s, min(s + step, nq)) for s in range(0, nq, step)]
    jobs = check_n_jobs(n_jobs)
    if jobs == 1 or len(blocks) == 1:
        parts = [block(rows) for rows in blocks]
    else:  # threads: the work is BLAS and numpy, which release the GIL
        parts = Parallel(n_jobs=jobs, prefer="threads")(delayed(block)(rows) for rows in blocks)
    ind = np.concatenate(parts) if parts else np.empty((0, k), dtype=np.intp)
    if not return_distance:
        return ind
    if metric == "euclidean":
        return _pair_distances(X, Q, ind), ind
    dist = _pair_cosine(Z, ZQ, ind)
    dist[(normsQ == 0)[:, None] | (norms[ind] == 0)] = 1.0
    return dist, ind


def _unit_rows(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    return np.divide(X, norms[:, None], out=np.zeros_like(X), where=norms[:, None] > 0), norms


def _pair_distances(X: np.ndarray, Q: np.ndarray, ind: np.ndarray) -> np.ndarray:
    """Euclidean distances of the pairs (query i, sample ind[i, j]) from their differences."""
    nq, k = ind.shape
    out = np.empty((nq, k))
    step = max(1, _BLOCK_ELEMENTS // max(1, k * X.shape[1]))
    for s in range(0, nq, step):
        rows = slice(s, min(s + step, nq))
        diff = X[ind[rows]] - Q[rows, None, :]
        out[rows] = np.sqrt(np.einsum("ijk,ijk->ij", diff, diff))
    return out


def _pair_cosine(Z: np.ndarray, ZQ: np.ndarray, ind: np.ndarray) -> np.ndarray:
    """Cosine distances of the pairs (query i, sample ind[i, j]) from the unit rows."""
    nq, k = ind.shape
    out = np.empty((nq, k))
    step = max(1, _BLOCK_ELEMENTS // max(1, k * Z.shape[1]))
    for s in range(0, nq, step):
        rows = slice(s, min(s + step, nq))
        cos = np.einsum("ik,ijk->ij", ZQ[rows], Z[ind[rows]])
        out[rows] = np.clip(1.0 - cos, 0.0, 2.0)
    return out
