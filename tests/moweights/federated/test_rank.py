"""Tests of moweights.federated.rank: sites given as files, read by a SiteFile inside each
site's job, and everything else as aggregation.federated ranks in-memory sites."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pandas as pd
import pytest

import aggregation.federated
import moweights.federated.rank as federated_rank
from moweights.data.readers import SiteFile
from moweights.errors import DataFileError
from moweights.federated import rank_one_site, rank_sites
from rankers.exceptions import (
    FeatureMismatchError,
    FewSamplesWarning,
    InvalidInputError,
    InvalidParameterError,
)

FEATURES = ["f1", "f2", "f3", "f10"]  # natural order: f1, f2, f3, f10


def _site(stds, m=40, seed=0) -> pd.DataFrame:
    """Gaussian columns with the given standard deviations (so a known variance order)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(rng.normal(size=(m, len(stds))) * stds, columns=FEATURES[: len(stds)])


def test_feature_mismatch_of_path_sites_is_found_from_their_rankings(tmp_path):
    _site([4, 3, 2, 1]).to_csv(tmp_path / "a.csv", index=False)
    _site([4, 3, 2, 1]).drop(columns="f10").to_csv(tmp_path / "b.csv", index=False)
    with pytest.raises(FeatureMismatchError, match="site 'b': missing 'f10'"):
        rank_sites({"a": tmp_path / "a.csv", "b": tmp_path / "b.csv"}, "variance")


def test_csv_and_tsv_paths_are_read_in_the_site_job(tmp_path):
    frames = {"a": _site([3, 2, 1], seed=1), "b": _site([1, 3, 2], seed=2)}
    frames["a"].to_csv(tmp_path / "a.csv", index=False)
    frames["b"].to_csv(tmp_path / "b.tsv.gz", index=False, sep="\t")
    from_paths = rank_sites({"a": str(tmp_path / "a.csv"), "b": tmp_path / "b.tsv.gz"}, "variance")
    from_frames = rank_sites(frames, "variance")
    for s in frames:
        np.testing.assert_allclose(from_paths.rankings[s].scores, from_frames.rankings[s].scores)
    assert from_paths.sizes == {"a": 40, "b": 40}
    (tmp_path / "c.xlsx").write_text("")
    res = rank_sites({**frames, "c": tmp_path / "c.xlsx"}, "variance")
    assert res.failed["c"].startswith("DataFileError: cannot read ")
    assert "c.xlsx: use .csv, .tsv" in res.failed["c"]


def test_parquet_paths_go_through_read_parquet(tmp_path, monkeypatch):
    frame = _site([3, 2, 1], seed=4)
    calls = []

    def fake_read_parquet(path, *args, **kwargs):
        calls.append(path)
        return frame

    monkeypatch.setattr(pd, "read_parquet", fake_read_parquet)
    (tmp_path / "a.parquet").write_bytes(b"")
    res = rank_sites({"a": tmp_path / "a.parquet", "b": frame}, "variance")
    assert calls == [tmp_path / "a.parquet"]
    np.testing.assert_array_equal(res.rankings["a"].scores, res.rankings["b"].scores)


def test_real_parquet_files(tmp_path):
    pytest.importorskip("pyarrow", reason="needs the 'parquet' extra: pip install '.[parquet]'")
    frame = _site([3, 2, 1], seed=4)
    frame.to_parquet(tmp_path / "a.parquet")
    res = rank_sites({"a": tmp_path / "a.parquet", "b": frame}, "variance")
    np.testing.assert_allclose(res.rankings["a"].scores, res.rankings["b"].scores)


def test_no_site_ranked_names_the_missing_file(tmp_path):
    sites = {"a": tmp_path / "nowhere.csv", "b": _site([1, 2]).assign(f1=np.nan)}
    with pytest.raises(InvalidInputError, match="no site could be ranked") as info:
        rank_sites(sites, "variance")
    # a file that cannot be read is a DataFileError (an InvalidInputError) naming the file
    assert "a: DataFileError: site data file not found" in str(info.value)
    assert "nowhere.csv" in str(info.value) and "b: InvalidInputError" in str(info.value)


def test_paths_become_site_files_read_in_the_site_job(tmp_path, monkeypatch):
    frame = _site([3, 2, 1], seed=5)
    frame.to_csv(tmp_path / "a.csv", index=False)
    seen = {}
    in_memory = aggregation.federated.rank_sites

    def spy(sites, *args, **kwargs):
        seen.update(sites)
        return in_memory(sites, *args, **kwargs)

    monkeypatch.setattr(federated_rank, "_rank_sites_in_memory", spy)
    res = rank_sites({"a": str(tmp_path / "a.csv"), "b": frame}, "variance", n_jobs=2)
    # aggregation got a loader naming the file (read by the worker), never a path or a table
    assert seen["a"] == SiteFile(tmp_path / "a.csv") and seen["b"] is frame
    assert repr(seen["a"]) == f"SiteFile({str(tmp_path / 'a.csv')!r})"
    np.testing.assert_allclose(res.rankings["a"].scores, res.rankings["b"].scores)
    assert res.sizes == {"a": 40, "b": 40}


def test_a_site_file_reads_nothing_until_called_and_pickles(tmp_path):
    site = SiteFile(tmp_path / "later.csv")  # not there yet: nothing is read or checked
    clone = pickle.loads(pickle.dumps(site))
    assert clone == site and hash(clone) == hash(site) and clone.path == tmp_path / "later.csv"
    with pytest.raises(DataFileError, match=r"site data file not found: .*later\.csv"):
        clone()
    _site([2, 1]).to_csv(tmp_path / "later.csv", index=False)
    pd.testing.assert_frame_equal(clone(), pd.read_csv(tmp_path / "later.csv"))
    with pytest.raises(InvalidParameterError, match=r"a site's file is a path .* not int"):
        SiteFile(3)


def test_a_site_file_of_genes_as_rows_is_turned(tmp_path):
    path = tmp_path / "genes.csv"
    genes = {"gene": ["TP53", "BRCA1", "label"], "s1": [5.0, 1.0, 0], "s2": [1.0, 1.5, 1]}
    pd.DataFrame({**genes, "s3": [9, 2, 1]}).to_csv(path, index=False)
    site = SiteFile(path, transpose=True)
    assert repr(site) == f"SiteFile({str(path)!r}, transpose=True)"
    frame = site()
    assert list(frame.columns) == ["TP53", "BRCA1", "label"]
    assert frame["label"].tolist() == [0, 1, 1]
    with pytest.warns(FewSamplesWarning, match="only 3 samples"):  # three sample columns
        ranking = rank_one_site(site, "variance", target="label")
    assert ranking.order == ["TP53", "BRCA1"]


def test_rank_one_site_takes_a_path_and_equals_the_table(tmp_path):
    frame = _site([1, 3, 2], seed=6)
    frame.to_csv(tmp_path / "one.csv", index=False)
    for path in (tmp_path / "one.csv", str(tmp_path / "one.csv"), os.fspath(tmp_path / "one.csv")):
        assert rank_one_site(path, "variance") == rank_one_site(frame, "variance")
