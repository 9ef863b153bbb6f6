"""The pipeline's whole-table paths agree with their per-column definitions (issue 39 item 2).

A wide file (thousands of columns) is checked, prepared and fingerprinted as blocks of one
dtype, and its header is read with the ``csv`` module; each test here holds such a path to
the per-column (or pandas) definition it replaces, on tables mixing the cases that differ:
gaps, all-gap columns, infinities, signed zeros, integers counting rows, ids, text, dates,
nullable integers, booleans.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from moweights.pipeline.problems import _constant, _identifier, _identifiers, identifier_columns

pytestmark = pytest.mark.quick


def _mixed(m: int = 30, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(m, 4)), columns=list("abcd"))
    frame.loc[3, "b"] = np.nan
    frame["gaps"] = np.nan
    frame["one"] = 1.5
    frame["one_gap"] = 2.0
    frame.loc[0, "one_gap"] = np.nan
    frame["zeros"] = np.where(np.arange(m) % 2, 0.0, -0.0)
    frame["inf"] = np.inf
    frame["span"] = np.r_[-np.inf, np.full(m - 1, np.inf)]
    frame["rows"] = np.arange(m) + 7  # consecutive: an identifier
    frame["PatientID"] = rng.permutation(1000)[:m] + 5000  # distinct, named like an id
    frame["reads"] = rng.permutation(10_000)[:m]  # distinct counts: a feature
    frame["repeats"] = np.arange(m) // 2
    frame["u8"] = np.arange(m, dtype=np.uint8)
    frame["const_int"] = np.int32(4)
    frame["big"] = np.r_[np.iinfo(np.int64).min, np.iinfo(np.int64).max, np.arange(m - 2)]
    frame["flag"] = np.arange(m) % 3 == 0
    frame["all_true"] = True
    frame["sample"] = [f"S{i:03d}" for i in range(m)]
    frame["site"] = ["x", "y"] * (m // 2)
    frame["when"] = pd.date_range("2020-01-01", periods=m)
    frame["nullable"] = pd.array([*range(m - 1), None], dtype="Int64")
    frame["nullable_one"] = pd.array([None] * (m - 1) + [3], dtype="Int64")
    return frame


@pytest.mark.parametrize("m", [0, 5, 9, 10, 30])
def test_identifiers_match_the_per_column_rule(m):
    frame = _mixed(30).iloc[:m]
    expected = {c: why for c in frame.columns if (why := _identifier(c, frame[c])) is not None}
    assert _identifiers(frame) == expected
    assert identifier_columns(frame) == {str(c): w for c, w in expected.items()}
    if m == 30:
        assert set(expected) == {"rows", "PatientID", "u8", "sample", "nullable"}


@pytest.mark.parametrize("m", [0, 1, 2, 30])
def test_constant_columns_match_nunique(m):
    frame = _mixed(30).iloc[:m]
    expected = [c for c in frame.columns if frame[c].nunique(dropna=True) <= 1]
    with np.errstate(all="raise"):
        found = list(frame.columns[_constant(frame)])
    assert found == expected
    if m == 30:
        assert found == ["gaps", "one", "one_gap", "zeros", "inf", "const_int", "all_true",
                         "nullable_one"]  # fmt: skip


def test_identifier_columns_with_repeated_names_still_answer():
    frame = pd.DataFrame({"a": np.arange(12), "b": np.arange(12.0)})
    frame.columns = ["id", "id"]
    assert identifier_columns(frame) == {"id": "the consecutive numbers 0..11"}
