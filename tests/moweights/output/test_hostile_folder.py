"""Nothing outside the folder a command was given is written, followed or deleted, and
inside it only what the command wrote (issue 48, items 1-6).

Beside ``test_output_folder.py``: a full disk, files the user names for writing, planted
manifests, a folder of another config's run, cache entries edited by hand, SIGTERM.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import moweights.output.files as files
from moweights.cli import main
from moweights.config import parse_config
from moweights.errors import OutputWriteError
from moweights.pipeline import run

SCRIPT = Path(sys.executable).with_name("moweights")
RAW = {
    "data": {"builtin": "iris"},
    "rankers": [{"name": "variance"}, {"name": "laplacian"}],
    "evaluation": {"enabled": False},
    "run": {"verbose": 0},
}


def _command(*args: str, cwd: Path, timeout: float = 300, **kw) -> subprocess.CompletedProcess:
    command = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "moweights"]
    return subprocess.run(
        [*command, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, **kw
    )


def _error_line(proc: subprocess.CompletedProcess | None, err: str, code: int, got: int) -> str:
    assert got == code, (got, err)
    assert "Traceback" not in err, err
    lines = [line for line in err.strip().splitlines() if line.startswith("error: ")]
    assert lines, err
    return lines[0]


def _manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ------------------------------------------------- item 1: a full disk while the tables are written
class _Disk:
    """A file system of 4 kB blocks that is full from the moment ``trigger`` is written
    (``trigger(name, data)`` True): from then a write fits only into space freed."""

    BLOCK = 4096

    def __init__(self, root: Path, trigger):
        self.root, self.trigger, self.budget = root, trigger, None

    def used(self) -> int:
        blocks = 0
        for p in self.root.rglob("*"):
            if p.is_file() and not p.is_symlink():
                blocks += -(-p.stat().st_size // self.BLOCK)
        return blocks * self.BLOCK

    def write(self, real):
        def atomic_write(path, data):
            raw = data.encode() if isinstance(data, str) else data
            if self.budget is None and self.trigger(Path(path).name, raw):
                self.budget = self.used()  # full now
            if self.budget is not None:
                need = -(-len(raw) // self.BLOCK) * self.BLOCK
                # the temporary file is written while the old file still holds its blocks
                if self.used() + need > self.budget:
                    raise OutputWriteError(
                        f"cannot write {path}: No space left on device",
                        path=path,
                        errno=errno.ENOSPC,
                    )
            return real(path, data)

        return atomic_write


def test_a_full_disk_while_the_tables_are_written_leaves_no_running_manifest(tmp_path, monkeypatch):
    out = tmp_path / "out"
    # full when the second ranker's tables are written: scores.csv and ranks.csv are
    # rewritten with its column, then features.csv does not fit
    disk = _Disk(out, lambda name, data: name == "features.csv" and b"laplacian" in data)
    big = {**RAW, "data": {"builtin": "digits"}}
    monkeypatch.setattr(files, "atomic_write", disk.write(files.atomic_write))
    with pytest.raises(OutputWriteError, match="No space left on device"):
        run(parse_config(big), out)
    assert disk.budget is not None
    manifest = _manifest(out)
    assert manifest["status"] == "failed", manifest["status"]
    assert "features.csv" in manifest["message"] and "No space left" in manifest["message"]
    for name, entry in manifest["files"].items():  # every checksum holds for the file
        assert entry["sha256"] == _sha(out / name), name
    assert not (out / ".moweights.lock").exists()


# ------------------------------------------------- item 2: files the user names for writing
@pytest.mark.parametrize(("command", "suffix"), [(["schema", "-o"], ".json"), (["init"], ".toml")])
def test_a_named_file_is_not_overwritten_linked_through_or_given_new_folders(
    tmp_path, capsys, command, suffix
):
    taken = tmp_path / f"taken{suffix}"
    taken.write_text("mine\n")
    assert main([*command, str(taken), "-q"]) == 2
    assert capsys.readouterr().err.strip() == f"error: {taken} exists; pass --force to overwrite it"
    assert taken.read_text() == "mine\n"

    victim = tmp_path / "victim.txt"
    victim.write_text("untouched\n")
    link = tmp_path / f"link{suffix}"
    link.symlink_to(victim)
    for force in ([], ["--force"]):  # not even --force writes through a link
        assert main([*command, str(link), "-q", *force]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"error: cannot write {link}: it is a symbolic link"), err
        assert "name the file itself, or delete the link" in err
    assert victim.read_text() == "untouched\n" and link.is_symlink()

    missing = tmp_path / "new" / "deeper" / f"x{suffix}"
    assert main([*command, str(missing), "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"error: cannot write {missing}: the folder {missing.parent} does not exist; "
        f"create it first (mkdir -p {missing.parent})"
    )
    assert not (tmp_path / "new").exists()

    assert main([*command, str(taken), "-q", "--force"]) == 0  # asked for: replaced
    assert taken.read_text() != "mine\n"


# ------------------------------------------------- item 3: a rerun deletes only what a run wrote
def test_a_planted_manifest_does_not_make_files_deletable(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    mine = {"index.html": b"<p>mine</p>", "data.csv": b"a,b\n1,2\n", "photo.png": b"\x89PNG.."}
    for name, data in mine.items():
        (out / name).write_bytes(data)
    fake = {name: {"sha256": "0" * 64} for name in mine}
    (out / "manifest.json").write_text(json.dumps({"moweights": "0.1", "files": fake}))
    for force in (False, True):
        assert run(parse_config(RAW), out, force=force).status == "complete"
        for name, data in mine.items():
            assert (out / name).read_bytes() == data, name


def test_a_rerun_keeps_a_file_of_the_earlier_run_that_was_edited_since(tmp_path):
    out = tmp_path / "out"
    run(parse_config(RAW), out)
    (out / "similarity_spearman.csv").write_text("my notes\n")  # not what the run wrote
    listed = _manifest(out)["files"]
    assert "similarity_spearman.csv" in listed and "scores.csv" in listed
    raw = {**RAW, "aggregation": {"compare": ["s_measure"]}}  # no spearman table this time
    run(parse_config(raw), out)
    assert (out / "similarity_spearman.csv").read_text() == "my notes\n"
    assert "similarity_spearman.csv" not in _manifest(out)["files"]


# ------------------------------------------------- item 4: a folder of another config's run
QUICK = """
[data]
builtin = "iris"
[[rankers]]
name = "variance"
[evaluation]
enabled = false
[output]
dir = "results"
plots = false
"""


def test_a_folder_made_by_a_run_of_another_config_is_that_runs(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.toml").write_text(QUICK)
    (tmp_path / "b.toml").write_text(QUICK.replace('"variance"', '"laplacian"'))
    results = tmp_path / "results"
    assert main(["run", "a.toml", "-q"]) == 0
    before = {p.name: p.read_bytes() for p in results.iterdir() if p.is_file()}
    assert _manifest(results)["config"] == str(tmp_path / "a.toml")

    assert main(["run", "b.toml", "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"error: output folder results holds the results of a run of {tmp_path / 'a.toml'} "
        f"(its manifest.json says so), not of {tmp_path / 'b.toml'}; a run replaces the "
        "folder's files, so choose another folder ([output] dir, or -o DIR), or pass --force "
        "to replace that run's results"
    )
    assert {p.name: p.read_bytes() for p in results.iterdir() if p.is_file()} == before

    assert main(["run", "a.toml", "-q"]) == 0  # its own config again: a rerun
    assert main(["run", "results/config.json", "-q", "-o", "results"]) == 0  # its config.json
    assert _manifest(results)["config"] == str(tmp_path / "a.toml")
    assert main(["run", "b.toml", "-q", "--force"]) == 0  # asked for
    assert _manifest(results)["config"] == str(tmp_path / "b.toml")


# ------------------------------------------------- item 6: SIGTERM ends a run as Ctrl-C does
SLOW = """
[data]
builtin = "wine"
[[rankers]]
name = "variance"
[[rankers]]
name = "mo_weighting"
params = { pop_size = 8, n_gen = 1000000 }
[output]
plots = false
"""


def test_sigterm_ends_a_run_as_ctrl_c_does(tmp_path):
    import time

    (tmp_path / "slow.toml").write_text(SLOW)
    out = tmp_path / "out"
    command = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "moweights"]
    log = tmp_path / "stderr.txt"
    with log.open("w") as stderr:
        proc = subprocess.Popen(
            [*command, "run", "slow.toml", "-o", "out"],
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        # the progress line, not scores.csv: the tables are written at checkpoints
        deadline = time.monotonic() + 600  # a bound for a run that never gets there
        while "variance done" not in log.read_text():
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "the first ranker never finished"
            time.sleep(0.1)
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=600)
    err = log.read_text()
    assert proc.returncode == 143, err
    assert "interrupted (SIGTERM): partial results in out/" in err and "Traceback" not in err
    assert not (out / ".moweights.lock").exists()
    manifest = _manifest(out)
    assert manifest["status"] == "partial", manifest["status"]
    assert "interrupted (SIGTERM): the files listed are complete" in manifest["message"]
    for name, entry in manifest["files"].items():
        assert entry["sha256"] == _sha(out / name), name
