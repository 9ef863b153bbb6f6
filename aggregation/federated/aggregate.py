"""The second step of federated ranking: aggregate per-site rankings, and nothing else.

Every function here receives rankings (``{site: Ranking}``) -- never data -- and combines
them with the methods of :mod:`aggregation.combine`: all sites at once
(:func:`aggregate_rankings`), or level by level, sites -> regions -> global
(:func:`aggregate_hierarchy`); the generic ranking of the multiobjective weighting paper
(§2.3) composes, as it never splits an input's blocks and is associative.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from aggregation._align import is_ranking
from aggregation._names import format_names
from aggregation.combine import METHODS, check_methods, weighted_mean_rank
from aggregation.compare import pairwise
from aggregation.federated.sites import check_same_features
from aggregation.ranking import AnyRanking
from rankers.exceptions import InvalidParameterError

__all__ = [
    "AGGREGATES",
    "HierarchicalRanking",
    "aggregate_hierarchy",
    "aggregate_rankings",
    "site_similarity",
]

#: aggregation methods by name (:data:`aggregation.combine.METHODS`, the one table);
#: "weighted_mean_rank" needs weights
AGGREGATES: Mapping[str, Callable[..., AnyRanking]] = METHODS


def _site_weights(weights: Any, sites: list[str]) -> Any:
    if isinstance(weights, Mapping):
        absent = [s for s in sites if s not in weights]
        if absent:
            raise InvalidParameterError(f"weights has no value for site(s) {format_names(absent)}")
        return [weights[s] for s in sites]
    if isinstance(weights, str):
        raise InvalidParameterError(
            f"weights={weights!r} is only known to rank_sites; here pass a mapping site -> "
            "weight or one number per ranking"
        )
    return weights


# ------------------------------------------------------------------ aggregation
def aggregate_rankings(
    rankings: Mapping[str, AnyRanking],
    aggregate: str | Sequence[str] = ("generic", "mean_rank"),
    weights: Mapping[str, float] | Sequence[float] | None = None,
) -> dict[str, AnyRanking]:
    """Aggregate per-site rankings; this step only ever sees rankings, never data.

    Parameters
    ----------
    rankings : mapping site -> Ranking or GenericRanking
        At least one, over one feature set (matched by name).
    aggregate : str or sequence of str, default=("generic", "mean_rank")
        Methods from :data:`AGGREGATES`: "generic", "mean_rank", "median_rank", "borda",
        "weighted_mean_rank", "vote", "kemeny" (see :mod:`aggregation.combine`).
    weights : mapping site -> float or sequence, optional
        For "weighted_mean_rank" (required by it): one non-negative weight per site, e.g.
        the site sizes; a sequence follows the order of ``rankings``.

    Returns
    -------
    dict
        Method name -> aggregated ranking (a GenericRanking for "generic", else a Ranking).

    Raises
    ------
    InvalidParameterError
        An item is not a ranking (naming its site), an unknown method, or missing weights.
    FeatureMismatchError
        The sites' feature sets differ; each site's missing and extra features are listed.
    """
    if not isinstance(rankings, Mapping) or not rankings:
        raise InvalidParameterError("rankings must be a non-empty mapping site -> Ranking")
    wrong = [f"{k!r} ({type(r).__name__})" for k, r in rankings.items() if not is_ranking(r)]
    if wrong:
        raise InvalidParameterError(
            "aggregate_rankings takes rankings only (Ranking or GenericRanking); not for "
            "site(s) " + ", ".join(wrong)
        )
    methods = check_methods(aggregate)
    sites = list(rankings)
    check_same_features({s: r.names for s, r in rankings.items()})
    inputs = [rankings[s] for s in sites]
    out: dict[str, AnyRanking] = {}
    for m in methods:
        if m == "weighted_mean_rank":
            if weights is None:
                raise InvalidParameterError(
                    "weighted_mean_rank needs weights (e.g. the site sizes), one per site"
                )
            out[m] = weighted_mean_rank(inputs, _site_weights(weights, sites))
        else:
            out[m] = METHODS[m](inputs)
    return out


def site_similarity(rankings: Mapping[str, AnyRanking]) -> dict[str, pd.DataFrame]:
    """Pairwise s-measure and Spearman matrices of the sites, labelled by site.

    Spearman is NaN for a site whose ranking ties every feature (undefined there).
    """
    sites = list(rankings)
    inputs = list(rankings.values())
    out = {"s_measure": pairwise(inputs, "s_measure", labels=sites)}
    # Spearman is undefined for a site that ties every feature: NaN there, not an error.
    ok = [s for s in sites if rankings[s].ranks.nunique() > 1]
    rho = pd.DataFrame(np.nan, index=pd.Index(sites), columns=pd.Index(sites))
    if len(ok) == 1:  # compare.pairwise's Spearman kernel needs two rows (np.corrcoef)
        rho.loc[ok, ok] = 1.0
    elif ok:
        sub = pairwise([rankings[s] for s in ok], "spearman", labels=ok)
        rho.loc[ok, ok] = sub.to_numpy()
    rho.attrs["measure"] = "spearman"
    out["spearman"] = rho
    return out


# ------------------------------------------------------------------ hierarchy
@dataclass(frozen=True)
class HierarchicalRanking:
    """Rankings aggregated level by level: sites -> regions (-> sub-regions) -> global.

    Attributes
    ----------
    global_ranking : Ranking or GenericRanking
        The aggregate of the top-level regions.
    regions : dict
        Every region (at any depth) -> the aggregate of its members, deepest first.
    method : str
        The aggregation used at every level.
    """

    global_ranking: AnyRanking
    regions: dict[str, AnyRanking]
    method: str


def _leaves(tree: Mapping[str, Any], path: str = "") -> list[tuple[str, list[str]]]:
    """(region, its sites) for every region holding sites; checks the tree's shape."""
    out = []
    for region, members in tree.items():
        where = f"{path}{region!s}"
        if isinstance(members, Mapping):
            out += _leaves(members, where + " / ")
        elif isinstance(members, str) or not isinstance(members, Sequence):
            raise InvalidParameterError(
                f"region {where!r}: give a list of site names or a mapping of sub-regions, "
                f"not {type(members).__name__}"
            )
        else:
            out.append((where, [str(m) for m in members]))
    return out


def aggregate_hierarchy(
    hierarchy: Mapping[str, Any],
    rankings: Mapping[str, AnyRanking] | Any,
    method: str = "generic",
) -> HierarchicalRanking:
    """Aggregate per-site rankings region by region, then the regions into one ranking.

    With ``method="generic"`` the result equals the generic ranking of all sites at once:
    ``generic`` never splits an input's blocks and is associative, so sites -> regions ->
    global loses nothing. Rank-based methods ("mean_rank", ...) aggregate the regions'
    aggregates, which in general differs from aggregating all sites at once.

    Parameters
    ----------
    hierarchy : mapping
        Region -> list of site names, or region -> mapping of sub-regions (any depth).
        Region names must be distinct at all depths; every ranked site in exactly one region.
    rankings : mapping site -> Ranking/GenericRanking, or SiteRankings
        With a SiteRankings, its failed sites may appear in ``hierarchy`` and are skipped;
        a region left without ranked sites is left out.
    method : str, default="generic"
        One of :data:`aggregation.combine.METHODS` except "weighted_mean_rank".

    Returns
    -------
    HierarchicalRanking
    """
    failed: set[str] = set()
    if not isinstance(rankings, Mapping) and hasattr(rankings, "failed"):  # a SiteRankings
        failed, rankings = set(rankings.failed), rankings.rankings
    allowed = [m for m in METHODS if m != "weighted_mean_rank"]
    (method,) = check_methods(str(method), allowed)
    if not isinstance(hierarchy, Mapping) or not hierarchy:
        raise InvalidParameterError("hierarchy must be a non-empty mapping region -> sites")
    leaves = _leaves(hierarchy)
    placed = Counter(s for _, members in leaves for s in members)
    problems = []
    for label, bad in (
        ("unknown site(s)", [s for s in placed if s not in rankings and s not in failed]),
        ("site(s) in more than one region", [s for s, c in placed.items() if c > 1]),
        ("site(s) in no region", [s for s in rankings if s not in placed]),
    ):
        if bad:
            problems.append(f"{label}: {format_names(bad)}")
    if problems:
        raise InvalidParameterError("hierarchy does not fit the sites; " + "; ".join(problems))
    regions: dict[str, AnyRanking] = {}

    def combine_node(name: str, members: Any) -> AnyRanking | None:
        if isinstance(members, Mapping):
            parts = {str(k): combine_node(str(k), v) for k, v in members.items()}
        else:
            parts = {str(s): rankings[str(s)] for s in members if str(s) in rankings}
        parts = {k: v for k, v in parts.items() if v is not None}
        if not parts:
            return None
        if name in regions:
            raise InvalidParameterError(f"region name {name!r} is used twice")
        regions[name] = aggregate_rankings(parts, method)[method]
        return regions[name]

    top = {str(k): combine_node(str(k), v) for k, v in hierarchy.items()}
    top = {k: v for k, v in top.items() if v is not None}
    return HierarchicalRanking(aggregate_rankings(top, method)[method], regions, method)
