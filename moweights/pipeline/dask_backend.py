"""joblib's Dask backend for a run, with one change: a loop of one job runs here.

joblib sends every ``Parallel`` call under its ``"dask"`` backend to the cluster, ``n_jobs=1``
(or None, scikit-learn's default) included, so a tree of a single-job forest or a
nearest-neighbour query became a task of milliseconds (issue 39). joblib has no public
setting for that, so :func:`one_job_here` subclasses its ``DaskDistributedBackend``, which
joblib keeps in a private module (``joblib._dask``). Everything that depends on that class
is in this module: :data:`OVERRIDDEN` names the methods the subclass replaces, and
:func:`check_joblib_dask` compares them with the installed joblib's before a run uses them
(a joblib that renamed or re-signed one raises :class:`~moweights.errors.SchedulerError`
naming the method and the joblib version, not an error from inside a worker).
``tests/moweights/pipeline/test_dask_backend.py`` runs the check and the behaviour against
the installed joblib in CI (the ``dask`` extra).
"""

from __future__ import annotations

import inspect

from moweights.errors import SchedulerError

__all__ = ["OVERRIDDEN", "check_joblib_dask", "one_job_here"]

#: the base class's methods the subclass replaces, with the parameters it calls them with
OVERRIDDEN = {
    "effective_n_jobs": ("self", "n_jobs"),
    "configure": ("self", "n_jobs", "parallel", "backend_args"),
    "get_nested_backend": ("self",),
}


def _base():
    import joblib

    try:
        from joblib._dask import DaskDistributedBackend
    except ImportError as exc:  # joblib moved its private module
        raise SchedulerError(
            f"joblib {joblib.__version__} has no joblib._dask.DaskDistributedBackend, which "
            f"the Dask run backend extends: install a joblib release that has it"
        ) from exc
    return DaskDistributedBackend


def check_joblib_dask() -> None:
    """Raise :class:`~moweights.errors.SchedulerError` unless the installed joblib's Dask
    backend has every method of :data:`OVERRIDDEN` with those parameters, and ``client=``."""
    import joblib

    base = _base()
    for name, params in OVERRIDDEN.items():
        method = getattr(base, name, None)
        got = () if method is None else tuple(inspect.signature(method).parameters)
        if got != params:
            raise SchedulerError(
                f"joblib {joblib.__version__}'s DaskDistributedBackend.{name} takes {got}, "
                f"not {params}: the Dask run backend is tested on the latter"
            )
    if "client" not in inspect.signature(base.__init__).parameters:
        raise SchedulerError(
            f"joblib {joblib.__version__}'s DaskDistributedBackend takes no client= argument"
        )


def one_job_here(client):
    """joblib's Dask backend on ``client``, except that a loop of one job runs here.

    The run's parallel steps (``n_jobs`` > 1) go to the cluster, in tasks of a sensible
    grain (``rankers.utils.parallel``, ``aggregation._tasks``); ``n_jobs`` 1 or None runs in
    the calling process, as with every other joblib backend.
    """
    check_joblib_dask()
    base = _base()

    class _OneJobHere(base):
        default_n_jobs = 1  # n_jobs=None means one job, as on joblib's other backends

        def effective_n_jobs(self, n_jobs):
            return 1 if n_jobs in (None, 1) else super().effective_n_jobs(n_jobs)

        def configure(self, n_jobs=1, parallel=None, **backend_args):
            if n_jobs in (None, 1):
                self.parallel = parallel
                return 1
            return super().configure(n_jobs=n_jobs, parallel=parallel, **backend_args)

        def get_nested_backend(self):
            return _OneJobHere(client=self.client), -1

    return _OneJobHere(client=client)
