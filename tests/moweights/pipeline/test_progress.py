"""Progress of a config run: bars on a terminal, a line per step in a log, silence at
verbose 0; callbacks handed to the calls they count, bars chosen by the rankers' tags,
nothing patched."""

from __future__ import annotations

import re

import joblib
import pytest

import rankers
from moweights.config import parse_config
from moweights.pipeline.progress import Progress
from moweights.pipeline.steps import make_ranker, needs_y

RAW = {"data": {"builtin": "iris"}, "rankers": [{"name": "variance"}], "run": {"verbose": 0}}


def test_no_bar_no_callback():
    with Progress(0).tasks("folds", 3) as update:
        assert update is None


def test_a_shown_bar_hands_out_its_update(capsys):
    progress = Progress(2, terminal=True)
    assert progress.shown
    with progress.tasks("folds", 3) as update:
        for _ in range(3):
            update(1)
        assert update.__self__.n == 3 and update.__self__.total == 3
    assert "folds" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("name", "verbose"), [("mo_weighting", 1), ("svm_rfe", 1), ("genie3", 0), ("rf_score", 0)]
)
def test_only_rankers_whose_tags_say_progress_draw_a_bar(name, verbose):
    config = parse_config({**RAW, "rankers": [{"name": name}]})
    spec = config.rankers[0]
    est = make_ranker(spec, config, main=True, progress=Progress(2, terminal=True))
    assert rankers.ranker_tags(est).progress is bool(verbose)
    assert est.get_params()["verbose"] == verbose
    quiet = make_ranker(spec, config, main=True, progress=Progress(0))
    assert quiet.get_params()["verbose"] == 0


def test_the_target_follows_the_tags_not_the_name():
    config = parse_config(
        {**RAW, "rankers": [{"name": "mo_weighting", "params": {"objectives": ["C4"]}}]}
    )
    est = make_ranker(config.rankers[0], config, main=False)
    assert needs_y(est) is False  # the entropy criterion alone needs no labels
    config = parse_config({**RAW, "rankers": [{"name": "mo_weighting"}]})
    assert needs_y(make_ranker(config.rankers[0], config, main=False)) is True


def test_a_run_with_bars_patches_nothing(tmp_path):
    from moweights.pipeline import run

    before = (joblib.Parallel.__call__, joblib.Parallel.print_progress)
    raw = {
        **RAW,
        "evaluation": {"cv": 2, "topk": {"n_random": 1}, "error_curves": {"enabled": False},
                       "clustering": {"enabled": False}},
        "output": {"plots": False, "html": False, "cache": False},
        "run": {"verbose": 2},
    }  # fmt: skip
    seen = []
    original = Progress.tasks

    def spy(self, desc, total, unit="fold"):
        seen.append((joblib.Parallel.__call__, joblib.Parallel.print_progress))
        return original(self, desc, total, unit)

    Progress.tasks = spy
    try:
        result = run(parse_config(raw), tmp_path / "out")
    finally:
        Progress.tasks = original
    assert result.status == "complete"
    assert seen and all(s == before for s in seen)
    assert (joblib.Parallel.__call__, joblib.Parallel.print_progress) == before


# ------------------------------------------------------------------ lines in a log
def test_a_log_gets_a_line_per_step_and_no_bars(capsys):
    progress = Progress(1, terminal=False)
    assert not progress.shown
    with progress.tasks("folds", 3) as update:
        assert update is None  # the fold bars stay off: the step's line says when it is done
    with progress.bar(total=2, desc="rankers", unit="ranker") as bar:
        for label in ("t_test", "variance"):
            bar.set_postfix_str(label)
            bar.update(1)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "[moweights] rankers: 2 rankers"
    assert re.fullmatch(r"\[moweights\] rankers 1/2: t_test done in \d+\.\d\d s", lines[1])
    assert re.fullmatch(r"\[moweights\] rankers 2/2: variance done in \d+\.\d\d s", lines[2])
    assert len(lines) == 3 and "\r" not in "".join(lines)  # no bar redraws


def _run(tmp_path, verbose: int):
    from moweights.pipeline import run

    raw = {
        **RAW,
        "rankers": [{"name": "variance"}, {"name": "laplacian"}],
        "evaluation": {"cv": 2, "topk": {"n_random": 1}, "error_curves": {"enabled": False},
                       "clustering": {"enabled": False}},
        "output": {"plots": False, "html": False, "cache": False},
        "run": {"verbose": verbose},
    }  # fmt: skip
    return run(parse_config(raw), tmp_path / f"out{verbose}")


def test_a_run_into_a_log_says_each_step(tmp_path, capsys):
    """pytest's stderr is no terminal: the run prints lines, the rankers and every
    evaluation target by name, with their count."""
    _run(tmp_path, 1)
    err = capsys.readouterr().err
    assert "[moweights] rankers: 2 rankers" in err
    assert re.search(r"rankers 1/2: variance done in ", err)
    assert re.search(r"rankers 2/2: laplacian done in ", err)
    assert "[moweights] fold rankings: 2 rankers" in err
    # class prediction of 2 rankers, the mean rank aggregate and random: 4 curves
    assert re.search(r"class prediction 4/4: random done in ", err)
    assert "\r" not in err


def test_quiet_runs_print_nothing(tmp_path, capsys):
    _run(tmp_path, 0)
    assert capsys.readouterr().err == ""


def test_progress_lines_name_what_they_count(tmp_path, capsys):
    """issue 48 item 20: the error curves and clustering said "4 its"."""
    from moweights.pipeline import run

    raw = {
        "data": {"builtin": "iris"},
        "rankers": [{"name": "variance"}],
        "evaluation": {"cv": 3, "topk": {"enabled": False},
                       "classification": {"enabled": False},
                       "error_curves": {"n_random": 2}, "clustering": {"n_restarts": 1}},
        "output": {"plots": False, "html": False},
        "run": {"verbose": 2},
    }  # fmt: skip
    run(parse_config(raw), tmp_path / "out")
    err = capsys.readouterr().err
    assert " its" not in err, err
    assert re.search(r"error curves: \d+ curves", err) and re.search(
        r"clustering: \d+ rankings", err
    )


def test_a_long_generic_line_is_cut_after_a_whole_name():
    from moweights.output.folder import _cut

    text = "{" + ", ".join(f"mean feature {i}" for i in range(12)) + "} > {x}"
    cut = _cut(text)
    assert len(cut) <= 100 and cut.endswith(" ...")
    last = cut[:-4].split(", ")[-1].lstrip("{")
    assert last in {f"mean feature {i}" for i in range(12)}, cut  # a whole name, not "me..."


@pytest.mark.parametrize("terminal", [True, False])
def test_a_bar_without_a_unit_counts_steps_not_its(capsys, terminal):
    """issue 48 item 20: a bar made without a unit drew tqdm's "10 it" on a terminal."""
    with Progress(1, terminal=terminal).bar(total=10, desc="work") as bar:
        bar.update(10)
    assert bar.unit == "step"
    err = capsys.readouterr().err
    assert "it/s" not in err and " its" not in err and "10 it" not in err, err
    if not terminal:
        assert "work: 10 steps" in err, err
