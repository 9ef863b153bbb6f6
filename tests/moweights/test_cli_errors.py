"""The moweights command never prints a traceback: bad input is one line and exit code 2.

Every case runs the real console script (``moweights`` beside the interpreter) in a
subprocess, as a user would.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from moweights.cli import main

SCRIPT = Path(sys.executable).with_name("moweights")
ROOT = os.geteuid() == 0 if hasattr(os, "geteuid") else False
QUICK = """
[[rankers]]
name = "variance"
[evaluation]
enabled = false
[output]
plots = false
html = false
"""


# How long a command may take before the test calls it hung: seconds on an idle machine,
# generous for a busy laptop. Every wait below ends as soon as the process does.
HUNG = 900


def _command(*args: str, cwd: Path, stdin=None) -> subprocess.CompletedProcess:
    command = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "moweights"]
    return subprocess.run(
        [*command, *args], cwd=cwd, capture_output=True, text=True, timeout=HUNG, stdin=stdin
    )


def _assert_one_line(proc: subprocess.CompletedProcess, *needles: str, code: int = 2):
    err = proc.stderr
    assert proc.returncode == code, (proc.returncode, err)
    assert "Traceback" not in err and "Exception ignored" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for needle in needles:
        assert needle in lines[0], (needle, err)


def _out(command: str) -> list[str]:
    return ["-o", "out"] if command == "run" else []


def _config(tmp_path: Path, data: str, name: str = "run.toml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(data) + QUICK)
    return path


@pytest.fixture
def iris(tmp_path) -> Path:
    return _config(tmp_path, '[data]\nbuiltin = "iris"\n')


# ------------------------------------------------------------------ the output folder
def test_output_folder_that_is_a_file(tmp_path, iris):
    (tmp_path / "taken").write_text("not a folder")
    proc = _command("run", str(iris), "-o", "taken", cwd=tmp_path)
    _assert_one_line(proc, "output folder taken is a file")
    assert (tmp_path / "taken").read_text() == "not a folder"


def test_output_folder_under_a_file(tmp_path, iris):
    (tmp_path / "taken").write_text("not a folder")
    proc = _command("run", str(iris), "-o", "taken/deeper/out", cwd=tmp_path)
    _assert_one_line(proc, "output folder taken/deeper/out lies under a file: taken")


@pytest.mark.skipif(ROOT, reason="root may write into a read-only folder: chmod cannot test it")
def test_output_folder_that_is_read_only(tmp_path, iris):
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked").chmod(0o500)
    try:
        proc = _command("run", str(iris), "-o", "locked", cwd=tmp_path)
        _assert_one_line(proc, "output folder locked is not writable")
        proc = _command("run", str(iris), "-o", "locked/sub", cwd=tmp_path)
        _assert_one_line(proc, "cannot create output folder locked/sub")
    finally:
        (tmp_path / "locked").chmod(0o700)


@pytest.mark.skipif(not Path("/sys/kernel").is_dir(), reason="needs Linux's /sys")
def test_output_folder_that_not_even_root_may_write(tmp_path, iris):
    # sysfs takes no new files from anyone: the unwritable case, also when tests run as root
    proc = _command("run", str(iris), "-o", "/sys/kernel", cwd=tmp_path)
    _assert_one_line(proc, "output folder /sys/kernel is not writable")


# ------------------------------------------------------------------ data files
def _data_config(tmp_path: Path, name: str, content: bytes, target: str = "label") -> Path:
    (tmp_path / name).write_bytes(content)
    return _config(tmp_path, f'[data]\npath = "{name}"\ntarget = "{target}"\n')


def test_binary_csv(tmp_path):
    path = _data_config(tmp_path, "data.csv", np.random.default_rng(0).bytes(400))
    for command in ("validate", "run"):
        proc = _command(command, str(path), *_out(command), cwd=tmp_path)
        _assert_one_line(proc, "data.csv", "[data].path", "binary")


def test_ragged_csv(tmp_path):
    path = _data_config(tmp_path, "data.csv", b"a,b,label\n1,2,0\n3,4,1\n5,6,0,9\n7,8,1\n")
    proc = _command("run", str(path), "-o", "out", cwd=tmp_path)
    _assert_one_line(proc, "data.csv", "Expected 3 fields in line 4, saw 4")


def test_corrupt_parquet(tmp_path):
    pytest.importorskip("pyarrow", reason="needs the 'parquet' extra: pip install '.[parquet]'")
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0], "label": [0, 1, 0]})
    frame.to_parquet(tmp_path / "good.parquet")
    broken = (tmp_path / "good.parquet").read_bytes()[:-40]  # the footer cut off
    path = _data_config(tmp_path, "data.parquet", broken)
    for command in ("validate", "run"):
        proc = _command(command, str(path), *_out(command), cwd=tmp_path)
        _assert_one_line(proc, "data.parquet", "parquet file")


def test_corrupt_mat(tmp_path):
    path = _data_config(tmp_path, "data.mat", b"MATLAB 5.0 MAT-file" + bytes(range(256)) * 2)
    proc = _command("run", str(path), "-o", "out", cwd=tmp_path)
    _assert_one_line(proc, "data.mat", ".mat file")


def test_mat_without_a_matrix_x(tmp_path):
    from scipy.io import savemat

    savemat(tmp_path / "data.mat", {"Z": np.eye(3)})
    path = _config(tmp_path, '[data]\npath = "data.mat"\n')
    proc = _command("validate", str(path), cwd=tmp_path)
    _assert_one_line(proc, "data.mat", "no matrix named 'X'")


def test_target_column_that_does_not_exist(tmp_path):
    path = _data_config(tmp_path, "data.csv", b"a,b,label\n1,2,0\n3,4,1\n", target="labl")
    for command in ("validate", "run"):
        proc = _command(command, str(path), *_out(command), cwd=tmp_path)
        _assert_one_line(proc, "[data].target", "'labl' is not in data.csv", "'label'")
    assert not (tmp_path / "out").exists()  # caught before the run


def test_validate_reads_the_data(tmp_path, capsys):
    # a header with the target, then rows the run would refuse: validate reads them (issue 36)
    path = _data_config(tmp_path, "data.csv", b"a,b,label\n1,2\n3,4,1,5,6\n")
    assert main(["validate", str(path)]) == 2
    assert "Expected 3 fields in line 3, saw 5" in capsys.readouterr().err
    bad = _data_config(tmp_path, "other.csv", b"a,b,label\n1,2,0\n", target="nope")
    assert main(["validate", str(bad), "-q"]) == 2


# ------------------------------------------------------------------ config files
@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (bytes(range(128, 256)), "not a TOML text file"),
        (b"[data\nbuiltin = 1\n", "not valid TOML"),
    ],
)
def test_unreadable_config(tmp_path, content, needle):
    (tmp_path / "bad.toml").write_bytes(content)
    proc = _command("validate", "bad.toml", cwd=tmp_path)
    _assert_one_line(proc, "bad.toml", needle)


def test_config_that_is_a_folder_or_missing(tmp_path):
    (tmp_path / "folder.toml").mkdir()
    _assert_one_line(_command("run", "folder.toml", cwd=tmp_path), "is a folder")
    _assert_one_line(_command("run", "absent.toml", cwd=tmp_path), "not found")


@pytest.mark.skipif(ROOT, reason="root reads any file: chmod cannot test it")
def test_config_without_read_permission(tmp_path, iris):
    iris.chmod(0o000)
    try:
        _assert_one_line(_command("validate", str(iris), cwd=tmp_path), "Permission denied")
    finally:
        iris.chmod(0o600)


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs Linux's /proc")
def test_config_that_cannot_be_read_even_by_root(tmp_path):
    # reading a process's memory at offset 0 fails (EIO): the unreadable case as root too
    _assert_one_line(_command("validate", "/proc/self/mem", cwd=tmp_path), "cannot read")


# ------------------------------------------------------------------ output and verbosity
def test_output_piped_into_a_closed_reader_exits_quietly(tmp_path):
    command = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "moweights"]
    for args in (["schema"], ["rankers", "--json"], ["rankers"]):
        # like `| head -c 10`: read a little, then close the pipe
        proc = subprocess.Popen([*command, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        proc.stdout.read(10)
        proc.stdout.close()
        err = proc.stderr.read().decode()
        proc.wait(timeout=HUNG)
        assert err == "", (args, err)
        assert proc.returncode in (0, 141), (args, proc.returncode)
        # the reader gone before anything was written: always a broken pipe
        proc = subprocess.Popen([*command, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        proc.stdout.close()
        err = proc.stderr.read().decode()
        proc.wait(timeout=HUNG)
        assert err == "" and proc.returncode == 141, (args, proc.returncode, err)


def test_output_piped_into_head_in_a_shell(tmp_path):
    command = f"'{SCRIPT}' schema | head -c 10" if SCRIPT.exists() else None
    if command is None:
        pytest.skip("no console script beside the interpreter")
    proc = subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, timeout=HUNG, cwd=tmp_path
    )
    assert proc.stdout == '{\n  "$sche'[:10] or len(proc.stdout) == 10
    assert proc.stderr == "", proc.stderr


@pytest.mark.parametrize("where", ["before", "after"])
def test_quiet_before_or_after_the_command(tmp_path, iris, where):
    args = ["-q", "run", str(iris), "-o", "out"] if where == "before" else [
        "run", "-q", str(iris), "-o", "out"]  # fmt: skip
    proc = _command(*args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "" and proc.stderr == ""
    assert (tmp_path / "out" / "summary.json").is_file()


@pytest.mark.parametrize("where", ["before", "after"])
def test_verbose_before_or_after_the_command(tmp_path, iris, capsys, where):
    assert main(["run", str(iris), "-o", str(tmp_path / "out"), "-q"]) == 0
    args = ["-v", "run", str(iris)] if where == "before" else ["run", "-v", str(iris)]
    assert main([*args, "-o", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert "ranker variance: from the cache" in err  # logged at -v only
    assert main(["run", str(iris), "-o", str(tmp_path / "out")]) == 0
    assert "from the cache" not in capsys.readouterr().err


def test_quiet_and_verbose_exclude_each_other(iris, capsys):
    assert main(["-q", "validate", str(iris), "-v"]) == 2
    assert capsys.readouterr().err.strip() == "error: -q and -v exclude each other"
    assert main(["-q", "validate", str(iris)]) == 0
    assert capsys.readouterr().out == ""


def test_an_unexpected_error_is_one_line_too(iris, capsys, monkeypatch):
    import moweights.pipeline

    def broken(*args, **kwargs):
        raise AttributeError("a defect")

    monkeypatch.setattr(moweights.pipeline, "run", broken)
    assert main(["run", str(iris), "-q"]) == 1
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        "error: unexpected AttributeError: a defect (run with -v for the traceback, and "
        "please report it)"
    ]
    assert main(["run", str(iris), "-v"]) == 1
    assert "Traceback" in capsys.readouterr().err  # asked for


def test_files_the_user_names_for_writing(tmp_path, capsys):
    (tmp_path / "taken").write_text("a file")
    for args in (["init", str(tmp_path / "taken" / "x.toml")],
                 ["schema", "-o", str(tmp_path / "taken" / "x.json")]):  # fmt: skip
        assert main(args) == 2
        err = capsys.readouterr().err
        assert err.strip().splitlines() == [
            f"error: cannot write {args[-1]}: {tmp_path / 'taken'} is a file, not a folder"
        ]
    proc = _command("init", "taken/x.toml", cwd=tmp_path)
    _assert_one_line(proc, "taken is a file")


def test_a_refusing_file_system_is_one_line(iris, capsys, monkeypatch):
    import moweights.pipeline

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device", "results/scores.csv")

    monkeypatch.setattr(moweights.pipeline, "run", full)
    assert main(["run", str(iris), "-q"]) == 1
    assert capsys.readouterr().err.strip().splitlines() == [
        "error: No space left on device (results/scores.csv)"
    ]


# ------------------------------------------------------------------ named things that are not there
# (issue 37 item 8: `fetch` of an unknown name exited 1, `recommend /etc` said "not found")
@pytest.mark.parametrize(
    ("source", "name", "needle"),
    [("pmlb", "nosuchname", "unknown PMLB data set 'nosuchname'; known: sonar"),
     ("skfeature", "nope", "unknown scikit-feature data set 'nope'; known: ")],
)  # fmt: skip
def test_fetch_of_an_unknown_name_is_bad_usage(tmp_path, source, name, needle):
    proc = _command("fetch", source, name, "--data-home", str(tmp_path / "cache"), cwd=tmp_path)
    _assert_one_line(proc, needle, code=2)
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.*"))


def test_recommend_names_a_folder_and_a_fifo_for_what_they_are(tmp_path):
    (tmp_path / "data.csv").mkdir()
    _assert_one_line(
        _command("recommend", "data.csv", cwd=tmp_path), "data.csv is a folder, not a data file"
    )
    _assert_one_line(_command("recommend", "/etc", cwd=tmp_path), "/etc is a folder")
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "pipe.csv")
        proc = _command("recommend", "pipe.csv", cwd=tmp_path)  # must not wait for a writer
        _assert_one_line(proc, "pipe.csv is not a regular file (a FIFO)")
    _assert_one_line(_command("recommend", "absent.csv", cwd=tmp_path), "not found: absent.csv")


def test_a_config_naming_a_folder_as_its_data_says_so(tmp_path):
    (tmp_path / "data.csv").mkdir()
    path = _config(tmp_path, '[data]\npath = "data.csv"\n')
    for command in ("validate", "run"):
        proc = _command(command, str(path), *_out(command), cwd=tmp_path)
        _assert_one_line(proc, "data.csv is a folder, not a data file")
