"""Compare rankings of the same features: similarity and distance measures, pairwise matrices.

Every function takes :class:`~aggregation.ranking.Ranking` and/or
:class:`~aggregation.ranking.GenericRanking` objects over one feature set; they are aligned by
name, and a different feature set raises ``FeatureMismatchError`` naming the features.

Which view of a ranking a measure reads:

- **ranks** (:func:`spearman`, :func:`footrule`, :func:`kendall`, :func:`kendall_distance`):
  ``ranking.ranks``, where tied scores of a ``Ranking`` and the features of one
  ``GenericRanking`` block share their average rank.
- **order** (:func:`jaccard`, :func:`kuncheva`, :func:`rbo`): the top-k is the first k of the
  ranking's order -- a ``Ranking``'s ``order`` (ties broken as its ``order_idx`` breaks them,
  by default the earlier name), a ``GenericRanking``'s blocks best first with names in
  natural sort order inside a block. It is deterministic, but a k that cuts through a tie or a
  block picks arbitrarily inside it: put k on a block boundary when that matters.
- **blocks** (:func:`s_measure`): :func:`~aggregation.combine.generic`, which reads a
  ``Ranking``'s tied scores as one block (distinct scores: a total order) and never splits
  a ``GenericRanking`` block.
"""

from __future__ import annotations

import difflib
import inspect
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from numbers import Real
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from scipy.spatial.distance import cdist
from scipy.stats import kendalltau

from aggregation._align import aligned
from aggregation.combine import generic
from aggregation.ranking import AnyRanking, GenericRanking, Ranking
from rankers.exceptions import InvalidInputError, InvalidParameterError
from rankers.validation import check_k

__all__ = [
    "MEASURES",
    "Stability",
    "footrule",
    "jaccard",
    "kendall",
    "kendall_distance",
    "kuncheva",
    "pairwise",
    "rbo",
    "s_measure",
    "spearman",
    "stability",
]


class _Inputs(NamedTuple):
    rankings: list[AnyRanking]
    labels: list[str]
    mat: np.ndarray  # (q, n): one view of every ranking, columns in one feature order


def _rank_view(r: AnyRanking) -> np.ndarray:
    return r.ranks.to_numpy(dtype=float)


def _position_view(r: AnyRanking) -> np.ndarray:
    """0-based position of each feature (listed as in ``r.names``) in ``r``'s order."""
    if isinstance(r, Ranking):
        pos = np.empty(len(r), dtype=np.intp)
        pos[r.order_idx] = np.arange(len(r))
        return pos
    return np.arange(r.n_features, dtype=np.intp)  # its names already run block by block


def _who(ctx: _Inputs, i: int) -> str:
    return f"input {i} ({ctx.labels[i]!r})"


# --------------------------------------------------------------- parameter checks
def _check_p(p: Any) -> float:
    if isinstance(p, (bool, np.bool_)) or not isinstance(p, Real) or not 0 < p < 1:
        raise InvalidParameterError(f"p must be a number in the open interval (0, 1), got {p!r}")
    return float(p)


def _require_untied(ctx: _Inputs, what: str) -> None:
    flat = np.flatnonzero(np.ptp(ctx.mat, axis=1) == 0)
    if flat.size:
        n = ctx.mat.shape[1]
        raise InvalidInputError(
            f"{what} is undefined when a ranking ties all its {n} feature(s); tied: "
            + ", ".join(_who(ctx, i) for i in flat)
            + " (footrule, kendall_distance or s_measure are defined there)"
        )


# ------------------------------------------------ kernels: values for index pairs
# Each kernel gets the aligned inputs and an (m, 2) array of index pairs and returns m values.
def _spearman_values(ctx: _Inputs, pairs: np.ndarray) -> np.ndarray:
    _require_untied(ctx, "Spearman's rho")
    # The rows are average ranks already, so Pearson on them is scipy.stats.spearmanr.
    # np.atleast_2d: with a single input np.corrcoef returns a bare scalar
    return np.atleast_2d(np.corrcoef(ctx.mat))[pairs[:, 0], pairs[:, 1]]


def _kendall_values(ctx: _Inputs, pairs: np.ndarray) -> np.ndarray:
    _require_untied(ctx, "Kendall's tau-b")
    return np.array([kendalltau(ctx.mat[i], ctx.mat[j]).statistic for i, j in pairs])


def _footrule_values(ctx: _Inputs, pairs: np.ndarray, normalized: bool = False) -> np.ndarray:
    n = ctx.mat.shape[1]
    dist = cdist(ctx.mat, ctx.mat, "cityblock")[pairs[:, 0], pairs[:, 1]]
    return dist / max(n * n // 2, 1) if normalized else dist


def _discordant_values(ctx: _Inputs, pairs: np.ndarray, normalized: bool = False) -> np.ndarray:
    n = ctx.mat.shape[1]
    d = np.array([_discordant(ctx.mat[i], ctx.mat[j]) for i, j in pairs], dtype=np.int64)
    return d / max(n * (n - 1) // 2, 1) if normalized else d


def _top_overlap(ctx: _Inputs, pairs: np.ndarray, k: int) -> np.ndarray:
    top = (ctx.mat < k).astype(np.int64)  # mat holds positions in each order
    return (top @ top.T)[pairs[:, 0], pairs[:, 1]]


def _jaccard_values(ctx: _Inputs, pairs: np.ndarray, *, k: int) -> np.ndarray:
    k = check_k(k, ctx.mat.shape[1])
    inter = _top_overlap(ctx, pairs, k)
    return inter / (2 * k - inter)


def _kuncheva_values(ctx: _Inputs, pairs: np.ndarray, *, k: int) -> np.ndarray:
    n = ctx.mat.shape[1]
    if isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)) and k == n:
        raise InvalidParameterError(
            f"Kuncheva's index is undefined for k = n = {n}: every top-{n} set is the whole "
            f"feature set (the denominator k(n - k) is 0); use k in 1..{n - 1}"
        )
    k = check_k(k, n, upper=n - 1)
    return (_top_overlap(ctx, pairs, k) * n - k * k) / (k * (n - k))


def _rbo_values(
    ctx: _Inputs, pairs: np.ndarray, p: float = 0.9, k: int | None = None
) -> np.ndarray:
    p = _check_p(p)
    n = ctx.mat.shape[1]
    k = n if k is None else check_k(k, n)
    d = np.arange(1, k + 1)
    weights = p**d
    out = np.empty(len(pairs))
    for m, (i, j) in enumerate(pairs):  # a loop over pairs of inputs, O(n) each
        # A feature is in both depth-d prefixes from depth max(pos_a, pos_b) + 1 on.
        both = np.maximum(ctx.mat[i], ctx.mat[j]) + 1
        agreement = np.cumsum(np.bincount(both, minlength=k + 1)[1 : k + 1]) / d  # X_d / d
        out[m] = agreement[-1] * p**k + (1 - p) / p * (agreement @ weights)
    return out


def _s_values(ctx: _Inputs, pairs: np.ndarray, normalized: bool = False) -> np.ndarray:
    s = np.array([len(generic([ctx.rankings[i], ctx.rankings[j]])) for i, j in pairs])
    return _normalize_s(s, ctx.mat.shape[1]) if normalized else s


def _normalize_s(s: Any, n: int) -> Any:
    # One feature can be ranked one way only, so two rankings of it are identical: 1.
    return (s - 1) / (n - 1) if n > 1 else np.ones_like(s, dtype=float)


#: named measures: name -> (view of each ranking, kernel, value is an integer count)
_KERNELS: dict[str, tuple[Callable, Callable, bool]] = {
    "spearman": (_rank_view, _spearman_values, False),
    "kendall": (_rank_view, _kendall_values, False),
    "footrule": (_rank_view, _footrule_values, False),
    "kendall_distance": (_rank_view, _discordant_values, True),
    "jaccard": (_position_view, _jaccard_values, False),
    "kuncheva": (_position_view, _kuncheva_values, False),
    "rbo": (_position_view, _rbo_values, False),
    "s_measure": (_position_view, _s_values, True),
}
#: names accepted by :func:`pairwise` and :func:`stability`
MEASURES = tuple(_KERNELS)


def _discordant(x: np.ndarray, y: np.ndarray) -> int:
    """#{i < j : (x_i - x_j)(y_i - y_j) < 0}; a pair tied in x or in y is not discordant."""
    # Sorted by x then y, a pair tied in x is never an inversion of y; every other pair is
    # discordant exactly when it is a strict inversion of the y sequence.
    order = np.lexsort((y, x))
    codes = np.unique(y[order], return_inverse=True)[1].reshape(-1).astype(np.int64)
    return _count_inversions(codes)


def _count_inversions(seq: np.ndarray) -> int:
    """#{i < j : seq_i > seq_j} for integer codes in 0..n-1, by a bottom-up merge sort.

    Each level is a few numpy passes over the whole array (O(n log n)), so the count takes
    O(n log^2 n) time and O(n) memory with no Python loop over elements.
    """
    n = len(seq)
    base = n + 1  # codes < base, so group * base + code sorts by group, then by code
    pos = np.arange(n)
    total = 0
    width = 1
    while width < n:
        group = pos // (2 * width)  # each group = a sorted left run + a sorted right run
        right = (pos // width) % 2 == 1
        keys = group * base + seq
        left_keys = keys[~right]  # sorted: groups ascend and each left run is sorted
        right_keys = keys[right]
        end = np.searchsorted(left_keys, (group[right] + 1) * base)
        total += int((end - np.searchsorted(left_keys, right_keys, side="right")).sum())
        keys.sort(kind="stable")  # merges each group's two runs; groups keep their places
        seq = keys - group * base
        width *= 2
    return total


# ------------------------------------------------------------------------ driver
def _as_list(rankings: Iterable[AnyRanking], at_least: int, what: str) -> list[AnyRanking]:
    if isinstance(rankings, (Ranking, GenericRanking)):
        raise InvalidParameterError(f"{what} takes a list of rankings, not a single ranking")
    inputs = list(rankings)
    if len(inputs) < at_least:
        raise InvalidInputError(f"{what} needs at least {at_least} ranking(s), got {len(inputs)}")
    return inputs


def _labels(inputs: list[AnyRanking], labels: Sequence[str] | None) -> list[str]:
    if labels is not None:
        labels = [str(x) for x in labels]
        if len(labels) != len(inputs) or len(set(labels)) != len(labels):
            raise InvalidParameterError(
                f"labels must be {len(inputs)} unique names, one per ranking; got {labels}"
            )
        return labels
    methods = [getattr(r, "method", None) for r in inputs]  # types are checked later
    counts = Counter(methods)
    out = [m if m is not None and counts[m] == 1 else f"r{i}" for i, m in enumerate(methods)]
    if len(set(out)) < len(out):  # a method literally named like a fallback, e.g. "r1"
        out = [f"r{i}" for i in range(len(inputs))]
    return out


def _measure_name(measure: str | Callable) -> str:
    if callable(measure):
        return getattr(measure, "__name__", type(measure).__name__)
    if measure not in _KERNELS:
        close = difflib.get_close_matches(str(measure), MEASURES, n=2)
        hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
        raise InvalidParameterError(
            f"unknown measure {measure!r}{hint} Known: {', '.join(MEASURES)}, or a callable"
        )
    return measure


def _values(
    inputs: list[AnyRanking],
    labels: list[str],
    measure: str | Callable,
    pairs: np.ndarray,
    params: dict[str, Any],
) -> np.ndarray:
    """The measure for each index pair; validates the feature set once for all inputs."""
    name = _measure_name(measure)
    view, kernel, _ = _KERNELS.get(name, (_position_view, None, False))
    _, _, mat = aligned(inputs, view)
    ctx = _Inputs(inputs, labels, mat)
    if callable(measure):
        out = np.array([_call(measure, ctx, i, j, params) for i, j in pairs])
        return out.astype(float)
    try:
        inspect.signature(kernel).bind(ctx, pairs, **params)
    except TypeError as exc:
        accepted = list(inspect.signature(kernel).parameters)[2:]
        raise InvalidParameterError(
            f"measure {name!r}: {exc}; it takes {', '.join(accepted) or 'no parameters'}"
        ) from None
    return kernel(ctx, pairs, **params)


def _call(measure: Callable, ctx: _Inputs, i: int, j: int, params: dict) -> float:
    value = measure(ctx.rankings[i], ctx.rankings[j], **params)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Real):
        raise InvalidParameterError(
            f"measure must return a real number; got {value!r} for {_who(ctx, i)} and "
            f"{_who(ctx, j)}"
        )
    if np.isnan(value):
        raise InvalidInputError(f"measure returned NaN for {_who(ctx, i)} and {_who(ctx, j)}")
    return float(value)


def _pair(name: str, a: AnyRanking, b: AnyRanking, **params: Any) -> Any:
    inputs = [a, b]
    return _values(inputs, _labels(inputs, None), name, np.array([[0, 1]]), params)[0]


# ------------------------------------------------------------------ public measures
def s_measure(rankings: Iterable[AnyRanking], normalized: bool = False) -> int | float:
    """Similarity of two or more rankings: the number of blocks ``s`` of their generic ranking.

    The paper's measure (§2.3): ``s = n`` when the rankings are identical total orders and
    ``s = 1`` when no proper prefix holds the same features in every ranking. Blocks of
    ``GenericRanking`` inputs are never split, so a coarse input caps ``s`` at its own number
    of blocks.

    Parameters
    ----------
    rankings : iterable of Ranking or GenericRanking
        At least two, over one feature set.
    normalized : bool, default=False
        Return ``(s - 1) / (n - 1)`` in [0, 1] instead (1 = identical, 0 = one block). With a
        single feature the rankings are necessarily identical: 1.0.

    Returns
    -------
    int or float

    Examples
    --------
    >>> names = ["1", "2", "3", "4"]
    >>> rs = [Ranking.from_order(o, names=names) for o in (["4", "3", "2", "1"],
    ...       ["3", "4", "1", "2"], ["3", "4", "2", "1"])]
    >>> s_measure(rs), s_measure(rs, normalized=True)
    (2, 0.3333333333333333)
    """
    inputs = _as_list(rankings, 2, "s_measure")
    g = generic(inputs)
    s = len(g)
    return float(_normalize_s(s, g.n_features)) if normalized else s


def spearman(a: AnyRanking, b: AnyRanking) -> float:
    """Spearman's rank correlation rho of two rankings (ties share their average rank).

    Equals ``scipy.stats.spearmanr`` on the two score vectors. Undefined, and an
    ``InvalidInputError``, when a ranking ties all its features.

    Examples
    --------
    >>> spearman(Ranking.from_order(["a", "b", "c"]), Ranking.from_order(["c", "b", "a"]))
    -1.0
    """
    return float(_pair("spearman", a, b))


def footrule(a: AnyRanking, b: AnyRanking, normalized: bool = False) -> float:
    """Spearman's footrule distance ``sum_f |rank_a(f) - rank_b(f)|`` (0 = identical).

    Parameters
    ----------
    a, b : Ranking or GenericRanking
    normalized : bool, default=False
        Divide by the largest possible value, ``floor(n^2 / 2)`` (reached by reversed total
        orders), giving a distance in [0, 1]; 0.0 for a single feature.

    Examples
    --------
    >>> footrule(Ranking.from_order(["a", "b", "c"]), Ranking.from_order(["c", "b", "a"]))
    4.0
    """
    return float(_pair("footrule", a, b, normalized=normalized))


def kendall(a: AnyRanking, b: AnyRanking) -> float:
    """Kendall's tau-b of two rankings (``scipy.stats.kendalltau``; corrects for ties).

    Undefined, and an ``InvalidInputError``, when a ranking ties all its features.

    Examples
    --------
    >>> round(kendall(Ranking.from_order(["a", "b", "c"]), Ranking.from_order(["b", "a", "c"])), 4)
    0.3333
    """
    return float(_pair("kendall", a, b))


def kendall_distance(a: AnyRanking, b: AnyRanking, normalized: bool = False) -> int | float:
    """Kendall distance: the number of feature pairs the two rankings order oppositely.

    A pair tied in either ranking (tied scores, or one ``GenericRanking`` block) is not
    counted. Runs in O(n log^2 n) time without a loop over features, so it serves large n
    and Kemeny-style objectives alike.

    Parameters
    ----------
    a, b : Ranking or GenericRanking
    normalized : bool, default=False
        Divide by the number of pairs ``n (n - 1) / 2`` (0.0 for a single feature).

    Examples
    --------
    >>> kendall_distance(Ranking.from_order(["a", "b", "c"]), Ranking.from_order(["c", "a", "b"]))
    2
    """
    value = _pair("kendall_distance", a, b, normalized=normalized)
    return float(value) if normalized else int(value)


def jaccard(a: AnyRanking, b: AnyRanking, k: int) -> float:
    """Jaccard index of the two top-k sets, ``|A ∩ B| / |A ∪ B|`` (top-k by each order).

    Examples
    --------
    >>> a, b = Ranking.from_order(["a", "b", "c"]), Ranking.from_order(["b", "c", "a"])
    >>> round(jaccard(a, b, k=2), 4)
    0.3333
    """
    return float(_pair("jaccard", a, b, k=k))


def kuncheva(a: AnyRanking, b: AnyRanking, k: int) -> float:
    """Kuncheva's consistency index of the two top-k sets, ``(r n - k^2) / (k (n - k))``.

    ``r`` is the size of the intersection (top-k by each order). The index corrects the
    overlap for chance: 0 is the expected value for random subsets, 1 identical subsets.
    Undefined for ``k = n`` (``InvalidParameterError``); ``k`` must lie in ``1..n-1``.

    References
    ----------
    L. I. Kuncheva, "A stability index for feature selection", Proc. IASTED AIA, 2007.

    Examples
    --------
    >>> a = Ranking.from_order(["a", "b", "c", "d"])
    >>> kuncheva(a, Ranking.from_order(["a", "c", "b", "d"]), k=2)
    0.0
    """
    return float(_pair("kuncheva", a, b, k=k))


def rbo(a: AnyRanking, b: AnyRanking, p: float = 0.9, k: int | None = None) -> float:
    """Rank-biased overlap of Webber, Moffat & Zobel (2010), extrapolated form ``RBO_ext``.

    For the two lists cut at depth ``k`` (both of length ``k``), with ``X_d`` the size of the
    overlap of the depth-``d`` prefixes and ``A_d = X_d / d``, this is the paper's Eq. 32 with
    both lengths equal::

        RBO_ext = A_k p^k + (1 - p) / p * sum_{d=1..k} A_d p^d

    It assumes the agreement seen at depth ``k`` holds below it. At the default ``k = n``
    both lists hold every feature, ``A_n = 1``, and this is exactly the infinite-depth
    ``RBO = (1 - p) sum_d p^(d-1) A_d`` with ``A_d = 1`` for ``d > n``. The value lies in
    [0, 1] (1 = identical); top-heavy: the first ``d`` ranks carry a share ``1 - p^d`` of
    the weight.

    Parameters
    ----------
    a, b : Ranking or GenericRanking
        Read in their order (see the module docstring for ties).
    p : float in (0, 1), default=0.9
        Persistence: smaller ``p`` weighs the top more.
    k : int in 1..n, optional
        Depth at which to cut both lists; default ``n``.

    References
    ----------
    W. Webber, A. Moffat, J. Zobel, "A similarity measure for indefinite rankings",
    ACM TOIS 28(4), 2010.

    Examples
    --------
    >>> a = Ranking.from_order(["a", "b", "c", "d"])
    >>> round(rbo(a, Ranking.from_order(["b", "a", "d", "c"]), p=0.5), 4)  # 11/24
    0.4583
    """
    return float(_pair("rbo", a, b, p=p, k=k))


# --------------------------------------------------------------- matrices and summaries
def pairwise(
    rankings: Iterable[AnyRanking],
    measure: str | Callable[..., float],
    *,
    labels: Sequence[str] | None = None,
    **kwargs: Any,
) -> pd.DataFrame:
    """The square matrix of a measure between every two rankings.

    Parameters
    ----------
    rankings : iterable of Ranking or GenericRanking
        At least one, over one feature set (checked once, for all of them).
    measure : str or callable
        One of :data:`MEASURES` ("spearman", "kendall", "footrule", "kendall_distance",
        "jaccard", "kuncheva", "rbo", "s_measure"), evaluated on each unordered pair and
        mirrored; or a callable ``measure(a, b, **kwargs) -> float`` evaluated on every ordered
        pair (no symmetry assumed). The diagonal is the measure of a ranking with itself.
    labels : sequence of str, optional
        Row/column labels, unique. Default: each ranking's ``method``, or ``"r0"``, ``"r1"``,
        ... (by position) for rankings whose method is missing or shared with another.
    **kwargs
        Passed to the measure, e.g. ``k=10`` for "jaccard", ``p=0.9`` for "rbo",
        ``normalized=True`` for "footrule".

    Returns
    -------
    DataFrame of shape (q, q)
        Integer-valued for the counts ("kendall_distance", "s_measure" unless normalized),
        float otherwise. ``df.attrs["measure"]`` holds the measure's name.

    Examples
    --------
    >>> a = Ranking.from_order(["x", "y", "z"], method="A")
    >>> b = Ranking.from_order(["z", "y", "x"], method="B")
    >>> pairwise([a, b], "s_measure")
       A  B
    A  3  1
    B  1  3
    """
    inputs = _as_list(rankings, 1, "pairwise")
    labels = _labels(inputs, labels)
    name = _measure_name(measure)
    q = len(inputs)
    if callable(measure):
        pairs = np.argwhere(np.ones((q, q), dtype=bool))
    else:
        pairs = np.column_stack(np.triu_indices(q))
    values = _values(inputs, labels, measure, pairs, kwargs)
    integer = not callable(measure) and _KERNELS[name][2] and not kwargs.get("normalized")
    mat = np.zeros((q, q), dtype=np.int64 if integer else float)
    mat[pairs[:, 0], pairs[:, 1]] = values
    if not callable(measure):
        mat[pairs[:, 1], pairs[:, 0]] = values
    df = pd.DataFrame(mat, index=pd.Index(labels), columns=pd.Index(labels))
    df.attrs["measure"] = name
    return df


@dataclass(frozen=True)
class Stability:
    """Summary of a measure over the distinct pairs of several rankings.

    Attributes
    ----------
    measure : str
    mean, std, min, max : float
        Over the ``n_pairs`` unordered pairs; ``std`` with ``ddof=0`` (all pairs are seen).
    n_pairs : int
        ``q (q - 1) / 2`` for ``q`` rankings.
    """

    measure: str
    mean: float
    std: float
    min: float
    max: float
    n_pairs: int


def stability(
    rankings: Iterable[AnyRanking], measure: str | Callable[..., float] = "spearman", **kwargs: Any
) -> Stability:
    """Stability of several rankings: the mean of a measure over all distinct pairs.

    The usual summary of how much rankings from resamples, sites or methods agree (e.g.
    Kalousis et al. 2007 with Spearman's rho, Kuncheva 2007 with her index). For a distance
    ("footrule", "kendall_distance") lower means more stable.

    Parameters
    ----------
    rankings : iterable of Ranking or GenericRanking
        At least two, over one feature set.
    measure : str or callable, default="spearman"
        As in :func:`pairwise`; a callable is evaluated once per unordered pair ``(i < j)``.
    **kwargs
        Passed to the measure.

    Returns
    -------
    Stability

    Examples
    --------
    >>> r = Ranking.from_order(["x", "y", "z"])
    >>> stability([r, r, r]).mean
    1.0
    """
    inputs = _as_list(rankings, 2, "stability")
    name = _measure_name(measure)
    pairs = np.column_stack(np.triu_indices(len(inputs), k=1))
    values = _values(inputs, _labels(inputs, None), measure, pairs, kwargs).astype(float)
    return Stability(
        measure=name,
        mean=float(values.mean()),
        std=float(values.std()),
        min=float(values.min()),
        max=float(values.max()),
        n_pairs=len(values),
    )
