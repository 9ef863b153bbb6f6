"""Tests of aggregation.compare: s-measure, rank correlations, top-k overlaps, matrices."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import kendalltau, spearmanr

from aggregation.compare import (
    MEASURES,
    Stability,
    footrule,
    jaccard,
    kendall,
    kendall_distance,
    kuncheva,
    pairwise,
    rbo,
    s_measure,
    spearman,
    stability,
)
from aggregation.ranking import GenericRanking, Ranking
from rankers.exceptions import FeatureMismatchError, InvalidInputError, InvalidParameterError

PAPER_NAMES = ["1", "2", "3", "4"]


def _order(o, names=None, method=None):
    return Ranking.from_order(list(o), names=names, method=method)


# Pairs of score vectors over 2..14 features, few distinct values so ties are common.
score_pairs = st.integers(2, 14).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 4), min_size=n, max_size=n),
        st.lists(st.integers(0, 4), min_size=n, max_size=n),
        st.permutations(range(n)),
    )
)


def _scored(a, b, perm):
    """Two rankings of the same features; b lists its names in another order (``perm``)."""
    names = [f"f{i}" for i in range(len(a))]
    ra = Ranking.from_scores(np.asarray(a, float), names=names)
    rb = Ranking.from_scores(np.asarray(b, float), names=names).reindex([names[i] for i in perm])
    return ra, rb


def _discordant_loop(x, y):
    return sum(
        1 for i in range(len(x)) for j in range(i + 1, len(x)) if (x[i] - x[j]) * (y[i] - y[j]) < 0
    )


# ------------------------------------------------------------------------- s-measure


def test_s_measure_paper_example():
    rs = [_order(o, PAPER_NAMES) for o in ("4321", "3412", "3421")]
    assert s_measure(rs) == 2
    assert s_measure(rs, normalized=True) == pytest.approx(1 / 3)
    # the paper's second example: indiscernible features, one block
    assert s_measure([_order("4312", PAPER_NAMES), _order("2134", PAPER_NAMES)]) == 1


def test_s_measure_identical_is_n_and_reversed_is_one():
    names = [f"f{i}" for i in range(9)]
    a = _order(names)
    assert s_measure([a, a, a]) == 9
    assert s_measure([a, a], normalized=True) == 1.0
    # the reversed order differs from a in every proper prefix
    assert s_measure([a, _order(names[::-1])]) == 1
    assert s_measure([a, _order(names[::-1])], normalized=True) == 0.0


def test_s_measure_single_feature_normalizes_to_one():
    a = _order(["only"])
    assert s_measure([a, a]) == 1
    assert s_measure([a, a], normalized=True) == 1.0


def test_s_measure_keeps_generic_blocks():
    g = GenericRanking([["a", "b"], ["c"], ["d"]])
    assert s_measure([g, _order("abcd")]) == 3
    assert s_measure([g, g]) == 3  # a coarse input caps s at its own number of blocks


@given(st.integers(2, 12).flatmap(lambda n: st.lists(st.permutations(range(n)), min_size=2)))
def test_s_measure_normalized_in_unit_interval(perms):
    rs = [Ranking.from_order(p) for p in perms]
    s, n = s_measure(rs), len(perms[0])
    assert 1 <= s <= n
    assert s_measure(rs, normalized=True) == pytest.approx((s - 1) / (n - 1))
    assert 0.0 <= s_measure(rs, normalized=True) <= 1.0


# ------------------------------------------------------------ rank correlations


@settings(max_examples=60)
@given(score_pairs)
def test_spearman_and_kendall_equal_scipy(data):
    a, b, perm = data
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return  # undefined; tested below
    ra, rb = _scored(a, b, perm)
    assert spearman(ra, rb) == pytest.approx(spearmanr(a, b).statistic, abs=1e-12)
    assert kendall(ra, rb) == pytest.approx(kendalltau(a, b).statistic, abs=1e-12)


def test_spearman_and_kendall_on_generic_rankings_use_block_ranks():
    g = GenericRanking([["a", "b"], ["c"], ["d", "e"]])
    r = _order("edcba")
    g_ranks = [1.5, 1.5, 3, 4.5, 4.5]  # a, b, c, d, e
    r_ranks = [5, 4, 3, 2, 1]
    assert spearman(g, r) == pytest.approx(spearmanr(g_ranks, r_ranks).statistic)
    assert kendall(g, r) == pytest.approx(kendalltau(g_ranks, r_ranks).statistic)
    assert spearman(r, _order("abcde")) == pytest.approx(-1.0)


def test_footrule_hand_examples():
    a, b = _order("abcd"), _order("badc")
    assert footrule(a, b) == 4.0  # |1-2| + |2-1| + |3-4| + |4-3|
    assert footrule(a, b, normalized=True) == 0.5  # max floor(16/2) = 8
    five = _order("abcde")
    assert footrule(five, _order("edcba")) == 12.0  # 4 + 2 + 0 + 2 + 4 = floor(25/2)
    assert footrule(five, _order("edcba"), normalized=True) == 1.0
    # ties share their average rank: a,b tied -> 1.5 each
    tied = Ranking.from_scores({"a": 2.0, "b": 2.0, "c": 1.0})
    assert footrule(tied, _order("cab")) == pytest.approx(0.5 + 1.5 + 2.0)  # c=1, a=2, b=3
    assert footrule(_order(["x"]), _order(["x"]), normalized=True) == 0.0


@settings(max_examples=60)
@given(score_pairs)
def test_kendall_distance_equals_pairs_loop(data):
    a, b, perm = data
    ra, rb = _scored(a, b, perm)
    expected = _discordant_loop(a, b)
    assert kendall_distance(ra, rb) == expected
    n = len(a)
    assert kendall_distance(ra, rb, normalized=True) == pytest.approx(expected / (n * (n - 1) / 2))


def test_kendall_distance_many_merge_levels():
    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 50, 700), rng.normal(size=700)
    ra = Ranking.from_scores(x.astype(float))
    rb = Ranking.from_scores(y)
    # vectorised O(n^2) reference: every pair i < j
    i, j = np.triu_indices(700, k=1)
    expected = int(((x[i] - x[j]) * (y[i] - y[j]) < 0).sum())
    assert kendall_distance(ra, rb) == expected
    assert kendall_distance(ra, ra) == 0


def test_kendall_distance_hand_and_generic():
    assert kendall_distance(_order("abc"), _order("cab")) == 2  # (a,c) and (b,c)
    assert kendall_distance(_order("abcd"), _order("dcba")) == 6
    # a pair inside one block is tied, never discordant
    g = GenericRanking([["a", "b"], ["c", "d"]])
    assert kendall_distance(g, _order("badc")) == 0
    assert kendall_distance(g, _order("cdab")) == 4


@pytest.mark.parametrize("measure", [spearman, kendall])
def test_correlation_undefined_when_all_tied(measure):
    flat = GenericRanking([["a", "b", "c"]], method="flat")
    with pytest.raises(InvalidInputError, match=r"ties all.*'flat'"):
        measure(_order("abc"), flat)


# ------------------------------------------------------------------------- top-k


def test_jaccard_and_kuncheva_hand_examples():
    a, b = _order("abcdef"), _order("bdaecf")
    # top-3: {a,b,c} vs {b,d,a}: intersection 2, union 4
    assert jaccard(a, b, k=3) == 0.5
    assert kuncheva(a, b, k=3) == pytest.approx((2 * 6 - 9) / (3 * 3))
    assert jaccard(a, b, k=1) == 0.0
    assert kuncheva(a, b, k=1) == pytest.approx((0 * 6 - 1) / (1 * 5))
    assert jaccard(a, b, k=6) == 1.0
    assert kuncheva(a, a, k=2) == 1.0


def test_top_k_follows_the_order_of_ties_and_blocks():
    # tied scores: the order breaks ties by the earlier name, so top-1 of tied is ["a"]
    tied = Ranking.from_scores({"a": 1.0, "b": 1.0, "c": 0.0})
    assert tied.order == ["a", "b", "c"]
    assert jaccard(tied, _order("abc"), k=1) == 1.0
    assert jaccard(tied, _order("bac"), k=1) == 0.0
    # a generic ranking lists a block's names in natural sort order: x2 before x10
    g = GenericRanking([["x10", "x2"], ["x1"]])
    assert jaccard(g, _order(["x2", "x10", "x1"]), k=1) == 1.0


def test_kuncheva_undefined_for_k_equal_n():
    with pytest.raises(InvalidParameterError, match=r"undefined for k = n = 4"):
        kuncheva(_order("abcd"), _order("abcd"), k=4)


@pytest.mark.parametrize("k", [0, 5, -1, 1.5, True, None])
def test_k_out_of_range(k):
    a, b = _order("abcd"), _order("dcba")
    with pytest.raises(InvalidParameterError, match="k must"):
        jaccard(a, b, k=k)
    with pytest.raises(InvalidParameterError, match="k must"):
        rbo(a, b, k=k if k is not None else 0)


def test_rbo_hand_example():
    a, b = _order("abcd"), _order("badc")
    # X_d = 0, 2, 2, 4 -> A_d = 0, 1, 2/3, 1; p = 0.5:
    # A_4 p^4 + (1-p)/p sum A_d p^d = 1/16 + (0 + 1/4 + 1/12 + 1/16) = 11/24
    assert rbo(a, b, p=0.5) == pytest.approx(11 / 24)
    # cut at depth 2: X = 0, 2 -> 1 * 1/4 + (0 + 1/4) = 1/2
    assert rbo(a, b, p=0.5, k=2) == pytest.approx(0.5)
    assert rbo(_order("abcd"), _order("cdab"), p=0.5, k=2) == 0.0
    assert rbo(a, a) == pytest.approx(1.0)


@settings(max_examples=40)
@given(
    st.integers(1, 12).flatmap(lambda n: st.tuples(st.permutations(range(n)), st.just(n))),
    st.floats(0.05, 0.95),
)
def test_rbo_equals_the_infinite_sum(data, p):
    perm, n = data
    a, b = Ranking.from_order(list(range(n))), Ranking.from_order(list(perm))
    # Webber et al. Eq. 7: RBO = (1-p) sum_d p^(d-1) A_d; full lists agree fully below depth n.
    order_a, order_b = a.order, b.order
    agreement = [len(set(order_a[:d]) & set(order_b[:d])) / d for d in range(1, n + 1)]
    agreement += [1.0] * 2000
    expected = (1 - p) * sum(p ** (d - 1) * x for d, x in enumerate(agreement, start=1))
    assert rbo(a, b, p=p) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("p", [0, 1, -0.1, 1.5, float("nan"), "0.5", True])
def test_rbo_bad_p(p):
    with pytest.raises(InvalidParameterError, match="p must be"):
        rbo(_order("abc"), _order("abc"), p=p)


# ------------------------------------------------------------------- pairwise, stability


def _three():
    return [
        _order("abcdef", method="A"),
        _order("bacdfe", method="B"),
        _order("fedcba", method="C"),
    ]


@pytest.mark.parametrize(
    ("measure", "kwargs", "diagonal"),
    [
        ("spearman", {}, 1.0),
        ("kendall", {}, 1.0),
        ("footrule", {}, 0.0),
        ("kendall_distance", {}, 0),
        ("jaccard", {"k": 2}, 1.0),
        ("kuncheva", {"k": 2}, 1.0),
        ("rbo", {"p": 0.8}, 1.0),
        ("s_measure", {}, 6),
        ("s_measure", {"normalized": True}, 1.0),
    ],
)
def test_pairwise_matches_the_pair_functions(measure, kwargs, diagonal):
    rs = _three()
    df = pairwise(rs, measure, **kwargs)
    assert list(df.index) == list(df.columns) == ["A", "B", "C"]
    assert df.attrs["measure"] == measure
    np.testing.assert_allclose(df.to_numpy(), df.to_numpy().T)
    np.testing.assert_allclose(np.diag(df.to_numpy()), diagonal)
    fn = {
        "spearman": spearman,
        "kendall": kendall,
        "footrule": footrule,
        "kendall_distance": kendall_distance,
        "jaccard": jaccard,
        "kuncheva": kuncheva,
        "rbo": rbo,
    }.get(measure, lambda a, b, **kw: s_measure([a, b], **kw))
    for (i, a), (j, b) in itertools.product(enumerate(rs), repeat=2):
        assert df.iloc[i, j] == pytest.approx(fn(a, b, **kwargs))


def test_pairwise_counts_are_integers():
    df = pairwise(_three(), "s_measure")
    assert df.dtypes.eq(np.int64).all()
    assert df.loc["A", "B"] == 4  # {a,b} > {c} > {d} > {e,f}
    assert df.loc["A", "C"] == 1


def test_pairwise_labels_are_unique():
    rs = [_order("abc", method="m"), _order("bac", method="m"), _order("cab"), _order("acb")]
    rs.append(_order("cba", method="solo"))
    assert list(pairwise(rs, "spearman").index) == ["r0", "r1", "r2", "r3", "solo"]
    # a method named like a fallback label: fall back to positions for all
    clash = [_order("abc", method="r1"), _order("bac")]
    assert list(pairwise(clash, "spearman").index) == ["r0", "r1"]
    df = pairwise(clash, "spearman", labels=["site A", "site B"])
    assert list(df.columns) == ["site A", "site B"]
    with pytest.raises(InvalidParameterError, match="unique"):
        pairwise(clash, "spearman", labels=["x", "x"])


def test_pairwise_callable_is_evaluated_on_ordered_pairs():
    rs = _three()

    def first_is_top(a, b):  # asymmetric on purpose
        return float(a.order[0] == "a") - float(b.order[0] == "a")

    df = pairwise(rs, first_is_top)
    assert df.attrs["measure"] == "first_is_top"
    assert df.loc["A", "C"] == 1.0 and df.loc["C", "A"] == -1.0
    with pytest.raises(InvalidInputError, match=r"NaN for input 0 \('A'\)"):
        pairwise(rs, lambda a, b: float("nan"))
    with pytest.raises(InvalidParameterError, match="real number"):
        pairwise(rs, lambda a, b: "high")


def test_pairwise_single_ranking_is_its_diagonal():
    df = pairwise([_order("abc", method="A")], "s_measure")
    assert df.to_dict() == {"A": {"A": 3}}


def test_stability():
    r = _order("abcde")
    res = stability([r, r, r])
    assert isinstance(res, Stability)
    assert res.mean == pytest.approx(1.0) and res.std == pytest.approx(0.0)
    assert res.n_pairs == 3 and res.measure == "spearman"
    rs = _three()
    res = stability(rs, "footrule")
    values = [footrule(rs[0], rs[1]), footrule(rs[0], rs[2]), footrule(rs[1], rs[2])]
    assert res.mean == pytest.approx(np.mean(values))
    assert res.std == pytest.approx(np.std(values))
    assert (res.min, res.max) == (min(values), max(values))
    assert stability(rs, "jaccard", k=2).mean == pytest.approx((1 + 0 + 0) / 3)


# -------------------------------------------------------------------------- errors


def test_errors():
    a = _order("abc")
    with pytest.raises(InvalidInputError, match="at least 2"):
        s_measure([a])
    with pytest.raises(InvalidInputError, match="at least 2"):
        stability([a])
    with pytest.raises(InvalidInputError, match=r"at least 1 ranking.*got 0"):
        pairwise([], "spearman")
    with pytest.raises(InvalidInputError, match="at least 2"):
        s_measure(iter([]))
    with pytest.raises(InvalidParameterError, match="not a single ranking"):
        s_measure(a)
    with pytest.raises(InvalidParameterError, match=r"did you mean 'spearman'"):
        pairwise([a, a], "spearmann")
    with pytest.raises(InvalidParameterError, match=r"'jaccard'.*'k'"):
        pairwise([a, a], "jaccard")
    with pytest.raises(InvalidParameterError, match=r"unexpected keyword argument 'k'"):
        stability([a, a], "spearman", k=2)
    with pytest.raises(InvalidParameterError, match="Ranking or a GenericRanking"):
        spearman(a, pd.Series([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("measure", MEASURES)
def test_feature_mismatch_names_the_features(measure):
    a, b = _order("abc"), _order("abd")
    kwargs = {"k": 1} if measure in ("jaccard", "kuncheva") else {}
    with pytest.raises(FeatureMismatchError, match=r"missing 'c'; extra 'd'"):
        pairwise([a, b], measure, **kwargs)
    with pytest.raises(FeatureMismatchError, match=r"missing 'c'; extra 'd'"):
        stability([a, b], measure, **kwargs)


def test_pairwise_of_a_single_ranking():
    r = Ranking.from_order(["a", "b", "c"], method="only")
    for measure in ("spearman", "kendall", "footrule"):
        table = pairwise([r], measure)
        assert table.shape == (1, 1) and list(table.index) == ["only"]
    assert pairwise([r], "spearman").iloc[0, 0] == pytest.approx(1.0)
