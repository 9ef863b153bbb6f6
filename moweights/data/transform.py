"""Transforms of the data before ranking: a log of counts, a per-feature scale.

Two kinds, applied differently because one learns from the data and the other does not:

- ``transform`` (``"log1p"``: ``log(1 + x)``; ``"log2p"``: ``log2(1 + x)``, the usual scale
  of expression counts) is a fixed function of each value. It learns nothing, so
  :func:`log_transform` applies it to the table once (a new table: the caller's is never
  modified) and every ranker and every evaluation model sees the transformed values.
- ``scale`` (``"standard"``: mean 0 and standard deviation 1; ``"robust"``: median 0 and
  interquartile range 1, scikit-learn's ``StandardScaler`` / ``RobustScaler``) learns each
  feature's centre and spread. Learnt on all rows it would let the test rows of an
  evaluation fold shape what the ranker fits on, so it is part of what is fitted:
  :class:`ScaledRanker` scales the rows it is given with their own statistics and fits the
  ranker on the result. Every fold refit then scales with that fold's training rows only,
  the whole-data fit with all rows.

The evaluation models standardise (kNN, logistic regression) or min-max scale (the
error-curve SVM, k-means) every feature with their own training rows, which undoes any
per-feature scale: they score the same numbers whatever ``scale`` says, and
``transform`` reaches them through the data.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone

from rankers.exceptions import InvalidInputError, InvalidParameterError

__all__ = [
    "SCALES",
    "TRANSFORMS",
    "ScaledRanker",
    "log_transform",
    "negative_columns",
    "scale_notes",
]

#: what ``[data] transform`` may be
TRANSFORMS = ("none", "log1p", "log2p")
#: what ``[data] scale`` may be
SCALES = ("none", "standard", "robust")
#: fitted attributes of a ranker that describe the features (copied from the inner ranker)
_FITTED = ("scores_", "ranking_", "pvalues_", "qvalues_", "statistic_", "n_features_in_",
           "feature_names_in_")  # fmt: skip
_SHOWN = 8


def _names(columns) -> str:
    columns = [str(c) for c in columns]
    more = len(columns) - _SHOWN
    return ", ".join(repr(c) for c in columns[:_SHOWN]) + (f" and {more} more" if more > 0 else "")


def _numeric(X: pd.DataFrame) -> list:
    """The numeric, non-boolean columns, decided once per distinct dtype (a wide table has
    thousands of columns and one or two dtypes)."""
    dtypes = list(X.dtypes)
    numeric = {
        d: pd.api.types.is_numeric_dtype(d) and not pd.api.types.is_bool_dtype(d)
        for d in set(dtypes)
    }
    return [c for c, d in zip(X.columns, dtypes, strict=True) if numeric[d]]


def negative_columns(X: pd.DataFrame) -> dict[str, float]:
    """The numeric columns holding a value below 0 (a log of ``1 + x`` needs ``x >= 0``),
    with their smallest value; missing values are ignored."""
    cols = _numeric(X)
    if not cols:
        return {}
    low = X[cols].min(axis=0, skipna=True)
    return {str(c): float(v) for c, v in low.items() if v < 0}


def log_transform(X: pd.DataFrame, kind: str) -> tuple[pd.DataFrame, str | None]:
    """``X`` with ``log(1 + x)`` (``"log1p"``) or ``log2(1 + x)`` (``"log2p"``) of every
    numeric column; a new table, and one sentence saying what was done.

    Text and boolean columns are left as they are (they are encoded later, if asked);
    missing values stay missing. ``kind="none"`` returns ``X`` itself and no sentence.

    Raises
    ------
    InvalidInputError
        A numeric column holds a negative value (counts cannot be negative; data that
        are already on a log scale should keep ``transform = "none"``), naming the
        columns and their smallest values.
    InvalidParameterError
        An unknown ``kind``.

    Examples
    --------
    >>> X = pd.DataFrame({"g1": [0.0, 1.0, 3.0], "site": ["a", "b", "a"]})
    >>> log_transform(X, "log2p")[0]["g1"].tolist()
    [0.0, 1.0, 2.0]
    """
    if kind not in TRANSFORMS:
        raise InvalidParameterError(f"transform must be one of {TRANSFORMS}; got {kind!r}")
    if kind == "none":
        return X, None
    negative = negative_columns(X)
    if negative:
        shown = ", ".join(f"{c!r} (min {v:.4g})" for c, v in list(negative.items())[:_SHOWN])
        more = len(negative) - _SHOWN
        raise InvalidInputError(
            f"transform = {kind!r} takes values >= 0, but {len(negative)} column(s) hold "
            f"negative values: {shown}{f' and {more} more' if more > 0 else ''}; data already "
            "on a log scale (or centred) need transform = 'none'"
        )
    cols = _numeric(X)
    out = X.copy()
    if cols:
        values = X[cols].to_numpy(dtype=np.float64)
        logged = np.log1p(values) if kind == "log1p" else np.log1p(values) / np.log(2.0)
        out[cols] = pd.DataFrame(logged, index=X.index, columns=cols)
    base = "log(1 + x)" if kind == "log1p" else "log2(1 + x)"
    return out, f"transform = {kind!r}: {base} of the {len(cols)} numeric column(s)"


def _scaler(scale: str):
    from sklearn.preprocessing import RobustScaler, StandardScaler

    if scale == "standard":
        return StandardScaler()
    if scale == "robust":
        return RobustScaler()
    raise InvalidParameterError(
        f"scale must be 'standard' or 'robust'; got {scale!r} (no ScaledRanker for 'none')"
    )


class ScaledRanker(BaseEstimator):
    """A ranker fitted on its input scaled per feature with the input's own statistics.

    ``fit(X, y)`` learns each column's centre and spread from ``X`` (scikit-learn's
    ``StandardScaler`` or ``RobustScaler``), scales ``X`` with them and fits a clone of
    ``ranker`` on the result; the fitted ranker's scores, ranking, p- and q-values are
    this estimator's. Cloned and refit on the training rows of a fold (as
    :func:`aggregation.evaluation.fold_rankings` does), it scales with those rows only:
    the held-out rows never shape the ranking they are scored on.

    Parameters
    ----------
    ranker : estimator
        An unfitted ranker (``rankers.get(name)``); cloned at fit.
    scale : {"standard", "robust"}, default="standard"
        ``"standard"``: ``(x - mean) / sd``; ``"robust"``: ``(x - median) / IQR`` (a
        column whose interquartile range is 0 is only centred).
    random_state : int or None, default=None
        Given to the ranker at fit when it takes one (so the callers that seed a ranker
        through its ``random_state`` seed this one alike); None keeps the ranker's own.

    Attributes
    ----------
    ranker_ : estimator
        The fitted ranker.
    scaler_ : StandardScaler or RobustScaler
        The scaler fitted on the rows given to :meth:`fit`.
    scores_, ranking_, n_features_in_ : ndarray, ndarray, int
        The fitted ranker's.
    pvalues_, qvalues_, statistic_, feature_names_in_ : ndarray
        The fitted ranker's, when it has them.

    Examples
    --------
    >>> import rankers
    >>> X = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "b": [100.0, 300.0, 200.0, 400.0]})
    >>> raw = rankers.get("variance").fit(X)
    >>> scaled = ScaledRanker(rankers.get("variance")).fit(X)
    >>> raw.ranking_.tolist(), scaled.scores_.round(6).tolist()
    ([1, 0], [1.333333, 1.333333])
    """

    def __init__(self, ranker: Any = None, scale: str = "standard", random_state=None):
        self.ranker = ranker
        self.scale = scale
        self.random_state = random_state

    def __sklearn_tags__(self):
        import rankers

        if self.ranker is None:
            return super().__sklearn_tags__()
        return rankers.ranker_tags(self.ranker)

    @property
    def name(self) -> str | None:
        """The wrapped ranker's registry name."""
        return getattr(self.ranker, "name", None)

    def fit(self, X, y=None):
        """Scale ``X`` with its own column statistics, then fit the ranker on it."""
        if self.ranker is None or not hasattr(self.ranker, "fit"):
            raise InvalidParameterError("ScaledRanker needs an unfitted ranker as ``ranker``")
        scaler = _scaler(self.scale)
        import scipy.sparse as sp

        if sp.issparse(X):  # centring would fill every zero: the dense matrix it makes
            X = X.toarray()
        values = np.asarray(X, dtype=np.float64)
        if values.ndim != 2:
            raise InvalidInputError(f"X must be a 2-d table; got shape {values.shape}")
        scaled = scaler.fit_transform(values)
        if isinstance(X, pd.DataFrame):
            scaled = pd.DataFrame(scaled, index=X.index, columns=X.columns)
        est = clone(self.ranker)
        if self.random_state is not None and "random_state" in est.get_params(deep=False):
            est.set_params(random_state=self.random_state)
        est.fit(scaled, y)
        self.ranker_, self.scaler_ = est, scaler
        for attr in _FITTED:
            if hasattr(est, attr):
                setattr(self, attr, getattr(est, attr))
        return self


def scale_notes(scale: str, estimators: dict[str, Any]) -> list[str]:
    """What a run says about the scale its rankers saw: the scaling chosen, or the
    rankers that rank raw units.

    Parameters
    ----------
    scale : {"none", "standard", "robust"}
        ``[data] scale``.
    estimators : dict of str -> estimator
        The run's rankers by label (unfitted, as configured).
    """
    import rankers

    if scale == "standard":
        how = "(x - mean) / sd"
    elif scale == "robust":
        how = "(x - median) / IQR"
    else:
        raw = [
            label
            for label, est in estimators.items()
            if not getattr(rankers.ranker_tags(est), "feature_scale_invariant", False)
        ]
        if not raw:
            return []
        return [
            f"{', '.join(raw)} ranked the features in their raw units: rescaling one feature "
            "(other units, a wider range) changes its score under these rankers; "
            "[data] scale = 'standard' or 'robust' ranks every feature on one scale"
        ]
    return [
        f"scale = {scale!r}: every ranker fitted on the features scaled as {how} with the "
        "statistics of the rows it was fitted on (each evaluation fold's training rows; all "
        "rows for the reported ranking); the evaluation models scale on their own"
    ]
