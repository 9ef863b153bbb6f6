"""Memory before it is spent: steps that grow as n² check their need against the machine.

A step whose memory grows with the square of the features or of the samples (a
feature-similarity matrix, all pairwise distances between samples, a dense kernel)
estimates its peak first and calls :func:`check_memory`; when the estimate exceeds the
memory available, it stops with :class:`~rankers.exceptions.NotEnoughMemoryError` (a
``MemoryError``) that gives the estimate, what is available and the parameter that bounds
the step, instead of pushing the machine into swap or the out-of-memory killer.

What is available is the smallest of the figures this process can read: on Linux
``/proc/meminfo``'s ``MemAvailable``, the memory limit of the process's cgroup (v2
``memory.max`` minus ``memory.current``, v1 ``memory.limit_in_bytes`` minus
``memory.usage_in_bytes``, the tightest level of the hierarchy), and on any POSIX system its
address-space limit (``ulimit -v``, ``RLIMIT_AS``: what batch schedulers enforce) minus the
address space it already maps (``VmSize`` in ``/proc/self/status``); on Windows
``GlobalMemoryStatusEx``. Where none can be read it is unknown and nothing is refused. The
environment variable ``MOWEIGHTS_MAX_MEMORY`` (bytes, or a size such as ``"512M"`` or
``"2.5GiB"``) replaces the detected value: it caps a shared machine more tightly, lifts
the check where swap is acceptable, and lets tests simulate a small machine.

A step without an estimate can still run out: :func:`memory_errors` turns the
``MemoryError`` it raises into a :class:`~rankers.exceptions.NotEnoughMemoryError` naming the
step and what was available (every ranker's ``fit`` runs its scoring step inside it).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from rankers.exceptions import InvalidParameterError, NotEnoughMemoryError

__all__ = [
    "MAX_MEMORY_ENV",
    "available_memory",
    "check_memory",
    "format_bytes",
    "memory_errors",
    "parse_bytes",
]

MAX_MEMORY_ENV = "MOWEIGHTS_MAX_MEMORY"

_UNITS = {
    "": 1,
    "b": 1,
    "k": 10**3,
    "kb": 10**3,
    "m": 10**6,
    "mb": 10**6,
    "g": 10**9,
    "gb": 10**9,
    "t": 10**12,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-zA-Z]*)\s*$")
# cgroup v1 reports "no limit" as a huge number (PAGE_COUNTER_MAX pages), not as "max"
_NO_LIMIT = 2**60
_MEMINFO = Path("/proc/meminfo")
_PROC_STATUS = Path("/proc/self/status")
_PROC_CGROUP = Path("/proc/self/cgroup")
_CGROUP_ROOT = Path("/sys/fs/cgroup")


def parse_bytes(text: str | int) -> int:
    """A byte count from an int or a size string: ``"1000000"``, ``"512M"``, ``"2.5GiB"``.

    Decimal units (k, M, G, T, optionally followed by B) are powers of 1000, binary ones
    (KiB, MiB, GiB, TiB) powers of 1024; case does not matter.

    Raises
    ------
    InvalidParameterError
        When the text is not a non-negative size.
    """
    if isinstance(text, int) and not isinstance(text, bool):
        if text < 0:
            raise InvalidParameterError(f"a memory size must be >= 0 bytes; got {text}")
        return text
    match = _SIZE.match(str(text))
    unit = match.group(2).lower() if match else None
    if match is None or unit not in _UNITS:
        raise InvalidParameterError(
            f"{text!r} is not a memory size; write bytes (e.g. 2000000000) or a number with "
            "a unit: k, M, G, T (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024)"
        )
    return int(float(match.group(1)) * _UNITS[unit])


def format_bytes(n_bytes: float) -> str:
    """``n_bytes`` for a human: ``"11.5 GB"``, ``"730 MB"``, ``"12 kB"`` (powers of 1000)."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n_bytes) >= size:
            return f"{n_bytes / size:.3g} {unit}"
    return f"{int(n_bytes)} bytes"


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except (OSError, ValueError):
        return None


def _meminfo_available() -> int | None:
    text = _read(_MEMINFO)
    if text is None:
        return None
    for line in text.splitlines():
        if line.startswith("MemAvailable:"):
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                return int(parts[1]) * 1024  # the kernel writes kB meaning KiB
    return None


def _cgroup_dirs() -> list[Path]:
    """Directories that may hold this process's memory limits, deepest first.

    The path in ``/proc/self/cgroup`` is relative to the cgroup root the host sees; inside
    a container the mount shows the container's own cgroup at the root instead, so both
    the path and its ancestors are tried, and the root itself last.
    """
    text = _read(_PROC_CGROUP)
    if text is None:
        return []
    dirs: list[Path] = []
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":  # cgroup v2, unified hierarchy
            base = _CGROUP_ROOT
        elif "memory" in controllers.split(","):
            base = _CGROUP_ROOT / "memory"
        else:
            continue
        rel = Path(path.lstrip("/"))
        for level in [rel, *rel.parents]:
            candidate = base / level
            if candidate not in dirs:
                dirs.append(candidate)
    return dirs


def _stat(d: Path, key: str) -> int:
    """One counter of a cgroup's ``memory.stat`` (0 when absent)."""
    for line in (_read(d / "memory.stat") or "").splitlines():
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return 0


def _cgroup_available() -> int | None:
    """Smallest headroom (limit minus usage) of the cgroups this process is in.

    Usage counts the page cache; its inactive part is reclaimed before the limit bites,
    so it is not counted as used (the working set, as ``docker stats`` reports it).
    """
    best = None
    for d in _cgroup_dirs():
        for limit_file, usage_file, cache_key in (
            ("memory.max", "memory.current", "inactive_file"),  # v2
            ("memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"),  # v1
        ):
            limit, usage = _read(d / limit_file), _read(d / usage_file)
            if limit is None or not limit.isdigit():  # absent, or "max" (no limit)
                continue
            if int(limit) >= _NO_LIMIT:
                continue
            used = int(usage) if usage is not None and usage.isdigit() else 0
            used = max(0, used - _stat(d, cache_key))
            room = max(0, int(limit) - used)
            best = room if best is None else min(best, room)
    return best


def _windows_available() -> int | None:
    try:
        import ctypes

        class _Status(ctypes.Structure):
            _fields_ = [
                ("dwLength", ctypes.c_ulong),
                ("dwMemoryLoad", ctypes.c_ulong),
                ("ullTotalPhys", ctypes.c_ulonglong),
                ("ullAvailPhys", ctypes.c_ulonglong),
                ("ullTotalPageFile", ctypes.c_ulonglong),
                ("ullAvailPageFile", ctypes.c_ulonglong),
                ("ullTotalVirtual", ctypes.c_ulonglong),
                ("ullAvailVirtual", ctypes.c_ulonglong),
                ("ullAvailExtendedVirtual", ctypes.c_ulonglong),
            ]

        status = _Status()
        status.dwLength = ctypes.sizeof(_Status)
        if not ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):
            return None
        return int(status.ullAvailPhys)
    except Exception:  # no ctypes/windll: the figure is unknown, nothing is refused
        return None


def _address_space_limit() -> int | None:
    """The soft ``RLIMIT_AS`` of this process in bytes (``ulimit -v``); None when unlimited."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY or soft < 0 else int(soft)


def _mapped() -> int:
    """The address space this process maps already (``VmSize``; 0 where unknown)."""
    for line in (_read(_PROC_STATUS) or "").splitlines():
        if line.startswith("VmSize:"):
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                return int(parts[1]) * 1024
    return 0


def _address_space_available() -> int | None:
    """What ``RLIMIT_AS`` leaves to allocate: the limit minus what is mapped (None: no limit)."""
    limit = _address_space_limit()
    return None if limit is None else max(0, limit - _mapped())


def available_memory() -> tuple[int | None, str]:
    """Bytes this process may still allocate, and where the figure comes from.

    Returns
    -------
    n_bytes : int or None
        ``MOWEIGHTS_MAX_MEMORY`` when set; otherwise the smallest of the system's available
        memory, the cgroup's headroom and the address space ``RLIMIT_AS`` leaves; None when
        none can be read.
    source : str
        A short description of the figure, for messages.

    Raises
    ------
    InvalidParameterError
        When ``MOWEIGHTS_MAX_MEMORY`` is set to something that is not a size.
    """
    override = os.environ.get(MAX_MEMORY_ENV, "").strip()
    if override:
        try:
            return parse_bytes(override), f"{MAX_MEMORY_ENV}={override}"
        except InvalidParameterError as exc:
            raise InvalidParameterError(f"environment variable {MAX_MEMORY_ENV}: {exc}") from None
    if sys.platform == "win32":
        return _windows_available(), "available physical memory"
    figures = [
        (_meminfo_available(), "MemAvailable in /proc/meminfo"),
        (_cgroup_available(), "the memory limit of this process's cgroup, minus its usage"),
        (
            _address_space_available(),
            "this process's address-space limit (ulimit -v, RLIMIT_AS) minus what it maps",
        ),
    ]
    known = [(n, source) for n, source in figures if n is not None]
    if not known:
        return None, "MemAvailable in /proc/meminfo"
    return min(known, key=lambda figure: figure[0])


def check_memory(n_bytes: float, what: str, options: str) -> None:
    """Stop a step before it allocates more memory than the machine has available.

    Parameters
    ----------
    n_bytes : float
        Estimated peak bytes the step allocates (beyond what already exists).
    what : str
        The step, named so a user recognises it, with the size that drives it, e.g.
        ``"FRANe's feature-similarity graph of 20000 features (2e+08 pairs)"``.
    options : str
        What bounds the step: the parameter to set, or a smaller input.

    Raises
    ------
    NotEnoughMemoryError
        When ``n_bytes`` exceeds the available memory (see :func:`available_memory`);
        the message gives the estimate, what is available and ``options``.
    """
    available, source = available_memory()
    if available is None or n_bytes <= available:
        return
    raise NotEnoughMemoryError(
        f"{what} needs about {format_bytes(n_bytes)} of memory, but only "
        f"{format_bytes(available)} is available ({source}). Options: {options}. "
        f"To change the limit, set the environment variable {MAX_MEMORY_ENV} "
        "(e.g. MOWEIGHTS_MAX_MEMORY=16G)",
        needed=int(n_bytes),
        available=available,
        what=what,
    )


@contextlib.contextmanager
def memory_errors(what: str) -> Iterator[None]:
    """Run a step whose ``MemoryError`` becomes a :class:`NotEnoughMemoryError` naming it.

    A step that checks its estimate first (:func:`check_memory`) refuses before it
    allocates; any other allocation can still fail (numpy's "Unable to allocate ..."),
    which names an array's shape but not the step or what bounds it. The error keeps the
    original as its ``__cause__``; a :class:`NotEnoughMemoryError` passes through as it is.

    Parameters
    ----------
    what : str
        The step, e.g. ``"FRANeRanker.fit on 2000 samples x 20000 features"``.
    """
    try:
        yield
    except NotEnoughMemoryError:
        raise
    except MemoryError as exc:
        try:
            available, source = available_memory()
        except InvalidParameterError:
            available, source = None, f"{MAX_MEMORY_ENV} is not a size"
        room = "an unknown amount" if available is None else format_bytes(available)
        reason = " ".join(str(exc).split()) or "MemoryError"
        raise NotEnoughMemoryError(
            f"{what} ran out of memory: {reason}; {room} is available ({source}). Options: "
            "a smaller input (fewer samples or features), the ranker's parameters that "
            "bound its work, or a machine (or job) with more memory",
            needed=int(getattr(exc, "_total_size", 0) or 0),
            available=-1 if available is None else available,
            what=what,
        ) from exc
