"""Bayesian comparison of two methods over several data sets (Benavoli et al. 2017).

Needs the optional extra ``moweights[bayes]`` (baycomp; pystan for the hierarchical test).
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as st

from aggregation.evaluation._results import Result
from rankers.exceptions import InvalidInputError, InvalidParameterError

__all__ = ["BayesianComparison", "bayesian_comparison"]

_BAYES_HINT = "install the optional extra: pip install 'moweights[bayes]'"


@dataclass(frozen=True, repr=False, eq=False)
class BayesianComparison(Result):
    """Posterior probabilities that method a or b is practically better (Benavoli et al. 2017).

    Attributes
    ----------
    p_left, p_rope, p_right : float
        Probability that ``method_a`` is better, that the two are practically equivalent
        (difference inside the rope), and that ``method_b`` is better. They sum to 1.
    method_a, method_b : str
    rope : float
        Half-width of the region of practical equivalence, in the scores' units.
    test : str
        ``"hierarchical"`` (per-fold scores) or ``"signed-rank"`` (one score per data set).
    n : int
        Number of data sets.
    """

    p_left: float
    p_rope: float
    p_right: float
    method_a: str
    method_b: str
    rope: float
    test: str
    n: int

    def __repr__(self) -> str:
        return (
            f"BayesianComparison({self.test}, N={self.n}, rope={self.rope:g}: "
            f"P({self.method_a} better)={self.p_left:.3f}, P(equivalent)={self.p_rope:.3f}, "
            f"P({self.method_b} better)={self.p_right:.3f})"
        )

    def to_frame(self) -> pd.DataFrame:
        """One row (to stack several comparisons)."""
        return pd.DataFrame([self.to_dict()])


def _import_baycomp():
    try:
        import baycomp
    except ImportError as exc:
        raise ImportError(
            f"bayesian_comparison needs the package 'baycomp'; {_BAYES_HINT}"
        ) from exc
    return baycomp


def _hierarchical_sample(
    x: np.ndarray, y: np.ndarray, rope: float, runs: int, nsamples: int, chains: int, seed: int
) -> np.ndarray:
    """baycomp's ``HierarchicalTest.sample`` with a seeded Stan run and no cache file.

    baycomp's own method leaves Stan unseeded and pickles its last sample into the working
    directory; this runs the same Stan model (shipped with baycomp) on the same prepared data.
    """
    try:
        import stan
    except ImportError as exc:
        raise ImportError(
            f"the hierarchical test (2-D per-fold scores) needs 'pystan>=3.4'; {_BAYES_HINT}"
        ) from exc
    import baycomp.multiple

    rng = np.random.default_rng(seed)
    diff = y - x
    scale = np.mean(np.std(diff, axis=1))  # baycomp puts every data set on one scale
    if scale == 0:
        raise InvalidInputError(
            "the per-fold differences have no spread on any data set; pass one score per "
            "data set (1-D) for the signed-rank test instead"
        )
    rope, diff = rope / scale, diff / scale
    q, n_scores = diff.shape
    flat = np.var(diff, axis=1) == 0  # as baycomp: a constant row would make Stan fail
    half = n_scores // 2
    for row in np.flatnonzero(flat):
        diff[row, :half] = rng.uniform(-rope, rope, half)
        diff[row, half:] = -diff[row, :half]
    std_within = np.mean(np.std(diff, axis=1))
    std_among = np.std(np.mean(diff, axis=1)) if q > 1 else std_within
    max_diff = np.max(np.abs(diff))
    data = {
        "x": diff,
        "Nsamples": n_scores,
        "q": q,
        "rho": runs / n_scores,  # 1 / number of folds
        "deltaLow": -max_diff,
        "deltaHi": max_diff,
        "lowerAlpha": 1,
        "upperAlpha": 2,
        "lowerBeta": 0.01,
        "upperBeta": 0.1,
        "stdLow": 0,
        "stdHi": std_within * 1000,
        "std0Low": 0,
        "std0Hi": std_among * 1000,
    }
    code = Path(baycomp.multiple.__file__).with_name("hierarchical-t-test.stan").read_text()
    model = stan.build(code, data=data, random_seed=int(rng.integers(2**31 - 1)))
    fit = model.sample(num_chains=chains, num_samples=nsamples)
    mu, std, nu = fit["delta0"][0], fit["std0"][0], fit["nu"][0]
    left = st.t.cdf(-rope, nu, mu, std)
    right = st.t.sf(rope, nu, mu, std)
    return np.column_stack([left, 1 - left - right, right])


def bayesian_comparison(
    scores_a: Any,
    scores_b: Any,
    higher_is_better: bool,
    *,
    rope: float = 0.0,
    runs: int = 1,
    names: tuple[str, str] = ("a", "b"),
    nsamples: int | None = None,
    chains: int = 4,
    random_state: int | np.random.Generator | None = None,
) -> BayesianComparison:
    """Bayesian comparison of two methods over several data sets (Benavoli et al. 2017).

    With per-fold scores (2-D: data sets × cross-validation folds) this is the hierarchical
    Bayesian t-test of Corani et al. (2017) -- the test the FRANe paper uses; with one score per
    data set (1-D) it is the Bayesian signed-rank test. Both come from the ``baycomp`` package;
    the hierarchical one also needs ``pystan`` (Linux/macOS). Its first run per Python
    interpreter compiles the Stan model (minutes; httpstan caches it and leaves a ``build/``
    folder in the working directory); inside Jupyter call ``nest_asyncio.apply()`` first.

    Parameters
    ----------
    scores_a, scores_b : array-like of shape (n_datasets,) or (n_datasets, n_folds)
        Scores of methods a and b, rows aligned (same data sets, same folds).
    higher_is_better : bool
        ``False`` for errors; the result is oriented either way so that "left" is a better.
    rope : float, default=0.0
        Half-width of the region of practical equivalence, in the scores' units (FRANe uses
        0.001 of RMAE). 0 gives ``p_rope = 0``.
    runs : int, default=1
        Repetitions of cross-validation in the columns of 2-D scores (``n_folds · runs``
        columns); sets the correlation 1 / folds of the hierarchical model.
    names : (str, str), default=("a", "b")
    nsamples : int, optional
        Posterior samples: per chain for the hierarchical test (default 10000), in total for
        the signed-rank test (default 50000) -- baycomp's defaults.
    chains : int, default=4
        Stan chains (hierarchical test only).
    random_state : int, Generator or None
        Seeds the posterior sampling; the same seed gives the same probabilities.

    Returns
    -------
    BayesianComparison
        ``p_left`` (a better), ``p_rope``, ``p_right`` (b better): the share of posterior
        samples in which each region is the most probable, as baycomp reports them.

    Raises
    ------
    ImportError
        If ``baycomp`` (or, for 2-D scores, ``pystan``) is missing: install ``moweights[bayes]``.

    References
    ----------
    Benavoli, A., Corani, G., Demšar, J. and Zaffalon, M. (2017). Time for a change: a tutorial
    for comparing multiple classifiers through Bayesian analysis. JMLR 18.
    Corani, G., Benavoli, A., Demšar, J., Mangili, F. and Zaffalon, M. (2017). Statistical
    comparison of classifiers through Bayesian hierarchical modelling. Machine Learning 106.
    """
    if not isinstance(higher_is_better, (bool, np.bool_)):
        raise InvalidParameterError(
            f"higher_is_better must be True or False, got {higher_is_better!r}"
        )
    if not isinstance(rope, Real) or not rope >= 0:
        raise InvalidParameterError(f"rope must be a number >= 0, got {rope!r}")
    for name, v in (("runs", runs), ("chains", chains), ("nsamples", nsamples)):
        if v is not None and (not isinstance(v, Integral) or v < 1):
            raise InvalidParameterError(f"{name} must be a positive integer, got {v!r}")
    a = np.asarray(scores_a, dtype=float)
    b = np.asarray(scores_b, dtype=float)
    if a.shape != b.shape or a.ndim not in (1, 2):
        raise InvalidInputError(
            f"scores_a and scores_b must have one shape, (n_datasets,) or (n_datasets, n_folds); "
            f"got {a.shape} and {b.shape}"
        )
    if len(a) < 2 or not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise InvalidInputError(
            f"need finite scores on at least 2 data sets; got {len(a)} data set(s) with "
            f"{int(np.sum(~np.isfinite(a)) + np.sum(~np.isfinite(b)))} non-finite value(s)"
        )
    if a.ndim == 2 and (a.shape[1] < 2 or a.shape[1] % runs):
        raise InvalidInputError(
            f"2-D scores need at least 2 columns, a multiple of runs={runs}; got {a.shape[1]}"
        )
    baycomp = _import_baycomp()
    if not higher_is_better:  # baycomp's "left" is the first method scoring higher
        a, b = -a, -b
    seed = int(np.random.default_rng(random_state).integers(2**31 - 1))
    if a.ndim == 2:
        sample = _hierarchical_sample(a, b, float(rope), runs, nsamples or 10000, chains, seed)
        test = "hierarchical"
    else:
        sample = baycomp.SignedRankTest.sample(
            a, b, float(rope), nsamples=nsamples or 50000, random_state=seed
        )
        test = "signed-rank"
    p_left, p_rope, p_right = baycomp.multiple.Posterior(sample).probs(with_rope=True)
    return BayesianComparison(
        p_left=float(p_left),
        p_rope=float(p_rope),
        p_right=float(p_right),
        method_a=str(names[0]),
        method_b=str(names[1]),
        rope=float(rope),
        test=test,
        n=len(a),
    )
