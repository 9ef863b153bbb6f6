"""Evaluation of feature rankings: the shared scorers and the statistics that compare them.

- :mod:`~aggregation.evaluation.folds`: rankings refit on the training part of every fold
  (what every held-out evaluation scores: nested, no selection bias), and aggregates of
  them computed fold by fold.
- :mod:`~aggregation.evaluation.classification`: cross-validated class prediction from the
  top-k features (balanced accuracy), the headline with a class target;
  :mod:`~aggregation.evaluation.regression` its numeric-target sibling (kNN regression, R²).
- :mod:`~aggregation.evaluation.topk`: the unsupervised top-k kNN error curve (the ranking
  refitted on every training fold).
- :mod:`~aggregation.evaluation.error_curves`: FFA/RFA curves, the expected curve of a random
  ranking and the ECA score (the error-curve paper).
- :mod:`~aggregation.evaluation.clustering`: k-means on the top features, scored against
  the classes (the Distance Rank paper), with the two-step evaluation for imbalanced data.
- :mod:`~aggregation.evaluation.stats`: Friedman, Iman–Davenport, Nemenyi and Wilcoxon–Holm
  over methods × data sets; :mod:`~aggregation.evaluation.bayes` the Bayesian comparison.
- :mod:`~aggregation.evaluation.plots` and :mod:`~aggregation.evaluation.cd_diagram`: their
  figures (also importable from :mod:`aggregation.plots`).

Names are imported on first access, so importing this package costs nothing.
"""

from __future__ import annotations

from typing import Any

from rankers.utils.lazy import attach

#: submodule -> the public names it defines: the package's one list of its names
_EXPORTS = {
    "bayes": ("BayesianComparison", "bayesian_comparison"),
    "cd_diagram": ("plot_cd_diagram",),
    "classification": ("CLASS_METRICS", "CLASS_MODELS", "class_curve"),
    "clustering": ("cluster_scores", "clustering_metrics", "match_clusters", "two_step_metrics"),
    "error_curves": (
        "WEIGHTINGS",
        "curve_delta",
        "curve_grid",
        "default_estimator",
        "eca",
        "expected_curve",
        "ffa_rfa",
        "ffa_rfa_many",
        "pool_random_curves",
        "random_curves",
    ),
    "folds": ("FoldRankings", "combine_folds", "cv_splits", "fold_rankings"),
    "plots": ("plot_error_curves", "plot_topk_curves"),
    "regression": ("REGRESSION_METRICS", "regression_curve"),
    "stats": (
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
    ),
    "topk": ("geometric_grid", "topk_curve"),
}

_getattr, _dir, __all__ = attach(__name__, _EXPORTS)


def __getattr__(name: str) -> Any:
    return _getattr(name)


def __dir__() -> list[str]:
    return _dir()
