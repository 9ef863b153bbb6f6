"""Tables: csv, tsv (optionally compressed) and parquet; their headers; genes as rows.

Nothing read here executes: csv and tsv are parsed by pandas, parquet by pyarrow (pure
data; never a pickle). Every failure is a :class:`~moweights.errors.DataFileError` whose
one-line message names the file and says what is wrong with it. A header is read without
the data (:func:`table_columns`): the first line of a csv/tsv file, a parquet file's
schema. A table with one row per feature (genes as rows, samples as columns) is turned
by :func:`transpose_table`.
"""

from __future__ import annotations

import csv
import importlib
import os
from collections import Counter
from pathlib import Path

from moweights.data.readers.checks import read_error
from moweights.errors import DataFileError
from rankers.exceptions import InvalidInputError

__all__ = [
    "TABLE_FORMATS",
    "header_names",
    "read_table",
    "repeated_columns",
    "split_target",
    "table_columns",
    "table_format",
    "transpose_table",
]

#: table formats by the suffixes that mark them (a compression suffix may follow: .csv.gz)
TABLE_FORMATS = {"parquet": (".parquet",), "tsv": (".tsv", ".tab"), "csv": (".csv",)}

#: compressions whose text the standard library opens, by the suffix pandas infers them from
_COMPRESSED = {".gz": "gzip", ".bz2": "bz2", ".xz": "lzma"}

_SHOWN = 8  # feature names a transpose message lists before "and N more"


def table_format(path: str | os.PathLike) -> str | None:
    """``"csv"``, ``"tsv"`` or ``"parquet"`` by the file's suffixes (any of them), else None.

    Examples
    --------
    >>> table_format("site1.csv.gz"), table_format("data.tab"), table_format("x.mat")
    ('csv', 'tsv', None)
    """
    suffixes = [s.lower() for s in Path(path).suffixes]
    for kind, marks in TABLE_FORMATS.items():
        if any(s in marks for s in suffixes):
            return kind
    return None


def _sep(kind: str) -> str:
    return "\t" if kind == "tsv" else ","


def read_table(path: str | os.PathLike, *, what: str = "data file"):
    """The table in a csv, tsv or parquet file, its column names as strings.

    Parameters
    ----------
    path : str or path
        ``.csv``, ``.tsv``/``.tab`` (optionally compressed, e.g. ``.csv.gz``: pandas reads
        the compression from the name) or ``.parquet``.
    what : str, default="data file"
        What the file is, for messages (``"site data file"``).

    Returns
    -------
    DataFrame

    Raises
    ------
    DataFileError
        The file is missing, has no table suffix, or is not in its format (binary data in a
        csv, ragged rows, a corrupt parquet file); a subclass of ``InvalidInputError``.
    """
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise DataFileError(f"{what} not found: {path}")
    kind = table_format(path)
    if kind is None:
        raise DataFileError(
            f"cannot read {path}: use .csv, .tsv (optionally compressed, e.g. .csv.gz) or .parquet"
        )
    if kind != "parquet":
        check_text(path)
    try:
        frame = pd.read_parquet(path) if kind == "parquet" else pd.read_csv(path, sep=_sep(kind))
    except Exception as exc:  # a file that is not what its name says: one line saying why
        raise DataFileError(f"cannot read {path}: {read_error(exc, kind)}") from None
    frame.columns = [str(c) for c in frame.columns]
    return frame


#: how much of a text table is looked at for NUL bytes before it is read
_SNIFF = 1 << 16


def check_text(path: Path) -> None:
    """Refuse a csv/tsv file whose first 64 kB (decompressed) hold a NUL byte: binary data,
    which pandas would read to the end (2 GB of NUL bytes cost 2.3 GB and 39 s) before
    failing, and whose "header line" has no end.

    Raises
    ------
    DataFileError
        Naming the file and where the first NUL byte is.
    """
    last = path.suffixes[-1].lower() if path.suffixes else ""
    try:
        if last in _COMPRESSED:
            module = importlib.import_module(_COMPRESSED[last])
            with module.open(path, "rb") as fh:
                head = fh.read(_SNIFF)
        else:
            with open(path, "rb") as fh:
                head = fh.read(_SNIFF)
    except Exception:  # not readable as what it says: the reader says why
        return
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) and _mostly_ascii(head):
        raise DataFileError(
            f"cannot read {path}: UTF-16 text (it starts with a UTF-16 byte-order mark); "
            "re-save the file as UTF-8"
        )
    at = head.find(b"\0")
    if at >= 0:
        raise DataFileError(
            f"cannot read {path}: a NUL byte at position {at}: binary data, not a text "
            "table; name the csv/tsv file itself (or save the table as one)"
        )


def _mostly_ascii(head: bytes) -> bool:
    """Whether bytes after a UTF-16 byte-order mark read as text of a table: nearly all
    ASCII (digits, separators, names), as a UTF-16 csv is; binary data is not."""
    text = head[2 : 2 + (len(head) - 2) // 2 * 2].decode(
        "utf-16-le" if head[:2] == b"\xff\xfe" else "utf-16-be", errors="replace"
    )
    return bool(text) and sum(
        c.isascii() and (c.isprintable() or c in "\t\r\n") for c in text
    ) >= 0.9 * len(text)


def split_target(frame, target: str | None, path: Path):
    """``(X, y)`` of a table read from ``path``: ``target``'s column taken out as ``y``.

    Raises
    ------
    DataFileError
        The table has no column ``target`` (the message lists its first columns).
    """
    if target is None:
        return frame, None
    if target not in frame.columns:
        raise DataFileError(
            f"target column {target!r} is not in {path.name}; its columns are "
            f"{', '.join(map(repr, list(frame.columns)[:10]))}"
        )
    return frame.drop(columns=target), frame[target].rename("target")


def header_names(path: Path, kind: str) -> list[str] | None:
    """The names in the header of a csv/tsv file as written, or None where only pandas can
    say (a zip, zstd or tar file, a header the ``csv`` module parses otherwise).

    The first line that is not blank, split as pandas splits it (its default quoting, a
    UTF-8 byte-order mark dropped): reading it costs nothing at any width, where pandas'
    own header parsing takes seconds at 20,000 columns.

    Raises
    ------
    DataFileError
        An empty file (no header).
    UnicodeDecodeError, OSError, EOFError
        A binary or unreadable file (the callers say so in one line).
    """
    import pandas as pd

    suffixes = [s.lower() for s in path.suffixes]
    last = suffixes[-1] if suffixes else ""
    if last in (*_COMPRESSED, ".csv", ".tsv", ".tab") and ".tar" not in suffixes[-2:-1]:
        check_text(path)  # a binary file's "header line" may have no end
    if last in _COMPRESSED:
        if len(suffixes) > 1 and suffixes[-2] == ".tar":
            return None
        module = importlib.import_module(_COMPRESSED[last])
        fh = module.open(path, "rt", encoding="utf-8-sig", newline="")
    elif last in (".csv", ".tsv", ".tab"):
        fh = open(path, encoding="utf-8-sig", newline="")  # noqa: SIM115 (closed below)
    else:
        return None
    with fh:
        try:
            for row in csv.reader(fh, delimiter=_sep(kind)):
                if len(row) == 1 and not row[0].strip():
                    return None  # a line of spaces (pandas skips it) or of quotes
                if row:
                    return row
        except csv.Error:
            return None  # pandas tells its own story (e.g. a field over csv's size limit)
    raise DataFileError(f"cannot read {path}: {read_error(pd.errors.EmptyDataError(''), kind)}")


def table_columns(path: Path, kind: str) -> list[str]:
    """The column names of a csv, tsv or parquet file, named as pandas names them, from
    its header only: the first line of a csv/tsv file, a parquet file's schema (without
    the columns pandas stores its index in).

    Raises
    ------
    DataFileError
        The file is unreadable or not in its format.
    """
    import pandas as pd

    try:
        if kind == "parquet":
            import pyarrow.parquet as pq

            schema = pq.read_schema(path)
            index = (schema.pandas_metadata or {}).get("index_columns", [])
            return [str(n) for n in schema.names if n not in index]
        names = header_names(path, kind)
        if names is not None:
            # pandas' names: "Unnamed: i" for a blank one; repeats are renamed by pandas
            names = [n or f"Unnamed: {i}" for i, n in enumerate(names)]
            if len(set(names)) == len(names):
                return names
        return [str(c) for c in pd.read_csv(path, sep=_sep(kind), nrows=0).columns]
    except DataFileError:
        raise
    except Exception as exc:
        raise DataFileError(f"cannot read {path}: {read_error(exc, kind)}") from None


def repeated_columns(path: Path, kind: str) -> dict[str, int]:
    """Column names a csv/tsv file's header repeats, with how often (pandas reads the
    copies as ``name.1``, ``name.2``, ...).

    Raises
    ------
    DataFileError
        The file is unreadable.
    """
    import pandas as pd

    try:
        names = header_names(path, kind)
        if names is None:  # the header as a row of data: pandas renames repeats in a header
            row = pd.read_csv(path, sep=_sep(kind), header=None, nrows=1, dtype=str,
                              keep_default_na=False)  # fmt: skip
            names = list(row.iloc[0].to_numpy()) if len(row) else []
    except DataFileError:
        raise
    except Exception as exc:
        raise DataFileError(f"cannot read {path}: {read_error(exc, kind)}") from None
    counts = Counter(map(str, names))
    return {k: v for k, v in counts.items() if v > 1 and k}


def _names(columns) -> str:
    columns = [str(c) for c in columns]
    shown = ", ".join(repr(c) for c in columns[:_SHOWN])
    more = len(columns) - _SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def transpose_table(frame, *, target: str | None = None):
    """Turn a table with one row per feature (genes as rows) into one row per sample.

    Parameters
    ----------
    frame : DataFrame
        Its first column names the features (gene ids); every other column is a sample.
    target : str, optional
        A row (by its name in the first column) that holds the target instead of a
        feature; it becomes a column of that name.

    Returns
    -------
    DataFrame
        Samples as rows, features (and the target) as columns, values converted to
        numbers where every value of a column is a number.

    Raises
    ------
    InvalidInputError
        No sample column, a feature named twice, or no row ``target``.
    """
    import pandas as pd

    if frame.shape[1] < 2:
        raise InvalidInputError(
            "transpose needs a first column naming the features and one column per sample; "
            f"the table has {frame.shape[1]} column(s)"
        )
    ids = frame.iloc[:, 0].astype(str)
    if ids.duplicated().any():
        raise InvalidInputError(
            f"transpose: the first column names features more than once: "
            f"{_names(ids[ids.duplicated()].unique())}"
        )
    if target is not None and target not in set(ids):
        raise InvalidInputError(
            f"transpose: the target {target!r} is not a row of the table (rows are named "
            f"by its first column, e.g. {_names(ids[:3])})"
        )
    body = frame.iloc[:, 1:].T
    body.columns = pd.Index(ids.to_list())
    body.index = pd.Index([str(c) for c in frame.columns[1:]], name="sample")
    # a transposed row of mixed text and numbers arrives as object: numbers where possible
    out = {}
    for col in body.columns:
        values = body[col]
        converted = pd.to_numeric(values, errors="coerce")
        had = values.notna()
        out[col] = converted if bool(converted[had].notna().all()) else values
    return pd.DataFrame(out, index=body.index)
