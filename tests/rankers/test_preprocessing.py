"""Scaling helpers shared by the rankers (rankers.preprocessing)."""

from __future__ import annotations

import numpy as np
import pytest

from rankers.preprocessing import minmax_scale, scale_features


@pytest.mark.parametrize("scale", [1e-200, 1e-3, 1.0, 7.3, 1e150])
def test_minmax_scale_is_the_textbook_formula_to_the_last_bit(scale):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 7)) * scale + rng.normal(size=7) * scale
    lo, hi = X.min(axis=0), X.max(axis=0)
    expected = (X - lo) / (hi - lo)
    got = minmax_scale(X)
    assert got.tobytes() == expected.tobytes()
    assert got.min(axis=0).tolist() == [0.0] * 7 and got.max(axis=0).tolist() == [1.0] * 7


def test_minmax_scale_never_modifies_its_input_and_takes_read_only_arrays():
    X = np.array([[1.0, 2.0], [3.0, 6.0], [2.0, 4.0]])
    X.flags.writeable = False
    before = X.copy()
    out = minmax_scale(X)
    assert np.array_equal(X, before) and out is not X and out.flags.writeable
    assert out.tolist() == [[0.0, 0.0], [1.0, 1.0], [0.5, 0.5]]


def test_a_constant_column_becomes_zeros_not_nan():
    X = np.array([[1.0, 4.0], [3.0, 4.0]])
    with np.errstate(all="raise"):
        assert minmax_scale(X).tolist() == [[0.0, 0.0], [1.0, 0.0]]


def test_scale_features_minmax_is_minmax_scale():
    X = np.random.default_rng(1).normal(size=(20, 3))
    assert scale_features(X, "minmax").tobytes() == minmax_scale(X).tobytes()
    assert scale_features(X, None) is X
