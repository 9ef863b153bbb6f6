"""Fetchers of public benchmark data (moweights.data.fetch), on small files the tests write."""

from __future__ import annotations

import gzip
import hashlib

import numpy as np
import pandas as pd
import pytest
from scipy.io import savemat

from moweights.data import fetch
from moweights.data.fetch import DataFetchError, fetch_pmlb, fetch_skfeature, get_data_home
from moweights.errors import DataFileError


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def tiny_mat(tmp_path):
    """A 6 x 3 scikit-feature-like file outside the cache, and its checksum."""
    source = tmp_path / "upstream" / "Tiny.mat"
    source.parent.mkdir()
    X = np.arange(18, dtype=np.uint8).reshape(6, 3)
    savemat(source, {"X": X, "Y": np.array([[1], [1], [2], [2], [1], [2]], dtype=np.uint8)})
    return source, _sha(source)


def test_cache_directory_comes_from_the_argument_then_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("MOWEIGHTS_DATA", str(tmp_path / "env"))
    assert get_data_home() == tmp_path / "env"
    assert get_data_home(tmp_path / "arg") == tmp_path / "arg"
    monkeypatch.delenv("MOWEIGHTS_DATA")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert get_data_home() == tmp_path / "xdg" / "moweights"


def test_downloads_checks_and_caches(tiny_mat, tmp_path, monkeypatch):
    source, sha = tiny_mat
    monkeypatch.setitem(fetch.SKFEATURE, "Tiny", (sha, 6, 3, 2))
    monkeypatch.setattr(fetch, "SKFEATURE_URL", source.parent.as_uri() + "/{name}.mat")
    X, y = fetch_skfeature("tiny", data_home=tmp_path / "cache")  # names are case-insensitive
    assert X.shape == (6, 3) and list(X.columns) == ["x0", "x1", "x2"]
    assert X.dtypes.unique().tolist() == [np.float64]
    assert y.tolist() == [1, 1, 2, 2, 1, 2]
    cached = tmp_path / "cache" / "skfeature" / "Tiny.mat"
    assert cached.is_file()
    source.unlink()  # the second call reads the cache, never the network
    X2, _ = fetch_skfeature("Tiny", data_home=tmp_path / "cache")
    pd.testing.assert_frame_equal(X, X2)


def test_a_file_that_does_not_match_its_checksum_is_refused(tiny_mat, tmp_path, monkeypatch):
    source, _ = tiny_mat
    monkeypatch.setitem(fetch.SKFEATURE, "Tiny", ("0" * 64, 6, 3, 2))
    monkeypatch.setattr(fetch, "SKFEATURE_URL", source.parent.as_uri() + "/{name}.mat")
    with pytest.raises(DataFetchError, match="does not match its SHA-256; nothing was kept"):
        fetch_skfeature("Tiny", data_home=tmp_path / "cache")
    assert not list((tmp_path / "cache" / "skfeature").iterdir())
    # a damaged cached copy is refused too, with what to do
    (tmp_path / "cache" / "skfeature" / "Tiny.mat").write_bytes(b"not a mat file")
    with pytest.raises(DataFetchError, match="delete it to download it again"):
        fetch_skfeature("Tiny", data_home=tmp_path / "cache")


def test_offline_says_where_to_put_the_file(tmp_path, monkeypatch):
    monkeypatch.setattr(fetch, "SKFEATURE_URL", "http://127.0.0.1:9/{name}.mat")  # discard port
    with pytest.raises(DataFetchError, match=r"could not download .*Offline\?.*Isolet\.mat"):
        fetch_skfeature("Isolet", data_home=tmp_path)
    with pytest.raises(DataFetchError, match="download=False"):
        fetch_skfeature("Isolet", data_home=tmp_path, download=False)


def test_unverified_and_unknown_data_sets_are_refused(tmp_path):
    with pytest.raises(DataFetchError, match="no verified copy"):
        fetch_skfeature("Carcinom", data_home=tmp_path)
    with pytest.raises(ValueError, match="unknown scikit-feature data set 'nope'"):
        fetch_skfeature("nope", data_home=tmp_path)


def test_pmlb_table(tmp_path, monkeypatch):
    source = tmp_path / "up" / "tiny" / "tiny.tsv.gz"
    source.parent.mkdir(parents=True)
    with gzip.open(source, "wt") as fh:
        fh.write("a\tb\ttarget\n1\t2\t0\n3\t4\t1\n5\t6\t0\n")
    monkeypatch.setitem(fetch.PMLB, "tiny", (_sha(source), 3, 2, 2))
    monkeypatch.setattr(fetch, "PMLB_URL", (tmp_path / "up").as_uri() + "/{name}/{name}.tsv.gz")
    X, y = fetch_pmlb("tiny", data_home=tmp_path / "cache")
    assert list(X.columns) == ["a", "b"] and y.tolist() == [0, 1, 0]


@pytest.mark.parametrize("name", ["colon", "GLIOMA"])
def test_checksums_match_the_shared_copies(shared_data, tmp_path, name):
    # the shared folder holds byte-for-byte upstream copies: linked into a cache, they
    # must pass the checksum and load with their documented shape
    (tmp_path / "skfeature").mkdir()
    (tmp_path / "skfeature" / f"{name}.mat").symlink_to(shared_data / "skfeature" / f"{name}.mat")
    X, y = fetch_skfeature(name, data_home=tmp_path, download=False)
    assert X.shape == fetch.SKFEATURE[name][1:3]
    assert y.nunique() == fetch.SKFEATURE[name][3]


def test_a_missing_benchmark_file_says_how_to_get_it(tmp_path):
    from moweights.data import load_file
    from moweights.data.fetch import missing_file_hint

    with pytest.raises(DataFileError, match=r"scikit-feature's Isolet: `moweights fetch skfeature"):
        load_file(tmp_path / "isolet.mat")
    assert missing_file_hint(tmp_path / "mine.mat") == ""
    assert missing_file_hint(tmp_path / "Isolet.csv") == ""
