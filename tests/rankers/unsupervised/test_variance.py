"""Variance ranker."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from rankers.exceptions import ConstantFeatureWarning, InvalidParameterError
from rankers.unsupervised.variance import VarianceRanker


def test_hand_example():
    # x0 = 0, 2, 4: mean 2, variance (4 + 0 + 4) / 3 = 8/3; x1 = 0, 1, 5: mean 2,
    # variance (4 + 1 + 9) / 3 = 14/3; with ddof=1 the divisor is 2
    X = np.array([[0.0, 0.0], [2.0, 1.0], [4.0, 5.0]])
    est = VarianceRanker().fit(X)
    np.testing.assert_allclose(est.scores_, [8 / 3, 14 / 3])
    assert est.ranking_.tolist() == [1, 0]
    np.testing.assert_allclose(VarianceRanker(ddof=1).fit(X).scores_, [4.0, 7.0])


def test_sparse_equals_dense():
    rng = np.random.default_rng(0)
    dense = rng.normal(size=(40, 6)) * (rng.uniform(size=(40, 6)) < 0.3)
    dense[:, 4] = 0.0
    dense[3, 4] = 2.0  # a sparse column with a single nonzero
    for ddof in (0, 1):
        a = VarianceRanker(ddof=ddof).fit(dense)
        b = VarianceRanker(ddof=ddof).fit(sp.csr_matrix(dense))
        c = VarianceRanker(ddof=ddof).fit(sp.csc_matrix(dense))
        np.testing.assert_allclose(b.scores_, a.scores_, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(c.scores_, a.scores_, rtol=1e-12, atol=1e-15)
        assert b.ranking_.tolist() == a.ranking_.tolist()


@settings(max_examples=25)
@given(seed=st.integers(0, 2**16), shift=st.floats(-100, 100))
def test_translation_invariance(seed, shift):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(20, 4)) * np.array([1.0, 2.0, 0.5, 3.0])
    offsets = shift * np.arange(1, 5)
    a = VarianceRanker().fit(X).scores_
    b = VarianceRanker().fit(X + offsets).scores_
    np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-9)


@settings(max_examples=25)
@given(seed=st.integers(0, 2**16), perm_seed=st.integers(0, 2**16))
def test_permuting_features_permutes_scores(seed, perm_seed):
    X = np.random.default_rng(seed).normal(size=(15, 5))
    perm = np.random.default_rng(perm_seed).permutation(5)
    a = VarianceRanker().fit(X).scores_
    b = VarianceRanker().fit(X[:, perm]).scores_
    # numpy sums a column in an order that depends on the memory layout: equal to rounding
    np.testing.assert_allclose(b, a[perm], rtol=1e-12)


def test_scaling_a_feature_scales_its_score():
    # variance is not scale invariant: documented, and the reason to scale first
    X = np.random.default_rng(1).normal(size=(30, 3))
    a = VarianceRanker().fit(X).scores_
    b = VarianceRanker().fit(X * np.array([1.0, 10.0, 1.0])).scores_
    np.testing.assert_allclose(b, a * np.array([1.0, 100.0, 1.0]))


def test_constant_feature_scores_lowest_with_warning():
    X = np.random.default_rng(2).normal(size=(10, 3))
    X[:, 0] = 7.0
    with pytest.warns(ConstantFeatureWarning, match="x0"):
        est = VarianceRanker().fit(X)
    assert est.scores_[0] == 0.0
    assert est.ranking_[-1] == 0


def test_ddof_must_be_smaller_than_n_samples():
    X = np.random.default_rng(2).normal(size=(3, 2))
    with pytest.raises(InvalidParameterError, match="ddof=3"):
        VarianceRanker(ddof=3).fit(X)


def test_fit_does_not_modify_input():
    X = np.random.default_rng(3).normal(size=(10, 3))
    X_copy = X.copy()
    VarianceRanker().fit(X)
    np.testing.assert_array_equal(X, X_copy)
    frame = pd.DataFrame(X_copy.copy(), columns=["a", "b", "c"])
    frame_copy = frame.copy()
    VarianceRanker().fit(frame)
    pd.testing.assert_frame_equal(frame, frame_copy)


def test_minmax_scale_option_is_unit_free():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3)) * [1.0, 100.0, 0.01]
    raw = VarianceRanker().fit(X).scores_
    scaled = VarianceRanker(scale="minmax").fit(X).scores_
    span = X.max(axis=0) - X.min(axis=0)
    np.testing.assert_allclose(scaled, raw / span**2)
    # sparse input: divided by the range only, same scores
    import scipy.sparse as sp

    Xs = np.where(np.abs(X) > 0.5 * np.abs(X).mean(axis=0), X, 0.0)
    np.testing.assert_allclose(
        VarianceRanker(scale="minmax").fit(sp.csr_matrix(Xs)).scores_,
        VarianceRanker(scale="minmax").fit(Xs).scores_,
    )


@pytest.mark.parametrize("scale", [1.0, 1e-150, 1e150])
def test_sparse_in_blocks_of_stored_values_equals_dense(scale, monkeypatch):
    # the CSR sums run over blocks of 101 stored values (no CSC copy); columns at a scale
    # whose squares leave float64 go through the per-column powers of two
    from rankers.unsupervised import variance

    monkeypatch.setattr(variance, "_SPARSE_BLOCK", 101)
    rng = np.random.default_rng(5)
    dense = rng.poisson(0.4, size=(200, 15)).astype(float)
    dense[:, 3] = 50.0 + rng.normal(size=200)  # every value stored, mean >> spread
    dense[:, 4] *= scale
    est = VarianceRanker().fit(sp.csr_matrix(dense))
    np.testing.assert_allclose(est.scores_, dense.var(axis=0), rtol=1e-10)
    np.testing.assert_array_equal(est.ranking_, VarianceRanker().fit(dense).ranking_)
