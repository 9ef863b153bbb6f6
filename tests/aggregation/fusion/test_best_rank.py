"""Best-rank fusion (aggregation.fusion.best_rank): a feature's best rank, ties broken by
its next-best ranks."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from aggregation import combine
from aggregation.combine import mean_rank
from aggregation.fusion.best_rank import best_rank
from aggregation.ranking import GenericRanking, Ranking
from rankers.exceptions import FeatureMismatchError, InvalidInputError


def test_hand_worked_order_and_its_tie_break():
    rs = [Ranking.from_order(list(o), names=list("abcde")) for o in ("abcde", "cbade", "edcba")]
    # sorted ranks: a (1, 3, 5), b (2, 2, 4), c (1, 3, 3), d (2, 4, 4), e (1, 5, 5)
    got = best_rank(rs)
    assert got.method == "best_rank" and got.names == tuple("abcde")
    assert (len(got) + 1 - got.scores).tolist() == [1.0, 2.0, 1.0, 2.0, 1.0]
    # best rank 1: c (next 3, 3) before a (3, 5) before e (5, 5); best 2: b (2, 4), d (4, 4)
    assert got.order == ["c", "a", "e", "b", "d"]
    # the tie-break orders, it does not change a value: tied best ranks share a tie group
    assert got.ranks.to_dict() == {"a": 2.0, "b": 4.5, "c": 2.0, "d": 4.5, "e": 2.0}


def test_identical_rank_vectors_keep_the_first_inputs_names_order():
    rs = [Ranking.from_order(list(o), names=list("qpr")) for o in ("pqr", "qpr")]
    assert best_rank(rs).order == ["q", "p", "r"]


def test_generic_blocks_count_as_their_average_rank():
    g = GenericRanking([["a", "b"], ["c"], ["d"]])
    other = Ranking.from_order(["d", "c", "b", "a"])
    got = best_rank([g, other])
    assert (len(got) + 1 - got.to_series()).to_dict() == {"a": 1.5, "b": 1.5, "c": 2.0, "d": 1.0}
    assert got.order == ["d", "b", "a", "c"]  # b (1.5, 3) before a (1.5, 4)


def test_a_failing_majority_does_not_bury_what_two_members_found(majority_runs):
    # the j-th planted feature (rank j in both finding members) has at most 4 (j - 1) + 1
    # features ahead of it (those ranked < j somewhere, and one ranked j in two random
    # members): all 5 are in the top 18 of every draw; measured worst position 17 of 1,000,
    # while mean_rank puts 1.45 of 5 in its top 20 on average
    for rs, planted in majority_runs:
        got = best_rank(rs)
        assert planted <= set(got.top(18))
        assert got.order[0] in planted  # first in both finding members: (1, 1, ...)
    mean_top20 = [len(planted & set(mean_rank(rs).top(20))) for rs, planted in majority_runs]
    assert np.mean(mean_top20) < 2.5


def test_the_order_of_the_inputs_changes_nothing():
    rng = np.random.default_rng(11)
    names = tuple(f"x{i}" for i in range(30))
    rs = [Ranking.from_scores(rng.integers(0, 6, 30).astype(float), names=names) for _ in range(4)]
    want = best_rank(rs)
    for perm in itertools.islice(itertools.permutations(rs), 1, None, 5):
        got = best_rank(list(perm))
        assert got.order == want.order and np.array_equal(got.scores, want.scores)


def test_bad_inputs_are_refused():
    a = Ranking.from_order(["a", "b", "c"])
    with pytest.raises(FeatureMismatchError, match="missing 'c'"):
        best_rank([a, Ranking.from_order(["a", "b"])])
    with pytest.raises(InvalidInputError, match="no rankings"):
        best_rank([])


def test_registered_by_name_and_reached_through_the_federated_aggregation():
    from aggregation.federated import aggregate_hierarchy, aggregate_rankings

    assert combine.METHODS["best_rank"] is best_rank is combine.best_rank
    sites = {
        s: Ranking.from_order(list(o)) for s, o in zip("uvw", ("abc", "cab", "bca"), strict=True)
    }
    got = aggregate_rankings(sites, aggregate="best_rank")["best_rank"]
    assert got == best_rank(list(sites.values()))
    tree = aggregate_hierarchy({"north": ["u", "v"], "south": ["w"]}, sites, method="best_rank")
    north = best_rank([sites["u"], sites["v"]])
    assert tree.method == "best_rank" and tree.regions["north"] == north
    assert tree.global_ranking == best_rank([north, tree.regions["south"]])


@given(
    st.integers(2, 10).flatmap(
        lambda n: st.lists(
            st.tuples(
                st.lists(st.sampled_from([-3, -2, -1, 1, 2, 3]), min_size=n, max_size=n),
                st.lists(st.integers(-4, 4), min_size=n, max_size=n),
            ),
            min_size=1,
            max_size=5,
        )
    )
)
def test_scores_moved_by_a_few_ulps_change_nothing(nudge, lists):
    names = [f"x{i}" for i in range(len(lists[0][0]))]
    exact = [Ranking.from_scores(np.array(v) * 0.1, names=names) for v, _ in lists]
    moved = [Ranking.from_scores(nudge(np.array(v) * 0.1, u), names=names) for v, u in lists]
    want, got = best_rank(exact), best_rank(moved)
    assert got.order == want.order and np.array_equal(got.scores, want.scores)
