"""The units of each feature: x_j -> c_j·x_j, one factor per feature, for every registered
ranker (the ``feature_scale_invariant`` tag).

A ranker whose tag says its ranking does not read the features' units gives the same
ranking whatever each feature is multiplied by; one whose tag says it does reorders the
features when one of them is blown up (otherwise the tag would send users a needless
note). The factors are powers of two, so the rescaled data are exact and any change of
the ranking comes from the method, not from rounding. Parametrised over the registry, so
a ranker added later is swept too.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import rankers
from rankers.base import BaseRanker

NAMES = list(rankers.available()["name"])

# parameters that switch a ranker's per-feature scaling on or off
VARIANTS = [
    ("variance", {"scale": "minmax"}),
    ("laplacian", {"scale": "minmax"}),
    ("compactness", {"scale": None}),
    ("distance_rank", {"scale": None}),
    ("svm_rfe", {"scaling": None}),
    ("svm_rfe", {"scaling": "standard"}),
    ("chi2", {"method": "sklearn"}),
    ("estimator_importance", {"standardize": False}),
]


def _data(target_kind: str, seed: int = 0, m: int = 60, n: int = 6):
    """x0 and x1 carry the class (or the regression target); the rest are noise of growing
    spread. All values positive (chi2's count statistic needs it)."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], m // 2)
    X = rng.normal(size=(m, n)) * np.linspace(1.0, 2.0, n)
    X[:, 0] += 3.0 * y
    X[:, 1] += 2.0 * y
    X += 20.0
    if target_kind == "regression":
        return X, X[:, 0] + X[:, 1] + 0.1 * rng.normal(size=m)
    return X, y


def _ranker(name: str, **params) -> BaseRanker:
    est = rankers.get(name)
    est.set_params(**type(est)._contract_test_params)
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    return est.set_params(**params)


def _target_kind(name: str) -> str:
    return "regression" if rankers.get_class(name).target_kind == "regression" else "classes"


def _fit(est, X, y) -> list[int]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y).ranking_.tolist()


def _sweep(name: str, params: dict) -> None:
    X, y = _data(_target_kind(name))
    est = _ranker(name, **params)
    reference = _fit(est, X, y)
    if rankers.ranker_tags(est).feature_scale_invariant:
        for seed in range(3):
            powers = np.random.default_rng(seed).integers(-8, 9, size=X.shape[1])
            rescaled = np.ldexp(X, powers)  # exact: x * 2**k
            assert _fit(_ranker(name, **params), rescaled, y) == reference, f"2**{powers}"
    else:
        # a noise feature in units 2**12 larger, the signal in units 2**12 smaller
        powers = np.zeros(X.shape[1], dtype=np.int64)
        powers[[0, 1]], powers[-1] = -12, 12
        moved = _fit(_ranker(name, **params), np.ldexp(X, powers), y)
        assert moved != reference, "the tag says units matter, but the ranking ignored them"


@pytest.mark.parametrize("name", NAMES)
def test_the_feature_scale_tag_holds(name):
    _sweep(name, {})


@pytest.mark.parametrize(("name", "params"), VARIANTS, ids=[f"{n}-{p}" for n, p in VARIANTS])
def test_the_feature_scale_tag_follows_the_parameters(name, params):
    if name not in NAMES:
        pytest.skip(f"{name} is not registered")
    _sweep(name, params)


def test_a_plugin_that_says_nothing_reads_units():
    from sklearn.feature_selection import SelectKBest

    assert rankers.ranker_tags(SelectKBest()).feature_scale_invariant is False
