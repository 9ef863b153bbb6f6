"""Near-ties among computed floats, decided the same way on every machine.

A value computed on another CPU or BLAS kernel may differ from ours in its last bits. Any
choice made by comparing such values (an argmax, an order, a threshold, the nearest
neighbours of a sample) then differs too whenever two of them are equal in exact
arithmetic or nearly so: duplicated features, symmetric positions in a graph, two graphs
whose difference lies in another connected component. Every such choice in moweights goes
through this module, which applies one documented rule to the *order* only; no value is
ever changed by it (``scores_``, p-values and every number written to a file are the
method's own):

    Two values ``a`` and ``b`` are **tied** when ``|a - b| <= rtol * max(|a|, |b|)``: the
    tolerance is relative to the two values compared, not to the range of all of them, so
    scores spread over ten decades (raw expression variances) keep their order at every
    scale. Ties **do not chain**: going down the sorted values, a group starts at its
    best value (its leader) and holds the values tied with the leader; the first value that
    is not starts the next group. Inside a group the lower index comes first.

``rtol`` defaults to :data:`TIE_RTOL` (``1e-9``): a thousand times above the rounding error
of the computations it guards (about ``1e-12`` relative for our direct and conjugate
gradient solvers), far below any difference that carries meaning. A choice still depends on
the last bits when a gap lies within a few ulps of the tolerance itself, which, unlike an
exact tie, no structure of the data produces.

Two choices use a scale of their own, because their rounding error is relative to it rather
than to the values compared: distances of nearest-neighbour searches
(:func:`kth_nearest`, computed through ``|a|^2 + |b|^2 - 2 a.b``: the error follows the
norms, so the row's largest distance sets the scale), and the binning of a column of ``X``
(:func:`tied_ranks`: the column's range, so that bins do not move under an affine change of
units).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "TIE_RTOL",
    "average_ranks",
    "duplicate_columns",
    "first_max",
    "kth_nearest",
    "order_desc",
    "ranking_order",
    "tie_groups",
    "tie_threshold",
    "tied_ranks",
]

#: relative tolerance under which two computed values count as equal
TIE_RTOL = 1e-9


def tie_threshold(values, rtol: float = TIE_RTOL) -> np.ndarray:
    """The smallest value tied with each of ``values`` from below (the module's rule).

    ``b <= a`` is tied with ``a`` exactly when ``b >= tie_threshold(a)``: ``a (1 - rtol)``
    for ``a > 0``, ``a / (1 - rtol)`` for ``a < 0`` and ``0`` for ``a == 0`` (zero is tied
    with zero only). The threshold grows with ``a``, which is what makes the groups of
    :func:`tie_groups` well defined.

    Examples
    --------
    >>> tie_threshold([2.0, 0.0]).tolist()
    [1.999999998, 0.0]
    """
    a = np.asarray(values, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.where(a > 0, a * (1.0 - rtol), np.where(a < 0, a / (1.0 - rtol), 0.0))


def ranking_order(scores, constant=None, *, order=None) -> np.ndarray:
    """A ranker's ``ranking_`` from its ``scores_``: best first, near-equal scores tied
    (:func:`tie_groups`) and the tied ones by lower index, the informative features
    before the constant ones inside a group (``constant``: a boolean mask, optional).

    ``order`` is the stable order the scores were already sorted in, when no feature is
    constant (:func:`tie_groups`' hint). Every ranker's fit orders its scores so, and so
    does anything that rebuilds a ranker's order from scores it computed another way.

    Examples
    --------
    >>> ranking_order([0.5, 2.0, 0.0, 0.0], constant=[False, False, True, False]).tolist()
    [1, 0, 3, 2]
    """
    scores = np.asarray(scores, dtype=np.float64)
    constant = None if constant is None else np.asarray(constant, dtype=bool)
    has_constant = constant is not None and constant.any()
    order, group = tie_groups(scores, order=None if has_constant else order)
    if has_constant:  # informative before constant inside a group (a stable sort)
        order = order[np.argsort(2 * group + constant[order], kind="stable")]
    return order


def tie_groups(
    values, rtol: float = TIE_RTOL, *, descending: bool = True, order=None
) -> tuple[np.ndarray, np.ndarray]:
    """Order ``values`` best first and group the near-ties (the module's rule).

    Parameters
    ----------
    values : array-like of shape (n,)
        The values; ``inf`` is tied with ``inf`` only; NaN goes last, each alone.
    rtol : float, default=TIE_RTOL
        Relative tolerance.
    descending : bool, default=True
        Larger is better (scores); ``False`` for smaller is better (errors, ranks).
    order : ndarray of int of shape (n,), optional
        A permutation of ``range(n)`` the caller already sorted ``values`` by (a ranker
        that needed the order for its own numbers): used when it is the stable sort of
        the values, best first, which one comparison of neighbours checks; sorted again
        otherwise. It saves the sort, never changes the answer.

    Returns
    -------
    order : ndarray of shape (n,)
        Indices, best first; inside a group of tied values the lower index first.
    group : ndarray of shape (n,)
        Group of ``values[order]``, non-decreasing from 0: one id per group of tied values.

    Examples
    --------
    >>> order, group = tie_groups([0.3, 1.0, 0.3 + 1e-12, 0.1])
    >>> order.tolist(), group.tolist()
    ([1, 0, 2, 3], [0, 1, 1, 2])
    """
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1:
        x = x.ravel()
    n = x.size
    v = None
    if order is not None and len(order) == n:
        order = np.asarray(order, dtype=np.intp)
        v = x[order]
        if not _sorted_stably(v if descending else -v, order):
            v = None
    if v is None:
        # exact ties by lower index; NaN last
        order = np.argsort(-x if descending else x, kind="stable")
        v = x[order]
    if n < 2:
        return order, np.zeros(n, dtype=np.intp)
    # in "larger is better" terms: v non-increasing, b tied with leader a iff b >= thr(a)
    if not descending:
        np.negative(v, out=v)
    finite = np.isfinite(v)
    with np.errstate(invalid="ignore"):
        # a gap no leader bridges: the next value is below the threshold of the previous,
        # so below the threshold of every value before it (the threshold grows with a);
        # tie_threshold's rule without its temporaries (NaN: a gap either way, see below)
        thr = v[:-1] * (1.0 - rtol)
        below = v[:-1] < 0
        thr[below] = v[:-1][below] / (1.0 - rtol)
        gap = ~(v[1:] >= thr)
        del thr, below
    gap |= ~(finite[1:] & finite[:-1]) & ~(v[1:] == v[:-1])  # inf with inf only; NaN alone
    gap |= np.isnan(v[1:])
    new = np.concatenate([[True], gap])
    if new.all():  # no two neighbours tied: the plain order
        return order, np.arange(n, dtype=np.intp)
    _split_chains(v, new, rtol)
    group = np.cumsum(new, dtype=np.intp) - 1
    # inside a group the lower index first: the stable sort put exact ties so already, so
    # only the groups holding a near-tie out of index order are sorted again
    unsorted = ~new[1:] & (order[1:] < order[:-1])
    if unsorted.any():
        redo = np.zeros(int(group[-1]) + 1, dtype=bool)
        redo[group[1:][unsorted]] = True
        at = np.flatnonzero(redo[group])  # whole groups, each a run of positions
        members = order[at]
        order[at] = members[np.lexsort((members, group[at]))]
    return order, group


def _sorted_stably(v: np.ndarray, order: np.ndarray) -> bool:
    """Whether ``v = values[order]`` is what a stable sort, largest first, gives: no NaN,
    non-increasing, equal neighbours by increasing index."""
    if v.size < 2:
        return True
    with np.errstate(invalid="ignore"):
        if not (v[:-1] >= v[1:]).all():  # out of order, or a NaN
            return False
        equal = np.flatnonzero(v[:-1] == v[1:])
    return bool((order[equal] < order[equal + 1]).all())


def _split_chains(v: np.ndarray, new: np.ndarray, rtol: float) -> None:
    """Start a new group (``new[j] = True``) wherever a chain of near neighbours in the
    non-increasing ``v`` leaves its leader's tolerance: ties do not chain."""
    starts = np.flatnonzero(new)
    stops = np.append(starts[1:], v.size)
    long = stops - starts > 1
    starts, stops = starts[long], stops[long]
    # chains whose last value is tied with their first are one group (nearly all of them)
    wide = v[stops - 1] < tie_threshold(v[starts], rtol)
    for s, e in zip(starts[wide].tolist(), stops[wide].tolist(), strict=True):
        down = -v[s:e]  # non-decreasing
        lead = 0
        while True:
            j = int(np.searchsorted(down, -tie_threshold(v[s + lead], rtol), side="right"))
            if j >= e - s:
                break
            new[s + j] = True
            lead = j


def average_ranks(values, rtol: float = TIE_RTOL, *, descending: bool = True) -> np.ndarray:
    """Rank of every value, 1 = best, a group of tied values sharing its mean position.

    Like ``scipy.stats.rankdata`` (``method="average"``) of ``-values`` (or of ``values``
    with ``descending=False``), with the near-ties of :func:`tie_groups` counted as ties;
    the values themselves are not changed.

    Examples
    --------
    >>> average_ranks([0.2, 0.9, 0.9 - 1e-13, 0.5]).tolist()
    [4.0, 1.5, 1.5, 3.0]
    """
    order, group = tie_groups(values, rtol, descending=descending)
    n = order.size
    sizes = np.bincount(group)
    ends = np.cumsum(sizes)
    mid = ends - (sizes - 1) / 2.0
    ranks = np.empty(n)
    ranks[order] = mid[group]
    return ranks


def order_desc(values, rtol: float = TIE_RTOL) -> np.ndarray:
    """Indices of ``values``, largest first; tied values (the module's rule) by lower index.

    Examples
    --------
    >>> order_desc([0.3, 0.7, 0.7 - 1e-14, 0.1]).tolist()
    [1, 2, 0, 3]
    """
    return tie_groups(values, rtol, descending=True)[0]


def first_max(values, rtol: float = TIE_RTOL, scale: float | None = None) -> int:
    """Index of the first value tied with the largest (NaNs ignored); -1 if all are NaN.

    "Tied" is the module's rule: within ``rtol`` of the larger magnitude of the two, i.e.
    at or above :func:`tie_threshold` of the maximum; with ``scale`` given, within
    ``rtol * scale`` of the maximum instead (a caller whose values carry an absolute error
    of that size).

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
    tied = tie_threshold(best, rtol) if scale is None else best - float(rtol) * float(scale)
    floor = float(tied)
    return int(np.flatnonzero(ok & (x >= floor))[0])


def kth_nearest(
    D: np.ndarray, k: int, rtol: float = TIE_RTOL, scale: np.ndarray | float | None = None
) -> np.ndarray:
    """Columns of the ``k`` smallest entries of each row of ``D``, nearest first.

    Distances within ``rtol * scale`` of each other are tied (chained, per row: a
    distance computed through inner products carries an error relative to the norms, so the
    row's largest distance is the scale, see the module's notes) and tied columns are taken
    by lower index, so the neighbours of a sample do not depend
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

    Notes
    -----
    The exact rule is applied where it can change the answer only. The candidates of a
    row are the columns within the tolerance of its ``k``-th smallest distance. A wide
    row does not select among all its columns to find that distance: folding the row in
    halves with ``np.fmin`` leaves a few dozen minima of disjoint groups of columns, whose
    ``k``-th smallest bounds the ``k``-th distance from above, so one comparison over the
    row keeps a handful of columns that hold every candidate; the exact ``k``-th distance
    and the candidates are found among those (a row where many columns pass the bound,
    duplicated samples, is selected in full). The candidates, columns ascending, are then
    ordered by value, and by the grouping of near-ties only in the rows where two of them
    lie within the tolerance; a row with more candidates than ``k`` (a tie across the
    ``k``-th neighbour) ranks every candidate by the rule.
    """
    D = np.asarray(D, dtype=np.float64)
    n_rows, n_cols = D.shape
    if n_rows == 0:
        return np.zeros((0, k), dtype=np.intp)
    if scale is None:  # each row's largest finite |distance| (0 for a row without one)
        scale = np.max(np.abs(D), axis=1, where=np.isfinite(D), initial=0.0)
    tol = float(rtol) * np.broadcast_to(np.asarray(scale, dtype=np.float64), (n_rows,))
    # the k-th smallest distance of each row (exact), or an upper bound of it (folded)
    exact = True
    if k == n_cols:
        kth = D.max(axis=1)
    elif k == 1:
        kth = D.min(axis=1)
    elif n_cols >= 4 * _FOLD_WIDTH * k:
        kth, exact = _kth_bound(D, k), False
    else:
        kth = np.partition(D, k - 1, axis=1)[:, k - 1]
    # every candidate of row i (within the tolerance of its k-th distance) is at or below
    # kth[i] + tol[i]: rounding is monotone, so an upper bound of the k-th distance keeps them
    flat = np.flatnonzero((kth + tol)[:, None] >= D)  # row by row, columns ascending
    rows = flat // n_cols
    counts = np.bincount(rows, minlength=n_rows)
    if not exact:
        wide = counts > _WIDE * k  # many columns under the bound (duplicated samples)
        if wide.any():  # their exact k-th distance, to keep their candidates only
            kth[wide] = np.partition(D[wide], k - 1, axis=1)[:, k - 1]
            keep = ~wide[rows] | ((kth + tol)[rows] >= D.ravel()[flat])
            flat, rows = flat[keep], rows[keep]
            counts = np.bincount(rows, minlength=n_rows)
    vals = D.ravel()[flat]
    cols = flat - rows * n_cols
    if (counts == k).all():  # k columns a row (nearly always): the k nearest
        return _first_by_group(vals.reshape(n_rows, k), cols.reshape(n_rows, k), tol, k, n_cols)
    vals, cols = _padded(vals, counts, cols, n_cols)
    return _first_by_group(vals, cols, tol, k, n_cols)


#: a wide row is folded down to between this many times k and twice as many minima
_FOLD_WIDTH = 4
#: a folded row with more than this many times k columns under its bound is selected in full
_WIDE = 4


def _kth_bound(D: np.ndarray, k: int) -> np.ndarray:
    """An upper bound of each row's k-th smallest entry: the k-th smallest of the minima
    of disjoint groups of columns (the row folded with ``np.fmin``: NaN ignored).

    Any partition of the columns into groups bounds it: the k groups of smallest minima
    hold k entries at or below the k-th smallest minimum. Columns left over by a width
    that does not divide join the first group, so the folds run in place in one buffer, a
    quarter of the row where the row is wide enough (less memory to write than a half)."""
    width = D.shape[1]
    parts = 4 if width // 4 >= 2 * _FOLD_WIDTH * k else 2
    part = width // parts
    folded = np.fmin(D[:, :part], D[:, part : 2 * part])
    for j in range(2, parts):
        np.fmin(folded, D[:, j * part : (j + 1) * part], out=folded)
    for j in range(parts * part, width):
        np.fmin(folded[:, 0], D[:, j], out=folded[:, 0])
    width = part
    while width >= 2 * _FOLD_WIDTH * k:
        half = width // 2
        np.fmin(folded[:, :half], folded[:, half : 2 * half], out=folded[:, :half])
        if width % 2:
            np.fmin(folded[:, 0], folded[:, width - 1], out=folded[:, 0])
        width = half
    return np.partition(folded[:, :width], k - 1, axis=1)[:, k - 1]


def _padded(vals, counts, cols=None, n_cols: int = 0):
    """Entries listed row by row (``counts[i]`` of row ``i``) as one row each, padded at
    the end with ``inf``; with ``cols``, also their columns, padded with ``n_cols``."""
    n_rows = counts.size
    width = int(counts.max())
    start = np.cumsum(counts) - counts
    r = np.repeat(np.arange(n_rows), counts)
    pos = np.arange(r.size) - start[r]
    out_vals = np.full((n_rows, width), np.inf)
    out_vals[r, pos] = vals
    if cols is None:
        return out_vals
    out_cols = np.full((n_rows, width), n_cols, dtype=np.intp)
    out_cols[r, pos] = cols
    return out_vals, out_cols


def _first_by_group(vals, cols, tol, k: int, n_cols: int) -> np.ndarray:
    """The first ``k`` candidates of each row by (tie group of the value, column).

    A row lists its entries columns ascending, padded at the end (``inf`` at column
    ``n_cols``); they hold every candidate of the row (the columns within ``tol`` of its
    ``k``-th smallest value) and possibly more, which sort after the candidates by value
    and take no part in the groups."""
    width = vals.shape[1]
    if width == 1:
        return cols[:, :k]
    by_value = np.argsort(vals, axis=1, kind="stable")  # equal values: lower column first
    sv = np.take_along_axis(vals, by_value, axis=1)
    sc = np.take_along_axis(cols, by_value, axis=1)
    with np.errstate(invalid="ignore"):  # inf - inf: an infinite value starts a group
        gaps = np.diff(sv, axis=1) > tol[:, None]
    gaps |= ~np.isfinite(sv[:, 1:])
    if width > k:  # past the k-th: the non-candidates (a suffix) each start a group
        # (padding, inf, is one: a row whose limit is inf lists every column, no padding)
        limit = sv[:, k - 1] + tol
        gaps[:, k - 1 :] |= ~(limit[:, None] >= sv[:, k:])
    # a row whose first k values each start a group, and the (k+1)-th too, is in order
    hard = np.flatnonzero(~gaps[:, :k].all(axis=1))
    out = sc[:, :k]
    if hard.size:
        out = out.copy()
        group = np.zeros((hard.size, width), dtype=np.intp)
        np.cumsum(gaps[hard], axis=1, out=group[:, 1:])
        key = group * (n_cols + 1) + sc[hard]
        pick = np.argsort(key, axis=1, kind="stable")[:, :k]
        out[hard] = np.take_along_axis(sc[hard], pick, axis=1)
    return out


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
    """Ranks of every column of ``X``, near-equal values tied: the binning rule for data.

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
