"""NSGA-II learning the weights of an ensemble's members on its inner folds.

The namesake's optimizer used for aggregation: a weight per member, in [0, 1], searched by
NSGA-II (:func:`moweights.weighting.nsga2.nsga2`, pymoo's algorithm) for two objectives on
the inner folds the members were fitted on:

1. the inner held-out score of the weighted mean rank of the members' fold rankings (the
   stacking's own score: higher is better for classes and a numeric target, lower for the
   unsupervised error), and
2. the number of members it combines (a weight below :data:`MIN_WEIGHT` leaves the member
   out), since every member is refit on all the data afterwards and more members cost more.

The initial population holds the equal weights of every member and each member alone, so
the front is never worse on the inner folds than :func:`~aggregation.mean_rank` of the pool
or its best member alone; the rest of it is uniform. The weights chosen are the front's
best inner score, ties within 1e-9 (relative) going to fewer members, then to the earlier
solution of the front's stable order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

__all__ = ["MIN_WEIGHT", "effective_weights", "learn_weights"]

#: a member whose weight is below this is left out of the combination
MIN_WEIGHT = 0.1


def effective_weights(w: np.ndarray) -> np.ndarray:
    """The weights a combination uses: those below :data:`MIN_WEIGHT` set to 0; where
    every weight is below it, the largest alone (the first of equal ones)."""
    w = np.asarray(w, dtype=np.float64)
    out = np.where(w >= MIN_WEIGHT, w, 0.0)
    if not out.any():
        out[int(np.argmax(w))] = 1.0
    return out


def learn_weights(
    fold_rankings: dict[str, Sequence],
    score: Callable[[list], float],
    higher: bool,
    *,
    population: int,
    generations: int,
    seed: int,
) -> tuple[pd.Series, pd.DataFrame]:
    """Weights of the members from NSGA-II on their inner-fold rankings.

    Parameters
    ----------
    fold_rankings : dict of str to sequence of Ranking
        Every member's ranking of each inner fold (fitted on its training part), in the
        same order of folds.
    score : callable
        One ranking per fold -> the inner held-out score of those rankings.
    higher : bool
        Whether a higher score is better.
    population, generations : int
        NSGA-II's population size and number of generations.
    seed : int
        Seeds NSGA-II's random draws.

    Returns
    -------
    weights : Series
        The chosen effective weight of every member (0: left out), by member name.
    front : DataFrame
        The final non-dominated solutions, best score first: ``score``, ``n_members`` and
        one column of effective weights per member.
    """
    from pymoo.core.problem import Problem

    from aggregation import weighted_mean_rank
    from moweights.weighting.nsga2 import nsga2
    from rankers.ties import tie_groups

    names = list(fold_rankings)
    n_folds = len(fold_rankings[names[0]])
    M = len(names)

    def combined(w: np.ndarray) -> list:
        keep = np.flatnonzero(w)
        return [
            weighted_mean_rank([fold_rankings[names[i]][f] for i in keep], w[keep])
            for f in range(n_folds)
        ]

    seen: dict[bytes, float] = {}

    def inner(w: np.ndarray) -> float:
        key = w.tobytes()
        if key not in seen:
            seen[key] = float(score(combined(w)))
        return seen[key]

    def evaluate(P: np.ndarray) -> np.ndarray:
        F = np.empty((len(P), 2))
        for i, w in enumerate(P):
            we = effective_weights(w)
            s = inner(we)
            F[i] = (-s if higher else s, np.count_nonzero(we))
        return F

    # equal weights, each member alone, then uniform draws (seeded) to fill the population
    rng = np.random.default_rng(seed)
    sampling = np.vstack([np.ones((1, M)), np.eye(M), rng.random((max(population - M - 1, 0), M))])
    problem = Problem(n_var=M, n_obj=2, xl=np.zeros(M), xu=np.ones(M))
    W, _ = nsga2(
        problem,
        pop_size=len(sampling),
        crossover_prob=0.9,
        mutation_prob=1.0 / M,
        termination=("n_gen", int(generations)),
        seed=seed,
        sampling=sampling,
        evaluate=evaluate,
    )
    Weff = np.array([effective_weights(w) for w in W])
    Weff, first = np.unique(Weff, axis=0, return_index=True)  # one row per combination
    Weff = Weff[np.argsort(first, kind="stable")]
    scores = np.array([inner(w) for w in Weff])
    counts = np.count_nonzero(Weff, axis=1)
    # best score first (ties within the tie tolerance), then fewer members, then the order
    order, groups = tie_groups(scores, descending=higher)
    order = order[np.lexsort((np.arange(order.size), counts[order], groups))]
    front = pd.DataFrame(Weff[order], columns=names)
    front.insert(0, "n_members", counts[order])
    front.insert(0, "score", scores[order])
    weights = pd.Series(Weff[order[0]], index=names, name="weight")
    return weights, front
