"""`moweights fetch` and `moweights recommend`: data at hand and which ranker for it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from moweights.cli import main
from moweights.data import fetch


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


# ------------------------------------------------- messages a new user reads (issue 48 item 12)
def _config(tmp_path, data: str, rankers=("t_test",)) -> str:
    path = tmp_path / "run.toml"
    blocks = "".join(f'[[rankers]]\nname = "{r}"\n' for r in rankers)
    path.write_text(
        f'[data]\npath = "{data}"\ntarget = "label"\n{blocks}[evaluation]\nenabled = false\n'
    )
    return str(path)


def _rows(sep: str, label) -> str:
    rng = np.random.default_rng(0)
    return "".join(f"{rng.normal():.3f}{sep}{rng.normal():.3f}{sep}{label(i)}\n" for i in range(30))


def test_latin1_text_is_named_as_such_not_binary(tmp_path, capsys):
    text = "a,b,label\n" + _rows(",", lambda i: "caf\xe9" if i % 2 else "plain")
    (tmp_path / "lat.csv").write_bytes(text.encode("latin-1"))
    assert main(["validate", _config(tmp_path, "lat.csv")]) == 2
    err = capsys.readouterr().err
    assert "byte 0xe9" in err and "'caf\xe9'" in err and "Latin-1 / Windows-1252" in err, err
    assert "re-save the file as UTF-8" in err and "binary" not in err
    (tmp_path / "bin.csv").write_bytes(b"\x00\x01\x02\xff\xfe not text")
    assert main(["validate", _config(tmp_path, "bin.csv")]) == 2
    assert "a NUL byte at position 0: binary data" in capsys.readouterr().err


def test_a_semicolon_separated_file_gets_a_hint_about_its_separator(tmp_path, capsys):
    (tmp_path / "semi.csv").write_text("a;b;label\n" + _rows(";", lambda i: i % 2))
    assert main(["validate", _config(tmp_path, "semi.csv")]) == 2
    err = capsys.readouterr().err
    assert "its header reads as one column 'a;b;label'" in err, err
    assert "separated by ';'" in err and "re-save it comma-separated" in err
    assert "did you mean" not in err


def test_validate_catches_a_continuous_target_for_class_rankers(tmp_path, capsys):
    (tmp_path / "half.csv").write_text("a,b,label\n" + _rows(",", lambda i: 1.5 + i % 2))
    config = _config(tmp_path, "half.csv")
    assert main(["validate", config]) == 2
    err = capsys.readouterr().err
    assert "the target is continuous (2 distinct values: 1.5, 2.5), but t_test" in err, err
    assert "pandas.qcut" in err and "rrelieff" in err
    assert main(["run", config, "-q", "-o", str(tmp_path / "out")]) == 2  # refused at once
    assert not (tmp_path / "out").exists()
    # a ranker for a continuous target: fine
    assert main(["validate", _config(tmp_path, "half.csv", ("rrelieff",)), "-q"]) == 0
