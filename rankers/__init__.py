"""Feature rankers behind one contract and one registry.

Importing :mod:`rankers` is cheap: the registry and the exceptions are plain Python, and
the names that need scikit-learn (:class:`BaseRanker`, :func:`ranker_tags`,
:class:`RankerTags`) are imported on first access (PEP 562), as are the rankers themselves,
which the registry loads only when asked for one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rankers._lazy import attach
from rankers.exceptions import (
    ConfigError,
    FeatureMismatchError,
    InvalidInputError,
    InvalidParameterError,
    MoweightsError,
    NotEnoughMemoryError,
    PluginLoadError,
    UnknownRankerError,
)
from rankers.registry import available, broken, get, get_class, register, reload

if TYPE_CHECKING:
    from rankers.base import BaseRanker
    from rankers.tags import RankerTags, ranker_tags

__all__ = [
    "BaseRanker",
    "ConfigError",
    "FeatureMismatchError",
    "InvalidInputError",
    "InvalidParameterError",
    "MoweightsError",
    "NotEnoughMemoryError",
    "PluginLoadError",
    "RankerTags",
    "UnknownRankerError",
    "available",
    "broken",
    "get",
    "get_class",
    "ranker_tags",
    "register",
    "reload",
]

#: public names whose modules import scikit-learn: loaded on first access
_LAZY = {"BaseRanker": "rankers.base", "RankerTags": "rankers.tags", "ranker_tags": "rankers.tags"}


#: submodules reachable as attributes (``rankers.validation.check_X``) without an import
_SUBMODULES = frozenset(
    {
        "base",
        "exceptions",
        "kmeans",
        "memory",
        "neighbors",
        "preprocessing",
        "registry",
        "supervised",
        "tags",
        "ties",
        "unsupervised",
        "validation",
    }
)


_getattr, _dir = attach(__name__, _LAZY, submodules=_SUBMODULES, public=__all__)


def __getattr__(name: str) -> Any:
    return _getattr(name)


def __dir__() -> list[str]:
    return _dir()
