"""Scaling helpers shared by the rankers (rankers.preprocessing)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


@settings(max_examples=200)
@given(
    st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=1, max_size=12),
    st.integers(-1100, 1100),
    st.integers(-70, 70),
)
def test_scale_by_power_of_two_is_ldexp_bit_for_bit(values, far, near):
    from rankers.preprocessing import scale_by_power_of_two

    x = np.array([*values, 5e-324, -np.finfo(float).tiny / 3, 1.7e308])
    per_column = np.arange(x.size) % 141 - 70  # an exponent per entry, as per column
    for exponent in (far, near, per_column):
        with np.errstate(all="ignore"):
            want, got = np.ldexp(x, exponent), scale_by_power_of_two(x, exponent)
        np.testing.assert_array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))  # -0.0 stays -0.0
