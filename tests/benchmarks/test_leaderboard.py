"""The leaderboard harness on small planted data: what its numbers mean.

Two data sets written as scikit-feature ``.mat`` files: ``planted`` (3 of 40 features
shift with the class) and ``noise`` (random labels, nothing to find). 3 outer folds, 3
inner folds; seconds. No shared data needed.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

# the harness writes its tables with pandas' to_markdown
pytest.importorskip("tabulate", reason="needs the 'full' extra: pip install '.[full]'")

SUP = ["anova_f", "t_test", "chi2", "info_gain"]
UNSUP = ["variance", "laplacian"]


def _write(folder: Path, name: str, X: np.ndarray, y: np.ndarray) -> dict:
    from scipy.io import savemat

    path = folder / f"{name}.mat"
    savemat(path, {"X": X, "Y": y.reshape(-1, 1)})
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    return {
        "name": name,
        "file": path.name,
        "n_samples": X.shape[0],
        "n_features": X.shape[1],
        "n_classes": len(np.unique(y)),
        "sha256": sha,
    }


@pytest.fixture
def lb(tmp_path, monkeypatch):
    """(fits module, scoring module, data dir) with a temporary cache and 3 folds."""
    from benchmarks.protocols import leaderboard
    from benchmarks.protocols import leaderboard_fits as fits

    monkeypatch.setattr(fits, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(fits, "N_FOLDS", 3)
    monkeypatch.setattr(fits, "POOL", {"supervised": tuple(SUP), "unsupervised": tuple(UNSUP)})
    data = tmp_path / "data"
    data.mkdir()
    rng = np.random.default_rng(0)
    y = np.repeat([1, 2], 30)
    planted = rng.normal(size=(60, 40))
    planted[:, :3] += 1.5 * (y == 2)[:, None]
    noise = rng.normal(size=(60, 300))
    rows = [
        _write(data, "planted", planted, y),
        _write(data, "noise", noise, rng.permutation(y)),
    ]
    pd.DataFrame(rows).to_csv(data / "MANIFEST.csv", index=False)
    yield fits, leaderboard, data


def _fit(fits, data, protocol="supervised", rankers=None):
    args = ["--protocol", protocol, "--data-dir", str(data), "--budget", "600"]
    fits.main(args + (["--rankers", *rankers] if rankers else []))


def _dataset(fits, data, name):
    present, _ = fits.list_datasets(data)
    return next(d for d in present if d.name == name)


def test_cells_store_every_fold_keyed_without_code(lb):
    fits, _, data = lb
    _fit(fits, data, rankers=["anova_f"])
    d = _dataset(fits, data, "planted")
    X, y = fits.load(d)
    cell = fits.Cell(d, "anova_f", (), 3)
    assert cell.done() == [0, 1, 2]
    # the key: data set + sha, folds and seed, ranker + params hash; no code hash
    assert cell.folder.parts[-3:] == (
        f"planted-{d.sha256[:12]}",
        "skf3-s0",
        f"anova_f__{fits._hash({})}",
    )
    record = json.loads((cell.folder / "cell.json").read_text())
    assert record["sha256"] == d.sha256 and record["attempts"][-1]["status"] == "ok"
    # each fold's order is the ranker refit on that fold's training rows only
    from sklearn.feature_selection import f_classif

    for f, (train, _) in enumerate(fits.splits(y, 3)):
        order, scores, meta = fits.read_fold(cell.folder, f)
        np.testing.assert_allclose(scores, f_classif(X[train], y[train])[0], rtol=1e-6, atol=1e-9)
        assert set(order[:3]) == {0, 1, 2} and len(meta["commit"]) == 40
    # the inner cells of the pool: 3 inner folds of each of the 3 training parts
    inner = fits.Cell(d, "anova_f", (), 3, fits.N_INNER)
    assert len(inner.done()) == 9
    for job, (train, test) in enumerate(fits.inner_splits(y, fits.splits(y, 3))):
        outer_train = fits.splits(y, 3)[job // 3][0]
        assert set(train) | set(test) <= set(outer_train)
        _, scores, _ = fits.read_fold(inner.folder, job)
        np.testing.assert_allclose(scores, f_classif(X[train], y[train])[0], rtol=1e-6, atol=1e-9)


def test_a_cell_resumes_at_its_missing_fold(lb):
    fits, _, data = lb
    _fit(fits, data, rankers=["anova_f"])
    d = _dataset(fits, data, "noise")
    cell = fits.Cell(d, "anova_f", (), 3)
    kept = (cell.folder / "fold_00.json").read_text()
    for p in cell.folder.glob("fold_01.*"):
        p.unlink()
    assert fits.should_run(cell, 600, retry_failed=False)
    _fit(fits, data, rankers=["anova_f"])
    assert cell.done() == [0, 1, 2]
    assert (cell.folder / "fold_00.json").read_text() == kept  # not refitted
    attempts = json.loads((cell.folder / "cell.json").read_text())["attempts"]
    assert [a["folds_before"] for a in attempts] == [0, 2]
    assert not fits.should_run(cell, 600, retry_failed=False)


def test_supervised_scores_mean_what_they_say(lb, tmp_path):
    fits, leaderboard, data = lb
    _fit(fits, data, rankers=SUP)
    out = tmp_path / "board"
    leaderboard.main(
        ["--protocol", "supervised", "--members", *SUP, "--data-dir", str(data), "--out", str(out)]
    )
    scores = pd.read_csv(out / "supervised" / "scores_bacc_1_64.csv", index_col="dataset")
    methods = set(scores.columns)
    assert {*SUP, "random", "mean_rank", "borda", "kemeny_top32", "generic_tol"} <= methods
    assert {"stacked_top3", "stacked_top1"} <= methods
    # a planted signal scores well above random; pure noise does not (nested: the test
    # rows never chose the features)
    assert scores.loc["planted", "anova_f"] > scores.loc["planted", "random"] + 0.1
    for method in [*SUP, "mean_rank", "stacked_top3"]:
        assert abs(scores.loc["noise", method] - scores.loc["noise", "random"]) < 0.12
    board = pd.read_csv(out / "supervised.csv")
    assert list(board.columns) == ["method", "average_rank", "n_datasets"]
    assert (board["n_datasets"] == 2).all()
    assert board["average_rank"].is_monotonic_increasing
    stats = json.loads((out / "supervised" / "stats.json").read_text())
    assert stats["scores"]["bacc_1_64"]["best_single"] in SUP
    # the committed top-256 orders re-derive the same scores without the cache
    again = tmp_path / "again"
    fits.CACHE = tmp_path / "empty-cache"
    leaderboard.main(
        [
            "--protocol", "supervised", "--members", *SUP, "--data-dir", str(data),
            "--out", str(again), "--from-orders", str(out),
        ]
    )  # fmt: skip
    rederived = pd.read_csv(again / "supervised" / "scores_bacc_1_64.csv", index_col="dataset")
    pd.testing.assert_frame_equal(rederived[sorted(methods)], scores[sorted(methods)])
    # a re-scoring keeps its score cache in its own output folder, not the fit cache
    assert any((again / ".cache" / "scores" / "supervised").rglob("*.json"))
    assert not (tmp_path / "empty-cache").exists()


def test_aggregates_use_only_their_folds_members(lb):
    fits, leaderboard, data = lb
    _fit(fits, data, rankers=SUP)
    d = _dataset(fits, data, "planted")
    X, y = fits.load(d)
    outer = fits.splits(y, 3)
    orders, chosen = leaderboard.dataset_orders("supervised", d, X, y, outer, 3, SUP, SUP)
    from aggregation import mean_rank
    from aggregation.ranking import Ranking

    names = [f"x{i}" for i in range(X.shape[1])]
    for f in range(3):
        stored = {m: fits.read_fold(fits.Cell(d, m, (), 3).folder, f)[:2] for m in SUP}  # fold f
        rankings = {m: Ranking(names, s, m, order_idx=o) for m, (o, s) in stored.items()}
        expected = mean_rank(list(rankings.values()))
        assert list(orders["mean_rank"][f]) == [names.index(n) for n in expected.order]
        # the ensemble's fold f: mean rank of the chosen members' fold-f rankings
        picked = chosen[f]["chosen"].split()
        assert set(picked) < set(SUP) and len(picked) == 3
        ensemble = mean_rank([rankings[m] for m in picked])
        assert list(orders["stacked_top3"][f]) == [names.index(n) for n in ensemble.order]
        assert list(orders["stacked_top1"][f]) == list(stored[picked[0]][0])
    # changing another fold's stored member rankings leaves fold 0's aggregate unchanged
    cell = fits.Cell(d, "anova_f", (), 3)
    order = np.load(cell.folder / "fold_01.order.npy")
    np.save(cell.folder / "fold_01.order.npy", order[::-1].copy())
    scores = np.load(cell.folder / "fold_01.scores.npy")
    np.save(cell.folder / "fold_01.scores.npy", -scores)
    changed, _ = leaderboard.dataset_orders("supervised", d, X, y, outer, 3, SUP, SUP)
    for name in leaderboard.AGGREGATES:
        np.testing.assert_array_equal(changed[name][0], orders[name][0])
        np.testing.assert_array_equal(changed[name][2], orders[name][2])
    assert not np.array_equal(changed["mean_rank"][1], orders["mean_rank"][1])


def test_unsupervised_board(lb, tmp_path):
    fits, leaderboard, data = lb
    _fit(fits, data, protocol="unsupervised", rankers=UNSUP)
    out = tmp_path / "board"
    leaderboard.main(
        ["--protocol", "unsupervised", "--members", *UNSUP, "--data-dir", str(data),
         "--out", str(out)]
    )  # fmt: skip
    mse = pd.read_csv(out / "unsupervised" / "scores_mse_16.csv", index_col="dataset")
    assert {*UNSUP, "random", "mean_rank", "stacked_top3"} <= set(mse.columns)
    assert (mse > 0).all().all()
    board = pd.read_csv(out / "unsupervised.csv")
    assert set(board["method"]) == set(mse.columns)


def test_holm_and_complete_table(lb):
    _, leaderboard, _ = lb
    # Holm: sorted p times (m - i), made monotone, capped at 1
    np.testing.assert_allclose(
        leaderboard.holm(np.array([0.01, 0.04, 0.03, 0.5])), [0.04, 0.09, 0.09, 0.5]
    )
    table = pd.DataFrame(
        {"a": [1.0, 2.0, np.nan], "b": [1.0, np.nan, np.nan], "c": [1.0, 2.0, 3.0]},
        index=["s1", "s2", "s3"],
    )
    kept, methods, sets = leaderboard.complete_table(table)
    assert methods == ["b"] and sets == ["s3"] and list(kept.columns) == ["a", "c"]


def test_equal_average_ranks_resolve_by_a_fixed_order(lb):
    """Two single rankers and three aggregates with exactly equal scores on every set: the
    best single is the first of them in the table's columns (the score table's are sorted
    by name), the best aggregate the first of AGGREGATES whatever the columns' order."""
    _, leaderboard, _ = lb
    rng = np.random.default_rng(0)
    base = rng.random(8)
    # 20 worse singles around the tie: enough columns for an unstable sort to reorder it
    worse = {f"w{i:02d}": base - 0.3 - 0.01 * i for i in range(20)}
    cols = {
        **dict(list(worse.items())[:10]),
        "borda": base - 0.1, "generic_tol": base - 0.1, "jmi": base, "mean_rank": base - 0.1,
        "mrmr": base, "stacked_auto": base + rng.normal(0, 0.05, 8),
        **dict(list(worse.items())[10:]),
    }  # fmt: skip
    singles = ["jmi", "mrmr", *worse]
    for names, best in ((list(cols), "jmi"), (list(reversed(cols)), "mrmr")):
        table = pd.DataFrame({n: cols[n] for n in names}, index=range(8))
        stats = leaderboard.statistics(table, True, singles)
        assert stats["best_single"] == best
        rows = leaderboard.head_to_head(table, True, stats)
        pairs = [(r["a"], r["b"]) for r in rows]
        assert pairs == [(best, "mean_rank"), (best, "stacked_auto"), ("mean_rank", "stacked_auto")]
        assert rows[0]["wins_a"] == 8 and rows[0]["wins_b"] == 0


def test_the_harness_ensemble_is_the_product_ranker(lb):
    """stacked_top3 of fold f = moweights.ensemble.StackedRanker fitted on that training part."""
    fits, leaderboard, data = lb
    _fit(fits, data, rankers=SUP)
    from moweights.ensemble import StackedRanker

    for name in ("planted", "noise"):
        d = _dataset(fits, data, name)
        X, y = fits.load(d)
        outer = fits.splits(y, 3)
        orders, chosen = leaderboard.dataset_orders("supervised", d, X, y, outer, 3, SUP, SUP)
        for f, (train, _) in enumerate(outer):
            ranker = StackedRanker(pool=SUP, n_members=3, cv=3, random_state=0)
            ranker.fit(X[train], y[train])
            assert ranker.members_ == chosen[f]["chosen"].split()
            np.testing.assert_array_equal(ranker.ranking_, orders["stacked_top3"][f])


def test_partial_list_fusions_read_each_member_as_its_prefix():
    """rra, rrf and best_rank of committed top-K orders: each member's prefix first, the
    rest one tied block below; a feature no member lists comes after every listed one."""
    from aggregation.combine import METHODS
    from benchmarks.protocols import leaderboard

    names = [f"x{i}" for i in range(8)]
    ranking = leaderboard.prefix_ranking([3, 1, 5], names, "a")
    assert [sorted(b) for b in ranking.blocks] == [["x3"], ["x1"], ["x5"], sorted(
        ["x0", "x2", "x4", "x6", "x7"])]  # fmt: skip
    orders = {"a": [[3, 1, 5]], "b": [[1, 3, 2]], "c": [[6, 1, 0]], "other": [[7, 6, 5]]}
    fused = leaderboard.partial_list_fusions(orders, ["a", "b", "c"], 8, 1)
    assert set(fused) == set(leaderboard.FUSIONS)
    for name, (order,) in fused.items():
        expected = METHODS[name](
            [leaderboard.prefix_ranking(orders[m][0], names, m) for m in ("a", "b", "c")]
        )
        assert [names[i] for i in order] == list(expected.order), name
        assert order[0] == 1  # x1: second, first and second in the three lists
        assert set(order[-2:]) == {4, 7}  # listed by none of the members


def test_regret_against_the_best_single_ranker_in_hindsight():
    from benchmarks.protocols import leaderboard

    table = pd.DataFrame(
        {"a": [0.9, 0.5], "b": [0.7, 0.6], "agg": [0.8, 0.65], "random": [0.95, 0.1]},
        index=["d1", "d2"],
    )
    gaps = leaderboard.regret(table, True, ["a", "b", "random"])
    # best single: a on d1 (0.9), b on d2 (0.6); random is no single ranker here
    np.testing.assert_allclose(gaps.loc[["d1", "d2"], "agg"], [0.1, -0.05])
    assert gaps.loc["worst", "agg"] == pytest.approx(0.1)
    assert gaps.loc["mean", "agg"] == pytest.approx(0.025)
    assert gaps.loc["worst", "a"] == pytest.approx(0.1) and gaps.loc["d1", "a"] == 0
    errors = leaderboard.regret(table, False, ["a", "b"])  # lower is better: relative
    np.testing.assert_allclose(errors.loc[["d1", "d2"], "agg"], [0.1 / 0.7, 0.15 / 0.5])


def test_score_tables_are_written_at_full_precision(lb, tmp_path):
    """Every float of a score table reads back as the value computed (no 6-digit rounding):
    two scores that differ only in the 7th digit stay apart, and the per-data-set means of
    ``folds.csv`` re-derive ``scores_*.csv`` exactly, so exact ties tie again."""
    _, leaderboard, _ = lb
    values = np.array([1 / 3, 0.1 + 0.2, 0.7234561, 0.7234562, 2.5e-300, 123456.789012345])
    frame = pd.DataFrame({"method": list("abcdef"), "score": values})
    leaderboard.write_table(frame, tmp_path / "t.csv")
    back = pd.read_csv(tmp_path / "t.csv")["score"].to_numpy()
    np.testing.assert_array_equal(back, values)
    assert back[2] != back[3]


def test_the_board_re_derives_from_its_fold_table(lb, tmp_path):
    fits, leaderboard, data = lb
    _fit(fits, data, rankers=SUP)
    out = tmp_path / "board"
    leaderboard.main(
        ["--protocol", "supervised", "--members", *SUP, "--data-dir", str(data), "--out", str(out)]
    )
    folds = pd.read_csv(out / "supervised" / "folds.csv")
    wide = pd.read_csv(out / "supervised" / "scores_bacc_1_64.csv", index_col="dataset")
    again = folds.pivot_table(index="dataset", columns="method", values="bacc_1_64",
                              aggfunc="mean")  # fmt: skip
    pd.testing.assert_frame_equal(again[wide.columns], wide, check_exact=True, check_names=False)
    board = pd.read_csv(out / "supervised.csv").set_index("method")["average_rank"]
    ranks = wide[board.index].rank(axis=1, ascending=False).mean(axis=0)
    np.testing.assert_array_equal(board.to_numpy(), ranks[board.index].to_numpy())


def test_the_head_to_head_adds_the_weighting_as_a_fourth_contender(lb):
    """With mo_weighting on the board: its six pairs, Holm over six; rra the best aggregate
    where it has the lowest average rank of the seven."""
    _, leaderboard, _ = lb
    rng = np.random.default_rng(1)
    base = rng.random(9)
    cols = {
        "jmi": base, "mrmr": base - 0.2, "mean_rank": base - 0.1, "rra": base - 0.05,
        "stacked_auto": base + rng.normal(0, 0.05, 9), "mo_weighting": base - 0.3,
    }  # fmt: skip
    table = pd.DataFrame(cols, index=range(9))
    stats = leaderboard.statistics(table, True, ["jmi", "mrmr", "mo_weighting"])
    rows = leaderboard.head_to_head(table, True, stats)
    names = ["jmi", "rra", "stacked_auto", "mo_weighting"]
    assert [(r["a"], r["b"]) for r in rows] == [
        (a, b) for i, a in enumerate(names) for b in names[i + 1 :]
    ]
    raw = np.array([r["p"] for r in rows])
    assert all(r["p_holm"] >= r["p"] for r in rows)
    assert max(r["p_holm"] for r in rows) <= 1.0
    smallest = int(np.argmin(raw))
    assert rows[smallest]["p_holm"] == pytest.approx(min(1.0, 6 * raw[smallest]))


def test_a_fitted_ensemble_is_fitted_when_named_and_never_a_single_ranker(lb, tmp_path):
    """stacked_nsga2: a cell of the fits only when named, the product ranker with the NSGA-II
    weights on each outer training part; scored with --fitted beside committed orders, its
    orders and learned weights written, never the best single ranker, and its pre-registered
    pair with stacked_auto tested on its own. Fitted on one set of two, it is listed as not
    ranked; a set whose fits left the cache keeps its committed orders and weights."""
    import shutil

    fits, leaderboard, data = lb
    assert not set(fits.FITTED_ENSEMBLES) & set(fits.protocol_rankers("supervised"))
    _fit(fits, data, rankers=SUP)
    assert not list(fits.CACHE.glob("fits/*/skf3-s0/stacked_nsga2__*"))
    nsga2 = ["--protocol", "supervised", "--data-dir", str(data), "--budget", "600",
             "--no-inner", "--rankers", "stacked_nsga2"]  # fmt: skip
    board = tmp_path / "board"
    base = ["--protocol", "supervised", "--data-dir", str(data), "--out", str(board),
            "--members", *SUP]  # fmt: skip
    leaderboard.main(base)
    fitted = [*base, "--from-orders", str(board), "--fitted", "stacked_nsga2"]
    fits.main([*nsga2, "--datasets", "noise"])
    partial = leaderboard.main(fitted)["scores"]["bacc_1_64"]
    assert "stacked_nsga2" in partial["dropped_methods"] and not partial["pairs"]
    assert not (board / "supervised" / "orders" / "planted" / "stacked_nsga2.npy.gz").exists()
    fits.main(nsga2)
    from moweights.ensemble import StackedRanker

    d = _dataset(fits, data, "planted")
    X, y = fits.load(d)
    outer = fits.splits(y, 3)
    orders, weights = leaderboard.fitted_folds(d, "stacked_nsga2", 3)
    train = outer[1][0]
    ranker = StackedRanker(combine="nsga2", n_clusters=2, random_state=0).fit(X[train], y[train])
    np.testing.assert_array_equal(orders[1], ranker.ranking_)
    fold1 = {r["member"]: r["weight"] for r in weights if r["fold"] == 1}
    assert fold1 == ranker.member_weights_.to_dict()
    # a board of committed orders with the fitted ensemble beside them
    report = leaderboard.main(fitted)
    stored = leaderboard.read_orders(
        board / "supervised" / "orders" / "planted" / "stacked_nsga2.npy.gz"
    )
    np.testing.assert_array_equal(stored[1], orders[1][: leaderboard.TOP_K])
    stats = report["scores"]["bacc_1_64"]
    assert "stacked_nsga2" in stats["average_ranks"] and stats["best_single"] in SUP
    assert [(p["a"], p["b"]) for p in stats["pairs"]] == [("stacked_nsga2", "stacked_auto")]
    table = pd.read_csv(board / "supervised" / "member_weights.csv")
    assert set(table["dataset"]) == {"planted", "noise"} and (table["weight"] >= 0).all()
    # the planted set's fits gone from the cache: its committed orders and weights stay
    shutil.rmtree(next(fits.CACHE.glob("fits/planted-*/skf3-s0/stacked_nsga2__*")))
    again = leaderboard.main(fitted)["scores"]["bacc_1_64"]
    assert again["average_ranks"] == stats["average_ranks"]
    pd.testing.assert_frame_equal(pd.read_csv(board / "supervised" / "member_weights.csv"), table)


def test_pair_tests_count_wins_and_test_each_pair_alone(lb):
    _, leaderboard, _ = lb
    table = pd.DataFrame({"a": [0.9, 0.8, 0.7, 0.6, 0.95], "b": [0.8, 0.85, 0.6, 0.5, 0.9]})
    ranks = {"a": 1.2, "b": 1.8}
    (row,) = leaderboard.pair_tests(table, True, ranks, [("a", "b")])
    assert (row["wins_a"], row["wins_b"]) == (4, 1) and (row["rank_a"], row["rank_b"]) == (1.2, 1.8)
    from scipy.stats import wilcoxon

    assert row["p"] == pytest.approx(wilcoxon(table["a"], table["b"], zero_method="zsplit").pvalue)
    twin = table.assign(c=table["a"])
    (same,) = leaderboard.pair_tests(twin, True, {**ranks, "c": 1.2}, [("a", "c")])
    assert same["p"] == 1.0 and same["wins_a"] == same["wins_b"] == 0
