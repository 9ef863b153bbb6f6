"""Compactness score (Zhu et al. 2023; Eq. 2 of the Distance Rank paper)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import rankdata

from rankers.exceptions import ConstantFeatureWarning, InvalidParameterError
from rankers.unsupervised.compactness import CompactnessRanker


def dense_compactness(X, n_neighbors=5, scale=True):
    """Eq. 2 written out: dense distances, each sample's own k nearest, a loop per feature."""
    X = np.asarray(X, dtype=float)
    if scale:
        X = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    dist = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2))
    np.fill_diagonal(dist, np.inf)
    knn = np.argsort(dist, axis=1, kind="stable")[:, :n_neighbors]
    out = []
    for r in range(X.shape[1]):
        f = X[:, r]
        num = sum(abs(f[i] - f[j]) for i in range(len(f)) for j in knn[i])
        out.append(num / f.var())
    return np.array(out)


def planted(seed, m=90):
    """4 features carrying 3 clusters, 4 noisy copies of them, 8 pure-noise features."""
    rng = np.random.default_rng(seed)
    labels = np.repeat([0, 1, 2], m // 3)
    pattern = np.array([[0, 1, 2], [2, 0, 1], [1, 2, 0], [0, 2, 1]]).T  # cluster x feature
    informative = 3.0 * pattern[labels] + rng.normal(size=(m, 4))
    copies = informative + rng.normal(scale=2.0, size=(m, 4))
    return np.column_stack([informative, copies, rng.normal(size=(m, 8))])


def test_hand_worked_example():
    # scaled x0 = 0, 1/6, 5/6, 1 and x1 = 0, 0, 1, 1. Nearest neighbours (k = 1): 0<->1,
    # 2<->3. Numerators: x0 4 x 1/6 = 2/3, x1 0. Var(x0) = (1/4 + 1/36 + 1/36 + 1/4) / 4
    # = 13/72, so CS(x0) = (2/3) / (13/72) = 48/13 and the score 1 / (1 + 48/13) = 13/61.
    X = np.array([[0.0, 0.0], [1.0, 0.0], [5.0, 1.0], [6.0, 1.0]])
    est = CompactnessRanker(n_neighbors=1).fit(X)
    np.testing.assert_allclose(est.statistic_, [48 / 13, 0.0], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(est.scores_, [13 / 61, 1.0], rtol=1e-12)
    assert est.ranking_.tolist() == [1, 0]


@pytest.mark.parametrize("n_neighbors", [1, 5, 9])
def test_matches_dense_reference(n_neighbors):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 6))
    X[:, 1] *= 50.0
    X[:, 3] = np.exp(2 * X[:, 3])
    est = CompactnessRanker(n_neighbors=n_neighbors).fit(X)
    expected = dense_compactness(X, n_neighbors)
    np.testing.assert_allclose(est.statistic_, expected, rtol=1e-10)
    np.testing.assert_allclose(est.scores_, 1.0 / (1.0 + expected), rtol=1e-10)
    assert est.n_neighbors_ == n_neighbors


def test_without_scaling_the_units_matter():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 3))
    raw = CompactnessRanker(scale=None).fit(X * [1.0, 10.0, 0.1])
    np.testing.assert_allclose(
        raw.statistic_, dense_compactness(X * [1.0, 10.0, 0.1], scale=False), rtol=1e-10
    )
    # |diff| / Var scales as 1/c: the raw statistic of a feature multiplied by 10 drops
    assert not np.allclose(raw.statistic_, CompactnessRanker().fit(X).statistic_)


@settings(max_examples=20)
@given(
    seed=st.integers(0, 2**16),
    scale_exp=st.lists(st.integers(-8, 8), min_size=4, max_size=4),
    shift=st.lists(st.integers(-1000, 1000), min_size=4, max_size=4),
)
def test_positive_affine_map_of_a_feature_leaves_scores_unchanged(seed, scale_exp, shift):
    # integer data, power-of-two factors and integer shifts: min-max scaling gives
    # bit-identical data, so neighbours and scores must be identical
    X = np.random.default_rng(seed).integers(0, 20, size=(25, 4)).astype(float)
    X[0], X[1] = 0.0, 20.0
    a = CompactnessRanker().fit(X).scores_
    b = CompactnessRanker().fit(X * 2.0 ** np.array(scale_exp) + np.array(shift)).scores_
    np.testing.assert_array_equal(a, b)


@settings(max_examples=15)
@given(seed=st.integers(0, 2**16), perm_seed=st.integers(0, 2**16))
def test_permuting_features_permutes_scores(seed, perm_seed):
    X = np.random.default_rng(seed).normal(size=(25, 5))
    perm = np.random.default_rng(perm_seed).permutation(5)
    a = CompactnessRanker().fit(X).scores_
    b = CompactnessRanker().fit(X[:, perm]).scores_
    np.testing.assert_allclose(b, a[perm], rtol=1e-12)


def test_constant_feature_gets_the_floor():
    X = np.random.default_rng(2).normal(size=(20, 3))
    X[:, 0] = -1.0
    with pytest.warns(ConstantFeatureWarning):
        est = CompactnessRanker().fit(X)
    assert est.scores_[0] == 0.0
    assert est.statistic_[0] == np.inf
    assert np.all(est.scores_[1:] > 0.0)
    assert est.ranking_[-1] == 0


def test_n_neighbors_clipped_to_n_samples_minus_one():
    X = np.random.default_rng(3).normal(size=(6, 3))
    est = CompactnessRanker(n_neighbors=50).fit(X)
    assert est.n_neighbors_ == 5
    np.testing.assert_allclose(est.statistic_, dense_compactness(X, 5), rtol=1e-10)


def test_n_jobs_does_not_change_scores():
    X = np.random.default_rng(4).normal(size=(50, 4))
    np.testing.assert_array_equal(
        CompactnessRanker(n_jobs=2).fit(X).scores_, CompactnessRanker().fit(X).scores_
    )


def test_bad_parameters_raise():
    X = np.random.default_rng(0).normal(size=(10, 3))
    with pytest.raises(InvalidParameterError, match="n_neighbors"):
        CompactnessRanker(n_neighbors=0).fit(X)
    with pytest.raises(InvalidParameterError, match="scale"):
        CompactnessRanker(scale="standard").fit(X)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_planted_structure_informative_above_copies_above_noise(seed):
    scores = CompactnessRanker().fit(planted(seed)).scores_
    ranks = rankdata(-scores)
    assert scores[:4].min() > scores[8:].max()  # every informative feature beats all noise
    assert scores[4:8].max() > scores[8:].max()
    assert ranks[:4].mean() < ranks[4:8].mean() < ranks[8:].mean()
