"""The architecture as a contract: layering and no import cycles (import-linter, configured in
pyproject.toml), and no module importing another module's private names.

Run by the suite, so a change that breaks the layering fails the tests; each check is also
shown to fail on a tree with a planted violation.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.quick  # in the quick suite (pytest -m quick): see pyproject.toml

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("rankers", "aggregation", "moweights")
#: packages whose modules must not import each other's private names
NO_PRIVATE_IMPORTS = ("rankers", "aggregation", "moweights")

pytest.importorskip("importlinter", reason="needs the 'test' extra: pip install '.[test]'")


def _lint(root: Path) -> subprocess.CompletedProcess:
    """import-linter on the packages under ``root``, with ``root``'s contracts."""
    code = (
        "import sys; from importlinter.cli import lint_imports; "
        f"sys.exit(lint_imports(config_filename={str(root / 'pyproject.toml')!r}, "
        "no_cache=True, no_logo=True))"
    )
    env = {"PYTHONPATH": str(root), "PATH": "", "HOME": str(root)}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True
    )


def test_the_import_contracts_are_kept():
    done = _lint(REPO)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture
def tree(tmp_path) -> Path:
    """A copy of the packages and their contracts, to plant violations in."""
    for name in PACKAGES:
        shutil.copytree(REPO / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "tests").mkdir()
    shutil.copy(REPO / "tests" / "import_contracts.py", tmp_path / "tests")  # contract "gone"
    return tmp_path


def _plant(path: Path, line: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")


@pytest.mark.parametrize(
    ("module", "line", "reported"),
    [
        ("rankers/ties.py", "import aggregation.ranking", "rankers <- aggregation"),
        ("rankers/utils/lazy.py", "import rankers.ties", "rankers.utils: the shared"),
        ("rankers/utils/parallel.py", "import rankers.base", "rankers: the rankers"),
        ("aggregation/ranking.py", "import moweights.errors", "rankers <- aggregation"),
        ("aggregation/_names.py", "from aggregation import combine", "no import cycle"),
        ("aggregation/evaluation/topk.py", "import aggregation.federated.rank", "evaluation"),
        ("aggregation/federated/sites.py", "import aggregation.federated.rank", "federated"),
        ("aggregation/federated/sites.py", "import moweights.data", "rankers <- aggregation"),
        ("moweights/output/files.py", "import moweights.pipeline.runner", "moweights: the"),
        ("moweights/config/schema.py", "from moweights.config import check", "no import cycle"),
        ("moweights/pipeline/data.py", "import moweights.pipeline.steps", "moweights.pipeline"),
        ("moweights/data/readers/tables.py", "import aggregation.ranking", "readers of user"),
        ("moweights/data/readers/h5ad.py", "import moweights.data.fetch", "readers of user"),
        (
            "moweights/data/readers/checks.py",
            "import moweights.data.readers.files",
            "readers' table",
        ),
        ("moweights/data/readers/files.py", "import moweights.data.loaders", "moweights.data: the"),
        ("moweights/data/transform.py", "import moweights.data.loaders", "moweights.data: the"),
        ("moweights/data/fetch.py", "import moweights.config", "moweights: the"),
        ("moweights/pipeline/steps.py", "import moweights.data.transform", "one door"),
        ("moweights/ensemble/members.py", "import moweights.ensemble.ranker", "moweights.ens"),
        ("moweights/federated/flower_app.py", "import moweights.federated.flower", "moweights.fed"),
        ("moweights/federated/rank.py", "import moweights.pipeline", "moweights: the"),
    ],
)
def test_a_planted_violation_breaks_a_contract(tree, module, line, reported):
    _plant(tree / module, line)
    done = _lint(tree)
    assert done.returncode != 0
    assert "BROKEN" in done.stdout and reported in done.stdout


@pytest.mark.parametrize(
    "old",
    ["aggregation/bayes.py", "moweights/h5ad.py", "moweights/datasets.py", "rankers/_moved.py"],
)
def test_an_old_path_put_back_breaks_the_contract_that_keeps_it_gone(tree, old):
    (tree / old).write_text('"""A shim."""\n', encoding="utf-8")
    done = _lint(tree)
    assert done.returncode != 0
    assert "BROKEN" in done.stdout and "stay gone" in done.stdout
    assert f"{old.removesuffix('.py').replace('/', '.')} exists again" in done.stdout


def test_the_shared_helpers_contract_names_every_other_module_of_rankers():
    config = _contracts()
    (contract,) = [c for c in config if c["name"].startswith("rankers.utils: the shared")]
    siblings = {
        f"rankers.{p.stem}"
        for p in (REPO / "rankers").iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()
    }
    expected = (siblings - {"rankers.utils"}) | {"aggregation", "moweights"}
    assert set(contract["forbidden_modules"]) == expected


def _contracts() -> list[dict]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)["tool"]["importlinter"]["contracts"]


def _private_module_imports(package: Path) -> list[str]:
    """Imports, in ``package``, of a private module (a ``_name`` part) of another package."""
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                modules = [node.module]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            else:
                continue
            for module in modules:
                parts = module.split(".")
                private = any(p.startswith("_") and not p.endswith("__") for p in parts)
                if parts[0] in PACKAGES and parts[0] != package.name and private:
                    found.append(f"{path.relative_to(package.parent)}:{node.lineno}: {module}")
    return found


@pytest.mark.parametrize("package", NO_PRIVATE_IMPORTS)
def test_no_module_imports_a_private_module_of_another_package(package):
    assert _private_module_imports(REPO / package) == []


def test_a_planted_private_module_import_is_found(tree):
    line = "from rankers.unsupervised._affinity import knn_affinity"
    _plant(tree / "aggregation/compare.py", line)
    lines = len((tree / "aggregation/compare.py").read_text().splitlines())
    assert _private_module_imports(tree / "aggregation") == [
        f"aggregation/compare.py:{lines}: rankers.unsupervised._affinity"
    ]


def _private_imports(package: Path) -> list[str]:
    """``from <our module> import _name`` lines importing another module's private name."""
    found = []
    for path in sorted(package.rglob("*.py")):
        module = ".".join(path.relative_to(package.parent).with_suffix("").parts)
        module = module.removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                continue
            if node.module.split(".")[0] not in PACKAGES or node.module == module:
                continue
            for alias in node.names:
                # dunders (``__version__``) are public by convention, not private names
                dunder = alias.name.startswith("__") and alias.name.endswith("__")
                if alias.name.startswith("_") and not dunder:
                    found.append(
                        f"{path.relative_to(package.parent)}:{node.lineno}: "
                        f"from {node.module} import {alias.name}"
                    )
    return found


@pytest.mark.parametrize("package", NO_PRIVATE_IMPORTS)
def test_no_module_imports_another_modules_private_names(package):
    assert _private_imports(REPO / package) == []


def test_a_planted_private_import_is_found(tree):
    _plant(tree / "aggregation/compare.py", "from aggregation.ranking import _natural_key")
    assert _private_imports(tree / "aggregation") == [
        f"aggregation/compare.py:{len((tree / 'aggregation/compare.py').read_text().splitlines())}"
        ": from aggregation.ranking import _natural_key"
    ]
