"""moweights.data is the data wing's one door: its names resolve, importing it costs
nothing, and the rest of moweights comes through it (an import-linter contract that names
every module of the wing)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.quick  # in the quick suite (pytest -m quick): see pyproject.toml

REPO = Path(__file__).resolve().parents[3]
WING = REPO / "moweights" / "data"


def _modules(folder: Path, package: str) -> set[str]:
    return {
        f"{package}.{p.stem}"
        for p in folder.iterdir()
        if (p.suffix == ".py" and p.stem not in ("__init__", "__main__"))
        or (p / "__init__.py").is_file()
    }


def test_every_name_of_the_door_resolves_to_its_module():
    import moweights.data

    for name in moweights.data.__all__:
        value = getattr(moweights.data, name)
        assert value is not None, name
    assert moweights.data.load_file is importlib.import_module("moweights.data.loaders").load_file
    assert moweights.data.SiteFile is importlib.import_module("moweights.data.readers").SiteFile
    # the one check of a data path is the loaders' (with the fetch hint), not the readers'
    assert moweights.data.check_data_path.__module__ == "moweights.data.loaders"


def test_importing_the_door_imports_no_numerical_library():
    code = (
        "import sys, json\nimport moweights.data\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'numpy', 'pandas', 'scipy', 'sklearn'})))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_the_one_door_contract_names_every_module_of_the_wing_and_every_user():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c["name"].startswith("moweights.data: one door")
    ]
    assert set(contract["forbidden_modules"]) == _modules(WING, "moweights.data")
    # everything of moweights above the wing; about and errors are below it
    users = _modules(REPO / "moweights", "moweights") - {
        "moweights.data",
        "moweights.about",
        "moweights.errors",
    }
    assert set(contract["source_modules"]) == users
