"""Everything that takes rankings (and data) and gives a combined ranking or a verdict.

- :mod:`~aggregation.ranking`: :class:`Ranking` (one scored ranking) and
  :class:`GenericRanking` (an ordered partition of the features).
- :mod:`~aggregation.combine` (with :mod:`~aggregation.consensus`): combine several
  rankings into one; :data:`~aggregation.combine.METHODS` is the table of methods by name.
- :mod:`aggregation.fusion`: fusions that survive failing members: Robust Rank
  Aggregation (with a p-value per feature), reciprocal rank fusion, best-rank fusion.
- :mod:`~aggregation.compare`: similarity of rankings, pairwise matrices, stability.
- :mod:`~aggregation.uncertainty`: generic rankings with uncertainty (tolerant, from
  bootstrap resamples) and what incompatible rankings still share.
- :mod:`~aggregation.plots`: figures of rankings and of evaluation results.
- :mod:`aggregation.federated`: rank each site where its data lives, aggregate the
  rankings (in one process; across machines with Flower: :mod:`moweights.federated`).
- :mod:`aggregation.evaluation`: top-k and error curves, clustering, statistics.

:mod:`aggregation` computes on in-memory data only (frames, arrays, rankings): reading a
user's data files lives in :mod:`moweights.data.readers`.

Names are imported on first access (PEP 562), so ``import aggregation`` imports neither
pandas, scipy nor scikit-learn. The old module paths (``aggregation.curves``,
``error_curves``, ``clustering``, ``stats``, ``bayes``, ``flower``) are gone: their names
live in :mod:`aggregation.evaluation` and :mod:`moweights.federated.flower`.
"""

from __future__ import annotations

from typing import Any

from rankers.utils.lazy import attach

#: submodule -> the public names it defines: the package's one list of its names
_EXPORTS = {
    "ranking": ("GenericRanking", "Ranking"),
    "combine": (
        "borda",
        "generic",
        "kemeny",
        "mean_rank",
        "median_rank",
        "vote",
        "vote_table",
        "weighted_mean_rank",
    ),
    "fusion": ("best_rank", "rra", "rra_pvalues", "rrf"),
    "compare": ("pairwise", "s_measure", "stability"),
    "uncertainty": (
        "agreement_profile",
        "disagreement",
        "rank_intervals",
        "shared_top",
        "stability_partition",
        "tolerant_generic",
    ),
    "federated": (
        "SiteRankings",
        "aggregate_hierarchy",
        "aggregate_rankings",
        "rank_sites",
    ),
    "evaluation": (
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

_getattr, _dir, __all__ = attach(__name__, _EXPORTS, submodules=("consensus", "plots"))


def __getattr__(name: str) -> Any:
    return _getattr(name)


def __dir__() -> list[str]:
    return _dir()
