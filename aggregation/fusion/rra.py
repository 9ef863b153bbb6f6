"""Robust Rank Aggregation (Kolde, Laur, Adler & Vilo, Bioinformatics 28(4), 2012).

Each feature's normalised ranks ``r = rank / n`` (one per input; the paper gives a feature an
input does not rank ``r = 1``, which never happens here: the inputs share one feature set)
are sorted, ``r_(1) <= ... <= r_(q)``. Under the null hypothesis that the inputs rank the
feature at random, ``r_(k)`` is the k-th order statistic of ``q`` uniforms, whose
distribution is ``Beta(k, q - k + 1)``; the paper's rho score is the smallest of these
order-statistic p-values,

    beta_k = P(U_(k) <= r_(k)) = I_{r_(k)}(k, q - k + 1),    rho = min_k beta_k,

so a feature ranked near the top by *some* inputs gets a small ``rho`` however the others
rank it: inputs that fail (rank at random) do not drown those that found it. ``rho`` is not
a p-value (it is a minimum of ``q`` dependent ones); the paper corrects it for the number of
inputs by Bonferroni, ``p = min(1, q rho)``, and gives its exact null distribution,
``P(rho <= x) = 1 - P(U_(k) > t_k for every k)`` with ``t_k`` the ``x``-quantile of
``Beta(k, q - k + 1)``, which the R package RobustRankAggreg computes with ``exact=TRUE``
through the Stuart–Aerts recurrence (an alternating sum its documentation calls
computationally unstable). Here the exact value is a sum of non-negative binomial terms
instead (:func:`_exact_pvalues`): nothing cancels, so small p-values keep their relative
accuracy.

A tie of ranks in an input (tied scores, a generic ranking's block) counts as its average
rank, as in :func:`~aggregation.combine.mean_rank`. For inputs without ties, ``r`` is never
below a uniform variable (``P(r <= x) = floor(n x) / n <= x``), so both p-values are
conservative under the null.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
from scipy import special

from aggregation._align import aligned
from aggregation.ranking import AnyRanking, Ranking, rank_vector
from rankers.exceptions import InvalidParameterError
from rankers.ties import tie_groups

__all__ = ["rra", "rra_pvalues"]

#: beta scores below this are recomputed in log space (the score is -log10 rho, which must
#: stay finite when rho underflows: a feature first in 70 lists of 20,000 has rho ~ 1e-300)
_TINY = 1e-280

#: below this rho, the quantiles of the exact p-value are refined in log space
_REFINE = 1e-50

#: features per block of the exact p-value's dynamic programme: memory O(block q^2)
_BLOCK = 2048


def _sorted_ranks(rankings: Iterable[AnyRanking]) -> tuple[tuple[str, ...], np.ndarray]:
    """Feature names and the (n, q) matrix of each feature's ranks, sorted along each row."""
    _, names, ranks = aligned(rankings, rank_vector)
    return names, np.sort(ranks.T, axis=1)


def _log_betainc(k: np.ndarray, q: int, x: np.ndarray) -> np.ndarray:
    """``log I_x(k, q - k + 1)`` for ``0 < x < 1``, computed in log space (no underflow).

    ``I_x(k, q - k + 1) = P(Binomial(q, x) >= k)``: a log-sum-exp of the binomial terms
    ``j = k..q`` (1-D ``k`` and ``x`` of one length).
    """
    x = x[:, None]
    j = np.arange(q + 1, dtype=float)[None, :]
    terms = (
        special.gammaln(q + 1)
        - special.gammaln(j + 1)
        - special.gammaln(q - j + 1)
        + j * np.log(x)
        + (q - j) * np.log1p(-x)
    )
    terms[j < np.asarray(k, dtype=float)[:, None]] = -np.inf  # only j >= k
    return special.logsumexp(terms, axis=1)


def _rho(r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``rho`` and ``log rho`` of every feature from its sorted normalised ranks ``r`` (n, q).

    ``rho`` is the smallest beta score of the row as scipy computes it
    (``scipy.stats.beta.cdf``); a beta score below :data:`_TINY` is recomputed in log space,
    so that ``log rho`` (hence the score ``-log10 rho``) stays finite where ``rho``
    underflows.
    """
    q = r.shape[1]
    k = np.arange(1, q + 1, dtype=float)
    beta = special.betainc(k, q - k + 1, r)  # P(U_(k) <= r_(k)) = scipy.stats.beta.cdf
    rho = beta.min(axis=1)
    with np.errstate(divide="ignore"):
        log_beta = np.log(beta)
    rows, cols = np.nonzero(beta < _TINY)  # then 0 < r < 1
    if rows.size:
        log_beta[rows, cols] = _log_betainc(cols + 1.0, q, r[rows, cols])
    log_rho = log_beta.min(axis=1)
    tiny = rho < _TINY
    rho[tiny] = np.exp(log_rho[tiny])
    return rho, log_rho


def _beta_quantiles(x: np.ndarray, q: int) -> np.ndarray:
    """``t[i, k-1]``: the ``x[i]``-quantile of ``Beta(k, q - k + 1)`` for ``k = 1..q``.

    scipy's ``betaincinv`` loses accuracy for small ``x`` (at ``1e-300``, ``1e-7`` relative
    for some ``k``; NaN for others once ``x`` is below about ``1e-108``). Below
    :data:`_REFINE` (or wherever it gives no positive number), Newton's method on ``log t``
    solves ``log I_t = log x`` in log space, from scipy's value or from the root of the
    leading term (``I_t ~ C(q, k) t^k`` for small ``t``).
    """
    k = np.arange(1, q + 1, dtype=float)
    with np.errstate(all="ignore"):
        t = special.betaincinv(k[None, :], q - k[None, :] + 1, x[:, None])
    bad = ~np.isfinite(t) | ((t <= 0) & (x[:, None] > 0))
    rows, cols = np.nonzero(bad | ((x[:, None] < _REFINE) & (x[:, None] > 0)))
    if rows.size:
        kk, lx = cols + 1.0, np.log(x[rows])
        log_binom = special.gammaln(q + 1) - special.gammaln(kk + 1) - special.gammaln(q - kk + 1)
        start = t[rows, cols]
        with np.errstate(divide="ignore", invalid="ignore"):
            s = np.where(bad[rows, cols], (lx - log_binom) / kk, np.log(start))
        for _ in range(50):
            ts = np.exp(s)
            log_i = _log_betainc(kk, q, ts)
            log_pdf = (kk - 1) * s + (q - kk) * np.log1p(-ts) - special.betaln(kk, q - kk + 1)
            step = (log_i - lx) / np.exp(s + log_pdf - log_i)  # d log I / d log t
            s = s - step
            if np.all(np.abs(step) <= 1e-14 * np.maximum(1.0, np.abs(s))):
                break
        t[rows, cols] = np.exp(s)
    return t


def _exact_pvalues(rho: np.ndarray, q: int) -> np.ndarray:
    """``P(rho' <= rho)`` for the rho score ``rho'`` of ``q`` independent uniforms.

    ``rho' <= x`` iff some order statistic crosses its threshold: ``U_(k) <= t_k`` with
    ``t_k = I^{-1}_x(k, q - k + 1)`` (non-decreasing in ``k``), i.e. ``N(t_k) >= k`` for the
    number ``N(t)`` of uniforms at or below ``t``. Walking ``t_1, t_2, ...`` with the
    distribution of ``N(t_{k-1})`` over the paths that have not crossed yet
    (``N(t_j) <= j - 1`` for ``j < k``), the uniforms not yet counted are uniform on
    ``(t_{k-1}, 1]``, so ``N(t_k) - N(t_{k-1})`` is binomial with ``q - N(t_{k-1})`` trials
    and ``(t_k - t_{k-1}) / (1 - t_{k-1})`` success probability. The p-value is the sum over
    ``k`` of the mass that first crosses at ``k``: non-negative terms only, so it is as
    accurate for ``1e-20`` as for ``0.5``, unlike ``1 - P(no crossing)``. Time
    O(n q^3), memory O(block q^2).
    """
    out = np.ones_like(rho)
    todo = np.flatnonzero(rho < 1.0)
    for start in range(0, len(todo), _BLOCK):
        idx = todo[start : start + _BLOCK]
        out[idx] = _exact_block(rho[idx], q)
    # rho <= P(rho' <= rho) <= q rho (the first order statistic alone; the union bound):
    # holds the last bits (and subnormal rho) to what is certain
    return np.clip(out, rho, np.minimum(1.0, q * rho))


def _exact_block(x: np.ndarray, q: int) -> np.ndarray:
    m = len(x)
    t = np.maximum.accumulate(_beta_quantiles(x, q), axis=1)  # non-decreasing after rounding
    log_fact = special.gammaln(np.arange(q + 1, dtype=float) + 1)
    state = np.zeros((m, q))  # state[:, c] = P(no crossing so far and N = c)
    state[:, 0] = 1.0
    prev = np.zeros(m)
    p = np.zeros(m)
    for step in range(1, q + 1):  # threshold t_step; paths so far have N <= step - 1
        with np.errstate(invalid="ignore", divide="ignore"):
            pi = np.where(prev < 1.0, (t[:, step - 1] - prev) / (1.0 - prev), 1.0)
        pi = np.clip(pi, 0.0, 1.0)
        new = np.zeros((m, q))
        for c in range(step):  # N(t_{step-1}) = c
            mass = state[:, c]
            trials = q - c
            # crossing now: N(t_step) >= step, i.e. at least step - c new points
            p += mass * special.bdtrc(step - c - 1, trials, pi)
            if step == q:
                continue
            # staying below: N(t_step) = c + d <= step - 1
            d = np.arange(step - c, dtype=float)[None, :]
            pmf = np.exp(
                log_fact[trials]
                - log_fact[: step - c][None, :]
                - log_fact[trials - step + c + 1 : trials + 1][None, ::-1]
                + special.xlogy(d, pi[:, None])
                + special.xlog1py(trials - d, -pi[:, None])
            )
            new[:, c:step] += mass[:, None] * pmf
        state = new
        prev = t[:, step - 1]
    return p


def rra_pvalues(rankings: Iterable[AnyRanking], exact: bool = False) -> pd.Series:
    """Each feature's Robust Rank Aggregation p-value (Kolde et al. 2012), by name.

    Parameters
    ----------
    rankings : iterable of Ranking or GenericRanking
        ``q`` rankings over one feature set (see :func:`rra`).
    exact : bool, default=False
        ``False``: the paper's Bonferroni correction of the rho score, ``p = min(1, q rho)``
        (the paper's default and RobustRankAggreg's ``exact=FALSE``), an upper bound of the
        exact value. ``True``: the exact null distribution of ``rho`` (the paper's §2.3;
        RobustRankAggreg's ``exact=TRUE``), ``P(rho' <= rho)`` for ``q`` independent uniform
        ranks. Both are increasing in ``rho``, so they order the features as :func:`rra`
        does (Bonferroni's ``1`` excepted, where it ties features :func:`rra` still orders).

    Returns
    -------
    pandas.Series
        Named ``"pvalue"``, indexed by feature in the first input's ``names`` order. A
        p-value below the smallest float is reported as ``0.0``.

    Raises
    ------
    InvalidInputError
        If ``rankings`` is empty.
    FeatureMismatchError
        If the inputs' feature sets differ.
    InvalidParameterError
        If ``exact`` is not a bool.

    See Also
    --------
    rra : The ranking these p-values go with; its scores are ``-log10 rho``, so the
        Bonferroni p-value is also ``min(1, q * 10 ** -score)``.

    Examples
    --------
    >>> rs = [Ranking.from_order(list(o)) for o in ("abcd", "abdc", "bacd")]
    >>> rra_pvalues(rs).to_dict()
    {'a': 0.375, 'b': 0.375, 'c': 1.0, 'd': 1.0}
    >>> rra_pvalues(rs, exact=True).round(4).to_dict()
    {'a': 0.2674, 'b': 0.2674, 'c': 0.9706, 'd': 0.9995}
    """
    if not isinstance(exact, (bool, np.bool_)):
        raise InvalidParameterError(f"exact must be True or False, got {exact!r}")
    names, ranks = _sorted_ranks(rankings)
    q = ranks.shape[1]
    rho, _ = _rho(ranks / len(names))
    p = _exact_pvalues(rho, q) if exact else np.minimum(1.0, q * rho)
    return pd.Series(p, index=pd.Index(names), name="pvalue")


def rra(rankings: Iterable[AnyRanking], method: str = "rra") -> Ranking:
    """Robust Rank Aggregation (Kolde et al. 2012): features that some inputs rank on top.

    With ``q`` inputs over ``n`` features, a feature's normalised ranks ``r = rank / n``
    are sorted, ``r_(1) <= ... <= r_(q)``, and each is scored by the probability that the
    ``k``-th smallest of ``q`` uniforms is at most ``r_(k)``:

        beta_k = I_{r_(k)}(k, q - k + 1)  (``scipy.stats.beta.cdf(r_(k), k, q - k + 1)``),

    ``rho = min_k beta_k`` and the feature's score is ``-log10 rho``. A feature ranked high
    by a few inputs gets a small ``rho`` whatever the rest do, so a majority of members
    that fail on a data set (rank at random) does not bury what one or two found, where
    :func:`~aggregation.combine.mean_rank` averages them in. Use it when the members are
    diverse and some are expected to fail (an ensemble over several kinds of structure);
    when all members are reliable, averaging uses more of what they say. The p-values,
    corrected for the number of inputs, are :func:`rra_pvalues`.

    Parameters
    ----------
    rankings : iterable of Ranking or GenericRanking
        Over one feature set; ties (equal scores, a generic ranking's block) count as
        average ranks.
    method : str, default="rra"
        Name given to the result.

    Returns
    -------
    Ranking
        Features in the first input's ``names`` order, ``scores = -log10 rho`` (higher =
        better; ``0`` for a feature last in every input). Equal scores (within the tie rule
        of :mod:`rankers.ties`) are ordered by increasing mean rank, then by the first
        input's ``names`` order; the scores are not changed by it.

    Raises
    ------
    InvalidInputError
        If ``rankings`` is empty.
    FeatureMismatchError
        If the inputs' feature sets differ.

    References
    ----------
    R. Kolde, S. Laur, P. Adler, J. Vilo. Robust rank aggregation for gene list integration
    and meta-analysis. Bioinformatics 28(4):573-580, 2012. doi:10.1093/bioinformatics/btr709

    Examples
    --------
    ``a`` is ranked 1, 1, 2 of 4 (``r = 0.25, 0.25, 0.5``): ``beta_1 = 1 - 0.75^3``,
    ``beta_2 = 3 (0.25^2) 0.75 + 0.25^3 = 0.15625`` and ``beta_3 = 0.5^3 = 0.125 = rho``:

    >>> rs = [Ranking.from_order(list(o)) for o in ("abcd", "abdc", "bacd")]
    >>> r = rra(rs)
    >>> r.order, (10 ** -r.scores).round(4).tolist()
    (['a', 'b', 'c', 'd'], [0.125, 0.125, 0.8438, 0.9844])
    """
    names, ranks = _sorted_ranks(rankings)
    _, log_rho = _rho(ranks / len(names))
    score = np.maximum(-log_rho / np.log(10.0), 0.0)  # rho = 1: 0, not -0
    order, group = tie_groups(score)
    tie = np.empty(len(order), dtype=np.intp)
    tie[order] = group
    # inside a tie group: by mean rank (sums of half-integer ranks are exact), then by the
    # first input's names order
    by = np.lexsort((np.arange(len(names)), ranks.sum(axis=1), tie))
    return Ranking(names, score, method=method, order_idx=by)
