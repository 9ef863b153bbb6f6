"""Deprecated old path of the table reader: import from :mod:`aggregation.datafiles`.

Importing it warns (:class:`DeprecationWarning`); it re-exports the moved names until
its removal in moweights 0.2.0 (:data:`rankers._moved.REMOVED_IN`).
"""

from __future__ import annotations

from aggregation.datafiles.checks import read_error
from aggregation.datafiles.tables import TABLE_FORMATS, read_table, table_format
from rankers._moved import warn_moved

warn_moved(__name__, "aggregation.datafiles.tables and aggregation.datafiles.checks")

__all__ = ["TABLE_FORMATS", "read_error", "read_table", "table_format"]
