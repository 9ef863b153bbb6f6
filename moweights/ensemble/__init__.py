"""Stacking for rankings: the pool's best rankers on inner folds, combined by mean rank.

- :mod:`~moweights.ensemble.ranker`: :class:`StackedRanker`, the ensemble of the
  leaderboards (registry name ``stacked``);
- :mod:`~moweights.ensemble.members`: the default pools (:data:`POOLS`) and how the members
  are chosen from their inner scores (:func:`best_first`, :func:`choose_members`);
- :mod:`~moweights.ensemble.weights`: NSGA-II learning the members' weights on the inner
  folds instead (``StackedRanker(combine="nsga2")``).
"""

from moweights.ensemble.members import (
    AUTO_MAX_MEMBERS,
    HIGHER_IS_BETTER,
    POOLS,
    best_first,
    choose_members,
)
from moweights.ensemble.ranker import StackedRanker

__all__ = [
    "AUTO_MAX_MEMBERS",
    "HIGHER_IS_BETTER",
    "POOLS",
    "StackedRanker",
    "best_first",
    "choose_members",
]
