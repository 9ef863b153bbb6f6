"""A config selects the fusions that survive failing members by name (issue 46 item 2):
`moweights validate` accepts them and a run computes them from the rankers' rankings."""

from __future__ import annotations

import textwrap

import pandas as pd
import pytest

from aggregation import best_rank, rra, rra_pvalues, rrf
from moweights.cli import main
from moweights.config import AGGREGATIONS, load_config, parse_config
from moweights.errors import ConfigError

FUSIONS = ["rra", "rrf", "best_rank"]


def test_validate_accepts_the_fusions_and_refuses_a_typo(tmp_path, capsys):
    assert set(FUSIONS) <= set(AGGREGATIONS)
    path = tmp_path / "run.toml"
    text = """
        [data]
        builtin = "wine"
        [[rankers]]
        name = "variance"
        [aggregation]
        methods = {methods}
        """
    path.write_text(textwrap.dedent(text).replace("{methods}", '["rra", "rrf", "best_rank"]'))
    assert main(["validate", str(path)]) == 0
    assert load_config(path).aggregation.methods == tuple(FUSIONS)
    path.write_text(textwrap.dedent(text).replace("{methods}", '["rrf", "best-rank"]'))
    assert main(["validate", str(path)]) == 2
    assert "best-rank" in capsys.readouterr().err


def test_a_run_combines_the_rankers_with_each_fusion(tmp_path):
    from moweights.pipeline import run

    raw = {
        "data": {"builtin": "breast_cancer"},
        "rankers": [{"name": n} for n in ("variance", "anova_f", "t_test")],
        "aggregation": {"methods": FUSIONS},
        "evaluation": {"enabled": False},
        "run": {"verbose": 0},
    }
    result = run(parse_config(raw), tmp_path / "out")
    inputs = list(result.rankings.values())
    for name, fuse in (("rra", rra), ("rrf", rrf), ("best_rank", best_rank)):
        got, want = result.aggregated[name], fuse(inputs)
        assert got.method == name
        # the run keeps the scores, the ranks and the method's order inside tie groups
        pd.testing.assert_series_equal(got.to_series(), want.to_series())
        pd.testing.assert_series_equal(got.ranks, want.ranks)
        assert list(got.order) == list(want.order)
    # the p-values that go with the rra ranking: Bonferroni min(1, q 10^-score)
    p = rra_pvalues(inputs)
    scores = result.aggregated["rra"].to_series()
    assert p.to_numpy() == pytest.approx((3 * 10**-scores).clip(upper=1).to_numpy(), rel=1e-12)
    # features.csv carries them, with Benjamini-Hochberg's q-values over the features
    from scipy.stats import false_discovery_control

    table = pd.read_csv(tmp_path / "out" / "features.csv").set_index("feature")
    table.index = table.index.astype(str)
    got = table["rra.pvalue"].reindex(p.index)
    assert got.to_numpy() == pytest.approx(p.to_numpy(), rel=1e-9)
    q = false_discovery_control(p.to_numpy(), method="bh")
    assert table["rra.qvalue"].reindex(p.index).to_numpy() == pytest.approx(q, rel=1e-9)
    assert "rrf.pvalue" not in table and "best_rank.pvalue" not in table


def test_an_unknown_method_is_refused_with_the_known_names():
    with pytest.raises(ConfigError, match="rrf"):
        parse_config({"data": {"builtin": "wine"}, "aggregation": {"methods": ["rff"]}})
