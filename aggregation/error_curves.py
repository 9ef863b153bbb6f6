"""Old path of :mod:`aggregation.evaluation.error_curves` (FFA/RFA curves, expected curve,
ECA); kept so existing code keeps working."""

from __future__ import annotations

from aggregation.evaluation.error_curves import (
    WEIGHTINGS,
    curve_delta,
    curve_grid,
    default_estimator,
    eca,
    expected_curve,
    ffa_rfa,
    ffa_rfa_many,
)

__all__ = [
    "WEIGHTINGS",
    "curve_delta",
    "curve_grid",
    "default_estimator",
    "eca",
    "expected_curve",
    "ffa_rfa",
    "ffa_rfa_many",
]
