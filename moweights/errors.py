"""The errors and warnings moweights raises, in one place.

The error types shared by the three packages live in :mod:`rankers.exceptions` (the
lowest layer) and are re-exported here; the ones only moweights raises are defined here.
Each subclasses the built-in a user already catches (``ValueError``, ``OSError``, ...).
"""

from __future__ import annotations

from rankers.exceptions import (
    ConfigError,
    DataFileError,
    InvalidInputError,
    InvalidParameterError,
    MoweightsError,
    OutputFolderError,
    RunLockedError,
)

__all__ = [
    "CacheFormatError",
    "CacheWarning",
    "ConfigError",
    "DataFetchError",
    "DataFileError",
    "DataPreparationWarning",
    "InvalidInputError",
    "InvalidParameterError",
    "MoweightsError",
    "OutputFolderError",
    "RunLockedError",
    "StaleLockWarning",
]


class CacheWarning(UserWarning):
    """A cache entry was unusable (and its step recomputed), or a result could not be kept."""


class CacheFormatError(ValueError):
    """A value the cache cannot hold, or an entry that does not decode."""


class StaleLockWarning(UserWarning):
    """The lock of a run that no longer exists was taken over."""


class DataFetchError(MoweightsError, OSError):
    """A data set could not be fetched: offline, a bad checksum, an unknown name."""


class DataPreparationWarning(UserWarning):
    """A table was prepared as asked, but in a way worth a second look (e.g. one-hot
    encoding a column of very many levels)."""
