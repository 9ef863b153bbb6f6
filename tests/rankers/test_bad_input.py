"""The bad-input rules of docs/design.md ("Bad input"), row by row, for every ranker."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import rankers
from rankers.exceptions import ConstantFeatureWarning, InvalidInputError
from rankers.validation import check_X, check_y

NAMES = list(rankers.available()["name"])


def _data(m=40, n=5, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], m // 2)
    X = rng.normal(size=(m, n)) + 0.8 * y[:, None] * (np.arange(n) < 2)
    return pd.DataFrame(X, columns=[f"g{i}" for i in range(n)]), y


def _ranker(name):
    est = rankers.get(name)
    est.set_params(**type(est)._contract_test_params)
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    return est


# row 1: NaN / inf -> InvalidInputError naming the columns
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_and_inf_are_named(name, bad):
    X, y = _data()
    X.iloc[3, 2] = bad
    X.iloc[7, 4] = bad
    with pytest.raises(InvalidInputError, match=r"NaN or infinite values in columns 'g2', 'g4'"):
        _ranker(name).fit(X, y)
    with pytest.raises(InvalidInputError, match=r"'x2', 'x4'"):
        _ranker(name).fit(X.to_numpy(), y)


# row 2: constant features -> lowest score and a warning, never a division by zero
@pytest.mark.parametrize("name", NAMES)
def test_constant_features_score_lowest_with_warning(name):
    X, y = _data()
    X["g1"] = 3.0
    X["g3"] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no 0/0 anywhere
        with pytest.warns(ConstantFeatureWarning, match="g1, g3"):
            est = _ranker(name).fit(X, y)
    assert np.isfinite(est.scores_).all()
    assert est.constant_features_.tolist() == [False, True, False, True, False]
    informative = est.scores_[[0, 2, 4]]
    assert est.scores_[1] <= informative.min()
    assert est.scores_[3] <= informative.min()
    assert set(est.ranking_[-2:].tolist()) == {1, 3}


@pytest.mark.parametrize("name", NAMES)
def test_all_constant_features_give_a_defined_ranking(name):
    X = np.ones((10, 3))
    y = np.repeat([0, 1], 5)
    with pytest.warns(ConstantFeatureWarning):
        est = _ranker(name).fit(X, y)
    assert est.ranking_.tolist() == [0, 1, 2]
    assert np.isfinite(est.scores_).all()


# row 3: non-numeric columns -> error naming them
@pytest.mark.parametrize("name", NAMES)
def test_non_numeric_columns_are_named(name):
    X, y = _data()
    X["colour"] = ["red", "blue"] * 20
    X["when"] = pd.Timestamp("2024-01-01")
    with pytest.raises(InvalidInputError, match=r"non-numeric columns: 'colour', 'when'"):
        _ranker(name).fit(X, y)
    arr = X.drop(columns="when").to_numpy(dtype=object)
    with pytest.raises(InvalidInputError, match=r"non-numeric columns: 'x5'"):
        _ranker(name).fit(arr, y)


# row 4: fewer than 2 samples or features -> error
@pytest.mark.parametrize("name", NAMES)
def test_too_few_samples_or_features(name):
    X, y = _data()
    with pytest.raises(InvalidInputError, match=r"1 sample\(s\)"):
        _ranker(name).fit(X.iloc[:1], y[:1])
    with pytest.raises(InvalidInputError, match=r"1 feature\(s\)"):
        _ranker(name).fit(X[["g0"]], y)
    with pytest.raises(InvalidInputError, match="must be 2-D"):
        _ranker(name).fit(X["g0"].to_numpy(), y)


# row 5: sparse input -> accepted where accepts_sparse, else converted (with a warning)
@pytest.mark.parametrize("name", NAMES)
def test_sparse_input(name):
    X, y = _data()
    X = X.abs().where(X.abs() > 0.5, 0.0)
    dense = _ranker(name).fit(X.to_numpy(), y).scores_
    est = _ranker(name)
    if est.accepts_sparse:
        sparse_scores = est.fit(sp.csr_matrix(X.to_numpy()), y).scores_
    else:
        with pytest.warns(UserWarning, match="sparse"):
            sparse_scores = est.fit(sp.csr_matrix(X.to_numpy()), y).scores_
    np.testing.assert_allclose(sparse_scores, dense, rtol=1e-10, atol=1e-12)


# row 6: the caller's arrays and frames are never modified
@pytest.mark.parametrize("name", NAMES)
def test_inputs_never_modified(name):
    X, y = _data()
    X_before = X.copy(deep=True)
    arr = X.to_numpy().copy()
    arr_before = arr.copy()
    y_before = y.copy()
    est = _ranker(name).set_params(k=2)
    est.fit(X, y)
    est.transform(X)
    est.fit(arr, y)
    est.fit_transform(arr, y)
    pd.testing.assert_frame_equal(X, X_before)
    np.testing.assert_array_equal(arr, arr_before)
    np.testing.assert_array_equal(y, y_before)
    assert arr.flags.writeable  # we made a read-only *view*, not the caller's array


# row 7: values of extreme magnitude -> the ranking at unit scale (for a ranker that does
# not depend on one global factor), or our error naming the scale; never a raw error
# (the whole sweep, 1e-300 ... 1e300, and the units of the scores: test_scale.py)
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("c", [1e-300, 1e300])
def test_extreme_magnitudes(name, c):
    X, y = _data()
    X = X + 5.0  # positive: chi2's count statistic needs it
    if rankers.get_class(name).target_kind == "regression":
        y = X["g0"].to_numpy() + np.linspace(0.0, 0.1, 40)
    ref = _ranker(name).fit(X, y)
    try:
        est = _ranker(name).fit(X * c, y)
    except InvalidInputError as exc:
        assert "scale of" in str(exc)
        return
    assert np.isfinite(est.scores_).all()
    if ref._score_units() is not None:
        assert est.ranking_.tolist() == ref.ranking_.tolist()


# the target vector, for supervised rankers
@pytest.mark.parametrize("name", [n for n in NAMES if rankers.get_class(n).requires_y])
def test_bad_targets(name):
    X, y = _data()
    with pytest.raises(InvalidInputError, match="requires y to be passed"):
        _ranker(name).fit(X)
    with pytest.raises(InvalidInputError, match="39 values but X has 40"):
        _ranker(name).fit(X, y[:-1])
    y_nan = y.astype(float)
    y_nan[5] = np.nan
    with pytest.raises(InvalidInputError, match="rows 5"):
        _ranker(name).fit(X, y_nan)
    if rankers.get_class(name).target_kind == "classification":
        with pytest.raises(InvalidInputError, match="single class"):
            _ranker(name).fit(X, np.zeros(40))


def test_string_labels_are_accepted():
    X, y = _data()
    labels = np.where(y == 1, "sick", "healthy")
    a = rankers.get("info_gain").fit(X, labels).scores_
    b = rankers.get("info_gain").fit(X, y).scores_
    np.testing.assert_allclose(a, b)


def test_check_X_returns_read_only_view():
    arr = np.arange(12, dtype=float).reshape(4, 3)
    out, names = check_X(arr)
    assert names is None
    assert not out.flags.writeable
    assert arr.flags.writeable
    with pytest.raises(ValueError):
        out[0, 0] = 1.0


def test_check_X_names_repeated_and_non_string_columns():
    df = pd.DataFrame(np.ones((3, 2)), columns=["a", "a"])
    with pytest.raises(InvalidInputError, match="repeat: 'a'"):
        check_X(df)
    df = pd.DataFrame(np.ones((3, 2)), columns=["a", 3.5])
    with pytest.raises(InvalidInputError, match="must all be strings"):
        check_X(df)


def test_check_y_codes_labels():
    np.testing.assert_array_equal(check_y(["b", "a", "b"], 3), [1, 0, 1])
    with pytest.raises(InvalidInputError, match="must be numeric"):
        check_y(["a", "b"], 2, kind="regression")


# ---------------------------------------------------------------------------------------
# Targets of the wrong kind (type_of_target names the kind; the registry names the
# rankers that take it), too few samples, and memory checked before it is spent.
_KIND = {n: rankers.get_class(n).target_kind for n in NAMES}
_SUPERVISED = [n for n in NAMES if rankers.get_class(n).requires_y]
_FOR_CLASSES = [n for n in _SUPERVISED if _KIND[n] == "classification"]
_FOR_QUANTITIES = [n for n in _SUPERVISED if _KIND[n] == "regression"]


def _registered(*kinds):
    table = rankers.available()
    return ", ".join(table.loc[table["requires_y"] & table["target_kind"].isin(kinds), "name"])


@pytest.mark.parametrize("name", _FOR_CLASSES)
def test_continuous_target_is_refused_naming_the_rankers_that_take_it(name):
    X, _ = _data()
    y = np.random.default_rng(1).normal(size=40)  # was taken as 40 classes of one sample
    expected = _registered("regression", "both")
    assert "rrelieff" in expected and "random_forest" in expected
    with pytest.raises(InvalidInputError) as info:
        _ranker(name).fit(X, y)
    msg = str(info.value)
    assert "type_of_target: 'continuous'" in msg
    assert f"Registered rankers for a continuous target: {expected}." in msg


def test_check_y_without_a_ranker_names_the_kind_only():
    # e.g. an evaluation's classifier: the kind is named, no ranker is suggested
    with pytest.raises(InvalidInputError, match=r"'continuous'.*needs class labels") as info:
        check_y(np.linspace(0.5, 9.5, 10), 10, kind="classification")
    assert "Registered rankers" not in str(info.value)


@pytest.mark.parametrize("name", _FOR_CLASSES)
def test_one_class_per_sample_is_not_a_class_target(name):
    X, _ = _data()
    with pytest.raises(InvalidInputError, match=r"40 classes among 40 samples.*'multiclass'"):
        _ranker(name).fit(X, np.arange(40))  # a quantity: numeric, never repeated
    ids = np.array([f"patient-{i}" for i in range(40)])
    with pytest.raises(InvalidInputError, match="not an identifier"):
        _ranker(name).fit(X, ids)
    # a few lonely classes among repeated ones stay a class target (with a warning)
    y = np.r_[np.repeat([0, 1], 18), [2, 3, 4, 5]]
    with pytest.warns(rankers.exceptions.FewSamplesWarning, match="fewer than 5 samples"):
        _ranker(name).fit(X, y)


def test_both_kinds_ranker_reads_a_numeric_identifier_as_a_quantity():
    X, _ = _data()
    est = _ranker("random_forest").fit(X, np.arange(40) * 1000)
    assert est.task_ == "regression"
    assert _ranker("random_forest").fit(X, np.repeat([3, 7], 20)).task_ == "classification"


@pytest.mark.parametrize("name", _FOR_QUANTITIES)
def test_class_labels_are_refused_by_regression_rankers(name):
    X, y = _data()
    labels = np.where(y == 1, "sick", "healthy")
    with pytest.raises(InvalidInputError) as info:
        _ranker(name).fit(X, labels)
    msg = str(info.value)
    assert "must be numeric" in msg and "type_of_target: 'binary'" in msg
    assert f"Registered rankers for class labels: {_registered('classification', 'both')}" in msg
    _ranker(name).fit(X, y)  # numbers are quantities, 0/1 included


@pytest.mark.parametrize("name", _SUPERVISED)
@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (lambda y: np.column_stack([y, y + 0.5]), "continuous-multioutput"),
        (lambda y: np.column_stack([y, 1 - y, y]).astype(int), "multilabel-indicator"),
        (lambda y: pd.DataFrame({"a": y, "b": y + 0.5}), "continuous-multioutput"),
    ],
)
def test_multi_output_target_is_refused_with_its_kind(name, make, kind):
    X, y = _data()
    with pytest.raises(InvalidInputError, match=f"type_of_target: '{kind}'.*one target column"):
        _ranker(name).fit(X, make(y))


@pytest.mark.parametrize("name", NAMES)
def test_few_samples_warn(name):
    X, y = _data(m=8)
    with pytest.warns(rankers.exceptions.FewSamplesWarning, match="only 8 samples"):
        _ranker(name).fit(X, y)
    X, y = _data(m=40)
    with warnings.catch_warnings():
        warnings.simplefilter("error", rankers.exceptions.FewSamplesWarning)
        _ranker(name).fit(X, y)


@pytest.mark.parametrize("name", [n for n in _SUPERVISED if _KIND[n] != "regression"])
def test_a_tiny_class_warns_naming_it(name):
    X, _ = _data()
    y = np.array(["common"] * 37 + ["rare"] * 3)
    with pytest.warns(rankers.exceptions.FewSamplesWarning, match=r"'rare' \(3\)"):
        _ranker(name).fit(X, y)


# quadratic steps: (parameters, a shape whose n² step needs far more than 20 MB, the
# parameter the error must name)
_QUADRATIC = {
    "frane": ({}, (100, 2000), "thresholds='linear_median'"),
    "distance_rank": ({"max_samples": None}, (1500, 5), "max_samples"),
    "spec": ({"style": 3}, (1500, 5), "affinity='knn'"),
    "mo_weighting": ({"objectives": ("C4",), "max_pairs": None}, (1500, 5), "max_pairs"),
}


@pytest.mark.parametrize("name", list(_QUADRATIC))
def test_quadratic_step_stops_before_allocating_with_our_error(name, monkeypatch):
    params, (m, n), option = _QUADRATIC[name]
    X = np.random.default_rng(0).normal(size=(m, n))
    monkeypatch.setenv("MOWEIGHTS_MAX_MEMORY", "20M")
    expected = r"needs about [\d.]+ [MG]B of memory, but only 20 MB is available"
    with pytest.raises(rankers.exceptions.NotEnoughMemoryError, match=expected) as info:
        _ranker(name).set_params(**params).fit(X)
    assert isinstance(info.value, MemoryError)
    assert option in str(info.value)
    assert info.value.needed > 20e6


@pytest.mark.parametrize("name", list(_QUADRATIC))
def test_quadratic_step_below_the_cap_runs_unchanged(name, monkeypatch):
    params = _QUADRATIC[name][0]
    X, y = _data()
    free = _ranker(name).set_params(**params).fit(X, y).scores_
    monkeypatch.setenv("MOWEIGHTS_MAX_MEMORY", "20M")
    capped = _ranker(name).set_params(**params).fit(X, y).scores_
    np.testing.assert_array_equal(capped, free)


# row 7b: columns of extreme magnitudes side by side (1e300 next to 1e-300): no common
# power of two holds both, so a ranker that rescales X as a whole names the columns it
# would lose; one that is exact per column ranks them (found by
# benchmarks/robustness/bad_input_matrix.py)
@pytest.mark.parametrize("name", NAMES)
def test_columns_of_opposite_extreme_magnitudes(name):
    X, y = _data()
    X = X + 5.0
    if rankers.get_class(name).target_kind == "regression":
        y = X["g0"].to_numpy() + np.linspace(0.0, 0.1, 40)
    X["g3"] *= 1e300
    X["g4"] *= 1e-300
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = _ranker(name).fit(X, y)
    except InvalidInputError as exc:
        assert "scale of" in str(exc)
        return
    assert np.isfinite(est.scores_).all()
    assert sorted(est.ranking_.tolist()) == list(range(5))
