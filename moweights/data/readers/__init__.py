"""Reading a user's data files: the one home of every format moweights reads.

- :mod:`~moweights.data.readers.files`: :data:`READERS`, the table of formats (csv, tsv,
  parquet, .mat, .h5ad) and their readers; :func:`read_data` (features and target),
  :func:`read_columns` (the header alone, for checking a config) and
  :func:`duplicate_columns`, each choosing the reader by the file's name.
- :mod:`~moweights.data.readers.tables`: csv/tsv (optionally compressed) and parquet
  (:func:`read_table`, what a federated site reads), their headers, and tables with genes
  as rows (:func:`transpose_table`).
- :mod:`~moweights.data.readers.matlab`: ``.mat`` files (scikit-feature's ``X`` and ``Y``).
- :mod:`~moweights.data.readers.h5ad`: AnnData ``.h5ad`` files, read with h5py alone and
  checked before anything is allocated.
- :mod:`~moweights.data.readers.checks`: a path that is no regular file, and the one line
  saying why a file could not be read.
- :mod:`~moweights.data.readers.sites`: :class:`SiteFile`, a federated site's file as a
  picklable loader that :mod:`aggregation.federated` calls at the site.

This is the lowest layer of the data wing (:mod:`moweights.data`) and the only place a
user's data file is read: :mod:`aggregation` computes on in-memory data only, and the
application (config runs, config checks, ``recommend``, ``fetch``, the Flower ClientApp
of :mod:`moweights.federated`) calls these readers, through :mod:`moweights.data` (whose
:func:`~moweights.data.check_data_path` adds the fetch hint to this package's check).
Nothing read here can execute code (no pickle), and every failure is a
:class:`~moweights.errors.DataFileError` naming the file. The readers import nothing of
:mod:`aggregation` and nothing else of :mod:`moweights` (import-linter contracts in
``pyproject.toml``). Names are imported on first access, so importing this package costs
nothing.
"""

from __future__ import annotations

from typing import Any

from rankers.utils.lazy import attach

#: submodule -> the public names it defines: the package's one list of its names
_EXPORTS = {
    "files": ("READERS", "Reader", "data_format", "duplicate_columns", "read_columns", "read_data"),
    "tables": ("TABLE_FORMATS", "read_table", "table_format", "transpose_table"),
    "matlab": ("read_mat",),
    "h5ad": ("h5ad_columns", "read_h5ad"),
    "checks": ("check_data_path", "read_error"),
    "sites": ("SiteFile",),
}

_getattr, _dir, __all__ = attach(__name__, _EXPORTS)


def __getattr__(name: str) -> Any:
    return _getattr(name)


def __dir__() -> list[str]:
    return _dir()
