"""The numeric-target curve: kNN regression of y from the top-k features, nested, scored by R².

Against scikit-learn's KNeighborsRegressor on a fixed ranking; a ranking of pure noise
scores what a random ranking scores when refit per fold; a planted signal scores above it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_wine
from sklearn.neighbors import KNeighborsRegressor
from sklearn.preprocessing import StandardScaler

from aggregation.evaluation import class_curve, cv_splits, regression_curve
from rankers.exceptions import InvalidInputError, InvalidParameterError


def _planted(seed, m=150, n=40):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, n))
    y = 2.0 * X[:, 0] + X[:, 1] - X[:, 2] + 0.5 * rng.normal(size=m)
    return X, y


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def test_a_fixed_ranking_scores_as_scikit_learns_knn_regressor():
    X, y = _planted(0)
    order = np.arange(X.shape[1])[::-1]
    splits = cv_splits(X, cv=4, random_state=0)
    curve = regression_curve(order, X, y, ks=[3, 40], cv=splits, return_folds=True)
    assert curve.attrs["protocol"] == "fixed"
    for k in (3, 40):
        top = np.sort(order[:k])
        for f, (tr, te) in enumerate(splits):
            sc = StandardScaler().fit(X[tr][:, top])
            knn = KNeighborsRegressor(5).fit(sc.transform(X[tr][:, top]), y[tr])
            pred = knn.predict(sc.transform(X[te][:, top]))
            # out of sample: the baseline is the training rows' mean, not the test rows'
            ref = 1.0 - np.sum((y[te] - pred) ** 2) / np.sum((y[te] - y[tr].mean()) ** 2)
            got = curve[(curve["k"] == k) & (curve["fold"] == f)]["value"].iloc[0]
            assert got == pytest.approx(ref, abs=1e-12)


def test_the_planted_features_first_explain_the_target():
    X, y = _planted(1)
    best = regression_curve(np.arange(40), X, y, ks=[3], cv=5, random_state=0)
    worst = regression_curve(np.arange(40)[::-1], X, y, ks=[3], cv=5, random_state=0)
    assert best["mean"].iloc[0] > 0.7 and worst["mean"].iloc[0] < 0.05


@pytest.mark.parametrize("seed", [0, 1])
def test_noise_refit_per_fold_scores_as_random(seed):
    rng = np.random.default_rng(seed)
    X, y = rng.normal(size=(80, 400)), rng.normal(size=80)
    ks = [1, 4, 16]
    nested = _quiet(regression_curve, "rrelieff", X, y, ks=ks, cv=5, random_state=0)
    chance = regression_curve("random", X, y, ks=ks, cv=5, random_state=0)
    assert nested.attrs["protocol"] == "nested" and chance.attrs["protocol"] == "random"
    # neither explains noise: both at or below the training mean's score of 0
    assert (nested["mean"] < 0.05).all() and (chance["mean"] < 0.05).all()
    assert abs(nested["mean"].mean() - chance["mean"].mean()) < 0.15


def test_a_ranker_refit_per_fold_finds_the_planted_features():
    X, y = _planted(2)
    nested = _quiet(regression_curve, "rrelieff", X, y, ks=[3], cv=5, random_state=0)
    chance = regression_curve("random", X, y, ks=[3], cv=5, random_state=0)
    assert nested["mean"].iloc[0] > chance["mean"].iloc[0] + 0.4


def test_whole_number_quantities_are_not_stratified_and_n_jobs_does_not_matter():
    X, y = _planted(3)
    counts = np.round(10 * (y - y.min())).astype(int)  # a count: whole numbers, many repeats
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "least populated class" from a stratified split
        a = regression_curve(np.arange(40), X, counts, ks=[2, 8], cv=4, random_state=0)
    b = regression_curve(np.arange(40), X, counts, ks=[2, 8], cv=4, random_state=0, n_jobs=2)
    np.testing.assert_array_equal(a["mean"], b["mean"])


def test_frames_in_with_a_ranker_by_name():
    # the fits see the columns' names, and the curve reads their rankings by those names
    X, y = _planted(4)
    frame = pd.DataFrame(X, columns=[f"gene{j}" for j in range(X.shape[1])])
    a = _quiet(regression_curve, "rrelieff", frame, y, ks=[3], cv=3, random_state=0)
    b = _quiet(regression_curve, "rrelieff", X, y, ks=[3], cv=3, random_state=0)
    np.testing.assert_array_equal(a["mean"], b["mean"])
    Xw, yw = load_wine(return_X_y=True, as_frame=True)
    curve = class_curve("anova_f", Xw, yw, ks=[1, 4], cv=3, random_state=0)
    assert curve.attrs["protocol"] == "nested" and (curve["mean"] > 0.5).all()


def test_bad_arguments_are_named():
    X, y = _planted(5, m=30)
    with pytest.raises(InvalidParameterError, match="metric must be one of"):
        regression_curve(np.arange(40), X, y, metric="mse")
    with pytest.raises(InvalidParameterError, match=r"n_neighbors=50 must be in 1\.\.24"):
        regression_curve(np.arange(40), X, y, cv=5, n_neighbors=50)
    with pytest.raises(InvalidInputError):
        regression_curve(np.arange(40), X, np.array(["a", "b"] * 15))
