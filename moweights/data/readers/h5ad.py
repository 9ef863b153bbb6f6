"""Reading AnnData ``.h5ad`` files with h5py alone (the optional extra ``moweights[h5ad]``).

The ``anndata`` package is not needed: an ``.h5ad`` file is HDF5 in AnnData's documented
on-disk layout (anndata >= 0.7), of which this reads what a ranking needs:

- ``X``: a dense 2-D dataset, or a group encoded ``csr_matrix`` / ``csc_matrix`` (datasets
  ``data``, ``indices``, ``indptr`` and the ``shape`` attribute), densified;
- ``var``: a dataframe group whose index (the ``_index`` attribute names its dataset) gives
  the feature names -- the columns of X;
- ``obs``: a dataframe group with one dataset per column, or a ``categorical`` group
  (``categories`` and ``codes``, -1 = missing); a column of it may be the target.

Only numbers and text are read (h5py datasets): nothing in a file can run code. A file
is data someone else wrote, so its declared sizes and indices are checked before an array
is allocated: every dataset's size against the memory available
(:func:`rankers.memory.check_memory`, as is the dense X a sparse one becomes), a sparse
matrix's ``shape``, ``indptr`` and ``indices`` against each other, the lengths of ``var``'s
names and ``obs``'s columns against X, and category codes against the categories.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from moweights.errors import DataFileError
from rankers.memory import check_memory

__all__ = ["h5ad_columns", "read_h5ad"]

_SPARSE = ("csr_matrix", "csc_matrix")
_TOO_BIG = "read a part of the file (e.g. anndata's backed mode) on a machine with more memory"


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


def _read(node, what: str, path: Path) -> np.ndarray:
    """A dataset's values, once its declared size is known to fit in memory."""
    h5py = _h5py(path)
    if not isinstance(node, h5py.Dataset):
        raise DataFileError(f"cannot read {path}: its {what} is not a dataset")
    itemsize = max(int(node.dtype.itemsize), 8)  # variable-length strings: at least a pointer
    check_memory(
        float(node.size) * itemsize,
        f"the {what} of {path} ({node.size} values)",
        _TOO_BIG,
    )
    return np.asarray(node[()])


def _index(f, name: str, path: Path, length: int | None = None) -> list[str]:
    group = _frame_group(f, name, path)
    key = group.attrs.get("_index", "_index")
    key = key.decode("utf-8") if isinstance(key, bytes) else str(key)
    if key not in group:
        raise DataFileError(f"cannot read {path}: {name} has no index dataset {key!r}")
    node = group[key]
    size = int(getattr(node, "size", -1))
    if length is not None and size != length:
        unit = "columns" if name == "var" else "rows"
        raise DataFileError(f"cannot read {path}: {name} has {size} names for {length} {unit}")
    return _text(_read(node, f"{name} index", path))


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


def _shape(node, path: Path) -> tuple[int, int]:
    """X's declared shape: two non-negative integers (the ``shape`` attribute when sparse)."""
    shape = node.shape if hasattr(node, "dtype") else node.attrs.get("shape")
    values = np.asarray(shape if shape is not None else [])
    if values.shape != (2,) or values.dtype.kind not in "iu" or (values < 0).any():
        raise DataFileError(
            f"cannot read {path}: X's shape must be two non-negative integers; it is "
            f"{None if shape is None else values.tolist()}"
        )
    return int(values[0]), int(values[1])


def _dense_fits(shape: tuple[int, int], path: Path) -> None:
    m, n = shape
    check_memory(  # the float64 matrix and the frame made of it
        2.0 * m * n * 8, f"the matrix X of {path} ({m} x {n} values, as float64)", _TOO_BIG
    )


def _sparse(node, shape: tuple[int, int], path: Path) -> np.ndarray:
    """A csr/csc group as a dense matrix, its parts checked against each other first."""
    from scipy import sparse

    csr = _encoding(node) == "csr_matrix"
    major, minor = shape if csr else shape[::-1]
    rows, cols = ("rows", "columns") if csr else ("columns", "rows")
    for key in ("data", "indices", "indptr"):
        if key not in node or len(getattr(node[key], "shape", ())) != 1:
            raise DataFileError(f"cannot read {path}: its sparse X has no 1-D {key!r}")
    n_data, n_indices, n_ptr = (node[k].shape[0] for k in ("data", "indices", "indptr"))
    if n_ptr != major + 1:
        raise DataFileError(
            f"cannot read {path}: its sparse X's indptr has {n_ptr} entries for {major} "
            f"{rows} (it needs {major + 1})"
        )
    if n_data != n_indices:
        raise DataFileError(
            f"cannot read {path}: its sparse X has {n_data} values for {n_indices} "
            f"{cols[:-1]} indices"
        )
    _dense_fits(shape, path)
    indptr = _read(node["indptr"], "sparse X's indptr", path)
    if (
        indptr.dtype.kind not in "iu"
        or indptr[0] != 0
        or indptr[-1] != n_data
        or (np.diff(indptr) < 0).any()
    ):
        raise DataFileError(
            f"cannot read {path}: its sparse X's indptr must rise from 0 to the number of "
            f"values ({n_data}); it does not"
        )
    indices = _read(node["indices"], "sparse X's indices", path)
    if indices.dtype.kind not in "iu" or (
        len(indices) and (indices.min() < 0 or indices.max() >= minor)
    ):
        raise DataFileError(
            f"cannot read {path}: its sparse X has {cols[:-1]} indices outside 0..{minor - 1}"
        )
    data = _read(node["data"], "sparse X's values", path)
    if data.dtype.kind not in "biuf":
        raise DataFileError(f"cannot read {path}: its X is not a numeric matrix")
    kind = sparse.csr_matrix if csr else sparse.csc_matrix
    return kind((data, indices, indptr), shape=shape).toarray()


def _matrix(f, path: Path) -> np.ndarray:
    h5py = _h5py(path)
    node = f.get("X")
    if isinstance(node, h5py.Dataset):
        if node.ndim != 2 or node.dtype.kind not in "biuf":
            raise DataFileError(f"cannot read {path}: its X is not a numeric matrix")
        _dense_fits(_shape(node, path), path)
        X = node[()]
    elif isinstance(node, h5py.Group) and _encoding(node) in _SPARSE:
        X = _sparse(node, _shape(node, path), path)
    else:
        raise DataFileError(
            f"cannot read {path}: its X is neither a dense matrix nor a csr/csc sparse group"
        )
    if X.ndim != 2 or X.dtype.kind not in "biuf":
        raise DataFileError(f"cannot read {path}: its X is not a numeric matrix")
    return X.astype(np.float64, copy=False)


def _obs_column(f, name: str, path: Path, n_rows: int) -> pd.Series:
    h5py = _h5py(path)
    node = _frame_group(f, "obs", path)[name]
    if isinstance(node, h5py.Group) and _encoding(node) == "categorical":
        for key in ("categories", "codes"):
            if key not in node:
                raise DataFileError(f"cannot read {path}: obs column {name!r} has no {key!r}")
        _length(node["codes"], name, n_rows, path)
        categories = _read(node["categories"], f"categories of obs column {name!r}", path)
        if categories.dtype.kind in "SO":
            categories = np.asarray(_text(categories), dtype=object)
        codes = _read(node["codes"], f"codes of obs column {name!r}", path)
        if codes.dtype.kind not in "iu":
            raise DataFileError(f"cannot read {path}: obs column {name!r} has non-integer codes")
        codes = codes.astype(np.int64)
        k = len(categories)
        bad = codes[(codes < -1) | (codes >= k)]
        if len(bad):
            raise DataFileError(
                f"cannot read {path}: obs column {name!r} has category code {int(bad[0])} "
                f"outside its {k} categories (codes 0..{k - 1}, and -1 for missing)"
            )
        values = pd.Series(
            categories[np.clip(codes, 0, None)] if k else [None] * len(codes), dtype=object
        )
        values[codes < 0] = np.nan
        return values
    if isinstance(node, h5py.Dataset):
        _length(node, name, n_rows, path)
        values = _read(node, f"obs column {name!r}", path)
        return pd.Series(_text(values) if values.dtype.kind in "SO" else values)
    raise DataFileError(f"cannot read {path}: obs column {name!r} has an unknown encoding")


def _length(node, name: str, n_rows: int, path: Path) -> None:
    shape = getattr(node, "shape", None)
    if shape is None or len(shape) != 1 or shape[0] != n_rows:
        size = "no" if not shape else shape[0]
        raise DataFileError(
            f"cannot read {path}: obs column {name!r} has {size} values for {n_rows} rows"
        )


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
            node = f.get("X")
            shape = _shape(node, path) if node is not None else None
            if shape is not None:  # the size first: the names are read next
                _dense_fits(shape, path)
            names = _index(f, "var", path, None if shape is None else shape[1])
            X = _matrix(f, path)
            y = None
            if target is not None:
                columns = _columns(f, path)
                if target not in columns:
                    shown = ", ".join(map(repr, columns[:10])) or "none"
                    raise DataFileError(
                        f"target column {target!r} is not in {path.name}'s obs; its columns "
                        f"are {shown}"
                    )
                y = _obs_column(f, target, path, X.shape[0]).rename("target")
    except DataFileError:
        raise
    except (OSError, KeyError, ValueError, TypeError) as exc:
        raise DataFileError(f"cannot read {path}: {type(exc).__name__}: {exc}") from None
    return pd.DataFrame(X, columns=names), y
