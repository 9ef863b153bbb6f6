"""Tests of aggregation.evaluation.bayes (the Bayesian comparison, extra moweights[bayes])."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from aggregation.evaluation.bayes import BayesianComparison, bayesian_comparison
from rankers.exceptions import InvalidInputError, InvalidParameterError


def test_bayesian_needs_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "baycomp", None)  # import baycomp now raises ImportError
    with pytest.raises(ImportError, match=r"moweights\[bayes\]"):
        bayesian_comparison([0.9, 0.8, 0.7], [0.8, 0.7, 0.6], higher_is_better=True)


def test_bayesian_signed_rank():
    pytest.importorskip("baycomp", reason="needs the 'bayes' extra: pip install '.[bayes]'")
    rng = np.random.default_rng(3)
    a = rng.uniform(0.6, 0.9, 20)
    b = a - 0.05 + rng.normal(0, 0.01, 20)  # a better by 0.05 on (almost) every data set
    kw = {"nsamples": 3000, "random_state": 0}
    res = bayesian_comparison(a, b, True, rope=0.01, names=("frane", "laplace"), **kw)
    assert isinstance(res, BayesianComparison) and res.test == "signed-rank" and res.n == 20
    assert res.p_left > 0.95 and res.p_left + res.p_rope + res.p_right == pytest.approx(1)
    assert "P(frane better)" in repr(res)
    # errors: the lower one is better, so the same numbers read as errors favour b
    flipped = bayesian_comparison(a, b, False, rope=0.01, **kw)
    assert flipped.p_right == pytest.approx(res.p_left)
    # a rope wider than every difference makes them practically equivalent
    assert bayesian_comparison(a, b, True, rope=0.5, **kw).p_rope > 0.95
    # same seed, same answer
    again = bayesian_comparison(a, b, True, rope=0.01, names=("frane", "laplace"), **kw)
    assert again.to_dict() == res.to_dict()
    assert res.to_frame().loc[0, "method_a"] == "frane"


def test_bayesian_bad_input():
    with pytest.raises(InvalidInputError, match="one shape"):
        bayesian_comparison([1.0, 2.0], [1.0, 2.0, 3.0], True)
    with pytest.raises(InvalidInputError, match="finite"):
        bayesian_comparison([1.0, np.nan], [1.0, 2.0], True)
    with pytest.raises(InvalidParameterError, match="rope"):
        bayesian_comparison([1.0, 2.0], [1.0, 2.0], True, rope=-1)
    with pytest.raises(InvalidInputError, match="multiple of runs"):
        bayesian_comparison(np.ones((3, 10)), np.ones((3, 10)), True, runs=3)


@pytest.mark.slow
def test_bayesian_hierarchical(tmp_path, monkeypatch):
    pytest.importorskip("baycomp", reason="needs the 'bayes' extra: pip install '.[bayes]'")
    pytest.importorskip(
        "stan", reason="needs the 'bayes' extra: pip install '.[bayes]'"
    )  # the first run compiles the Stan model: minutes
    monkeypatch.chdir(tmp_path)  # where httpstan's first compile leaves its build/ folder
    rng = np.random.default_rng(0)
    a = rng.normal(0.8, 0.02, (8, 10))
    b = a - 0.01 + rng.normal(0, 0.005, (8, 10))
    kw = {"rope": 0.002, "nsamples": 500, "chains": 2, "random_state": 1}
    res = bayesian_comparison(a, b, True, **kw)
    assert res.test == "hierarchical" and res.n == 8
    assert res.p_left > 0.9
    assert bayesian_comparison(a, b, True, **kw).to_dict() == res.to_dict()
    assert bayesian_comparison(b, a, True, **kw).p_right > 0.9
