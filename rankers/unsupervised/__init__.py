"""Unsupervised rankers: they score features from X alone (and ignore a y they are given).

Each class is imported on first access, so importing this package (which loading one
ranker through the registry does) imports no other ranker.
"""

from __future__ import annotations

from typing import Any

from rankers.utils.lazy import attach

#: submodule -> the public names it defines: the package's one list of its names
_EXPORTS = {
    "agnos": ("AgnosSRanker",),
    "compactness": ("CompactnessRanker",),
    "distance_rank": ("DistanceRankRanker",),
    "ensemble": ("Genie3Ranker", "RFScoreRanker"),
    "frane": ("FRANeRanker",),
    "laplacian": ("LaplacianRanker",),
    "mcfs": ("MCFSRanker",),
    "ndfs": ("NDFSRanker",),
    "spec": ("SPECRanker",),
    "urelief": ("UReliefRanker",),
    "variance": ("VarianceRanker",),
}

_getattr, _dir, __all__ = attach(__name__, _EXPORTS)


def __getattr__(name: str) -> Any:
    return _getattr(name)


def __dir__() -> list[str]:
    return _dir()
