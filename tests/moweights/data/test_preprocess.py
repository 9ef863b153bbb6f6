"""Opt-in preparation of tables with gaps, text columns and genes as rows."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankers
from moweights.data.preprocess import CATEGORICAL, MISSING, prepare_table, transpose_table
from rankers.exceptions import FewSamplesWarning, InvalidInputError, InvalidParameterError


def _clinic():
    X = pd.DataFrame(
        {
            "age": [50.0, np.nan, 70.0, 64.0, 58.0, 41.0],
            "smoker": ["yes", "no", None, "no", "yes", "no"],
            "ward": ["b", "a", "a", "c", "b", "a"],
            "crp": [3.0, 8.0, 5.0, np.nan, 1.0, 2.0],
        }
    )
    y = pd.Series([1, 0, 1, 0, 1, 0], name="outcome")
    return X, y


def test_without_options_the_error_names_the_columns_and_the_option():
    X, y = _clinic()
    with pytest.raises(InvalidInputError, match=r"'age', 'smoker', 'crp'.*missing = 'drop_rows'"):
        prepare_table(X, y)
    with pytest.raises(InvalidInputError, match=r"text .*'smoker', 'ward'.*categorical = 'onehot'"):
        prepare_table(X, y, missing="drop_rows")


def test_median_and_onehot_by_hand():
    X, y = _clinic()
    before = X.copy()
    out = prepare_table(X, y, missing="impute_median", categorical="onehot")
    pd.testing.assert_frame_equal(X, before)  # the caller's table is untouched
    assert out.X.columns.tolist() == [
        "age",
        "smoker=no",
        "smoker=yes",
        "ward=a",
        "ward=b",
        "ward=c",
        "crp",
    ]
    assert out.X.loc[1, "age"] == 58.0  # median of 50, 70, 64, 58, 41
    assert out.X.loc[3, "crp"] == 3.0  # median of 3, 8, 5, 1, 2
    # the text gap takes the most frequent value ("no")
    assert out.X.loc[2, ["smoker=no", "smoker=yes"]].tolist() == [1.0, 0.0]
    assert out.X["ward=a"].tolist() == [0, 1, 1, 0, 0, 1]
    assert len(out.steps) == 3 and "one-hot" in out.steps[-1]
    pd.testing.assert_series_equal(out.y, y)


def test_drop_rows_and_ordinal():
    X, y = _clinic()
    out = prepare_table(X, y, missing="drop_rows", categorical="ordinal")
    assert out.X.index.tolist() == [0, 4, 5]
    assert out.y.tolist() == [1, 1, 0]
    assert out.X["ward"].tolist() == [1.0, 1.0, 0.0]  # a=0, b=1 by sorted value
    assert out.steps[0] == "dropped 3 row(s) with missing values"


def test_drop_columns_and_drop_text():
    X, y = _clinic()
    out = prepare_table(X, y, missing="drop_columns", categorical="onehot")
    assert out.X.columns.tolist() == ["ward=a", "ward=b", "ward=c"]
    with pytest.raises(InvalidInputError, match="nothing is left to rank after dropped 3"):
        prepare_table(X, y, missing="drop_columns", categorical="drop")


def test_a_missing_target_drops_rows_never_imputes():
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0]})
    y = pd.Series([0, None, 1])
    with pytest.raises(InvalidInputError, match="target is missing in 1 row"):
        prepare_table(X, y)
    out = prepare_table(X, y, missing="impute_mean")
    assert out.X["a"].tolist() == [1.0, 3.0]
    assert out.steps == ["dropped 1 row(s) with a missing target"]


def test_nothing_left_and_empty_columns_are_clear():
    X = pd.DataFrame({"a": [np.nan, np.nan], "b": [1.0, np.nan]})
    with pytest.raises(InvalidInputError, match=r"no value at all.*'a'"):
        prepare_table(X, missing="impute_median")
    with pytest.raises(InvalidInputError, match="nothing is left to rank"):
        prepare_table(X, missing="drop_rows")


@pytest.mark.parametrize("kw", [{"missing": "fill"}, {"categorical": "dummy"}])
def test_unknown_options(kw):
    with pytest.raises(InvalidParameterError, match="must be one of"):
        prepare_table(pd.DataFrame({"a": [1.0]}), **kw)


def test_genes_as_rows():
    table = pd.DataFrame(
        {
            "gene": ["TP53", "BRCA1", "label"],
            "s1": [1.0, 2.0, "tumour"],
            "s2": [3.0, 4.0, "normal"],
        }
    )
    out = transpose_table(table, target="label")
    assert out.index.tolist() == ["s1", "s2"]
    assert out.columns.tolist() == ["TP53", "BRCA1", "label"]
    assert out["TP53"].dtype == float and out["label"].tolist() == ["tumour", "normal"]
    with pytest.raises(InvalidInputError, match="'grade' is not a row"):
        transpose_table(table, target="grade")
    dup = pd.DataFrame({"gene": ["A", "A"], "s1": [1, 2]})
    with pytest.raises(InvalidInputError, match="more than once: 'A'"):
        transpose_table(dup)


def test_prepared_table_ranks():
    X, y = _clinic()
    out = prepare_table(X, y, missing="impute_median", categorical="onehot")
    with pytest.warns(FewSamplesWarning):
        est = rankers.get("anova_f").fit(out.X, out.y)
    assert len(est.scores_) == out.X.shape[1]


@settings(max_examples=30)
@given(
    st.lists(st.one_of(st.none(), st.sampled_from(["x", "y", "z"])), min_size=3, max_size=12),
    st.sampled_from(MISSING[1:]),
    st.sampled_from(CATEGORICAL[1:]),
)
def test_output_is_numeric_and_complete(values, missing, categorical):
    X = pd.DataFrame({"t": values, "n": np.arange(len(values), dtype=float)})
    try:
        out = prepare_table(X, missing=missing, categorical=categorical)
    except InvalidInputError as exc:  # only an empty or unfillable result may be refused
        assert "nothing is left" in str(exc) or "no value at all" in str(exc)
        return
    assert out.X.notna().all().all()
    assert all(pd.api.types.is_numeric_dtype(out.X[c]) for c in out.X.columns)


# ---------------------------------------------------------------- in a config run
def _clinic_file(tmp_path):
    X, y = _clinic()
    X = pd.concat([X] * 3, ignore_index=True)  # 18 rows
    X["outcome"] = np.tile(y.to_numpy(), 3)
    X.to_csv(tmp_path / "clinic.csv", index=False)


def _raw(**data):
    return {
        "data": {"path": "clinic.csv", "target": "outcome", **data},
        "rankers": [{"name": "anova_f"}],
        "evaluation": {"enabled": False},
    }


def test_a_config_run_without_options_names_the_columns(tmp_path):
    from moweights import parse_config, run

    _clinic_file(tmp_path)
    config = parse_config(_raw(), base_dir=tmp_path)
    with pytest.raises(InvalidInputError, match=r"missing values in 3 column\(s\).*\[data\]"):
        run(config, tmp_path / "out")


def test_a_config_run_with_options_records_the_steps(tmp_path):
    from moweights import parse_config, run

    _clinic_file(tmp_path)
    config = parse_config(_raw(missing="impute_median", categorical="onehot"), base_dir=tmp_path)
    result = run(config, tmp_path / "out")
    scores = pd.read_csv(tmp_path / "out" / "scores.csv", index_col=0)
    assert "ward=a" in scores.index and "smoker=yes" in scores.index
    assert any("median" in note for note in result.notes)
    assert any("one-hot" in note for note in result.notes)


def test_a_config_names_bad_options_and_transposes_genes_as_rows(tmp_path):
    from moweights import parse_config
    from moweights.errors import ConfigError
    from moweights.pipeline import load_data

    with pytest.raises(ConfigError, match="missing"):
        parse_config(
            {"data": {"builtin": "iris", "missing": "guess"}, "rankers": [{"name": "variance"}]}
        )
    table = pd.DataFrame(
        {"gene": ["A", "B", "label"], "s1": [1.0, 2.0, 0], "s2": [3.0, 5.0, 1], "s3": [0.5, 1.0, 0]}
    )
    table.to_csv(tmp_path / "genes.csv", index=False)
    config = parse_config(
        {
            "data": {"path": "genes.csv", "target": "label", "transpose": True},
            "rankers": [{"name": "variance"}],
        },
        base_dir=tmp_path,
    )
    X, y = load_data(config)
    assert X.columns.tolist() == ["A", "B"] and X.index.tolist() == ["s1", "s2", "s3"]
    assert y.tolist() == [0, 1, 0]


# ---------------------------------------------------------------- tables that cannot be encoded
# (issue 37 item 8: each was a raw pandas error or a silent blow-up of the columns)
@pytest.mark.parametrize("categorical", CATEGORICAL)
@pytest.mark.parametrize("missing", ["error", "drop_rows", "impute_median"])
def test_repeated_column_names_are_named_under_every_option(missing, categorical):
    X = pd.DataFrame([[1.0, "a", "b"], [2.0, "c", "d"], [3.0, "a", "d"]], columns=["x", "t", "t"])
    with pytest.raises(InvalidInputError, match=r"repeated column names: 't'.*rename"):
        prepare_table(X, missing=missing, categorical=categorical)


@pytest.mark.parametrize("categorical", ["onehot", "ordinal"])
@pytest.mark.parametrize("make", [lambda i: f"patient-{i}", lambda i: f"{i:05d}"])
def test_an_identifier_column_is_refused_not_encoded(categorical, make):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"age": rng.normal(size=200), "id": [make(i) for i in range(200)]})
    X["ward"] = np.where(X["age"] > 0, "a", "b")
    with pytest.raises(InvalidInputError) as info:
        prepare_table(X, categorical=categorical)
    msg = str(info.value)
    assert "'id'" in msg and "every row" in msg and "drop" in msg
    assert "'ward'" not in msg  # a real category is not an identifier
    out = prepare_table(X.drop(columns="id"), categorical=categorical)
    assert out.X.shape[1] == (3 if categorical == "onehot" else 2)


def test_a_few_rows_all_distinct_are_still_categories():
    X = pd.DataFrame({"n": [1.0, 2.0, 3.0], "t": ["x", "y", "z"]})
    assert prepare_table(X, categorical="onehot").X.shape == (3, 4)


def test_many_levels_warn_naming_the_column_and_the_count():
    from moweights.errors import DataPreparationWarning

    levels = [f"c{i % 120}" for i in range(600)]  # 120 levels, each 5 times: not an id
    X = pd.DataFrame({"n": np.arange(600.0), "code": levels, "ward": ["a", "b"] * 300})
    with pytest.warns(DataPreparationWarning, match=r"'code'.*120 levels.*120 columns") as seen:
        out = prepare_table(X, categorical="onehot")
    assert not any("'ward'" in str(w.message) for w in seen)
    assert out.X.shape[1] == 1 + 120 + 2
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataPreparationWarning)
        prepare_table(X, categorical="ordinal")  # one column per column: nothing to warn


@pytest.mark.parametrize(
    "when",
    [
        pd.date_range("2024-01-01", periods=6, freq="h"),
        pd.date_range("2024-01-01", periods=6, freq="D", tz="Europe/Berlin"),
        pd.to_timedelta(np.arange(6), unit="s"),
        pd.period_range("2024-01", periods=6, freq="M"),
    ],
)
def test_dates_and_times_are_not_one_hot_encoded(when):
    X = pd.DataFrame({"n": np.arange(6.0), "when": when, "ward": list("ababab")})
    with pytest.raises(InvalidInputError, match=r"date/time column.*'when'.*ordinal.*drop"):
        prepare_table(X, categorical="onehot")
    out = prepare_table(X, categorical="ordinal")  # the time order, as numbers
    assert out.X["when"].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert prepare_table(X, categorical="drop").X.columns.tolist() == ["n"]
