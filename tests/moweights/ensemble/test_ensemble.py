"""StackedRanker: the pool's best members on inner folds, combined by mean rank."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold

import rankers
from aggregation import Ranking, mean_rank
from aggregation.evaluation import class_curve
from aggregation.evaluation.folds import FoldRankings
from moweights.ensemble import StackedRanker, best_first
from rankers.exceptions import InvalidInputError, InvalidParameterError

POOL = ["anova_f", "chi2", "relieff", "t_test"]


@pytest.fixture
def planted():
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1], 40)
    X = rng.normal(size=(80, 30))
    X[:, [3, 7]] += 1.2 * y[:, None]
    X[:, 11] += np.where(y == 1, 1.0, 0.0) * rng.choice([-1, 1], 80)  # variance, not mean
    return X, y


def test_members_are_the_best_inner_scores_and_their_mean_rank(planted):
    X, y = planted
    ranker = StackedRanker(pool=POOL, n_members=2, random_state=0).fit(X, y)
    names = [f"x{i}" for i in range(X.shape[1])]
    # the inner scores, recomputed by hand: each member refit on 3 inner training parts
    splits = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    expected = {}
    for name in POOL:
        folds = []
        for train, _ in splits:
            est = rankers.get(name).fit(X[train], y[train])
            folds.append(Ranking(names, est.scores_, name, order_idx=est.ranking_))
        curve = class_curve(FoldRankings(folds, splits), X, y, ks=range(1, 31), return_folds=True)
        expected[name] = curve["value"].mean()
    assert ranker.inner_scores_.to_dict() == pytest.approx(expected, rel=1e-12)
    assert ranker.members_ == best_first(expected, higher=True)[:2]
    # the ranking: mean rank of the chosen members refit on all rows
    fitted = [rankers.get(m).fit(X, y) for m in ranker.members_]
    combined = mean_rank(
        [
            Ranking(names, f.scores_, m, order_idx=f.ranking_)
            for f, m in zip(fitted, ranker.members_, strict=True)
        ]
    )
    assert [names[i] for i in ranker.ranking_] == list(combined.order)
    assert set(ranker.ranking_[:2]) == {3, 7}


def test_best_first_ties_keep_the_given_order():
    scores = {"a": 0.5, "b": 0.7, "c": 0.7 * (1 + 1e-13), "d": 0.1}
    assert best_first(scores, higher=True) == ["b", "c", "a", "d"]
    assert best_first(scores, higher=False) == ["d", "a", "b", "c"]


def test_unsupervised_task_ignores_y(planted):
    X, _ = planted
    a = StackedRanker(
        task="unsupervised", pool=["variance", "laplacian", "spec"], n_members=2, random_state=0
    ).fit(X)
    b = StackedRanker(
        task="unsupervised", pool=["variance", "laplacian", "spec"], n_members=2, random_state=0
    ).fit(X, np.arange(len(X)))
    np.testing.assert_array_equal(a.ranking_, b.ranking_)
    assert len(a.members_) == 2 and set(a.members_) <= {"variance", "laplacian", "spec"}


def test_bad_parameters_are_named(planted):
    X, y = planted
    with pytest.raises(InvalidParameterError, match="n_members=5"):
        StackedRanker(pool=POOL, n_members=5).fit(X, y)
    with pytest.raises(InvalidParameterError, match="distinct"):
        StackedRanker(pool=["anova_f", "anova_f"]).fit(X, y)
    with pytest.raises(InvalidInputError, match="requires y"):
        StackedRanker(pool=POOL).fit(X)


@pytest.mark.filterwarnings("ignore::rankers.exceptions.FewSamplesWarning")
def test_too_few_samples_for_the_inner_folds_is_named():
    """Fewer samples than inner folds, or no class as large as cv: our error naming cv,
    not scikit-learn's splitter's (bad_input_matrix found the raw ValueError)."""
    rng = np.random.default_rng(0)
    with pytest.raises(InvalidInputError, match="cv=3 inner folds and needs at least 3"):
        StackedRanker(pool=POOL).fit(rng.normal(size=(2, 5)), np.array([0, 1]))
    with pytest.raises(InvalidInputError, match="cv=3 inner folds and needs at least 3"):
        StackedRanker(task="unsupervised").fit(rng.normal(size=(2, 5)))
    with pytest.raises(InvalidInputError, match="the largest has 2"):
        StackedRanker(pool=POOL).fit(rng.normal(size=(4, 5)), np.array([0, 0, 1, 1]))
    StackedRanker(pool=POOL, cv=2).fit(rng.normal(size=(4, 5)), np.array([0, 0, 1, 1]))


def test_auto_members_are_those_within_the_margin_of_the_best():
    from moweights.ensemble import choose_members

    scores = {"relieff": 0.95, "anova_f": 0.52, "t_test": 0.51, "chi2": 0.50}
    assert choose_members(scores, True, "auto") == ["relieff"]  # alone where it alone works
    close = {"anova_f": 0.90, "t_test": 0.895, "chi2": 0.889, "relieff": 0.70}
    assert choose_members(close, True, "auto") == ["anova_f", "t_test", "chi2"]
    errors = {"spec": 1.00, "laplacian": 1.015, "variance": 1.5}  # lower is better
    assert choose_members(errors, False, "auto") == ["spec", "laplacian"]
    many = {f"r{i}": 0.9 for i in range(8)}
    assert len(choose_members(many, True, "auto")) == 5
    assert choose_members(scores, True, 2) == ["relieff", "anova_f"]


def test_auto_ensemble_fits_and_names_its_members(planted):
    X, y = planted
    ranker = StackedRanker(pool=POOL, n_members="auto", random_state=0).fit(X, y)
    assert 1 <= len(ranker.members_) <= len(POOL)
    best = ranker.inner_scores_.max()
    assert (ranker.inner_scores_[ranker.members_] >= best - 0.02).all()


@pytest.mark.parametrize("higher", [True, False])
def test_a_score_on_the_auto_margin_is_in_whatever_its_last_bits(higher):
    """A member exactly ``margin`` from the best, moved a few ulps either way, is chosen
    every time: the bound carries the tie rule's tolerance, not the last bits."""
    from moweights.ensemble import choose_members

    best = 0.8 if higher else 2.0
    edge = best - 0.02 if higher else best * 1.02
    for steps in (-4, -1, 0, 1, 4):
        nudged = edge + steps * np.spacing(edge)
        scores = {"a": best, "b": nudged, "c": (0.5 if higher else 3.0)}
        assert choose_members(scores, higher, "auto") == ["a", "b"], steps


def test_the_tags_of_a_misconfigured_pool_make_no_claim():
    est = StackedRanker(pool=["anova_f", "anova_f"])
    assert rankers.ranker_tags(est).feature_scale_invariant is False
    with pytest.raises(InvalidParameterError):
        est.fit(np.random.default_rng(0).normal(size=(10, 3)), np.repeat([0, 1], 5))


# ---------------------------------------------------------------- a numeric target
def _quantity(seed=0, m=160, n=24, interaction=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, n))
    if interaction:  # y = x0 * x1: neither feature alone says anything about y
        y = X[:, 0] * X[:, 1] + 0.1 * rng.normal(size=m)
    else:
        y = 2.0 * X[:, 0] + X[:, 1] - X[:, 2] + 0.5 * rng.normal(size=m)
    return X, y


def test_a_regression_ensemble_scores_its_pool_by_the_inner_r2():
    from sklearn.model_selection import KFold

    from aggregation.evaluation import regression_curve

    X, y = _quantity()
    pool = ["rrelieff", "multisurf"]
    ranker = StackedRanker(task="regression", pool=pool, n_members=1, random_state=0).fit(X, y)
    assert rankers.ranker_tags(ranker).target_kind == "regression"
    assert rankers.ranker_tags(ranker).requires_y
    names = [f"x{i}" for i in range(X.shape[1])]
    splits = list(KFold(3, shuffle=True, random_state=0).split(X))  # not stratified
    expected = {}
    for name in pool:
        folds = []
        for train, _ in splits:
            est = rankers.get(name).fit(X[train], y[train])
            folds.append(Ranking(names, est.scores_, name, order_idx=est.ranking_))
        curve = regression_curve(
            FoldRankings(folds, splits), X, y, ks=range(1, 25), return_folds=True
        )
        expected[name] = curve["value"].mean()
    assert ranker.inner_scores_.to_dict() == pytest.approx(expected, rel=1e-12)
    assert ranker.members_ == best_first(expected, higher=True)[:1]
    assert set(ranker.ranking_[:3]) == {0, 1, 2}


def test_the_default_regression_pool_finds_an_interaction_and_noise_scores_as_noise():
    import warnings

    from moweights.ensemble import POOLS

    X, y = _quantity(1, interaction=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranker = StackedRanker(task="regression", random_state=0).fit(X, y)
    assert list(ranker.inner_scores_.index) == list(POOLS["regression"])
    assert set(ranker.ranking_[:2]) == {0, 1}
    # the members that see interactions (the Relief family) are the ones chosen
    assert set(ranker.members_) <= {"rrelieff", "multisurf", "random_forest"}
    rng = np.random.default_rng(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        noise = StackedRanker(task="regression", random_state=0).fit(X, rng.normal(size=len(X)))
    # no member explains a target of pure noise on the inner folds
    assert (noise.inner_scores_ < 0.05).all()


def test_a_regression_ensemble_names_a_target_that_is_no_quantity():
    X, _ = _quantity(m=30)
    with pytest.raises(InvalidInputError):
        StackedRanker(task="regression", pool=["rrelieff"]).fit(X, np.array(["a", "b"] * 15))
    with pytest.raises(InvalidInputError, match="requires y"):
        StackedRanker(task="regression", pool=["rrelieff"]).fit(X)


def test_a_regression_ensemble_fits_an_integer_quantity_as_a_quantity():
    """Its members for both kinds of target are told the task: counts whose values repeat
    are fitted as a quantity (random_forest alone would read them as six classes)."""
    from rankers.exceptions import TargetKindWarning

    X, _ = _quantity(m=60)
    counts = np.repeat(np.arange(6), 10)  # an integer quantity whose values repeat
    with warnings.catch_warnings():
        warnings.simplefilter("error", TargetKindWarning)
        ens = StackedRanker(task="regression", pool=["random_forest"], random_state=0)
        ens.fit(X, counts)
    forest = rankers.get("random_forest", random_state=0)
    assert forest.fit(X, counts).task_ == "classification"
    as_quantity = rankers.get("random_forest", random_state=0, task="regression").fit(X, counts)
    assert as_quantity.task_ == "regression"
    np.testing.assert_array_equal(ens.ranking_, as_quantity.ranking_)


def test_a_regression_ensemble_says_when_a_member_reads_the_target_as_classes():
    """A third party's ranker for both kinds of target, with no ``task`` to set, still
    reads repeated integers as classes: the ensemble says so, and who."""
    from rankers.exceptions import TargetKindWarning

    @rankers.register("both_kinds_test", replace=True)
    class BothKinds(rankers.BaseRanker):
        """Toy ranker for both kinds of target, without a task parameter."""

        target_kind = "both"
        requires_y = True

        def _score(self, X, y, context):
            return np.abs(np.corrcoef(X.T, y)[-1, :-1])

    try:
        X, _ = _quantity(m=60)
        counts = np.repeat(np.arange(6), 10)
        pool = ["both_kinds_test", "rrelieff"]
        with pytest.warns(TargetKindWarning, match=r"6 distinct values.*both_kinds_test \(for"):
            StackedRanker(task="regression", pool=pool, random_state=0).fit(X, counts)
        with warnings.catch_warnings():  # a continuous target: nothing to say
            warnings.simplefilter("error", TargetKindWarning)
            StackedRanker(task="regression", pool=pool, random_state=0).fit(
                X, counts + 0.5 * X[:, 0]
            )
    finally:
        rankers.registry._decorated.pop("both_kinds_test", None)
