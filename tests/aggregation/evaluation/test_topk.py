"""The top-k kNN curve (docs/design.md, "Evaluation")."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pandas as pd
import pytest

from aggregation.evaluation.topk import geometric_grid, topk_curve
from rankers import BaseRanker
from rankers.exceptions import InvalidInputError, InvalidParameterError

pytestmark = pytest.mark.quick  # in the quick suite (pytest -m quick): see pyproject.toml


def _two_pairs(m=80, seed=0):
    """f0,f1 copies of z; f2,f3 copies of w (z, w independent)."""
    rng = np.random.default_rng(seed)
    z, w = rng.normal(size=(2, m))
    eps = 1e-3 * rng.normal(size=(4, m))
    return pd.DataFrame({"f0": z + eps[0], "f1": z + eps[1], "f2": w + eps[2], "f3": w + eps[3]})


def test_geometric_grid():
    assert geometric_grid(1) == [1]
    assert geometric_grid(13) == [1, 2, 4, 8, 13]
    assert geometric_grid(64) == [1, 2, 4, 8, 16, 32, 64]


def test_good_fixed_ranking_beats_redundant_one():
    X = _two_pairs(m=300)
    good = topk_curve(["f0", "f2", "f1", "f3"], X, cv=5, random_state=0).set_index("k")
    bad = topk_curve(["f0", "f1", "f2", "f3"], X, cv=5, random_state=0).set_index("k")
    # with one copy of each latent variable, 1NN predicts everything almost exactly
    assert good.loc[2, "mean"] < 0.05
    # two copies of z leave w unpredicted: about half the (unit) variance is lost
    assert bad.loc[2, "mean"] > 0.5
    # with all features, the ranking no longer matters: the curves meet
    assert good.loc[4, "mean"] == pytest.approx(bad.loc[4, "mean"])


def test_fixed_ranking_by_indices_equals_by_names():
    X = _two_pairs()
    a = topk_curve(["f0", "f2", "f1", "f3"], X, cv=4, random_state=1)
    b = topk_curve([0, 2, 1, 3], X, cv=4, random_state=1)
    pd.testing.assert_frame_equal(a, b)


class _SpyRanker(BaseRanker):
    """Records the training sets it sees; scores = column index reversed."""

    seen: ClassVar[list] = []

    def __init__(self, k=None):
        self.k = k

    def _score(self, X, y, context):
        _SpyRanker.seen.append(np.asarray(X).copy())
        return -np.arange(X.shape[1], dtype=float)


def test_ranking_is_refit_on_each_training_fold():
    X = _two_pairs(m=50)
    _SpyRanker.seen = []
    topk_curve(_SpyRanker(), X, cv=5, random_state=0)
    assert len(_SpyRanker.seen) == 5
    assert all(s.shape == (40, 4) for s in _SpyRanker.seen)
    # the five training sets differ: each leaves out its own test fold
    sums = {round(float(s.sum()), 9) for s in _SpyRanker.seen}
    assert len(sums) == 5


def test_same_seed_same_curve_whatever_n_jobs():
    X = _two_pairs()
    a = topk_curve("variance", X, cv=5, random_state=3, n_jobs=1)
    b = topk_curve("variance", X, cv=5, random_state=3, n_jobs=2)
    pd.testing.assert_frame_equal(a, b)
    r1 = topk_curve("random", X, cv=5, random_state=3, n_jobs=1)
    r2 = topk_curve("random", X, cv=5, random_state=3, n_jobs=2)
    pd.testing.assert_frame_equal(r1, r2)


def test_rmse_is_root_of_mse_per_fold():
    X = _two_pairs()
    mse = topk_curve("variance", X, cv=4, random_state=0, return_folds=True)
    rmse = topk_curve("variance", X, cv=4, random_state=0, metric="rmse", return_folds=True)
    np.testing.assert_allclose(rmse["value"], np.sqrt(mse["value"]))
    assert list(mse.columns) == ["k", "fold", "metric", "value"]


def test_rmae_uses_five_neighbours_by_default():
    X = _two_pairs()
    five = topk_curve(["f0", "f2", "f1", "f3"], X, cv=4, metric="rmae", random_state=0)
    one = topk_curve(
        ["f0", "f2", "f1", "f3"], X, cv=4, metric="rmae", n_neighbors=1, random_state=0
    )
    assert not np.allclose(five["mean"], one["mean"])
    assert (five["mean"] > 0).all()


def test_bad_arguments_are_named():
    X = _two_pairs(m=8)
    with pytest.raises(InvalidParameterError, match="cv=10 folds but X has only 8"):
        topk_curve("variance", X)
    with pytest.raises(InvalidParameterError, match="metric must be one of"):
        topk_curve("variance", X, cv=2, metric="mae")
    with pytest.raises(InvalidParameterError, match=r"ks must lie in 1..4"):
        topk_curve("variance", X, cv=2, ks=[1, 9])
    with pytest.raises(InvalidInputError, match="not in X"):
        topk_curve(["f0", "zz", "f1", "f3"], X, cv=2)
    with pytest.raises(InvalidInputError, match="exactly once"):
        topk_curve(["f0", "f0", "f1", "f3"], X, cv=2)
    with pytest.raises(InvalidParameterError, match="n_neighbors=5"):
        topk_curve("variance", X, cv=2, n_neighbors=5)


def test_feature_constant_on_a_training_fold_is_no_target():
    # f4 is 0 everywhere but on one sample, where it is huge: on the nine training
    # folds without that sample it is constant, and every ranking predicts it as 0
    X = _two_pairs(m=100)
    spike = np.zeros(len(X))
    spike[7] = 1e6
    with_spike = X.assign(f4=spike)
    base = topk_curve(["f0", "f2", "f1", "f3"], X, cv=10, random_state=0)
    spiked = topk_curve(["f0", "f2", "f1", "f3", "f4"], with_spike, cv=10, random_state=0)
    # the fold holding the spike leaves f4 out of its targets, so no 1e12 error appears;
    # the other folds have f4 as a target that is near-zero after standardising
    assert spiked["mean"].max() < 10
    good = spiked.set_index("k").loc[2, "mean"]
    assert good == pytest.approx(base.set_index("k").loc[2, "mean"], abs=0.1)
