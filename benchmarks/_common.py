"""Shared helpers of the benchmark scripts: timing, peak memory, tables, data access.

Benchmarks compare against a baseline run side by side in the same process and print
ratios; they never assert wall-clock limits. Scripts run from the repository root as
``python -m benchmarks.<folder>.<script>`` and import this module as
``benchmarks._common``; a child process that runs a benchmark module gets the repository
on its ``PYTHONPATH`` (:func:`child_env`).

CPU time has two meanings here, each with one function: :func:`cpu_seconds` is this
process's own CPU time (user + system, all its threads), :func:`cpu_seconds_children` that
of the child processes it has waited for (fresh interpreters, ``moweights run``).
"""

from __future__ import annotations

import gc
import json
import os
import resource
import subprocess
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pandas is imported where a table is printed: the scripts whose child
    import pandas as pd  # processes report their peak RSS import numpy alone

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
#: BLAS and OpenMP on one thread: the environment of a child that measures CPU time
#: the start of every script that runs PyPI's ``frane`` 0.1.0 in a child process: its
#: ``normalize`` mended for new scipy (a vector instead of the scalar 0), X from argv[1];
#: each benchmark appends its own timing body
FRANE_PEER_PRELUDE = r"""
import json, logging, resource, sys, time, tracemalloc
import numpy as np
import scipy, frane
import frane.frane as ff

def normalize(x, metric):  # 0.1.0's normalize with a vector for the scalar 0 (new scipy)
    norm = metric(x, np.zeros_like(x))
    return x / norm if 0.0 < norm < float("inf") else x

ff.normalize = normalize
logging.getLogger().setLevel(logging.WARNING)
X = np.load(sys.argv[1])
"""

ONE_BLAS_THREAD = {k: "1" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}


@dataclass
class Measurement:
    """Wall time (best of ``repeat``), peak traced memory of one call, and its result."""

    seconds: float
    peak_mb: float
    result: Any


def measure(fn: Callable[[], Any], repeat: int = 1, memory: bool = True) -> Measurement:
    """Time ``fn()`` (best of ``repeat`` runs) and trace its peak memory once.

    Peak memory comes from :mod:`tracemalloc`, which sees NumPy's array allocations and
    Python objects (not memory that compiled libraries allocate outside Python's
    allocator hooks, e.g. BLAS scratch space).
    """
    best, result = np.inf, None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    peak = np.nan
    if memory:
        gc.collect()
        tracemalloc.start()
        try:
            fn()
            _, peak_bytes = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        peak = peak_bytes / 2**20
    return Measurement(best, peak, result)


def traced_call(fn: Callable[[], Any]) -> tuple[float, float]:
    """Wall seconds and traced peak memory (MiB) of one call of ``fn``, both from the same
    call (traced while timed: :func:`measure` times and traces separate calls)."""
    gc.collect()
    tracemalloc.start()
    try:
        start = time.perf_counter()
        fn()
        seconds = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return seconds, peak / 2**20


def child_env(**extra: str) -> dict[str, str]:
    """This process's environment with ``extra``, for a child that imports ``benchmarks``
    (``python -m benchmarks.<folder>.<script>``, ``python -m benchmarks._protocol``): the
    repository first on ``PYTHONPATH``, so the child finds the package whatever its
    working folder."""
    path = [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, **extra, "PYTHONPATH": os.pathsep.join(path)}


def run_json_child(args: list[str], budget: float) -> dict:
    """Run ``args`` as a child on one BLAS thread within ``budget`` seconds and return the
    JSON object on its last line of output, or ``{"error": reason}`` (over the budget, or
    the last line of its stderr when it failed)."""
    env = child_env(**ONE_BLAS_THREAD)
    try:
        done = subprocess.run(
            args, capture_output=True, text=True, timeout=budget, env=env, check=False
        )
    except subprocess.TimeoutExpired:
        return {"error": f"over {budget:.0f} s"}
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["?"])[-1][:160]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def module_at(commit: str, path: str, name: str) -> Any:
    """The module ``path`` (repository-relative) as it was at ``commit``, imported from a
    temporary copy under ``name`` (for a side-by-side run of old and new code)."""
    import importlib.util
    import tempfile

    source = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{commit}:{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    file = Path(tempfile.mkdtemp(prefix="moweights_old_")) / f"{name}.py"
    file.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cpu_seconds() -> float:
    """CPU seconds (user + system, every thread) this process has used so far.

    Read from ``getrusage(RUSAGE_SELF)``: the same quantity as ``time.process_time``, which
    turns coarse (whole ticks) once ``RLIMIT_CPU`` is set; getrusage does not.
    """
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def cpu_seconds_children() -> float:
    """CPU seconds (user + system) of every child process this one has waited for so far.

    Take the difference around ``subprocess.run``: the child's own CPU, imports included.
    """
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cpu_call(fn: Callable[[], Any]) -> tuple[float, Any]:
    """``fn()``'s CPU seconds in this process (:func:`cpu_seconds`) and its result.

    Garbage is collected first, outside the timed span, as in :func:`measure`.
    """
    gc.collect()
    start = cpu_seconds()
    result = fn()
    return cpu_seconds() - start, result


def print_table(rows: list[dict], title: str | None = None) -> pd.DataFrame:
    """Print a list of row dicts as an aligned table and return it as a DataFrame."""
    import pandas as pd

    frame = pd.DataFrame(rows)
    if title:
        print(f"\n## {title}")
    with pd.option_context("display.width", 200, "display.max_columns", 50):
        print(frame.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    return frame


def make_clusters(m: int, n: int, seed: int, n_classes: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """``m`` seeded samples in ``n_classes`` clusters on the first 20 features, noise on the
    rest, every value positive (shifted by 5): ``X`` and the cluster labels ``y``."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, size=m)
    X = rng.normal(size=(m, n))
    informative = min(20, n)
    X[:, :informative] += rng.normal(0.0, 1.5, size=(n_classes, informative))[y]
    return X + 5.0, y


def load_dataset(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """``X`` as float64 (the files keep uint8/int16/... dtypes) and ``Y`` as a 1-D array (the
    file's dtype), read by the product's reader (``moweights.data.load_file``, which
    reads a ``.mat`` file with ``read_mat`` of the data-files package)."""
    from moweights.data import load_file

    frame, target = load_file(path)
    # X in Fortran order, as scipy.io.loadmat returns it and as the committed results were
    # computed from it: BLAS sums depend on the memory order, and the committed protocol
    # and leaderboard tables must re-derive bit for bit. The product's reader gives the
    # same bytes, dtypes and order on all 20 scikit-feature sets today, but the order
    # comes from pandas' internals: made explicit here (no copy when it already holds)
    X = np.asfortranarray(frame.to_numpy(dtype=np.float64))
    return X, np.asarray(target).ravel()


def load_skfeature(name: str) -> tuple[np.ndarray, np.ndarray] | None:
    """A scikit-feature data set from ../shared/data/skfeature, or None when absent."""
    path = SHARED_DATA / "skfeature" / f"{name}.mat"
    if not path.is_file():
        return None
    return load_dataset(path)


def one_at_a_time_problem(criteria: Any, objectives: Any) -> Any:
    """The NSGA-II weighting's baseline: a pymoo ``ElementwiseProblem`` evaluating
    ``criteria`` on one individual per call (pymoo's own loop), the same criteria the
    population-vectorised ``WeightingProblem`` evaluates on a whole population at once."""
    from pymoo.core.problem import ElementwiseProblem

    class OneAtATime(ElementwiseProblem):
        def __init__(self, criteria, objectives):
            self.criteria, self.objectives = criteria, objectives
            n = criteria.n_features
            super().__init__(n_var=n, n_obj=len(objectives), xl=np.zeros(n), xu=np.ones(n))

        def _evaluate(self, x, out, *args, **kwargs):
            out["F"] = self.criteria.evaluate(x[None, :], self.objectives)[0]

    return OneAtATime(criteria, objectives)


def emit_report(text: str, out: Path | None) -> None:
    """Print a script's report, and write it to ``out`` too when given (its folder made)."""
    print(text)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")


def rows_markdown_4g(rows: list[dict]) -> str:
    """A GitHub markdown table of row dicts with the first row's columns, floats to 4
    significant digits (:func:`rows_markdown`: every key, ``notes`` last, 3 digits)."""
    keys = list(rows[0])
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for row in rows:
        cells = [f"{v:.4g}" if isinstance(v, float) else str(v) for v in (row.get(k) for k in keys)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def rows_markdown(rows: list[dict]) -> str:
    """A GitHub markdown table of row dicts: every key a column, ``notes`` last, floats to
    3 significant digits, a missing value empty (``_protocol.to_markdown`` takes a frame)."""
    keys = list(dict.fromkeys(k for r in rows for k in r))
    keys = [k for k in keys if k != "notes"] + ["notes"]

    def fmt(v):
        if isinstance(v, float):
            return "" if np.isnan(v) else f"{v:.3g}"
        return str(v)

    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(fmt(r.get(k, "")) for k in keys) + " |" for r in rows]
    return "\n".join(lines)
