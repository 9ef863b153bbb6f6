"""Deprecated old path of the ``.h5ad`` reader: import from :mod:`moweights.datafiles.h5ad`.

Importing it warns (:class:`DeprecationWarning`); it re-exports the moved names until
its removal in moweights 0.2.0 (:data:`rankers._moved.REMOVED_IN`).
"""

from __future__ import annotations

from moweights.datafiles.h5ad import h5ad_columns, read_h5ad
from rankers._moved import warn_moved

warn_moved(__name__, "moweights.datafiles.h5ad")

__all__ = ["h5ad_columns", "read_h5ad"]
