"""NSGA-II member weights: the effective weights, the choice on the front, the ensemble."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from aggregation import Ranking, weighted_mean_rank
from moweights.ensemble import StackedRanker
from moweights.ensemble.weights import MIN_WEIGHT, effective_weights, learn_weights
from rankers.exceptions import InvalidParameterError

POOL = ["anova_f", "relieff", "t_test", "variance"]
NAMES = [f"f{i}" for i in range(5)]


def test_effective_weights_drop_the_small_ones_and_keep_one_member():
    assert effective_weights([0.5, 0.05, MIN_WEIGHT]).tolist() == [0.5, 0.0, MIN_WEIGHT]
    assert effective_weights([0.02, 0.08, 0.08]).tolist() == [0.0, 1.0, 0.0]


def _orders(*orders):
    return [Ranking.from_order([NAMES[i] for i in order]) for order in orders]


def test_learn_weights_finds_the_member_the_score_rewards_with_the_fewest_members():
    # two folds; the score: the share of folds whose combined top feature is f0. Members
    # "a" and "c" lead with f0 in both folds, "b" never: alone, "a" or "c" scores 1
    rankings = {
        "a": _orders([0, 1, 2, 3, 4], [0, 2, 1, 3, 4]),
        "b": _orders([1, 2, 3, 4, 0], [2, 1, 3, 4, 0]),
        "c": _orders([0, 3, 1, 2, 4], [0, 1, 3, 2, 4]),
    }

    def score(folds):
        return float(np.mean([r.order[0] == "f0" for r in folds]))

    weights, front = learn_weights(rankings, score, True, population=8, generations=4, seed=3)
    assert front["score"].iloc[0] == 1.0
    assert front["n_members"].iloc[0] == 1  # the fewest members among the best scores
    assert weights["b"] == 0.0 and (weights > 0).sum() == 1
    # the front's rows are sorted by score, best first, and each row's score is the score
    # of its weights' combination
    assert front["score"].is_monotonic_decreasing
    for _, row in front.head(3).iterrows():
        w = row[list(rankings)].to_numpy(dtype=float)
        keep = np.flatnonzero(w)
        folds = [
            weighted_mean_rank([rankings[list(rankings)[i]][f] for i in keep], w[keep])
            for f in range(2)
        ]
        assert score(folds) == row["score"]
    again, _ = learn_weights(rankings, score, True, population=8, generations=4, seed=3)
    assert again.equals(weights)


def test_an_error_score_is_minimised():
    rankings = {"a": _orders([0, 1, 2, 3, 4]), "b": _orders([4, 3, 2, 1, 0])}

    def error(folds):  # the position of f4 in the combined order: lower is better
        return float(list(folds[0].order).index("f4"))

    weights, front = learn_weights(rankings, error, False, population=6, generations=3, seed=0)
    assert front["score"].iloc[0] == 0.0 and weights["a"] == 0.0 and weights["b"] > 0


@pytest.fixture
def xor():
    """Classes by the XOR of features 0 and 1 (no marginal signal), 8 noise features."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(160, 10))
    y = ((X[:, 0] > 0) ^ (X[:, 1] > 0)).astype(int)
    return X, y


def test_the_nsga2_ensemble_weights_the_member_that_finds_the_structure(xor):
    X, y = xor
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = StackedRanker(pool=POOL, combine="nsga2", random_state=0, generations=5)
        est.fit(X, y)
    # relieff alone sees the XOR pair; the others are at chance on it
    assert est.members_[0] == "relieff"
    assert set(est.ranking_[:2]) == {0, 1}
    assert list(est.member_weights_.index) == POOL
    best = est.weights_front_.iloc[0]
    assert best["score"] >= est.inner_scores_.max() - 1e-12  # never below its best member
    assert est.member_weights_["relieff"] == est.member_weights_.max()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = StackedRanker(pool=POOL, combine="nsga2", random_state=0, generations=5)
        again.fit(X, y)
    np.testing.assert_array_equal(again.ranking_, est.ranking_)
    assert again.member_weights_.equals(est.member_weights_)


def test_the_nsga2_ensemble_on_pure_noise_scores_as_noise():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(120, 12))
    y = rng.integers(0, 2, 120)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = StackedRanker(pool=POOL, combine="nsga2", random_state=0, generations=4).fit(X, y)
    # learned weights cannot make noise predictive: balanced accuracy near chance
    assert est.weights_front_["score"].iloc[0] < 0.65
    assert est.inner_scores_.max() < 0.65


def test_mean_rank_members_weigh_one_and_bad_settings_are_named(xor):
    X, y = xor
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = StackedRanker(pool=POOL, n_members=2, random_state=0).fit(X, y)
    assert sorted(est.member_weights_[est.member_weights_ > 0].index) == sorted(est.members_)
    assert not hasattr(est, "weights_front_")
    for bad in ({"combine": "median"}, {"population": 1}, {"generations": 0}):
        with pytest.raises(InvalidParameterError):
            StackedRanker(pool=POOL, **bad).fit(X, y)
