"""``moweights recommend FILE``: a labelled file read as labelled, identifiers left out, the
target's kind choosing the atlas rows, and a reason for every recommendation."""

from __future__ import annotations

import numpy as np
import pandas as pd

import rankers
from moweights.cli import main
from moweights.data import make_planted
from moweights.recommend import recommend_file


def _two_class_shift(tmp_path, m=60, n=400):
    """A planted class shift between two groups, with a sample-id column and text labels."""
    data = make_planted("shift", n_samples=m, n_features=n, informative=8, n_groups=2,
                        random_state=0)  # fmt: skip
    frame = data.X.copy()
    frame.insert(0, "sample", [f"S{i:03d}" for i in range(m)])
    frame["condition"] = np.where(data.y == 0, "control", "treated")
    path = tmp_path / "shift.csv"
    frame.to_csv(path, index=False)
    return path


def test_a_planted_two_class_shift_gets_a_class_ranker_first(tmp_path):
    path = _two_class_shift(tmp_path)
    found = recommend_file(path, top=None)
    assert found.target == "condition" and found.target_kind == "classes"
    assert (found.n_samples, found.n_features) == (60, 400)  # the id is no feature
    first = found.table.iloc[0]
    assert rankers.get_class(first["ranker"]).target_kind in ("classification", "both")
    # no unsupervised ranker is recommended for labelled data
    kinds = {
        rankers.get_class(r).target_kind
        for r in found.table["ranker"]
        if r not in ("mean_rank", "borda", "kemeny_top32", "generic_tol", "stacked_top3")
    }
    assert "unsupervised" not in kinds  # fmt: skip
    assert "a class ranker" in first["why"] or "reads the target" in first["why"]
    notes = " ".join(found.notes)
    assert "read 'condition' as the target" in notes
    assert "'sample' (60 distinct text values)" in notes and '[data] drop = ["sample"]' in notes
    assert "2 classes (30 / 30 rows)" in notes
    assert "the best on each alone: shift: " in notes and "t_test" in notes
    explicit = recommend_file(path, target="condition", top=None)
    assert explicit.table["ranker"].tolist() == found.table["ranker"].tolist()


def test_the_target_kind_chooses_the_rows(tmp_path):
    path = _two_class_shift(tmp_path)
    unsupervised = recommend_file(path, guess_target=False, top=None)
    assert unsupervised.target_kind == "none"
    assert {rankers.get_class(r).target_kind for r in unsupervised.table["ranker"]} == {
        "unsupervised"
    }
    assert any("text column(s) ('condition')" in n for n in unsupervised.notes)
    frame = pd.read_csv(path)
    frame["condition"] = np.random.default_rng(0).normal(size=len(frame))  # a quantity
    frame.rename(columns={"condition": "y"}).to_csv(tmp_path / "numeric.csv", index=False)
    # an atlas with regression cells (the shipped one may not hold them yet)
    atlas = pd.DataFrame(
        [{"structure": s, "informative": 0.02, "n_features": 400, "n_samples": 60,
          "ranker": r, "precision": p}
         for s in ("linear", "product", "clusters", "shift")
         for r, p in (("rrelieff", 0.6), ("random_forest", 0.7), ("variance", 0.9),
                      ("t_test", 0.8), ("mean_rank", 0.5))]
    )  # fmt: skip
    numeric = recommend_file(tmp_path / "numeric.csv", top=None, atlas=atlas)
    assert numeric.target_kind == "regression"
    assert numeric.table["ranker"].tolist() == ["random_forest", "rrelieff", "mean_rank"]


def test_two_possible_targets_are_named_not_guessed(tmp_path):
    frame = pd.DataFrame(np.random.default_rng(0).normal(size=(40, 20)))
    frame.columns = [f"g{i}" for i in range(20)]
    frame["label"] = ["a", "b"] * 20
    frame["group"] = ["x", "y", "z", "w"] * 10
    frame.to_csv(tmp_path / "two.csv", index=False)
    found = recommend_file(tmp_path / "two.csv")
    assert found.target is None
    assert any("several columns could be the target ('label', 'group')" in n for n in found.notes)


def test_the_command_prints_the_shape_notes_and_reasons(tmp_path, capsys):
    path = _two_class_shift(tmp_path)
    assert main(["recommend", str(path), "--top", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{path}: 60 rows x 400 features, classes in 'condition'"
    assert any(line.startswith("note: left out 1 identifier column") for line in out)
    ranked = [line for line in out if line[:2] in ("1.", "2.", "3.")]
    assert len(ranked) == 3 and "planted data it put" in ranked[0]
    assert main(["recommend", str(path), "--no-target", "--top", "1"]) == 0
    assert "no target" in capsys.readouterr().out.splitlines()[0]
    assert main(["recommend", str(path), "--target", "nope"]) == 2


def test_a_genes_as_rows_file_gets_the_transpose_hint_and_option(tmp_path, capsys):
    """issue 48 item 16: such a file ended in "got shape (5001, 0)", with no --transpose."""
    rng = np.random.default_rng(0)
    lines = ["gene," + ",".join(f"s{i}" for i in range(20)),
             "group," + ",".join("ab"[i % 2] for i in range(20))]  # fmt: skip
    lines += [f"g{g}," + ",".join(f"{v:.3f}" for v in rng.lognormal(size=20)) for g in range(50)]
    path = tmp_path / "genes.csv"
    path.write_text("\n".join(lines) + "\n")
    assert main(["recommend", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: genes.csv: no numeric feature column is left (51 rows"), err
    assert "pass --transpose (a run: [data] transpose = true)" in err
    assert main(["recommend", str(path), "--transpose", "--target", "group"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{path}: 20 rows x 50 features, classes in 'group'"), out
