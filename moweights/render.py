"""Old path of the figures and HTML page of a run folder: see :mod:`moweights.output.report`."""

from __future__ import annotations

from moweights.output.report import render

__all__ = ["render"]
