"""Old path of the run cache, kept for outside code: see :mod:`moweights.pipeline.cache`."""

from __future__ import annotations

from moweights.pipeline.cache import (
    CacheFormatError,
    CacheWarning,
    StepCache,
    code_fingerprint,
    decode,
    encode,
)

__all__ = ["CacheFormatError", "CacheWarning", "StepCache", "code_fingerprint", "decode", "encode"]
