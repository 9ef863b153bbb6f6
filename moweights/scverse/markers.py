"""Marker features per group: every class of a class target against the rest of the samples.

What a single-cell user asks first ("which genes mark each cell type?"), computed as
scanpy's ``scanpy.tl.rank_genes_groups`` computes it with ``reference="rest"``:

- per group, the statistics of one test (``test``): Welch's t (``"t-test"``: means and
  unbiased variances of ``X``, Welch–Satterthwaite degrees of freedom, two-sided p-values
  of :func:`scipy.stats.ttest_ind_from_stats`) or the Wilcoxon rank-sum z-score
  (``"wilcoxon"``: average ranks over all samples, normal approximation, optional tie
  correction), Benjamini–Hochberg q-values within the group;
- log2 fold changes as scanpy defines them for log1p data (its default,
  ``mean_in_log_space=True``): ``log2((expm1(mean_in) + 1e-9) / (expm1(mean_out) + 1e-9))``
  of the means of ``X`` (``expm1`` in base ``log_base`` when the data were log-transformed
  in another base); meaningful only when ``X`` holds ``log1p`` values;
- the fraction of samples with a nonzero value in and out of the group (scanpy's ``pts``
  and ``pts_rest``; for counts or log1p counts, the fraction expressing);
- the order: every member ranker ranks the features for the binary target "group vs
  rest" (a registered class ranker by name, or ``"wilcoxon"``, the rank-sum z above), each
  member's order is made one-sided by ``direction``, and the members' orders are combined
  per group by ``aggregate`` (a name of :data:`aggregation.combine.METHODS`).

Statistics and order are separate on purpose: the p-values are those of the test,
whatever the members; the members decide only the rank.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy import stats

from aggregation.combine import METHODS, check_methods
from aggregation.ranking import GenericRanking, Ranking
from rankers.columns import class_moments
from rankers.exceptions import InvalidInputError, InvalidParameterError
from rankers.ties import ranking_order

__all__ = [
    "DIRECTIONS",
    "MARKER_COLUMNS",
    "TESTS",
    "find_markers",
    "group_statistics",
    "rank_positions",
]

#: the tests whose statistic, p- and q-values the table reports (scanpy's method names)
TESTS = ("t-test", "wilcoxon")

#: which features come first in a group's order: higher in the group ("up", scanpy's
#: default), lower ("down"), or the most different either way ("both", scanpy's
#: ``rankby_abs=True``)
DIRECTIONS = ("up", "down", "both")

#: the columns of :func:`find_markers`' table, before one ``<member>.rank`` column per member
MARKER_COLUMNS = (
    "group",
    "feature",
    "rank",
    "score",
    "logfoldchange",
    "pvalue",
    "qvalue",
    "pct_in",
    "pct_out",
)

#: the rank-sum member's name (no registered ranker: it ranks by the test's z-score)
_RANKSUM = "wilcoxon"

#: the aggregates that combine a plain list of rankings (weighted_mean_rank needs weights)
_AGGREGATES = tuple(m for m in METHODS if m != "weighted_mean_rank")

#: at most this many values of X densified at once for the rank-sum test (scanpy's bound)
_CHUNK_VALUES = 10_000_000


def _group_codes(y: Any, n_samples: int) -> tuple[np.ndarray, list]:
    """Integer codes 0..G-1 of the groups and the group labels (categories keep their
    order, other labels are sorted); every group needs two samples."""
    if isinstance(getattr(y, "dtype", None), pd.CategoricalDtype):
        cat = pd.Categorical(y).remove_unused_categories()
    else:
        cat = pd.Categorical(np.asarray(y, dtype=object).ravel())
    if len(cat) != n_samples:
        raise InvalidInputError(
            f"the groups must be one label per sample: {n_samples} samples, {len(cat)} labels"
        )
    if (cat.codes < 0).any():
        where = np.flatnonzero(cat.codes < 0)[:5].tolist()
        raise InvalidInputError(
            f"the groups have missing labels (samples {where}); drop those samples or give "
            "them a group of their own"
        )
    codes = np.asarray(cat.codes, dtype=np.intp)
    labels = list(cat.categories)
    if len(labels) < 2:
        raise InvalidInputError(
            f"markers need at least two groups; the target has one ({labels[0]!r})"
        )
    counts = np.bincount(codes, minlength=len(labels))
    small = [labels[g] for g in np.flatnonzero(counts < 2)]
    if small:
        raise InvalidInputError(
            f"groups {small!r} have fewer than two samples: no variance within them; "
            "merge or drop them"
        )
    return codes, labels


def _as_matrix(X: Any) -> tuple[Any, tuple[str, ...] | None]:
    """``X`` as float64 CSR or a dense float64 array (never the caller's object to write
    to), and its column names when it is a DataFrame."""
    names = None
    if isinstance(X, pd.DataFrame):
        names = tuple(str(c) for c in X.columns)
        X = X.to_numpy(dtype=np.float64)
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        data = X.data
    else:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise InvalidInputError(f"X must be 2-dimensional, got shape {X.shape}")
        data = X
    # a finite sum has finite terms (NaN and inf carry through it); a sum that overflows
    # is checked value by value (no temporary of X's size otherwise)
    if not np.isfinite(data.sum()) and not np.isfinite(data).all():
        raise InvalidInputError("X holds NaN or infinite values; markers need finite values")
    return X, names


#: values per block of the raw-counts check (a rounded copy of no more than a block)
_SPARSE_BLOCK = 1 << 20


def _sparse_group_moments(X, codes: np.ndarray, n_groups: int, counts: np.ndarray):
    """Per group and feature of CSR ``X``: the mean, the sum of squares around it and the
    number of nonzero values (:func:`rankers.columns.class_moments`: one pass over the
    stored values, no copy of ``X``, no matrix product; a second around the means only
    for the features where ``Σx² - n_g μ_g²`` cancels); also every feature's number of
    stored values and their sum."""
    means, m2, stored, nnz = class_moments(X, codes, counts, stored=True)
    total = (counts[:, None] * means).sum(axis=0)
    return means, m2, nnz.astype(np.float64), stored.sum(axis=0), total


def _looks_like_counts(values: np.ndarray) -> bool:
    """Whether every value is a nonnegative integer and some exceed 1 (raw counts), read in
    blocks that stop at the first non-integer (log1p data stop in the first block, before
    the extremes are read) and never copy more than a block (a rounded copy of 10^8
    stored values is 800 MB)."""
    flat = values.reshape(-1)
    if not flat.size:
        return False
    for start in range(0, flat.size, _SPARSE_BLOCK):
        block = flat[start : start + _SPARSE_BLOCK]
        if not (block == np.round(block)).all():
            return False
    return bool(flat.min() >= 0 and flat.max() > 1)


def group_statistics(X: Any, codes: np.ndarray, n_groups: int) -> dict[str, np.ndarray]:
    """Per group and per feature: mean, unbiased variance and nonzero fraction of the
    group's samples and of the rest.

    Within-group sums of squares are taken around the group's own mean; the rest's are
    the sum of the other groups' (each plus ``n_h (mean_h - mean_rest)²``, Chan's
    combination), so no variance is a difference of large sums.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    codes : ndarray of int of shape (n_samples,)
        Group of every sample, 0..n_groups-1.
    n_groups : int

    Returns
    -------
    dict
        ``counts`` (n_groups,), and ``means``, ``vars``, ``pts``, ``means_rest``,
        ``vars_rest``, ``pts_rest``, each of shape (n_groups, n_features).
    """
    return _summaries(*_group_moments(X, codes, n_groups)[:4])


def _group_moments(X: Any, codes: np.ndarray, n_groups: int):
    """Per group: counts, and per feature the means, sums of squares around them and
    nonzero counts; for sparse ``X`` also every feature's stored values and their sum
    (None for dense ``X``)."""
    m, d = X.shape
    counts = np.bincount(codes, minlength=n_groups).astype(np.float64)
    if sp.issparse(X):
        means, m2, nnz, stored, total = _sparse_group_moments(X.tocsr(), codes, n_groups, counts)
        return counts, means, m2, nnz, stored, total
    member = sp.csr_matrix((np.ones(m), (codes, np.arange(m))), shape=(n_groups, m))
    means = (member @ X) / counts[:, None]
    m2 = np.zeros((n_groups, d))
    step = max(1, _CHUNK_VALUES // max(m, 1))
    for lo in range(0, d, step):
        dev = X[:, lo : lo + step] - means[codes, lo : lo + step]
        m2[:, lo : lo + step] = member @ (dev * dev)
    nnz = member @ (X != 0).astype(np.float64)
    return counts, means, m2, nnz, None, None


def _summaries(counts: np.ndarray, means: np.ndarray, m2: np.ndarray, nnz: np.ndarray):
    """:func:`group_statistics` from the groups' moments."""
    n_groups = counts.size
    total = counts.sum()
    n_rest = total - counts
    means_rest = (counts @ means - counts[:, None] * means) / n_rest[:, None]
    m2_rest = np.empty_like(m2)
    for g in range(n_groups):
        others = np.arange(n_groups) != g
        spread = counts[others, None] * (means[others] - means_rest[g]) ** 2
        m2_rest[g] = m2[others].sum(axis=0) + spread.sum(axis=0)
    return {
        "counts": counts,
        "means": means,
        "vars": m2 / (counts[:, None] - 1.0),
        "pts": nnz / counts[:, None],
        "means_rest": means_rest,
        "vars_rest": m2_rest / (n_rest[:, None] - 1.0),
        "pts_rest": (nnz.sum(axis=0) - nnz) / n_rest[:, None],
    }


def _t_test_class_scores(X: Any, moments: tuple) -> tuple[np.ndarray, np.ndarray] | None:
    """``class_scores_`` and ``constant_features_`` of a ``t_test`` fit on sparse ``X`` and
    more than two groups, from the groups' moments (:func:`_group_moments`) instead of a
    pass of the fit's own; None where the fit's own rules need that pass.

    The fit sets aside a feature whose range is within the tie tolerance of its largest
    absolute value; for nonnegative values with an implicit zero in every feature that is
    a feature with no nonzero value, read from the counts. Its moments are those of one
    pass over the stored values, ``Σx² - n μ²`` summed again where that cancels, as
    here; the sums may differ in their last bits (the fit sums the blocks of rows of the
    informative features only), which the order's tie rule absorbs. Needs the values in
    1e-100..1e100 (the fit rescales columns outside it), none negative, and an implicit
    zero in every feature (else its extremes are the fit's to read).
    """
    from rankers.supervised.univariate import one_vs_rest_welch

    counts, means, m2, nnz, stored, total = moments
    data = X.data
    if stored is None or counts.size < 3 or (stored >= X.shape[0]).any():
        return None
    if data.size and not (data.min() >= 0.0 and data.max() <= 1e100):
        return None
    constant = nnz.sum(axis=0) == 0
    informative = np.flatnonzero(~constant)
    # a feature's largest value is at least the mean of its stored values
    with np.errstate(invalid="ignore", divide="ignore"):
        if not (total[informative] / stored[informative] >= 1e-100 * (1.0 + 1e-9)).all():
            return None
    scores = np.zeros((counts.size, constant.size))
    if informative.size:
        parts = one_vs_rest_welch(
            counts, means[:, informative], m2[:, informative], np.arange(counts.size)
        )
        for g, (_, _, log_p) in enumerate(parts):
            own = np.maximum(-log_p / np.log(10.0), 0.0)
            scores[g, informative] = own
            scores[g, constant] = min(0.0, float(own.min()))
    return scores, constant


def _welch(st: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Welch's t of every group against the rest and its two-sided p-value, as scanpy:
    a NaN statistic (equal means, no variance) is 0 and its p-value 1."""
    n_in = st["counts"][:, None]
    n_out = st["counts"].sum() - n_in
    with np.errstate(invalid="ignore", divide="ignore"):
        t, p = stats.ttest_ind_from_stats(
            st["means"],
            np.sqrt(st["vars"]),
            n_in,
            st["means_rest"],
            np.sqrt(st["vars_rest"]),
            n_out,
            equal_var=False,
        )
    t = np.where(np.isnan(t), 0.0, t)
    p = np.where(np.isnan(p), 1.0, p)
    return t, p


def _tie_term(sorted_block: np.ndarray) -> np.ndarray:
    """``Σ (t³ - t)`` over the runs of equal values of every column of a column-sorted block."""
    n, w = sorted_block.shape
    starts = np.ones((n, w), dtype=bool)
    starts[1:] = sorted_block[1:] != sorted_block[:-1]
    flat = np.flatnonzero(starts.T.ravel())  # run starts, column after column
    lengths = np.diff(np.r_[flat, n * w]).astype(np.float64)
    column = flat // n
    return np.bincount(column, weights=lengths**3 - lengths, minlength=w)


def _ranksum(X: Any, codes: np.ndarray, n_groups: int, tie_correct: bool):
    """Wilcoxon rank-sum z-score of every group against the rest and its two-sided
    p-value (normal approximation), as scanpy's ``method="wilcoxon"``: average ranks over
    all samples, ``z = (R - n_g (N + 1) / 2) / sqrt(tc n_g (N - n_g) (N + 1) / 12)`` with
    ``tc = 1 - Σ (t³ - t) / (N³ - N)`` when ``tie_correct`` (else 1)."""
    m, d = X.shape
    counts = np.bincount(codes, minlength=n_groups).astype(np.float64)
    member = sp.csr_matrix((np.ones(m), (codes, np.arange(m))), shape=(n_groups, m))
    rank_sums = np.zeros((n_groups, d))
    tc = np.ones(d)
    step = max(1, _CHUNK_VALUES // max(m, 1))
    for lo in range(0, d, step):
        block = X[:, lo : lo + step]
        block = block.toarray() if sp.issparse(block) else np.asarray(block)
        ranks = stats.rankdata(block, axis=0)
        rank_sums[:, lo : lo + step] = member @ ranks
        if tie_correct:
            tc[lo : lo + step] = 1.0 - _tie_term(np.sort(block, axis=0)) / (float(m) ** 3 - m)
    n_in = counts[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (rank_sums - n_in * (m + 1) / 2.0) / np.sqrt(tc * n_in * (m - n_in) * (m + 1) / 12.0)
    z = np.where(np.isnan(z), 0.0, z)
    return z, 2.0 * stats.norm.sf(np.abs(z))


def _log_fold_changes(st: dict[str, np.ndarray], log_base: float | None) -> np.ndarray:
    """scanpy's log2 fold change of log1p data (``mean_in_log_space=True``)."""
    scale = 1.0 if log_base is None else np.log(float(log_base))
    with np.errstate(over="ignore"):
        num = np.expm1(st["means"] * scale) + 1e-9
        den = np.expm1(st["means_rest"] * scale) + 1e-9
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log2(num / den)


def _one_sided(order_idx: np.ndarray, diff: np.ndarray, direction: str) -> np.ndarray:
    """Scores whose order is ``order_idx`` made one-sided: for "up", features higher in
    the group first (in the member's order), equal ones next, lower ones last (the most
    different last); "down" the mirror; "both" the member's order itself."""
    d = len(order_idx)
    points = np.empty(d)
    points[order_idx] = np.arange(d, 0, -1, dtype=np.float64)
    if direction == "both":
        return points
    sign = np.sign(diff) if direction == "up" else -np.sign(diff)
    return sign * points


def _check_members(members: Sequence[str] | str) -> list[str]:
    import rankers

    names = [members] if isinstance(members, str) else list(members)
    if not names:
        raise InvalidParameterError("rankers names no ranker; give at least one, e.g. 't_test'")
    out = []
    for name in names:
        if name == _RANKSUM:
            out.append(name)
            continue
        est = rankers.get(name)
        kind = rankers.ranker_tags(est).target_kind
        if kind not in ("classification", "both"):
            raise InvalidParameterError(
                f"ranker {name!r} takes no class target (its target kind is {kind!r}); "
                "markers need class rankers such as 't_test', 'anova_f', 'fisher_score' or "
                f"'info_gain', or {_RANKSUM!r}"
            )
        out.append(name)
    if len(set(out)) != len(out):
        raise InvalidParameterError(f"rankers lists a ranker twice: {out}")
    return out


def find_markers(
    X: Any,
    y: Any,
    names: Sequence[str] | None = None,
    *,
    rankers: Sequence[str] | str = ("t_test", "wilcoxon"),
    aggregate: str = "mean_rank",
    test: str = "t-test",
    direction: str = "up",
    tie_correct: bool = False,
    log_base: float | None = None,
    n_top: int | None = None,
    params: dict[str, dict] | None = None,
) -> pd.DataFrame:
    """Marker features of every group: one-vs-rest statistics and a consensus rank per group.

    Parameters
    ----------
    X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
        The data, ``log1p`` values for the fold changes to mean what scanpy's mean (never
        modified).
    y : array-like of shape (n_samples,)
        The group of every sample (a categorical keeps its categories' order; other
        labels are sorted). Every group needs two samples; missing labels are refused.
    names : sequence of str, optional
        Feature names; default the DataFrame's columns or ``"x0", "x1", ...``.
    rankers : str or sequence of str, default=("t_test", "wilcoxon")
        The members that order the features of each group: registry names of class
        rankers (:func:`rankers.available`, target kind "classification" or "both"), each
        fitted on the binary target "group vs rest", and ``"wilcoxon"`` (the rank-sum
        z-score below).
    aggregate : str, default="mean_rank"
        How the members' orders combine per group: a name of
        :data:`aggregation.combine.METHODS` (any but ``"weighted_mean_rank"``).
    test : {"t-test", "wilcoxon"}, default="t-test"
        The test whose statistic (``score``), p- and q-values the table reports: Welch's t
        or the rank-sum z-score, as scanpy's ``rank_genes_groups(method=...)``.
    direction : {"up", "down", "both"}, default="up"
        Which features lead each group's order: higher in the group than in the rest
        (scanpy's default), lower, or the most different either way (``rankby_abs``).
    tie_correct : bool, default=False
        Tie correction of the rank-sum variance (scanpy's ``tie_correct``).
    log_base : float, optional
        Base of the log1p transform of ``X`` (scanpy's ``adata.uns["log1p"]["base"]``);
        default the natural logarithm.
    n_top : int, optional
        Keep the ``n_top`` best features of each group (default all).
    params : dict, optional
        Parameters of the member rankers, by name (``{"info_gain": {"n_bins": 5}}``).

    Returns
    -------
    DataFrame
        One row per group and feature, the groups in order and each group's features
        best first, with columns ``group`` (categorical), ``feature``, ``rank`` (1 =
        best; features the aggregate cannot separate keep the features' order),
        ``score`` (the test's statistic, signed: positive = higher in the group),
        ``logfoldchange``, ``pvalue``, ``qvalue`` (Benjamini–Hochberg over the group's
        features), ``pct_in``, ``pct_out``, then ``<member>.rank`` for every member.
        ``attrs["params"]`` records the arguments.

    Raises
    ------
    InvalidInputError
        Fewer than two groups, a group of one sample, a missing label, non-finite values.
    InvalidParameterError
        An unknown test, direction or aggregate, or a member that takes no class target.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.log1p(rng.poisson(1.0, size=(60, 5)).astype(float))
    >>> X[:20, 0] += 2.0  # feature x0 marks group "a"
    >>> table = find_markers(X, np.repeat(["a", "b", "c"], 20), rankers="t_test")
    >>> table.loc[table["group"] == "a", "feature"].iloc[0]
    'x0'
    """
    if test not in TESTS:
        raise InvalidParameterError(f"test must be one of {TESTS}; got {test!r}")
    if direction not in DIRECTIONS:
        raise InvalidParameterError(f"direction must be one of {DIRECTIONS}; got {direction!r}")
    (aggregate,) = check_methods([aggregate], _AGGREGATES)
    members = _check_members(rankers)
    params = dict(params or {})
    unknown = sorted(set(params) - set(members))
    if unknown:
        raise InvalidParameterError(f"params names rankers that are not members: {unknown}")
    Xm, frame_names = _as_matrix(X)
    m, d = Xm.shape
    if names is None:
        names = frame_names if frame_names is not None else tuple(f"x{j}" for j in range(d))
    names = tuple(str(n) for n in names)
    if len(names) != d or len(set(names)) != d:
        raise InvalidInputError(f"names must be {d} distinct feature names; got {len(names)}")
    codes, labels = _group_codes(y, m)
    G = len(labels)
    if _looks_like_counts(Xm.data if sp.issparse(Xm) else Xm):
        warnings.warn(
            "X holds only nonnegative integers, like raw counts: the log fold changes assume "
            "log1p values (normalise each cell and take log1p first, as scanpy expects)",
            UserWarning,
            stacklevel=2,
        )
    if n_top is not None and not 1 <= int(n_top) <= d:
        raise InvalidParameterError(f"n_top must be in 1..{d}; got {n_top!r}")

    moments = _group_moments(Xm, codes, G)
    st = _summaries(*moments[:4])
    ranksum = None
    if test == "wilcoxon" or _RANKSUM in members:
        ranksum = _ranksum(Xm, codes, G, tie_correct)
    score, pvalue = _welch(st) if test == "t-test" else ranksum
    lfc = _log_fold_changes(st, log_base)
    diff = st["means"] - st["means_rest"]

    import rankers as registry

    # t_test's test of every group against the rest as one multiclass fit tests them (its
    # class_scores_ are the per-group fits' scores): from the group moments above where
    # they are the fit's, else from one fit (every group's moments in one pass)
    every_group = None
    if "t_test" in members and not params.get("t_test") and G > 2:
        every_group = _t_test_class_scores(Xm, moments) if sp.issparse(Xm) else None
        if every_group is None:
            fit = registry.get("t_test").fit(Xm, codes)
            every_group = fit.class_scores_, fit.constant_features_

    blocks = []
    for g, label in enumerate(labels):
        target = (codes == g).astype(np.int64)
        member_rankings = []
        for name in members:
            if name == _RANKSUM:
                z = ranksum[0][g]
                key = {"up": z, "down": -z, "both": np.abs(z)}[direction]
                member_rankings.append(Ranking(names, key, method=name))
                continue
            if name == "t_test" and every_group is not None:
                order = ranking_order(every_group[0][g], every_group[1])
            else:
                est = registry.get(name, **params.get(name, {})).fit(Xm, target)
                order = np.asarray(est.ranking_, dtype=np.intp)
            member_rankings.append(
                Ranking(names, _one_sided(order, diff[g], direction), method=name)
            )
        combined = METHODS[aggregate](member_rankings)
        position = rank_positions(combined, names)
        q = stats.false_discovery_control(pvalue[g], method="bh")
        block = pd.DataFrame(
            {
                "feature": names,
                "rank": position + 1,
                "score": score[g],
                "logfoldchange": lfc[g],
                "pvalue": pvalue[g],
                "qvalue": q,
                "pct_in": st["pts"][g],
                "pct_out": st["pts_rest"][g],
            }
        )
        for name, r in zip(members, member_rankings, strict=True):
            block[f"{name}.rank"] = rank_positions(r, names) + 1
        block = block.sort_values("rank", kind="stable")
        if n_top is not None:
            block = block.iloc[: int(n_top)]
        block.insert(0, "group", label)
        blocks.append(block)
    table = pd.concat(blocks, ignore_index=True)
    table["group"] = pd.Categorical(table["group"], categories=labels)
    table.attrs["params"] = {
        "rankers": list(members),
        "aggregate": aggregate,
        "test": test,
        "direction": direction,
        "tie_correct": bool(tie_correct),
        "log_base": log_base,
        "n_top": n_top,
    }
    return table


def rank_positions(ranking: Ranking | GenericRanking, names: Sequence[str]) -> np.ndarray:
    """The 0-based position of every feature along a ranking, in the order of ``names``.

    Features the ranking ties keep its order: a :class:`~aggregation.Ranking`'s own
    ``order``, a generic ranking's blocks by the order of ``names``.

    Parameters
    ----------
    ranking : Ranking or GenericRanking
    names : sequence of str
        The ranking's features, in the order of the result.

    Returns
    -------
    ndarray of int
        ``0`` for the best feature.

    Examples
    --------
    >>> from aggregation import Ranking
    >>> rank_positions(Ranking.from_order(["b", "c", "a"]), ["a", "b", "c"]).tolist()
    [2, 0, 1]
    """
    names = tuple(names)
    if isinstance(ranking, Ranking):
        if ranking.names != names:  # the same order of names (each group's): no reindex
            ranking = ranking.reindex(names)
        pos = np.empty(len(names), dtype=np.intp)
        pos[ranking.order_idx] = np.arange(len(names))
        return pos
    ranks = ranking.ranks.reindex(list(names)).to_numpy()
    order = np.argsort(ranks, kind="stable")
    pos = np.empty(len(names), dtype=np.intp)
    pos[order] = np.arange(len(names))
    return pos
