"""SVM-RFE: agreement with scikit-learn's RFE and a plain loop, tie rules, properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.feature_selection import RFE
from sklearn.svm import SVC

import rankers
import rankers.supervised.svm_rfe as svm_rfe
from rankers.exceptions import ConstantFeatureWarning, InvalidParameterError
from rankers.supervised.svm_rfe import SVMRFERanker


def _data(seed, m=60, n=10, n_classes=2):
    rng = np.random.default_rng(seed)
    y = np.arange(m) % n_classes
    X = rng.normal(size=(m, n))
    X[:, 2] += 1.2 * (y == 1)
    X[:, 3] -= 0.8 * (y == n_classes - 1)
    X[:, n - 1] += 0.4 * y
    return X, y


def _minmax(X):
    return (X - X.min(axis=0)) / np.ptp(X, axis=0)


def rfe_loop(Xs, y, C=0.1, step=1):
    """Recursive elimination written out: one-vs-rest linear SVMs, Σ w², drop the smallest."""
    classes = np.unique(y)
    targets = [y] if classes.size == 2 else [(y == c).astype(int) for c in classes]
    alive = list(range(Xs.shape[1]))
    removed = []  # best last
    while len(alive) > 1:
        w2 = np.zeros(len(alive))
        for t in targets:
            w2 += SVC(kernel="linear", C=C).fit(Xs[:, alive], t).coef_[0] ** 2
        order = np.argsort(w2, kind="stable")[: min(step, len(alive) - 1)]
        gone = [alive[i] for i in order]
        removed += gone
        alive = [a for a in alive if a not in gone]
    return removed + alive


def test_hand_checkable_one_feature_carries_the_class():
    # x1 separates the classes with a wide margin, x0 does not: the first SVM puts
    # (almost) all weight on x1, x0 goes first
    y = np.array([0, 0, 0, 1, 1, 1])
    X = np.column_stack([[0.0, 1.0, 2.0, 0.5, 1.5, 2.5], [0, 0.1, 0.2, 1.8, 1.9, 2.0]])
    est = SVMRFERanker().fit(X, y)
    assert est.scores_.tolist() == [1.0, 2.0]
    assert est.ranking_.tolist() == [1, 0]
    assert est.elimination_iteration_.tolist() == [1, 2]
    assert est.n_iterations_ == 1


def test_linearly_separable_set_ranks_the_carrier_first():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 30)
    X = rng.normal(size=(60, 8))
    X[:, 5] = np.where(y == 1, 1.0, -1.0) + 0.2 * rng.normal(size=60)
    est = SVMRFERanker().fit(X, y)
    assert est.ranking_[0] == 5
    assert est.scores_[5] == 8.0
    assert sorted(est.scores_.tolist()) == list(range(1, 9))


@pytest.mark.parametrize("scaling", ["minmax", "standard", None])
def test_binary_elimination_order_is_sklearn_rfe(scaling):
    X, y = _data(seed=1)
    est = SVMRFERanker(scaling=scaling).fit(X, y)
    if scaling == "minmax":
        Xs = _minmax(X)
    elif scaling == "standard":
        Xs = (X - X.mean(axis=0)) / X.std(axis=0)
    else:
        Xs = X
    rfe = RFE(SVC(kernel="linear", C=0.1), n_features_to_select=1, step=1).fit(Xs, y)
    np.testing.assert_array_equal(est.scores_, X.shape[1] + 1 - rfe.ranking_)
    np.testing.assert_array_equal(est.elimination_iteration_, est.n_iterations_ + 2 - rfe.ranking_)


@pytest.mark.parametrize("step", [3, 4])
def test_larger_steps_refine_sklearn_rfe_by_weight(step):
    X, y = _data(seed=2, n=11)
    est = SVMRFERanker(step=step).fit(X, y)
    rfe = RFE(SVC(kernel="linear", C=0.1), n_features_to_select=1, step=step).fit(_minmax(X), y)
    np.testing.assert_array_equal(est.elimination_iteration_, est.n_iterations_ + 2 - rfe.ranking_)
    # a total order that never contradicts RFE's coarser one
    assert sorted(est.scores_.tolist()) == list(range(1, 12))
    later = est.elimination_iteration_[:, None] > est.elimination_iteration_[None, :]
    assert (est.scores_[:, None] > est.scores_[None, :])[later].all()
    # inside one iteration the order comes from the weights at that iteration
    per_iteration = np.bincount(est.elimination_iteration_)
    assert per_iteration.max() == step


def rfe_fraction_loop(Xs, y, fraction, C=0.1):
    """Elimination of ``floor(fraction * remaining)`` features (at least 1) per round:
    the iteration in which each feature goes."""
    alive = list(range(Xs.shape[1]))
    iteration = np.zeros(Xs.shape[1], dtype=int)
    it = 0
    while len(alive) > 1:
        it += 1
        w2 = SVC(kernel="linear", C=C).fit(Xs[:, alive], y).coef_[0] ** 2
        count = min(max(1, int(fraction * len(alive))), len(alive) - 1)
        gone = [alive[i] for i in np.argsort(w2, kind="stable")[:count]]
        iteration[gone] = it
        alive = [a for a in alive if a not in gone]
    iteration[alive] = it + 1
    return iteration


@pytest.mark.parametrize("fraction", [0.05, 0.25, 0.5])
def test_float_step_is_a_fraction_of_the_remaining_features(fraction):
    X, y = _data(seed=2, n=60)
    est = SVMRFERanker(step=fraction).fit(X, y)
    expected = rfe_fraction_loop(_minmax(X), y, fraction)
    np.testing.assert_array_equal(est.elimination_iteration_, expected)
    assert est.n_iterations_ == expected.max() - 1
    # rounds shrink with the remaining features: the first removes floor(fraction * 60)
    assert np.bincount(est.elimination_iteration_)[1] == max(1, int(fraction * 60))


def test_default_step_equals_step_one_below_forty_features():
    X, y = _data(seed=8, n=39)
    np.testing.assert_array_equal(
        SVMRFERanker().fit(X, y).scores_, SVMRFERanker(step=1).fit(X, y).scores_
    )
    X, y = _data(seed=8, n=80)
    assert SVMRFERanker().fit(X, y).n_iterations_ < SVMRFERanker(step=1).fit(X, y).n_iterations_


# scores of the code before the width work (commit 9b10018) with step=1
_PINNED = {
    (0, 30, 9): [9, 7, 8, 4, 1, 5, 2, 3, 6],
    (1, 40, 50): [
        49,
        36,
        41,
        42,
        44,
        46,
        50,
        39,
        35,
        48,
        37,
        45,
        38,
        40,
        43,
        47,
        28,
        4,
        10,
        32,
        13,
        6,
        14,
        18,
        26,
        20,
        5,
        2,
        12,
        29,
        15,
        7,
        11,
        17,
        3,
        31,
        16,
        30,
        1,
        22,
        9,
        33,
        24,
        27,
        25,
        8,
        21,
        19,
        23,
        34,
    ],
}


@pytest.mark.parametrize("key", list(_PINNED))
def test_step_one_scores_pinned_to_the_previous_implementation(key):
    seed, m, n = key
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, size=m)
    X = rng.normal(size=(m, n))
    X[:, : n // 3] += y[:, None]
    X = np.round(X, 3)
    np.testing.assert_array_equal(SVMRFERanker(step=1).fit(X, y).scores_, _PINNED[key])


def test_multiclass_sums_squared_one_vs_rest_weights():
    X, y = _data(seed=3, m=45, n=7, n_classes=3)
    est = SVMRFERanker().fit(X, y)
    best_last = rfe_loop(_minmax(X), y)
    assert est.ranking_.tolist() == best_last[::-1]


def test_kernel_downdates_equal_refitting(monkeypatch):
    X, y = _data(seed=4, n=40, n_classes=3)
    fast = SVMRFERanker().fit(X, y).scores_
    monkeypatch.setattr(svm_rfe, "_MAX_KERNEL_SAMPLES", 0)  # libsvm's own linear kernel
    np.testing.assert_array_equal(SVMRFERanker().fit(X, y).scores_, fast)


def test_public_svc_fallback_gives_the_same_ranking(monkeypatch, capfd):
    X, y = _data(seed=9, n=12, n_classes=3)
    direct = SVMRFERanker().fit(X, y).scores_
    assert "optimization finished" not in capfd.readouterr().out  # libsvm kept quiet
    monkeypatch.setattr(svm_rfe, "_libsvm", None)
    np.testing.assert_array_equal(SVMRFERanker().fit(X, y).scores_, direct)


def test_duplicated_columns_share_a_score_and_the_lower_index_wins():
    X, y = _data(seed=5, n=6)
    X = np.column_stack([X, X[:, 2]])
    est = SVMRFERanker().fit(X, y)
    assert est.scores_[2] == est.scores_[6]
    assert est.elimination_iteration_[2] == est.elimination_iteration_[6]
    ranking = est.ranking_.tolist()
    assert ranking.index(2) + 1 == ranking.index(6)


def test_constant_features_score_zero():
    X, y = _data(seed=6, n=5)
    X[:, 1] = 2.0
    with pytest.warns(ConstantFeatureWarning):
        est = SVMRFERanker().fit(X, y)
    assert est.scores_[1] == 0.0
    assert est.elimination_iteration_[1] == 0
    np.testing.assert_array_equal(
        np.delete(est.scores_, 1), SVMRFERanker().fit(np.delete(X, 1, axis=1), y).scores_
    )


def test_defaults_are_the_benchmark_settings():
    est = rankers.get("svm_rfe")
    assert (est.C, est.step, est.scaling) == (0.1, 0.05, "minmax")
    with pytest.raises(InvalidParameterError, match="step"):
        SVMRFERanker(step=1.5).fit(*_data(seed=0))
    with pytest.raises(InvalidParameterError, match="scaling"):
        SVMRFERanker(scaling="robust").fit(*_data(seed=0))


def test_progress_bar_does_not_change_the_result(capsys):
    X, y = _data(seed=7, n=6)
    quiet = SVMRFERanker().fit(X, y).scores_
    loud = SVMRFERanker(verbose=1).fit(X, y).scores_
    np.testing.assert_array_equal(quiet, loud)
    assert "svm_rfe" in capsys.readouterr().err


@settings(max_examples=10)
@given(
    seed=st.integers(0, 10_000),
    scale=st.floats(1e-2, 1e2),
    shift=st.floats(-100, 100),
    scaling=st.sampled_from(["minmax", "standard"]),
)
def test_scaled_inputs_make_it_invariant_to_affine_rescaling(seed, scale, shift, scaling):
    X, y = _data(seed, m=40, n=6)
    base = SVMRFERanker(scaling=scaling).fit(X, y).scores_
    Xt = X.copy()
    Xt[:, seed % 6] = scale * X[:, seed % 6] + shift
    np.testing.assert_array_equal(SVMRFERanker(scaling=scaling).fit(Xt, y).scores_, base)


@settings(max_examples=10)
@given(seed=st.integers(0, 10_000))
def test_permuting_features_permutes_scores(seed):
    X, y = _data(seed, m=40, n=6, n_classes=3)
    perm = np.random.default_rng(seed).permutation(6)
    a = SVMRFERanker().fit(X, y).scores_
    np.testing.assert_array_equal(SVMRFERanker().fit(X[:, perm], y).scores_, a[perm])


def test_deterministic():
    X, y = _data(seed=8)
    np.testing.assert_array_equal(
        SVMRFERanker().fit(X, y).scores_, SVMRFERanker().fit(X, y).scores_
    )
