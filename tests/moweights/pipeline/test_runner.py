"""How often a run writes its folder (moweights.pipeline.runner, issue 50 item 1).

Each write rebuilds every table from the whole result; after every sub-step that was a
tenth of the default demo. The folder is written when the data is ready, when the rankings
are aggregated, at most every ``CHECKPOINT_SECONDS`` during the later steps, and once at
the end; the final files do not depend on how often. Counted through Python's audit events
(nothing patched); the clock decides only the writes in between, so the tests fix it to
never (inf) and always (0).
"""

from __future__ import annotations

import sys

import pytest

from moweights.config import parse_config
from moweights.pipeline import runner

RAW = {
    "data": {"builtin": "iris"},
    "rankers": [{"name": "variance"}, {"name": "anova_f"}],
    "aggregation": {"methods": ["mean_rank"]},
    "evaluation": {"cv": 3, "topk": {"n_random": 2}, "error_curves": {"enabled": False},
                   "clustering": {"enabled": True}},
    "output": {"plots": False, "html": False, "cache": False},
    "run": {"verbose": 0},
}  # fmt: skip

#: where the audit hook counts (one hook per process: it cannot be removed)
_WATCH = {"root": "\0", "scores": 0}


def _hook(event, args):
    if event != "os.rename" or len(args) < 2:
        return
    target = str(args[1])
    if target.startswith(_WATCH["root"]) and target.endswith("scores.csv"):
        _WATCH["scores"] += 1


sys.addaudithook(_hook)


def _run(tmp_path, name, checkpoint, monkeypatch):
    monkeypatch.setattr(runner, "CHECKPOINT_SECONDS", checkpoint)
    out = tmp_path / name
    _WATCH.update(root=str(out), scores=0)
    try:
        runner.run(parse_config(RAW), out)
    finally:
        count, _WATCH["root"] = _WATCH["scores"], "\0"
    return out, count


def test_the_folder_is_written_after_the_rankings_and_at_the_end(tmp_path, monkeypatch):
    _, never = _run(tmp_path, "never", float("inf"), monkeypatch)
    _, always = _run(tmp_path, "always", 0.0, monkeypatch)
    # scores.csv exists once the rankings do: written after aggregating, then at the end
    assert never == 2
    assert always > never  # every curve and clustering sub-step wrote it again


def test_the_final_files_do_not_depend_on_how_often(tmp_path, monkeypatch):
    a, _ = _run(tmp_path, "never", float("inf"), monkeypatch)
    b, _ = _run(tmp_path, "always", 0.0, monkeypatch)
    names = sorted(p.name for p in a.iterdir() if p.is_file())
    assert names == sorted(p.name for p in b.iterdir() if p.is_file())
    for name in names:
        if name in ("summary.json", "manifest.json"):  # the run's seconds, their checksums
            continue
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


@pytest.mark.parametrize("checkpoint", [float("inf"), 0.0])
def test_a_stopped_run_still_leaves_its_folder(tmp_path, monkeypatch, checkpoint):
    # Ctrl-C in the evaluation: the folder is written as the run ends, however often before
    import importlib

    evaluation = importlib.import_module("moweights.pipeline.evaluate")  # not the function

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(evaluation, "_clustering", stop)
    with pytest.raises(KeyboardInterrupt):
        _run(tmp_path, "stopped", checkpoint, monkeypatch)
    import json

    summary = json.loads((tmp_path / "stopped" / "summary.json").read_text())
    assert summary["status"] == "partial"
    assert (tmp_path / "stopped" / "scores.csv").is_file()
