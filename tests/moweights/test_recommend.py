"""recommend(): the atlas's measurements for the nearest shape, best first, with reasons."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from moweights.recommend import load_atlas, recommend
from rankers.exceptions import InvalidInputError


def _atlas() -> pd.DataFrame:
    rows = []
    table = {  # structure -> {ranker: precision}
        "clusters": {"laplacian": 0.9, "variance": 0.8, "genie3": 0.1, "random": 0.02},
        "modules": {"laplacian": 0.5, "variance": 0.7, "genie3": 0.1, "random": 0.02},
        "manifold": {"laplacian": 0.7, "variance": 0.6, "genie3": 0.2, "random": 0.02},
        "shift": {"anova_f": 1.0, "relieff": 0.3, "random": 0.02},
        "xor": {"anova_f": 0.2, "relieff": 0.8, "random": 0.02},
        "imbalanced": {"anova_f": 0.6, "relieff": 0.4, "random": 0.02},
    }
    for width, scale in ((100, 1.0), (5000, 0.5)):
        for structure, scores in table.items():
            for ranker, p in scores.items():
                rows.append(
                    {
                        "structure": structure,
                        "informative": 0.02,
                        "n_features": width,
                        "n_samples": 200,
                        "ranker": ranker,
                        "precision": p * scale,
                        "cpu_seconds": 0.1 * width / 100,
                    }
                )
    return pd.DataFrame(rows)


def test_unsupervised_shape_reads_the_unsupervised_cells_at_the_nearest_width():
    out = recommend(np.zeros((150, 4000)), atlas=_atlas(), top=None)
    # laplacian and variance tie (0.35 each, up to the last bits): by name
    assert out["ranker"].tolist() == ["laplacian", "variance", "genie3"]
    assert out.loc[0, "recovered"] == pytest.approx(0.5 * (0.9 + 0.5 + 0.7) / 3)
    assert out.loc[0, "cpu_seconds"] == pytest.approx(5.0)  # the 5,000-feature cells
    assert (
        "best on clusters" in out.loc[0, "why"] and "random ranking finds 1%" in out.loc[0, "why"]
    )
    assert "anova_f" not in set(out["ranker"])  # no target: no supervised ranker


def test_a_target_adds_the_supervised_structures_and_imbalance():
    balanced = np.repeat([0, 1], 50)
    out = recommend(np.zeros((100, 80)), balanced, atlas=_atlas(), top=2)
    assert out.columns[:4].tolist() == ["ranker", "recovered", "shift", "xor"]
    assert out["ranker"].tolist() == ["anova_f", "relieff"]
    skewed = np.r_[np.zeros(90), np.ones(10)]
    out = recommend(np.zeros((100, 80)), skewed, atlas=_atlas(), top=None)
    assert "imbalanced" in out.columns


def test_the_nearest_shape_takes_rows_and_width_together():
    # widths 100 and 5000 at 200 rows, plus 60 rows at width 100 only (laplacian 0.1 there)
    atlas = _atlas()
    few = atlas[atlas["n_features"] == 100].assign(n_samples=60)
    few.loc[few["ranker"] == "laplacian", "precision"] = 0.1
    atlas = pd.concat([atlas, few], ignore_index=True)
    # 50 x 120: log gaps 60 rows x 100 = 0.18 + 0.18, 200 x 100 = 1.39 + 0.18 -> 60 rows
    out = recommend(np.zeros((50, 120)), atlas=atlas, top=None)
    assert out["ranker"].tolist() == ["variance", "genie3", "laplacian"]
    assert "on 60 x 100 planted data" in out.loc[0, "why"]
    # 50 x 4000: 60 x 100 = 0.18 + 3.69, 200 x 5000 = 1.39 + 0.22 -> 200 x 5000, not a
    # shape the atlas lacks (60 x 5000)
    out = recommend(np.zeros((50, 4000)), atlas=atlas, top=None)
    assert "on 200 x 5000 planted data" in out.loc[0, "why"]
    # 300 rows: the 200-row cells, as before
    out = recommend(np.zeros((300, 120)), atlas=atlas, top=None)
    assert out["ranker"].tolist() == ["laplacian", "variance", "genie3"]


def test_the_shipped_atlas_has_a_small_and_a_large_shape():
    out = recommend(np.zeros((60, 1000)), top=None)
    assert "on 60 x 1000 planted data" in out.loc[0, "why"]
    out = recommend(np.zeros((900, 1000)), top=None)
    assert "on 800 x 1000 planted data" in out.loc[0, "why"]


def test_bad_input_is_named(tmp_path):
    with pytest.raises(InvalidInputError, match="2-d table"):
        recommend(np.zeros(5), atlas=_atlas())
    with pytest.raises(InvalidInputError, match="y has 3 values for 5 rows"):
        recommend(np.zeros((5, 2)), [0, 1, 0], atlas=_atlas())
    bad = tmp_path / "atlas.csv"
    pd.DataFrame({"ranker": ["x"]}).to_csv(bad, index=False)
    with pytest.raises(InvalidInputError, match="lacks the columns"):
        load_atlas(bad)


def test_numeric_target_reads_the_regression_cells_and_the_ensemble_is_marked():
    atlas = _atlas()
    extra = {
        "linear": {"rrelieff": 0.6, "random_forest": 0.9, "mean_rank": 0.8, "random": 0.02},
        "product": {"rrelieff": 0.8, "random_forest": 0.3, "mean_rank": 0.5, "random": 0.02},
        "shift": {"stacked": 0.95, "mean_rank": 0.7},
        "xor": {"stacked": 0.75, "mean_rank": 0.5},
    }
    rows = [
        {"structure": s, "informative": 0.02, "n_features": 100, "n_samples": 200,
         "ranker": r, "precision": p, "cpu_seconds": 0.1}
        for s, table in extra.items() for r, p in table.items()
    ]  # fmt: skip
    atlas = pd.concat([atlas[atlas["n_features"] == 100], pd.DataFrame(rows)], ignore_index=True)
    out = recommend(np.zeros((200, 100)), np.linspace(0, 1, 200), atlas=atlas, top=None)
    assert set(out.columns) >= {"linear", "product", "worst_gap", "kind"}
    assert "shift" not in out.columns
    row = out.set_index("ranker")
    assert row.loc["mean_rank", "kind"] == "aggregate"
    # worst_gap: below the best single ranker on its worst structure (product: 0.5 - 0.8)
    assert row.loc["mean_rank", "worst_gap"] == pytest.approx(-0.3)
    assert row.loc["rrelieff", "worst_gap"] == pytest.approx(-0.3)  # linear: 0.6 - 0.9
    # classes: the ensemble row, 0.05 below anova_f on shift and 0.05 below relieff on xor
    out = recommend(np.zeros((200, 100)), np.repeat([0, 1], 100), atlas=atlas, top=None)
    row = out.set_index("ranker")
    assert row.loc["stacked", "kind"] == "ensemble"
    assert row.loc["stacked", "worst_gap"] == pytest.approx(-0.05)
    assert "never more than 0.05 below" in row.loc["stacked", "why"]
    assert "ranker 'stacked'" in row.loc["stacked", "why"]


def test_the_shipped_atlas_recommends_the_ensemble_for_classes_where_it_is_safe():
    """At 200 x 200 the shipped atlas holds the ensemble (benchmarks/results/atlas_v3_200):
    with classes it is listed, its worst gap is its measured one, and the registered name
    is what a config selects."""
    import rankers

    out = recommend(np.zeros((200, 200)), np.repeat([0, 1], 100), top=None).set_index("ranker")
    assert out.loc["stacked", "kind"] == "ensemble"
    assert type(rankers.get("stacked")).__name__ == "StackedRanker"
    # its worst structure is shift, 0.13 below t_test (0.85 against 0.98)
    assert out.loc["stacked", "worst_gap"] == pytest.approx(-0.13, abs=0.005)
    assert out.loc["stacked", "worst_gap"] == out["worst_gap"].max()
    # averaging every class ranker loses the xor pairs
    assert out.loc["mean_rank", "xor"] < 0.3 < 0.95 < out.loc["stacked", "xor"]
    # without a target it is listed too, below the graph scores that recover clusters
    none = recommend(np.zeros((200, 200)), top=None).set_index("ranker")
    assert none.loc["stacked", "recovered"] < none.loc["spec", "recovered"]


def test_for_a_numeric_target_the_ensemble_is_named_with_its_regression_task():
    """On the numeric structures the shipped atlas holds the ensemble's regression task:
    the recommendation names the parameter a config needs for it (the registered default
    is the classification task), and its worst structure is product, below rrelieff."""
    y = np.linspace(0.0, 1.0, 200)
    out = recommend(np.zeros((200, 200)), y, top=None).set_index("ranker")
    assert 'params = { task = "regression" }' in out.loc["stacked", "why"]
    assert out.loc["stacked", "worst_gap"] == pytest.approx(
        out.loc["stacked", "product"] - out.loc["rrelieff", "product"]
    )
    classes = recommend(np.zeros((200, 200)), np.repeat([0, 1], 100), top=None)
    assert "task" not in classes.set_index("ranker").loc["stacked", "why"]


def test_the_shipped_atlas_holds_every_built_in_ranker_where_its_kind_applies():
    """Issue 40's atlas holds every registered ranker: the unsupervised ones on every
    structure (they read X only), the class rankers on the class structures, the regression
    ones on the numeric-target structures, and the ensemble on class and no-target data."""
    import rankers
    from moweights.recommend import (
        AGGREGATES,
        REGRESSION,
        SUPERVISED,
        TARGET_KINDS,
        UNSUPERVISED,
    )

    atlas = load_atlas()
    table = rankers.available()
    built_in = table[table["class"].str.startswith(("rankers.", "moweights."))]  # no plug-ins
    assert len(built_in) >= 27
    classes = (*SUPERVISED, "imbalanced")
    where = {kind: set() for kind in table["target_kind"]}
    for target, structures in (("classes", classes), ("regression", REGRESSION)):
        for kind in TARGET_KINDS[target]:
            where.setdefault(kind, set()).update(structures)
    where["unsupervised"] = {*UNSUPERVISED, *classes, *REGRESSION}
    missing = []
    for name, kind in zip(built_in["name"], built_in["target_kind"], strict=True):
        structures = where[kind] | (set(UNSUPERVISED) if name == "stacked" else set())
        assert structures, name
        for structure in sorted(structures):
            if not ((atlas["ranker"] == name) & (atlas["structure"] == structure)).any():
                missing.append((name, structure))
    assert not missing, missing
    assert {"random", *AGGREGATES} <= set(atlas["ranker"])
