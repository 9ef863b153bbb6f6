"""One run per output folder: the lock, concurrent runs, stale locks."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import rankers
from moweights.cli import main
from moweights.config import parse_config
from moweights.pipeline import run

SCRIPT = Path(sys.executable).with_name("moweights")
LOCK = ".moweights.lock"
RAW = {
    "data": {"builtin": "iris"},
    "rankers": [{"name": "variance"}],
    "evaluation": {"enabled": False},
    "output": {"plots": False, "html": False},
    "run": {"verbose": 0},
}


def _command() -> list[str]:
    return [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "moweights"]


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _write_lock(folder: Path, **owner) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    owner = {"host": socket.gethostname(), "started": "then", "epoch": time.time(), **owner}
    (folder / LOCK).write_text(json.dumps(owner))
    return folder / LOCK


def test_two_concurrent_runs_into_one_folder(tmp_path, capsys):
    slow = tmp_path / "slow.toml"
    slow.write_text(
        textwrap.dedent(
            """
            [data]
            builtin = "wine"
            [[rankers]]
            name = "mo_weighting"
            params = { pop_size = 8, n_gen = 1000000 }
            [output]
            plots = false
            """
        )
    )
    quick = tmp_path / "quick.toml"
    quick.write_text('[data]\nbuiltin = "iris"\n[[rankers]]\nname = "variance"\n')
    out = tmp_path / "out"
    first = subprocess.Popen(
        [*_command(), "run", str(slow), "-o", str(out), "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # waits on the first run's files; the bound only stops a run that never gets there
        deadline = time.monotonic() + 600
        while not ((out / LOCK).exists() and (out / "manifest.json").exists()):
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline, "the first run never started"
            time.sleep(0.1)
        config = (out / "config.json").read_bytes()
        owner = json.loads((out / LOCK).read_text())
        assert owner["pid"] == first.pid and owner["host"] == socket.gethostname()
        second = subprocess.run(
            [*_command(), "run", str(quick), "-o", str(out)],
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert second.returncode == 2, second.stderr
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in second.stderr
        assert f"output folder {out} is in use by another run (pid {first.pid}" in lines[0]
        assert (out / "config.json").read_bytes() == config  # the second run wrote nothing
        assert first.poll() is None  # and the first one goes on
    finally:
        first.send_signal(signal.SIGKILL)  # a crash: the lock stays behind, stale
        first.communicate(timeout=600)
    assert (out / LOCK).exists()
    capsys.readouterr()
    # --force: the folder holds the slow config's (partial) run, which another config's run
    # replaces only when told to (the folder-ownership rule, issue 48 item 4)
    assert main(["run", str(quick), "-o", str(out), "--force"]) == 0
    err = capsys.readouterr().err
    assert f"warning: took over the stale lock of output folder {out} (its run, pid " in err
    assert json.loads((out / "manifest.json").read_text())["status"] == "complete"
    assert not (out / LOCK).exists()  # released at the end


def test_a_held_lock_stops_a_run_before_it_writes(tmp_path, capsys):
    from moweights.errors import RunLockedError
    from moweights.pipeline.lock import RunLock

    out = tmp_path / "out"
    out.mkdir()
    with RunLock(out):
        with pytest.raises(RunLockedError, match="in use by another run") as info:
            run(parse_config(RAW), out)
        assert info.value.owner["pid"] == os.getpid()
        assert sorted(p.name for p in out.iterdir()) == [LOCK]
        config = tmp_path / "run.toml"
        config.write_text('[data]\nbuiltin = "iris"\n[[rankers]]\nname = "variance"\n')
        assert main(["run", str(config), "-o", str(out)]) == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
        assert main(["report", str(out)]) == 2  # no summary.json yet: not a run folder
    run(parse_config(RAW), out)
    with RunLock(out):  # a report does not redraw a folder a run is writing
        assert main(["report", str(out)]) == 2
        assert "in use by another run" in capsys.readouterr().err
    assert main(["report", str(out), "-q"]) == 0


def test_a_stale_lock_is_taken_over_with_a_warning(tmp_path):
    from moweights.pipeline.lock import StaleLockWarning

    out = tmp_path / "out"
    pid = _dead_pid()
    _write_lock(out, pid=pid)
    with pytest.warns(StaleLockWarning, match=f"pid {pid}"):
        result = run(parse_config(RAW), out)
    assert result.status == "complete" and not (out / LOCK).exists()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_reused_pid_is_not_the_owner(tmp_path):
    from moweights.errors import RunLockedError
    from moweights.pipeline.lock import RunLock, StaleLockWarning

    # alive until the test kills it, however long the checks take on a busy machine
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    try:
        time.sleep(0.5)
        # a lock written an hour before this process started: the pid was reused
        _write_lock(tmp_path, pid=sleeper.pid, epoch=time.time() - 3600)
        with pytest.warns(StaleLockWarning):
            RunLock(tmp_path).acquire().release()
        _write_lock(tmp_path, pid=sleeper.pid)  # written by it: its owner, alive
        with pytest.raises(RunLockedError):
            RunLock(tmp_path).acquire()
    finally:
        sleeper.kill()
        sleeper.wait()


@pytest.mark.parametrize("kind", ["other host", "unreadable"])
def test_locks_that_cannot_be_checked_are_respected(tmp_path, kind):
    from moweights.errors import RunLockedError
    from moweights.pipeline.lock import RunLock

    if kind == "other host":
        _write_lock(tmp_path, pid=_dead_pid(), host="elsewhere.example")
        needle = "on elsewhere.example"
    else:
        (tmp_path / LOCK).write_text("garbage")
        needle = "unknown owner"
    with pytest.raises(RunLockedError, match=needle) as info:
        RunLock(tmp_path).acquire()
    assert f"delete {tmp_path / LOCK}" in str(info.value)
    assert (tmp_path / LOCK).exists()


def test_two_takers_of_one_stale_lock_never_both_win(tmp_path):
    from moweights.errors import RunLockedError
    from moweights.pipeline.lock import RunLock

    for _ in range(10):
        _write_lock(tmp_path, pid=_dead_pid())
        barrier = threading.Barrier(2)
        outcome: list = []

        def take(barrier=barrier, outcome=outcome):
            barrier.wait()
            try:
                outcome.append(RunLock(tmp_path).acquire())
            except RunLockedError:
                outcome.append(None)

        threads = [threading.Thread(target=take) for _ in range(2)]
        with pytest.warns(UserWarning):
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        winners = [lock for lock in outcome if lock is not None]
        assert len(winners) == 1, outcome
        winners[0].release()
        assert not (tmp_path / LOCK).exists()


class _Stopping(rankers.BaseRanker):
    """Notes whether its run holds the lock, then stops the run with ``error``."""

    name = "stopping_test"
    error: type[BaseException] = KeyboardInterrupt
    lock: Path | None = None
    saw_lock = False

    def _score(self, X, y, context):
        type(self).saw_lock = self.lock.exists()
        raise self.error("stopped")


@pytest.mark.parametrize("error", [KeyboardInterrupt, rankers.InvalidInputError])
def test_the_lock_is_released_on_failure_and_ctrl_c(tmp_path, error, monkeypatch):
    from rankers import registry

    rankers.register("stopping_test", replace=True)(_Stopping)
    monkeypatch.setattr(_Stopping, "error", error)
    monkeypatch.setattr(_Stopping, "lock", tmp_path / "out" / LOCK)
    raw = {**RAW, "rankers": [{"name": "variance"}, {"name": "stopping_test"}]}
    try:
        with pytest.raises(error, match="stopped"):
            run(parse_config(raw), tmp_path / "out")
    finally:
        registry._decorated.pop("stopping_test", None)
    assert _Stopping.saw_lock  # held while the run ran
    assert not (tmp_path / "out" / LOCK).exists()  # and released when it stopped
    status = json.loads((tmp_path / "out" / "manifest.json").read_text())["status"]
    assert status == ("partial" if error is KeyboardInterrupt else "failed")


# ------------------------------------------------- a hostile lock (issue 37 item 4)
# The lock is read back from a folder anyone may have made: a FIFO must not block a run
# or a report for ever, a link to /dev/zero must not be read without end.
_QUICK_TOML = (
    '[data]\nbuiltin = "iris"\n[[rankers]]\nname = "variance"\n[evaluation]\nenabled = false\n'
    "[output]\nplots = false\nhtml = false\n"
)


def _bounded() -> None:
    """A safety bound for a child reading a hostile file: 4 GiB of address space."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, resource.RLIM_INFINITY))


def _plant(out: Path, kind: str) -> str:
    lock = out / LOCK
    if kind == "fifo":
        os.mkfifo(lock)
        return "not a regular file (a FIFO)"
    if kind == "link to /dev/zero":
        lock.symlink_to("/dev/zero")
        return "is a symbolic link"
    with open(lock, "wb") as f:  # 5 GB, sparse: nothing on disk, nothing to read
        f.truncate(5 * 10**9)
    return "larger than a lock moweights writes"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero", "huge file"])
def test_a_lock_that_no_run_wrote_stops_run_and_report_at_once(tmp_path, kind):
    config = tmp_path / "quick.toml"
    config.write_text(_QUICK_TOML)
    out = tmp_path / "out"
    subprocess.run([*_command(), "run", str(config), "-o", str(out), "-q"], check=True,
                   timeout=300)  # fmt: skip
    needle = _plant(out, kind)
    for args in (["run", str(config), "-o", str(out)], ["report", str(out)]):
        proc = subprocess.run(  # a process of its own: a hang must not hang the suite
            [*_command(), *args], capture_output=True, text=True, timeout=600,
            preexec_fn=_bounded,
        )  # fmt: skip
        assert proc.returncode == 2, (args, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert f"has a lock file no run wrote: {out / LOCK}" in lines[0], lines[0]
        assert needle in lines[0], lines[0]
    assert os.path.lexists(out / LOCK)  # the user's file is left for the user to judge


def test_a_lock_that_cannot_be_written_whole_is_not_left_behind(tmp_path, monkeypatch):
    from moweights.errors import OutputFolderError
    from moweights.pipeline.lock import RunLock

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(json, "dump", full)
    with pytest.raises(OutputFolderError, match="No space left on device"):
        RunLock(tmp_path).acquire()
    assert not (tmp_path / LOCK).exists()  # an empty lock would block every later run
