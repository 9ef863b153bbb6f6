"""tests/ mirrors the package tree (issue 38 item 4), so the layout cannot drift.

A test's folder is the folder of the code it tests: ``tests/moweights/pipeline/test_cache.py``
tests ``moweights/pipeline/cache.py``. Two checks: every folder of tests/ is a folder of the
repository (a package folder inside a package), and a test left flat in ``tests/<package>/``
is not named after a module or subpackage that lives in one of the package's subpackages.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

pytestmark = pytest.mark.quick  # in the quick suite (pytest -m quick): see pyproject.toml

TESTS = Path(__file__).resolve().parent

#: the packages whose tests mirror them
PACKAGES = ("rankers", "aggregation", "moweights")

#: flat tests that belong in a subpackage's folder and have not moved yet (none left: the
#: last ones moved in issue 38 item 4); a test that cannot move yet is named here until it does
PENDING: set[str] = set()


def unmirrored_folders(tests: Path, repo: Path) -> list[str]:
    """Folders of ``tests`` holding Python files with no counterpart in ``repo``.

    ``tests/<top>/`` needs a folder ``<top>/`` (a package, or ``benchmarks/``); below a
    package, ``tests/<pkg>/<sub>/`` needs the package folder ``<pkg>/<sub>/__init__.py``.
    """
    wrong = []
    for folder in sorted({path.parent for path in tests.rglob("*.py")} - {tests}):
        rel = folder.relative_to(tests)
        mirror = repo / rel
        package = (repo / rel.parts[0] / "__init__.py").is_file()
        if not mirror.is_dir() or (package and not (mirror / "__init__.py").is_file()):
            wrong.append(rel.as_posix())
    return wrong


def subpackage_home(package: Path, stem: str) -> str | None:
    """The subpackage of ``package`` a test named ``test_<stem>.py`` belongs in, if any.

    The longest leading part of ``stem`` (split at ``_``) naming something decides: a
    module of the package itself (``None``: the test stays flat), a subpackage (its name),
    or a module in exactly one subpackage (that subpackage's name).
    """
    parts = stem.split("_")
    for n in range(len(parts), 0, -1):
        name = "_".join(parts[:n])
        if (package / f"{name}.py").is_file():
            return None
        if (package / name / "__init__.py").is_file():
            return name
        homes = {path.parent.name for path in package.glob(f"*/{name}.py")}
        if len(homes) == 1:
            return homes.pop()
        if homes:  # a name in several subpackages: the test's name does not decide
            return None
    return None


def misplaced_tests(tests: Path, repo: Path, packages: Iterable[str] = PACKAGES) -> dict[str, str]:
    """``{flat test: folder it belongs in}`` for the tests flat in ``tests/<package>/``."""
    found = {}
    for name in packages:
        for path in sorted((tests / name).glob("test_*.py")):
            home = subpackage_home(repo / name, path.stem.removeprefix("test_"))
            if home is not None:
                found[path.relative_to(tests).as_posix()] = f"tests/{name}/{home}/"
    return found


def test_every_folder_of_tests_mirrors_a_folder_of_the_repository(repo):
    assert unmirrored_folders(TESTS, repo) == []


def test_no_test_is_left_flat_beside_its_subpackage(repo):
    found = misplaced_tests(TESTS, repo)
    moved = sorted(PENDING - set(found))
    assert moved == [], f"no longer pending, delete from PENDING: {moved}"
    assert {k: v for k, v in found.items() if k not in PENDING} == {}


# --------------------------------------------------- the checks can fail: planted layouts
def _tree(root: Path, files: list[str]) -> None:
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("")


def test_the_checks_catch_a_misnamed_folder_and_a_flat_test(tmp_path):
    repo = tmp_path / "repo"
    _tree(
        repo,
        [
            "pkg/__init__.py",
            "pkg/base.py",
            "pkg/sub/__init__.py",
            "pkg/sub/thing.py",
            "pkg/other/__init__.py",
            "pkg/other/thing.py",
            "pkg/data/table.csv",
            "tests/conftest.py",
            "tests/pkg/test_base.py",  # a top-level module's test: flat is right
            "tests/pkg/test_thing.py",  # thing.py is in two subpackages: undecided
            "tests/pkg/test_sub_pinned.py",  # the subpackage sub: belongs in tests/pkg/sub/
            "tests/pkg/sub/test_thing.py",
            "tests/pkg/sbu/test_typo.py",  # no such folder
            "tests/pkg/data/test_table.py",  # a folder, but no package
            "tests/nowhere/test_x.py",
        ],
    )
    tests = repo / "tests"
    assert unmirrored_folders(tests, repo) == ["nowhere", "pkg/data", "pkg/sbu"]
    assert misplaced_tests(tests, repo, ["pkg"]) == {"pkg/test_sub_pinned.py": "tests/pkg/sub/"}
    (repo / "pkg/other/thing.py").unlink()  # now thing.py has one home
    assert misplaced_tests(tests, repo, ["pkg"]) == {
        "pkg/test_sub_pinned.py": "tests/pkg/sub/",
        "pkg/test_thing.py": "tests/pkg/sub/",
    }
    assert subpackage_home(repo / "pkg", "base") is None
    assert subpackage_home(repo / "pkg", "nothing_here") is None
