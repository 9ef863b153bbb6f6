"""A run's output folder: its files, its tables as they are written, its figures and page.

- :mod:`~moweights.output.files` -- atomic writes; CSV and JSON text that is the same on
  every machine; the output folder's creation;
- :mod:`~moweights.output.folder` -- :class:`RunFolder` (the tables, ``summary.json`` and
  ``manifest.json`` of a run, rewritten after every step) and :func:`summary_text`;
- :mod:`~moweights.output.plots` -- the PNG figures, drawn from the saved tables;
- :mod:`~moweights.output.report` -- :func:`render`: the figures and ``report.html``, a
  Jinja2 template shipped in ``templates/``.
"""

from __future__ import annotations

from moweights.output.files import atomic_write, make_output_dir, safe_name
from moweights.output.folder import RunFolder, curve_point, summary_text
from moweights.output.report import render

__all__ = [
    "RunFolder",
    "atomic_write",
    "curve_point",
    "make_output_dir",
    "render",
    "safe_name",
    "summary_text",
]
