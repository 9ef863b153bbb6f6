"""bench_filters' sort floor computes the default chi2's own tables where nothing ties."""

from __future__ import annotations

import numpy as np

from benchmarks.speed import bench_filters
from rankers.supervised.information import _binned_contingency


def test_the_sort_floor_counts_the_contingency_tables_of_tie_free_data():
    rng = np.random.default_rng(0)
    m, n, n_bins = 97, 3000, 10  # the floor takes 1,351 columns a block here: three blocks
    X = rng.normal(size=(m, n))
    y = rng.integers(0, 3, m)
    ours = _binned_contingency(X, y, n_bins)
    floor = np.concatenate(bench_filters._sort_floor(X, y, n_bins)).reshape(n, n_bins, 3)
    np.testing.assert_array_equal(floor, ours)


def test_the_sort_floor_is_no_floor_where_values_tie():
    """Ties are grouped by ours (a group shares its mid rank's bin), not by the floor: the
    tables differ there, which is why the floor is called a floor and not a peer."""
    rng = np.random.default_rng(1)
    X = rng.integers(0, 30, size=(60, 8)).astype(float)
    y = rng.integers(0, 2, 60)
    ours = _binned_contingency(X, y, 10)
    floor = np.concatenate(bench_filters._sort_floor(X, y, 10)).reshape(8, 10, 2)
    assert ours.sum() == floor.sum() == 60 * 8
    assert not np.array_equal(floor, ours)
