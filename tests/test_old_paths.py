"""The deprecated old module paths (``aggregation.stats``, ``moweights.cache``, ...), and
the removed ones.

Each deprecated path still serves its names until moweights 0.2.0, warns when imported --
naming its new home, which does hold every name, and the release that removes it, at the
line that imported it -- and nothing in the repository imports one any more. The removed
paths import no more, and nothing in the repository names them either.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

import moweights
from rankers._moved import REMOVED_IN

pytestmark = pytest.mark.quick  # in the quick suite (pytest -m quick): see pyproject.toml

REPO = Path(__file__).resolve().parents[1]

#: the old module paths, each a re-export module beside its new home
MOVED = (
    "aggregation.bayes",
    "aggregation.clustering",
    "aggregation.curves",
    "aggregation.error_curves",
    "aggregation.stats",
    "moweights.cache",
    "moweights.h5ad",
    "moweights.lock",
    "moweights.render",
    "moweights.report",
    "moweights.schema",
)

#: removed old paths -> where their names live now. They would have had to import upward
#: once reading files left aggregation (docs/design.md, "Old paths warn, then go"), so they
#: went at once (issue 38 item 1 allows removing an old path outright).
REMOVED = {
    "aggregation.datafiles": "moweights.datafiles",
    "aggregation.federated.io": "moweights.datafiles",
    "aggregation.federated.flower": "moweights.federated.flower",
    "aggregation.federated.flower_app": "moweights.federated.flower_app",
    "aggregation.federated.local": "moweights.federated.local",
    "aggregation.flower": "moweights.federated.flower",
}

#: where the repository's own code, tests, scripts and docs live
SCANNED = ("rankers", "aggregation", "moweights", "tests", "benchmarks", "examples", "docs")


def _forget(monkeypatch, old: str) -> None:
    """Make the next access import ``old`` afresh (both undone after the test)."""
    parent, child = old.rsplit(".", 1)
    monkeypatch.delitem(sys.modules, old, raising=False)
    package = importlib.import_module(parent)
    if child in vars(package):  # (hasattr would import it through the lazy __getattr__)
        monkeypatch.delattr(package, child)


def _moved_warnings(record) -> list[warnings.WarningMessage]:
    return [w for w in record if "will be removed in moweights" in str(w.message)]


def test_the_list_is_every_module_that_warns():
    calls = {
        ".".join(path.relative_to(REPO).with_suffix("").parts)
        for package in ("aggregation", "moweights", "rankers")
        for path in (REPO / package).rglob("*.py")
        if "warn_moved(__name__" in path.read_text(encoding="utf-8")
    }
    assert calls == set(MOVED)


def test_the_removal_release_is_the_next_minor_release():
    major, minor = (int(part) for part in moweights.__version__.split(".")[:2])
    assert f"{major}.{minor + 1}.0" == REMOVED_IN


@pytest.mark.parametrize("old", MOVED)
def test_an_old_path_warns_and_its_new_home_holds_every_name(old, monkeypatch):
    _forget(monkeypatch, old)
    with pytest.warns(DeprecationWarning) as record:
        module = importlib.import_module(old)
    (warning,) = _moved_warnings(record)
    message = str(warning.message)
    assert message.startswith(f"{old} is deprecated") and f"moweights {REMOVED_IN}" in message
    assert warning.filename == __file__  # the line that imported it, not the import machinery
    new = re.fullmatch(r".*import from (.+) instead", message).group(1)
    homes = [importlib.import_module(name) for name in re.split(r", | and ", new)]
    assert old not in new and all(home.__name__ not in MOVED for home in homes)
    for name in module.__all__:
        value = getattr(module, name)
        assert any(getattr(home, name, None) is value for home in homes), (old, name, new)


@pytest.mark.parametrize("old", MOVED)
def test_an_old_path_reached_as_an_attribute_warns_at_that_line(old, monkeypatch):
    _forget(monkeypatch, old)
    parent, child = old.rsplit(".", 1)
    package = importlib.import_module(parent)
    with pytest.warns(DeprecationWarning) as record:
        module = getattr(package, child)  # served by the package's lazy __getattr__
    (warning,) = _moved_warnings(record)
    assert warning.filename == __file__ and module is sys.modules[old]


@pytest.mark.parametrize("package", ["aggregation", "moweights"])
def test_star_imports_and_dir_leave_the_old_paths_alone(package):
    code = (
        "import sys, warnings\n"
        "warnings.simplefilter('error', DeprecationWarning)\n"
        f"from {package} import *\n"
        f"import {package}\n"
        f"print(sorted(set(dir({package})) & {set(MOVED)!r}))\n"
        f"print(sorted(m for m in sys.modules if m in {set(MOVED)!r}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["[]", "[]"]


@pytest.mark.parametrize(("old", "new"), REMOVED.items())
def test_a_removed_path_imports_no_more_and_its_new_home_does(old, new):
    with pytest.raises(ModuleNotFoundError, match=old.replace(".", r"\.")):
        importlib.import_module(old)
    parent, child = old.rsplit(".", 1)
    with pytest.raises(AttributeError, match=f"has no attribute {child!r}"):
        getattr(importlib.import_module(parent), child)
    importlib.import_module(new)
    assert not (REPO / f"{old.replace('.', '/')}.py").exists()
    assert not (REPO / old.replace(".", "/")).exists()


def test_the_federated_read_table_is_gone_from_aggregation():
    import aggregation.federated

    with pytest.raises(AttributeError, match="has no attribute 'read_table'"):
        aggregation.federated.read_table  # noqa: B018
    assert "read_table" not in aggregation.federated.__all__


def test_no_module_of_the_packages_imports_an_old_path():
    """Import every module of the three packages with the deprecation made an error."""
    code = textwrap.dedent(
        f"""
        import importlib, pkgutil, warnings
        warnings.filterwarnings(
            "error", ".* will be removed in moweights", DeprecationWarning
        )
        moved = {set(MOVED)!r}
        failed, imported = [], 0
        for package in ("rankers", "aggregation", "moweights"):
            path = importlib.import_module(package).__path__
            for info in pkgutil.walk_packages(path, package + "."):
                name = info.name
                if name in moved or name.endswith("__main__"):
                    continue
                try:
                    importlib.import_module(name)
                    imported += 1
                except ImportError as error:  # an optional extra not installed
                    if (error.name or "").split(".")[0] in ("rankers", "aggregation", "moweights"):
                        failed.append(f"{{name}}: {{error}}")
                except DeprecationWarning as warning:
                    failed.append(f"{{name}}: {{warning}}")
        print(imported, *failed, sep="\\n")
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    imported, *failed = out.stdout.splitlines()
    assert failed == [] and int(imported) > 60  # the walk reached the modules


def _python_sources() -> list[tuple[Path, str]]:
    """The Python the repository holds: modules, notebooks' code cells, Markdown's
    ``python`` blocks (the deprecated modules and this file left out)."""
    skip = {REPO / f"{old.replace('.', '/')}.py" for old in MOVED} | {Path(__file__)}
    paths = [REPO / "README.md"]
    for folder in SCANNED:
        paths += sorted((REPO / folder).rglob("*"))
    sources = []
    for path in paths:
        if path in skip or "_build" in path.parts or not path.is_file():
            continue
        if path.suffix == ".py":
            sources.append((path, path.read_text(encoding="utf-8")))
        elif path.suffix == ".ipynb":
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            for cell in cells:
                if cell["cell_type"] == "code":
                    lines = "".join(cell["source"]).splitlines()
                    code = [line for line in lines if not line.lstrip().startswith(("%", "!"))]
                    sources.append((path, "\n".join(code)))
        elif path.suffix == ".md":
            text = path.read_text(encoding="utf-8")
            for block in re.findall(r"```(?:python|py)\n(.*?)```", text, re.S):
                sources.append((path, block))
    return sources


def _old_path_uses(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found += [node.module]
            found += [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            found.append(f"{node.value.id}.{node.attr}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append(node.value.split(":")[0])  # "aggregation.flower:server_app"
    return [name for name in found if name in MOVED or name in REMOVED]


def test_nothing_in_the_repository_uses_an_old_path():
    sources = _python_sources()
    assert any(path.suffix == ".ipynb" for path, _ in sources)  # the scan reaches notebooks
    uses = []
    for path, source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:  # a Markdown block of pseudo-code
            continue
        uses += [f"{path.relative_to(REPO)}: {name}" for name in _old_path_uses(tree)]
    assert uses == []


def test_the_scan_finds_every_way_of_using_an_old_path():
    source = textwrap.dedent(
        """
        import aggregation.stats
        from aggregation import curves
        from moweights.cache import StepCache
        moweights.lock.RunLock
        app = "aggregation.flower:server_app"
        import aggregation.federated.flower as fl
        from aggregation.datafiles import read_table
        fingerprint(["aggregation.error_curves"])
        from aggregation.evaluation import stats  # the new home: fine
        """
    )
    assert sorted(_old_path_uses(ast.parse(source))) == sorted(
        [
            "aggregation.stats",
            "aggregation.curves",
            "moweights.cache",
            "moweights.lock",
            "aggregation.flower",
            "aggregation.federated.flower",
            "aggregation.datafiles",
            "aggregation.error_curves",
        ]
    )
