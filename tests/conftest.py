"""Shared fixtures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, settings

from moweights.federated.local import free_port, stop_process_groups

#: the repository's root (tests/ mirrors the package tree, so a test's own depth varies:
#: reach README.md, docs/, examples/ and benchmarks/ through the ``repo`` fixture)
REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"

# ---------------------------------------------------------------- hypothesis
# One profile for the whole suite. No deadline: a first example that takes 1.5 s on a busy
# laptop (imports, BLAS warm-up, a neighbour's process) is not a failure, and hypothesis's
# default 200 ms made the suite fail under load (issue 34). Nor its health check on slow
# data generation, which measures wall time too. A bounded number of examples; a test asks
# for more or fewer with @settings(max_examples=...) only, never with its own deadline.
# In CI (the CI variable set, as ci-local and most CI services do) the examples are
# derandomised, so every run of a commit tries the same ones, and no example database is
# written. `pytest --hypothesis-profile=NAME` still picks another profile.
settings.register_profile(
    "default",
    deadline=None,
    max_examples=50,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile("ci", settings.get_profile("default"), derandomize=True, database=None)
IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
settings.load_profile("ci" if IN_CI else "default")


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def _nudge(X, rng, max_ulps=4):
    """``X`` with every finite entry moved by up to ``max_ulps`` ulps, up or down.

    Stands in for another machine: another CPU or BLAS kernel changes the last bits of
    computed values, and no choice a ranker makes may depend on them.
    """
    X = np.array(X, dtype=np.float64)
    steps = rng.integers(-max_ulps, max_ulps + 1, size=X.shape)
    steps[~np.isfinite(X)] = 0
    for _ in range(max_ulps):
        up, down = steps > 0, steps < 0
        X[up] = np.nextafter(X[up], np.inf)
        X[down] = np.nextafter(X[down], -np.inf)
        steps = steps - up + down
    return X


@pytest.fixture(scope="session")
def nudge():
    """The function ``nudge(X, rng, max_ulps=4)``: ``X`` moved by a few ulps per entry."""
    return _nudge


@pytest.fixture
def small_classification():
    """60 samples, 6 features: x0 and x1 carry the class, x2..x5 are noise."""
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1, 2], 20)
    X = rng.normal(size=(60, 6))
    X[:, 0] += 3.0 * y
    X[:, 1] -= 2.0 * y
    return pd.DataFrame(X, columns=[f"f{i}" for i in range(6)]), pd.Series(y, name="target")


@pytest.fixture(scope="session")
def repo() -> Path:
    """The repository's root folder, whatever folder of tests/ the test is in."""
    return REPO


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"benchmark data not found at {SHARED_DATA}")
    return SHARED_DATA


# ---------------------------------------------------------------- slow tests
# Tests marked @pytest.mark.slow run as a fixed sample by default (what CI runs), all of
# them with --slow=all, none with --slow=none. The sample is every SLOW_SAMPLE_EVERY-th slow
# test in a stable order, so the same ones run on every machine.
SLOW_SAMPLE_EVERY = 3


def pytest_addoption(parser):
    parser.addoption(
        "--slow",
        choices=("sample", "all", "none"),
        default="sample",
        help="which @pytest.mark.slow tests run (default: a fixed sample)",
    )


def pytest_collection_modifyitems(config, items):
    import zlib

    # the quick suite (pytest -m quick) is the one a new user runs first: nothing slow in it
    both = [item.nodeid for item in items if "quick" in item.keywords and "slow" in item.keywords]
    if both:
        raise pytest.UsageError(f"marked both quick and slow: {', '.join(both)}")
    mode = config.getoption("--slow")
    if mode == "all":
        return
    skip = pytest.mark.skip(reason="slow test outside the sample (run with --slow=all)")
    for item in items:
        if "slow" not in item.keywords:
            continue
        # a stable hash of the test's id: the sample does not depend on collection order
        in_sample = zlib.crc32(item.nodeid.encode()) % SLOW_SAMPLE_EVERY == 0
        if mode == "none" or not in_sample:
            item.add_marker(skip)


# ------------------------------------------------------------------ a real Dask cluster
BIN = Path(sys.executable).parent
# The most to wait for the scheduler to listen and both workers to register: the fixture goes
# on as soon as they have, and a busy laptop may take a minute or more to start three processes.
STARTUP = 600.0


@pytest.fixture
def dask_cluster(tmp_path):
    """The address of a ``dask scheduler`` with two single-thread ``dask worker`` processes.

    Started from the command line on a free port of 127.0.0.1, each process in a session of
    its own; every one of them is stopped in the teardown, whatever the test did.
    """
    pytest.importorskip("distributed", reason="needs the 'dask' extra: pip install '.[dask]'")
    from distributed import Client

    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs: list[subprocess.Popen] = []
    env = {**os.environ, "PATH": os.pathsep.join([str(BIN), os.environ.get("PATH", "")])}

    def spawn(name: str, args: list[str]) -> None:
        with (tmp_path / f"{name}.log").open("wb") as log:
            procs.append(
                subprocess.Popen(
                    [str(BIN / "dask"), *args],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=env,
                    cwd=tmp_path,
                    start_new_session=True,  # stop() reaches the nanny's worker too
                )
            )

    try:
        local = ["--host", "127.0.0.1", "--no-dashboard"]
        spawn("scheduler", ["scheduler", *local, "--port", str(port)])
        for i in range(2):
            spawn(f"worker{i}", ["worker", address, *local, "--nthreads", "1", "--name", f"w{i}"])
        with Client(address, timeout=STARTUP) as client:
            client.wait_for_workers(2, timeout=STARTUP)
        yield address
    finally:
        stop_process_groups(procs)
        assert all(p.poll() is not None for p in procs)
