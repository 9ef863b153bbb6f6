"""Running a function's independent tasks through joblib, reporting progress as they finish.

Shared by the long-running functions of the aggregation package (folds, grid points,
random rankings, sites). Progress is an explicit callback the caller passes in, e.g. a tqdm
bar's ``update``; nothing is patched.

Worker processes die with the process that sent them work. A loky worker busy with a
task outlives its parent killed with ``kill -9`` (or SIGTERM) until the task ends: it only
notices the closed queue when it asks for the next one. So every task runs through
:func:`_in_worker`, which, in a process whose parent is the one that dispatched the task,
starts (once) a daemon thread that checks every second that this parent is still the
parent, and ends the worker at once when it is not (it was re-parented: its parent died).
Threads and Dask workers (whose parent is their nanny, not the client) are not watched.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np
from joblib import Parallel, delayed

from rankers.exceptions import InvalidParameterError
from rankers.utils.parallel import on_local_threads, remote_backend
from rankers.validation import check_n_jobs

__all__ = ["Progress", "check_progress", "run_in_order", "watched"]

#: a progress callback: called with the number of units of work just finished
Progress = Callable[[int], Any]


def check_progress(progress: Any) -> Progress | None:
    """``progress`` if it is None or callable; otherwise an error naming what was given."""
    if progress is None or callable(progress):
        return progress
    raise InvalidParameterError(
        "progress must be None or a callable taking the number of units just finished "
        f"(e.g. a tqdm bar's update); got {type(progress).__name__}"
    )


#: seconds between two checks of a worker's parent
_POLL = 1.0
_watching: set[int] = set()  # the pids of this process that run a watch (a fork copies it)


def _watch_parent(parent: int) -> None:
    """End this worker process as soon as ``parent`` is no longer its parent."""
    if os.getpid() in _watching:
        return
    _watching.add(os.getpid())

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_POLL)
        os._exit(1)  # the run is gone: nobody waits for this result

    threading.Thread(target=watch, name="moweights-parent-watch", daemon=True).start()


def _in_worker(owner: int, func: Callable, args: tuple, kwargs: dict) -> Any:
    """``func(*args, **kwargs)``; in a worker process of ``owner``, watching it first."""
    if os.getpid() != owner and os.getppid() == owner:
        _watch_parent(owner)
    return func(*args, **kwargs)


def watched(jobs: Iterable[Any]) -> Iterable[Any]:
    """joblib ``delayed`` calls that, run in a worker process, end it with its parent."""
    owner = os.getpid()
    for func, args, kwargs in jobs:
        yield _in_worker, (owner, func, args, kwargs), {}


def run_in_order(
    jobs: Iterable[Any],
    *,
    n_jobs: int | None,
    progress: Progress | None = None,
    units_done: Sequence[int] | None = None,
    prefer: str | None = None,
) -> list[Any]:
    """The results of joblib ``jobs`` (``delayed`` calls), in the order of the jobs.

    Results arrive in order through ``Parallel(return_as="generator")``, so they are the
    same whatever ``n_jobs`` and backend; ``progress`` is called as they arrive.

    Parameters
    ----------
    jobs : iterable of delayed calls
    n_jobs : int or None
        As :func:`rankers.validation.check_n_jobs` reads it.
    progress : callable or None
        Called with the number of units just finished, whenever it is positive.
    units_done : sequence of int, optional
        ``units_done[j]``: how many units are finished once jobs ``0..j`` are (one job,
        one unit by default). Non-decreasing; its last value is the total.
    prefer : {"processes", "threads"} or None
        joblib's backend hint.
    """
    progress = check_progress(progress)
    results = []
    reported = 0
    n_jobs = check_n_jobs(n_jobs)
    if n_jobs > 1 and remote_backend():
        outputs = _batched(list(jobs), n_jobs)
    else:
        outputs = Parallel(n_jobs=n_jobs, prefer=prefer, return_as="generator")(watched(jobs))
    for j, out in enumerate(outputs):
        results.append(out)
        if progress is not None:
            done = j + 1 if units_done is None else int(units_done[j])
            if done > reported:
                progress(done - reported)
                reported = done
    return results


#: on a remote backend (Dask), the least work (seconds) worth one task: a task costs
#: tens of milliseconds of scheduling and transfer there
MIN_TASK_SECONDS = 0.1


def _run_all(calls: list) -> list:
    return [func(*args, **kwargs) for func, args, kwargs in calls]


def _batched(jobs: list, n_jobs: int) -> Iterator[Any]:
    """The results of ``jobs`` in order, with a grain fit for a remote backend.

    The first job runs here and is timed; the others go out in batches of at least about
    :data:`MIN_TASK_SECONDS` of work each (one job per task when a job is that long), or
    all run here when together they are less than two such tasks.
    Every job runs exactly once and its result does not depend on where it ran.
    """
    if not jobs:
        return
    start = time.perf_counter()
    yield _run_all(jobs[:1])[0]
    seconds = max(time.perf_counter() - start, 1e-6)
    rest = jobs[1:]
    if seconds * len(rest) < 2 * MIN_TASK_SECONDS or len(rest) < 2:
        yield from _run_all(rest)
        return
    per_task = max(1, int(np.ceil(MIN_TASK_SECONDS / seconds)))
    n_tasks = min(len(rest), max(2, len(rest) // per_task))
    batches = [list(b) for b in np.array_split(np.arange(len(rest)), n_tasks)]
    # a task's own loops stay in it (joblib would hand them the remote backend again)
    calls = (delayed(on_local_threads)(_run_all, [rest[i] for i in b]) for b in batches)
    for outputs in Parallel(n_jobs=n_jobs, return_as="generator")(watched(calls)):
        yield from outputs
