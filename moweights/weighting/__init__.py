"""NSGA-II feature weighting over entropy and dissimilarity criteria (the namesake)."""

from moweights.weighting.criteria import (
    ALIASES,
    CRITERIA,
    Criteria,
    objective_label,
    parse_objectives,
)
from moweights.weighting.problem import WeightingProblem
from moweights.weighting.ranker import FRONT_TO_RANKING, MOWeighting

__all__ = [
    "ALIASES",
    "CRITERIA",
    "FRONT_TO_RANKING",
    "Criteria",
    "MOWeighting",
    "WeightingProblem",
    "objective_label",
    "parse_objectives",
]
