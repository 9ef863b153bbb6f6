"""``n_jobs`` everywhere: one checked meaning, never more workers than CPUs, one layer.

Behaviour, not timings: a spy joblib backend records the worker counts the code asks for.
"""

from __future__ import annotations

import warnings
from typing import ClassVar

import joblib
import numpy as np
import pandas as pd
import pytest
from joblib import Parallel, delayed, parallel_config, register_parallel_backend
from joblib._parallel_backends import ThreadingBackend

import rankers
from aggregation import Ranking
from aggregation.evaluation import cluster_scores, expected_curve, ffa_rfa, topk_curve
from aggregation.federated import rank_sites
from rankers.exceptions import InvalidParameterError
from rankers.validation import check_n_jobs

CPUS = 2  # what the tests pretend this process may use


@pytest.fixture(autouse=True)
def _two_cpus(monkeypatch):
    monkeypatch.setattr(joblib, "cpu_count", lambda *a, **k: CPUS)


class _Spy(ThreadingBackend):
    """A threading backend that records every worker count a ``Parallel`` call asks for.

    It starts at most ``CPUS`` threads itself, so that code which does not clip cannot
    exhaust the machine while its test fails.
    """

    asked: ClassVar[list] = []

    def effective_n_jobs(self, n_jobs):
        type(self).asked.append(n_jobs)
        return min(super().effective_n_jobs(n_jobs), CPUS)


register_parallel_backend("n_jobs_spy", _Spy)


@pytest.fixture
def spy():
    _Spy.asked = []
    with parallel_config(backend="n_jobs_spy"):
        yield _Spy.asked


def _data(m=40, n=5, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], m // 2)
    X = rng.normal(size=(m, n)) + 1.5 * y[:, None] * (np.arange(n) < 2)
    return pd.DataFrame(X, columns=[f"g{i}" for i in range(n)]), y


# ------------------------------------------------------------------ the helper
def test_check_n_jobs_values():
    assert check_n_jobs(None) == 1
    assert check_n_jobs(1) == 1
    assert check_n_jobs(np.int64(2)) == 2
    assert check_n_jobs(-1) == CPUS
    assert check_n_jobs(-2) == CPUS - 1
    assert check_n_jobs(-100) == 1
    with pytest.warns(UserWarning, match=r"n_jobs=100000 .* the 2 CPU\(s\) .*; using 2"):
        assert check_n_jobs(100000) == CPUS
    with parallel_config(n_jobs=-1):  # joblib's context gives None its meaning
        assert check_n_jobs(None) == CPUS
    for bad in (0, 1.5, "2", True):
        with pytest.raises(InvalidParameterError, match="n_jobs"):
            check_n_jobs(bad)


@pytest.mark.parametrize("backend", ["loky", "threading"])
def test_nested_calls_get_one_job(backend):
    with parallel_config(backend=backend):
        inner = Parallel(n_jobs=2)(delayed(check_n_jobs)(8) for _ in range(2))
        sequential = Parallel(n_jobs=1)(delayed(check_n_jobs)(2) for _ in range(2))
    assert inner == [1, 1]
    assert sequential == [2, 2]  # an outer layer that is not parallel leaves the inner one


def test_a_cluster_backend_keeps_the_value(monkeypatch):
    class Cluster:  # not one of joblib's local backends, e.g. dask's
        nesting_level = 0

    monkeypatch.setattr(joblib.parallel, "get_active_backend", lambda: (Cluster(), None))
    assert check_n_jobs(-1) == -1 and check_n_jobs(100000) == 100000


# ------------------------------------------------------------------ every n_jobs
RANKERS = [
    ("genie3", {"n_estimators": 8}),
    ("rf_score", {"n_estimators": 8}),
    ("random_forest", {"n_estimators": 8}),
    ("random_forest", {"n_estimators": 8, "importance": "permutation", "n_repeats": 2}),
    ("distance_rank", {}),
    ("compactness", {}),
    ("estimator_importance", {"estimator": None, "importance": "permutation", "n_repeats": 2}),
]


def test_every_ranker_with_n_jobs_is_listed():
    have = {n for n in rankers.available()["name"] if "n_jobs" in rankers.get(n).get_params()}
    assert have == {name for name, _ in RANKERS}


@pytest.mark.parametrize(("name", "params"), RANKERS)
def test_rankers_clip_n_jobs(name, params, spy):
    X, y = _data()
    est = rankers.get(name, n_jobs=100000, **params)
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    with pytest.warns(UserWarning, match="n_jobs=100000"):
        est.fit(X, y)
    # (a ranker whose work fits in one block starts no parallel call at all)
    assert all(jobs <= CPUS for jobs in spy), spy


@pytest.mark.parametrize(("name", "params"), RANKERS)
def test_rankers_give_the_same_scores_whatever_n_jobs(name, params):
    X, y = _data()
    scores = []
    for n_jobs in (1, 2):
        est = rankers.get(name, n_jobs=n_jobs, **params)
        if "random_state" in est.get_params():
            est.set_params(random_state=0)
        scores.append(est.fit(X, y).scores_)
    np.testing.assert_array_equal(scores[0], scores[1])


def _calls():
    X, y = _data()
    ranking = Ranking.from_scores(np.arange(5.0)[::-1], names=list(X.columns))
    order = list(ranking.order)
    return {
        "topk_curve": lambda n: topk_curve("variance", X, cv=3, n_jobs=n, random_state=0),
        "ffa_rfa": lambda n: ffa_rfa(ranking, X, y, cv=3, n_jobs=n, random_state=0),
        "expected_curve": lambda n: expected_curve(
            X, y, n_random=2, cv=3, n_jobs=n, random_state=0
        ),
        "cluster_scores": lambda n: cluster_scores(
            X, y, order, k_features=[1, 2], n_restarts=2, n_jobs=n, random_state=0
        ),
        "rank_sites": lambda n: rank_sites(
            {"a": X.iloc[:20], "b": X.iloc[20:]}, "variance", n_jobs=n
        ).aggregated["mean_rank"],
    }


@pytest.mark.parametrize("call", list(_calls()))
def test_aggregation_functions_clip_n_jobs(call, spy):
    with pytest.warns(UserWarning, match="n_jobs=100000"):
        _calls()[call](100000)
    assert spy and max(spy) <= CPUS, spy


@pytest.mark.parametrize("call", list(_calls()))
def test_aggregation_functions_refuse_zero_jobs(call):
    with pytest.raises(InvalidParameterError, match="n_jobs=0"):
        _calls()[call](0)


@pytest.mark.parametrize("call", list(_calls()))
def test_aggregation_results_do_not_depend_on_n_jobs(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one, two = _calls()[call](1), _calls()[call](2)
    if isinstance(one, pd.DataFrame):
        pd.testing.assert_frame_equal(one, two, check_exact=True)
    else:
        assert one == two
