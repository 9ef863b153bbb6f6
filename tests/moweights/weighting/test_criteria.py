"""The weighting criteria C1–C4: hand computation and vectorised == per-individual."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from moweights.weighting.criteria import Criteria, objective_label, parse_objectives
from rankers.exceptions import InvalidInputError, InvalidParameterError

# x0 is noise, x1 equals the class (already scaled to [0, 1])
X4 = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
Y4 = np.array([0, 0, 1, 1])
ALL = ("C1", "C2", "C3", "C4")


def _crit(X=X4, y=Y4, **kw):
    return Criteria(X, y, ALL, **kw)


def test_hand_worked_example():
    c = _crit()
    W = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    # C1: with w = (0, 1) every sample sits on its class centroid
    np.testing.assert_allclose(c.intra(W), [0.0, 0.5, 0.5])
    # C2: class centroids (0.5, 0) and (0.5, 1), overall (0.5, 0.5)
    np.testing.assert_allclose(c.inter(W), [0.5, 0.0, 0.5])
    # C3: Σ_{j≠k}|Δ|φ / (m(m−1)/2), each unordered pair counted twice. |Δx0| = 1 on the
    # pairs (1,2),(3,4) of one class (φ = −0.05) and (1,4),(2,3) of two (φ = 1): 1.9;
    # |Δx1| = 1 exactly on the 4 pairs of different classes: 4.0
    np.testing.assert_allclose(c.c_, [2 * 1.9 / 6, 2 * 4.0 / 6])
    np.testing.assert_allclose(c.correlation(W), [8 / 6, 3.8 / 6, (3.8 / 6 + 8 / 6) / 2])
    # C4 with w = (0, 1): 4 pairs at distance 1, 2 at distance 0; mean d = 2/3
    s = np.exp(-np.log(2) / (2 / 3))
    h = -(s * np.log(s) + (1 - s) * np.log(1 - s))
    # single-precision pairs (criteria.ENTROPY_DTYPE): about 1e-7 relative
    assert c.entropy(W[:1])[0] == pytest.approx(4 / 6 * h, rel=1e-6)
    # the two clipped ends: a distance of 0 gives s = 1 − ε, whose entropy is
    # −(ε ln ε + (1 − ε) ln(1 − ε)) ≈ ε(1 − ln ε), 2.86e-11; the same for s = ε
    eps = 1e-12
    h_eps = -(eps * np.log(eps) + (1 - eps) * np.log1p(-eps))
    assert c.entropy(np.zeros((1, 2)))[0] == pytest.approx(h_eps, rel=1e-5)


def test_entropy_shortcut_equals_the_direct_formula_by_hand():
    # 100 samples on one feature: 99 at 0, one at 1. The 4851 pairs of the 99 are at
    # distance 0 (s clipped to 1 − ε); the 99 pairs with the outlier at distance 1, and
    # the mean distance is 99/4950 = 1/50, so α = 50 ln 2 and u = α·1 = 34.7 > −ln ε:
    # s = exp(−34.7) is clipped to ε. Every pair contributes the same h(ε) = h(1 − ε).
    X = np.zeros((100, 1))
    X[-1] = 1.0
    eps = 1e-12
    h_eps = -(eps * np.log(eps) + (1 - eps) * np.log1p(-eps))
    c = Criteria(X, None, ("C4",))
    assert c.n_pairs == 4950
    assert c.entropy(np.ones((1, 1)))[0] == pytest.approx(h_eps, rel=1e-5)
    # 3 samples at 0, 1, 3 (weight 1): distances 1, 3, 2, mean 2, α = ln 2 / 2, so
    # s = 2^(−d/2) = 2^−0.5, 2^−1.5, 2^−1 — the direct formula, log(s) computed, in doubles
    c = Criteria(np.array([[0.0], [1.0], [3.0]]), None, ("C4",))
    s = 2.0 ** -np.array([0.5, 1.5, 1.0])
    direct = np.mean(-(s * np.log(s) + (1 - s) * np.log(1 - s)))
    assert c.entropy(np.ones((1, 1)))[0] == pytest.approx(direct, rel=1e-6)
    # and with weight 0.5 (every distance halved, α doubled): the same s, the same value
    assert c.entropy(np.full((1, 1), 0.5))[0] == pytest.approx(direct, rel=1e-6)


def _loop_criteria(X, y, w):
    """Straightforward per-individual, per-pair evaluation of C1..C4 (the definitions)."""
    m = len(X)
    dw = lambda a, b: np.sqrt(np.sum(w**2 * (a - b) ** 2))  # noqa: E731
    classes = np.unique(y)
    cent = {c: X[y == c].mean(axis=0) for c in classes}
    c1 = np.mean([dw(X[j], cent[y[j]]) for j in range(m)])
    overall = X.mean(axis=0)
    c2 = sum((y == c).sum() / m * dw(cent[c], overall) for c in classes)
    cvec = np.zeros(X.shape[1])
    for j, k in itertools.permutations(range(m), 2):
        phi = 1.0 if y[j] != y[k] else -0.05
        cvec += np.abs(X[j] - X[k]) * phi
    cvec /= m * (m - 1) / 2
    c3 = (w @ cvec) / w.sum() if w.sum() > 0 else 0.0
    d = np.array([dw(X[j], X[k]) for j, k in itertools.combinations(range(m), 2)])
    alpha = -np.log(0.5) / d.mean() if d.mean() > 0 else 0.0
    s = np.clip(np.exp(-alpha * d), 1e-12, 1 - 1e-12)
    c4 = np.mean(-(s * np.log(s) + (1 - s) * np.log(1 - s)))
    return np.array([c1, c2, c3, c4])


@settings(max_examples=25)
@given(seed=st.integers(0, 10_000), m=st.integers(4, 12), n=st.integers(1, 5))
def test_vectorised_population_equals_per_individual(seed, m, n):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(m, n))
    y = rng.integers(0, 3, size=m)
    y[:2] = [0, 1]
    W = rng.uniform(size=(6, n))
    W[0] = 0.0  # the all-zero individual is defined, not a division by zero
    crit = Criteria(X, y, ALL)
    objectives = [(k, 1.0) for k in ALL]
    got = crit.evaluate(W, objectives)
    want = np.array([_loop_criteria(X, y, w) for w in W])
    np.testing.assert_allclose(got[:, :3], want[:, :3], rtol=1e-12, atol=1e-12)
    # C4's pairs are single precision (criteria.ENTROPY_DTYPE)
    np.testing.assert_allclose(got[:, 3], want[:, 3], rtol=2e-6, atol=1e-15)


def test_signs_and_aliases():
    assert parse_objectives(("C1", "-C2", "-correlation")) == [
        ("C1", 1.0),
        ("C2", -1.0),
        ("C3", -1.0),
    ]
    assert parse_objectives("entropy") == [("C4", 1.0)]
    crit = _crit()
    W = np.array([[0.3, 0.9]])
    plain = crit.evaluate(W, [("C2", 1.0)])
    negated = crit.evaluate(W, parse_objectives(["-inter"]))
    np.testing.assert_allclose(negated, -plain)


@pytest.mark.parametrize(
    "bad, match",
    [
        (("C5",), "unknown criterion 'C5'"),
        (("C1", "-C1"), "listed twice"),
        ((), "empty"),
        ((3,), "string"),
    ],
)
def test_bad_objectives(bad, match):
    with pytest.raises(InvalidParameterError, match=match):
        parse_objectives(bad)


def test_labelled_criteria_need_y():
    with pytest.raises(InvalidInputError, match="C1, C3 need class labels"):
        Criteria(X4, None, ("C1", "C3", "C4"))
    Criteria(X4, None, ("C4",))  # entropy alone is unsupervised


def test_pair_subsample_is_seeded_and_bounded():
    X = np.random.default_rng(0).uniform(size=(60, 3))
    a = Criteria(X, None, ("C4",), max_pairs=100, rng=np.random.default_rng(5))
    b = Criteria(X, None, ("C4",), max_pairs=100, rng=np.random.default_rng(5))
    assert a.n_pairs == 100
    np.testing.assert_array_equal(a._pair_sq, b._pair_sq)
    W = np.random.default_rng(1).uniform(size=(4, 3))
    full = Criteria(X, None, ("C4",)).entropy(W)
    # a subsample estimates the full average
    np.testing.assert_allclose(a.entropy(W), full, rtol=0.15)


def test_entropy_is_minimised_as_the_paper_writes_it():
    # the paper's "-C4" is the entropy of Eq. 2 (which carries the minus), minimised in
    # every row it prints; only an explicit "max:" maximises it
    assert parse_objectives(("-C2", "-C4")) == [("C2", -1.0), ("C4", 1.0)]
    assert parse_objectives(("C4",)) == parse_objectives(("-entropy",)) == [("C4", 1.0)]
    assert parse_objectives(("max:C4", "min:inter")) == [("C4", -1.0), ("C2", 1.0)]
    assert parse_objectives(("MAX: correlation",)) == [("C3", -1.0)]


@pytest.mark.parametrize("key", ["C1", "C2", "C3", "C4"])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_labels_read_back(key, sign):
    label = objective_label(key, sign)
    assert parse_objectives([label]) == [(key, sign)]


@pytest.mark.parametrize(
    "bad, match",
    [(("up:C1",), "unknown direction"), (("max:-C2",), "direction twice"), (("min:C9",), "C9")],
)
def test_bad_explicit_directions(bad, match):
    with pytest.raises(InvalidParameterError, match=match):
        parse_objectives(bad)


def test_double_precision_entropy_is_the_direct_formula():
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(9, 3))
    W = rng.uniform(size=(4, 3))
    W[0] = 0.0
    want = np.array([_loop_criteria(X, np.arange(9) % 2, w)[3] for w in W])
    double = Criteria(X, None, ("C4",), precision="double").entropy(W)
    np.testing.assert_allclose(double, want, rtol=1e-12, atol=1e-15)
    single = Criteria(X, None, ("C4",)).entropy(W)
    np.testing.assert_allclose(single, want, rtol=2e-6, atol=1e-15)
    with pytest.raises(InvalidParameterError, match="entropy_precision"):
        Criteria(X, None, ("C4",), precision="half")
