"""The one home of reading user data files (issue 38 item 2): the table of readers, every
format read back through it, and nothing outside it reading a user's file."""

from __future__ import annotations

import ast
import gzip
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from moweights.data.readers import (
    READERS,
    data_format,
    duplicate_columns,
    read_columns,
    read_data,
    read_table,
)
from moweights.errors import DataFileError
from rankers.exceptions import InvalidInputError

REPO = Path(__file__).resolve().parents[4]
HOME = REPO / "moweights" / "data" / "readers"

#: the formats a user's data file may have, each with its suffixes and optional extra
LISTED = {
    "csv": ((".csv",), None),
    "tsv": ((".tsv", ".tab"), None),
    "parquet": ((".parquet",), "parquet"),
    "mat": ((".mat",), None),
    "h5ad": ((".h5ad",), "h5ad"),
}


def test_the_readers_are_these():
    assert {kind: (r.suffixes, r.extra) for kind, r in READERS.items()} == LISTED
    for reader in READERS.values():
        assert callable(reader.read) and callable(reader.columns)


def test_every_listed_extra_is_an_extra_of_the_distribution():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    assert {r.extra for r in READERS.values() if r.extra} <= set(extras)


FRAME = pd.DataFrame({"g1": [1.0, 2.0, 3.0], "g2": [0.5, 0.25, 0.0], "label": [0, 1, 0]})


def _write(kind: str, path: Path) -> None:
    """FRAME in format ``kind`` (a .mat file: X and its labels Y, scikit-feature's layout)."""
    if kind == "csv":
        FRAME.to_csv(path, index=False)
    elif kind == "tsv":
        FRAME.to_csv(path, sep="\t", index=False)
    elif kind == "parquet":
        pytest.importorskip("pyarrow", reason="needs the 'parquet' extra: pip install '.[parquet]'")
        FRAME.to_parquet(path)
    elif kind == "mat":
        from scipy.io import savemat

        savemat(path, {"X": FRAME[["g1", "g2"]].to_numpy(), "Y": FRAME[["label"]].to_numpy()})
    else:
        h5py = pytest.importorskip("h5py", reason="needs the 'h5ad' extra: pip install '.[h5ad]'")
        text = h5py.string_dtype()
        with h5py.File(path, "w") as f:
            f.create_dataset("X", data=FRAME[["g1", "g2"]].to_numpy())
            var = f.create_group("var")
            var.attrs["_index"] = "_index"
            var.create_dataset("_index", data=np.array(["g1", "g2"], dtype=text))
            obs = f.create_group("obs")
            obs.attrs["_index"] = "_index"
            obs.create_dataset("_index", data=np.array(["c0", "c1", "c2"], dtype=text))
            obs.create_dataset("label", data=FRAME["label"].to_numpy())


@pytest.mark.parametrize("kind", list(LISTED))
def test_every_format_reads_back_with_its_header_alone_naming_the_same_columns(tmp_path, kind):
    path = tmp_path / f"data{LISTED[kind][0][-1]}"
    _write(kind, path)
    assert data_format(path) == kind
    target = None if kind == "mat" else "label"  # a .mat file's target is its Y
    X, y = read_data(path, target)
    np.testing.assert_array_equal(X.to_numpy(float), FRAME[["g1", "g2"]].to_numpy())
    assert y.name == "target" and y.tolist() == [0, 1, 0]
    names = ["x0", "x1"] if kind == "mat" else ["g1", "g2", "label"]
    assert list(X.columns) == names[:2] and read_columns(path) == names
    assert duplicate_columns(path) == {}


def test_a_compressed_table_is_a_table(tmp_path):
    path = tmp_path / "site.tsv.gz"
    with gzip.open(path, "wt") as fh:
        FRAME.to_csv(fh, sep="\t", index=False)
    assert data_format(path) == "tsv" and read_columns(path) == list(FRAME.columns)
    pd.testing.assert_frame_equal(read_table(path), FRAME)


def test_an_unknown_suffix_names_the_formats(tmp_path):
    path = tmp_path / "data.xlsx"
    path.write_text("a,b\n1,2\n")
    for read in (read_data, read_columns, duplicate_columns):
        with pytest.raises(DataFileError, match=r"use \.csv, \.tsv .*\.parquet, \.mat or \.h5ad"):
            read(path)
    with pytest.raises(DataFileError, match="data file not found"):
        read_data(tmp_path / "nothing.csv")
    with pytest.raises(DataFileError, match="is a folder"):
        read_columns(tmp_path)


def test_genes_as_rows_are_turned_as_they_are_read(tmp_path):
    path = tmp_path / "genes.csv"
    pd.DataFrame({"gene": ["TP53", "BRCA1", "label"], "s1": [1.0, 2.0, 0], "s2": [3, 4, 1]}).to_csv(
        path, index=False
    )
    X, y = read_data(path, "label", transpose=True)
    assert list(X.columns) == ["TP53", "BRCA1"] and list(X.index) == ["s1", "s2"]
    assert X["TP53"].tolist() == [1.0, 3.0] and y.tolist() == [0, 1] and y.name == "target"
    X, y = read_data(path, transpose=True)
    assert list(X.columns) == ["TP53", "BRCA1", "label"] and y is None
    with pytest.raises(InvalidInputError, match="'grade' is not a row"):
        read_data(path, "grade", transpose=True)


def test_repeated_header_names_are_counted(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("a,b,a,a\n1,2,3,4\n")
    assert duplicate_columns(path) == {"a": 3}
    assert read_columns(path) == ["a", "b", "a.1", "a.2"]  # as pandas names them


# ------------------------------------------------------------------ nothing else reads them
#: calls that open a user's data file; only the readers make them
READING_CALLS = {"read_csv", "read_parquet", "read_schema", "loadmat", "whosmat"}
#: the same, when called on these modules (``read_table`` alone is our own reader)
READING_ATTRIBUTES = {("pd", "read_table"), ("pandas", "read_table"), ("h5py", "File")}
#: reading a run's own output folder back (features.csv, scores.csv, ...) is no user data
OUTPUT_READERS = ("moweights/output/",)


def _reading_calls(source: str) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        owner = getattr(getattr(func, "value", None), "id", None)
        if name in READING_CALLS or (owner, name) in READING_ATTRIBUTES:
            found.append((node.lineno, f"{owner}.{name}" if owner else name))
    return found


#: modules whose import means reading files of a data format (scipy.io: .mat; h5py: .h5ad;
#: pyarrow.parquet: parquet headers); only the readers import them
READING_MODULES = ("scipy.io", "h5py", "pyarrow.parquet")


def _reading_imports(source: str) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        found += [(node.lineno, f"import {n}") for n in names if n in READING_MODULES]
    return found


def reads_outside_the_readers(repo: Path) -> tuple[list[str], list[tuple[int, str]]]:
    """(reading calls and reader imports outside ``moweights/data/readers``, the calls inside).

    ``aggregation`` computes on in-memory data only, so it may neither call a reader nor
    import a format's library; ``rankers`` neither; in ``moweights`` only the run-folder
    readers of ``moweights/output`` read files (their own output, no user data).
    """
    home = repo / HOME.relative_to(REPO)
    outside, inside = [], []
    for package in ("rankers", "aggregation", "moweights"):
        for path in sorted((repo / package).rglob("*.py")):
            where = path.relative_to(repo).as_posix()
            source = path.read_text(encoding="utf-8")
            calls = _reading_calls(source)
            if path.is_relative_to(home):
                inside += calls
                continue
            if not where.startswith(OUTPUT_READERS):
                outside += [f"{where}:{line}: {name}" for line, name in calls]
            outside += [f"{where}:{line}: {name}" for line, name in _reading_imports(source)]
    return outside, inside


def test_no_module_outside_the_readers_reads_a_data_file():
    outside, inside = reads_outside_the_readers(REPO)
    assert outside == []
    assert {name for _, name in inside} >= {"pd.read_csv", "pd.read_parquet", "h5py.File"}


@pytest.mark.parametrize(
    ("module", "line"),
    [
        ("aggregation/federated/sites.py", "frame = pd.read_csv(data)"),
        ("aggregation/federated/rank.py", "from scipy.io import loadmat"),
        ("aggregation/evaluation/topk.py", "import h5py"),
        ("moweights/pipeline/data.py", "frame = pd.read_parquet(path)"),
        ("rankers/base.py", "import pyarrow.parquet as pq"),
    ],
)
def test_a_planted_read_outside_the_readers_is_found(tmp_path, module, line):
    for package in ("rankers", "aggregation", "moweights"):
        shutil.copytree(
            REPO / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    assert reads_outside_the_readers(tmp_path)[0] == []
    target = tmp_path / module
    target.write_text(target.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    (found,) = reads_outside_the_readers(tmp_path)[0]
    assert found.startswith(f"{module}:")


def test_the_scan_finds_each_way_of_reading():
    source = (
        "import pandas as pd\nfrom scipy.io import loadmat\n"
        "pd.read_csv(p)\npd.read_parquet(p)\nloadmat(p)\nh5py.File(p)\npq.read_schema(p)\n"
        "pd.read_table(p)\nread_table(p)\nreaders.read_table(p)\n"  # the last two: ours
    )
    assert [name for _, name in sorted(_reading_calls(source))] == [
        "pd.read_csv",
        "pd.read_parquet",
        "loadmat",
        "h5py.File",
        "pq.read_schema",
        "pd.read_table",
    ]


def test_the_readers_contract_forbids_aggregation_and_every_other_module_but_errors():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c["type"] == "forbidden" and "moweights.data.readers" in c["source_modules"]
    ]
    siblings = {
        f"{package}.{p.stem}"
        for package in ("moweights", "moweights.data")
        for p in (REPO / package.replace(".", "/")).iterdir()
        if (p.suffix == ".py" and p.stem not in ("__init__", "__main__"))
        or (p / "__init__.py").is_file()
    }
    # the readers raise the application's errors (moweights.errors, below them); of the
    # data wing they are the lowest layer, every other module of it forbidden
    expected = (siblings - {"moweights.data", "moweights.data.readers", "moweights.errors"}) | {
        "aggregation"
    }
    assert set(contract["forbidden_modules"]) == expected
