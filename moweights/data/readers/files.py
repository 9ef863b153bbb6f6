"""The readers by format, and reading any data file by its name: data, header, repeats.

:data:`READERS` is the one table of the formats a data file may have: each format's
suffixes, its reader (``path, target -> (X, y)``), its header reader (``path -> column
names``, the data unread) and the optional extra it needs. :func:`read_data`,
:func:`read_columns` and :func:`duplicate_columns` pick the reader by the file's name
(:func:`data_format`) after :func:`~moweights.data.readers.checks.check_data_path` has made
sure it names a regular file.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from moweights.data.readers.checks import check_data_path
from moweights.data.readers.h5ad import h5ad_columns, read_h5ad
from moweights.data.readers.matlab import mat_columns, read_mat
from moweights.data.readers.tables import (
    TABLE_FORMATS,
    read_table,
    repeated_columns,
    split_target,
    table_columns,
    table_format,
    transpose_table,
)
from moweights.errors import DataFileError

__all__ = ["READERS", "Reader", "data_format", "duplicate_columns", "read_columns", "read_data"]


class Reader(NamedTuple):
    """How one format of data file is read."""

    #: the suffixes marking the format (a table's may be followed by a compression: .csv.gz)
    suffixes: tuple[str, ...]
    #: ``read(path, target)`` -> ``(X, y)``: the features and the target (or None)
    read: Callable[[Path, str | None], tuple[Any, Any]]
    #: ``columns(path)`` -> the column names, from the header alone
    columns: Callable[[Path], list[str]]
    #: the optional extra the format needs (``pip install 'moweights[extra]'``), if any
    extra: str | None


def _table_reader(kind: str, extra: str | None = None) -> Reader:
    def read(path: Path, target: str | None):
        return split_target(read_table(path), target, path)

    def columns(path: Path) -> list[str]:
        return table_columns(path, kind)

    return Reader(TABLE_FORMATS[kind], read, columns, extra)


def _read_mat(path: Path, target: str | None):
    return read_mat(path)  # its target is its matrix Y (scikit-feature's layout)


#: format -> its reader: every kind of data file moweights reads
READERS: dict[str, Reader] = {
    "csv": _table_reader("csv"),
    "tsv": _table_reader("tsv"),
    "parquet": _table_reader("parquet", "parquet"),
    "mat": Reader((".mat",), _read_mat, mat_columns, None),
    "h5ad": Reader((".h5ad",), read_h5ad, h5ad_columns, "h5ad"),
}


def data_format(path: str | os.PathLike) -> str:
    """The format of a data file by its name: a key of :data:`READERS`.

    A ``.mat`` or ``.h5ad`` file by its last suffix; a table by any of its suffixes, so a
    compressed one (``.csv.gz``) is a table.

    Raises
    ------
    DataFileError
        The name marks no format read here.

    Examples
    --------
    >>> data_format("cells.h5ad"), data_format("site1.tsv.gz")
    ('h5ad', 'tsv')
    """
    path = Path(path)
    suffixes = [s.lower() for s in path.suffixes]
    for kind, reader in READERS.items():
        if kind not in TABLE_FORMATS and suffixes and suffixes[-1] in reader.suffixes:
            return kind
    kind = table_format(path)
    if kind is None:
        raise DataFileError(
            f"cannot read {path}: use .csv, .tsv (optionally .gz), .parquet, .mat or .h5ad"
        )
    return kind


def read_data(path: str | os.PathLike, target: str | None = None, *, transpose: bool = False):
    """A data file as (features, target): csv/tsv (optionally compressed), parquet, .mat, .h5ad.

    Parameters
    ----------
    path : str or path
        ``.csv``, ``.tsv`` (``.gz`` allowed), ``.parquet``, ``.mat`` or ``.h5ad``. A ``.mat``
        file holds a matrix ``X`` and a label column ``Y`` (scikit-feature's layout); an
        ``.h5ad`` file (AnnData, read with h5py: ``moweights[h5ad]``) its matrix ``X``
        (dense or sparse), named by ``var`` (see :mod:`moweights.data.readers.h5ad`).
    target : str, optional
        Name of the target column of a table; it is removed from the features. For a
        ``.mat`` file the target is ``Y`` when present; for an ``.h5ad`` file a column of
        ``obs``; for a transposed table the row of that name.
    transpose : bool, default=False
        The file holds one row per feature (genes as rows, samples as columns), its first
        column naming the features: turned with
        :func:`~moweights.data.readers.tables.transpose_table` before ``target`` is taken.

    Returns
    -------
    X : DataFrame
    y : Series or None
        Named ``target``.

    Raises
    ------
    DataFileError
        A missing or unreadable file, or one that is not in its format (binary data in a
        csv, ragged rows, a corrupt parquet or .mat file), or a target it lacks; the
        message is one line naming the file.
    InvalidInputError
        A transposed table without the shape or the target row it needs.
    """
    path = check_data_path(path)
    reader = READERS[data_format(path)]
    if not transpose:
        return reader.read(path, target)
    frame = transpose_table(reader.read(path, None)[0], target=target)
    if target is None:
        return frame, None
    return frame.drop(columns=target), frame[target].rename("target")


def read_columns(path: str | os.PathLike) -> list[str]:
    """The column names of a data file, from its header only (a config check reads these).

    The first line of a csv/tsv file, a parquet file's schema (without the columns
    pandas stores its index in), for a ``.mat`` file ``x0``, ``x1``, ... from the shape
    of its matrix ``X``, for an ``.h5ad`` file ``var``'s names and then ``obs``'s columns
    (where its target is): the data themselves are not read.

    Raises
    ------
    DataFileError
        When the file is missing, unreadable, or not in the format its name says.
    """
    path = check_data_path(path)
    return READERS[data_format(path)].columns(path)


def duplicate_columns(path: str | os.PathLike) -> dict[str, int]:
    """Column names a csv/tsv file's header repeats, with how often (pandas reads the
    copies as ``name.1``, ``name.2``, ...); empty for other formats, which cannot repeat
    a name, or carry none.

    Raises
    ------
    DataFileError
        When the file is missing or unreadable.
    """
    path = check_data_path(path)
    kind = data_format(path)
    if kind not in ("csv", "tsv"):
        return {}
    return repeated_columns(path, kind)
