"""AnnData .h5ad input, read with h5py (issue 19 item 3); the files are written here with h5py
in AnnData's on-disk layout (anndata >= 0.7), so anndata itself is not needed."""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
from scipy import sparse

from moweights.config import load_config
from moweights.data.readers import read_columns, read_data
from moweights.errors import DataFileError
from moweights.pipeline import load_data

h5py = pytest.importorskip("h5py", reason="needs the 'h5ad' extra: pip install '.[h5ad]'")


X = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 3.25], [4.0, 5.0, 0.0]])
GENES = ["TP53", "BRCA1", "MYC"]
CELLS = ["c1", "c2", "c3", "c4"]


def _strings(values):
    return np.array(values, dtype=h5py.string_dtype())


def _frame(f, name, index, columns):
    group = f.create_group(name)
    group.attrs.update({"_index": "_index", "encoding-type": "dataframe"})
    group.attrs["column-order"] = _strings(list(columns))
    group["_index"] = _strings(index)
    for column, write in columns.items():
        write(group, column)
    return group


def _categorical(categories, codes):
    def write(group, name):
        node = group.create_group(name)
        node.attrs.update({"encoding-type": "categorical", "ordered": False})
        node["categories"] = _strings(categories)
        node["codes"] = np.asarray(codes, dtype=np.int8)

    return write


def _numbers(values):
    def write(group, name):
        group[name] = np.asarray(values)

    return write


def write_h5ad(path, matrix=X, layout="dense", codes=(0, 1, 0, 1)):
    with h5py.File(path, "w") as f:
        f.attrs.update({"encoding-type": "anndata", "encoding-version": "0.1.0"})
        if layout == "dense":
            f["X"] = matrix
        else:
            m = sparse.csr_matrix(matrix) if layout == "csr" else sparse.csc_matrix(matrix)
            group = f.create_group("X")
            group.attrs.update({"encoding-type": f"{layout}_matrix", "shape": matrix.shape})
            group["data"], group["indices"], group["indptr"] = m.data, m.indices, m.indptr
        _frame(f, "var", GENES, {})
        _frame(
            f,
            "obs",
            CELLS,
            {"cell_type": _categorical(["B", "T"], codes), "age": _numbers([30, 41, 52, 63])},
        )
    return path


@pytest.mark.parametrize("layout", ["dense", "csr", "csc"])
def test_h5ad_matrix_and_names(tmp_path, layout):
    path = write_h5ad(tmp_path / f"{layout}.h5ad", layout=layout)
    frame, y = read_data(path)
    assert list(frame.columns) == GENES
    np.testing.assert_array_equal(frame.to_numpy(), X)
    assert frame.dtypes.eq(np.float64).all() and y is None


def test_h5ad_target_from_obs(tmp_path):
    path = write_h5ad(tmp_path / "a.h5ad", codes=(0, 1, -1, 1))
    _, y = read_data(path, target="cell_type")
    assert y.name == "target"
    assert y.iloc[[0, 1, 3]].tolist() == ["B", "T", "T"] and pd.isna(y.iloc[2])  # -1: missing
    _, age = read_data(path, target="age")
    assert age.tolist() == [30, 41, 52, 63]


def test_h5ad_columns_name_features_then_obs(tmp_path):
    path = write_h5ad(tmp_path / "a.h5ad")
    assert read_columns(path) == [*GENES, "age", "cell_type"]


def test_h5ad_missing_target_names_obs_columns(tmp_path):
    path = write_h5ad(tmp_path / "a.h5ad")
    with pytest.raises(DataFileError, match=r"'label' is not in a\.h5ad's obs.*'cell_type'"):
        read_data(path, target="label")


def test_h5ad_that_is_not_anndata_is_refused(tmp_path):
    path = tmp_path / "bad.h5ad"
    with h5py.File(path, "w") as f:
        f["X"] = X
    with pytest.raises(DataFileError, match=r"var.*dataframe group"):
        read_data(path)
    (tmp_path / "junk.h5ad").write_bytes(b"not hdf5")
    with pytest.raises(DataFileError, match="cannot read"):
        read_data(tmp_path / "junk.h5ad")


def test_without_h5py_the_error_says_what_to_install(tmp_path, monkeypatch):
    path = write_h5ad(tmp_path / "a.h5ad")
    monkeypatch.setitem(sys.modules, "h5py", None)  # import h5py now fails
    with pytest.raises(DataFileError, match=r"need h5py: pip install 'moweights\[h5ad\]'"):
        read_data(path)


def test_a_config_reads_h5ad(tmp_path):
    write_h5ad(tmp_path / "cells.h5ad")
    text = """
        [data]
        path = "cells.h5ad"
        target = "cell_type"

        [[rankers]]
        name = "info_gain"
    """
    config_path = tmp_path / "run.toml"
    config_path.write_text(textwrap.dedent(text), encoding="utf-8")
    frame, y = load_data(load_config(config_path))
    assert list(frame.columns) == GENES and y.tolist() == ["B", "T", "B", "T"]
    bad = config_path.read_text().replace('"cell_type"', '"label"')
    config_path.write_text(bad, encoding="utf-8")
    with pytest.raises(Exception, match=r"\[data\]\.target.*'label' is not in cells\.h5ad"):
        load_config(config_path)


# ------------------------------------------------------ malformed files (issue 37 item 6)
# Every index and declared size in the file is checked before an array is allocated.
@pytest.mark.parametrize("bad", [2, 7, -2])
def test_category_codes_outside_the_categories_are_named(tmp_path, bad):
    path = write_h5ad(tmp_path / "a.h5ad", codes=(0, 1, bad, 1))
    with pytest.raises(DataFileError, match=rf"obs column 'cell_type'.*code {bad}.*2 categories"):
        read_data(path, target="cell_type")


def _file(path, build):
    with h5py.File(path, "w") as f:
        build(f)
        _frame(f, "var", GENES, {})
        _frame(f, "obs", CELLS, {"age": _numbers([30, 41, 52, 63])})
    return path


def test_a_declared_dense_shape_beyond_memory_is_refused_before_reading(tmp_path):
    from rankers.exceptions import NotEnoughMemoryError

    def build(f):  # 8 TB declared, nothing stored: the file is a few kB
        f.create_dataset("X", shape=(1_000_000, 1_000_000), dtype="f8", chunks=(1, 1000))

    path = _file(tmp_path / "big.h5ad", build)
    with pytest.raises(NotEnoughMemoryError, match=r"big\.h5ad.*1000000 x 1000000") as info:
        read_data(path)
    assert info.value.needed >= 8e12


@pytest.mark.parametrize(
    ("parts", "needle"),
    [
        ({"shape": (10_000_000, 1_000_000)}, None),  # densifying 80 TB
        ({"indptr": [0, 1, 2]}, "indptr has 3 entries for 4 rows"),
        ({"indices": [0, 9, 2, 1, 0]}, "column indices outside 0..2"),
        ({"data": [1.0, 2.0]}, "2 values for 5 column indices"),
        ({"indptr": [0, 1, 2, 6, 5]}, "indptr"),
        ({"shape": (4, -3)}, "shape"),
        ({"shape": (4,)}, "shape"),
    ],
)
def test_an_inconsistent_sparse_matrix_is_named(tmp_path, parts, needle):
    from rankers.exceptions import NotEnoughMemoryError

    m = sparse.csr_matrix(X)
    given = {"shape": X.shape, "data": m.data, "indices": m.indices, "indptr": m.indptr, **parts}

    def build(f):
        group = f.create_group("X")
        group.attrs.update({"encoding-type": "csr_matrix", "shape": given["shape"]})
        for key in ("data", "indices", "indptr"):
            group[key] = np.asarray(given[key])

    path = _file(tmp_path / "sparse.h5ad", build)
    if needle is None:
        with pytest.raises(NotEnoughMemoryError, match=r"sparse\.h5ad.*10000000 x 1000000"):
            read_data(path)
        return
    with pytest.raises(DataFileError, match=needle):
        read_data(path)


def test_names_and_obs_columns_of_the_wrong_length_are_named(tmp_path):
    def build(f):
        f["X"] = X

    path = tmp_path / "a.h5ad"
    with h5py.File(path, "w") as f:
        build(f)
        _frame(f, "var", GENES[:2], {})
        _frame(f, "obs", CELLS, {"age": _numbers([30, 41, 52])})
    with pytest.raises(DataFileError, match="var has 2 names for 3 columns"):
        read_data(path)
    with h5py.File(path, "a") as f:
        del f["var"]
        _frame(f, "var", GENES, {})
    with pytest.raises(DataFileError, match="obs column 'age' has 3 values for 4 rows"):
        read_data(path, target="age")
