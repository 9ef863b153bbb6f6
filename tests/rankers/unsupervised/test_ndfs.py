"""NDFS, nonnegative discriminative feature selection (Li et al. 2012)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

from rankers.kmeans import kmeans_labels
from rankers.unsupervised.ndfs import NDFSRanker, _f_step


def cosine_knn_graph(X, n_neighbors=5):
    m = X.shape[0]
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    cos = Xn @ Xn.T
    np.fill_diagonal(cos, -np.inf)
    nearest = np.argsort(-cos, axis=1)[:, :n_neighbors]
    A = np.zeros((m, m), dtype=bool)
    A[np.repeat(np.arange(m), n_neighbors), nearest.ravel()] = True
    return (A | A.T).astype(float)


def dense_ndfs(X, c, n_iter, alpha=1.0, beta=1.0, gamma=1e9, normalized=False, seed=0):
    """The updates written out with dense matrices and explicit inverses."""
    m, n = X.shape
    S = cosine_knn_graph(X)
    d = S.sum(axis=1)
    L = np.diag(d) - S
    if normalized:
        L = np.diag(d**-0.5) @ L @ np.diag(d**-0.5)
    # the same start as the ranker's (its k-means is tested in tests/rankers/test_kmeans.py)
    labels = kmeans_labels(X, c, np.random.RandomState(seed))
    Y = np.eye(c)[labels]
    F = Y @ np.diag(np.diag(Y.T @ Y) ** -0.5) + 0.02
    D = np.eye(n)
    objective = []
    for _ in range(n_iter):
        T = np.linalg.inv(X.T @ X + beta * D)
        W = T @ X.T @ F
        row = np.sqrt((W * W).sum(axis=1))
        D = np.diag(0.5 / row)
        M = L + alpha * (np.eye(m) - X @ T @ X.T)
        # the paper's F ⊙ γF / (MF + γFFᵀF), with the negative part of MF moved to the
        # numerator (the ranker's documented rule; the paper's where MF >= 0)
        MF = M @ F
        pos, neg = np.where(MF > 0, MF, 0.0), np.where(MF < 0, -MF, 0.0)
        F = F * (gamma * F + neg) / (pos + gamma * F @ F.T @ F)
        F = F / np.sqrt((F * F).sum(axis=0))
        R = X @ W - F
        E = F.T @ F - np.eye(c)
        objective.append(
            np.trace(F.T @ L @ F)
            + alpha * ((R * R).sum() + beta * row.sum())
            + gamma / 4 * (E * E).sum()
        )
    return W, F, np.array(objective)


def _data(m, n, seed):
    rng = np.random.default_rng(seed)
    y = np.arange(m) % 3
    X = rng.normal(size=(m, n)) + 1.5
    X[:, 0] += 2.0 * y
    X[:, 1] -= 1.0 * (y == 2)
    return X


@pytest.mark.parametrize(
    ("m", "n", "normalized"),
    [(30, 5, False), (30, 5, True), (15, 40, False)],  # the last: the n_samples-side solve
)
def test_matches_dense_reference(m, n, normalized):
    X = _data(m, n, seed=m + n)
    W, F, objective = dense_ndfs(X, 3, n_iter=25, normalized=normalized)
    est = NDFSRanker(
        n_clusters=3,
        laplacian="normalized" if normalized else "unnormalized",
        max_iter=25,
        tol=0.0,
        random_state=0,
    )
    with pytest.warns(ConvergenceWarning, match="max_iter=25"):
        est.fit(X)
    assert est.n_iter_ == 25
    # entries of F that the updates drive towards 0 (1e-10 and below) carry the
    # rounding of M F, hence the absolute tolerances
    np.testing.assert_allclose(est.indicator_, F, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(est.coef_, W, rtol=1e-7, atol=1e-8 * np.abs(W).max())
    np.testing.assert_allclose(est.objective_, objective, rtol=1e-7)
    norms = np.sqrt((W * W).sum(axis=1))
    np.testing.assert_allclose(est.scores_, norms, rtol=1e-7, atol=1e-8 * norms.max())


def test_converges_and_stops_early():
    X = _data(45, 6, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = NDFSRanker(n_clusters=3, random_state=0).fit(X)
    assert est.n_iter_ < est.max_iter
    last, prev = est.objective_[-1], est.objective_[-2]
    assert abs(last - prev) <= est.tol * abs(prev)
    assert est.objective_.shape == (est.n_iter_,)


def test_convergence_warning_when_max_iter_is_reached():
    X = _data(30, 4, seed=2)
    with pytest.warns(ConvergenceWarning, match="did not converge in max_iter=3"):
        est = NDFSRanker(n_clusters=3, max_iter=3, random_state=0).fit(X)
    assert est.n_iter_ == 3


def test_cluster_feature_ranks_first():
    # x0 separates two groups of 15 samples; x1, x2 are noise
    rng = np.random.default_rng(9)
    X = np.column_stack([np.repeat([1.0, 6.0], 15), rng.normal(size=(30, 2)) + 3.0])
    X[:, 0] += 0.2 * rng.normal(size=30)
    est = NDFSRanker(n_clusters=2, metric="euclidean", random_state=0).fit(X)
    assert est.ranking_[0] == 0
    assert (est.indicator_ >= 0).all()
    np.testing.assert_allclose(np.linalg.norm(est.indicator_, axis=0), 1.0, rtol=1e-12)


def test_same_seed_same_result_and_seed_reaches_kmeans():
    X = _data(40, 5, seed=3)
    a = NDFSRanker(n_clusters=4, random_state=7).fit(X)
    b = NDFSRanker(n_clusters=4, random_state=7).fit(X)
    np.testing.assert_array_equal(a.scores_, b.scores_)
    np.testing.assert_array_equal(a.indicator_, b.indicator_)
    _, F, _ = dense_ndfs(X, 4, n_iter=a.n_iter_, seed=7)
    np.testing.assert_allclose(a.indicator_, F, rtol=1e-7, atol=1e-8)


def test_f_step_is_the_papers_where_mf_is_nonnegative_and_stays_nonnegative():
    rng = np.random.default_rng(0)
    F = rng.uniform(0.01, 1.0, size=(8, 3))
    MF = rng.uniform(0.0, 2.0, size=(8, 3))
    gamma = 10.0
    paper = F * (gamma * F) / (MF + gamma * F @ F.T @ F)
    np.testing.assert_allclose(_f_step(F, MF, gamma), paper / np.linalg.norm(paper, axis=0))
    # a row of F that has almost vanished next to a strongly negative MF: the paper's
    # denominator is negative there, so its step would leave F >= 0
    F[2] = 1e-12
    MF[2] = -5.0
    assert (MF + gamma * F @ F.T @ F)[2].max() < 0
    step = _f_step(F, MF, gamma)
    assert np.isfinite(step).all()
    assert (step >= 0).all()


@settings(max_examples=8)
@given(seed=st.integers(0, 10_000))
def test_permuting_features_permutes_scores(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(24, 5)) + rng.uniform(0.5, 2.0, size=5)
    perm = rng.permutation(5)
    a = NDFSRanker(n_clusters=2, max_iter=50, random_state=0)
    b = NDFSRanker(n_clusters=2, max_iter=50, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sa = a.fit(X).scores_
        sb = b.fit(X[:, perm]).scores_
    np.testing.assert_allclose(sb, sa[perm], rtol=1e-6, atol=1e-10)
