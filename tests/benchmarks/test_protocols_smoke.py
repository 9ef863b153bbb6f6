"""Smoke tests of the protocol benchmarks: end to end on two small data sets, 2 folds.

Real scikit-feature data from ../shared/data when present (the two smallest by
n_samples * n_features), else two synthetic .mat files written with a MANIFEST.csv. Every
cell runs in a child process, as in a real run; the tests check the output files, the
values against direct calls of the shared evaluation code, the cache and the budget.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.io import savemat

from aggregation.evaluation import expected_curve, ffa_rfa, geometric_grid, topk_curve

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
REAL_DATA = BENCH.parent.parent / "shared" / "data" / "skfeature"


def _script(name: str):
    """The benchmark module ``benchmarks.<name>`` (the package is imported by conftest.py)."""
    return importlib.import_module(f"benchmarks.{name}")


@pytest.fixture(scope="module")
def proto():
    return _script("_protocol")


@pytest.fixture(scope="module")
def data(proto, tmp_path_factory):
    """(data folder, the two data set names, {name: (X, y)})."""
    if (REAL_DATA / "MANIFEST.csv").is_file():
        present, _ = proto.list_datasets(REAL_DATA)
        chosen = present[:2]  # sorted by n_samples * n_features
        return (
            REAL_DATA,
            [d.name for d in chosen],
            {d.name: _script("_common").load_dataset(d.path) for d in chosen},
        )
    folder = tmp_path_factory.mktemp("skfeature")
    rng = np.random.default_rng(0)
    rows, loaded = [], {}
    for name, (m, n) in {"tiny_a": (40, 60), "tiny_b": (50, 40)}.items():
        y = np.repeat([1, 2], m // 2)
        X = rng.integers(0, 50, size=(m, n)).astype(np.uint8)  # an integer dtype, as the files
        X[:, :5] += (20 * y[:, None]).astype(np.uint8)
        savemat(folder / f"{name}.mat", {"X": X, "Y": y[:, None]})
        rows.append({"name": name, "file": f"{name}.mat", "n_samples": m, "n_features": n})
        rows[-1] |= {"n_classes": 2, "sha256": ""}
        loaded[name] = (X.astype(float), y)
    rows.append({"name": "absent", "file": "", "n_samples": 9, "n_features": 9, "n_classes": 2})
    pd.DataFrame(rows).to_csv(folder / "MANIFEST.csv", index=False)
    return folder, list(loaded), loaded


# a cell is a child process that mostly starts and imports: seconds on an idle machine;
# the budget only stops a hung one, so it is generous enough for a busy laptop
BUDGET = "900"


def _common(data, tmp_path, budget=BUDGET):
    folder, names, _ = data
    argv = ["--data-dir", str(folder), "--datasets", *names, "--folds", "2", "--quiet"]
    # two cells at a time: each is a child process that mostly starts and imports
    argv += ["--n-jobs", "2", "--backend", "threading"]
    return [*argv, "--cache-dir", str(tmp_path / "cache"), "--budget", budget]


def test_unsupervised_protocol_end_to_end_and_cache(data, tmp_path):
    script = _script("protocols.unsupervised_protocol")
    out = tmp_path / "out"
    argv = [*_common(data, tmp_path), "--rankers", "variance", "--out", str(out)]
    first = script.main(argv)
    names, loaded = data[1], data[2]

    for f in ("mse_at_16.csv", "mse_at_16.md", "curves.csv", "cells.csv", "summary.md"):
        assert (out / f).is_file(), f
    for f in ("average_ranks.csv", "friedman.json", "cd_diagram.png"):
        assert (out / f).is_file(), f
    table = pd.read_csv(out / "mse_at_16.csv", index_col="dataset")
    assert table.shape == (2, 2) and list(table.columns) == ["variance", "random"]
    assert list(table.index) == names

    # the table's value is the shared scorer's, called directly
    X = loaded[names[0]][0]
    direct = topk_curve("variance", X, ks=[16], cv=2, random_state=0)
    assert table.loc[names[0], "variance"] == pytest.approx(direct["mean"].iloc[0], rel=1e-12)

    curves = pd.read_csv(out / "curves.csv")
    one = curves[(curves["dataset"] == names[0]) & (curves["ranker"] == "random")]
    assert one["k"].tolist() == sorted(set(geometric_grid(X.shape[1])) | {16})
    assert (one["n_folds"] == 2).all()

    # average ranks: rank 1 = lower MSE on a data set
    expected = (table["variance"] > table["random"]).astype(float) + 1.0
    stats = json.loads((out / "friedman.json").read_text())
    assert stats["avg_ranks"]["variance"] == pytest.approx(expected.mean())

    cells = pd.read_csv(out / "cells.csv")
    assert (cells["status"] == "ok").all() and not cells["cached"].any()
    second = script.main(argv)  # every cell comes from the cache, with the same numbers
    cells = pd.read_csv(out / "cells.csv")
    assert len(cells) == 4 and cells["cached"].all()
    pd.testing.assert_frame_equal(first["table"], second["table"])
    assert "## Time per cell" in (out / "summary.md").read_text()

    # --cached-only tabulates what the cache holds and runs nothing
    cache_files = sorted((tmp_path / "cache").rglob("*.json"))
    more = [*argv[:-4], "--rankers", "variance", "laplacian", "--out", str(tmp_path / "part")]
    part = script.main([*more, "--cached-only"])
    assert sorted((tmp_path / "cache").rglob("*.json")) == cache_files
    status = part["status"].set_index(["dataset", "ranker"])["status"]
    assert (status.xs("laplacian", level="ranker") == "not run").all()
    assert (status.drop("laplacian", level="ranker") == "ok").all()
    assert part["table"]["laplacian"].isna().all()
    pd.testing.assert_series_equal(part["table"]["variance"], first["table"]["variance"])
    summary = (tmp_path / "part" / "summary.md").read_text()
    assert "not in the cache (--cached-only)" in summary


def test_both_variants_come_from_one_set_of_rankings_and_share_the_cache(data, tmp_path):
    script = _script("protocols.unsupervised_protocol")
    out = tmp_path / "out"
    argv = [*_common(data, tmp_path), "--rankers", "laplacian", "--out", str(out)]
    both = script.main([*argv, "--variant", "both"])
    names, loaded = data[1], data[2]
    frane_out = tmp_path / "out_frane"
    assert (out / "mse_at_16.csv").is_file() and (frane_out / "rmae_at_16.csv").is_file()

    # each variant's numbers are the shared scorer's, called on its own (refitting per fold)
    X = loaded[names[0]][0]
    for variant, metric, k in (("ensemble", "mse", 1), ("frane", "rmae", 5)):
        direct = topk_curve(
            "laplacian", X, ks=[16], metric=metric, n_neighbors=k, cv=2, random_state=0
        )
        got = both["variants"][variant]["table"].loc[names[0], "laplacian"]
        assert got == pytest.approx(direct["mean"].iloc[0], rel=1e-12)
        direct = topk_curve(
            "random", X, ks=[16], metric=metric, n_neighbors=k, cv=2, random_state=0
        )
        got = both["variants"][variant]["table"].loc[names[0], "random"]
        assert got == pytest.approx(direct["mean"].iloc[0], rel=1e-12)

    # one cell per (data set, ranker) holds both variants: a frane-only run computes nothing
    frane = script.main([*argv, "--variant", "frane", "--out", str(tmp_path / "again")])
    assert frane["status"]["cached"].all() and len(frane["status"]) == 4
    pd.testing.assert_frame_equal(frane["table"], both["variants"]["frane"]["table"])


def _first_dataset(data):
    folder, names, _ = data
    (d,) = [x for x in _script("_protocol").list_datasets(folder)[0] if x.name == names[0]]
    return d


def _count_fits(monkeypatch, name: str) -> list:
    """The shapes every fit of ranker ``name`` sees from now on (the list grows)."""
    import rankers

    cls = rankers.get_class(name)
    fits = []
    real_fit = cls.fit

    def counting_fit(self, X, y=None):
        fits.append(X.shape)
        return real_fit(self, X, y)

    monkeypatch.setattr(cls, "fit", counting_fit)
    return fits


def test_a_cell_fits_each_ranker_once_per_fold(data, monkeypatch):
    script = _script("protocols.unsupervised_protocol")
    d = _first_dataset(data)
    fits = _count_fits(monkeypatch, "variance")
    monkeypatch.setattr(script, "_RANKINGS", {})
    settings = {"variants": script.VARIANTS, "folds": 3, "seed": 0, "n_random": 2, "params": {}}
    result = script.compute_cell({"settings": settings, "path": d.path, "ranker": "variance"})
    assert set(result) == {"ensemble", "frane"}
    assert len(fits) == 3  # not 3 per variant
    assert result["ensemble"]["value"] != result["frane"]["value"]


def test_cell_over_budget_is_recorded_as_timeout(data, proto, tmp_path):
    script = _script("protocols.unsupervised_protocol")
    out = tmp_path / "out"
    # a child process cannot even import numpy in 0.05 s
    argv = [*_common(data, tmp_path, budget="0.05"), "--rankers", "variance", "--out", str(out)]
    result = script.main(argv)
    cells = pd.read_csv(out / "cells.csv")
    assert len(cells) == 4 and (cells["status"] == "timeout").all()
    assert cells["reason"].str.contains("budget").all()
    assert result["table"].isna().all().all()
    assert not (out / "cd_diagram.png").exists()

    cached = list((tmp_path / "cache" / "unsupervised").rglob("*.json"))
    assert len(cached) == 4
    record = json.loads(cached[0].read_text())
    assert record["status"] == "timeout" and record["budget"] == 0.05
    # a larger budget runs a timed-out cell again; the same budget reuses the record
    cell = proto.Cell(record["protocol"], record["dataset"], record["ranker"], record["settings"])
    assert cell.cache_path(tmp_path / "cache") in cached
    assert proto.read_cached(cell, tmp_path / "cache", 0.05, False)["status"] == "timeout"
    assert proto.read_cached(cell, tmp_path / "cache", 10.0, False) is None


def test_supervised_protocol_end_to_end(data, tmp_path):
    script = _script("protocols.supervised_protocol")
    out = tmp_path / "out"
    argv = [*_common(data, tmp_path), "--rankers", "info_gain", "--out", str(out)]
    script.main([*argv, "--grid", "geometric", "--n-random", "3", "--random-part", "2"])
    names, loaded = data[1], data[2]

    for f in ("eca_uniform.csv", "eca_all.csv", "curves.csv", "weightings.csv", "summary.md"):
        assert (out / f).is_file(), f
    table = pd.read_csv(out / "eca_uniform.csv", index_col="dataset")
    assert table.shape == (2, 1) and list(table.index) == names
    eca = pd.read_csv(out / "eca_all.csv")
    assert len(eca) == 2 * 4 and np.isfinite(eca["eca"]).all()
    cells = pd.read_csv(out / "cells.csv")
    # the 3 random rankings in parts of 2: two cells per data set
    parts = ["random[0:2]", "random[2:3]"]
    assert sorted(cells["ranker"]) == sorted(["info_gain", *parts] * 2)
    assert "| random | " in (out / "summary.md").read_text()  # timed as one row

    # ECA against random with w_i = 1 is mean(FFA - RFA) / 2 (paper §3.3) ...
    curves = pd.read_csv(out / "curves.csv")
    ig = curves[(curves["dataset"] == names[0]) & (curves["ranker"] == "info_gain")]
    assert table.loc[names[0], "info_gain"] == pytest.approx((ig["ffa"] - ig["rfa"]).mean() / 2)
    # ... of the curves of the ranking fitted on the whole data set
    import rankers

    X, y = loaded[names[0]]
    y = np.unique(y, return_inverse=True)[1]
    order = rankers.get("info_gain").fit(X, y).ranking_
    direct = ffa_rfa(order, X, y, cv=2, grid="geometric", random_state=0)
    np.testing.assert_allclose(ig["ffa"], direct["ffa"])
    np.testing.assert_allclose(ig["rfa"], direct["rfa"])
    # the parts pool to the expected curve of one call
    rand = curves[(curves["dataset"] == names[0]) & (curves["ranker"] == "random")]
    expected = expected_curve(X, y, n_random=3, cv=2, grid="geometric", random_state=0)
    for column in ("i", "ffa", "rfa", "std", "lower", "upper"):
        np.testing.assert_allclose(rand[column], expected[column], rtol=1e-15, atol=0)


def test_supervised_random_parts_alone_then_with_the_rankers(data, tmp_path):
    """``--rankers`` with no names runs the random parts only; a later run reuses them."""
    script = _script("protocols.supervised_protocol")
    argv = [*_common(data, tmp_path), "--grid", "geometric", "--n-random", "2"]
    argv += ["--random-part", "1", "--out", str(tmp_path / "out")]
    alone = script.main([*argv, "--rankers"])
    status = alone["status"]
    assert sorted(status["ranker"]) == sorted(["random[0:1]", "random[1:2]"] * 2)
    assert (status["status"] == "ok").all()
    assert alone["table"].shape[1] == 0  # nothing to compare, and no error for it

    both = script.main([*argv, "--rankers", "info_gain"])["status"]
    parts = both[both["ranker"].str.startswith("random[")]
    assert len(parts) == 4 and parts["cached"].all()  # scored once, in the first run
    assert not both.loc[both["ranker"] == "info_gain", "cached"].any()


def test_speed_suite_small_shape(tmp_path):
    script = _script("speed.speed_suite")
    out = tmp_path / "out"
    argv = ["--shapes", "small", "--rankers", "variance", "laplacian", "--quiet"]
    argv += ["--n-jobs", "2", "--backend", "threading"]
    argv += ["--out", str(out), "--cache-dir", str(tmp_path / "cache"), "--budget", BUDGET]
    result = script.main(argv)
    table = pd.read_csv(out / "speed.csv")
    assert (out / "speed.md").is_file() and (out / "summary.md").is_file()
    assert table["ranker"].tolist() == ["laplacian", "variance"]
    assert (table["shape"] == "small 200x100").all()
    assert pd.isna(table.loc[1, "peer"])  # variance has no peer
    if importlib.util.find_spec("skfeature") is None:
        assert any("skfeature" in note for note in result["notes"])
    else:
        row = table.loc[0]
        assert row["peer"] == "skfeature.lap_score"
        assert row["time ratio"] == pytest.approx(float(row["peer s"]) / float(row["ours s"]))
        assert -1.0 <= row["spearman"] <= 1.0
    # the variance ranker's scores are the columns' variances
    X, _ = script.make_clusters(200, 100, seed=0, n_classes=script.N_CLASSES)
    record = next((tmp_path / "cache" / "speed" / "small").glob("ours-variance__*.json"))
    scores = json.loads(record.read_text())["result"]["scores"]
    np.testing.assert_allclose(scores, X.var(axis=0))


def test_rank_statistics_leave_out_the_most_incomplete_first(proto):
    nan = np.nan
    table = pd.DataFrame(
        {"a": [1.0, 2.0, 3.0, 4.0], "b": [nan, 1.0, nan, 2.0], "c": [3.0, 4.0, 5.0, nan]},
        index=["w", "x", "y", "z"],
    )
    # b misses half its data sets (more than any data set's share): it goes first;
    # then z misses c, a half of its remaining row
    part = proto._complete_part(table)
    assert list(part.columns) == ["a", "c"] and list(part.index) == ["w", "x", "y"]
    # a tie goes to dropping the data set, so the methods stay compared
    tie = pd.DataFrame({"a": [1.0, nan], "b": [2.0, 3.0]}, index=["u", "v"])
    assert list(proto._complete_part(tie).index) == ["u"]


#: a module of the evaluation code, to fingerprint
TOPK = "aggregation.evaluation.topk"


def test_code_fingerprint_follows_the_source_a_cell_depends_on(proto, tmp_path, monkeypatch):
    a = proto.code_fingerprint(["variance"], [TOPK])
    assert a == proto.code_fingerprint(["variance"], [TOPK])
    assert a != proto.code_fingerprint(["laplacian"], [TOPK])
    assert a != proto.code_fingerprint(["variance"], ["aggregation.evaluation.error_curves"])
    # the random baseline depends on the evaluation code only
    assert proto.code_fingerprint(["random"], [TOPK]) == proto.code_fingerprint(modules=[TOPK])


def _edited(proto, monkeypatch, tmp_path, module: str, edit) -> None:
    """Make ``module``'s source the edited copy for the fingerprint."""
    import importlib.util

    real = importlib.util.find_spec
    copy = tmp_path / (module + ".py")
    copy.write_text(edit(Path(real(module).origin).read_text()))

    class _Spec:
        origin = str(copy)

    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: _Spec() if name == module else real(name, *a)
    )
    proto.forget_source()


@pytest.mark.parametrize(
    ("edit", "rekeys"),
    [
        (lambda s: s + "\n_EDITED = 1\n", True),  # code
        (lambda s: s + "\n# a comment\n", False),
        (lambda s: s.replace('"""', '"""Edited. ', 1), False),  # the module docstring
    ],
    ids=["code", "comment", "docstring"],
)
def test_code_fingerprint_follows_code_not_comments(proto, tmp_path, monkeypatch, edit, rekeys):
    a = proto.code_fingerprint(["variance"], [TOPK])
    _edited(proto, monkeypatch, tmp_path, TOPK, edit)
    try:
        assert (proto.code_fingerprint(["variance"], [TOPK]) != a) is rekeys
    finally:
        monkeypatch.undo()
        proto.forget_source()


def test_code_fingerprint_follows_a_rankers_helper_modules(proto, tmp_path, monkeypatch):
    # laplacian's neighbours come from rankers.neighbors, mcfs's LAR from a private helper
    assert "rankers.neighbors" in proto.module_closure(["rankers.unsupervised.laplacian"])
    assert "rankers.unsupervised._lars" in proto.module_closure(["rankers.unsupervised.mcfs"])
    # a package's __init__ only re-exports: the closure names the defining module
    closure = proto.module_closure(["aggregation.evaluation.error_curves"])
    assert TOPK in closure and "aggregation.evaluation" not in closure
    before = {n: proto.code_fingerprint([n]) for n in ("laplacian", "variance")}
    _edited(proto, monkeypatch, tmp_path, "rankers.neighbors", lambda s: s + "\n_EDITED = 1\n")
    try:
        assert proto.code_fingerprint(["laplacian"]) != before["laplacian"]
        assert proto.code_fingerprint(["variance"]) == before["variance"]  # no neighbours
    finally:
        monkeypatch.undo()
        proto.forget_source()


@pytest.mark.filterwarnings("ignore:The least populated class:UserWarning")
def test_supervised_folds_shrink_to_the_largest_class(tmp_path):
    """nci9's case: no class has 10 members, so 10-fold stratified CV cannot be asked for."""
    script = _script("protocols.supervised_protocol")
    y = np.repeat(np.arange(1, 5), [9, 7, 3, 2])
    path = tmp_path / "small_classes.mat"
    savemat(path, {"X": np.zeros((y.size, 3)), "Y": y[:, None]})
    assert script.feasible_folds(10, str(path)) == 9
    assert script.feasible_folds(5, str(path)) == 5
    assert script.fewer_folds_text({}) == ""
    assert "nci9: 9 folds" in script.fewer_folds_text({"nci9": 9})
    # the curves run on those folds (ten would be refused by the evaluation code)
    X = np.arange(y.size * 3.0).reshape(-1, 3)
    curve = ffa_rfa(np.arange(3), X, y, cv=9, grid="every", random_state=0)
    assert curve.attrs["n_folds"] == 9


def test_protocol_cells_follow_the_evaluation_modules_by_their_real_paths():
    """The cells' keys hash the modules that compute the curves, never a deprecated old
    path that only re-exports them (those go in moweights 0.2.0)."""
    import importlib.util

    for name, real in [
        ("protocols.supervised_protocol", "aggregation.evaluation.error_curves"),
        ("protocols.unsupervised_protocol", TOPK),
    ]:
        evaluation = _script(name)._EVALUATION
        assert real in evaluation, (name, evaluation)
        for module in evaluation:
            source = Path(importlib.util.find_spec(module).origin).read_text()
            assert "warn_moved(" not in source, (name, module)


def test_a_cell_resumes_from_the_folds_it_saved(data, monkeypatch, tmp_path):
    script = _script("protocols.unsupervised_protocol")
    d = _first_dataset(data)
    settings = {"variants": script.VARIANTS, "folds": 3, "seed": 0, "n_random": 2, "params": {}}
    parts = tmp_path / "cell.parts"
    payload = {"settings": settings, "path": d.path, "ranker": "laplacian"}
    monkeypatch.setattr(script, "_RANKINGS", {})
    whole = script.compute_cell(payload)  # no parts folder: nothing saved
    assert not parts.exists()
    monkeypatch.setattr(script, "_RANKINGS", {})
    assert script.compute_cell(payload | {"parts_dir": str(parts)}) == whole
    saved = sorted(parts.glob("*.npy"))
    assert len(saved) == 3 and not list(parts.glob("*.tmp"))

    # cut short after two folds, and one of those two torn: the rerun fits the two
    # missing folds only, and its numbers are the uninterrupted run's
    saved[0].unlink()
    saved[1].write_bytes(saved[1].read_bytes()[:40])
    fits = _count_fits(monkeypatch, "laplacian")
    monkeypatch.setattr(script, "_RANKINGS", {})
    assert script.compute_cell(payload | {"parts_dir": str(parts)}) == whole
    assert len(fits) == 2 and len(list(parts.glob("*.npy"))) == 3


_RESUMING_SCRIPT = """
import time
import numpy as np
from benchmarks._protocol import load_part, save_part


def compute_cell(payload):
    parts = payload["parts_dir"]
    done = [i for i in range(2) if load_part(parts, f"p{i}") is not None]
    if not done:  # the first run saves one part, then runs out of its budget
        save_part(parts, "p0", np.arange(3))
        time.sleep(600)
    save_part(parts, "p1", np.arange(3) + 1)
    return {"sum": int(sum(load_part(parts, f"p{i}").sum() for i in range(2)))}
"""


def test_a_timed_out_cell_that_saved_parts_resumes_on_the_next_run(proto, tmp_path):
    script = tmp_path / "resuming.py"
    script.write_text(_RESUMING_SCRIPT)
    cache = tmp_path / "cache"
    cell = proto.Cell("test", "d", "r", {"x": 1})
    # the first run must start its child, save a part and then run out of its budget: long
    # enough for a busy laptop to get that far (the child sleeps on after saving), which
    # is also what the first run costs
    budget = 30.0
    options = {"script": str(script), "cache_dir": cache, "budget": budget, "progress": False}
    (first,) = proto.run_cells([cell], **options)
    assert first["status"] == "timeout" and first["parts"] == first["parts_saved"] == 1
    assert first["parts_at_start"] == 0
    assert "1 parts saved" in first["reason"]
    # the same budget runs it again, because it got further; it finishes from its part
    assert proto.read_cached(cell, cache, budget, False) is None
    (second,) = proto.run_cells([cell], **options)
    assert second["status"] == "ok" and second["result"] == {"sum": 3 + 6}
    assert second["parts_at_start"] == 1
    assert second["earlier_seconds"] == pytest.approx(first["seconds"])
    assert second["seconds"] > first["seconds"]  # the cell's time counts both runs
    assert not cell.parts_dir(cache).exists()  # an ok cell's parts are removed
    assert proto.read_cached(cell, cache, budget, False)["status"] == "ok"
    text = "\n".join(proto.timing_markdown(proto.status_table([second | {"dataset": "d"}])))
    assert f"d/r from 1 parts: its seconds include {first['seconds']:,.0f} s" in text


def test_the_timing_names_a_cell_resumed_from_a_run_that_left_no_record(proto):
    # parts saved by a run stopped with its parent: no timed-out record, no earlier seconds
    records = [
        {"dataset": "d", "ranker": "a", "status": "ok", "seconds": 5.0, "parts_at_start": 6},
        {"dataset": "d", "ranker": "b", "status": "ok", "seconds": 7.0, "parts_at_start": 0},
    ]
    text = "\n".join(proto.timing_markdown(proto.status_table(records)))
    assert "saved parts (1): d/a from 6 parts: its seconds are the last run's only" in text
    assert "d/b from" not in text
    assert "Resumed" not in "\n".join(proto.timing_markdown(proto.status_table(records[1:])))


def test_a_timed_out_cell_without_new_parts_stands(proto, tmp_path):
    cache = tmp_path / "cache"
    cell = proto.Cell("test", "d", "r", {"x": 1})
    record = {"status": "timeout", "budget": 5.0, "seconds": 5.0, "parts": 2, "parts_saved": 0}
    proto._write_json(cell.cache_path(cache), record)
    assert proto.read_cached(cell, cache, 5.0, False)["status"] == "timeout"
    assert proto.read_cached(cell, cache, 6.0, False) is None  # a larger budget reruns it


@pytest.mark.parametrize("quick", [math.inf, 0.0])
def test_a_random_part_resumes_at_its_first_unscored_ranking(data, monkeypatch, tmp_path, quick):
    import aggregation.evaluation as evaluation

    script = _script("protocols.supervised_protocol")
    d = _first_dataset(data)
    settings = {"folds": 2, "grid": "points:4", "seed": 0, "n_random": 4, "start": 2}
    payload = {"settings": settings, "path": d.path, "ranker": "random[2:6]"}
    whole = script.compute_cell(payload)  # one call of random_curves for the four
    calls = []
    real = evaluation.random_curves

    def counting(*args, **kwargs):
        calls.append((kwargs["start"], kwargs["n_random"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(evaluation, "random_curves", counting)
    # a ranking scored in under QUICK_RANKING s is cheap: the others share one call;
    # slower ones (quick = 0 here) go one call each; inf: every ranking counts as cheap,
    # however busy the machine
    monkeypatch.setattr(script, "QUICK_RANKING", quick)
    parts = tmp_path / "cell.parts"
    # each ranking saved as a part: the same numbers, to the last bit
    assert script.compute_cell(payload | {"parts_dir": str(parts)}) == whole
    assert calls == ([(2, 1), (3, 3)] if quick else [(2, 1), (3, 1), (4, 1), (5, 1)])
    names = ["attrs.json", "random_2.npy", "random_3.npy", "random_4.npy", "random_5.npy"]
    assert sorted(p.name for p in parts.iterdir()) == names

    # cut short before the last two, and the first torn: only those three are scored again
    (parts / "random_4.npy").unlink()
    (parts / "random_5.npy").unlink()
    (parts / "random_2.npy").write_bytes(b"\x93NUMPY")
    calls.clear()
    assert script.compute_cell(payload | {"parts_dir": str(parts)}) == whole
    assert calls == ([(2, 1), (4, 2)] if quick else [(2, 1), (4, 1), (5, 1)])
