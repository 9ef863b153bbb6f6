"""Every example config runs (made small with --set) and every notebook executes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from moweights.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

#: per example config: the overrides that make it small (every example must be listed)
SMALL = {
    "config.toml": [
        "data.n_samples=150",
        "evaluation.cv=3",
        "evaluation.topk.n_random=2",
        "evaluation.error_curves.n_random=2",
        "evaluation.clustering.k_features=[2, 8]",
        "evaluation.clustering.n_restarts=1",
        "rankers.4.params.n_estimators=10",
    ],
    "federated.toml": ["evaluation.cv=3", "evaluation.topk.n_random=2"],
    "study.toml": [
        "data.0.n_samples=150",
        "evaluation.cv=3",
        "evaluation.topk.n_random=2",
        "evaluation.error_curves.n_random=2",
    ],
    "weighting.toml": [
        "rankers.0.params.n_gen=5",
        "rankers.0.params.pop_size=8",
        "rankers.1.params.n_gen=5",
        "rankers.1.params.pop_size=8",
        "evaluation.cv=3",
        'evaluation.error_curves.grid="geometric"',
        "evaluation.error_curves.n_random=2",
    ],
    "unsupervised.toml": [
        "data.n_samples=60",
        "evaluation.cv=3",
        "evaluation.topk.ks=[1, 4, 16]",
        "evaluation.topk.n_random=2",
        "evaluation.clustering.k_features=[4]",
        "evaluation.clustering.n_restarts=1",
        "rankers.6.params.n_estimators=3",
        "run.n_jobs=1",
    ],
}
#: the files each example's report must contain besides the common tables
EXPECTED = {
    "config.toml": ["eca.csv", "clustering.csv", "statistics.json"],
    "federated.toml": ["sites.json", "site_similarity.csv", "statistics.json"],
    "study.toml": [
        "study/scores_topk_mse.csv",
        "study/scores_eca_uniform.csv",
        "study/average_ranks.csv",
        "study/friedman.csv",
        "study/nemenyi.csv",
    ],
    "weighting.toml": ["pareto_nsga2_C1_C2_C3_weights.csv", "eca.csv", "expected_curve.csv"],
    "unsupervised.toml": ["clustering.csv", "statistics.json"],
}


def test_every_example_config_is_covered():
    assert sorted(p.name for p in EXAMPLES.glob("*.toml")) == sorted(SMALL)


#: the README's default job (made small): the quick suite's one config run end to end
QUICK = "config.toml"


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.quick) if n == QUICK else n for n in sorted(SMALL)]
)
def test_example_config_runs(name, tmp_path, capsys):
    path = EXAMPLES / name
    sets = [arg for item in SMALL[name] for arg in ("--set", item)]
    code = main(["run", str(path), "-o", str(tmp_path), "-q", "--set", "output.plots=false", *sets])
    err = capsys.readouterr().err
    if code == 2 and "file not found" in err and "shared/data" in err:
        pytest.skip("the benchmark data (../shared/data) is not here")
    assert code == 0, err
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    common = ["scores.csv", "ranks.csv", "aggregated.json", "summary.json"]
    # a study: the common tables in each data set's run folder, its own in study/
    folders = [tmp_path / sub for sub in manifest.get("data_sets", {}).values()] or [tmp_path]
    for folder in folders:
        files = json.loads((folder / "manifest.json").read_text())["files"]
        for table in common:
            assert table in files, (folder.name, table)
    for table in ["summary.json", *EXPECTED[name]]:
        assert table in manifest["files"], table
    assert (tmp_path / "report.html").stat().st_size > 0


# ------------------------------------------------------------------ notebooks
NOTEBOOKS = sorted(EXAMPLES.glob("*.ipynb"))


def test_notebooks_are_stored_without_outputs():
    assert len(NOTEBOOKS) >= 4
    for path in NOTEBOOKS:
        book = json.loads(path.read_text())
        for cell in book["cells"]:
            if cell["cell_type"] == "code":
                assert cell["outputs"] == [] and cell["execution_count"] is None, path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes(path, tmp_path):
    nbformat = pytest.importorskip(
        "nbformat", reason="needs the 'notebooks' extra: pip install '.[notebooks]'"
    )
    nbclient = pytest.importorskip(
        "nbclient", reason="needs the 'notebooks' extra: pip install '.[notebooks]'"
    )
    pytest.importorskip(
        "ipykernel", reason="needs the 'notebooks' extra: pip install '.[notebooks]'"
    )
    book = nbformat.read(path, as_version=4)
    # bounds for a hung kernel or cell, not for a busy machine: every wait ends when the
    # kernel is up or the cell is done
    client = nbclient.NotebookClient(
        book,
        timeout=1800,
        startup_timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()  # raises CellExecutionError, naming the cell, when one fails
    errors = [o for c in book.cells for o in c.get("outputs", []) if o["output_type"] == "error"]
    assert not errors


def _commented_commands() -> list[tuple[str, list[str]]]:
    """The ``moweights run examples/X.toml --set ...`` lines of the examples' comments."""
    import shlex

    found = []
    for path in sorted(EXAMPLES.glob("*.toml")):
        for line in path.read_text(encoding="utf-8").splitlines():
            text = line.lstrip("# ").strip()
            if text.startswith("moweights run ") and "--set" in text:
                found.append((path.name, shlex.split(text)[2:]))
    return found


@pytest.mark.parametrize(("name", "args"), _commented_commands())
def test_an_examples_commented_quick_look_is_valid(name, args, capsys, monkeypatch):
    """issue 48 item 15: unsupervised.toml's own quick look exited 2 (10 folds, too few
    rows per class)."""
    monkeypatch.chdir(EXAMPLES.parent)
    code = main(["validate", *args])
    err = capsys.readouterr().err
    if code == 2 and "data file not found" in err:
        pytest.skip(f"{name}'s data file is not on this machine")
    assert code == 0, err


def test_the_examples_comment_quick_looks():
    assert any(name == "unsupervised.toml" for name, _ in _commented_commands())
