"""The per-feature table: ``features.csv``, ``RunResult.features()`` and the report's table.

Its numbers are the methods' own: a t_test's p-values are scipy's Welch test on the data the
ranker saw (here ``log1p`` of counts), its q-values scipy's Benjamini-Hochberg. The report
shows the first rows, sortable and filterable, in a real browser when one is installed.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from moweights.config import parse_config
from moweights.output.report import FEATURE_ROWS
from moweights.pipeline import run

CHROMIUM = next(
    (shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)), None
)


def _genes(tmp_path, m=40, n=60, seed=0):
    """Log-normal "expression" of n genes in two groups; the first 6 genes shift."""
    rng = np.random.default_rng(seed)
    group = np.repeat(["ctrl", "case"], m // 2)
    X = rng.lognormal(mean=3.0, sigma=1.0, size=(m, n))
    X[group == "case", :6] *= 8.0
    frame = pd.DataFrame(X, columns=[f"gene{i}" for i in range(n)])
    frame.assign(group=group).to_csv(tmp_path / "genes.csv", index=False)
    return frame, pd.Series(group)


def _config(tmp_path, **output):
    raw = {
        "data": {"path": "genes.csv", "target": "group", "transform": "log1p"},
        "rankers": [{"name": "t_test"}, {"name": "anova_f"}, {"name": "variance"}],
        "aggregation": {"methods": ["mean_rank", "borda", "generic"]},
        "evaluation": {"cv": 3, "topk": {"enabled": False},
                       "error_curves": {"enabled": False}, "clustering": {"enabled": False},
                       "classification": {"ks": [1, 4], "n_random": 2}},
        "output": {"plots": False, **output},
        "run": {"verbose": 0},
    }  # fmt: skip
    return parse_config(raw, base_dir=tmp_path)


@pytest.fixture(scope="module")
def gene_run(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("genes")
    X, group = _genes(tmp_path)
    result = run(_config(tmp_path), tmp_path / "out")
    return tmp_path / "out", result, X, group


def test_t_test_p_and_q_values_are_welch_and_benjamini_hochberg_on_log1p(gene_run):
    out, _, X, group = gene_run
    table = pd.read_csv(out / "features.csv").set_index("feature")
    logged = np.log1p(X)
    _, p = scipy.stats.ttest_ind(
        logged[group.to_numpy() == "ctrl"], logged[group.to_numpy() == "case"], equal_var=False
    )
    p = pd.Series(p, index=X.columns)
    q = pd.Series(scipy.stats.false_discovery_control(p.to_numpy()), index=X.columns)
    # the CSV holds 10 significant digits
    np.testing.assert_allclose(table["t_test.pvalue"], p.reindex(table.index), rtol=1e-9)
    np.testing.assert_allclose(table["t_test.qvalue"], q.reindex(table.index), rtol=1e-9)
    _, p_f = scipy.stats.f_oneway(
        logged[group.to_numpy() == "ctrl"], logged[group.to_numpy() == "case"]
    )
    np.testing.assert_allclose(
        table["anova_f.pvalue"], pd.Series(p_f, index=X.columns).reindex(table.index), rtol=1e-9
    )
    t, _ = scipy.stats.ttest_ind(
        logged[group.to_numpy() == "ctrl"], logged[group.to_numpy() == "case"], equal_var=False
    )
    t = pd.Series(np.abs(t), index=X.columns).reindex(table.index)
    np.testing.assert_allclose(table["t_test.statistic"].abs(), t, rtol=1e-9)
    # the raw (unlogged) counts would give other p-values: the transform reached the ranker
    _, raw_p = scipy.stats.ttest_ind(X[group == "ctrl"], X[group == "case"], equal_var=False)
    assert np.abs(np.log(table["t_test.pvalue"].sort_index()) - np.log(
        pd.Series(raw_p, index=X.columns).sort_index())).max() > 0.1  # fmt: skip


def test_the_columns_and_order_follow_the_spec(gene_run):
    out, result, X, _ = gene_run
    table = pd.read_csv(out / "features.csv")
    tests = (".statistic", ".logfc")  # where a ranker gives them: right after its q-value
    assert [c for c in table.columns if not c.endswith(tests)] == [
        "feature",
        "t_test.score", "t_test.rank", "t_test.pvalue", "t_test.qvalue",
        "anova_f.score", "anova_f.rank", "anova_f.pvalue", "anova_f.qvalue",
        "variance.score", "variance.rank",
        "mean_rank.rank", "borda.rank", "generic.rank", "generic.block",
    ]  # fmt: skip
    columns = list(table.columns)
    for column in [c for c in columns if c.endswith(tests)]:
        label = column.rsplit(".", 1)[0]
        before = columns[columns.index(column) - 1]
        assert before in (f"{label}.qvalue", f"{label}.statistic"), column
    assert "t_test.statistic" in columns  # the two-group t of t_test
    assert sorted(table["feature"]) == sorted(X.columns) and len(table) == X.shape[1]
    # best first, as the run's mean rank orders them
    assert table["feature"].tolist() == list(result.aggregated["mean_rank"].order)
    assert table["mean_rank.rank"].is_monotonic_increasing
    # the scores and ranks are those of scores.csv and the rankings
    scores = pd.read_csv(out / "scores.csv", index_col=0)
    indexed = table.set_index("feature")
    np.testing.assert_allclose(indexed["variance.score"], scores["variance"].reindex(indexed.index))
    ranks = result.rankings["t_test"].ranks
    np.testing.assert_array_equal(indexed["t_test.rank"], ranks.reindex(indexed.index))
    # the planted genes lead the test's ranking and pass q <= 0.05
    top = indexed.sort_values("t_test.rank").index[:6]
    assert set(top) == {f"gene{i}" for i in range(6)}
    assert (indexed.loc[top, "t_test.qvalue"] <= 0.05).all()


def test_the_python_api_gives_the_same_table(gene_run):
    out, result, _, _ = gene_run
    api = result.features()
    disk = pd.read_csv(out / "features.csv")
    assert list(api.columns) == list(disk.columns)
    pd.testing.assert_frame_equal(api, disk, check_exact=False, rtol=1e-9, check_dtype=False)


def test_the_summary_counts_features_under_the_q_threshold(gene_run, tmp_path):
    out, result, _, _ = gene_run
    import json

    summary = json.loads((out / "summary.json").read_text())
    table = result.features()
    assert summary["features"]["q"] == 0.05
    assert summary["features"]["significant"] == {
        "t_test": int((table["t_test.qvalue"] <= 0.05).sum()),
        "anova_f": int((table["anova_f.qvalue"] <= 0.05).sum()),
    }
    from moweights.output.folder import summary_text

    assert "per-feature table: features.csv" in summary_text(out)


def test_the_report_shows_the_first_rows_with_the_q_threshold(tmp_path):
    _genes(tmp_path, n=FEATURE_ROWS + 30)
    run(_config(tmp_path, q=0.01), tmp_path / "out")
    page = (tmp_path / "out" / "report.html").read_text()
    section = page[page.index('<section id="features">') :]
    section = section[: section.index("</section>")]
    body = section[section.index("<tbody>") : section.index("</tbody>")]
    assert body.count("<tr") == FEATURE_ROWS  # the first rows; the CSV holds them all
    assert f"The first {FEATURE_ROWS} of {FEATURE_ROWS + 30} features" in section
    assert "only q ≤ 0.01" in section and "q ≤ 0.01 ([output] q)" in section
    table = pd.read_csv(tmp_path / "out" / "features.csv")
    first = re.findall(r"<tr[^>]*><td>([^<]*)</td>", body)
    assert first == table["feature"].head(FEATURE_ROWS).tolist()
    n_sig = int((table.head(FEATURE_ROWS)[["t_test.qvalue", "anova_f.qvalue"]] <= 0.01)
                .any(axis=1).sum())  # fmt: skip
    assert body.count('<tr class="sig">') == n_sig > 0
    assert "<script" in section and "src=" not in section  # inline, nothing fetched
    # every score column (under any name) sorts high to low first, ranks and q low to high
    heads = dict(re.findall(r'<th[^>]*data-col="([^"]+)"([^>]*)>', section))
    low = (".rank", ".pvalue", ".qvalue", ".block")
    assert all(("data-high" in heads[c]) == (not c.endswith(low)) for c in table.columns[1:])
    assert {c.rsplit(".", 1)[1] for c in table.columns[1:]} >= {"score", "rank", "qvalue"}


def test_feature_names_are_escaped(tmp_path):
    frame = pd.DataFrame(np.random.default_rng(0).normal(size=(20, 3)),
                         columns=["<b>x</b>", "a&b", "</script><i>"])  # fmt: skip
    frame.assign(group=np.repeat([0, 1], 10)).to_csv(tmp_path / "genes.csv", index=False)
    raw = {"data": {"path": "genes.csv", "target": "group"}, "rankers": [{"name": "t_test"}],
           "evaluation": {"enabled": False}, "output": {"plots": False},
           "run": {"verbose": 0}}  # fmt: skip
    run(parse_config(raw, base_dir=tmp_path), tmp_path / "out")
    page = (tmp_path / "out" / "report.html").read_text()
    assert "<b>x</b>" not in page and "</script><i>" not in page
    assert html.escape("</script><i>") in page


def _dom(tmp_path, page, fragment: str) -> str:
    proc = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--dump-dom",
            page.as_uri() + fragment,
        ],
        capture_output=True,
        text=True,
        timeout=600,  # a bound for a hang: seconds on an idle machine
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _rows(dom: str) -> list[tuple[str, bool]]:
    """(feature, hidden) of every body row of the feature table, in the DOM's order."""
    body = dom[dom.index('id="feature-table"') :]
    body = body[body.index("<tbody>") : body.index("</tbody>")]
    rows = re.findall(r"<tr([^>]*)><td>([^<]*)</td>", body)
    return [(html.unescape(name), "hidden" in attrs) for attrs, name in rows]


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed")
def test_the_feature_table_sorts_and_filters_in_a_browser(gene_run, tmp_path):
    out, _, _, _ = gene_run
    page = out / "report.html"
    table = pd.read_csv(out / "features.csv")
    # as written: best first by mean rank, every row shown, the count filled in by the script
    dom = _dom(tmp_path, page, "")
    assert _rows(dom) == [(f, False) for f in table["feature"]]
    assert f"{len(table)} of {len(table)} rows" in dom
    # sorted by the t-test's p-value, ascending: the column's order, the header says so
    dom = _dom(tmp_path, page, "#features?sort=t_test.pvalue")
    by_p = table.sort_values("t_test.pvalue", kind="stable")["feature"].tolist()
    assert [f for f, _ in _rows(dom)] == by_p
    assert re.search(r'data-col="t_test.pvalue"[^>]*aria-sort="ascending"', dom)
    # a score reads best first when asked descending
    dom = _dom(tmp_path, page, "#features?sort=variance.score&desc=1")
    by_var = table.sort_values("variance.score", ascending=False, kind="stable")["feature"]
    assert [f for f, _ in _rows(dom)] == by_var.tolist()
    # only q <= 0.05, and a name filter: the other rows are hidden, not removed
    dom = _dom(tmp_path, page, "#features?significant=1")
    significant = table[(table[["t_test.qvalue", "anova_f.qvalue"]] <= 0.05).any(axis=1)]
    shown = [f for f, hidden in _rows(dom) if not hidden]
    assert shown == significant["feature"].tolist() and len(_rows(dom)) == len(table)
    assert f"{len(significant)} of {len(table)} rows" in dom
    dom = _dom(tmp_path, page, "#features?filter=gene1")
    shown = [f for f, hidden in _rows(dom) if not hidden]
    assert shown == [f for f in table["feature"] if "gene1" in f]


def test_bootstrap_rank_intervals_are_the_resamples_own(tmp_path):
    """``[aggregation] bootstrap``: each ranker's interval is the central share of its ranks
    over resamples drawn from the run's seed (the same rows for every ranker), each
    aggregate's from the aggregates of those resamples."""
    from aggregation import mean_rank
    from aggregation.uncertainty import rank_intervals, stability_partition

    X, group = _genes(tmp_path, m=30, n=12)
    raw = {
        "data": {"path": "genes.csv", "target": "group", "transform": "log1p"},
        "rankers": [{"name": "t_test"}, {"name": "variance"}],
        "aggregation": {"methods": ["mean_rank"], "bootstrap": 8, "confidence": 0.8},
        "evaluation": {"enabled": False},
        "output": {"plots": False, "html": False},
        "run": {"verbose": 0, "random_state": 3},
    }
    result = run(parse_config(raw, base_dir=tmp_path), tmp_path / "out")
    table = pd.read_csv(tmp_path / "out" / "features.csv").set_index("feature")
    logged = np.log1p(X)
    import rankers

    boots = {
        name: stability_partition(rankers.get(name), logged, group if name == "t_test" else None,
                                  n_bootstrap=8, confidence=0.8, random_state=3).rankings
        for name in ("t_test", "variance")
    }  # fmt: skip
    for name, rankings_ in boots.items():
        expected = rank_intervals(rankings_, 0.1)
        np.testing.assert_array_equal(table[f"{name}.rank_low"], expected["low"][table.index])
        np.testing.assert_array_equal(table[f"{name}.rank_high"], expected["high"][table.index])
    combined = [mean_rank([boots["t_test"][b], boots["variance"][b]]) for b in range(8)]
    expected = rank_intervals(combined, 0.1)
    np.testing.assert_array_equal(table["mean_rank.rank_low"], expected["low"][table.index])
    np.testing.assert_array_equal(table["mean_rank.rank_high"], expected["high"][table.index])
    assert (table["t_test.rank_low"] <= table["t_test.rank_high"]).all()
    # the strongly shifted genes stay near the top of the test's ranking on every resample
    assert table.loc[[f"gene{i}" for i in range(6)], "t_test.rank_high"].max() <= 8
    assert any(n.startswith("rank intervals: the central 80%") for n in result.notes)


def test_a_signed_statistic_and_log_fold_change_go_beside_the_p_values():
    """Generic: any fitted ranker's ``statistic_`` and ``log_fold_change_`` (here a stand-in's,
    also one without p-values) become ``<label>.statistic`` and ``<label>.logfc``."""
    from types import SimpleNamespace

    from aggregation import Ranking
    from moweights.output.features import feature_table
    from moweights.pipeline.steps import significance

    names = ["a", "b", "c"]
    stand_in = SimpleNamespace(
        pvalues_=np.array([0.01, 0.5, 0.04]),
        statistic_=np.array([-3.0, 0.5, 2.0]),
        log_fold_change_=np.array([-1.5, 0.1, 1.0]),
    )
    tests = significance(stand_in, names)
    assert list(tests.columns) == ["pvalue", "qvalue", "statistic", "logfc"]
    only = significance(SimpleNamespace(log_fold_change_=np.array([1.0, 2.0, 3.0])), names)
    assert list(only.columns) == ["logfc"]
    assert significance(SimpleNamespace(statistic_=np.zeros(2)), names) is None  # wrong length
    result = SimpleNamespace(
        rankings={"two": Ranking(names, np.array([3.0, 0.5, 2.0]), method="two")},
        aggregated={},
        feature_names=names,
        significance={"two": tests},
    )
    table = feature_table(result).set_index("feature")
    assert list(table.columns) == [
        "two.score", "two.rank", "two.pvalue", "two.qvalue", "two.statistic", "two.logfc",
    ]  # fmt: skip
    assert table.loc["a", "two.statistic"] == -3.0 and table.loc["c", "two.logfc"] == 1.0


@pytest.mark.parametrize(
    ("front", "column"),
    [("mean_rank", "reversed_mean_rank"), ("vote", "vote_score"), ("max_weight", "max_weight")],
)
def test_a_score_column_is_named_for_what_it_holds(front, column):
    """issue 48 item 19: stacked.score was a negative rank, an NSGA-II weighting's a mean-rank
    score and not the weights the report shows; the rankers say what their scores are."""
    from types import SimpleNamespace

    from aggregation import Ranking
    from moweights.output.features import feature_table

    names = ["a", "b", "c"]
    weights = pd.DataFrame([[0.5, 0.2, 0.3], [0.7, 0.1, 0.2]], columns=names)
    specs = [
        SimpleNamespace(label="stack", name="stacked", params={}),
        SimpleNamespace(label="nsga2", name="mo_weighting", params={"front_to_ranking": front}),
        SimpleNamespace(label="t", name="t_test", params={}),
    ]
    result = SimpleNamespace(
        rankings={
            "stack": Ranking(names, np.array([-1.0, -3.0, -2.0]), method="stack"),
            "nsga2": Ranking(names, np.array([3.0, 1.0, 2.0]), method="nsga2"),
            "t": Ranking(names, np.array([0.3, 0.1, 0.2]), method="t"),
        },
        aggregated={},
        feature_names=names,
        pareto={"nsga2": {"weights": weights}},
        config=SimpleNamespace(rankers=specs),
    )
    table = feature_table(result).set_index("feature")
    assert list(table.columns) == [
        "stack.minus_mean_rank", "stack.rank", f"nsga2.{column}", "nsga2.rank", "nsga2.weight",
        "t.score", "t.rank",
    ]  # fmt: skip
    assert table.loc["a", "nsga2.weight"] == pytest.approx(0.6)


def test_features_html_sorts_every_score_column_best_first():
    """A renamed score column (minus_mean_rank, reversed_mean_rank) sorts high to low on
    its first click, as .score does; ranks, p- and q-values low to high."""
    from moweights.output.report import LOW_FIRST

    high = ["stack.minus_mean_rank", "w.reversed_mean_rank", "t.score", "w.weight", "t.logfc"]
    low = ["stack.rank", "t.pvalue", "t.qvalue", "generic.block", "t.rank_low", "t.rank_high"]
    assert not any(c.endswith(LOW_FIRST) for c in high)
    assert all(c.endswith(LOW_FIRST) for c in low)
