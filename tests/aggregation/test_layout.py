"""The package layout: lazy façades, cheap imports, and every public name that the README,
the docs and the examples use still importing (the deprecated old module paths:
tests/test_old_paths.py)."""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import aggregation
import aggregation.evaluation
import aggregation.federated

pytestmark = pytest.mark.quick  # in the quick suite (pytest -m quick): see pyproject.toml

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("package", [aggregation, aggregation.evaluation, aggregation.federated])
def test_every_listed_name_resolves_and_dir_lists_it(package):
    for name in package.__all__:
        assert getattr(package, name) is not None, name
    assert set(package.__all__) <= set(dir(package))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        package.nope  # noqa: B018


def test_facade_names_are_the_defining_modules_objects():
    from aggregation.evaluation.topk import topk_curve
    from aggregation.federated.rank import rank_sites
    from aggregation.ranking import Ranking

    assert aggregation.topk_curve is topk_curve and aggregation.Ranking is Ranking
    assert aggregation.federated.rank_sites is rank_sites is aggregation.rank_sites


@pytest.mark.parametrize("module", ["rankers", "aggregation"])
def test_importing_a_package_imports_no_heavy_library(module):
    code = (
        f"import sys, {module}; "
        "print(sorted(m for m in ('sklearn', 'scipy', 'pandas', 'matplotlib', 'joblib') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


#: modules that kept their names through the regrouping (as packages now) and names they hold
KEPT_PATHS = {
    "aggregation.federated": ["rank_sites", "rank_one_site", "AGGREGATES", "SiteRankings"],
    "aggregation.plots": ["plot_cd_diagram", "plot_topk_curves", "plot_error_curves"],
}


@pytest.mark.parametrize(("module", "names"), KEPT_PATHS.items())
def test_kept_module_paths_still_serve_their_names(module, names):
    mod = importlib.import_module(module)
    for name in names:
        assert getattr(mod, name) is not None


def _documented_imports() -> set[tuple[str, str]]:
    """(module, name) of every ``from rankers/aggregation... import ...`` the docs show."""
    texts = []
    for path in [REPO / "README.md", *REPO.glob("docs/**/*.md"), *REPO.glob("examples/**/*")]:
        if path.suffix in (".py", ".md", ".toml"):
            texts.append(path.read_text(encoding="utf-8"))
        elif path.suffix == ".ipynb":
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            texts += ["".join(c["source"]) for c in cells]
    found = set()
    package = r"((?:aggregation|rankers)[\w.]*)"
    pattern = re.compile(rf"^\s*from {package} import (?:\(([^)]*)\)|([^\n(]*))", re.M)
    bare = re.compile(rf"^\s*import {package}", re.M)
    for text in texts:
        for module, grouped, line in pattern.findall(text):
            names = (grouped or line).split("#")[0].split(",")
            found |= {(module, n.strip()) for n in names if n.strip()}
        found |= {(m, "") for m in bare.findall(text)}
    return found


def test_every_import_the_readme_docs_and_examples_show_works():
    imports = _documented_imports()
    assert ("aggregation.plots", "plot_topk_curves") in imports  # the scan finds the notebooks
    for module, name in sorted(imports):
        mod = importlib.import_module(module)
        if name:
            assert hasattr(mod, name), f"from {module} import {name}"
