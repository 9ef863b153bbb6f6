"""The unsupervised protocol on a real Dask cluster started from the command line.

``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1 (the ``dask_cluster``
fixture of ``tests/conftest.py``), the harness pointed at the scheduler's address, and the
same grid run locally: the numbers must be identical, and a second run against the cluster
must find every cell in the cache.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from benchmarks._common import child_env

from .test_protocols_smoke import _common, data, proto  # noqa: F401 (fixtures)

pytest.importorskip("distributed", reason="needs the 'dask' extra: pip install '.[dask]'")


def _run(argv: list[str], timeout: float = 1800.0) -> None:
    """The protocol script in a process of its own, so a hung cluster cannot hang the test
    (about a minute on an idle machine; the bound is for a hang, not for a busy one)."""
    command = [sys.executable, "-m", "benchmarks.protocols.unsupervised_protocol", *argv]
    subprocess.run(command, check=True, timeout=timeout, env=child_env())


def _tables(out: Path) -> dict[str, pd.DataFrame]:
    files = ["mse_at_16.csv", "curves.csv"]
    frane = out.with_name(out.name + "_frane")
    return {f: pd.read_csv(out / f) for f in files} | {
        f"frane/{f}": pd.read_csv(frane / f) for f in ["rmae_at_16.csv", "curves.csv"]
    }


# not marked slow: CI runs it on every commit (the protocol harness on a cluster, about a minute)
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
