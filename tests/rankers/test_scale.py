"""The scale of the data: X -> c·X over c = 1e-300 ... 1e300, for every registered ranker.

A ranker whose ranking does not depend on one global factor (``scale_invariant``) gives the
same ranking at every c, or refuses with our error naming the scale; one whose results do
depend on it (NDFS, fixed kernel widths ...) never fails with a raw numpy/scikit-learn
error. Parametrised over the registry, so a ranker added later is swept too.
"""

from __future__ import annotations

import importlib.metadata
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import rankers
from rankers.base import BaseRanker
from rankers.exceptions import InvalidInputError
from rankers.preprocessing import standardise

NAMES = list(rankers.available()["name"])
SCALES = (1e-300, 1e-150, 1e-8, 1.0, 1e8, 1e150, 1e300)

# non-default parameters that change how a ranker depends on the scale (its units, or a
# fixed width or penalty in the units of X)
VARIANTS = [
    ("variance", {"scale": "minmax"}),
    ("chi2", {"method": "sklearn"}),
    ("laplacian", {"t": 1.0}),
    ("laplacian", {"t": 1.0, "scale": "minmax"}),
    ("spec", {"gamma": 0.5}),
    ("spec", {"style": 3}),
    ("spec", {"style": 3, "affinity": "knn", "gamma": 0.5}),
    ("mcfs", {"metric": "euclidean", "weight_mode": "heat"}),
    ("mcfs", {"metric": "euclidean", "weight_mode": "heat", "t": 1.0}),
    ("compactness", {"scale": None}),
    ("distance_rank", {"scale": None}),
    ("frane", {"similarity": "euclidean", "feature_scaling": "norm"}),
    ("svm_rfe", {"scaling": None}),
    ("svm_rfe", {"scaling": "standard"}),
    ("random_forest", {"importance": "permutation", "n_estimators": 20}),
]


def _data(target_kind: str, seed: int = 0, m: int = 60, n: int = 5):
    """x0 carries two well-separated groups (and the class, or the regression target); the
    other features are noise. All values are positive (chi2's count statistic needs it)."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], m // 2)
    X = rng.normal(size=(m, n))
    X[:, 0] += 4.0 * y
    X += 10.0
    if target_kind == "regression":
        return X, X[:, 0] + 0.1 * rng.normal(size=m)
    return X, y


def _ranker(name: str, **params) -> BaseRanker:
    est = rankers.get(name)
    est.set_params(**type(est)._contract_test_params)
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    return est.set_params(**params)


def _fit_or_refuse(est: BaseRanker, X, y):
    """The fitted ranker, or None when it refused with our error naming the scale.

    Any other exception (a raw numpy / scikit-learn error) fails the test, and so does a
    numpy overflow or invalid-value warning: the ranker computed with values it lost.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        try:
            est.fit(X, y)
        except InvalidInputError as exc:
            assert "scale" in str(exc), str(exc)
            return None
    assert np.isfinite(est.scores_).all()
    return est


def _target_kind(name: str) -> str:
    return "regression" if rankers.get_class(name).target_kind == "regression" else "classes"


def _sweep(name: str, params: dict, *, sparse: bool = False):
    X, y = _data(_target_kind(name))
    reference = _fit_or_refuse(_ranker(name, **params), X, y)
    assert reference is not None, "a ranker must not refuse data of unit scale"
    invariant = reference._score_units() is not None
    for c in SCALES:
        Xc = X * c
        if not np.isfinite(Xc).all():
            continue
        Xin = sp.csr_matrix(Xc) if sparse else Xc
        est = _fit_or_refuse(_ranker(name, **params), Xin, y)
        if est is None or not invariant:
            continue
        assert est.ranking_.tolist() == reference.ranking_.tolist(), f"c={c:g}"
        # scores follow c**p exactly in exact arithmetic; a power of two is applied
        # internally, so only the rounding of c·X itself separates them
        expected = reference.scores_ * float(c) ** est._score_units()
        np.testing.assert_allclose(est.scores_, expected, rtol=1e-9, err_msg=f"c={c:g}")


@pytest.mark.parametrize("name", NAMES)
def test_global_rescale_keeps_the_ranking_or_refuses(name):
    _sweep(name, {})


@pytest.mark.parametrize(("name", "params"), VARIANTS, ids=[f"{n}-{p}" for n, p in VARIANTS])
def test_global_rescale_with_scale_dependent_parameters(name, params):
    if name not in NAMES:
        pytest.skip(f"{name} is not registered")
    _sweep(name, params)


@pytest.mark.parametrize("name", [n for n in NAMES if rankers.get_class(n).accepts_sparse])
def test_global_rescale_of_sparse_input(name):
    _sweep(name, {}, sparse=True)


# rankers whose ranking does not depend on the units of any single feature (ranks,
# range-normalised diffs, correlations, z-scores, min-max scaling)
PER_FEATURE_INVARIANT = {
    "agnos_s", "chi2", "compactness", "distance_rank", "frane", "genie3", "info_gain",
    "mo_weighting", "random_forest", "relieff", "rf_score", "rrelieff", "svm_rfe", "urelief",
    "anova_f", "fisher_score", "t_test", "estimator_importance",
}  # fmt: skip


@pytest.mark.parametrize(
    ("name", "params"),
    [(name, {}) for name in NAMES] + [("svm_rfe", {"scaling": "standard"})],
    ids=[*NAMES, "svm_rfe-standard"],
)
@pytest.mark.parametrize("unit", [1e-300, 1e300])
def test_one_feature_in_extreme_units(name, params, unit):
    # beside features of unit order: the global rescale cannot help, each ranker must
    # cope (or refuse with our error); those that ignore units keep their ranking
    X, y = _data(_target_kind(name))
    reference = _fit_or_refuse(_ranker(name, **params), X, y)
    X[:, 3] *= unit
    est = _fit_or_refuse(_ranker(name, **params), X, y)
    if est is not None and name in PER_FEATURE_INVARIANT:
        assert est.ranking_.tolist() == reference.ranking_.tolist()


@pytest.mark.parametrize(
    ("name", "attribute", "power"),
    [("laplacian", "t_", 2), ("spec", "gamma_", -2), ("mcfs", "coef_", -1)],
)
@pytest.mark.parametrize("c", [1e-150, 1e-8, 1e8, 1e150])
def test_fitted_attributes_are_in_the_callers_units(name, attribute, power, c):
    # the ranker computes on X divided by a power of two; what it reports carries the
    # units of the X it was given
    X, _ = _data("unsupervised")
    ref = getattr(_ranker(name).fit(X), attribute)
    got = getattr(_ranker(name).fit(X * c), attribute)
    np.testing.assert_allclose(got, np.asarray(ref) * c**power, rtol=1e-9, atol=0)


@pytest.mark.parametrize("name", ["ndfs", "mcfs"])
def test_scale_dependence_is_documented(name):
    doc = rankers.get_class(name).__doc__
    assert "scale" in doc and "standardi" in doc


def test_every_built_in_ranker_declares_its_scale_behaviour():
    # a third-party ranker that says nothing is left as it is (scale_invariant = False);
    # each of ours says which it is
    ours = {
        ep.name
        for ep in importlib.metadata.entry_points(group="moweights.rankers")
        if ep.value.split(".")[0] in {"rankers", "moweights"}
    }
    for name in sorted(ours & set(NAMES)):
        cls = rankers.get_class(name)
        declared = [k for k in cls.__mro__ if k is not BaseRanker and "scale_invariant" in vars(k)]
        assert declared, f"{name} does not declare scale_invariant"


# --------------------------------------------------- random forest (issue 15, item 6)
def _one_informative(task: str, seed: int = 1, m: int = 80):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 6))
    if task == "classification":
        y = (X[:, 0] > 0).astype(int)
    else:
        y = 2.0 * X[:, 0] + 0.05 * rng.normal(size=m)
    return X, y


@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("importance", ["impurity", "permutation"])
def test_random_forest_finds_a_feature_measured_in_tiny_units(task, importance):
    # scikit-learn's trees never split a feature whose values differ by less than 1e-7,
    # so the only informative feature, in units of 1e-8, used to rank last
    X, y = _one_informative(task)
    X[:, 0] *= 1e-8
    est = _ranker("random_forest", n_estimators=30, importance=importance).fit(X, y)
    assert est.ranking_[0] == 0
    # the whole data set in such units
    est = _ranker("random_forest", n_estimators=30, importance=importance).fit(X * 1e-8, y)
    assert est.ranking_[0] == 0


@pytest.mark.parametrize("c", [1e39, 1e300])
def test_random_forest_takes_values_beyond_float32(c):
    # scikit-learn casts X to float32 (largest 3.4e38) and used to raise a raw ValueError
    X, y = _one_informative("classification")
    ref = _ranker("random_forest", n_estimators=30).fit(X, y)
    est = _ranker("random_forest", n_estimators=30).fit(X * c, y)
    assert est.ranking_.tolist() == ref.ranking_.tolist()
    np.testing.assert_allclose(est.scores_, ref.scores_)


def test_standardise_is_unit_free_at_any_magnitude():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 3))
    Z = standardise(X)
    np.testing.assert_allclose(Z.mean(axis=0), 0.0, atol=1e-15)
    np.testing.assert_allclose(Z.std(axis=0), 1.0, rtol=1e-14)
    units = np.array([1e-300, 1e8, 1e300])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        np.testing.assert_allclose(standardise(X * units + 3.0 * units), Z, atol=1e-12)
