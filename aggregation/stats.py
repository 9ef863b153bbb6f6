"""Old path of :mod:`aggregation.evaluation.stats` (Friedman, Nemenyi, Wilcoxon–Holm); kept
so existing code keeps working."""

from __future__ import annotations

from aggregation.evaluation.stats import (
    FriedmanResult,
    NemenyiResult,
    WilcoxonHolmResult,
    average_ranks,
    cd_groups,
    critical_difference,
    friedman,
    nemenyi,
    rank_table,
    wilcoxon_holm,
)

__all__ = [
    "FriedmanResult",
    "NemenyiResult",
    "WilcoxonHolmResult",
    "average_ranks",
    "cd_groups",
    "critical_difference",
    "friedman",
    "nemenyi",
    "rank_table",
    "wilcoxon_holm",
]
