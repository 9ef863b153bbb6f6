"""Everything that takes rankings (and data) and gives a combined ranking or a verdict.

- :mod:`~aggregation.ranking`: :class:`Ranking` (one scored ranking) and
  :class:`GenericRanking` (an ordered partition of the features).
- :mod:`~aggregation.combine` (with :mod:`~aggregation.consensus`): combine several
  rankings into one; :data:`~aggregation.combine.METHODS` is the table of methods by name.
- :mod:`~aggregation.compare`: similarity of rankings, pairwise matrices, stability.
- :mod:`~aggregation.uncertainty`: generic rankings with uncertainty (tolerant, from
  bootstrap resamples) and what incompatible rankings still share.
- :mod:`~aggregation.plots`: figures of rankings and of evaluation results.
- :mod:`aggregation.federated`: rank each site where its data lives, aggregate the
  rankings (in one process, or across machines with Flower).
- :mod:`aggregation.evaluation`: top-k and error curves, clustering, statistics.

The old module paths (``aggregation.curves``, ``aggregation.error_curves``,
``aggregation.clustering``, ``aggregation.stats``, ``aggregation.bayes``,
``aggregation.flower``) still work. Names are imported on first access (PEP 562), so
``import aggregation`` imports neither pandas, scipy nor scikit-learn.
"""

from __future__ import annotations

from typing import Any

from rankers._lazy import attach

_NAMES = {
    "aggregation.ranking": ("GenericRanking", "Ranking"),
    "aggregation.combine": (
        "borda",
        "generic",
        "kemeny",
        "mean_rank",
        "median_rank",
        "vote",
        "vote_table",
        "weighted_mean_rank",
    ),
    "aggregation.compare": ("pairwise", "s_measure", "stability"),
    "aggregation.uncertainty": (
        "agreement_profile",
        "disagreement",
        "rank_intervals",
        "shared_top",
        "stability_partition",
        "tolerant_generic",
    ),
    "aggregation.federated": (
        "SiteRankings",
        "aggregate_hierarchy",
        "aggregate_rankings",
        "rank_sites",
    ),
    "aggregation.evaluation": (
        "average_ranks",
        "cluster_scores",
        "eca",
        "expected_curve",
        "ffa_rfa",
        "friedman",
        "geometric_grid",
        "nemenyi",
        "topk_curve",
    ),
}
_SUBMODULES = (
    "bayes",
    "clustering",
    "combine",
    "compare",
    "consensus",
    "curves",
    "error_curves",
    "evaluation",
    "federated",
    "flower",
    "plots",
    "ranking",
    "stats",
    "uncertainty",
)

__all__ = [
    "GenericRanking",
    "Ranking",
    "SiteRankings",
    "aggregate_hierarchy",
    "aggregate_rankings",
    "agreement_profile",
    "average_ranks",
    "borda",
    "cluster_scores",
    "clustering",
    "combine",
    "compare",
    "curves",
    "disagreement",
    "eca",
    "error_curves",
    "evaluation",
    "expected_curve",
    "federated",
    "ffa_rfa",
    "friedman",
    "generic",
    "geometric_grid",
    "kemeny",
    "mean_rank",
    "median_rank",
    "nemenyi",
    "pairwise",
    "plots",
    "rank_intervals",
    "rank_sites",
    "s_measure",
    "shared_top",
    "stability",
    "stability_partition",
    "stats",
    "tolerant_generic",
    "topk_curve",
    "uncertainty",
    "vote",
    "vote_table",
    "weighted_mean_rank",
]

_getattr, _dir = attach(
    __name__,
    {name: module for module, names in _NAMES.items() for name in names},
    submodules=_SUBMODULES,
    public=__all__,
)


def __getattr__(name: str) -> Any:
    return _getattr(name)


def __dir__() -> list[str]:
    return _dir()
