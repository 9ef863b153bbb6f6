"""Compare methods over several data sets: Friedman, Nemenyi and Wilcoxon–Holm.

The frequentist tests follow Demšar (2006): rank the methods on every data set (rank 1 = best,
ties share their average rank), test the average ranks with Friedman's χ²_F and Iman and
Davenport's F_F, then -- only if that rejects -- find which pairs differ with Nemenyi's critical
difference (all pairs) or with pairwise Wilcoxon signed-rank tests and Holm's correction.

Every function takes a results table: a :class:`pandas.DataFrame` (or 2-D array) with one row per
data set and one column per method, plus ``higher_is_better`` (``False`` for errors such as MSE).
A missing value (NaN) marks a run that failed; ``nan_policy="omit"`` (default) drops the data sets
that have one, with a warning naming them, because ranking needs every method on a data set;
``"raise"`` refuses. Infinite values are rejected: a failed run should be NaN.

The Bayesian comparison of two methods lives in :mod:`aggregation.evaluation.bayes` (optional extra
``moweights[bayes]``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as st

from aggregation.evaluation._results import Result
from rankers.exceptions import InvalidInputError, InvalidParameterError
from rankers.ties import average_ranks as _tied_average_ranks

__all__ = [
    "FriedmanResult",
    "NemenyiResult",
    "WilcoxonHolmResult",
    "average_ranks",
    "cd_groups",
    "critical_difference",
    "friedman",
    "nemenyi",
    "rank_table",
    "wilcoxon_holm",
]

_NAN_POLICIES = ("omit", "raise")


# ------------------------------------------------------------------ input
def _results(table: Any, higher_is_better: Any, nan_policy: str) -> pd.DataFrame:
    """The validated float table (data sets × methods) with incomplete data sets handled."""
    if not isinstance(higher_is_better, (bool, np.bool_)):
        raise InvalidParameterError(
            f"higher_is_better must be True or False, got {higher_is_better!r}"
        )
    if nan_policy not in _NAN_POLICIES:
        raise InvalidParameterError(
            f"nan_policy must be one of {_NAN_POLICIES}, got {nan_policy!r}"
        )
    if not isinstance(table, pd.DataFrame):
        arr = np.asarray(table)
        if arr.ndim != 2:
            raise InvalidInputError(
                f"the results table must be 2-D (data sets × methods), got {arr.ndim}-D"
            )
        table = pd.DataFrame(arr)
    dup = table.columns[table.columns.duplicated()].unique().tolist()
    if dup:
        raise InvalidInputError(f"method names (columns) must be unique; repeated: {dup}")
    bad = [c for c in table.columns if not pd.api.types.is_numeric_dtype(table[c])]
    if bad:
        raise InvalidInputError(f"columns {bad} are not numeric; every method needs scores")
    if table.shape[1] < 2:
        raise InvalidInputError(f"comparing methods needs at least 2 columns, got {table.shape[1]}")
    values = table.to_numpy(dtype=float)
    inf = np.argwhere(np.isinf(values))
    if len(inf):
        cells = [(table.index[i], table.columns[j]) for i, j in inf[:5]]
        raise InvalidInputError(
            f"infinite scores at (data set, method) {cells}; mark failed runs as NaN instead"
        )
    frame = pd.DataFrame(values, index=table.index, columns=table.columns)
    incomplete = np.isnan(values).any(axis=1)
    if incomplete.any():
        names = frame.index[incomplete].tolist()
        if nan_policy == "raise":
            raise InvalidInputError(f"data sets {names} have missing scores (NaN)")
        warnings.warn(
            f"dropping {len(names)} data set(s) with missing scores (NaN): {names}",
            UserWarning,
            stacklevel=3,
        )
        frame = frame[~incomplete]
    if len(frame) < 2:
        missing = pd.Series(np.isnan(values).sum(axis=0), index=table.columns)
        worst = missing[missing > 0].sort_values(ascending=False).head(3).to_dict()
        hint = f"; NaN counts of the most incomplete methods: {worst}" if worst else ""
        raise InvalidInputError(
            f"comparing methods needs at least 2 data sets (rows) with a score for every "
            f"method, got {len(frame)}{hint}"
        )
    return frame


def _ranks(frame: pd.DataFrame, higher_is_better: bool) -> pd.DataFrame:
    values = frame.to_numpy(dtype=np.float64)
    # scores within 1e-9 of the larger of two (relative) are ties (rankers.ties), so that a
    # method's rank does not depend on the last bits of its score; the scores are not changed
    ranks = [_tied_average_ranks(row, descending=higher_is_better) for row in values]
    return pd.DataFrame(
        np.array(ranks).reshape(values.shape), index=frame.index, columns=frame.columns
    )


def rank_table(
    table: pd.DataFrame, higher_is_better: bool, *, nan_policy: str = "omit"
) -> pd.DataFrame:
    """Rank of every method on every data set: 1 = best, tied scores share their average rank.

    Parameters
    ----------
    table : DataFrame or 2-D array-like
        Rows are data sets, columns are methods.
    higher_is_better : bool
        ``True`` for accuracies and AUCs, ``False`` for errors (MSE, RMAE).
    nan_policy : {"omit", "raise"}, default="omit"
        ``"omit"`` drops data sets with a missing score (warning names them).

    Returns
    -------
    DataFrame
        Same index (minus dropped data sets) and columns as ``table``.
    """
    return _ranks(_results(table, higher_is_better, nan_policy), higher_is_better)


def average_ranks(
    table: pd.DataFrame, higher_is_better: bool, *, nan_policy: str = "omit"
) -> pd.Series:
    """Average rank of every method over the data sets (lower = better), in column order.

    See :func:`rank_table` for the parameters.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"a": [0.9, 0.8, 0.7], "b": [0.8, 0.8, 0.9]})
    >>> average_ranks(t, higher_is_better=True).tolist()
    [1.5, 1.5]
    """
    return rank_table(table, higher_is_better, nan_policy=nan_policy).mean().rename("avg_rank")


# ------------------------------------------------------------------ results
def _p(p: float) -> str:
    return f"{p:.3g}"


@dataclass(frozen=True, repr=False, eq=False)
class FriedmanResult(Result):
    """Friedman's test and the Iman–Davenport correction (Demšar 2006, §3.2.2).

    Attributes
    ----------
    statistic, pvalue : float
        Friedman's χ²_F (``k - 1`` degrees of freedom) and its p-value.
    f_statistic, f_pvalue : float
        Iman and Davenport's F_F = (N - 1) χ²_F / (N (k - 1) - χ²_F) with ``k - 1`` and
        ``(k - 1)(N - 1)`` degrees of freedom; less conservative than χ²_F, and the one
        Demšar recommends. ``inf`` (p = 0) when every data set ranks the methods alike.
    k, n : int
        Number of methods and of data sets used.
    avg_ranks : Series
        Average rank per method (1 = best).
    tie_correction : bool
        Whether χ²_F was divided by the ties correction (as ``scipy.stats.friedmanchisquare``).
    """

    statistic: float
    pvalue: float
    f_statistic: float
    f_pvalue: float
    k: int
    n: int
    avg_ranks: pd.Series
    tie_correction: bool

    def __repr__(self) -> str:
        return (
            f"FriedmanResult(k={self.k}, N={self.n}, chi2_F={self.statistic:.4g} "
            f"(p={_p(self.pvalue)}), F_F={self.f_statistic:.4g} (p={_p(self.f_pvalue)}))"
        )

    def to_frame(self) -> pd.DataFrame:
        """One row of statistics (to stack results of several experiments)."""
        d = self.to_dict()
        d.pop("avg_ranks")
        return pd.DataFrame([d])


@dataclass(frozen=True, repr=False, eq=False)
class NemenyiResult(Result):
    """Nemenyi's all-pairs comparison by average ranks (Demšar 2006, §3.2.2).

    Attributes
    ----------
    cd : float
        Critical difference: two methods differ when their average ranks are at least ``cd``
        apart.
    q_alpha : float
        Studentized range quantile divided by √2 (Demšar's Table 5a/5b).
    alpha : float
    k, n : int
    avg_ranks : Series
        Average rank per method, in column order.
    pvalues : DataFrame
        k × k p-values of the pairwise Nemenyi tests (1 on the diagonal).
    groups : tuple of tuple of str
        The maximal sets of methods, adjacent in rank order, with no two of them significantly
        different -- the thick bars of the critical-difference diagram, best group first.
    """

    cd: float
    q_alpha: float
    alpha: float
    k: int
    n: int
    avg_ranks: pd.Series
    pvalues: pd.DataFrame
    groups: tuple[tuple[str, ...], ...]

    @property
    def significant(self) -> pd.DataFrame:
        """k × k booleans: are the average ranks of the pair at least ``cd`` apart?"""
        r = self.avg_ranks.to_numpy()
        diff = np.abs(r[:, None] - r[None, :])
        return pd.DataFrame(
            diff >= self.cd, index=self.avg_ranks.index, columns=self.avg_ranks.index
        )

    def __repr__(self) -> str:
        groups = "; ".join(", ".join(map(str, g)) for g in self.groups) or "none"
        return (
            f"NemenyiResult(k={self.k}, N={self.n}, alpha={self.alpha}, CD={self.cd:.4g}, "
            f"groups=[{groups}])"
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per pair of methods (better average rank first)."""
        order = self.avg_ranks.sort_values(kind="stable").index
        i, j = np.triu_indices(self.k, 1)
        a, b = order[i], order[j]
        sig = self.significant
        return pd.DataFrame(
            {
                "method_a": a,
                "method_b": b,
                "rank_a": self.avg_ranks[a].to_numpy(),
                "rank_b": self.avg_ranks[b].to_numpy(),
                "rank_difference": (self.avg_ranks[b].to_numpy() - self.avg_ranks[a].to_numpy()),
                "p_value": [self.pvalues.at[x, y] for x, y in zip(a, b, strict=True)],
                "significant": [bool(sig.at[x, y]) for x, y in zip(a, b, strict=True)],
            }
        )


@dataclass(frozen=True, repr=False, eq=False)
class WilcoxonHolmResult(Result):
    """Pairwise Wilcoxon signed-rank tests with Holm's step-down correction.

    Attributes
    ----------
    alpha : float
    n : int
        Number of data sets used.
    zero_method : str
    table : DataFrame
        One row per pair: ``method_a, method_b, wins_a, wins_b, statistic, p_value, p_holm,
        significant`` (``p_holm <= alpha``).
    """

    alpha: float
    n: int
    zero_method: str
    table: pd.DataFrame = field(repr=False)

    def __repr__(self) -> str:
        sig = self.table[self.table["significant"]]
        pairs = (
            ", ".join(f"{a}~{b}" for a, b in zip(sig["method_a"], sig["method_b"], strict=True))
            or "none"
        )
        return f"WilcoxonHolmResult(N={self.n}, alpha={self.alpha}, significant=[{pairs}])"

    def to_frame(self) -> pd.DataFrame:
        """The per-pair table (a copy)."""
        return self.table.copy()


# ------------------------------------------------------------------ tests
def _check_alpha(alpha: Any) -> float:
    if not isinstance(alpha, Real) or not 0 < alpha < 1:
        raise InvalidParameterError(f"alpha must be in (0, 1), got {alpha!r}")
    return float(alpha)


def friedman(
    table: pd.DataFrame,
    higher_is_better: bool,
    *,
    tie_correction: bool = False,
    nan_policy: str = "omit",
) -> FriedmanResult:
    """Friedman's test that all methods perform alike, with the Iman–Davenport F_F.

    χ²_F = 12 N / (k (k + 1)) · [Σ_j R_j² − k (k + 1)² / 4] over the average ranks R_j
    (Demšar 2006, Eq. on p. 11).

    Parameters
    ----------
    table : DataFrame or 2-D array-like
        Rows are data sets (N ≥ 2), columns are methods (k ≥ 2).
    higher_is_better : bool
        ``False`` for errors.
    tie_correction : bool, default=False
        Divide χ²_F by the ties correction 1 − Σ(t³ − t) / (N k (k² − 1)), as
        ``scipy.stats.friedmanchisquare`` does. Demšar (and the papers using his procedure)
        do not; without ties both agree.
    nan_policy : {"omit", "raise"}, default="omit"

    Returns
    -------
    FriedmanResult

    References
    ----------
    Demšar, J. (2006). Statistical comparisons of classifiers over multiple data sets. JMLR 7.
    Iman, R. L. and Davenport, J. M. (1980). Approximations of the critical region of the
    Friedman statistic. Communications in Statistics 9.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"a": [1, 2, 3, 4.0], "b": [2, 3, 4, 5.0], "c": [3, 1, 5, 6.0]})
    >>> round(friedman(t, higher_is_better=False).statistic, 3)
    3.5
    """
    ranks = rank_table(table, higher_is_better, nan_policy=nan_policy)
    r = ranks.to_numpy()
    n, k = r.shape
    avg = r.mean(axis=0)
    if tie_correction:
        # The general form (k − 1) Σ_j (S_j − N(k+1)/2)² / (Σ r² − N k (k+1)²/4) is χ²_F divided
        # by the ties correction, without counting the ties; 0/0 (all tied) means no evidence.
        num = (k - 1) * np.sum((n * avg - n * (k + 1) / 2) ** 2)
        den = np.sum(r**2) - n * k * (k + 1) ** 2 / 4
        chi2 = float(num / den) if den > 0 else 0.0
    else:
        chi2 = float(12 * n / (k * (k + 1)) * (np.sum(avg**2) - k * (k + 1) ** 2 / 4))
    chi2 = max(chi2, 0.0)  # rounding can leave -1e-15 when all ranks are equal
    den = n * (k - 1) - chi2
    f_stat = float((n - 1) * chi2 / den) if den > 1e-12 * n * k else np.inf
    return FriedmanResult(
        statistic=chi2,
        pvalue=float(st.chi2.sf(chi2, k - 1)),
        f_statistic=f_stat,
        f_pvalue=float(st.f.sf(f_stat, k - 1, (k - 1) * (n - 1))),
        k=k,
        n=n,
        avg_ranks=ranks.mean().rename("avg_rank"),
        tie_correction=bool(tie_correction),
    )


def critical_difference(k: int, n: int, alpha: float = 0.05) -> float:
    """Nemenyi's critical difference q_α √(k (k + 1) / (6 N)) for ``k`` methods on ``n`` data sets.

    q_α is the studentized range quantile (infinite degrees of freedom) divided by √2, which
    reproduces Demšar's Table 5a (e.g. 2.569 for k = 4, α = 0.05).

    Examples
    --------
    >>> round(critical_difference(4, 14), 2)
    1.25
    """
    for name, v, low in (("k", k, 2), ("n", n, 1)):
        if not isinstance(v, Integral) or v < low:
            raise InvalidParameterError(f"{name} must be an integer >= {low}, got {v!r}")
    return _q_alpha(k, _check_alpha(alpha)) * float(np.sqrt(k * (k + 1) / (6 * n)))


def _q_alpha(k: int, alpha: float) -> float:
    return float(st.studentized_range.ppf(1 - alpha, k, np.inf) / np.sqrt(2))


def cd_groups(avg_ranks: pd.Series, cd: float) -> tuple[tuple[str, ...], ...]:
    """The groups of a critical-difference diagram: methods not significantly different.

    The maximal runs of rank-adjacent methods whose extreme average ranks are less than
    ``cd`` apart, best run first (:attr:`NemenyiResult.groups`).

    Examples
    --------
    >>> cd_groups(pd.Series({"a": 1.0, "b": 1.5, "c": 3.0}), cd=1.0)
    (('a', 'b'),)
    """
    ordered = avg_ranks.sort_values(kind="stable")
    r = ordered.to_numpy(dtype=float)
    # "Not different" is an interval relation on the sorted ranks, so its maximal cliques are
    # runs i..last[i]; a run is maximal unless the previous one reaches as far.
    # (the differences themselves are compared with cd, as the definition reads: r_i + cd
    # may round onto r_j while r_j - r_i stays below cd)
    idx = np.arange(len(r))
    within = (r[None, :] - r[:, None] < cd) & (idx[None, :] >= idx[:, None])
    last = idx + within.sum(axis=1) - 1
    keep = (last > idx) & (last > np.concatenate(([-1], last[:-1])))
    names = ordered.index.tolist()
    return tuple(tuple(names[i : last[i] + 1]) for i in idx[keep])


def nemenyi(
    table: pd.DataFrame,
    higher_is_better: bool,
    alpha: float = 0.05,
    *,
    nan_policy: str = "omit",
) -> NemenyiResult:
    """Nemenyi's post-hoc test: which pairs of methods differ, by their average ranks.

    Use it after :func:`friedman` rejects. Two methods differ significantly when their average
    ranks are at least CD = q_α √(k (k + 1) / (6 N)) apart; the pairwise p-value is that of the
    studentized range at ``|R_i − R_j| / √(k (k + 1) / (6 N)) · √2``.

    Parameters
    ----------
    table : DataFrame or 2-D array-like
        Rows are data sets, columns are methods.
    higher_is_better : bool
    alpha : float, default=0.05
    nan_policy : {"omit", "raise"}, default="omit"

    Returns
    -------
    NemenyiResult

    See Also
    --------
    aggregation.plots.plot_cd_diagram : draws the result.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"a": [0.9] * 10, "b": [0.8] * 10, "c": [0.7] * 10})
    >>> nemenyi(t, higher_is_better=True).groups
    (('a', 'b'), ('b', 'c'))
    """
    alpha = _check_alpha(alpha)
    ranks = rank_table(table, higher_is_better, nan_policy=nan_policy)
    n, k = ranks.shape
    avg = ranks.mean().rename("avg_rank")
    se = np.sqrt(k * (k + 1) / (6 * n))
    q = _q_alpha(k, alpha)
    r = avg.to_numpy()
    z = np.abs(r[:, None] - r[None, :]) / se
    p = st.studentized_range.sf(z * np.sqrt(2), k, np.inf)
    cd = q * se
    return NemenyiResult(
        cd=float(cd),
        q_alpha=q,
        alpha=alpha,
        k=k,
        n=n,
        avg_ranks=avg,
        pvalues=pd.DataFrame(np.clip(p, 0, 1), index=avg.index, columns=avg.index),
        groups=cd_groups(avg, cd),
    )


def _holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values: max_{j<=i} (m − j + 1) p_(j), capped at 1."""
    m = len(p)
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    return adjusted


def wilcoxon_holm(
    table: pd.DataFrame,
    higher_is_better: bool,
    alpha: float = 0.05,
    *,
    zero_method: str = "zsplit",
    nan_policy: str = "omit",
) -> WilcoxonHolmResult:
    """Wilcoxon signed-rank test on every pair of methods, p-values corrected by Holm.

    Parameters
    ----------
    table : DataFrame or 2-D array-like
        Rows are data sets, columns are methods.
    higher_is_better : bool
        Only used for the win counts; the two-sided test itself is symmetric.
    alpha : float, default=0.05
        Family-wise error rate over the k (k − 1) / 2 pairs.
    zero_method : {"zsplit", "wilcox", "pratt"}, default="zsplit"
        Data sets where the two methods tie: ``"zsplit"`` splits their ranks between both
        sides, as Demšar (2006, §3.1.3) recommends; see ``scipy.stats.wilcoxon``.
    nan_policy : {"omit", "raise"}, default="omit"
        Applied to the whole table, so every pair is tested on the same data sets.

    Returns
    -------
    WilcoxonHolmResult
    """
    alpha = _check_alpha(alpha)
    if zero_method not in ("zsplit", "wilcox", "pratt"):
        raise InvalidParameterError(
            f"zero_method must be 'zsplit', 'wilcox' or 'pratt', got {zero_method!r}"
        )
    frame = _results(table, higher_is_better, nan_policy)
    values = frame.to_numpy()
    i, j = np.triu_indices(values.shape[1], 1)
    diff = values[:, i] - values[:, j]
    tied = np.all(diff == 0, axis=0)
    stat = np.full(len(i), np.nan)
    p = np.ones(len(i))  # identical scores everywhere: no evidence of a difference
    if (~tied).any():
        res = st.wilcoxon(diff[:, ~tied], axis=0, zero_method=zero_method)
        stat[~tied], p[~tied] = res.statistic, res.pvalue
    sign = 1 if higher_is_better else -1
    adjusted = _holm(p)
    out = pd.DataFrame(
        {
            "method_a": frame.columns[i],
            "method_b": frame.columns[j],
            "wins_a": np.sum(sign * diff > 0, axis=0),
            "wins_b": np.sum(sign * diff < 0, axis=0),
            "statistic": stat,
            "p_value": p,
            "p_holm": adjusted,
            "significant": adjusted <= alpha,
        }
    )
    return WilcoxonHolmResult(alpha=alpha, n=len(frame), zero_method=zero_method, table=out)
