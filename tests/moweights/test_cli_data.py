"""`moweights fetch` and `moweights recommend`: data at hand and which ranker for it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from moweights import fetch
from moweights.cli import main

pytestmark = pytest.mark.quick  # in the quick suite (pytest -m quick): see pyproject.toml


def test_fetch_prints_the_checked_path(tmp_path, monkeypatch, capsys):
    calls = []

    def fake(name, *, data_home=None, download=True):
        calls.append((name, data_home))
        return tmp_path / "skfeature" / f"{name}.mat"

    monkeypatch.setattr(fetch, "skfeature_path", fake)
    assert main(["fetch", "skfeature", "Isolet", "--data-home", str(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "skfeature" / "Isolet.mat")
    assert calls == [("Isolet", str(tmp_path))]


def test_fetch_names_an_unknown_data_set(capsys):
    assert main(["fetch", "skfeature", "Nope"]) == 2  # bad usage (README), as offline is 1
    assert "unknown scikit-feature data set 'Nope'; known: ALLAML" in capsys.readouterr().err


def test_recommend_reads_the_shape_and_the_target(tmp_path, capsys):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(40, 30)), columns=[f"g{i}" for i in range(30)])
    frame["label"] = np.repeat([0, 1], 20)
    frame.to_csv(tmp_path / "data.csv", index=False)
    assert main(["recommend", str(tmp_path / "data.csv"), "--target", "label", "--top", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("40 rows x 30 features, classes in 'label'")
    ranked = [line for line in out if not line.startswith("note: ")]
    assert len(ranked) == 4 and ranked[1].startswith("1. ")
    assert "random ranking finds" in ranked[1]
    assert main(["recommend", str(tmp_path / "missing.csv")]) == 2
