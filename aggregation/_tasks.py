"""Running a function's independent tasks through joblib, reporting progress as they finish.

Shared by the long-running functions of the aggregation package (folds, grid points,
random rankings, sites). Progress is an explicit callback the caller passes in, e.g. a tqdm
bar's ``update``; nothing is patched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from joblib import Parallel

from rankers.exceptions import InvalidParameterError
from rankers.validation import check_n_jobs

__all__ = ["Progress", "check_progress", "run_in_order"]

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
    outputs = Parallel(n_jobs=check_n_jobs(n_jobs), prefer=prefer, return_as="generator")(jobs)
    for j, out in enumerate(outputs):
        results.append(out)
        if progress is not None:
            done = j + 1 if units_done is None else int(units_done[j])
            if done > reported:
                progress(done - reported)
                reported = done
    return results
