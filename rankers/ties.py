"""Near-ties among computed floats, decided the same way on every machine.

A value computed on another CPU or BLAS kernel may differ from ours in its last bits. Any
choice made by comparing such values (an argmax, an order, a threshold, the nearest
neighbours of a sample) then differs too whenever two of them are equal in exact
arithmetic or nearly so: duplicated features, symmetric positions in a graph, two graphs
whose difference lies in another connected component. Every such choice in moweights goes
through this module, which applies one documented rule:

    Two values are **tied** when they differ by at most ``rtol * scale``, where ``scale``
    is the largest absolute value among those compared (or a scale given by the caller),
    and ties are chained: sorted values whose successive gaps are all within the tolerance
    form one group. Tied values are made exactly equal (to their group's mean) and are then
    ordered by a fixed rule, the lower index first.

``rtol`` defaults to :data:`TIE_RTOL` (``1e-9``): a thousand times above the rounding error
of the computations it guards (about ``1e-12`` relative for our direct and conjugate
gradient solvers), far below any difference that carries meaning. A choice still depends on
the last bits when a gap lies within a few ulps of the tolerance itself, which, unlike an
exact tie, no structure of the data produces.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "TIE_RTOL",
    "duplicate_columns",
    "first_max",
    "kth_nearest",
    "order_desc",
    "snap_ties",
    "tie_groups",
    "tied_ranks",
]

#: relative tolerance under which two computed values count as equal
TIE_RTOL = 1e-9


def _tolerance(values: np.ndarray, rtol: float, scale: float | None) -> float:
    if scale is None:
        finite = values[np.isfinite(values)]
        scale = float(np.abs(finite).max()) if finite.size else 0.0
    return float(rtol) * float(scale)


def tie_groups(
    values, rtol: float = TIE_RTOL, scale: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Group near-equal values (the module's rule): their ascending order and group ids.

    Parameters
    ----------
    values : array-like of shape (n,)
        Finite values.
    rtol : float, default=TIE_RTOL
        Relative tolerance.
    scale : float, optional
        Scale the tolerance is relative to; default the largest absolute value.

    Returns
    -------
    order : ndarray of shape (n,)
        Indices sorting ``values`` ascending (stable).
    group : ndarray of shape (n,)
        Group id of ``values[order]``, ascending from 0; one id per run of tied values.
    """
    x = np.asarray(values, dtype=np.float64)
    order = np.argsort(x, kind="stable")
    if x.size == 0:
        return order, np.zeros(0, dtype=np.intp)
    tol = _tolerance(x, rtol, scale)
    gaps = np.diff(x[order]) > tol
    return order, np.concatenate([[0], np.cumsum(gaps, dtype=np.intp)])


def snap_ties(values, rtol: float = TIE_RTOL, scale: float | None = None) -> np.ndarray:
    """A copy of ``values`` in which every group of tied values shares one value, its mean.

    After snapping, exact comparisons (``argsort``, ``rankdata``, ``==``) see the near-ties
    as ties on every machine. A group of one keeps its value bit for bit.

    Examples
    --------
    >>> snap_ties([1.0, 0.5, 0.5 + 1e-15, 0.2]).tolist()
    [1.0, 0.5000000000000004, 0.5000000000000004, 0.2]
    """
    x = np.array(values, dtype=np.float64)
    if x.size < 2:
        return x
    order, group = tie_groups(x, rtol, scale)
    sizes = np.bincount(group)
    if sizes.max() == 1:
        return x
    xs = x[order]
    means = np.bincount(group, weights=xs) / sizes
    single = sizes[group] == 1
    x[order] = np.where(single, xs, means[group])
    return x


def order_desc(values, rtol: float = TIE_RTOL, scale: float | None = None) -> np.ndarray:
    """Indices of ``values``, largest first; tied values (the module's rule) by lower index.

    Examples
    --------
    >>> order_desc([0.3, 0.7, 0.7 - 1e-14, 0.1]).tolist()
    [1, 2, 0, 3]
    """
    x = np.asarray(values, dtype=np.float64)
    order, group = tie_groups(x, rtol, scale)
    rank_of = np.empty(x.size, dtype=np.intp)
    rank_of[order] = group
    return np.lexsort((np.arange(x.size), -rank_of))


def first_max(values, rtol: float = TIE_RTOL, scale: float | None = None) -> int:
    """Index of the first value tied with the largest (NaNs ignored); -1 if all are NaN.

    "Tied" is the module's rule without chaining: within ``rtol * scale`` of the maximum.

    Examples
    --------
    >>> first_max([1.0, 3.0, 3.0 + 1e-14, 2.0])
    1
    """
    x = np.asarray(values, dtype=np.float64)
    ok = ~np.isnan(x)
    if not ok.any():
        return -1
    best = float(x[ok].max())
    tol = _tolerance(x[ok], rtol, scale)
    return int(np.flatnonzero(ok & (x >= best - tol))[0])


def kth_nearest(
    D: np.ndarray, k: int, rtol: float = TIE_RTOL, scale: np.ndarray | float | None = None
) -> np.ndarray:
    """Columns of the ``k`` smallest entries of each row of ``D``, nearest first.

    Distances within ``rtol * scale`` of each other are tied (the module's rule, per row)
    and tied columns are taken by lower index, so the neighbours of a sample do not depend
    on the last bits of its distances (duplicated samples, points on a grid, symmetric
    configurations). ``scale`` is per row (array of shape (n_rows,)) or one number; default
    each row's largest finite distance.

    Parameters
    ----------
    D : ndarray of shape (n_rows, n_cols)
        Distances (``inf`` for excluded pairs, e.g. a sample to itself).
    k : int
        Neighbours per row, ``1 <= k <= n_cols``.

    Returns
    -------
    ndarray of shape (n_rows, k)
    """
    D = np.asarray(D, dtype=np.float64)
    n_rows, n_cols = D.shape
    if n_rows == 0:
        return np.zeros((0, k), dtype=np.intp)
    if scale is None:
        finite = np.where(np.isfinite(D), np.abs(D), 0.0)
        scale = finite.max(axis=1)
    tol = float(rtol) * np.broadcast_to(np.asarray(scale, dtype=np.float64), (n_rows,))
    # candidates: every column within the tolerance of the k-th smallest distance
    if k == n_cols:
        kth = D.max(axis=1)
    elif k == 1:
        kth = D.min(axis=1)
    else:
        kth = np.partition(D, k - 1, axis=1)[:, k - 1]
    candidates = (kth + tol)[:, None] >= D
    counts = candidates.sum(axis=1)
    out = np.empty((n_rows, k), dtype=np.intp)
    # rows without a tie across the boundary (nearly all): their k smallest
    simple = np.flatnonzero(counts == k)
    if simple.size:
        Ds = D[simple]
        if k == 1:
            cols = Ds.argmin(axis=1)[:, None]
        elif k == n_cols:
            cols = np.broadcast_to(np.arange(n_cols), Ds.shape)
        else:
            cols = np.argpartition(Ds, k - 1, axis=1)[:, :k]
        cols = np.sort(cols, axis=1)  # ascending columns, as the tie rule needs
        vals = np.take_along_axis(Ds, cols, axis=1)
        out[simple] = _first_by_group(vals, cols, tol[simple], k, n_cols)
    # rows with more candidates than k: every candidate, row by row, columns ascending
    tied = np.flatnonzero(counts > k)
    if tied.size:
        r, c = np.nonzero(candidates[tied])
        width = int(counts[tied].max())
        per = counts[tied]
        pos = np.arange(r.size) - np.repeat(np.cumsum(per) - per, per)
        cols = np.full((tied.size, width), n_cols, dtype=np.intp)
        cols[r, pos] = c
        vals = np.full((tied.size, width), np.inf)
        vals[r, pos] = D[tied[r], c]
        out[tied] = _first_by_group(vals, cols, tol[tied], k, n_cols)
    return out


def _first_by_group(vals, cols, tol, k: int, n_cols: int) -> np.ndarray:
    """Of each row's candidates (columns ascending, ``inf`` padding), the first ``k`` by
    (tie group of the value, column)."""
    n_rows = vals.shape[0]
    by_value = np.argsort(vals, axis=1, kind="stable")
    sv = np.take_along_axis(vals, by_value, axis=1)
    with np.errstate(invalid="ignore"):  # inf - inf: padding always starts a new group
        gaps = np.diff(sv, axis=1) > tol[:, None]
    gaps |= ~np.isfinite(sv[:, 1:])
    group = np.concatenate([np.zeros((n_rows, 1), dtype=np.intp), np.cumsum(gaps, axis=1)], axis=1)
    group_of = np.empty_like(group)
    np.put_along_axis(group_of, by_value, group, axis=1)
    key = group_of * (n_cols + 1) + cols
    pick = np.argsort(key, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(cols, pick, axis=1)


def duplicate_columns(X: np.ndarray, rtol: float = TIE_RTOL) -> np.ndarray:
    """For every column of ``X``, the lowest index of a column equal to it within tolerance.

    Columns ``i`` and ``j`` are duplicates when ``max |X[:, i] - X[:, j]|`` is at most
    ``rtol`` times the largest absolute value of ``X``. Candidates are found in
    ``O(n_samples n_features + n_features log n_features)`` through one random projection
    (with a fixed seed: the answer does not depend on it), then checked entry by entry.

    Returns
    -------
    ndarray of shape (n_features,)
        ``rep[j] == j`` for the first column of every group of duplicates (and for every
        column without one), else the index of that first column.

    Examples
    --------
    >>> X = np.array([[1.0, 2.0, 1.0], [3.0, 4.0, 3.0 + 1e-15]])
    >>> duplicate_columns(X).tolist()
    [0, 1, 0]
    """
    X = np.asarray(X, dtype=np.float64)
    m, n = X.shape
    rep = np.arange(n)
    if n < 2 or m == 0:
        return rep
    tol = rtol * float(np.abs(X).max())
    r = np.random.default_rng(0).standard_normal(m)
    p = X.T @ r
    order = np.argsort(p, kind="stable")
    # duplicates project within sum|r| * tol of each other: neighbours in sorted order
    near = np.diff(p[order]) <= tol * float(np.abs(r).sum())
    if not near.any():
        return rep
    for start, stop in _runs(near):
        members = np.sort(order[start:stop])
        left = members
        while left.size > 1:
            first, rest = left[0], left[1:]
            same = np.abs(X[:, rest] - X[:, [first]]).max(axis=0) <= tol
            rep[rest[same]] = first
            left = rest[~same]
    return rep


def _runs(near: np.ndarray):
    """(start, stop) of the runs of sorted positions joined by ``near`` gaps."""
    edges = np.diff(np.concatenate([[0], near.astype(np.int8), [0]]))
    starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return zip(starts.tolist(), (stops + 1).tolist(), strict=True)


def tied_ranks(X, rtol: float = TIE_RTOL) -> tuple[np.ndarray, np.ndarray]:
    """Ranks of every column of ``X``, near-equal values (the module's rule) tied.

    Like ``scipy.stats.rankdata(X, axis=0, method=...)`` for ``"dense"`` and
    ``"average"`` at once, except that values within ``rtol`` times the column's range
    (``max - min``) of each other (chained) count as equal. The range, not the largest
    value, sets the scale: the ranks of a column are then unchanged by any affine map of
    it (a shift or a change of units).

    Returns
    -------
    dense : ndarray of int64, shape like ``X``
        1 for the smallest group of a column, 2 for the next, ...
    average : ndarray of float64, shape like ``X``
        1-based ranks, a group sharing the mean of the positions it spans.

    Examples
    --------
    >>> dense, mid = tied_ranks(np.array([[0.3], [0.1 + 0.2], [0.1]]))
    >>> dense.ravel().tolist(), mid.ravel().tolist()
    ([2, 2, 1], [2.5, 2.5, 1.0])
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        dense, mid = tied_ranks(X[:, None], rtol)
        return dense[:, 0], mid[:, 0]
    m, n = X.shape
    order = np.argsort(X, axis=0, kind="stable")
    xs = np.take_along_axis(X, order, axis=0)
    tol = rtol * (xs[-1] - xs[0]) if m else np.zeros(n)
    new = np.ones((m, n), dtype=bool)
    new[1:] = np.diff(xs, axis=0) > tol
    group = np.cumsum(new, axis=0)  # 1-based group of each sorted position
    # positions (1-based) spanned by each group: first and last position of its run
    pos = np.arange(1, m + 1, dtype=np.float64)[:, None]
    first = np.maximum.accumulate(np.where(new, pos, 0.0), axis=0)
    end = np.ones((m, n), dtype=bool)
    end[:-1] = new[1:]
    last = np.flip(np.minimum.accumulate(np.flip(np.where(end, pos, np.inf), 0), axis=0), 0)
    dense = np.empty((m, n), dtype=np.int64)
    mid = np.empty((m, n))
    np.put_along_axis(dense, order, group, axis=0)
    np.put_along_axis(mid, order, (first + last) / 2.0, axis=0)
    return dense, mid
