"""Writing files of a run folder: atomically, and as text that is the same on every machine.

Tables are CSV with ``%.10g`` floats and ``\\n`` line ends; JSON is indented, with the
numbers JSON cannot hold (inf, nan) as the strings "inf", "-inf", "nan".
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd

from rankers.exceptions import OutputFolderError

__all__ = [
    "atomic_write",
    "csv_text",
    "json_text",
    "make_output_dir",
    "records",
    "safe_name",
]


def atomic_write(path: Path, data: bytes | str) -> Path:
    """Write ``data`` to ``path`` so readers see the old file or the new one, never half."""
    path = Path(path)
    data = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return path


def make_output_dir(path) -> Path:
    """Create an output folder (and its parents), or say in one line why it cannot be one.

    Raises
    ------
    OutputFolderError
        When ``path`` is a file, lies under a file, or cannot be created or written.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise OutputFolderError(f"output folder {path} is a file; choose another folder")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise OutputFolderError(f"output folder {path} lies under a file: {parent}")
            break
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputFolderError(
            f"cannot create output folder {path}: {exc.strerror or exc}"
        ) from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise OutputFolderError(f"output folder {path} is not writable")
    return path


def safe_name(label: str) -> str:
    """A label as a file-name part."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(label)).strip("_") or "x"


def csv_text(frame: pd.DataFrame, index: bool = True) -> str:
    """A table as CSV text, floats to 10 significant digits."""
    return frame.to_csv(index=index, float_format="%.10g", lineterminator="\n")


def _jsonable(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (Path, tuple)):
        return str(value) if isinstance(value, Path) else list(value)
    if isinstance(value, pd.Series):
        return value.to_dict()
    if isinstance(value, pd.DataFrame):
        return json.loads(value.to_json(orient="records"))
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _finite(obj):
    """``obj`` with non-finite floats as the strings "inf", "-inf", "nan".

    Standard JSON has no such numbers, and some results hold them (the Iman-Davenport F
    is inf when every fold ranks the methods alike); ``float()`` reads the strings back.
    """
    if isinstance(obj, (float, np.floating)) and not np.isfinite(obj):
        return str(float(obj))
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def json_text(obj) -> str:
    """``obj`` as standard JSON text (non-finite numbers as strings)."""
    return json.dumps(_finite(obj), indent=2, default=_jsonable, allow_nan=False) + "\n"


def records(frame: pd.DataFrame | None) -> list | None:
    """A table as a list of JSON records (None stays None)."""
    return (
        None if frame is None else json.loads(frame.to_json(orient="records", double_precision=10))
    )
