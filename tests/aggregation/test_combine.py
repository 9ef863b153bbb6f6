"""Tests of aggregation.combine: generic ranking and the rank averages (mean, median,
Borda, weighted mean); vote and Kemeny are in test_consensus.py."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aggregation.combine import (
    borda,
    generic,
    kemeny,
    mean_rank,
    median_rank,
    vote,
    weighted_mean_rank,
)
from aggregation.ranking import GenericRanking, Ranking
from rankers.exceptions import FeatureMismatchError, InvalidInputError, InvalidParameterError

pytestmark = pytest.mark.quick  # in the quick suite (pytest -m quick): see pyproject.toml

PAPER_NAMES = ["1", "2", "3", "4"]


def _orders(*orders):
    return [Ranking.from_order(list(o), names=PAPER_NAMES) for o in orders]


# ------------------------------------------------------- the paper's worked examples (§2.3)


def test_paper_example_three_rankings():
    rs = _orders("4321", "3412", "3421")
    g = generic(rs)
    assert g == GenericRanking([["3", "4"], ["1", "2"]])
    assert str(g) == "{3,4} > {1,2}"
    assert len(g) == 2


def test_paper_example_indiscernible():
    g = generic(_orders("4312", "2134"))
    assert g == GenericRanking([["1", "2", "3", "4"]])
    assert len(g) == 1


def test_identical_rankings_give_s_equal_n():
    g = generic(_orders("2413", "2413", "2413"))
    assert len(g) == 4
    assert str(g) == "{2} > {4} > {1} > {3}"


def test_prefixes_differing_everywhere_give_s_equal_one():
    names = [f"f{i}" for i in range(7)]
    a = Ranking.from_order(names)
    b = Ranking.from_order(names[::-1])
    assert len(generic([a, b])) == 1


def test_generic_inputs_keep_their_blocks():
    g = GenericRanking([["a", "b"], ["c"], ["d"]])
    r = Ranking.from_order(["a", "b", "c", "d"])
    assert str(generic([g, r])) == "{a,b} > {c} > {d}"
    assert str(generic([GenericRanking([["a"], ["b", "c"], ["d"]]), r])) == "{a} > {b,c} > {d}"
    # a block of one input straddling two of another merges them
    h = GenericRanking([["a"], ["b", "c"], ["d"]])
    assert str(generic([g, h])) == "{a,b,c} > {d}"


def test_generic_of_one_input_is_its_equivalent():
    r = Ranking.from_scores([0.3, 0.1, 0.2], names=["a", "b", "c"])
    assert generic([r]) == GenericRanking.from_ranking(r)
    g = GenericRanking([["b"], ["a", "c"]])
    assert generic([g]) == g
    assert generic(iter([g])).method == "generic"


def test_generic_aligns_by_name_not_position():
    a = Ranking.from_order(["a", "b", "c"], names=["a", "b", "c"])
    b = Ranking.from_order(["a", "b", "c"], names=["c", "a", "b"])
    assert len(generic([a, b])) == 3


# ----------------------------------------------------------------- hypothesis properties


@st.composite
def _input(draw, names):
    """A Ranking (names listed in a random order; sometimes with tied scores) or a
    GenericRanking over ``names``."""
    order = draw(st.permutations(names))
    kind = draw(st.sampled_from(["order", "tied scores", "generic"]))
    if kind != "generic":
        listed = draw(st.permutations(names))
        if kind == "tied scores":
            scores = draw(st.lists(st.integers(0, 2), min_size=len(names), max_size=len(names)))
            return Ranking.from_scores(scores, names=listed)
        return Ranking.from_order(order, names=listed)
    cuts = draw(st.lists(st.booleans(), min_size=len(names) - 1, max_size=len(names) - 1))
    blocks, current = [], [order[0]]
    for name, cut in zip(order[1:], cuts, strict=True):
        if cut:
            blocks.append(current)
            current = []
        current.append(name)
    blocks.append(current)
    return GenericRanking(blocks)


@st.composite
def _inputs(draw, min_q=1, max_q=4):
    n = draw(st.integers(1, 7))
    names = [f"f{i}" for i in range(n)]
    q = draw(st.integers(min_q, max_q))
    return [draw(_input(names)) for _ in range(q)]


def _blocks(r):
    """An input as a list of sets, best first (a Ranking's tied scores share a set)."""
    if isinstance(r, Ranking):
        blocks, last = [], None
        for name in r.order:  # written as a loop on purpose: independent of the code
            score = r.to_series()[name]
            if blocks and score == last:
                blocks[-1].add(name)
            else:
                blocks.append({name})
            last = score
        return blocks
    return [set(b) for b in r.blocks]


def _brute_generic(inputs):
    """The paper's definition, verbatim: keep every k at which all inputs have a block
    boundary and the same set of features before it. O(n²·q)."""
    parts = [_blocks(r) for r in inputs]
    n = sum(len(b) for b in parts[0])
    result, previous = [], set()
    for k in range(1, n + 1):
        prefixes = []
        for blocks in parts:
            prefix, size = set(), 0
            for block in blocks:
                if size >= k:
                    break
                prefix |= block
                size += len(block)
            prefixes.append(prefix if size == k else None)
        if prefixes[0] is not None and all(p == prefixes[0] for p in prefixes):
            result.append(prefixes[0] - previous)
            previous = prefixes[0]
    return result


@given(_inputs())
def test_generic_is_the_finest_partition_of_the_definition(inputs):
    assert [set(b) for b in generic(inputs).blocks] == _brute_generic(inputs)


@given(_inputs())
def test_generic_is_coarser_than_every_input(inputs):
    out = generic(inputs)
    for r in inputs:
        block_numbers = [{out.block_of(name) for name in block} for block in _blocks(r)]
        # each input block lies inside one output block ...
        assert all(len(s) == 1 for s in block_numbers)
        # ... and they come in order, so each output block is a union of consecutive ones
        flat = [next(iter(s)) for s in block_numbers]
        assert flat == sorted(flat)


@given(_inputs(), st.randoms(use_true_random=False))
def test_generic_does_not_depend_on_input_order(inputs, rnd):
    shuffled = list(inputs)
    rnd.shuffle(shuffled)
    assert generic(shuffled) == generic(inputs)


@given(_inputs())
def test_generic_is_idempotent(inputs):
    g = generic(inputs)
    assert generic([g]) == g
    assert generic([g, g]) == g
    assert generic([*inputs, g]) == g
    r = inputs[0]
    assert generic([r, r]) == generic([r])


@given(_inputs(min_q=3, max_q=3))
def test_generic_is_associative(inputs):
    a, b, c = inputs
    whole = generic([a, b, c])
    assert generic([generic([a, b]), c]) == whole
    assert generic([a, generic([b, c])]) == whole


# ----------------------------------------------------------------------------- mean_rank


def test_mean_rank_hand_example():
    a = Ranking.from_order(["a", "b", "c", "d"])  # ranks a1 b2 c3 d4
    b = Ranking.from_order(["b", "c", "a", "d"])  # ranks a3 b1 c2 d4
    c = Ranking.from_scores({"a": 5.0, "b": 1.0, "c": 1.0, "d": 0.0})  # a1 b2.5 c2.5 d4
    r = mean_rank([a, b, c])
    mean = {"a": 5 / 3, "b": 5.5 / 3, "c": 7.5 / 3, "d": 4.0}
    assert r.method == "mean_rank"
    assert r.names == ("a", "b", "c", "d")
    assert r.order == ["a", "b", "c", "d"]
    np.testing.assert_allclose(r.scores, [5 - mean[k] for k in "abcd"])


def test_mean_rank_with_generic_input_uses_block_ranks():
    g = GenericRanking([["a", "b"], ["c"]])  # a1.5 b1.5 c3
    r = Ranking.from_order(["c", "b", "a"])  # c1 b2 a3
    out = mean_rank([g, r], method="avg")
    assert out.method == "avg"
    assert dict(zip(out.names, (4 - out.scores).tolist(), strict=True)) == {
        "a": 2.25,
        "b": 1.75,
        "c": 2.0,
    }
    assert out.order == ["b", "c", "a"]


def test_mean_rank_ties_follow_first_inputs_names_order():
    first = Ranking.from_order(["a", "b", "c"], names=["c", "b", "a"])
    second = Ranking.from_order(["b", "a", "c"])
    out = mean_rank([first, second])
    assert out.names == ("c", "b", "a")
    assert out.scores.tolist() == [1.0, 2.5, 2.5]
    assert out.order == ["b", "a", "c"]  # b before a: b comes first in ("c", "b", "a")


def test_mean_rank_single_input():
    r = Ranking.from_scores([0.3, 0.1, 0.2], names=["a", "b", "c"])
    out = mean_rank([r])
    assert out.order == r.order
    assert out.scores.tolist() == [3.0, 1.0, 2.0]
    assert out.ranks.to_dict() == r.ranks.to_dict()


def _expected_order(names, *keys):
    """Names sorted by ``keys`` (dicts by name, compared in turn), then by position in
    ``names``: the tie-breaking every rank combination documents."""
    return sorted(names, key=lambda f: (*(k[f] for k in keys), names.index(f)))


def _direct_ranks(inputs):
    """{name: [rank in each input]} straight from each input's public ``ranks``."""
    names = inputs[0].names
    return {f: [float(r.ranks[f]) for r in inputs] for f in names}


@pytest.mark.parametrize("combine", ["mean_rank", "median_rank", "borda"])
@settings(max_examples=40)
@given(inputs=_inputs(), rnd=st.randoms(use_true_random=False))
def test_rank_combinations_are_equivariant_under_feature_permutation(combine, inputs, rnd):
    func = {"mean_rank": mean_rank, "median_rank": median_rank, "borda": borda}[combine]
    moved = []
    for r in inputs:
        names = list(r.names)
        rnd.shuffle(names)
        moved.append(r.reindex(names) if isinstance(r, Ranking) else r)
    out, out_moved = func(inputs), func(moved)
    assert out_moved.to_series().sort_index().equals(out.to_series().sort_index())
    # direct count, feature by feature
    ranks = _direct_ranks(inputs)
    n = len(out)
    mean = {f: np.mean(v) for f, v in ranks.items()}
    if combine == "mean_rank":
        expected, keys = {f: n + 1 - mean[f] for f in ranks}, [mean]
    elif combine == "median_rank":
        median = {f: np.median(v) for f, v in ranks.items()}
        expected, keys = {f: n + 1 - median[f] for f in ranks}, [median, mean]
    else:
        expected, keys = {f: sum(n - x for x in v) for f, v in ranks.items()}, [mean]
    np.testing.assert_allclose(out.to_series()[list(expected)], list(expected.values()))
    assert out.method == combine
    # the documented order, for both listings of the features
    assert out.order == _expected_order(list(inputs[0].names), *keys)
    assert out_moved.order == _expected_order(list(moved[0].names), *keys)


# every combination refuses bad input the same way (weights are checked after the inputs)
_weighted = functools.partial(weighted_mean_rank, weights=[1.0, 1.0, 1.0, 1.0])
ALL = [generic, mean_rank, median_rank, borda, _weighted, vote, kemeny]
ALL_IDS = ["generic", "mean_rank", "median_rank", "borda", "weighted_mean_rank", "vote", "kemeny"]


@pytest.mark.parametrize("combine", ALL, ids=ALL_IDS)
def test_mismatched_features_are_named_per_input(combine):
    a = Ranking.from_order(["a", "b", "c"], method="m0")
    b = Ranking.from_order(["a", "b", "c"], method="m1")
    c = Ranking.from_order(["a", "b", "d", "e"], method="m2")
    d = GenericRanking([["b"], ["a"]])
    with pytest.raises(FeatureMismatchError) as info:
        combine([a, b, c, d])
    err = info.value
    assert isinstance(err, ValueError)
    assert err.missing == {2: ["c"], 3: ["c"]}
    assert err.extra == {2: ["d", "e"], 3: []}
    msg = str(err)
    assert "input 2 ('m2'): missing 'c'; extra 'd', 'e'" in msg
    assert "input 3: missing 'c'; extra none" in msg
    assert "input 1" not in msg
    assert "'m0'" in msg


@pytest.mark.parametrize("combine", ALL, ids=ALL_IDS)
def test_same_features_listed_in_another_order_are_aligned(combine):
    a = Ranking.from_order(["a", "b", "c", "d"], names=["a", "b", "c", "d"])
    b = Ranking.from_order(["a", "b", "c", "d"], names=["d", "c", "b", "a"])
    g = GenericRanking([["a"], ["b"], ["c"], ["d"]])
    out = combine([a, b, g, a])
    if isinstance(out, Ranking):
        assert out.order == ["a", "b", "c", "d"]
    else:
        assert str(out) == "{a} > {b} > {c} > {d}"


@pytest.mark.parametrize("combine", ALL, ids=ALL_IDS)
def test_empty_input_is_an_error(combine):
    with pytest.raises(InvalidInputError, match="at least one"):
        combine([])


@pytest.mark.parametrize("combine", ALL, ids=ALL_IDS)
def test_wrong_types_are_refused(combine):
    r = Ranking.from_order(["a", "b"])
    with pytest.raises(InvalidParameterError, match="list"):
        combine(r)
    with pytest.raises(InvalidParameterError, match=r"position.*1"):
        combine([r, ["a", "b"]])


# --------------------------------------------------------------------------- median_rank


def test_median_rank_hand_example_with_ties_and_even_count():
    # ranks per input:      a    b    c    d
    rs = [
        Ranking.from_order(["a", "b", "c", "d"]),  # 1    2    3    4
        Ranking.from_order(["d", "a", "b", "c"]),  # 2    3    4    1
        Ranking.from_order(["b", "a", "c", "d"]),  # 2    1    3    4
        Ranking.from_scores({"a": 9, "b": 9, "c": 5, "d": 0}),  # 1.5  1.5  3  4
    ]
    out = median_rank(rs)
    median = {"a": 1.75, "b": 1.75, "c": 3.0, "d": 4.0}  # a: (1.5 + 2) / 2, b: (1.5 + 2) / 2
    assert dict(zip(out.names, (5 - out.scores).tolist(), strict=True)) == median
    # a and b share the median; a's mean (1.625) beats b's (1.875): a first
    assert out.order == ["a", "b", "c", "d"]
    # reversing the first input's listing does not change that: mean rank decides first
    again = median_rank([rs[0].reindex(["d", "c", "b", "a"]), *rs[1:]])
    assert again.order == ["a", "b", "c", "d"]


def test_median_rank_ignores_one_outlying_input():
    usual = ["a", "b", "c", "d", "e"]
    rs = [Ranking.from_order(usual) for _ in range(4)] + [Ranking.from_order(usual[::-1])]
    assert median_rank(rs).order == usual
    assert median_rank(rs).scores.tolist() == [5.0, 4.0, 3.0, 2.0, 1.0]


# --------------------------------------------------------------------------------- borda


def test_borda_hand_example():
    rs = [
        Ranking.from_order(["a", "b", "c"]),  # points a2 b1 c0
        Ranking.from_order(["c", "a", "b"]),  # c2 a1 b0
        GenericRanking([["b", "c"], ["a"]]),  # b1.5 c1.5 a0 (ranks 1.5, 1.5, 3)
    ]
    out = borda(rs)
    assert out.method == "borda"
    assert dict(zip(out.names, out.scores.tolist(), strict=True)) == {"a": 3, "b": 2.5, "c": 3.5}
    assert out.order == ["c", "a", "b"]


@settings(max_examples=40)
@given(_inputs())
def test_borda_is_mean_rank_rescaled(inputs):
    b, m = borda(inputs), mean_rank(inputs)
    n, q = len(m), len(inputs)
    assert b.order == m.order  # ties included: same keys, same tie-breaking
    np.testing.assert_allclose(b.scores, q * (m.scores - 1))  # q (n - mean) = q (score - 1)
    assert b.scores.min() >= 0 and b.scores.max() <= q * (n - 1)


# --------------------------------------------------------------------- weighted_mean_rank


def test_weighted_mean_rank_site_sizes():
    big = Ranking.from_order(["a", "b", "c"], method="site A")  # 300 samples
    small = Ranking.from_order(["c", "b", "a"], method="site B")  # 100 samples
    out = weighted_mean_rank([big, small], weights=[300, 100])
    means = {"a": (300 * 1 + 100 * 3) / 400, "b": 2.0, "c": (300 * 3 + 100 * 1) / 400}
    assert dict(zip(out.names, (4 - out.scores).tolist(), strict=True)) == means
    assert out.order == ["a", "b", "c"]
    assert out.method == "weighted_mean_rank"
    # equal sizes: an exact three-way tie, so the first input's names order decides
    tie = weighted_mean_rank([big, small], weights=[7, 7])
    assert tie.scores.tolist() == [2.0, 2.0, 2.0]
    assert tie.order == ["a", "b", "c"]


@settings(max_examples=40)
@given(_inputs(), st.floats(1e-3, 1e6))
def test_weighted_mean_rank_with_equal_weights_is_mean_rank(inputs, w):
    out = weighted_mean_rank(inputs, weights=[w] * len(inputs))
    ref = mean_rank(inputs)
    assert out.order == ref.order
    assert out.scores.tolist() == ref.scores.tolist()


@settings(max_examples=40)
@given(_inputs(), st.data())
def test_weighted_mean_rank_with_one_weight_is_that_input(inputs, data):
    k = data.draw(st.integers(0, len(inputs) - 1))
    w = data.draw(st.sampled_from([1.0, 0.3, 17.0]))
    weights = [0.0] * len(inputs)
    weights[k] = w
    out = weighted_mean_rank(inputs, weights=weights)
    only = inputs[k]
    assert out.ranks.to_dict() == only.ranks.to_dict()
    # first input's names order breaks only the input's own ties
    expected = _expected_order(list(inputs[0].names), only.ranks.to_dict())
    assert out.order == expected


@settings(max_examples=40)
@given(_inputs(), st.data())
def test_weighted_mean_rank_matches_a_direct_weighted_average(inputs, data):
    weights = data.draw(
        st.lists(st.integers(0, 50), min_size=len(inputs), max_size=len(inputs)).filter(any)
    )
    out = weighted_mean_rank(inputs, weights=weights)
    ranks = _direct_ranks(inputs)
    mean = {f: np.average(v, weights=weights) for f, v in ranks.items()}
    n = len(out)
    np.testing.assert_allclose(out.to_series()[list(mean)], [n + 1 - m for m in mean.values()])
    # integer weights give exact means: ties are exact and follow the first input's names
    exact = {f: sum(w * x for w, x in zip(weights, v, strict=True)) for f, v in ranks.items()}
    assert out.order == _expected_order(list(inputs[0].names), exact)


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ([1, 2], "got 2 weights for 3 rankings"),
        ([1, -0.5, 3], r"non-negative; not at position\(s\) 1 \(-0.5\)"),
        ([1, np.nan, 3], r"finite; not at position\(s\) 1 \(nan\)"),
        ([np.inf, 1, 1], r"finite; not at position\(s\) 0"),
        ([0, 0, 0], "all zero"),
        (["a", "b", "c"], "numbers"),
        ("abc", "one-dimensional"),
        ([[1, 2, 3]], "one-dimensional"),
        (2.0, "one-dimensional"),
    ],
)
def test_weighted_mean_rank_refuses_bad_weights(weights, message):
    rs = [Ranking.from_order(["a", "b"]), Ranking.from_order(["b", "a"])] * 2
    with pytest.raises(InvalidParameterError, match=message):
        weighted_mean_rank(rs[:3], weights=weights)


def test_tied_scores_stay_in_one_block():
    # two rankers that both tie c and d (e.g. two constant features) at the bottom: the
    # tie-break by name order must not split them into {c} > {d}
    a = Ranking.from_scores({"a": 3.0, "b": 2.0, "c": 0.0, "d": 0.0})
    b = Ranking.from_scores({"a": 5.0, "b": 4.0, "c": -1.0, "d": -1.0})
    assert str(generic([a, b])) == "{a} > {b} > {c,d}"
    assert str(GenericRanking.from_ranking(a)) == "{a} > {b} > {c,d}"
    assert generic([a]) == GenericRanking.from_ranking(a)


@settings(max_examples=60)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 6), q=st.integers(2, 5))
def test_weighted_mean_rank_ties_are_exact_ties(seed, n, q):
    # fractional weights: means equal in exact arithmetic differ in their last bits when
    # computed; they must still tie and keep the first input's names order
    from fractions import Fraction

    rng = np.random.default_rng(seed)
    names = [f"f{i}" for i in range(n)]
    inputs = [Ranking.from_order(list(rng.permutation(names)), names=names) for _ in range(q)]
    w = rng.choice([0.1, 0.2, 0.3, 0.7], size=q)
    got = weighted_mean_rank(inputs, w)
    exact = {
        f: sum(Fraction(str(wi)) * Fraction(r.ranks[f]) for wi, r in zip(w, inputs, strict=True))
        for f in names
    }
    expected = sorted(names, key=lambda f: (exact[f], names.index(f)))
    assert got.order == expected


# ------------------------------------------------------------------ the method table
def test_every_list_of_method_names_is_the_table():
    from aggregation.combine import METHODS, check_methods
    from aggregation.federated import AGGREGATES
    from moweights.federated.flower_app import check_run_config

    assert AGGREGATES is METHODS
    assert set(METHODS) == {
        "generic",
        "mean_rank",
        "median_rank",
        "borda",
        "weighted_mean_rank",
        "vote",
        "kemeny",
        "rra",
        "rrf",
        "best_rank",
    }
    rs = [Ranking.from_order(o) for o in (["a", "b", "c"], ["b", "a", "c"])]
    for name, combine in METHODS.items():
        extra = {"weights": [1, 2]} if name == "weighted_mean_rank" else {}
        assert isinstance(combine(rs, **extra), (Ranking, GenericRanking))
    assert check_methods(("borda", "generic", "borda")) == ["borda", "generic"]
    with pytest.raises(InvalidParameterError, match="did you mean 'median_rank'"):
        check_methods("medianrank")
    with pytest.raises(InvalidParameterError, match="names no method"):
        check_methods([])
    with pytest.raises(InvalidParameterError, match="Known: generic, mean_rank"):
        check_methods(["weighted_mean_rank"], [m for m in METHODS if m != "weighted_mean_rank"])
    cfg = check_run_config({"aggregate": ",".join(m for m in METHODS if m != "weighted_mean_rank")})
    assert cfg["methods"] == [m for m in METHODS if m != "weighted_mean_rank"]
