"""``validate`` reads the data: every problem at once, each with the option that handles it.

One test per kind of problem (:data:`moweights.pipeline.problems.KINDS`), then the command:
a clinical table with gaps, text columns and a patient id names all three in one run, exit
2, suggesting ``drop`` for the id; ``run`` stops on the same problems, exit 2, before any run
folder exists.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd
import pytest

from moweights.cli import main
from moweights.config import parse_config
from moweights.errors import ConfigError
from moweights.pipeline import run
from moweights.pipeline.problems import data_problems, table_problems


def _config(tmp_path, frame: pd.DataFrame | None = None, name="data.csv", **data):
    if frame is not None:
        frame.to_csv(tmp_path / name, index=False)
    raw = {
        "data": {"path": name, "target": "y", **data},
        "rankers": [{"name": "t_test"}, {"name": "variance"}],
        "evaluation": {"cv": 3},
        "output": {"plots": False, "html": False},
        "run": {"verbose": 0},
    }
    return parse_config(raw, base_dir=tmp_path)


def _frame(m=30, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(m, 3)), columns=["a", "b", "c"])
    frame["y"] = np.repeat([0, 1], m // 2)
    return frame


def _kinds(problems) -> dict:
    return {p.kind: p for p in problems}


# ------------------------------------------------------------------ one test per kind
def test_identifier_columns_text_row_numbers_and_id_names(tmp_path):
    frame = _frame()
    frame.insert(0, "sample", [f"S{i:03d}" for i in range(30)])
    frame["Unnamed: 0"] = np.arange(30)  # pandas' index written to a file
    frame["PatientID"] = np.random.default_rng(1).permutation(1000)[:30] + 5000
    # distinct integers that count something: a feature, not an id
    frame["reads"] = np.random.default_rng(2).permutation(10_000)[:30]
    config = _config(tmp_path, frame)
    problem = _kinds(data_problems(config))["identifier"]
    assert problem.blocking and set(problem.columns) == {"sample", "Unnamed: 0", "PatientID"}
    assert "'sample' (30 distinct text values)" in problem.message
    assert "'Unnamed: 0' (the consecutive numbers 0..29)" in problem.message
    assert problem.fix == 'leave them out: [data] drop = ["sample", "Unnamed: 0", "PatientID"]'
    dropped = _config(tmp_path, None, drop=["sample", "Unnamed: 0", "PatientID"])
    assert "identifier" not in _kinds(data_problems(dropped))


def test_missing_values_name_the_columns_and_counts(tmp_path):
    frame = _frame()
    frame.loc[[0, 1, 2], "a"] = np.nan
    frame.loc[[2], "c"] = np.nan
    problem = _kinds(data_problems(_config(tmp_path, frame)))["missing"]
    assert "missing values in 2 column(s): 'a' (3 of 30 rows), 'c' (1 of 30 rows)" in str(problem)
    assert "3 of 30 rows have a gap" in problem.message
    assert "[data] missing = 'impute_median'" in problem.fix
    assert not data_problems(_config(tmp_path, None, missing="impute_median"))
    frame["a"] = np.nan  # a column of nothing cannot be imputed
    problem = _kinds(data_problems(_config(tmp_path, frame, missing="impute_mean")))["missing"]
    assert "no value at all" in problem.message and '[data] drop = ["a"]' in problem.fix


def test_a_missing_target_is_a_problem(tmp_path):
    frame = _frame()
    frame["y"] = frame["y"].astype(float)
    frame.loc[4, "y"] = np.nan
    problem = _kinds(data_problems(_config(tmp_path, frame)))["missing"]
    assert problem.message == "the target is missing in 1 of 30 rows"
    assert "missing = 'drop_rows'" in problem.fix


def test_text_columns_with_their_number_of_values(tmp_path):
    frame = _frame()
    frame["sex"] = ["F", "M"] * 15
    frame["stage"] = ["I", "II", "III"] * 10
    problem = _kinds(data_problems(_config(tmp_path, frame)))["text"]
    assert "'sex' (2 values), 'stage' (3 values)" in problem.message
    assert "categorical = 'onehot'" in problem.fix
    assert not data_problems(_config(tmp_path, None, categorical="onehot"))


def test_repeated_column_names_in_the_header(tmp_path):
    (tmp_path / "data.csv").write_text(
        "a,b,a,y\n" + "".join(f"{i},{i * 2 % 7},{i % 3},{i % 2}\n" for i in range(12))
    )
    problem = _kinds(data_problems(_config(tmp_path)))["duplicate"]
    assert "repeats column names: 'a' (2 times)" in problem.message and problem.blocking
    # a frame from another source (parquet, h5ad) with repeated names
    frame = pd.DataFrame(np.ones((3, 2)), columns=["a", "a"])
    found = _kinds(table_problems(frame, None, _config(tmp_path)))
    assert found["duplicate"].columns == ("a",)


def test_a_log_of_negative_values(tmp_path):
    frame = _frame()
    problem = _kinds(data_problems(_config(tmp_path, frame, transform="log1p")))["transform"]
    assert "negative values" in problem.message and "'a' (min " in problem.message
    assert problem.fix.startswith("[data] transform = 'none'")
    frame[["a", "b", "c"]] = frame[["a", "b", "c"]].abs()
    assert not data_problems(_config(tmp_path, frame, transform="log1p"))


@pytest.mark.parametrize(
    ("labels", "expected", "fix"),
    [
        ([0] * 30, "a single class (0 in every row)", "need two classes"),
        ([0] * 15 + [1] * 14 + [2], "1 class(es) of a single row: 2 (1 row)", "merge or drop"),
        ([0] * 28 + [1] * 2, "too few samples per class for 3-fold evaluation: 1 (2 rows)",
         "[evaluation] cv = 2"),
    ],
)  # fmt: skip
def test_too_few_samples_per_class(tmp_path, labels, expected, fix):
    frame = _frame()
    frame["y"] = labels
    problem = _kinds(data_problems(_config(tmp_path, frame)))["classes"]
    assert expected in problem.message and fix in problem.fix and problem.blocking


def test_constant_columns_are_a_note_unless_nothing_is_left(tmp_path):
    frame = _frame()
    frame["flat"] = 1.0
    problem = _kinds(data_problems(_config(tmp_path, frame)))["constant"]
    assert not problem.blocking and "'flat'" in problem.message
    assert '[data] drop = ["flat"]' in problem.fix
    frame[["a", "b", "c"]] = 0.0
    assert _kinds(data_problems(_config(tmp_path, frame)))["constant"].blocking


def test_an_unreadable_file_is_a_problem_of_its_own(tmp_path):
    (tmp_path / "data.csv").write_text("a,b,y\n1,2,0\n3,4,1\n5,6,0,9\n")
    (problem,) = data_problems(_config(tmp_path))
    assert problem.kind == "unreadable" and "Expected 3 fields" in problem.message


def test_the_target_not_in_the_file_gets_a_did_you_mean(tmp_path):
    _frame().rename(columns={"y": "Diagnosis"}).to_csv(tmp_path / "data.csv", index=False)
    with pytest.raises(ConfigError, match=r"column 'diagnosis' is not in data.csv; did you mean "
                       r"'Diagnosis'\?"):  # fmt: skip
        parse_config(
            {"data": {"path": "data.csv", "target": "diagnosis"}, "rankers": [{"name": "t_test"}]},
            base_dir=tmp_path,
        )


def test_sites_are_checked_each(tmp_path):
    frame = _frame(m=40)
    frame["y"] = [0, 1] * 20
    frame["hospital"] = np.repeat(["north", "south"], 20)
    frame.loc[25, "b"] = np.nan
    config = _config(tmp_path, frame, site_column="hospital")
    (problem,) = data_problems(config)
    assert problem.where == "site 'south'" and "'b' (1 of 20 rows)" in problem.message


def _sites_config(tmp_path, columns: dict, **data):
    """[[sites]] files, one per entry (site -> its feature columns), each with a target y."""
    sites = []
    for i, (site, names) in enumerate(columns.items()):
        frame = pd.DataFrame({c: np.arange(30.0) * (i + 1) for c in names})
        frame["y"] = [0, 1] * 15
        frame.to_csv(tmp_path / f"{site}.csv", index=False)
        sites.append({"name": site, "path": f"{site}.csv", "target": "y"})
    raw = {"sites": sites, "rankers": [{"name": "variance"}], "run": {"verbose": 0}}
    if data:
        raw["data"] = data
    return parse_config(raw, base_dir=tmp_path)


def test_sites_whose_columns_differ(tmp_path):
    # issue 48 item 10: the run stopped at its first ranker (exit 1); validate said OK
    columns = {"a": "pqr", "b": "pqr", "c": "pqs"}
    (problem,) = data_problems(_sites_config(tmp_path, columns))
    assert (problem.kind, problem.where, problem.blocking) == ("mismatch", "site 'c'", True)
    assert "missing 'r'; extra 's'" in problem.message and problem.columns == ("r", "s")
    assert "[data] on_mismatch = 'drop'" in problem.fix
    (note,) = data_problems(_sites_config(tmp_path, columns, on_mismatch="drop"))
    assert note.where == "site 'c'" and not note.blocking
    assert note.message.startswith("left out of the run")
    # two sites (or two camps): neither is the odd one, so 'drop' cannot choose
    two = data_problems(_sites_config(tmp_path, {"a": "pqr", "b": "pqs"}, on_mismatch="drop"))
    assert [(p.where, p.blocking) for p in two] == [("site 'a'", True), ("site 'b'", True)]
    assert "more than half" in two[0].fix
    assert not data_problems(_sites_config(tmp_path, {"a": "pqr", "b": "rqp"}))  # by name


def test_on_mismatch_outside_a_site_run_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match=r"\[data\]\.on_mismatch: applies to a site run"):
        _config(tmp_path, _frame(), on_mismatch="drop")
    with pytest.raises(ConfigError, match=r"on_mismatch: invalid value 'keep'"):
        _sites_config(tmp_path, {"a": "pq", "b": "pq"}, on_mismatch="keep")


# ------------------------------------------------------------------ the commands
CLINICAL = """
[data]
path = "clinical.csv"
target = "outcome"

[[rankers]]
name = "t_test"

[output]
dir = "{out}"
"""


def _clinical(tmp_path, m=200):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "patient": [f"P{i:04d}" for i in range(m)],
            "age": rng.integers(30, 80, m).astype(float),
            "bmi": rng.normal(27, 4, m),
            "smoker": rng.choice(["never", "former", "current"], m),
            "outcome": rng.choice([0, 1], m),
        }
    )
    frame.loc[rng.choice(m, 12, replace=False), "age"] = np.nan
    frame.to_csv(tmp_path / "clinical.csv", index=False)
    path = tmp_path / "clinical.toml"
    path.write_text(textwrap.dedent(CLINICAL.format(out=(tmp_path / "out").as_posix())))
    return path


def test_validate_names_gaps_text_and_id_at_once(tmp_path, capsys):
    path = _clinical(tmp_path)
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "3 problem(s)" in err
    assert "identifier column(s)" in err and "'patient'" in err
    assert '[data] drop = ["patient"]' in err  # drop, not an encoding, for the id
    assert "missing values in 1 column(s): 'age' (12 of 200 rows)" in err
    assert "[data] missing = " in err
    assert "text (non-numeric) column(s): 'smoker' (3 values)" in err
    assert "[data] categorical = 'onehot'" in err


def test_run_stops_on_the_same_problems_before_making_a_folder(tmp_path, capsys):
    path = _clinical(tmp_path)
    assert main(["run", str(path), "-q"]) == 2
    assert "'patient'" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    with pytest.raises(ConfigError) as info:
        from moweights.config import load_config

        run(load_config(path))
    assert len(info.value.problems) == 3 and not (tmp_path / "out").exists()


def test_fixed_options_validate_and_run_with_the_notes(tmp_path, capsys):
    path = _clinical(tmp_path)
    text = path.read_text().replace(
        'target = "outcome"',
        'target = "outcome"\ndrop = ["patient"]\nmissing = "impute_median"\n'
        'categorical = "onehot"',
    )
    path.write_text(text + '\n[evaluation]\nenabled = false\n')
    frame = pd.read_csv(tmp_path / "clinical.csv")
    frame["batch"] = "b1"  # one value: a note, not a stop
    frame.to_csv(tmp_path / "clinical.csv", index=False)
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert ": OK (" in out and "note: 1 constant column(s)" in out and "'batch'" in out
    assert main(["run", str(path), "-q"]) == 0
    import json

    notes = json.loads((tmp_path / "out" / "summary.json").read_text())["notes"]
    assert any(n.startswith("data: 1 constant column(s)") for n in notes)
