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

__all__ = [
    "AUTO_COMPONENTS",
    "EXACT_MAX_SAMPLES",
    "METRICS",
    "approximate_neighbors",
    "choose_components",
    "edge_sq_lengths",
    "nearest_neighbors",
    "search_space",
]

METRICS = ("euclidean", "cosine")
#: with ``knn_components=None``, a kNN-graph ranker searches the exact graph up to this many
#: samples and above it the first ``AUTO_COMPONENTS`` principal components (approximate),
#: with a warning: the exact search costs samples² x features
#: (benchmarks/scale/bench_knn_samples.py; results/single_cell/knn_samples.md)
EXACT_MAX_SAMPLES = 10_000
AUTO_COMPONENTS = 50
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


def search_space(
    X, n_components: int | None, *, what: str = "the graph", metric: str = "euclidean"
):
    """Where a kNN-graph ranker looks for neighbours: ``X`` itself, or its first
    ``n_components`` principal components (an approximate, much cheaper search).

    With ``n_components=None`` a sparse ``X`` is made dense (after a memory check: the
    exact search needs every coordinate). Otherwise the samples' coordinates on the
    principal axes of ``X`` (scikit-learn's PCA, centred; sparse ``X`` stays sparse:
    ``svd_solver="covariance_eigh"`` up to 4,096 features, which needs no random start,
    else ``"arpack"`` from a fixed start). The distances between samples in that
    space approximate those in ``X``; the graph found there may differ from the exact one
    in a few of each sample's neighbours (``benchmarks/scale/bench_single_cell.py`` measures the
    agreement), and, unlike the exact search, its near-ties can fall differently under
    another BLAS kernel.

    With ``metric="cosine"`` the components are those of the rows scaled to unit length
    (zero rows stay zero): between unit rows the Euclidean distance is
    ``sqrt(2 * cosine distance)``, so a Euclidean search in that space approximates the
    cosine neighbours, which the centred components of the raw rows would not.

    Returns
    -------
    ndarray of shape (n_samples, n_features or n_components)
    """
    import scipy.sparse as sp

    from rankers.memory import check_memory

    m, n = X.shape
    if n_components is None:
        if not sp.issparse(X):
            return X
        check_memory(
            8.0 * m * n,
            f"the exact neighbour search of {what} ({m} x {n} made dense)",
            "knn_components (e.g. 50: neighbours among the first principal components)",
        )
        return X.toarray()
    from sklearn.decomposition import PCA

    if metric == "cosine":
        from sklearn.preprocessing import normalize

        X = normalize(X)  # a copy: the caller's rows are left as they were
    c = int(min(n_components, n, m - 1))
    solver = "covariance_eigh" if n <= 4096 else "arpack"
    if solver == "arpack":
        c = min(c, min(m, n) - 1)
    pca = PCA(n_components=c, svd_solver=solver, random_state=0)
    return np.ascontiguousarray(pca.fit_transform(X), dtype=np.float64)


def approximate_neighbors(space: np.ndarray, k: int, metric: str = "euclidean") -> np.ndarray:
    """The ``k`` nearest other samples of every sample in ``space`` (e.g. principal
    components), by scikit-learn's brute-force search (its compiled k-smallest reduction,
    several times faster than :func:`nearest_neighbors` on many samples).

    For the approximate graphs of ``knn_components`` only: samples at equal distance are
    taken in scikit-learn's order, which may depend on the last bits of the distances,
    so unlike :func:`nearest_neighbors` the answer may differ between machines on ties.

    Returns
    -------
    ndarray of shape (n_samples, k)
    """
    from sklearn.neighbors import NearestNeighbors

    m = space.shape[0]
    extra = min(k + 1, m)  # the sample itself, and a duplicate that may come before it
    ind = NearestNeighbors(n_neighbors=extra, algorithm="brute", metric=metric).fit(space)
    ind = ind.kneighbors(space, return_distance=False)
    own = ind == np.arange(m)[:, None]
    # drop each sample itself (wherever it came), keep the first k others
    order = np.argsort(own, axis=1, kind="stable")
    return np.take_along_axis(ind, order, axis=1)[:, :k]


def edge_sq_lengths(X, r: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Squared Euclidean lengths ``|X[r] - X[c]|^2`` of the edges (r, c), dense or sparse,
    from the differences (no cancellation), in blocks of edges."""
    import scipy.sparse as sp

    out = np.empty(r.size)
    n = X.shape[1]
    if sp.issparse(X):
        X = X.tocsr()
        step = max(1, (1 << 22) // max(1, n // 8))
        for s in range(0, r.size, step):
            diff = X[r[s : s + step]] - X[c[s : s + step]]
            out[s : s + step] = np.asarray(diff.multiply(diff).sum(axis=1)).ravel()
        return out
    step = max(1, _BLOCK_ELEMENTS // max(1, n))
    for s in range(0, r.size, step):
        diff = X[r[s : s + step]] - X[c[s : s + step]]
        out[s : s + step] = np.einsum("ij,ij->i", diff, diff)
    return out


def choose_components(
    knn_components: int | None,
    m: int,
    n: int,
    who: str,
    *,
    exact_max: int | None = None,
    components: int | None = None,
    stacklevel: int = 4,
) -> int | None:
    """The principal components a kNN-graph ranker searches its neighbours among (None:
    the exact search): ``knn_components`` when given; for None, the exact search up to
    ``exact_max`` samples and ``components`` above, said in a ``UserWarning`` that gives
    the exact search's cost and the option (defaults: :data:`EXACT_MAX_SAMPLES` and
    :data:`AUTO_COMPONENTS`, read at the call)."""
    import warnings

    exact_max = EXACT_MAX_SAMPLES if exact_max is None else exact_max
    components = AUTO_COMPONENTS if components is None else components

    if knn_components is not None or m <= exact_max:
        return knn_components
    warnings.warn(
        f"{who} on {m} samples x {n} features: the exact neighbour search costs samples² x "
        f"features (about {m * m * n / 2:.1e} multiply-adds), so the graph is searched "
        f"among the first {components} principal components (approximate: a few of each "
        "sample's neighbours may differ). Pass knn_components explicitly to choose (an "
        "int: that many components; knn_components=n_features: the exact distances, at "
        "the exact cost)",
        UserWarning,
        stacklevel=stacklevel,
    )
    return components
