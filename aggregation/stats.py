"""Deprecated old path of Friedman, Nemenyi, Wilcoxon–Holm: import from
:mod:`aggregation.evaluation.stats`.

Importing it warns (:class:`DeprecationWarning`); it re-exports the moved names until
its removal in moweights 0.2.0 (:data:`rankers._moved.REMOVED_IN`).
"""

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
from rankers._moved import warn_moved

warn_moved(__name__, "aggregation.evaluation.stats")

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
