"""Best-rank fusion: a feature's best position in any input (RobustRankAggreg's ``"min"``).

The most optimistic combination: a feature one input puts first is first, whatever the
others say, so no majority of failing inputs can bury it; and no feature moves ahead of its
best place. It trusts every input equally, the failing ones too: ``q`` inputs give ``q``
features best rank 1, whose order only the tie rule below decides.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from aggregation._align import aligned
from aggregation.ranking import AnyRanking, Ranking, rank_vector

__all__ = ["best_rank"]


def best_rank(rankings: Iterable[AnyRanking], method: str = "best_rank") -> Ranking:
    """Best-rank fusion: order the features by their best (smallest) rank over the inputs.

    ``score = n + 1 - min_r rank_r``. The most optimistic fusion: no feature is placed
    behind its best position, so a feature one member ranks ``j``-th is within the first
    ``q j`` places (the top ``j`` of each member), whatever the others say. Use it when
    each member is trusted on what it puts first (a union of the members' top lists, e.g.
    members that each detect one kind of structure); it also promotes the top of a
    member that fails, so with many failing members prefer :func:`rra`.

    Ties of best rank, which are the rule (every input has a first place), are broken by
    the second-best rank, then the third-best, and so on (each feature's ranks sorted, then
    compared lexicographically: a feature ranked 1st and 2nd goes before one ranked 1st and
    9th), then by the first input's ``names`` order. The tie-break decides the order only;
    tied features keep equal scores.

    Parameters
    ----------
    rankings : iterable of Ranking or GenericRanking
        Over one feature set; ties count as average ranks (a block of two at the top gives
        both features rank 1.5).
    method : str, default="best_rank"
        Name given to the result.

    Returns
    -------
    Ranking
        Features in the first input's ``names`` order with ``scores = n + 1 - best rank``
        (higher = better; ``n`` for a feature some input ranks first alone).

    Raises
    ------
    InvalidInputError
        If ``rankings`` is empty.
    FeatureMismatchError
        If the inputs' feature sets differ.

    Examples
    --------
    >>> a = Ranking.from_order(["x", "y", "z", "w"])
    >>> b = Ranking.from_order(["y", "w", "x", "z"])
    >>> r = best_rank([a, b])
    >>> r.order, (len(r) + 1 - r.scores).tolist()
    (['y', 'x', 'w', 'z'], [1.0, 1.0, 3.0, 2.0])
    """
    _, names, ranks = aligned(rankings, rank_vector)
    srt = np.sort(ranks, axis=0)  # row j: each feature's (j+1)-th best rank; exact values
    keys = (np.arange(len(names)), *srt[::-1])  # lexsort: last key first
    order = np.lexsort(keys)
    return Ranking(names, len(names) + 1 - srt[0], method=method, order_idx=order)
