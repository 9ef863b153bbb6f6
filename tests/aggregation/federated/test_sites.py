"""One table split into sites (split_sites) and a site's file read (read_table): one home each,
used by rank_sites and by moweights' data loading alike."""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest

import moweights.datasets
from aggregation.federated import rank_sites, read_table, split_sites
from aggregation.federated.sites import spawn_seeds
from rankers.exceptions import DataFileError, InvalidInputError, InvalidParameterError

pytestmark = pytest.mark.quick  # in the quick suite (pytest -m quick): see pyproject.toml


def _table(sites):
    rng = np.random.default_rng(0)
    n = len(sites)
    return pd.DataFrame({"site": sites, "a": rng.normal(size=n), "b": rng.normal(size=n)})


# ------------------------------------------------------------------ split_sites
def test_sites_are_named_by_their_values_in_natural_order():
    X = _table(["s10", "s2", "s10", "s1", "s2"])
    y = pd.Series([0, 1, 0, 1, 1], name="target")
    sites = split_sites(X, y, "site")
    assert list(sites) == ["s1", "s2", "s10"]  # not "s1", "s10", "s2"
    part, target = sites["s10"]
    assert list(part.columns) == ["a", "b"]
    assert part["a"].tolist() == X["a"].iloc[[0, 2]].tolist()  # rows keep their order
    assert part.index.tolist() == [0, 1] and target.index.tolist() == [0, 1]
    assert target.tolist() == [0, 0]
    numbers = split_sites(_table([10, 2, 1]), None, "site")
    assert list(numbers) == ["1", "2", "10"] and numbers["1"][1] is None


def test_a_row_without_a_site_is_refused_not_a_site_named_nan():
    X = _table(["a", None, "b", np.nan])
    with pytest.raises(InvalidInputError, match=r"'site' is missing in 2 row\(s\)"):
        split_sites(X, None, "site")


def test_values_that_print_alike_are_refused():
    X = _table([1, "1", 2])
    with pytest.raises(InvalidInputError, match="print alike"):
        split_sites(X, None, "site")


def test_a_missing_column_is_named_with_the_columns_there_are():
    with pytest.raises(InvalidInputError, match=r"'hospital' is not in the data.*'site', 'a'"):
        split_sites(_table(["a"]), None, "hospital")


def test_moweights_and_rank_sites_split_the_same_way():
    assert moweights.datasets.split_sites is split_sites
    X = _table(["s10", "s2"] * 15 + ["s1"] * 10)
    res = rank_sites(X, "variance", site_column="site")
    assert list(res.rankings) == ["s1", "s2", "s10"]
    assert res.sizes == {s: len(part) for s, (part, _) in split_sites(X, None, "site").items()}
    with pytest.raises(InvalidInputError, match="missing in 1 row"):
        rank_sites(_table(["a", None]), "variance", site_column="site")


def test_site_seeds_follow_the_site_positions():
    assert spawn_seeds(None, 3) == [None, None, None]
    children = np.random.SeedSequence(11).spawn(2)
    assert spawn_seeds(11, 2) == [int(c.generate_state(1)[0]) for c in children]
    assert spawn_seeds(np.random.SeedSequence(11), 2) == spawn_seeds(11, 2)
    with pytest.raises(InvalidParameterError, match="random_state"):
        spawn_seeds(True, 2)


# ------------------------------------------------------------------ read_table
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
        ("t.csv", b"\xff\xfe\x00binary", "not a UTF-8 text file"),
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
    X, y = moweights.datasets.load_file(path, target="y")
    assert X.equals(read_table(path).drop(columns="y")) and y.tolist() == [0, 1]
    (tmp_path / "bad.csv").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(DataFileError, match=r"cannot read .*bad\.csv: not a UTF-8"):
        moweights.datasets.load_file(tmp_path / "bad.csv")
    (tmp_path / "t.txt").write_text("a\n1\n")
    with pytest.raises(
        DataFileError, match=r"\.csv, \.tsv \(optionally \.gz\), \.parquet, \.mat or \.h5ad"
    ):
        moweights.datasets.load_file(tmp_path / "t.txt")  # its own formats, .mat included
