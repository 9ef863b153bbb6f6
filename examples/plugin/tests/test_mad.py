"""The plugin's tests: the registry finds it, and its scores are right by hand."""

import numpy as np

import rankers


def test_registered_through_the_entry_point():
    assert rankers.get_class("mad").__name__ == "MADRanker"
    assert "mad" in set(rankers.available()["name"])


def test_scores_by_hand():
    X = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 1.1], [100.0, 1.2]])
    # column 0: median 1.5, |x - 1.5| = 1.5, .5, .5, 98.5 -> median 1.0
    # column 1: median 1.05, deviations .05, .05, .05, .15 -> median .05
    np.testing.assert_allclose(rankers.get("mad").fit(X).scores_, [1.0, 0.05])


def test_tags():
    tags = rankers.ranker_tags(rankers.get("mad"))
    assert (tags.requires_y, tags.target_kind, tags.scale_invariant) == (
        False,
        "unsupervised",
        True,
    )


def test_scale_invariant_ranking_and_scores_in_data_units():
    X = np.random.default_rng(0).normal(size=(30, 5))
    a, b = rankers.get("mad").fit(X), rankers.get("mad").fit(1000.0 * X)
    np.testing.assert_array_equal(a.ranking_, b.ranking_)
    np.testing.assert_allclose(b.scores_, 1000.0 * a.scores_)
