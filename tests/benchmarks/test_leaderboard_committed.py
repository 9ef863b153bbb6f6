"""The committed leaderboards (leaderboard/) say what their own tables say.

The average ranks of ``<protocol>.csv`` are the Friedman ranks of the per-data-set score
table beside them, over the data sets where every method has a score; the boards hold every
registered ranker of their kind that was fitted, the aggregates and the ensemble; and one
small data set's fold scores re-derive from the committed top-256 orders (needs the shared
data, skipped without it).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[2]
BOARD = REPO / "leaderboard"
DATA = REPO.parent / "shared" / "data" / "skfeature"
UCI = REPO.parent / "shared" / "data" / "uci"
HEADLINE = {"supervised": ("bacc_1_64", True), "unsupervised": ("mse_16", False)}
#: the averaging aggregates and the fusions, in the scorer's tie order
AGGREGATE_ORDER = ("mean_rank", "borda", "kemeny_top32", "generic_tol", "rra", "rrf", "best_rank")
AGGREGATES = set(AGGREGATE_ORDER)
ENSEMBLES = {"stacked_auto", "stacked_top3", "stacked_top1"}
#: the ensembles fitted whole on each outer fold (the supervised boards only): never a
#: single ranker
FITTED = {"stacked_nsga2"}


def _friedman_ranks(table: pd.DataFrame, higher: bool) -> pd.Series:
    # rank 1 = best on each data set, ties share the mean rank; scores within 1e-9
    # (relative) tie, the boards' documented rule (aggregation.evaluation.stats)
    from aggregation.evaluation.stats import rank_table

    ranks = rank_table(table, higher_is_better=higher).mean(axis=0)
    # the rule changes nothing but ties in the last bits: pandas' exact ranks agree to them
    exact = table.rank(axis=1, ascending=not higher, method="average").mean(axis=0)
    np.testing.assert_allclose(ranks, exact[ranks.index], atol=0.5 / len(table) + 1e-12)
    return ranks


@pytest.mark.parametrize("protocol", list(HEADLINE))
def test_average_ranks_are_those_of_the_score_table(protocol):
    score, higher = HEADLINE[protocol]
    board = pd.read_csv(BOARD / f"{protocol}.csv").set_index("method")
    wide = pd.read_csv(BOARD / protocol / f"scores_{score}.csv", index_col=0)
    table = wide[board.index].dropna(axis=0)  # the data sets every ranked method has
    assert len(table) == board["n_datasets"].iloc[0] >= 17
    expected = _friedman_ranks(table, higher)
    # the table holds the scores at full precision: the ranks re-derive to rounding
    np.testing.assert_allclose(board["average_rank"], expected[board.index], atol=1e-9)
    assert board["average_rank"].is_monotonic_increasing
    assert {"random", *AGGREGATES, *ENSEMBLES} <= set(board.index)


@pytest.mark.parametrize("board", ["supervised", "unsupervised", "uci/supervised"])
def test_the_head_to_head_p_values_re_derive_from_the_score_table(board):
    """stats.json's contenders (best single, best aggregate, stacked_auto and, on the
    supervised boards, mo_weighting) are the board's, and their Wilcoxon-Holm p-values
    follow from the committed score table."""
    from itertools import combinations

    from scipy.stats import wilcoxon

    protocol = board.split("/")[-1]
    score, higher = HEADLINE[protocol]
    stats = json.loads((BOARD / board / "stats.json").read_text())["scores"][score]
    rows = stats["head_to_head"]
    ranks = pd.Series(stats["average_ranks"])
    singles = [m for m in ranks.sort_values().index if m not in AGGREGATES | ENSEMBLES | FITTED]
    order = [m for m in AGGREGATE_ORDER if m in ranks]
    best_aggregate = min(order, key=lambda m: (round(ranks[m], 9), order.index(m)))
    names = [stats["best_single"], best_aggregate, "stacked_auto"]
    if "mo_weighting" in ranks and "mo_weighting" not in names:
        names.append("mo_weighting")
    assert [(r["a"], r["b"]) for r in rows] == list(combinations(names, 2))
    assert stats["best_single"] == next(m for m in singles if m != "random")
    wide = pd.read_csv(BOARD / board / f"scores_{score}.csv", index_col=0)
    table = wide[list(ranks.index)].dropna(axis=0)
    raw = np.array([wilcoxon(table[r["a"]], table[r["b"]], zero_method="zsplit").pvalue
                    for r in rows])  # fmt: skip
    # the table holds the scores at full precision: p re-derives to rounding
    np.testing.assert_allclose([r["p"] for r in rows], raw, rtol=1e-9)
    n = len(rows)
    order = np.argsort(raw)
    holm = np.maximum.accumulate((n - np.arange(n)) * raw[order]).clip(max=1)
    np.testing.assert_allclose([r["p_holm"] for r in rows], holm[np.argsort(order)], rtol=1e-9)
    for r in rows:
        d = table[r["a"]] - table[r["b"]]
        assert r["wins_a"] == int(((d > 0) if higher else (d < 0)).sum())


def test_the_uci_board_ranks_its_own_table():
    """The held-out UCI board (7 low-dimensional sets the ensemble's design never saw):
    Friedman ranks of its table, the same methods as the main supervised board."""
    board = pd.read_csv(BOARD / "uci" / "supervised.csv").set_index("method")
    wide = pd.read_csv(BOARD / "uci" / "supervised" / "scores_bacc_1_64.csv", index_col=0)
    assert sorted(wide.index) == sorted(
        ["australian", "breast_w", "german", "heart_statlog", "ionosphere", "sonar", "waveform_21"]
    )
    table = wide[board.index]
    assert not table.isna().any().any() and (board["n_datasets"] == 7).all()
    expected = _friedman_ranks(table, higher=True)
    np.testing.assert_allclose(board["average_rank"], expected[board.index], atol=1e-9)
    main = set(pd.read_csv(BOARD / "supervised.csv")["method"])
    # a fitted ensemble not on every main set yet is listed there as not ranked
    stats = json.loads((BOARD / "supervised" / "stats.json").read_text())
    unranked = set(stats["scores"]["bacc_1_64"]["dropped_methods"])
    assert set(board.index) - (unranked & FITTED) == main


@pytest.mark.skipif(not (UCI / "sonar.tsv.gz").is_file(), reason="needs ../shared/data/uci")
def test_the_fits_read_a_uci_table_with_its_target_column():
    from benchmarks.protocols import leaderboard_fits as fits

    present, _ = fits.list_datasets(UCI)
    sonar = next(d for d in present if d.name == "sonar")
    X, y = fits.load(sonar)
    assert X.shape == (208, 60) and X.dtype == np.float64
    assert np.bincount(y).tolist() == [111, 97]  # MANIFEST: 0 = mine (111), 1 = rock (97)


def test_the_supervised_board_holds_every_fitted_classification_ranker():
    import rankers

    table = rankers.available()
    kinds = table["target_kind"].isin(["classification", "both"]) & table["requires_y"]
    every = set(table.loc[kinds, "name"]) - {"stacked"}  # the ensemble is scored as stacked_*
    board = pd.read_csv(BOARD / "supervised.csv")
    assert every <= set(board["method"]), sorted(every - set(board["method"]))


def test_the_unsupervised_board_holds_every_unsupervised_ranker():
    import rankers

    table = rankers.available()
    every = set(table.loc[~table["requires_y"], "name"])
    board = pd.read_csv(BOARD / "unsupervised.csv")
    assert every <= set(board["method"]), sorted(every - set(board["method"]))


@pytest.mark.skipif(not (DATA / "colon.mat").is_file(), reason="needs ../shared/data")
def test_colon_fold_scores_re_derive_from_the_committed_orders(monkeypatch):
    from benchmarks.protocols import leaderboard
    from benchmarks.protocols import leaderboard_fits as fits

    present, _ = fits.list_datasets(DATA)
    colon = next(d for d in present if d.name == "colon")
    X, y = fits.load(colon)
    folds = fits.splits(y, fits.n_folds(y))
    stored = pd.read_csv(BOARD / "supervised" / "folds.csv")
    stored = stored[stored["dataset"] == "colon"]
    for method in ("jmi", "stacked_auto", "mean_rank"):
        orders = leaderboard.read_orders(BOARD / "supervised" / "orders" / "colon" /
                                         f"{method}.npy.gz")  # fmt: skip
        got = leaderboard.fold_scores("supervised", list(orders), X, y, folds)["bacc_1_64"]
        want = stored[stored["method"] == method].sort_values("fold")["bacc_1_64"].to_numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, err_msg=method)


@pytest.mark.parametrize("board", ["supervised", "uci/supervised"])
def test_the_pre_registered_pair_re_derives_from_the_score_table(board):
    """stacked_nsga2 against stacked_auto (leaderboard/README.md, its pre-registration): its
    Wilcoxon p-value, ranks and wins follow from the committed score table, tested alone;
    on a board where it has not every set yet, it is listed as not ranked and untested."""
    from scipy.stats import wilcoxon

    score, _ = HEADLINE["supervised"]
    stats = json.loads((BOARD / board / "stats.json").read_text())["scores"][score]
    if "stacked_nsga2" in stats["dropped_methods"]:
        assert not stats["pairs"] and "stacked_nsga2" not in stats["average_ranks"]
        return
    (pair,) = stats["pairs"]
    assert (pair["a"], pair["b"]) == ("stacked_nsga2", "stacked_auto")
    wide = pd.read_csv(BOARD / board / f"scores_{score}.csv", index_col=0)
    table = wide[list(stats["average_ranks"])].dropna(axis=0)
    a, b = table["stacked_nsga2"], table["stacked_auto"]
    p = wilcoxon(a, b, zero_method="zsplit").pvalue
    np.testing.assert_allclose(pair["p"], p, rtol=1e-9)
    assert pair["wins_a"] == int((a > b).sum()) and pair["wins_b"] == int((a < b).sum())
    assert pair["rank_a"] == stats["average_ranks"]["stacked_nsga2"]


@pytest.mark.parametrize("board", ["supervised", "uci/supervised"])
def test_the_learned_member_weights_are_the_fits(board):
    """member_weights.csv: every fold of every data set of the board, one weight per pool
    member, each 0 or between the cut-off and 1, at least one member kept."""
    from moweights.ensemble import POOLS
    from moweights.ensemble.weights import MIN_WEIGHT

    weights = pd.read_csv(BOARD / board / "member_weights.csv")
    folds = pd.read_csv(BOARD / board / "folds.csv")
    mine = folds[folds["method"] == "stacked_nsga2"][["dataset", "fold"]]
    got = weights[["dataset", "fold"]].drop_duplicates()
    assert sorted(map(tuple, got.to_numpy())) == sorted(map(tuple, mine.to_numpy()))
    members = weights.groupby(["dataset", "fold"])["member"].apply(sorted)
    assert all(m == sorted(POOLS["classification"]) for m in members)
    w = weights["weight"]
    assert ((w == 0) | ((w >= MIN_WEIGHT) & (w <= 1))).all()
    assert (weights.groupby(["dataset", "fold"])["weight"].max() > 0).all()
