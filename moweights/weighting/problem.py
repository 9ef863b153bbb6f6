"""The feature-weighting problem for pymoo: what is optimised, apart from how and when."""

from __future__ import annotations

import numpy as np
from pymoo.core.problem import Problem

from moweights.weighting.criteria import Criteria

__all__ = ["WeightingProblem"]


class WeightingProblem(Problem):
    """Minimise the chosen criteria over weight vectors in [0, 1]^n.

    ``_evaluate`` receives the whole population (P × n) and evaluates it with one
    matrix product per criterion (see :class:`~moweights.weighting.criteria.Criteria`).

    Parameters
    ----------
    criteria : Criteria
        Precomputed criteria for the data.
    objectives : list of (str, float)
        Parsed objectives, e.g. ``[("C1", 1.0), ("C2", -1.0)]``.
    """

    def __init__(self, criteria: Criteria, objectives: list[tuple[str, float]]):
        self.criteria = criteria
        self.objectives = objectives
        n = criteria.n_features
        super().__init__(n_var=n, n_obj=len(objectives), xl=np.zeros(n), xu=np.ones(n))

    def _evaluate(self, X, out, *args, **kwargs):
        out["F"] = self.criteria.search_values(X, self.objectives)
