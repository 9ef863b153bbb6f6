"""Tests of aggregation.consensus: the paper's vote (with its caveats) and exact Kemeny."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import aggregation.combine
from aggregation.combine import mean_rank
from aggregation.consensus import (
    KEMENY_MAX_BLOCK,
    KEMENY_MAX_FEATURES,
    kemeny,
    vote,
    vote_table,
)
from aggregation.ranking import GenericRanking, Ranking
from rankers.exceptions import InvalidParameterError


def _orders(*orders, names=None):
    return [Ranking.from_order(list(o), names=names) for o in orders]


@st.composite
def _input(draw, names):
    """A Ranking (sometimes with tied scores) or a GenericRanking over ``names``."""
    kind = draw(st.sampled_from(["order", "tied scores", "generic"]))
    order = draw(st.permutations(names))
    if kind == "order":
        return Ranking.from_order(order, names=draw(st.permutations(names)))
    if kind == "tied scores":
        scores = draw(st.lists(st.integers(0, 2), min_size=len(names), max_size=len(names)))
        return Ranking.from_scores(scores, names=order)
    cuts = draw(st.lists(st.booleans(), min_size=len(names) - 1, max_size=len(names) - 1))
    blocks = [[order[0]]]
    for name, cut in zip(order[1:], cuts, strict=True):
        if cut:
            blocks.append([])
        blocks[-1].append(name)
    return GenericRanking(blocks)


@st.composite
def _inputs(draw, max_n=7, max_q=6):
    n = draw(st.integers(1, max_n))
    names = [f"f{i}" for i in range(n)]
    return [draw(_input(names)) for _ in range(draw(st.integers(1, max_q)))]


def test_reexported_from_combine():
    assert aggregation.combine.kemeny is kemeny
    assert aggregation.combine.vote is vote
    assert aggregation.combine.vote_table is vote_table


# ---------------------------------------------------------------------------------- vote


def test_vote_both_caveats_of_the_paper():
    # ranks:            a  b  c  d
    rs = _orders("abcd", "bacd", "abdc", "badc")
    # a: 1,2,1,2 and b: 2,1,2,1 -> ranks 1 and 2 are equally frequent (caveat 1): take 1;
    # a and b then share modal rank 1, c and d share 3, nobody has 2 or 4 (caveat 2)
    table = vote_table(rs)
    assert table.index.tolist() == ["a", "b", "c", "d"]
    assert table["position"].tolist() == [1, 2, 3, 4]
    assert table["modal_rank"].tolist() == [1.0, 1.0, 3.0, 3.0]
    assert table["frequency"].tolist() == [2, 2, 2, 2]
    assert table["n_modal_ranks"].tolist() == [2, 2, 2, 2]
    assert table["n_sharing_rank"].tolist() == [2, 2, 2, 2]
    assert table["mean_rank"].tolist() == [1.5, 1.5, 3.5, 3.5]
    out = vote(rs)
    assert out.method == "vote"
    assert out.order == ["a", "b", "c", "d"]  # full ties: the first input's names order
    assert dict(zip(out.names, out.scores.tolist(), strict=True)) == {
        "a": 4.0,
        "b": 4.0,
        "c": 2.0,
        "d": 2.0,
    }
    # the same inputs listed from d to a in the first input: the full ties flip
    flipped = vote([rs[0].reindex(["d", "c", "b", "a"]), *rs[1:]])
    assert flipped.order == ["b", "a", "d", "c"]


def test_vote_shared_modal_rank_goes_to_the_more_frequent_then_the_better_mean():
    # ranks:            a  b  c
    rs = _orders("abc", "abc", "bca", "bca", "bac")
    # a: 1,1,3,3,2 -> modes 1 and 3 (twice each): modal 1, frequency 2
    # b: 2,2,1,1,1 -> modal 1, frequency 3   => b before a although a is first listed
    # c: 3,3,2,2,3 -> modal 3, frequency 3
    table = vote_table(rs)
    assert table.index.tolist() == ["b", "a", "c"]
    assert table.loc["a", ["modal_rank", "frequency", "n_modal_ranks"]].tolist() == [1, 2, 2]
    assert table.loc["b", ["modal_rank", "frequency", "n_modal_ranks"]].tolist() == [1, 3, 1]
    assert table.loc["c", ["modal_rank", "frequency", "n_modal_ranks"]].tolist() == [3, 3, 1]
    # equal modal rank and frequency: the mean rank decides (b 1.5 before a 2.0)
    assert vote(_orders("abc", "abc", "bca", "bca")).order == ["b", "a", "c"]


def test_vote_with_tied_scores_uses_average_ranks():
    rs = [
        Ranking.from_scores({"a": 1.0, "b": 1.0, "c": 0.0}),  # a1.5 b1.5 c3
        Ranking.from_scores({"a": 2.0, "b": 2.0, "c": 3.0}),  # c1 a2.5 b2.5
        Ranking.from_scores({"a": 5.0, "b": 4.0, "c": 4.0}),  # a1 b2.5 c2.5
    ]
    table = vote_table(rs)
    assert table["modal_rank"].to_dict() == {"b": 2.5, "a": 1.0, "c": 1.0}
    assert table["frequency"].to_dict() == {"b": 2, "a": 1, "c": 1}
    assert table["n_modal_ranks"].to_dict() == {"b": 1, "a": 3, "c": 3}
    # a and c: modal 1 once each; mean a (1.5+2.5+1)/3 = 5/3 < c (3+1+2.5)/3 = 6.5/3
    assert vote(rs).order == ["a", "c", "b"]


def test_vote_of_one_input_is_that_input():
    r = Ranking.from_scores([0.3, 0.9, 0.1, 0.5], names=["a", "b", "c", "d"])
    assert vote([r]).order == r.order
    assert vote([r]).ranks.to_dict() == r.ranks.to_dict()


def _direct_vote(inputs):
    """The vote written out with Counters: modal rank, frequency, number of modes."""
    names = list(inputs[0].names)
    rows = {}
    for f in names:
        counts = Counter(float(r.ranks[f]) for r in inputs)
        top = max(counts.values())
        modes = sorted(k for k, c in counts.items() if c == top)
        mean = float(np.mean([r.ranks[f] for r in inputs]))
        rows[f] = (modes[0], top, len(modes), mean)
    order = sorted(names, key=lambda f: (rows[f][0], -rows[f][1], rows[f][3], names.index(f)))
    return rows, order


@settings(max_examples=60)
@given(_inputs())
def test_vote_matches_a_direct_count(inputs):
    rows, order = _direct_vote(inputs)
    table = vote_table(inputs)
    assert table.index.tolist() == order
    got = table[["modal_rank", "frequency", "n_modal_ranks", "mean_rank"]]
    for f, expected in rows.items():
        assert got.loc[f].tolist() == pytest.approx(list(expected))
    shared = Counter(rows[f][0] for f in rows)
    assert table["n_sharing_rank"].to_dict() == {f: shared[rows[f][0]] for f in rows}
    # scipy's mode also keeps the smallest of equally frequent values
    ranks = np.array([[r.ranks[f] for f in inputs[0].names] for r in inputs])
    mode = stats.mode(ranks, axis=0)
    assert table.loc[list(inputs[0].names), "modal_rank"].tolist() == mode.mode.tolist()
    assert vote(inputs).order == order


# -------------------------------------------------------------------------------- Kemeny


def _pairwise_direct(inputs):
    """P[i][j] = inputs ranking names[i] before names[j] + half of those tying them."""
    names = list(inputs[0].names)
    n = len(names)
    p = np.zeros((n, n))
    for r in inputs:
        rank = r.ranks
        for i, j in itertools.permutations(range(n), 2):
            a, b = rank[names[i]], rank[names[j]]
            p[i, j] += 1.0 if a < b else 0.5 if a == b else 0.0
    return names, p


def _kendall_sum(order, inputs):
    """Summed Kendall distance of a total order to the inputs (tied pairs count 1/2)."""
    total = 0.0
    for r in inputs:
        rank = r.ranks
        for a, b in itertools.combinations(order, 2):  # a before b in ``order``
            total += 1.0 if rank[a] > rank[b] else 0.5 if rank[a] == rank[b] else 0.0
    return total


def _brute_force(inputs):
    """All n! orders, in lexicographic order of the first input's names: the first optimum."""
    names, p = _pairwise_direct(inputs)
    perms = np.array(list(itertools.permutations(range(len(names)))), dtype=np.intp)
    cost = np.zeros(len(perms))
    for i, j in itertools.combinations(range(len(names)), 2):
        cost += p[perms[:, j], perms[:, i]]  # perms[:, i] placed before perms[:, j]
    return [names[k] for k in perms[np.argmin(cost)]], cost.min()


@settings(max_examples=60)
@given(_inputs(max_n=7))
def test_kemeny_equals_brute_force(inputs):
    order, best = _brute_force(inputs)
    out = kemeny(inputs)
    assert out.order == order
    assert _kendall_sum(out.order, inputs) == best
    n = len(order)
    assert out.method == "kemeny"
    assert dict(zip(out.order, out.scores[out.order_idx].tolist(), strict=True)) == {
        f: float(n - i) for i, f in enumerate(order)
    }


@st.composite
def _noisy_copies(draw):
    """Inputs around one order: up to n adjacent swaps each (blocks of various sizes)."""
    n = draw(st.integers(2, 14))
    names = [f"f{i}" for i in range(n)]
    base = draw(st.permutations(names))
    inputs = []
    for _ in range(draw(st.integers(1, 5))):
        order = list(base)
        for i in draw(st.lists(st.integers(0, n - 2), max_size=n)):
            order[i], order[i + 1] = order[i + 1], order[i]
        inputs.append(Ranking.from_order(order, names=names))
    return inputs


@settings(max_examples=30)
@given(_noisy_copies())
def test_kemeny_is_no_farther_than_any_input(inputs):
    out = kemeny(inputs)
    total = _kendall_sum(out.order, inputs)
    assert all(total <= _kendall_sum(r.order, inputs) for r in inputs)
    assert total <= _kendall_sum(mean_rank(inputs).order, inputs)


@settings(max_examples=30)
@given(st.integers(1, 30), st.integers(1, 4), st.randoms(use_true_random=False))
def test_kemeny_of_identical_inputs_is_that_ranking(n, q, rnd):
    names = [f"f{i}" for i in range(n)]
    order = list(names)
    rnd.shuffle(order)
    r = Ranking.from_order(order, names=names)
    assert kemeny([r] * q) == r


def test_kemeny_condorcet_cycle_takes_the_first_optimal_order():
    # a > b, b > c, c > a by 2:1 each: abc, bca and cab all cost 4; abc is first
    rs = _orders("abcd", "bcad", "cabd")
    assert kemeny(rs).order == ["a", "b", "c", "d"]
    assert _kendall_sum(["a", "b", "c", "d"], rs) == _kendall_sum(["b", "c", "a", "d"], rs) == 4
    # listing c first in the first input makes cab the first optimal order
    first = rs[0].reindex(["c", "a", "b", "d"])
    assert kemeny([first, *rs[1:]]).order == ["c", "a", "b", "d"]


def test_kemeny_on_the_papers_example_respects_the_generic_blocks():
    names = ["1", "2", "3", "4"]
    rs = _orders("4321", "3412", "3421", names=names)  # generic ranking {3,4} > {1,2}
    assert kemeny(rs).order == ["3", "4", "2", "1"]  # 3 > 4 and 2 > 1 by 2:1


def test_kemeny_tied_input_pairs_express_no_preference():
    all_tied = GenericRanking([["a", "b", "c"]])
    # only the last input prefers anything; were the ties read as a > b > c, three inputs
    # against one would win
    out = kemeny([all_tied, all_tied, all_tied, Ranking.from_order(["c", "b", "a"])])
    assert out.order == ["c", "b", "a"]


def test_kemeny_splits_many_features_along_the_majority():
    # 25 features in 5 groups of 5 that every input keeps in group order: more than
    # KEMENY_MAX_BLOCK features, but each group is solved on its own
    rng = np.random.default_rng(0)
    groups = [[f"g{g}_{i}" for i in range(5)] for g in range(5)]
    names = [f for grp in groups for f in grp]
    inputs = [
        Ranking.from_order([f for grp in groups for f in rng.permutation(grp)], names=names)
        for _ in range(4)
    ]
    expected = []
    for grp in groups:
        local = [Ranking.from_order([f for f in r.order if f in grp], names=grp) for r in inputs]
        expected += _brute_force(local)[0]
    assert len(names) > KEMENY_MAX_BLOCK
    assert kemeny(inputs).order == expected


def test_kemeny_refuses_a_block_beyond_the_limit():
    n = KEMENY_MAX_BLOCK + 1
    names = [f"f{i}" for i in range(n)]
    # a ranking and its reverse: every pair is a draw, so no majority splits anything
    rs = [Ranking.from_order(names), Ranking.from_order(names[::-1], names=names)]
    with pytest.raises(InvalidParameterError, match=rf"KEMENY_MAX_BLOCK = 18.*block of {n}"):
        kemeny(rs)
    assert kemeny([rs[0], rs[1], rs[0]]).order == names  # a majority: one feature per block


def test_kemeny_refuses_too_many_features():
    names = [f"f{i}" for i in range(KEMENY_MAX_FEATURES + 1)]
    with pytest.raises(InvalidParameterError, match=r"KEMENY_MAX_FEATURES = 1000.*got 1001"):
        kemeny([Ranking.from_order(names)])
