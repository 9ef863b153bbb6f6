"""FFA/RFA error curves, the expected random curve and the ECA (the error-curve paper, §3)."""

from __future__ import annotations

from itertools import combinations
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from joblib import parallel_config
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LinearRegression
from sklearn.metrics.pairwise import polynomial_kernel
from sklearn.model_selection import KFold, cross_val_score
from sklearn.naive_bayes import GaussianNB
from sklearn.tree import DecisionTreeClassifier

from aggregation.evaluation.error_curves import (
    WEIGHTINGS,
    curve_delta,
    curve_grid,
    default_estimator,
    eca,
    expected_curve,
    ffa_rfa,
    ffa_rfa_many,
    pool_random_curves,
    random_curves,
)
from aggregation.ranking import GenericRanking, Ranking
from rankers.exceptions import InvalidInputError, InvalidParameterError


def _curve(i, ffa, rfa):
    return pd.DataFrame({"i": i, "ffa": ffa, "rfa": rfa})


# hand-made curves: a is the better ranking (higher FFA, lower RFA) at sizes 1, 2, 4
A = _curve([1, 2, 4], [0.9, 0.8, 0.7], [0.5, 0.6, 0.7])
B = _curve([1, 2, 4], [0.6, 0.7, 0.7], [0.6, 0.8, 0.7])


def _target_data(m=60, seed=0):
    """f0 is the target itself; f1 a coin, f2 and f3 Gaussian noise."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, m)
    X = pd.DataFrame(
        {"f0": y, "f1": rng.integers(0, 2, m), "f2": rng.normal(size=m), "f3": rng.normal(size=m)}
    )
    return X, y


def _two_informative(m=90, seed=1):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, m)
    X = rng.normal(size=(m, 5))
    X[:, 0] += 2.0 * y
    X[:, 1] += 1.0 * y
    return pd.DataFrame(X, columns=[f"f{j}" for j in range(5)]), y


# ------------------------------------------------------------------ Eqs. 1-4 by hand
def test_weightings_match_equations_1_to_4_by_hand():
    # FFA deltas 0.3, 0.1, 0.0; RFA deltas -0.1, -0.2, 0.0; sizes 1, 2, 4
    hand = {
        "uniform": ((0.3 + 0.1 + 0) / 3, (-0.1 - 0.2 + 0) / 3),
        "inverse_size": ((0.3 / 1 + 0.1 / 2) / (1 + 1 / 2 + 1 / 4), (-0.1 - 0.2 / 2) / 1.75),
        "magnitude": ((0.09 + 0.01) / (0.3 + 0.1), (-0.01 - 0.04) / (0.1 + 0.2)),
        "inverse_size_magnitude": (
            (0.09 / 1 + 0.01 / 2) / (0.3 / 1 + 0.1 / 2),
            (-0.01 / 1 - 0.04 / 2) / (0.1 / 1 + 0.2 / 2),
        ),
    }
    for weighting, (ffa_d, rfa_d) in hand.items():
        assert curve_delta(A, B, curve="ffa", weighting=weighting) == pytest.approx(ffa_d)
        assert curve_delta(A, B, curve="rfa", weighting=weighting) == pytest.approx(rfa_d)
        assert eca(A, B, weighting=weighting) == pytest.approx((ffa_d - rfa_d) / 2)


def test_eca_sign_a_better_is_positive():
    for weighting in WEIGHTINGS:
        assert eca(A, B, weighting=weighting) > 0
        assert eca(B, A, weighting=weighting) < 0
    assert eca(A, "random") > 0


@settings(max_examples=40)
@given(
    st.lists(st.floats(0, 1), min_size=8, max_size=8),
    st.sampled_from(WEIGHTINGS),
)
def test_eca_is_antisymmetric_and_zero_on_itself(values, weighting):
    a = _curve([1, 2, 3, 4], values[:4], values[4:])
    b = _curve([1, 2, 3, 4], values[4:], values[:4])  # swapped: a's ffa becomes b's rfa
    assert eca(a, b, weighting=weighting) == pytest.approx(-eca(b, a, weighting=weighting))
    assert eca(a, a, weighting=weighting) == 0.0


def test_random_shortcut_equals_any_curve_with_equal_ffa_and_rfa():
    # §3.3: whatever the expected curve is, FFA_R = RFA_R cancels for delta-free weights
    expected = _curve([1, 2, 4], [0.55, 0.6, 0.7], [0.55, 0.6, 0.7])
    for weighting in ("uniform", "inverse_size"):
        assert eca(A, "random", weighting=weighting) == pytest.approx(
            eca(A, expected, weighting=weighting), abs=1e-15
        )
    # the paper's closed form: sum_i (FFA(i) - RFA(i)) / (2n)
    assert eca(A, "random") == pytest.approx((0.4 + 0.2 + 0.0) / 3 / 2)


# ------------------------------------------------------------------ the curves
def test_ffa_of_the_target_feature_is_perfect():
    X, y = _target_data()
    good = ffa_rfa(["f0", "f1", "f2", "f3"], X, y, cv=3, random_state=0)
    assert good["i"].tolist() == [1, 2, 3, 4]
    assert good.loc[0, "ffa"] == 1.0
    assert good.loc[0, "ffa_std"] == 0.0
    assert good.loc[0, "rfa"] < 0.75  # a noise column alone is near chance
    worst_last = ffa_rfa(["f1", "f2", "f3", "f0"], X, y, cv=3, random_state=0)
    assert worst_last.loc[0, "rfa"] == 1.0
    assert eca(good, worst_last) > 0.2


def test_a_regressor_gets_r2_on_unstratified_folds():
    X, _ = _two_informative(m=40)
    y = 3.0 * X["f2"] - 1.0
    curve = ffa_rfa(["f2", "f0", "f1", "f3", "f4"], X, y, cv=4, estimator=LinearRegression())
    assert curve.attrs["scoring"] == "r2"
    assert curve.loc[0, "ffa"] == pytest.approx(1.0)  # f2 alone explains y exactly
    assert curve.loc[0, "rfa"] < 0.2


def test_curves_equal_an_independent_cross_validation():
    X, y = _two_informative()
    splitter = KFold(3, shuffle=True, random_state=4)
    order = ["f1", "f3", "f0", "f4", "f2"]
    curve = ffa_rfa(order, X, y, cv=splitter, grid=[1, 3, 5])
    for row, i in enumerate([1, 3, 5]):
        top = cross_val_score(default_estimator(), X[order[:i]], y, cv=splitter)
        bottom = cross_val_score(default_estimator(), X[order[-i:]], y, cv=splitter)
        assert curve.loc[row, "ffa"] == pytest.approx(top.mean())
        assert curve.loc[row, "rfa"] == pytest.approx(bottom.mean())
        assert curve.loc[row, "ffa_std"] == pytest.approx(top.std(ddof=1))
    assert curve.loc[2, "ffa"] == curve.loc[2, "rfa"]  # S^n = S_n
    assert curve.attrs["scoring"] == "accuracy" and curve.attrs["n_folds"] == 3


def test_ranking_kinds_and_indices_give_the_same_curve():
    X, y = _two_informative()
    order = ["f0", "f1", "f2", "f3", "f4"]
    by_name = ffa_rfa(order, X, y, cv=3, random_state=2, estimator=GaussianNB())
    by_index = ffa_rfa([0, 1, 2, 3, 4], X, y, cv=3, random_state=2, estimator=GaussianNB())
    ranking = Ranking.from_order(order)
    by_ranking = ffa_rfa(ranking, X, y, cv=3, random_state=2, estimator=GaussianNB())
    generic = GenericRanking([[n] for n in order])
    by_generic = ffa_rfa(generic, X, y, cv=3, random_state=2, estimator=GaussianNB())
    pd.testing.assert_frame_equal(by_name, by_index)
    pd.testing.assert_frame_equal(by_name, by_ranking, check_like=True)
    pd.testing.assert_frame_equal(by_name, by_generic)


def test_same_seed_same_curve_whatever_n_jobs_and_batching():
    X, y = _two_informative()
    kw = dict(cv=4, random_state=7, estimator=GaussianNB())
    one = ffa_rfa(["f2", "f0", "f1", "f3", "f4"], X, y, n_jobs=1, **kw)
    two = ffa_rfa(["f2", "f0", "f1", "f3", "f4"], X, y, n_jobs=2, **kw)
    pd.testing.assert_frame_equal(one, two)
    many = ffa_rfa_many(
        [["f0", "f1", "f2", "f3", "f4"], ["f2", "f0", "f1", "f3", "f4"]], X, y, **kw
    )
    pd.testing.assert_frame_equal(many[1], one)
    other_folds = ffa_rfa(["f2", "f0", "f1", "f3", "f4"], X, y, cv=4, random_state=8)
    assert not np.allclose(other_folds["ffa"], one["ffa"])
    e1 = expected_curve(X, y, n_random=6, n_jobs=1, **kw)
    with parallel_config(backend="threading"):  # a second backend, without process start-up
        e2 = expected_curve(X, y, n_random=6, n_jobs=2, **kw)
    pd.testing.assert_frame_equal(e1, e2)


def test_estimator_random_state_is_seeded_from_random_state():
    X, y = _two_informative()
    tree = DecisionTreeClassifier(max_features=1)  # random splits without a seed
    a = ffa_rfa(list(X.columns), X, y, cv=3, random_state=5, estimator=tree)
    b = ffa_rfa(list(X.columns), X, y, cv=3, random_state=5, estimator=tree)
    pd.testing.assert_frame_equal(a, b)
    assert tree.random_state is None  # the caller's estimator is left alone


class _SpyClassifier(ClassifierMixin, BaseEstimator):
    """Predicts the majority class; records the class counts of every training set."""

    seen: ClassVar[list] = []

    def fit(self, X, y):
        _SpyClassifier.seen.append(np.bincount(y).tolist())
        self.classes_, self.majority_ = np.unique(y), np.bincount(y).argmax()
        return self

    def predict(self, X):
        return np.full(len(X), self.majority_)


def test_classifier_folds_are_stratified_and_shared_by_every_subset():
    X, _ = _two_informative(m=60)
    y = np.repeat([0, 1], 30)
    _SpyClassifier.seen = []
    ffa_rfa(list(X.columns), X, y, cv=3, grid=[1, 5], estimator=_SpyClassifier(), random_state=0)
    assert len(_SpyClassifier.seen) == 3 * 3  # 3 distinct subsets (S^5 = S_5) x 3 folds
    assert all(counts == [20, 20] for counts in _SpyClassifier.seen)


def test_default_estimator_is_wekas_quadratic_polykernel():
    svc = default_estimator()[-1]
    assert (svc.kernel, svc.degree, svc.gamma, svc.coef0, svc.C) == ("poly", 2, 1.0, 0.0, 0.1)
    Z = np.random.default_rng(0).random((4, 3))
    K = polynomial_kernel(Z, degree=svc.degree, gamma=svc.gamma, coef0=svc.coef0)
    np.testing.assert_allclose(K, (Z @ Z.T) ** 2)  # Weka PolyKernel, no lower-order terms


def test_grid_options():
    assert curve_grid("every", 4) == [1, 2, 3, 4]
    assert curve_grid("geometric", 10) == [1, 2, 4, 8, 10]
    assert curve_grid(5, 12) == [1, 5, 10, 12]
    assert curve_grid([3, 1, 3], 5) == [1, 3]
    X, y = _target_data()
    curve = ffa_rfa(["f0", "f1", "f2", "f3"], X, y, cv=3, grid="geometric", random_state=0)
    assert curve["i"].tolist() == [1, 2, 4]


# ------------------------------------------------------------------ expected curve (§3.3)
def _exact_expected(X, y, splitter):
    """Eq. 5 literally: the mean CV score over every subset of each size."""
    n = X.shape[1]
    out = []
    for i in range(1, n + 1):
        scores = [
            cross_val_score(GaussianNB(), X.iloc[:, list(s)], y, cv=splitter).mean()
            for s in combinations(range(n), i)
        ]
        out.append(np.mean(scores))
    return _curve(list(range(1, n + 1)), out, out)


def test_sampled_expected_curve_converges_to_equation_5_and_the_shortcut():
    X, y = _two_informative(m=60)
    splitter = KFold(3, shuffle=True, random_state=0)
    exact = _exact_expected(X, y, splitter)
    sampled = expected_curve(
        X, y, n_random=400, pool=False, cv=splitter, estimator=GaussianNB(), random_state=0
    )
    # FFA and RFA samples estimate the same expectation (Eq. 5) separately
    np.testing.assert_allclose(sampled["ffa"], exact["ffa"], atol=0.02)
    np.testing.assert_allclose(sampled["rfa"], exact["rfa"], atol=0.02)
    assert not np.array_equal(sampled["ffa"], sampled["rfa"])
    tol = 1e-12  # at i = n every sample is equal; the float mean may differ by an ulp
    assert (sampled["lower"] <= sampled["mean"] + tol).all()
    assert (sampled["mean"] <= sampled["upper"] + tol).all()
    assert (sampled["lower"] < sampled["upper"]).iloc[:-1].all()
    good = ffa_rfa(["f0", "f1", "f2", "f3", "f4"], X, y, cv=splitter, estimator=GaussianNB())
    for weighting in ("uniform", "inverse_size"):
        shortcut = eca(good, "random", weighting=weighting)
        assert eca(good, exact, weighting=weighting) == pytest.approx(shortcut, abs=1e-12)
        assert eca(good, sampled, weighting=weighting) == pytest.approx(shortcut, abs=0.01)
    for weighting in ("magnitude", "inverse_size_magnitude"):
        assert eca(good, sampled, weighting=weighting) == pytest.approx(
            eca(good, exact, weighting=weighting), abs=0.02
        )


def test_pooled_expected_curve_makes_the_shortcut_exact():
    X, y = _two_informative(m=60)
    kw = dict(cv=3, random_state=3, estimator=GaussianNB())
    expected = expected_curve(X, y, n_random=5, **kw)
    assert expected["ffa"].equals(expected["rfa"])
    np.testing.assert_allclose(expected["mean"], expected["ffa"])
    good = ffa_rfa(list(X.columns), X, y, **kw)
    assert eca(good, expected) == pytest.approx(eca(good, "random"), abs=1e-12)
    assert expected.attrs["kind"] == "expected" and expected.attrs["n_random"] == 5


def test_eca_from_rankings_and_data():
    X, y = _two_informative()
    good, bad = ["f0", "f1", "f2", "f3", "f4"], ["f4", "f3", "f2", "f1", "f0"]
    kw = dict(cv=3, random_state=11, estimator=GaussianNB())
    direct = eca(good, bad, X=X, y=y, **kw)
    by_curves = eca(ffa_rfa(good, X, y, **kw), ffa_rfa(bad, X, y, **kw))
    assert direct == pytest.approx(by_curves) and direct > 0
    magnitude = eca(good, "random", weighting="magnitude", X=X, y=y, n_random=4, **kw)
    expected = expected_curve(X, y, n_random=4, **kw)
    assert magnitude == pytest.approx(
        eca(ffa_rfa(good, X, y, **kw), expected, weighting="magnitude")
    )


@pytest.mark.parametrize("estimator", [None, GaussianNB()])
def test_random_curves_in_parts_pool_to_the_expected_curve_bit_for_bit(estimator):
    """The 12 rankings as parts of 5, 4 and 3 (given in any order) pool to expected_curve
    of the same seed, every column and attribute, for the paper's model (kernels grown
    along each ranking) and for another estimator."""
    X, y = _two_informative(m=60)
    kw = dict(cv=3, grid=2, random_state=7, estimator=estimator)
    whole = expected_curve(X, y, n_random=12, **kw)
    parts = [
        random_curves(X, y, n_random=n, start=start, **kw) for start, n in ((9, 3), (0, 5), (5, 4))
    ]
    pooled = pool_random_curves(parts)
    pd.testing.assert_frame_equal(pooled, whole, check_exact=True)
    assert pooled.attrs == whole.attrs
    unpooled = pool_random_curves(parts[::-1], pool=False, quantiles=(0.1, 0.9))
    pd.testing.assert_frame_equal(
        unpooled, expected_curve(X, y, n_random=12, pool=False, quantiles=(0.1, 0.9), **kw)
    )
    # a part is the same rows of the whole stream
    stream = random_curves(X, y, n_random=12, **kw)
    np.testing.assert_array_equal(
        parts[2].to_numpy(), stream[stream["ranking"].between(5, 8)].to_numpy()
    )
    assert parts[2].attrs["start"] == 5 and parts[2].attrs["n_random"] == 4


def test_pooling_refuses_parts_that_do_not_belong_together():
    X, y = _two_informative(m=60)
    kw = dict(cv=3, grid=2, estimator=GaussianNB())
    a = random_curves(X, y, n_random=2, random_state=1, **kw)
    with pytest.raises(InvalidInputError, match="once"):
        pool_random_curves([a, a])  # the same rankings twice
    other_seed = random_curves(X, y, n_random=2, start=2, random_state=2, **kw)
    with pytest.raises(InvalidInputError, match="random_state"):
        pool_random_curves([a, other_seed])
    unseeded = [random_curves(X, y, n_random=1, start=s, **kw) for s in (0, 1)]
    with pytest.raises(InvalidInputError, match="same int random_state"):
        pool_random_curves(unseeded)
    with pytest.raises(InvalidInputError, match="random_curves"):
        pool_random_curves(ffa_rfa(list(X.columns), X, y, **kw))
    with pytest.raises(InvalidParameterError, match="start"):
        random_curves(X, y, start=-1)
    with pytest.raises(InvalidParameterError, match="samples"):
        pool_random_curves([])


# ------------------------------------------------------------------ validation
def test_clear_errors():
    with pytest.raises(InvalidParameterError, match="unknown weighting"):
        eca(A, B, weighting="median")
    with pytest.raises(InvalidInputError, match="different grids"):
        eca(A, _curve([1, 2, 3], [0.1] * 3, [0.1] * 3))
    with pytest.raises(InvalidInputError, match="lacks the column"):
        eca(A.drop(columns="rfa"), B)
    with pytest.raises(InvalidParameterError, match="needs the expected curve"):
        eca(A, "random", weighting="magnitude")
    with pytest.raises(InvalidParameterError, match="'random'"):
        eca(A, "uniform")
    with pytest.raises(InvalidParameterError, match="X and y are required"):
        eca(["f0", "f1"], "random")
    with pytest.raises(InvalidInputError, match="increasing"):
        eca(_curve([2, 1, 4], [0.1] * 3, [0.1] * 3), B)
    scored = A.copy()
    scored.attrs["scoring"] = "accuracy"
    other = B.copy()
    other.attrs["scoring"] = "f1"
    with pytest.raises(InvalidInputError, match="scoring"):
        eca(scored, other)
    X, y = _target_data()
    with pytest.raises(InvalidInputError, match="exactly once"):
        ffa_rfa(["f0", "f1"], X, y)
    with pytest.raises(InvalidInputError, match="not in X"):
        ffa_rfa(["f0", "f1", "f2", "nope"], X, y)
    with pytest.raises(InvalidParameterError, match="grid"):
        ffa_rfa(list(X.columns), X, y, grid="every other")
    with pytest.raises(InvalidParameterError, match=r"1\.\.4"):
        ffa_rfa(list(X.columns), X, y, grid=[0, 2])
    with pytest.raises(InvalidParameterError, match="cv"):
        ffa_rfa(list(X.columns), X, y, cv=1)
    with pytest.raises(InvalidInputError, match="values but X has"):
        ffa_rfa(list(X.columns), X, y[:-1])
    with pytest.raises(InvalidParameterError, match="n_random"):
        expected_curve(X, y, n_random=0)
    with pytest.raises(InvalidParameterError, match="quantiles"):
        expected_curve(X, y, quantiles=(0.9, 0.1))
    with pytest.raises(InvalidParameterError, match="scoring"):
        ffa_rfa(list(X.columns), X, y, scoring="no_such_score")


# ------------------------------------------------------------------ a dask cluster
def test_runs_on_a_dask_cluster_through_joblib():
    distributed = pytest.importorskip(
        "distributed", reason="needs the 'dask' extra: pip install '.[dask]'"
    )

    X, y = _two_informative(m=45)
    kw = dict(cv=3, grid=[1, 3, 5], random_state=0, estimator=GaussianNB())
    local = ffa_rfa(["f0", "f1", "f2", "f3", "f4"], X, y, n_jobs=1, **kw)
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster, timeout="300s"),
        parallel_config(backend="dask"),
    ):
        remote = ffa_rfa(["f0", "f1", "f2", "f3", "f4"], X, y, n_jobs=-1, **kw)
    pd.testing.assert_frame_equal(local, remote)


def test_too_many_folds_for_the_classes_is_named():
    # 9 classes of 6-7 samples (like nci9): no class can be spread over 10 folds
    rng = np.random.default_rng(0)
    y = np.arange(60) % 9
    X = rng.normal(size=(60, 4))
    with pytest.raises(InvalidInputError, match=r"largest of the 9 classes has 7: pass cv=7"):
        ffa_rfa([0, 1, 2, 3], X, y, cv=10)
    curve = ffa_rfa([0, 1, 2, 3], X, y, cv=7)  # as the message says
    assert curve.attrs["n_folds"] == 7
