"""The moweights layout: the packages keep serving the names they had before the regrouping,
and every ``moweights`` import or dotted name the README, the docs and the examples show
works (the deprecated old module paths: tests/test_old_paths.py)."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.quick  # in the quick suite (pytest -m quick): see pyproject.toml

REPO = Path(__file__).resolve().parents[2]

#: module -> names outside code may import from it (kept through the regrouping)
KEPT_PATHS = {
    "moweights": ["run", "load_config", "parse_config", "data", "MOWeighting"],
    "moweights.pipeline": ["run", "RunResult", "load_data", "load_units"],
    "moweights.config": [
        "AGGREGATIONS", "RankerSpec", "RunConfig", "Settings", "apply_overrides",
        "load_config", "parse_config",
    ],
}  # fmt: skip


@pytest.mark.parametrize(("module", "names"), KEPT_PATHS.items())
def test_kept_module_paths_still_serve_their_names(module, names):
    mod = importlib.import_module(module)
    for name in names:
        assert getattr(mod, name) is not None, f"{module}.{name}"


def test_the_schema_lists_the_combination_methods_aggregation_has():
    from aggregation.combine import METHODS
    from moweights.config import AGGREGATIONS

    assert tuple(METHODS) == AGGREGATIONS


#: dotted names in the docs that are entry-point groups, not modules
ENTRY_POINT_GROUPS = {"moweights.rankers"}


def _texts() -> list[str]:
    texts = []
    for path in [REPO / "README.md", *REPO.glob("docs/*.md"), *REPO.glob("examples/**/*")]:
        if path.suffix in (".py", ".md", ".toml"):
            texts.append(path.read_text(encoding="utf-8"))
        elif path.suffix == ".ipynb":
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            texts += ["".join(c["source"]) for c in cells]
    return texts


def test_every_moweights_import_the_readme_docs_and_examples_show_works():
    pattern = re.compile(r"^\s*from (moweights[\w.]*) import (?:\(([^)]*)\)|([^\n(]*))", re.M)
    found = set()
    for text in _texts():
        for module, grouped, line in pattern.findall(text):
            names = (grouped or line).split("#")[0].split(",")
            found |= {(module, n.split(" as ")[0].strip()) for n in names if n.strip()}
    assert ("moweights.weighting", "MOWeighting") in found  # the scan finds the examples
    for module, name in sorted(found):
        assert hasattr(importlib.import_module(module), name), f"from {module} import {name}"


def test_every_dotted_moweights_name_the_readme_and_docs_show_exists():
    texts = [(REPO / "README.md").read_text(encoding="utf-8")]
    texts += [p.read_text(encoding="utf-8") for p in REPO.glob("docs/*.md")]
    names = set()
    for text in texts:
        names |= set(re.findall(r"`(moweights(?:\.[A-Za-z_]\w*)+)", text))
    assert "moweights.weighting.MOWeighting" in names
    for dotted in sorted(names - ENTRY_POINT_GROUPS):
        parts = dotted.split(".")
        for i in range(len(parts), 0, -1):  # the longest importable prefix, then attributes
            try:
                obj = importlib.import_module(".".join(parts[:i]))
            except ImportError:
                continue
            for attr in parts[i:]:
                assert hasattr(obj, attr), dotted
                obj = getattr(obj, attr)
            break
