"""Deprecated old path of FFA/RFA curves, expected curve, ECA: import from
:mod:`aggregation.evaluation.error_curves`.

Importing it warns (:class:`DeprecationWarning`); it re-exports the moved names until
its removal in moweights 0.2.0 (:data:`rankers._moved.REMOVED_IN`).
"""

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
from rankers._moved import warn_moved

warn_moved(__name__, "aggregation.evaluation.error_curves")

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
