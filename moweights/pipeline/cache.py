"""The run cache: finished steps kept as data, never as code.

A run folder may come from anyone (a colleague's results, a shared drive), so nothing
read back from it may execute: the cache holds numbers and text only. Each finished step
is one file, ``<output>/.cache/<key>.npz``: its arrays (float64 scores and table columns,
kept bit for bit) and a JSON header describing how they fit together (which arrays form
a table's columns, a ranking's names and scores, ...). Loading uses
``numpy.load(allow_pickle=False)`` and rebuilds only the few types listed below; the
header must carry the key the file is stored under and the digest of its content
(:func:`value_digest`: an entry edited by hand after the run wrote it, however well
formed, is not reused), every array must have the dtype and shape the header implies,
and the step's own check must accept the value (e.g. a
ranking over the data's features). An entry failing any of this -- damaged, foreign,
written by other code -- is ignored with a :class:`CacheWarning` and the step is
recomputed. Files of other formats (the ``*.pkl`` of earlier versions) are never opened.

Nothing is read before it is known to be small: an entry is opened without following a
link and without waiting on a FIFO, must be a regular file of at most
:data:`MAX_ENTRY_BYTES`, and its zip directory and ``.npy`` headers are checked first --
only the member names this module writes, stored uncompressed (as ``numpy.savez`` stores
them; a deflated member could expand a few kB into gigabytes), each member exactly as
large as its header's shape and dtype say -- then the header's format, version and key,
and only then is any array read. A ``.cache`` folder that is a symbolic link is not used
(its steps are computed and not kept), so nothing is written or read through it.

The key of a step is a hash of what determines its result: the data, the settings, the
seed, and :func:`code_fingerprint`, a hash of the source of the packages ``rankers``,
``aggregation`` and ``moweights`` (every ``.py`` file) and of the versions of the
libraries that compute the numbers. Editing any of that code makes new keys, so no
result of older code is reused; steps of a third-party ranker add its package's source
(:func:`ranker_fingerprint`).

Values the cache can hold: None, bool, int, float, str; lists, tuples and dicts with
string keys of those; numpy arrays of booleans, integers, floats or strings; pandas
DataFrames whose columns hold those (strings as ``object`` or ``str`` dtype, missing
strings allowed) with a flat index; :class:`~aggregation.Ranking`,
:class:`~aggregation.GenericRanking` and
:class:`~aggregation.federated.SiteRankings`.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.metadata
import importlib.util
import io
import json
import logging
import os
import re
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from moweights.errors import CacheFormatError, CacheWarning

__all__ = ["CacheWarning", "StepCache", "code_fingerprint", "decode", "encode"]

log = logging.getLogger("moweights")

FORMAT = "moweights-cache"
#: 2: the header carries the digest of the value (:func:`value_digest`)
VERSION = 2
#: packages whose source every cached step depends on
PACKAGES = ("rankers", "aggregation", "moweights")
#: libraries whose version can change the numbers
LIBRARIES = ("numpy", "scipy", "scikit-learn", "pandas", "pymoo")
_HEADER = "__header__"
_ARRAY_KINDS = "biufU"  # booleans, integers, floats, unicode strings: never objects
#: the largest entry read (or written): a step's arrays are far smaller
MAX_ENTRY_BYTES = 512 * 2**20
_MEMBER = re.compile(rf"({_HEADER}|a[0-9]{{1,9}})\.npy")


# ------------------------------------------------------------------ fingerprints
def _package_files(package: str) -> list[tuple[str, Path]]:
    spec = importlib.util.find_spec(package)
    if spec is None:
        return []
    if spec.submodule_search_locations:
        files = []
        for root in map(Path, spec.submodule_search_locations):
            files += [
                (f"{package}/{p.relative_to(root).as_posix()}", p) for p in root.rglob("*.py")
            ]
        return sorted(files)
    return [(package, Path(spec.origin))] if spec.origin and Path(spec.origin).is_file() else []


def _digest(packages: tuple[str, ...], libraries: tuple[str, ...]) -> str:
    h = hashlib.sha256()
    for package in packages:
        for name, path in _package_files(package):
            h.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    for lib in libraries:
        try:
            version = importlib.metadata.version(lib)
        except importlib.metadata.PackageNotFoundError:
            version = "-"
        h.update(f"{lib}=={version}\0".encode())
    return h.hexdigest()[:32]


@functools.cache
def code_fingerprint(packages: tuple[str, ...] | None = None) -> str:
    """A hash of the code a cached step depends on: editing it invalidates the step.

    The source of every ``.py`` file of ``packages`` (by default ``rankers``,
    ``aggregation`` and ``moweights``, whole: a step's result goes through many of their
    modules) and the installed versions of :data:`LIBRARIES`. The same idea as the
    benchmarks' cell cache (``benchmarks/_protocol.py``), which hashes single modules.
    Computed once per process.
    """
    return _digest(tuple(PACKAGES if packages is None else packages), LIBRARIES)


@functools.cache
def ranker_fingerprint(name: str) -> str:
    """The code of a registered ranker outside our packages (a plugin): its top package's
    source; "" for the built-in rankers, which :func:`code_fingerprint` covers."""
    import rankers

    top = rankers.get_class(name).__module__.partition(".")[0]
    return "" if top in PACKAGES else _digest((top,), ())


# ------------------------------------------------------------------ encoding
class _Writer:
    def __init__(self):
        self.arrays: dict[str, np.ndarray] = {}

    def array(self, values: np.ndarray) -> str:
        values = np.asarray(values)
        if values.dtype.kind not in _ARRAY_KINDS:
            raise CacheFormatError(f"arrays of dtype {values.dtype} are not cached")
        name = f"a{len(self.arrays)}"
        self.arrays[name] = values
        return name


def _scalar(value: Any) -> Any:
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return value.item()
    return value


def _encode(value: Any, w: _Writer) -> Any:
    from aggregation import GenericRanking, Ranking
    from aggregation.federated import SiteRankings

    value = _scalar(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [_encode(v, w) for v in value]
    if isinstance(value, tuple):
        return {"$tuple": [_encode(v, w) for v in value]}
    if isinstance(value, dict):
        bad = [k for k in value if not isinstance(k, str)]
        if bad:
            raise CacheFormatError(f"dict keys must be strings, not {bad[:3]}")
        return {"$dict": {k: _encode(v, w) for k, v in value.items()}}
    if isinstance(value, np.ndarray):
        return {"$array": w.array(value)}
    if isinstance(value, pd.DataFrame):
        return {"$frame": _encode_frame(value, w)}
    if isinstance(value, Ranking):
        return {
            "$ranking": {
                "names": w.array(np.asarray(value.names, dtype=str)),
                "scores": w.array(value.scores),
                "order": w.array(np.asarray(value.order_idx, dtype=np.int64)),
                "method": value.method,
            }
        }
    if isinstance(value, GenericRanking):
        return {"$generic": {"blocks": [list(b) for b in value.blocks], "method": value.method}}
    if isinstance(value, SiteRankings):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return {"$sites": _encode(fields, w)}
    raise CacheFormatError(f"values of type {type(value).__name__} are not cached")


def _encode_index(index: pd.Index, w: _Writer) -> dict:
    if isinstance(index, pd.MultiIndex):
        raise CacheFormatError("tables with a MultiIndex are not cached")
    name = _encode(index.name, w)
    if isinstance(index, pd.RangeIndex):
        return {"range": [index.start, index.stop, index.step], "name": name}
    return {**_encode_column(pd.Series(index), w), "name": name}


def _encode_column(column: pd.Series, w: _Writer) -> dict:
    dtype = column.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "biuf":
        return {"data": w.array(column.to_numpy()), "dtype": str(dtype)}
    is_text = isinstance(dtype, pd.StringDtype) or pd.api.types.is_object_dtype(dtype)
    missing = column.isna().to_numpy()
    # the dtype must come back from its name (pandas' "str", "string" or object)
    if not is_text or pd.api.types.pandas_dtype(str(dtype)) != dtype:
        raise CacheFormatError(f"table columns of dtype {dtype!r} are not cached")
    if not all(isinstance(v, str) for v in column[~missing]):
        raise CacheFormatError("text columns holding other values than strings are not cached")
    text = np.where(missing, "", column.to_numpy(dtype=object, na_value=None)).astype(str)
    out = {"data": w.array(text), "dtype": str(dtype)}
    if missing.any():
        out["missing"] = w.array(missing)
    return out


def _encode_frame(frame: pd.DataFrame, w: _Writer) -> dict:
    if not frame.columns.is_unique:
        raise CacheFormatError("tables with repeated column names are not cached")
    return {
        "columns": _encode_index(frame.columns, w),
        "data": [_encode_column(frame.iloc[:, j], w) for j in range(frame.shape[1])],
        "index": _encode_index(frame.index, w),
        "attrs": _encode(dict(frame.attrs), w),
    }


def encode(value: Any) -> tuple[Any, dict[str, np.ndarray]]:
    """``value`` as a JSON-able header and the arrays it refers to (see the module doc).

    Raises
    ------
    CacheFormatError
        For a value (or a part of it) of a type the cache does not hold.
    """
    w = _Writer()
    return _encode(value, w), w.arrays


# ------------------------------------------------------------------ decoding
class _Reader:
    def __init__(self, arrays):
        self.arrays = arrays
        self.used: set[str] = set()

    def array(self, name: Any, ndim: int = 1, kinds: str = _ARRAY_KINDS) -> np.ndarray:
        if not isinstance(name, str) or name not in self.arrays or name in self.used:
            raise CacheFormatError(f"missing or reused array {name!r}")
        self.used.add(name)
        values = self.arrays[name]
        if values.dtype.kind not in kinds or values.ndim != ndim:
            raise CacheFormatError(f"array {name} has dtype {values.dtype}, ndim {values.ndim}")
        return values


def _node(node: Any) -> tuple[str, Any]:
    if not (isinstance(node, dict) and len(node) == 1):
        raise CacheFormatError(f"unexpected header node {str(node)[:60]}")
    return next(iter(node.items()))


def _decode(node: Any, r: _Reader) -> Any:
    from aggregation import GenericRanking, Ranking
    from aggregation.federated import SiteRankings

    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if isinstance(node, list):
        return [_decode(v, r) for v in node]
    tag, body = _node(node)
    if tag == "$tuple" and isinstance(body, list):
        return tuple(_decode(v, r) for v in body)
    if tag == "$dict" and isinstance(body, dict):
        return {k: _decode(v, r) for k, v in body.items()}
    if tag == "$array" and isinstance(body, str):
        values = r.arrays.get(body)
        return r.array(body, ndim=getattr(values, "ndim", 1)).copy()
    if tag == "$frame" and isinstance(body, dict):
        return _decode_frame(body, r)
    if tag == "$ranking" and isinstance(body, dict):
        return Ranking(
            tuple(r.array(body.get("names"), kinds="U").tolist()),
            r.array(body.get("scores"), kinds="f"),
            method=_text(body.get("method")),
            order_idx=r.array(body.get("order"), kinds="iu"),
        )
    if tag == "$generic" and isinstance(body, dict):
        blocks = body.get("blocks")
        if not (isinstance(blocks, list) and all(isinstance(b, list) for b in blocks)):
            raise CacheFormatError("a generic ranking needs a list of blocks")
        return GenericRanking(blocks, method=_text(body.get("method")))
    if tag == "$sites":
        fields = _decode(body, r)
        names = {f.name for f in dataclasses.fields(SiteRankings)}
        if not isinstance(fields, dict) or set(fields) != names:
            raise CacheFormatError("site rankings need exactly the fields of SiteRankings")
        return SiteRankings(**fields)
    raise CacheFormatError(f"unknown header node {tag!r}")


def _text(value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise CacheFormatError(f"expected a string, got {type(value).__name__}")
    return value


def _decode_column(node: Any, r: _Reader, n: int | None) -> pd.Series:
    if not isinstance(node, dict) or not isinstance(node.get("dtype"), str):
        raise CacheFormatError("a table column needs data and a dtype")
    values = r.array(node.get("data"))
    if n is not None and len(values) != n:
        raise CacheFormatError(f"a column of {len(values)} rows in a table of {n}")
    dtype = node["dtype"]
    if values.dtype.kind in "biuf":
        if dtype != str(values.dtype):
            raise CacheFormatError(f"column stored as {values.dtype}, declared {dtype}")
        return pd.Series(values, copy=True)
    if dtype not in ("object", "str", "string"):
        raise CacheFormatError(f"text column declared as {dtype}")
    column = pd.Series(values.astype(object), dtype=dtype)
    if "missing" in node:
        missing = r.array(node["missing"], kinds="b")
        if len(missing) != len(values):
            raise CacheFormatError("a missing-value mask of the wrong length")
        column[missing] = np.nan
    return column


def _decode_index(node: Any, r: _Reader, n: int | None) -> pd.Index:
    if not isinstance(node, dict):
        raise CacheFormatError("an index needs a description")
    name = _decode(node.get("name"), r)
    if "range" in node:
        bounds = node["range"]
        if not (isinstance(bounds, list) and len(bounds) == 3):
            raise CacheFormatError("a range index needs start, stop, step")
        index = pd.RangeIndex(*bounds, name=name)
        if n is not None and len(index) != n:
            raise CacheFormatError(f"an index of {len(index)} rows in a table of {n}")
        return index
    return pd.Index(_decode_column(node, r, n), name=name)


def _decode_frame(body: dict, r: _Reader) -> pd.DataFrame:
    data = body.get("data")
    if not isinstance(data, list):
        raise CacheFormatError("a table needs its columns")
    columns = _decode_index(body.get("columns"), r, len(data))
    index = _decode_index(body.get("index"), r, None)
    parts = [_decode_column(c, r, len(index)) for c in data]
    if parts:
        frame = pd.concat(parts, axis=1, ignore_index=True)
        frame.index, frame.columns = index, columns
    else:
        frame = pd.DataFrame(index=index, columns=columns)
    attrs = _decode(body.get("attrs"), r)
    if not isinstance(attrs, dict):
        raise CacheFormatError("a table's attrs must be a dict")
    frame.attrs.update(attrs)
    return frame


def decode(header: Any, arrays: dict[str, np.ndarray]) -> Any:
    """The value :func:`encode` gave ``header`` and ``arrays`` for; checks every array.

    Raises
    ------
    CacheFormatError, InvalidInputError
        When the header and arrays do not describe a value of the supported types (an
        array missing, unused, or of the wrong dtype or shape; a ranking that is not one).
    """
    r = _Reader(arrays)
    value = _decode(header, r)
    unused = set(arrays) - r.used
    if unused:
        raise CacheFormatError(f"arrays the header does not use: {sorted(unused)[:5]}")
    return value


def value_digest(key: str, node: Any, arrays: dict[str, np.ndarray]) -> str:
    """The SHA-256 of an entry's content: its key, its header's value and every array
    (name, dtype, shape and bytes), kept in the header when the entry is written.

    An entry edited after it was written -- an array changed and saved again, a number
    of the header changed -- still decodes to well-formed data of its step; the digest
    tells it from what the run wrote, and such an entry is recomputed, not reused.
    """
    h = hashlib.sha256()
    h.update(json.dumps([key, node], sort_keys=True).encode() + b"\0")
    for name in sorted(arrays):
        values = np.ascontiguousarray(arrays[name])
        h.update(f"{name}:{values.dtype.str}:{values.shape}\0".encode())
        h.update(values.tobytes() + b"\0")
    return h.hexdigest()


# ------------------------------------------------------------------ reading an entry
def _checked_members(archive: zipfile.ZipFile, size: int) -> dict[str, zipfile.ZipInfo]:
    """The entry's members by array name, each checked from the zip directory alone."""
    members: dict[str, zipfile.ZipInfo] = {}
    for info in archive.infolist():
        if not _MEMBER.fullmatch(info.filename) or info.filename[:-4] in members:
            raise CacheFormatError(f"unexpected member {info.filename[:60]!r}")
        if info.compress_type != zipfile.ZIP_STORED or info.file_size != info.compress_size:
            raise CacheFormatError(
                f"member {info.filename} is compressed (an entry stores its arrays as they "
                "are: a compressed one could expand far beyond the file)"
            )
        if info.file_size > size:
            raise CacheFormatError(f"member {info.filename} is larger than the entry")
        members[info.filename[:-4]] = info
    return members


def _npy_header(fp, name: str) -> tuple[tuple[int, ...], np.dtype, int]:
    """The shape and dtype a member's ``.npy`` header declares, and the header's length."""
    from numpy.lib import format as npy

    try:
        version = npy.read_magic(fp)
        if version == (1, 0):
            shape, fortran, dtype = npy.read_array_header_1_0(fp)
        elif version == (2, 0):
            shape, fortran, dtype = npy.read_array_header_2_0(fp)
        else:
            raise CacheFormatError(f"member {name} has .npy version {version}")
    except CacheFormatError:
        raise
    except ValueError as exc:
        raise CacheFormatError(f"member {name} has no valid .npy header ({exc})") from None
    if fortran or dtype.hasobject or dtype.kind not in _ARRAY_KINDS:
        raise CacheFormatError(f"member {name} holds {dtype} arrays, which are not cached")
    return shape, dtype, fp.tell()


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> np.ndarray:
    """One array, read only after its header's shape was found to match its size."""
    from numpy.lib import format as npy

    name = info.filename
    with archive.open(info) as fp:
        shape, dtype, offset = _npy_header(fp, name)
        n_bytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
        if offset + n_bytes != info.file_size:
            raise CacheFormatError(
                f"member {name} declares {shape} values of {dtype} ({n_bytes} bytes), but "
                f"holds {info.file_size - offset} bytes"
            )
    with archive.open(info) as fp:
        return npy.read_array(fp, allow_pickle=False)


def _read_header(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Any:
    """The entry's JSON header (a 0-d unicode array), checked before any array is read."""
    array = _read_member(archive, info)
    if array.dtype.kind != "U" or array.ndim != 0:
        raise CacheFormatError("no header")
    return json.loads(str(array))


# ------------------------------------------------------------------ the cache
def step_key(*parts: Any, ranker: str | None = None) -> str:
    """The key of a step: a hash of ``parts`` (JSON) and of the code that computes it."""
    code = [code_fingerprint(), ranker_fingerprint(ranker) if ranker else ""]
    text = json.dumps([FORMAT, VERSION, code, *parts], sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class StepCache:
    """Finished steps of runs in ``folder`` (None: no cache), as ``<key>.npz`` files.

    Parameters
    ----------
    folder : path or None
        The cache folder, e.g. ``<output>/.cache``; None computes everything.
    on_hit, on_miss : callable, optional
        Called with the step's description when it came from the cache / was computed.
    on_repeat : callable, optional
        Called instead of ``on_hit`` when the entry was written by this cache object (the
        same step met again within one run), so that ``on_hit`` counts only the steps an
        earlier run left.
    """

    def __init__(
        self,
        folder,
        on_hit: Callable | None = None,
        on_miss: Callable | None = None,
        on_repeat: Callable | None = None,
    ):
        self.folder = None if folder is None else Path(folder)
        self.on_hit = on_hit
        self.on_miss = on_miss
        self.on_repeat = on_repeat
        self.stored: set[str] = set()  # the keys this cache wrote: a hit on one is a repeat
        if self.folder is not None and self.folder.is_symlink():
            warnings.warn(
                f"the cache folder {self.folder} is a symbolic link (to "
                f"{os.readlink(self.folder)}); it is not used, so nothing is read or written "
                "through it: the steps are computed and not kept (delete the link to cache "
                "them in a folder of the run's own)",
                CacheWarning,
                stacklevel=2,
            )
            self.folder = None

    key = staticmethod(step_key)

    def path(self, key: str) -> Path | None:
        return None if self.folder is None else self.folder / f"{key}.npz"

    def fetch(self, what: str, key: str, compute: Callable[[], Any], check=None) -> Any:
        """The step's value: from the cache when a valid entry exists, else computed and kept.

        ``check(value)`` raises when a decoded value does not fit the step (wrong
        features, columns, ...); such an entry is recomputed like a damaged one.
        """
        path = self.path(key)
        if path is not None and os.path.lexists(path):
            try:
                value = self.load(path, key)
                if check is not None:
                    check(value)
            except Exception as exc:  # unusable: recomputed, never fatal, never executed
                warnings.warn(
                    f"cache entry {path} for {what} is unusable and is recomputed: "
                    f"{type(exc).__name__}: {exc}",
                    CacheWarning,
                    stacklevel=2,
                )
            else:
                log.info("%s: from the cache", what)
                repeat = key in self.stored and self.on_repeat is not None
                callback = self.on_repeat if repeat else self.on_hit
                if callback:
                    callback(what)
                return value
        value = compute()
        if self.on_miss:
            self.on_miss(what)
        if path is not None and self.store(path, key, what, value):
            self.stored.add(key)
        return value

    @staticmethod
    def load(path: Path, key: str) -> Any:
        """Read and check one entry (never unpickles anything; see the module's notes)."""
        from moweights.output.files import read_bytes

        try:
            data = read_bytes(path, MAX_ENTRY_BYTES, what="cache entry")
        except OSError as exc:  # a link, a FIFO, a device, too large
            raise CacheFormatError(str(exc)) from None
        if not data.startswith(b"PK\x03\x04"):
            raise CacheFormatError("not an .npz archive")
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                members = _checked_members(archive, len(data))
                if _HEADER not in members:
                    raise CacheFormatError("no header")
                header = _read_header(archive, members.pop(_HEADER))
                if not isinstance(header, dict) or header.get("format") != FORMAT:
                    raise CacheFormatError("not a moweights cache entry")
                if header.get("version") != VERSION or header.get("key") != key:
                    raise CacheFormatError(
                        "written for another step or another version of the code"
                    )
                arrays = {name: _read_member(archive, info) for name, info in members.items()}
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError) as exc:
            raise CacheFormatError(f"damaged archive ({exc})") from None
        value = decode(header.get("value"), arrays)  # well formed: each array checked
        if header.get("digest") != value_digest(key, header.get("value"), arrays):
            raise CacheFormatError(
                "its content does not match the digest written with it (edited since the "
                "run wrote it?)"
            )
        return value

    @staticmethod
    def store(path: Path, key: str, what: str, value: Any) -> bool:
        """Write one entry atomically; a value the cache cannot hold is left out, with a warning."""
        from moweights.output.files import atomic_write

        try:
            node, arrays = encode(value)
        except CacheFormatError as exc:
            warnings.warn(f"{what} is not cached: {exc}", CacheWarning, stacklevel=3)
            return False
        header = {
            "format": FORMAT,
            "version": VERSION,
            "key": key,
            "what": what,
            "value": node,
            "digest": value_digest(key, node, arrays),
        }
        buffer = io.BytesIO()
        np.savez(buffer, **{_HEADER: np.array(json.dumps(header))}, **arrays)
        if buffer.tell() > MAX_ENTRY_BYTES:  # it could not be read back
            warnings.warn(
                f"{what} is not cached: {buffer.tell()} bytes, more than an entry may hold",
                CacheWarning,
                stacklevel=3,
            )
            return False
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, buffer.getvalue())
        except OSError as exc:  # a cache that cannot be written costs a resume, not the run
            warnings.warn(f"{what} is not cached: {exc}", CacheWarning, stacklevel=3)
            return False
        return True
