"""A sensible grain on a Dask cluster (issue 39 item 5): the same results, fewer tasks.

Under ``joblib.parallel_config(backend="dask")`` a forest's trees would each be a task of
milliseconds. ``random_forest`` grows and scores its forest inside one task, genie3 and
rf_score send their trees in ``n_jobs`` batches, and ``aggregation``'s ``run_in_order``
runs small jobs here and batches the others; the results equal the local ones bit for
bit. An in-process cluster (two single-thread workers) counts the tasks.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from joblib import delayed, parallel_config

import rankers
from rankers.utils.parallel import remote_backend

distributed = pytest.importorskip(
    "distributed", reason="needs the 'dask' extra: pip install '.[dask]'"
)


@pytest.fixture(scope="module")
def client():
    with distributed.Client(
        processes=False, n_workers=2, threads_per_worker=1, dashboard_address=":0"
    ) as c:
        yield c


def _tasks(client, fn):
    """``fn()`` under the Dask backend, and the task stream it left on the scheduler."""
    client.get_task_stream(start=0, stop=0)  # the task stream plugin is on
    start = time.time()
    with parallel_config(backend="dask"):
        assert remote_backend()
        out = fn()
    return out, client.get_task_stream(start=start)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 12))
    y = (X[:, 0] + 0.5 * rng.normal(size=80) > 0).astype(int)
    return X, y


def test_backends_are_told_apart():
    assert not remote_backend()
    for local in ("threading", "loky", "sequential"):
        with parallel_config(backend=local):
            assert not remote_backend()


@pytest.mark.parametrize(
    ("name", "params", "most_tasks"),
    [
        ("random_forest", {"n_estimators": 30}, 1),
        ("random_forest", {"n_estimators": 12, "importance": "permutation", "n_repeats": 2}, 1),
        ("genie3", {"n_estimators": 30}, 2),
        ("rf_score", {"n_estimators": 30}, 2),
        ("genie3", {"n_estimators": 20, "keep_estimator": True}, 2),
    ],
)
def test_forests_run_in_few_tasks_with_the_local_scores(client, data, name, params, most_tasks):
    X, y = data
    local = rankers.get(name, n_jobs=2, random_state=3, **params).fit(X, y).scores_
    est = rankers.get(name, n_jobs=2, random_state=3, **params)
    fitted, stream = _tasks(client, lambda: est.fit(X, y))
    np.testing.assert_array_equal(fitted.scores_, local)
    assert 1 <= len(stream) <= most_tasks, [r["key"] for r in stream]


def _slow(i, seconds):
    time.sleep(seconds)
    return i * i


@pytest.mark.parametrize(("seconds", "n_jobs", "remote"), [(0.001, 20, 0), (0.03, 30, None)])
def test_run_in_order_keeps_small_jobs_here_and_batches_the_others(client, seconds, n_jobs, remote):
    from aggregation._tasks import MIN_TASK_SECONDS, run_in_order

    done = []
    jobs = [delayed(_slow)(i, seconds) for i in range(n_jobs)]
    out, stream = _tasks(client, lambda: run_in_order(jobs, n_jobs=2, progress=done.append))
    assert out == [i * i for i in range(n_jobs)]
    assert sum(done) == n_jobs
    if remote is not None:
        assert len(stream) == remote  # 20 ms of work: nothing is worth a task
        return
    # 30 jobs of 30 ms: the first runs here, the others in tasks of >= 0.1 s each
    assert 2 <= len(stream) <= (n_jobs - 1) * seconds / MIN_TASK_SECONDS
    for record in stream:
        spent = sum(
            s["stop"] - s["start"] for s in record["startstops"] if s["action"] == "compute"
        )
        assert spent >= 0.9 * MIN_TASK_SECONDS


def test_the_runs_backend_keeps_one_job_loops_here(client):
    # joblib's own Dask backend sends n_jobs=1 (and scikit-learn's None) to the cluster
    from joblib import Parallel

    from moweights.pipeline.dask_backend import one_job_here

    start = time.time()
    client.get_task_stream(start=0, stop=0)
    with parallel_config(backend=one_job_here(client)):
        assert remote_backend()
        one = Parallel(n_jobs=1)(delayed(abs)(-i) for i in range(6))
        default = Parallel()(delayed(abs)(-i) for i in range(6))
        assert not client.get_task_stream(start=start)
        two = Parallel(n_jobs=2)(delayed(abs)(-i) for i in range(6))
    assert one == default == two == list(range(6))
    assert client.get_task_stream(start=start)  # n_jobs=2 went to the cluster
