"""``import moweights`` and ``moweights --help`` import no numerical library; the public
names are still there, loaded on first access."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.quick  # in the quick suite (pytest -m quick): see pyproject.toml

HEAVY = ("numpy", "scipy", "pandas", "sklearn", "pymoo", "matplotlib", "joblib", "jinja2")

_REPORT = (
    "\nimport json, sys\n"
    f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))"
)


def _heavy_after(code: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", code + _REPORT], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_import_moweights_imports_no_numerical_library():
    assert _heavy_after("import moweights") == []


def test_help_imports_no_numerical_library():
    code = (
        "import contextlib, io\n"
        "from moweights.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main(['--help'])"
    )
    assert _heavy_after(code) == []


def test_a_subcommand_help_imports_no_numerical_library():
    code = (
        "import contextlib, io\n"
        "from moweights.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main(['run', '--help'])"
    )
    assert _heavy_after(code) == []


def test_the_public_names_load_on_first_access():
    assert "pymoo" in _heavy_after("import moweights\nmoweights.MOWeighting")
    import moweights
    from moweights.weighting import MOWeighting

    assert moweights.MOWeighting is MOWeighting
    assert set(moweights.__all__) <= set(dir(moweights))
    for name in moweights.__all__:
        assert getattr(moweights, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        moweights.nonexistent  # noqa: B018
