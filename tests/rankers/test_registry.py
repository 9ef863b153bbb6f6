"""The entry-point registry (docs/design.md, "The registry")."""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest

import rankers
from rankers.exceptions import (
    BrokenPluginWarning,
    InvalidParameterError,
    PluginLoadError,
    UnknownRankerError,
)

pytestmark = pytest.mark.quick  # in the quick suite (pytest -m quick): see pyproject.toml


@pytest.fixture
def fresh_registry():
    rankers.reload()
    yield
    rankers.registry._decorated.clear()
    rankers.reload()


def _install_fake_distribution(tmp_path, module_source: str, entry_points: str):
    """A real (if tiny) installed distribution: a module plus a dist-info with entry points."""
    (tmp_path / "ext_rankers_pkg.py").write_text(textwrap.dedent(module_source))
    info = tmp_path / "ext_rankers_pkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ext-rankers-pkg\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))
    sys.path.insert(0, str(tmp_path))


@pytest.fixture
def third_party(tmp_path, fresh_registry):
    _install_fake_distribution(
        tmp_path,
        """
        import numpy as np
        from rankers import BaseRanker

        class ColumnMaxRanker(BaseRanker):
            \"\"\"Rank features by their largest value.\"\"\"
            reference = "a third-party plugin"

            def _score(self, X, y, context):
                return X.max(axis=0)

        raise_here = None
        """,
        """
        [moweights.rankers]
        column_max = ext_rankers_pkg:ColumnMaxRanker
        broken_one = ext_rankers_pkg_missing:Nothing
        not_a_class = ext_rankers_pkg:raise_here
        """,
    )
    rankers.reload()
    yield
    sys.path.remove(str(tmp_path))
    sys.modules.pop("ext_rankers_pkg", None)


def test_builtins_register_through_entry_points():
    from importlib.metadata import entry_points

    names = {ep.name for ep in entry_points(group=rankers.registry.ENTRY_POINT_GROUP)}
    assert {"variance", "laplacian", "info_gain", "chi2", "random_forest"} <= names


def test_available_table_columns_and_rows():
    table = rankers.available()
    assert list(table.columns) == [
        "name",
        "class",
        "requires_y",
        "target_kind",
        "summary",
        "reference",
        "params",
    ]
    row = table.set_index("name").loc["variance"]
    assert row["params"] == "ddof=0, scale=None"
    assert table.set_index("name").loc["t_test", "params"] == ""
    assert row["class"] == "rankers.unsupervised.variance.VarianceRanker"
    assert not row["requires_y"]
    assert row["target_kind"] == "unsupervised"
    assert row["summary"].startswith("Rank features by their variance")
    assert table["name"].is_monotonic_increasing


def test_third_party_plugin_is_found(third_party):
    with pytest.warns(BrokenPluginWarning):
        table = rankers.available()
    assert "column_max" in set(table["name"])
    est = rankers.get("column_max")
    X = np.array([[1.0, 5.0, 0.0], [2.0, 0.0, 1.0]])
    assert est.fit(X).ranking_.tolist() == [1, 0, 2]


def test_broken_plugins_are_reported_not_fatal(third_party):
    with pytest.warns(BrokenPluginWarning, match="broken_one"):
        table = rankers.available()
    assert "variance" in set(table["name"])  # the others still load
    broken = rankers.broken()
    assert "ModuleNotFoundError" in broken["broken_one"]
    assert "not an estimator class" in broken["not_a_class"]
    with pytest.raises(PluginLoadError, match="failed to load"):
        rankers.get("broken_one")


def test_unknown_name_lists_close_matches():
    with pytest.raises(UnknownRankerError, match="did you mean 'laplacian'") as info:
        rankers.get("laplace")
    assert isinstance(info.value, LookupError)
    assert "variance" in info.value.available


def test_names_are_case_and_dash_insensitive():
    assert type(rankers.get("Info-Gain")).__name__ == "InfoGainRanker"


def test_unknown_parameter_is_named():
    with pytest.raises(InvalidParameterError, match=r"no parameter.*'n_neighbours'.*n_neighbors"):
        rankers.get("laplacian", n_neighbours=3)


def test_bad_parameter_value_is_named():
    with pytest.raises(InvalidParameterError, match="'ddof' parameter"):
        rankers.get("variance", ddof=-1)
    with pytest.raises(ValueError):  # our errors are ValueErrors too
        rankers.get("variance", k=0)


def test_register_decorator(fresh_registry):
    @rankers.register("row_sum_test")
    class RowSumRanker(rankers.BaseRanker):
        """Toy ranker for the test."""

        def _score(self, X, y, context):
            return np.abs(X).sum(axis=0)

    assert "row_sum_test" in set(rankers.available()["name"])
    assert isinstance(rankers.get("row_sum_test"), RowSumRanker)
    assert RowSumRanker.name == "row_sum_test"
    with pytest.raises(InvalidParameterError, match="already registered"):
        rankers.register("variance")(RowSumRanker)
    rankers.register("row_sum_test")(RowSumRanker)  # same class again is fine


def test_asking_for_one_ranker_imports_no_other():
    import subprocess

    code = (
        "import sys, rankers; rankers.get('variance'); "
        "print(sorted(m for m in sys.modules if m.startswith('rankers.') and 'vised.' in m))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['rankers.unsupervised.variance']"


def test_every_builtin_class_is_exported_by_its_subpackage():
    import importlib
    from importlib.metadata import entry_points

    import rankers.supervised
    import rankers.unsupervised

    exported = {*rankers.supervised.__all__, *rankers.unsupervised.__all__}
    for ep in entry_points(group=rankers.registry.ENTRY_POINT_GROUP):
        module, cls = ep.value.split(":")
        if not module.startswith("rankers."):
            continue
        package = importlib.import_module(module.rsplit(".", 1)[0])
        assert getattr(package, cls) is ep.load() and cls in exported
    assert set(rankers.unsupervised.__all__) <= set(dir(rankers.unsupervised))


def _docs_api():
    """docs/_api.py, the module the documentation build writes its generated pages with."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "docs" / "_api.py"
    spec = importlib.util.spec_from_file_location("_docs_api", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, path.parent


def test_the_design_doc_lists_what_the_registry_holds_from_the_registry():
    """docs/design.md's list of rankers is written from available() at build time (it had
    drifted when written by hand: 6 supervised rankers listed, 14 registered)."""
    import re

    api, docs = _docs_api()
    text = api.registry_markdown(api._ranker_rows())
    names = sorted(rankers.available()["name"])
    assert sorted(re.findall(r"<ranker-([\w-]+)>", text)) == names  # each once, no other
    assert f"holds {len(names)} rankers" in text
    counts = re.findall(r"\| `([\w.]+)` \((\d+)\) \|", text)
    assert {p for p, _ in counts} >= {"rankers.supervised", "rankers.unsupervised"}
    assert sum(int(n) for _, n in counts) == len(names)
    # the build writes it where design.md includes it, and it is no page of its own
    design = (docs / "design.md").read_text(encoding="utf-8")
    conf = (docs / "conf.py").read_text(encoding="utf-8")
    assert "```{include} _registry.md\n```" in design
    assert 'registry=HERE / "_registry.md"' in conf and '"_registry.md",' in conf
    # and no line of design.md lists rankers by hand
    for line in design.splitlines():
        named = [n for n in names if re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", line)]
        assert len(named) < 4, f"design.md lists rankers by hand: {line!r}"
