"""Shared harness of the protocol benchmarks: data, a disk cache of cells, a time budget.

A *cell* is one unit of work, e.g. one (data set, ranker) pair of a protocol. Every cell
runs in its own child Python process with a wall-clock budget; a cell that raises, dies
or runs over the budget is recorded with its status (``ok``, ``error``, ``timeout``) and
the reason, never dropped. Each finished cell is written at once to one JSON file in the
cache (``<cache>/<protocol>/<dataset>/<ranker>__<settings hash>.json``), so an
interrupted run resumes where it stopped and a second run reuses every cell whose
settings are unchanged.

Cells run ``--n-jobs`` at a time through joblib (``--backend loky``, ``threading`` or
``dask``; dask needs ``--scheduler`` for a cluster whose workers see the same paths, or
starts a local one). The child process is started by the joblib task, so the budget can
end it (its whole process group) whatever the backend.

Run as ``python -m benchmarks._protocol --cell IN.json OUT.json`` it is that child: it
imports the protocol script named in the cell (a module name, e.g.
``benchmarks.protocols.unsupervised_protocol``) and calls its ``compute_cell(payload)``.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import functools
import hashlib
import importlib
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benchmarks._common import child_env

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
DEFAULT_DATA_DIR = ROOT.parent / "shared" / "data" / "skfeature"
STATUSES = ("ok", "error", "timeout")
# outside the repository: the cache is large and the results folder holds small tables only
DEFAULT_CACHE = (
    Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "moweights-benchmarks"
)


# ------------------------------------------------------------------ data
@dataclass(frozen=True)
class Dataset:
    """One row of a data folder's MANIFEST.csv (``path`` is None when the file is missing)."""

    name: str
    path: str | None
    n_samples: int
    n_features: int
    n_classes: int
    sha256: str

    @property
    def size(self) -> int:
        return self.n_samples * self.n_features


def list_datasets(data_dir: str | Path = DEFAULT_DATA_DIR) -> tuple[list[Dataset], list[str]]:
    """The data sets of ``data_dir`` present on disk, and the names listed but missing.

    ``data_dir`` holds ``.mat`` files (``X``, ``Y``) and a ``MANIFEST.csv`` with the
    columns ``name, file, n_samples, n_features, n_classes`` (``sha256`` optional); a row
    with an empty ``file``, or whose file is absent, is missing.
    """
    data_dir = Path(data_dir)
    manifest = pd.read_csv(data_dir / "MANIFEST.csv", dtype={"file": str}, keep_default_na=False)
    present, missing = [], []
    for row in manifest.itertuples(index=False):
        path = data_dir / row.file if row.file else None
        if path is None or not path.is_file():
            missing.append(row.name)
            continue
        sha = getattr(row, "sha256", "") or ""
        present.append(
            Dataset(row.name, str(path), row.n_samples, row.n_features, row.n_classes, sha)
        )
    return sorted(present, key=lambda d: d.size), missing


#: left out by default, as in the ensemble and FRANe papers (§5.1): a near copy of ORL,
#: and the rank tests assume independent data sets (still run when named in --datasets)
NOT_INDEPENDENT = ("orlraws10P",)


def select_datasets(
    available: list[Dataset], missing: list[str], names: list[str] | None, smallest: int | None
) -> tuple[list[Dataset], list[str]]:
    """The data sets asked for (by name, case-insensitive; or the ``smallest`` few).

    Without ``names``: every data set present except :data:`NOT_INDEPENDENT`. Returns the
    selection and the requested names that are missing (skipped by name). An unknown
    name is an error listing the known ones.
    """
    by_name = {d.name.lower(): d for d in available}
    known = set(by_name) | {m.lower() for m in missing}
    if names:
        unknown = [n for n in names if n.lower() not in known]
        if unknown:
            raise SystemExit(
                f"unknown data set(s) {unknown}; known: {sorted(d.name for d in available)} "
                f"(missing here: {missing})"
            )
        chosen = [by_name[n.lower()] for n in names if n.lower() in by_name]
        skipped = [n for n in names if n.lower() not in by_name]
    else:
        chosen = [d for d in available if d.name not in NOT_INDEPENDENT]
        skipped = list(missing)
    if smallest:
        chosen = sorted(chosen, key=lambda d: d.size)[:smallest]
    return chosen, skipped


# ------------------------------------------------------------------ cells and cache
# the packages whose code a cell's result can go through (the others are libraries)
_PROJECT = ("rankers", "aggregation", "moweights")


def _is_project_module(name: str) -> bool:
    if name.partition(".")[0] not in _PROJECT:
        return False
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):  # a parent that is not a package
        return False
    return spec is not None and spec.origin is not None and spec.origin.endswith(".py")


def _is_package(name: str) -> bool:
    return Path(importlib.util.find_spec(name).origin).name == "__init__.py"


@functools.cache
def _module_tree(name: str) -> ast.Module:
    return ast.parse(Path(importlib.util.find_spec(name).origin).read_bytes(), name)


def _imported_modules(name: str) -> set[str]:
    """The project modules ``name`` imports, at module level or inside functions.

    ``from pkg import attr`` names the module that defines ``attr`` (a package's
    ``__init__`` only re-exports, lazily or not), so a ranker's closure does not widen to
    every module its package re-exports.
    """
    found = set()
    package = name if _is_package(name) else name.rpartition(".")[0]
    for node in ast.walk(_module_tree(name)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if _is_project_module(a.name))
        elif isinstance(node, ast.ImportFrom):
            base = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
            if not _is_project_module(base):
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if _is_project_module(sub):
                    found.add(sub)
                elif not _is_package(base):
                    found.add(base)
                else:  # a name a package re-exports: the module that defines it
                    obj = getattr(importlib.import_module(base), alias.name, None)
                    defining = getattr(obj, "__module__", None) or base
                    found.add(defining if _is_project_module(defining) else base)
    return found


def module_closure(names: Iterable[str]) -> list[str]:
    """``names`` and every project module they import, directly or not, sorted.

    Package ``__init__`` modules are left out: they re-export what the closure already
    follows to its defining module.
    """
    return list(_closure(frozenset(names)))


@functools.cache
def _closure(names: frozenset[str]) -> tuple[str, ...]:
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(_imported_modules(name) - seen)
    return tuple(sorted(n for n in seen if not _is_package(n) or n in names))


def _without_docstrings(tree: ast.Module) -> ast.Module:
    tree = copy.deepcopy(tree)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:]
    return tree


def code_fingerprint(rankers: Iterable[str] = (), modules: Iterable[str] = ()) -> str:
    """A hash of the code a cell's result depends on, so editing it invalidates the cell.

    ``rankers`` are registry names (``"random"`` and peers have none), ``modules`` dotted
    module names (the evaluation code). The hash covers their modules and every project
    module those import, directly or through helpers (:func:`module_closure`), as code:
    the parsed syntax tree without docstrings, so editing a comment, a docstring or the
    layout keeps cached cells valid, and editing code anywhere a cell's result goes
    through does not. (The tree's text is Python's ``ast.dump``: a new Python version may
    re-key the cache, which costs time, never a wrong result.)
    """
    import rankers as registry

    roots = set(modules)
    roots.update(registry.get_class(n).__module__ for n in rankers if n != "random")
    digest = hashlib.sha1()
    for name in _closure(frozenset(roots)):
        digest.update(_module_code(name))
    return digest.hexdigest()[:12]


@functools.cache
def _module_code(name: str) -> bytes:
    tree = ast.dump(_without_docstrings(_module_tree(name)))
    return name.encode() + b"\0" + tree.encode() + b"\0"


def forget_source() -> None:
    """Drop the parsed sources and closures, so the next fingerprint reads the files again.

    A grid's planning fingerprints hundreds of cells that share most of their modules:
    each module is parsed, stripped and dumped once per process. Call this after editing a
    module in a long-lived process (the tests do).
    """
    for cached in (_module_tree, _module_code, _closure):
        cached.cache_clear()


def settings_hash(settings: dict) -> str:
    """A short stable hash of the JSON form of ``settings``."""
    text = json.dumps(settings, sort_keys=True, default=str)
    return hashlib.sha1(text.encode()).hexdigest()[:12]


@dataclass
class Cell:
    """One unit of work: what the child needs (``payload``) and where its result lives."""

    protocol: str
    dataset: str
    ranker: str
    settings: dict  # everything that changes the result; hashed into the cache key
    payload: dict = field(default_factory=dict)  # extra child inputs that do not (paths)

    @property
    def key(self) -> str:
        return settings_hash(
            {"protocol": self.protocol, "dataset": self.dataset, "ranker": self.ranker}
            | self.settings
        )

    def cache_path(self, cache_dir: Path) -> Path:
        safe = self.ranker.replace("/", "_").replace(":", "-")
        return Path(cache_dir) / self.protocol / self.dataset / f"{safe}__{self.key}.json"

    def parts_dir(self, cache_dir: Path) -> Path:
        """The folder where the cell's child keeps its finished parts (see :func:`save_part`)."""
        return self.cache_path(cache_dir).with_suffix(".parts")


# ------------------------------------------------------------------ parts of a cell
# A long cell (a tree ensemble on a text set: an hour or more) saves each finished part of
# its work, e.g. the ranking of one training fold, under its key. A run cut short by the
# budget, an interrupt or the end of a session leaves them, and the next run resumes from
# them: same inputs, same parts, so the same numbers as an uninterrupted run. The folder
# is the cell's (its key covers the settings and the code), and is removed once the cell
# is ok. Parts are .npy files read without pickle (or JSON), so nothing read back can
# execute code. A part is counted as progress when it is an array.
def save_part(parts_dir: str | Path | None, name: str, value: np.ndarray | dict) -> None:
    """Save ``value`` as part ``name`` of a cell: an array as .npy, a dict as .json.

    Written atomically (a reader never sees half a part); nothing if ``parts_dir`` is None.
    """
    if parts_dir is None:
        return
    folder = Path(parts_dir)
    if isinstance(value, dict):
        _write_json(folder / f"{name}.json", value)
        return
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f"{name}.tmp"
    with open(tmp, "wb") as fh:
        np.save(fh, np.asarray(value), allow_pickle=False)
    tmp.replace(folder / f"{name}.npy")


def load_part(parts_dir: str | Path | None, name: str) -> np.ndarray | dict | None:
    """Part ``name`` saved by :func:`save_part`, or None (no folder, not saved, unreadable)."""
    if parts_dir is None:
        return None
    folder = Path(parts_dir)
    try:
        if (folder / f"{name}.json").is_file():
            return json.loads((folder / f"{name}.json").read_text())
        return np.load(folder / f"{name}.npy", allow_pickle=False)
    except (OSError, ValueError):  # JSONDecodeError is a ValueError
        return None


def count_parts(parts_dir: Path) -> int:
    """How many array parts ``parts_dir`` holds (0 if it does not exist)."""
    return len(list(parts_dir.glob("*.npy"))) if parts_dir.is_dir() else 0


def read_cached(cell: Cell, cache_dir: Path, budget: float, retry_failed: bool) -> dict | None:
    """The cached record of ``cell`` if it can stand for a run with this budget.

    ``ok`` records always do; a ``timeout`` does unless the new budget is larger or the
    timed-out run saved parts (the next run resumes from them, so it gets further); an
    ``error`` does unless ``retry_failed``.
    """
    path = cell.cache_path(cache_dir)
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None  # a torn write: run the cell again
    status = record.get("status")
    if status == "timeout" and (
        budget > record.get("budget", 0.0) or record.get("parts_saved", 0) > 0
    ):
        return None
    if status == "error" and retry_failed:
        return None
    return record | {"cached": True}


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, default=_json_default))
    tmp.replace(path)  # atomic: a reader never sees half a file


def _json_default(value: Any):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _thread_env(threads: int | None) -> dict:
    env = child_env()
    if threads:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = str(threads)
    env["PYTHONWARNINGS"] = "ignore"
    return env


def _payload(cell: Cell, script: str, parts_dir: Path | None) -> dict:
    payload = {"script": script, "dataset": cell.dataset, "ranker": cell.ranker}
    payload |= {"settings": cell.settings, "parts_dir": parts_dir and str(parts_dir)}
    return payload | cell.payload


def run_in_child(
    cell: Cell, script: str, budget: float, threads: int | None, parts_dir: Path | None = None
) -> dict:
    """Run ``script``'s ``compute_cell`` for ``cell`` in a child process under ``budget`` s.

    ``script`` is the module name of a benchmark script (its ``__spec__.name``), or the
    path of a one-off ``.py`` script.

    The child saves its finished parts in ``parts_dir`` (if given). Every record says how
    many parts the run started from (``parts_at_start``); a timed-out one also how many
    it left (``parts``) and how many of them it added (``parts_saved``).
    """
    base = {"protocol": cell.protocol, "dataset": cell.dataset, "ranker": cell.ranker}
    base |= {"key": cell.key, "settings": cell.settings, "budget": budget, "result": None}
    before = count_parts(parts_dir) if parts_dir else 0
    base["parts_at_start"] = before
    with tempfile.TemporaryDirectory(prefix="cell_") as tmp:
        src, dst = Path(tmp) / "in.json", Path(tmp) / "out.json"
        _write_json(src, _payload(cell, script, parts_dir))
        start = time.perf_counter()
        # a session of its own: on timeout the whole group (the cell's own children too) ends
        proc = subprocess.Popen(
            [sys.executable, "-m", __spec__.name, "--cell", str(src), str(dst)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=_thread_env(threads),
            start_new_session=True,
        )
        try:
            _, stderr = proc.communicate(timeout=budget)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            wall = time.perf_counter() - start
            reason = f"over the budget of {budget:g} s"
            parts = count_parts(parts_dir) if parts_dir else 0
            if parts:
                reason += f" ({parts} parts saved: a rerun resumes from them)"
            return (
                base
                | {"status": "timeout", "reason": reason, "seconds": wall}
                | {"wall_seconds": wall, "parts": parts, "parts_saved": parts - before}
            )
        wall = time.perf_counter() - start
        if dst.is_file():
            return base | json.loads(dst.read_text()) | {"wall_seconds": wall}
        tail = (stderr or b"").decode(errors="replace").strip().splitlines()[-3:]
        code = proc.returncode
        how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exited with code {code}"
        reason = f"child {how} (no result): {' | '.join(tail)}"
        return base | {"status": "error", "reason": reason, "seconds": wall, "wall_seconds": wall}


def _load_script(script: str):
    """A benchmark module by its name, or a one-off script by its ``.py`` path."""
    if not script.endswith(".py"):
        return importlib.import_module(script)
    spec = importlib.util.spec_from_file_location("_protocol_cell_script", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _compute(module, payload: dict) -> dict:
    start = time.perf_counter()
    try:
        result = module.compute_cell(payload)
        out = {"status": "ok", "reason": "", "result": result}
    except Exception as exc:  # recorded with its reason, never fatal for the run
        frames = traceback.extract_tb(exc.__traceback__)[-1:]
        where = f" at {Path(frames[0].filename).name}:{frames[0].lineno}" if frames else ""
        out = {"status": "error", "reason": f"{type(exc).__name__}: {exc}{where}"[:500]}
    out["seconds"] = time.perf_counter() - start
    return out


def _child_main(src: str, dst: str) -> None:
    payload = json.loads(Path(src).read_text())
    _write_json(Path(dst), _compute(_load_script(payload["script"]), payload))


def run_inline(cell: Cell, script: str, parts_dir: Path | None = None) -> dict:
    """Run ``script``'s ``compute_cell`` for ``cell`` in this process (no time budget)."""
    module = _load_script(script)
    payload = _payload(cell, script, parts_dir)
    base = {"protocol": cell.protocol, "dataset": cell.dataset, "ranker": cell.ranker}
    base |= {"key": cell.key, "settings": cell.settings, "budget": None, "result": None}
    base["parts_at_start"] = count_parts(parts_dir) if parts_dir else 0
    out = _compute(module, payload)
    return base | out | {"wall_seconds": out["seconds"]}


def _backend(backend: str, scheduler: str | None, n_jobs: int):
    """A context that makes joblib use ``backend`` (a local dask cluster if no scheduler)."""
    from joblib import parallel_config

    if backend != "dask":
        return parallel_config(backend=backend, n_jobs=n_jobs)
    from distributed import Client, LocalCluster

    stack = contextlib.ExitStack()
    if scheduler:
        client = stack.enter_context(Client(scheduler))
        # The tasks are this module's functions and the cells import the scripts, and the
        # benchmarks package is not installed: Dask's upload_file puts a zip of it on the
        # scheduler's and workers' path (the cells' children find it there through
        # PYTHONPATH). They still need the same Python packages, and the data at the same
        # paths.
        client.upload_file(str(_package_zip(stack.enter_context(tempfile.TemporaryDirectory()))))
    else:  # tasks only wait on their child process: threads are enough
        cluster = stack.enter_context(
            LocalCluster(n_workers=1, threads_per_worker=n_jobs, processes=False)
        )
        stack.enter_context(Client(cluster))
    stack.enter_context(parallel_config(backend="dask", n_jobs=n_jobs))
    return stack


def _package_zip(folder: str | Path) -> Path:
    """A zip of the ``benchmarks`` package's modules (not its results) in ``folder``."""
    import zipfile

    package = Path(__file__).resolve().parent
    archive = Path(folder) / "benchmarks.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(package.rglob("*.py")):
            rel = path.relative_to(package)
            if rel.parts[0] != "results" and "__pycache__" not in rel.parts:
                zf.write(path, (Path("benchmarks") / rel).as_posix())
    return archive


def run_cells(
    cells: list[Cell],
    *,
    script: str,
    cache_dir: str | Path,
    budget: float,
    n_jobs: int = 1,
    backend: str = "loky",
    scheduler: str | None = None,
    threads: int | None = 1,
    retry_failed: bool = False,
    progress: bool = True,
    cached_only: bool = False,
) -> list[dict]:
    """Records of every cell (cached or run now), in the order of ``cells``.

    With ``cached_only`` nothing runs: a cell missing from the cache gets the status
    ``not run`` (not cached), so a grid still under way can be tabulated as it stands.
    """
    from joblib import Parallel, delayed
    from tqdm.auto import tqdm

    cache_dir = Path(cache_dir)
    records: dict[int, dict] = {}
    todo = []
    for i, cell in enumerate(cells):
        cached = read_cached(cell, cache_dir, budget, retry_failed)
        if cached is None:
            todo.append(i)
        else:
            records[i] = cached
    if cached_only:
        for i in todo:
            cell = cells[i]
            records[i] = {"protocol": cell.protocol, "dataset": cell.dataset}
            records[i] |= {"ranker": cell.ranker, "status": "not run", "seconds": float("nan")}
            records[i] |= {"reason": "not in the cache (--cached-only)", "cached": False}
        todo = []
    earlier = {i: _earlier_seconds(cells[i], cache_dir) for i in todo}
    bar = tqdm(total=len(cells), initial=len(records), disable=not progress, unit="cell")

    def finish(i: int, record: dict) -> None:
        record = _store(cells[i], record, cache_dir, earlier[i])
        records[i] = record
        bar.set_postfix_str(f"{record['dataset']}/{record['ranker']}: {record['status']}")
        bar.update()

    if todo and backend == "inline":
        # in this process, one cell after another: no child start-up (~2 s of imports a
        # cell) and no time budget, for grids of many quick cells
        for i in todo:
            finish(i, run_inline(cells[i], script, cells[i].parts_dir(cache_dir)))
    elif todo:
        with _backend(backend, scheduler, n_jobs):
            parallel = Parallel(return_as="generator_unordered")
            jobs = (
                delayed(_indexed)(i, cells[i], script, budget, threads, cache_dir) for i in todo
            )
            for i, record in parallel(jobs):
                finish(i, record)
    bar.close()
    return [records[i] for i in range(len(cells))]


def _earlier_seconds(cell: Cell, cache_dir: Path) -> float:
    """The time of the earlier runs a resumed cell builds on (their saved parts), else 0."""
    try:
        record = json.loads(cell.cache_path(cache_dir).read_text())
    except (OSError, json.JSONDecodeError):
        return 0.0
    if record.get("status") != "timeout" or not record.get("parts"):
        return 0.0
    return float(record.get("seconds", 0.0))  # already includes the runs before it


def _store(cell: Cell, record: dict, cache_dir: Path, earlier: float) -> dict:
    """Write ``record`` to the cache; a cell's seconds count every run it resumed from.

    An ok cell's parts are removed: its record holds what they were for.
    """
    record = record | {"cached": False}
    if earlier:
        record |= {"seconds": record["seconds"] + earlier, "earlier_seconds": earlier}
    _write_json(cell.cache_path(cache_dir), record)
    if record["status"] == "ok":
        shutil.rmtree(cell.parts_dir(cache_dir), ignore_errors=True)
    return record


def _indexed(
    i: int, cell: Cell, script: str, budget: float, threads, cache_dir: Path
) -> tuple[int, dict]:
    return i, run_in_child(cell, script, budget, threads, cell.parts_dir(cache_dir))


# ------------------------------------------------------------------ output
def status_table(records: Iterable[dict]) -> pd.DataFrame:
    """One row per cell: data set, ranker, status, reason, seconds, cached, and for a
    cell resumed from saved parts, how many it started from and the seconds of the
    earlier timed-out runs its ``seconds`` include."""
    cols = ["dataset", "ranker", "status", "reason", "seconds", "cached"]
    cols += ["parts_at_start", "earlier_seconds"]
    return pd.DataFrame([{c: r.get(c) for c in cols} for r in records], columns=cols)


def to_markdown(frame: pd.DataFrame, floatfmt: str = ".4g", index: bool = True) -> str:
    """A GitHub markdown table (pandas' own needs the optional ``tabulate``)."""
    frame = frame.reset_index() if index else frame

    def fmt(v) -> str:
        if isinstance(v, (float, np.floating)):
            return "" if np.isnan(v) else format(v, floatfmt)
        return str(v).replace("|", "\\|")

    head = [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in frame.itertuples(False)]
    return "\n".join(lines)


def write_table(frame: pd.DataFrame, out_dir: Path, stem: str, index: bool = True) -> None:
    """``<stem>.csv`` and ``<stem>.md`` in ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    frame.to_csv(out_dir / f"{stem}.csv", index=index)
    (out_dir / f"{stem}.md").write_text(to_markdown(frame, index=index) + "\n")


def _complete_part(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` less the rows/columns with the largest share of NaN, until none is left."""
    part = table.copy()
    while part.size and part.isna().to_numpy().any():
        missing = part.isna()
        by_row = missing.mean(axis=1)
        by_col = missing.mean(axis=0)
        if by_col.max() > by_row.max():
            part = part.drop(columns=by_col.idxmax())
        else:
            part = part.drop(index=by_row.idxmax())
    return part


def compare_methods(
    table: pd.DataFrame, higher_is_better: bool, out_dir: Path, title: str, alpha: float = 0.05
) -> dict:
    """Average ranks, Friedman/Iman-Davenport, Nemenyi CD and the CD diagram PNG.

    The rank tests need a value in every cell. Missing cells (failed or timed-out runs)
    are removed greedily: the ranker or the data set with the largest *share* of missing
    cells goes first (a data set on a tie, so methods stay compared), until none is left.
    A ranker that failed on many data sets is thus left out rather than shrinking the
    comparison to the few data sets it finished; a data set on which many rankers failed
    is dropped instead. What was left out is returned under ``excluded_rankers`` /
    ``excluded_datasets``.
    """
    from aggregation.evaluation import stats
    from aggregation.plots import plot_cd_diagram

    for stale in ("average_ranks.csv", "average_ranks.md", "cd_diagram.png", "friedman.json"):
        (out_dir / stale).unlink(missing_ok=True)  # from an earlier run into the same folder
    complete = _complete_part(table)
    excluded_rankers = [c for c in table.columns if c not in complete.columns]
    info: dict[str, Any] = {
        "excluded_rankers": excluded_rankers,
        "excluded_datasets": [d for d in table.index if d not in complete.index],
        "n_datasets": int(complete.shape[0]),
        "n_rankers": int(complete.shape[1]),
    }
    if complete.shape[0] < 2 or complete.shape[1] < 2:
        info["note"] = "fewer than 2 complete data sets or rankers: no rank statistics"
        return info
    fried = stats.friedman(complete, higher_is_better=higher_is_better)
    nem = stats.nemenyi(complete, higher_is_better=higher_is_better, alpha=alpha)
    ranks = fried.avg_ranks.sort_values().rename("avg_rank").to_frame()
    write_table(ranks, out_dir, "average_ranks")
    fig = plot_cd_diagram(nem, show_ranks=True, title=title)
    fig.savefig(out_dir / "cd_diagram.png", dpi=120)
    import matplotlib.pyplot as plt

    plt.close(fig)
    info |= {
        "avg_ranks": {str(k): float(v) for k, v in ranks["avg_rank"].items()},
        "chi2_F": fried.statistic,
        "chi2_p": fried.pvalue,
        "F_F": fried.f_statistic,
        "F_p": fried.f_pvalue,
        "nemenyi_cd": nem.cd,
        "alpha": alpha,
        "nemenyi_groups": [list(g) for g in nem.groups],
    }
    (out_dir / "friedman.json").write_text(json.dumps(info, indent=2, default=_json_default))
    return info


def timing_markdown(status: pd.DataFrame) -> list[str]:
    """Where the grid's time goes: seconds per ranker (sum, median, largest cell), share.

    A cell's seconds are its child's wall time when it ran (cached cells keep theirs),
    so the sum is the grid's time on one worker; a timed-out cell counts its budget.
    """
    done = status[status["status"] != "not run"].dropna(subset=["seconds"])
    if done.empty:
        return ["## Time per cell", "", "no cell has run", ""]
    # the parts of one computation (``random[0:10]``, ``random[10:20]``, ...) count as one row
    row = done["ranker"].str.replace(r"\[\d+:\d+\]$", "", regex=True).rename("ranker")
    per = done.groupby(row)["seconds"].agg(["sum", "median", "max", "count"])
    per = per.sort_values("sum", ascending=False, kind="stable")
    total = per["sum"].sum()
    per["share"] = per["sum"] / total
    per = per.rename(columns={"sum": "seconds", "max": "largest cell", "count": "cells"})
    slowest = done.sort_values("seconds", ascending=False, kind="stable").head(5)
    named = ", ".join(
        f"{r.dataset}/{r.ranker} {r.seconds:.0f} s ({r.status})" for r in slowest.itertuples()
    )
    return [
        "## Time per cell",
        "",
        f"{len(done)} cells took {total:,.0f} s of cell time ({total / 3600:.2f} h on one "
        f"worker; wall time ~ this / the number of workers). Slowest: {named}.",
        "",
        to_markdown(per.round({"seconds": 1, "median": 2, "largest cell": 1, "share": 3})),
        "",
        *_resumed_markdown(done),
    ]


def _resumed_markdown(done: pd.DataFrame) -> list[str]:
    """The cells that resumed from saved parts, and what their seconds then cover."""
    parts = pd.to_numeric(done["parts_at_start"], errors="coerce").fillna(0)
    earlier = pd.to_numeric(done["earlier_seconds"], errors="coerce")
    resumed = done[parts > 0]
    if resumed.empty:
        return []
    named = []
    for i, r in resumed.iterrows():
        what = f"{r.dataset}/{r.ranker} from {int(parts[i])} parts: "
        if np.isnan(earlier[i]):
            what += "its seconds are the last run's only (the run that saved them left no record)"
        else:
            what += f"its seconds include {earlier[i]:,.0f} s of earlier timed-out runs"
        named.append(what)
    return [f"Resumed from saved parts ({len(named)}): " + "; ".join(named) + ".", ""]


def failed_cells_markdown(status: pd.DataFrame) -> list[str]:
    """The summary's closing lines: the cells that are not ok, then the versions."""
    bad = status[status["status"] != "ok"]
    table = to_markdown(bad[["dataset", "ranker", "status", "reason"]], index=False)
    return [
        f"## Cells not ok ({len(bad)} of {len(status)})",
        "",
        table if len(bad) else "none",
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in versions().items()),
    ]


def stats_markdown(info: dict) -> str:
    """The rank statistics of :func:`compare_methods` as markdown lines."""
    lines = [f"Complete data sets: {info['n_datasets']}; rankers compared: {info['n_rankers']}."]
    for what, key in (("Rankers", "excluded_rankers"), ("Data sets", "excluded_datasets")):
        if info[key]:
            names = ", ".join(info[key])
            lines.append(f"{what} left out of the rank statistics (values missing): {names}.")
    if "chi2_F" not in info:
        return "\n".join([*lines, info.get("note", "")])
    lines += [
        f"Friedman chi2_F = {info['chi2_F']:.4g} (p = {info['chi2_p']:.3g}); "
        f"Iman-Davenport F_F = {info['F_F']:.4g} (p = {info['F_p']:.3g}).",
        f"Nemenyi critical difference (alpha = {info['alpha']}): {info['nemenyi_cd']:.3f}.",
        "Groups not significantly different: "
        + "; ".join("{" + ", ".join(g) + "}" for g in info["nemenyi_groups"])
        + ".",
        "",
        "| ranker | average rank |",
        "|---|---|",
    ]
    lines += [f"| {k} | {v:.3f} |" for k, v in info["avg_ranks"].items()]
    return "\n".join(lines)


def chosen_datasets(args: argparse.Namespace) -> tuple[list[Dataset], list[str]]:
    """The data sets a protocol run's ``--data-dir``, ``--datasets`` and ``--smallest`` pick,
    and the names skipped as missing; exits when there is none."""
    datasets, skipped = select_datasets(*list_datasets(args.data_dir), args.datasets, args.smallest)
    if not datasets:
        raise SystemExit(f"no data sets found in {args.data_dir}")
    return datasets, skipped


def command_line(script: str, argv: list[str] | None) -> str:
    """The command a protocol run records: ``python -m <script> <arguments>``."""
    return f"python -m {script} " + " ".join(sys.argv[1:] if argv is None else argv)


def skipped_line(skipped: list[str], named: bool) -> str:
    """The summary's line naming the data sets missing here and, unless the run named its
    data sets, those left out as not independent (§5.1)."""
    line = f"Data sets missing here (skipped by name): {', '.join(skipped) or 'none'}."
    if not named:
        line += f" Left out as not independent (§5.1): {', '.join(NOT_INDEPENDENT)}."
    return line


def finish_run(
    out: Path,
    table: pd.DataFrame,
    records: list[dict],
    *,
    higher_is_better: bool,
    title: str,
    command: str,
    skipped: list[str],
) -> tuple[pd.DataFrame, dict]:
    """What every protocol run writes beside its own tables in ``out``: ``cells.csv`` (every
    cell's status), the rank statistics and CD diagram of ``table`` (:func:`compare_methods`)
    and ``run.json`` (command, versions, skipped data sets). Returns the status table and
    the statistics."""
    status = status_table(records)
    status.to_csv(out / "cells.csv", index=False)
    info = compare_methods(table, higher_is_better=higher_is_better, out_dir=out, title=title)
    (out / "run.json").write_text(
        json.dumps({"command": command, "versions": versions(), "skipped": skipped}, indent=2)
    )
    return status, info


def summary_tail(status: pd.DataFrame) -> list[str]:
    """The last sections of every protocol summary: where the time went, and failed cells."""
    return [*timing_markdown(status), *failed_cells_markdown(status)]


def versions() -> dict[str, str]:
    """Versions of Python and the libraries the results depend on."""
    import importlib.metadata as md

    out = {"python": sys.version.split()[0]}
    for pkg in ("moweights", "numpy", "scipy", "scikit-learn", "pandas", "joblib"):
        with contextlib.suppress(md.PackageNotFoundError):
            out[pkg] = md.version(pkg)
    return out


def add_run_arguments(parser: argparse.ArgumentParser, budget: float) -> None:
    """The options every protocol script shares."""
    parser.add_argument("--n-jobs", type=int, default=1, help="cells run at once (default 1)")
    parser.add_argument(
        "--backend",
        choices=("loky", "threading", "dask", "inline"),
        default="loky",
        help="joblib backend, or inline: every cell in this process, one after another, "
        "without the time budget",
    )
    parser.add_argument("--scheduler", help="dask scheduler address (backend dask)")
    parser.add_argument(
        "--budget", type=float, default=budget, help=f"seconds per cell (default {budget:g})"
    )
    parser.add_argument(
        "--threads", type=int, default=1, help="BLAS/OpenMP threads per cell (0 = library default)"
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=DEFAULT_CACHE,
        help=f"cell cache, one JSON per cell (default {DEFAULT_CACHE})",
    )
    parser.add_argument("--retry-failed", action="store_true", help="rerun cached error cells")
    parser.add_argument(
        "--cached-only",
        action="store_true",
        help="run nothing: tabulate the cached cells, the others marked 'not run'",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--seed", type=int, default=0, help="seeds folds and rankers")


def run_options(args: argparse.Namespace) -> dict:
    """Keyword arguments of :func:`run_cells` from parsed :func:`add_run_arguments`."""
    return {
        "cache_dir": args.cache_dir,
        "budget": args.budget,
        "n_jobs": args.n_jobs,
        "backend": args.backend,
        "scheduler": args.scheduler,
        "threads": args.threads or None,
        "retry_failed": args.retry_failed,
        "progress": not args.quiet,
        "cached_only": args.cached_only,
    }


def parse_sets(items: list[str] | None) -> dict[str, dict]:
    """``--set ranker.param=value`` options -> {ranker: {param: value}} (values as JSON)."""
    out: dict[str, dict] = {}
    for item in items or []:
        try:
            target, value = item.split("=", 1)
            ranker, param = target.split(".", 1)
        except ValueError:
            raise SystemExit(f"--set expects RANKER.PARAM=VALUE, got {item!r}") from None
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            parsed = value
        out.setdefault(ranker, {})[param] = parsed
    return out


def main_dispatch(argv: list[str] | None, fn: Callable[[str, str], None] = _child_main) -> None:
    parser = argparse.ArgumentParser(description="Run one benchmark cell (internal).")
    parser.add_argument("--cell", nargs=2, metavar=("IN", "OUT"), required=True)
    args = parser.parse_args(argv)
    fn(*args.cell)


if __name__ == "__main__":
    main_dispatch(None)
