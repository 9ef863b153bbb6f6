"""FRANe's feature pairs, filed once under their thresholds, and the graphs cut from them.

The work of :class:`~rankers.unsupervised.frane.FRANeRanker` in bounded memory: the
dissimilarities of all pairs are computed tile by tile (one matrix product per block of
features, never the dense ``n x n`` matrix), every pair is filed once under the first
threshold whose graph holds it (one byte or two a pair), and per threshold only counts and
the nodes' weighted degrees are kept. The edges themselves are gathered only for the
graphs whose PageRank is computed; :func:`rqh_upper_bound` rules the others out.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import pdist

from rankers.preprocessing import column_norms, minmax_scale

__all__ = ["EdgeList", "FiledPairs", "dissimilarities", "rqh_upper_bound"]

# entries of the Gram tile (block of rows x all later columns) computed at once: 64 MB
TILE = 2**23
# pairs handled at once when filing or gathering: ~4M (a few tens of MB of temporaries)
CHUNK = 2**22


def dissimilarities(X: np.ndarray, similarity: str, scaling: str) -> np.ndarray:
    """Condensed dissimilarities between the columns of ``X`` (pairs j < k, row-major).

    The correlations are computed a block of rows of the upper triangle at a time (one
    GEMM per tile), so only the condensed vector (8 bytes a pair) is held, never the
    ``n x n`` Gram matrix and its copies.
    """
    if similarity in ("abs_correlation", "correlation"):
        Z = X - X.mean(axis=0)
        Z /= column_norms(Z)
        n = Z.shape[1]
        d = np.empty(n * (n - 1) // 2)
        starts = pair_starts(n)
        block = max(1, TILE // max(n, 1))
        for a in range(0, n - 1, block):
            b = min(a + block, n - 1)
            tile = Z[:, a:b].T @ Z[:, a:]  # rows a..b-1, columns a..n-1
            np.clip(tile, -1.0, 1.0, out=tile)
            if similarity == "abs_correlation":
                np.abs(tile, out=tile)
            np.subtract(1.0, tile, out=tile)
            for j in range(a, b):
                d[starts[j] : starts[j + 1]] = tile[j - a, j - a + 1 :]
        return d
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


def pair_starts(n: int) -> np.ndarray:
    """Condensed position of pair ``(j, j + 1)`` for each row ``j`` (and the total at ``n``)."""
    counts = np.arange(n - 1, -1, -1, dtype=np.int64)
    return np.concatenate([[0], np.cumsum(counts)])


def chunks(n: int):
    """Row ranges ``(a, b)`` of the condensed vector, ~``CHUNK`` pairs each, with bounds."""
    starts = pair_starts(n)
    a = 0
    while a < n - 1:
        b = int(np.searchsorted(starts, starts[a] + CHUNK, side="right")) - 1
        b = min(max(b, a + 1), n - 1)
        yield a, b, int(starts[a]), int(starts[b])
        a = b


def chunk_pairs(n: int, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows and columns of the condensed pairs of rows ``a..b-1``, in condensed order."""
    per_row = np.arange(n - 1 - a, n - 1 - b, -1)
    rows = np.repeat(np.arange(a, b, dtype=np.int32), per_row)
    offsets = np.arange(rows.size) - np.repeat(np.cumsum(per_row) - per_row, per_row)
    cols = (rows + 1 + offsets).astype(np.int32)
    return rows, cols


def condensed_pairs(n: int, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row and column (j < k) of condensed (``pdist``-order) pair indices."""
    starts = pair_starts(n)
    rows = np.searchsorted(starts, index, side="right") - 1
    cols = index - starts[rows] + rows + 1
    return rows.astype(np.int32), cols.astype(np.int32)


class FiledPairs:
    """Every pair filed under the first threshold whose graph holds it.

    Graph ``t`` holds the pairs ``j < k`` with ``d_jk <= thresholds[t]`` (within the tie
    tolerance ``tol``) and a positive weight ``d_max - d_jk``. ``first`` is that index per
    pair (``T``, the number of thresholds, for a pair no graph holds), in the smallest
    unsigned type; ``counts[t]`` is the number of edges of graph ``t`` and
    ``degrees[:, t]`` the weighted degrees of its nodes.
    """

    def __init__(self, d: np.ndarray, d_max: float, thresholds: np.ndarray, n: int, tol: float):
        T = thresholds.size
        self.n, self.T, self.d, self.d_max = n, T, d, d_max
        self.first = np.empty(d.size, dtype=np.min_scalar_type(T))
        counts = np.zeros(T, dtype=np.int64)
        degrees = np.zeros(n * T)
        index = _ThresholdIndex(thresholds, d_max)
        for a, b, lo, hi in chunks(n):
            dc = d[lo:hi]
            f = index(dc - tol)
            f[dc >= d_max - tol] = T
            self.first[lo:hi] = f
            ok = np.flatnonzero(f < T)
            if ok.size == 0:
                continue
            f = f[ok]
            counts += np.bincount(f, minlength=T)
            rows, cols = chunk_pairs(n, a, b)
            w = d_max - dc[ok]
            f = f.astype(np.int64)
            # the chunk's rows are a..b-1: their bins are one short contiguous stretch
            lo_bin = a * T
            key = rows[ok].astype(np.int64) * T - lo_bin + f
            degrees[lo_bin : b * T] += np.bincount(key, w, (b - a) * T)
            degrees += np.bincount(cols[ok] * np.int64(T) + f, w, n * T)
        self.counts = np.cumsum(counts)
        self.degrees = np.cumsum(degrees.reshape(n, T), axis=1)

    def edges(self, last: int) -> EdgeList:
        """The edges of graphs ``0..last``, ordered so that every graph is a prefix."""
        found = []
        for _, _, lo, hi in chunks(self.n):
            found.append(np.flatnonzero(self.first[lo:hi] <= last) + lo)
        pair = np.concatenate(found) if found else np.empty(0, dtype=np.int64)
        first = self.first[pair]
        pair = pair[np.argsort(first, kind="stable")]
        rows, cols = condensed_pairs(self.n, pair)
        return EdgeList(rows, cols, self.d_max - self.d[pair], self.n)


class _ThresholdIndex:
    """``np.searchsorted(thresholds, v, side="left")`` by a lookup table, exactly.

    ``[0, d_max]`` is cut into ``2^16`` buckets; a value's bucket comes from one multiply.
    Where no threshold falls inside a bucket (widened by far more than the rounding of the
    multiply) the table holds the answer; the few values in the other buckets are
    searched. Four times faster than the binary search over all pairs.
    """

    _BUCKETS = 2**16

    def __init__(self, thresholds: np.ndarray, d_max: float):
        K = self._BUCKETS
        self.thresholds = thresholds
        self.scale = K / d_max if d_max > 0.0 else 0.0
        slack = 1e-12 * max(d_max, np.finfo(float).tiny)
        edges = np.arange(K + 1) / self.scale if d_max > 0.0 else np.zeros(K + 1)
        self.lo = np.searchsorted(thresholds, edges[:-1] - slack, side="left")
        self.hi = np.searchsorted(thresholds, edges[1:] + slack, side="left")
        self.lo[0], self.hi[-1] = 0, thresholds.size  # they also take all below and above
        self.lo = self.lo.astype(np.min_scalar_type(thresholds.size))
        self.hi = self.hi.astype(self.lo.dtype)

    def __call__(self, v: np.ndarray) -> np.ndarray:
        key = (v * self.scale).astype(np.int32)
        np.clip(key, 0, self._BUCKETS - 1, out=key)
        f = self.lo[key]
        unsure = np.flatnonzero(f != self.hi[key])
        f[unsure] = np.searchsorted(self.thresholds, v[unsure], side="left")
        return f


class EdgeList:
    """The edges of the thresholded graphs, ordered so that every graph is a prefix.

    The largest graph is also kept as a symmetric CSR matrix whose rows list their
    entries in edge order: every smaller graph's rows are prefixes of its rows, and its
    CSR matrix is cut out with one gather, without sorting anything per graph.
    """

    def __init__(self, rows: np.ndarray, cols: np.ndarray, weights: np.ndarray, n: int):
        self.rows, self.cols, self.weights, self.n = rows, cols, weights, n
        # entry 2e is edge e seen from its row, entry 2e + 1 from its column; a stable
        # sort by row keeps each row's entries in edge order
        seen_from = np.column_stack([rows, cols]).ravel()
        key = seen_from.astype(np.uint16) if n <= 2**16 else seen_from
        by_row = np.argsort(key, kind="stable")
        self._indices = np.column_stack([cols, rows]).ravel()[by_row]
        del seen_from, key
        self._data = np.repeat(weights, 2)[by_row]
        del by_row
        per_row = np.bincount(rows, minlength=n) + np.bincount(cols, minlength=n)
        self._starts = np.concatenate([[0], np.cumsum(per_row)])

    @property
    def size(self) -> int:
        return self.rows.size

    def matrix(self, size: int) -> tuple[sp.csr_matrix, np.ndarray]:
        """CSR adjacency and weighted degrees of the graph of the first ``size`` edges."""
        rows, cols, w = self.rows[:size], self.cols[:size], self.weights[:size]
        per_row = np.bincount(rows, minlength=self.n) + np.bincount(cols, minlength=self.n)
        indptr = np.concatenate([[0], np.cumsum(per_row)])
        take = np.arange(indptr[-1]) + np.repeat(self._starts[:-1] - indptr[:-1], per_row)
        A = sp.csr_matrix((self._data[take], self._indices[take], indptr), shape=(self.n, self.n))
        deg = np.bincount(rows, w, self.n) + np.bincount(cols, w, self.n)
        return A, deg

    def adjacency(self, size: int, labels: np.ndarray, n_all: int) -> sp.csr_matrix:
        """Symmetric adjacency matrix of a graph, its nodes renamed by ``labels``."""
        rows, cols = labels[self.rows[:size]], labels[self.cols[:size]]
        w = self.weights[:size]
        return sp.csr_matrix(
            (np.concatenate([w, w]), (np.concatenate([rows, cols]), np.concatenate([cols, rows]))),
            shape=(n_all, n_all),
        )


def rqh_upper_bound(degrees: np.ndarray, damping: float) -> float:
    """An upper bound on the RQH of the PageRank of a graph, from its weighted degrees alone.

    PageRank (unnormalised, as :func:`~rankers.unsupervised.frane.pagerank` solves it)
    satisfies ``x_i = 1 + a sum_j w_ij r_j`` with ``r_j = x_j / g_j``, ``a = damping`` and
    ``g`` the weighted degrees; an isolated node has ``x_i = 1``. For a node with edges,
    ``r_i = 1 / g_i + a * (weighted mean of its neighbours' r)``, so at the largest ``r``,
    ``R <= 1 / ((1 - a) g_min)``, and at the smallest, ``r >= 1 / ((1 - a) g_max)``
    (``g_min``, ``g_max``: smallest positive and largest degree). Hence
    ``1 + c g_i / g_max <= x_i <= 1 + c g_i / g_min`` with ``c = a / (1 - a)``: the
    second largest score is at most the second largest upper bound, the second smallest
    at least the second smallest lower bound. On dense graphs, whose degrees are alike,
    the bound is close to 1, far below the RQH of the sparse graphs, and rules them out
    without building them. Infinite (no bound) for fewer than three nodes or no edges.
    """
    g = np.asarray(degrees, dtype=np.float64)
    positive = g[g > 0.0]
    if g.size < 3 or positive.size == 0:
        return float("inf")
    c = damping / (1.0 - damping)
    top2 = np.partition(g, g.size - 2)[g.size - 2]
    low2 = np.partition(g, 1)[1]
    bound = (1.0 + c * top2 / positive.min()) / (1.0 + c * low2 / g.max())
    return float(bound) * (1.0 + 1e-9)  # the degrees' rounding
