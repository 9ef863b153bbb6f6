"""Nested evaluation: what a held-out fold scores was fitted without it.

On pure noise a ranking fitted on all samples and then judged by cross-validation looks far
better than random (the test folds chose its features); refit on each training fold, it
scores as noise. A planted signal still scores clearly above random.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_wine
from sklearn.metrics import balanced_accuracy_score
from sklearn.model_selection import StratifiedKFold
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import StandardScaler

import rankers
from aggregation import Ranking, mean_rank
from aggregation.evaluation import (
    FoldRankings,
    class_curve,
    combine_folds,
    cv_splits,
    eca,
    ffa_rfa,
    fold_rankings,
)
from rankers.exceptions import InvalidParameterError


def _noise(seed, m=60, n=2000):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(m, n)), rng.integers(0, 2, size=m)


def _planted(seed, m=80, n=300):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], m // 2)
    X = rng.normal(size=(m, n))
    X[:, :10] += 1.2 * y[:, None]
    return X, y


def _whole_data(name, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Ranking.from_ranker(rankers.get(name).fit(X, y), method=name)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_noise_scores_as_noise_when_nested(seed):
    X, y = _noise(seed)
    members = [fold_rankings(n, X, y, cv=5, random_state=seed) for n in ("t_test", "anova_f")]
    agg = combine_folds(members, mean_rank, method="mean_rank")
    for target in (*members, agg):
        curve = ffa_rfa(target, X, y, grid="geometric", random_state=seed)
        assert curve.attrs["protocol"] == "nested"
        assert abs(eca(curve, "random")) < 0.06, target.method
    # the same rankers fitted on all samples look "much better than random" (the bias)
    biased = ffa_rfa(_whole_data("t_test", X, y), X, y, cv=5, grid="geometric", random_state=seed)
    assert biased.attrs["protocol"] == "fixed"
    assert eca(biased, "random") > 0.1


def test_noise_class_prediction_is_at_chance():
    # over 12 seeds the nested gap to random had sd 0.052 per seed (mean -0.02: the small
    # negative bias of selection inside small folds); the whole-data gap is about +0.3
    gaps = {"t_test": [], "anova_f": []}
    for seed in (0, 1, 2):
        X, y = _noise(seed)
        random = class_curve("random", X, y, cv=5, random_state=seed, ks=[1, 4, 16, 64])
        for name, found in gaps.items():
            nested = class_curve(name, X, y, cv=5, random_state=seed, ks=[1, 4, 16, 64])
            found.append((nested["mean"].to_numpy() - random["mean"].to_numpy()).mean())
            assert (np.abs(nested["mean"] - 0.5) < 0.2).all()
        biased = class_curve(_whole_data("t_test", X, y), X, y, cv=5, random_state=seed, ks=[16])
        assert biased["mean"].iloc[0] - random["mean"].iloc[2] > 0.15
    for name, found in gaps.items():
        assert np.abs(found).max() < 0.16, (name, found)
        assert abs(np.mean(found)) < 0.09, (name, found)


@pytest.mark.parametrize("seed", [0, 1])
def test_a_planted_signal_scores_above_random(seed):
    X, y = _planted(seed)
    assert eca(ffa_rfa("anova_f", X, y, cv=5, grid="geometric", random_state=seed), "random") > 0.1
    nested = class_curve("anova_f", X, y, cv=5, random_state=seed, ks=[8])
    random = class_curve("random", X, y, cv=5, random_state=seed, ks=[8])
    assert nested["mean"].iloc[0] > random["mean"].iloc[0] + 0.2


def test_fold_rankings_are_fits_on_the_training_rows():
    X, y = _planted(3)
    folds = fold_rankings("anova_f", X, y, cv=4, random_state=7)
    splits = cv_splits(X, y, cv=4, random_state=7)
    assert folds.same_folds(splits)
    for (train, _), ranking in zip(splits, folds.rankings, strict=True):
        ref = rankers.get("anova_f").fit(X[train], y[train])
        np.testing.assert_array_equal(ranking.scores, ref.scores_)
        np.testing.assert_array_equal(ranking.order_idx, ref.ranking_)
    # stratified, shuffled with the seed's first word: the folds of ffa_rfa and class_curve
    seed = int(np.random.SeedSequence(7).generate_state(1)[0])
    skf = StratifiedKFold(4, shuffle=True, random_state=seed).split(X, y)
    for (a, b), (c, d) in zip(splits, skf, strict=True):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)


def test_an_aggregate_of_fold_rankings_combines_the_same_fold():
    X, y = _planted(4)
    a = fold_rankings("anova_f", X, y, cv=3, random_state=0)
    b = fold_rankings("variance", X, y, cv=3, random_state=0)
    agg = combine_folds([a, b], mean_rank)
    for f in range(3):
        assert agg.rankings[f] == mean_rank([a.rankings[f], b.rankings[f]])
    other = fold_rankings("variance", X, y, cv=3, random_state=1)
    with pytest.raises(InvalidParameterError, match="different folds"):
        combine_folds([a, other], mean_rank)


def test_knn_class_curve_matches_scikit_learn():
    X, y = load_wine(return_X_y=True)
    order = np.arange(X.shape[1])[::-1]
    splits = cv_splits(X, y, cv=3, random_state=0)
    curve = class_curve(order, X, y, ks=[2, 5], cv=splits, return_folds=True)
    for k in (2, 5):
        top = np.sort(order[:k])
        for f, (tr, te) in enumerate(splits):
            sc = StandardScaler().fit(X[tr][:, top])
            knn = KNeighborsClassifier(5).fit(sc.transform(X[tr][:, top]), y[tr])
            ref = balanced_accuracy_score(y[te], knn.predict(sc.transform(X[te][:, top])))
            got = curve[(curve["k"] == k) & (curve["fold"] == f)]["value"].iloc[0]
            assert got == pytest.approx(ref, abs=1e-12)


def test_class_curve_does_not_depend_on_n_jobs():
    X, y = _planted(5)
    a = class_curve("anova_f", X, y, cv=4, random_state=0, ks=[1, 8], n_jobs=1)
    b = class_curve("anova_f", X, y, cv=4, random_state=0, ks=[1, 8], n_jobs=2)
    np.testing.assert_array_equal(a["mean"], b["mean"])


def test_fold_rankings_carry_their_folds_into_every_curve():
    X, y = _planted(6)
    folds = fold_rankings("anova_f", X, y, cv=4, random_state=3)
    by_name = class_curve("anova_f", X, y, cv=4, random_state=3, ks=[4])
    carried = class_curve(folds, X, y, ks=[4])
    np.testing.assert_array_equal(by_name["mean"], carried["mean"])
    np.testing.assert_array_equal(
        ffa_rfa("anova_f", X, y, cv=4, grid=[1, 4], random_state=3)["ffa"],
        ffa_rfa(folds, X, y, grid=[1, 4], random_state=3)["ffa"],
    )
    with pytest.raises(InvalidParameterError, match="one ranking per fold"):
        FoldRankings(folds.rankings[:2], folds.splits)


@pytest.mark.parametrize("curve_name", ["class_curve", "regression_curve"])
def test_a_shared_memo_gives_every_curve_its_own_scores_and_scores_a_subset_once(curve_name):
    """Curves of several rankings on the same folds, sharing a memo: each is its curve
    without the memo, bit for bit (also when its folds run in parallel), and a top-k subset
    two rankings share is scored once; other data or settings never read another's entry."""
    from aggregation.evaluation import regression_curve

    X, y = load_wine(return_X_y=True)
    if curve_name == "regression_curve":
        y = X[:, 0] + X[:, 6]  # a quantity
        X = X[:, 1:]
    curve = class_curve if curve_name == "class_curve" else regression_curve
    splits = cv_splits(X, y if curve is class_curve else None, cv=3, random_state=0)
    names = [f"x{i}" for i in range(X.shape[1])]
    rng = np.random.default_rng(0)
    base = rng.permutation(X.shape[1])
    swapped = base.copy()
    swapped[[0, 1]] = swapped[[1, 0]]  # the same top-k subsets for every k but k = 1
    folds = {
        name: FoldRankings([Ranking.from_order([names[i] for i in o], names)] * 3, splits, name)
        for name, o in (("a", base), ("b", swapped), ("c", rng.permutation(X.shape[1])))
    }
    ks = list(range(1, X.shape[1] + 1))
    memo: dict = {}
    for name, rankings in folds.items():
        alone = curve(rankings, X, y, ks=ks, return_folds=True)
        shared = curve(rankings, X, y, ks=ks, return_folds=True, memo=memo)
        pd.testing.assert_frame_equal(shared, alone, check_exact=True)
        parallel = curve(rankings, X, y, ks=ks, return_folds=True, memo=dict(memo), n_jobs=2)
        pd.testing.assert_frame_equal(parallel, alone, check_exact=True)
        if name == "a":
            assert len(memo) == 3 * len(ks)  # every (fold, subset) of the first ranking
        if name == "b":  # only its k = 1 subsets are new
            assert len(memo) == 3 * len(ks) + 3
    # other data (a perturbed X) or another setting never reads those entries
    before = len(memo)
    moved = X.copy()
    moved[0, 0] = np.nextafter(moved[0, 0], np.inf)
    curve(folds["a"], moved, y, ks=ks, memo=memo)
    assert len(memo) == before + 3 * len(ks)
    curve(folds["a"], X, y, ks=ks, n_neighbors=3, memo=memo)
    assert len(memo) == before + 6 * len(ks)
    with pytest.raises(InvalidParameterError, match="memo must be None or a dict"):
        curve(folds["a"], X, y, ks=ks, memo=[])
