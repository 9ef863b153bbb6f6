"""Feature scaling shared by the rankers that offer a ``scale`` option."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["SCALES", "scale_features", "standardise"]

#: values a ranker's ``scale`` parameter accepts
SCALES = ("minmax", None)


def scale_features(X, scale: str | None):
    """``X`` with every column rescaled as ``scale`` says; a new array, never ``X`` itself.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        Non-constant columns (rankers only ever see those).
    scale : {"minmax", None}
        ``"minmax"`` maps every column onto [0, 1] (for sparse input the columns are
        divided by their range only, which keeps zeros zero; every distance- and
        variance-based score is unchanged by the missing shift). None returns ``X``
        unchanged (not copied: rankers never write into their input).
    """
    if scale is None:
        return X
    if scale != "minmax":
        raise ValueError(f"scale must be 'minmax' or None; got {scale!r}")
    if sp.issparse(X):
        lo = X.min(axis=0).toarray().ravel()
        hi = X.max(axis=0).toarray().ravel()
        return sp.csr_matrix(X.multiply(1.0 / (hi - lo)))
    lo = X.min(axis=0)
    span = X.max(axis=0) - lo
    return (X - lo) / span


def standardise(X):
    """The z-scores ``(x - mean) / std`` of every column of dense ``X``; a new array.

    Each column is first divided by its largest absolute value, so the squares behind
    the standard deviation neither overflow nor underflow whatever the column's units.
    The result is the same for ``X`` and ``a·X + b`` (per column, ``a > 0``) up to rounding.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Non-constant columns (rankers only ever see those).
    """
    Z = X / np.abs(X).max(axis=0)
    Z -= Z.mean(axis=0)
    Z /= Z.std(axis=0)
    return Z
