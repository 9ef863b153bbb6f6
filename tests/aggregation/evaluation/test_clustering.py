"""Clustering evaluation of rankings (Distance Rank paper, §4.3)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import f1_score, normalized_mutual_info_score

from aggregation.evaluation.clustering import (
    METRICS,
    cluster_scores,
    clustering_metrics,
    match_clusters,
    two_step_metrics,
)
from aggregation.ranking import Ranking
from rankers.exceptions import InvalidInputError, InvalidParameterError
from rankers.unsupervised.variance import VarianceRanker


@settings(max_examples=30)
@given(
    labels=st.lists(st.integers(0, 4), min_size=2, max_size=40),
    perm_seed=st.integers(0, 2**16),
)
def test_permuted_labels_score_perfectly(labels, perm_seed):
    y = np.array(labels)
    perm = np.random.default_rng(perm_seed).permutation(10)
    clusters = perm[y] + 100  # other names, other order
    out = clustering_metrics(y, clusters)
    assert out["acc"] == 1.0
    assert out["f1_weighted"] == pytest.approx(1.0)
    assert out["nmi"] == pytest.approx(1.0)
    np.testing.assert_array_equal(match_clusters(y, clusters), np.unique(y, return_inverse=True)[1])


def test_hand_worked_confusion():
    # contingency (rows = classes 0, 1, 2; columns = clusters a, b, c):
    #   0: 3 1 0    1: 0 2 1    2: 0 0 3       matching 0-a, 1-b, 2-c keeps 8 of 10
    # F1: class 0 P = 3/3, R = 3/4 -> 6/7; class 1 P = 2/3, R = 2/3 -> 2/3;
    # class 2 P = 3/4, R = 1 -> 6/7. F1W = (4 * 6/7 + 3 * 2/3 + 3 * 6/7) / 10 = 0.8
    y = [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]
    clusters = ["a", "a", "a", "b", "b", "b", "c", "c", "c", "c"]
    np.testing.assert_array_equal(match_clusters(y, clusters), [0, 0, 0, 1, 1, 1, 2, 2, 2, 2])
    out = clustering_metrics(y, clusters)
    assert out["acc"] == pytest.approx(0.8)
    assert out["f1_weighted"] == pytest.approx(0.8)
    assert out["nmi"] == pytest.approx(normalized_mutual_info_score(y, clusters))
    assert tuple(out) == METRICS


def test_more_clusters_than_classes():
    # cluster 9 is left unmatched: its samples count as errors
    y = [0, 0, 0, 1, 1, 1]
    clusters = [5, 5, 9, 6, 6, 6]
    matched = match_clusters(y, clusters)
    np.testing.assert_array_equal(matched, [0, 0, -1, 1, 1, 1])
    out = clustering_metrics(y, clusters)
    assert out["acc"] == pytest.approx(5 / 6)
    # class 0: P = 1, R = 2/3 -> 0.8; class 1: 1
    assert out["f1_weighted"] == pytest.approx((3 * 0.8 + 3 * 1.0) / 6)
    expected = f1_score(y, matched, labels=[0, 1], average="weighted")
    assert out["f1_weighted"] == pytest.approx(expected)


def test_fewer_clusters_than_classes():
    # one cluster for two classes: class 2 gets no cluster and F1 = 0
    y = [0, 0, 1, 1, 2, 2]
    clusters = [0, 0, 1, 1, 1, 1]
    out = clustering_metrics(y, clusters)
    assert out["acc"] == pytest.approx(4 / 6)
    # class 0: 1; class 1: P = 2/4, R = 1 -> 2/3; class 2: 0
    assert out["f1_weighted"] == pytest.approx((2 * 1.0 + 2 * 2 / 3 + 0.0) / 6)


@settings(max_examples=30)
@given(
    y=st.lists(st.integers(0, 3), min_size=4, max_size=30),
    seed=st.integers(0, 2**16),
    n_clusters=st.integers(1, 5),
)
def test_f1_weighted_agrees_with_sklearn_after_matching(y, seed, n_clusters):
    clusters = np.random.default_rng(seed).integers(0, n_clusters, size=len(y))
    matched = match_clusters(y, clusters)
    classes = np.unique(y, return_inverse=True)[1]
    expected = f1_score(
        classes, matched, labels=np.arange(classes.max() + 1), average="weighted", zero_division=0
    )
    assert clustering_metrics(y, clusters)["f1_weighted"] == pytest.approx(expected)


def test_two_step_hand_example():
    # major class 0 (6 samples), minor classes 1 and 2 (2 each). Global matching:
    # 0-a, 1-b, 2-c. Step 1 (major vs minor): predicted major = cluster a, so the major
    # class has 5 of 6 right and one minor-2 sample is called major: F1(major) = 5/6,
    # F1(minor) = 3/4, F1W = (6 * 5/6 + 4 * 3/4) / 10 = 0.8, ACC = 0.8.
    # Step 2 (minor samples only, matched anew): y = 1 1 2 2, clusters b b c a ->
    # ACC = 3/4, F1W = (2 * 1 + 2 * 2/3) / 4 = 5/6.
    y = [0, 0, 0, 0, 0, 0, 1, 1, 2, 2]
    clusters = ["a", "a", "a", "a", "a", "b", "b", "b", "c", "a"]
    out = two_step_metrics(y, clusters)
    assert out["major_vs_minor"]["f1_weighted"] == pytest.approx(0.8)
    assert out["major_vs_minor"]["acc"] == pytest.approx(0.8)
    assert out["within_minor"]["acc"] == pytest.approx(0.75)
    assert out["within_minor"]["f1_weighted"] == pytest.approx(5 / 6)
    assert out["within_minor"]["nmi"] == pytest.approx(
        normalized_mutual_info_score([1, 1, 2, 2], ["b", "b", "c", "a"])
    )
    assert out["all"] == clustering_metrics(y, clusters)
    # naming the major class explicitly gives the same result
    assert two_step_metrics(y, clusters, major=0) == out


def test_two_step_matches_minor_classes_anew():
    # minor class 2 sits inside the major cluster a: step 1 counts it as missed, step 2
    # (clusters matched anew among the minor samples) still sees 1 and 2 apart
    y = [0, 0, 0, 0, 0, 0, 1, 1, 2, 2]
    clusters = ["a"] * 6 + ["b", "b", "a", "a"]
    out = two_step_metrics(y, clusters)
    assert out["major_vs_minor"]["acc"] == pytest.approx(0.8)
    assert out["within_minor"]["acc"] == 1.0
    assert out["within_minor"]["f1_weighted"] == pytest.approx(1.0)
    assert out["all"]["acc"] == pytest.approx(0.8)


def test_two_step_needs_two_minor_classes():
    with pytest.raises(InvalidInputError, match="two minor classes"):
        two_step_metrics([0, 0, 1], [0, 0, 1])
    with pytest.raises(InvalidInputError, match="major=7"):
        two_step_metrics([0, 0, 1, 2], [0, 0, 1, 2], major=7)


def _blobs(seed=0):
    """Two features separate 3 classes; four are noise."""
    rng = np.random.default_rng(seed)
    y = np.repeat(["p", "q", "r"], 15)
    centres = {"p": (0.0, 0.0), "q": (10.0, 0.0), "r": (0.0, 10.0)}
    informative = np.array([centres[c] for c in y]) + rng.normal(scale=0.5, size=(45, 2))
    X = np.column_stack([rng.normal(size=(45, 2)), informative, rng.normal(size=(45, 2))])
    return pd.DataFrame(X, columns=[f"f{i}" for i in range(6)]), y


def test_cluster_scores_on_planted_features():
    X, y = _blobs()
    # seeded: one k-means++ start in five can land two centres in one blob (2 of 100 seeds
    # have such a restart here), which the mean over the restarts then shows
    table = cluster_scores(
        X, y, ["f2", "f3", "f0", "f1", "f4", "f5"], k_features=[2, 6], random_state=0
    )
    assert list(table.columns) == [
        "k_features",
        "evaluation",
        "metric",
        "mean",
        "std",
        "n_restarts",
    ]
    assert table["k_features"].tolist() == [2, 2, 2, 6, 6, 6]
    assert table["metric"].tolist() == list(METRICS) * 2
    top = table[table["k_features"] == 2].set_index("metric")["mean"]
    np.testing.assert_allclose(top, 1.0)  # the two informative features separate the blobs
    assert (table["n_restarts"] == 5).all()


def test_ranking_inputs_agree():
    X, y = _blobs(1)
    order = ["f3", "f2", "f5", "f0", "f1", "f4"]
    by_names = cluster_scores(X, y, order, k_features=[1, 3], random_state=3)
    by_index = cluster_scores(X, y, [3, 2, 5, 0, 1, 4], k_features=[1, 3], random_state=3)
    by_ranking = cluster_scores(X, y, Ranking.from_order(order), k_features=[1, 3], random_state=3)
    pd.testing.assert_frame_equal(by_names, by_index)
    pd.testing.assert_frame_equal(by_names, by_ranking)
    fitted = VarianceRanker().fit(X)
    by_ranker = cluster_scores(X, y, fitted, k_features=2, random_state=3)
    by_order = cluster_scores(X, y, list(fitted.ranking_), k_features=2, random_state=3)
    pd.testing.assert_frame_equal(by_ranker, by_order)


def test_same_seed_same_table_and_runs_average():
    X, y = _blobs(2)
    a = cluster_scores(X, y, k_features=[1, 4], random_state=0, n_jobs=2)
    b = cluster_scores(X, y, k_features=[1, 4], random_state=0)
    pd.testing.assert_frame_equal(a, b)
    runs = cluster_scores(X, y, k_features=[1, 4], random_state=0, return_runs=True)
    assert len(runs) == 2 * 5 * 3
    summary = runs.groupby(["k_features", "metric"])["value"].agg(["mean", "std"])
    for _, row in b.iterrows():
        expected = summary.loc[(row["k_features"], row["metric"])]
        assert row["mean"] == pytest.approx(expected["mean"])
        assert row["std"] == pytest.approx(expected["std"])


def test_two_step_rows_in_cluster_scores():
    rng = np.random.default_rng(4)
    y = np.repeat([0, 1, 2, 3], [40, 6, 6, 6])
    X = (
        rng.normal(scale=0.3, size=(58, 3))
        + np.array([[0, 0], [5, 0], [0, 5], [5, 5]])[y][:, [0, 1, 0]]
    )
    table = cluster_scores(X, y, two_step=True, random_state=0, return_runs=True)
    assert set(table["evaluation"]) == {"all", "major_vs_minor", "within_minor"}
    for _, run in table.groupby("restart"):
        values = run.set_index(["evaluation", "metric"])["value"]
        assert values["all", "acc"] == pytest.approx(1.0)
        assert values["within_minor", "acc"] == pytest.approx(1.0)


def test_bad_inputs_raise():
    X, y = _blobs()
    with pytest.raises(InvalidParameterError, match="k_features"):
        cluster_scores(X, y, k_features=7)
    with pytest.raises(InvalidInputError, match="not in X"):
        cluster_scores(X, y, ["f0", "nope"])
    with pytest.raises(InvalidInputError, match="more than once"):
        cluster_scores(X, y, [0, 0, 1])
    with pytest.raises(InvalidInputError, match="44 labels"):
        cluster_scores(X, y[:-1])
    with pytest.raises(InvalidParameterError, match="n_restarts"):
        cluster_scores(X, y, n_restarts=0)
    with pytest.raises(InvalidInputError, match="two minor classes"):
        cluster_scores(X, np.repeat([0, 1], [40, 5]), two_step=True)
