"""The old module paths are gone: none imports, none is a file, and nothing names one.

Nothing has been released (no tag, no changelog, no published install line), so the paths
that moved when the packages were regrouped went without a deprecation period (issue 49
item 1): each old path below fails to import, is no attribute of its package, is no file
of the repository, and no module, test, script, notebook or Markdown ``python`` block of
the repository imports it. Its names live in the new home named beside it.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.quick  # in the quick suite (pytest -m quick): see pyproject.toml

REPO = Path(__file__).resolve().parents[1]

#: old module path -> the module that holds its names now
REMOVED = {
    # the deprecated re-export modules (issue 49 item 1)
    "aggregation.bayes": "aggregation.evaluation.bayes",
    "aggregation.clustering": "aggregation.evaluation.clustering",
    "aggregation.curves": "aggregation.evaluation.topk",
    "aggregation.error_curves": "aggregation.evaluation.error_curves",
    "aggregation.stats": "aggregation.evaluation.stats",
    "moweights.cache": "moweights.pipeline.cache",
    "moweights.h5ad": "moweights.data.readers.h5ad",
    "moweights.lock": "moweights.pipeline.lock",
    "moweights.render": "moweights.output.report",
    "moweights.report": "moweights.output",
    "moweights.schema": "moweights.config",
    "rankers._moved": "rankers",  # the deprecation helper itself: no path warns any more
    # one data wing, moweights.data (issue 49 item 2)
    "moweights.datafiles": "moweights.data.readers",
    "moweights.datasets": "moweights.data",  # its modules: data.loaders, data.synthetic
    "moweights.fetch": "moweights.data.fetch",
    "moweights.planted": "moweights.data.planted",
    "moweights.preprocess": "moweights.data.preprocess",
    "moweights.transform": "moweights.data.transform",
    # removed when reading files left aggregation (issue 38 item 1)
    "aggregation.datafiles": "moweights.data.readers",
    "aggregation.federated.io": "moweights.data.readers",
    "aggregation.federated.flower": "moweights.federated.flower",
    "aggregation.federated.flower_app": "moweights.federated.flower_app",
    "aggregation.federated.local": "moweights.federated.local",
    "aggregation.flower": "moweights.federated.flower",
}

#: where the repository's own code, tests, scripts and docs live
SCANNED = ("rankers", "aggregation", "moweights", "tests", "benchmarks", "examples", "docs")


@pytest.mark.parametrize(("old", "new"), REMOVED.items())
def test_an_old_path_imports_no_more_and_its_new_home_does(old, new):
    with pytest.raises(ModuleNotFoundError, match=re.escape(old)):
        importlib.import_module(old)
    parent, child = old.rsplit(".", 1)
    with pytest.raises(AttributeError, match=f"has no attribute {child!r}"):
        getattr(importlib.import_module(parent), child)
    assert importlib.import_module(new).__name__ == new
    assert not (REPO / f"{old.replace('.', '/')}.py").exists()
    assert not (REPO / old.replace(".", "/")).exists()


@pytest.mark.parametrize("package", ["rankers", "aggregation", "moweights"])
def test_no_old_path_is_listed_by_its_package(package):
    children = {old.rsplit(".", 1)[1] for old in REMOVED if old.rsplit(".", 1)[0] == package}
    module = importlib.import_module(package)
    assert children & {*dir(module), *module.__all__} == set()


def test_the_federated_read_table_is_gone_from_aggregation():
    import aggregation.federated

    with pytest.raises(AttributeError, match="has no attribute 'read_table'"):
        aggregation.federated.read_table  # noqa: B018
    assert "read_table" not in aggregation.federated.__all__


def test_no_module_warns_of_a_moved_path():
    """No module of the packages is a re-export that warns (the pattern that went)."""
    found = [
        path.relative_to(REPO).as_posix()
        for package in ("rankers", "aggregation", "moweights")
        for path in (REPO / package).rglob("*.py")
        if "warn_moved(" in path.read_text(encoding="utf-8")
    ]
    assert found == []


def _python_sources() -> list[tuple[Path, str]]:
    """The Python the repository holds: modules, notebooks' code cells, Markdown's
    ``python`` blocks (this file left out)."""
    paths = [REPO / "README.md"]
    for folder in SCANNED:
        paths += sorted((REPO / folder).rglob("*"))
    sources = []
    for path in paths:
        if path == Path(__file__) or "_build" in path.parts or not path.is_file():
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
    return [name for name in found if name in REMOVED]


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
        from rankers._moved import warn_moved
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
            "rankers._moved",
        ]
    )
