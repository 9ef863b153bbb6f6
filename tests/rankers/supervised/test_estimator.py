"""Any scikit-learn model as a ranker (rankers.supervised.estimator)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.inspection import permutation_importance
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures, StandardScaler

import rankers
from rankers.exceptions import InvalidInputError, InvalidParameterError
from rankers.preprocessing import standardise
from rankers.supervised.estimator import EstimatorImportanceRanker


def _regression(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(80, 4)) * [1.0, 10.0, 0.1, 1.0]
    y = 2.0 * X[:, 0] + 0.05 * X[:, 1] + 30.0 * X[:, 2] + 0.1 * rng.normal(size=80)
    return X, y


def test_coefficients_by_hand():
    # y = 3 x2 - x0 exactly: a least-squares fit recovers the coefficients
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    est = EstimatorImportanceRanker(estimator=LinearRegression(), standardize=False)
    est.fit(X, 3 * X[:, 2] - X[:, 0])
    np.testing.assert_allclose(est.scores_, [1.0, 0.0, 3.0], atol=1e-10)
    assert est.importance_ == "coef"


def test_standardized_coefficients_compare_features_in_different_units():
    X, y = _regression()
    # per unit of sd the effects are 2, 0.5 and 3: x2 > x0 > x1 > x3
    est = EstimatorImportanceRanker(estimator=LinearRegression()).fit(X, y)
    assert est.ranking_.tolist() == [2, 0, 1, 3]
    Z = standardise(X)
    ref = np.abs(LinearRegression().fit(Z, y).coef_)
    np.testing.assert_allclose(est.scores_, ref, rtol=1e-10)


def test_multiclass_coefficients_sum_their_magnitudes():
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1, 2], 30)
    X = rng.normal(size=(90, 4))
    X[:, 1] += 2 * (y == 1)
    est = EstimatorImportanceRanker(estimator=LogisticRegression(max_iter=1000)).fit(X, y)
    ref = np.abs(LogisticRegression(max_iter=1000).fit(standardise(X), y).coef_).sum(axis=0)
    np.testing.assert_allclose(est.scores_, ref, rtol=1e-6)
    assert est.ranking_[0] == 1


def test_feature_importances_of_a_forest():
    rng = np.random.default_rng(2)
    y = np.repeat([0, 1], 40)
    X = rng.normal(size=(80, 5))
    X[:, 3] += 2.5 * y
    forest = RandomForestClassifier(n_estimators=30, random_state=0)
    est = EstimatorImportanceRanker(estimator=forest).fit(X, y)
    assert est.importance_ == "feature_importances"
    ref = RandomForestClassifier(n_estimators=30, random_state=0).fit(standardise(X), y)
    np.testing.assert_allclose(est.scores_, ref.feature_importances_)
    assert est.ranking_[0] == 3


def test_permutation_importance_for_a_model_without_either():
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1], 40)
    X = rng.normal(size=(80, 4))
    X[:, 0] += 3 * y
    est = EstimatorImportanceRanker(estimator=KNeighborsClassifier(), random_state=0)
    est.fit(X, y)
    assert est.importance_ == "permutation"
    model = KNeighborsClassifier().fit(standardise(X), y)
    ref = permutation_importance(model, standardise(X), y, n_repeats=5, random_state=0)
    np.testing.assert_allclose(est.scores_, ref.importances_mean)
    assert est.ranking_[0] == 0
    assert est.importances_std_.shape == (4,)


def test_pipeline_uses_its_last_step_only_when_it_sees_the_features():
    X, y = _regression()
    plain = make_pipeline(StandardScaler(), LinearRegression())
    assert EstimatorImportanceRanker(estimator=plain).fit(X, y).importance_ == "coef"
    # polynomial features: the last step sees 15 columns, not 4: permutation importance
    poly = make_pipeline(PolynomialFeatures(2), LinearRegression())
    est = EstimatorImportanceRanker(estimator=poly, random_state=0).fit(X, y)
    assert est.importance_ == "permutation"
    with pytest.raises(InvalidParameterError, match="no usable coef_"):
        EstimatorImportanceRanker(estimator=poly, importance="coef").fit(X, y)


def test_default_model_follows_the_target_and_the_seed_reaches_the_model():
    X, y = _regression()
    assert type(rankers.get("estimator_importance").fit(X, y).estimator_).__name__ == "RidgeCV"
    labels = (y > 0).astype(int)
    fitted = rankers.get("estimator_importance").fit(X, labels)
    assert type(fitted.estimator_).__name__ == "LogisticRegression"
    forest = RandomForestClassifier(n_estimators=5)  # random_state None
    a = EstimatorImportanceRanker(estimator=forest, random_state=7).fit(X, labels).scores_
    b = EstimatorImportanceRanker(estimator=forest, random_state=7).fit(X, labels).scores_
    np.testing.assert_array_equal(a, b)
    assert forest.random_state is None  # the caller's model is never changed


def test_a_model_of_the_wrong_kind_is_refused():
    X, y = _regression()
    with pytest.raises(InvalidInputError, match="is a regressor"):
        EstimatorImportanceRanker(estimator=LinearRegression()).fit(X, (y > 0).astype(int))
    with pytest.raises(InvalidInputError, match="is a classifier"):
        EstimatorImportanceRanker(estimator=LogisticRegression()).fit(X, y)
