"""Deprecated old path of the run folder's lock: import from :mod:`moweights.pipeline.lock`.

Importing it warns (:class:`DeprecationWarning`); it re-exports the moved names until
its removal in moweights 0.2.0 (:data:`rankers._moved.REMOVED_IN`).
"""

from __future__ import annotations

from moweights.pipeline.lock import LOCK_NAME, RunLock, StaleLockWarning
from rankers._moved import warn_moved

warn_moved(__name__, "moweights.pipeline.lock")

__all__ = ["LOCK_NAME", "RunLock", "StaleLockWarning"]
