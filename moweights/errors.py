"""The errors and warnings moweights raises, in one place.

Every error and warning of the application (a config, a data file, a download, an output
folder, a run's lock and cache) is defined here, its one home. Their base classes live in
:mod:`rankers.exceptions`, the lowest layer, where every layer can subclass them, and are
re-exported here (:class:`MoweightsError`, :class:`InvalidInputError`,
:class:`InvalidParameterError`), so ``except moweights.errors.MoweightsError`` catches
them all. Each subclasses the built-in a user already catches (``ValueError``,
``OSError``, ...).
"""

from __future__ import annotations

from rankers.exceptions import InvalidInputError, InvalidParameterError, MoweightsError

__all__ = [
    "CacheFormatError",
    "CacheWarning",
    "ConfigError",
    "DataFetchError",
    "DataFileError",
    "DataPreparationWarning",
    "DataProblemsError",
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


class ConfigError(MoweightsError, ValueError):
    """A configuration file has unknown keys, unknown rankers or bad values.

    Attributes
    ----------
    problems : list of str
        One line per problem, each naming the file and the key.
    """

    def __init__(self, problems, path=None):
        self.problems = list(problems)
        self.path = path
        where = f" in {path}" if path else ""
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"{len(self.problems)} problem(s){where}:\n{lines}")


class DataProblemsError(ConfigError, InvalidInputError):
    """The data of a configured run have problems its ``[data]`` options must handle
    (gaps, text or identifier columns, too few samples per class, ...), found before
    anything was fitted; ``problems`` lists every one with the option that handles it.
    A :class:`ConfigError` (bad input: exit code 2) and an :class:`InvalidInputError`."""


class DataFileError(InvalidInputError):
    """A data file cannot be read: not readable, not in its format (binary, corrupt) or
    ragged; the one-line message names the file and the problem."""


class OutputFolderError(MoweightsError, OSError):
    """An output folder cannot be used: it is a file, lies under a file, or is read-only."""


class RunLockedError(MoweightsError, RuntimeError):
    """Another run holds the output folder's lock (one run per folder at a time).

    Attributes
    ----------
    path : Path
        The lock file.
    owner : dict
        What the lock file says of its owner (``pid``, ``host``, ``started``), if readable.
    """

    def __init__(self, message: str, path=None, owner=None):
        super().__init__(message)
        self.path = path
        self.owner = dict(owner or {})


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
