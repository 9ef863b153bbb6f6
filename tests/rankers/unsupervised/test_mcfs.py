"""MCFS, multi-cluster feature selection (Cai, Zhang & He 2010)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import Lars

from rankers.unsupervised.mcfs import MCFSRanker


def dense_mcfs(X, K, n_neighbors=5, d=None):
    """The paper's steps with dense matrices: cosine kNN 0-1 graph, generalised
    eigenproblem ``W y = μ D y`` solved in full, one LARS per eigenvector."""
    m, n = X.shape
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    cos = Xn @ Xn.T
    np.fill_diagonal(cos, -np.inf)
    nearest = np.argsort(-cos, axis=1)[:, :n_neighbors]
    A = np.zeros((m, m), dtype=bool)
    A[np.repeat(np.arange(m), n_neighbors), nearest.ravel()] = True
    W = (A | A.T).astype(float)
    mu, V = sla.eigh(W, np.diag(W.sum(axis=1)))  # Vᵀ D V = I, μ ascending
    mu, V = mu[::-1], V[:, ::-1]
    Y = V[:, 1 : K + 1]  # drop the trivial constant vector (μ = 1)
    coef = np.column_stack([Lars(n_nonzero_coefs=d or n).fit(X, Y[:, k]).coef_ for k in range(K)])
    return np.abs(coef).max(axis=1), coef, mu[1 : K + 1]


@pytest.fixture
def data40():
    rng = np.random.default_rng(5)
    y = np.repeat([0, 1, 2], [14, 13, 13])
    X = rng.normal(size=(40, 6)) + 1.0
    X[:, 0] += 2.5 * y
    X[:, 3] -= 1.5 * (y == 1)
    return X


@pytest.mark.parametrize(("K", "d"), [(2, None), (3, 3), (1, 2)])
def test_matches_dense_reference(data40, K, d):
    est = MCFSRanker(n_clusters=K, n_nonzero_coefs=d, random_state=0).fit(data40)
    scores, coef, mu = dense_mcfs(data40, K, d=d)
    np.testing.assert_allclose(est.eigenvalues_, mu, rtol=1e-10)
    # eigenvector signs are arbitrary, so compare coefficient magnitudes
    np.testing.assert_allclose(np.abs(est.coef_), np.abs(coef), rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(est.scores_, scores, rtol=1e-7, atol=1e-10)
    if d is not None:
        assert ((est.coef_ != 0).sum(axis=0) <= d).all()


def test_dense_solver_for_few_samples_matches_reference():
    # 12 samples and 3 eigenvectors: the dense eigensolver path
    rng = np.random.default_rng(8)
    X = rng.normal(size=(12, 4)) + 2.0
    est = MCFSRanker(n_clusters=3, n_neighbors=3, random_state=0).fit(X)
    scores, _, mu = dense_mcfs(X, 3, n_neighbors=3)
    np.testing.assert_allclose(est.eigenvalues_, mu, rtol=1e-10)
    np.testing.assert_allclose(est.scores_, scores, rtol=1e-7, atol=1e-10)


def test_cluster_feature_wins_on_a_disconnected_graph():
    # Two groups of 10 far apart in x1; with 3 Euclidean neighbours no edge crosses, so
    # μ = 1 is double. Deflating the trivial vector leaves the component contrast as the
    # embedding, which x1 reproduces and the noise x0 cannot: with one non-zero
    # coefficient LARS takes x1 only.
    rng = np.random.default_rng(4)
    X = np.column_stack([rng.normal(size=20), np.repeat([0.0, 50.0], 10) + rng.normal(size=20)])
    est = MCFSRanker(
        n_clusters=1, n_nonzero_coefs=1, n_neighbors=3, metric="euclidean", random_state=0
    ).fit(X)
    assert est.eigenvalues_[0] == pytest.approx(1.0, abs=1e-12)
    assert est.scores_[0] == 0.0
    assert est.scores_[1] > 0.0
    assert est.ranking_.tolist() == [1, 0]


def test_score_uses_the_coefficient_magnitude(data40):
    # flipping a feature's sign flips its coefficients; max_k |a_kj| must not change
    # (scikit-feature's signed max_k a_kj does)
    flipped = data40.copy()
    flipped[:, [0, 3]] *= -1.0
    a = MCFSRanker(n_clusters=3, random_state=0).fit(data40).scores_
    b = MCFSRanker(n_clusters=3, random_state=0).fit(flipped).scores_
    np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10)


def test_scores_do_not_depend_on_the_eigensolver_seed(data40):
    a = MCFSRanker(n_clusters=3, random_state=0).fit(data40).scores_
    b = MCFSRanker(n_clusters=3, random_state=123).fit(data40).scores_
    np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10)


def test_other_graphs_run_and_clip(data40):
    est = MCFSRanker(
        n_clusters=80, metric="euclidean", weight_mode="heat", n_neighbors=100, random_state=0
    ).fit(data40)
    assert est.n_clusters_ == 39
    assert est.n_neighbors_ == 39
    assert est.coef_.shape == (6, 39)
    assert np.all(est.eigenvalues_ <= 1.0 + 1e-12)


def test_constant_feature_gets_zero_row(data40):
    X = np.column_stack([data40, np.full(40, 2.0)])
    with pytest.warns(UserWarning, match="constant"):
        est = MCFSRanker(n_clusters=2, random_state=0).fit(X)
    assert est.coef_.shape == (7, 2)
    assert np.all(est.coef_[6] == 0.0)
    np.testing.assert_allclose(
        est.scores_[:6], MCFSRanker(n_clusters=2, random_state=0).fit(data40).scores_
    )


@settings(max_examples=10)
@given(seed=st.integers(0, 10_000))
def test_permuting_features_permutes_scores(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(30, 5)) + rng.uniform(-1.0, 1.0, size=5)
    perm = rng.permutation(5)
    a = MCFSRanker(n_clusters=2, random_state=0).fit(X).scores_
    b = MCFSRanker(n_clusters=2, random_state=0).fit(X[:, perm]).scores_
    np.testing.assert_allclose(b, a[perm], rtol=1e-6, atol=1e-9)


def test_more_features_than_samples_runs_the_path_to_step_m_minus_1():
    # after centring X has rank m - 1 = 14: the default stops LARS there, which is what
    # scikit-feature's d = n_features means (later steps only add degenerate columns)
    rng = np.random.default_rng(12)
    X = rng.normal(size=(15, 40)) + 3.0
    X[:8, :3] += 2.0
    est = MCFSRanker(n_clusters=2, n_neighbors=3, random_state=0).fit(X)
    scores, _, _ = dense_mcfs(X, 2, n_neighbors=3, d=14)
    np.testing.assert_allclose(est.scores_, scores, rtol=1e-6, atol=1e-9)
    assert ((est.coef_ != 0).sum(axis=0) <= 14).all()
    capped = MCFSRanker(n_clusters=2, n_neighbors=3, n_nonzero_coefs=500, random_state=0)
    np.testing.assert_array_equal(capped.fit(X).scores_, est.scores_)


def test_path_end_is_the_least_squares_fit_lars_only_approaches():
    # ill-conditioned integer features (digits-like): the least-squares end point has
    # the smallest residual, which scikit-learn's LARS does not quite reach
    from rankers.unsupervised.mcfs import _least_squares_end

    rng = np.random.default_rng(0)
    base = rng.integers(0, 17, size=(300, 8)).astype(float)
    X = np.column_stack([base, base[:, :4] + rng.integers(0, 2, size=(300, 4))])
    Y = rng.normal(size=(300, 3))
    Xc, Yc = X - X.mean(axis=0), Y - Y.mean(axis=0)
    end = _least_squares_end(X, Y)
    np.testing.assert_allclose(end, np.linalg.lstsq(Xc, Yc, rcond=None)[0], atol=1e-10)
    lars = MCFSRanker._lars(X, Y, X.shape[1], 3)
    assert np.linalg.norm(Xc @ end - Yc) <= np.linalg.norm(Xc @ lars - Yc) + 1e-12


def test_rank_deficient_features_fall_back_to_lars(data40):
    from rankers.unsupervised.mcfs import _least_squares_end

    X = np.column_stack([data40, data40[:, 0] + data40[:, 1]])  # a linear combination
    assert _least_squares_end(X, np.ones((40, 1)) + X[:, :1]) is None
    # "auto" runs the batched LAR, "lars" scikit-learn's: the same path until a column
    # in the span of the active ones comes up. Then scikit-learn "drops it for good" but
    # hands its correlation to another column (a defect); the batched LAR drops it.
    auto = MCFSRanker(n_clusters=2, n_nonzero_coefs=3, random_state=0).fit(X)
    lars = MCFSRanker(n_clusters=2, n_nonzero_coefs=3, solver="lars", random_state=0).fit(X)
    np.testing.assert_allclose(auto.scores_, lars.scores_, rtol=1e-9, atol=1e-15)
    np.testing.assert_array_equal(auto.ranking_, lars.ranking_)
    full = MCFSRanker(n_clusters=2, random_state=0).fit(X)
    assert ((full.coef_ != 0).sum(axis=0) <= 6).all()  # rank 6: one column never enters


@pytest.mark.parametrize("K", [1, 3])
def test_solvers_agree_on_well_conditioned_data(data40, K):
    auto = MCFSRanker(n_clusters=K, random_state=0).fit(data40)
    lars = MCFSRanker(n_clusters=K, solver="lars", random_state=0).fit(data40)
    np.testing.assert_allclose(auto.coef_, lars.coef_, rtol=1e-7, atol=1e-10)


def _four_far_groups():
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(4, 6)) * 20
    y = np.repeat(np.arange(4), 15)
    return centres[y] + rng.normal(size=(60, 6)), y


@pytest.mark.parametrize("K", [1, 2, 3, 4])
def test_repeated_eigenvalue_gets_a_canonical_basis(K):
    # four components: μ = 1 three times once the trivial vector is out. Any rotation of
    # that space is an eigenbasis, and the one an eigensolver returns depends on its start
    # vector and on the machine's BLAS; MCFS regresses on each vector, so its scores did
    # too. The basis is now Gram-Schmidt, in sample order, of the projected unit vectors.
    X, y = _four_far_groups()
    fits = [MCFSRanker(n_clusters=K, random_state=seed).fit(X) for seed in (0, 1, 2)]
    for est in fits[1:]:
        np.testing.assert_allclose(est.scores_, fits[0].scores_, rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(est.ranking_, fits[0].ranking_)
    # the canonical basis, written out: the component space minus the trivial vector
    from rankers.unsupervised._affinity import knn_affinity, nontrivial_eigenvectors

    W = knn_affinity(X, 5, metric="cosine").W
    d = np.asarray(W.sum(axis=1)).ravel()
    V = np.column_stack([np.where(y == c, np.sqrt(d), 0.0) for c in range(4)])
    V /= np.linalg.norm(V, axis=0)
    u0 = np.sqrt(d) / np.linalg.norm(np.sqrt(d))
    P = V @ V.T - np.outer(u0, u0)  # projector onto the non-trivial part
    basis = []
    for i in range(60):  # Gram-Schmidt of P e_i in sample order
        v = P[:, i] - sum(b * (b @ P[:, i]) for b in basis)
        if np.linalg.norm(v) > 1e-8:
            basis.append(v / np.linalg.norm(v))
    expected = np.column_stack(basis)[:, : min(K, 3)]
    expected *= np.sign(expected[np.argmax(np.abs(expected) > 1e-6, axis=0), range(min(K, 3))])
    mu, U, _, _ = nontrivial_eigenvectors(W, K, np.random.RandomState(0))
    np.testing.assert_allclose(mu[:3], 1.0, atol=1e-12)
    np.testing.assert_allclose(U[:, : min(K, 3)], expected, atol=1e-10)


# ------------------------------------------------------------------ the batched LAR
def _sklearn_lars(X, Y, d):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lars = Lars(n_nonzero_coefs=d, fit_intercept=True, precompute=X.shape[0] > X.shape[1])
        coef = lars.fit(X, Y).coef_
    return np.asarray(coef).reshape(Y.shape[1], X.shape[1]).T


def _lar_cases():
    # (samples, features, targets, steps, columns made duplicate / constant / collinear)
    rng = np.random.default_rng(2026)
    cases = []
    for m, n in [(12, 40), (30, 8), (25, 25), (60, 150), (80, 20), (8, 3)]:
        for K in (1, 2, 5):
            top = min(m - 1, n)
            for d in sorted({1, max(1, top // 2), top}):
                cases.append((m, n, K, d, int(rng.integers(1_000_000))))
    return cases


@pytest.mark.parametrize(("m", "n", "K", "d", "seed"), _lar_cases())
def test_batched_lar_equals_sklearn_lars(m, n, K, d, seed):
    from rankers.unsupervised._lars import lar_end_coef

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, n)) * rng.uniform(0.2, 5.0, size=n) + rng.normal(size=n)
    Y = rng.normal(size=(m, K)) + 1.0
    got = lar_end_coef(X, Y, d)
    ref = _sklearn_lars(X, Y, d)
    assert got.shape == (n, K)
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-9 * np.abs(ref).max())
    np.testing.assert_array_equal(got != 0, ref != 0)


@pytest.mark.parametrize("seed", range(4))
def test_batched_lar_with_duplicate_and_constant_columns(seed):
    # x11 = x2 exactly and x10 is constant. The copy's correlation ties the original's in
    # exact arithmetic: the tie goes to the lower index, and afterwards the copy (at the
    # active correlation) loses every tie to the feature entering next, so the path is
    # the one without it. scikit-learn decides such ties by rounding, sometimes taking
    # the copy and dropping it again, so the reference is Lars on the other columns.
    from rankers.unsupervised._lars import lar_end_coef

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(30, 10))
    X = np.column_stack([X, np.full(30, 3.0), X[:, 2]])
    Y = rng.normal(size=(30, 3))
    # (up to the step where a sign flip of x2 would make its copy a regressor of its own;
    # MCFS removes such copies before regressing, rankers.ties.duplicate_columns)
    for d in (3, 8):
        got = lar_end_coef(X, Y, d)
        ref = _sklearn_lars(X[:, :11], Y, d)
        assert np.all(got[10:] == 0.0)
        np.testing.assert_allclose(got[:11], ref, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_batched_lar_drops_a_collinear_column_as_sklearn(seed):
    # x10 = 2 x5 + 1 is collinear with x5: whichever comes up second has a Cholesky pivot
    # of rounding size and is dropped for good, as scikit-learn does (its pivot < 1e-7)
    from rankers.unsupervised._lars import lar_end_coef

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(30, 10))
    X = np.column_stack([X, 2.0 * X[:, 5] + 1.0])
    Y = rng.normal(size=(30, 3))
    for d in (3, 8, 11):
        np.testing.assert_allclose(
            lar_end_coef(X, Y, d), _sklearn_lars(X, Y, d), rtol=1e-9, atol=1e-12
        )


def test_batched_lar_on_the_benchmark_shape_matches_sklearn():
    # the n_features >> n_samples regime the batching is for: the path runs to step
    # n_samples - 1 and coefficients cross zero (scikit-learn flips their signs)
    from rankers.unsupervised._lars import lar_end_coef

    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 600))
    Y = rng.normal(size=(40, 4))
    got, ref = lar_end_coef(X, Y, 39), _sklearn_lars(X, Y, 39)
    assert ((ref != 0).sum(axis=0) < 39).any()  # a sign flip cost a step
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-10 * np.abs(ref).max())


@pytest.mark.parametrize("d", [2, 5, None])
def test_default_solver_ranks_as_sklearn_lars(d):
    rng = np.random.default_rng(11)
    X = rng.normal(size=(25, 60)) + 1.0
    X[:12, :4] += 2.5
    auto = MCFSRanker(n_clusters=3, n_nonzero_coefs=d, n_neighbors=4, random_state=0).fit(X)
    lars = MCFSRanker(
        n_clusters=3, n_nonzero_coefs=d, n_neighbors=4, solver="lars", random_state=0
    ).fit(X)
    np.testing.assert_allclose(auto.coef_, lars.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(auto.ranking_, lars.ranking_)


@pytest.mark.parametrize("d", [2, 4])
def test_lar_ranking_does_not_move_when_inputs_move_by_ulps(nudge, d):
    # exact ties the batched LAR meets: duplicated features (one regressor, tied by
    # duplicate_columns) and a grid of small integers, whose correlations tie in exact
    # arithmetic; n_nonzero_coefs < n_features keeps the path from its least-squares end
    rng = np.random.default_rng(7)
    base = rng.integers(0, 3, size=(40, 6)) * 0.1
    base[:20, 0] += 0.2
    X = np.column_stack([base, base[:, 0], base[:, 3]])
    expected = MCFSRanker(n_clusters=2, n_nonzero_coefs=d, random_state=0).fit(X)
    assert expected.scores_[6] == expected.scores_[0]
    for seed in range(4):
        moved = MCFSRanker(n_clusters=2, n_nonzero_coefs=d, random_state=0)
        moved.fit(nudge(X, np.random.default_rng(seed)))
        np.testing.assert_array_equal(moved.ranking_, expected.ranking_)


def _tied_pixel_columns(seed, m=30, n=2000, K=3):
    # n >> m, pixel-like columns (smooth along the feature axis); for each target y_k a
    # column correlated with it and a neighbour equal to it plus a perturbation
    # orthogonal to the constant and to y_k: the two tie at the largest correlation in
    # exact arithmetic (as on pixraw10P, where the eigenvectors are cluster indicators)
    rng = np.random.default_rng(seed)
    Y = rng.normal(size=(m, K))
    Z = np.cumsum(rng.normal(size=(m, n)), axis=1) / 10
    X = Z.copy()
    for k in range(K):
        j = 100 + 500 * k
        X[:, j] = 3.0 * Y[:, k] + Z[:, j]
        P = np.column_stack([np.ones(m), Y[:, k] - Y[:, k].mean()])
        delta = rng.normal(size=m)
        delta -= P @ np.linalg.lstsq(P, delta, rcond=None)[0]
        X[:, j + 1] = X[:, j] + 0.5 * delta
    return X, Y


@pytest.mark.parametrize("seed", range(6))
def test_batched_lar_with_a_tie_at_the_largest_correlation_matches_sklearn(seed):
    # Once one of two tied features is active, the other is at the active correlation:
    # its step is 0 up to rounding. Leaving it out of the step search (as an earlier
    # version did) let its correlation overtake the active ones' (0.37 of a score apart
    # on a pixraw10P fold); scikit-learn lets it join after a rounding-size step, or
    # steps on without it when rounding gives 0 or the other sign, so such a path is
    # left to scikit-learn and every path equals Lars
    from rankers.unsupervised._lars import lar_end_coef

    X, Y = _tied_pixel_columns(seed)
    d = X.shape[0] - 1
    got = lar_end_coef(X, Y, d)
    ref = np.column_stack([_sklearn_lars(X, Y[:, [k]], d)[:, 0] for k in range(Y.shape[1])])
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-9 * np.abs(ref).max())
