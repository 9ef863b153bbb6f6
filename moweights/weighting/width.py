"""The wide-data path of the NSGA-II weighting: filter rankings that seed or narrow the search.

NSGA-II with the paper's 80 individuals and 250 generations cannot search thousands of
weights: 20,000 evaluations spread over [0, 1]^n find no direction in which a few
informative features stand out. Two remedies, both driven by cheap filter rankers:

- **seeding** (``seed_rankers``): part of the initial population holds the filters'
  opinions, top-t indicator vectors (weight 1 on a filter's t best features, 0 elsewhere)
  for t = 1, 2, 4, ..., so the search starts from sparse, plausible weightings;
- **preselection** (``preselect``): NSGA-II weighs only the top features of the filters'
  averaged ranking; the others keep weight 0. By default (``preselect="auto"``) this
  happens above ``AUTO_WIDTH`` features, where the plain search is both slow and poor.

A search still estimated to take longer than ``SLOW_SEARCH`` CPU seconds
(:func:`search_seconds`) warns before it starts, naming what bounds its cost.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import clone

from rankers.exceptions import InvalidParameterError, MoweightsError
from rankers.ties import order_desc

__all__ = [
    "AUTO_SEEDS",
    "AUTO_WIDTH",
    "DEFAULT_FILTERS",
    "SLOW_SEARCH",
    "check_preselect",
    "filter_order",
    "resolve_filters",
    "search_seconds",
    "seeded_population",
]

#: the filter preselection uses when no ``seed_rankers`` are given: with a class target,
#: with entropy (C4) alone
DEFAULT_FILTERS = {True: ("anova_f",), False: ("laplacian",)}

#: ``seed_rankers="auto"`` with any relevance criterion among the objectives (with a
#: class target, without one): the search starts from sparse top-t sets of these filters
#: (the relevance criteria reward few features well chosen; a uniform start holds none)
AUTO_SEEDS = {True: ("anova_f",), False: ("laplacian",)}

#: ``preselect="auto"`` searches every weight up to this many features and the filters'
#: best this many above it: the plain search at 2,000 features finds about half of the
#: planted ones that a preselected search finds (benchmarks/results/weighting_width.md),
#: and its cost grows with the features (benchmarks/results/weighting_demo.md)
AUTO_WIDTH = 1000

#: a search estimated (:func:`search_seconds`) above this many CPU seconds warns first
SLOW_SEARCH = 600.0

#: multiply-adds per CPU second of one core (one BLAS thread), by criterion group:
#: C1-C3 in double precision with the search's other work (200 x 5,000 and 200 x 20,000,
#: 80 individuals), C4's pair products in single and double precision
#: (benchmarks/speed/bench_weighting_demo.py --rates measures them)
_RATES = {"labels": 1.7e9, "single": 2e10, "double": 1e10, "neighbours": 2.5e7}

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
    """The number of features searched, or None for all of them.

    ``"auto"`` is None up to :data:`AUTO_WIDTH` features and :data:`AUTO_WIDTH` above;
    ``"all"`` (a config file's None) is None.
    """
    if isinstance(preselect, str) and preselect == "auto":
        return None if n_features <= AUTO_WIDTH else AUTO_WIDTH
    if preselect is None or (isinstance(preselect, str) and preselect == "all"):
        return None
    if isinstance(preselect, bool) or not isinstance(preselect, Integral) or preselect < 1:
        raise InvalidParameterError(
            f"preselect must be 'auto', 'all', None or an int >= 1; got {preselect!r}"
        )
    return None if int(preselect) >= n_features else int(preselect)


def search_seconds(
    m: int,
    n: int,
    needed,
    n_pairs: int,
    n_evals: float,
    precision: str = "single",
    neighbour_samples: int = 0,
) -> float:
    """Estimated CPU seconds of an NSGA-II search over ``n`` weights (one core).

    The criteria's matrix products dominate at width: C1-C3 cost about ``2 m n``
    multiply-adds per evaluation, C4 ``2 n_pairs n``; divided by the rates measured on a
    laptop-class core (``_RATES``). A rough figure, to warn before a long search, not a
    promise.

    Parameters
    ----------
    m, n : int
        Samples and searched features.
    needed : iterable of str
        The criteria evaluated.
    n_pairs : int
        Sample pairs C4 uses.
    n_evals : float
        Evaluations of the search (population x generations).
    precision : {"single", "double"}
        C4's precision.
    neighbour_samples : int, default=0
        Samples of the pair criteria NCA and HM
        (:func:`~moweights.weighting.relevance.pair_sample_size`): ``s(s - 1)`` pair
        multiply-adds per weight in single precision, then about ``s²`` element
        operations at ``_RATES["neighbours"]`` (the softmax and the nearest hits).
    """
    needed = set(needed)
    per_eval = 0.0
    if needed & {"C1", "C2", "C3"}:
        per_eval += 2.0 * m * n / _RATES["labels"]
    if "C4" in needed:
        per_eval += 2.0 * n_pairs * n / _RATES[precision]
    if needed & {"NCA", "HM"}:
        s = float(neighbour_samples)
        per_eval += s * (s - 1.0) * n / _RATES["single"] + s * s / _RATES["neighbours"]
    if needed & {"FR", "SP", "C3R"}:
        per_eval += 2.0 * n / _RATES["labels"]
    return per_eval * float(n_evals)
