"""The suite's own settings: nothing in it depends on how busy the machine is (issue 34)."""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

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
