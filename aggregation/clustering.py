"""Old path of :mod:`aggregation.evaluation.clustering` (k-means on the top features, scored
against the classes); kept so existing code keeps working."""

from __future__ import annotations

from aggregation.evaluation.clustering import (
    METRICS,
    cluster_scores,
    clustering_metrics,
    match_clusters,
    two_step_metrics,
)

__all__ = ["METRICS", "cluster_scores", "clustering_metrics", "match_clusters", "two_step_metrics"]
