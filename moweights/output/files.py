"""Writing files of a run folder: atomically, and as text that is the same on every machine.

Tables are CSV with ``%.10g`` floats and ``\\n`` line ends; JSON is indented, with the
numbers JSON cannot hold (inf, nan) as the strings "inf", "-inf", "nan".
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rankers.exceptions import OutputFolderError

__all__ = [
    "MANIFEST",
    "ResultsFolder",
    "atomic_write",
    "csv_text",
    "json_text",
    "make_output_dir",
    "records",
    "safe_name",
]

#: the file listing every other file of a results folder with its SHA-256
MANIFEST = "manifest.json"


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


class ResultsFolder(ABC):
    """A results folder: every file written atomically and listed with its SHA-256 in
    ``manifest.json``; the base of a run's and a study's folder.

    Subclasses write their tables with :meth:`_put`, say what else the manifest holds in
    :meth:`_manifest_fields`, and implement ``finish(result, seconds)``.
    """

    def __init__(self, path: Path, config):
        self.path = Path(path)
        self.config = config
        self.path.mkdir(parents=True, exist_ok=True)
        self.files: dict[str, str] = {}  # name -> sha256
        self._put("config.json", json_text(config.to_dict()))
        self._manifest("running")

    def _put(self, name: str, data: str | bytes) -> None:
        data = data.encode("utf-8") if isinstance(data, str) else data
        atomic_write(self.path / name, data)
        self.files[name] = hashlib.sha256(data).hexdigest()

    def _manifest_fields(self) -> dict[str, Any]:
        return {}

    def _manifest(self, status: str, message: str | None = None) -> None:
        from moweights.about import __version__

        manifest = {
            "status": status,
            "partial": status != "complete",
            "message": message,
            "moweights": __version__,
            **self._manifest_fields(),
            "files": {name: {"sha256": digest} for name, digest in sorted(self.files.items())},
        }
        atomic_write(self.path / MANIFEST, json_text(manifest))

    @abstractmethod
    def finish(self, result, seconds: float) -> None:
        """Write the final tables with ``result.status``, then the figures and report."""

    @contextlib.contextmanager
    def finishing(self, result, start: float, interrupted: str) -> Iterator[None]:
        """Finish the folder however the body ends: ``result.status`` becomes "complete",
        "partial" (Ctrl-C, with the note ``interrupted``) or "failed" (with the error as a
        note); the exception goes on to the caller."""
        try:
            yield
        except KeyboardInterrupt:
            result.status = "partial"
            result.notes.append(interrupted)
            self.finish(result, time.perf_counter() - start)
            raise
        except BaseException as exc:
            result.status = "failed"
            result.notes.append(f"failed: {type(exc).__name__}: {exc}")
            with contextlib.suppress(Exception):
                self.finish(result, time.perf_counter() - start)
            raise
        result.status = "complete"
        self.finish(result, time.perf_counter() - start)
