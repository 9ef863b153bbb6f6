"""Smoke test of benchmarks/protocols/atlas.py: a tiny grid end to end, cells in children."""

from __future__ import annotations

import pandas as pd

from benchmarks.protocols import atlas


def test_tiny_grid_scores_resumes_and_writes(tmp_path):
    args = [
        "--quick",
        "--rankers",
        "anova_f",
        "--structures",
        "shift",
        "clusters",
        "--cache-dir",
        str(tmp_path / "cache"),
        "--out",
        str(tmp_path / "out"),
        "--quiet",
    ]
    frame = atlas.main(args)
    # supervised rankers only where the structure has a class; a random row everywhere
    pairs = set(zip(frame["structure"], frame["ranker"], strict=True))
    assert pairs == {("shift", "anova_f"), ("shift", "random"), ("clusters", "random")}
    shift = frame.set_index(["structure", "ranker"])
    assert shift.loc[("shift", "anova_f"), "precision"] == 1.0  # 3 strong shifted features
    assert shift.loc[("shift", "random"), "precision"] == 3 / 60
    assert (frame["peak_mb"] >= 0).all() and (frame["k"] == frame["n_planted"]).all()
    out = tmp_path / "out"
    assert {"atlas.csv", "summary.md", "status.md", "atlas_shift.png"} <= {
        p.name for p in out.iterdir()
    }
    pd.testing.assert_frame_equal(pd.read_csv(out / "atlas.csv"), frame, check_dtype=False)
    again = atlas.main(args)  # every cell from the cache
    pd.testing.assert_frame_equal(again, frame)


def test_variants_skips_and_error_curves_in_process(tmp_path):
    args = [
        "--quick",
        "--rankers",
        "anova_f",
        "relieff",
        "--structures",
        "shift",
        "--set",
        "relieff.n_neighbors=5",
        "--max-width",
        "anova_f=50",
        "--curves-max-width",
        "100",
        "--backend",
        "inline",
        "--cache-dir",
        str(tmp_path / "cache"),
        "--out",
        str(tmp_path / "out"),
        "--quiet",
    ]
    frame = atlas.main(args).set_index("ranker")
    # anova_f is skipped above 50 features; the variant runs beside the default relieff
    assert sorted(frame.index) == ["random", "relieff", "relieff(n_neighbors=5)"]
    assert frame.loc["random", "eca"] == 0.0  # a random ranking against the expected curve
    # 3 strong shifted features: the top of relieff's ranking predicts the class
    assert frame.loc["relieff", "precision"] == 1.0 and frame.loc["relieff", "eca"] > 0.1
    text = (tmp_path / "out" / "summary.md").read_text()
    assert "ECA against a random ranking" in text and "anova_f above 50 features" in text


def test_aggregates_ensemble_and_regression_rows(tmp_path):
    args = ["--quick", "--rankers", "anova_f", "t_test", "rrelieff", "random_forest",
            "stacked_top3", "--structures", "shift", "linear", "--cache-dir",
            str(tmp_path / "cache"), "--backend", "inline", "--quiet"]  # fmt: skip
    frame = atlas.main(args)
    rows = frame.set_index(["structure", "ranker"])
    # regression structures: the regression rankers and the ensemble's regression task
    linear = set(frame.loc[frame["structure"] == "linear", "ranker"])
    assert {"rrelieff", "random_forest", "mean_rank", "stacked_top3", "random"} <= linear
    assert "anova_f" not in linear
    # an aggregate's precision comes from its members' orders: on 3 strong shifted features
    # both members find all three, so does their mean rank
    assert rows.loc[("shift", "anova_f"), "precision"] == 1.0
    assert rows.loc[("shift", "mean_rank"), "precision"] == 1.0
    assert rows.loc[("shift", "mean_rank"), "n_members"] == 3  # anova_f, t_test, random_forest
    members = rows.loc[("shift", "stacked_top3"), "members"].split()
    from moweights.ensemble import POOLS

    assert len(members) == 3 and set(members) <= set(POOLS["classification"])
    members = rows.loc[("linear", "stacked_top3"), "members"].split()
    assert len(members) == 3 and set(members) <= set(POOLS["regression"])


def test_ship_lets_a_later_run_replace_a_shape_and_names_the_ensemble(tmp_path):

    def run(name, rows):
        folder = tmp_path / name
        folder.mkdir()
        pd.DataFrame(rows).to_csv(folder / "atlas.csv", index=False)
        return folder

    def row(width, ranker, precision):
        return {"structure": "shift", "informative": 0.1, "n_features": width, "n_samples": 200,
                "seed": 0, "ranker": ranker, "precision": precision}  # fmt: skip

    old = run("old", [row(200, "anova_f", 0.5), row(2000, "anova_f", 0.4)])
    new = run("new", [row(200, "anova_f", 0.9), row(200, "stacked_auto", 0.8),
                      row(200, "stacked_top3", 0.7)])  # fmt: skip
    out = atlas.ship([old, new], tmp_path / "shipped.csv")
    assert list(out.columns) == atlas.SHIPPED_COLUMNS
    got = {(r.n_features, r.ranker): r.precision for r in out.itertuples()}
    # the 200-feature cells are the new run's, the 2,000-feature one the old run's; the
    # ensemble under its registered name (n_members="auto"), its other setting left out
    assert got == {(200, "anova_f"): 0.9, (200, "stacked"): 0.8, (2000, "anova_f"): 0.4}
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "shipped.csv"), out, check_dtype=False)


def test_a_new_ranker_runs_beside_a_committed_run(tmp_path):
    """--beside: a run of one ranker (here the NSGA-II-weighted ensemble) gets a committed
    run's rows of the same cells for the rankers it lacks, and its gap table compares it
    with their best single ranker; the committed run's own rows stay as they were."""
    common = ["--quick", "--structures", "shift", "--cache-dir", str(tmp_path / "cache"),
              "--backend", "inline", "--quiet"]  # fmt: skip
    first = atlas.main([*common, "--rankers", "anova_f", "t_test", "--out", str(tmp_path / "a")])
    frame = atlas.main(
        [*common, "--rankers", "stacked_nsga2", "--beside", str(tmp_path / "a"),
         "--out", str(tmp_path / "b")]
    )  # fmt: skip
    keys = ["structure", "informative", "n_features", "n_samples", "seed", "ranker"]
    mine = frame[frame["ranker"] == "stacked_nsga2"]
    assert len(mine) == len(first[first["ranker"] == "anova_f"]) > 0
    theirs = frame[frame["ranker"].isin(["anova_f", "t_test"])].sort_values(keys)
    expected = first[first["ranker"].isin(["anova_f", "t_test"])].sort_values(keys)
    pd.testing.assert_frame_equal(
        theirs.reset_index(drop=True)[expected.columns], expected.reset_index(drop=True),
        check_dtype=False,
    )  # fmt: skip
    # random is this run's own, not taken twice
    assert frame["ranker"].eq("random").sum() == first["ranker"].eq("random").sum()
    assert "| shift | stacked_nsga2 |" in (tmp_path / "b" / "summary.md").read_text()
