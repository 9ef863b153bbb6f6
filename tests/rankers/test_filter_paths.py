"""The filters' fast paths give the numbers of the plain ones.

The univariate filters read X once in blocks of columns (no copy of X), keep sparse input
sparse, rescale a column only when its squares could leave float64's range, check their
parameters once per setting, and compute q-values and p-values without scipy's per-call
overhead. Each path is held here to the straightforward computation.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

import rankers
from rankers.exceptions import InvalidInputError, InvalidParameterError
from rankers.supervised.univariate import benjamini_hochberg

CLASS_TESTS = ["anova_f", "t_test", "fisher_score"]


def _fit(name, X, y=None, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rankers.get(name, **params).fit(X, y)


def _counts(seed=0, m=120, n=300):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], m // 3)
    X = rng.poisson(0.4, size=(m, n)).astype(float)  # mostly zeros, as count data are
    X[:, :5] += rng.poisson(2.0, size=(m, 5)) * (y[:, None] == 1)
    return X, y


@pytest.mark.parametrize("name", [*CLASS_TESTS, "variance"])
def test_sparse_input_gives_the_dense_numbers(name):
    X, y = _counts()
    target = None if name == "variance" else y
    dense = _fit(name, X, target)
    sparse = _fit(name, sp.csr_matrix(X), target)
    np.testing.assert_allclose(sparse.scores_, dense.scores_, rtol=1e-10, atol=1e-300)
    np.testing.assert_array_equal(sparse.ranking_, dense.ranking_)
    if hasattr(dense, "pvalues_"):
        np.testing.assert_allclose(sparse.pvalues_, dense.pvalues_, rtol=1e-8, atol=1e-300)


@pytest.mark.parametrize("name", [*CLASS_TESTS, "variance"])
def test_the_blocks_of_columns_give_the_whole_array_numbers(name):
    # more columns than one block holds (4 MB / 8 bytes / 40 rows = 13,107): several blocks
    from rankers.supervised.univariate import _chunk_width

    n = 2 * _chunk_width(40) + 9
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1], 20)
    X = rng.normal(size=(40, n)) + 0.5 * y[:, None] * (np.arange(n) % 7 == 0)
    est = _fit(name, X, None if name == "variance" else y)
    if name == "variance":
        ref = X.var(axis=0)
    elif name == "t_test":
        ref = -np.log10(stats.ttest_ind(X[y == 1], X[y == 0], equal_var=False).pvalue)
    else:
        mu = X.mean(axis=0)
        between = sum(20 * (X[y == c].mean(axis=0) - mu) ** 2 for c in (0, 1))
        within = sum(((X[y == c] - X[y == c].mean(axis=0)) ** 2).sum(axis=0) for c in (0, 1))
        ref = between / within * (38 if name == "anova_f" else 1)
    np.testing.assert_allclose(est.scores_, ref, rtol=1e-8)


@pytest.mark.parametrize("scale", [1e-300, 1e-120, 1.0, 1e120, 1e300])
@pytest.mark.parametrize("name", CLASS_TESTS)
def test_class_tests_at_any_scale(name, scale):
    rng = np.random.default_rng(2)
    y = np.repeat([0, 1], 30)
    X = rng.normal(size=(60, 12))
    X[:, 0] += 2 * y
    X[:, 5] *= 1e-5  # columns of other sizes beside the extreme ones
    base = _fit(name, X, y)
    scaled = _fit(name, X * scale, y)
    np.testing.assert_allclose(scaled.scores_, base.scores_, rtol=1e-12)
    np.testing.assert_array_equal(scaled.ranking_, base.ranking_)


@pytest.mark.parametrize("scale", [1e-150, 1e-60, 1.0, 1e60, 1e150])
def test_variance_at_any_scale_is_in_the_units_of_x(scale):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 6)) * np.array([1, 2, 3, 1e-3, 1e3, 7])
    est = _fit("variance", X * scale)
    np.testing.assert_allclose(est.scores_, X.var(axis=0) * scale**2, rtol=1e-12)


def test_variance_beyond_float64_is_refused_by_name():
    X = np.random.default_rng(4).normal(size=(20, 3))
    X[:, 1] *= 1e200  # its variance, ~1e400, is no float64
    with pytest.raises(InvalidInputError, match=r"x1.*not representable"):
        _fit("variance", X)


def test_q_values_are_scipys(rng):
    for n in (1, 2, 17, 500):
        p = rng.uniform(size=n) ** 3
        p[rng.integers(0, n, size=n // 3)] = p[0]  # ties
        np.testing.assert_allclose(
            benjamini_hochberg(p), stats.false_discovery_control(p), rtol=1e-15, atol=0
        )


def test_f_p_values_are_scipys():
    X, y = _counts(5)
    est = _fit("anova_f", X, y)
    from sklearn.feature_selection import f_classif

    F, _ = f_classif(X, y)
    informative = ~est.constant_features_
    ref = stats.f.sf(est.scores_[informative], 2, X.shape[0] - 3)
    np.testing.assert_array_equal(est.pvalues_[informative], ref)
    assert F.shape == est.scores_.shape


def test_parameters_are_checked_again_when_they_change():
    X, y = _counts(6)
    est = rankers.get("chi2")
    est.fit(X, y)
    est.set_params(n_bins=1)  # invalid: the checked setting changed
    with pytest.raises(InvalidParameterError, match="n_bins"):
        est.fit(X, y)
    est.set_params(n_bins=5)
    est.fit(X, y)
    est.set_params(k=2)
    est.fit(X, y)
    est.k = 2.0  # 2 == 2.0, but a float is not a number of features
    with pytest.raises(InvalidParameterError, match="k"):
        est.fit(X, y)


def test_the_callers_array_is_neither_copied_into_nor_written():
    X, y = _counts(7)
    before = X.copy()
    for name in [*CLASS_TESTS, "variance", "chi2"]:
        _fit(name, X, None if name == "variance" else y)
    np.testing.assert_array_equal(X, before)


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("laplacian", {}),
        ("laplacian", {"weight_mode": "binary", "n_neighbors": 8}),
        ("spec", {"affinity": "knn"}),
        ("spec", {"affinity": "knn", "style": -1}),
    ],
)
def test_kNN_graph_rankers_keep_sparse_input_sparse(name, params):
    X, _ = _counts(8, m=150, n=60)
    dense = _fit(name, X, **params)
    sparse = _fit(name, sp.csr_matrix(X), **params)
    np.testing.assert_allclose(sparse.scores_, dense.scores_, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(sparse.ranking_, dense.ranking_)


@pytest.mark.parametrize("name", ["laplacian", "spec"])
def test_an_approximate_graph_of_principal_components_follows_the_exact_one(name):
    rng = np.random.default_rng(9)
    groups = np.repeat(np.arange(4), 60)
    X = rng.normal(size=(240, 40))
    X[:, :6] += 3.0 * (groups[:, None] == np.arange(6)[None, :] % 4)
    params = {"affinity": "knn"} if name == "spec" else {}
    exact = _fit(name, X, **params)
    approx = _fit(name, X, **params, knn_components=10)
    assert set(approx.ranking_[:6]) == set(exact.ranking_[:6]) == set(range(6))
    # the informative features well apart from the noise, as on the exact graph (the
    # order among noise features is noise on either graph)
    assert approx.scores_[:6].min() > approx.scores_[6:].max() + 0.1
    # the same answer from sparse input, and on a second fit
    again = _fit(name, sp.csr_matrix(X), **params, knn_components=10)
    np.testing.assert_allclose(again.scores_, approx.scores_, rtol=1e-8, atol=1e-12)


GRAPH_PARAMS = {
    "compactness": {},
    "mcfs": {"n_clusters": 4, "random_state": 0},
    "ndfs": {"n_clusters": 4, "random_state": 0},
}


def _planted_groups(seed=9, m=240, n=40):
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(4), m // 4)
    X = rng.normal(size=(m, n))
    X[:, :6] += 3.0 * (groups[:, None] == np.arange(6)[None, :] % 4)
    return X


@pytest.mark.parametrize("name", ["compactness", "mcfs", "ndfs"])
def test_the_other_kNN_graph_rankers_take_the_approximate_search_too(name):
    # issue 47 item 4: every ranker that builds a sample graph has the many-cells path
    X = _planted_groups()
    params = GRAPH_PARAMS[name]
    exact = _fit(name, X, **params)
    approx = _fit(name, X, **params, knn_components=10)
    assert exact.knn_components_ is None and approx.knn_components_ == 10
    found = {fit: len(set(fit.ranking_[:6].tolist()) & set(range(6))) for fit in (exact, approx)}
    # on this data the approximate graph finds the planted features as well as the exact
    # one does, give or take one (each finds at least 4 of the 6)
    assert found[approx] >= 4 and found[exact] >= 4
    assert abs(found[approx] - found[exact]) <= 1
    again = _fit(name, X, **params, knn_components=10)
    np.testing.assert_array_equal(again.scores_, approx.scores_)


@pytest.mark.parametrize("name", ["compactness", "mcfs", "ndfs"])
def test_many_samples_choose_the_approximate_search_with_a_warning(name, monkeypatch):
    from rankers import neighbors

    monkeypatch.setattr(neighbors, "EXACT_MAX_SAMPLES", 200)
    monkeypatch.setattr(neighbors, "AUTO_COMPONENTS", 8)
    X = _planted_groups()
    params = GRAPH_PARAMS[name]
    ranker = rankers.get(name, **params)
    with pytest.warns(UserWarning, match=r"on 240 samples x 40 features.*first 8 principal") as rec:
        auto = ranker.fit(X)
    assert rec[0].filename == __file__  # the warning points at the user's fit
    assert auto.knn_components_ == 8
    np.testing.assert_array_equal(auto.scores_, _fit(name, X, **params, knn_components=8).scores_)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        small = rankers.get(name, **params).fit(X[:200])  # at the threshold: exact, silent
    assert small.knn_components_ is None


def test_a_cosine_search_space_keeps_the_cosine_neighbours():
    # every component of the unit rows: a rotation of them, so the Euclidean neighbours
    # there are the cosine neighbours of the data (the raw rows' centred components
    # would not keep them)
    from rankers.neighbors import approximate_neighbors, nearest_neighbors, search_space

    rng = np.random.default_rng(3)
    X = rng.lognormal(size=(90, 12)) * rng.uniform(0.1, 10.0, size=(90, 1))
    exact = nearest_neighbors(X, 5, metric="cosine", return_distance=False)
    space = search_space(X, 12, metric="cosine")
    np.testing.assert_array_equal(approximate_neighbors(space, 5), exact)
    centred = search_space(X, 12)  # the raw rows' components: Euclidean, not cosine
    assert (approximate_neighbors(centred, 5) != exact).any()


@pytest.mark.parametrize("name", ["info_gain", "chi2"])
@pytest.mark.parametrize("scale", [1e-307, 1e307])
def test_binning_rankers_at_the_edges_of_float64(name, scale):
    # no global copy of X: a range of +-1e307 values would overflow; each block is brought
    # into range by a power of two, which moves no rank
    rng = np.random.default_rng(10)
    X = rng.normal(size=(60, 8))
    y = (X[:, 0] > 0).astype(int)
    np.testing.assert_allclose(_fit(name, X * scale, y).scores_, _fit(name, X, y).scores_)
