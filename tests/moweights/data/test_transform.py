"""Transforms as data options: ``[data] transform`` (a log, applied to the data once) and
``[data] scale`` (learnt from the rows each ranker is fitted on, inside every fold)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.preprocessing import RobustScaler, StandardScaler

import rankers
from aggregation.evaluation import cv_splits, fold_rankings
from moweights.config import parse_config
from moweights.data.transform import ScaledRanker, log_transform, scale_notes
from moweights.pipeline import run
from moweights.pipeline.steps import make_ranker, spec_key


def _units_data(seed=0, m=40, n=8):
    """Features in very different units: x0 carries the class in small units, the rest
    are noise in growing units (the raw variance ranks the noise first)."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], m // 2)
    X = rng.normal(size=(m, n)) * (10.0 ** np.arange(n) / 10.0)
    X[:, 0] = 0.01 * rng.normal(size=m) + 0.05 * y
    return pd.DataFrame(X, columns=[f"x{i}" for i in range(n)]), pd.Series(y, name="y")


# ------------------------------------------------------------------ log transforms
def test_log_transforms_are_new_tables_of_the_numeric_columns():
    X = pd.DataFrame({"g": [0.0, 1.0, 3.0, np.nan], "site": ["a", "b", "a", "b"]})
    before = X.copy()
    one, note = log_transform(X, "log1p")
    two, _ = log_transform(X, "log2p")
    pd.testing.assert_frame_equal(X, before)  # the caller's table is untouched
    np.testing.assert_array_equal(one["g"].to_numpy()[:3], np.log1p([0.0, 1.0, 3.0]))
    np.testing.assert_allclose(two["g"].to_numpy()[:3], [0.0, 1.0, 2.0], rtol=0, atol=1e-15)
    assert np.isnan(one["g"].iloc[3])  # a gap stays a gap (imputed later, if asked)
    assert one["site"].tolist() == ["a", "b", "a", "b"]
    assert "log(1 + x)" in note and "1 numeric column" in note
    same, none = log_transform(X, "none")
    assert same is X and none is None


def test_a_log_of_negative_values_is_refused_naming_the_columns():
    X = pd.DataFrame({"ok": [1.0, 2.0], "centred": [-0.5, 0.5], "lfc": [-3.0, 1.0]})
    with pytest.raises(rankers.InvalidInputError, match=r"'centred' \(min -0.5\).*'lfc'"):
        log_transform(X, "log2p")
    with pytest.raises(rankers.InvalidParameterError, match="transform must be one of"):
        log_transform(X, "log10")


# ------------------------------------------------------------------ the scaled ranker
@pytest.mark.parametrize(("scale", "Scaler"), [("standard", StandardScaler),
                                               ("robust", RobustScaler)])  # fmt: skip
def test_a_scaled_ranker_is_the_ranker_on_the_scaled_rows(scale, Scaler):
    X, y = _units_data()
    wrapped = ScaledRanker(rankers.get("laplacian"), scale=scale).fit(X, y)
    direct = rankers.get("laplacian").fit(
        pd.DataFrame(Scaler().fit_transform(X), columns=X.columns), y
    )
    np.testing.assert_array_equal(wrapped.scores_, direct.scores_)
    assert wrapped.ranking_.tolist() == direct.ranking_.tolist()
    assert list(wrapped.feature_names_in_) == list(X.columns)
    assert isinstance(wrapped.scaler_, Scaler)


def test_a_scaled_ranker_keeps_p_values_tags_and_the_estimator_contract():
    X, y = _units_data()
    est = ScaledRanker(rankers.get("t_test"))
    assert rankers.ranker_tags(est).requires_y  # the tags are the ranker's
    fitted = clone(est).fit(X, y)
    raw = rankers.get("t_test").fit(X, y)
    # a t statistic is free of the units: scaling changes nothing but the rounding
    np.testing.assert_allclose(fitted.pvalues_, raw.pvalues_, rtol=1e-9)
    np.testing.assert_allclose(fitted.qvalues_, raw.qvalues_, rtol=1e-9)
    assert est.set_params(ranker__k=3).ranker.k == 3  # nested parameters, as sklearn
    seeded = ScaledRanker(rankers.get("random_forest", n_estimators=5), random_state=3)
    assert seeded.fit(X, y).ranker_.random_state == 3


def test_fold_refits_scale_with_the_training_rows_only():
    """Each fold's ranking is the ranker on that fold's training rows scaled by their own
    mean and sd: the held-out rows never reach the scaler."""
    X, y = _units_data(m=30)
    splits = cv_splits(X, y, cv=3, random_state=0)
    folds = fold_rankings(ScaledRanker(rankers.get("variance")), X, y, cv=splits)
    laplace = fold_rankings(ScaledRanker(rankers.get("laplacian")), X, y, cv=splits)
    everyone = StandardScaler().fit(X)  # what a leaky scaler would have used
    for (train, _), ranking in zip(splits, laplace.rankings, strict=True):
        rows = X.iloc[train]
        expected = rankers.get("laplacian").fit(StandardScaler().fit_transform(rows))
        np.testing.assert_allclose(ranking.scores, expected.scores_, rtol=1e-12)
        leaky = rankers.get("laplacian").fit(everyone.transform(rows))
        assert np.abs(ranking.scores - leaky.scores_).max() > 1e-6
    # standardised, every feature has variance 1 on its training rows
    for ranking in folds.rankings:
        np.testing.assert_allclose(ranking.scores, 1.0, rtol=1e-12)


# ------------------------------------------------------------------ in a config run
def _raw(scale="none", rankers_=("variance", "laplacian", "t_test"), **evaluation):
    return {
        "data": {"path": "data.csv", "target": "y", "scale": scale},
        "rankers": [{"name": r} for r in rankers_],
        "evaluation": {"cv": 3, "topk": {"enabled": False},
                       "error_curves": {"enabled": False}, "clustering": {"enabled": False},
                       "classification": {"ks": [1, 2, 4], "n_random": 2}, **evaluation},
        "output": {"plots": False, "html": False},
        "run": {"verbose": 0},
    }  # fmt: skip


def _frame(tmp_path):
    X, y = _units_data()
    X.assign(y=y).to_csv(tmp_path / "data.csv", index=False)
    return X, y


def test_a_run_ranks_scaled_units_and_says_so(tmp_path):
    X, _ = _frame(tmp_path)
    raw = run(parse_config(_raw(), base_dir=tmp_path), tmp_path / "raw")
    scaled = run(parse_config(_raw("standard"), base_dir=tmp_path), tmp_path / "scaled")
    # raw units: the variance follows the units (the noise in the largest units first)
    assert raw.rankings["variance"].order[0] == "x7"
    # scaled: the Laplacian score of the standardised features, fitted on all rows
    expected = rankers.get("laplacian").fit(
        pd.DataFrame(StandardScaler().fit_transform(X), columns=X.columns)
    )
    np.testing.assert_array_equal(scaled.rankings["laplacian"].scores, expected.scores_)
    raw_note = " ".join(raw.notes)
    assert "variance, laplacian ranked the features in their raw units" in raw_note
    assert "t_test" not in raw_note  # its statistic is free of the units
    assert any("scale = 'standard'" in n for n in scaled.notes)
    assert not any("raw units" in n for n in scaled.notes)
    summary = (tmp_path / "scaled" / "summary.json").read_text()
    assert "scale = 'standard'" in summary


def test_the_scale_is_part_of_the_cache_key(tmp_path):
    _frame(tmp_path)
    out = tmp_path / "out"
    run(parse_config(_raw(rankers_=("variance",)), base_dir=tmp_path), out)
    again = run(parse_config(_raw("robust", rankers_=("variance",)), base_dir=tmp_path), out)
    assert "ranker variance" in again.computed  # not the unscaled fit from the cache
    assert "fold rankings variance" in again.computed  # nor the unscaled fold refits
    config = parse_config(_raw("robust", rankers_=("variance",)), base_dir=tmp_path)
    assert spec_key(config.rankers[0], config)["scale"] == "robust"
    assert "scale" not in spec_key(config.rankers[0])


def test_scaling_does_not_change_what_the_evaluation_models_see(tmp_path):
    """The kNN standardises with its training rows: for a ranker free of the units
    (t_test) the held-out class prediction is the same with or without scale."""
    _frame(tmp_path)
    a = run(parse_config(_raw(rankers_=("t_test",)), base_dir=tmp_path), tmp_path / "a")
    b = run(parse_config(_raw("standard", rankers_=("t_test",)), base_dir=tmp_path),
            tmp_path / "b")  # fmt: skip
    np.testing.assert_allclose(
        a.class_folds["value"].to_numpy(), b.class_folds["value"].to_numpy(), rtol=1e-12
    )


def test_make_ranker_wraps_only_when_asked(tmp_path):
    _frame(tmp_path)
    plain = parse_config(_raw(rankers_=("random_forest",)), base_dir=tmp_path)
    scaled = parse_config(_raw("robust", rankers_=("random_forest",)), base_dir=tmp_path)
    assert not isinstance(make_ranker(plain.rankers[0], plain, main=False), ScaledRanker)
    est = make_ranker(scaled.rankers[0], scaled, main=False)
    assert isinstance(est, ScaledRanker) and est.scale == "robust"
    assert est.random_state == scaled.random_state == est.ranker.random_state


def test_scale_notes_name_the_rankers_that_read_units():
    est = {"v": rankers.get("variance"), "t": rankers.get("t_test"),
           "v01": rankers.get("variance", scale="minmax")}  # fmt: skip
    (note,) = scale_notes("none", est)
    assert note.startswith("v ranked the features in their raw units")
    assert scale_notes("none", {"t": rankers.get("t_test")}) == []
    (note,) = scale_notes("robust", est)
    assert "(x - median) / IQR" in note


def test_a_log_run_ranks_the_logged_values(tmp_path):
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.lognormal(2.0, 1.0, size=(30, 5)), columns=list("abcde"))
    X.assign(y=np.repeat([0, 1], 15)).to_csv(tmp_path / "data.csv", index=False)
    raw = _raw(rankers_=("variance",))
    raw["data"]["transform"] = "log2p"
    result = run(parse_config(raw, base_dir=tmp_path), tmp_path / "out")
    expected = rankers.get("variance").fit(np.log2(1.0 + X.to_numpy()))
    np.testing.assert_allclose(result.rankings["variance"].scores, expected.scores_, rtol=1e-12)
    assert any("transform = 'log2p'" in n for n in result.notes)
    negative = _raw(rankers_=("variance",))
    negative["data"]["transform"] = "log1p"
    (X - 100.0).assign(y=np.repeat([0, 1], 15)).to_csv(tmp_path / "data.csv", index=False)
    with pytest.raises(rankers.MoweightsError, match="negative values"):
        run(parse_config(negative, base_dir=tmp_path), tmp_path / "neg")
