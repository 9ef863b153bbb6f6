"""Generic rankings with uncertainty (aggregation.uncertainty)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from joblib import parallel_config

import rankers
from aggregation.combine import generic
from aggregation.ranking import GenericRanking, Ranking
from aggregation.uncertainty import (
    agreement_profile,
    disagreement,
    rank_intervals,
    shared_top,
    stability_partition,
    tolerant_generic,
)
from rankers.exceptions import InvalidParameterError


def _orders(*orders, names="1234"):
    return [Ranking.from_order(list(o), names=list(names)) for o in orders]


def _random_inputs(seed, n, q, generic_share=0.3):
    """q rankings of n features: permutations near a common order, some with ties or
    given as generic rankings (blocks)."""
    rng = np.random.default_rng(seed)
    names = [f"f{i}" for i in range(n)]
    base = rng.permutation(n)
    out = []
    for _ in range(q):
        noise = base + rng.normal(scale=rng.uniform(0.1, 3.0), size=n)
        order = [names[i] for i in np.argsort(noise)]
        kind = rng.random()
        if kind < generic_share:
            cuts = np.flatnonzero(rng.random(n - 1) < 0.4) + 1
            out.append(GenericRanking([list(b) for b in np.split(np.array(order), cuts)]))
        elif kind < generic_share + 0.2:
            scores = rng.integers(0, max(2, n // 2), size=n).astype(float)
            out.append(Ranking.from_scores(scores, names=names))
        else:
            out.append(Ranking.from_order(order, names=names))
    return out


# ------------------------------------------------------------- the paper, at tolerance 0
def test_paper_examples_at_the_strictest_setting():
    assert tolerant_generic(_orders("4321", "3412", "3421")) == GenericRanking(
        [["3", "4"], ["1", "2"]]
    )
    assert len(tolerant_generic(_orders("4312", "2134"))) == 1
    assert str(tolerant_generic(_orders("2413", "2413", "2413"))) == "{2} > {4} > {1} > {3}"


@settings(max_examples=150)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 9), q=st.integers(1, 6))
def test_zero_tolerance_is_the_generic_ranking(seed, n, q):
    inputs = _random_inputs(seed, n, q)
    assert tolerant_generic(inputs, 0.0).blocks == generic(inputs).blocks


# ------------------------------------------------------------- properties
@settings(max_examples=100)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 9),
    q=st.integers(2, 12),
    a=st.floats(0, 0.49),
    b=st.floats(0, 0.49),
)
def test_more_tolerance_never_gives_fewer_blocks(seed, n, q, a, b):
    inputs = _random_inputs(seed, n, q)
    low, high = sorted((a, b))
    coarse, fine = tolerant_generic(inputs, low), tolerant_generic(inputs, high)
    assert len(fine) >= len(coarse)

    # and the finer partition refines the coarser one: its cuts are a superset
    def cuts(g):
        return set(np.cumsum([len(block) for block in g.blocks]).tolist())

    assert cuts(coarse) <= cuts(fine)


@settings(max_examples=60)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 9), q=st.integers(2, 8),
       tolerance=st.floats(0, 0.49))  # fmt: skip
def test_relabelling_features_permutes_the_result(seed, n, q, tolerance):
    inputs = _random_inputs(seed, n, q)
    rng = np.random.default_rng(seed)
    names = list(inputs[0].names)
    new = dict(zip(names, [f"g{i}" for i in rng.permutation(len(names))], strict=True))

    def relabel(r):
        if isinstance(r, GenericRanking):
            return GenericRanking([[new[f] for f in b] for b in r.blocks])
        return Ranking([new[f] for f in r.names], r.scores, r.method, order_idx=r.order_idx)

    got = tolerant_generic([relabel(r) for r in inputs], tolerance)
    expected = tolerant_generic(inputs, tolerance)
    assert [sorted(b) for b in got.blocks] == [sorted(new[f] for f in b) for b in expected.blocks]


def test_one_outlying_input_is_forgiven_at_its_share():
    names = list("abcdef")
    inputs = [Ranking.from_order(names) for _ in range(9)] + [Ranking.from_order(names[::-1])]
    assert len(tolerant_generic(inputs)) == 1  # strict: one input erases every cut
    assert len(tolerant_generic(inputs, 0.05)) == 1  # floor(0.5) = 0 inputs left out
    assert str(tolerant_generic(inputs, 0.1)) == "{a} > {b} > {c} > {d} > {e} > {f}"


def test_bad_tolerance_is_refused():
    inputs = _orders("1234", "2134")
    for bad in (-0.1, 0.5, 1.0, "0.1", True):
        with pytest.raises(InvalidParameterError, match="tolerance"):
            tolerant_generic(inputs, bad)


def test_rank_intervals_by_hand():
    # a is 1st, 1st, 2nd; b 2nd, 2nd, 1st; c 3rd everywhere
    inputs = _orders("abc", "abc", "bac", names="abc")
    table = rank_intervals(inputs)
    assert table.loc["a", ["best", "worst", "low", "high"]].tolist() == [1, 2, 1, 2]
    assert table.loc["c", ["best", "worst", "block"]].tolist() == [3, 3, 2]
    assert table.loc["a", "median_rank"] == 1.0
    # a third of the inputs trimmed on each side: a is 1st, b 2nd
    trimmed = rank_intervals(inputs, tolerance=0.34)
    assert trimmed.loc["a", ["low", "high"]].tolist() == [1, 1]
    assert trimmed["block"].tolist() == [1, 2, 3]


# ------------------------------------------------------------- incompatible inputs
def test_shared_top_and_agreement_profile_by_hand():
    # two inputs reversed except that both put x in their top 3
    a = Ranking.from_order(["x", "p", "q", "r", "s"])
    b = Ranking.from_order(["s", "r", "x", "q", "p"])
    assert len(generic([a, b])) == 1
    k, features = shared_top([a, b])
    assert (k, features) == (3, ["x"])
    profile = agreement_profile([a, b])
    assert profile.loc[1, "shared"] == 0 and profile.loc[3, "shared"] == 1
    assert profile.loc[5, "agreement"] == 1.0
    # top 4: {x, p, q, r} and {s, r, x, q}; median ranks x 2, r 3, q 3.5
    assert shared_top([a, b], k=4) == (4, ["x", "r", "q"])


def test_disagreement_names_the_inputs_at_each_end():
    a = Ranking.from_order(["x", "p", "q", "r"], method="one")
    b = Ranking.from_order(["p", "q", "r", "x"], method="two")
    table = disagreement([a, b], top=2)
    assert table.index[0] == "x"
    assert table.loc["x", ["best", "worst", "spread"]].tolist() == [1.0, 4.0, 3.0]
    assert table.loc["x", "ranked_best_by"] == "one"
    assert table.loc["x", "ranked_worst_by"] == "two"


# ------------------------------------------------------------- bootstrap stability
def _planted(seed=0, m=120):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], m // 2)
    X = rng.normal(size=(m, 8))
    X[:, 0] += 2.0 * y  # strong
    X[:, 1] += 1.0 * y  # weaker
    return pd.DataFrame(X, columns=[f"g{i}" for i in range(8)]), y


def test_stability_separates_the_planted_features():
    X, y = _planted()
    result = stability_partition(rankers.get("anova_f"), X, y, n_bootstrap=40, random_state=0)
    assert len(result.rankings) == 40
    assert list(result.partition.blocks[0]) == ["g0"]
    assert list(result.partition.blocks[1]) == ["g1"]
    assert result.s >= 3
    assert result.intervals.loc["g0", "high"] == 1
    assert result.intervals.loc["g1", ["low", "high"]].tolist() == [2, 2]
    # at confidence 1 the interval is every resample's: never narrower
    strict = stability_partition(rankers.get("anova_f"), X, y, n_bootstrap=40, confidence=1.0,
                       random_state=0)  # fmt: skip
    assert strict.s <= result.s
    assert (strict.intervals["high"] >= result.intervals["high"]).all()


def test_stability_is_reproducible_whatever_n_jobs():
    X, _ = _planted(1)
    ticks = []

    def run(n_jobs, seed=3, **kw):
        ranker = rankers.get("distance_rank", max_samples=0.5)
        return stability_partition(ranker, X, n_bootstrap=6, random_state=seed, n_jobs=n_jobs, **kw)

    one = run(1, progress=ticks.append)
    with parallel_config(backend="threading"):  # threads: the same seeds, no start-up
        two = run(2)
    assert ticks == [1] * 6
    assert [r.order for r in one.rankings] == [r.order for r in two.rankings]
    assert one.partition == two.partition
    assert [r.order for r in run(1, seed=4).rankings] != [r.order for r in one.rankings]


def test_stability_refuses_bad_settings():
    X, y = _planted()
    with pytest.raises(InvalidParameterError, match="n_bootstrap"):
        stability_partition(rankers.get("anova_f"), X, y, n_bootstrap=1)
    with pytest.raises(InvalidParameterError, match="confidence"):
        stability_partition(rankers.get("anova_f"), X, y, confidence=0.0)


def test_rank_interval_plot_draws_every_shown_feature_and_its_blocks():
    import matplotlib

    matplotlib.use("Agg")
    from aggregation.plots import plot_rank_intervals

    inputs = _random_inputs(5, 12, 6, generic_share=0.0)
    table = rank_intervals(inputs, tolerance=0.2)
    fig = plot_rank_intervals(table, max_features=10)
    ax = fig.axes[0]
    (bars,) = [c for c in ax.collections if c.get_gid() == "intervals"]
    shown = table.sort_values(["block", "median_rank"], kind="stable").iloc[:10]
    np.testing.assert_array_equal([seg[0][0] for seg in bars.get_segments()], shown["low"])
    np.testing.assert_array_equal([seg[1][0] for seg in bars.get_segments()], shown["high"])
    assert [t.get_text() for t in ax.get_yticklabels()] == list(shown.index)
    bands = [p for p in ax.patches if p.get_gid() == "block"]
    assert len(bands) == shown["block"].nunique()
    with pytest.raises(InvalidParameterError, match="columns"):
        plot_rank_intervals(table.drop(columns="low"))
