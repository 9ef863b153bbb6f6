"""MultiSURF (rankers.supervised.multisurf): hand-worked neighbourhoods and skrebate."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rankers.supervised.multisurf import MultiSURFRanker


def test_neighbourhood_and_weights_by_hand():
    # one numeric feature x0 = 0, 1, 2, 10 (range 10) and a noise feature x1 = 0, 1, 0, 1;
    # classes 0, 0, 1, 1. Distances (diffs summed): row 0 to 1, 2, 3: 0.1 + 1, 0.2, 1 + 1
    X = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 0.0], [10.0, 1.0]])
    y = np.array([0, 0, 1, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = MultiSURFRanker().fit(X, y)
    D = np.array([[0, 1.1, 0.2, 2.0], [1.1, 0, 1.1, 0.9], [0.2, 1.1, 0, 1.8], [2.0, 0.9, 1.8, 0]])
    W = np.zeros(2)
    sizes = []
    for i in range(4):
        d = np.delete(D[i], i)
        near = [j for j in range(4) if j != i and D[i, j] < d.mean() - d.std() / 2]
        sizes.append(len(near))
        hits = [j for j in near if y[j] == y[i]]
        misses = [j for j in near if y[j] != y[i]]
        diff = np.abs(X[:, :] - X[i]) / np.ptp(X, axis=0)
        if hits:
            W -= diff[hits].sum(axis=0) / len(hits)
        if misses:
            W += diff[misses].sum(axis=0) / len(misses)
    np.testing.assert_allclose(est.scores_, W / 4)
    assert est.neighbourhood_sizes_.tolist() == sizes


def _data(seed, m, n, n_classes):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, m)
    X = rng.normal(size=(m, n)) * np.arange(1, n + 1)  # features of different ranges
    X[:, 0] += 2 * y
    X[:, 5] += 3 * (y == 1)
    return X, y


@pytest.mark.parametrize("n_classes", [2, 3])
def test_matches_skrebate(n_classes):
    skrebate = pytest.importorskip(
        "skrebate", reason="needs the 'peers' extra: pip install '.[peers]'"
    )
    X, y = _data(1, 120, 12, n_classes)
    ref = skrebate.MultiSURF(n_jobs=1).fit(X, y).feature_importances_
    np.testing.assert_allclose(MultiSURFRanker().fit(X, y).scores_, ref, atol=1e-12)


def test_regression_matches_skrebate():
    skrebate = pytest.importorskip(
        "skrebate", reason="needs the 'peers' extra: pip install '.[peers]'"
    )
    rng = np.random.default_rng(2)
    X = rng.normal(size=(100, 6))
    y = X[:, 2] * 2 + 0.3 * rng.normal(size=100)
    ref = skrebate.MultiSURF(n_jobs=1).fit(X, y).feature_importances_
    est = MultiSURFRanker().fit(X, y)
    assert est.task_ == "regression"
    np.testing.assert_allclose(est.scores_, ref, atol=1e-12)


def test_nominal_features_auto_match_skrebate_on_discrete_data():
    skrebate = pytest.importorskip(
        "skrebate", reason="needs the 'peers' extra: pip install '.[peers]'"
    )
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 120)
    X = rng.integers(0, 3, size=(120, 6)).astype(float)
    X[:, 1] = (X[:, 1] + y) % 3
    ref = skrebate.MultiSURF(n_jobs=1).fit(X, y).feature_importances_
    est = MultiSURFRanker(nominal="auto").fit(X, y)
    assert est.nominal_.all()
    np.testing.assert_allclose(est.scores_, ref, atol=1e-12)
    assert est.ranking_[0] == 1


def test_finds_an_interaction():
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 2, size=(2, 200))
    X = np.column_stack([rng.normal(size=(200, 3)), a, b])
    assert sorted(MultiSURFRanker().fit(X, a ^ b).ranking_[:2].tolist()) == [3, 4]
