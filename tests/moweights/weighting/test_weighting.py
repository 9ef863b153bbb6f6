"""MOWeighting: the NSGA-II ranker, its outputs, the paper's synthetic benchmark."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import rankers
from moweights.data import make_weighting_benchmark
from moweights.weighting import MOWeighting
from moweights.weighting.criteria import Criteria, parse_objectives
from moweights.weighting.plots import plot_front, plot_front_weights
from rankers.exceptions import ConstantFeatureWarning, InvalidInputError, InvalidParameterError


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantFeatureWarning)
        yield


@pytest.fixture(scope="module")
def bench():
    return make_weighting_benchmark(100, random_state=0)


def test_benchmark_data_as_the_paper_describes():
    X, y = make_weighting_benchmark(101, random_state=3)
    assert list(X.columns) == [f"f{i}" for i in range(1, 11)]
    np.testing.assert_array_equal(X["f1"], y)
    assert np.bincount(y).tolist() == [51, 50]
    assert X["f7"].nunique() == 1 and X["f8"].nunique() == 1
    assert X[["f9", "f10"]].min().min() >= 0 and X[["f9", "f10"]].max().max() <= 1
    # f2..f6: class means 0 and 1 (sd 1): the class-1 mean is clearly higher
    diff = X.loc[y == 1, "f2":"f6"].mean() - X.loc[y == 0, "f2":"f6"].mean()
    assert (diff > 0.4).all()
    X2, _ = make_weighting_benchmark(101, random_state=3)
    pd.testing.assert_frame_equal(X, X2)


def test_registered_through_the_entry_point():
    est = rankers.get("mo_weighting", n_gen=5)
    assert isinstance(est, MOWeighting)
    assert "mo_weighting" in set(rankers.available()["name"])


def test_paper_combination_ranks_the_label_first_and_noise_last(bench):
    X, y = bench
    for seed in (0, 1):
        est = MOWeighting(objectives="paper", random_state=seed).fit(X, y)  # the paper's 80 x 250
        order = list(X.columns[est.ranking_])
        assert order[0] == "f1", order
        assert set(order[-4:]) == {"f7", "f8", "f9", "f10"}, order


def test_same_seed_same_front(bench):
    X, y = bench
    a = MOWeighting(n_gen=20, random_state=4).fit(X, y)
    b = MOWeighting(n_gen=20, random_state=4).fit(X, y)
    pd.testing.assert_frame_equal(a.pareto_weights_, b.pareto_weights_)
    np.testing.assert_array_equal(a.scores_, b.scores_)
    c = MOWeighting(n_gen=20, random_state=5).fit(X, y)
    assert not a.pareto_weights_.equals(c.pareto_weights_)


def test_front_outputs_are_consistent(bench):
    X, y = bench
    est = MOWeighting(objectives="paper", n_gen=15, pop_size=20, random_state=0).fit(X, y)
    W = est.pareto_weights_
    assert list(W.columns) == list(X.columns)
    assert W[["f7", "f8"]].isna().all().all()  # constant features are set aside
    assert W.drop(columns=["f7", "f8"]).notna().all().all()
    assert list(est.pareto_objectives_.columns) == ["C1", "-C2", "-C3"]
    # the stored objectives are the criteria of the stored weights
    informative = X.drop(columns=["f7", "f8"]).to_numpy()
    lo, hi = informative.min(axis=0), informative.max(axis=0)
    crit = Criteria((informative - lo) / (hi - lo), y.to_numpy(), ("C1", "C2", "C3"))
    again = crit.evaluate(W.drop(columns=["f7", "f8"]).to_numpy(), parse_objectives(est.objectives))
    np.testing.assert_allclose(again, est.pareto_objectives_.to_numpy(), rtol=1e-12)
    hist = est.history_
    assert len(hist) == 15 and hist["n_gen"].tolist() == list(range(1, 16))
    assert {"hypervolume", "best_C1", "best_-C2", "best_-C3", "n_front"} <= set(hist.columns)
    assert (hist["n_eval"].diff().dropna() == 20).all()


@pytest.mark.parametrize("how", ["mean_rank", "mean_weight", "median_weight", "max_weight", "vote"])
def test_front_to_ranking_options(bench, how):
    X, y = bench
    est = MOWeighting(
        objectives="paper", n_gen=15, pop_size=20, random_state=0, front_to_ranking=how
    ).fit(X, y)
    W = est.pareto_weights_.drop(columns=["f7", "f8"]).to_numpy()
    informative = ~est.constant_features_
    if how == "mean_weight":
        np.testing.assert_allclose(est.scores_[informative], W.mean(axis=0))
    if how == "max_weight":
        np.testing.assert_allclose(est.scores_[informative], W.max(axis=0))
    if how == "mean_rank":
        ranks = np.mean([np.argsort(np.argsort(-w, kind="stable")) + 1 for w in W], axis=0)
        # ties inside a solution get average ranks in the aggregation layer; the front of
        # continuous weights has none, so plain ranks agree
        np.testing.assert_allclose(est.scores_[informative], informative.sum() + 1 - ranks)
    assert sorted(est.ranking_) == list(range(10))


def test_unsupervised_entropy_needs_no_labels(bench):
    X, _ = bench
    est = MOWeighting(objectives=("entropy",), n_gen=10, pop_size=12, random_state=0).fit(X)
    assert est.pareto_objectives_.columns.tolist() == ["C4"]
    with pytest.raises(InvalidInputError, match="requires y"):
        MOWeighting(objectives=("C4", "-C2"), n_gen=2).fit(X)


def test_labels_go_through_the_shared_target_check(bench):
    X, y = bench
    quantity = np.linspace(0.0, 1.0, len(y)) ** 2
    # C1-C3 need class labels: a continuous y is refused by name, not taken as classes
    with pytest.raises(InvalidInputError, match=r"'continuous'.*rrelieff"):
        MOWeighting(objectives=("C1", "-C3"), n_gen=2, pop_size=8).fit(X, quantity)
    # C4 alone ignores y, as unsupervised rankers do
    params = dict(objectives=("C4",), n_gen=3, pop_size=8, random_state=0)
    with_y = MOWeighting(**params).fit(X, quantity).scores_
    np.testing.assert_array_equal(with_y, MOWeighting(**params).fit(X).scores_)


def test_termination_override_and_bad_objectives(bench):
    X, y = bench
    est = MOWeighting(termination=7, pop_size=10, random_state=0).fit(X, y)
    assert len(est.history_) == 7
    est = MOWeighting(termination=("n_eval", 50), pop_size=10, random_state=0).fit(X, y)
    assert est.history_["n_eval"].iloc[-1] >= 50
    with pytest.raises(InvalidParameterError, match="unknown criterion 'C9'"):
        MOWeighting(objectives=("C9",)).fit(X, y)


def test_plots_render(bench, tmp_path):
    X, y = bench
    est = MOWeighting(objectives="paper", n_gen=10, pop_size=16, random_state=0).fit(X, y)
    fig = plot_front(est)
    fig.savefig(tmp_path / "front.png")
    assert fig.axes[0].name == "3d"
    fig2 = plot_front_weights(est)
    fig2.savefig(tmp_path / "weights.png")
    labels = [t.get_text() for t in fig2.axes[0].get_xticklabels()]
    assert labels == list(X.columns[est.ranking_])
    two = MOWeighting(objectives=("C1", "-C2"), n_gen=5, pop_size=10, random_state=0).fit(X, y)
    assert len(plot_front(two).axes[0].lines) == 1


@pytest.mark.parametrize("seed", [0, 1])
def test_papers_minus_c2_minus_c4_row_puts_the_class_label_first(bench, seed):
    # Table 1's (-C2, -C4) row, written as the paper writes it, ranks feature 1 (the class
    # label) first; maximising the entropy (what a plain negation would do) does not
    X, y = bench
    params = dict(pop_size=30, n_gen=60, max_pairs=2000, random_state=seed)
    paper = MOWeighting(objectives=("-C2", "-C4"), **params).fit(X, y)
    assert paper.ranking_[0] == 0
    assert paper.pareto_objectives_.columns.tolist() == ["-C2", "C4"]
    flipped = MOWeighting(objectives=("-C2", "max:C4"), **params).fit(X, y)
    assert flipped.ranking_[0] != 0
    assert flipped.pareto_objectives_.columns.tolist() == ["-C2", "max:C4"]
    plot_front(flipped)  # the plot reads the labels back to the criteria's own values


def test_pareto_mean_weights_are_the_averaged_weights(bench):
    X, y = bench
    est = MOWeighting(n_gen=10, pop_size=12, random_state=0).fit(X, y)
    mean = est.pareto_mean_weights_
    assert list(mean.index) == list(X.columns)
    pd.testing.assert_series_equal(mean, est.pareto_weights_.mean(), check_names=False)
    assert mean[["f7", "f8"]].isna().all()  # constant features are set aside


# ------------------------------------------------------------------ the wide-data path
@pytest.fixture(scope="module")
def wide():
    from moweights.data import make_planted

    return make_planted("clusters", n_samples=60, n_features=120, informative=6, random_state=0)


def test_the_papers_criteria_default_to_the_plain_search(bench):
    X, y = bench
    est = MOWeighting()
    assert est.get_params()["seed_rankers"] == "auto" and est.get_params()["preselect"] == "auto"
    paper = dict(objectives="paper", n_gen=12, pop_size=10, random_state=3)
    a = MOWeighting(**paper).fit(X, y)
    b = MOWeighting(preselect=50, **paper).fit(X, y)
    c = MOWeighting(preselect=None, **paper).fit(X, y)
    d = MOWeighting(seed_rankers=None, **paper).fit(X, y)
    np.testing.assert_array_equal(a.scores_, d.scores_)  # "auto": no seeds for C1-C3
    assert a.preselected_ is None and b.preselected_ is None  # 50 >= 8 features: no cut
    np.testing.assert_array_equal(a.scores_, b.scores_)
    np.testing.assert_array_equal(a.scores_, c.scores_)  # "auto" below the width: None


@pytest.fixture(scope="module")
def wider():
    from moweights.data import make_planted
    from moweights.weighting.width import AUTO_WIDTH

    data = make_planted(
        "clusters", n_samples=40, n_features=AUTO_WIDTH + 150, informative=8, random_state=1
    )
    return data.X, data.y


def test_auto_preselects_the_filters_best_above_the_width_and_says_so(wider):
    from moweights.weighting.width import AUTO_WIDTH

    X, y = wider
    small = {"objectives": "paper", "n_gen": 3, "pop_size": 8, "random_state": 0}
    with pytest.warns(UserWarning, match=r"searches the 1000 best of ANOVAFRanker.*150 after"):
        auto = MOWeighting(**small).fit(X, y)
    assert len(auto.preselected_) == AUTO_WIDTH
    anova = rankers.get("anova_f").fit(X, y)
    assert set(auto.preselected_) == set(X.columns[anova.ranking_[:AUTO_WIDTH]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an explicit choice: no warning
        cut = MOWeighting(preselect=AUTO_WIDTH, **small).fit(X, y)
        everything = MOWeighting(preselect="all", **small).fit(X, y)
        nothing_cut = MOWeighting(preselect=None, **small).fit(X, y)
    np.testing.assert_array_equal(everything.scores_, nothing_cut.scores_)
    np.testing.assert_array_equal(auto.scores_, cut.scores_)
    pd.testing.assert_frame_equal(auto.pareto_weights_, cut.pareto_weights_)
    assert everything.preselected_ is None
    assert (everything.pareto_weights_ > 0).sum(axis=1).max() > AUTO_WIDTH


def test_a_long_search_warns_before_it_starts(bench, monkeypatch):
    import moweights.weighting.ranker as module
    from moweights.weighting.width import search_seconds

    X, y = bench
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a small search: no warning
        warnings.simplefilter("ignore", ConstantFeatureWarning)
        MOWeighting(n_gen=3, pop_size=8, random_state=0).fit(X, y)
    monkeypatch.setattr(module, "SLOW_SEARCH", 0.0)
    for objectives in ("paper", "relevance"):
        with pytest.warns(UserWarning, match=r"search over 8 weights \(24 evaluations on 100 "):
            MOWeighting(objectives=objectives, n_gen=3, pop_size=8, random_state=0).fit(X, y)
    # the estimate: linear in samples, weights and evaluations; C4 reads the pairs
    base = search_seconds(200, 1000, ["C1", "C2"], 0, 100)
    assert search_seconds(400, 1000, ["C1", "C2"], 0, 100) == pytest.approx(2 * base)
    assert search_seconds(200, 3000, ["C1"], 0, 300) == pytest.approx(9 * base)
    four = search_seconds(200, 1000, ["C4"], 19900, 100)
    assert search_seconds(200, 1000, ["C4"], 9950, 100) == pytest.approx(four / 2)
    assert search_seconds(200, 1000, ["C4"], 19900, 100, "double") > four


def test_preselect_weighs_only_the_filters_top_features(wide):
    X, y = wide.X, wide.y
    est = MOWeighting(preselect=10, n_gen=15, pop_size=12, random_state=0).fit(X, y)
    anova = rankers.get("anova_f").fit(X, y)
    top = set(X.columns[anova.ranking_[:10]])
    assert set(est.preselected_) == top
    W = est.pareto_weights_
    assert (W.drop(columns=sorted(top)) == 0).all().all()  # the others weigh 0
    # the searched features come first, the others follow in the filter's order
    order = list(X.columns[est.ranking_])
    assert set(order[:10]) == top
    assert order[10:] == [c for c in X.columns[anova.ranking_] if c not in top]
    again = MOWeighting(preselect=10, n_gen=15, pop_size=12, random_state=0).fit(X, y)
    np.testing.assert_array_equal(again.scores_, est.scores_)
    pd.testing.assert_frame_equal(again.pareto_weights_, est.pareto_weights_)


def test_seeded_population_holds_the_filters_top_sets():
    from moweights.weighting.width import seeded_population

    orders = [np.array([3, 1, 0, 2, 4]), np.array([1, 3, 4, 0, 2])]
    pop = seeded_population(orders, 10, np.random.default_rng(0))
    # t = 1, 2, 4, 5 from each filter in turn, duplicates skipped, at most half of 10
    expected = [[3], [1], [1, 3], [0, 1, 2, 3], [0, 1, 3, 4]]
    for row, members in zip(pop[:5], expected, strict=True):
        assert np.flatnonzero(row).tolist() == members
        assert set(row[members]) == {1.0}
    again = seeded_population(orders, 10, np.random.default_rng(0))
    np.testing.assert_array_equal(pop, again)
    assert ((pop[5:] > 0) & (pop[5:] < 1)).all()  # the rest is uniform random


def test_seed_rankers_are_used_and_reproducible(wide):
    X, y = wide.X, wide.y
    params = dict(
        objectives="paper", seed_rankers=("anova_f", "fisher_score"), n_gen=10, pop_size=12
    )
    a = MOWeighting(random_state=1, **params).fit(X, y)
    b = MOWeighting(random_state=1, **params).fit(X, y)
    pd.testing.assert_frame_equal(a.pareto_weights_, b.pareto_weights_)
    np.testing.assert_array_equal(a.ranking_, b.ranking_)
    plain = MOWeighting(objectives="paper", random_state=1, n_gen=10, pop_size=12).fit(X, y)
    assert not a.pareto_weights_.equals(plain.pareto_weights_)
    # an estimator works as well as its name, and is cloned, not fitted in place
    filt = rankers.get("anova_f")
    c = MOWeighting(random_state=1, **{**params, "seed_rankers": [filt, "fisher_score"]})
    np.testing.assert_array_equal(c.fit(X, y).ranking_, a.ranking_)
    assert not hasattr(filt, "scores_")


def test_seeding_finds_planted_features_the_plain_search_misses():
    from moweights.data import make_planted

    data = make_planted("clusters", n_samples=100, n_features=400, informative=8, random_state=2)
    params = dict(objectives="paper", n_gen=40, random_state=0)
    plain = MOWeighting(**params).fit(data.X, data.y)
    seeded = MOWeighting(seed_rankers="anova_f", **params).fit(data.X, data.y)
    p_plain, _ = data.recovery(data.X.columns[plain.ranking_])
    p_seeded, _ = data.recovery(data.X.columns[seeded.ranking_])
    assert p_seeded > p_plain, (p_seeded, p_plain)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"preselect": 0}, "preselect"),
        ({"preselect": 2.5}, "preselect"),
        ({"preselect": "10"}, "preselect"),
        ({"preselect": "every"}, "preselect"),
        ({"seed_rankers": "no_such_ranker"}, "seed_rankers"),
        ({"seed_rankers": [3]}, "seed_rankers"),
        ({"seed_rankers": ()}, "seed_rankers"),
        ({"seed_rankers": 7}, "seed_rankers"),
        ({"seed_rankers": "anova_f", "objectives": ("C4",)}, "seed_rankers.*unsupervised"),
    ],
)
def test_bad_width_parameters_name_themselves(bench, params, match):
    X, y = bench
    with pytest.raises(InvalidParameterError, match=match):
        MOWeighting(n_gen=2, pop_size=8, **params).fit(X, y)


@pytest.mark.parametrize("objectives", [("-C2", "-C4"), ("C1", "-C2", "-C3", "C4")])
def test_single_precision_entropy_keeps_the_papers_ranking_blocks(bench, objectives):
    # pinned: on the paper's data (80 x 250, seed 0) single and double precision C4 give
    # the same blocks, label first, the four informative f2..f6 next, noise and constant
    # features last; within a block the order may differ, as it does between seeds
    X, y = bench
    got = {}
    for precision in ("single", "double"):
        est = MOWeighting(objectives=objectives, entropy_precision=precision, random_state=0)
        order = list(X.columns[est.fit(X, y).ranking_])
        assert order[0] == "f1", (precision, order)
        assert set(order[1:6]) == {"f2", "f3", "f4", "f5", "f6"}, (precision, order)
        assert set(order[6:]) == {"f7", "f8", "f9", "f10"}, (precision, order)
        got[precision] = order
    assert got["single"][:1] == got["double"][:1]


def test_the_default_is_the_relevance_set_searched_from_anova_f(bench):
    X, y = bench
    est = MOWeighting(random_state=0).fit(X, y)  # 80 x 250, as the paper's search
    assert list(est.pareto_objectives_.columns) == ["-NCA", "-FR", "SP"]
    seeded = MOWeighting(
        objectives=("-NCA", "-FR", "SP"),
        seed_rankers="anova_f",
        random_state=0,
    ).fit(X, y)
    np.testing.assert_array_equal(est.scores_, seeded.scores_)
    # the class label first, the constant and uniform-noise features last
    order = list(X.columns[est.ranking_])
    assert order[0] == "f1" and set(order[-4:]) == {"f7", "f8", "f9", "f10"}, order


def test_a_seeded_front_orders_equal_weights_by_the_filters(wide):
    X, y = wide.X, wide.y
    est = MOWeighting(n_gen=8, pop_size=12, random_state=0).fit(X, y)
    W = est.pareto_weights_.to_numpy()
    n = W.shape[1]
    anova = rankers.get("anova_f").fit(X, y)
    position = np.empty(n)
    position[anova.ranking_] = np.arange(n)
    # each solution's strict ranking: weight descending, equal weights in anova_f's order
    ranks = np.empty_like(W)
    for row, w in enumerate(W):
        ranks[row, np.lexsort((position, -w))] = np.arange(1, n + 1)
    np.testing.assert_allclose(est.scores_, n + 1 - ranks.mean(axis=0))
    never = (W == 0).all(axis=0)
    assert never.sum() > 10  # a sparse front: most features no solution weighs
    tail = [i for i in est.ranking_ if never[i]]
    assert tail == [i for i in anova.ranking_ if never[i]]


def test_the_default_finds_planted_features_among_uniform_noise():
    # the paper's criteria put every one of these below the noise (docs/guide/weighting.md)
    rng = np.random.default_rng(7)
    y = np.repeat([0, 1], 100)
    X = np.hstack([y[:, None] + rng.normal(size=(200, 5)), rng.uniform(size=(200, 20))])
    est = MOWeighting(n_gen=100, pop_size=40, random_state=0).fit(X, y)
    assert set(est.ranking_[:5]) == set(range(5))
    paper = MOWeighting(objectives="paper", n_gen=100, pop_size=40, random_state=0).fit(X, y)
    assert len(set(paper.ranking_[:5]) & set(range(5))) < 5


def test_pure_noise_ranks_as_noise():
    from aggregation.evaluation import class_curve

    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.normal(size=(80, 30)), columns=[f"x{i}" for i in range(30)])
    y = rng.integers(0, 2, size=80)
    params = {"n_gen": 10, "pop_size": 12, "random_state": 0}
    curve = class_curve("mo_weighting", X, y, params=params, ks=[1, 4, 16], cv=5, random_state=0)
    # balanced accuracy of a 5NN on the selected features of pure noise: chance level
    assert (curve["mean"] - 0.5).abs().max() < 0.12, curve


def test_the_relevance_criteria_memory_estimate_holds():
    import tracemalloc

    from moweights.weighting.criteria import peak_bytes

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(220, 60)), np.repeat([0, 1], 110)
    est = MOWeighting(pop_size=40, n_gen=2, random_state=0)
    tracemalloc.start()
    try:
        est.fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    estimate = peak_bytes(220, 60, ("NCA", "SP"), 20000, 40)
    assert 1 / 1.5 <= estimate / peak <= 2.5, (estimate, peak)
