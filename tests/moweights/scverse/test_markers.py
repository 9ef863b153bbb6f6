"""Marker features per group: the statistics against formulas written out here (scanpy's
``rank_genes_groups`` as its source computes them), the order, the errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy import stats

from moweights.scverse.markers import (
    MARKER_COLUMNS,
    find_markers,
    group_statistics,
    rank_positions,
)
from rankers.exceptions import InvalidInputError, InvalidParameterError

GROUPS = ("B", "NK", "T")


def planted(n_per: int = 40, d: int = 12, seed: int = 0):
    """log1p Poisson counts, three groups; gene g{2i} is higher in group i, g11 lower in NK."""
    rng = np.random.default_rng(seed)
    y = np.repeat(GROUPS, n_per)
    counts = rng.poisson(0.8, size=(len(y), d)).astype(float)
    for i, g in enumerate(GROUPS):
        counts[y == g, 2 * i] += rng.poisson(3.0, size=n_per)
    counts[y == "NK", 11] = 0.0
    counts[y != "NK", 11] += 2.0
    names = [f"g{j}" for j in range(d)]
    return np.log1p(counts), y, names


def welch_reference(X, inside):
    """Welch's t, Welch–Satterthwaite df and the two-sided p of scipy's t distribution,
    from means and ddof=1 variances of the group and of the rest (scanpy's t-test)."""
    a, b = X[inside], X[~inside]
    ma, mb = a.mean(axis=0), b.mean(axis=0)
    va, vb = a.var(axis=0, ddof=1), b.var(axis=0, ddof=1)
    na, nb = len(a), len(b)
    se2 = va / na + vb / nb
    t = (ma - mb) / np.sqrt(se2)
    df = se2**2 / ((va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1))
    p = 2 * stats.t.sf(np.abs(t), df)
    lfc = np.log2((np.expm1(ma) + 1e-9) / (np.expm1(mb) + 1e-9))
    return t, p, lfc


def bh_reference(p):
    """Benjamini–Hochberg written out: q_(i) = min_{j >= i} p_(j) m / j."""
    m = len(p)
    order = np.argsort(p)
    q = np.empty(m)
    running = 1.0
    for pos in range(m - 1, -1, -1):
        running = min(running, p[order[pos]] * m / (pos + 1))
        q[order[pos]] = running
    return q


def by_feature(table, group, names):
    return table[table["group"] == group].set_index("feature").loc[names]


@pytest.mark.parametrize("sparse", [False, True])
def test_t_test_statistics_equal_the_written_out_welch_test(sparse):
    X, y, names = planted()
    table = find_markers(sp.csr_matrix(X) if sparse else X, y, names, rankers="t_test")
    assert list(table.columns[: len(MARKER_COLUMNS)]) == list(MARKER_COLUMNS)
    for g in GROUPS:
        inside = y == g
        t, p, lfc = welch_reference(X, inside)
        got = by_feature(table, g, names)
        np.testing.assert_allclose(got["score"], t, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(got["pvalue"], p, rtol=1e-9, atol=1e-300)
        np.testing.assert_allclose(got["qvalue"], bh_reference(p), rtol=1e-9, atol=1e-300)
        np.testing.assert_allclose(got["logfoldchange"], lfc, rtol=1e-10)
        np.testing.assert_allclose(got["pct_in"], (X[inside] != 0).mean(axis=0))
        np.testing.assert_allclose(got["pct_out"], (X[~inside] != 0).mean(axis=0))


def test_fold_changes_follow_the_log_base():
    X, y, names = planted()
    X2 = X / np.log(2.0)  # log1p in base 2
    table = find_markers(X2, y, names, rankers="t_test", log_base=2)
    got = by_feature(table, "B", names)["logfoldchange"]
    _, _, lfc = welch_reference(X, y == "B")
    np.testing.assert_allclose(got, lfc, rtol=1e-9)


@pytest.mark.parametrize("tie_correct", [False, True])
def test_wilcoxon_equals_the_rank_sum_z_written_out(tie_correct):
    X, y, names = planted()
    table = find_markers(X, y, names, rankers="wilcoxon", test="wilcoxon", tie_correct=tie_correct)
    n = len(y)
    ranks = stats.rankdata(X, axis=0)
    for g in GROUPS:
        inside = y == g
        n1 = inside.sum()
        tc = np.ones(X.shape[1])
        if tie_correct:
            tc = np.array([stats.tiecorrect(ranks[:, j]) for j in range(X.shape[1])])
        z = (ranks[inside].sum(axis=0) - n1 * (n + 1) / 2) / np.sqrt(
            tc * n1 * (n - n1) * (n + 1) / 12
        )
        got = by_feature(table, g, names)
        np.testing.assert_allclose(got["score"], z, rtol=1e-10)
        np.testing.assert_allclose(got["pvalue"], 2 * stats.norm.sf(np.abs(z)), rtol=1e-9)
        if tie_correct:  # the same p-values as scipy's asymptotic Mann-Whitney U
            u = stats.mannwhitneyu(X[inside], X[~inside], method="asymptotic", use_continuity=False)
            np.testing.assert_allclose(got["pvalue"], u.pvalue, rtol=1e-9)


def test_the_planted_markers_lead_their_groups_and_direction_turns_the_order():
    X, y, names = planted()
    table = find_markers(X, y, names)  # t_test and wilcoxon, mean rank
    for i, g in enumerate(GROUPS):
        block = table[table["group"] == g]
        assert block["feature"].iloc[0] == f"g{2 * i}"
        assert block["rank"].tolist() == list(range(1, len(names) + 1))
    down = find_markers(X, y, names, direction="down")
    assert down[down["group"] == "NK"]["feature"].iloc[0] == "g11"
    both = find_markers(X, y, names, direction="both", rankers="t_test")
    nk = both[both["group"] == "NK"]
    # g11 (never expressed in NK) and g2 (higher in NK) are the two most different in NK
    assert set(nk["feature"].iloc[:2]) == {"g2", "g11"}
    # "up" puts every feature higher in the group before every feature lower in it
    up = table[table["group"] == "T"]
    signs = np.sign(up["score"].to_numpy())
    assert (np.diff(signs[signs != 0]) <= 0).all()


def test_the_rank_is_the_aggregate_of_the_members_ranks():
    X, y, names = planted()
    members = ("t_test", "wilcoxon", "anova_f")
    table = find_markers(X, y, names, rankers=members, aggregate="mean_rank")
    for g in GROUPS:
        block = table[table["group"] == g]
        mean = block[[f"{m}.rank" for m in members]].mean(axis=1).to_numpy()
        assert (np.diff(mean) >= 0).all()  # listed by increasing mean of the members' ranks
    median = find_markers(X, y, names, rankers=members, aggregate="median_rank")
    assert median["feature"].iloc[0] == "g0"
    generic = find_markers(X, y, names, rankers=members, aggregate="generic")
    assert sorted(generic["rank"][generic["group"] == "B"]) == list(range(1, 13))


def test_group_statistics_equal_numpy_per_group_dense_and_sparse():
    X, y, _ = planted()
    X[:, 3] = 0.0  # a column without a stored value
    codes = pd.Categorical(y).codes.astype(np.intp)
    for data in (X, sp.csr_matrix(X)):
        st = group_statistics(data, codes, 3)
        for g in range(3):
            inside = codes == g
            np.testing.assert_allclose(st["means"][g], X[inside].mean(axis=0), atol=1e-14)
            np.testing.assert_allclose(st["vars"][g], X[inside].var(axis=0, ddof=1), atol=1e-13)
            np.testing.assert_allclose(st["means_rest"][g], X[~inside].mean(axis=0), atol=1e-14)
            np.testing.assert_allclose(
                st["vars_rest"][g], X[~inside].var(axis=0, ddof=1), atol=1e-13
            )
            np.testing.assert_allclose(st["pts_rest"][g], (X[~inside] != 0).mean(axis=0))


def test_sparse_group_statistics_in_one_pass_hold_where_the_sums_cancel(monkeypatch):
    # blocks of 97 stored values (many blocks of rows); column 0 far from 0 with a tiny
    # spread (Σx² - n μ² cancels: summed again around the means), column 1 with explicit
    # zeros stored (not counted as expressing), column 2 near 1e200 (squares overflow)
    from rankers import columns

    monkeypatch.setattr(columns, "_SPARSE_BLOCK", 97)
    X, y, _ = planted()
    rng = np.random.default_rng(1)
    X[:, 0] = 1e6 + rng.normal(0.0, 1e-3, len(y))
    X[:, 2] = 1e200 * (1.0 + rng.random(len(y)))
    codes = pd.Categorical(y).codes.astype(np.intp)
    coo = sp.coo_matrix(X)
    explicit = np.flatnonzero(X[:, 1] == 0)[:5]
    Xs = sp.csr_matrix(
        (
            np.r_[coo.data, np.zeros(explicit.size)],
            (np.r_[coo.row, explicit], np.r_[coo.col, np.ones(explicit.size, dtype=int)]),
        ),
        shape=X.shape,
    )
    assert Xs.nnz == np.count_nonzero(X) + explicit.size
    with np.errstate(over="ignore", invalid="ignore"):  # column 2's squares
        st = group_statistics(Xs, codes, 3)
        dense = group_statistics(X, codes, 3)
    for key in ("means", "means_rest"):
        np.testing.assert_allclose(st[key], dense[key], rtol=1e-13)
    for key in ("vars", "vars_rest"):
        np.testing.assert_allclose(st[key], dense[key], rtol=1e-9)
    ref = np.array([X[codes == g][:, :2].var(axis=0, ddof=1) for g in range(3)])
    np.testing.assert_allclose(st["vars"][:, :2], ref, rtol=1e-9)
    assert np.isposinf(st["vars"][:, 2]).all()
    for key in ("pts", "pts_rest"):
        np.testing.assert_array_equal(st[key], dense[key])


def test_n_top_keeps_the_best_of_each_group_and_the_input_is_untouched():
    X, y, names = planted()
    Xs = sp.csr_matrix(X)
    before, before_s = X.copy(), Xs.copy()
    full = find_markers(X, y, names, rankers="t_test")
    top = find_markers(Xs, y, names, rankers="t_test", n_top=3)
    assert len(top) == 9
    for g in GROUPS:
        assert (
            top[top["group"] == g]["feature"].tolist()
            == full[full["group"] == g]["feature"].iloc[:3].tolist()
        )
    np.testing.assert_array_equal(X, before)
    assert (Xs != before_s).nnz == 0
    assert top["group"].cat.categories.tolist() == list(GROUPS)
    assert top.attrs["params"]["rankers"] == ["t_test"]


def test_a_frame_names_the_features_and_categories_keep_their_order():
    X, y, names = planted()
    frame = pd.DataFrame(X, columns=names)
    groups = pd.Categorical(y, categories=["T", "B", "NK"])
    table = find_markers(frame, groups, rankers="t_test")
    assert table["group"].cat.categories.tolist() == ["T", "B", "NK"]
    assert table["feature"].iloc[0] == "g4"


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"test": "logreg"}, InvalidParameterError, "test must be one of"),
        ({"direction": "sideways"}, InvalidParameterError, "direction must be one of"),
        ({"aggregate": "mean_rnak"}, InvalidParameterError, "mean_rank"),
        ({"aggregate": "weighted_mean_rank"}, InvalidParameterError, "weighted_mean_rank"),
        ({"rankers": "variance"}, InvalidParameterError, "takes no class target"),
        ({"rankers": ()}, InvalidParameterError, "at least one"),
        ({"params": {"info_gain": {}}}, InvalidParameterError, "not members"),
        ({"n_top": 0}, InvalidParameterError, "n_top"),
    ],
)
def test_bad_parameters_are_refused_by_name(kwargs, error, match):
    X, y, names = planted()
    with pytest.raises(error, match=match):
        find_markers(X, y, names, **kwargs)


def test_bad_groups_are_refused_naming_them():
    X, y, names = planted()
    lonely = y.copy().astype(object)
    lonely[0] = "platelet"
    with pytest.raises(InvalidInputError, match="platelet"):
        find_markers(X, lonely, names)
    missing = y.copy().astype(object)
    missing[5] = None
    with pytest.raises(InvalidInputError, match="missing labels"):
        find_markers(X, missing, names)
    with pytest.raises(InvalidInputError, match="two groups"):
        find_markers(X, np.repeat("B", len(y)), names)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(InvalidInputError, match="NaN"):
        find_markers(bad, y, names)


def test_rank_positions_reads_an_order_and_a_generic_ranking():
    from aggregation import GenericRanking, Ranking

    r = Ranking.from_order(["c", "a", "b"])
    assert rank_positions(r, ["a", "b", "c"]).tolist() == [1, 2, 0]
    gen = GenericRanking([["b", "a"], ["c"]])
    assert rank_positions(gen, ["a", "b", "c"]).tolist() == [0, 1, 2]


def test_raw_counts_warn_that_the_fold_changes_assume_log1p():
    X, y, names = planted()
    counts = np.round(np.expm1(X))
    with pytest.warns(UserWarning, match="raw counts"):
        find_markers(counts, y, names, rankers="t_test")


@pytest.mark.parametrize("sparse", [True, False])
def test_t_test_members_of_every_group_come_from_one_fit_with_the_per_group_orders(sparse):
    """The t_test member's order of each group is the order of a fit of "group vs rest"
    (the table is the same as with one such fit per group, which params force), and the
    sparse group statistics are the dense ones up to rounding."""
    X, y, names = planted(n_per=50, d=30)
    Xm = sp.csr_matrix(X) if sparse else X
    one = find_markers(Xm, y, names, rankers=("t_test", "wilcoxon"))
    per_group = find_markers(Xm, y, names, rankers=("t_test", "wilcoxon"),
                             params={"t_test": {"k": None}})  # fmt: skip
    pd.testing.assert_frame_equal(one, per_group, check_exact=True)
    codes = pd.Categorical(y).codes.astype(np.int64)
    dense = group_statistics(X, codes, 3)
    for key, value in group_statistics(sp.csr_matrix(X), codes, 3).items():
        np.testing.assert_allclose(value, dense[key], rtol=1e-12, atol=1e-15)


def test_the_shared_t_test_scores_are_a_fits_and_fall_back_where_its_rules_need_its_pass():
    """On sparse nonnegative data with a zero in every feature the t_test member's scores
    come from the group moments: a multiclass fit's class_scores_ (to rounding) and its
    constant features; a feature without zeros, a negative value or values out of
    1e-100..1e100 leave them to the fit."""
    import rankers
    from moweights.scverse.markers import _group_moments, _t_test_class_scores

    X, y, names = planted(n_per=50, d=30)
    X[:, 5] = 0.0  # constant: set aside by the fit
    X[:, 7] = 0.0
    X[::9, 7] = 1e-5  # tiny values, not constant
    codes = pd.Categorical(y).codes.astype(np.int64)
    Xs = sp.csr_matrix(X)
    shared = _t_test_class_scores(Xs, _group_moments(Xs, codes, 3))
    assert shared is not None
    with pytest.warns(UserWarning, match="constant"):
        fit = rankers.get("t_test").fit(Xs, codes)
    np.testing.assert_array_equal(shared[1], fit.constant_features_)
    np.testing.assert_allclose(shared[0], fit.class_scores_, rtol=1e-12, atol=0)
    for changed in (
        lambda Z: Z.__setitem__((slice(None), 3), 1.0 + Z[:, 3]),  # no zero in feature 3
        lambda Z: Z.__setitem__((0, 0), -1.0),
        lambda Z: Z.__setitem__((0, 0), 1e101),
    ):
        Z = X.copy()
        changed(Z)
        Zs = sp.csr_matrix(Z)
        assert _t_test_class_scores(Zs, _group_moments(Zs, codes, 3)) is None
    # and the table is the fit's in both cases
    Z = X.copy()
    Z[:, 3] += 1.0
    for data in (Xs, sp.csr_matrix(Z)):
        with pytest.warns(UserWarning):
            one = find_markers(data, y, names, rankers="t_test")
            per_group = find_markers(data, y, names, rankers="t_test",
                                     params={"t_test": {"k": None}})  # fmt: skip
        pd.testing.assert_frame_equal(one, per_group, check_exact=True)
