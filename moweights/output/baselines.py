"""What the random baselines of a run's evaluations are, in one sentence each.

The summary and the report print them under the tables where a random ranking can win, so
that a reader learns why, and what it says about the rankers.
"""

from __future__ import annotations

__all__ = ["RANDOM_ECA", "RANDOM_TOPK"]

#: one sentence each on what the random baseline is and what it means when it wins
RANDOM_TOPK = (
    "random: k features drawn at random, predicting every feature from them; it wins when "
    "the rankers' top features repeat one another while a random set spreads over the data "
    "-- a measure of coverage, not of relevance to a target"
)
RANDOM_ECA = (
    "random: the expected error curve of random rankings (the class predicted from the top "
    "features); a ranking at or below 0 finds no more about the class than chance"
)
