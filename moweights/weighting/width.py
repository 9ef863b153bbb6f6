"""The wide-data path of the NSGA-II weighting: filter rankings that seed or narrow the search.

NSGA-II with the paper's 80 individuals and 250 generations cannot search thousands of
weights: 20,000 evaluations spread over [0, 1]^n find no direction in which a few
informative features stand out. Two remedies, both driven by cheap filter rankers:

- **seeding** (``seed_rankers``): part of the initial population holds the filters'
  opinions, top-t indicator vectors (weight 1 on a filter's t best features, 0 elsewhere)
  for t = 1, 2, 4, ..., so the search starts from sparse, plausible weightings;
- **preselection** (``preselect``): NSGA-II weighs only the top features of the filters'
  averaged ranking; the others keep weight 0.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import clone

from rankers.exceptions import InvalidParameterError, MoweightsError
from rankers.ties import order_desc

__all__ = ["DEFAULT_FILTERS", "filter_order", "resolve_filters", "seeded_population"]

#: the filter preselection uses when no ``seed_rankers`` are given: with a class target,
#: with entropy (C4) alone
DEFAULT_FILTERS = {True: ("anova_f",), False: ("laplacian",)}

#: the largest share of the initial population that holds filter seeds (the rest is
#: uniform random, so the search keeps its diversity)
SEED_SHARE = 0.5


def resolve_filters(seed_rankers, supervised: bool) -> list:
    """Unfitted filter rankers from ``seed_rankers`` (names or estimators), checked.

    Raises
    ------
    InvalidParameterError
        Naming ``seed_rankers``: an unknown name, a ranker that needs a target the
        objectives do not have, or something that is not a ranker.
    """
    import rankers
    from rankers.base import BaseRanker

    if seed_rankers is None:
        items = DEFAULT_FILTERS[supervised]
    elif isinstance(seed_rankers, str):
        items = (seed_rankers,)
    else:
        items = tuple(seed_rankers)
    if not items:
        raise InvalidParameterError("seed_rankers is empty: give None or at least one ranker")
    out = []
    for item in items:
        if isinstance(item, str):
            try:
                est = rankers.get(item)
            except MoweightsError as exc:
                raise InvalidParameterError(f"seed_rankers: {exc}") from exc
        elif isinstance(item, BaseRanker):
            est = clone(item)
        else:
            raise InvalidParameterError(
                f"seed_rankers must hold registered ranker names or ranker estimators; got {item!r}"
            )
        if rankers.ranker_tags(est).requires_y and not supervised:
            raise InvalidParameterError(
                f"seed_rankers: {type(est).__name__} needs a class target, but the objectives "
                "are unsupervised (C4 alone); use an unsupervised ranker such as 'laplacian'"
            )
        out.append(est)
    return out


def filter_order(filters, X: np.ndarray, y, seed: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """Fit the filters; their averaged ranking and each one's order, best first.

    Each filter that takes a ``random_state`` gets ``seed``; near-equal averaged ranks
    are ordered by :func:`rankers.ties.order_desc` (lower index first).
    """
    orders = []
    for est in filters:
        if "random_state" in est.get_params():
            est.set_params(random_state=seed)
        orders.append(np.asarray(est.fit(X, y).ranking_, dtype=np.intp))
    n = X.shape[1]
    positions = np.zeros(n)
    for order in orders:
        positions[order] += np.arange(n)
    return order_desc(-positions / len(orders)), orders


def seeded_population(
    orders: list[np.ndarray], pop_size: int, rng: np.random.Generator
) -> np.ndarray:
    """Initial population: filter seeds, then uniform random individuals.

    The seeds are top-t indicator vectors for t = 1, 2, 4, ... up to the number of
    features, taken in turn from each filter's order, at most ``SEED_SHARE`` of the
    population; duplicates are skipped.

    Parameters
    ----------
    orders : list of ndarray
        Each filter's feature order, best first (over the searched features).
    pop_size : int
        Population size.
    rng : numpy Generator
        Source of the random individuals.
    """
    n = len(orders[0])
    population = rng.uniform(size=(pop_size, n))
    sizes = [1 << j for j in range(int(np.log2(n)) + 1)] + ([n] if n & (n - 1) else [])
    n_seeds = max(1, int(SEED_SHARE * pop_size))
    seen: set[bytes] = set()
    row = 0
    for t in sizes:
        for order in orders:
            if row == n_seeds:
                return population
            w = np.zeros(n)
            w[order[:t]] = 1.0
            key = np.packbits(w.astype(bool)).tobytes()
            if key in seen:
                continue
            seen.add(key)
            population[row] = w
            row += 1
    return population


def check_preselect(preselect, n_features: int) -> int | None:
    """The number of features searched, or None for all of them."""
    if preselect is None:
        return None
    if isinstance(preselect, bool) or not isinstance(preselect, Integral) or preselect < 1:
        raise InvalidParameterError(f"preselect must be None or an int >= 1; got {preselect!r}")
    return None if int(preselect) >= n_features else int(preselect)
