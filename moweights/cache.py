"""Deprecated old path of the run cache: import from :mod:`moweights.pipeline.cache`.

Importing it warns (:class:`DeprecationWarning`); it re-exports the moved names until
its removal in moweights 0.2.0 (:data:`rankers._moved.REMOVED_IN`).
"""

from __future__ import annotations

from moweights.pipeline.cache import (
    CacheFormatError,
    CacheWarning,
    StepCache,
    code_fingerprint,
    decode,
    encode,
)
from rankers._moved import warn_moved

warn_moved(__name__, "moweights.pipeline.cache")

__all__ = ["CacheFormatError", "CacheWarning", "StepCache", "code_fingerprint", "decode", "encode"]
