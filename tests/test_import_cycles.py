"""No import circle anywhere in the repository: the three packages, the benchmarks and the
tests, every import counted (those inside functions and under ``TYPE_CHECKING`` too).

import-linter's ``acyclic_siblings`` contract (tests/test_architecture.py) keeps sibling
modules of the product apart; this scan takes the whole graph of modules, product,
``benchmarks`` and ``tests``, as grimp builds it, and lists every strongly connected
component of more than one module. Each check is shown to fail on a planted circle.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.quick  # in the quick suite (pytest -m quick): see pyproject.toml

REPO = Path(__file__).resolve().parents[1]
#: every top-level package of the repository whose modules import one another
PACKAGES = ("rankers", "aggregation", "moweights", "benchmarks", "tests")

pytest.importorskip("grimp", reason="needs the 'test' extra: pip install '.[test]'")

# run in a child whose only path is ``root``: pytest's own module names for the tests
# (``--import-mode=importlib``) and any ``tests`` package installed elsewhere stay out
_SCAN = textwrap.dedent(
    """
    import importlib.util, json, sys
    from pathlib import Path
    import grimp

    root, packages = Path(sys.argv[1]).resolve(), sys.argv[2:]
    for name in packages:  # each package is the one under root, not one installed elsewhere
        spec = importlib.util.find_spec(name)
        where = [Path(p).resolve() for p in spec.submodule_search_locations or []]
        assert root / name in where, (name, where)
    graph = grimp.build_graph(*packages, cache_dir=None, exclude_type_checking_imports=False)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in sorted(graph.modules)}
    print(json.dumps(edges))
    """
)


def _import_graph(root: Path, packages: tuple[str, ...]) -> dict[str, list[str]]:
    env = {"PYTHONPATH": str(root), "PATH": "", "HOME": str(root)}
    done = subprocess.run(
        [sys.executable, "-c", _SCAN, str(root), *packages],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def circles(edges: dict[str, list[str]]) -> list[list[str]]:
    """Every strongly connected component of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(edges.get(start, ())))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(edges.get(nxt, ()))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def test_no_import_circle_in_the_whole_repository():
    edges = _import_graph(REPO, PACKAGES)
    # the scan saw all of it: every package, the benchmarks' harness and a test module
    assert {m.partition(".")[0] for m in edges} == set(PACKAGES)
    assert "benchmarks._common" in edges["benchmarks._protocol"]
    assert "tests.benchmarks.test_protocols_smoke" in edges
    assert circles(edges) == []


def test_a_planted_circle_is_found(tmp_path):
    # the shape the benchmarks had: a helper importing the harness inside a function,
    # the harness importing the helper at the top; and a three-module ring in tests
    bench = tmp_path / "benchmarks"
    (bench / "protocols").mkdir(parents=True)
    (bench / "__init__.py").write_text("")
    (bench / "protocols" / "__init__.py").write_text("")
    (bench / "_common.py").write_text(
        "def load():\n    from benchmarks._protocol import load_dataset\n    return load_dataset\n"
    )
    (bench / "_protocol.py").write_text(
        "from benchmarks._common import load\n\ndef load_dataset():\n    return 1\n"
    )
    (bench / "protocols" / "run.py").write_text("from benchmarks import _protocol\n")
    tests = tmp_path / "tests"  # a namespace package, as the repository's tests are
    tests.mkdir()
    for name, other in (("test_a", "test_b"), ("test_b", "test_c"), ("test_c", "test_a")):
        (tests / f"{name}.py").write_text(f"from tests import {other}  # noqa\n")
    edges = _import_graph(tmp_path, ("benchmarks", "tests"))
    assert circles(edges) == [
        ["benchmarks._common", "benchmarks._protocol"],
        ["tests.test_a", "tests.test_b", "tests.test_c"],
    ]


def test_circles_by_hand():
    assert circles({"a": ["b"], "b": ["c"], "c": []}) == []
    assert circles({"a": ["a"]}) == []  # a module importing itself is no circle of modules
    assert circles({"a": ["b"], "b": ["a", "c"], "c": ["d"], "d": ["c"]}) == [
        ["a", "b"],
        ["c", "d"],
    ]
