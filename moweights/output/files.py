"""Writing and reading back files of a run folder: atomically, bounded, never through links.

Tables are CSV with ``%.10g`` floats and ``\\n`` line ends; JSON is indented, with the
numbers JSON cannot hold (inf, nan) as the strings "inf", "-inf", "nan".

A results folder may come from anyone, so what is read back from one is bounded and not
followed: :func:`read_bytes` opens with ``O_NOFOLLOW | O_NONBLOCK`` (a symbolic link is
refused, a FIFO does not block), accepts regular files only, and reads at most a size
cap. Writes go to a temporary file created exclusively beside the target (never an
existing name, never through a link), which is removed if the write fails; the error
names the file that could not be written. A folder is a run's output only if moweights
made it (:func:`claim_output_dir`).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import secrets
import stat
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from moweights.errors import OutputFolderError, OutputWriteError

__all__ = [
    "MANIFEST",
    "MAX_RESULT_BYTES",
    "ResultsFolder",
    "atomic_write",
    "check_results_tree",
    "claim_output_dir",
    "config_path",
    "csv_text",
    "json_text",
    "make_output_dir",
    "read_bytes",
    "read_json",
    "records",
    "safe_name",
    "sigint_ignored",
]

#: the file listing every other file of a results folder with its SHA-256
MANIFEST = "manifest.json"
#: the largest table or JSON file read back from a results folder
MAX_RESULT_BYTES = 256 * 2**20
#: what a report reads back (tables, JSON, figures, the page)
RESULT_SUFFIXES = (".csv", ".json", ".png", ".html")
#: names moweights puts into a folder before its manifest exists (the lock, the cache)
_OWN_HIDDEN = (".moweights.lock", ".cache")
_SPECIAL = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def _size(n_bytes: float) -> str:
    from rankers.memory import format_bytes

    return format_bytes(n_bytes)


# ------------------------------------------------------------------ reading back
def read_bytes(path, limit: int = MAX_RESULT_BYTES, what: str = "file") -> bytes:
    """The content of a regular file of a results folder, read without following it.

    Parameters
    ----------
    path : path
    limit : int
        The most bytes a file of this kind can hold; a larger one is refused unread.
    what : str
        What the file is, for messages ("lock", "cache entry", ...).

    Raises
    ------
    FileNotFoundError
        There is no such file.
    OutputFolderError
        ``path`` is a symbolic link, not a regular file (a FIFO, a device, a folder), or
        larger than ``limit``; the message names it and says what to do.
    """
    path = Path(path)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP or path.is_symlink():
            raise OutputFolderError(
                f"{path} is a symbolic link; moweights reads a results folder's {what} "
                "only from a file of its own: replace the link by the file, or delete it"
            ) from None
        if exc.errno == errno.EISDIR:
            raise OutputFolderError(f"{path} is a folder where a {what} belongs") from None
        raise OutputFolderError(f"cannot read {path}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(f.fileno())
        if not stat.S_ISREG(mode.st_mode):
            kind = _SPECIAL.get(stat.S_IFMT(mode.st_mode), "not a file")
            if stat.S_ISDIR(mode.st_mode):
                kind = "a folder"
            raise OutputFolderError(
                f"{path} is not a regular file ({kind}) where a {what} belongs; moweights "
                "never writes one like it: delete it"
            )
        if mode.st_size > limit:
            raise OutputFolderError(
                f"{path} is {_size(mode.st_size)}, larger than a {what} moweights writes "
                f"({_size(limit)} at most): not one of ours; delete it"
            )
        # read(n) allocates n bytes first: ask for what the file holds, one more to see it grow
        data = f.read(min(mode.st_size, limit) + 1)
    if len(data) > min(mode.st_size, limit):
        raise OutputFolderError(f"{path} grew while it was read; read it again later")
    return data


def read_json(path, limit: int = MAX_RESULT_BYTES, what: str = "JSON file") -> Any:
    """A JSON file of a results folder (see :func:`read_bytes`); ValueError if not JSON."""
    return json.loads(read_bytes(path, limit, what).decode("utf-8"))


def _is_results_folder(path: Path) -> bool:
    """Whether ``path`` holds a manifest moweights wrote (a regular file, JSON, ours)."""
    try:
        manifest = read_json(path / MANIFEST, what="manifest")
    except (OSError, ValueError):
        return False
    return (
        isinstance(manifest, dict)
        and "moweights" in manifest
        and isinstance(manifest.get("files"), dict)
    )


def check_results_tree(folder, depth: int = 2) -> None:
    """Refuse a results folder holding a link, FIFO, device or oversized file where a
    report reads (``*.csv``, ``*.json``, ``*.png``, ``*.html``, in it and its sub-folders).

    Raises
    ------
    OutputFolderError
        Naming the first such entry.
    """
    folder = Path(folder)
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.name.startswith("."):  # the lock and the cache check their own reads
            continue
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            if depth > 1:
                check_results_tree(path, depth - 1)
            continue
        if entry.is_symlink() and entry.is_dir():
            raise OutputFolderError(
                f"{path} is a symbolic link to a folder; moweights does not read a results "
                "folder through links: replace it by the folder, or delete it"
            )
        if not entry.name.lower().endswith(RESULT_SUFFIXES):
            continue
        if entry.is_symlink():
            raise OutputFolderError(
                f"{path} is a symbolic link; moweights does not read a results folder "
                "through links: replace the link by the file, or delete it"
            )
        mode = entry.stat(follow_symlinks=False)
        if not stat.S_ISREG(mode.st_mode):
            kind = _SPECIAL.get(stat.S_IFMT(mode.st_mode), "not a file")
            raise OutputFolderError(f"{path} is not a regular file ({kind}); delete it")
        if mode.st_size > MAX_RESULT_BYTES:
            raise OutputFolderError(
                f"{path} is {_size(mode.st_size)}, larger than any file moweights writes "
                f"({_size(MAX_RESULT_BYTES)} at most); delete it"
            )


# ------------------------------------------------------------------ writing
@contextlib.contextmanager
def sigint_ignored() -> Iterator[None]:
    """Ctrl-C and SIGTERM held off (in the main thread) while a folder's last words are
    written."""
    import signal
    import threading

    main = threading.current_thread() is threading.main_thread()
    held = (signal.SIGINT, signal.SIGTERM) if main else ()
    previous = {s: signal.signal(s, signal.SIG_IGN) for s in held}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def interruption(exc: KeyboardInterrupt) -> str:
    """What stopped the run: "Ctrl-C", or the signal a :class:`~moweights.errors.Terminated`
    names ("SIGTERM")."""
    return getattr(exc, "signal_name", None) or "Ctrl-C"


def atomic_write(path: Path, data: bytes | str) -> Path:
    """Write ``data`` to ``path`` so readers see the old file or the new one, never half.

    The data go to a new temporary file beside ``path`` (created exclusively: never an
    existing name, never through a link), which then replaces ``path`` (a link at
    ``path`` is replaced, not followed). On any failure, Ctrl-C included, the temporary
    file is removed.

    Raises
    ------
    OutputWriteError
        The file system refused (disk full, file-size limit, read-only): the message
        names ``path`` and the reason.
    """
    path = Path(path)
    data = data.encode("utf-8") if isinstance(data, str) else data
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    tmp = None
    try:
        for _ in range(100):
            candidate = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
            try:
                fd = os.open(candidate, flags | getattr(os, "O_CLOEXEC", 0), 0o666)
            except FileExistsError:
                continue
            tmp = candidate
            break
        else:  # pragma: no cover - 100 random names taken
            raise FileExistsError(errno.EEXIST, "no free temporary name", str(path))
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        tmp = None
    except BaseException as exc:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, OutputWriteError):
            reason = exc.strerror or type(exc).__name__
            raise OutputWriteError(
                f"cannot write {path}: {reason}", path=path, errno=exc.errno
            ) from exc
        raise
    return path


def config_path(source: str | None) -> str | None:
    """The config file a run was read from, as an absolute path (None for a config
    given as data, e.g. ``parse_config``'s "<config>"); recorded in the manifest."""
    if not source or source.startswith("<"):
        return None
    return str(Path(source).resolve())


def claim_output_dir(path, *, force: bool = False, source: str | None = None) -> Path:
    """An output folder a run may write: new, empty, or made by moweights (or ``force``).

    A folder holding anything but moweights' own hidden entries (the lock, the cache)
    and without a manifest moweights wrote is someone else's: a run would overwrite
    their ``config.json`` or ``report.html``, so it is refused unless ``force``. A folder
    made by a run of another config file (its manifest names that file) is that run's:
    it is refused too unless ``force`` (a rerun of the same config, or of the folder's
    own ``config.json``, replaces its files as always).

    Parameters
    ----------
    source : str, optional
        The config file of the run that claims the folder (``RunConfig.source``).

    Raises
    ------
    OutputFolderError
        As :func:`make_output_dir`, for a non-empty folder moweights did not make, and for
        a folder of another config's run.
    """
    path = make_output_dir(path)
    if force:
        return path
    foreign = sorted(e.name for e in os.scandir(path) if e.name not in _OWN_HIDDEN)
    if foreign and not _is_results_folder(path):
        shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        raise OutputFolderError(
            f"output folder {path} is not empty ({shown}) and was not made by moweights "
            f"(it has no {MANIFEST} of ours); choose a new or empty folder, or pass --force "
            "to write into it anyway (files of the same names are replaced)"
        )
    new = config_path(source)
    if foreign and new is not None and new != str((path / "config.json").resolve()):
        earlier = None
        with contextlib.suppress(OSError, ValueError, AttributeError):
            earlier = read_json(path / MANIFEST, what="manifest").get("config")
        if isinstance(earlier, str) and earlier != new:
            raise OutputFolderError(
                f"output folder {path} holds the results of a run of {earlier} (its "
                f"{MANIFEST} says so), not of {new}; a run replaces the folder's files, "
                "so choose another folder ([output] dir, or -o DIR), or pass --force to "
                "replace that run's results"
            )
    return path


def _clear_folder(path: Path) -> None:
    """Before a run writes ``path``: remove the files the previous run wrote (so no stale
    table reaches the new report) and the temporary files of a failed write; ``.cache``
    stays, and so does everything else.

    A file is the previous run's only if the manifest lists it and its content still has
    the SHA-256 recorded there: a manifest is only a file in the folder (copied, planted,
    edited), so its list alone never makes a file deletable -- a file whose content does
    not match is kept, and so is a link or special file, except where the manifest lists
    a file of that name (it stands in the place of one the run wrote, and the report
    would refuse it).
    """
    listed: dict[str, str] = {}
    with contextlib.suppress(OSError, ValueError):
        manifest = read_json(path / MANIFEST, what="manifest")
        if isinstance(manifest, dict) and isinstance(manifest.get("files"), dict):
            for name, entry in manifest["files"].items():
                digest = entry.get("sha256") if isinstance(entry, dict) else None
                if isinstance(name, str) and isinstance(digest, str):
                    listed[name] = digest
    for name, digest in listed.items():
        parts = name.split("/")
        if len(parts) > 2 or not all(_LISTED.fullmatch(part) for part in parts):
            continue  # not a name moweights writes: never followed out of the folder
        if len(parts) == 2 and (path / parts[0]).is_symlink():
            continue  # its files are not ours to delete: the link itself stays
        target = path / name
        if target.is_symlink() or (os.path.lexists(target) and not target.is_file()):
            if not target.is_dir():
                with contextlib.suppress(OSError):
                    target.unlink()  # the link only, never what it points to
            continue
        try:
            ours = hashlib.sha256(read_bytes(target, what="file")).hexdigest() == digest
        except (OSError, ValueError):
            continue
        if ours:
            with contextlib.suppress(OSError):
                target.unlink()
    for folder in (path, path / "study"):
        if folder.is_symlink() or not folder.is_dir():
            continue
        for entry in os.scandir(folder):  # a failed write's temporary files
            if _TEMPORARY.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


#: the temporary file of :func:`atomic_write`: ``.<name>.<pid>.<8 hex digits>.tmp``
_TEMPORARY = re.compile(r"\..+\.[0-9]+\.[0-9a-f]{8}\.tmp")
#: a file name a manifest may list (one part of it)
_LISTED = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.=@+-]*")


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


#: JSON texts longer than this are written without indentation: indented text goes through
#: the json module's pure-Python encoder, seconds for the tables of 20,000 features
_INDENT_LIMIT = 1 << 18


def json_text(obj) -> str:
    """``obj`` as standard JSON text (non-finite numbers as strings), indented unless it is
    large (the same object always gives the same text)."""
    try:  # the compiled encoder; a non-finite number sends it to the slow path below
        text = json.dumps(obj, default=_jsonable, allow_nan=False, separators=(",", ":"))
    except ValueError:
        obj = _finite(obj)
        text = json.dumps(obj, default=_jsonable, allow_nan=False, separators=(",", ":"))
    if len(text) > _INDENT_LIMIT:
        return text + "\n"
    return json.dumps(obj, indent=2, default=_jsonable, allow_nan=False) + "\n"


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
        self._source = config_path(getattr(config, "source", None))
        if self._source == str((self.path / "config.json").resolve()):
            # a rerun of the folder's own config.json: still the run of the original file
            with contextlib.suppress(OSError, ValueError, AttributeError):
                earlier = read_json(self.path / MANIFEST, what="manifest").get("config")
                self._source = earlier if isinstance(earlier, str) else None
        _clear_folder(self.path)  # the caller holds the folder's lock
        self.files: dict[str, str] = {}  # name -> sha256
        self._drawn = False  # "complete" only once the plots and report.html are written
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

        if status == "complete" and not self._drawn:
            status = "running"  # the tables are final; the figures and the page are not yet
        manifest = {
            "status": status,
            "partial": status != "complete",
            "message": message,
            "moweights": __version__,
            **self._manifest_fields(),
            # the config file of the run (a folder is that run's: see claim_output_dir)
            **({"config": self._source} if self._source else {}),
            "files": {name: {"sha256": digest} for name, digest in sorted(self.files.items())},
        }
        atomic_write(self.path / MANIFEST, json_text(manifest))

    def _manifest_after_failure(self, status: str, message: str | None) -> None:
        """The manifest after a write failed: the status and reason, with the checksums
        of the files as they are now (:attr:`files` changes only once a file is written).

        On a full disk the new manifest may not fit beside the old one, whose checksums
        no longer hold for the files rewritten since: the old one is removed first to free
        its space. Should even that fail, the folder is left without a manifest (never
        taken for complete, nor a manifest saying "running" about files it does not
        describe).
        """
        try:
            self._manifest(status, message)
            return
        except OSError:
            pass
        with contextlib.suppress(OSError):
            os.unlink(self.path / MANIFEST)
        with contextlib.suppress(OSError):
            self._manifest(status, message)

    @abstractmethod
    def finish(self, result, seconds: float) -> None:
        """Write the final tables with ``result.status``, then the figures and report."""

    def _draw(self, result, render: Callable) -> None:
        """The plots and report.html from the final tables (``render(folder, plots=,
        html=)``, :func:`moweights.output.report.render`), then the final manifest.

        The manifest is written last: it says "complete" only when every file is; a
        failure while drawing (a full disk, a file-size limit, Ctrl-C) leaves it saying
        "failed" or "partial" with the reason and the file, and is raised on.
        """
        out = self.config.output
        try:
            written = render(self.path, plots=out.plots, html=out.html)
        except BaseException as exc:
            self._drawing_failed(result, exc)
            raise
        self.files.update(written)
        result.files = [self.path / name for name in sorted(self.files)]
        self._drawn = True
        self._manifest(result.status, "; ".join(result.notes) or None)

    def _drawing_failed(self, result, exc: BaseException) -> None:
        missing = (
            "the plots and report.html are missing or incomplete "
            "(`moweights report` draws them again)"
        )
        if isinstance(exc, KeyboardInterrupt):
            status = "partial"
            note = f"interrupted ({interruption(exc)}) while drawing: {missing}"
        elif isinstance(exc, OutputWriteError):
            status, note = "failed", f"{exc}; {missing}"
        else:
            status, note = "failed", f"drawing failed: {type(exc).__name__}: {exc}; {missing}"
        if result.status != "failed":
            result.status = status
        result.notes.append(note)
        self._drawn = True  # what the manifest says now is the truth
        with sigint_ignored():  # a second Ctrl-C must not leave the old manifest
            try:
                self.write(result, status=result.status)
            except Exception:  # the disk is still full: at least the small manifest
                with contextlib.suppress(Exception):
                    self._manifest_after_failure(result.status, "; ".join(result.notes) or None)

    @contextlib.contextmanager
    def finishing(self, result, start: float, interrupted: str) -> Iterator[None]:
        """Finish the folder however the body ends: ``result.status`` becomes "complete",
        "partial" (Ctrl-C, with the note ``interrupted``) or "failed" (with the error as a
        note); the exception goes on to the caller."""
        try:
            yield
        except KeyboardInterrupt as exc:
            result.status = "partial"
            result.notes.append(interrupted.replace("(Ctrl-C)", f"({interruption(exc)})"))
            self.finish(result, time.perf_counter() - start)
            raise
        except BaseException as exc:
            result.status = "failed"
            result.notes.append(f"failed: {type(exc).__name__}: {exc}")
            with contextlib.suppress(Exception):
                self.finish(result, time.perf_counter() - start)
            raise
        if result.status == "running":  # a study may have decided (members failed)
            result.status = "complete"
        self.finish(result, time.perf_counter() - start)
