"""benchmarks/README.md indexes every script, each run as a module of the package.

The index names every script by its path under ``benchmarks/`` and its command
``python -m benchmarks.<folder>.<script>``; no file in ``benchmarks/`` puts anything on
``sys.path``; the package stays out of the wheel; asv's discovery (it imports every module
of the package) finds the speed suite's classes and nothing else.
"""

from __future__ import annotations

import fnmatch
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import tomllib

from benchmarks._common import child_env, make_clusters
from benchmarks.speed import suite

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "benchmarks"
INDEX = BENCH / "README.md"


def scripts() -> list[Path]:
    """Every script of benchmarks/: its Python files but the package files and the shared
    modules (``_common``, ``_protocol``)."""
    return sorted(
        path
        for path in BENCH.rglob("*.py")
        if path.name != "__init__.py"
        and not path.name.startswith("_")
        and "__pycache__" not in path.parts
    )


def index_rows() -> list[str]:
    """The table rows of the index section (up to the next top-level section)."""
    text = INDEX.read_text(encoding="utf-8")
    start = text.index("\n## Index\n")
    end = text.index("\n## ", start + 1)
    return [line for line in text[start:end].splitlines() if line.startswith("| `")]


def test_the_index_names_every_script_with_its_module_command():
    rows = index_rows()
    named = {row.split("|")[1].strip().strip("`") for row in rows}
    missing, no_command = [], []
    for path in scripts():
        rel = path.relative_to(BENCH)
        # the index names a script by its path under its folder: speed/speed_suite.py
        if rel.as_posix() not in named:
            missing.append(rel.as_posix())
        elif rel.parts[0] != "results":
            module = "benchmarks." + ".".join(rel.with_suffix("").parts)
            row = next(r for r in rows if r.split("|")[1].strip().strip("`") == rel.as_posix())
            if f"python -m {module}" not in row and "asv run" not in row:
                no_command.append(rel.as_posix())
    assert missing == []
    assert no_command == []


def test_every_script_the_index_names_exists():
    for row in index_rows():
        rel = row.split("|")[1].strip().strip("`")
        assert (BENCH / rel).is_file(), rel
    commands = re.findall(r"python -m (benchmarks(?:\.\w+)+)", INDEX.read_text(encoding="utf-8"))
    for module in set(commands):
        assert (REPO / Path(*module.split("."))).with_suffix(".py").is_file(), module


def test_nothing_in_benchmarks_edits_sys_path():
    offenders = []
    for path in BENCH.rglob("*"):
        if path.is_file() and path.suffix in {".py", ".md", ".sh", ".txt", ".toml"}:
            text = path.read_text(encoding="utf-8", errors="replace")
            if "sys.path.insert" in text or "sys.path.append" in text:
                offenders.append(path.relative_to(BENCH).as_posix())
    assert offenders == []


def test_every_folder_of_scripts_is_a_package_and_none_is_in_the_wheel():
    for path in scripts():
        if path.relative_to(BENCH).parts[0] != "results":
            assert (path.parent / "__init__.py").is_file(), path
    assert (BENCH / "__init__.py").is_file()
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    include = config["tool"]["setuptools"]["packages"]["find"]["include"]
    folders = {p.parent.relative_to(REPO) for p in BENCH.rglob("__init__.py")}
    for folder in folders:
        name = ".".join(folder.parts)
        assert not any(fnmatch.fnmatchcase(name, pattern) for pattern in include), name


#: asv's discovery (asv_runner.discovery): import every module of the benchmark package
#: and collect the functions and the methods of classes named with a benchmark prefix
_DISCOVER = r"""
import importlib, inspect, json, pkgutil, sys
import benchmarks
PREFIXES = ("time_", "timeraw_", "peakmem_", "mem_", "track_")
found = []
for info in pkgutil.walk_packages(benchmarks.__path__, "benchmarks."):
    module = importlib.import_module(info.name)
    for name, obj in vars(module).items():
        if name.startswith("_"):
            continue
        if inspect.isclass(obj) and obj.__module__ == module.__name__:
            found += [f"{info.name}.{name}.{m}" for m, _ in inspect.getmembers(obj)
                      if m.startswith(PREFIXES)]
        elif inspect.isfunction(obj) and name.startswith(PREFIXES):
            found.append(f"{info.name}.{name}")
print(json.dumps(sorted(found)))
"""


def test_asv_discovery_imports_every_module_and_finds_the_suite_only():
    done = subprocess.run(
        [sys.executable, "-c", _DISCOVER],
        capture_output=True,
        text=True,
        env=child_env(),
        cwd=REPO.parent,  # not the repository: the package comes through PYTHONPATH
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == [
        f"benchmarks.speed.suite.{cls}.{method}"
        for cls in ("PeerFit", "RankerFit")
        for method in ("peakmem_fit", "time_fit")
    ]


def test_the_suite_times_every_registered_ranker_on_the_runners_data():
    import rankers

    shapes, names = suite.RankerFit.params
    assert list(names) == sorted(rankers.available()["name"])
    assert suite.RankerFit.param_names == ("shape", "ranker")
    assert list(shapes) == list(suite.SHAPES)
    bench = suite.RankerFit()
    bench.setup("small", "variance")
    X, _ = make_clusters(*suite.SHAPES["small"], seed=suite.SEED, n_classes=suite.N_CLASSES)
    np.testing.assert_allclose(bench.run(), X.var(axis=0))
    bench.time_fit("small", "variance")
    bench.peakmem_fit("small", "variance")


def test_a_peer_that_is_not_installed_is_asvs_skip(monkeypatch):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    bench = suite.PeerFit()
    try:
        bench.setup("small", "skrebate.ReliefF")
    except NotImplementedError as why:
        assert "skrebate" in str(why)
    else:
        raise AssertionError("a missing peer must raise NotImplementedError")
