"""csv, tsv and parquet tables (read_table): what a federated site and moweights' data loading
read, one reader for both."""

from __future__ import annotations

import gzip

import pandas as pd
import pytest

import moweights.data
from moweights.data.readers import read_table
from moweights.errors import DataFileError
from rankers.exceptions import InvalidInputError


@pytest.mark.parametrize("name", ["t.csv", "t.tsv", "t.tab", "t.csv.gz", "t.TSV", "t.parquet"])
def test_every_table_format_reads_back(tmp_path, name):
    frame = pd.DataFrame({"x": [1.5, 2.5], "7": [3, 4]})
    path = tmp_path / name
    if "parquet" in name:
        pytest.importorskip("pyarrow", reason="needs the 'parquet' extra: pip install '.[parquet]'")
        frame.to_parquet(path)
    else:
        sep = "," if ".csv" in name else "\t"
        frame.to_csv(path, sep=sep, index=False)
    got = read_table(path)
    assert list(got.columns) == ["x", "7"]  # names are strings
    assert got.to_numpy().tolist() == frame.to_numpy().tolist()


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("nowhere.csv", None, r"site data file not found: .*nowhere\.csv"),
        ("t.xlsx", b"", r"cannot read .*t\.xlsx: use \.csv, \.tsv"),
        ("t.csv", b"\xff\xfe\x00binary", "a NUL byte at position 2: binary data"),
        ("t.csv", b"\x81\x8d binary", "not a UTF-8 text file"),
        ("t.csv", b"", "the file is empty"),
        ("t.csv", b"a,b\n1,2\n3,4,5,6\n", "not a well-formed table"),
    ],
)
def test_an_unreadable_file_is_a_data_file_error_naming_it(tmp_path, name, content, message):
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(DataFileError, match=message) as info:
        read_table(path, what="site data file")
    assert isinstance(info.value, InvalidInputError)
    assert "\n" not in str(info.value)


def test_moweights_load_file_reads_through_the_same_reader(tmp_path):
    path = tmp_path / "t.csv.gz"
    with gzip.open(path, "wt") as fh:
        fh.write("a,b,y\n1,2,0\n3,4,1\n")
    X, y = moweights.data.load_file(path, target="y")
    assert X.equals(read_table(path).drop(columns="y")) and y.tolist() == [0, 1]
    (tmp_path / "bad.csv").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(DataFileError, match=r"cannot read .*bad\.csv: a NUL byte at position 2"):
        moweights.data.load_file(tmp_path / "bad.csv")
    (tmp_path / "t.txt").write_text("a\n1\n")
    with pytest.raises(
        DataFileError, match=r"\.csv, \.tsv \(optionally \.gz\), \.parquet, \.mat or \.h5ad"
    ):
        moweights.data.load_file(tmp_path / "t.txt")  # its own formats, .mat included


def test_load_file_refuses_repeated_headers_and_an_unnamed_index_as_run_does(tmp_path):
    """issue 48 item 11: pandas renamed the second 'a' to 'a.1' and kept 'Unnamed: 0'."""
    path = tmp_path / "twice.csv"
    path.write_text("a,b,a,label\n1,2,3,x\n4,5,6,y\n")
    with pytest.raises(DataFileError, match=r"twice\.csv repeats column names: 'a' \(2 times\)"):
        moweights.data.load_file(path, target="label")
    frame = pd.DataFrame({"g1": [1.5, 2.5, 3.5], "g2": [0.1, 0.2, 0.3], "label": list("xyx")})
    frame.to_csv(tmp_path / "indexed.csv")  # index=True: an "Unnamed: 0" column of 0, 1, 2
    with pytest.raises(DataFileError, match=r"column 'Unnamed: 0' is a row index"):
        moweights.data.load_file(tmp_path / "indexed.csv", target="label")
    frame.to_csv(tmp_path / "plain.csv", index=False)
    X, y = moweights.data.load_file(tmp_path / "plain.csv", target="label")
    assert list(X.columns) == ["g1", "g2"] and y.tolist() == list("xyx")


def test_a_file_of_nul_bytes_is_refused_before_it_is_read(tmp_path):
    """issue 48 item 9: 2 GB of NUL bytes cost 2.3 GB and 39 s before their error; a
    sparse 1 GB file here: refused from its first 64 kB (the header check included)."""
    from moweights.data.readers import read_columns

    path = tmp_path / "zeros.csv"
    with open(path, "wb") as f:
        f.truncate(2**30)
    for read in (read_table, read_columns):
        with pytest.raises(DataFileError, match=r"zeros\.csv: a NUL byte at position 0: binary"):
            read(path)
    utf16 = tmp_path / "wide.csv"
    utf16.write_text("a,b\n1,2\n", encoding="utf-16")
    with pytest.raises(DataFileError, match="UTF-16 text"):
        read_table(utf16)
