"""Shared fixtures of the benchmark scripts' tests.

``benchmarks`` is a package of the repository, not of the installed wheel (pyproject's
package discovery leaves it out). ``python -m benchmarks.<folder>.<script>`` finds it
because the repository root is the working folder, first on ``sys.path``; the tests find
it the same way, with the root appended to ``sys.path`` (after the installed packages, so
``rankers``, ``aggregation`` and ``moweights`` stay the installed ones). Processes the
scripts spawn with multiprocessing inherit that path; those they start as
``python -m ...`` get the root on ``PYTHONPATH`` (``benchmarks._common.child_env``).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.append(str(REPO))


@pytest.fixture
def bench_script() -> Callable[[str], ModuleType]:
    """Import ``benchmarks.<name>`` (e.g. ``"protocols.atlas"``)."""
    return lambda name: importlib.import_module(f"benchmarks.{name}")
