"""Whether joblib's active backend sends tasks away from this process (a Dask cluster).

joblib runs a ``Parallel`` call on the backend the caller set with
``joblib.parallel_config``: local threads and process pools cost a millisecond or less a
task, a Dask cluster (``[run] backend = "dask"``) tens of milliseconds of scheduling and
transfer. Loops of many small tasks (a forest's trees, a few folds of a cheap ranker)
therefore keep their grain locally and batch it, or run inside one task, on a remote
backend: ``rankers.supervised.forest``, ``rankers.unsupervised.ensemble`` and
``aggregation._tasks.run_in_order`` ask :func:`remote_backend`. joblib hands a task on
Dask the Dask backend again for the loops inside it, so such a task runs its own loops
on local threads (:func:`on_local_threads`).
"""

from __future__ import annotations

from joblib import parallel_config
from joblib._parallel_backends import (
    LokyBackend,
    MultiprocessingBackend,
    SequentialBackend,
    ThreadingBackend,
)
from joblib.parallel import get_active_backend

__all__ = ["on_local_threads", "remote_backend"]

_LOCAL = (LokyBackend, MultiprocessingBackend, SequentialBackend, ThreadingBackend)


def remote_backend() -> bool:
    """True when joblib's active backend is none of its local ones (threads, loky,
    multiprocessing, sequential): a Dask cluster, or another that ships tasks away.

    Inside a task a Dask worker runs, joblib's backend is Dask again (its nested
    backend), unless the task says otherwise (:func:`on_local_threads`).
    """
    backend, _ = get_active_backend()
    return not isinstance(backend, _LOCAL)


def on_local_threads(func, *args, **kwargs):
    """``func(*args, **kwargs)`` with joblib's loops inside it on local threads.

    What a task sent to a remote backend runs: its own loops (a forest's trees, their
    importances) stay in the task instead of becoming tasks of milliseconds.
    """
    with parallel_config(backend="threading"):
        return func(*args, **kwargs)
