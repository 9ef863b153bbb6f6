"""Reading AnnData ``.h5ad`` files with h5py alone (the optional extra ``moweights[h5ad]``).

The ``anndata`` package is not needed: an ``.h5ad`` file is HDF5 in AnnData's documented
on-disk layout (anndata >= 0.7), of which this reads what a ranking needs:

- ``X``: a dense 2-D dataset, or a group encoded ``csr_matrix`` / ``csc_matrix`` (datasets
  ``data``, ``indices``, ``indptr`` and the ``shape`` attribute), densified;
- ``var``: a dataframe group whose index (the ``_index`` attribute names its dataset) gives
  the feature names -- the columns of X;
- ``obs``: a dataframe group with one dataset per column, or a ``categorical`` group
  (``categories`` and ``codes``, -1 = missing); a column of it may be the target.

Only numbers and text are read (h5py datasets): nothing in a file can run code.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from rankers.exceptions import DataFileError

__all__ = ["h5ad_columns", "read_h5ad"]

_SPARSE = ("csr_matrix", "csc_matrix")


def _h5py(path: Path):
    try:
        import h5py
    except ImportError:
        raise DataFileError(
            f"cannot read {path}: .h5ad files need h5py: pip install 'moweights[h5ad]'"
        ) from None
    return h5py


def _text(values: np.ndarray) -> list[str]:
    return [v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in values.tolist()]


def _encoding(node) -> str:
    value = node.attrs.get("encoding-type", "")
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _frame_group(f, name: str, path: Path):
    h5py = _h5py(path)
    group = f.get(name)
    if not isinstance(group, h5py.Group):
        raise DataFileError(
            f"cannot read {path}: its {name!r} is not a dataframe group (an .h5ad file "
            "written by anndata >= 0.7 has one)"
        )
    return group


def _index(f, name: str, path: Path) -> list[str]:
    group = _frame_group(f, name, path)
    key = group.attrs.get("_index", "_index")
    key = key.decode("utf-8") if isinstance(key, bytes) else str(key)
    if key not in group:
        raise DataFileError(f"cannot read {path}: {name} has no index dataset {key!r}")
    return _text(group[key][()])


def _columns(f, path: Path) -> list[str]:
    group = _frame_group(f, "obs", path)
    key = group.attrs.get("_index", "_index")
    key = key.decode("utf-8") if isinstance(key, bytes) else str(key)
    return [c for c in group if c != key and c != "__categories"]


def h5ad_columns(path) -> list[str]:
    """The feature names (``var``'s index) and then ``obs``'s columns (targets to choose)."""
    path = Path(path)
    h5py = _h5py(path)
    with h5py.File(path, "r") as f:
        return _index(f, "var", path) + _columns(f, path)


def _matrix(f, path: Path) -> np.ndarray:
    h5py = _h5py(path)
    node = f.get("X")
    if isinstance(node, h5py.Dataset):
        X = node[()]
    elif isinstance(node, h5py.Group) and _encoding(node) in _SPARSE:
        from scipy import sparse

        shape = tuple(int(n) for n in node.attrs["shape"])
        parts = (node["data"][()], node["indices"][()], node["indptr"][()])
        kind = sparse.csr_matrix if _encoding(node) == "csr_matrix" else sparse.csc_matrix
        X = kind(parts, shape=shape).toarray()
    else:
        raise DataFileError(
            f"cannot read {path}: its X is neither a dense matrix nor a csr/csc sparse group"
        )
    if X.ndim != 2 or X.dtype.kind not in "biuf":
        raise DataFileError(f"cannot read {path}: its X is not a numeric matrix")
    return X.astype(np.float64)


def _obs_column(f, name: str, path: Path) -> pd.Series:
    h5py = _h5py(path)
    node = _frame_group(f, "obs", path)[name]
    if isinstance(node, h5py.Group) and _encoding(node) == "categorical":
        categories = np.asarray(node["categories"][()])
        if categories.dtype.kind in "SO":
            categories = np.asarray(_text(categories), dtype=object)
        codes = node["codes"][()].astype(np.int64)
        values = pd.Series(categories[np.clip(codes, 0, None)], dtype=object)
        values[codes < 0] = np.nan
        return values
    if isinstance(node, h5py.Dataset):
        values = node[()]
        return pd.Series(_text(values) if values.dtype.kind in "SO" else values)
    raise DataFileError(f"cannot read {path}: obs column {name!r} has an unknown encoding")


def read_h5ad(path, target: str | None = None) -> tuple[pd.DataFrame, pd.Series | None]:
    """An ``.h5ad`` file as (X, y): X with ``var``'s names, y the ``obs`` column ``target``.

    Raises
    ------
    DataFileError
        h5py is not installed, the file is not an AnnData file of a layout this reads, or
        it has no ``obs`` column ``target``.
    """
    path = Path(path)
    h5py = _h5py(path)
    try:
        with h5py.File(path, "r") as f:
            X = _matrix(f, path)
            names = _index(f, "var", path)
            if len(names) != X.shape[1]:
                raise DataFileError(
                    f"cannot read {path}: var has {len(names)} names for {X.shape[1]} columns"
                )
            y = None
            if target is not None:
                columns = _columns(f, path)
                if target not in columns:
                    shown = ", ".join(map(repr, columns[:10])) or "none"
                    raise DataFileError(
                        f"target column {target!r} is not in {path.name}'s obs; its columns "
                        f"are {shown}"
                    )
                y = _obs_column(f, target, path).rename("target")
    except DataFileError:
        raise
    except (OSError, KeyError, ValueError, TypeError) as exc:
        raise DataFileError(f"cannot read {path}: {type(exc).__name__}: {exc}") from None
    return pd.DataFrame(X, columns=names), y
