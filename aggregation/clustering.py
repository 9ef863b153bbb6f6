"""Deprecated old path of k-means on the top features, scored against the classes: import from
:mod:`aggregation.evaluation.clustering`.

Importing it warns (:class:`DeprecationWarning`); it re-exports the moved names until
its removal in moweights 0.2.0 (:data:`rankers._moved.REMOVED_IN`).
"""

from __future__ import annotations

from aggregation.evaluation.clustering import (
    METRICS,
    cluster_scores,
    clustering_metrics,
    match_clusters,
    two_step_metrics,
)
from rankers._moved import warn_moved

warn_moved(__name__, "aggregation.evaluation.clustering")

__all__ = ["METRICS", "cluster_scores", "clustering_metrics", "match_clusters", "two_step_metrics"]
