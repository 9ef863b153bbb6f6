"""The error-curve paper's synthetic data (Table 2) and noisy rankings (§4.2)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import mutual_info_score

from aggregation.compare import spearman
from aggregation.ranking import GenericRanking, Ranking
from moweights.data import ERROR_CURVE_DATA, make_error_curve_data, noisy_rankings
from rankers.exceptions import InvalidInputError

BIG = 20_000  # samples for the empirical checks: a proportion's sd is then <= 0.0036
TOL = 0.015


@pytest.fixture(scope="module")
def combined():
    return make_error_curve_data("combined", n_samples=BIG, random_state=0)


def _bits(p):
    return -p * np.log2(p) - (1 - p) * np.log2(1 - p)


@pytest.mark.parametrize(("kind", "n_relevant"), [("single", 9), ("pair", 18), ("combined", 27)])
def test_shapes_and_feature_counts(kind, n_relevant):
    X, y, truth = make_error_curve_data(kind, random_state=1)
    assert X.shape == (1000, 100) and len(y) == 1000
    assert set(np.unique(X.to_numpy())) == {0, 1} and set(np.unique(y)) == {0, 1}
    assert list(truth.names) == list(X.columns)
    assert int((truth.scores > 0).sum()) == n_relevant
    assert sum(c.startswith("irrelevant") for c in X.columns) == 100 - n_relevant
    assert sum(arity * 3 for arity, _ in ERROR_CURVE_DATA[kind]) == n_relevant


def test_single_features_agree_with_the_target_at_rate_p(combined):
    X, y, _ = combined
    for p in (0.8, 0.7, 0.6):
        for copy in (1, 2, 3):
            assert (X[f"single{p}_{copy}"] == y).mean() == pytest.approx(p, abs=TOL)
    irrelevant = X.filter(like="irrelevant")
    np.testing.assert_allclose(
        (irrelevant.to_numpy() == y.to_numpy()[:, None]).mean(0), 0.5, atol=0.02
    )
    assert y.mean() == pytest.approx(0.5, abs=TOL)


def test_xor_pairs_are_individually_uninformative_but_jointly_predictive(combined):
    X, y, _ = combined
    for p in (0.8, 0.7, 0.6):
        for copy in (1, 2, 3):
            a, b = X[f"xor{p}_{copy}a"], X[f"xor{p}_{copy}b"]
            assert (a == y).mean() == pytest.approx(0.5, abs=TOL)
            assert (b == y).mean() == pytest.approx(0.5, abs=TOL)
            assert ((a ^ b) == y).mean() == pytest.approx(p, abs=TOL)
            # every cell (a, b) predicts y: P(y = a xor b | a, b) = p
            cells = pd.DataFrame({"a": a, "b": b, "hit": (a ^ b) == y}).groupby(["a", "b"])
            np.testing.assert_allclose(cells["hit"].mean(), p, atol=0.03)


def test_copies_are_identically_defined_but_independently_realised(combined):
    X, y, _ = combined
    hit1, hit2 = X["single0.7_1"] == y, X["single0.7_2"] == y
    assert not X["single0.7_1"].equals(X["single0.7_2"])
    assert (hit1 & hit2).mean() == pytest.approx(0.7**2, abs=TOL)  # independent flips
    xor1, xor2 = X["xor0.8_1a"] ^ X["xor0.8_1b"], X["xor0.8_2a"] ^ X["xor0.8_2b"]
    assert ((xor1 == y) & (xor2 == y)).mean() == pytest.approx(0.8**2, abs=TOL)
    assert abs(np.corrcoef(X["xor0.8_1a"], X["xor0.8_2a"])[0, 1]) < 0.03  # own coins


def test_ground_truth_is_mutual_information_per_feature(combined):
    X, y, truth = combined
    scores = truth.to_series()
    # by hand: 1 - H2(0.8) = 1 - 0.7219 = 0.2781 bits; a pair shares it between 2 features
    assert scores["single0.8_1"] == pytest.approx(0.27807, abs=1e-5)
    assert scores["xor0.8_3b"] == pytest.approx(0.27807 / 2, abs=1e-5)
    assert scores["irrelevant01"] == 0.0
    for p in (0.8, 0.7, 0.6):
        assert scores[f"single{p}_2"] == pytest.approx(1 - _bits(p))
        # the definition's I(F_int; y), estimated from the sample (nats -> bits): the pair
        # carries exactly its XOR's information, and that is 1 - H2(P) up to sampling noise
        a, b = X[f"xor{p}_2a"], X[f"xor{p}_2b"]
        estimate = mutual_info_score(y, 2 * a + b) / np.log(2)
        assert estimate == pytest.approx(1 - _bits(((a ^ b) == y).mean()), abs=0.002)
        assert scores[f"xor{p}_2a"] == pytest.approx(estimate / 2, abs=0.015)
    # order by relevance: s0.8 (.278) > x0.8 (.139) > s0.7 (.119) > x0.7 > s0.6 > x0.6 > 0
    firsts = [truth.order[j] for j in (0, 3, 9, 12, 18, 21, 27)]
    assert firsts == [
        "single0.8_1",
        "xor0.8_1a",
        "single0.7_1",
        "xor0.7_1a",
        "single0.6_1",
        "xor0.6_1a",
        "irrelevant01",
    ]
    assert truth.method == "ground_truth"


def test_generator_is_seeded_and_checks_its_input():
    a = make_error_curve_data("pair", n_samples=50, random_state=3)
    b = make_error_curve_data("pair", n_samples=50, random_state=3)
    c = make_error_curve_data("pair", n_samples=50, random_state=4)
    pd.testing.assert_frame_equal(a[0], b[0])
    pd.testing.assert_series_equal(a[1], b[1])
    assert not a[0].equals(c[0])
    with pytest.raises(InvalidInputError, match="unknown kind"):
        make_error_curve_data("triple")
    with pytest.raises(InvalidInputError, match="n_samples"):
        make_error_curve_data("single", n_samples=5)


# ------------------------------------------------------------------ noisy rankings (§4.2)
@pytest.fixture(scope="module")
def truth():
    return make_error_curve_data("combined", n_samples=20, random_state=0)[2]


def test_theta_zero_is_the_truth(truth):
    assert all(r == truth for r in noisy_rankings(truth, 0.0, n_rankings=5, random_state=0))


def test_a_proportion_theta_of_the_features_gets_a_random_relevance(truth):
    for theta, changed in ((0.05, 5), (0.1, 10), (0.3, 30), (0.5, 50)):
        for r in noisy_rankings(truth, theta, n_rankings=20, random_state=1):
            moved = r.scores != truth.scores
            assert moved.sum() == changed
            assert (r.scores[moved] >= truth.scores.min()).all()
            assert (r.scores[moved] <= truth.scores.max()).all()
            assert r.method == f"noisy(theta={theta:g})"
    # the random relevance is uniform over the truth's range [0, 0.278]: mean 0.139
    moved = np.concatenate(
        [r.scores[r.scores != truth.scores] for r in noisy_rankings(truth, 0.5, 40, random_state=2)]
    )
    assert moved.mean() == pytest.approx(truth.scores.max() / 2, abs=0.01)


def test_theta_one_gives_uniformly_random_rankings(truth):
    rankings = noisy_rankings(truth, 1.0, n_rankings=2000, random_state=2)
    ranks = np.array([r.ranks.to_numpy() for r in rankings])  # (2000, 100)
    # each feature's rank is uniform on 1..100: mean 50.5, sd 28.9 -> se of the mean 0.65
    np.testing.assert_allclose(ranks.mean(axis=0), 50.5, atol=3.0)
    assert np.mean([spearman(truth, r) for r in rankings[:300]]) == pytest.approx(0.0, abs=0.02)
    assert len({tuple(r.order) for r in rankings}) == 2000


def test_noise_moves_rankings_away_from_the_truth_and_is_seeded(truth):
    rho = [
        np.mean([spearman(truth, r) for r in noisy_rankings(truth, t, 50, random_state=3)])
        for t in (0.05, 0.2, 0.5, 1.0)
    ]
    assert rho == sorted(rho, reverse=True) and rho[0] > 0.8
    a = noisy_rankings(truth, 0.2, 4, random_state=5)
    b = noisy_rankings(truth, 0.2, 4, random_state=5)
    c = noisy_rankings(truth, 0.2, 4, random_state=6)
    assert a == b and a != c


def test_noisy_rankings_check_their_input(truth):
    with pytest.raises(InvalidInputError, match="theta"):
        noisy_rankings(truth, 1.5)
    with pytest.raises(InvalidInputError, match="n_rankings"):
        noisy_rankings(truth, 0.1, n_rankings=0)
    with pytest.raises(InvalidInputError, match="Ranking"):
        noisy_rankings(GenericRanking.from_ranking(truth), 0.1)
    assert isinstance(noisy_rankings(truth, 0.1, 1)[0], Ranking)
