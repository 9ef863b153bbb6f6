"""The default error-curve model is fitted on a precomputed Gram matrix: same curves."""

from __future__ import annotations

import numpy as np
import pytest

from aggregation.error_curves import default_estimator, ffa_rfa


@pytest.mark.parametrize("n_classes", [2, 3])
def test_default_model_gives_the_curves_of_the_pipeline_it_stands_for(n_classes):
    rng = np.random.default_rng(n_classes)
    y = np.arange(90) % n_classes
    X = rng.normal(size=(90, 40)) * rng.uniform(0.1, 30, size=40)  # unequal column scales
    X[:, :5] += 1.5 * y[:, None]
    order = list(rng.permutation(40))
    fast = ffa_rfa(order, X, y, cv=5, grid="every", random_state=0)
    # default_estimator() passed explicitly is fitted as given: libsvm's own poly kernel
    plain = ffa_rfa(order, X, y, estimator=default_estimator(), cv=5, grid="every", random_state=0)
    np.testing.assert_allclose(fast.to_numpy(), plain.to_numpy(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("n_classes", [2, 4])
def test_scaled_once_folds_score_every_subset_as_the_model_does(n_classes):
    """_fold_accuracies (folds scaled once) equals _fold_scores of _GramQuadraticSVC with
    the accuracy scorer, bit for bit, on subsets of any size, constant columns included."""
    from sklearn.metrics import get_scorer
    from sklearn.model_selection import StratifiedKFold

    from aggregation.evaluation.error_curves import (
        _fold_accuracies,
        _fold_scores,
        _GramQuadraticSVC,
        _scaled_folds,
    )

    rng = np.random.default_rng(10 + n_classes)
    y = np.arange(70) % n_classes
    X = rng.normal(size=(70, 30)) * rng.uniform(0.01, 50, size=30)
    X[:, :4] += 2.0 * y[:, None]
    X[:, 7] = 3.0  # constant: a zero range, scaled by 1
    X[::2, 8] = 0.0  # constant on some training folds only
    splits = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    folds = _scaled_folds(X, splits)
    scorer = get_scorer("accuracy")
    for size in (1, 2, 5, 13, 30):
        for _ in range(4):
            cols = sorted(rng.choice(30, size, replace=False).tolist())
            slow = _fold_scores(_GramQuadraticSVC(), X[:, cols], y, splits, scorer)
            np.testing.assert_array_equal(_fold_accuracies(folds, y, splits, cols), slow)


def test_expected_curve_takes_the_scaled_once_path_only_for_the_default_model(monkeypatch):
    """The paper's model with accuracy goes through _fold_accuracies; another scoring or
    estimator keeps the general path, and n_jobs does not change the curve."""
    from aggregation.error_curves import expected_curve
    from aggregation.evaluation import error_curves

    rng = np.random.default_rng(3)
    y = np.arange(40) % 2
    X = rng.normal(size=(40, 12))
    X[:, 0] += y
    calls = []
    original = error_curves._fold_accuracies

    def counting(*args):
        calls.append(1)
        return original(*args)

    monkeypatch.setattr(error_curves, "_fold_accuracies", counting)
    one = expected_curve(X, y, n_random=3, cv=4, grid=4, random_state=0)
    assert calls
    two = expected_curve(X, y, n_random=3, cv=4, grid=4, random_state=0, n_jobs=2)
    np.testing.assert_array_equal(one.to_numpy(), two.to_numpy())
    calls.clear()
    expected_curve(X, y, n_random=2, cv=4, grid=4, random_state=0, scoring="balanced_accuracy")
    expected_curve(X, y, n_random=2, cv=4, grid=4, random_state=0, estimator=default_estimator())
    assert not calls
