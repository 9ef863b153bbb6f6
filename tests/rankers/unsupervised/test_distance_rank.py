"""Distance Rank Score (Firdová, Labart & Martel 2024)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import pdist
from scipy.stats import rankdata, spearmanr
from sklearn.datasets import load_digits

from aggregation.evaluation import cluster_scores
from rankers.exceptions import ConstantFeatureWarning, InvalidParameterError
from rankers.ties import TIE_RTOL
from rankers.unsupervised import distance_rank as dr_module
from rankers.unsupervised.distance_rank import DistanceRankRanker
from rankers.unsupervised.laplacian import LaplacianRanker


def snap_distances(d):
    """Distances within 1e-9 of the largest (chained) made equal: the distance tie rule
    of rankers.ties (their rounding error follows the largest distance)."""
    d = np.array(d, dtype=float)
    order = np.argsort(d, kind="stable")
    ds = d[order]
    group = np.concatenate([[0], np.cumsum(np.diff(ds) > TIE_RTOL * ds[-1])])
    means = np.bincount(group, weights=ds) / np.bincount(group)
    d[order] = means[group]
    return d


def naive_distance_rank(X, scale=True):
    """The paper's definition written out: pdist per feature and scipy's spearmanr.

    Distances within 1e-9 of each other (relative to the largest) are tied first, the
    rule of rankers.ties: distances equal in exact arithmetic (integer pixels, scaled)
    may differ in their last bits.
    """
    X = np.asarray(X, dtype=float)
    if scale:
        X = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    total = snap_distances(pdist(X, "sqeuclidean"))
    return np.array(
        [
            spearmanr(total, snap_distances(pdist(X[:, [r]], "euclidean"))).statistic
            for r in range(X.shape[1])
        ]
    )


def eq3(X):
    """Eq. 3 of the paper, 1 - 6 Σ d² / (N (N² - 1)), valid when no distances tie."""
    X = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    total = rankdata(pdist(X, "sqeuclidean"))
    N = total.size
    out = []
    for r in range(X.shape[1]):
        d = total - rankdata(pdist(X[:, [r]], "sqeuclidean"))
        out.append(1.0 - 6.0 * (d @ d) / (N * (N * N - 1.0)))
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
    # min-max scaled: x0 = 0, 1/3, 1 and x1 = 0, 1, 1/2. Pairs (0,1), (0,2), (1,2):
    # x0² distances 1/9, 1, 4/9 -> ranks 1, 3, 2; x1² distances 1, 1/4, 1/4 -> 3, 1.5, 1.5;
    # totals 10/9, 5/4, 25/36 -> ranks 2, 3, 1. Centred: total (0, 1, -1), x0 (-1, 1, 0),
    # x1 (1, -.5, -.5): rho(x0) = 1 / sqrt(2 * 2) = 0.5, rho(x1) = (0 - .5 + .5) / ... = 0.
    X = np.array([[0.0, 0.0], [1.0, 2.0], [3.0, 1.0]])
    est = DistanceRankRanker().fit(X)
    np.testing.assert_allclose(est.scores_, [0.5, 0.0], atol=1e-15)
    assert est.ranking_.tolist() == [0, 1]
    assert est.n_pairs_ == 3


def test_matches_equation_3_without_ties():
    X = np.random.default_rng(0).normal(size=(40, 6))
    np.testing.assert_allclose(DistanceRankRanker().fit(X).scores_, eq3(X), atol=1e-12)


@pytest.mark.parametrize("block_size", [None, 1, 3, 100])
def test_matches_scipy_reference(block_size):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 7))
    X[:, 2] = np.exp(3 * X[:, 2])  # heavy tail
    est = DistanceRankRanker(block_size=block_size).fit(X)
    np.testing.assert_allclose(est.scores_, naive_distance_rank(X), atol=1e-12)


def test_matches_scipy_reference_with_many_ties():
    # integer pixels: most pair distances tie, on every feature and in total
    X, _ = load_digits(return_X_y=True)
    X = X[:80]
    X = X[:, X.max(axis=0) > X.min(axis=0)]
    est = DistanceRankRanker(block_size=5).fit(X)
    np.testing.assert_allclose(est.scores_, naive_distance_rank(X), atol=1e-12)


def test_without_scaling_matches_reference_on_raw_data():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 4)) * [1.0, 10.0, 100.0, 0.1]
    est = DistanceRankRanker(scale=None).fit(X)
    np.testing.assert_allclose(est.scores_, naive_distance_rank(X, scale=False), atol=1e-12)
    # raw units change the total distance, hence the scores
    assert not np.allclose(est.scores_, DistanceRankRanker().fit(X).scores_)


def test_near_ties_are_ordered_exactly():
    # values that agree in their top 32 bits (relative ~1e-7 apart) defeat the radix
    # passes; the repair step must still give exact ranks
    rng = np.random.default_rng(3)
    base = rng.choice([0.0, 0.25, 0.5, 1.0], size=(50, 5))
    X = base + rng.choice([0.0, 1e-7, 3e-7], size=(50, 5)) * rng.random((50, 5))
    X[0] += 1.0  # keep every column non-constant
    np.testing.assert_allclose(
        DistanceRankRanker().fit(X).scores_, naive_distance_rank(X), atol=1e-12
    )


@settings(max_examples=40)
@given(
    rows=st.integers(1, 3),
    n=st.integers(2, 400),
    seed=st.integers(0, 2**16),
    eps=st.sampled_from([0.0, 1e-15, 1e-11, 1e-8, 1e-5]),
)
def test_sorted_rows_is_an_exact_stable_sort(rows, n, seed, eps):
    rng = np.random.default_rng(seed)
    d = np.abs(rng.choice([0.0, 0.5, 1e-300, 3.0], size=(rows, n)) + eps * rng.random((rows, n)))
    order, out = dr_module._sorted_rows(d.copy())
    np.testing.assert_array_equal(order, np.argsort(d, axis=1, kind="stable"))
    np.testing.assert_array_equal(out, np.sort(d, axis=1))


@settings(max_examples=20)
@given(
    seed=st.integers(0, 2**16),
    scale_exp=st.lists(st.integers(-8, 8), min_size=4, max_size=4),
    shift=st.lists(st.integers(-1000, 1000), min_size=4, max_size=4),
)
def test_positive_affine_map_of_a_feature_leaves_scores_unchanged(seed, scale_exp, shift):
    # integer data, power-of-two factors and integer shifts: min-max scaling then gives
    # bit-identical data, so the scores must be identical
    X = np.random.default_rng(seed).integers(0, 20, size=(25, 4)).astype(float)
    X[0] = 0.0
    X[1] = 20.0
    a = DistanceRankRanker().fit(X).scores_
    b = DistanceRankRanker().fit(X * 2.0 ** np.array(scale_exp) + np.array(shift)).scores_
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("steps", [0, 1, 1000])
def test_run_repair_by_local_steps_or_binary_search(monkeypatch, steps):
    # 0 steps: every run is delimited by the binary search; 1000: always by stepping out
    monkeypatch.setattr(dr_module, "_LOCAL_STEPS", steps)
    rng = np.random.default_rng(11)
    for eps in (1e-5, 1e-9, 1e-12):
        d = np.abs(rng.choice([0.0, 0.25, 0.5, 3.0], size=(3, 700)) + eps * rng.random((3, 700)))
        order, out = dr_module._sorted_rows(d.copy())
        np.testing.assert_array_equal(order, np.argsort(d, axis=1, kind="stable"))
        np.testing.assert_array_equal(out, np.sort(d, axis=1))


@settings(max_examples=15)
@given(seed=st.integers(0, 2**16), perm_seed=st.integers(0, 2**16))
def test_permuting_features_permutes_scores(seed, perm_seed):
    X = np.random.default_rng(seed).normal(size=(25, 5))
    perm = np.random.default_rng(perm_seed).permutation(5)
    a = DistanceRankRanker().fit(X).scores_
    b = DistanceRankRanker().fit(X[:, perm]).scores_
    np.testing.assert_allclose(b, a[perm], atol=1e-12)


def test_block_size_and_n_jobs_do_not_change_scores():
    X = np.random.default_rng(4).normal(size=(40, 9))
    ref = DistanceRankRanker().fit(X).scores_
    for params in ({"block_size": 1}, {"block_size": 4, "n_jobs": 2}, {"n_jobs": 2}):
        np.testing.assert_array_equal(DistanceRankRanker(**params).fit(X).scores_, ref)
    assert DistanceRankRanker(block_size=4).fit(X).block_size_ == 4


def test_max_samples_ranks_the_drawn_subset():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(80, 6))
    est = DistanceRankRanker(max_samples=0.5, random_state=0).fit(X)
    rows = est.sample_indices_
    assert est.n_samples_used_ == 40 == rows.size
    assert np.all(np.diff(rows) > 0)
    # min-max scaling uses all samples, the pairs only the drawn ones
    scaled = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    expected = naive_distance_rank(scaled[rows], scale=False)
    np.testing.assert_allclose(est.scores_, expected, atol=1e-12)
    # the same seed draws the same rows; another seed others
    again = DistanceRankRanker(max_samples=40, random_state=0).fit(X)
    np.testing.assert_array_equal(again.sample_indices_, rows)
    np.testing.assert_array_equal(again.scores_, est.scores_)
    other = DistanceRankRanker(max_samples=40, random_state=1).fit(X)
    assert not np.array_equal(other.sample_indices_, rows)


def test_max_samples_at_least_n_samples_uses_all():
    X = np.random.default_rng(6).normal(size=(20, 3))
    est = DistanceRankRanker(max_samples=500).fit(X)
    assert est.n_samples_used_ == 20
    np.testing.assert_array_equal(est.scores_, DistanceRankRanker().fit(X).scores_)


def test_constant_feature_scores_minus_one():
    X = np.random.default_rng(7).normal(size=(20, 3))
    X[:, 1] = 4.0
    with pytest.warns(ConstantFeatureWarning):
        est = DistanceRankRanker().fit(X)
    assert est.scores_[1] == -1.0
    assert est.ranking_[-1] == 1


def test_two_samples_give_no_order_to_correlate():
    # one pair: its rank is 1 on every feature and in total, so rho is undefined -> 0
    est = DistanceRankRanker().fit(np.array([[0.0, 1.0, 3.0], [1.0, 0.0, 2.0]]))
    np.testing.assert_array_equal(est.scores_, [0.0, 0.0, 0.0])


def test_bad_parameters_raise():
    X = np.random.default_rng(0).normal(size=(10, 3))
    with pytest.raises(InvalidParameterError, match="max_samples"):
        DistanceRankRanker(max_samples=1).fit(X)
    with pytest.raises(InvalidParameterError, match="max_samples"):
        DistanceRankRanker(max_samples=1.5).fit(X)
    with pytest.raises(InvalidParameterError, match="block_size"):
        DistanceRankRanker(block_size=0).fit(X)
    with pytest.raises(InvalidParameterError, match="scale"):
        DistanceRankRanker(scale="standard").fit(X)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_planted_structure_informative_above_copies_above_noise(seed):
    scores = DistanceRankRanker().fit(planted(seed)).scores_
    ranks = rankdata(-scores)
    assert scores[:4].min() > scores[8:].max()  # every informative feature beats all noise
    assert scores[4:8].max() > scores[8:].max()
    assert ranks[:4].mean() < ranks[4:8].mean() < ranks[8:].mean()


def _imbalanced_digits(seed):
    """Digits 0-4 as in the paper's MNIST5m: all of class 0, 10 samples of each other."""
    X, y = load_digits(return_X_y=True)
    rng = np.random.default_rng(seed)
    keep = [np.flatnonzero(y == 0)]
    keep += [rng.choice(np.flatnonzero(y == c), 10, replace=False) for c in (1, 2, 3, 4)]
    idx = np.concatenate(keep)
    return X[idx], y[idx]


def _f1w(X, y, features, **kwargs):
    table = cluster_scores(X, y, features, random_state=0, **kwargs)
    return table.loc[(table["evaluation"] == "all") & (table["metric"] == "f1_weighted"), "mean"]


def _informative_order(ranker, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantFeatureWarning)  # blank border pixels
        est = ranker.fit(X)
    return [i for i in est.ranking_ if not est.constant_features_[i]]


def test_imbalanced_digits_clustering_on_top_features():
    # the paper's MNIST5m protocol on scikit-learn's digits, next to the Laplacian score.
    # Measured F1W of k-means on the 10 best pixels (5 restarts, this draw): distance_rank
    # 0.80, laplacian 0.67; over 6 draws 0.75 +- 0.06 and 0.69 +- 0.03 (all 61 pixels: 0.56)
    X, y = _imbalanced_digits(0)
    orders = {
        "distance_rank": _informative_order(DistanceRankRanker(), X),
        "laplacian": _informative_order(LaplacianRanker(), X),
    }
    for order in orders.values():
        table = cluster_scores(X, y, order, k_features=10, two_step=True, random_state=0)
        assert set(table["evaluation"]) == {"all", "major_vs_minor", "within_minor"}
        assert len(table) == 9
        assert table["mean"].between(0.0, 1.0).all()
    # distance_rank's ranking carries the cluster structure: its best 10 pixels cluster
    # the digits better than its worst 10 (0.80 vs 0.41 here; a gap of at least 0.2 in
    # each of 6 draws). The Laplacian score's two ends do not always compare this way.
    order = orders["distance_rank"]
    assert _f1w(X, y, order, k_features=10).iloc[0] > _f1w(X, y, order[-10:]).iloc[0]


# scores of the code before the width work (commit 9b10018), on data below the default
# max_samples (so every sample is used)
_PINNED = {
    (0, 30, 9): [
        0.35360935287997386,
        0.27636042641748054,
        0.3683900193635674,
        0.045555775733224724,
        0.3115668661472667,
        0.3654970396838566,
        0.15305003838188472,
        0.30081658848484916,
        0.1769763634638806,
    ],
    (1, 40, 12): [
        0.27039365029694623,
        0.19021621720824333,
        0.3259225363358257,
        0.3083163382073227,
        0.18493095919366295,
        0.2751099835776505,
        0.334165838567855,
        0.16425463321279452,
        0.36062749930653726,
        0.055594015433059286,
        0.33409118482074074,
        0.21316999639640952,
    ],
}


@pytest.mark.parametrize("key", list(_PINNED))
def test_scores_pinned_to_the_previous_implementation(key):
    seed, m, n = key
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, size=m)
    X = rng.normal(size=(m, n))
    X[:, : n // 3] += labels[:, None]
    X = np.round(X, 3)
    np.testing.assert_allclose(DistanceRankRanker().fit(X).scores_, _PINNED[key], rtol=1e-9)


def test_default_ranks_a_subset_of_500_samples():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(520, 2))
    est = DistanceRankRanker(random_state=0).fit(X)
    assert est.n_samples_used_ == 500 and est.n_pairs_ == 500 * 499 // 2
    sub = DistanceRankRanker(max_samples=None).fit(X[est.sample_indices_])
    # min-max scaling uses every sample's range, which an affine-invariant score ignores
    np.testing.assert_allclose(est.scores_, sub.scores_, rtol=1e-9)
    assert DistanceRankRanker(max_samples=None).fit(X).n_samples_used_ == 520
