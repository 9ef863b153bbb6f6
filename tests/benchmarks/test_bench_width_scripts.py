"""Issue 17's measuring scripts: the MCFS floor row and the config run's ranker choice."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def test_mcfs_floor_row_bounds_what_an_implementation_can_gain(bench_script):
    pytest.importorskip("skfeature", reason="needs the 'peers' extra: pip install '.[peers]'")
    m = bench_script("speed.bench_spectral_cpu")
    rows = m.compare("blobs40x60", ["mcfs"], repeat=1)
    labels = [r["method"] for r in rows]
    # the whole path: min(n, m - 1) steps, every feature ranked
    assert labels == ["mcfs", "mcfs lars", "mcfs floor (graph, eigenvectors, 39 products)"]
    ours, _, floor = rows
    assert floor["peer CPU s"] == ours["peer CPU s"]  # the same peer timing, one ratio each
    assert floor["speed-up"] == pytest.approx(floor["peer CPU s"] / floor["ours CPU s"])
    assert floor["ours CPU s"] > 0 and math.isnan(floor["rho"])
    assert ours["rho"] > 0.99  # the peer fed the same graph ranks alike


def test_config_run_takes_the_classic_five_or_the_rankers_named(bench_script):
    m = bench_script("scale.bench_width_run")
    data, out = Path("/d/expression.csv"), Path("/d/results")
    classic = tomllib.loads(m.config_text(data, out, None))
    assert [r["name"] for r in classic["rankers"]] == [
        "variance",
        "laplacian",
        "info_gain",
        "chi2",
        "random_forest",
    ]
    assert classic["rankers"][1]["params"] == {"n_neighbors": 5}  # examples/config.toml's
    named = ["variance", "laplacian", "spec", "mcfs", "frane"]
    chosen = tomllib.loads(m.config_text(data, out, named))
    assert [r["name"] for r in chosen["rankers"]] == named
    assert all(set(r) == {"name"} for r in chosen["rankers"])  # each with its defaults
    # the rest of the run is the same, with the paths given
    for config in (classic, chosen):
        assert config["data"] == {"path": data.as_posix(), "target": "target"}
        assert config["output"]["dir"] == out.as_posix()
        assert config["evaluation"]["topk"] == {"metric": "mse", "at_k": 16}


def test_tax_runs_variance_against_the_read_csv_floor(bench_script, tmp_path, capsys):
    m = bench_script("scale.bench_width_run")
    config = tomllib.loads(m.TAX_CONFIG.format(data="/d/tax.csv"))
    assert [r["name"] for r in config["rankers"]] == ["variance"]
    assert config["evaluation"] == {"enabled": False}
    out = tmp_path / "tax.md"
    m.main(["--tax", "--samples", "12", "--features", "30", "--repeat", "1",
            "--workdir", str(tmp_path), "--out", str(out)])  # fmt: skip
    text = out.read_text()
    rows = [line.split(" | ") for line in text.splitlines() if line.startswith("| ")][1:]
    run, floor = (float(row[1]) for row in rows)
    ratio = float(text.split("run / floor = ")[1].split("x")[0])
    assert run > 0 and floor > 0
    assert ratio == pytest.approx(run / floor, rel=0.02)  # the printed ratio is the table's
    assert "read_csv" in capsys.readouterr().out
