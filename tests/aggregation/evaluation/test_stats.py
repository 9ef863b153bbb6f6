"""Tests of aggregation.evaluation.stats (Friedman, Nemenyi, Wilcoxon–Holm) and the CD diagram."""

from __future__ import annotations

import itertools
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst
from scipy import stats as st

from aggregation.evaluation.cd_diagram import plot_cd_diagram
from aggregation.evaluation.stats import (
    FriedmanResult,
    NemenyiResult,
    _holm,
    average_ranks,
    cd_groups,
    critical_difference,
    friedman,
    nemenyi,
    rank_table,
    wilcoxon_holm,
)
from rankers.exceptions import InvalidInputError, InvalidParameterError

# Demšar (2006), Table 6: AUC of C4.5 with and without m-tuning and cf-tuning, and the ranks.
METHODS = ["C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf"]
DEMSAR = [  # data set, four AUCs, four published ranks
    ("adult (sample)", 0.763, 0.768, 0.771, 0.798, 4, 3, 2, 1),
    ("breast cancer", 0.599, 0.591, 0.590, 0.569, 1, 2, 3, 4),
    ("breast cancer wisconsin", 0.954, 0.971, 0.968, 0.967, 4, 1, 2, 3),
    ("cmc", 0.628, 0.661, 0.654, 0.657, 4, 1, 3, 2),
    ("ionosphere", 0.882, 0.888, 0.886, 0.898, 4, 2, 3, 1),
    ("iris", 0.936, 0.931, 0.916, 0.931, 1, 2.5, 4, 2.5),
    ("liver disorders", 0.661, 0.668, 0.609, 0.685, 3, 2, 4, 1),
    ("lung cancer", 0.583, 0.583, 0.563, 0.625, 2.5, 2.5, 4, 1),
    ("lymphography", 0.775, 0.838, 0.866, 0.875, 4, 3, 2, 1),
    ("mushroom", 1.000, 1.000, 1.000, 1.000, 2.5, 2.5, 2.5, 2.5),
    ("primary tumor", 0.940, 0.962, 0.965, 0.962, 4, 2.5, 1, 2.5),
    ("rheum", 0.619, 0.666, 0.614, 0.669, 3, 2, 4, 1),
    # Both tuned variants print as 0.975 but the paper ranks them 2 and 3: the unrounded AUCs
    # differ, so the last one is nudged below to break the tie the way the paper does.
    ("voting", 0.972, 0.981, 0.975, 0.975 - 1e-4, 4, 1, 2, 3),
    ("wine", 0.957, 0.978, 0.946, 0.970, 3, 1, 4, 2),
]


@pytest.fixture
def demsar():
    auc = pd.DataFrame([r[1:5] for r in DEMSAR], index=[r[0] for r in DEMSAR], columns=METHODS)
    ranks = pd.DataFrame([r[5:] for r in DEMSAR], index=auc.index, columns=METHODS, dtype=float)
    return auc, ranks


# ------------------------------------------------------------------ Demšar's worked example
def test_demsar_ranks_row_by_row(demsar):
    auc, published = demsar
    pd.testing.assert_frame_equal(rank_table(auc, higher_is_better=True), published)
    avg = average_ranks(auc, higher_is_better=True)
    assert avg.round(3).tolist() == [3.143, 2.000, 2.893, 1.964]
    assert avg.name == "avg_rank" and avg.index.tolist() == METHODS


def test_demsar_printed_voting_tie_shares_ranks(demsar):
    auc, _ = demsar
    auc.loc["voting", "C4.5+m+cf"] = 0.975
    assert rank_table(auc, True).loc["voting"].tolist() == [4, 1, 2.5, 2.5]
    assert average_ranks(auc, True).round(3).tolist() == [3.143, 2.000, 2.929, 1.929]


def test_demsar_friedman_and_iman_davenport(demsar):
    res = friedman(demsar[0], higher_is_better=True)
    assert isinstance(res, FriedmanResult)
    assert (res.k, res.n) == (4, 14)
    assert round(res.statistic, 2) == 9.28
    assert round(res.f_statistic, 2) == 3.69
    # exact: avg ranks 44/14, 28/14, 40.5/14, 27.5/14
    chi2 = 12 * 14 / 20 * (np.sum(np.array([44, 28, 40.5, 27.5]) ** 2) / 14**2 - 25)
    assert res.statistic == pytest.approx(chi2, rel=1e-12)
    assert res.f_statistic == pytest.approx(13 * chi2 / (42 - chi2), rel=1e-12)
    assert res.pvalue == pytest.approx(st.chi2.sf(chi2, 3))
    assert res.f_pvalue == pytest.approx(st.f.sf(res.f_statistic, 3, 39))
    assert res.f_pvalue < 0.05  # Demšar: F(3, 39) critical value 2.85 < 3.69, H0 rejected


def test_demsar_nemenyi(demsar):
    auc, _ = demsar
    res = nemenyi(auc, higher_is_better=True)
    assert round(res.q_alpha, 3) == 2.569 and round(res.cd, 2) == 1.25
    assert res.groups == (("C4.5+m+cf", "C4.5+m", "C4.5+cf", "C4.5"),)  # nothing significant
    assert not res.significant.to_numpy().any()
    # α = 0.10: C4.5 is worse than C4.5+m and C4.5+m+cf; C4.5+cf could join either group.
    res10 = nemenyi(auc, higher_is_better=True, alpha=0.10)
    assert round(res10.q_alpha, 3) == 2.291 and round(res10.cd, 2) == 1.12
    assert res10.groups == (("C4.5+m+cf", "C4.5+m", "C4.5+cf"), ("C4.5+cf", "C4.5"))
    sig = res10.significant
    assert sig.loc["C4.5", "C4.5+m"] and sig.loc["C4.5", "C4.5+m+cf"]
    assert sig.to_numpy().sum() == 4  # the two pairs, both ways


@pytest.mark.parametrize(
    ("k", "q05", "q10"),
    [(2, 1.960, 1.645), (3, 2.343, 2.052), (5, 2.728, 2.459), (10, 3.164, 2.920)],
)
def test_critical_difference_matches_demsar_table_5(k, q05, q10):
    scale = np.sqrt(k * (k + 1) / 6)  # N = 1
    # the table has three decimals (2.343 for the 2.3437 of k = 3): one unit of slack
    assert critical_difference(k, 1) / scale == pytest.approx(q05, abs=1e-3)
    assert critical_difference(k, 1, alpha=0.10) / scale == pytest.approx(q10, abs=1e-3)


# ------------------------------------------------------------------ Friedman vs scipy
@settings(max_examples=30)
@given(k=hst.integers(3, 7), n=hst.integers(2, 20), seed=hst.integers(0, 2**32 - 1))
def test_friedman_agrees_with_scipy_without_ties(k, n, seed):
    table = np.random.default_rng(seed).normal(size=(n, k))
    res = friedman(table, higher_is_better=False)
    ref = st.friedmanchisquare(*table.T)
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-10, abs=1e-12)
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-8, abs=1e-12)
    # direction does not matter to a two-sided test
    assert friedman(table, True).statistic == pytest.approx(res.statistic, rel=1e-10, abs=1e-12)


@settings(max_examples=30)
@given(k=hst.integers(3, 6), n=hst.integers(3, 15), seed=hst.integers(0, 2**32 - 1))
def test_friedman_tie_correction_agrees_with_scipy(k, n, seed):
    table = np.random.default_rng(seed).integers(0, 3, size=(n, k)).astype(float)
    table[0] = np.arange(k)  # not every row tied, else scipy divides by zero
    res = friedman(table, higher_is_better=True, tie_correction=True)
    ref = st.friedmanchisquare(*table.T)
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-10, abs=1e-12)
    # without the correction, ties lower χ²_F (the correction divides by a number <= 1)
    assert friedman(table, True).statistic <= res.statistic + 1e-12


def test_friedman_extremes():
    perfect = pd.DataFrame(np.tile([1.0, 2.0, 3.0], (5, 1)), columns=list("abc"))
    res = friedman(perfect, higher_is_better=True)
    assert res.statistic == pytest.approx(5 * 2)  # the maximum N (k − 1)
    assert res.f_statistic == np.inf and res.f_pvalue == 0.0
    tied = pd.DataFrame(np.ones((4, 3)), columns=list("abc"))
    for corr in (False, True):
        res = friedman(tied, higher_is_better=True, tie_correction=corr)
        assert res.statistic == 0.0 and res.pvalue == 1.0 and res.f_pvalue == 1.0


# ------------------------------------------------------------------ ranks
def test_ties_share_average_rank_and_direction_flips():
    t = pd.DataFrame({"a": [0.5, 0.1], "b": [0.5, 0.2], "c": [0.7, 0.2], "d": [0.1, 0.3]})
    high = rank_table(t, higher_is_better=True)
    assert high.to_numpy().tolist() == [[2.5, 2.5, 1, 4], [4, 2.5, 2.5, 1]]
    low = rank_table(t, higher_is_better=False)
    pd.testing.assert_frame_equal(low, 5 - high)
    assert average_ranks(t, False).tolist() == [1.75, 2.5, 3.25, 2.5]


def test_array_input_gets_integer_method_names():
    avg = average_ranks(np.array([[1.0, 2.0], [3.0, 4.0]]), higher_is_better=True)
    assert avg.index.tolist() == [0, 1] and avg.tolist() == [2.0, 1.0]


# ------------------------------------------------------------------ Nemenyi
@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (10, [("m0", "m1"), ("m1", "m2"), ("m2", "m3"), ("m3", "m4")]),  # CD = 1.93
        (4, [("m0", "m1", "m2", "m3"), ("m1", "m2", "m3", "m4")]),  # CD = 3.05
        (40, []),  # CD = 0.96 < 1: every pair differs
    ],
)
def test_nemenyi_groups_constructed(n, expected):
    # every data set ranks m0 < m1 < ... < m4, so the average ranks are exactly 1..5
    table = pd.DataFrame(np.tile(np.arange(5.0), (n, 1)), columns=[f"m{i}" for i in range(5)])
    res = nemenyi(table, higher_is_better=False)
    assert res.avg_ranks.tolist() == [1, 2, 3, 4, 5]
    assert res.cd == pytest.approx(2.7277744 * np.sqrt(5 / n), rel=1e-6)
    assert list(res.groups) == expected


def _brute_force_groups(ranks: pd.Series, cd: float) -> set[frozenset]:
    """Maximal sets (size >= 2) with every pair less than cd apart, by enumeration."""
    names = ranks.index.tolist()
    cliques = [
        frozenset(c)
        for size in range(2, len(names) + 1)
        for c in itertools.combinations(names, size)
        if ranks[list(c)].max() - ranks[list(c)].min() < cd
    ]
    return {c for c in cliques if not any(c < other for other in cliques)}


def test_groups_compare_the_differences_with_cd():
    # 1.0 + 0.2 rounds onto 1.2, while 1.2 - 1.0 = 0.19999999999999996 < 0.2: one group
    assert cd_groups(pd.Series({"m0": 1.0, "m1": 1.2}), cd=0.2) == (("m0", "m1"),)


@settings(max_examples=60)
@given(
    ranks=hst.lists(hst.floats(1, 7, allow_nan=False), min_size=2, max_size=7),
    cd=hst.floats(0.05, 6),
)
def test_groups_are_the_maximal_cliques(ranks, cd):
    s = pd.Series(ranks, index=[f"m{i}" for i in range(len(ranks))])
    got = cd_groups(s, cd)
    assert {frozenset(g) for g in got} == _brute_force_groups(s, cd)
    assert len(set(got)) == len(got)
    for g in got:  # each group listed best first
        assert s[list(g)].is_monotonic_increasing


def test_nemenyi_pvalues_consistent_with_cd(rng):
    table = pd.DataFrame(rng.normal(size=(12, 6)) + np.arange(6) * 0.5, columns=list("abcdef"))
    res = nemenyi(table, higher_is_better=False)
    p = res.pvalues.to_numpy()
    assert np.allclose(p, p.T) and np.allclose(np.diag(p), 1)
    off = ~np.eye(6, dtype=bool)
    assert np.array_equal((p <= res.alpha)[off], res.significant.to_numpy()[off])
    assert res.significant.to_numpy().any()  # the example has differences to find


def test_nemenyi_two_methods_is_a_normal_z_test():
    table = pd.DataFrame({"a": [1.0, 2, 3, 4, 5, 6, 7, 8, 9], "b": [2.0, 1, 4, 5, 6, 7, 8, 9, 10]})
    res = nemenyi(table, higher_is_better=True)
    z = abs(res.avg_ranks["a"] - res.avg_ranks["b"]) / np.sqrt(2 * 3 / (6 * 9))
    assert res.pvalues.loc["a", "b"] == pytest.approx(2 * st.norm.sf(z), rel=1e-6)
    assert res.q_alpha == pytest.approx(st.norm.ppf(0.975), rel=1e-6)


def test_nemenyi_result_reporting(demsar):
    res = nemenyi(demsar[0], higher_is_better=True, alpha=0.10)
    assert isinstance(res, NemenyiResult)
    frame = res.to_frame()
    assert len(frame) == 6 and frame.columns.tolist() == [
        "method_a", "method_b", "rank_a", "rank_b", "rank_difference", "p_value", "significant",
    ]  # fmt: skip
    first = frame.iloc[0]
    assert (first.method_a, first.method_b) == ("C4.5+m+cf", "C4.5+m")  # best pair first
    assert frame["significant"].sum() == 2
    assert (frame["rank_difference"] >= 0).all()
    d = res.to_dict()
    assert d["groups"] == [["C4.5+m+cf", "C4.5+m", "C4.5+cf"], ["C4.5+cf", "C4.5"]]
    assert d["avg_ranks"]["C4.5"] == pytest.approx(44 / 14)
    assert "CD=1.118" in repr(res) and "C4.5+cf, C4.5]" in repr(res)
    f = friedman(demsar[0], True)
    assert "chi2_F=9.279" in repr(f) and "F_F=3.686" in repr(f)
    row = f.to_frame()
    assert row.shape == (1, 7) and row.loc[0, "n"] == 14


# ------------------------------------------------------------------ Wilcoxon–Holm
def test_holm_hand_worked():
    p = np.array([0.01, 0.04, 0.03, 0.005])
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04 → running max
    np.testing.assert_allclose(_holm(p), [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(_holm(np.array([0.5, 0.6])), [1.0, 1.0])


def test_wilcoxon_holm_matches_scipy_per_pair(rng):
    table = pd.DataFrame(
        rng.normal(size=(15, 4)) + np.array([0, 0.1, 1.0, 1.2]), columns=list("abcd")
    )
    res = wilcoxon_holm(table, higher_is_better=True)
    frame = res.to_frame()
    assert list(zip(frame.method_a, frame.method_b, strict=True)) == list(
        itertools.combinations("abcd", 2)
    )
    for row in frame.itertuples():
        ref = st.wilcoxon(table[row.method_a], table[row.method_b], zero_method="zsplit")
        assert row.p_value == pytest.approx(ref.pvalue)
        assert row.statistic == pytest.approx(ref.statistic)
        assert row.wins_a == int(np.sum(table[row.method_a] > table[row.method_b]))
    np.testing.assert_allclose(frame.p_holm, _holm(frame.p_value.to_numpy()))
    assert frame.loc[(frame.method_a == "a") & (frame.method_b == "d"), "significant"].item()
    assert not frame.loc[(frame.method_a == "a") & (frame.method_b == "b"), "significant"].item()
    assert "a~d" in repr(res)


def test_wilcoxon_identical_methods_and_lower_is_better():
    table = pd.DataFrame({"a": [1.0, 2, 3, 4], "b": [1.0, 2, 3, 4], "c": [2.0, 3, 4, 5]})
    frame = wilcoxon_holm(table, higher_is_better=False).to_frame()
    ab = frame.iloc[0]
    assert ab.p_value == 1.0 and ab.wins_a == ab.wins_b == 0
    ac = frame.iloc[1]
    assert (ac.wins_a, ac.wins_b) == (4, 0)  # a has the lower error everywhere


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("fn", [rank_table, average_ranks, friedman, nemenyi, wilcoxon_holm])
def test_bad_tables(fn):
    with pytest.raises(InvalidInputError, match="at least 2 columns"):
        fn(pd.DataFrame({"a": [1.0, 2.0]}), True)
    with pytest.raises(InvalidInputError, match="at least 2 data sets"):
        fn(pd.DataFrame({"a": [1.0], "b": [2.0]}), True)
    with pytest.raises(InvalidInputError, match=r"\['name'\] are not numeric"):
        fn(pd.DataFrame({"name": ["x", "y"], "a": [1.0, 2], "b": [2.0, 1]}), True)
    with pytest.raises(InvalidInputError, match=r"infinite.*'d2', 'b'"):
        fn(pd.DataFrame({"a": [1.0, 2], "b": [2.0, np.inf]}, index=["d1", "d2"]), True)
    with pytest.raises(InvalidInputError, match="repeated"):
        fn(pd.DataFrame([[1.0, 2.0], [2.0, 1.0]], columns=["a", "a"]), True)
    with pytest.raises(InvalidInputError, match="2-D"):
        fn(np.ones(3), True)
    with pytest.raises(InvalidParameterError, match="higher_is_better"):
        fn(pd.DataFrame({"a": [1.0, 2], "b": [2.0, 1]}), "yes")
    with pytest.raises(InvalidParameterError, match="nan_policy"):
        fn(pd.DataFrame({"a": [1.0, 2], "b": [2.0, 1]}), True, nan_policy="drop")


def test_nan_policy():
    t = pd.DataFrame(
        {"a": [0.9, np.nan, 0.7, 0.6], "b": [0.8, 0.7, np.nan, 0.5], "c": [0.1, 0.2, 0.3, 0.4]},
        index=["iris", "wine", "glass", "yeast"],
    )
    with pytest.warns(UserWarning, match=r"2 data set\(s\).*\['wine', 'glass'\]"):
        ranks = rank_table(t, higher_is_better=True)
    assert ranks.index.tolist() == ["iris", "yeast"]
    with pytest.warns(UserWarning):
        assert friedman(t, True).n == 2
    with pytest.raises(InvalidInputError, match=r"\['wine', 'glass'\] have missing"):
        friedman(t, True, nan_policy="raise")
    t.loc["yeast", "b"] = np.nan
    with pytest.warns(UserWarning), pytest.raises(InvalidInputError, match="'b': 2"):
        nemenyi(t, True)  # one data set left; the message names the most incomplete methods


def test_bad_alpha_and_cd_arguments():
    t = pd.DataFrame({"a": [1.0, 2], "b": [2.0, 1]})
    for alpha in (0, 1, 1.5, "0.05"):
        with pytest.raises(InvalidParameterError, match="alpha"):
            nemenyi(t, True, alpha=alpha)
    with pytest.raises(InvalidParameterError, match="zero_method"):
        wilcoxon_holm(t, True, zero_method="none")
    with pytest.raises(InvalidParameterError, match="k must be"):
        critical_difference(1, 10)


# ------------------------------------------------------------------ CD diagram
@pytest.fixture
def plt():
    plt = pytest.importorskip("matplotlib.pyplot")
    backend = plt.get_backend()
    plt.switch_backend("Agg")
    yield plt
    plt.close("all")
    plt.switch_backend(backend)


def _group_bars(fig):
    return [ln for ln in fig.axes[0].lines if ln.get_gid() == "cd-group"]


def _label(fig, name):
    (text,) = [t for t in fig.axes[0].texts if t.get_text().split(" (")[0] == name]
    return text


def test_cd_diagram_demsar_renders_png(plt, demsar, tmp_path):
    res = nemenyi(demsar[0], higher_is_better=True, alpha=0.10)
    fig = plot_cd_diagram(res)
    path = tmp_path / "cd.png"
    fig.savefig(path, dpi=80)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bars = _group_bars(fig)
    assert len(bars) == 2
    spans = sorted(tuple(np.round(b.get_xdata(), 2)) for b in bars)
    assert spans == [(1.93, 2.92), (2.86, 3.17)]  # group ranks widened by 0.03 each side
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "CD" in texts and {"1", "2", "3", "4"} <= set(texts) and set(METHODS) <= set(texts)
    # the better half on rank 1's side (left), the worse half right of the axis
    best, worst = _label(fig, "C4.5+m+cf"), _label(fig, "C4.5")
    assert best.get_position()[0] < 1 < 4 < worst.get_position()[0]
    # outermost ranks nearest the axis on each side (y grows downwards), so no lines cross
    assert best.get_position()[1] < _label(fig, "C4.5+m").get_position()[1]
    assert worst.get_position()[1] < _label(fig, "C4.5+cf").get_position()[1]
    (cd_bar,) = [ln for ln in fig.axes[0].lines if np.allclose(ln.get_ydata(), -1.1)]
    assert np.ptp(cd_bar.get_xdata()) == pytest.approx(res.cd)


@pytest.mark.parametrize(("n", "n_bars"), [(10, 4), (4, 2), (40, 0)])
def test_cd_diagram_number_of_group_bars(plt, n, n_bars):
    table = pd.DataFrame(np.tile(np.arange(5.0), (n, 1)), columns=[f"m{i}" for i in range(5)])
    fig = plot_cd_diagram(nemenyi(table, higher_is_better=False))
    assert len(_group_bars(fig)) == n_bars


def test_cd_diagram_inputs(plt, demsar):
    auc, _ = demsar
    f = friedman(auc, True)
    fig = plot_cd_diagram(f, alpha=0.10)  # CD from k and N
    assert len(_group_bars(fig)) == 2
    avg = average_ranks(auc, True)
    assert len(_group_bars(plot_cd_diagram(avg, cd=1.25))) == 1
    plain = plot_cd_diagram(avg.to_dict(), show_ranks=True)  # no CD: ranks only
    assert len(_group_bars(plain)) == 0 and "CD" not in [t.get_text() for t in plain.axes[0].texts]
    assert _label(plain, "C4.5+m+cf").get_text() == "C4.5+m+cf (1.96)"
    _, ax = plt.subplots()
    assert plot_cd_diagram(avg, 1.25, ax=ax, reverse=True, title="AUC") is ax.figure
    assert _label(ax.figure, "C4.5+m+cf").get_position()[0] > 4  # rank 1 on the right
    with pytest.raises(InvalidInputError, match=r"lie in \[1, 4\]"):
        plot_cd_diagram(auc.mean(), cd=1.0)  # scores, not ranks
    with pytest.raises(InvalidParameterError, match="cd comes from"):
        plot_cd_diagram(nemenyi(auc, True), cd=1.0)
    with pytest.raises(InvalidParameterError, match="cd must be"):
        plot_cd_diagram(avg, cd=-1)
    with pytest.raises(InvalidInputError, match="at least 2"):
        plot_cd_diagram({"a": 1.0})
    with pytest.raises(InvalidInputError, match="Series or mapping"):
        plot_cd_diagram([1.0, 2.0])


def test_importing_the_plot_modules_loads_no_pyplot():
    import subprocess

    code = "import aggregation.plots, sys; print('matplotlib.pyplot' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_scores_equal_in_exact_arithmetic_tie_in_the_ranks():
    # 0.1 + 0.2 and 0.3 differ in their last bit; a method's rank must not depend on it
    table = pd.DataFrame({"a": [0.1 + 0.2, 0.5], "b": [0.3, 0.5], "c": [0.9, 0.1]})
    ranks = rank_table(table, higher_is_better=False)
    assert ranks.loc[0].tolist() == [1.5, 1.5, 3.0]
    assert ranks.loc[1].tolist() == [2.5, 2.5, 1.0]
