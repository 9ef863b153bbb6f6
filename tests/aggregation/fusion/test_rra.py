"""Robust Rank Aggregation (aggregation.fusion.rra): the paper's rho score, its two p-values,
and the property it is for: a failing majority of members does not bury what two found."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from aggregation import combine
from aggregation.combine import mean_rank
from aggregation.fusion.rra import _exact_pvalues, _rho, rra, rra_pvalues
from aggregation.ranking import GenericRanking, Ranking
from rankers.exceptions import FeatureMismatchError, InvalidInputError, InvalidParameterError


def _orders(*orders: str, names: str | None = None) -> list[Ranking]:
    return [
        Ranking.from_order(list(o), names=None if names is None else list(names)) for o in orders
    ]


def _rho_by_hand(ranks: np.ndarray, n: int) -> np.ndarray:
    """rho of every column of a (q, n) rank matrix, straight from scipy.stats.beta."""
    q = ranks.shape[0]
    r = np.sort(ranks / n, axis=0)
    k = np.arange(1, q + 1)[:, None]
    return stats.beta.cdf(r, k, q - k + 1).min(axis=0)


def _stuart_exact(x: float, q: int) -> float:
    """P(rho <= x) through the Stuart–Aerts recurrence (Aerts et al. 2003), the algorithm of
    RobustRankAggreg's exact=TRUE, written independently here: ``1 - Q(1 - t)`` with
    ``Q = q! V_q``, ``V_0 = 1``, ``V_k = sum_i (-1)^(i-1) V_(k-i) r_(q-k+1)^i / i!`` over the
    sorted ``r = 1 - t_k``, ``t_k`` the x-quantile of Beta(k, q - k + 1)."""
    k = np.arange(1, q + 1)
    r = np.sort(1.0 - stats.beta.ppf(x, k, q - k + 1))
    v = [1.0]
    for j in range(1, q + 1):
        edge = r[q - j]
        v.append(
            sum((-1) ** (i - 1) * v[j - i] * edge**i / math.factorial(i) for i in range(1, j + 1))
        )
    return 1.0 - math.factorial(q) * v[q]


# ------------------------------------------------------------ hand-worked examples
def test_three_lists_over_four_features_by_hand():
    rs = _orders("abcd", "abdc", "bacd")
    # a: ranks 1, 1, 2 of 4 -> r = .25, .25, .5: beta_1 = 1 - .75^3, beta_2 = 3 (.25^2)(.75)
    # + .25^3, beta_3 = .5^3 = rho. c: 3, 4, 3 -> .75, .75, 1: beta_2 = 3 (.75^2)(.25) + .75^3
    # d: 4, 3, 4 -> .75, 1, 1: beta_1 = 1 - .25^3 (beta_2 = beta_3 = 1)
    by_hand = {
        "a": min(1 - 0.75**3, 3 * 0.25**2 * 0.75 + 0.25**3, 0.5**3),
        "b": 0.125,
        "c": min(1 - 0.25**3, 3 * 0.75**2 * 0.25 + 0.75**3, 1.0),
        "d": 1 - 0.25**3,
    }
    assert by_hand == {"a": 0.125, "b": 0.125, "c": 0.84375, "d": 0.984375}
    got = rra(rs)
    assert got.method == "rra"
    assert got.names == ("a", "b", "c", "d")  # the first input's names order
    np.testing.assert_allclose(got.scores, -np.log10(list(by_hand.values())), rtol=1e-14)
    assert got.order == ["a", "b", "c", "d"]
    # the same from scipy.stats.beta, as the paper's definition reads
    ranks = np.array([[r.ranks[f] for f in "abcd"] for r in rs])
    np.testing.assert_allclose(10**-got.scores, _rho_by_hand(ranks, 4), rtol=1e-14)
    # Bonferroni: min(1, q rho)
    p = rra_pvalues(rs)
    assert p.name == "pvalue" and p.index.tolist() == ["a", "b", "c", "d"]
    assert p.to_dict() == {"a": 0.375, "b": 0.375, "c": 1.0, "d": 1.0}


def test_equal_rho_is_ordered_by_mean_rank_then_names():
    # x ranks (1, 4) and y (1, 3) of 4: both rho = beta_1 = 1 - .75^2; y's mean rank is lower
    rs = _orders("xayb", "yabx", names="xayb")
    got = rra(rs)
    assert got.scores[0] == got.scores[2] == pytest.approx(-np.log10(1 - 0.75**2), rel=1e-14)
    assert got.order == ["a", "y", "x", "b"]  # a: ranks (2, 2), rho = beta_2 = .5^2
    # equal rho and equal mean rank: the first input's names order
    assert rra(_orders("pqrs", "qprs", names="qprs")).order[:2] == ["q", "p"]


def test_one_input_keeps_its_order_and_its_normalised_ranks_are_the_pvalues():
    r = Ranking.from_scores({"u": 0.3, "v": 0.9, "w": 0.1, "z": 0.5})
    got = rra([r])
    assert got.order == r.order
    np.testing.assert_allclose(rra_pvalues([r]), r.ranks / 4, rtol=1e-15)
    np.testing.assert_allclose(rra_pvalues([r], exact=True), r.ranks / 4, rtol=1e-12)


def test_generic_blocks_count_as_their_average_rank():
    g = GenericRanking([["a", "b"], ["c"], ["d"]])
    tied = Ranking.from_scores({"a": 2.0, "b": 2.0, "c": 1.0, "d": 0.0})
    other = Ranking.from_order(["c", "a", "d", "b"])
    assert rra([g, other]) == rra([tied, other])
    # a: ranks 1.5 (block {a, b} spans 1-2) and 2 of 4: r = .375, .5; rho = min(beta_1, beta_2)
    rho_a = min(1 - (1 - 0.375) ** 2, 0.5**2)
    got = rra([g, other]).to_series()
    assert got["a"] == pytest.approx(-np.log10(rho_a), rel=1e-14)


# ------------------------------------------------------------ the exact p-value
@pytest.mark.parametrize("q", [1, 2, 3, 5, 8])
def test_exact_pvalue_is_the_stuart_aerts_recurrence(q):
    rng = np.random.default_rng(q)
    names = [f"g{i}" for i in range(30)]
    rs = [Ranking.from_order(rng.permutation(30), names=names) for _ in range(q)]
    ranks = np.array([r.ranks.to_numpy() for r in rs])
    rho = _rho_by_hand(ranks, 30)
    want = [_stuart_exact(x, q) for x in rho]
    got = rra_pvalues(rs, exact=True)
    np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-9, atol=1e-12)
    bonferroni = rra_pvalues(rs)
    assert (got <= bonferroni + 1e-15).all() and (got >= rho - 1e-15).all()


def test_exact_pvalue_for_two_lists_in_closed_form():
    # q = 2: t1 = 1 - sqrt(1 - x), t2 = sqrt(x); no crossing iff U_(1) > t1 and U_(2) > t2,
    # probability (1 - t1)^2 - (t2 - t1)^2
    for x in (0.5, 0.05, 1e-4, 1e-12):
        t1, t2 = 1 - math.sqrt(1 - x), math.sqrt(x)
        want = 1 - ((1 - t1) ** 2 - (t2 - t1) ** 2)
        assert _exact_pvalues(np.array([x]), 2)[0] == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("q", [3, 6])
def test_exact_pvalue_is_the_distribution_of_rho_for_uniforms(q):
    u = np.sort(np.random.default_rng(7).random((100_000, q)), axis=1)
    rho, _ = _rho(u)
    xs = np.array([0.002, 0.02, 0.1, 0.3, 0.7])
    want = _exact_pvalues(xs, q)
    emp = (rho[:, None] <= xs).mean(axis=0)
    se = np.sqrt(want * (1 - want) / len(u))
    assert (np.abs(emp - want) <= 4 * se).all(), (emp, want)


def test_exact_pvalue_keeps_its_accuracy_far_in_the_tail():
    # for small x the order statistics' crossings are nearly disjoint: P(rho <= x) -> q x
    for q in (2, 5, 20):
        for x in (1e-20, 1e-100, 1e-200, 1e-300):
            p = _exact_pvalues(np.array([x]), q)[0]
            assert x <= p <= q * x
            if x <= 1e-100:
                assert p / (q * x) > 1 - 1e-5
    assert _exact_pvalues(np.array([1e-30]), 5)[0] == pytest.approx(5e-30, rel=1e-12)


def test_a_feature_first_in_a_hundred_lists_has_a_finite_score():
    # f0 first of 2,000 everywhere: rho = (1/2000)^100 ~ 1e-330 underflows; its score is
    # computed in log space; f1 second everywhere: rho = (2/2000)^100 = 1e-300
    names = [f"f{i}" for i in range(2000)]
    rng = np.random.default_rng(0)
    rs = [
        Ranking.from_order(np.r_[0, 1, 2 + rng.permutation(1998)], names=names) for _ in range(100)
    ]
    got = rra(rs)
    assert got.order[:2] == ["f0", "f1"]
    assert got.scores[0] == pytest.approx(100 * np.log10(2000), rel=1e-12)
    assert got.scores[1] == pytest.approx(300, rel=1e-12)
    p = rra_pvalues(rs)
    assert p["f0"] == 0.0  # below the smallest float
    assert p["f1"] == pytest.approx(100 * 1e-300, rel=1e-10)
    # the exact p-values of these two (all 2,000 would take O(n q^3) = 2e9 steps)
    exact = _exact_pvalues(10 ** -got.scores[:2], 100)
    assert exact[0] == 0.0 and 1 - 1e-4 < exact[1] / p["f1"] <= 1


# ------------------------------------------------------------ what it is for
def test_a_failing_majority_does_not_bury_what_two_members_found(majority_runs):
    # measured: rra keeps all 5 planted features in its top 10 in 20 of 20 draws (4.3 of 5
    # in its top 5 on average); mean_rank puts 1.45 of 5 in its top 20 on average
    rra_top10 = [len(planted & set(rra(rs).top(10))) for rs, planted in majority_runs]
    mean_top20 = [len(planted & set(mean_rank(rs).top(20))) for rs, planted in majority_runs]
    assert min(rra_top10) == 5
    assert np.mean(mean_top20) < 2.5 and sum(m == 5 for m in mean_top20) <= 1
    # and the planted features are significant after the correction for 5 lists
    rs, planted = majority_runs[0]
    p = rra_pvalues(rs)
    assert (p[sorted(planted)] < 0.01).all()


def test_pure_noise_scores_as_noise():
    # q = 5 members ranking 100 features at random, 100 seeded repeats: both p-values are
    # conservative at every level (measured: P(p <= .05) = .029 Bonferroni, .037 exact);
    # after Benjamini-Hochberg over the features nothing is significant in >= 95% of repeats
    n, q, repeats = 100, 5, 100
    names = [f"x{i}" for i in range(n)]
    pooled = {False: [], True: []}
    clean = {False: 0, True: 0}
    for seed in range(repeats):
        rng = np.random.default_rng(seed)
        rs = [Ranking.from_order(rng.permutation(n), names=names) for _ in range(q)]
        for exact in (False, True):
            p = rra_pvalues(rs, exact=exact).to_numpy()
            pooled[exact].append(p)
            clean[exact] += not (stats.false_discovery_control(p) < 0.05).any()
    for exact in (False, True):
        p = np.concatenate(pooled[exact])
        for alpha in (0.01, 0.05, 0.1, 0.25, 0.5):
            se = math.sqrt(alpha * (1 - alpha) / len(p))
            assert (p <= alpha).mean() <= alpha + 3 * se, (exact, alpha)
        assert clean[exact] >= 0.95 * repeats
    # the exact p-value is near uniform, Bonferroni's far below it at 0.5
    assert (np.concatenate(pooled[True]) <= 0.5).mean() > 0.4
    assert (np.concatenate(pooled[False]) <= 0.5).mean() < 0.35


# ------------------------------------------------------------ invariances, inputs
def test_the_order_of_the_inputs_changes_nothing():
    rng = np.random.default_rng(3)
    names = tuple(f"x{i}" for i in range(40))
    rs = [Ranking.from_scores(rng.integers(0, 9, 40).astype(float), names=names) for _ in range(4)]
    want, p_want = rra(rs), rra_pvalues(rs, exact=True)
    for perm in itertools.islice(itertools.permutations(rs), 1, None, 5):
        got = rra(list(perm))
        assert got.order == want.order and np.array_equal(got.scores, want.scores)
        pd.testing.assert_series_equal(rra_pvalues(list(perm), exact=True), p_want)


def test_bad_inputs_are_refused():
    a = Ranking.from_order(["a", "b", "c"])
    with pytest.raises(FeatureMismatchError, match="missing 'c'"):
        rra([a, Ranking.from_order(["a", "b", "d"])])
    with pytest.raises(FeatureMismatchError):
        rra_pvalues([a, Ranking.from_order(["a", "b"])])
    with pytest.raises(InvalidInputError, match="no rankings"):
        rra([])
    with pytest.raises(InvalidParameterError, match="single ranking"):
        rra(a)
    with pytest.raises(InvalidParameterError, match="exact must be True or False"):
        rra_pvalues([a], exact="yes")


def test_registered_by_name_and_reached_through_the_federated_aggregation():
    from aggregation.federated import aggregate_rankings

    assert combine.METHODS["rra"] is rra is combine.rra
    sites = {
        s: Ranking.from_order(list(o)) for s, o in zip("uvw", ("abcd", "abdc", "bacd"), strict=True)
    }
    assert aggregate_rankings(sites, aggregate="rra")["rra"] == rra(list(sites.values()))


@given(
    st.integers(2, 10).flatmap(
        lambda n: st.lists(
            st.tuples(
                st.lists(st.sampled_from([-3, -2, -1, 1, 2, 3]), min_size=n, max_size=n),
                st.lists(st.integers(-4, 4), min_size=n, max_size=n),
            ),
            min_size=1,
            max_size=5,
        )
    )
)
def test_scores_moved_by_a_few_ulps_change_nothing(nudge, lists):
    names = [f"x{i}" for i in range(len(lists[0][0]))]
    exact = [Ranking.from_scores(np.array(v) * 0.1, names=names) for v, _ in lists]
    moved = [Ranking.from_scores(nudge(np.array(v) * 0.1, u), names=names) for v, u in lists]
    want, got = rra(exact), rra(moved)
    assert got.order == want.order and np.array_equal(got.scores, want.scores)
