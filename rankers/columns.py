"""Fit's one pass over the columns of ``X``: every column's extremes, and its sums.

:meth:`BaseRanker.fit <rankers.BaseRanker.fit>` reads them once for the constant columns,
the common rescale and the input checks; a ranker's ``_column_pass`` hook may take more in
the same pass (:class:`~rankers.context.FitContext`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from rankers.preprocessing import scale_by_power_of_two

__all__ = ["class_moments", "class_sums", "column_extremes", "row_blocks", "sparse_extremes"]

#: bytes of rows per block of the columns' extremes (and sums): in cache for each reduction
_BLOCK = 1 << 21

#: stored values per block of rows of :func:`class_sums`: its temporaries (codes, squares)
#: stay near 16 MB whatever the size of ``X``
_SPARSE_BLOCK = 1 << 20


def column_extremes(X, sums: bool = False):
    """Every column's smallest and largest value (a sparse matrix's zeros included), and
    with ``sums`` its sum and sum of squares (dense ``X`` only; None otherwise).

    Reductions along the rows' contiguous memory (faster than on blocks of columns, whose
    rows are strided), over blocks of whole rows of about 2 MB: each reduction after the
    first reads a block the first has just brought into cache, so ``X`` comes from memory
    once, not two or four times.
    """
    if sp.issparse(X):
        lo, hi = sparse_extremes(X)
        return (lo, hi, None, None) if sums else (lo, hi)
    step = max(1, _BLOCK // (8 * max(X.shape[1], 1)))
    lo = hi = s1 = s2 = None
    for i in range(0, X.shape[0], step):
        block = X[i : i + step]
        if lo is None:
            lo, hi = block.min(axis=0), block.max(axis=0)
            if sums:
                s1, s2 = np.ones(len(block)) @ block, np.einsum("ij,ij->j", block, block)
            continue
        np.minimum(lo, block.min(axis=0), out=lo)  # NaN propagates, as in X.min(axis=0)
        np.maximum(hi, block.max(axis=0), out=hi)
        if sums:
            s1 += np.ones(len(block)) @ block
            s2 += np.einsum("ij,ij->j", block, block)
    return (lo, hi, s1, s2) if sums else (lo, hi)


def sparse_extremes(X) -> tuple[np.ndarray, np.ndarray]:
    """Every column's smallest and largest value of a sparse matrix, its zeros included:
    the numbers of ``X.min(axis=0)`` and ``X.max(axis=0)``, read along the stored values
    of CSR ``X`` as they lie (scipy converts CSR to CSC for each of the two, a copy of
    ``X`` and two passes over it). When no stored value is below 0 (counts), a column
    with a zero has 0 for its smallest value and only the columns without one are read
    for it (likewise above 0). A NaN propagates, as there."""
    X = X.tocsr()  # fit's X is CSR already: no copy
    if not X.has_canonical_format:  # duplicates are summed first, as scipy does
        X = X.copy()
        X.sum_duplicates()
    m, n = X.shape
    data, cols = X.data, X.indices
    # a column with fewer stored values than rows holds zeros too (counted in blocks:
    # bincount copies int32 indices to intp, which for all of them is a copy of X's size)
    stored = np.zeros(n, dtype=np.int64)
    for a in range(0, cols.size, 1 << 20):
        stored += np.bincount(cols[a : a + (1 << 20)], minlength=n)
    zeros = stored < m
    out = []
    for fill, at, side in ((np.inf, np.minimum, 1.0), (-np.inf, np.maximum, -1.0)):
        ext = np.full(n, fill)
        with np.errstate(invalid="ignore"):  # a NaN: fit names its column after this pass
            # all stored values on one side of 0 (NaN fails the test): read the full columns
            one_sided = data.size == 0 or bool(side * at.reduce(data) >= 0.0)
            if one_sided and zeros.all():
                pass
            elif one_sided:
                full = np.flatnonzero(~zeros)
                sub = X[:, full]
                at.at(ext, full[sub.indices], sub.data)
            else:
                at.at(ext, cols, data)
        at(ext, 0.0, out=ext, where=zeros)
        out.append(ext)
    return out[0], out[1]


def row_blocks(indptr: np.ndarray, step: int):
    """``(r0, r1, a, b)``: consecutive blocks of rows of a CSR matrix holding about ``step``
    stored values each (``indptr[r0] == a``, ``indptr[r1] == b``; at least one row), so a
    pass over the stored values keeps its temporaries (codes, weights) small."""
    m = indptr.size - 1
    r0 = 0
    while r0 < m:
        r1 = int(np.searchsorted(indptr, indptr[r0] + step, side="right")) - 1
        r1 = min(max(r1, r0 + 1), m)
        yield r0, r1, int(indptr[r0]), int(indptr[r1])
        r0 = r1


def class_sums(X, codes: np.ndarray, n_classes: int, *, exponent=None, stored: bool = False):
    """Every class's sum and sum of squares of every column of CSR ``X``, in one pass over
    its stored values.

    The pass runs in blocks of rows (:func:`row_blocks`, about a million stored values
    each): each value's class and column make one code, and weighted counts of the codes
    give every class's sums at once (``O(nnz + C n)``, no CSC copy, no copy of ``X``; the
    sums run in the order of the rows).

    Parameters
    ----------
    X : CSR matrix of shape (n_samples, n_features)
    codes : ndarray of int of shape (n_samples,)
        Class of every row, 0..n_classes-1.
    n_classes : int
    exponent : ndarray of int of shape (n_features,), optional
        Each column is divided by ``2**exponent`` first (exact; see
        ``scale_by_power_of_two``), for columns whose squares would overflow.
    stored : bool, default=False
        Also count every class's stored values and nonzero values per column.

    Returns
    -------
    s1, s2 : ndarray of shape (n_classes, n_features)
    n_stored, n_nonzero : ndarray of shape (n_classes, n_features)
        Only with ``stored``: the stored values and the nonzero ones among them (they
        differ by the explicit zeros).
    """
    n = X.shape[1]
    size = n_classes * n
    s1 = np.zeros(size)
    s2 = np.zeros(size)
    count = np.zeros(size, dtype=np.int64) if stored else None
    zeros = np.zeros(size, dtype=np.int64) if stored else None
    base = np.asarray(codes, dtype=np.int64) * n
    step = max(_SPARSE_BLOCK, 4 * size)  # each block's counts cost O(size) to add up
    for r0, r1, a, b in row_blocks(X.indptr, step):
        cols = X.indices[a:b]
        key = np.repeat(base[r0:r1], np.diff(X.indptr[r0 : r1 + 1]))
        key += cols
        data = X.data[a:b]
        if exponent is not None:
            data = scale_by_power_of_two(data, -exponent[cols])
        s1 += np.bincount(key, weights=data, minlength=size)
        s2 += np.bincount(key, weights=data * data, minlength=size)
        if stored:
            count += np.bincount(key, minlength=size)
            explicit = data == 0
            if explicit.any():
                zeros += np.bincount(key[explicit], minlength=size)
    out = (s1.reshape(n_classes, n), s2.reshape(n_classes, n))
    if stored:
        out += (count.reshape(n_classes, n), (count - zeros).reshape(n_classes, n))
    return out


def class_moments(X, codes: np.ndarray, counts: np.ndarray, *, exponent=None, stored: bool = False):
    """Every class's means and sums of squares around them, of every column of CSR ``X``.

    One pass over the stored values (:func:`class_sums`) gives the sums; the sums of
    squares around the class means follow as ``Σx² - n_c μ_c²``. Where that cancels
    (``n_c μ_c²`` above 100 times the result, i.e. more than about 1e-13 of it lost, or an
    overflow) those columns are summed again around each class's own mean, so the numbers
    are those of the two-pass computation.

    Parameters
    ----------
    X : CSR matrix of shape (n_samples, n_features)
    codes : ndarray of int of shape (n_samples,)
        Class of every row, 0..n_classes-1.
    counts : ndarray of float of shape (n_classes,)
        Rows per class (an empty class gets means of 0).
    exponent : ndarray of int of shape (n_features,), optional
        As in :func:`class_sums`: the moments are then in those units.
    stored : bool, default=False
        Also return :func:`class_sums`' counts of stored and nonzero values.

    Returns
    -------
    means, per_class : ndarray of shape (n_classes, n_features)
    n_stored, n_nonzero : ndarray of shape (n_classes, n_features)
        Only with ``stored``.
    """
    n_classes = counts.size
    sums = class_sums(X, codes, n_classes, exponent=exponent, stored=stored)
    s1, s2 = sums[:2]
    with np.errstate(over="ignore", invalid="ignore"):  # overflows are summed again
        means = s1 / np.maximum(counts, 1.0)[:, None]
        square_of_sum = s1 * means  # n_c mu_c^2
        per_class = np.maximum(s2 - square_of_sum, 0.0)
        redo = np.flatnonzero(~(square_of_sum <= 100.0 * per_class).all(axis=0))
    if redo.size:
        sub_exponent = None if exponent is None else exponent[redo]
        means[:, redo], per_class[:, redo] = _centred_moments(
            X[:, redo], codes, counts, sub_exponent
        )
    return (means, per_class, *sums[2:])


def _centred_moments(X, codes: np.ndarray, counts: np.ndarray, exponent=None):
    """Per-class means and sums of squares of CSR ``X`` around each class's own mean
    (two passes over its stored values); ``exponent``, when given, the power of two each
    column is divided by first."""
    m, n = X.shape
    n_classes = counts.size
    rows = np.repeat(np.arange(m), np.diff(X.indptr))
    cols = X.indices
    data = X.data
    if exponent is not None:
        data = scale_by_power_of_two(data, -exponent[cols])
    key = np.asarray(codes, dtype=np.int64)[rows] * n + cols
    size = n_classes * n
    sums = np.bincount(key, weights=data, minlength=size).reshape(n_classes, n)
    means = sums / np.maximum(counts, 1.0)[:, None]
    d = data - means.ravel()[key]
    squares = np.bincount(key, weights=d * d, minlength=size).reshape(n_classes, n)
    # the zeros of a class each add mu_c^2 to its sum of squares around mu_c (a class
    # with none adds nothing, also where mu_c^2 overflows)
    zeros = counts[:, None] - np.bincount(key, minlength=size).reshape(n_classes, n)
    with np.errstate(over="ignore", invalid="ignore"):
        per_class = squares + np.where(zeros > 0, zeros * means**2, 0.0)
    return means, per_class
