"""Deprecated old path of the Bayesian comparison of methods: import from
:mod:`aggregation.evaluation.bayes`.

Importing it warns (:class:`DeprecationWarning`); it re-exports the moved names until
its removal in moweights 0.2.0 (:data:`rankers._moved.REMOVED_IN`).
"""

from __future__ import annotations

from aggregation.evaluation.bayes import BayesianComparison, bayesian_comparison
from rankers._moved import warn_moved

warn_moved(__name__, "aggregation.evaluation.bayes")

__all__ = ["BayesianComparison", "bayesian_comparison"]
