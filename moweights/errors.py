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
    "OutputWriteError",
    "RunLockedError",
    "SchedulerError",
    "StaleLockWarning",
    "Terminated",
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


class OutputWriteError(MoweightsError, OSError):
    """A file of a results folder could not be written (disk full, file-size limit, a
    read-only file system); the message names the file and the reason.

    Attributes
    ----------
    path : Path
        The file that could not be written.
    """

    def __init__(self, message: str, path=None, errno: int | None = None):
        super().__init__(message)
        self.path = path
        self.errno = errno
        self.filename = None if path is None else str(path)

    def __str__(self) -> str:  # OSError would prefix "[Errno ...]" otherwise
        return self.args[0]

    def __reduce__(self):
        return (type(self), (self.args[0], self.path, self.errno))


class SchedulerError(MoweightsError, ConnectionError):
    """The Dask scheduler a run names cannot be used: it does not answer, or not as a
    Dask scheduler; the message names the address and what happened.

    Attributes
    ----------
    address : str
    """

    def __init__(self, message: str, address: str | None = None):
        super().__init__(message)
        self.address = address

    def __str__(self) -> str:
        return self.args[0]

    def __reduce__(self):
        return (type(self), (self.args[0], self.address))


class Terminated(KeyboardInterrupt):
    """SIGTERM (what ``timeout``, ``kill`` and batch schedulers send), raised by the
    ``moweights`` command's handler so that a run ends as on Ctrl-C: the folder finished
    as partial, its lock released. A KeyboardInterrupt, so that everything prepared for
    Ctrl-C handles it; ``signal_name`` says which it was."""

    signal_name = "SIGTERM"
