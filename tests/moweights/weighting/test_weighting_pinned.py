"""MOWeighting's Pareto fronts are those of the code before the vectorised NSGA-II loop.

The loop that replaced pymoo's per-individual bookkeeping (issue 39, item 3) must change
the cost only. The rankings, front sizes and objective sums below were computed with
pymoo's ``minimize`` and ``NSGA2`` (the tree before the change); the same seed must give
the same front. ``test_nsga2.py`` compares the loop with pymoo's on more settings, in
the same process.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer

from moweights.data import make_weighting_benchmark
from moweights.weighting import MOWeighting
from rankers.exceptions import ConstantFeatureWarning


def _wide():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, size=120)
    X = rng.normal(size=(120, 60))
    X[:, :6] += 1.5 * y[:, None]
    return X, y


def _data(name):
    if name == "breast_cancer":
        return load_breast_cancer(return_X_y=True)
    if name == "benchmark":
        return make_weighting_benchmark(100, random_state=0)
    return _wide()


# (data, parameters, number of Pareto solutions, ranking, column sums of the front's
# objectives, hypervolume of the last generation), computed with pymoo's NSGA2 loop
# fmt: off
PINNED = [
    # the default demo's weighting (examples/config.toml)
    ("breast_cancer", {"objectives": ["C1", "-C2", "-C3"], "pop_size": 40, "n_gen": 100, "random_state": 0},  # noqa: E501
     40, [22, 27, 7, 6, 0, 2, 20, 10, 3, 19, 23, 25, 26, 5, 24, 14, 12, 4, 1, 11, 28, 29, 16, 9, 18, 15, 13, 8, 17, 21],  # noqa: E501
     [8.498948056633763, -11.075541224972259, -8.985016553120463], 0.005181972617000848),
    ("benchmark", {"objectives": ["C4"], "pop_size": 12, "n_gen": 20, "random_state": 1},
     1, [0, 4, 1, 3, 8, 2, 9, 5, 6, 7], [0.39008980989456177], 0.22216324210166927),
    ("benchmark", {"objectives": ["C1", "-C2", "-C3", "C4"], "pop_size": 11, "termination": ("n_eval", 300),  # noqa: E501
                   "mutation_prob": 0.2, "crossover_prob": 0.7, "random_state": 2},
     11, [0, 1, 4, 3, 5, 8, 2, 9, 6, 7],
     [1.183991118504727, -5.518052651861767, -6.96895001496601, 5.565131515264511], 0.024573138626702993),  # noqa: E501
    ("wide", {"objectives": ["C1", "-C2", "-C3"], "seed_rankers": "anova_f", "preselect": 20, "pop_size": 12, "n_gen": 15, "random_state": 3},  # noqa: E501
     12, [5, 3, 4, 1, 41, 2, 0, 54, 27, 43, 49, 30, 46, 11, 33, 47, 35, 48, 12, 38, 56, 23, 20, 31, 40, 8, 28, 7, 50, 19, 16, 53, 6, 51, 25, 10, 37, 17, 32, 44, 14, 22, 42, 9, 55, 52, 58, 13, 18, 21, 34, 45, 15, 24, 57, 29, 39, 26, 36, 59],  # noqa: E501
     [4.210489098560444, -2.791307392628636, -3.289459761924449], 0.007260134374742191),
]
# fmt: on


@pytest.mark.parametrize(("data", "params", "n_front", "ranking", "sums", "hv"), PINNED)
def test_same_front_as_pymoos_loop(data, params, n_front, ranking, sums, hv):
    X, y = _data(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantFeatureWarning)
        est = MOWeighting(**params).fit(X, y)
    assert est.n_solutions_ == n_front
    assert est.ranking_.tolist() == ranking
    # C4 is single precision: its sums agree to its ~1e-7; C1-C3 to rounding
    np.testing.assert_allclose(est.pareto_objectives_.sum(axis=0), sums, rtol=1e-6)
    np.testing.assert_allclose(est.history_["hypervolume"].iloc[-1], hv, rtol=1e-6)
