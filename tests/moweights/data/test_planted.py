"""The planted-structure generator: shapes, ground truth, and that the structure is there."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import rankers
from moweights.data.planted import REGRESSION, STRUCTURES, make_planted
from rankers.exceptions import InvalidParameterError


@pytest.mark.parametrize("structure", STRUCTURES)
def test_shapes_truth_and_seed(structure):
    a = make_planted(structure, n_samples=40, n_features=50, informative=0.2, random_state=1)
    b = make_planted(structure, n_samples=40, n_features=50, informative=0.2, random_state=1)
    pd.testing.assert_frame_equal(a.X, b.X)
    assert a.X.shape == (40, 50)
    assert int(a.truth.sum()) == 10 and list(a.truth.index) == list(a.X.columns)
    assert (a.groups[~a.truth] == -1).all() and (a.groups[a.truth] >= 0).all()
    assert (a.y is None) == (structure in ("modules", "manifold"))
    if structure in REGRESSION:  # a numeric target
        assert a.y.dtype.kind == "f" and a.y.nunique() == 40
    c = make_planted(structure, n_samples=40, n_features=50, informative=0.2, random_state=2)
    assert not a.X.equals(c.X)


def test_unshuffled_columns_put_the_planted_first_and_counts():
    data = make_planted("shift", n_samples=20, n_features=30, informative=3, shuffle=False)
    assert data.informative == ["f01", "f02", "f03"]
    assert int(make_planted("xor", 20, 30, informative=5).truth.sum()) == 4  # pairs
    assert int(make_planted("clusters", 20, 1000, informative=0.005).truth.sum()) == 5


def test_xor_features_alone_say_nothing_the_pair_everything():
    data = make_planted(
        "xor", n_samples=400, n_features=10, informative=2, noise=0.0, shuffle=False, random_state=0
    )
    a, b, y = data.X["f01"], data.X["f02"], data.y
    for col in (a, b):  # each sign is independent of the class
        assert abs((col[y == 0] > 0).mean() - (col[y == 1] > 0).mean()) < 0.15
    np.testing.assert_array_equal(np.sign(a) * np.sign(b) < 0, y == 1)


def test_imbalanced_minority_share():
    data = make_planted("imbalanced", n_samples=200, n_features=20, minority=0.1, random_state=0)
    assert data.y.value_counts().to_dict() == {0: 180, 1: 20}


def test_standardize_removes_the_variance_signal():
    data = make_planted("clusters", n_samples=100, n_features=40, standardize=True, random_state=0)
    np.testing.assert_allclose(data.X.std(ddof=0), 1.0)
    np.testing.assert_allclose(data.X.mean(), 0.0, atol=1e-12)


def test_the_planted_structure_is_found_by_the_ranker_made_for_it():
    shift = make_planted("shift", n_samples=120, n_features=300, informative=10, random_state=0)
    order = rankers.get("anova_f").fit(shift.X, shift.y).ranking_
    precision, recall = shift.recovery(shift.X.columns[order])
    assert precision == recall >= 0.9
    clusters = make_planted(
        "clusters", n_samples=120, n_features=300, informative=10, random_state=0
    )
    order = rankers.get("laplacian").fit(clusters.X).ranking_
    precision, recall = clusters.recovery(clusters.X.columns[order])
    assert precision == recall >= 0.9
    precision, _ = clusters.recovery(list(clusters.X.columns[::-1]), k=30)
    assert precision <= 0.5  # a ranking that ignores the data does not recover them


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"structure": "spiral"}, "unknown structure"),
        ({"informative": 0}, "share in"),
        ({"informative": 2000}, "do not fit"),
        ({"n_samples": 2}, "n_samples"),
        ({"minority": 0.7}, "minority"),
        ({"effect": -1}, "effect"),
    ],
)
def test_bad_parameters(kw, match):
    with pytest.raises(InvalidParameterError, match=match):
        make_planted(**{"n_features": 100, **kw})


def test_product_features_alone_are_uncorrelated_the_linear_ones_are_not():
    kw = {"n_samples": 2000, "n_features": 12, "informative": 4, "shuffle": False}
    product = make_planted("product", random_state=0, **kw)
    linear = make_planted("linear", random_state=0, **kw)
    for j in range(4):
        col = f"f{j + 1:02d}"
        assert abs(np.corrcoef(product.X[col], product.y)[0, 1]) < 0.08
        assert abs(np.corrcoef(linear.X[col], linear.y)[0, 1]) > 0.2
    # the pair's product carries the target
    pair = product.X["f01"] * product.X["f02"]
    assert np.corrcoef(pair, product.y)[0, 1] > 0.3
    assert list(product.groups[:4]) == [0, 0, 1, 1]


def test_rrelieff_finds_the_interaction_a_univariate_score_cannot():
    data = make_planted("product", n_samples=300, n_features=40, informative=4, random_state=0)
    order = rankers.get("rrelieff").fit(data.X, data.y).ranking_
    precision, _ = data.recovery(data.X.columns[order])
    assert precision >= 0.75  # a random ranking: 0.1
