"""Combine several rankings of the same features into one.

Every function takes an iterable of :class:`~aggregation.ranking.Ranking` and/or
:class:`~aggregation.ranking.GenericRanking` over one feature set (the inputs may list the
features in different orders; they are aligned by name). An empty list, a bare ranking or an
item that is not a ranking is refused with a message saying which.

Conventions shared by the rank-based combinations (:func:`mean_rank`, :func:`median_rank`,
:func:`borda`, :func:`weighted_mean_rank`, :func:`vote`, :func:`kemeny`):

- **Ties on input** count as average ranks: tied scores of a :class:`Ranking`, or the
  features of one block of a :class:`GenericRanking`, share the mean of the positions they
  span (``Ranking.ranks``).
- **The result** is a :class:`Ranking` listing the features in the first input's ``names``
  order; features the method cannot separate keep that order in the result's ``order``
  (each function says which further keys it uses first).

:func:`vote`, :func:`vote_table` and :func:`kemeny` live in :mod:`aggregation.consensus`, the
fusions that survive failing members (:func:`rra`, :func:`rrf`, :func:`best_rank`) in
:mod:`aggregation.fusion`; all are importable from here too. :data:`METHODS` maps every
method's name to its function: the one table every list of method names derives from
(config keys, federated aggregates, the Flower run config).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from aggregation._align import aligned, block_ends
from aggregation.consensus import (
    KEMENY_MAX_BLOCK,
    KEMENY_MAX_FEATURES,
    kemeny,
    vote,
    vote_table,
)
from aggregation.fusion.best_rank import best_rank
from aggregation.fusion.rra import rra, rra_pvalues
from aggregation.fusion.rrf import rrf
from aggregation.ranking import AnyRanking, GenericRanking, Ranking, rank_vector
from rankers.exceptions import InvalidParameterError

__all__ = [
    "KEMENY_MAX_BLOCK",
    "KEMENY_MAX_FEATURES",
    "METHODS",
    "best_rank",
    "borda",
    "check_methods",
    "generic",
    "kemeny",
    "mean_rank",
    "median_rank",
    "rra",
    "rra_pvalues",
    "rrf",
    "vote",
    "vote_table",
    "weighted_mean_rank",
]


def generic(rankings: Iterable[AnyRanking]) -> GenericRanking:
    """The generic ranking of several rankings (the paper's §2.3): the finest common partition.

    The result is the finest ordered partition of the features such that every input has the
    same set of features in every prefix that ends at a block boundary, i.e. the paper's
    longest sequence ``1 = k(1) < ... < k(s)``. Inputs that are already generic rankings keep
    their blocks whole, so aggregation composes (sites -> regions -> global): ``generic`` is
    idempotent, does not depend on the order of the inputs, is associative, and its result is
    coarser than every input. ``len(result)`` is the paper's similarity ``s``: ``n`` for
    identical simple rankings, ``1`` when the prefixes differ everywhere.

    Parameters
    ----------
    rankings : iterable of Ranking or GenericRanking
        Over one feature set. A :class:`Ranking`'s features with equal scores form one block
        (they are indiscernible; no tie-break splits them); with distinct scores it is a
        total order. A single input gives its own equivalent: the :class:`GenericRanking`
        itself, or ``GenericRanking.from_ranking`` of a :class:`Ranking`.

    Returns
    -------
    GenericRanking
        With ``method="generic"``.

    Raises
    ------
    InvalidInputError
        If ``rankings`` is empty.
    FeatureMismatchError
        If the inputs' feature sets differ; the message names, per input, the missing and
        extra features compared with the first input.

    Examples
    --------
    >>> names = ["1", "2", "3", "4"]
    >>> rs = [Ranking.from_order(o, names=names) for o in
    ...       (["4", "3", "2", "1"], ["3", "4", "1", "2"], ["3", "4", "2", "1"])]
    >>> print(generic(rs))
    {3,4} > {1,2}
    """
    # Why the cuts below are right: let e_r(f) be the end of f's block in input r and
    # E(f) = max_r e_r(f). For each r, {f : e_r(f) <= p} is the union of r's blocks ending at
    # or before p, so it has at most p members, and exactly p iff r has a boundary at p. If
    # S = {f : E(f) <= p} has p members, it lies inside each of those sets, so each has p
    # members and equals S: every input has a boundary at p with prefix S. Conversely, if all
    # inputs have a boundary at p with the same prefix S, then E(f) <= p iff f is in S. So the
    # valid cuts are exactly {p : #{E <= p} = p}; any subset of valid cuts is admissible, hence
    # the finest partition uses them all. Valid cuts of generic(a, b) are the cuts valid for
    # both a and b, which gives idempotence, symmetry and associativity.
    _, names, ends = aligned(rankings, block_ends)
    n = len(names)
    e_max = ends.max(axis=0)
    at_most = np.cumsum(np.bincount(e_max, minlength=n + 1)[1:])  # at_most[p-1] = #{E <= p}
    cuts = np.flatnonzero(at_most == np.arange(1, n + 1)) + 1  # always ends with n
    block = np.searchsorted(cuts, e_max)  # first cut >= E(f)
    order = np.argsort(block, kind="stable")
    grouped = np.split(np.asarray(names, dtype=object)[order], cuts[:-1])
    return GenericRanking([g.tolist() for g in grouped], method="generic")


def mean_rank(rankings: Iterable[AnyRanking], method: str = "mean_rank") -> Ranking:
    """Average each feature's rank over the inputs (the paper's averaged rank).

    Each input's ranks are its ``.ranks`` (1 = best; tied scores, or a generic ranking's
    blocks, share the mean of the positions they span). Features are then sorted by
    increasing mean rank.

    Parameters
    ----------
    rankings : iterable of Ranking or GenericRanking
        Over one feature set.
    method : str, default="mean_rank"
        Name given to the result.

    Returns
    -------
    Ranking
        Features in the first input's ``names`` order, with ``scores = n + 1 - mean rank``
        (higher = better; the best possible feature scores ``n``), so the mean rank is
        ``n + 1 - result.scores``. Its order sorts by mean rank; equal mean ranks keep the
        first input's ``names`` order. A single input gives the ranking of its own ranks:
        same order up to ties, scores ``n + 1 - rank``.

    Raises
    ------
    InvalidInputError
        If ``rankings`` is empty.
    FeatureMismatchError
        If the inputs' feature sets differ.

    Examples
    --------
    >>> a = Ranking.from_order(["x", "y", "z"])
    >>> b = Ranking.from_order(["y", "x", "z"])
    >>> r = mean_rank([a, b])
    >>> r.order, (len(r) + 1 - r.scores).tolist()
    (['x', 'y', 'z'], [1.5, 1.5, 3.0])
    """
    _, names, ranks = aligned(rankings, rank_vector)
    mean = ranks.mean(axis=0)
    order = np.argsort(mean, kind="stable")
    return Ranking(names, len(names) + 1 - mean, method=method, order_idx=order)


def median_rank(rankings: Iterable[AnyRanking], method: str = "median_rank") -> Ranking:
    """Take each feature's median rank over the inputs; robust to a few outlying inputs.

    Ranks are the inputs' average ranks (ties share the mean of their positions); with an
    even number of inputs the median is the mean of the two middle ranks. Features are
    sorted by increasing median rank, equal medians by increasing mean rank, then by the
    first input's ``names`` order (medians tie often: they take few distinct values).

    Parameters
    ----------
    rankings : iterable of Ranking or GenericRanking
        Over one feature set.
    method : str, default="median_rank"
        Name given to the result.

    Returns
    -------
    Ranking
        Features in the first input's ``names`` order with ``scores = n + 1 - median rank``.

    Raises
    ------
    InvalidInputError
        If ``rankings`` is empty.
    FeatureMismatchError
        If the inputs' feature sets differ.

    Examples
    --------
    >>> rs = [Ranking.from_order(o) for o in (["a", "b", "c"], ["b", "a", "c"], ["a", "c", "b"])]
    >>> r = median_rank(rs)
    >>> r.order, (len(r) + 1 - r.scores).tolist()
    (['a', 'b', 'c'], [1.0, 2.0, 3.0])
    """
    _, names, ranks = aligned(rankings, rank_vector)
    median = np.median(ranks, axis=0)
    order = np.lexsort((ranks.mean(axis=0), median))  # stable: then first input's order
    return Ranking(names, len(names) + 1 - median, method=method, order_idx=order)


def borda(rankings: Iterable[AnyRanking], method: str = "borda") -> Ranking:
    """Borda count: each input gives a feature ``n - rank`` points; the points are summed.

    With average ranks on ties (a tie of features at positions 2 and 3 gives each
    ``n - 2.5``), a feature's total is ``q * (n - mean rank)``: the Borda order is exactly
    the :func:`mean_rank` order, ties included, and only the scale of the scores differs.
    Borda variants that give tied features the points of their best or worst position, or
    that rank only the top of each list, would differ; this one does not use them.

    Parameters
    ----------
    rankings : iterable of Ranking or GenericRanking
        Over one feature set.
    method : str, default="borda"
        Name given to the result.

    Returns
    -------
    Ranking
        Features in the first input's ``names`` order, ``scores`` = total points (from 0 when
        every input ranks the feature last to ``q * (n - 1)`` when every input ranks it
        first). Equal totals keep the first input's ``names`` order.

    Raises
    ------
    InvalidInputError
        If ``rankings`` is empty.
    FeatureMismatchError
        If the inputs' feature sets differ.

    Examples
    --------
    >>> a = Ranking.from_order(["x", "y", "z"])
    >>> b = Ranking.from_order(["y", "x", "z"])
    >>> r = borda([a, b])
    >>> r.order, r.scores.tolist()
    (['x', 'y', 'z'], [3.0, 3.0, 0.0])
    """
    _, names, ranks = aligned(rankings, rank_vector)
    # = sum over inputs of (n - rank) without a (q, n) temporary; half-integer sums are
    # exact, so equal totals are real ties
    points = len(ranks) * len(names) - ranks.sum(axis=0)
    order = np.argsort(-points, kind="stable")
    return Ranking(names, points, method=method, order_idx=order)


def _check_weights(weights: Any, q: int) -> np.ndarray:
    if isinstance(weights, (str, bytes)) or np.ndim(weights) != 1:
        raise InvalidParameterError(
            f"weights must be a one-dimensional sequence of numbers (one per ranking), "
            f"got {weights!r}"
        )
    try:
        w = np.asarray(weights, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(f"weights must be numbers: {exc}") from None
    if len(w) != q:
        raise InvalidParameterError(
            f"got {len(w)} weights for {q} rankings; pass one weight per ranking"
        )
    for bad, what in ((~np.isfinite(w), "finite"), (w < 0, "non-negative")):
        if bad.any():
            listed = ", ".join(f"{i} ({w[i]})" for i in np.flatnonzero(bad)[:10])
            raise InvalidParameterError(f"weights must be {what}; not at position(s) {listed}")
    if not (w > 0).any():
        raise InvalidParameterError(
            "weights are all zero; give at least one ranking a positive weight"
        )
    return w


def weighted_mean_rank(
    rankings: Iterable[AnyRanking], weights: Any, method: str = "weighted_mean_rank"
) -> Ranking:
    """Weighted average of each feature's rank, e.g. weighting sites by their sample sizes.

    ``mean = sum_r w_r * rank_r / sum_r w_r`` with the inputs' average ranks. Whole-number
    weights (sample sizes) are used as they are and give exact means, so equal weighted
    means are recognised as ties; other weights are first divided by their maximum, so
    equal weights give exactly :func:`mean_rank` and a single non-zero weight gives exactly
    that input's ranks, but with arbitrary fractions a tie may be missed by rounding error.

    Parameters
    ----------
    rankings : iterable of Ranking or GenericRanking
        Over one feature set.
    weights : array-like of shape (n_rankings,)
        One finite, non-negative weight per input, in the inputs' order; at least one
        positive. A zero weight ignores that input's ranks (its features are still checked).
    method : str, default="weighted_mean_rank"
        Name given to the result.

    Returns
    -------
    Ranking
        Features in the first input's ``names`` order with
        ``scores = n + 1 - weighted mean rank``; equal means keep the first input's
        ``names`` order.

    Raises
    ------
    InvalidInputError
        If ``rankings`` is empty.
    FeatureMismatchError
        If the inputs' feature sets differ.
    InvalidParameterError
        If ``weights`` has the wrong length, is not numeric, or holds a negative, NaN or
        infinite value, or only zeros.

    Examples
    --------
    >>> a = Ranking.from_order(["x", "y", "z"])
    >>> b = Ranking.from_order(["z", "y", "x"])
    >>> r = weighted_mean_rank([a, b], weights=[300, 100])
    >>> r.order, (len(r) + 1 - r.scores).tolist()
    (['x', 'y', 'z'], [1.5, 2.0, 2.5])
    """
    _, names, ranks = aligned(rankings, rank_vector)
    w = _check_weights(weights, len(ranks))
    if not np.array_equal(w, np.round(w)):
        w = w / w.max()  # x / x == 1 exactly: equal fractional weights stay exact
    mean = (w @ ranks) / w.sum()
    # fractional weights make equal weighted means differ in their last bits: the
    # Ranking ties them (rankers.ties) and orders ties by the first input's names
    return Ranking(names, len(names) + 1 - mean, method=method)


#: every combination by name, in the order lists of methods show them; "weighted_mean_rank"
#: also needs ``weights``; "rra", "rrf" and "best_rank" are the fusions that survive
#: failing members (:mod:`aggregation.fusion`). Lists of method names derive from this
#: table (``tuple(METHODS)``).
METHODS: Mapping[str, Callable[..., AnyRanking]] = MappingProxyType(
    {
        "generic": generic,
        "mean_rank": mean_rank,
        "median_rank": median_rank,
        "borda": borda,
        "weighted_mean_rank": weighted_mean_rank,
        "vote": vote,
        "kemeny": kemeny,
        "rra": rra,
        "rrf": rrf,
        "best_rank": best_rank,
    }
)


def check_methods(
    methods: str | Sequence[str], allowed: Mapping[str, Any] | Sequence[str] = METHODS
) -> list[str]:
    """Method names checked against ``allowed`` (default every method), repeats dropped.

    Parameters
    ----------
    methods : str or sequence of str
        One name or several.
    allowed : mapping or sequence of str, default=METHODS
        The names accepted here (a subset of :data:`METHODS`).

    Returns
    -------
    list of str
        In the order given.

    Raises
    ------
    InvalidParameterError
        For an empty list or an unknown name (with close matches and the known names).

    Examples
    --------
    >>> check_methods(["mean_rank", "generic", "mean_rank"])
    ['mean_rank', 'generic']
    """
    names = [methods] if isinstance(methods, str) else list(methods)
    known = list(allowed)
    if not names:
        raise InvalidParameterError(f"aggregate names no method; choose from {', '.join(known)}")
    for m in names:
        if m not in known:
            close = difflib.get_close_matches(str(m), known, n=2)
            hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
            raise InvalidParameterError(
                f"unknown aggregation {m!r}{hint} Known: {', '.join(known)}"
            )
    return list(dict.fromkeys(names))
