"""Deprecated old path of the run folder's writer: import from :mod:`moweights.output`.

Importing it warns (:class:`DeprecationWarning`); it re-exports the moved names until
its removal in moweights 0.2.0 (:data:`rankers._moved.REMOVED_IN`).
"""

from __future__ import annotations

from moweights.output.files import atomic_write, make_output_dir, safe_name
from moweights.output.folder import RunFolder, curve_point, summary_text
from rankers._moved import warn_moved

warn_moved(__name__, "moweights.output")

__all__ = [
    "RunFolder",
    "atomic_write",
    "curve_point",
    "make_output_dir",
    "safe_name",
    "summary_text",
]
