"""A run folder is made by moweights or refused, is read back bounded and never through
links, and its manifest tells the truth about what was written (issue 37 items 2, 4, 7).

The hostile cases run the real console script in a process of its own, so a hang cannot
hang the suite (the timeouts are safety bounds, not what is tested).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from moweights.cli import main
from moweights.config import parse_config
from moweights.errors import OutputFolderError
from moweights.pipeline import run

SCRIPT = Path(sys.executable).with_name("moweights")
QUICK = """
[data]
builtin = "iris"
[[rankers]]
name = "variance"
[[rankers]]
name = "laplacian"
[evaluation]
enabled = false
"""
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


def _one_line(proc: subprocess.CompletedProcess, *needles: str, code: int) -> str:
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.strip().splitlines() if line.startswith("error: ")]
    assert lines, proc.stderr
    for needle in needles:
        assert needle in lines[0], (needle, proc.stderr)
    return lines[0]


def _manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())


def _temporary_files(out: Path) -> list[str]:
    return sorted(p.name for p in out.rglob("*.tmp"))


@pytest.fixture
def quick(tmp_path) -> Path:
    path = tmp_path / "quick.toml"
    path.write_text(textwrap.dedent(QUICK))
    return path


# ------------------------------------------------- item 2: -o into a folder moweights did not make
def test_a_folder_of_the_users_is_refused_and_left_untouched(tmp_path, quick):
    mine = tmp_path / "d"
    mine.mkdir()
    for name in ("config.json", "report.html", "scores.csv"):
        (mine / name).write_text("mine\n")
    proc = _command("run", str(quick), "-o", "d", cwd=tmp_path)
    _one_line(proc, "output folder d is not empty", "not made by moweights", "--force", code=2)
    assert sorted(p.name for p in mine.iterdir()) == ["config.json", "report.html", "scores.csv"]
    assert all((mine / n).read_text() == "mine\n" for n in ("config.json", "report.html"))
    with pytest.raises(OutputFolderError, match="not made by moweights"):
        run(parse_config(RAW), mine)  # the Python API refuses it too


def test_force_writes_into_it(tmp_path, quick):
    mine = tmp_path / "d"
    mine.mkdir()
    (mine / "config.json").write_text("mine\n")
    (mine / "notes.txt").write_text("keep me\n")
    proc = _command("run", str(quick), "-o", "d", "--force", "-q", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((mine / "config.json").read_text())["data"]["builtin"] == "iris"
    assert (mine / "notes.txt").read_text() == "keep me\n"  # not ours: kept
    assert _manifest(mine)["status"] == "complete"
    # made by moweights now: the next run needs no --force
    assert _command("run", str(quick), "-o", "d", "-q", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize("content", ["empty", "lock and cache only"])
def test_an_empty_folder_or_one_with_our_hidden_files_is_used(tmp_path, content):
    out = tmp_path / "out"
    out.mkdir()
    if content != "empty":
        (out / ".cache").mkdir()
    assert run(parse_config(RAW), out).status == "complete"


def test_a_manifest_that_is_not_ours_does_not_make_a_folder_ours(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "manifest.json").write_text('{"files": "mine"}')
    (out / "report.html").write_text("mine")
    with pytest.raises(OutputFolderError, match="not made by moweights"):
        run(parse_config(RAW), out)


def test_a_rerun_replaces_the_earlier_runs_files_without_leftovers(tmp_path):
    out = tmp_path / "out"
    with_curves = {**RAW, "evaluation": {"cv": 3, "topk": {"n_random": 2},
                                         "error_curves": {"enabled": False},
                                         "clustering": {"enabled": False}}}  # fmt: skip
    run(parse_config(with_curves), out)
    assert (out / "curves.csv").is_file()
    (out / "report.html").unlink()
    (out / "report.html").symlink_to(tmp_path / "elsewhere.html")  # planted in our folder
    run(parse_config(RAW), out)  # evaluation off: the earlier curves are not this run's
    listed = set(_manifest(out)["files"])
    on_disk = {p.name for p in out.iterdir() if not p.name.startswith(".")} - {"manifest.json"}
    assert on_disk == listed, on_disk ^ listed
    assert "curves.csv" not in on_disk
    assert not (out / "report.html").is_symlink() and not (tmp_path / "elsewhere.html").exists()


# ------------------------------------------------- item 4: read back bounded, never through links
def _bounded() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, resource.RLIM_INFINITY))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("name", ["summary.json", "scores.csv", "manifest.json"])
@pytest.mark.parametrize("kind", ["link", "fifo"])
def test_report_refuses_results_that_are_links_or_fifos(tmp_path, quick, name, kind):
    assert _command("run", str(quick), "-o", "out", "-q", cwd=tmp_path).returncode == 0
    out = tmp_path / "out"
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"status": "SECRET-OUTSIDE", "data": {"name": "SECRET"}}))
    (out / name).unlink()
    if kind == "link":
        (out / name).symlink_to(outside)
        why = "is a symbolic link"
    else:
        os.mkfifo(out / name)
        why = "not a regular file (a FIFO)"
    before = (out / "report.html").read_bytes()
    proc = _command("report", "out", cwd=tmp_path, timeout=600, preexec_fn=_bounded)
    _one_line(proc, str(Path("out") / name), why, code=2)
    assert (out / "report.html").read_bytes() == before  # nothing from outside embedded
    assert b"SECRET" not in (out / "report.html").read_bytes()


def test_report_refuses_an_oversized_table(tmp_path, quick):
    assert _command("run", str(quick), "-o", "out", "-q", cwd=tmp_path).returncode == 0
    with open(tmp_path / "out" / "ranks.csv", "wb") as f:  # 3 GB, sparse
        f.truncate(3 * 10**9)
    proc = _command("report", "out", cwd=tmp_path, timeout=600, preexec_fn=_bounded)
    _one_line(proc, "ranks.csv is 3 GB, larger than any file moweights writes", code=2)


# ------------------------------------------------- item 7: the manifest is written last, truthfully
def _limit_file_size(n_bytes: int):
    def limit():
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (n_bytes, n_bytes))

    return limit


@pytest.mark.skipif(sys.platform == "win32", reason="needs RLIMIT_FSIZE")
def test_a_file_size_limit_while_drawing_leaves_a_failed_manifest_naming_the_file(tmp_path):
    config = tmp_path / "plots.toml"
    config.write_text(textwrap.dedent(QUICK))
    free = tmp_path / "free"
    assert _command("run", str(config), "-o", "free", "-q", cwd=tmp_path).returncode == 0
    sizes = {p.name: p.stat().st_size for p in free.rglob("*") if p.is_file()}
    page = sizes.pop("report.html")
    limit = max(sizes.values()) + 1  # every file fits but the page (it embeds the figures)
    assert page > limit
    proc = _command("run", str(config), "-o", "out", cwd=tmp_path,
                    preexec_fn=_limit_file_size(limit))  # fmt: skip
    line = _one_line(proc, "cannot write", "report.html", "File too large", code=1)
    out = tmp_path / "out"
    manifest = _manifest(out)
    assert manifest["status"] == "failed", manifest
    assert "report.html" in manifest["message"] and "File too large" in manifest["message"]
    assert "report.html" not in manifest["files"]
    assert not (out / "report.html").exists()
    assert _temporary_files(out) == []
    assert json.loads((out / "summary.json").read_text())["status"] == "failed", line


def test_ctrl_c_while_drawing_leaves_a_partial_manifest(tmp_path, monkeypatch):
    import matplotlib.figure

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", interrupted)
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        run(parse_config(RAW), out)
    manifest = _manifest(out)
    assert manifest["status"] == "partial", manifest
    assert "interrupted (Ctrl-C) while drawing" in manifest["message"]
    assert "report.html" not in manifest["files"] and not (out / "report.html").exists()
    assert json.loads((out / "summary.json").read_text())["status"] == "partial"
    assert _temporary_files(out) == []
    monkeypatch.undo()
    assert main(["report", str(out), "-q"]) == 0  # the tables are whole: draw them again
    assert (out / "report.html").is_file()


def test_a_failed_write_removes_its_temporary_file_and_names_the_file(tmp_path):
    from moweights.errors import OutputWriteError
    from moweights.output.files import atomic_write

    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "inside").write_text("x")
    with pytest.raises(OutputWriteError, match=r"cannot write .*taken: ") as info:
        atomic_write(tmp_path / "taken", b"data")  # a non-empty folder cannot be replaced
    assert isinstance(info.value, OSError) and info.value.path == tmp_path / "taken"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


def test_a_write_never_goes_through_a_planted_temporary_name(tmp_path):
    from moweights.output.files import atomic_write

    target = tmp_path / "victim.txt"
    target.write_text("untouched")
    # the names the old writer used for its temporary file, planted as links
    for pid in {os.getpid(), os.getpid() + 1}:
        (tmp_path / f".scores.csv.{pid}.tmp").symlink_to(target)
    atomic_write(tmp_path / "scores.csv", "a,b\n")
    assert target.read_text() == "untouched"
    assert (tmp_path / "scores.csv").read_text() == "a,b\n"


def test_json_text_is_standard_and_fast_for_large_tables():
    import json

    from moweights.output.files import json_text

    small = json_text({"f": float("inf"), "g": [1.0, float("nan")], "h": -float("inf")})
    assert json.loads(small) == {"f": "inf", "g": [1.0, "nan"], "h": "-inf"}
    assert small.startswith("{\n  ")  # small texts stay indented for reading
    big = {f"g{i}": float(i) for i in range(30_000)}
    big["worst"] = float("nan")
    text = json_text(big)
    assert json.loads(text)["worst"] == "nan" and json.loads(text)["g7"] == 7.0
    assert "\n" not in text.rstrip("\n")  # compact: the compiled encoder wrote it
    assert json_text(big) == text
