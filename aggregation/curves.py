"""Old path of the curve scorers: :mod:`aggregation.evaluation.topk` (top-k kNN curves) and
:mod:`aggregation.evaluation.error_curves` (FFA/RFA, expected curve, ECA). Kept so existing
code keeps working; new code imports from :mod:`aggregation.evaluation`."""

from __future__ import annotations

from aggregation.evaluation.error_curves import (
    curve_delta,
    eca,
    expected_curve,
    ffa_rfa,
    ffa_rfa_many,
)
from aggregation.evaluation.topk import METRICS, geometric_grid, topk_curve

__all__ = [
    "METRICS",
    "curve_delta",
    "eca",
    "expected_curve",
    "ffa_rfa",
    "ffa_rfa_many",
    "geometric_grid",
    "topk_curve",
]
