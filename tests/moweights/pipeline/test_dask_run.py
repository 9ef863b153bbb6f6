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

from ..test_cli import CONFIG  # the small config run of the CLI tests

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


# -------------------------------------- addresses that are not schedulers (issue 37 item 3)
class _Peer:
    """A TCP peer on 127.0.0.1 that is no Dask scheduler: silent, or answering HTTP."""

    def __init__(self, kind: str):
        import socket
        import threading

        self.kind = kind
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.held: list = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.held.append(conn)  # silent: held open, never answered
            if self.kind == "http":
                try:
                    conn.recv(65536)
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                    conn.close()
                except OSError:
                    pass

    def close(self) -> None:
        self.server.close()
        for conn in self.held:
            conn.close()


@pytest.mark.parametrize(
    ("kind", "needle"),
    [
        ("silent", "did not answer within 2 s"),
        ("http", "did not answer as a Dask scheduler: its reply could not be read"),
        ("closed", "cannot connect to the Dask scheduler at"),
    ],
)
def test_an_address_that_is_not_a_scheduler_is_one_named_error(tmp_path, kind, needle):
    import os

    peer = _Peer(kind)
    if kind == "closed":
        peer.close()  # nothing listens on the port any more
    address = f"tcp://127.0.0.1:{peer.port}"
    config = tmp_path / "run.toml"
    config.write_text(CONFIG + "\n[output]\nplots = false\nhtml = false\n")
    # Dask's own connect timeout bounds the handshake; the subprocess timeout is a safety
    # bound for a hang, not a duration under test
    env = {**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "2s"}
    argv = [sys.executable, "-m", "moweights", "run", str(config), "-o", str(tmp_path / "out"),
            "--set", 'run.backend="dask"', "--set", f'run.scheduler="{address}"']  # fmt: skip
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)
    finally:
        peer.close()
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert address in lines[0] and "[run].scheduler" in lines[0] and needle in lines[0], lines
    assert "MemoryError" not in lines[0] or "could not be read (MemoryError)" in lines[0]
    assert not (tmp_path / "out" / "manifest.json").exists()  # refused before any writing
