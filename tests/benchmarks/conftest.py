"""Shared fixtures of the benchmark scripts' tests."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def bench_script(monkeypatch) -> Callable[[str], ModuleType]:
    """Load ``benchmarks/<relative path>`` as a module, its folder first on ``sys.path`` as
    ``python benchmarks/<relative path>`` has it (the scripts import ``_common`` and
    ``_protocol`` by name); ``sys.path`` is restored after the test (child processes the
    scripts spawn need it while the test runs)."""
    monkeypatch.setattr(sys, "path", list(sys.path))

    def load(relative: str) -> ModuleType:
        path = BENCH / relative
        sys.path.insert(0, str(path.parent))
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load
