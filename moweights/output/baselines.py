"""Sentences the terminal summary and the report share: what the random baselines of a
run's evaluations are, what a one-block generic ranking means, and how a long ranking is
shortened.

The summary and the report print the baselines under the tables where a random ranking can
win, so that a reader learns why, and what it says about the rankers.
"""

from __future__ import annotations

__all__ = ["RANDOM_CLASS", "RANDOM_ECA", "RANDOM_TOPK", "cut_after_name", "generic_one_block_text"]

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
RANDOM_CLASS = (
    "random: k features drawn at random in every fold (averaged over several draws); a ranking "
    "at or below it predicts the class no better than features picked by chance"
)


def generic_one_block_text(fallback: dict) -> str:
    """The plain-words line for a strict generic ranking of one block."""
    return (
        f"generic ranking: no boundary all {fallback['q']} rankings agree on (s = 1: one "
        f"block of all {fallback['n']} features)"
    )


def cut_after_name(text: str, width: int) -> str:
    """``text`` (a ranking: names in ``{...}`` blocks joined by " > ") in at most ``width``
    characters, cut after a whole name (at a ", ", " > " or "}") and marked " ...", never
    inside a name ("me..." was left of "mean radius")."""
    if len(text) <= width:
        return text
    head = text[: width - 4]
    cut = max(head.rfind(", "), head.rfind(" > "), head.rfind("}") + 1)
    return (head[:cut] if cut > 0 else head).rstrip(", >") + " ..."
