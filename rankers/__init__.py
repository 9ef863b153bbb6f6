"""Feature rankers behind one contract and one registry.

Importing :mod:`rankers` is cheap: every public name (the table ``_EXPORTS``) is imported
from its module on first access (PEP 562) -- the registry and the exceptions are plain
Python, while :class:`BaseRanker`, :func:`ranker_tags` and :class:`RankerTags` need
scikit-learn -- and the rankers themselves are loaded by the registry only when asked for
one.
"""

from __future__ import annotations

from typing import Any

from rankers.utils.lazy import attach

#: submodule -> the public names it defines: the package's one list of its names
_EXPORTS = {
    "base": ("BaseRanker",),
    "context": ("FitContext", "Scores"),
    "exceptions": (
        "FeatureMismatchError",
        "InvalidInputError",
        "InvalidParameterError",
        "MoweightsError",
        "NotEnoughMemoryError",
        "PluginLoadError",
        "UnknownRankerError",
    ),
    "registry": ("available", "broken", "get", "get_class", "register", "reload"),
    "tags": ("RankerTags", "ranker_tags"),
}

_getattr, _dir, __all__ = attach(
    __name__,
    _EXPORTS,
    submodules=(
        "kmeans",
        "memory",
        "neighbors",
        "preprocessing",
        "supervised",
        "ties",
        "unsupervised",
        "utils",
        "validation",
    ),
)


def __getattr__(name: str) -> Any:
    return _getattr(name)


def __dir__() -> list[str]:
    return _dir()
