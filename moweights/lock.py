"""Old path of the run folder's lock, kept for outside code: see :mod:`moweights.pipeline.lock`."""

from __future__ import annotations

from moweights.pipeline.lock import LOCK_NAME, RunLock, StaleLockWarning

__all__ = ["LOCK_NAME", "RunLock", "StaleLockWarning"]
