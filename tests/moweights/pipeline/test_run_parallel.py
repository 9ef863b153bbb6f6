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

    def _score(self, X, y, context):
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


# ------------------------------------------------- workers die with the run (issue 37 item 8)
_SLEEPY = '''
"""A ranker whose fits on the evaluation's training folds never end (the whole data: fast)."""
import os
import time

import numpy as np

import rankers


@rankers.register("sleepy_test")
class Sleepy(rankers.BaseRanker):
    requires_y = False
    target_kind = "unsupervised"

    def _score(self, X, y, context):
        if X.shape[0] < 150:  # a training fold of iris, in a worker process
            open(os.path.join(os.environ["SLEEPY_PIDS"], str(os.getpid())), "w").close()
            while True:
                time.sleep(1)
        return np.var(X, axis=0)
'''
_MAIN = "import sys, sleepy_test\nfrom moweights.cli import main\nsys.exit(main(sys.argv[1:]))\n"


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:
        state = f.read().rpartition(")")[2].split()[0]
    return state not in ("Z", "X")


@pytest.mark.skipif(not __import__("os").path.isdir("/proc/self"), reason="needs Linux's /proc")
def test_workers_of_a_run_killed_with_sigkill_die_with_it(tmp_path):
    import contextlib
    import os
    import signal
    import subprocess
    import sys
    import time

    (tmp_path / "sleepy_test.py").write_text(_SLEEPY)
    pids = tmp_path / "pids"
    pids.mkdir()
    config = tmp_path / "run.toml"
    config.write_text(
        '[data]\nbuiltin = "iris"\n[[rankers]]\nname = "sleepy_test"\n[evaluation]\ncv = 3\n'
        "[evaluation.error_curves]\nenabled = false\n[evaluation.clustering]\nenabled = false\n"
        "[output]\nplots = false\nhtml = false\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
           "SLEEPY_PIDS": str(pids)}  # fmt: skip
    run = subprocess.Popen(
        [sys.executable, "-c", _MAIN, "run", str(config), "-o", str(tmp_path / "out"), "-j", "2",
         "-q"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 240  # a safety bound for a run that never gets there
        while len(workers) < 2:
            assert run.poll() is None, run.stderr.read().decode()
            assert time.monotonic() < deadline, "the folds never reached the workers"
            time.sleep(0.2)
            workers = [int(p.name) for p in pids.iterdir()]
        assert run.pid not in workers  # the folds run in worker processes
        run.send_signal(signal.SIGKILL)  # as `kill -9`: nothing of the run's code runs
        run.wait(timeout=60)
        deadline = time.monotonic() + 60  # the behaviour: they go; the bound: for a hang
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not [pid for pid in workers if _alive(pid)], "workers outlived their run"
    finally:
        run.kill()
        for pid in workers:  # whatever happened, leave no sleeper behind
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
