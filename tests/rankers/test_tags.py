"""A ranker's capabilities come from the estimator itself: ``rankers.ranker_tags``."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.feature_selection import RFE, SelectFromModel, SelectKBest, VarianceThreshold
from sklearn.linear_model import LogisticRegression
from sklearn.utils import Tags, get_tags

import rankers
from rankers import RankerTags, ranker_tags
from rankers.exceptions import ConstantFeatureWarning, InvalidParameterError

pytestmark = pytest.mark.quick  # in the quick suite (pytest -m quick): see pyproject.toml

NAMES = list(rankers.available()["name"])
FIELDS = ("requires_y", "target_kind", "accepts_sparse", "progress", "deterministic")


@pytest.mark.parametrize("name", NAMES)
def test_every_ranker_answers_through_sklearn_tags(name):
    est = rankers.get(name)
    tags = get_tags(est)  # scikit-learn's own reader accepts the extended tags
    assert isinstance(tags, RankerTags) and isinstance(tags, Tags)
    assert ranker_tags(est) == tags
    assert tags.target_tags.required is tags.requires_y
    assert tags.target_kind in {"unsupervised", "classification", "regression", "both"}
    assert tags.requires_y == (tags.target_kind != "unsupervised")
    cls = type(est)
    assert tags.accepts_sparse is cls.accepts_sparse
    assert tags.deterministic is cls.deterministic
    # with its default parameters a ranker is as scale invariant as its class says
    assert tags.scale_invariant is cls.scale_invariant
    assert all(isinstance(getattr(tags, f), bool) for f in FIELDS if f != "target_kind")


def _progress_output(est, X, y, capfd) -> str:
    capfd.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantFeatureWarning)
        est.fit(X, y)
    return capfd.readouterr().err


@pytest.mark.parametrize("name", NAMES)
def test_progress_tag_is_what_verbose_does(name, small_classification, capfd):
    """Where the tag says so, verbose=1 draws a tqdm bar on stderr and verbose=0 nothing."""
    est = rankers.get(name)
    if not ranker_tags(est).progress:
        assert "verbose" not in est.get_params() or type(est).progress_bar is False, (
            "a ranker with a verbose parameter says whether it draws a bar"
        )
        return
    X, y = small_classification
    est.set_params(**type(est)._contract_test_params)
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    assert _progress_output(est.set_params(verbose=0), X, y, capfd) == ""
    drawn = _progress_output(est.set_params(verbose=1), X, y, capfd)
    assert "it/s" in drawn or "s/it" in drawn or "%|" in drawn  # tqdm's bar


def test_the_rankers_with_a_bar():
    with_bar = {n for n in NAMES if ranker_tags(rankers.get(n)).progress}
    assert with_bar == {"svm_rfe", "agnos_s", "mo_weighting"}


def test_tags_depend_on_the_parameters():
    # the entropy criterion alone needs no labels; C1-C3 do
    assert ranker_tags(rankers.get("mo_weighting")).requires_y
    c4 = rankers.get("mo_weighting", objectives=("C4",))
    assert not ranker_tags(c4).requires_y
    assert not get_tags(c4).target_tags.required
    # without min-max scaling the compactness score follows the units of X
    assert ranker_tags(rankers.get("compactness")).scale_invariant
    assert not ranker_tags(rankers.get("compactness", scale=None)).scale_invariant


@pytest.mark.parametrize("name", ["estimator_importance", "multisurf", "random_forest"])
def test_a_ranker_for_both_kinds_of_target_fits_the_task_it_is_given(name):
    from rankers.exceptions import InvalidInputError

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    counts = np.repeat(np.arange(6), 10)  # six values, each repeated: read as classes
    params = {"random_state": 0} if name != "multisurf" else {}
    assert ranker_tags(rankers.get(name)).target_kind == "both"
    assert rankers.get(name, **params).fit(X, counts).task_ == "classification"
    forced = rankers.get(name, task="regression", **params)
    assert ranker_tags(forced).target_kind == "regression"
    assert forced.fit(X, counts).task_ == "regression"
    with pytest.raises(InvalidInputError):  # a continuous target is no class labels
        rankers.get(name, task="classification", **params).fit(X, rng.normal(size=60))
    with pytest.raises(InvalidParameterError, match="task"):
        rankers.get(name, task="quantity")


def test_c4_weighting_fits_without_y():
    X = np.random.default_rng(0).normal(size=(30, 4))
    est = rankers.get("mo_weighting", objectives=("C4",), pop_size=8, n_gen=2, random_state=0)
    assert est.fit(X).scores_.shape == (4,)


def test_a_bad_objective_keeps_the_class_word_until_fit():
    est = rankers.get("mo_weighting")
    est.objectives = ("C9",)  # set_params would not check it either
    assert ranker_tags(est).requires_y
    with pytest.raises(InvalidParameterError):
        est.fit(np.ones((10, 3)) * np.arange(10)[:, None], np.arange(10) % 2)


def test_the_registry_table_reads_the_tags():
    table = rankers.available().set_index("name")
    for name in NAMES:
        tags = ranker_tags(rankers.get(name))
        assert table.loc[name, "requires_y"] == tags.requires_y
        assert table.loc[name, "target_kind"] == tags.target_kind


def test_another_estimator_falls_back_on_sklearn_tags_and_class_attributes():
    tags = ranker_tags(RFE(LogisticRegression()))
    assert isinstance(tags, RankerTags)
    assert tags.requires_y and tags.target_kind == "classification"
    assert tags.deterministic and not tags.progress and not tags.scale_invariant
    tags = ranker_tags(SelectFromModel(RandomForestClassifier()))
    assert not tags.requires_y  # scikit-learn's tags do not require y here
    assert tags.deterministic  # its own parameters hold no random_state
    assert not ranker_tags(RandomForestClassifier()).deterministic
    assert ranker_tags(RandomForestClassifier()).target_kind == "classification"
    tags = ranker_tags(VarianceThreshold())
    assert not tags.requires_y and tags.target_kind == "unsupervised"
    assert tags.accepts_sparse  # scikit-learn's input tags say so

    class Plugin(VarianceThreshold):
        requires_y = True
        target_kind = "regression"
        deterministic = False
        scale_invariant = True

    tags = ranker_tags(Plugin())
    assert (tags.requires_y, tags.target_kind, tags.deterministic, tags.scale_invariant) == (
        True,
        "regression",
        False,
        True,
    )
    assert tags.target_tags.required


def test_a_duck_typed_ranker_gets_the_defaults():
    class Duck:
        random_state = None

        def fit(self, X, y=None):
            return self

    tags = ranker_tags(Duck())
    assert not tags.requires_y and tags.target_kind == "unsupervised"
    assert tags.deterministic  # no get_params: nothing says it draws random numbers


def test_a_class_is_refused():
    with pytest.raises(InvalidParameterError, match="instance"):
        ranker_tags(SelectKBest)


def test_ranker_tags_extend_every_sklearn_field():
    base = {f.name for f in dataclasses.fields(Tags)}
    ours = {f.name for f in dataclasses.fields(RankerTags)}
    assert base < ours
    assert ours - base == {*FIELDS, "scale_invariant", "feature_scale_invariant"}
