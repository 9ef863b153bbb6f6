"""Tests of aggregation.ranking: Ranking and GenericRanking."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.exceptions import NotFittedError

from aggregation.ranking import GenericRanking, Ranking
from rankers.exceptions import FeatureMismatchError, InvalidInputError, InvalidParameterError

pytestmark = pytest.mark.quick  # in the quick suite (pytest -m quick): see pyproject.toml

# ------------------------------------------------------------------ Ranking constructors


def test_from_scores_array_uses_sklearn_default_names():
    r = Ranking.from_scores([0.2, 0.9, 0.5], method="m")
    assert r.names == ("x0", "x1", "x2")
    assert r.order == ["x1", "x2", "x0"]
    assert r.order_idx.tolist() == [1, 2, 0]
    assert r.scores.tolist() == [0.2, 0.9, 0.5]
    assert r.method == "m"
    assert len(r) == 3


def test_from_scores_mapping_and_series_agree():
    by_map = Ranking.from_scores({"b": 1.0, "a": 3.0, "c": 2.0})
    by_series = Ranking.from_scores(pd.Series([1.0, 3.0, 2.0], index=["b", "a", "c"]))
    assert by_map.names == by_series.names == ("b", "a", "c")
    assert by_map.order == by_series.order == ["a", "c", "b"]
    assert by_map == by_series


def test_from_scores_mapping_with_names_reorders():
    r = Ranking.from_scores({"b": 1.0, "a": 3.0}, names=["a", "b"])
    assert r.names == ("a", "b")
    assert r.scores.tolist() == [3.0, 1.0]


def test_from_scores_mapping_with_other_names_is_a_mismatch():
    with pytest.raises(FeatureMismatchError, match="'zz'") as info:
        Ranking.from_scores({"b": 1.0, "a": 3.0}, names=["a", "zz"])
    assert info.value.missing == {"names": ["b"]}
    assert info.value.extra == {"names": ["zz"]}


def test_from_scores_does_not_alias_callers_array():
    scores = np.array([1.0, 2.0])
    r = Ranking.from_scores(scores)
    scores[0] = 10.0
    assert r.scores.tolist() == [1.0, 2.0]
    assert not r.scores.flags.writeable
    with pytest.raises(ValueError):
        r.scores[0] = 5.0


def test_from_order_by_names():
    r = Ranking.from_order(["c", "a", "b"], method="o")
    assert r.names == ("c", "a", "b")
    assert r.order == ["c", "a", "b"]
    assert dict(zip(r.names, r.scores.tolist(), strict=True)) == {"c": 3.0, "a": 2.0, "b": 1.0}


def test_from_order_by_names_with_names_keeps_names_order():
    r = Ranking.from_order(["c", "a", "b"], names=["a", "b", "c"])
    assert r.names == ("a", "b", "c")
    assert r.scores.tolist() == [2.0, 1.0, 3.0]
    assert r.order == ["c", "a", "b"]


def test_from_order_by_positions():
    r = Ranking.from_order([2, 0, 1], names=["a", "b", "c"])
    assert r.order == ["c", "a", "b"]
    assert r.scores.tolist() == [2.0, 1.0, 3.0]
    r = Ranking.from_order(np.array([1, 0]))
    assert r.names == ("x0", "x1")
    assert r.order == ["x1", "x0"]


@pytest.mark.parametrize(
    ("order", "names", "pattern"),
    [
        (["a", "b", "a"], ["a", "b", "c"], "duplicated: 'a'.*missing: 'c'"),
        (["a", "b"], ["a", "b", "c"], "missing: 'c'"),
        (["a", "q", "b"], ["a", "b", "c"], "not in names: 'q'"),
        ([0, 3, 1], ["a", "b", "c"], "outside 0..2: 3"),
        ([0, 0, 1], ["a", "b", "c"], "duplicated: 'a'.*missing: 'c'"),
        (["a", 1], None, "only feature names"),
        (["a", "b", "a"], None, "duplicated: 'a'"),
        ([], None, "non-empty"),
    ],
)
def test_from_order_rejects_non_permutations(order, names, pattern):
    with pytest.raises(InvalidInputError, match=pattern):
        Ranking.from_order(order, names=names)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_scores_are_named(bad):
    with pytest.raises(InvalidInputError, match=r"'b'") as info:
        Ranking.from_scores([1.0, bad, 2.0], names=["a", "b", "c"])
    assert "'a'" not in str(info.value)
    assert "'c'" not in str(info.value)


def test_duplicate_names_are_named():
    with pytest.raises(InvalidInputError, match="duplicated: 'a'"):
        Ranking.from_scores([1.0, 2.0, 3.0], names=["a", "b", "a"])


def test_names_reused_across_rankings_are_still_checked():
    # one validated tuple of names serves many rankings (validated once), but a length
    # mismatch and bad names are still caught, and the names stay the given ones
    first = Ranking(("a", "b", "c"), [1.0, 3.0, 2.0])
    again = Ranking(first.names, [0.0, 1.0, 2.0])
    assert again.names == ("a", "b", "c") and again.names is first.names
    with pytest.raises(InvalidInputError, match="got 3 feature names for 2 features"):
        Ranking(first.names, [1.0, 2.0])
    bad = ("a", "a")
    for _ in range(2):  # a rejected tuple is never remembered as valid
        with pytest.raises(InvalidInputError, match="duplicated: 'a'"):
            Ranking(bad, [1.0, 2.0])


@pytest.mark.parametrize(
    ("scores", "names", "pattern"),
    [
        ([], None, "empty"),
        ([1.0, 2.0], ["a"], "1 feature names for 2 features"),
        ([[1.0, 2.0]], None, "one-dimensional"),
        (["high", "low"], None, "numeric"),
        ({0: 1.0, 1: 2.0}, None, "strings"),
    ],
)
def test_from_scores_bad_input(scores, names, pattern):
    with pytest.raises(InvalidInputError, match=pattern):
        Ranking.from_scores(scores, names=names)


def test_explicit_order_idx_may_break_ties_but_not_contradict_scores():
    r = Ranking(["a", "b", "c"], [1.0, 1.0, 2.0], order_idx=[2, 1, 0])
    assert r.order == ["c", "b", "a"]
    with pytest.raises(InvalidInputError, match=r"puts 'a'.*before 'c'"):
        Ranking(["a", "b", "c"], [1.0, 1.0, 2.0], order_idx=[0, 2, 1])


# --------------------------------------------------------------------- from_ranker


class _Fitted:
    name = "toy"

    def __init__(self):
        self.scores_ = np.array([0.0, 0.5, 0.0, 0.9])
        # constant features (index 0 and 2) last, index 2 before 0 on purpose
        self.ranking_ = np.array([3, 1, 2, 0])
        self.feature_names_in_ = np.array(["p", "q", "r", "s"], dtype=object)


def test_from_ranker_keeps_names_ranking_and_name():
    r = Ranking.from_ranker(_Fitted())
    assert r.method == "toy"
    assert r.names == ("p", "q", "r", "s")
    assert r.order == ["s", "q", "r", "p"]
    assert r.ranks.to_dict() == {"p": 3.5, "q": 2.0, "r": 3.5, "s": 1.0}


def test_from_ranker_defaults():
    class Bare:
        scores_ = (0.3, 0.1)

    r = Ranking.from_ranker(Bare())
    assert r.method == "Bare"
    assert r.names == ("x0", "x1")
    assert r.order == ["x0", "x1"]
    assert Ranking.from_ranker(Bare(), method="other").method == "other"


def test_from_ranker_unfitted():
    class Unfitted:
        pass

    with pytest.raises(NotFittedError, match="Unfitted is not fitted"):
        Ranking.from_ranker(Unfitted())
    with pytest.raises(ValueError):
        Ranking.from_ranker(Unfitted())


def test_from_ranker_inconsistent_ranking_is_refused():
    fitted = _Fitted()
    fitted.ranking_ = np.array([0, 1, 2, 3])
    with pytest.raises(InvalidInputError, match="contradicts"):
        Ranking.from_ranker(fitted)


# -------------------------------------------------------------------- ranks, top, ...


def test_ranks_are_positions_with_ties_averaged():
    r = Ranking.from_scores([0.1, 0.9, 0.5, 0.9], names=["a", "b", "c", "d"])
    assert r.ranks.to_dict() == {"a": 4.0, "b": 1.5, "c": 3.0, "d": 1.5}
    assert list(r.ranks.index) == ["a", "b", "c", "d"]
    assert r.order == ["b", "d", "c", "a"]


def test_ranks_differ_from_indices():
    # order_idx are indices best first, ranks are positions by feature: they must not be mixed.
    r = Ranking.from_scores([0.1, 0.9, 0.5])
    assert r.order_idx.tolist() == [1, 2, 0]
    assert r.ranks.tolist() == [3.0, 1.0, 2.0]


def test_top():
    r = Ranking.from_scores([0.1, 0.9, 0.5])
    assert r.top(1) == ["x1"]
    assert r.top(3) == ["x1", "x2", "x0"]
    assert r.top(np.int64(2)) == ["x1", "x2"]


@pytest.mark.parametrize("k", [0, 4, -1, 1.5, True, "2"])
def test_top_rejects_bad_k(k):
    r = Ranking.from_scores([0.1, 0.9, 0.5])
    with pytest.raises(InvalidParameterError):
        r.top(k)


def test_to_series_repr_len():
    r = Ranking.from_scores([0.1, 0.9], names=["a", "b"], method="m")
    s = r.to_series()
    assert s.to_dict() == {"a": 0.1, "b": 0.9}
    assert s.name == "m"
    assert repr(r) == "Ranking(method='m', n_features=2, order=[b, a])"


def test_eq_and_reindex():
    r = Ranking.from_scores([0.1, 0.9, 0.5], names=["a", "b", "c"])
    moved = r.reindex(["c", "a", "b"])
    assert moved.names == ("c", "a", "b")
    assert moved.scores.tolist() == [0.5, 0.1, 0.9]
    assert moved.order == r.order
    assert moved == r
    assert r != Ranking.from_scores([0.1, 0.9, 0.6], names=["a", "b", "c"])
    assert r != Ranking.from_scores([0.1, 0.9, 0.5], names=["a", "b", "d"])
    assert r != "not a ranking"


def test_reindex_needs_same_features():
    r = Ranking.from_scores([0.1, 0.9, 0.5], names=["a", "b", "c"])
    with pytest.raises(FeatureMismatchError, match=r"missing: 'c'.*unknown: 'd'"):
        r.reindex(["a", "b", "d"])


def test_reindex_keeps_explicit_tie_break():
    r = Ranking(["a", "b", "c"], [1.0, 1.0, 2.0], order_idx=[2, 1, 0])
    moved = r.reindex(["b", "c", "a"])
    assert moved.order == ["c", "b", "a"]
    assert moved.order_idx.tolist() == [1, 0, 2]


@given(st.lists(st.integers(-5, 5), min_size=1, max_size=12))
def test_ranks_agree_with_order_and_scipy_free_count(values):
    r = Ranking.from_scores(np.array(values, dtype=float))
    scores = np.array(values, dtype=float)
    # rank = 1 + #better + (#tied - 1) / 2, counted directly
    better = (scores[None, :] > scores[:, None]).sum(axis=1)
    tied = (scores[None, :] == scores[:, None]).sum(axis=1)
    assert r.ranks.tolist() == (1 + better + (tied - 1) / 2).tolist()
    # the order is best first, ties by earlier name
    assert r.order_idx.tolist() == sorted(range(len(values)), key=lambda i: (-values[i], i))
    assert Ranking.from_order(r.order, names=r.names).order == r.order


# ------------------------------------------------------------------- GenericRanking


def test_generic_ranking_str_natural_sort_and_len():
    g = GenericRanking([["x10", "x2"], ["x1"]])
    assert str(g) == "{x2,x10} > {x1}"
    assert len(g) == 2
    assert g.n_features == 3
    assert g.blocks == (("x2", "x10"), ("x1",))
    assert g.names == ("x2", "x10", "x1")
    assert not g.is_simple
    assert "x2,x10" in repr(g)


def test_generic_ranking_ranks_are_mean_block_positions():
    g = GenericRanking([["a", "b"], ["c"]])
    assert g.ranks.to_dict() == {"a": 1.5, "b": 1.5, "c": 3.0}
    g = GenericRanking([["c"], ["a", "b", "d"], ["e", "f"]])
    assert g.ranks.to_dict() == {"c": 1.0, "a": 3.0, "b": 3.0, "d": 3.0, "e": 5.5, "f": 5.5}


def test_generic_ranking_eq_compares_blocks_as_sets_in_order():
    assert GenericRanking([["a", "b"], ["c"]]) == GenericRanking([("b", "a"), {"c"}])
    assert GenericRanking([["a", "b"], ["c"]]) != GenericRanking([["c"], ["a", "b"]])
    assert GenericRanking([["a", "b"], ["c"]]) != GenericRanking([["a"], ["b"], ["c"]])


def test_generic_ranking_bare_string_is_a_singleton_block():
    g = GenericRanking(["ab", "c"])
    assert g.blocks == (("ab",), ("c",))
    assert g.is_simple


@pytest.mark.parametrize(
    ("blocks", "pattern"),
    [
        ([], "at least one block"),
        ([["a"], []], "empty block.*2"),
        ([["a", "b"], ["c", "a"]], "duplicated: 'a'"),
        ([["a", 1]], "strings"),
        ("abc", "not a string"),
    ],
)
def test_generic_ranking_validation(blocks, pattern):
    with pytest.raises(InvalidInputError, match=pattern):
        GenericRanking(blocks)


def test_generic_ranking_from_ranking_block_of_to_frame():
    r = Ranking.from_scores([0.1, 0.9, 0.5], names=["a", "b", "c"], method="m")
    g = GenericRanking.from_ranking(r)
    assert str(g) == "{b} > {c} > {a}"
    assert g.is_simple
    assert g.method == "m"
    assert g.ranks.to_dict() == r.ranks.to_dict()

    g = GenericRanking([["d", "a"], ["c"], ["b"]])
    assert [g.block_of(n) for n in "abcd"] == [1, 3, 2, 1]
    with pytest.raises(KeyError, match="'z'"):
        g.block_of("z")
    frame = g.to_frame()
    assert list(frame.columns) == ["feature", "block", "rank"]
    assert frame["feature"].tolist() == ["a", "d", "c", "b"]
    assert frame["block"].tolist() == [1, 1, 2, 3]
    assert frame["rank"].tolist() == [1.5, 1.5, 3.0, 4.0]


def test_near_tied_scores_tie_whatever_their_last_bits():
    # equal in exact arithmetic, different in the last bits: one block, earlier name first
    a = Ranking.from_scores([0.3, 0.1 + 0.2, 0.6], names=["p", "q", "r"])
    b = Ranking.from_scores([0.3, np.nextafter(0.3, 0.0), 0.6], names=["p", "q", "r"])
    for r in (a, b):
        assert r.order == ["r", "p", "q"]
        assert r.ranks.tolist() == [2.5, 2.5, 1.0]
    # the scores are kept as given: the tie is in the order and the ranks only
    assert b.scores[1] == np.nextafter(0.3, 0.0)
    # a real difference is kept
    c = Ranking.from_scores([0.3, 0.3 * (1 + 1e-6), 0.6], names=["p", "q", "r"])
    assert c.order == ["r", "q", "p"]
