"""The k-means that starts NDFS (rankers.kmeans): Lloyd's iteration under the tie rule."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score

from rankers.kmeans import kmeans_labels


def test_equidistant_sample_goes_to_the_lower_numbered_centre():
    # 0 and 2 are the two clusters' points; 1 lies exactly between them. Whatever the
    # seeds, the fixed point has it with the cluster whose centre is listed first.
    X = np.array([[0.0], [0.0], [1.0], [2.0], [2.0]])
    for seed in range(5):
        labels = kmeans_labels(X, 2, np.random.RandomState(seed), n_init=1)
        assert labels[0] == labels[1] and labels[3] == labels[4] != labels[0]


def test_finds_well_separated_clusters_like_scikit_learn():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [6.0, 0.0], [0.0, 6.0]])
    y = np.repeat([0, 1, 2], 30)
    X = centres[y] + rng.normal(size=(90, 2))
    ours = kmeans_labels(X, 3, np.random.RandomState(0))
    theirs = KMeans(3, n_init=10, random_state=0).fit_predict(X)
    assert adjusted_rand_score(ours, y) == 1.0
    assert adjusted_rand_score(ours, theirs) == 1.0


def test_same_seed_same_labels():
    X = np.random.default_rng(3).normal(size=(50, 4))
    a = kmeans_labels(X, 4, np.random.RandomState(7))
    b = kmeans_labels(X, 4, np.random.RandomState(7))
    np.testing.assert_array_equal(a, b)


@settings(max_examples=30)
@given(seed=st.integers(0, 2**32 - 1))
def test_partition_does_not_move_when_inputs_move_by_ulps(nudge, seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(40, 3)) * 0.1  # a grid: many equidistant samples
    c = int(rng.integers(2, 5))
    expected = kmeans_labels(X, c, np.random.RandomState(seed % 1000))
    moved = kmeans_labels(nudge(X, rng), c, np.random.RandomState(seed % 1000))
    np.testing.assert_array_equal(moved, expected)
