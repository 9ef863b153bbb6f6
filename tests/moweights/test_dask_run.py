"""A config run with ``backend = "dask"`` on a real cluster started from the command line.

The ``dask_cluster`` fixture (``tests/conftest.py``) starts ``dask scheduler`` and two
``dask worker`` processes on 127.0.0.1; the run is pointed at the scheduler through
``[run] scheduler``. Its files must equal the local (loky) run's byte for byte, and a rerun
against the cluster must reuse every finished step from the run folder's cache.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from .test_cli import CONFIG

pytest.importorskip("distributed", reason="needs the 'dask' extra: pip install '.[dask]'")

FILES = ["scores.csv", "ranks.csv", "aggregated.json", "curves.csv", "curve_folds.csv"]


def _run(config, out, *extra: str, timeout: float = 1800.0) -> dict:
    """``moweights run`` in a process of its own, so a hung cluster cannot hang the test
    (about a minute on an idle machine; the bound is for a hang, not for a busy one)."""
    argv = [sys.executable, "-m", "moweights", "run", str(config), "-q", "-o", str(out), *extra]
    subprocess.run(argv, check=True, timeout=timeout)
    return json.loads((out / "summary.json").read_text())


def _tasks_run(address: str) -> int:
    """How many tasks the scheduler has seen finish (its task prefixes outlive the tasks)."""
    from distributed import Client

    def count(dask_scheduler) -> int:
        return sum(
            prefix.state_counts.get("forgotten", 0) + prefix.state_counts.get("memory", 0)
            for prefix in dask_scheduler.task_prefixes.values()
        )

    with Client(address, timeout=300) as client:
        return client.run_on_scheduler(count)


# not marked slow: CI runs it on every commit (the config runs' dask backend, about a minute)
def test_config_run_on_a_dask_cluster_equals_the_local_run(tmp_path, dask_cluster):
    config = tmp_path / "run.toml"
    config.write_text(CONFIG + "\n[output]\nplots = false\nhtml = false\n")
    _run(config, tmp_path / "loky", "-j", "2")

    cluster = ["--set", 'run.backend="dask"', "--set", f'run.scheduler="{dask_cluster}"']
    first = _run(config, tmp_path / "dask", *cluster, "-j", "2")
    assert first["cache"]["computed"] and not first["cache"]["reused"]
    assert _tasks_run(dask_cluster) > 0  # the work did go to the cluster
    for name in FILES:
        local = (tmp_path / "loky" / name).read_bytes()
        assert (tmp_path / "dask" / name).read_bytes() == local, name

    # the steps the cluster finished are in the run folder's cache: nothing is recomputed
    second = _run(config, tmp_path / "dask", *cluster, "-j", "2")
    assert sorted(second["cache"]["reused"]) == sorted(first["cache"]["computed"])
    assert not second["cache"]["computed"]
    for name in FILES:
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "loky" / name).read_bytes()
