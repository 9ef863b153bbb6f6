"""Progress callbacks of the long-running functions: the calls add up to the documented total,
arrive as the work finishes, and change no result (whatever n_jobs)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from tqdm import tqdm

from aggregation.evaluation import (
    cluster_scores,
    curve_grid,
    eca,
    expected_curve,
    ffa_rfa,
    ffa_rfa_many,
    topk_curve,
)
from aggregation.federated import rank_sites
from aggregation.ranking import Ranking
from rankers.exceptions import InvalidParameterError


class Calls(list):
    """A progress callback that records every call."""

    def __call__(self, n: int) -> None:
        assert isinstance(n, int) and n > 0
        self.append(n)


def _data(m=60, n=6, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], m // 3)
    X = rng.normal(size=(m, n))
    X[:, 0] += 2.0 * y
    X[:, 3] -= 1.5 * y
    return pd.DataFrame(X, columns=[f"f{j}" for j in range(n)]), y


def _same_frames(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a, b)
    assert a.attrs == b.attrs


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_topk_curve_counts_folds(n_jobs):
    X, _ = _data()
    calls = Calls()
    got = topk_curve("variance", X, cv=4, random_state=0, progress=calls, n_jobs=n_jobs)
    assert calls == [1, 1, 1, 1]  # one per fold, as each finishes
    _same_frames(got, topk_curve("variance", X, cv=4, random_state=0))


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_ffa_rfa_counts_grid_points(n_jobs):
    X, y = _data()
    order = ["f0", "f3", "f1", "f2", "f4", "f5"]
    calls = Calls()
    got = ffa_rfa(order, X, y, cv=3, random_state=0, progress=calls, n_jobs=n_jobs)
    assert sum(calls) == len(curve_grid("every", 6)) == 6
    # one call per finished subset at most: FFA(n) = RFA(n) is scored once
    assert 1 < len(calls) <= 2 * 6 - 1
    _same_frames(got, ffa_rfa(order, X, y, cv=3, random_state=0))


def test_ffa_rfa_many_counts_every_ranking_even_when_subsets_are_shared():
    X, y = _data()
    a = ["f0", "f3", "f1", "f2", "f4", "f5"]
    rankings = [a, a, list(reversed(a))]
    calls = Calls()
    got = ffa_rfa_many(rankings, X, y, cv=3, grid="geometric", random_state=0, progress=calls)
    assert sum(calls) == 3 * len(curve_grid("geometric", 6))
    for curve, ranking in zip(got, rankings, strict=True):
        _same_frames(curve, ffa_rfa(ranking, X, y, cv=3, grid="geometric", random_state=0))


def test_expected_curve_counts_grid_points_of_the_random_rankings():
    X, y = _data()
    calls = Calls()
    got = expected_curve(X, y, n_random=4, cv=3, grid=2, random_state=0, progress=calls)
    assert sum(calls) == 4 * len(curve_grid(2, 6))
    _same_frames(got, expected_curve(X, y, n_random=4, cv=3, grid=2, random_state=0))


def test_eca_passes_progress_to_every_curve_it_computes():
    X, y = _data()
    a = Ranking.from_order(["f0", "f3", "f1", "f2", "f4", "f5"])
    calls = Calls()
    params = {"cv": 3, "grid": "geometric", "random_state": 0}
    got = eca(a, "random", weighting="magnitude", X=X, y=y, n_random=3, progress=calls, **params)
    n_grid = len(curve_grid("geometric", 6))
    assert sum(calls) == n_grid + 3 * n_grid
    assert got == eca(a, "random", weighting="magnitude", X=X, y=y, n_random=3, **params)
    # from curves alone nothing is computed, so nothing is reported
    curve = ffa_rfa(a, X, y, **params)
    calls.clear()
    eca(curve, "random", progress=calls)
    assert calls == []


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_cluster_scores_counts_runs(n_jobs):
    X, y = _data()
    calls = Calls()
    kw = {"k_features": [1, 2, 3], "n_restarts": 2, "random_state": 0}
    got = cluster_scores(X, y, ["f0", "f3", "f1"], progress=calls, n_jobs=n_jobs, **kw)
    assert calls == [1] * 6
    _same_frames(got, cluster_scores(X, y, ["f0", "f3", "f1"], **kw))


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_rank_sites_counts_sites_failed_ones_too(n_jobs):
    X, _ = _data()
    sites = {"a": X.iloc[:20], "b": X.iloc[20:40], "c": X.iloc[40:], "bad": lambda: 1 / 0}
    calls = Calls()
    got = rank_sites(sites, "variance", progress=calls, n_jobs=n_jobs)
    assert calls == [1, 1, 1, 1]
    assert set(got.failed) == {"bad"}
    assert got.aggregated == rank_sites(sites, "variance").aggregated


def test_a_tqdm_bar_is_a_progress_callback():
    X, _ = _data()
    with tqdm(total=5, file=io.StringIO()) as bar:
        topk_curve("variance", X, cv=5, random_state=0, progress=bar.update)
        assert bar.n == 5


@pytest.mark.parametrize(
    "call",
    [
        lambda X, y, p: topk_curve("variance", X, cv=3, progress=p),
        lambda X, y, p: ffa_rfa(list(X.columns), X, y, cv=3, progress=p),
        lambda X, y, p: expected_curve(X, y, n_random=2, cv=3, progress=p),
        lambda X, y, p: eca(list(X.columns), X=X, y=y, cv=3, progress=p),
        lambda X, y, p: cluster_scores(X, y, progress=p),
        lambda X, y, p: rank_sites({"a": X}, "variance", progress=p),
    ],
)
def test_a_progress_that_is_no_callable_is_refused_before_any_work(call):
    X, y = _data()
    with pytest.raises(InvalidParameterError, match="progress must be None or a callable"):
        call(X, y, 5)
