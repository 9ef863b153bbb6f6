"""What BaseRanker.fit hands ``_score``: the FitContext argument and the Scores return
(docs/design.md, "The ranker contract")."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

import rankers
from rankers import BaseRanker, FitContext, Scores
from rankers.exceptions import InvalidInputError

pytestmark = pytest.mark.quick  # in the quick suite (pytest -m quick): see pyproject.toml


class _Seeing(BaseRanker):
    """Keeps the context it was handed; scores by the column maxima."""

    scale_invariant = True  # fit rescales X by a power of two

    def _score_units(self) -> int:
        return 1  # a maximum is in the units of X

    def _score(self, X, y, context):
        type(self).seen = context
        return X.max(axis=0)


def test_score_receives_the_columns_it_sees_at_its_scale():
    # column 1 constant; the largest value of X is 24 = 0.75 * 2**5, so X is divided by 32
    X = np.array([[1.0, 5.0, -24.0], [3.0, 5.0, 2.0], [2.0, 5.0, 8.0]])
    with pytest.warns(rankers.exceptions.ConstantFeatureWarning):
        est = _Seeing().fit(X)
    ctx = _Seeing.seen
    assert isinstance(ctx, FitContext)
    assert ctx.scale_shift == 5
    assert ctx.informative.tolist() == [True, False, True]
    assert ctx.top.tolist() == [3 / 32, 24 / 32]  # |max| of columns 0 and 2, as _score sees them
    assert ctx.column_pass is None  # the default hook takes nothing beside the extremes
    assert est.scores_.tolist() == [3.0, 0.0, 8.0]  # the maxima, back in the units of X


def test_the_context_is_frozen_and_fit_keeps_no_scratch():
    X = np.random.default_rng(0).normal(size=(20, 4))
    est = _Seeing().fit(X)
    ctx = _Seeing.seen
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.scale_shift = 0
    with pytest.raises(ValueError, match="read-only"):
        ctx.top[0] = 1.0
    private = {k for k in vars(est) if k.startswith("_") and k != "_validated_params"}
    assert private == set()


@pytest.mark.parametrize("name", sorted(rankers.available()["name"]))
def test_no_ranker_keeps_fits_scratch_attributes(name, small_classification):
    # the protocol fit and _score shared before FitContext: attributes set and deleted
    X, y = small_classification
    cls = rankers.get_class(name)
    est = cls(**getattr(cls, "_contract_test_params", {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    old = {"_column_lo", "_column_hi", "_column_s1", "_column_s2", "_column_stats",
           "_column_top", "_score_order", "_scale_shift"}  # fmt: skip
    assert old.isdisjoint(vars(est))


class _Ordered(BaseRanker):
    """Returns its scores with an order it claims they are sorted in."""

    claimed = None

    def _score(self, X, y, context):
        scores = np.array([0.5, 2.0, 1.0, 2.0])
        return Scores(scores, type(self).claimed)


@pytest.mark.parametrize(
    "claimed",
    [None, np.array([1, 3, 2, 0]), np.array([0, 1, 2, 3]), np.array([3, 1, 2, 0])],
    ids=["none", "right", "wrong", "unstable"],
)
def test_a_returned_order_saves_the_sort_never_changes_the_ranking(claimed, monkeypatch):
    monkeypatch.setattr(_Ordered, "claimed", claimed)
    X = np.arange(12.0).reshape(3, 4) ** 2
    est = _Ordered().fit(X)
    assert est.scores_.tolist() == [0.5, 2.0, 1.0, 2.0]
    assert est.ranking_.tolist() == [1, 3, 2, 0]  # the tie 1 ~ 3 by lower index


def test_to_data_units_by_hand():
    ctx = FitContext(top=np.ones(1), scale_shift=3, informative=np.ones(1, bool))
    assert ctx.to_data_units([1.0, 0.5], 2).tolist() == [64.0, 32.0]  # times (2**3)**2
    assert ctx.to_data_units([8.0], -1).tolist() == [1.0]
    assert ctx.to_data_units([8.0], 0).tolist() == [8.0]
    assert FitContext(np.ones(1), 0, np.ones(1, bool)).to_data_units([3.0], 2).tolist() == [3.0]
    huge = FitContext(top=np.ones(1), scale_shift=600, informative=np.ones(1, bool))
    assert np.isinf(huge.to_data_units([1.0], 2)).all()  # unnamed values follow IEEE
    with pytest.raises(InvalidInputError, match="the scores are in units of X\\*\\*2"):
        huge.to_data_units([1.0], 2, "the scores")
