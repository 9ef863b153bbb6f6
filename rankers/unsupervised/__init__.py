"""Unsupervised rankers: they score features from X alone (and ignore a y they are given).

Each class is imported on first access, so importing this package (which loading one
ranker through the registry does) imports no other ranker.
"""

from __future__ import annotations

from typing import Any

from rankers._lazy import attach

_MODULES = {
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

__all__ = [
    "AgnosSRanker",
    "CompactnessRanker",
    "DistanceRankRanker",
    "FRANeRanker",
    "Genie3Ranker",
    "LaplacianRanker",
    "MCFSRanker",
    "NDFSRanker",
    "RFScoreRanker",
    "SPECRanker",
    "UReliefRanker",
    "VarianceRanker",
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
