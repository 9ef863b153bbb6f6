"""Progress of a config run: callbacks handed to the calls they count, bars chosen by the
rankers' tags, nothing patched."""

from __future__ import annotations

import joblib
import pytest

import rankers
from moweights.config import parse_config
from moweights.pipeline.progress import Progress
from moweights.pipeline.steps import make_ranker, needs_y

pytestmark = pytest.mark.quick  # in the quick suite (pytest -m quick): see pyproject.toml

RAW = {"data": {"builtin": "iris"}, "rankers": [{"name": "variance"}], "run": {"verbose": 0}}


def test_no_bar_no_callback():
    with Progress(0).tasks("folds", 3) as update:
        assert update is None


def test_a_shown_bar_hands_out_its_update(capsys):
    progress = Progress(2)
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
    est = make_ranker(spec, config, main=True, progress=Progress(2))
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
