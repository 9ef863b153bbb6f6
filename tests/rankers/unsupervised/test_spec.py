"""SPEC spectral feature selection (Zhao & Liu 2007)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankers.unsupervised.spec as spec_module
from rankers.exceptions import InvalidParameterError
from rankers.unsupervised.spec import SPECRanker


def dense_spec(X, style, gamma, knn=None):
    """The paper's three statistics from a full eigendecomposition, feature by feature.

    ``knn``: build the symmetric kNN heat-kernel graph (neighbours by argsort,
    t = mean squared edge length) instead of the full RBF kernel.
    """
    m, n = X.shape
    dist2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    if knn is None:
        S = np.exp(-gamma * dist2)
    else:
        masked = dist2 + np.diag(np.full(m, np.inf))
        nearest = np.argsort(masked, axis=1)[:, :knn]
        A = np.zeros((m, m), dtype=bool)
        A[np.repeat(np.arange(m), knn), nearest.ravel()] = True
        A = A | A.T
        t = dist2[np.triu(A)].mean()
        S = np.where(A, np.exp(-dist2 / t), 0.0)
    d = S.sum(axis=1)
    Dh = np.diag(np.sqrt(d))
    Dmh = np.diag(1.0 / np.sqrt(d))
    L_hat = np.eye(m) - Dmh @ S @ Dmh
    lam, xi = np.linalg.eigh(L_hat)  # ascending; xi[:, 0] is the trivial one
    out = np.empty(n)
    for r in range(n):
        f_hat = Dh @ X[:, r]
        f_hat = f_hat / np.linalg.norm(f_hat)
        a2 = (xi.T @ f_hat) ** 2
        if style == -1:
            out[r] = a2 @ lam
        elif style == 0:
            out[r] = (a2[1:] @ lam[1:]) / (1.0 - a2[0])
        else:
            out[r] = a2[1:style] @ (2.0 - lam[1:style])
    return out


@pytest.fixture
def data25():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(25, 5))
    X[:, 1] = 3.0 * X[:, 1] + 2.0
    X[:, 2] = X[:, 0] + 0.2 * rng.normal(size=25)
    X[:13, 3] += 4.0
    return X


@pytest.mark.parametrize("style", [-1, 0, 2, 4])
def test_matches_dense_eigendecomposition(data25, style):
    est = SPECRanker(style=style, random_state=0).fit(data25)
    expected = dense_spec(data25, style, est.gamma_)
    np.testing.assert_allclose(est.statistic_, expected, rtol=1e-9, atol=1e-12)
    if style >= 2:
        np.testing.assert_allclose(est.scores_, expected, rtol=1e-9, atol=1e-12)
        assert est.eigenvalues_.shape == (style - 1,)
    else:
        np.testing.assert_allclose(est.scores_, 2.0 - expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("style", [-1, 0, 3])
def test_knn_affinity_matches_dense_reference(data25, style):
    est = SPECRanker(style=style, affinity="knn", n_neighbors=4, random_state=0).fit(data25)
    expected = dense_spec(data25, style, None, knn=4)
    np.testing.assert_allclose(est.statistic_, expected, rtol=1e-9, atol=1e-12)
    assert est.n_neighbors_ == 4


def test_two_samples_by_hand():
    # S = [[1, a], [a, 1]] with a = exp(-γ·5) = 1/2 for γ = ln 2 / 5. For f = (f1, f2):
    # fᵀLf = a (f1 - f2)², fᵀDf = (1 + a)(f1² + f2²), so φ1 = (f1 - f2)² / (3 (f1² + f2²)):
    # x0 = (1, 2) -> 1/15, x1 = (0, 2) -> 1/3. D-centring leaves ±(f1 - f2)/2 and
    # φ2 = 2a / (1 + a) = 2/3 for both.
    X = np.array([[1.0, 0.0], [2.0, 2.0]])
    gamma = np.log(2.0) / 5.0
    phi1 = SPECRanker(style=-1, gamma=gamma).fit(X)
    np.testing.assert_allclose(phi1.statistic_, [1 / 15, 1 / 3], rtol=1e-12)
    np.testing.assert_allclose(phi1.scores_, [2 - 1 / 15, 2 - 1 / 3], rtol=1e-12)
    assert phi1.ranking_.tolist() == [0, 1]
    phi2 = SPECRanker(style=0, gamma=gamma).fit(X)
    np.testing.assert_allclose(phi2.statistic_, [2 / 3, 2 / 3], rtol=1e-12)


def test_feature_carrying_the_clusters_ranks_first():
    # two groups far apart in x0 (distance² 100, kernel weight e^-100 between them with
    # γ = 1): x0 is constant within each block of the graph, so φ2 ≈ 0, the best value
    noise = np.array([0.1, -0.3, 0.25, 0.0, -0.2, 0.4, 0.3, -0.1, 0.05, -0.4, 0.2, -0.25])
    X = np.column_stack([np.repeat([0.0, 10.0], 6), noise])
    est = SPECRanker(gamma=1.0).fit(X)
    assert est.statistic_[0] < 1e-30
    assert est.statistic_[1] > 0.1
    assert est.ranking_.tolist() == [0, 1]
    # φ3 with s = 2 weighs the Fiedler vector, which is the group indicator: x0 carries
    # all of its non-trivial energy there
    fiedler = SPECRanker(style=2, gamma=1.0, random_state=0).fit(X)
    assert fiedler.ranking_.tolist() == [0, 1]
    assert fiedler.eigenvalues_[0] < 1e-12


def test_auto_gamma_is_inverse_mean_squared_distance(data25):
    est = SPECRanker().fit(data25)
    dist2 = ((data25[:, None, :] - data25[None, :, :]) ** 2).sum(axis=2)
    assert est.gamma_ == pytest.approx(1.0 / dist2.mean(), rel=1e-12)


@pytest.mark.parametrize("style", [-1, 0, 3])
def test_common_scale_leaves_scores_unchanged(data25, style):
    a = SPECRanker(style=style, random_state=0).fit(data25).scores_
    b = SPECRanker(style=style, random_state=0).fit(data25 * 7.5).scores_
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_style_0_is_translation_invariant_style_minus_1_is_not(data25):
    shift = np.array([5.0, -3.0, 0.0, 10.0, 1.0])
    a = SPECRanker(style=0).fit(data25).scores_
    b = SPECRanker(style=0).fit(data25 + shift).scores_
    np.testing.assert_allclose(a, b, rtol=1e-9)
    c = SPECRanker(style=-1).fit(data25).scores_
    d = SPECRanker(style=-1).fit(data25 + shift).scores_
    assert not np.allclose(c[[0, 1, 3]], d[[0, 1, 3]])  # φ1 uses the raw feature


def test_row_blocks_give_the_full_kernel_result(data25, monkeypatch):
    whole = SPECRanker(style=0).fit(data25).scores_
    monkeypatch.setattr(spec_module, "_BLOCK_ELEMENTS", 3 * data25.shape[0])  # 3 rows a block
    blocked = SPECRanker(style=0).fit(data25).scores_
    np.testing.assert_allclose(blocked, whole, rtol=1e-13)


def test_underflowing_knn_weights_give_the_floor_without_warnings(data25):
    # γ so large that every kNN heat weight is 0: the graph sees no feature vary
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for style in (-1, 0):
            est = SPECRanker(style=style, affinity="knn", gamma=1e6).fit(data25)
            np.testing.assert_array_equal(est.scores_, 0.0)
            np.testing.assert_array_equal(est.statistic_, 2.0)


def test_style_larger_than_samples_is_clipped():
    X = np.random.default_rng(2).normal(size=(6, 3))
    est = SPECRanker(style=50, random_state=0).fit(X)
    np.testing.assert_allclose(est.statistic_, dense_spec(X, 6, est.gamma_), rtol=1e-9)


@pytest.mark.parametrize("style", [1, -2])
def test_invalid_style(style):
    with pytest.raises(InvalidParameterError, match="style"):
        SPECRanker(style=style).fit(np.random.default_rng(0).normal(size=(10, 3)))


@settings(max_examples=15)
@given(seed=st.integers(0, 10_000), style=st.sampled_from([-1, 0, 3]))
def test_permuting_features_permutes_scores(seed, style):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(20, 6)) * rng.uniform(0.5, 3.0, size=6)
    perm = rng.permutation(6)
    a = SPECRanker(style=style, random_state=0).fit(X).scores_
    b = SPECRanker(style=style, random_state=0).fit(X[:, perm]).scores_
    np.testing.assert_allclose(b, a[perm], rtol=1e-9, atol=1e-12)


def test_many_samples_search_the_knn_graph_among_principal_components(monkeypatch):
    import warnings

    from rankers import neighbors

    monkeypatch.setattr(neighbors, "EXACT_MAX_SAMPLES", 60)
    monkeypatch.setattr(neighbors, "AUTO_COMPONENTS", 4)
    rng = np.random.default_rng(8)
    X = rng.normal(size=(80, 10))
    X[:40, :2] += 3.0
    with pytest.warns(UserWarning, match=r"SPECRanker on 80 samples.*first 4 principal"):
        auto = SPECRanker(affinity="knn").fit(X)
    explicit = SPECRanker(affinity="knn", knn_components=4).fit(X)
    np.testing.assert_array_equal(auto.scores_, explicit.scores_)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SPECRanker(affinity="knn").fit(X[:60])  # below the threshold: exact, no warning
