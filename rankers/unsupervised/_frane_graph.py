"""FRANe's feature pairs, filed once under their thresholds, and the graphs cut from them.

The work of :class:`~rankers.unsupervised.frane.FRANeRanker` in bounded memory: the
dissimilarities of all pairs are computed tile by tile (one matrix product per block of
features, never the dense ``n x n`` matrix), every pair is filed once under the first
threshold whose graph holds it (one byte or two a pair), and per threshold only counts and
the nodes' weighted degrees are kept. The edges themselves are gathered only for the
graphs whose PageRank is computed; :func:`rqh_upper_bound` rules the others out, and
the pairs that no graph still to be scored holds are dropped (:meth:`FiledPairs.shrink`),
so that on correlated data, whose dense graphs must be scored, the condensed pairs do not
stay in memory beside those graphs' edges.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import pdist

from rankers.preprocessing import column_norms, minmax_scale

__all__ = ["EdgeSet", "FiledPairs", "dissimilarities", "rqh_upper_bound", "second_largest"]

# entries of the Gram tile (block of rows x all later columns) computed at once: 64 MB
TILE = 2**23
# pairs handled at once when filing or gathering: ~2M (a few tens of MB of temporaries)
CHUNK = 2**21


def dissimilarities(X: np.ndarray, similarity: str, scaling: str) -> np.ndarray:
    """Condensed dissimilarities between the columns of ``X`` (pairs j < k, row-major).

    The correlations are computed a block of rows of the upper triangle at a time (one
    GEMM per tile), so only the condensed vector (8 bytes a pair) is held, never the
    ``n x n`` Gram matrix and its copies. With ``"abs_correlation"``, a pair whose
    ``|r|`` rounds past 1 comes out a rounding below 0 rather than clipped to 0 (two
    passes over each tile instead of four): FRANe sets every dissimilarity at or below
    ``1e-12 * d_max`` to 0 (``frane._zero_tiny``), which makes it the 0 clipping gave.
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
            if similarity == "abs_correlation":
                np.abs(tile, out=tile)
            else:
                np.clip(tile, -1.0, 1.0, out=tile)
            for j in range(a, b):  # 1 - r, written straight into the condensed vector
                np.subtract(1.0, tile[j - a, j - a + 1 :], out=d[starts[j] : starts[j + 1]])
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


def chunks(n: int, starts: np.ndarray | None = None):
    """Row ranges ``(a, b)`` of the pairs, ~``CHUNK`` pairs each, with their bounds.

    ``starts[j]`` is the position of row ``j``'s first pair (``starts[n]`` the total):
    :func:`pair_starts` for the condensed vector, the default.
    """
    starts = pair_starts(n) if starts is None else starts
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


class FiledPairs:
    """Every pair filed under the first threshold whose graph holds it.

    Graph ``t`` holds the pairs ``j < k`` with ``d_jk <= thresholds[t]`` (within the tie
    tolerance ``tol``) and a positive weight ``d_max - d_jk``. ``first`` is that index per
    pair (``T``, the number of thresholds, for a pair no graph holds), in the smallest
    unsigned type; ``counts[t]`` is the number of edges of graphs ``0..t`` (graph ``t``'s
    edges) and ``degrees[:, t]`` the weighted degrees of graph ``t``'s nodes.

    The pairs are held row by row (row ``j``: the pairs ``(j, k)``, ``k > j``, in
    ascending ``k``; ``starts[j]`` is the position of its first pair): at first all of
    them in the condensed (``pdist``) order, ``d`` the array the caller passed, filed in
    place; after :meth:`shrink`, only those some graph still to be scored holds, with
    their columns in ``cols``.
    """

    def __init__(self, d: np.ndarray, d_max: float, thresholds: np.ndarray, n: int, tol: float):
        T = thresholds.size
        self.n, self.T, self.d, self.d_max = n, T, d, d_max
        self.starts = pair_starts(n)
        self.cols: np.ndarray | None = None  # condensed: a pair's column follows from its place
        self.first = np.empty(d.size, dtype=np.min_scalar_type(T))
        counts = np.zeros(T, dtype=np.int64)
        degrees = np.zeros(n * T)
        index = _ThresholdIndex(thresholds, d_max)
        node_bin = np.arange(n, dtype=np.int64) * T  # node k's bin at threshold 0
        starts = self.starts
        for a, b, lo, hi in chunks(n):
            dc = d[lo:hi]
            f = index(dc, tol)
            f[dc >= d_max - tol] = T
            self.first[lo:hi] = f
            f = f.astype(np.int64)
            held = f < T
            w = d_max - dc
            if not held.all():  # the pairs at d_max, in no graph: weight 0 in a bin of theirs
                if not held.any():
                    continue
                unheld = ~held
                w[unheld] = 0.0  # adds +0.0 to a sum of positive weights: no change
                f[unheld] = T - 1
                counts[T - 1] -= np.count_nonzero(unheld)
            # each pair's bin in its row node's degrees (the chunk's rows a..b-1: one short
            # stretch of bins) and in its column node's, row by row: row j's pairs are its
            # columns j+1..n-1 in order, so neither needs the pairs' rows and columns
            row_key = np.empty(hi - lo, dtype=np.int64)
            col_key = np.empty(hi - lo, dtype=np.int64)
            for j in range(a, b):
                s, e = starts[j] - lo, starts[j + 1] - lo
                np.add(f[s:e], (j - a) * T, out=row_key[s:e])
                np.add(f[s:e], node_bin[j + 1 :], out=col_key[s:e])
            counts += np.bincount(f, minlength=T)
            degrees[a * T : b * T] += np.bincount(row_key, w, (b - a) * T)
            degrees += np.bincount(col_key, w, n * T)
        self.counts = np.cumsum(counts)
        self.degrees = np.cumsum(degrees.reshape(n, T), axis=1)

    @property
    def size(self) -> int:
        """The number of pairs held."""
        return int(self.first.size)

    @property
    def nbytes(self) -> int:
        """Bytes of the pairs held."""
        cols = 0 if self.cols is None else self.cols.nbytes
        return int(self.d.nbytes + self.first.nbytes + cols + self.starts.nbytes)

    def _rows_cols(self, a: int, b: int, lo: int, keep: np.ndarray):
        """Rows and columns of the held pairs at positions ``lo + keep`` (rows ``a..b-1``)."""
        at = keep + lo
        rows = np.searchsorted(self.starts[a : b + 1], at, side="right") - 1 + a
        if self.cols is not None:
            return rows, self.cols[at]
        return rows, (at - self.starts[rows] + rows + 1).astype(np.int32)

    def shrink(self, last: int) -> None:
        """Keep only the pairs of graphs ``0..last``, compacted in place.

        The arrays are cut to the pairs kept (``ndarray.resize``), so that the memory of
        the others returns to the system; what is kept keeps its order.
        """
        kept = int(self.counts[last])
        if kept == self.size:
            return
        cols = np.empty(kept, dtype=np.int32) if self.cols is None else self.cols
        per_row = np.zeros(self.n, dtype=np.int64)
        write = 0
        for a, b, lo, hi in chunks(self.n, self.starts):
            keep = np.flatnonzero(self.first[lo:hi] <= last)
            k = keep.size
            if k == 0:
                continue
            rows, c = self._rows_cols(a, b, lo, keep)
            # write <= lo: the kept values are read (copied by the fancy index) before
            # anything at or after them is overwritten
            cols[write : write + k] = c
            self.d[write : write + k] = self.d[lo + keep]
            self.first[write : write + k] = self.first[lo + keep]
            per_row[a:b] += np.bincount(rows - a, minlength=b - a)
            write += k
        self.d, self.first, self.cols = _cut(self.d, kept), _cut(self.first, kept), _cut(cols, kept)
        self.starts = np.concatenate([[0], np.cumsum(per_row)])

    def edges(self, last: int) -> EdgeSet:
        """The edges of graphs ``0..last``, each with the first graph holding it."""
        size = int(self.counts[last])
        indices = np.empty(size, dtype=np.int32)
        weights = np.empty(size)
        first = np.empty(size, dtype=self.first.dtype)
        per_row = np.zeros(self.n, dtype=np.int64)
        write = 0
        for a, b, lo, hi in chunks(self.n, self.starts):
            keep = np.flatnonzero(self.first[lo:hi] <= last)
            k = keep.size
            if k == 0:
                continue
            rows, indices[write : write + k] = self._rows_cols(a, b, lo, keep)
            np.subtract(self.d_max, self.d[lo + keep], out=weights[write : write + k])
            first[write : write + k] = self.first[lo + keep]
            per_row[a:b] += np.bincount(rows - a, minlength=b - a)
            write += k
        return EdgeSet(np.concatenate([[0], np.cumsum(per_row)]), indices, weights, first, last)


def _cut(a: np.ndarray, size: int) -> np.ndarray:
    """The first ``size`` values of ``a``, its memory beyond them released."""
    if a.flags.owndata and a.flags.c_contiguous and a.base is None:
        a.resize(size, refcheck=False)
        return a
    return a[:size].copy()


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
        # one table: the answer where the bucket holds no threshold, else UNSURE
        self.unsure = thresholds.size + 1
        dtype = np.min_scalar_type(self.unsure)
        self.table = np.where(self.lo == self.hi, self.lo, self.unsure).astype(dtype)

    def __call__(self, v: np.ndarray, shift: float = 0.0) -> np.ndarray:
        """The answers for ``v - shift`` (``shift`` subtracted only where a search needs it)."""
        key = v * self.scale
        if shift:
            key -= shift * self.scale  # a bucket is wide beside this rounding (see slack)
        key = key.astype(np.int32)
        np.clip(key, 0, self._BUCKETS - 1, out=key)
        f = self.table[key]
        unsure = np.flatnonzero(f == self.unsure)
        f[unsure] = np.searchsorted(self.thresholds, v[unsure] - shift, side="left")
        return f


class EdgeSet:
    """The edges of graphs ``0..last``, as the upper triangle of their adjacency (CSR).

    Row ``j`` lists the edges ``(j, k)``, ``k > j``, in ascending ``k``, each with its
    weight and the first graph holding it. A graph ``t <= last`` is this matrix with the
    weights of the edges it does not hold set to zero (an explicit zero adds nothing to
    a product), and its symmetric adjacency acts as ``U v + U^T v``: 21 bytes an edge
    while a graph is scored (index, weight, first graph, and the weights of the graph).
    """

    def __init__(
        self,
        indptr: np.ndarray,
        indices: np.ndarray,
        weights: np.ndarray,
        first: np.ndarray,
        last: int,
    ):
        n = indptr.size - 1
        small = indices.size < np.iinfo(np.int32).max
        self.indptr = indptr.astype(np.int32 if small else np.int64)
        self.indices, self.weights, self.first, self.last, self.n = indices, weights, first, last, n
        self._data: np.ndarray | None = None  # the weights of graph _t
        self._t = -1

    @property
    def size(self) -> int:
        return int(self.indices.size)

    def matrix(self, t: int):
        """The product ``v -> A v`` with graph ``t``'s adjacency, and its weighted degrees.

        The weights of the graph are written into one buffer shared by every graph of the
        set: the product of an earlier graph is no longer valid after this call.
        """
        if self._data is None or t < self._t:
            self._data = np.empty_like(self.weights) if self._data is None else self._data
            np.multiply(self.weights, self.first <= t, out=self._data)
        elif t > self._t:  # only the edges graph t adds to the last one written
            for lo in range(0, self.size, CHUNK):
                f = self.first[lo : lo + CHUNK]
                added = np.flatnonzero((f > self._t) & (f <= t))
                added += lo
                self._data[added] = self.weights[added]
        self._t = t
        upper = sp.csr_matrix((self._data, self.indices, self.indptr), shape=(self.n, self.n))
        lower = upper.T  # the same arrays, read as CSC

        def product(v: np.ndarray) -> np.ndarray:
            return upper @ v + lower @ v

        return product, product(np.ones(self.n))

    def adjacency(self, t: int, labels: np.ndarray, n_all: int) -> sp.csr_matrix:
        """Symmetric adjacency matrix of graph ``t``, its nodes renamed by ``labels``."""
        held = np.flatnonzero(self.first <= t)
        rows = np.repeat(np.arange(self.n, dtype=np.int64), np.diff(self.indptr))[held]
        rows, cols, w = labels[rows], labels[self.indices[held]], self.weights[held]
        return sp.csr_matrix(
            (np.concatenate([w, w]), (np.concatenate([rows, cols]), np.concatenate([cols, rows]))),
            shape=(n_all, n_all),
        )


def second_largest(a: np.ndarray) -> float:
    """The second largest entry of ``a`` (the largest again if it occurs twice; ``a.size >= 2``).

    ``np.partition(a, a.size - 2)[a.size - 2]``, in three passes without a copy: this is
    asked once per graph and once per step of a solve.
    """
    top = int(np.argmax(a))
    return float(max(a[:top].max(initial=-np.inf), a[top + 1 :].max(initial=-np.inf)))


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
    top2, low2 = second_largest(g), -second_largest(-g)
    bound = (1.0 + c * top2 / positive.min()) / (1.0 + c * low2 / g.max())
    return float(bound) * (1.0 + 1e-9)  # the degrees' rounding
