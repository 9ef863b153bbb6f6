"""A ranking in any of its forms, as columns of X (one check for every evaluation), and the
checks the evaluations share with the rest of the package: numbers of features and seeds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import rankers
from aggregation.evaluation import cluster_scores, ffa_rfa, topk_curve
from aggregation.evaluation._inputs import feature_order
from aggregation.ranking import GenericRanking, Ranking
from rankers.exceptions import InvalidInputError, InvalidParameterError

pytestmark = pytest.mark.quick  # in the quick suite (pytest -m quick): see pyproject.toml

NAMES = ["a", "b", "c", "d"]


@pytest.mark.parametrize(
    "ranking",
    [
        ["c", "a", "d", "b"],
        ("c", "a", "d", "b"),
        np.array(["c", "a", "d", "b"]),
        pd.Index(["c", "a", "d", "b"]),
        [2, 0, 3, 1],
        np.array([2, 0, 3, 1]),
        [np.int64(2), 0, 3, np.int32(1)],
        Ranking.from_order(["c", "a", "d", "b"]),
        GenericRanking([["c"], ["a"], ["d"], ["b"]]),
    ],
)
def test_every_form_gives_the_same_columns(ranking):
    assert feature_order(ranking, NAMES).tolist() == [2, 0, 3, 1]


def test_a_fitted_ranker_gives_its_ranking():
    X = pd.DataFrame(np.random.default_rng(0).normal(size=(30, 4)) * [1, 4, 2, 3], columns=NAMES)
    est = rankers.get("variance").fit(X)
    assert feature_order(est, NAMES).tolist() == est.ranking_.tolist()


def test_a_generic_ranking_breaks_ties_by_natural_name_order():
    order = feature_order(GenericRanking([["d", "b"], ["c", "a"]]), NAMES)
    assert order.tolist() == [1, 3, 0, 2]


@pytest.mark.parametrize(
    ("ranking", "error", "message"),
    [
        ([], InvalidParameterError, "lists no feature"),
        ("abcd", InvalidParameterError, "must be a Ranking"),
        ({"a": 1}, InvalidParameterError, "must be a Ranking"),
        (["a", "b", "c", "x"], InvalidInputError, "names features not in X: 'x'"),
        ([0, 1, 2, 4], InvalidInputError, r"outside 0\.\.3: \[4\]"),
        ([0, 1, 2, -1], InvalidInputError, r"outside 0\.\.3: \[-1\]"),
        ([0, "b", 2, 3], InvalidInputError, "only feature names .* or only column indices"),
        ([True, False, 2, 3], InvalidInputError, "only feature names"),
        ([0.0, 1.0, 2.0, 3.0], InvalidInputError, "only feature names"),
        (["a", "a", "b", "c"], InvalidInputError, "more than once: 'a'.*exactly once"),
        (["a", "b", "c"], InvalidInputError, "exactly once; missing: 'd'"),
    ],
)
def test_what_is_not_a_ranking_of_x_is_named(ranking, error, message):
    with pytest.raises(error, match=message):
        feature_order(ranking, NAMES)


def test_a_partial_ranking_where_the_best_few_suffice():
    assert feature_order(["d", "a"], NAMES, complete=False).tolist() == [3, 0]
    with pytest.raises(InvalidInputError, match="more than once"):
        feature_order(["d", "d"], NAMES, complete=False)


# ------------------------------------------------------------------ the evaluations use them
def _data(m=40):
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1], m // 2)
    X = pd.DataFrame(rng.normal(size=(m, 4)) + y[:, None] * [2, 0, 0, 1], columns=NAMES)
    return X, y


def test_the_curves_and_the_clustering_take_the_same_rankings():
    X, y = _data()
    g = GenericRanking([["a", "d"], ["b", "c"]])
    # a generic ranking was refused by topk_curve before; now every evaluation reads it alike
    fixed = topk_curve(g, X, cv=3, random_state=0)
    same = topk_curve(["a", "d", "b", "c"], X, cv=3, random_state=0)
    pd.testing.assert_frame_equal(fixed, same)
    a = ffa_rfa(g, X, y, cv=3, grid="geometric", random_state=0)
    b = ffa_rfa([0, 3, 1, 2], X, y, cv=3, grid="geometric", random_state=0)
    pd.testing.assert_frame_equal(a, b)
    c1 = cluster_scores(X, y, g, k_features=[1, 2], random_state=0)
    c2 = cluster_scores(X, y, np.array([0, 3, 1, 2]), k_features=[1, 2], random_state=0)
    pd.testing.assert_frame_equal(c1, c2)


@pytest.mark.parametrize(
    "call",
    [
        lambda X, y: topk_curve("variance", X, ks=[1, 2.5], cv=3),  # int(2.5) was taken as 2
        lambda X, y: topk_curve("variance", X, ks=[True, 2], cv=3),
        lambda X, y: cluster_scores(X, y, k_features=[1.0, 2]),
        lambda X, y: cluster_scores(X, y, k_features=True),
        lambda X, y: ffa_rfa(NAMES, X, y, grid=[1, 2.0], cv=3),
    ],
)
def test_numbers_of_features_are_whole_numbers(call):
    X, y = _data()
    with pytest.raises(InvalidParameterError, match="integer"):
        call(X, y)


@pytest.mark.parametrize(
    "call",
    [
        lambda X, y: topk_curve("variance", X, cv=3, random_state=-1),
        lambda X, y: cluster_scores(X, y, random_state=-1),
        lambda X, y: ffa_rfa(NAMES, X, y, cv=3, random_state=-1),
        lambda X, y: cluster_scores(X, y, random_state=1.5),
    ],
)
def test_a_bad_seed_is_named_not_a_numpy_traceback(call):
    X, y = _data()
    with pytest.raises(InvalidParameterError, match="random_state must be None, a non-negative"):
        call(X, y)


def test_every_seed_form_is_read_alike_by_every_evaluation():
    X, y = _data()
    by_int = cluster_scores(X, y, random_state=5)
    by_sequence = cluster_scores(X, y, random_state=np.random.SeedSequence(5))
    pd.testing.assert_frame_equal(by_int, by_sequence)
    a = topk_curve("variance", X, cv=3, random_state=np.random.default_rng(2))
    b = topk_curve("variance", X, cv=3, random_state=np.random.default_rng(2))
    pd.testing.assert_frame_equal(a, b)
