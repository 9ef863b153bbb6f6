"""FRANe (Primožič et al. 2022, Algorithm 1)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from rankers.exceptions import ConstantFeatureWarning, InvalidParameterError
from rankers.ties import TIE_RTOL
from rankers.unsupervised.frane import FRANeRanker, pagerank, ranking_quality


def dissimilarity_matrix(X, similarity="abs_correlation", scaling="minmax"):
    """Pairwise dissimilarities of the columns, written out without scipy."""
    if similarity in ("abs_correlation", "correlation"):
        r = np.corrcoef(X, rowvar=False)
        return 1.0 - (np.abs(r) if similarity == "abs_correlation" else r)
    F = X.T.astype(float)
    diff = np.abs(F[:, None, :] - F[None, :, :])
    if scaling == "minmax":
        F = (F - F.min(axis=1, keepdims=True)) / np.ptp(F, axis=1, keepdims=True)
    else:
        norms = {
            "euclidean": np.sqrt((F**2).sum(axis=1)),
            "cityblock": np.abs(F).sum(axis=1),
            "chebyshev": np.abs(F).max(axis=1),
            "canberra": (F != 0).sum(axis=1).astype(float),
        }[similarity]
        F = F / norms[:, None]
    diff = np.abs(F[:, None, :] - F[None, :, :])
    if similarity == "euclidean":
        return np.sqrt((diff**2).sum(axis=2))
    if similarity == "cityblock":
        return diff.sum(axis=2)
    if similarity == "chebyshev":
        return diff.max(axis=2)
    total = np.abs(F[:, None, :]) + np.abs(F[None, :, :])
    return np.where(total > 0, diff / np.where(total > 0, total, 1.0), 0.0).sum(axis=2)


def dense_pagerank(W, damping=0.85):
    """PageRank's linear system solved directly: x ∝ (I - damping W D^-1)^-1 1."""
    n = W.shape[0]
    deg = W.sum(axis=0)
    M = damping * W / np.where(deg > 0, deg, 1.0)  # dangling columns stay 0, as in frane
    x = np.linalg.solve(np.eye(n) - M, np.full(n, (1 - damping) / n))
    return x / x.sum()


def simple_frane(X, similarity="abs_correlation", scaling="minmax", thresholds="geometric",
                 n_thresholds=100, min_edges=1.0, damping=0.85):  # fmt: skip
    """Algorithm 1 with dense matrices and one loop over the thresholds."""
    n = X.shape[1]
    dis = dissimilarity_matrix(X, similarity, scaling)
    off = dis[np.triu_indices(n, 1)]
    d_max, d_min = off.max(), off[off > 0].min()
    T = {
        "geometric": lambda: np.geomspace(d_min, d_max, n_thresholds),
        "linear": lambda: np.linspace(d_min, d_max, n_thresholds),
        "linear_mean": lambda: np.linspace(d_min, off.mean(), n_thresholds),
        "linear_median": lambda: np.linspace(d_min, np.median(off), n_thresholds),
        "quantile": lambda: np.quantile(off, np.arange(1, n_thresholds + 1) / n_thresholds),
    }[thresholds]()
    rqh, xs = [], []
    tol = 1e-9 * d_max  # a pair within the tie tolerance of a threshold is under it
    for t in T:
        W = np.where((dis <= t + tol) & (dis < d_max - tol), d_max - dis, 0.0)
        np.fill_diagonal(W, 0.0)
        if (W > 0).sum() < min_edges * n:
            rqh.append(np.nan)
            xs.append(None)
            continue
        xs.append(dense_pagerank(W, damping))
        ordered = np.sort(xs[-1])  # RQH: median of the 3 largest over median of the 3 smallest
        rqh.append(np.median(ordered[-3:]) / np.median(ordered[:3]))
    rqh = np.array(rqh)
    # the first RQH within 1e-9 of the largest: graphs that differ in a component holding
    # none of the scores RQH reads tie in exact arithmetic
    best = int(np.flatnonzero(rqh >= np.nanmax(rqh) * (1 - 1e-9))[0])
    return (rqh[best], T[best], xs[best]), rqh, T


def assert_rqh_or_ruled_out(est, rqh):
    """``est.rqh_`` is the dense RQH where computed; elsewhere the bound ruled the graph out."""
    done = ~np.isnan(est.rqh_)
    np.testing.assert_allclose(est.rqh_[done], rqh[done], rtol=1e-9)
    out = np.isnan(est.rqh_) & ~np.isnan(rqh)
    assert np.all(rqh[out] <= est.rqh_bounds_[out])
    assert np.all(est.rqh_bounds_[out] < np.nanmax(est.rqh_) * (1 - 1e-9))
    np.testing.assert_array_equal(np.isnan(rqh), est.average_degrees_ < est.min_edges)


@pytest.fixture
def grouped():
    return grouped_data()


def grouped_data():
    """30 samples: two groups of correlated features (x0..x3 around x0, x4..x6) and noise."""
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(2, 30))
    X = np.column_stack(
        [a, a + 0.3 * rng.normal(size=30), a + 0.6 * rng.normal(size=30), -a + rng.normal(size=30)]
        + [b + s * rng.normal(size=30) for s in (0.4, 0.5, 0.9)]
        + [rng.normal(size=30)]
    )
    return X


def test_star_graph_pagerank_by_hand():
    # centre c, three leaves l, unit weights, d = 0.85, n = 4:
    #   l = 0.15/4 + 0.85 c / 3,  c = 0.15/4 + 0.85 * 3 l   =>   c = 0.133125 / 0.2775
    A = np.zeros((4, 4))
    A[0, 1:] = A[1:, 0] = 1.0
    x = pagerank(sp.csr_matrix(A))
    c = 0.133125 / 0.2775
    np.testing.assert_allclose(x, [c, *[(1 - c) / 3] * 3], rtol=1e-12)
    np.testing.assert_allclose(pagerank(A), x, rtol=1e-12)  # dense input too


def test_hub_feature_ranks_first():
    # x3 is the hub: x0, x1, x2 are its noisy copies (each nearer to x3 than to one
    # another); x4 is unrelated. The hub is the most central node of the network.
    rng = np.random.default_rng(0)
    hub = rng.normal(size=60)
    X = np.column_stack([hub + 0.6 * rng.normal(size=60) for _ in range(3)] + [hub])
    X = np.column_stack([X, rng.normal(size=60)])
    est = FRANeRanker().fit(X)
    assert est.ranking_[0] == 3
    assert est.ranking_[-1] == 4
    assert est.scores_.sum() == pytest.approx(1.0)


def test_pagerank_matches_networkx_with_isolated_nodes():
    nx = pytest.importorskip("networkx", reason="needs the 'test' extra: pip install '.[test]'")
    rng = np.random.default_rng(1)
    A = np.triu(rng.random((40, 40)) * (rng.random((40, 40)) < 0.15), 1)
    A = A + A.T
    A[:4] = A[:, :4] = 0.0  # isolated (dangling) nodes
    expected = nx.pagerank(nx.from_numpy_array(A), alpha=0.85, tol=1e-15, max_iter=10_000)
    got = pagerank(sp.csr_matrix(A), 0.85)
    np.testing.assert_allclose(got, [expected[i] for i in range(40)], rtol=1e-10)
    got = pagerank(sp.csr_matrix(A), 0.5)
    expected = nx.pagerank(nx.from_numpy_array(A), alpha=0.5, tol=1e-15, max_iter=10_000)
    np.testing.assert_allclose(got, [expected[i] for i in range(40)], rtol=1e-10)


def test_scores_are_networkx_pagerank_of_the_chosen_graph(grouped):
    nx = pytest.importorskip("networkx", reason="needs the 'test' extra: pip install '.[test]'")
    est = FRANeRanker().fit(grouped)
    G = nx.from_scipy_sparse_array(est.graph_)
    expected = nx.pagerank(G, alpha=0.85, tol=1e-15, max_iter=10_000)
    np.testing.assert_allclose(est.scores_, [expected[i] for i in range(8)], rtol=1e-9)


@pytest.mark.parametrize(
    ("similarity", "scaling", "thresholds"),
    [
        ("abs_correlation", "minmax", "geometric"),
        ("correlation", "minmax", "geometric"),
        ("abs_correlation", "minmax", "linear"),
        ("abs_correlation", "minmax", "linear_mean"),
        ("abs_correlation", "minmax", "linear_median"),
        ("abs_correlation", "minmax", "quantile"),
        ("euclidean", "minmax", "geometric"),
        ("cityblock", "minmax", "geometric"),
        ("chebyshev", "minmax", "linear"),
        ("canberra", "minmax", "geometric"),
        ("euclidean", "norm", "geometric"),
        ("cityblock", "norm", "quantile"),
        ("chebyshev", "norm", "geometric"),
        ("canberra", "norm", "geometric"),
    ],
)
def test_matches_dense_algorithm_1(grouped, similarity, scaling, thresholds):
    X = grouped + 3.0  # positive values: the "norm" scaling is then not a mere sign flip
    est = FRANeRanker(
        similarity=similarity, feature_scaling=scaling, thresholds=thresholds, n_thresholds=40
    ).fit(X)
    (_, t, x), rqh, T = simple_frane(X, similarity, scaling, thresholds, n_thresholds=40)
    np.testing.assert_allclose(est.thresholds_, T, rtol=1e-12)
    assert_rqh_or_ruled_out(est, rqh)
    assert est.threshold_ == pytest.approx(t, rel=1e-12)
    np.testing.assert_allclose(est.scores_, x, rtol=1e-9)


def test_threshold_sequence_and_degrees_by_hand():
    # geometric thresholds t_i = lo * (hi / lo)^(i / 4), i = 0..4, between the smallest
    # and the largest of the 6 pairwise dissimilarities; edges counted pair by pair
    rng = np.random.default_rng(2)
    X = rng.normal(size=(20, 4))
    est = FRANeRanker(n_thresholds=5).fit(X)
    dis = 1 - np.abs(np.corrcoef(X, rowvar=False))
    pairs = [dis[j, k] for j in range(4) for k in range(j + 1, 4)]
    lo, hi = min(pairs), max(pairs)
    ratio = (hi / lo) ** (1 / 4)
    np.testing.assert_allclose(est.thresholds_, [lo * ratio**i for i in range(5)], rtol=1e-12)
    edges = [sum(d <= t and d < hi for d in pairs) for t in est.thresholds_]
    np.testing.assert_allclose(est.average_degrees_, 2 * np.array(edges) / 4)
    assert est.average_degrees_[0] == 0.5  # only the closest pair: below min_edges = 1
    assert np.isnan(est.rqh_[0])
    # the largest pair never becomes an edge (its weight d_max - d is 0)
    assert est.average_degrees_[-1] == 2 * 5 / 4


def test_chosen_graph_is_the_thresholded_similarity(grouped):
    est = FRANeRanker().fit(grouped)
    dis = 1 - np.abs(np.corrcoef(grouped, rowvar=False))
    np.fill_diagonal(dis, np.inf)
    d_max = dis[np.isfinite(dis)].max()
    expected = np.where((dis <= est.threshold_) & (dis < d_max), d_max - dis, 0.0)
    np.testing.assert_allclose(est.graph_.toarray(), expected, atol=1e-12)
    best = np.flatnonzero(est.rqh_ >= np.nanmax(est.rqh_) * (1 - 1e-9))[0]
    assert est.threshold_ == est.thresholds_[best]
    assert np.all(np.diff(est.thresholds_) >= 0)
    assert np.all(np.diff(est.average_degrees_) >= 0)
    scored = ~np.isnan(est.rqh_) | (est.rqh_bounds_ < np.nanmax(est.rqh_))
    np.testing.assert_array_equal(scored, est.average_degrees_ >= 1.0)


@settings(max_examples=20)
@given(col=st.integers(0, 7), scale=st.floats(0.01, 100.0), shift=st.floats(-100, 100))
def test_invariant_to_positive_affine_rescaling_of_a_feature(col, scale, shift):
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(2, 30))
    X = np.column_stack([a + s * rng.normal(size=30) for s in (0.2, 0.4, 0.8, 1.0)])
    X = np.column_stack([X, *[b + s * rng.normal(size=30) for s in (0.3, 0.6, 0.9)], b])
    Y = X.copy()
    Y[:, col] = scale * Y[:, col] + shift
    for similarity in ("abs_correlation", "euclidean"):
        before = FRANeRanker(similarity=similarity).fit(X).scores_
        after = FRANeRanker(similarity=similarity).fit(Y).scores_
        np.testing.assert_allclose(after, before, rtol=1e-8)


def test_sign_of_correlation(grouped):
    # x3 = -x0 + noise: similar to x0 under |r|, dissimilar under r
    Y = grouped.copy()
    Y[:, 3] = -Y[:, 3]
    a = FRANeRanker().fit(grouped).scores_
    np.testing.assert_allclose(FRANeRanker().fit(Y).scores_, a, rtol=1e-9)
    signed = FRANeRanker(similarity="correlation").fit(grouped).scores_
    assert not np.allclose(signed, a)


@settings(max_examples=20)
@given(st.permutations(list(range(8))))
def test_permuting_features_permutes_scores(perm):
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(2, 30))
    X = np.column_stack([a + s * rng.normal(size=30) for s in (0.2, 0.4, 0.8, 1.0)])
    X = np.column_stack([X, *[b + s * rng.normal(size=30) for s in (0.3, 0.6, 0.9)], b])
    base = FRANeRanker().fit(X)
    moved = FRANeRanker().fit(X[:, perm])
    np.testing.assert_allclose(moved.scores_, base.scores_[perm], rtol=1e-9)
    assert moved.threshold_ == pytest.approx(base.threshold_, rel=1e-12)


@pytest.mark.parametrize(("seed", "copied"), [(37, 1), (3, 3)])
def test_duplicate_features_tie_exactly(seed, copied):
    # with seed 37 the solver's rounding alone would put the copy (x6) before x1
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=(2, 30))
    X = np.column_stack(
        [a + s * rng.normal(size=30) for s in (0.2, 0.4, 0.8)]
        + [b + s * rng.normal(size=30) for s in (0.3, 0.6)]
        + [rng.normal(size=30)]
    )
    est = FRANeRanker().fit(np.column_stack([X, X[:, copied]]))
    # tied (the rule of rankers.ties orders them; the scores stay the solver's own)
    assert est.scores_[6] == pytest.approx(est.scores_[copied], rel=TIE_RTOL)
    order = est.ranking_.tolist()
    assert order.index(copied) < order.index(6)


def test_constant_feature_scores_zero_and_changes_nothing_else(grouped):
    X = np.column_stack([grouped[:, :2], np.ones(30), grouped[:, 2:]])
    with pytest.warns(ConstantFeatureWarning):
        est = FRANeRanker().fit(X)
    plain = FRANeRanker().fit(grouped)
    assert est.scores_[2] == 0.0
    np.testing.assert_allclose(np.delete(est.scores_, 2), plain.scores_, rtol=1e-12)
    assert est.graph_.shape == (9, 9)
    assert est.graph_[2].nnz == 0


@pytest.mark.parametrize(
    "X",
    [
        # all features identical: every dissimilarity is 0, no threshold at all
        np.repeat(np.arange(10.0)[:, None], 3, axis=1),
        # two features: their one pair is the largest dissimilarity, weight 0
        np.column_stack([np.arange(10.0), np.arange(10.0) ** 2]),
        # |r| equal for every pair: all weights d_max - d are 0
        np.array([[1.0, 1, 1], [-1, -1, 1], [1, -1, -1], [-1, 1, -1]]),
    ],
)
def test_degenerate_similarities_fall_back_to_uniform_with_a_warning(X):
    with pytest.warns(UserWarning, match="min_edges"):
        est = FRANeRanker().fit(X)
    n = X.shape[1]
    np.testing.assert_array_equal(est.scores_, np.full(n, 1.0 / n))
    assert est.ranking_.tolist() == list(range(n))
    assert np.isnan(est.threshold_)
    assert est.graph_.nnz == 0
    assert np.isnan(est.rqh_).all()


def test_no_graph_reaching_min_edges_warns(grouped):
    with pytest.warns(UserWarning, match="min_edges=100"):
        est = FRANeRanker(min_edges=100).fit(grouped)
    np.testing.assert_array_equal(est.scores_, np.full(8, 1 / 8))


def test_single_informative_feature_needs_no_graph_warning():
    X = np.column_stack([np.ones(10), np.arange(10.0)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", ConstantFeatureWarning)
        est = FRANeRanker().fit(X)
    assert est.scores_.tolist() == [0.0, 1.0]


def test_ranking_quality_uses_second_largest_over_second_smallest():
    assert ranking_quality(np.array([0.5, 0.2, 0.1, 0.1, 0.05, 0.05])) == 0.2 / 0.05
    assert ranking_quality(np.array([0.3, 0.1])) == pytest.approx(3.0)
    assert ranking_quality(np.array([0.0, 0.0, 1.0, 2.0])) == 1.0 / 1e-10  # clipped


def test_bad_parameters_are_named():
    X = np.random.default_rng(5).normal(size=(10, 4))
    for params, name in [
        ({"similarity": "cosine"}, "similarity"),
        ({"thresholds": "random"}, "thresholds"),
        ({"damping": 1.0}, "damping"),
        ({"n_thresholds": 0}, "n_thresholds"),
        ({"min_edges": -1}, "min_edges"),
    ]:
        with pytest.raises(InvalidParameterError, match=name):
            FRANeRanker(**params).fit(X)


@settings(max_examples=15)
@given(seed=st.integers(0, 2**32 - 1))
@pytest.mark.parametrize("thresholds", ["geometric", "linear_mean", "linear_median", "quantile"])
def test_choice_does_not_move_when_inputs_move_by_ulps(nudge, thresholds, seed):
    # another BLAS or CPU changes the last bits of the correlations; inputs moved by a few
    # ulps stand in for it. Graphs whose RQH tie in exact arithmetic (the differing edges
    # lie in another component) must not be chosen between by rounding.
    grouped = grouped_data()
    X = np.column_stack([grouped, grouped[:, 0]]) + 3.0  # a duplicated feature, too
    est = FRANeRanker(thresholds=thresholds, n_thresholds=40).fit(X)
    moved = FRANeRanker(thresholds=thresholds, n_thresholds=40).fit(
        nudge(X, np.random.default_rng(seed))
    )
    chosen = int(np.flatnonzero(est.thresholds_ == est.threshold_)[0])
    assert moved.threshold_ == pytest.approx(moved.thresholds_[chosen], rel=0, abs=0)
    np.testing.assert_array_equal(moved.ranking_, est.ranking_)
    np.testing.assert_allclose(moved.rqh_, est.rqh_, rtol=1e-9)


# ---------------------------------------------------------------- the streamed algorithm
def random_graph(seed, density, isolated, n=30):
    """A random symmetric weighted graph on ``n`` nodes, its first ``isolated`` without edges."""
    rng = np.random.default_rng(seed)
    A = np.triu(rng.random((n, n)) * (rng.random((n, n)) < density), 1)
    A = A + A.T
    A[:isolated] = A[:, :isolated] = 0.0
    return A, rng


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), density=st.floats(0.02, 1.0), isolated=st.integers(0, 5))
def test_rqh_bound_holds_on_random_graphs(seed, density, isolated):
    from rankers.unsupervised._frane_graph import rqh_upper_bound

    A, _ = random_graph(seed, density, isolated)
    for damping in (0.5, 0.85, 0.99):
        exact = ranking_quality(pagerank(sp.csr_matrix(A), damping))
        assert exact <= rqh_upper_bound(A.sum(axis=1), damping)


def test_rqh_bound_is_tight_on_regular_graphs():
    from rankers.unsupervised._frane_graph import rqh_upper_bound

    A = np.ones((6, 6)) - np.eye(6)  # complete graph: uniform PageRank, RQH 1
    assert ranking_quality(pagerank(A)) == pytest.approx(1.0)
    assert rqh_upper_bound(A.sum(axis=1), 0.85) == pytest.approx(1.0)
    assert rqh_upper_bound(np.zeros(6), 0.85) == np.inf  # no edges: no bound


def test_dense_graphs_are_ruled_out_without_changing_the_choice():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 150))
    X[:, :10] += rng.normal(size=(100, 1))
    est = FRANeRanker(n_thresholds=40).fit(X)
    (_, t, x), rqh, _ = simple_frane(X, n_thresholds=40)
    out = np.isnan(est.rqh_) & ~np.isnan(rqh)
    assert out.sum() >= 5  # the densest graphs were never built
    assert_rqh_or_ruled_out(est, rqh)
    assert est.threshold_ == pytest.approx(t, rel=1e-12)
    np.testing.assert_allclose(est.scores_, x, rtol=1e-9)


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), density=st.floats(0.02, 1.0), isolated=st.integers(0, 5))
def test_rqh_bound_from_a_partial_solve_holds_on_random_graphs(seed, density, isolated):
    # frane._rqh_bound: any iterate and its residual bound the exact solution's RQH
    from rankers.unsupervised.frane import _rqh_bound

    A, rng = random_graph(seed, density, isolated)
    n = A.shape[0]
    deg = A.sum(axis=1)
    root = np.sqrt(np.where(deg > 0.0, deg, 1.0))
    for damping in (0.5, 0.85, 0.99):
        exact = ranking_quality(pagerank(sp.csr_matrix(A), damping))
        # the solver's unknown: y = root * r with (D - damping A) r = 1
        y_exact = root * np.linalg.solve(np.diag(root**2) - damping * A, np.ones(n))
        for y in (
            1.0 / root,  # the solver's cold start
            y_exact * (1.0 + 0.3 * rng.standard_normal(n)),  # far from it
            y_exact * (1.0 + 1e-6 * rng.standard_normal(n)),  # nearly solved
            rng.random(n),
        ):
            s = 1.0 / root
            residual = s - (y - damping * s * (A @ (s * y)))
            assert exact <= _rqh_bound(y, residual, root, damping) * (1.0 + 1e-12)


def test_graphs_proven_worse_while_solving_are_dropped_without_changing_the_choice(
    monkeypatch,
):
    import rankers.unsupervised.frane as frane

    dropped = []
    solve = frane._solve_pagerank

    def counted(*args):
        out = solve(*args)
        dropped.append(out[0] is None)
        return out

    monkeypatch.setattr(frane, "_solve_pagerank", counted)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 150))
    X[:, :45] += rng.normal(size=(100, 5)) @ rng.normal(size=(5, 45))  # five latent factors
    est = FRANeRanker(n_thresholds=40).fit(X)
    (_, t, x), rqh, _ = simple_frane(X, n_thresholds=40)
    assert sum(dropped) >= 5  # graphs built, their solve stopped once below the best
    assert_rqh_or_ruled_out(est, rqh)
    assert est.threshold_ == pytest.approx(t, rel=1e-12)
    np.testing.assert_allclose(est.scores_, x, rtol=1e-9)


def test_threshold_index_is_searchsorted_exactly():
    from rankers.unsupervised._frane_graph import _ThresholdIndex

    rng = np.random.default_rng(1)
    d_max = 0.93
    thresholds = np.geomspace(0.01, d_max, 57)
    k = np.arange(_ThresholdIndex._BUCKETS + 1)
    v = np.concatenate([
        rng.random(100_000) * d_max, thresholds, np.nextafter(thresholds, 0),
        np.nextafter(thresholds, 1), k * (d_max / _ThresholdIndex._BUCKETS), [-1e-9, 0, 2.0],
    ])  # fmt: skip
    index = _ThresholdIndex(thresholds, d_max)
    np.testing.assert_array_equal(index(v), np.searchsorted(thresholds, v, side="left"))
    # the filing's tie tolerance, subtracted inside: the answers for v - shift, where v
    # lands on a threshold after the shift, or an ulp beside it
    shift = 1e-9 * d_max
    w = np.concatenate([v, thresholds + shift, np.nextafter(thresholds + shift, 0),
                        np.nextafter(thresholds + shift, 1)])  # fmt: skip
    np.testing.assert_array_equal(
        index(w, shift), np.searchsorted(thresholds, w - shift, side="left")
    )


@pytest.mark.parametrize("similarity", ["abs_correlation", "correlation"])
def test_tiles_and_chunks_change_nothing(monkeypatch, similarity):
    import rankers.unsupervised._frane_graph as graph

    X = np.random.default_rng(3).normal(size=(40, 90))
    whole = FRANeRanker(similarity=similarity).fit(X)
    r = np.corrcoef(X, rowvar=False)[np.triu_indices(90, 1)]
    monkeypatch.setattr(graph, "TILE", 200)  # 2 rows of the triangle per product
    monkeypatch.setattr(graph, "CHUNK", 300)  # a few rows per filing pass
    got = graph.dissimilarities(X, similarity, "minmax")
    expected = 1 - (r if similarity == "correlation" else np.abs(r))
    np.testing.assert_allclose(got, expected, atol=1e-12)
    tiled = FRANeRanker(similarity=similarity).fit(X)
    np.testing.assert_array_equal(tiled.ranking_, whole.ranking_)
    np.testing.assert_array_equal(tiled.average_degrees_, whole.average_degrees_)
    assert tiled.threshold_ == whole.threshold_


@pytest.mark.parametrize("chunk", [None, 37])
def test_dropping_pairs_keeps_the_edges_of_the_graphs_still_needed(monkeypatch, chunk):
    # FiledPairs.shrink (issue 39 item 4): after the pairs of graphs beyond `needed` are
    # dropped, the edges of every graph up to it are those gathered from all the pairs
    import rankers.unsupervised._frane_graph as graph

    if chunk is not None:
        monkeypatch.setattr(graph, "CHUNK", chunk)  # many chunks, rows split unevenly
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 70))
    X[:, :20] += rng.normal(size=(30, 1))
    d = graph.dissimilarities(X, "abs_correlation", "minmax")
    d_max = float(d.max())
    thresholds = np.geomspace(d[d > 0].min(), d_max, 40)
    filed = graph.FiledPairs(d.copy(), d_max, thresholds, 70, 1e-9 * d_max)
    before = {t: filed.edges(t) for t in (3, 17, 25)}
    filed.shrink(25)
    assert filed.size == filed.counts[25] and filed.d.size == filed.size
    filed.shrink(17)  # a second cut, from the compacted pairs
    assert filed.size == filed.counts[17]
    for t in (3, 17):
        after = filed.edges(t)
        for name in ("indptr", "indices", "weights", "first"):
            np.testing.assert_array_equal(getattr(after, name), getattr(before[t], name))
    # graph t's product is its symmetric adjacency matrix
    edges = before[25]
    dense = np.zeros((70, 70))
    iu = np.triu_indices(70, 1)
    held = filed.counts[17]
    first_full = graph.FiledPairs(d.copy(), d_max, thresholds, 70, 1e-9 * d_max).first
    w = np.where(first_full <= 17, d_max - d, 0.0)
    dense[iu] = w
    dense += dense.T
    product, deg = edges.matrix(17)
    v = rng.normal(size=70)
    np.testing.assert_allclose(product(v), dense @ v, rtol=1e-12)
    np.testing.assert_allclose(deg, dense.sum(axis=1), rtol=1e-12)
    assert np.count_nonzero(np.triu(dense)) == held
