"""mRMR, JMI and CMIM: greedy selection against written-out references and the peers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import mutual_info_score

import rankers
from rankers.supervised.information import discretise
from rankers.supervised.mrmr import CMIMRanker, JMIRanker, MRMRRanker

LOG2 = np.log(2.0)


def _mi(a, b):
    return mutual_info_score(a, b) / LOG2  # bits


def _cmi(a, b, given):
    """I(a; b | given) = sum over values g of P(g) I(a; b | given = g)."""
    total = 0.0
    for g in np.unique(given):
        inside = given == g
        total += inside.mean() * _mi(a[inside], b[inside])
    return total


def reference(codes, y, criterion, n_selected):
    """Greedy forward selection written out with scikit-learn's mutual_info_score."""
    n = codes.shape[1]
    relevance = np.array([_mi(codes[:, j], y) for j in range(n)])
    chosen = [int(np.argmax(relevance))]
    while len(chosen) < n_selected:
        best, best_value = None, -np.inf
        for j in range(n):
            if j in chosen:
                continue
            red = [_mi(codes[:, j], codes[:, s]) for s in chosen]
            if criterion == "mid":
                value = relevance[j] - np.mean(red)
            elif criterion == "miq":
                value = relevance[j] / max(np.mean(np.maximum(red, 1e-3)), 1e-3)
            elif criterion == "jmi":
                # sum over s of I(f, s; y), computed from its definition
                value = sum(_mi(codes[:, j] * 100 + codes[:, s], y) for s in chosen)
            else:  # cmim: min over s of I(f; y | s)
                value = min(_cmi(codes[:, j], y, codes[:, s]) for s in chosen)
            if value > best_value + 1e-12:
                best, best_value = j, value
        chosen.append(best)
    return chosen


def _data(seed=0, m=120, n=9):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, m)
    X = rng.normal(size=(m, n))
    X[:, 0] += y
    X[:, 1] = X[:, 0] + 0.1 * rng.normal(size=m)  # a near copy of x0
    X[:, 2] += 1.5 * (y == 1)
    X[:, 3] += 0.6 * y
    return X, y


@pytest.mark.parametrize(
    ("est", "criterion"),
    [
        (MRMRRanker(n_selected=None), "mid"),
        (MRMRRanker(n_selected=None, scheme="quotient"), "miq"),
        (JMIRanker(n_selected=None), "jmi"),
        (CMIMRanker(n_selected=None), "cmim"),
    ],
)
def test_greedy_order_matches_the_written_out_definition(est, criterion):
    X, y = _data()
    codes = discretise(X, 10)
    fitted = est.fit(X, y)
    assert fitted.ranking_.tolist() == reference(codes, y, criterion, X.shape[1])
    assert fitted.n_selected_ == X.shape[1]
    # scores follow the selection order; the first criterion is the best relevance
    assert np.all(np.diff(fitted.scores_[fitted.ranking_]) < 0)
    first = fitted.ranking_[0]
    assert fitted.selection_scores_[first] == pytest.approx(fitted.relevance_.max())


@pytest.mark.parametrize("cls", [MRMRRanker, JMIRanker, CMIMRanker])
def test_a_copy_comes_after_new_evidence(cls):
    # x1 copies x0, the most relevant feature; x2 is weaker but new
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    a = y + 0.3 * rng.normal(size=300)
    b = y + 0.7 * rng.normal(size=300)
    X = np.column_stack([a, a + 1e-6 * rng.normal(size=300), b, rng.normal(size=300)])
    ranking = cls().fit(X, y).ranking_.tolist()
    assert ranking[:2] == [0, 2]
    # a univariate score puts the copy second
    assert rankers.get("info_gain").fit(X, y).ranking_.tolist()[:2] == [0, 1]


def test_exact_copies_tie_and_the_lower_index_wins():
    X, y = _data()
    X = np.column_stack([X[:, [3]], X, X[:, [3]]])  # x0 = x4 = x10
    ranking = JMIRanker(n_selected=None).fit(X, y).ranking_.tolist()
    assert ranking.index(0) < ranking.index(4) < ranking.index(10)


def test_features_not_chosen_follow_by_relevance():
    X, y = _data(n=12)
    est = MRMRRanker(n_selected=3).fit(X, y)
    rest = est.ranking_[3:]
    assert np.all(np.diff(est.relevance_[rest]) <= 1e-12)
    assert np.isnan(est.selection_scores_[rest]).all()
    assert est.n_selected_ == 3


def test_cmim_matches_scikit_feature():
    cmim = pytest.importorskip(
        "skfeature.function.information_theoretical_based.CMIM",
        reason="needs the 'peers' extra: pip install '.[peers]'",
    )
    X, y = _data(seed=3, n=15)
    codes = discretise(X, 10)
    ours = CMIMRanker(n_selected=8).fit(codes.astype(float), y).ranking_[:8]
    theirs = np.ravel(cmim.cmim(codes, y, mode="index", n_selected_features=8))
    np.testing.assert_array_equal(ours, theirs)


def test_fcq_matches_mrmr_selection():
    mrmr = pytest.importorskip("mrmr", reason="needs the 'peers' extra: pip install '.[peers]'")
    rng = np.random.default_rng(0)
    m, n = 150, 120
    y = rng.integers(0, 3, m)
    X = rng.normal(size=(m, n))
    X[:, :15] += 0.6 * y[:, None] * rng.random(15)
    X[:, 15:22] = X[:, :7] + 0.1 * rng.normal(size=(m, 7))
    frame = pd.DataFrame(X, columns=[f"g{i}" for i in range(n)])
    theirs = mrmr.mrmr_classif(frame, pd.Series(y), K=20, show_progress=False, n_jobs=1)
    est = MRMRRanker(
        n_selected=20, relevance="f_statistic", redundancy="correlation", scheme="quotient"
    ).fit(frame, y)
    assert [frame.columns[i] for i in est.ranking_[:20]] == theirs
