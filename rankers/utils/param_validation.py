"""The one owner of scikit-learn's private parameter-validation helpers.

``sklearn.utils._param_validation`` is private to scikit-learn and may move between its
releases. Every module of moweights imports these names from here, never from scikit-learn,
so a move is mended in this file alone (imbalanced-learn keeps the same dependency behind
``imblearn/utils/_param_validation.py``).
"""

from __future__ import annotations

from sklearn.utils._param_validation import HasMethods, Interval, RealNotInt, StrOptions
from sklearn.utils._param_validation import (
    InvalidParameterError as SklearnInvalidParameterError,
)

__all__ = [
    "HasMethods",
    "Interval",
    "RealNotInt",
    "SklearnInvalidParameterError",
    "StrOptions",
]
