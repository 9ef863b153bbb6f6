"""Feature rankers behind one contract and one registry."""

from rankers.base import BaseRanker
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

__all__ = [
    "BaseRanker",
    "ConfigError",
    "FeatureMismatchError",
    "InvalidInputError",
    "InvalidParameterError",
    "MoweightsError",
    "NotEnoughMemoryError",
    "PluginLoadError",
    "UnknownRankerError",
    "available",
    "broken",
    "get",
    "get_class",
    "register",
    "reload",
]
