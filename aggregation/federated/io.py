"""Reading a data table from disk: a site's file, or any table a run loads (csv, tsv, parquet).

Nothing read here executes: csv and tsv are parsed by pandas, parquet by pyarrow (pure
data; never a pickle). Every failure is a :class:`~rankers.exceptions.DataFileError` whose
one-line message names the file and says what is wrong with it.
"""

from __future__ import annotations

import os
from pathlib import Path

from rankers.exceptions import DataFileError

__all__ = ["TABLE_FORMATS", "read_error", "read_table", "table_format"]

#: table formats by the suffixes that mark them (a compression suffix may follow: .csv.gz)
TABLE_FORMATS = {"parquet": (".parquet",), "tsv": (".tsv", ".tab"), "csv": (".csv",)}

#: what a file of each format should have been, for messages (.mat: moweights' data sets)
_WHAT = {
    "csv": "a well-formed table",
    "tsv": "a well-formed table",
    "parquet": "a readable parquet file",
    "mat": "a readable MATLAB .mat file",
}


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


def read_error(exc: BaseException, kind: str) -> str:
    """One line saying why a data file of format ``kind`` could not be read.

    ``kind`` is a table format of :func:`table_format`, or ``"mat"`` for the MATLAB files
    moweights loads as data sets.
    """
    import pandas as pd

    if isinstance(exc, UnicodeDecodeError):
        return f"not a UTF-8 text file (undecodable byte at position {exc.start}); is it binary?"
    if isinstance(exc, pd.errors.EmptyDataError):
        return "the file is empty"
    if isinstance(exc, ImportError) and kind == "parquet":
        return "reading parquet needs pyarrow: pip install 'moweights[parquet]'"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = " ".join(str(exc).split()) or type(exc).__name__
    text = text if len(text) <= 200 else text[:197] + "..."
    return f"not {_WHAT.get(kind, 'a readable file')}: {text}"


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
    try:
        if kind == "parquet":
            frame = pd.read_parquet(path)
        else:
            frame = pd.read_csv(path, sep="\t" if kind == "tsv" else ",")
    except Exception as exc:  # a file that is not what its name says: one line saying why
        raise DataFileError(f"cannot read {path}: {read_error(exc, kind)}") from None
    frame.columns = [str(c) for c in frame.columns]
    return frame
