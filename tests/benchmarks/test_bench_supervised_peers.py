"""Smoke test of benchmarks/speed/bench_supervised_peers.py: the new rankers agree with peers."""

from __future__ import annotations

import pytest

pytest.importorskip("skfeature", reason="needs the 'peers' extra: pip install '.[peers]'")
pytest.importorskip("skrebate", reason="needs the 'peers' extra: pip install '.[peers]'")
pytest.importorskip("mrmr", reason="needs the 'peers' extra: pip install '.[peers]'")


def test_quick_run_agrees_with_the_peers(tmp_path, bench_script):
    module = bench_script("speed.bench_supervised_peers")
    out = tmp_path / "peers.md"
    module.main(["--quick", "--out", str(out)])
    rows = [line.split("|") for line in out.read_text().splitlines() if line.startswith("| ")]
    agreement = {cells[2].strip(): cells[-2].strip() for cells in rows[1:]}
    for method in ("anova_f", "t_test (p-values)", "multisurf"):
        diff = float(agreement[method].rsplit(" ", 1)[-1])
        assert diff < 1e-9, (method, agreement[method])
    assert agreement["fisher_score (order)"] == "same order"
    assert agreement["mrmr FCQ (first 10)"] == "same selections"
    # CMIM: the same selections, or the same up to an exact tie broken by the lower index
    cmim = agreement["cmim (first 5)"]
    assert cmim == "same selections" or "a tie" in cmim, cmim


def test_an_order_that_differs_only_among_tied_scores_is_the_same_order(bench_script):
    from types import SimpleNamespace

    import numpy as np

    module = bench_script("speed.bench_supervised_peers")
    scores = np.array([3.0, 1.0, 2.0, 1.0 + 1e-13])  # features 1 and 3 tie by our rule
    fitted = SimpleNamespace(scores_=scores, ranking_=np.array([0, 2, 1, 3]))
    assert module.same_order(fitted, np.array([0, 2, 1, 3])) == "same order"
    assert module.same_order(fitted, np.array([0, 2, 3, 1])).startswith("same order up to ties")
    assert module.same_order(fitted, np.array([2, 0, 1, 3])) == "orders differ"
