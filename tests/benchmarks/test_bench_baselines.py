"""Smoke test of benchmarks/speed/bench_baselines.py: every baseline against its peer."""

from __future__ import annotations

import pytest

pytest.importorskip("skfeature", reason="needs the 'peers' extra: pip install '.[peers]'")
pytest.importorskip("skrebate", reason="needs the 'peers' extra: pip install '.[peers]'")


def test_quick_run_agrees_with_the_peers(tmp_path, capsys, bench_script):
    module = bench_script("speed.bench_baselines")
    out = tmp_path / "baselines.md"
    module.main(["--quick", "--out", str(out)])
    text = out.read_text()
    assert text.startswith("Command: `python -m benchmarks.speed.bench_baselines --quick")
    lines = [line for line in text.splitlines() if line.startswith("|")][2:]
    rows = {line.split("|")[1].strip(): line for line in lines}
    for method in ("spec", "mcfs", "mcfs lars", "laplacian", "relieff", "rrelieff", "svm_rfe"):
        assert any(name.startswith(method) for name in rows), method
    for line in lines:
        cells = [c.strip() for c in line.strip("|").split("|")]
        method, peer, rho = cells[0], cells[2], cells[9]
        if peer in ("scikit-feature", "skrebate"):
            # the same algorithm on the same data and settings: the same scores
            assert float(rho) > 0.99, line
        if method == "svm_rfe":
            assert cells[10] == "same ranking"
    assert "Baselines vs peers" in capsys.readouterr().out
