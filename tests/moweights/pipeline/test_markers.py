"""A config run's marker features per class (``[markers]``, issue 47 item 2).

The run's markers.csv is find_markers on the run's data, cached like a fit; the summary, the
terminal and the report name each class's top markers; a config that cannot have markers
(a site run, no target, a member for a numeric target) is refused before anything runs,
and a target that is no class labels is a data problem ``validate`` finds too.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from moweights.cli import main
from moweights.config import parse_config
from moweights.errors import ConfigError
from moweights.pipeline import run
from moweights.pipeline.problems import data_problems
from moweights.scverse.markers import MARKER_COLUMNS, find_markers


def _planted(tmp_path, m=90, seed=0) -> pd.DataFrame:
    """Three cell types, genes g0..g2 marking type a, g3..g5 type b, g6..g8 type c."""
    rng = np.random.default_rng(seed)
    types = np.repeat(["a", "b", "c"], m // 3)
    counts = rng.poisson(0.5, size=(m, 20)).astype(float)
    for i, t in enumerate("abc"):
        counts[np.ix_(types == t, range(3 * i, 3 * i + 3))] += rng.poisson(4.0, size=(m // 3, 3))
    frame = pd.DataFrame(np.log1p(counts), columns=[f"g{j}" for j in range(20)])
    frame["cell_type"] = types
    frame.to_csv(tmp_path / "cells.csv", index=False)
    return frame


def _raw(**markers):
    return {
        "data": {"path": "cells.csv", "target": "cell_type"},
        "rankers": [{"name": "t_test"}, {"name": "anova_f"}],
        "markers": {"enabled": True, **markers},
        "evaluation": {"enabled": False},
        "output": {"plots": True, "html": True},
        "run": {"verbose": 0},
    }


def test_a_run_writes_every_class_markers_as_find_markers_gives_them(tmp_path):
    frame = _planted(tmp_path)
    config = parse_config(_raw(n_top=3), base_dir=tmp_path)
    out = tmp_path / "out"
    run(config, out)
    table = pd.read_csv(out / "markers.csv")
    assert list(table.columns) == [*MARKER_COLUMNS, "t_test.rank", "wilcoxon.rank"]
    X = frame.drop(columns="cell_type")
    expected = find_markers(X, frame["cell_type"])
    assert table["feature"].tolist() == expected["feature"].tolist()
    assert table["group"].tolist() == expected["group"].astype(str).tolist()
    for column in ("score", "logfoldchange", "pvalue", "qvalue", "pct_in", "pct_out"):
        # the run's tables print 10 significant digits
        np.testing.assert_allclose(table[column], expected[column], rtol=1e-9, atol=0)
    summary = json.loads((out / "summary.json").read_text())
    top = summary["markers"]["top"]
    # the planted markers lead their own type
    assert {k: set(v) for k, v in top.items()} == {
        "a": {"g0", "g1", "g2"},
        "b": {"g3", "g4", "g5"},
        "c": {"g6", "g7", "g8"},
    }
    manifest = json.loads((out / "manifest.json").read_text())
    assert {"markers.csv", "markers.png"} <= set(manifest["files"])
    page = (out / "report.html").read_text()
    assert "Marker features per class" in page and "markers.png" in page
    assert "g0" in page


def test_a_rerun_takes_the_markers_from_the_cache_byte_for_byte(tmp_path, capsys):
    _planted(tmp_path)
    config = parse_config(_raw(), base_dir=tmp_path)
    first = run(config, tmp_path / "out")
    text = (tmp_path / "out" / "markers.csv").read_bytes()
    again = run(config, tmp_path / "out")
    assert "markers" in first.computed and "markers" in again.cached
    assert (tmp_path / "out" / "markers.csv").read_bytes() == text
    assert list(again.markers["group"].cat.categories) == ["a", "b", "c"]


def test_the_terminal_summary_lists_the_top_markers(tmp_path, capsys):
    _planted(tmp_path)
    (tmp_path / "run.toml").write_text(
        '[data]\npath = "cells.csv"\ntarget = "cell_type"\n'
        '[[rankers]]\nname = "t_test"\n[markers]\nenabled = true\nn_top = 2\n'
        "[evaluation]\nenabled = false\n[output]\nplots = false\n"
    )
    assert main(["run", str(tmp_path / "run.toml"), "-o", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert "top markers per class (t-test; markers.csv):" in printed
    line = next(ln for ln in printed.splitlines() if ln.strip().startswith("a "))
    assert len(line.split(",")) == 2  # n_top markers of the class


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"rankers": ["rrelieff"]}, "'rrelieff' ranks for a regression target"),
        ({"rankers": ["no_such_ranker"]}, "no_such_ranker"),
    ],
)
def test_members_that_cannot_rank_classes_are_refused(tmp_path, change, message):
    _planted(tmp_path)
    with pytest.raises(ConfigError, match=message):
        parse_config(_raw(**change), base_dir=tmp_path)


def test_markers_need_one_data_set_with_a_target(tmp_path):
    frame = _planted(tmp_path)
    frame.drop(columns="cell_type").to_csv(tmp_path / "no_target.csv", index=False)
    raw = _raw()
    raw["data"] = {"path": "no_target.csv"}
    raw["rankers"] = [{"name": "variance"}]
    with pytest.raises(ConfigError, match="need a class target: set"):
        parse_config(raw, base_dir=tmp_path)
    raw = _raw()
    raw["data"]["site_column"] = "cell_type"
    raw["data"]["target"] = None
    raw["rankers"] = [{"name": "variance"}]
    del raw["data"]["target"]
    with pytest.raises(ConfigError, match="a site run ranks each site apart"):
        parse_config(raw, base_dir=tmp_path)


def test_a_target_of_quantities_is_a_data_problem_for_markers(tmp_path):
    frame = _planted(tmp_path)
    frame["cell_type"] = np.linspace(0.5, 3.5, len(frame))  # a quantity, not labels
    frame.to_csv(tmp_path / "cells.csv", index=False)
    raw = _raw()
    raw["rankers"] = [{"name": "variance"}]  # no class ranker: only [markers] needs classes
    problems = data_problems(parse_config(raw, base_dir=tmp_path))
    blocking = [p for p in problems if p.blocking]
    assert blocking and "[markers]" in blocking[0].message
    raw["markers"]["enabled"] = False
    assert not [p for p in data_problems(parse_config(raw, base_dir=tmp_path)) if p.blocking]
