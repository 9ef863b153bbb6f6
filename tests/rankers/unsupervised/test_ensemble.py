"""Genie3 and RF-score rankers: ensembles of predictive clustering trees."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor
from sklearn.tree import DecisionTreeRegressor, ExtraTreeRegressor

from rankers.exceptions import ConstantFeatureWarning, InvalidParameterError
from rankers.unsupervised import ensemble
from rankers.unsupervised.ensemble import Genie3Ranker, RFScoreRanker

RANKERS = [Genie3Ranker, RFScoreRanker]
MAX_INT = np.iinfo(np.int32).max


def planted(seed, m=150):
    """Three clusters in 4 informative features, 4 noisy copies of them, 6 noise features."""
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(3), m // 3)
    informative = rng.normal(scale=2.0, size=(3, 4))[labels] + rng.normal(size=(m, 4))
    copies = informative + 0.2 * rng.normal(size=(m, 4))
    return np.column_stack([informative, copies, rng.normal(size=(m, 6))])


def sklearn_bootstrap_counts(seed, m):
    """In-bag counts of a forest tree, from scikit-learn's own (private) sampler."""
    from sklearn.ensemble._forest import _generate_sample_indices

    extra = (
        (None,) if "sample_weight" in inspect.signature(_generate_sample_indices).parameters else ()
    )
    return np.bincount(_generate_sample_indices(seed, m, m, *extra), minlength=m)


def inputs_of(X):
    """What the trees split on: z-scores as float32."""
    return ensemble._inputs_and_targets(np.asarray(X, dtype=float))[0]


# ---------------------------------------------------------------- Genie3, Eq. 1
def test_genie3_hand_worked_tree():
    # Var(x0) = 0.25, Var(x1) = 1.25. Root: |E| = 4, impu = mean of normalised variances = 1.
    # Best split x0 <= 0.5 -> {0,1}, {2,3}: x0 pure, x1 in {0,2} and {1,3}: variance 1, i.e.
    # 0.8 normalised, so impu = (0 + 0.8) / 2 = 0.4 in each child and
    # h* = 4 * 1 - 2 * 0.4 - 2 * 0.4 = 2.4 (x1's best split gives 1.87 at most).
    # Depth 2: each child splits on x1 into pure leaves, h* = 2 * 0.4 - 0 = 0.8 twice.
    X = np.array([[0, 0], [0, 2], [1, 1], [1, 3]], dtype=float)
    params = {"ensemble": "bagging", "n_estimators": 1, "bootstrap": False}
    stump = Genie3Ranker(max_depth=1, **params).fit(X)
    # (the trees see the z-scores rounded to float32, hence the tolerance)
    np.testing.assert_allclose(stump.scores_, [2.4, 0.0], rtol=1e-7, atol=1e-12)
    tree = Genie3Ranker(**params).fit(X)
    np.testing.assert_allclose(tree.scores_, [2.4, 1.6], rtol=1e-7)
    assert tree.ranking_.tolist() == [0, 1]


@pytest.mark.parametrize("ensemble_kind", ["extra_trees", "random_forest", "bagging"])
def test_genie3_is_eq1_computed_from_the_node_statistics(ensemble_kind):
    # Independent of the tree's stored impurities: h* of every node from the raw data of
    # the bootstrap rows reaching it (duplicates counted), impu = mean of Var(E,x)/Var(D,x).
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 4)) * [1.0, 10.0, 0.1, 3.0] + [0.0, 5.0, -2.0, 100.0]
    ranker = Genie3Ranker(
        ensemble=ensemble_kind, n_estimators=3, max_depth=3, keep_estimator=True, random_state=2
    ).fit(X)
    var_d = X.var(axis=0)
    expected = np.zeros((3, 4))
    for t, tree in enumerate(ranker.estimator_.estimators_):
        w = sklearn_bootstrap_counts(tree.random_state, len(X)).astype(float)
        member = tree.decision_path(inputs_of(X)).toarray().astype(bool)  # rows x nodes

        def mass(node, member=member, w=w):
            weights = w * member[:, node]
            if weights.sum() == 0:
                return 0.0
            mean = np.average(X, axis=0, weights=weights)
            var = np.average((X - mean) ** 2, axis=0, weights=weights)
            return weights.sum() * np.mean(var / var_d)

        t_ = tree.tree_
        for node in np.flatnonzero(t_.children_left >= 0):
            h = mass(node) - mass(t_.children_left[node]) - mass(t_.children_right[node])
            expected[t, t_.feature[node]] += h
    # float32 inputs: the model's data differ from X's in the 8th digit
    np.testing.assert_allclose(ranker.tree_scores_, expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(ranker.scores_, expected.mean(axis=0), rtol=1e-6, atol=1e-9)


def test_fully_grown_tree_scores_sum_to_the_root_mass():
    # telescoping Eq. 1: with pure leaves (distinct rows) a tree's scores add up to
    # |root| impu(root); without bootstrap that is n_samples (impu(D) = 1)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(25, 5))
    single = Genie3Ranker(n_estimators=1, bootstrap=False, random_state=0).fit(X)
    assert single.scores_.sum() == pytest.approx(25.0, rel=1e-12)  # unit variance exactly
    boot = Genie3Ranker(n_estimators=4, keep_estimator=True, random_state=0).fit(X)
    for row, tree in zip(boot.tree_scores_, boot.estimator_.estimators_, strict=True):
        w = sklearn_bootstrap_counts(tree.random_state, 25)
        mean = np.average(X, axis=0, weights=w)
        var = np.average((X - mean) ** 2, axis=0, weights=w)
        assert row.sum() == pytest.approx(25 * np.mean(var / X.var(axis=0)), rel=1e-6)


@pytest.mark.parametrize("ensemble_kind", ["extra_trees", "random_forest", "bagging"])
def test_trees_are_sklearns_forest_and_scores_its_unnormalised_importances(ensemble_kind):
    X = planted(0, m=60)
    params = {"ensemble": ensemble_kind, "n_estimators": 6, "random_state": 4}
    kept = Genie3Ranker(keep_estimator=True, **params).fit(X)
    forest = kept.estimator_
    Forest = ExtraTreesRegressor if ensemble_kind == "extra_trees" else RandomForestRegressor
    assert type(forest) is Forest
    assert forest.bootstrap and len(forest.estimators_) == 6
    assert forest.max_features == (4 if ensemble_kind != "bagging" else 14)  # ceil(log2 14)
    # sklearn's per-tree importances divide by the root weight (and feature_importances_
    # further normalises each tree to sum 1); Eq. 1 does neither
    expected = np.mean(
        [
            t.tree_.compute_feature_importances(normalize=False)
            * t.tree_.weighted_n_node_samples[0]
            for t in forest.estimators_
        ],
        axis=0,
    )
    np.testing.assert_allclose(kept.scores_, expected, rtol=1e-10)
    assert not np.allclose(kept.scores_ / kept.scores_.sum(), forest.feature_importances_)
    # the default streams the same trees one by one without keeping them
    streamed = Genie3Ranker(**params).fit(X)
    np.testing.assert_array_equal(streamed.scores_, kept.scores_)
    assert not hasattr(streamed, "estimator_")
    rf_kept = RFScoreRanker(keep_estimator=True, **params).fit(X)
    np.testing.assert_array_equal(RFScoreRanker(**params).fit(X).scores_, rf_kept.scores_)


@pytest.mark.parametrize(
    ("max_features", "ensemble_kind", "n", "expected"),
    [
        ("log2", "extra_trees", 22283, 15),  # sklearn's "log2" gives int(14.44) = 14
        ("log2", "extra_trees", 500, 9),  # sklearn: 8
        ("log2", "random_forest", 1024, 10),
        ("log2", "extra_trees", 1, 1),
        ("sqrt", "extra_trees", 500, 23),  # sklearn: 22
        ("sqrt", "extra_trees", 16, 4),
        (3, "extra_trees", 10, 3),
        (50, "extra_trees", 10, 10),  # clipped to the non-constant features
        (0.5, "random_forest", 11, 5),
        (0.01, "extra_trees", 10, 1),
        (None, "extra_trees", 10, 10),
        ("log2", "bagging", 10, 10),
    ],
)
def test_max_features_resolution(max_features, ensemble_kind, n, expected):
    assert ensemble._resolve_max_features(max_features, ensemble_kind, n) == expected


# ------------------------------------------------------------- RF score, Eq. 2
def fitted_tree(seed=0, m=80, n=12, Tree=ExtraTreeRegressor):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, n))
    X[:, :3] += 2.0 * rng.integers(0, 2, size=(m, 1))
    X32, Y = ensemble._inputs_and_targets(X)
    counts = ensemble._bootstrap_counts(seed, m)
    tree = Tree(max_features=4, random_state=seed).fit(X32, Y, sample_weight=counts)
    return tree, X32, Y, counts


def naive_rf_tree(tree, X32, Y, oob, perm):
    """Eq. 2 for one tree, straightforwardly: permute one column, predict, compare errors."""
    X, Y = X32[oob], Y[oob]
    e0 = np.var(Y - tree.predict(X), axis=0).mean()
    out = np.empty(X.shape[1])
    for j in range(X.shape[1]):
        Xp = X.copy()
        Xp[:, j] = X[perm, j]
        out[j] = (np.var(Y - tree.predict(Xp), axis=0).mean() - e0) / e0
    return out


def test_walk_with_one_substituted_value_is_sklearns_apply():
    tree, X, _, _ = fitted_tree(1)
    rng = np.random.default_rng(0)
    rows = rng.integers(0, len(X), 300)
    feats = rng.integers(0, X.shape[1], 300)
    same = ensemble._leaves_with_value(tree.tree_, X, rows, feats, X[rows, feats])
    np.testing.assert_array_equal(same, tree.apply(X)[rows])
    values = rng.normal(size=300).astype(np.float32)
    moved = ensemble._leaves_with_value(tree.tree_, X, rows, feats, values)
    for q in range(300):
        x = X[rows[q]].copy()
        x[feats[q]] = values[q]
        assert moved[q] == tree.apply(x[None])[0]


@pytest.mark.parametrize("block", [1, 40, 1 << 22])
@pytest.mark.parametrize("Tree", [ExtraTreeRegressor, DecisionTreeRegressor])
def test_rf_tree_matches_the_naive_permutation_loop(monkeypatch, block, Tree):
    # the block size only bounds memory; small blocks split the pairs at feature borders
    monkeypatch.setattr(ensemble, "_BLOCK_ELEMENTS", block)
    for seed in range(3):
        tree, X32, Y, counts = fitted_tree(seed, Tree=Tree)
        oob = np.flatnonzero(counts == 0)
        got = ensemble._rf_tree(tree, X32, Y, oob, 11, Y.shape[1])
        perm = np.random.default_rng(11).permutation(oob.size)
        expected = naive_rf_tree(tree, X32, Y, oob, perm)
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)


def test_rf_score_is_the_mean_of_the_naive_per_tree_increases():
    X = planted(2, m=60)
    ranker = RFScoreRanker(n_estimators=4, keep_estimator=True, random_state=3).fit(X)
    rs = np.random.RandomState(3)
    rs.randint(MAX_INT)  # the forest's seed, then one permutation seed per tree
    perm_seeds = rs.randint(MAX_INT, size=4)
    X32, Y = ensemble._inputs_and_targets(X)
    rows = []
    for tree, seed in zip(ranker.estimator_.estimators_, perm_seeds, strict=True):
        oob = np.flatnonzero(sklearn_bootstrap_counts(tree.random_state, 60) == 0)
        perm = np.random.default_rng(seed).permutation(oob.size)
        rows.append(naive_rf_tree(tree, X32, Y, oob, perm))
    np.testing.assert_allclose(ranker.tree_scores_, rows, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ranker.scores_, np.mean(rows, axis=0), rtol=1e-9, atol=1e-12)
    assert ranker.oob_trees_.all()


def test_rf_score_of_a_feature_no_tree_splits_on_is_exactly_zero():
    # stumps split the two clusters on x0 or its exact copy x1, never on the noise x2:
    # permuting a feature a tree does not test leaves its OOB error unchanged
    rng = np.random.default_rng(0)
    a = np.repeat([0.0, 5.0], 20) + 0.3 * rng.normal(size=40)
    X = np.column_stack([a, a, rng.normal(size=40)])
    ranker = RFScoreRanker(
        ensemble="bagging", max_depth=1, n_estimators=12, keep_estimator=True, random_state=0
    ).fit(X)
    roots = np.array([t.tree_.feature[0] for t in ranker.estimator_.estimators_])
    assert set(roots) == {0, 1}
    for row, root in zip(ranker.tree_scores_, roots, strict=True):
        assert row[root] > 1.0  # scrambling the clusters more than doubles the error
        assert np.count_nonzero(row) == 1
    assert ranker.scores_[2] == 0.0
    assert ranker.scores_[0] > 0 and ranker.scores_[1] > 0


def test_rf_score_without_any_defined_oob_error_warns_and_scores_zero():
    X = np.array([[0.0, 1.0], [1.0, 0.0]])  # at most one out-of-bag row per tree
    with pytest.warns(UserWarning, match="no tree had a defined out-of-bag error"):
        ranker = RFScoreRanker(n_estimators=5, random_state=0).fit(X)
    np.testing.assert_array_equal(ranker.scores_, [0.0, 0.0])
    assert not ranker.oob_trees_.any()
    assert np.isnan(ranker.tree_scores_).all()


# --------------------------------------------------------- both rankers: behaviour
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("Ranker", RANKERS)
def test_planted_clusters_and_their_copies_rank_above_noise(Ranker, seed):
    ranker = Ranker(n_estimators=50, random_state=seed).fit(planted(seed))
    assert ranker.scores_[:8].min() > ranker.scores_[8:].max()
    assert set(ranker.ranking_[:8].tolist()) == set(range(8))


@pytest.mark.parametrize("Ranker", RANKERS)
def test_same_seed_same_scores_whatever_n_jobs(Ranker):
    X = planted(3, m=60)
    a = Ranker(n_estimators=8, random_state=5, n_jobs=1).fit(X)
    b = Ranker(n_estimators=8, random_state=5, n_jobs=2).fit(X)
    np.testing.assert_array_equal(a.scores_, b.scores_)
    np.testing.assert_array_equal(a.tree_scores_, b.tree_scores_)
    c = Ranker(n_estimators=8, random_state=np.random.RandomState(5)).fit(X)
    np.testing.assert_array_equal(a.scores_, c.scores_)
    d = Ranker(n_estimators=8, random_state=6).fit(X)
    assert not np.array_equal(a.scores_, d.scores_)


@settings(max_examples=10)
@given(seed=st.integers(0, 2**16), perm_seed=st.integers(0, 2**16))
def test_permuting_features_permutes_scores(seed, perm_seed):
    # Exact where the trees do not depend on the column order: every feature is a
    # candidate (bagging) and the best split is unique. Extra trees and random forests
    # draw candidate features by position instead; and in deeper trees (or at a root
    # that cuts off one outlying row) several features often give the same partition,
    # a tie scikit-learn breaks by its random visiting order. Hence uniform data, stumps.
    X = np.random.default_rng(seed).uniform(size=(60, 5))
    perm = np.random.default_rng(perm_seed).permutation(5)
    params = {"ensemble": "bagging", "max_depth": 1, "n_estimators": 5, "random_state": seed}
    for Ranker in RANKERS:
        a = Ranker(**params).fit(X).scores_
        b = Ranker(**params).fit(X[:, perm]).scores_
        np.testing.assert_allclose(b, a[perm], rtol=1e-9, atol=1e-12)


@settings(max_examples=10)
@given(power=st.integers(-40, 40), column=st.integers(0, 13))
def test_scaling_a_feature_by_a_power_of_two_changes_nothing(power, column):
    # the trees split on z-scores, which a power-of-two scale leaves bit for bit equal;
    # on raw values sklearn would treat features below 1e-7 in range as constant
    X = planted(4, m=60)
    Xs = X.copy()
    Xs[:, column] *= 2.0**power
    for Ranker in RANKERS:
        a = Ranker(n_estimators=5, random_state=1).fit(X).scores_
        b = Ranker(n_estimators=5, random_state=1).fit(Xs).scores_
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("Ranker", RANKERS)
def test_positive_affine_maps_of_features_keep_the_scores(Ranker):
    # any positive scale and shift: equal up to rounding of the z-scores
    X = planted(5, m=90)
    Xs = X * np.linspace(1e-9, 3.7e6, X.shape[1]) + np.arange(X.shape[1]) * 1e3
    a = Ranker(n_estimators=10, random_state=2).fit(X)
    b = Ranker(n_estimators=10, random_state=2).fit(Xs)
    np.testing.assert_allclose(b.scores_, a.scores_, rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(b.ranking_, a.ranking_)


@pytest.mark.parametrize("max_features", ["log2", "sqrt", 3, 0.5, None])
@pytest.mark.parametrize("ensemble_kind", ["extra_trees", "random_forest", "bagging"])
@pytest.mark.parametrize("Ranker", RANKERS)
def test_every_option_runs_and_reaches_the_trees(Ranker, ensemble_kind, max_features):
    X = planted(6, m=45)
    ranker = Ranker(
        ensemble=ensemble_kind,
        max_features=max_features,
        max_depth=4,
        n_estimators=3,
        keep_estimator=True,
        random_state=0,
    ).fit(X)
    expected = {"log2": 4, "sqrt": 4, 3: 3, 0.5: 7, None: 14}[max_features]
    assert ranker.max_features_ == (14 if ensemble_kind == "bagging" else expected)
    Tree = ExtraTreeRegressor if ensemble_kind == "extra_trees" else DecisionTreeRegressor
    for tree in ranker.estimator_.estimators_:
        assert type(tree) is Tree
        assert tree.max_features == ranker.max_features_
        assert tree.get_depth() <= 4
    assert ranker.tree_scores_.shape == (3, 14)
    assert np.isfinite(ranker.scores_).all()
    assert ranker.scores_.any()


def test_genie3_without_bootstrap_uses_every_row():
    X = planted(7, m=30)
    ranker = Genie3Ranker(bootstrap=False, n_estimators=2, keep_estimator=True, random_state=0)
    ranker.fit(X)
    assert not ranker.estimator_.bootstrap
    for tree in ranker.estimator_.estimators_:
        assert tree.tree_.n_node_samples[0] == 30
        assert tree.tree_.weighted_n_node_samples[0] == 30


@pytest.mark.parametrize("Ranker", RANKERS)
def test_constant_features_get_zero_and_never_reach_the_trees(Ranker):
    X = planted(8, m=60)
    X = np.column_stack([X[:, :3], np.full(60, 2.5), X[:, 3:]])
    with pytest.warns(ConstantFeatureWarning, match="x3"):
        ranker = Ranker(n_estimators=5, keep_estimator=True, random_state=0).fit(X)
    assert ranker.scores_[3] <= min(0.0, np.delete(ranker.scores_, 3).min())
    assert ranker.estimator_.n_features_in_ == 14
    assert np.all(ranker.tree_scores_[:, 3] == 0)
    assert ranker.ranking_[-1] == 3


@pytest.mark.parametrize(
    ("Ranker", "param", "value"),
    [
        (Genie3Ranker, "ensemble", "boosting"),
        (RFScoreRanker, "n_estimators", 0),
        (Genie3Ranker, "max_features", "all"),
        (RFScoreRanker, "max_features", 1.5),
        (Genie3Ranker, "max_features", 0),
        (RFScoreRanker, "max_depth", 0),
        (Genie3Ranker, "bootstrap", "yes"),
        (RFScoreRanker, "keep_estimator", 1),
        (Genie3Ranker, "min_samples_leaf", 0),
        (RFScoreRanker, "min_samples_leaf", 0.7),
    ],
)
def test_bad_parameters_are_named(Ranker, param, value):
    with pytest.raises(InvalidParameterError, match=param):
        Ranker(**{param: value}).fit(planted(0, m=30))


def test_rf_score_always_bootstraps():
    assert "bootstrap" not in RFScoreRanker().get_params()
    with pytest.raises(TypeError):
        RFScoreRanker(bootstrap=False)


@pytest.mark.parametrize("Ranker", RANKERS)
def test_memory_layout_and_refits_do_not_matter(Ranker):
    # equal values must give equal bits: the last bits of the targets decide ties
    X = planted(9, m=60)
    a = Ranker(n_estimators=5, random_state=0, keep_estimator=True).fit(np.asfortranarray(X))
    scores = a.scores_.copy()
    a.set_params(keep_estimator=False).fit(np.ascontiguousarray(X))
    np.testing.assert_array_equal(a.scores_, scores)
    assert not hasattr(a, "estimator_")  # no stale forest from the first fit


@pytest.mark.parametrize("Ranker", RANKERS)
def test_min_samples_leaf_reaches_the_trees(Ranker):
    X = planted(2, m=60)
    full = Ranker(n_estimators=4, keep_estimator=True, random_state=0).fit(X)
    leafy = Ranker(n_estimators=4, keep_estimator=True, min_samples_leaf=5, random_state=0).fit(X)
    for tree in leafy.estimator_.estimators_:
        leaves = tree.tree_.children_left == -1
        assert tree.tree_.n_node_samples[leaves].min() >= 5
    assert not np.allclose(full.scores_, leafy.scores_)
    again = Ranker(n_estimators=4, min_samples_leaf=5, random_state=0).fit(X)
    np.testing.assert_allclose(again.scores_, leafy.scores_)  # streamed trees are the forest's
