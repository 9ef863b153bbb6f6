"""The ranker contract (docs/design.md, "The ranker contract"), for every registered ranker.

Parametrised over the registry, so every ranker added later is checked automatically.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

import rankers

pytestmark = pytest.mark.quick  # in the quick suite (pytest -m quick): see pyproject.toml

NAMES = list(rankers.available()["name"])

# scikit-learn checks whose expectation differs from our contract on purpose.
EXPECTED_FAILED_CHECKS = {
    "check_dtype_object": (
        "a non-numeric value raises our InvalidInputError naming the column (docs/design.md, "
        "'Bad input'), not numpy's TypeError text that the check looks for"
    ),
}


def _quick(name):
    """A ranker with its quick-fit parameters and a fixed seed."""
    est = rankers.get(name)
    est.set_params(**type(est)._contract_test_params)
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    return est


def _instances():
    out = []
    for name in NAMES:
        est = _quick(name)
        if "n_estimators" in est.get_params():
            est.set_params(n_estimators=10)  # keeps the sklearn suite fast
        out.append(est)
    return out


@parametrize_with_checks(_instances(), expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS)
def test_sklearn_contract(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rankers.exceptions.ConstantFeatureWarning)
        check(estimator)


def test_registry_lists_the_first_rankers():
    assert {"variance", "laplacian", "info_gain", "chi2", "random_forest"} <= set(NAMES)


def _fit(name, X, y):
    return _quick(name).fit(X, y)


@pytest.mark.parametrize("name", NAMES)
def test_fitted_attributes(name, small_classification):
    X, y = small_classification
    est = _fit(name, X, y)
    n = X.shape[1]
    assert est.scores_.shape == (n,)
    assert np.isfinite(est.scores_).all()
    # ranking_ holds indices best first, consistent with scores_ (higher = better)
    assert sorted(est.ranking_.tolist()) == list(range(n))
    assert np.all(np.diff(est.scores_[est.ranking_]) <= 0)
    assert est.n_features_in_ == n
    assert list(est.feature_names_in_) == list(X.columns)
    for attr in ("requires_y", "target_kind", "accepts_sparse", "deterministic"):
        assert hasattr(type(est), attr)
    assert est.target_kind in {"unsupervised", "classification", "regression", "both"}


@pytest.mark.parametrize("name", NAMES)
def test_ties_broken_by_lower_index(name):
    # two identical columns get identical scores from any ranker; the lower index wins
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1], 15)
    base = rng.normal(size=(30, 3)) + y[:, None]
    X = np.column_stack([base, base[:, 0]])
    est = _quick(name)
    if not est.deterministic:
        pytest.skip("randomised rankers need not score identical columns identically")
    est.fit(X, y)
    if not est.redundancy_aware:  # a greedy selector ranks the copy below, not tied
        assert est.scores_[0] == pytest.approx(est.scores_[3])
    pos = {f: i for i, f in enumerate(est.ranking_)}
    assert pos[0] < pos[3]


@pytest.mark.parametrize("name", NAMES)
def test_topk_transform_pandas_in_pandas_out(name, small_classification):
    X, y = small_classification
    est = _fit(name, X, y).set_params(k=2)
    best = [X.columns[i] for i in est.ranking_[:2]]
    assert est.get_support().sum() == 2
    assert set(est.get_feature_names_out()) == set(best)
    est.set_output(transform="pandas")
    out = est.transform(X)
    assert isinstance(out, pd.DataFrame)
    assert set(out.columns) == set(best)
    assert out.index.equals(X.index)
    np.testing.assert_array_equal(out[best].to_numpy(), X[best].to_numpy())
    with pytest.raises(rankers.InvalidParameterError, match="k=7"):
        est.set_params(k=7).transform(X)


@pytest.mark.parametrize("name", NAMES)
def test_clone_and_params_roundtrip(name):
    est = _quick(name)
    params = est.get_params()
    assert clone(est).get_params() == params


@pytest.mark.parametrize("name", NAMES)
def test_unsupervised_rankers_ignore_y(name, small_classification):
    X, y = small_classification
    est = _quick(name)
    if est.requires_y:
        with pytest.raises(rankers.InvalidInputError, match="requires y to be passed"):
            est.fit(X)
        return
    a = clone(est).fit(X).scores_
    b = clone(est).fit(X, y).scores_
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_scores(name, small_classification):
    X, y = small_classification
    a = _fit(name, X, y).scores_
    b = _fit(name, X, y).scores_
    np.testing.assert_array_equal(a, b)
