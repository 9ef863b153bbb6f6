"""The pipeline's whole-table paths agree with their per-column definitions (issue 39 item 2).

A wide file (thousands of columns) is checked, prepared and fingerprinted as blocks of one
dtype, and its header is read with the ``csv`` module; each test here holds such a path to
the per-column (or pandas) definition it replaces, on tables mixing the cases that differ:
gaps, all-gap columns, infinities, signed zeros, integers counting rows, ids, text, dates,
nullable integers, booleans.
"""

from __future__ import annotations

import bz2
import gzip
import lzma

import numpy as np
import pandas as pd
import pytest

from moweights.pipeline.problems import _constant, _identifier, _identifiers, identifier_columns


def _mixed(m: int = 30, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(m, 4)), columns=list("abcd"))
    frame.loc[3, "b"] = np.nan
    frame["gaps"] = np.nan
    frame["one"] = 1.5
    frame["one_gap"] = 2.0
    frame.loc[0, "one_gap"] = np.nan
    frame["zeros"] = np.where(np.arange(m) % 2, 0.0, -0.0)
    frame["inf"] = np.inf
    frame["span"] = np.r_[-np.inf, np.full(m - 1, np.inf)]
    frame["rows"] = np.arange(m) + 7  # consecutive: an identifier
    frame["PatientID"] = rng.permutation(1000)[:m] + 5000  # distinct, named like an id
    frame["reads"] = rng.permutation(10_000)[:m]  # distinct counts: a feature
    frame["repeats"] = np.arange(m) // 2
    frame["u8"] = np.arange(m, dtype=np.uint8)
    frame["const_int"] = np.int32(4)
    frame["big"] = np.r_[np.iinfo(np.int64).min, np.iinfo(np.int64).max, np.arange(m - 2)]
    frame["flag"] = np.arange(m) % 3 == 0
    frame["all_true"] = True
    frame["sample"] = [f"S{i:03d}" for i in range(m)]
    frame["site"] = ["x", "y"] * (m // 2)
    frame["when"] = pd.date_range("2020-01-01", periods=m)
    frame["nullable"] = pd.array([*range(m - 1), None], dtype="Int64")
    frame["nullable_one"] = pd.array([None] * (m - 1) + [3], dtype="Int64")
    return frame


@pytest.mark.parametrize("m", [0, 5, 9, 10, 30])
def test_identifiers_match_the_per_column_rule(m):
    frame = _mixed(30).iloc[:m]
    expected = {c: why for c in frame.columns if (why := _identifier(c, frame[c])) is not None}
    assert _identifiers(frame) == expected
    assert identifier_columns(frame) == {str(c): w for c, w in expected.items()}
    if m == 30:
        assert set(expected) == {"rows", "PatientID", "u8", "sample", "nullable"}


@pytest.mark.parametrize("m", [0, 1, 2, 30])
def test_constant_columns_match_nunique(m):
    frame = _mixed(30).iloc[:m]
    expected = [c for c in frame.columns if frame[c].nunique(dropna=True) <= 1]
    with np.errstate(all="raise"):
        found = list(frame.columns[_constant(frame)])
    assert found == expected
    if m == 30:
        assert found == ["gaps", "one", "one_gap", "zeros", "inf", "const_int", "all_true",
                         "nullable_one"]  # fmt: skip


def test_identifier_columns_with_repeated_names_still_answer():
    frame = pd.DataFrame({"a": np.arange(12), "b": np.arange(12.0)})
    frame.columns = ["id", "id"]
    assert identifier_columns(frame) == {"id": "the consecutive numbers 0..11"}


# ------------------------------------------------------------------ the header of a file
HEADERS = [
    "a,b,y",
    ",a,b",  # pandas' index written to a file: "Unnamed: 0"
    "a,b,",
    'a,"",b',
    "a, ,b",
    "\n\na,b\n",
    "  \na,b",  # a line of spaces: pandas skips it
    "\ufeffa,b",  # a byte-order mark
    'a,"b,c",d',
    '"a""q",b',
    '"x\ny",z',
    "a,a,b,a",  # repeats: a, a.1, b, a.2
    "a,a,a.1",  # pandas renames around an existing a.1
    "a,Unnamed: 1,",
    "\u00e9t\u00e9,\u4e2d",
]


def _write(path, text: str) -> None:
    data = (text + "\n1,2,3,4\n").encode()
    opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(path.suffix, open)
    with opener(path, "wb") as fh:
        fh.write(data)


@pytest.mark.parametrize("name", ["data.csv", "data.csv.gz", "data.csv.bz2", "data.tsv.xz"])
@pytest.mark.parametrize("header", HEADERS)
def test_read_columns_names_columns_as_pandas_does(tmp_path, name, header):
    from moweights.data import duplicate_columns, read_columns

    sep = "\t" if ".tsv" in name else ","
    path = tmp_path / name
    _write(path, header.replace(",", sep))
    assert read_columns(path) == [str(c) for c in pd.read_csv(path, sep=sep, nrows=0).columns]
    row = pd.read_csv(path, sep=sep, header=None, nrows=1, dtype=str, keep_default_na=False)
    counts = pd.Series(row.iloc[0].to_numpy()).value_counts(sort=False)
    assert duplicate_columns(path) == {str(k): int(v) for k, v in counts.items() if v > 1 and k}


def test_a_zip_header_is_read_by_pandas(tmp_path):
    from moweights.data import duplicate_columns, read_columns

    pd.DataFrame([[1, 2, 3]], columns=["a", "b", "a"]).to_csv(tmp_path / "d.csv.zip", index=False)
    assert read_columns(tmp_path / "d.csv.zip") == ["a", "b", "a.1"]
    assert duplicate_columns(tmp_path / "d.csv.zip") == {"a": 2}


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b"", "the file is empty"),
        (b"\n\n", "the file is empty"),
        (np.random.default_rng(0).bytes(400), "binary"),
        (b"a,b\xff\xfe,c\n1,2,3\n", "Latin-1 / Windows-1252 text"),  # 'bÿþ' in cp1252
        (b"a,b\x81\x8d\x8f,c\n1,2,3\n", "binary"),  # bytes cp1252 leaves undefined
    ],
)
def test_an_unreadable_header_is_one_data_file_error(tmp_path, content, needle):
    from moweights.data import duplicate_columns, read_columns
    from moweights.errors import DataFileError

    (tmp_path / "data.csv").write_bytes(content)
    for read in (read_columns, duplicate_columns):
        with pytest.raises(DataFileError, match=needle):
            read(tmp_path / "data.csv")
    (tmp_path / "data.csv.gz").write_bytes(content)  # not gzip at all, or empty
    for read in (read_columns, duplicate_columns):
        with pytest.raises(DataFileError, match=r"data\.csv\.gz"):
            read(tmp_path / "data.csv.gz")


def test_text_columns_match_the_per_column_rule():
    from moweights.data.preprocess import _text_columns

    frame = _mixed()
    frame["cat"] = pd.Categorical(["u", "v"] * 15)
    frame["nullable_bool"] = pd.array([True, False, None] * 10, dtype="boolean")
    frame["float32"] = np.float32(1.0)
    expected = [
        c
        for c in frame.columns
        if not (pd.api.types.is_numeric_dtype(frame[c]) or pd.api.types.is_bool_dtype(frame[c]))
    ]
    assert _text_columns(frame) == expected == ["sample", "site", "when", "cat"]


# ------------------------------------------------------------------ the data's fingerprint
def _fingerprint_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "a": [0.5, -1.25, np.nan],
            "n": np.array([1, 2, 3], dtype=np.int64),
            "s": ["x", "y", "z"],
            "b": [1.0, 2.0, 3.0],
            "f32": np.array([1, 2, 3], dtype=np.float32),
        }
    )


def test_fingerprint_is_pinned_and_depends_on_every_part():
    from moweights.pipeline.data import fingerprint

    frame, y = _fingerprint_frame(), np.array([0, 1, 0])
    base = fingerprint(frame, y)
    # the same bytes on every machine (little-endian blocks, pandas' seeded hash for text)
    assert base == "5723267d4eeba8585dbed61d9dbd5c20d4942f48a1f8c3929f625946733ab5f8"
    assert fingerprint(frame.copy(), y.copy()) == base
    assert fingerprint(pd.DataFrame({c: frame[c].copy() for c in frame}), list(y)) == base
    changed = [
        frame.assign(a=[0.5, -1.25, 0.0]),
        frame.assign(b=np.nextafter(frame["b"], 9)),
        frame.assign(s=["x", "y", "w"]),
        frame.assign(n=frame["n"].astype(np.int32)),
        frame.rename(columns={"b": "c"}),
        frame[["b", "n", "s", "a", "f32"]],
        frame.iloc[:2],
    ]
    fps = {fingerprint(f, y[: len(f)]) for f in changed} | {fingerprint(frame, None), base}
    assert len(fps) == len(changed) + 2
    assert fingerprint(frame, np.array([0, 1, 1])) != base


# ------------------------------------------------------------------ tables rewritten per step
def test_a_table_is_reused_only_when_it_would_print_the_same():
    from moweights.output.files import csv_text
    from moweights.output.folder import _same_table

    base = pd.DataFrame(
        {"score": [0.5, np.nan, 0.0], "label": ["a", "b", "c"], "n": [1, 2, 3]},
        index=pd.Index(["x1", "x2", "x3"], name="feature"),
    )
    assert _same_table(base, base.copy())
    different = [
        base.assign(score=[0.5, np.nan, -0.0]),  # prints "-0"
        base.assign(label=["a", "b", 1]),
        base.assign(label=["a", "b", "c "]),
        base.assign(n=[1.0, 2.0, 3.0]),
        base.assign(n=np.array([1, 2, 3], dtype=np.int32)),
        base.rename_axis(index="name"),
        base.rename(index={"x3": "x4"}),
        base.rename(columns={"n": "m"}),
        base.iloc[:2],
        base[["label", "score", "n"]],
    ]
    for frame in different:
        assert not _same_table(base, frame)
    # whatever the answer, equal answers mean equal files
    for frame in [base.copy(), *different]:
        if _same_table(base, frame):
            assert csv_text(frame) == csv_text(base)


def test_the_run_folder_encodes_an_unchanged_table_once(monkeypatch):
    from moweights.output import folder as module

    calls = []

    def counting(frame, index=True):
        calls.append(len(frame))
        return f"{len(frame)} rows, {frame.iloc[0, 0]}\n"

    monkeypatch.setattr(module, "csv_text", counting)
    run_folder = object.__new__(module.RunFolder)  # no folder on disk: _csv alone
    frame = pd.DataFrame({"a": [1.0, 2.0]}, index=pd.Index(["x", "y"], name="feature"))
    first = run_folder._csv("scores.csv", frame, True)
    assert run_folder._csv("scores.csv", frame.copy(), True) == first
    frame.iloc[0, 0] = 5.0  # the caller's table changes after the write: seen
    assert run_folder._csv("scores.csv", frame, True) == "2 rows, 5.0\n"
    assert run_folder._csv("scores.csv", frame, False) == "2 rows, 5.0\n"
    assert calls == [2, 2, 2]


def test_numeric_columns_for_the_log_match_the_per_column_rule():
    from moweights.data.transform import _numeric

    frame = _mixed()
    frame["nullable_bool"] = pd.array([True, False, None] * 10, dtype="boolean")
    frame["float32"] = np.float32(1.0)
    expected = [
        c
        for c in frame.columns
        if pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
    ]
    assert _numeric(frame) == expected
    assert "flag" not in expected and "nullable" in expected and "float32" in expected


# ------------------------------------------------------------------ one read of the data
def test_a_run_reads_its_data_file_once(tmp_path, monkeypatch):
    from moweights.cli import main

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(20, 30)), columns=[f"g{j}" for j in range(30)])
    frame["y"] = np.repeat([0, 1], 10)
    frame.to_csv(tmp_path / "data.csv", index=False)
    (tmp_path / "run.toml").write_text(
        '[data]\npath = "data.csv"\ntarget = "y"\n[[rankers]]\nname = "variance"\n'
        "[evaluation]\nenabled = false\n[output]\nplots = false\nhtml = false\n"
    )
    reads = []
    read_csv = pd.read_csv

    def counting(source, *args, **kwargs):
        if str(source).endswith("data.csv"):
            reads.append(kwargs.get("nrows"))
        return read_csv(source, *args, **kwargs)

    monkeypatch.setattr(pd, "read_csv", counting)
    for command in (["validate"], ["run", "-o", str(tmp_path / "out")]):
        reads.clear()
        assert main([*command, str(tmp_path / "run.toml"), "-q"]) == 0
        assert reads == [None]  # the whole file once; its header by the csv module
