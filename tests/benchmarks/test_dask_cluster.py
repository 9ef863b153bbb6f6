"""The unsupervised protocol on a real Dask cluster started from the command line.

``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1 (a free port, each in a
session of its own), the harness pointed at the scheduler's address, and the same grid run
locally: the numbers must be identical, and a second run against the cluster must find
every cell in the cache. Every process started here is stopped in the fixture's teardown,
whatever the test did.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from aggregation.federated.local import free_port, stop_process_groups

from .test_protocols_smoke import _common, data, proto  # noqa: F401 (fixtures)

pytest.importorskip("distributed")

BIN = Path(sys.executable).parent
STARTUP = 60.0  # seconds for the scheduler to listen and both workers to register


@pytest.fixture
def dask_cluster(tmp_path):
    """The address of a ``dask scheduler`` with two single-thread ``dask worker`` processes."""
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


def _run(argv: list[str], timeout: float = 300.0) -> None:
    """The protocol script in a process of its own, so a hung cluster cannot hang the test."""
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "unsupervised_protocol.py"
    subprocess.run([sys.executable, str(script), *argv], check=True, timeout=timeout)


def _tables(out: Path) -> dict[str, pd.DataFrame]:
    files = ["mse_at_16.csv", "curves.csv"]
    frane = out.with_name(out.name + "_frane")
    return {f: pd.read_csv(out / f) for f in files} | {
        f"frane/{f}": pd.read_csv(frane / f) for f in ["rmae_at_16.csv", "curves.csv"]
    }


@pytest.mark.slow
def test_unsupervised_grid_on_a_dask_cluster_equals_the_local_run(
    data,  # noqa: F811 (the fixture imported above)
    tmp_path,
    dask_cluster,
):
    grid = ["--rankers", "variance", "laplacian", "--variant", "both"]
    _run([*_common(data, tmp_path / "local"), *grid, "--out", str(tmp_path / "a")])

    out = tmp_path / "b"
    on_cluster = [*_common(data, tmp_path / "cluster"), *grid, "--out", str(out)]
    on_cluster += ["--backend", "dask", "--scheduler", dask_cluster]
    _run(on_cluster)
    cells = pd.read_csv(out / "cells.csv")
    assert len(cells) == 6 and (cells["status"] == "ok").all() and not cells["cached"].any()
    local, first = _tables(tmp_path / "a"), _tables(out)
    for name, table in local.items():
        pd.testing.assert_frame_equal(first[name], table, check_exact=True)

    # the cluster's cells are in the cache: a second run computes nothing
    _run(on_cluster)
    assert pd.read_csv(out / "cells.csv")["cached"].all()
    for name, table in _tables(out).items():
        pd.testing.assert_frame_equal(table, first[name], check_exact=True)
