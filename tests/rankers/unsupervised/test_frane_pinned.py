"""FRANe's rankings are those of the code before the streamed rewrite (issue 17).

The rewrite (tiled similarities, pairs filed once, graphs ruled out by a bound on their
RQH) must change the cost only: the literal rankings below were computed with commit
9b10018, and ``frane_reference_9b10018.py`` (that commit's module, unchanged but for its
first line) is compared with the current code on wider data.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from rankers.unsupervised.frane import FRANeRanker


def _reference_module():
    path = Path(__file__).with_name("frane_reference_9b10018.py")
    spec = importlib.util.spec_from_file_location("frane_reference_9b10018", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pin_data(seed, m=60, n=40):
    """Clusters in the first 8 features, three noisy copies of x0 at 30..32, noise elsewhere."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, size=m)
    X = rng.normal(size=(m, n))
    X[:, :8] += rng.normal(0.0, 1.5, size=(3, 8))[y]
    X[:, 30:33] = X[:, [0]] + 0.2 * rng.normal(size=(m, 3))
    return X + 5.0


def wide_data(m, n, seed=0):
    """The benchmarks' data (benchmarks/speed/speed_suite.py): 5 clusters in 20 features, noise."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 5, size=m)
    X = rng.normal(size=(m, n))
    X[:, :20] += rng.normal(0.0, 1.5, size=(5, 20))[y]
    return X + 5.0


# (seed, parameters, ranking, index of the chosen threshold), computed at commit 9b10018
# fmt: off
PINNED = [
    (0, {}, [7, 0, 31, 32, 30, 5, 13, 2, 10, 4, 3, 12, 28, 14, 20, 24, 6, 36, 16, 15, 1, 11, 26, 21, 29, 19, 23, 17, 39, 27, 33, 25, 37, 22, 35, 38, 9, 8, 18, 34], 93),  # noqa: E501
    (1, {}, [22, 0, 32, 31, 30, 27, 7, 24, 15, 5, 20, 3, 35, 6, 9, 14, 26, 2, 19, 23, 18, 25, 21, 36, 13, 38, 37, 12, 11, 4, 1, 8, 10, 16, 17, 28, 29, 33, 34, 39], 93),  # noqa: E501
    (2, {"similarity": "correlation"}, [0, 30, 15, 32, 31, 6, 38, 16, 13, 4, 10, 33, 3, 20, 21, 39, 7, 5, 26, 14, 8, 28, 35, 22, 19, 17, 25, 24, 34, 2, 11, 1, 12, 27, 23, 36, 29, 9, 18, 37], 86),  # noqa: E501
    (3, {"thresholds": "linear_median"}, [32, 0, 30, 5, 31, 1, 7, 3, 2, 6, 4, 37, 10, 11, 8, 39, 23, 27, 12, 20, 29, 22, 19, 34, 24, 35, 16, 13, 17, 36, 18, 33, 26, 15, 21, 38, 14, 9, 25, 28], 81),  # noqa: E501
    (4, {"thresholds": "quantile", "n_thresholds": 30}, [31, 0, 32, 3, 30, 12, 4, 5, 16, 27, 2, 28, 13, 23, 17, 33, 26, 21, 6, 10, 14, 18, 22, 36, 37, 34, 39, 25, 24, 8, 38, 35, 1, 20, 29, 19, 15, 7, 9, 11], 2),  # noqa: E501
    (5, {"similarity": "euclidean"}, [9, 14, 11, 5, 6, 0, 30, 32, 31, 18, 26, 34, 27, 13, 2, 8, 22, 38, 15, 10, 1, 24, 3, 12, 29, 28, 7, 4, 17, 19, 35, 23, 21, 39, 25, 33, 20, 16, 36, 37], 84),  # noqa: E501
    (6, {"thresholds": "linear_mean"}, [2, 1, 4, 3, 6, 31, 30, 0, 7, 5, 32, 8, 13, 20, 10, 27, 11, 25, 26, 33, 17, 39, 23, 38, 29, 28, 15, 35, 37, 36, 9, 22, 24, 12, 34, 21, 16, 14, 18, 19], 85),  # noqa: E501
    (7, {"n_thresholds": 400}, [3, 0, 30, 31, 6, 32, 1, 4, 38, 5, 2, 13, 39, 35, 7, 33, 24, 29, 9, 36, 12, 27, 37, 23, 14, 10, 22, 26, 20, 21, 28, 11, 25, 19, 34, 18, 15, 8, 16, 17], 379),  # noqa: E501
]
# fmt: on


@pytest.mark.parametrize(("seed", "params", "ranking", "chosen"), PINNED)
def test_rankings_pinned_from_the_previous_code(seed, params, ranking, chosen):
    est = FRANeRanker(**params).fit(pin_data(seed))
    assert est.ranking_.tolist() == ranking
    assert est.threshold_ == est.thresholds_[chosen]


def _assert_same_as_reference(X, **params):
    old = _reference_module().FRANeRanker(**params).fit(X)
    new = FRANeRanker(**params).fit(X)
    np.testing.assert_array_equal(new.ranking_, old.ranking_)
    np.testing.assert_allclose(new.thresholds_, old.thresholds_, rtol=1e-12)
    assert new.threshold_ == pytest.approx(old.threshold_, rel=1e-12)
    np.testing.assert_allclose(new.scores_, old.scores_, rtol=1e-9, atol=0)
    np.testing.assert_array_equal(new.average_degrees_, old.average_degrees_)
    # graphs the bound rules out have no RQH; every other one is the reference's
    done = ~np.isnan(new.rqh_)
    np.testing.assert_allclose(new.rqh_[done], old.rqh_[done], rtol=1e-9)
    assert np.all(np.isnan(old.rqh_[~done]) <= (new.average_degrees_[~done] < new.min_edges))
    # the same edges; their weights are similarities, whose last bits follow how the
    # BLAS kernel blocks the product (tiled here, one product there): a few ulps apart
    # on some CPUs, so they are compared within a tolerance
    a, b = new.graph_.tocsr().sorted_indices(), old.graph_.tocsr().sorted_indices()
    np.testing.assert_array_equal(a.indptr, b.indptr)
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_allclose(a.data, b.data, rtol=1e-12, atol=0)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"similarity": "correlation"},
        {"thresholds": "linear_median"},
        {"thresholds": "quantile", "n_thresholds": 50},
        {"thresholds": "linear"},
        {"similarity": "cityblock", "feature_scaling": "norm"},
    ],
)
def test_same_as_the_previous_code_at_200_x_300(params):
    _assert_same_as_reference(wide_data(200, 300, seed=1), **params)


@pytest.mark.slow
@pytest.mark.parametrize("params", [{}, {"similarity": "correlation"}])
def test_same_as_the_previous_code_at_200_x_2000(params):
    _assert_same_as_reference(wide_data(200, 2000), **params)
