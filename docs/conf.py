"""Sphinx configuration of the moweights documentation.

Why Sphinx + numpydoc + pydata-sphinx-theme + myst-nb: it is the toolchain of the
scientific Python projects our users already read (scikit-learn, pymoo, SciPy, pandas), it
reads our numpydoc docstrings as they are, and myst-nb executes the example notebooks
during the build, so every figure is on the page and a notebook that raises fails the build.

Build: ``sphinx-build -W --keep-going -b html docs docs/_build/html`` (README, "Documentation").
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _api  # noqa: E402  (docs/_api.py: writes the API reference pages from the code)

project = "moweights"
author = "the moweights developers"
copyright = "the moweights developers"
try:
    from importlib.metadata import version as _version

    release = _version("moweights")
except Exception:  # not installed: the build still says which version it documents
    release = "0.1.0"
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_nb",
    "sphinx_copybutton",
]

templates_path = ["_templates"]
exclude_patterns = [
    "_build",
    "**.ipynb_checkpoints",
    "examples/flower-app",
    "examples/*.toml",
    "examples/*.py",
    "plugin",
    "_registry.md",  # written by _api.write_pages, included by design.md
]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"

# -- warnings are errors (sphinx-build -W): every cross-reference must resolve ---------------
nitpicky = True
# third-party types named in docstrings and signatures: no inventories are fetched (the build
# works offline), so references into these packages are left unlinked on purpose
nitpick_ignore_regex = [
    (
        "py:.*",
        r"(numpy|np|scipy|sp|pandas|pd|sklearn|matplotlib|plt|pymoo|flwr|joblib|dask|"
        r"tqdm|networkx|pyarrow|baycomp|anndata|scanpy)(\..*)?",
    ),
    (
        "py:.*",
        r"(ndarray|DataFrame|Series|Axes|Figure|array-like|array_like|sparse matrix|"
        r"callable|optional|default.*|of shape.*|shape.*)",
    ),
]
suppress_warnings = ["myst.header"]

# -- autodoc / autosummary / numpydoc ----------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"  # numpydoc's Parameters section carries the types
autodoc_default_options = {"members": False}
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# an undocumented public name fails the build (GL08: the object has no docstring)
numpydoc_validation_checks = {"GL08"}
# constants and type aliases carry no docstring of their own (a ``#:`` comment documents them)
numpydoc_validation_exclude = {r"\.__init__$", r"\._", r"\.[A-Z][A-Z0-9_]+$", r"\.SiteData$"}

# -- myst / myst-nb: the notebooks run during the build ----------------------------------------
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3
nb_execution_mode = os.environ.get("MOWEIGHTS_DOCS_EXECUTE", "cache")
nb_execution_timeout = 600  # seconds per cell
nb_execution_raise_on_error = True  # a notebook that raises fails the build
nb_execution_cache_path = str(HERE / "_build" / ".jupyter_cache")
nb_merge_streams = True

# -- HTML --------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"moweights {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_static_path: list[str] = []


def setup(app):
    _api.write_pages(HERE / "api", registry=HERE / "_registry.md")
    app.connect("autodoc-process-docstring", _api.escape_type_underscores, priority=100)
    app.connect("missing-reference", _api.resolve_moved)
