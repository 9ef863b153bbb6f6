"""Deprecated old path of the top-k kNN curves, FFA/RFA, expected curve and ECA: import from
:mod:`aggregation.evaluation.topk` and :mod:`aggregation.evaluation.error_curves`.

Importing it warns (:class:`DeprecationWarning`); it re-exports the moved names until
its removal in moweights 0.2.0 (:data:`rankers._moved.REMOVED_IN`).
"""

from __future__ import annotations

from aggregation.evaluation.error_curves import (
    curve_delta,
    eca,
    expected_curve,
    ffa_rfa,
    ffa_rfa_many,
)
from aggregation.evaluation.topk import METRICS, geometric_grid, topk_curve
from rankers._moved import warn_moved

warn_moved(__name__, "aggregation.evaluation.topk and aggregation.evaluation.error_curves")

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
