"""Deprecated old path of the figures and HTML page of a run folder: import from
:mod:`moweights.output.report`.

Importing it warns (:class:`DeprecationWarning`); it re-exports the moved names until
its removal in moweights 0.2.0 (:data:`rankers._moved.REMOVED_IN`).
"""

from __future__ import annotations

from moweights.output.report import render
from rankers._moved import warn_moved

warn_moved(__name__, "moweights.output.report")

__all__ = ["render"]
