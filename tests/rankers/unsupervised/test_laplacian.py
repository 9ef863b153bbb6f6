"""Laplacian score (He, Cai & Niyogi 2005)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankers.exceptions import ConstantFeatureWarning, InvalidParameterError
from rankers.ties import TIE_RTOL
from rankers.unsupervised.laplacian import LaplacianRanker


def dense_laplacian_score(X, n_neighbors=5, t="auto", binary=False):
    """He et al.'s formula written out with dense matrices and a loop over features."""
    m, n = X.shape
    dist2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    np.fill_diagonal(dist2, np.inf)
    knn = np.argsort(dist2, axis=1)[:, :n_neighbors]
    A = np.zeros((m, m), dtype=bool)
    for i in range(m):
        A[i, knn[i]] = True
    A = A | A.T  # i ~ j when i is among j's neighbours or j among i's
    if binary:
        S = A.astype(float)
    else:
        if t == "auto":
            t = dist2[np.triu(A)].mean()
        S = np.where(A, np.exp(-np.where(A, dist2, 0.0) / t), 0.0)
    D = np.diag(S.sum(axis=1))
    L = D - S
    one = np.ones(m)
    out = np.empty(n)
    for r in range(n):
        f = X[:, r]
        ft = f - (f @ D @ one) / (one @ D @ one) * one
        out[r] = (ft @ L @ ft) / (ft @ D @ ft)
    return out


@pytest.fixture
def data30():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(30, 6))
    X[:, 1] *= 5.0
    X[:, 2] = X[:, 0] + 0.1 * rng.normal(size=30)
    return X


def test_matches_dense_reference(data30):
    est = LaplacianRanker().fit(data30)
    expected = dense_laplacian_score(data30)
    np.testing.assert_allclose(est.statistic_, expected, rtol=1e-10)
    np.testing.assert_allclose(est.scores_, 2.0 - expected, rtol=1e-10)
    assert est.t_ > 0
    assert est.n_neighbors_ == 5


@pytest.mark.parametrize(("n_neighbors", "t", "binary"), [(3, 0.7, False), (8, "auto", True)])
def test_matches_dense_reference_other_settings(data30, n_neighbors, t, binary):
    est = LaplacianRanker(
        n_neighbors=n_neighbors, t=t, weight_mode="binary" if binary else "heat"
    ).fit(data30)
    expected = dense_laplacian_score(data30, n_neighbors=n_neighbors, t=t, binary=binary)
    np.testing.assert_allclose(est.statistic_, expected, rtol=1e-10)


def test_feature_constant_within_neighbourhoods_scores_best():
    # two groups of 6 samples, far apart in x0; within a group only the noise varies.
    # With 3 neighbours every edge stays inside a group, so x0 is constant on every edge:
    # f~ᵀLf~ = ½ Σ S_ij (f_i - f_j)² = 0, the best possible statistic.
    noise = np.array([0.1, -0.3, 0.25, 0.0, -0.2, 0.4, 0.3, -0.1, 0.05, -0.4, 0.2, -0.25])
    X = np.column_stack([np.repeat([0.0, 10.0], 6), noise])
    est = LaplacianRanker(n_neighbors=3).fit(X)
    assert est.statistic_[0] == 0.0
    assert est.scores_[0] == 2.0
    assert 0.0 < est.statistic_[1] <= 2.0
    assert est.ranking_.tolist() == [0, 1]


def test_feature_alternating_along_a_path_scores_worst():
    # x0 places the samples on a line with growing gaps, so each sample's nearest
    # neighbour is the one before it and the 1-NN graph is the path 0-1-...-9. x1
    # alternates ±1 along it: every edge joins opposite values, the extreme case
    # f~ᵀLf~ = 2 f~ᵀDf~ of the bound, i.e. statistic 2 (with binary weights:
    # degrees 1,2,...,2,1, f~ = f, f~ᵀDf~ = 18, f~ᵀLf~ = 9 edges x (1 - (-1))² = 36).
    pos = np.concatenate([[0.0], np.cumsum(100.0 + np.arange(9))])
    alt = np.where(np.arange(10) % 2 == 0, 1.0, -1.0)
    X = np.column_stack([pos, alt])
    est = LaplacianRanker(n_neighbors=1, weight_mode="binary").fit(X)
    assert est.statistic_[1] == pytest.approx(2.0)
    assert est.scores_[1] == pytest.approx(0.0, abs=1e-12)
    assert est.ranking_.tolist() == [0, 1]
    np.testing.assert_allclose(est.statistic_, dense_laplacian_score(X, n_neighbors=1, binary=True))


@settings(max_examples=15)
@given(seed=st.integers(0, 2**16), perm_seed=st.integers(0, 2**16))
def test_permuting_features_permutes_scores(seed, perm_seed):
    X = np.random.default_rng(seed).normal(size=(25, 5))
    perm = np.random.default_rng(perm_seed).permutation(5)
    a = LaplacianRanker().fit(X).scores_
    b = LaplacianRanker().fit(X[:, perm]).scores_
    np.testing.assert_allclose(b, a[perm], rtol=1e-9, atol=1e-12)


@settings(max_examples=15)
@given(seed=st.integers(0, 2**16), c=st.floats(1e-3, 1e3))
def test_scaling_all_features_leaves_scores_unchanged(seed, c):
    X = np.random.default_rng(seed).normal(size=(25, 5))
    a = LaplacianRanker().fit(X)
    b = LaplacianRanker().fit(c * X)
    np.testing.assert_allclose(b.scores_, a.scores_, rtol=1e-8, atol=1e-12)
    assert b.t_ == pytest.approx(c**2 * a.t_, rel=1e-9)
    assert b.ranking_.tolist() == a.ranking_.tolist()


def test_fixed_t_depends_on_scale(data30):
    # a fixed kernel width is in data units: the statistic changes with the scale
    a = LaplacianRanker(t=1.0).fit(data30).statistic_
    b = LaplacianRanker(t=1.0).fit(100.0 * data30).statistic_
    assert not np.allclose(a, b)


def test_n_neighbors_clipped_to_n_samples_minus_one(data30):
    X = data30[:6]
    est = LaplacianRanker(n_neighbors=50).fit(X)
    assert est.n_neighbors_ == 5
    np.testing.assert_allclose(est.statistic_, dense_laplacian_score(X, n_neighbors=5))


def test_bad_parameters_raise():
    X = np.random.default_rng(0).normal(size=(10, 3))
    with pytest.raises(InvalidParameterError, match="n_neighbors"):
        LaplacianRanker(n_neighbors=0).fit(X)
    with pytest.raises(InvalidParameterError, match="'t'"):
        LaplacianRanker(t=-1.0).fit(X)
    with pytest.raises(InvalidParameterError, match="weight_mode"):
        LaplacianRanker(weight_mode="gauss").fit(X)


def test_duplicate_samples_keep_their_edges():
    # zero-length edges between duplicates weigh exp(0) = 1 and must not vanish
    rng = np.random.default_rng(3)
    base = rng.normal(size=(8, 3))
    X = np.vstack([base, base])
    est = LaplacianRanker(n_neighbors=2).fit(X)
    np.testing.assert_allclose(est.statistic_, dense_laplacian_score(X, n_neighbors=2))


def test_constant_feature_scores_lowest_with_warning(data30):
    X = data30.copy()
    X[:, 3] = 4.2
    with pytest.warns(ConstantFeatureWarning, match="x3"):
        est = LaplacianRanker().fit(X)
    assert est.scores_[3] == 0.0
    assert est.statistic_[3] == 2.0
    assert est.scores_[3] < np.delete(est.scores_, 3).min()
    assert est.ranking_[-1] == 3
    # the other features are scored as if the constant one were absent
    keep = [0, 1, 2, 4, 5]
    np.testing.assert_allclose(est.scores_[keep], LaplacianRanker().fit(X[:, keep]).scores_)


def test_deterministic(data30):
    a = LaplacianRanker().fit(data30).scores_
    b = LaplacianRanker().fit(data30).scores_
    np.testing.assert_array_equal(a, b)


def test_fit_does_not_modify_input(data30):
    X = data30.copy()
    frame = pd.DataFrame(data30.copy(), columns=[f"c{i}" for i in range(6)])
    frame_copy = frame.copy()
    LaplacianRanker().fit(X)
    LaplacianRanker().fit(frame)
    np.testing.assert_array_equal(X, data30)
    pd.testing.assert_frame_equal(frame, frame_copy)


def test_minmax_scale_option_makes_scores_unit_free():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 4))
    stretched = X * [1.0, 1000.0, 1.0, 0.001]  # units change the kNN graph on raw values
    a = LaplacianRanker(scale="minmax").fit(X).scores_
    b = LaplacianRanker(scale="minmax").fit(stretched).scores_
    np.testing.assert_allclose(a, b, rtol=1e-9)
    assert not np.allclose(
        LaplacianRanker().fit(X).scores_, LaplacianRanker().fit(stretched).scores_
    )


def test_scores_pinned_from_before_the_one_pass_edges():
    # computed with the two-pass code (pair distances from nearest_neighbors, then the
    # edge differences again for the numerators): issue 17 must not move them
    X = np.random.default_rng(1).normal(size=(30, 7))
    est = LaplacianRanker().fit(X)
    assert est.ranking_.tolist() == [0, 4, 5, 2, 6, 1, 3]
    expected = [
        1.5206837605346983,
        1.3560768928651579,
        1.3969381091936668,
        1.3233301301685374,
        1.484102248529294,
        1.4697388315236952,
        1.373181297187997,
    ]
    np.testing.assert_allclose(est.scores_, expected, rtol=1e-12)


def test_edge_blocks_do_not_change_the_scores(monkeypatch):
    import rankers.unsupervised.laplacian as module

    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 300))
    X[7] = X[2]  # an edge of length 0
    one = LaplacianRanker().fit(X)
    monkeypatch.setattr(module, "_BLOCK_ELEMENTS", 1000)
    blocks = LaplacianRanker().fit(X)
    np.testing.assert_allclose(blocks.scores_, one.scores_, rtol=1e-12)
    assert blocks.ranking_.tolist() == one.ranking_.tolist()
    assert blocks.t_ == one.t_


def test_nearest_neighbors_without_distances_returns_the_same_indices():
    from rankers.neighbors import nearest_neighbors

    X = np.random.default_rng(0).normal(size=(25, 4))
    dist, ind = nearest_neighbors(X, 3)
    assert np.array_equal(nearest_neighbors(X, 3, return_distance=False), ind)
    assert dist.shape == ind.shape


def _pinned_data():
    rng = np.random.default_rng(17)
    X = rng.normal(size=(24, 9))
    X[:, 3] *= 40.0
    X[:, 5] = X[:, 0] + 0.05 * rng.normal(size=24)
    X[11] = X[4]  # an edge of length 0
    return X


@pytest.mark.parametrize(
    ("params", "ranking", "expected"),
    [
        (
            {},
            [3, 6, 1, 0, 5, 7, 8, 2, 4],
            [
                1.0113490554128253,
                1.0137573677690508,
                0.9048675556654862,
                1.9679828859422417,
                0.7921956572248154,
                1.0111961168133052,
                1.0782476862423653,
                0.9422525825754553,
                0.9118169290129357,
            ],
        ),
        (
            {"weight_mode": "binary"},
            [3, 6, 7, 1, 8, 4, 5, 0, 2],
            [
                0.8703260931022598,
                0.9466624237762318,
                0.8068580726685224,
                1.928356414596244,
                0.8969287908702368,
                0.8733682346836735,
                1.011859096746043,
                0.9736625552957574,
                0.9356819939356769,
            ],
        ),
        (
            {"n_neighbors": 3, "t": 2.5},
            [3, 4, 5, 1, 0, 2, 6, 8, 7],
            [
                1.1545514732282927,
                1.1580062673279534,
                0.9884587881267479,
                1.9976277812632017,
                1.603967760910019,
                1.1785750611607682,
                0.9875207512186641,
                0.634840019982867,
                0.752902233473123,
            ],
        ),
    ],
)
def test_scores_pinned_from_before_the_blocked_edges(params, ranking, expected):
    # computed with the code of commit 1fb7fb4 (one (edges x features) difference matrix):
    # the cache-blocked edge work of issue 17 must not move them beyond rounding
    est = LaplacianRanker(**params).fit(_pinned_data())
    assert est.ranking_.tolist() == ranking
    np.testing.assert_allclose(est.scores_, expected, rtol=1e-14)


def test_wide_scores_pinned_from_before_the_blocked_edges():
    # wide enough for several edge and feature blocks (values from commit 1fb7fb4)
    rng = np.random.default_rng(23)
    X = rng.normal(size=(40, 1500))
    X[:20, :30] += 2.0
    X[33] = X[8]
    est = LaplacianRanker().fit(X)
    assert est.ranking_[:12].tolist() == [29, 26, 23, 20, 7, 1, 16, 15, 21, 14, 24, 25]
    assert est.t_ == pytest.approx(2879.5865841609134, rel=1e-14)
    expected = [
        1.220232731126989,
        1.4731191638804133,
        1.4199163144516862,
        1.2424988212349168,
        1.3763771672754528,
        1.3750656898058558,
    ]
    np.testing.assert_allclose(est.scores_[:6], expected, rtol=1e-14)
    assert est.scores_.sum() == pytest.approx(1522.8552232481234, rel=1e-14)


def _tied_grid(n_features):
    """Values on a grid (many sample distances tie exactly), duplicated samples and features."""
    rng = np.random.default_rng(5)
    X = rng.integers(0, 3, size=(36, n_features)) * 0.1
    X[:18, 0] += 0.3
    X[30:] = X[:6]  # duplicated samples: edges of length 0
    return np.column_stack([X, X[:, 0], X[:, 2]])  # duplicated features tie exactly


@pytest.mark.parametrize("n_features", [5, 700])
@pytest.mark.parametrize("params", [{}, {"weight_mode": "binary"}, {"n_neighbors": 8}])
def test_ranking_does_not_move_when_inputs_move_by_ulps(nudge, n_features, params):
    X = _tied_grid(n_features)
    expected = LaplacianRanker(**params).fit(X)
    n = X.shape[1]
    # copies tie with their originals (their scores may differ in the last bits: the
    # tie rule orders them, it does not change them) and come after them
    assert expected.scores_[n - 2] == pytest.approx(expected.scores_[0], rel=TIE_RTOL)
    assert expected.scores_[n - 1] == pytest.approx(expected.scores_[2], rel=TIE_RTOL)
    pos = np.argsort(expected.ranking_)
    assert pos[0] < pos[n - 2] and pos[2] < pos[n - 1]
    for seed in range(4):
        moved = LaplacianRanker(**params).fit(nudge(X, np.random.default_rng(seed)))
        np.testing.assert_array_equal(moved.ranking_, expected.ranking_)
        np.testing.assert_allclose(moved.scores_, expected.scores_, rtol=1e-9)


def test_nearest_neighbors_do_not_move_when_inputs_move_by_ulps(nudge):
    from rankers.neighbors import nearest_neighbors

    X = _tied_grid(40)
    dist, ind = nearest_neighbors(X, 6)
    for seed in range(4):
        moved_dist, moved_ind = nearest_neighbors(nudge(X, np.random.default_rng(seed)), 6)
        np.testing.assert_array_equal(moved_ind, ind)
        np.testing.assert_allclose(moved_dist, dist, rtol=1e-12, atol=1e-15)


def test_many_samples_take_the_approximate_search_with_a_warning(monkeypatch):
    # the threshold lowered to 60 samples: a fit on 80 takes the path of 10,000+ cells
    import scipy.sparse as sp

    from rankers.unsupervised import laplacian

    monkeypatch.setattr(laplacian, "_EXACT_MAX_SAMPLES", 60)
    monkeypatch.setattr(laplacian, "_AUTO_COMPONENTS", 4)
    rng = np.random.default_rng(7)
    X = rng.poisson(0.5, size=(80, 12)).astype(float)
    X[:40, :3] += 3.0
    for data in (X, sp.csr_matrix(X)):
        with pytest.warns(UserWarning, match=r"80 samples x 12 features.*first 4 principal"):
            auto = LaplacianRanker().fit(data)
        assert auto.knn_components_ == 4
        explicit = LaplacianRanker(knn_components=4).fit(data)
        np.testing.assert_array_equal(auto.scores_, explicit.scores_)
    # below the threshold, and with an explicit choice: the exact search, no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        small = LaplacianRanker().fit(X[:60])
        LaplacianRanker(knn_components=4).fit(X)
    assert small.knn_components_ is None
    monkeypatch.setattr(laplacian, "_EXACT_MAX_SAMPLES", 10_000)
    np.testing.assert_array_equal(LaplacianRanker().fit(X[:60]).scores_, small.scores_)
