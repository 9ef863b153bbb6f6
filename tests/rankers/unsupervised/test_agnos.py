"""AgnoS-S (Doquet & Sebag 2019): slack-weight autoencoder ranker."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankers.unsupervised.agnos as agnos
from rankers.exceptions import InvalidParameterError
from rankers.unsupervised.agnos import (
    AgnosSRanker,
    _Adam,
    _SlackAutoencoder,
    twonn_dimension,
)


def latent_factor_data(m=200, n_factors=3, n_copies=5, n_noise=5, copy_noise=0.1, seed=0):
    """Continuous latent factors, each seen through noisy copies, plus pure noise.

    Columns: copy c of factor j is column ``c * n_factors + j``; the last ``n_noise``
    columns are independent of everything.
    """
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(m, n_factors))
    copies = [z + copy_noise * rng.normal(size=z.shape) for _ in range(n_copies)]
    return np.column_stack([*copies, rng.normal(size=(m, n_noise))])


def reference_objective(net, X, penalty, weight_decay):
    """The objective written out directly from the layers' weights, one layer at a time."""
    h = X * net.slack
    for i, (W, b) in enumerate(zip(net.weights, net.biases, strict=True)):
        h = h @ W + b
        if i < len(net.weights) - 1:
            h = np.tanh(h)
    D = X.shape[1]
    recon = np.sum((h - X) ** 2) / X.size
    l1 = np.sum(np.abs(net.slack))
    l2 = sum(np.sum(W**2) for W in net.weights)
    return recon + (penalty * l1 + 0.5 * weight_decay * l2) / D, recon


@pytest.mark.parametrize("layers", [[4, 2, 4], [3], [5, 4, 2, 4, 5]])
def test_gradient_matches_finite_differences(layers):
    rng = np.random.default_rng(1)
    D = 5
    net = _SlackAutoencoder(D, layers, rng, dtype=np.float64)
    net.slack[:] = rng.normal(size=D)  # away from 0, where |a| has no derivative
    net.theta[D:] += 0.1 * rng.normal(size=net.theta.size - D)  # non-zero biases too
    X = rng.normal(size=(7, D))
    grad = np.zeros_like(net.theta)
    net.loss_and_grad(X, 0.3, 0.2, grad)
    numeric = np.empty_like(grad)
    h = 1e-6
    for i in range(net.theta.size):
        old = net.theta[i]
        net.theta[i] = old + h
        up, _ = net.loss_and_grad(X, 0.3, 0.2)
        net.theta[i] = old - h
        down, _ = net.loss_and_grad(X, 0.3, 0.2)
        net.theta[i] = old
        numeric[i] = (up - down) / (2 * h)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-9)


def test_objective_matches_direct_formula():
    rng = np.random.default_rng(2)
    net = _SlackAutoencoder(6, [4, 2, 4], rng, dtype=np.float64)
    net.slack[:] = rng.normal(size=6)
    X = rng.normal(size=(9, 6))
    got = net.loss_and_grad(X, 1.5, 0.7, np.zeros_like(net.theta))
    np.testing.assert_allclose(got, reference_objective(net, X, 1.5, 0.7), rtol=1e-12)


def test_slacks_start_at_one_and_weights_are_glorot():
    net = _SlackAutoencoder(8, [4, 2, 4], np.random.default_rng(0))
    assert np.all(net.slack == 1.0)
    assert [W.shape for W in net.weights] == [(8, 4), (4, 2), (2, 4), (4, 8)]
    for W in net.weights:
        assert np.abs(W).max() <= math.sqrt(6.0 / sum(W.shape))
    assert all(np.all(b == 0.0) for b in net.biases)


def test_adam_matches_textbook_update():
    rng = np.random.default_rng(3)
    theta = rng.normal(size=4)
    ref = theta.copy()
    m, v = np.zeros(4), np.zeros(4)
    adam = _Adam(theta, 0.01)
    for t in range(1, 6):
        g = rng.normal(size=4)
        adam.step(g)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g**2
        m_hat, v_hat = m / (1 - 0.9**t), v / (1 - 0.999**t)
        ref -= 0.01 * m_hat / np.sqrt(v_hat)  # eps is negligible at these gradients
    np.testing.assert_allclose(theta, ref, rtol=1e-6)


def test_twonn_hand_worked_line():
    # points 0, 1, 3, 6, 10 on a line: (r1, r2) = (1, 3), (1, 2), (2, 3), (3, 4), (4, 7)
    X = np.array([[0.0], [1.0], [3.0], [6.0], [10.0]])
    mu = np.array([4 / 3, 1.5, 1.75, 2.0])  # the sorted ratios, the largest (3) dropped
    F = np.arange(1, 5) / 5
    x, y = np.log(mu), -np.log(1 - F)
    assert twonn_dimension(X) == pytest.approx(x @ y / (x @ x), rel=1e-12)
    # a far-away duplicated point (r1 = 0) is left out and changes nobody's neighbours
    with_duplicates = np.vstack([X, [[100.0], [100.0]]])
    assert twonn_dimension(with_duplicates) == twonn_dimension(X)


@pytest.mark.parametrize("d", [2, 5])
def test_twonn_finds_the_dimension_of_a_flat_subspace(d):
    rng = np.random.default_rng(d)
    basis = np.linalg.qr(rng.normal(size=(12, d)))[0]  # a d-dimensional subspace of R^12
    X = rng.uniform(size=(3000, d)) @ basis.T
    assert twonn_dimension(X) == pytest.approx(d, rel=0.15)


def test_twonn_undefined_cases():
    assert math.isnan(twonn_dimension(np.zeros((2, 3))))
    # duplicates are left out; what is left is two points: undefined
    assert math.isnan(twonn_dimension(np.array([[0.0], [0.0], [0.0], [1.0]])))
    # the corners of a square: both neighbours equally far everywhere, log(mu) = 0
    square = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, 0.0]])
    assert math.isnan(twonn_dimension(square))


@pytest.mark.parametrize("seed", [0, 1])
def test_latent_factors_outrank_noise_with_default_settings(seed):
    # 3 factors x 5 noisy copies + 5 independent noise features. AgnoS-S keeps one copy
    # of each factor (the copies are redundant) and drops what it cannot reconstruct;
    # so the best copy of every factor scores above every noise feature.
    X = latent_factor_data(seed=seed)
    est = AgnosSRanker(random_state=seed).fit(X)
    best_copy = est.scores_[:15].reshape(5, 3).max(axis=0)
    assert best_copy.min() > est.scores_[15:].max()
    assert set(est.ranking_[:3] % 3) == {0, 1, 2}  # the top 3: one copy per factor
    assert est.latent_dim_ == round(est.intrinsic_dimension_)
    assert est.scores_.tolist() == np.abs(est.slack_).tolist()


def test_training_reduces_the_reconstruction_error():
    X = latent_factor_data(m=120, n_noise=2, seed=4)
    est = AgnosSRanker(
        epochs=60, learning_rate=0.01, penalty=0.0, weight_decay=0.0, random_state=0
    ).fit(X)
    rec = est.reconstruction_curve_
    assert rec[-1] < 0.2 * rec[0]
    # with both penalties the objective itself goes down
    est = AgnosSRanker(epochs=60, learning_rate=0.01, random_state=0).fit(X)
    assert est.loss_curve_[-1] < 0.5 * est.loss_curve_[0]
    assert est.loss_curve_.shape == (est.n_iter_,)


def test_same_seed_same_scores_other_seed_other_scores():
    X = latent_factor_data(m=60, seed=5)
    a = AgnosSRanker(epochs=15, random_state=3).fit(X)
    b = AgnosSRanker(epochs=15, random_state=3).fit(X)
    c = AgnosSRanker(epochs=15, random_state=4).fit(X)
    np.testing.assert_array_equal(a.scores_, b.scores_)
    np.testing.assert_array_equal(a.loss_curve_, b.loss_curve_)
    assert not np.array_equal(a.scores_, c.scores_)


@settings(max_examples=8)
@given(power=st.sampled_from([-300, -8, -1, 1, 3, 8, 300]), column=st.integers(0, 5))
def test_scaling_a_feature_by_a_power_of_two_changes_nothing(power, column):
    # standardisation inside fit removes units; a power of two scales exactly in
    # floating point, so even the training trajectory is bit-identical (2**300 also
    # checks that raw values beyond float32's range are standardised before the cast)
    X = latent_factor_data(m=40, n_factors=2, n_copies=2, n_noise=2, seed=6)
    a = AgnosSRanker(epochs=5, random_state=0).fit(X).scores_
    Xs = X.copy()
    Xs[:, column] *= 2.0**power
    b = AgnosSRanker(epochs=5, random_state=0).fit(Xs).scores_
    np.testing.assert_array_equal(a, b)


def test_auto_sizes(monkeypatch):
    X = latent_factor_data(m=80, seed=7)
    est = AgnosSRanker(epochs=1, random_state=0).fit(X)
    d = est.latent_dim_
    assert d == round(twonn_dimension((X - X.mean(0)) / X.std(0)))
    assert est.hidden_layer_sizes_ == (max(d, min(128, round(math.sqrt(20 * d)))),)
    est = AgnosSRanker(epochs=1, latent_dim=2, hidden_layer_sizes=[], random_state=0).fit(X)
    assert est.latent_dim_ == 2
    assert est.hidden_layer_sizes_ == ()
    assert math.isnan(est.intrinsic_dimension_)
    monkeypatch.setattr(agnos, "_AUTO_MAX_HIDDEN", 3)
    est = AgnosSRanker(epochs=1, latent_dim=2, random_state=0).fit(X)
    assert est.hidden_layer_sizes_ == (3,)
    est = AgnosSRanker(epochs=1, latent_dim=5, random_state=0).fit(X)
    assert est.hidden_layer_sizes_ == (5,)  # never narrower than the latent layer


def test_auto_epochs_aim_at_the_step_budget(monkeypatch):
    monkeypatch.setattr(agnos, "_AUTO_STEPS", 50)
    X = latent_factor_data(m=70, seed=8)  # batches of 32, 32, 6: 3 steps per epoch
    est = AgnosSRanker(n_iter_no_change=None, random_state=0).fit(X)
    assert est.n_iter_ == 17
    assert est.n_steps_ == 51
    assert not est.converged_


def test_early_stopping():
    X = latent_factor_data(m=40, seed=9)
    # a tolerance no epoch can beat: the first epoch sets the best, 3 more make it stop
    est = AgnosSRanker(epochs=50, tol=1e9, n_iter_no_change=3, random_state=0).fit(X)
    assert est.converged_
    assert est.n_iter_ == 4
    est = AgnosSRanker(epochs=7, tol=1e9, n_iter_no_change=None, random_state=0).fit(X)
    assert not est.converged_
    assert est.n_iter_ == 7


def test_constant_feature_gets_zero_slack():
    X = latent_factor_data(m=40, n_factors=2, n_copies=2, n_noise=1, seed=10)
    X[:, 1] = 4.0
    with pytest.warns(UserWarning, match="constant"):
        est = AgnosSRanker(epochs=3, random_state=0).fit(X)
    assert est.scores_[1] == 0.0
    assert est.slack_[1] == 0.0
    assert est.ranking_[-1] == 1


def test_progress_bar_only_when_verbose(capsys):
    X = latent_factor_data(m=30, seed=11)
    AgnosSRanker(epochs=2, random_state=0).fit(X)
    assert capsys.readouterr().err == ""
    AgnosSRanker(epochs=2, random_state=0, verbose=1).fit(X)
    assert "agnos_s" in capsys.readouterr().err


@pytest.mark.parametrize("sizes", [(4, 0), (2.5,), ("8",), (True,)])
def test_bad_hidden_sizes_are_named(sizes):
    with pytest.raises(InvalidParameterError, match="hidden_layer_sizes"):
        AgnosSRanker(hidden_layer_sizes=sizes).fit(latent_factor_data(m=20))


def test_input_is_not_modified():
    X = latent_factor_data(m=30, seed=12)
    before = X.copy()
    AgnosSRanker(epochs=2, random_state=0).fit(X)
    np.testing.assert_array_equal(X, before)
