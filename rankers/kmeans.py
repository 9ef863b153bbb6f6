"""k-means whose answer does not depend on the last bits of its distances.

NDFS starts from a k-means partition of the samples. scikit-learn's :class:`~sklearn.
cluster.KMeans` assigns a sample equidistant from two centres (frequent on discrete data:
points on a grid, duplicated samples) by distances computed with the machine's BLAS, and
stops on a tolerance of the centres' shift, so another machine can start NDFS from another
partition. This Lloyd iteration decides those choices by the rule of :mod:`rankers.ties`:
a sample goes to the nearest centre, centres within ``1e-9`` (relative to the sample's
farthest centre) of the nearest are tied and the lower-numbered one wins; it stops when no
sample changes cluster (a discrete test); among restarts, inertias within ``1e-9`` of the
lowest are tied and the first restart wins. Seeding is k-means++ (Arthur & Vassilvitskii,
2007), drawn from ``random_state``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from rankers.ties import TIE_RTOL, first_max, kth_nearest

__all__ = ["kmeans_labels"]


def kmeans_labels(
    X: np.ndarray, n_clusters: int, random_state, n_init: int = 10, max_iter: int = 300
) -> np.ndarray:
    """Cluster labels (0 .. n_clusters - 1) of the samples: the best of ``n_init`` runs.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    n_clusters : int
        ``1 <= n_clusters <= n_samples``.
    random_state : numpy.random.RandomState
        Draws the k-means++ seeds.
    n_init : int, default=10
        Restarts; the run with the lowest inertia is kept (ties: the first).
    max_iter : int, default=300
        Lloyd iterations per run at most.
    """
    X = np.asarray(X, dtype=np.float64)
    Z = X - X.mean(axis=0)  # squared distances stay comparable to the squared norms
    runs = [_lloyd(Z, n_clusters, random_state, max_iter) for _ in range(n_init)]
    inertia = np.array([r[1] for r in runs])
    return runs[first_max(-inertia, scale=float(np.abs(inertia).max()))][0]


def _sq_distances(Z: np.ndarray, centres: np.ndarray) -> np.ndarray:
    d = (Z * Z).sum(axis=1)[:, None] + (centres * centres).sum(axis=1)[None, :]
    d -= 2.0 * (Z @ centres.T)
    return np.maximum(d, 0.0)


def _seeds(Z: np.ndarray, c: int, rng) -> np.ndarray:
    m = Z.shape[0]
    chosen = [int(rng.randint(m))]
    closest = _sq_distances(Z, Z[chosen])[:, 0]
    for _ in range(1, c):
        total = closest.sum()
        if total <= 0.0:  # fewer distinct points than clusters: any point will do
            pick = int(rng.randint(m))
        else:
            pick = int(np.searchsorted(np.cumsum(closest), rng.uniform() * total, side="right"))
            pick = min(pick, m - 1)
        chosen.append(pick)
        closest = np.minimum(closest, _sq_distances(Z, Z[[pick]])[:, 0])
    return Z[chosen].copy()


def _lloyd(Z: np.ndarray, c: int, rng, max_iter: int) -> tuple[np.ndarray, float]:
    centres = _seeds(Z, c, rng)
    labels = None
    for _ in range(max_iter):
        D = _sq_distances(Z, centres)
        new = kth_nearest(D, 1, TIE_RTOL)[:, 0]
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        counts = np.bincount(labels, minlength=c)
        members = sp.csr_matrix(
            (np.ones(labels.size), (labels, np.arange(labels.size))), (c, labels.size)
        )
        sums = members @ Z
        filled = counts > 0  # an empty cluster keeps its centre
        centres[filled] = sums[filled] / counts[filled, None]
    D = _sq_distances(Z, centres)
    return labels, float(D[np.arange(Z.shape[0]), labels].sum())
