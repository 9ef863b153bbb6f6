"""``[aggregation] members``: the aggregates combine the named rankers only, everywhere a
run combines rankings (the whole-data aggregate, every fold of the nested evaluation, the
bootstrap intervals), and a config naming an unknown label is one named error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import aggregation
from moweights.config import load_config
from moweights.errors import ConfigError
from moweights.pipeline.runner import run

CONFIG = """
[data]
builtin = "wine"

[[rankers]]
name = "anova_f"
[[rankers]]
name = "chi2"
[[rankers]]
name = "variance"

[aggregation]
methods = ["mean_rank", "generic"]
{members}

[evaluation]
cv = 3

[evaluation.classification]
ks = [1, 4]

[evaluation.topk]
enabled = false

[evaluation.error_curves]
enabled = false

[evaluation.clustering]
enabled = false

[run]
random_state = 0
"""


def _run(tmp_path, members: str):
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "config.toml"
    path.write_text(CONFIG.format(members=members))
    return run(load_config(path), tmp_path / "out", cache=False)


def test_the_aggregates_combine_the_members_only(tmp_path):
    out = _run(tmp_path, 'members = ["anova_f", "chi2"]')
    expected = aggregation.mean_rank([out.rankings["anova_f"], out.rankings["chi2"]])
    np.testing.assert_array_equal(out.aggregated["mean_rank"].order, expected.order)
    everyone = aggregation.mean_rank(list(out.rankings.values()))
    assert list(out.aggregated["mean_rank"].order) != list(everyone.order)
    assert any("left out: variance" in n for n in out.notes)
    # the similarity and the evaluation still cover every ranker
    assert set(out.similarity["spearman"].columns) == {"anova_f", "chi2", "variance"}
    assert {"anova_f", "chi2", "variance", "mean_rank"} <= set(out.class_curves["ranker"])


def test_members_in_the_nested_evaluation_are_refit_per_fold(tmp_path):
    """The evaluated mean_rank of the members differs from the one of every ranker."""
    some = _run(tmp_path / "a", 'members = ["anova_f", "chi2"]').class_folds
    all_ = _run(tmp_path / "b", "").class_folds

    def scores(folds):
        rows = folds[folds["ranker"] == "mean_rank"]
        return rows.sort_values(list(rows.columns[:-1]))["value"].to_numpy()

    assert not np.array_equal(scores(some), scores(all_))


def test_unknown_or_repeated_members_are_named(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text(CONFIG.format(members='members = ["anova_f", "nosuch", "anova_f"]'))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    text = str(info.value)
    assert "[aggregation].members" in text and "'nosuch'" in text and "listed twice" in text


def test_a_site_runs_shared_top_line_is_read_off_the_sites_rankings(tmp_path):
    """issue 48 item 13: "in the top 10 of all N rankings" was read off each ranker's
    one-block site partition, i.e. column order."""
    from moweights.config import load_config
    from moweights.pipeline import run
    from moweights.pipeline.steps import feature_order

    repo = Path(__file__).resolve().parents[3]
    config = load_config(
        repo / "examples" / "federated.toml",
        overrides=["evaluation.enabled=false", "output.plots=false", "output.html=false"],
    )
    result = run(config, tmp_path / "out")
    assert len(result.aggregated["generic"]) == 1
    fallback = result.generic_fallback
    site_rankings = [r for sr in result.site_rankings.values() for r in sr.rankings.values()]
    assert fallback["q"] == len(site_rankings) == 4 * 3
    k = fallback["shared_top"]["k"]
    shared = set.intersection(*(set(feature_order(r)[:k]) for r in site_rankings))
    assert set(fallback["shared_top"]["features"]) == shared
