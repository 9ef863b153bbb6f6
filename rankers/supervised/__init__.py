"""Supervised rankers: they need a target (classes, or numbers for the regression variants).

Each class is imported on first access, so importing this package (which loading one
ranker through the registry does) imports no other ranker.
"""

from __future__ import annotations

from typing import Any

from rankers._lazy import attach

_MODULES = {
    "estimator": ("EstimatorImportanceRanker",),
    "forest": ("RandomForestRanker",),
    "information": ("Chi2Ranker", "InfoGainRanker"),
    "mrmr": ("CMIMRanker", "JMIRanker", "MRMRRanker"),
    "multisurf": ("MultiSURFRanker",),
    "relief": ("RReliefFRanker", "ReliefFRanker"),
    "svm_rfe": ("SVMRFERanker",),
    "univariate": ("ANOVAFRanker", "FisherScoreRanker", "TTestRanker"),
}

__all__ = [
    "ANOVAFRanker",
    "CMIMRanker",
    "Chi2Ranker",
    "EstimatorImportanceRanker",
    "FisherScoreRanker",
    "InfoGainRanker",
    "JMIRanker",
    "MRMRRanker",
    "MultiSURFRanker",
    "RReliefFRanker",
    "RandomForestRanker",
    "ReliefFRanker",
    "SVMRFERanker",
    "TTestRanker",
]

_getattr, _dir = attach(
    __name__,
    {name: f"{__name__}.{module}" for module, names in _MODULES.items() for name in names},
    submodules=_MODULES,
    public=__all__,
)


def __getattr__(name: str) -> Any:
    return _getattr(name)


def __dir__() -> list[str]:
    return _dir()
