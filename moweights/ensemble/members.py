"""Choosing an ensemble's members: the default pools, and the best members by inner score.

:class:`~moweights.ensemble.StackedRanker` scores every member of its pool on inner folds;
these functions turn those scores into the members it combines (ties within 1e-9 keep the
given order, so the choice does not depend on the last bits of a score).
"""

from __future__ import annotations

import numpy as np

__all__ = ["AUTO_MAX_MEMBERS", "HIGHER_IS_BETTER", "POOLS", "best_first", "choose_members"]

#: at most this many members with ``n_members="auto"``
AUTO_MAX_MEMBERS = 5

#: default pools: the fast rankers of each task (three extra fits per inner fold stay cheap)
POOLS = {
    "classification": (
        "anova_f", "chi2", "estimator_importance", "fisher_score", "info_gain",
        "random_forest", "relieff", "svm_rfe", "t_test",
    ),
    "unsupervised": (
        "compactness", "laplacian", "mcfs", "ndfs", "spec", "urelief", "variance",
    ),
    # every registered ranker that fits a quantity (target_kind "regression" or "both")
    "regression": ("estimator_importance", "multisurf", "random_forest", "rrelieff"),
}  # fmt: skip

#: the inner score of each task: what it measures and whether higher is better
HIGHER_IS_BETTER = {"classification": True, "regression": True, "unsupervised": False}


def best_first(scores: dict[str, float], higher: bool) -> list[str]:
    """Names by score, best first; scores within 1e-9 (relative) of each other are tied
    and keep the given order (:func:`rankers.ties.tie_groups`), so the choice does not
    depend on the last bits of a score."""
    from rankers.ties import tie_groups

    values = np.array(list(scores.values()), dtype=float)
    order, _ = tie_groups(values, descending=higher)
    names = list(scores)
    return [names[i] for i in order]


def choose_members(
    scores: dict[str, float], higher: bool, n_members, margin: float = 0.02
) -> list[str]:
    """The members an ensemble combines, best inner score first.

    ``n_members`` an int: that many of the best. ``"auto"``: every member whose inner score
    is within ``margin`` of the best (absolute for a score where higher is better, such as
    a balanced accuracy; relative, ``best x (1 + margin)``, for an error), at most
    :data:`AUTO_MAX_MEMBERS`: where one member alone finds the structure (XOR pairs:
    relieff), it is used alone instead of being averaged with members at chance; where
    several do equally well, they are combined.
    """
    order = best_first(scores, higher)
    if n_members != "auto":
        return order[: int(n_members)]
    best = scores[order[0]]
    # the bound is widened by a relative 1e-9 (the tie rule's tolerance), so a score on it
    # up to the last bits is in on every machine
    if higher:
        bound = best - margin
        close = [m for m in order if scores[m] >= bound - 1e-9 * abs(bound)]
    else:
        bound = best * (1.0 + margin)
        close = [m for m in order if scores[m] <= bound + 1e-9 * abs(bound)]
    return close[:AUTO_MAX_MEMBERS]
