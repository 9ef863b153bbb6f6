"""MATLAB ``.mat`` files in scikit-feature's layout: a matrix ``X`` and a label column ``Y``.

Read with :func:`scipy.io.loadmat`, which reads numbers and text only: nothing in a file
runs code. Columns are named ``x0``, ``x1``, ... (the files carry no feature names).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from moweights.data.readers.checks import read_error
from moweights.errors import DataFileError

__all__ = ["mat_columns", "read_mat"]


def _names(n: int) -> list[str]:
    return [f"x{i}" for i in range(n)]


def read_mat(path) -> tuple:
    """A ``.mat`` file as (X, y): ``X`` as float64 columns ``x0``, ``x1``, ..., ``Y`` (when
    present) as the target, named ``target``.

    Raises
    ------
    DataFileError
        The file is unreadable, has no matrix ``X``, or its ``X`` is not a numeric matrix.
    """
    import pandas as pd

    path = Path(path)
    try:
        from scipy.io import loadmat

        content = loadmat(path)
        if "X" not in content:
            raise DataFileError(f"cannot read {path}: it has no matrix named 'X'")
        X = content["X"]
        X = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
        if X.ndim != 2 or X.dtype.kind not in "biuf":
            raise DataFileError(f"cannot read {path}: its 'X' is not a numeric matrix")
        frame = pd.DataFrame(X.astype(np.float64), columns=_names(X.shape[1]))
        y = None
        if "Y" in content:
            y = pd.Series(np.asarray(content["Y"]).ravel(), name="target")
    except DataFileError:
        raise
    except Exception as exc:
        raise DataFileError(f"cannot read {path}: {read_error(exc, 'mat')}") from None
    return frame, y


def mat_columns(path) -> list[str]:
    """``x0``, ``x1``, ... from the shape of a ``.mat`` file's ``X`` (its data unread).

    Raises
    ------
    DataFileError
        The file is unreadable or has no matrix ``X``.
    """
    path = Path(path)
    try:
        from scipy.io import whosmat

        shapes = {name: shape for name, shape, _ in whosmat(path)}
        if "X" not in shapes or len(shapes["X"]) != 2:
            raise DataFileError(f"cannot read {path}: it has no matrix named 'X'")
        return _names(shapes["X"][1])
    except DataFileError:
        raise
    except Exception as exc:
        raise DataFileError(f"cannot read {path}: {read_error(exc, 'mat')}") from None
