"""Supervised rankers: they need a target (classes, or numbers for the regression variants).

Each class is imported on first access, so importing this package (which loading one
ranker through the registry does) imports no other ranker.
"""

from __future__ import annotations

from typing import Any

from rankers.utils.lazy import attach

#: submodule -> the public names it defines: the package's one list of its names
_EXPORTS = {
    "estimator": ("EstimatorImportanceRanker",),
    "forest": ("RandomForestRanker",),
    "information": ("Chi2Ranker", "InfoGainRanker"),
    "mrmr": ("CMIMRanker", "JMIRanker", "MRMRRanker"),
    "multisurf": ("MultiSURFRanker",),
    "relief": ("RReliefFRanker", "ReliefFRanker"),
    "svm_rfe": ("SVMRFERanker",),
    "univariate": ("ANOVAFRanker", "FisherScoreRanker", "TTestRanker"),
}

_getattr, _dir, __all__ = attach(__name__, _EXPORTS)


def __getattr__(name: str) -> Any:
    return _getattr(name)


def __dir__() -> list[str]:
    return _dir()
