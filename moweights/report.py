"""Old path of the run folder's writer, kept for outside code: see :mod:`moweights.output`."""

from __future__ import annotations

from moweights.output.files import atomic_write, make_output_dir, safe_name
from moweights.output.folder import RunFolder, curve_point, summary_text

__all__ = [
    "RunFolder",
    "atomic_write",
    "curve_point",
    "make_output_dir",
    "safe_name",
    "summary_text",
]
