"""Old path of :mod:`aggregation.evaluation.bayes` (Bayesian comparison of methods); kept so
existing code keeps working."""

from __future__ import annotations

from aggregation.evaluation.bayes import BayesianComparison, bayesian_comparison

__all__ = ["BayesianComparison", "bayesian_comparison"]
