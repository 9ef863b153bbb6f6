"""The default error-curve model is fitted on a precomputed Gram matrix: same curves."""

from __future__ import annotations

import numpy as np
import pytest

from aggregation.evaluation.error_curves import default_estimator, ffa_rfa


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
    np.testing.assert_array_equal(fast["i"], plain["i"])
    # The two kernels differ in rounding only, but libsvm's solver stops at its tolerance
    # (1e-3), so a test sample that close to the boundary may fall on either side: on
    # some BLAS kernels (OpenBLAS's Prescott here) one prediction of one fold flips. A
    # point of the curve is the mean accuracy over 5 folds of 18, so one flipped
    # prediction moves it by 1/90; anything more, or flips at many points, is an error.
    for column in ("ffa", "rfa"):
        diff = np.abs(fast[column].to_numpy() - plain[column].to_numpy())
        assert diff.max() <= 1 / len(y) + 1e-12, column
        assert np.mean(diff > 1e-12) <= 0.05, column
        same = diff <= 1e-12  # where no prediction flipped, the spread is the same too
        np.testing.assert_allclose(
            fast[f"{column}_std"][same], plain[f"{column}_std"][same], rtol=0, atol=1e-12
        )


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
    from aggregation.evaluation import error_curves
    from aggregation.evaluation.error_curves import expected_curve

    rng = np.random.default_rng(3)
    y = np.arange(40) % 2
    X = rng.normal(size=(40, 12))
    X[:, 0] += y
    calls = []

    def counting(name):
        original = getattr(error_curves, name)

        def wrapped(*args):
            calls.append(name)
            return original(*args)

        return wrapped

    for name in ("_fold_accuracies", "_chain_accuracies"):
        monkeypatch.setattr(error_curves, name, counting(name))
    one = expected_curve(X, y, n_random=3, cv=4, grid=4, random_state=0)
    # the set of all 12 features once, then one chain per random ranking
    assert calls == ["_fold_accuracies"] + ["_chain_accuracies"] * 3
    two = expected_curve(X, y, n_random=3, cv=4, grid=4, random_state=0, n_jobs=2)
    np.testing.assert_array_equal(one.to_numpy(), two.to_numpy())
    calls.clear()
    expected_curve(X, y, n_random=2, cv=4, grid=4, random_state=0, scoring="balanced_accuracy")
    expected_curve(X, y, n_random=2, cv=4, grid=4, random_state=0, estimator=default_estimator())
    assert not calls


@pytest.mark.parametrize(("n_classes", "grid"), [(2, 3), (3, [1, 2, 7, 19]), (2, "every")])
def test_kernels_grown_along_a_ranking_score_every_subset_as_the_direct_product(n_classes, grid):
    """_chain_accuracies (kernels carried from one grid point to the next) gives the
    accuracies of _fold_accuracies on each top-i and bottom-i set. The data are small
    integers whose min-max scaled values (0, 1/2, 1) multiply and add exactly in float64,
    so both summation orders give the same kernel and the comparison is exact on any
    machine; a wrong block (a feature missed or counted twice) changes the kernel."""
    from sklearn.model_selection import StratifiedKFold

    from aggregation.evaluation.error_curves import (
        _chain_accuracies,
        _fold_accuracies,
        _scaled_folds,
        curve_grid,
    )

    rng = np.random.default_rng(20 + n_classes)
    y = np.arange(60) % n_classes
    X = rng.integers(0, 3, size=(60, 23)).astype(float)
    X[:, :4] = np.clip(X[:, :4] + y[:, None], 0, 2)
    X[:, 9] = 1.0  # constant
    splits = list(StratifiedKFold(4, shuffle=True, random_state=1).split(X, y))
    folds = _scaled_folds(X, splits)
    sizes = curve_grid(grid, 22)  # on 22 features, the 23rd unused: the last point is a chain point
    order = rng.permutation(23)[:22]
    got = _chain_accuracies(folds, y, splits, order, sizes)
    assert got.shape == (2, len(sizes), 4)
    for g, i in enumerate(sizes):
        top, bottom = sorted(order[:i].tolist()), sorted(order[len(order) - i :].tolist())
        np.testing.assert_array_equal(got[0, g], _fold_accuracies(folds, y, splits, top))
        np.testing.assert_array_equal(got[1, g], _fold_accuracies(folds, y, splits, bottom))
    # with the grid ending at n (every feature), the last point is left to the caller
    sizes = curve_grid(grid, 23)
    full = _chain_accuracies(folds, y, splits, rng.permutation(23), sizes)
    assert full[:, -1].any() != (sizes[-1] == 23)


def test_expected_curve_with_grown_kernels_is_the_direct_evaluation():
    """On exact data (see above) the expected curve through the chains equals the one
    through one direct kernel per subset, every column."""
    from aggregation.evaluation import error_curves

    rng = np.random.default_rng(5)
    y = np.arange(48) % 2
    X = rng.integers(0, 3, size=(48, 16)).astype(float)
    X[:, :3] = np.clip(X[:, :3] + y[:, None], 0, 2)
    setup = error_curves._Setup(X, y, None, None, 4, 3, 0)
    orders = [rng.permutation(16) for _ in range(5)]
    chains = error_curves._evaluate_chains(setup, orders, n_jobs=1)
    direct = error_curves._evaluate(setup, orders, n_jobs=1)
    for a, b in zip(chains, direct, strict=True):
        np.testing.assert_array_equal(a, b)
