"""The relevance criteria (FR, NCA, HM, SP, C3R): formulas written out, and what they reward.

Each criterion is compared with a direct, per-individual reference written from its
formula in ``moweights/weighting/relevance.py`` (double loops, no shortcuts), and the
planted tests show the property the criteria exist for: a feature's spread alone does
not raise them, where Eq. 1's c(i) (the paper's C3) prefers uniform noise to a
class-shifted Gaussian feature.
"""

from __future__ import annotations

import numpy as np
import pytest

from moweights.weighting.criteria import PRESETS, Criteria, parse_objectives
from moweights.weighting.relevance import (
    NCA_FLOOR,
    NCA_NEIGHBOURS,
    PairSample,
    pair_sample_size,
)
from rankers.exceptions import InvalidInputError
from rankers.preprocessing import minmax_scale


def _criteria(X, y, keys, max_pairs=None, seed=0):
    return Criteria(X, y, tuple(keys), max_pairs=max_pairs, rng=np.random.default_rng(seed))


def _balanced(values, y):
    classes = np.unique(y)
    return np.mean([values[y == c].mean() for c in classes])


def _fisher_ref(X, y, w):
    num = den = 0.0
    mu = X.mean(axis=0)
    for c in np.unique(y):
        Xc = X[y == c]
        num += len(Xc) * np.sum(w**2 * (Xc.mean(axis=0) - mu) ** 2)
        den += np.sum(w**2 * (Xc - Xc.mean(axis=0)) ** 2)
    return num / den


def _distances(X, w):
    m = len(X)
    D = np.empty((m, m))
    for a in range(m):
        for b in range(m):
            D[a, b] = np.sum(w**2 * (X[a] - X[b]) ** 2)
    return D


def _nca_ref(X, y, w, k=NCA_NEIGHBOURS):
    D = _distances(X, w)
    m = len(X)
    agree = np.empty(m)
    for a in range(m):
        others = [b for b in range(m) if b != a]
        sigma = max(np.sort(D[a, others])[min(k, m - 1) - 1], NCA_FLOOR * D[a, others].mean())
        sigma = sigma if sigma > 0 else 1.0
        p = np.array([np.exp(-D[a, b] / sigma) for b in others])
        p /= p.sum()
        agree[a] = sum(p[i] for i, b in enumerate(others) if y[b] == y[a])
    return _balanced(agree, y)


def _margin_ref(X, y, w):
    d = np.sqrt(_distances(X, w))
    m = len(X)
    theta = np.empty(m)
    for a in range(m):
        hit = min(d[a, b] for b in range(m) if b != a and y[b] == y[a])
        miss = min(d[a, b] for b in range(m) if y[b] != y[a])
        theta[a] = 0.5 * (miss - hit)
    mean = d[~np.eye(m, dtype=bool)].mean()
    return _balanced(theta, y) / mean


def test_fisher_trace_ratio_by_hand():
    # two classes, two features; feature 0: class means 0.25 and 0.75 (overall 0.5),
    # within-class deviations ±0.25; feature 1: no class signal
    X = np.array([[0.0, 0.0], [0.5, 1.0], [0.5, 0.0], [1.0, 1.0]])
    y = np.array([0, 0, 1, 1])
    crit = _criteria(X, y, ["FR"])
    # B_0 = 2·0.25² + 2·0.25² = 0.25, W_0 = 4·0.25² = 0.25; feature 1: class means 0.5
    # and 0.5 (B_1 = 0), deviations ±0.5 (W_1 = 4·0.5² = 1)
    w_only0, w_both = np.array([[1.0, 0.0]]), np.array([[1.0, 1.0]])
    assert crit.evaluate(w_only0, [("FR", 1.0)])[0, 0] == pytest.approx(0.25 / 0.25)
    assert crit.evaluate(w_both, [("FR", 1.0)])[0, 0] == pytest.approx(0.25 / 1.25)
    assert crit.evaluate(np.array([[1.0, 0.5]]), [("FR", 1.0)])[0, 0] == pytest.approx(
        0.25 / (0.25 + 0.25 * 1.0)
    )
    assert crit.evaluate(np.zeros((1, 2)), [("FR", 1.0)])[0, 0] == 0.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_population_criteria_equal_their_written_out_formulas(seed):
    rng = np.random.default_rng(seed)
    m, n = 17, 4
    y = np.repeat([0, 1, 2], [6, 6, 5])
    X = minmax_scale(rng.normal(size=(m, n)) + 0.7 * y[:, None])
    W = rng.uniform(size=(5, n))
    W[0] = [1.0, 0.0, 0.0, 0.0]
    crit = _criteria(X, y, ["FR", "NCA", "HM", "SP"])
    got = crit.evaluate(W, [("FR", 1.0), ("NCA", 1.0), ("HM", 1.0), ("SP", 1.0)])
    for row, w in enumerate(W):
        assert got[row, 0] == pytest.approx(_fisher_ref(X, y, w), rel=1e-12)
        # the pair criteria read single-precision differences
        assert got[row, 1] == pytest.approx(_nca_ref(X, y, w), rel=1e-5)
        assert got[row, 2] == pytest.approx(_margin_ref(X, y, w), rel=1e-5)
        assert got[row, 3] == pytest.approx(w.sum() / (n * w.max()))


def test_rank_correlation_is_eq1_on_ranks_by_hand():
    # one feature, 4 samples: ranks 0, 1/3, 2/3, 1; classes {0,1} | {2,3}
    X = np.array([[0.1], [0.2], [0.9], [1.7]])
    y = np.array([0, 0, 1, 1])
    crit = _criteria(X, y, ["C3R"])
    r = np.array([0.0, 1.0, 2.0, 3.0]) / 3.0
    total = 0.0
    for a in range(4):
        for b in range(4):
            if a != b:
                phi = 1.0 if y[a] != y[b] else -0.05
                total += phi * abs(r[a] - r[b])
    expected = total / (4 * 3 / 2)
    assert crit.c_rank_[0] == pytest.approx(expected)
    # monotone transforms of a feature leave C3R unchanged (ranks), not C3
    X2 = np.exp(3 * X)
    assert _criteria(X2, y, ["C3R"]).c_rank_[0] == pytest.approx(expected)


def test_scaling_all_weights_changes_no_relevance_criterion():
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1], 15)
    X = minmax_scale(rng.normal(size=(30, 5)) + y[:, None] * np.array([1.5, 0.5, 0, 0, 0]))
    crit = _criteria(X, y, ["FR", "NCA", "HM", "C3R", "SP"])
    keys = [("FR", 1.0), ("NCA", 1.0), ("HM", 1.0), ("C3R", 1.0), ("SP", 1.0)]
    W = rng.uniform(0.1, 1.0, size=(4, 5))
    np.testing.assert_allclose(crit.evaluate(W, keys), crit.evaluate(0.3 * W, keys), rtol=1e-5)


@pytest.fixture(scope="module")
def planted():
    """200 samples: 5 features N(class, 1) and 5 of uniform noise, min-max scaled."""
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 100)
    X = np.hstack([y[:, None] + rng.normal(size=(200, 5)), rng.uniform(size=(200, 5))])
    return minmax_scale(X), y


def test_papers_c3_prefers_uniform_noise_and_the_relevance_criteria_do_not(planted):
    X, y = planted
    keys = ["C3", "C3R", "FR", "NCA", "HM"]
    crit = _criteria(X, y, keys, max_pairs=20000)
    # the bias the paper's criterion has on min-max scaled data: c(i) of every uniform
    # noise feature above every informative one
    assert crit.c_[5:].min() > crit.c_[:5].max()
    assert crit.c_rank_[:5].min() > crit.c_rank_[5:].max()
    # one feature at a time: each relevance criterion prefers every informative feature
    single = np.eye(10)
    for key in keys[1:]:
        values = crit.evaluate(single, [(key, 1.0)])[:, 0]
        assert values[:5].min() > values[5:].max(), key
    # adding the noise to the informative features lowers them; C3 rises
    informative = np.r_[np.ones(5), np.zeros(5)]
    everything = np.ones(10)
    both = np.vstack([informative, everything])
    for key in keys:
        low, high = crit.evaluate(both, [(key, 1.0)])[:, 0]
        assert (high > low) if key == "C3" else (low > high), key


def test_pair_sample_is_stratified_bounded_and_seeded():
    y = np.repeat([0, 1, 2], [300, 60, 3])
    X = np.random.default_rng(0).uniform(size=(363, 2))
    assert pair_sample_size(363, 20000) == 200
    assert pair_sample_size(100, 20000) == 100 and pair_sample_size(363, None) == 363
    a = PairSample(X, y, 20000, np.random.default_rng(5))
    b = PairSample(X, y, 20000, np.random.default_rng(5))
    np.testing.assert_array_equal(a.rows, b.rows)
    assert a.size == 200 and len(a.i) == 200 * 199 // 2 <= 20000
    counts = np.bincount(y[a.rows])
    assert counts.sum() == 200 and counts[2] == 2  # the small class keeps 2 rows
    assert abs(counts[0] / counts[1] - 5.0) < 0.5


def test_nca_keeps_its_bandwidth_on_a_discrete_perfect_feature():
    # the class label as a feature: its within-class distances are all 0, so the 5th
    # neighbour's distance is 0; the floor keeps the bandwidth, and the agreement is ~1
    y = np.repeat([0, 1], 20)
    X = np.column_stack([y.astype(float), np.random.default_rng(0).uniform(size=40)])
    crit = _criteria(X, y, ["NCA"])
    for scale in (1.0, 1e-3):
        value = crit.evaluate(np.array([[scale, 0.0]]), [("NCA", 1.0)])[0, 0]
        assert value > 0.999
    assert value == pytest.approx(_nca_ref(X, y, np.array([1e-3, 0.0])), rel=1e-5)


def test_sparsity_is_the_effective_share_of_features():
    crit = _criteria(np.eye(4), None, ["SP"])
    W = np.array([[1.0, 0, 0, 0], [0.2, 0.2, 0.2, 0.2], [1.0, 0.5, 0, 0], [0.0, 0, 0, 0]])
    np.testing.assert_allclose(crit.evaluate(W, [("SP", 1.0)])[:, 0], [0.25, 1.0, 0.375, 0.0])


def test_all_zero_weights_are_defined():
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1], 6)
    X = rng.uniform(size=(12, 3))
    crit = _criteria(X, y, ["FR", "NCA", "HM", "SP"])
    out = crit.evaluate(np.zeros((1, 3)), [("FR", 1.0), ("NCA", 1.0), ("HM", 1.0), ("SP", 1.0)])
    assert np.isfinite(out).all()
    # no information: each sample's neighbour is drawn uniformly from the others
    assert out[0, 1] == pytest.approx(5 / 11)
    assert out[0, 0] == out[0, 2] == out[0, 3] == 0.0


def test_presets_and_aliases():
    assert parse_objectives("paper") == [("C1", 1.0), ("C2", -1.0), ("C3", -1.0)]
    assert parse_objectives("relevance") == parse_objectives(PRESETS["relevance"])
    assert parse_objectives(("-nca", "sparsity", "max:fisher", "-margin")) == [
        ("NCA", -1.0),
        ("SP", 1.0),
        ("FR", -1.0),
        ("HM", -1.0),
    ]
    with pytest.raises(InvalidInputError, match="need class labels"):
        _criteria(np.eye(3), None, ["NCA"])


def test_the_search_compares_relevance_rounded_and_the_papers_criteria_as_computed():
    from moweights.weighting.criteria import SEARCH_BITS

    rng = np.random.default_rng(2)
    y = np.repeat([0, 1], 10)
    X = minmax_scale(rng.normal(size=(20, 4)) + y[:, None])
    objectives = [("NCA", -1.0), ("FR", -1.0), ("C1", 1.0)]
    crit = _criteria(X, y, [k for k, _ in objectives])
    W = rng.uniform(size=(6, 4))
    exact, searched = crit.evaluate(W, objectives), crit.search_values(W, objectives)
    np.testing.assert_array_equal(searched[:, 2], exact[:, 2])  # C1 untouched
    np.testing.assert_allclose(searched[:, :2], exact[:, :2], rtol=2.0**-SEARCH_BITS)
    # values a few ulps apart compare equal once rounded
    nudged = exact[:, :2] * (1 + 4 * np.finfo(float).eps)
    mantissa, exponent = np.frexp(nudged)
    again = np.ldexp(np.round(mantissa * 2.0**SEARCH_BITS), exponent - SEARCH_BITS)
    assert (again == searched[:, :2]).mean() > 0.9
