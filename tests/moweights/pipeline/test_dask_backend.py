"""The run's Dask backend against the installed joblib (moweights.pipeline.dask_backend).

The backend subclasses joblib's private ``DaskDistributedBackend``; these tests hold the
methods it overrides to the installed joblib's, so a joblib that changes them fails here
(and a run refuses with a named error) instead of inside a worker. The behaviour (a loop
of one job stays here, ``n_jobs=2`` reaches the cluster) is
``tests/rankers/test_dask_grain.py::test_the_runs_backend_keeps_one_job_loops_here``.
"""

from __future__ import annotations

import pytest

from moweights.errors import SchedulerError
from moweights.pipeline import dask_backend

pytest.importorskip("distributed", reason="needs the 'dask' extra: pip install '.[dask]'")


def test_the_installed_joblib_has_the_methods_the_backend_overrides():
    dask_backend.check_joblib_dask()  # raises on a mismatch


def test_a_joblib_that_re_signed_a_method_is_refused_by_name(monkeypatch):
    class Renamed:
        def __init__(self, client=None): ...

        def effective_n_jobs(self, n_jobs): ...

        def configure(self, n_jobs=1, parallel=None, *, backend_kwargs=None): ...

        def get_nested_backend(self): ...

    monkeypatch.setattr(dask_backend, "_base", lambda: Renamed)
    with pytest.raises(SchedulerError, match=r"DaskDistributedBackend\.configure"):
        dask_backend.check_joblib_dask()
    with pytest.raises(ConnectionError):  # the built-in a caller catches
        dask_backend.one_job_here(client=None)


def test_a_joblib_without_client_argument_is_refused(monkeypatch):
    class NoClient:
        def __init__(self, scheduler_host=None): ...

        def effective_n_jobs(self, n_jobs): ...

        def configure(self, n_jobs=1, parallel=None, **backend_args): ...

        def get_nested_backend(self): ...

    monkeypatch.setattr(dask_backend, "_base", lambda: NoClient)
    with pytest.raises(SchedulerError, match="client="):
        dask_backend.check_joblib_dask()
