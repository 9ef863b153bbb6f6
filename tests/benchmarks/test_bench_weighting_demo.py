"""bench_weighting_demo's three NSGA-II loops: the same fronts, and each loop what it says."""

from __future__ import annotations

import numpy as np


def test_the_three_loops_give_the_same_front_and_swap_back(bench_script, monkeypatch):
    from pymoo.operators.crossover.sbx import SBX

    import moweights.weighting.nsga2 as loop

    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(name, "1")  # the script sets them on import; restored after
    m = bench_script("speed.bench_weighting_demo")
    calls = []
    pymoo_sbx = SBX._do

    def counted(self, *args, **kwargs):
        calls.append(1)
        return pymoo_sbx(self, *args, **kwargs)

    monkeypatch.setattr(SBX, "_do", counted)
    ours = (loop._sbx, loop._pm, loop._crowding, loop._unique)
    runs = {}
    for name in m.LOOPS:
        del calls[:]
        runs[name] = m._search(name, 3)
        # ours never calls pymoo's SBX; the other two do
        assert bool(calls) == (name != "ours"), name
        assert (loop._sbx, loop._pm, loop._crowding, loop._unique) == ours  # swapped back
    for name, ((X, F), total, objectives) in runs.items():
        np.testing.assert_array_equal(X, runs["pymoo"][0][0])
        np.testing.assert_array_equal(F, runs["pymoo"][0][1])
        assert 0 < objectives < total, name
