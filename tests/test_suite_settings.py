"""The suite's own settings: nothing in it depends on how busy the machine is (issue 34)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.quick  # in the quick suite (pytest -m quick): see pyproject.toml

TESTS = Path(__file__).resolve().parent


def _settings_calls(path: Path):
    """Every call of hypothesis's ``settings(...)`` in ``path`` (decorator or not)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name == "settings":
                yield node


def test_the_loaded_profile_and_the_default_one_have_no_deadline():
    # conftest.py is loaded: whatever profile it chose, no example is timed
    assert settings.default.deadline is None
    assert settings.get_profile("default").deadline is None
    assert settings.get_profile("ci").deadline is None
    assert settings.get_profile("ci").derandomize  # CI tries the same examples every run
    assert settings.default.max_examples <= 100  # bounded


@given(st.integers())
def test_a_given_test_without_settings_runs_under_the_profile(n):
    assert settings().deadline is None


def test_no_test_sets_its_own_deadline():
    offenders = [
        f"{path.relative_to(TESTS)}:{call.lineno}"
        for path in sorted(TESTS.rglob("*.py"))
        for call in _settings_calls(path)
        if any(k.arg == "deadline" for k in call.keywords)
    ]
    assert offenders == [], "per-test deadlines fight the suite's profile (tests/conftest.py)"


def test_the_scan_finds_a_deadline(tmp_path):
    # the check above can fail: a file with a deadline is caught
    path = tmp_path / "test_x.py"
    path.write_text("@settings(max_examples=5, deadline=200)\ndef test_x():\n    pass\n")
    assert [k.arg for call in _settings_calls(path) for k in call.keywords] == [
        "max_examples",
        "deadline",
    ]


# ------------------------------------------------------------------ optional extras
#: how a test that needs an optional extra skips without it
REASON = re.compile(r"needs the '([\w-]+)' extra: pip install '\.\[\1\]'")
#: a peer library a test compares against, installed beside an extra (scanpy in CI's scverse venv)
REFERENCE = re.compile(r"needs '([\w-]+)' as the reference: pip install \1")


def _pyproject() -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    return tomllib.loads((TESTS.parent / "pyproject.toml").read_text(encoding="utf-8"))


def _importorskips(path: Path):
    """``(line, module, reason)`` of every ``pytest.importorskip`` call in ``path``."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "importorskip":
            module = node.args[0].value if node.args else None
            reason = next((k.value for k in node.keywords if k.arg == "reason"), None)
            yield node.lineno, module, getattr(reason, "value", None)


def test_a_test_needing_an_extra_says_which_when_it_skips():
    project = _pyproject()["project"]
    extras = set(project["optional-dependencies"])
    core = {re.split(r"[<>=!~;\[ ]", d)[0].lower() for d in project["dependencies"]}
    problems = []
    for path in sorted(TESTS.rglob("*.py")):
        for line, module, reason in _importorskips(path):
            if module.split(".")[0] in core:  # a dependency of the package: always there
                continue
            if (ref := REFERENCE.fullmatch(reason or "")) and ref.group(1) == module:
                continue
            named = REASON.fullmatch(reason or "")
            if named is None or named.group(1) not in extras:
                problems.append(f"{path.relative_to(TESTS)}:{line} {module}: {reason!r}")
    assert problems == [], "say which extra: reason=\"needs the 'X' extra: pip install '.[X]'\""


def test_the_full_extra_holds_every_extra_the_suite_uses():
    # what CI installs (.ci/run) is the 'full' extra: every extra a skip reason names but
    # the Bayesian comparison's (CI installs the documentation's on its own)
    full = _pyproject()["project"]["optional-dependencies"]["full"]
    (inside,) = [m.group(1) for d in full if (m := re.fullmatch(r"moweights\[([\w,-]+)\]", d))]
    named = {
        re.search(r"'([\w-]+)' extra", reason).group(1)
        for path in TESTS.rglob("*.py")
        for _, _, reason in _importorskips(path)
        if reason and "extra" in reason
    }
    # scverse: anndata pins pandas < 3, which 'full' holds; CI tests it in a venv of its own
    assert named - {"bayes", "full", "scverse"} <= set(inside.split(","))


# the quick tier (pytest -m quick, issue 48 item 21): each package's contract, nothing more.
# It measured 96 CPU s beside two CPU-bound processes; the full suite checks the rest. A
# module joins it here, where the README's description of the tier is checked against it.
QUICK_MODULES = {
    "test_architecture.py",  # the layer and import contracts
    "test_import_cycles.py",
    "test_layout.py",
    "test_old_paths.py",
    "test_suite_settings.py",
    "test_figures.py",  # figures in prose read from the committed tables
    "rankers/test_contract.py",  # every ranker under scikit-learn's estimator checks
    "rankers/test_registry.py",
    "rankers/test_tags.py",
    "rankers/test_validation.py",
    "rankers/test_context.py",
    "aggregation/test_layout.py",
    "aggregation/test_ranking.py",
    "aggregation/test_combine.py",
    "aggregation/evaluation/test_topk.py",
    "aggregation/evaluation/test_inputs.py",
    "moweights/test_layout.py",
    "moweights/test_startup.py",
    "moweights/config/test_config.py",
    "moweights/data/test_door.py",  # the data wing's one door
}
QUICK_TESTS = {"moweights/test_examples.py"}  # one config run end to end (examples/config.toml)


def test_the_quick_tier_is_the_listed_one():
    marked_module, marked_test = set(), set()
    for path in TESTS.rglob("test_*.py"):
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(TESTS).as_posix()
        if re.search(r"^pytestmark = .*pytest\.mark\.quick", text, flags=re.M):
            marked_module.add(name)
        elif "pytest.mark.quick" in text:
            marked_test.add(name)
    assert marked_module == QUICK_MODULES
    assert marked_test == QUICK_TESTS
