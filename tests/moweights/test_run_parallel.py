"""n_jobs in a config run: clipped once, one parallel layer at a time, same results."""

from __future__ import annotations

import warnings
from typing import ClassVar

import joblib
import numpy as np
import pandas as pd
import pytest

import rankers
from moweights.config import parse_config
from moweights.pipeline import run
from rankers.validation import check_n_jobs

RAW = {
    "data": {"builtin": "iris"},
    "rankers": [{"name": "genie3", "params": {"n_estimators": 10}}, {"name": "variance"}],
    "evaluation": {
        "cv": 3,
        "topk": {"n_random": 2},
        "error_curves": {"n_random": 2},
        "clustering": {"k_features": [1, 2], "n_restarts": 2},
    },
    "output": {"plots": False, "html": False, "cache": False},
    "run": {"verbose": 1, "random_state": 2},
}


def _run(raw, out):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run(parse_config(raw), out)
    return result, [str(w.message) for w in caught]


def test_too_many_jobs_warn_once_and_change_no_result(tmp_path):
    results = {}
    for n_jobs in (1, 2, 100000):
        raw = {**RAW, "run": {**RAW["run"], "n_jobs": n_jobs}}
        results[n_jobs], messages = _run(raw, tmp_path / str(n_jobs))
        clipped = [m for m in messages if "asks for more workers than" in m]
        assert len(clipped) == (n_jobs == 100000), messages
    cpus = joblib.cpu_count()
    assert f"[run].n_jobs=100000 asks for more workers than the {cpus} CPU(s)" in clipped[0]
    one = results[1]
    for other in (results[2], results[100000]):
        for label, ranking in one.rankings.items():
            assert ranking.scores.tobytes() == other.rankings[label].scores.tobytes()
        for name in ("curve_folds", "error_curves", "expected", "clustering"):
            pd.testing.assert_frame_equal(getattr(one, name), getattr(other, name))
    for name in ("scores.csv", "curve_folds.csv", "error_curves.csv", "clustering.csv"):
        assert (tmp_path / "1" / name).read_bytes() == (tmp_path / "100000" / name).read_bytes()


class _Probe(rankers.BaseRanker):
    """Records the workers it would start (check_n_jobs of its n_jobs) at every fit."""

    name = "layer_probe"
    seen: ClassVar[list] = []

    def __init__(self, k=None, n_jobs=None):
        self.k = k
        self.n_jobs = n_jobs

    def _score(self, X, y):
        type(self).seen.append(check_n_jobs(self.n_jobs))
        return X.std(axis=0)


@pytest.fixture
def probe(monkeypatch):
    from rankers import registry

    monkeypatch.setattr(joblib, "cpu_count", lambda *a, **k: 4)
    rankers.register("layer_probe", replace=True)(_Probe)
    _Probe.seen = []
    yield _Probe
    registry._decorated.pop("layer_probe", None)


def test_one_parallel_layer_at_a_time(tmp_path, probe):
    raw = {
        "data": {"builtin": "iris"},
        "rankers": [{"name": "layer_probe", "params": {"n_jobs": 2}}],
        "evaluation": {"cv": 3, "topk": {"random_baseline": False}, "error_curves":
                       {"enabled": False}, "clustering": {"enabled": False}},
        # threads, so that the folds' fits are seen here; loky workers nest the same way
        "run": {"n_jobs": 3, "backend": "threading", "verbose": 0},
        "output": {"plots": False, "html": False, "cache": False},
    }  # fmt: skip
    result = run(parse_config(raw), tmp_path / "out")
    assert result.status == "complete"
    # the main fit runs alone: its two workers; the three folds run in parallel, so the
    # rankers fitted inside them get one worker each, whatever their n_jobs
    assert probe.seen == [2, 1, 1, 1]
    raw["run"]["n_jobs"] = 1  # folds one after the other: the inner layer may be parallel
    probe.seen.clear()
    run(parse_config(raw), tmp_path / "again")
    assert probe.seen == [2, 2, 2, 2]
    assert np.isfinite(result.curves["mean"]).all()
