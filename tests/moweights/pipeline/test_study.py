"""Studies: one config over several data sets, compared across them (issue 19 item 2)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import rankdata

from moweights.cli import main
from moweights.config import load_config
from moweights.errors import ConfigError
from moweights.output.folder import summary_text
from moweights.pipeline import run
from moweights.pipeline.study import _compare

RANKERS = """
[[rankers]]
name = "variance"

[[rankers]]
name = "info_gain"
"""
SMALL = """
[evaluation]
cv = 3

[evaluation.topk]
n_random = 2
at_k = 4

[evaluation.error_curves]
n_random = 2

[evaluation.clustering]
k_features = [2]
n_restarts = 1

[run]
verbose = 0
"""


def _write(tmp_path, text, name="study.toml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _study_text(out) -> str:
    return (
        '[[data]]\nbuiltin = "wine"\n\n[[data]]\nbuiltin = "iris"\nname = "flowers"\n'
        + RANKERS
        + SMALL
        + f'\n[output]\ndir = "{out.as_posix()}"\n'
    )


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """A small two-data-set study, run once for the tests that read its folder."""
    tmp = tmp_path_factory.mktemp("study")
    config = load_config(_write(tmp, _study_text(tmp / "out")))
    return config, run(config)


# ------------------------------------------------------------------ end to end
def test_study_runs_every_data_set_into_its_own_folder(study):
    config, result = study
    out = result.output_dir
    assert config.is_study and [d.name for d in config.datasets] == ["wine", "flowers"]
    assert result.status == "complete"
    for name in ("wine", "flowers"):
        manifest = json.loads((out / name / "manifest.json").read_text())
        assert manifest["status"] == "complete"
        assert "scores.csv" in manifest["files"] and "curves.csv" in manifest["files"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert manifest["data_sets"] == {"wine": "wine", "flowers": "flowers"}


def test_study_tables_hold_the_cross_data_set_statistics(study):
    _, result = study
    st = result.output_dir / "study"
    scores = pd.read_csv(st / "scores_topk_mse.csv", index_col=0)
    assert list(scores.index) == ["wine", "flowers"]
    # the rankers, their mean rank (refit fold by fold) and the baseline, a method too
    assert set(scores.columns) == {"variance", "info_gain", "mean_rank", "random"}
    # each run's own top-k table gives the numbers (at k = 4, below both data sets' n)
    for name in scores.index:
        at = pd.read_csv(result.output_dir / name / "curve_at_k.csv").set_index("ranker")
        assert np.allclose(scores.loc[name, at.index], at["mean"])
    # average ranks by hand: rank within each data set (lower error = rank 1), mean
    expected = pd.Series(rankdata(scores.to_numpy(), axis=1).mean(axis=0), index=scores.columns)
    avg = pd.read_csv(st / "average_ranks.csv")
    topk = avg[avg["score"] == "topk_mse"].set_index("method")["avg_rank"]
    assert np.allclose(topk.reindex(expected.index), expected)
    assert list(topk) == sorted(topk)  # best first
    fr = pd.read_csv(st / "friedman.csv").set_index("score")
    # both data sets have classes: ECA and the k-means scores are compared too
    assert {"topk_mse", "eca_uniform", "clustering_nmi", "clustering_acc"} <= set(fr.index)
    assert (fr["n_datasets"] == 2).all()
    assert fr.loc["topk_mse", "n_methods"] == 4
    # with class targets the nested class prediction is compared too, first
    assert "class_balanced_accuracy" in fr.index
    assert fr.index[0] == "class_balanced_accuracy"
    caution = json.loads((result.output_dir / "summary.json").read_text())["study"]
    assert "only 2 data sets" in caution["comparisons"]["topk_mse"]["caution"]
    assert np.isfinite(fr.loc["topk_mse", ["chi2", "pvalue"]].astype(float)).all()
    ne = pd.read_csv(st / "nemenyi.csv").set_index("score")
    assert ne.loc["topk_mse", "cd"] > 0
    eca = pd.read_csv(st / "scores_eca_uniform.csv", index_col=0)
    assert (eca["random"] == 0).all()  # ECA is measured against random: 0 for random itself
    for path in st.iterdir():
        assert path.suffix in (".csv", ".json", ".png"), path.name  # data only


def test_study_report_and_summary_show_the_statistics(study):
    _, result = study
    out = result.output_dir
    html = (out / "report.html").read_text(encoding="utf-8")
    for text in ("Across data sets", "Friedman", "Iman–Davenport", "critical difference"):
        assert text in html
    assert 'href="wine/report.html"' in html
    assert html.count("<th>data_set</th>") == len(result.scores)  # one column per table
    assert (out / "study" / "cd_topk_mse.png").stat().st_size > 0
    assert "study/cd_topk_mse.png" in html
    text = summary_text(out)
    assert "topk_mse (lower is better) across 2 data sets" in text
    assert "Friedman chi2" in text and "Nemenyi CD" in text


def test_rerunning_a_study_resumes_from_the_cache(study, tmp_path):
    config, first = study
    again = run(config)
    assert again.computed == [] and len(again.cached) == len(first.computed) > 0
    assert "step(s) from an earlier run's cache" in summary_text(again.output_dir)
    st = first.output_dir / "study"
    for name in ("scores_topk_mse.csv", "average_ranks.csv", "friedman.csv"):
        assert (st / name).read_bytes() == (again.output_dir / "study" / name).read_bytes()


def test_a_single_data_run_is_unchanged_by_studies(study, tmp_path):
    """A [data] run writes what it wrote before studies existed: the same tables as the
    study's run of that data set, no study files, no new config keys."""
    _, result = study
    single = tmp_path / "single"
    text = '[data]\nbuiltin = "wine"\n' + RANKERS + SMALL + f'\n[output]\ndir = "{single}"\n'
    config = load_config(_write(tmp_path, text, "single.toml"))
    assert not config.is_study and config.datasets == ()
    assert "name" not in config.to_dict()["data"] and "paths" not in config.to_dict()["data"]
    run(config)
    files = sorted(p.name for p in single.iterdir() if not p.name.startswith("."))
    part = result.output_dir / "wine"
    assert files == sorted(p.name for p in part.iterdir() if not p.name.startswith("."))
    for name in files:
        if name.endswith(".csv") or name in ("aggregated.json", "evaluation.json"):
            assert (single / name).read_bytes() == (part / name).read_bytes(), name
    # one [[data]] block is the same single run
    one = _write(tmp_path, '[[data]]\nbuiltin = "wine"\n' + RANKERS + SMALL, "one.toml")
    assert load_config(one).to_dict()["data"] == config.to_dict()["data"]


# ------------------------------------------------------------------ statistics edge cases
def test_statistics_say_why_they_are_absent():
    one = pd.DataFrame({"a": [0.1], "b": [0.2]}, index=["wine"])
    entry = _compare(one, higher=False, alpha=0.05, n_planned=2)
    assert "friedman" not in entry
    assert "at least 2 data sets" in entry["reason"] and "1 data set(s) of 2" in entry["reason"]
    single_method = pd.DataFrame({"a": [0.1, 0.2]}, index=["x", "y"])
    assert "1 method(s)" in _compare(single_method, False, 0.05, 2)["reason"]


def test_near_equal_average_ranks_share_a_position():
    # b and c tie on every data set up to the last bits: one position, config order kept
    table = pd.DataFrame(
        {"a": [0.1, 0.1, 0.1], "c": [0.3, 0.3 + 1e-16, 0.3], "b": [0.3 + 1e-16, 0.3, 0.3]},
        index=["x", "y", "z"],
    )
    ranks = _compare(table, higher=False, alpha=0.05, n_planned=3)["average_ranks"]
    assert list(ranks["method"]) == ["a", "c", "b"]
    assert list(ranks["position"]) == [1.0, 2.5, 2.5]


# ------------------------------------------------------------------ config
def test_paths_glob_makes_a_study_named_by_the_files(tmp_path):
    rng = np.random.default_rng(0)
    for name in ("alpha", "beta"):
        frame = pd.DataFrame(rng.normal(size=(12, 3)), columns=["f0", "f1", "f2"])
        frame.assign(label=rng.integers(0, 2, 12)).to_csv(tmp_path / f"{name}.csv", index=False)
    text = '[data]\npaths = "*.csv"\ntarget = "label"\n' + RANKERS
    config = load_config(_write(tmp_path, text))
    assert config.is_study
    assert [d.name for d in config.datasets] == ["alpha", "beta"]
    assert all(d.target == "label" and d.path.is_file() for d in config.datasets)
    again = json.loads(json.dumps(config.to_dict(), default=str))
    assert [d["name"] for d in again["data"]] == ["alpha", "beta"]


@pytest.mark.parametrize(
    "data, key, words",
    [
        ('[[data]]\nbuiltin = "wine"\n[[data]]\nbuiltin = "wine"\n', "[[data]][1].name",
         "'wine' is used twice"),
        ('[[data]]\nbuiltin = "wine"\nname = "x"\n[[data]]\nbuiltin = "iris"\nname = "x"\n',
         "[[data]][1].name", "'x' is used twice"),
        ('[[data]]\nbuiltin = "wine"\n[[data]]\nbuiltin = "iris"\n'
         '[[sites]]\nname = "a"\nbuiltin = "wine"\n', "[[sites]]", "no [[sites]]"),
        ('[[data]]\nbuiltin = "wine"\n[[data]]\npath = "t.csv"\nsite_column = "s"\n',
         "[[data]][1].site_column", "whole data sets"),
        ('[[data]]\nbuiltin = "wine"\n[[data]]\nbuiltin = "iris"\nname = "study"\n',
         "[[data]][1].name", "reserved"),
        ('[[data]]\nbuiltin = "wine"\n[[data]]\nname = "nothing"\n', "[[data]][1]",
         "missing: give builtin"),
        ('[[data]]\nbuiltin = "wine"\n[[data]]\nbuiltin = "iris"\nname = ".."\n',
         "[[data]][1].name", "names its folder"),
        ('[data]\npaths = "nowhere/*.csv"\n', "[data].paths", "no file matches"),
        ('[data]\npaths = "*.csv"\npath = "t.csv"\n', "[data]", "give one of path and paths"),
    ],
)  # fmt: skip
def test_study_config_errors_name_the_key(tmp_path, data, key, words):
    pd.DataFrame({"f0": [1.0, 2.0], "s": ["a", "b"]}).to_csv(tmp_path / "t.csv", index=False)
    path = _write(tmp_path, data + RANKERS)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert any(f": {key}: " in p and words in p for p in info.value.problems), info.value.problems


def test_validate_names_a_study(tmp_path, capsys):
    path = _write(tmp_path, '[[data]]\nbuiltin = "wine"\n[[data]]\nbuiltin = "iris"\n' + RANKERS)
    assert main(["validate", str(path)]) == 0
    assert "study on 2 data sets: wine, iris" in capsys.readouterr().out


def test_a_parallel_study_gives_the_same_tables(study, tmp_path):
    """[run] n_jobs and backend reach every data set's run, as in a single run."""
    _, first = study
    out = tmp_path / "parallel"
    text = _study_text(out) + '\n[run]\nn_jobs = 2\nbackend = "threading"\n'
    text = text.replace("[run]\nverbose = 0\n", "")
    config = load_config(_write(tmp_path, text + "verbose = 0\n"))
    assert config.run.backend == "threading" and config.run.n_jobs == 2
    run(config, cache=False)
    here, there = out / "study", first.output_dir / "study"
    for name in ("scores_topk_mse.csv", "scores_eca_uniform.csv", "average_ranks.csv"):
        assert (here / name).read_bytes() == (there / name).read_bytes(), name


# ------------------------------------------------- one bad data set (issue 37 item 1)
def _members(tmp_path) -> Path:
    """Six data files; the three sorting first cannot be ranked, each for its own reason."""
    rng = np.random.default_rng(0)
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "a_ragged.csv").write_text("f0,f1,f2,label\n1,2,3,0\n4,5,6,1\n7,8,9,0,9\n")
    for name in ("b_text", "c_oneclass", "d1", "d2", "d3"):
        frame = pd.DataFrame(rng.normal(size=(40, 3)), columns=["f0", "f1", "f2"])
        frame["f0"] += np.repeat([0.0, 2.0], 20)
        frame["label"] = np.repeat([0, 1], 20)
        if name == "b_text":
            frame["f2"] = ["red", "blue"] * 20  # refused under the default categorical
        if name == "c_oneclass":
            frame["label"] = 0  # loads, then info_gain refuses a single class
        frame.to_csv(folder / f"{name}.csv", index=False)
    path = tmp_path / "study.toml"
    path.write_text(
        '[data]\npaths = "d/*.csv"\ntarget = "label"\n' + RANKERS + SMALL
        + '\n[output]\nplots = false\n', encoding="utf-8",
    )  # fmt: skip
    return path


@pytest.fixture(scope="module")
def bad_study(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bad_study")
    config = _members(tmp)
    code = main(["run", str(config), "-o", str(tmp / "out"), "-q"])
    return tmp, config, code


def test_a_failing_data_set_fails_alone(bad_study):
    tmp, _, code = bad_study
    out = tmp / "out"
    assert code == 1  # some data sets failed
    for name in ("d1", "d2", "d3"):
        summary = json.loads((out / name / "summary.json").read_text())
        assert summary["status"] == "complete", name
    rows = {
        d["name"]: d for d in json.loads((out / "summary.json").read_text())["study"]["data_sets"]
    }
    assert [rows[n]["status"] for n in ("d1", "d2", "d3")] == ["complete"] * 3
    assert rows["a_ragged"]["status"] == "failed"
    assert "Expected 4 fields in line 4, saw 5" in rows["a_ragged"]["error"]
    assert rows["b_text"]["status"] == "failed" and "'f2'" in rows["b_text"]["error"]
    assert rows["c_oneclass"]["status"] == "failed"
    assert "single class" in rows["c_oneclass"]["error"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "partial"
    assert "3 of 6 data sets failed: a_ragged, b_text, c_oneclass" in manifest["message"]


def test_statistics_use_the_finished_data_sets_and_name_the_missing(bad_study):
    tmp, _, _ = bad_study
    study = json.loads((tmp / "out" / "study" / "study.json").read_text())
    entry = study["topk_mse"]
    assert entry["data_sets"] == ["d1", "d2", "d3"] and entry["n_datasets"] == 3
    assert entry["missing"] == {"a_ragged": "failed", "b_text": "failed", "c_oneclass": "failed"}
    assert "friedman" in entry  # 3 data sets: the statistics run on them
    text = summary_text(tmp / "out")
    assert "a_ragged: failed: " in text and "d1 (40 x 3): complete" in text
    assert "across 3 data sets (missing: a_ragged, b_text, c_oneclass)" in text


def test_the_study_report_names_each_members_outcome(bad_study):
    tmp, _, _ = bad_study
    assert main(["report", str(tmp / "out"), "-q"]) == 0
    page = (tmp / "out" / "report.html").read_text()
    assert page.count(">failed<") == 3 and page.count(">complete<") == 3
    assert "Expected 4 fields in line 4, saw 5" in page


def test_the_command_names_the_failed_data_sets(bad_study, capsys):
    tmp, config, _ = bad_study
    code = main(["run", str(config), "-o", str(tmp / "out")])
    err = capsys.readouterr().err
    assert code == 1
    assert "error: 3 of 6 data sets failed: a_ragged (DataFileError: " in err


def test_validate_checks_every_data_set_up_front(bad_study, capsys):
    _, config, _ = bad_study
    assert main(["validate", str(config)]) == 2
    err = capsys.readouterr().err
    assert "3 problem(s)" in err
    assert "data set 'a_ragged'" in err and "Expected 4 fields in line 4, saw 5" in err
    assert "data set 'b_text'" in err and "'f2'" in err
    assert "data set 'c_oneclass'" in err and "single class" in err  # read, not only loaded
    assert "d1" not in err
