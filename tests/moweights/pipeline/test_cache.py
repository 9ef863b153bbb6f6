"""The run cache holds data, never code: planted pickles, damaged entries, edited code."""

from __future__ import annotations

import io
import pickle
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from aggregation import GenericRanking, Ranking
from moweights.config import parse_config
from moweights.pipeline import run

RAW = {
    "data": {"builtin": "iris"},
    "rankers": [
        {"name": "variance"},
        {"name": "mo_weighting", "label": "nsga2", "params": {"pop_size": 8, "n_gen": 3}},
    ],
    "evaluation": {
        "cv": 3,
        "topk": {"n_random": 2},
        "error_curves": {"n_random": 2},
        "clustering": {"k_features": [1, 2], "n_restarts": 2},
    },
    "output": {"plots": False, "html": False},
    "run": {"verbose": 1, "random_state": 5},
}
SITES = {
    "sites": [
        {"name": "north", "builtin": "wine", "rows": [0, 90]},
        {"name": "south", "builtin": "wine", "rows": [90, 178]},
    ],
    "rankers": [{"name": "variance"}, {"name": "laplacian"}],
    "aggregation": {"methods": ["generic", "mean_rank", "weighted_mean_rank"]},
    "evaluation": {"cv": 3, "topk": {"n_random": 2}},
    "output": {"plots": False, "html": False},
    "run": {"verbose": 1},
}
FRAMES = ("curve_folds", "curves", "error_curves", "expected", "eca", "clustering")


def _run(raw, out, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run(parse_config(raw), out, **kw)
    return result, [str(w.message) for w in caught]


def _entries(out: Path) -> list[Path]:
    return sorted(p for p in (out / ".cache").iterdir() if not p.name.startswith("."))


def _assert_same_results(a, b):
    assert list(a.rankings) == list(b.rankings)
    for label, ranking in a.rankings.items():
        other = b.rankings[label]
        assert ranking.names == other.names and ranking.method == other.method
        assert ranking.scores.tobytes() == other.scores.tobytes()  # bit for bit
        assert list(ranking.order_idx) == list(other.order_idx)
    for label, parts in a.pareto.items():
        for name, frame in parts.items():
            pd.testing.assert_frame_equal(frame, b.pareto[label][name], check_exact=True)
    for name in FRAMES:
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            pd.testing.assert_frame_equal(x, y, check_exact=True)
    for label, sites in a.site_rankings.items():
        other = b.site_rankings[label]
        assert sites.rankings == other.rankings and sites.aggregated == other.aggregated
        assert sites.generic == other.generic and sites.sizes == other.sizes
        for measure, matrix in sites.similarity.items():
            pd.testing.assert_frame_equal(matrix, other.similarity[measure], check_exact=True)
            assert matrix.attrs == other.similarity[measure].attrs


class _Payload:
    """Unpickling it writes a marker file: the proof that a cache file ran code."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (self.marker, "code from the cache ran"))


@pytest.fixture(scope="module")
def first(tmp_path_factory):
    """One cached run into a folder; tests copy the folder before planting anything."""
    out = tmp_path_factory.mktemp("cache") / "out"
    result, _ = _run(RAW, out)
    return out, result


def _copy(first, tmp_path) -> Path:
    import shutil

    out = tmp_path / "out"
    shutil.copytree(first[0], out)
    return out


# ------------------------------------------------------------------ through the pipeline
def test_a_planted_pickle_is_never_executed(first, tmp_path):
    out = _copy(first, tmp_path)
    marker = tmp_path / "pwned"
    payload = pickle.dumps(_Payload(marker))
    entries = _entries(out)
    assert entries
    for path in entries:  # under the very names the entries have (and beside, as .pkl)
        path.write_bytes(payload)
        path.with_suffix(".pkl").write_bytes(payload)
    # an .npz holding the payload as an object array: numpy would unpickle it on load
    buffer = io.BytesIO()
    np.savez(buffer, __header__=np.array("{}"), a0=np.array([_Payload(marker)], dtype=object))
    entries[0].write_bytes(buffer.getvalue())
    try:
        result, messages = _run(RAW, out)
    finally:
        assert not marker.exists(), "a cache file executed code"
    assert result.status == "complete"
    # every entry was recomputed (steps of equal keys in one run share an entry)
    assert (result.computed, result.cached) == (first[1].computed, first[1].cached)
    assert sum("unusable" in m for m in messages) == len(entries)
    _assert_same_results(result, first[1])


@pytest.mark.parametrize("damage", ["truncated", "garbage", "swapped", "empty"])
def test_a_damaged_entry_warns_and_is_recomputed(first, tmp_path, damage):
    out = _copy(first, tmp_path)
    entries = _entries(out)
    data = [p.read_bytes() for p in entries]
    rng = np.random.default_rng(0)
    for i, path in enumerate(entries):
        if damage == "truncated":
            path.write_bytes(data[i][: len(data[i]) // 2])
        elif damage == "garbage":
            path.write_bytes(rng.bytes(len(data[i])))
        elif damage == "swapped":  # a valid entry of another step under this name
            path.write_bytes(data[(i + 1) % len(data)])
        else:
            path.write_bytes(b"")
    result, messages = _run(RAW, out)
    assert result.status == "complete"
    assert (result.computed, result.cached) == (first[1].computed, first[1].cached)
    unusable = [m for m in messages if "unusable" in m]
    assert len(unusable) == len(entries), messages
    _assert_same_results(result, first[1])
    again, messages = _run(RAW, out)  # the recomputed entries are good again
    assert not again.computed and not any("unusable" in m for m in messages)


def test_results_from_the_cache_equal_fresh_ones_exactly(first, tmp_path):
    out = _copy(first, tmp_path)
    cached, _ = _run(RAW, out)
    assert not cached.computed
    fresh, _ = _run(RAW, tmp_path / "fresh", cache=False)
    assert not fresh.cached
    _assert_same_results(cached, fresh)
    for name in ("scores.csv", "curve_folds.csv", "error_curves.csv", "clustering.csv"):
        assert (out / name).read_bytes() == (tmp_path / "fresh" / name).read_bytes(), name


def test_site_runs_from_the_cache_equal_fresh_ones(tmp_path):
    fresh, _ = _run(SITES, tmp_path / "out")
    cached, _ = _run(SITES, tmp_path / "out")
    assert not cached.computed
    assert any("(sites)" in step for step in cached.cached)
    _assert_same_results(cached, fresh)
    for name in ("site_scores.csv", "sites.json", "site_similarity.csv", "curves.csv"):
        first_bytes = (tmp_path / "out" / name).read_bytes()
        _run(SITES, tmp_path / "again", cache=False)
        assert first_bytes == (tmp_path / "again" / name).read_bytes(), name


def test_edited_code_invalidates_the_cache(first, tmp_path, monkeypatch):
    from moweights.pipeline import cache

    package = tmp_path / "src" / "fake_ranker_code"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("SCALE = 1.0\n")
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    monkeypatch.setattr(cache, "PACKAGES", (*cache.PACKAGES, "fake_ranker_code"))
    cache.code_fingerprint.cache_clear()
    try:
        out = _copy(first, tmp_path)
        first_run, _ = _run(RAW, out)
        assert first_run.computed == first[1].computed  # its entries: made by other code
        second, _ = _run(RAW, out)
        assert not second.computed
        (package / "__init__.py").write_text("SCALE = 2.0\n")
        cache.code_fingerprint.cache_clear()
        edited, _ = _run(RAW, out)
        assert edited.computed == first_run.computed and edited.cached == first_run.cached
    finally:
        cache.code_fingerprint.cache_clear()


# ------------------------------------------------------------------ the format
def test_code_fingerprint_follows_the_source(tmp_path, monkeypatch):
    from moweights.pipeline.cache import code_fingerprint

    package = tmp_path / "fp_pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "m.py").write_text("A = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    before = code_fingerprint(("fp_pkg",))
    assert code_fingerprint(("fp_pkg",)) == before
    (package / "sub" / "m.py").write_text("A = 2\n")
    code_fingerprint.cache_clear()
    assert code_fingerprint(("fp_pkg",)) != before


def _tricky_frame() -> pd.DataFrame:
    floats = np.array([0.1, -0.0, np.nan, np.inf, 5e-324, np.nextafter(1.0, 2.0)])
    frame = pd.DataFrame(
        {
            "f": floats,
            "f32": floats.astype(np.float32),
            "i": np.arange(6, dtype=np.int64) - 3,
            "u": np.arange(6, dtype=np.uint8),
            "b": [True, False] * 3,
            "s": pd.Series(["a", "é", None, "", "x y", "z"], dtype="str"),
            "o": pd.Series(["p", "q", "r", "s", "t", "u"], dtype=object),
        },
        index=pd.Index([f"r{i}" for i in range(6)], name="row"),
    )
    frame.attrs = {"scoring": "accuracy", "quantiles": (0.05, 0.95), "n": 3}
    return frame


@pytest.mark.parametrize(
    "value",
    [
        _tricky_frame(),
        pd.DataFrame({"x": [1.5, 2.5]}, index=pd.RangeIndex(10, 14, 2, name="solution")),
        pd.DataFrame({"x": pd.Series([], dtype=float)}),
        pd.DataFrame(np.eye(2)),
    ],
)
def test_tables_round_trip_exactly(value):
    from moweights.pipeline.cache import decode, encode

    back = decode(*encode(value))
    pd.testing.assert_frame_equal(back, value, check_exact=True)
    assert back.attrs == value.attrs
    for column in value:
        assert back[column].to_numpy().tobytes() == value[column].to_numpy().tobytes()


def test_rankings_and_containers_round_trip():
    from moweights.pipeline.cache import decode, encode

    ranking = Ranking.from_scores({"a": 0.5, "b": 0.5, "c": np.nextafter(0.5, 0)}, method=None)
    generic = GenericRanking([["b", "a"], ["c"]], method="generic")
    value = (ranking, {"g": generic, "n": [1, 2.5, None, "t", True], "t": (1,)}, np.arange(3))
    back = decode(*encode(value))
    assert back[0].names == ranking.names and back[0].method is None
    assert back[0].scores.tobytes() == ranking.scores.tobytes()
    assert list(back[0].order_idx) == list(ranking.order_idx)
    assert back[1]["g"] == generic and back[1]["g"].method == "generic"
    assert back[1]["n"] == [1, 2.5, None, "t", True] and back[1]["t"] == (1,)
    np.testing.assert_array_equal(back[2], np.arange(3))


@pytest.mark.parametrize(
    "value",
    [
        object(),
        {1: "non-string key"},
        np.array([object()], dtype=object),
        pd.DataFrame({"when": pd.to_datetime(["2024-01-01"])}),
        pd.DataFrame({"mixed": pd.Series(["a", 1], dtype=object)}),
        pd.DataFrame({"c": pd.Categorical(["a"])}),
    ],
)
def test_values_the_cache_does_not_hold_are_refused(value):
    from moweights.pipeline.cache import CacheFormatError, encode

    with pytest.raises(CacheFormatError):
        encode(value)


def test_an_unsupported_value_is_computed_and_not_kept(tmp_path):
    from moweights.pipeline.cache import CacheWarning, StepCache

    cache = StepCache(tmp_path)
    with pytest.warns(CacheWarning, match="not cached"):
        assert cache.fetch("odd step", "k" * 32, lambda: {"x": object()}) is not None
    assert not list(tmp_path.iterdir())


def test_a_load_checks_the_header_and_every_array(tmp_path):
    from moweights.pipeline.cache import StepCache

    cache = StepCache(tmp_path)
    key = "a" * 32
    ranking = Ranking.from_scores([3.0, 1.0, 2.0])
    cache.store(cache.path(key), key, "r", ranking)
    assert cache.load(cache.path(key), key) == ranking
    with pytest.raises(ValueError, match="another step"):
        cache.load(cache.path(key), "b" * 32)

    good = cache.path(key).read_bytes()

    def rewrite(change):
        with np.load(io.BytesIO(good), allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
        change(arrays)
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        cache.path(key).write_bytes(buffer.getvalue())

    rewrite(lambda a: a.update(a1=a["a1"].astype(np.int64)))  # scores as integers
    with pytest.raises(ValueError, match="dtype"):
        cache.load(cache.path(key), key)
    rewrite(lambda a: a.update(a9=np.zeros(2)))
    with pytest.raises(ValueError, match="does not use"):
        cache.load(cache.path(key), key)
    rewrite(lambda a: a.update(extra=np.zeros(2)))  # not a name the cache writes
    with pytest.raises(ValueError, match=r"unexpected member 'extra\.npy'"):
        cache.load(cache.path(key), key)
    rewrite(lambda a: a.pop("a2"))
    with pytest.raises(ValueError, match="missing"):
        cache.load(cache.path(key), key)
    with zipfile.ZipFile(cache.path(key), "w") as z:  # a zip, but no npz
        z.writestr("x.txt", "hello")
    with pytest.raises(ValueError, match=r"unexpected member 'x\.txt'"):
        cache.load(cache.path(key), key)


def test_a_cache_folder_that_cannot_be_written_costs_only_the_resume(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / ".cache").write_text("a file where the cache folder goes")
    raw = {**RAW, "evaluation": {"enabled": False}}
    result, messages = _run(raw, tmp_path / "out")
    assert result.status == "complete"
    assert any("is not cached" in m for m in messages)


# ------------------------------------------------- a hostile cache folder (issue 37 item 4)
# Entries are checked from the zip directory and the .npy headers before an array is
# read; the folder and its entries are never followed through links or read from FIFOs.
def _header(key: str, value) -> bytes:
    import json

    from moweights.pipeline.cache import FORMAT, VERSION

    text = json.dumps({"format": FORMAT, "version": VERSION, "key": key, "value": value})
    buffer = io.BytesIO()
    np.save(buffer, np.array(text))
    return buffer.getvalue()


def _npy_header(shape, dtype="<f8") -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer, {"descr": dtype, "fortran_order": False, "shape": shape}
    )
    return buffer.getvalue()  # the magic string and the header


def _fetch_traced(cache, key):
    import tracemalloc

    tracemalloc.start()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = cache.fetch("a step", key, lambda: np.arange(3.0))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return value, peak, [str(w.message) for w in caught]


def test_a_deflated_bomb_is_refused_before_any_array_is_read(tmp_path):
    from moweights.pipeline.cache import StepCache

    cache = StepCache(tmp_path)
    key = "c" * 32
    n = 2**25  # 256 MiB of zeros, deflated to a few hundred kB
    with zipfile.ZipFile(cache.path(key), "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("__header__.npy", _header(key, {"$array": "a0"}))
        with z.open("a0.npy", "w", force_zip64=True) as member:
            member.write(_npy_header((n,)))
            chunk = bytes(2**20)
            for _ in range(n * 8 // len(chunk)):
                member.write(chunk)
    assert cache.path(key).stat().st_size < 2 * 2**20
    value, peak, messages = _fetch_traced(cache, key)
    assert value.tolist() == [0.0, 1.0, 2.0]  # recomputed, not 256 MiB from the file
    assert any("unusable" in m and "compressed" in m for m in messages), messages
    assert peak < 32 * 2**20, peak


def test_an_array_declaring_more_than_its_entry_holds_is_refused(tmp_path):
    from moweights.pipeline.cache import StepCache

    cache = StepCache(tmp_path)
    key = "d" * 32
    with zipfile.ZipFile(cache.path(key), "w") as z:
        z.writestr("__header__.npy", _header(key, {"$array": "a0"}))
        z.writestr("a0.npy", _npy_header((2**40,)) + bytes(64))  # 8 TiB declared
    value, peak, messages = _fetch_traced(cache, key)
    assert value.tolist() == [0.0, 1.0, 2.0]
    assert any("declares" in m and "(1099511627776,)" in m for m in messages), messages
    assert peak < 32 * 2**20


@pytest.mark.parametrize(
    ("members", "needle"),
    [
        ({"a0.npy": "x", "a0.npy ": "x"}, "unexpected member"),
        ({"../evil.npy": "x"}, "unexpected member"),
        ({"a0.npy": "x"}, "no header"),
    ],
)
def test_entries_with_foreign_member_names_are_refused(tmp_path, members, needle):
    from moweights.pipeline.cache import StepCache

    cache = StepCache(tmp_path)
    key = "e" * 32
    with zipfile.ZipFile(cache.path(key), "w") as z:
        if needle != "no header":
            z.writestr("__header__.npy", _header(key, {"$array": "a0"}))
        for name in members:
            z.writestr(name, _npy_header((2,)) + bytes(16))
    value, _, messages = _fetch_traced(cache, key)
    assert value.tolist() == [0.0, 1.0, 2.0]
    assert any("unusable" in m and needle in m for m in messages), messages


def test_an_oversized_entry_is_not_read(tmp_path):
    from moweights.pipeline.cache import StepCache

    cache = StepCache(tmp_path)
    key = "f" * 32
    with open(cache.path(key), "wb") as f:  # 3 GB, sparse: nothing on disk
        f.truncate(3 * 10**9)
    value, peak, messages = _fetch_traced(cache, key)
    assert value.tolist() == [0.0, 1.0, 2.0]
    assert any("unusable" in m and "larger than" in m for m in messages), messages
    assert peak < 32 * 2**20


_SPECIAL_ENTRY = """
import os, resource, sys, warnings
import numpy as np
from moweights.pipeline.cache import StepCache
size = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status")
            if line.startswith("VmSize:"))  # a bound: reading /dev/zero must not eat the machine
resource.setrlimit(resource.RLIMIT_AS, (size + 2**30, resource.RLIM_INFINITY))
cache = StepCache(sys.argv[1])
key = "0" * 32
if sys.argv[2] == "fifo":
    os.mkfifo(cache.path(key))
else:
    os.symlink("/dev/zero", cache.path(key))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    value = cache.fetch("a step", key, lambda: np.arange(3.0))
print(value.tolist(), *[str(w.message) for w in caught], sep="\\n")
"""


@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero"])
def test_an_entry_that_is_a_fifo_or_a_device_never_hangs(tmp_path, kind):
    import subprocess
    import sys

    if not Path("/proc/self/status").exists():
        pytest.skip("needs Linux's /proc (and FIFOs)")
    proc = subprocess.run(  # a process of its own: a hang must not hang the suite
        [sys.executable, "-c", _SPECIAL_ENTRY, str(tmp_path), kind.split()[0]],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "[0.0, 1.0, 2.0]"
    why = "not a regular file (a FIFO)" if kind == "fifo" else "symbolic link"
    assert any("unusable" in m and why in m for m in lines[1:]), proc.stdout


def test_a_cache_folder_that_is_a_link_is_neither_written_nor_read_through(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / ".cache").symlink_to(elsewhere, target_is_directory=True)
    raw = {**RAW, "evaluation": {"enabled": False}}
    result, messages = _run(raw, tmp_path / "out")
    assert result.status == "complete"
    assert list(elsewhere.iterdir()) == []  # nothing written through the link
    assert any(".cache is a symbolic link" in m for m in messages), messages
    assert (tmp_path / "out" / ".cache").is_symlink()  # the user's link is left alone


# ------------------------------------------------- entries edited by hand (issue 48 item 5)
def test_entries_edited_by_hand_but_well_formed_are_recomputed(tmp_path):
    """Every number of an entry changed, each array keeping its dtype and shape: the entry
    decodes to well-formed data of its step, but it is not what the run wrote."""
    out = tmp_path / "out"
    fresh, _ = _run(RAW, out)  # its own first run: the same code fingerprint as the resume
    edited = 0
    for path in _entries(out):
        with np.load(path, allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
        changed = False
        for name, values in arrays.items():
            if name != "__header__" and values.dtype.kind == "f" and values.size:
                arrays[name] = values + 1.0  # the same order, other numbers
                changed = True
        if changed:
            buffer = io.BytesIO()
            np.savez(buffer, **arrays)
            path.write_bytes(buffer.getvalue())
            edited += 1
    assert edited >= 10, edited
    result, messages = _run(RAW, out)
    unusable = [m for m in messages if "does not match the digest" in m]
    assert len(unusable) == edited, (len(unusable), edited, messages[:3])
    # nothing reused from the edited folder; a step met twice within the run is a repeat
    assert result.cached == [] and result.repeated == fresh.repeated
    _assert_same_results(fresh, result)
