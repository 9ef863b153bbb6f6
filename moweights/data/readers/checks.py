"""What can be wrong with a data file: not a regular file, or not readable as its format.

:func:`check_data_path` tells a folder, a FIFO, a device and a missing file apart before a
reader opens anything (reading a FIFO waits for a writer; ``/dev/zero`` never ends);
:func:`read_error` turns a reader's exception into the one line a
:class:`~moweights.errors.DataFileError` says after the file's name.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from moweights.errors import DataFileError

__all__ = ["check_data_path", "read_error"]

#: what a file of each format should have been, for messages
_WHAT = {
    "csv": "a well-formed table",
    "tsv": "a well-formed table",
    "parquet": "a readable parquet file",
    "mat": "a readable MATLAB .mat file",
}

_SPECIAL = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def check_data_path(path: str | os.PathLike, *, hint: Callable[[Path], str] | None = None) -> Path:
    """``path`` if it names a regular file; else the one-line error saying what it is.

    A folder, a FIFO (reading one waits for a writer), a device (``/dev/zero`` never
    ends) and a missing file are told apart, so the message says what to change.

    Parameters
    ----------
    path : str or path
    hint : callable, optional
        ``hint(path)`` -> a sentence added to the message of a missing file ("" for none);
        moweights names the command that downloads a known benchmark file.

    Raises
    ------
    DataFileError
    """
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        extra = hint(path) if hint is not None else ""
        raise DataFileError(
            f"data file not found: {path}" + (f"; {extra}" if extra else "")
        ) from None
    except OSError as exc:
        raise DataFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(mode):
        raise DataFileError(
            f"{path} is a folder, not a data file; name a file in it "
            "(.csv, .tsv, .parquet, .mat or .h5ad)"
        )
    if not stat.S_ISREG(mode):
        what = _SPECIAL.get(stat.S_IFMT(mode), "not a file")
        raise DataFileError(f"{path} is not a regular file ({what}); name a data file")
    return path


def read_error(exc: BaseException, kind: str) -> str:
    """One line saying why a data file of format ``kind`` could not be read.

    ``kind`` is a format of :data:`moweights.data.readers.READERS` (``"csv"``, ``"tsv"``,
    ``"parquet"``, ``"mat"``).
    """
    import pandas as pd

    if isinstance(exc, UnicodeDecodeError):
        return _not_utf8(exc)
    if isinstance(exc, pd.errors.EmptyDataError):
        return "the file is empty"
    if isinstance(exc, ImportError) and kind == "parquet":
        return "reading parquet needs pyarrow: pip install 'moweights[parquet]'"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = " ".join(str(exc).split()) or type(exc).__name__
    text = text if len(text) <= 200 else text[:197] + "..."
    return f"not {_WHAT.get(kind, 'a readable file')}: {text}"


def _not_utf8(exc: UnicodeDecodeError) -> str:
    """Why a text file is not UTF-8: text in another encoding (Latin-1 / Windows-1252, as
    spreadsheets save it: the bytes around the first bad one read as text), or binary."""
    data = exc.object if isinstance(exc.object, (bytes, bytearray)) else b""
    around = bytes(data[max(exc.start - 40, 0) : exc.start + 40])
    byte = data[exc.start] if exc.start < len(data) else None
    text = around.decode("cp1252", errors="replace")
    printable = all(c.isprintable() or c in "\t\r\n" for c in text) and "\ufffd" not in text
    if byte is not None and byte >= 0x80 and b"\0" not in around and printable:
        import re

        at = exc.start - max(exc.start - 40, 0)  # the bad byte's place in ``text``
        left = re.split(r"[\n\r,;\t]", text[:at])[-1]
        word = (left + re.split(r"[\n\r,;\t]", text[at:])[0])[:30]
        return (
            f"not UTF-8 text: byte 0x{byte:02x} at position {exc.start} (in {word!r} read as "
            "Windows-1252) looks like Latin-1 / Windows-1252 text, as spreadsheets save it; "
            "re-save the file as UTF-8 (e.g. iconv -f cp1252 -t utf-8 IN > OUT)"
        )
    return f"not a UTF-8 text file (undecodable byte at position {exc.start}); is it binary?"
