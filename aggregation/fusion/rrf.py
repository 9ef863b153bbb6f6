"""Reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009).

A feature's score is ``sum_r 1 / (c + rank_r)`` over the inputs, ``c = 60`` by default (the
paper's choice): a first place is worth ``1/61``, a tenth ``1/70``, a hundredth ``1/160``, so
a feature one input puts on top outweighs one that every input puts in the middle, yet no
single input decides alone. Ranks are 1-based average ranks (tied scores, a generic
ranking's block, share the mean of their positions), as in
:func:`~aggregation.combine.mean_rank`.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable

import numpy as np

from aggregation._align import aligned
from aggregation.ranking import AnyRanking, Ranking, rank_vector
from rankers.exceptions import InvalidParameterError

__all__ = ["rrf"]


def rrf(rankings: Iterable[AnyRanking], c: float = 60.0, method: str = "rrf") -> Ranking:
    """Reciprocal rank fusion: each input gives a feature ``1 / (c + rank)``; summed.

    ``score = sum_r 1 / (c + rank_r)``. Between averaging and the best rank: the top
    places weigh most, so a feature two members put first is not drowned by three that
    rank it at random, yet a feature needs more than one good place to lead. The paper
    reports it ahead of Condorcet fusion and of individual rank-learning methods on TREC
    runs; use it when the members' reliability is unknown.

    Parameters
    ----------
    rankings : iterable of Ranking or GenericRanking
        Over one feature set; ties count as average ranks.
    c : float, default=60
        The paper's constant ``k``: larger values flatten the weights of the top places
        (``c -> inf`` orders as :func:`~aggregation.combine.mean_rank`), smaller ones
        sharpen them (``c = 0``: the first place is worth twice the second). Finite, >= 0.
    method : str, default="rrf"
        Name given to the result.

    Returns
    -------
    Ranking
        Features in the first input's ``names`` order with ``scores`` = the sum (from
        ``q / (c + n)`` when every input ranks the feature last to ``q / (c + 1)`` when
        every input ranks it first). Each feature's terms are added smallest first, so the
        scores do not depend on the order of the inputs to the last bit. Equal scores
        (within the tie rule of :mod:`rankers.ties`) keep the first input's ``names`` order.

    Raises
    ------
    InvalidInputError
        If ``rankings`` is empty.
    FeatureMismatchError
        If the inputs' feature sets differ.
    InvalidParameterError
        If ``c`` is not a finite number >= 0.

    References
    ----------
    G. V. Cormack, C. L. A. Clarke, S. Büttcher. Reciprocal rank fusion outperforms
    Condorcet and individual rank learning methods. SIGIR 2009, 758-759.
    doi:10.1145/1571941.1572114

    Examples
    --------
    >>> a = Ranking.from_order(["x", "y", "z"])
    >>> b = Ranking.from_order(["y", "z", "x"])
    >>> r = rrf([a, b], c=0)
    >>> r.order, r.scores.round(4).tolist()
    (['y', 'x', 'z'], [1.3333, 1.5, 0.8333])
    """
    if isinstance(c, bool) or not isinstance(c, numbers.Real) or not np.isfinite(c) or c < 0:
        raise InvalidParameterError(f"c must be a finite number >= 0 (default 60), got {c!r}")
    _, names, ranks = aligned(rankings, rank_vector)
    # smallest terms first: a fixed summation order whatever the order of the inputs
    terms = np.sort(1.0 / (float(c) + ranks), axis=0)
    return Ranking(names, terms.sum(axis=0), method=method)
