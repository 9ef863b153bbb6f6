"""A local Flower deployment (real processes on 127.0.0.1) for trials and tests; also reached
as ``moweights.federated.flower.LocalDeployment``."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from aggregation.federated.rank import SiteRankings
from moweights.federated.flower_app import check_run_config, read_result, toml_values, write_app

__all__ = ["LocalDeployment", "free_port", "stop_process_groups"]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop_process_groups(procs, grace: float = 10.0) -> None:
    """SIGTERM the process group of every process in ``procs``; SIGKILL what is left after
    ``grace`` seconds. Each process must lead its own group (``start_new_session=True``)."""
    for proc in procs:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


class LocalDeployment:
    """Real Flower processes on 127.0.0.1: a SuperLink and one SuperNode per site.

    For trying the apps on one machine and for tests: the same executables and arguments as
    a real deployment (see the module docstring), with ``--insecure``, free ports chosen
    at start, and a private Flower home (``FLWR_HOME``) under ``workdir``. Use it as a
    context manager; leaving it terminates every process it started.

    Parameters
    ----------
    sites : mapping site -> mapping
        Each site's node config, e.g. ``{"site1": {"data-path": "/data/s1.csv",
        "target": "label"}}`` (``site`` is added).
    workdir : path
        Folder for the Flower home, the logs (``*.log``) and the app.
    startup_timeout : float, default=300
        The most seconds to wait for the SuperLink to listen (the wait ends as soon as it
        does, or when it exits; a busy machine may need a minute to start it).
    """

    connection = "moweights-local"

    def __init__(
        self, sites: Mapping[str, Mapping[str, str]], workdir: str | Path, startup_timeout=300.0
    ) -> None:
        self.sites = {str(s): dict(c) for s, c in sites.items()}
        self.workdir = Path(workdir).resolve()
        self.startup_timeout = float(startup_timeout)
        self.processes: list[subprocess.Popen] = []
        self.site_processes: dict[str, subprocess.Popen] = {}  # each site's SuperNode
        self.bin = Path(sys.executable).parent
        self.env = {
            **os.environ,
            # Flower starts its helpers (flower-superexec, flwr-serverapp...) from PATH.
            "PATH": os.pathsep.join([str(self.bin), os.environ.get("PATH", "")]),
            "FLWR_HOME": str(self.workdir / "flwr-home"),
            "FLWR_TELEMETRY_ENABLED": "0",  # no traffic but to 127.0.0.1
            "FLWR_DISABLE_UPDATE_CHECK": "1",
        }

    def _spawn(self, name: str, args: list[str]) -> None:
        log = (self.workdir / f"{name}.log").open("wb")
        # A session of its own, so stop() reaches the SuperExec children too.
        proc = subprocess.Popen(
            [str(self.bin / args[0]), *args[1:]],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=self.env,
            cwd=self.workdir,
            start_new_session=True,
        )
        log.close()
        self.processes.append(proc)

    def start(self) -> LocalDeployment:
        """Start the SuperLink, wait until it listens, then start the SuperNodes."""
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        (self.workdir / "flwr-home").mkdir(parents=True, exist_ok=True)
        port = free_port()
        self.address = f"127.0.0.1:{port}"
        local = ["--insecure", "--host", "127.0.0.1", "--port"]
        dry = "--disable-runtime-dependency-installation"  # all is installed: no `uv sync`
        self._spawn("superlink", ["flower-superlink", *local, str(port), dry])
        deadline = time.monotonic() + self.startup_timeout
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or self.processes[0].poll() is not None:
                    raise RuntimeError(f"the SuperLink did not start; see {self.workdir}") from None
                time.sleep(0.2)
        for site, node_config in self.sites.items():
            conf = self.workdir / f"node-{site}.toml"  # a file: any path or name survives
            conf.write_text(toml_values({"site": site, **node_config}), encoding="utf-8")
            link = ["--superlink", self.address, "--node-config", str(conf)]
            self._spawn(f"supernode-{site}", ["flower-supernode", *local, str(free_port()), *link])
            self.site_processes[site] = self.processes[-1]
        home = self.workdir / "flwr-home" / "config.toml"
        home.write_text(
            f'[superlink]\ndefault = "{self.connection}"\n\n[superlink.{self.connection}]\n'
            f'address = "{self.address}"\ninsecure = true\n',
            encoding="utf-8",
        )

    def run(self, timeout: float = 120.0, **run_config: str | int | float) -> SiteRankings:
        """``flwr run`` the apps with ``run_config`` (:data:`RUN_CONFIG` keys; ``_`` for ``-``).

        Returns what the ServerApp wrote (:func:`read_result`); ``output-dir`` defaults to
        ``workdir/output``. Flower's output (the ServerApp's streamed log) is kept in
        ``workdir/flwr-run.log``. Raises ``RuntimeError`` quoting Flower's output when the run
        fails, ``subprocess.TimeoutExpired`` after ``timeout`` seconds.
        """
        cfg = {k.replace("_", "-"): v for k, v in run_config.items()}
        cfg.setdefault("output-dir", str(self.workdir / "output"))
        check_run_config(cfg)  # our message for a bad key or value, before Flower's
        result = Path(str(cfg["output-dir"])) / "result.json"
        result.unlink(missing_ok=True)
        overrides = self.workdir / "run-config.toml"
        overrides.write_text(toml_values(cfg), encoding="utf-8")
        app = write_app(self.workdir / "moweights-flower")
        cmd = ["flwr", "run", str(app), self.connection, "--stream", "--run-config", str(overrides)]
        done = subprocess.run(
            [str(self.bin / cmd[0]), *cmd[1:]],
            env=self.env,
            cwd=self.workdir,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        # what the operator saw (the ServerApp's log, streamed), beside the other logs
        (self.workdir / "flwr-run.log").write_text(done.stdout + done.stderr, encoding="utf-8")
        if done.returncode != 0 or not result.is_file():
            raise RuntimeError(
                f"flwr run failed (exit {done.returncode}):\n{done.stdout[-3000:]}\n"
                f"{done.stderr[-3000:]}"
            )
        return read_result(result.parent)

    def kill_site(self, site: str) -> None:
        """Kill ``site``'s SuperNode at once (SIGKILL to its process group), as a site whose
        machine goes down: whatever it was ranking never reaches the SuperLink."""
        proc = self.site_processes[site]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    def stop(self, timeout: float = 60.0) -> None:
        """Terminate every process started here (SIGTERM, then SIGKILL after 10 s).

        Returns once none is left (:meth:`leftover_pids` is empty), or after ``timeout``
        seconds of waiting for the last ones to go.
        """
        stop_process_groups(self.processes)
        self.processes.clear()
        self.site_processes.clear()
        # Flower detaches its SuperExecs into sessions of their own; they exit when their
        # parent does, and this sweep ends any that lingers (found by this FLWR_HOME).
        # A killed process is listed until it is gone, which a busy machine takes a while
        # to get to: wait for that rather than return with it still there.
        deadline = time.monotonic() + timeout
        while (pids := self.leftover_pids()) and time.monotonic() < deadline:
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.1)

    def leftover_pids(self) -> list[int]:
        """Ids of processes still running with this deployment's ``FLWR_HOME`` (Linux)."""
        mark = b"\0" + f"FLWR_HOME={self.env['FLWR_HOME']}".encode() + b"\0"
        pids = []
        for environ in Path("/proc").glob("[0-9]*/environ"):
            with contextlib.suppress(OSError):
                if mark in b"\0" + environ.read_bytes() + b"\0":
                    pids.append(int(environ.parent.name))
        return [p for p in pids if p != os.getpid()]

    def __enter__(self) -> LocalDeployment:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
