"""Config files: the schema, validation (every problem at once), overrides, JSON Schema, init."""

from __future__ import annotations

import itertools
import json
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from moweights.cli import main
from moweights.config import apply_overrides, load_config, parse_config
from moweights.config.check import Problems, check
from moweights.config.export import json_schema, markdown, ranker_params_schemas, toml_value
from moweights.config.schema import SCHEMA, Integer, Key, Number
from moweights.errors import ConfigError

pytestmark = pytest.mark.quick  # in the quick suite (pytest -m quick): see pyproject.toml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _write(tmp_path, text, name="run.toml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_valid_config_round_trip(tmp_path):
    (tmp_path / "d.csv").write_text("a,b,label\n1,2,0\n3,4,1\n")
    path = _write(
        tmp_path,
        """
        [data]
        path = "d.csv"
        target = "label"
        [[rankers]]
        name = "Laplacian"
        params = { n_neighbors = 3 }
        label = "lap3"
        [[rankers]]
        name = "variance"
        [evaluation]
        cv = 3
        [evaluation.topk]
        ks = [1, 2]
        [run]
        random_state = 7
        n_jobs = 2
        """,
    )
    cfg = load_config(path)
    assert cfg.data.path == tmp_path / "d.csv"  # relative to the config file
    assert [r.label for r in cfg.rankers] == ["lap3", "variance"]
    assert cfg.rankers[0].params == {"n_neighbors": 3}
    assert (cfg.evaluation.cv, cfg.evaluation.topk.ks) == (3, [1, 2])
    assert (cfg.random_state, cfg.n_jobs, cfg.run.backend) == (7, 2, "loky")
    # defaults come from the schema
    assert cfg.aggregation.methods == ("mean_rank", "generic")
    assert cfg.evaluation.error_curves.enabled == "auto"
    assert cfg.evaluation.statistics.alpha == 0.05
    assert not cfg.is_site_run
    # the resolved config is a valid config that gives the same run back
    again = parse_config(json.loads(json.dumps(cfg.to_dict())))
    assert again.to_dict() == cfg.to_dict()
    assert again.data.path == tmp_path / "d.csv"


def test_all_problems_reported_together(tmp_path):
    path = _write(
        tmp_path,
        """
        colour = "blue"
        [data]
        builtin = "wines"
        [[rankers]]
        name = "laplace"
        [[rankers]]
        name = "laplacian"
        params = { n_neighbours = 3 }
        [[rankers]]
        name = "variance"
        params = { ddof = -2 }
        [[rankers]]
        name = "mo_weighting"
        params = { objectives = ["C1", "C9"] }
        [evaluation]
        cv = 1
        [evaluation.topk]
        metrik = "mse"
        [run]
        n_jobs = "two"
        scheduler = "tcp://x:1"
        """,
    )
    with pytest.raises(ConfigError) as info:
        load_config(path)
    problems = info.value.problems
    text = "\n".join(problems)
    assert len(problems) == 10, text
    assert all(p.startswith(f"{path}: ") for p in problems)
    assert "colour: unknown key" in text
    assert "[data].builtin: invalid value 'wines'; did you mean 'wine'? expected one of" in text
    assert "[[rankers]][0].name: no ranker named 'laplace'; did you mean 'laplacian'?" in text
    assert "[[rankers]][1].params: ranker 'laplacian' has no parameter(s) 'n_neighbours'" in text
    assert "[[rankers]][2].params:" in text and "'ddof' parameter" in text
    assert "[[rankers]][3].params: unknown criterion 'C9'" in text
    assert "[evaluation].cv: invalid value 1; expected an integer >= 2" in text
    assert "[evaluation.topk].metrik: unknown key; did you mean 'metric'?" in text
    assert "[run].n_jobs: invalid value 'two'; expected an integer other than 0" in text
    assert "[run].scheduler: a scheduler address needs backend = 'dask'" in text
    assert isinstance(info.value, ValueError)


def test_the_config_check_reads_a_data_path_through_the_one_check(tmp_path):
    """A data path is checked by moweights.data.check_data_path alone (with the fetch hint
    for a known benchmark file), for [data] and [[sites]]; its header by
    moweights.data.read_columns, which checks through the same function."""
    ok = {"rankers": [{"name": "variance"}]}
    with pytest.raises(ConfigError, match=r"\[data\]\.path: .*`moweights fetch skfeature Isolet`"):
        parse_config({"data": {"path": str(tmp_path / "Isolet.mat")}, **ok})
    sites = [{"name": "a", "path": str(tmp_path / "Isolet.mat")}, {"name": "b", "path": "b.csv"}]
    with pytest.raises(ConfigError, match=r"\[\[sites\]\]\[0\]\.path: .*moweights fetch skfeature"):
        parse_config({"sites": sites, **ok}, base_dir=tmp_path)
    with pytest.raises(
        ConfigError, match=r"\[data\]\.path: .* is a folder, not a data file"
    ) as info:
        parse_config({"data": {"path": str(tmp_path), "target": "y"}, **ok})
    assert str(info.value).count("is a folder") == 1  # the header is not read again
    (tmp_path / "d.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ConfigError, match=r"column 'label' is not in d.csv"):
        parse_config({"data": {"path": str(tmp_path / "d.csv"), "target": "label"}, **ok})


def test_data_sources_and_cross_checks(tmp_path):
    ok = {"rankers": [{"name": "variance"}]}
    with pytest.raises(ConfigError, match=r"\[data\]: missing") as info:
        parse_config({})
    assert any("[[rankers]]: missing" in p for p in info.value.problems)
    with pytest.raises(ConfigError, match="give one of builtin and path, not both"):
        parse_config({"data": {"builtin": "wine", "path": "x.csv"}, **ok})
    with pytest.raises(ConfigError, match="not both"):
        parse_config(
            {"data": {"builtin": "wine"}, "sites": [{"name": "a", "builtin": "iris"}], **ok}
        )
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(_write(tmp_path, "[data\nbuiltin = 1"))
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "nope.toml")
    with pytest.raises(ConfigError, match="file not found"):
        parse_config({"data": {"path": "nope.csv"}, **ok})
    with pytest.raises(ConfigError, match="bring their own target"):
        parse_config({"data": {"builtin": "wine", "target": "y"}, **ok})
    sites = [{"name": "a", "builtin": "wine", "rows": [5, 5]}, {"name": "a", "builtin": "wine"}]
    with pytest.raises(ConfigError) as info:
        parse_config({"sites": sites, **ok})
    text = "\n".join(info.value.problems)
    assert "[[sites]][0].rows: [start, stop) needs start < stop" in text
    assert "[[sites]][1].name: site name 'a' is used twice" in text
    # a supervised ranker on a table without a target is refused before running
    (tmp_path / "d.csv").write_text("a,b\n1,2\n3,4\n")
    with pytest.raises(ConfigError, match="needs a target but the data has none"):
        parse_config({"data": {"path": "d.csv"}, "rankers": [{"name": "chi2"}]}, base_dir=tmp_path)
    # weighted_mean_rank across rankers needs a weight per ranker label
    agg = {"methods": ["weighted_mean_rank"], "weights": {"variance": 1.0, "lap": 2.0}}
    with pytest.raises(ConfigError) as info:
        parse_config({"data": {"builtin": "wine"}, "aggregation": agg, **ok})
    assert "unknown ranker label(s) ['lap']" in "\n".join(info.value.problems)
    with pytest.raises(ConfigError, match="is used twice"):
        parse_config({"data": {"builtin": "wine"}, "rankers": [{"name": "chi2"}] * 2})
    with pytest.raises(ConfigError, match="reserved"):
        parse_config(
            {"data": {"builtin": "wine"}, "rankers": [{"name": "chi2", "label": "random"}]}
        )


def test_toml_arrays_become_tuples_where_a_ranker_needs_them():
    raw = {
        "data": {"builtin": "weighting_benchmark"},
        "rankers": [{"name": "mo_weighting", "params": {"termination": ["n_gen", 3]}}],
    }
    cfg = parse_config(raw)
    assert cfg.rankers[0].params["termination"] == ("n_gen", 3)


def test_overrides():
    raw = {"data": {"builtin": "wine"}, "rankers": [{"name": "laplacian"}]}
    out = apply_overrides(
        raw,
        [
            "evaluation.cv=3",
            "rankers.0.params.n_neighbors=4",
            "data.builtin=iris",
            "evaluation.topk.ks=[1, 2]",
            'output.dir="a b"',
        ],
    )
    assert raw == {"data": {"builtin": "wine"}, "rankers": [{"name": "laplacian"}]}  # a copy
    cfg = parse_config(out)
    assert cfg.evaluation.cv == 3
    assert cfg.rankers[0].params == {"n_neighbors": 4}
    assert cfg.data.builtin == "iris"
    assert cfg.evaluation.topk.ks == [1, 2]
    assert cfg.output.dir == "a b"
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        apply_overrides(raw, ["evaluation.cv"])
    with pytest.raises(ConfigError, match="does not name a key"):
        apply_overrides(raw, ["rankers.5.name=x"])


def test_schema_describes_and_checks_every_type():
    p = Problems("f")
    out = check(
        {
            "data": {"builtin": "wine", "drop": "id"},
            "rankers": [{"name": "variance"}],
            "evaluation": {"error_curves": {"grid": [0], "enabled": "sometimes"}},
            "run": {"random_state": -1, "threads": 1.5},
        },
        p,
    )
    text = "\n".join(p.items)
    assert "[data].drop: invalid value 'id'; expected a list of strings" in text
    assert (
        "[evaluation.error_curves].grid: invalid value [0]; expected one of 'every', "
        "'geometric' or an integer >= 1 or a non-empty list of integers >= 1" in text
    )
    assert (
        "[evaluation.error_curves].enabled: invalid value 'sometimes'; expected true, "
        "false or 'auto'" in text
    )
    assert (
        "[run].random_state: invalid value -1; expected an integer >= 0 and <= 4.29497e+09" in text
    )
    assert "[run].threads: invalid value 1.5" in text
    assert len(p.items) == 5
    # bad values fall back to defaults so the other checks can go on
    assert out["evaluation"]["error_curves"]["grid"] == "geometric"
    assert Integer(1).accepts(True) is False  # a TOML boolean is not a number
    assert Number(0).accepts(float("inf")) is False


def test_json_schema_is_committed_and_up_to_date(repo):
    committed = json.loads((repo / "docs" / "config-schema.json").read_text(encoding="utf-8"))
    fresh = json_schema(ranker_params_schemas())
    assert committed == fresh, (
        "docs/config-schema.json is stale: run "
        "`moweights schema --force -o docs/config-schema.json`"
    )
    docs = (repo / "docs" / "config.md").read_text(encoding="utf-8")
    assert docs == markdown(), (
        "docs/config.md is stale: run "
        "`moweights schema --format markdown --force -o docs/config.md`"
    )


def test_json_schema_agrees_with_validation(repo):
    jsonschema = pytest.importorskip(
        "jsonschema", reason="needs the 'test' extra: pip install '.[test]'"
    )
    doc = json_schema(ranker_params_schemas())
    jsonschema.Draft202012Validator.check_schema(doc)
    validator = jsonschema.Draft202012Validator(doc)
    for path in sorted((repo / "examples").glob("*.toml")):
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
        assert not list(validator.iter_errors(raw)), path.name
    bad = {"data": {"builtin": "wine"}, "rankers": [{"name": "laplacian", "params": {"t": -1}}]}
    assert list(validator.iter_errors(bad))  # the ranker's own constraint reaches editors
    bad = {"data": {"builtin": "wine", "path": "x"}, "rankers": [{"name": "variance"}]}
    assert list(validator.iter_errors(bad))


def test_init_writes_a_valid_commented_config(tmp_path, capsys):
    path = tmp_path / "new.toml"
    assert main(["init", str(path)]) == 0
    text = path.read_text()
    cfg = load_config(path)
    assert [r.name for r in cfg.rankers] == ["variance", "laplacian", "info_gain"]
    for section in SCHEMA.sections:  # every section is explained
        assert section.name in text
    assert "# scheduler = " in text and "# two_step = false" in text
    # a [[sites]] block of a site's own file shows path and target (issue 48 item 20)
    sites = text[text.index('# name = "clinic_b"') :]
    assert '# path = "clinic_b.csv"' in sites and '# target = "label"' in sites
    assert main(["init", str(path)]) == 2  # no silent overwrite
    assert "exists" in capsys.readouterr().err
    assert main(["init", str(path), "--force", "-q"]) == 0


# ------------------------------------------------------------------ malformed configs
_SCALARS = st.one_of(
    st.integers(-5, 5),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=5),
    st.booleans(),
    st.lists(st.integers(-2, 2), max_size=3),
    st.dictionaries(st.sampled_from(["a", "k"]), st.integers(0, 3), max_size=2),
)


def _keys() -> list[tuple[tuple[str, ...], Key]]:
    out = []

    def walk(section, prefix):
        for key in section.keys:
            out.append(((*prefix, key.name), key))
        for sub in section.sections:
            walk(sub, (*prefix, sub.name))

    for section in SCHEMA.sections:
        walk(section, (section.name, "0") if section.array else (section.name,))
    return out


def _toml(doc: dict) -> str:
    """A config dict as TOML: sections, arrays of tables, inline values."""
    lines = []
    for name, value in doc.items():
        items = value if isinstance(value, list) else [value]
        for item in items:
            lines.append(f"[[{name}]]" if isinstance(value, list) else f"[{name}]")
            lines += [f"{k} = {toml_value(v)}" for k, v in item.items()]
    return "\n".join(lines) + "\n"


_BASE = {"data": {"builtin": "wine"}, "rankers": [{"name": "variance"}], "run": {"verbose": 0}}


def _assert_clean_usage_error(path: Path, capsys) -> str:
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and str(path) in err
    assert "Traceback" not in err
    return err


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(_keys()), _SCALARS)
def test_wrong_types_give_a_clean_error_and_exit_2(tmp_path, capsys, where, value):
    path_keys, key = where
    if any(t.accepts(value) for t in key.types) or value == {}:
        return  # a valid value for this key: not what this test is about
    import copy

    doc = copy.deepcopy(_BASE)
    node = doc
    for part, nxt in itertools.pairwise(path_keys):
        if isinstance(node, list):
            node = node[int(part)]
        else:
            node = node.setdefault(part, [{}] if nxt.isdigit() else {})
    node[path_keys[-1]] = value
    path = tmp_path / "bad.toml"
    path.write_text(_toml(doc))
    err = _assert_clean_usage_error(path, capsys)
    assert f".{path_keys[-1]}: invalid value" in err  # the problem names its key


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet='[]="{}.,# \nabc01', min_size=1, max_size=40), st.integers(0, 60))
def test_broken_toml_gives_a_clean_error_and_exit_2(tmp_path, capsys, junk, at):
    good = _toml(_BASE)
    text = good[:at] + junk + good[at:]
    try:
        tomllib.loads(text)
        return  # still valid TOML (the schema then judges it, tested above)
    except tomllib.TOMLDecodeError:
        pass
    path = tmp_path / "broken.toml"
    path.write_text(text)
    _assert_clean_usage_error(path, capsys)
    assert main(["run", str(path)]) == 2  # run refuses before doing anything
    assert "not valid TOML" in capsys.readouterr().err


def test_malformed_config_in_a_subprocess(tmp_path):
    import subprocess

    path = _write(tmp_path, '[data]\nbuiltin = 3\n[[rankers]]\nname = "nope"\n')
    proc = subprocess.run(
        [sys.executable, "-m", "moweights", "validate", str(path)],
        capture_output=True,
        text=True,
        timeout=600,  # a bound for a hang: seconds on an idle machine
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "[data].builtin: invalid value 3; expected one of " in proc.stderr
    assert "[[rankers]][0].name: no ranker named 'nope'" in proc.stderr


def test_generic_tolerance_reaches_the_aggregation(tmp_path):
    from aggregation import generic
    from aggregation.uncertainty import tolerant_generic
    from moweights.pipeline import run

    raw = {
        "data": {"builtin": "breast_cancer"},
        "rankers": [{"name": n} for n in ("variance", "laplacian", "anova_f", "chi2", "t_test")],
        "aggregation": {"methods": ["generic"], "tolerance": 0.4},
        "evaluation": {"enabled": False},
    }
    result = run(parse_config(raw), tmp_path / "a")
    inputs = list(result.rankings.values())
    assert result.aggregated["generic"].blocks == tolerant_generic(inputs, 0.4).blocks
    strict = run(parse_config({**raw, "aggregation": {"methods": ["generic"]}}), tmp_path / "b")
    assert strict.aggregated["generic"].blocks == generic(inputs).blocks
    assert len(result.aggregated["generic"]) >= len(strict.aggregated["generic"])
    with pytest.raises(ConfigError, match="tolerance"):
        parse_config({**raw, "aggregation": {"tolerance": 0.6}})


@given(st.text())
def test_toml_strings_read_back_as_written(text):
    """Every string, DEL and the other control characters included, is valid TOML."""
    import tomllib

    from moweights.config.export import toml_value

    assert tomllib.loads(f"key = {toml_value(text)}\n") == {"key": text}


# ------------------------------------------------------------------ bounded work (issue 48 item 7)
@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_a_deeply_nested_config_is_a_config_error_at_once(tmp_path, capsys, suffix):
    deep = "[" * 100_000 + "]" * 100_000
    if suffix == ".toml":
        text = (
            f'[data]\nbuiltin = "iris"\n[[rankers]]\nname = "variance"\nparams = {{ x = {deep} }}\n'
        )
    else:
        text = f'{{"data": {deep}}}'
    path = tmp_path / f"deep{suffix}"
    path.write_text(text)
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {path}: arrays or tables nested more than 64 deep"), err
    assert "flatten the value" in err
    # brackets inside strings and comments are not nesting
    fine = tmp_path / "fine.toml"
    fine.write_text('# [[[[[[\n[data]\nbuiltin = "iris"\nname = "' + "[" * 100 + '"\n'
                    '[[rankers]]\nname = "variance"\n')  # fmt: skip
    assert main(["validate", str(fine), "-q"]) == 0


def test_a_ranker_label_is_bounded(tmp_path, capsys):
    """issue 48 item 8: a 5,000-character label made the drawing take 5 GB and 149 s."""
    path = tmp_path / "long.toml"
    path.write_text(
        f'[data]\nbuiltin = "iris"\n[[rankers]]\nname = "variance"\nlabel = "{"v" * 5000}"\n'
    )
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "[[rankers]][0].label: label 'vvvvvvvvvvvvvvvvvvvv'... has 5000 characters" in err
    assert "give one of at most 64" in err
    path.write_text(
        f'[data]\nbuiltin = "iris"\n[[rankers]]\nname = "variance"\nlabel = "{"v" * 64}"\n'
    )
    assert main(["validate", str(path), "-q"]) == 0
