"""Nearest neighbours of every sample, the same on every machine.

The rankers that build a k-nearest-neighbour graph of the samples (Laplacian score,
compactness, SPEC, MCFS, NDFS, AgnoS-S's dimension estimate) share this function instead of
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

from rankers.ties import TIE_RTOL, kth_nearest

__all__ = ["METRICS", "nearest_neighbors"]

METRICS = ("euclidean", "cosine")
# largest (rows x samples) block of distances held at once, in float64 elements
_BLOCK_ELEMENTS = 1 << 22


def nearest_neighbors(
    X: np.ndarray, k: int, metric: str = "euclidean", rtol: float = TIE_RTOL
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest other samples of every sample, nearest first.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The samples.
    k : int
        Neighbours per sample, ``1 <= k <= n_samples - 1``. A sample is never its own
        neighbour; a duplicate of it is (at distance 0).
    metric : {"euclidean", "cosine"}, default="euclidean"
        Cosine distance is ``1 - cos``; a zero row is at distance 1 from every row
        (scikit-learn's convention).
    rtol : float, default=TIE_RTOL
        Tie tolerance, relative to each row's largest distance (euclidean: squared
        distance; cosine: relative to 1).

    Returns
    -------
    dist : ndarray of shape (n_samples, k)
        Distances to the neighbours.
    ind : ndarray of shape (n_samples, k)
        Indices of the neighbours; at equal distance (within the tolerance) the lower
        index comes first.
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}; got {metric!r}")
    X = np.asarray(X, dtype=np.float64)
    m = X.shape[0]
    if not 1 <= k <= m - 1:
        raise ValueError(f"k must be in 1..{m - 1}; got {k}")
    if metric == "euclidean":
        Z = X - X.mean(axis=0)  # distances do not move; |z|² stays comparable to them
        sq = np.einsum("ij,ij->i", Z, Z)
    else:
        norms = np.sqrt(np.einsum("ij,ij->i", X, X))
        Z = np.divide(X, norms[:, None], out=np.zeros_like(X), where=norms[:, None] > 0)
    ind = np.empty((m, k), dtype=np.intp)
    step = max(1, _BLOCK_ELEMENTS // m)
    for s in range(0, m, step):
        rows = np.arange(s, min(s + step, m))
        G = Z[rows] @ Z.T
        if metric == "euclidean":
            D = sq[rows, None] + sq[None, :] - 2.0 * G
            np.maximum(D, 0.0, out=D)
            scale = None  # each row's largest squared distance
        else:
            D = 1.0 - G
            D[norms[rows] == 0] = 1.0
            D[:, norms == 0] = 1.0
            scale = 1.0
        D[np.arange(rows.size), rows] = np.inf
        ind[rows] = kth_nearest(D, k, rtol, scale)
    return _pair_distances(X, Z, ind, metric, norms if metric == "cosine" else None), ind


def _pair_distances(X, Z, ind, metric, norms) -> np.ndarray:
    """Distances of the pairs (i, ind[i, j]) from the differences of the rows."""
    m, k = ind.shape
    out = np.empty((m, k))
    step = max(1, _BLOCK_ELEMENTS // max(1, k * X.shape[1]))
    for s in range(0, m, step):
        rows = slice(s, min(s + step, m))
        if metric == "euclidean":
            diff = X[ind[rows]] - X[rows, None, :]
            out[rows] = np.sqrt(np.einsum("ijk,ijk->ij", diff, diff))
        else:
            cos = np.einsum("ik,ijk->ij", Z[rows], Z[ind[rows]])
            out[rows] = np.clip(1.0 - cos, 0.0, 2.0)
    if metric == "cosine":
        out[(norms == 0)[:, None] | (norms[ind] == 0)] = 1.0
    return out
