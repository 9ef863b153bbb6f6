"""One run per output folder: a lock file naming its owner.

Two runs writing into one folder would leave a mix of both (run 2's ``config.json``
beside run 1's tables), so a run first creates ``<folder>/.moweights.lock`` with
``O_CREAT | O_EXCL`` (atomic: of two processes, exactly one creates it), holding the
owner's pid, host and start time, and removes it at the end, whether the run finished,
failed or was interrupted. A second run finds the file and stops with
:class:`~moweights.errors.RunLockedError`.

A lock whose owner is gone (killed with ``kill -9``, a crashed machine) would block the
folder for ever, so a lock is *stale*, and is taken over with a warning, when its owner
was on this host and its pid is no longer alive there (or is a zombie, or belongs to a
process started after the lock was written: the pid was reused). A lock from another
host cannot be checked and is respected; the error says which file to delete.

The lock is read back from a folder that may come from anyone: it is opened without
following a link and without waiting on a FIFO, must be a regular file, and is read up
to :data:`LOCK_BYTES` only (:func:`moweights.output.files.read_bytes`). A lock that is
none of these -- a link, a FIFO, a device, a huge file -- was not written by a run: the
folder is refused (:class:`~moweights.errors.RunLockedError`, naming the file), never
read without end.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from moweights.errors import OutputFolderError, RunLockedError, StaleLockWarning
from moweights.output.files import read_bytes

__all__ = ["LOCK_BYTES", "LOCK_NAME", "RunLock", "StaleLockWarning"]

LOCK_NAME = ".moweights.lock"
#: a lock holds one short JSON object (pid, host, times, the command cut to 500 characters)
LOCK_BYTES = 64 * 1024


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def _read(path: Path) -> dict | None:
    """The owner a lock file names, or None when it is unreadable (being written, foreign).

    Raises
    ------
    OutputFolderError
        The lock is a link, not a regular file, or larger than :data:`LOCK_BYTES`.
    """
    try:
        owner = json.loads(read_bytes(path, LOCK_BYTES, what="lock").decode("utf-8"))
    except OutputFolderError:
        raise
    except (OSError, ValueError):
        return None
    ok = isinstance(owner, dict) and isinstance(owner.get("pid"), int)
    return owner if ok and isinstance(owner.get("host"), str) else None


def _process_start(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch), where /proc tells."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        ticks = int(stat.rpartition(")")[2].split()[19])  # field 22: starttime
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return time.time() - uptime + ticks / os.sysconf("SC_CLK_TCK")


def _alive(owner: dict) -> bool:
    """Whether the owner of a lock may still be running (True when we cannot tell)."""
    if owner["host"] != socket.gethostname():
        return True
    pid = owner["pid"]
    if pid == os.getpid() or os.name == "nt":  # Windows: signal 0 is CTRL_C_EVENT there
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        pass
    with contextlib.suppress(OSError, IndexError):
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        if state in ("Z", "X"):  # exited, not yet reaped by its parent
            return False
    # a process started after the lock was written is not its owner: the pid was reused
    started, locked = _process_start(pid), owner.get("epoch")
    return started is None or not isinstance(locked, (int, float)) or started <= locked + 2


def _describe(owner: dict | None) -> str:
    if owner is None:
        return "an unknown owner (the lock file is unreadable)"
    return f"pid {owner['pid']} on {owner['host']}, started {owner.get('started', '?')}"


class RunLock:
    """The lock of one output folder; a context manager.

    Parameters
    ----------
    folder : path
        An existing folder.

    Examples
    --------
    >>> with RunLock(folder):  # doctest: +SKIP
    ...     write_the_run_into(folder)
    """

    def __init__(self, folder):
        self.path = Path(folder) / LOCK_NAME
        self.owner: dict[str, Any] | None = None

    def acquire(self) -> RunLock:
        """Take the lock, or raise :class:`RunLockedError` naming the run that holds it."""
        for _ in range(3):
            if self._create():
                return self
            try:
                owner = _read(self.path)
            except OutputFolderError as exc:  # not a lock any run writes: never waited on
                raise RunLockedError(
                    f"output folder {self.path.parent} has a lock file no run wrote: {exc}",
                    path=self.path,
                ) from None
            if owner is None and not self.path.exists():
                continue  # released meanwhile
            if owner is None or _alive(owner):
                raise RunLockedError(
                    f"output folder {self.path.parent} is in use by another run "
                    f"({_describe(owner)}); wait for it to finish, or delete {self.path} "
                    "if no such run is going on",
                    path=self.path,
                    owner=owner,
                )
            if self._remove_stale(owner):
                warnings.warn(
                    f"took over the stale lock of output folder {self.path.parent} "
                    f"(its run, {_describe(owner)}, is gone)",
                    StaleLockWarning,
                    stacklevel=2,
                )
        raise RunLockedError(
            f"output folder {self.path.parent} is being taken by another run at this moment",
            path=self.path,
        )

    def _create(self) -> bool:
        owner = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": _now(),
            "epoch": time.time(),
            "command": " ".join(sys.argv)[:500],
        }
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        except OSError as exc:
            raise OutputFolderError(
                f"output folder {self.path.parent} is not writable: {exc.strerror}"
            ) from None
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(owner, f)
        except BaseException as exc:  # a full disk: no empty lock left behind to block
            with contextlib.suppress(OSError):
                os.unlink(self.path)
            if isinstance(exc, OSError):
                raise OutputFolderError(
                    f"output folder {self.path.parent} is not writable: "
                    f"{exc.strerror or exc}"
                ) from None
            raise
        self.owner = owner
        return True

    def _remove_stale(self, owner: dict) -> bool:
        """Remove the stale lock ``owner`` wrote, unless another run replaced it meanwhile."""
        aside = self.path.with_name(f"{LOCK_NAME}.{os.getpid()}.stale")
        try:
            os.rename(self.path, aside)  # atomic: of two runs taking over, one gets it
        except FileNotFoundError:
            return False
        try:
            fresh = _read(aside) != owner
        except OutputFolderError:
            fresh = True
        if fresh:  # a live run's fresh lock: put it back
            with contextlib.suppress(OSError):
                os.link(aside, self.path)
            aside.unlink(missing_ok=True)
            return False
        aside.unlink(missing_ok=True)
        return True

    def release(self) -> None:
        """Remove the lock if it is still ours."""
        with contextlib.suppress(OSError):  # OutputFolderError: replaced by something else
            if self.owner is not None and _read(self.path) == self.owner:
                self.path.unlink()
        self.owner = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
