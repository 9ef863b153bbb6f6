"""NSGA-II feature weighting (the namesake): the paper's criteria and criteria of relevance."""

from moweights.weighting.criteria import (
    ALIASES,
    CRITERIA,
    PRESETS,
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
    "PRESETS",
    "Criteria",
    "MOWeighting",
    "WeightingProblem",
    "objective_label",
    "parse_objectives",
]
