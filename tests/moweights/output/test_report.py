"""The run folder: tables, statistics against scipy, partial folders, the HTML page."""

from __future__ import annotations

import base64
import json
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from moweights.config import parse_config
from moweights.output import atomic_write, curve_point, render, summary_text
from moweights.pipeline import run

RAW = {
    "data": {"builtin": "iris"},
    "rankers": [{"name": "variance"}, {"name": "laplacian"}, {"name": "info_gain"}],
    "aggregation": {"methods": ["mean_rank", "borda", "median_rank", "generic"]},
    "evaluation": {
        "cv": 4,
        "classification": {"n_random": 2, "ks": [1, 2, 3, 4]},
        "topk": {"n_random": 2, "ks": [1, 2, 3, 4]},
        "error_curves": {"enabled": False},
        "clustering": {"enabled": False},
    },
    "run": {"verbose": 0, "random_state": 5},
}
METHODS = ["variance", "laplacian", "info_gain", "mean_rank", "borda", "median_rank", "random"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "out"
    result = run(parse_config(RAW), out)
    assert result.status == "complete"
    return out


def test_curve_point_takes_the_largest_grid_point_below_n():
    curves = pd.DataFrame(
        {
            "ranker": ["a"] * 4 + ["b"] * 4,
            "k": [1, 2, 4, 5] * 2,
            "mean": [4.0, 3.0, 2.0, 1.0, 8.0, 7.0, 6.0, 5.0],
            "std": 0.5,
        }
    )
    point = curve_point(curves, k=16)  # every k <= 16, but k = n = 5 is the full set
    assert point.to_dict(orient="list") == {
        "ranker": ["a", "b"], "k": [4, 4], "mean": [2.0, 6.0], "std": [0.5, 0.5]
    }  # fmt: skip
    assert curve_point(curves, k=2)["mean"].tolist() == [3.0, 7.0]
    assert curve_point(curves, k=0)["k"].tolist() == [1, 1]  # nothing below: the first point


def test_statistics_are_friedman_and_nemenyi_over_the_folds(folder):
    # with a class target the headline is the nested class prediction (higher is better)
    folds = pd.read_csv(folder / "class_folds.csv")
    table = pd.read_csv(folder / "statistics_table.csv", index_col="fold")
    st = json.loads((folder / "statistics.json").read_text())
    assert st["score"] == "classification" and st["higher_is_better"]
    assert st["k"] == 3  # iris: 4 features, compared at the largest k below 4
    assert st["description"] == (
        "balanced accuracy of 5-NN predicting the class from the top 3 features"
    )
    at = folds[folds["k"] == 3].pivot(index="fold", columns="ranker", values="value")
    pd.testing.assert_frame_equal(table, at[METHODS], check_names=False)
    # Demšar's chi2_F from the average ranks (ties share their average rank; 1 = best)
    ranks = (-table).rank(axis=1)
    k, n = table.shape[1], table.shape[0]
    r = ranks.mean()
    chi2 = 12 * n / (k * (k + 1)) * ((r**2).sum() - k * (k + 1) ** 2 / 4)
    assert st["friedman"]["statistic"] == pytest.approx(chi2)
    assert st["friedman"]["avg_ranks"] == pytest.approx(r.to_dict())
    q = stats.studentized_range.ppf(0.95, k, np.inf) / np.sqrt(2)
    assert st["nemenyi"]["cd"] == pytest.approx(q * np.sqrt(k * (k + 1) / (6 * n)), rel=1e-6)


def test_aggregates_are_those_of_the_ranks(folder):
    ranks = pd.read_csv(folder / "ranks.csv", index_col="feature")
    agg = json.loads((folder / "aggregated.json").read_text())
    base = ranks[["variance", "laplacian", "info_gain"]]
    pd.testing.assert_series_equal(ranks["mean_rank"], base.mean(axis=1), check_names=False)
    median = base.median(axis=1)
    assert agg["median_rank"]["order"] == list(median.sort_values(kind="stable").index)
    blocks = agg["generic"]["blocks"]
    assert ranks["generic_block"].to_dict() == {f: i + 1 for i, b in enumerate(blocks) for f in b}


def test_html_page_is_self_contained(folder):
    page = (folder / "report.html").read_text()
    assert re.search(r"<(img|script|link)[^>]+(src|href)=\"https?:", page) is None
    images = re.findall(r'<img alt="([^"]+)" src="data:image/png;base64,([^"]+)"', page)
    assert {name for name, _ in images} >= {"curves.png", "cd_diagram.png", "generic.png"}
    for name, data in images:
        png = base64.b64decode(data)
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and png == (folder / name).read_bytes(), name
    assert "Friedman test over 4 folds and 7 methods" in page
    assert 'class="badge complete"' in page


def test_summary_text(folder):
    text = summary_text(folder)
    assert text.startswith("moweights run: iris (150 samples x 4 features), 3 rankers")
    assert "COMPLETE" in text and "Friedman over 4 folds" in text
    assert re.search(r"random\s+k=3 ", text)


def test_a_partial_folder_renders(tmp_path, folder):
    for name in ["summary.json", "manifest.json", "scores.csv", "ranks.csv", "aggregated.json"]:
        (tmp_path / name).write_bytes((folder / name).read_bytes())
    summary = json.loads((tmp_path / "summary.json").read_text())
    summary.update(status="partial", notes=["interrupted (Ctrl-C)"])
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    written = render(tmp_path)
    assert set(written) == {"generic.png", "report.html"}
    page = (tmp_path / "report.html").read_text()
    assert 'class="badge partial"' in page and "interrupted (Ctrl-C)" in page


def test_atomic_write_replaces_whole_files(tmp_path):
    path = tmp_path / "t.csv"
    atomic_write(path, "old\n")
    atomic_write(path, b"new\n")
    assert path.read_text() == "new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["t.csv"]


def test_non_finite_statistics_are_written_as_standard_json(tmp_path):
    # every fold ranks the three methods alike: Iman-Davenport's F is inf (p = 0), which
    # json.dumps(allow_nan=False) refused, failing the whole run
    raw = {
        "data": {"builtin": "iris"},
        "rankers": [{"name": "variance"},
                    {"name": "mo_weighting", "params": {"pop_size": 8, "n_gen": 3}}],
        "aggregation": {"methods": ["generic"]},
        "evaluation": {"cv": 3, "topk": {"n_random": 2}, "error_curves": {"enabled": False},
                       "clustering": {"enabled": False}, "classification": {"enabled": False}},
        "output": {"plots": False},
        "run": {"verbose": 0, "random_state": 7},
    }  # fmt: skip
    result = run(parse_config(raw), tmp_path / "out")
    assert result.status == "complete"
    assert result.statistics["friedman"]["f_statistic"] == np.inf

    def refuse(name):
        raise ValueError(f"non-standard JSON constant {name}")

    for name in ("statistics.json", "summary.json", "evaluation.json"):
        text = (tmp_path / "out" / name).read_text()
        json.loads(text, parse_constant=refuse)
    stats_json = json.loads((tmp_path / "out" / "statistics.json").read_text())
    assert float(stats_json["friedman"]["f_statistic"]) == np.inf
    assert "Friedman over 3 folds" in summary_text(tmp_path / "out")
    assert "F = inf" in (tmp_path / "out" / "report.html").read_text()


# ---------------------------------------------------------------- what a newcomer reads
def test_identical_rankings_are_named_and_the_baselines_explained(tmp_path):
    raw = {
        "data": {"builtin": "iris"},
        "rankers": [
            {"name": "variance"},
            {"name": "variance", "label": "twin"},
            {"name": "laplacian"},
        ],
        "aggregation": {"methods": ["mean_rank", "borda"]},
        "evaluation": {
            "cv": 3,
            "topk": {"n_random": 2, "ks": [1, 2]},
            "error_curves": {"enabled": False},
            "clustering": {"enabled": False},
        },
        "run": {"verbose": 0, "random_state": 0},
    }
    out = tmp_path / "out"
    run(parse_config(raw), out)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["identical"][0][:2] == ["variance", "twin"]
    assert summary["data"]["target"] == "target (the data set's own labels)"
    text = summary_text(out)
    assert "identical rankings (fitted on all samples): variance = twin" in text
    assert "from an earlier run's cache" not in text  # the twin's steps are shared, not reused
    assert "random: k features drawn at random" in text
    page = (out / "report.html").read_text()
    assert "Identical rankings when fitted on all samples: variance = twin" in page
    assert "a measure of coverage, not of relevance" in page


def test_a_data_files_target_column_is_shown_by_its_name(tmp_path):
    X, y = (
        pd.DataFrame(np.random.default_rng(0).normal(size=(30, 4)), columns=list("abcd")),
        (np.repeat([0, 1], 15)),
    )
    X.assign(diagnosis=y).to_csv(tmp_path / "d.csv", index=False)
    raw = {
        "data": {"path": "d.csv", "target": "diagnosis"},
        "rankers": [{"name": "anova_f"}],
        "evaluation": {"enabled": False},
    }
    run(parse_config(raw, base_dir=tmp_path), tmp_path / "out")
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["data"]["target"] == "diagnosis"


def test_similarity_colours_span_the_pairs_not_the_diagonal(folder):
    import matplotlib.pyplot as plt

    from moweights.output.plots import PLOTS

    # the public table of the report's figures: (file name, drawing function, caption)
    similarity = next(draw for name, draw, _ in PLOTS if name == "similarity.png")
    fig = similarity(folder)
    matrix = pd.read_csv(folder / "similarity_s_measure.csv", index_col=0).to_numpy(float)
    off = matrix[~np.eye(len(matrix), dtype=bool)]
    image = next(a for a in fig.axes if a.images).images[0]
    assert image.get_clim() == (off.min(), off.max())
    plt.close(fig)


def test_the_pareto_table_holds_the_averaged_weights(tmp_path):
    raw = {
        "data": {"builtin": "weighting_benchmark", "n_samples": 40},
        "rankers": [{"name": "mo_weighting", "params": {"pop_size": 8, "n_gen": 3}}],
        "evaluation": {"enabled": False},
        "run": {"verbose": 0, "random_state": 0},
    }
    out = tmp_path / "out"
    run(parse_config(raw), out)
    weights = pd.read_csv(out / "pareto_mo_weighting_weights.csv", index_col=0)
    page = (out / "report.html").read_text()
    assert "averaged over the Pareto set" in page
    best = weights.mean().idxmax()
    assert re.search(rf"<td>{best}</td>\s*<td[^>]*>{weights.mean()[best]:.3f}</td>", page)
    assert "constant" in page  # f7 and f8 are set aside


def test_a_federated_run_with_classes_evaluates_site_by_site(tmp_path):
    from aggregation.evaluation import ffa_rfa
    from moweights.data import load_dataset

    raw = {
        "sites": [
            {"name": "north", "builtin": "wine", "rows": [0, 90]},
            {"name": "south", "builtin": "wine", "rows": [90, 178]},
        ],
        "rankers": [{"name": "variance"}, {"name": "anova_f"}],
        "aggregation": {"methods": ["mean_rank"]},
        "evaluation": {
            "cv": 3,
            "topk": {"enabled": False},
            "error_curves": {"grid": [1, 2, 4], "n_random": 0},
            "clustering": {"k_features": [1, 2], "n_restarts": 1},
        },
        "run": {"verbose": 0, "random_state": 1},
    }
    result = run(parse_config(raw), tmp_path / "out")
    assert result.status == "complete"
    assert set(result.eca["ranking"]) == {"variance", "anova_f", "mean_rank"}
    assert any("each site evaluated" in note for note in result.notes)
    # the curve is the size-weighted mean of each site's own curve (90 and 88 rows), each
    # with anova_f refit on every training fold of that site's rows (nested)
    X, y = load_dataset("wine", random_state=1)
    parts = [
        ffa_rfa(
            "anova_f",
            X.iloc[a:b].reset_index(drop=True),
            y.iloc[a:b].reset_index(drop=True),
            cv=3,
            grid=[1, 2, 4],
            random_state=1,
        )
        for a, b in ((0, 90), (90, 178))
    ]
    want = (90 * parts[0]["ffa"].to_numpy() + 88 * parts[1]["ffa"].to_numpy()) / 178
    got = result.error_curves.query("ranking == 'anova_f'")["ffa"].to_numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert (tmp_path / "out" / "clustering.csv").is_file()


def test_the_class_curves_axis_says_higher_is_better_as_its_title_does(tmp_path):
    """issue 48 item 14: balanced accuracy was labelled "(lower is better)"."""
    from moweights.output.plots import _class_curves

    rows = [{"ranker": r, "k": k, "mean": 0.5 + 0.1 * i, "std": 0.01,
             "metric": "balanced_accuracy"}
            for i, r in enumerate(["variance", "random"]) for k in (1, 2, 4)]  # fmt: skip
    pd.DataFrame(rows).to_csv(tmp_path / "class_curves.csv", index=False)
    fig = _class_curves(tmp_path)
    (ax,) = fig.axes
    assert "higher is better" in ax.get_title()
    assert ax.get_ylabel() == "balanced_accuracy (higher is better)"


def test_the_reports_generic_line_is_cut_after_a_whole_name():
    # issue 48 item 20: the page cut a long generic ranking inside a name, as the summary did
    from moweights.output.report import _generic_text

    names = [f"mean radius {i}" for i in range(40)]
    text = _generic_text({"s": 2, "blocks": [names[:30], names[30:]]})
    assert len(text) <= 400 and text.endswith(" ...")
    assert text[:-4].split(", ")[-1].lstrip("{") in names, text  # whole, not "mean ra..."
    assert _generic_text({"s": 2, "blocks": [["a"], ["b"]]}) == "s = 2: {a} > {b}"
