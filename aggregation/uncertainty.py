"""Generic rankings with uncertainty: what several rankings still agree on when they differ.

The paper's generic ranking (:func:`aggregation.combine.generic`) cuts between positions
``p`` and ``p + 1`` only where every input has the same features above the cut.
Equivalently: a cut survives where no feature's interval ``[best position, worst
position]`` across the inputs crosses it. One disagreeing input, or one wandering feature,
then erases every boundary: real rankings of real data, by different methods or on
different sites, seldom leave more than one block.

This module relaxes the interval, keeping the definition otherwise:

- :func:`tolerant_generic` trims each feature's interval: with ``q`` inputs and
  ``tolerance`` τ, the ``t = floor(τ q)`` most extreme inputs on each side of a feature are
  left out (its interval runs from its ``t+1``-th best start to its ``t+1``-th worst end). A
  cut survives where no trimmed interval crosses it and exactly ``p`` features lie above.
  ``tolerance=0`` is the paper's definition; more tolerance never gives fewer blocks
  (trimming only shrinks intervals); it is the per-feature analogue of a trimmed mean,
  robust to a fraction τ of inputs that misplace any given feature.
- :func:`stability_partition` ranks bootstrap resamples of one data set with one ranker: each
  feature's rank confidence interval, and the ordered partition they imply
  (:func:`tolerant_generic` of the bootstrap rankings at ``(1 - confidence) / 2``).
- :func:`agreement_profile`, :func:`shared_top` and :func:`disagreement`: for inputs that
  share no block, the features every input puts in its top ``k`` and where they disagree.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.base import clone

from aggregation._align import aligned, block_ends
from aggregation._tasks import watched
from aggregation.ranking import AnyRanking, GenericRanking, Ranking, rank_vector
from rankers.exceptions import InvalidParameterError
from rankers.validation import check_n_jobs, check_seed

__all__ = [
    "StabilityPartition",
    "agreement_profile",
    "disagreement",
    "rank_intervals",
    "shared_top",
    "stability_partition",
    "tolerant_generic",
]


def _check_tolerance(tolerance: float) -> float:
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float, np.floating)):
        raise InvalidParameterError(f"tolerance must be a number in [0, 0.5); got {tolerance!r}")
    if not 0.0 <= float(tolerance) < 0.5:
        raise InvalidParameterError(
            f"tolerance must lie in [0, 0.5) (the share of inputs left out on each side of "
            f"a feature); got {tolerance}"
        )
    return float(tolerance)


def _starts_ends(rankings) -> tuple[list, tuple[str, ...], np.ndarray, np.ndarray]:
    """Each input's block start and end positions (1-based), one row per input."""
    inputs, names, ends = aligned(rankings, block_ends)
    starts = np.empty_like(ends)
    for r, row in enumerate(ends):
        size = np.bincount(row, minlength=len(names) + 1)  # features sharing each end
        starts[r] = row - size[row] + 1
    return inputs, names, starts, ends


def _trimmed(starts: np.ndarray, ends: np.ndarray, tolerance: float):
    """Each feature's trimmed interval: ``t+1``-th smallest start, ``t+1``-th largest end."""
    q = starts.shape[0]
    t = int(np.floor(tolerance * q))
    lo = np.sort(starts, axis=0)[t]
    hi = np.sort(ends, axis=0)[q - 1 - t]
    return lo, hi, t


def _partition(names, lo: np.ndarray, hi: np.ndarray, method: str) -> GenericRanking:
    """The finest ordered partition no interval ``[lo, hi]`` crosses."""
    n = len(names)
    # features whose interval covers the gap after position p: lo <= p < hi
    cover = np.zeros(n + 2, dtype=np.int64)
    np.add.at(cover, lo, 1)
    np.add.at(cover, hi, -1)
    crossing = np.cumsum(cover)[1 : n + 1]  # at p = 1..n
    above = np.cumsum(np.bincount(hi, minlength=n + 1)[1:])  # #{hi <= p}
    p = np.arange(1, n + 1)
    cuts = p[(crossing == 0) & (above == p)]  # always ends with n
    block = np.searchsorted(cuts, hi)
    order = np.argsort(block, kind="stable")
    grouped = np.split(np.asarray(names, dtype=object)[order], cuts[:-1])
    return GenericRanking([g.tolist() for g in grouped], method=method)


def tolerant_generic(
    rankings: Iterable[AnyRanking], tolerance: float = 0.0, method: str = "generic"
) -> GenericRanking:
    """The generic ranking of several rankings, each feature's interval trimmed.

    Parameters
    ----------
    rankings : iterable of Ranking or GenericRanking
        Over one feature set. A generic input's blocks are never split.
    tolerance : float in [0, 0.5), default=0.0
        Share ``τ`` of the inputs left out on each side of every feature's position
        interval: ``t = floor(τ q)`` of the ``q`` inputs. 0 gives exactly
        :func:`aggregation.combine.generic` (the paper's definition); with 10 inputs,
        ``tolerance=0.1`` lets one input place any feature anywhere.
    method : str, default="generic"
        Name of the result.

    Returns
    -------
    GenericRanking
        Blocks best first; inside a block the features keep the first input's order.

    Examples
    --------
    >>> from aggregation.ranking import Ranking
    >>> agree = [Ranking.from_order(list("abcde")) for _ in range(4)]
    >>> odd = Ranking.from_order(list("eabcd"))  # one input puts e first
    >>> len(tolerant_generic([*agree, odd]))  # strict: e's interval spans everything
    1
    >>> str(tolerant_generic([*agree, odd], tolerance=0.2))
    '{a} > {b} > {c} > {d} > {e}'
    """
    tolerance = _check_tolerance(tolerance)
    _, names, starts, ends = _starts_ends(rankings)
    lo, hi, _ = _trimmed(starts, ends, tolerance)
    return _partition(names, lo, hi, method)


def rank_intervals(rankings: Iterable[AnyRanking], tolerance: float = 0.0) -> pd.DataFrame:
    """Each feature's positions across the inputs: median rank, extremes, trimmed interval.

    Returns
    -------
    DataFrame
        Indexed by feature (the first input's order), columns ``median_rank`` (the median
        of its average ranks), ``best`` / ``worst`` (its best start and worst end
        position over all inputs), ``low`` / ``high`` (the trimmed interval of
        :func:`tolerant_generic` at ``tolerance``), and ``block`` (its block there,
        1 = best).
    """
    tolerance = _check_tolerance(tolerance)
    inputs, names, starts, ends = _starts_ends(rankings)
    lo, hi, _ = _trimmed(starts, ends, tolerance)
    _, _, ranks = aligned(inputs, rank_vector)
    partition = _partition(names, lo, hi, "generic")
    block = {f: i + 1 for i, b in enumerate(partition.blocks) for f in b}
    return pd.DataFrame(
        {
            "median_rank": np.median(ranks, axis=0),
            "best": starts.min(axis=0),
            "worst": ends.max(axis=0),
            "low": lo,
            "high": hi,
            "block": [block[f] for f in names],
        },
        index=pd.Index(names, name="feature"),
    )


# ------------------------------------------------------------------ bootstrap stability
@dataclass
class StabilityPartition:
    """What :func:`stability_partition` found: the bootstrap rankings, the intervals, the partition.

    Attributes
    ----------
    rankings : list of Ranking
        One per bootstrap resample.
    intervals : DataFrame
        :func:`rank_intervals` of the bootstrap rankings at ``(1 - confidence) / 2``:
        ``low`` / ``high`` are the feature's rank confidence interval.
    partition : GenericRanking
        The ordered partition the intervals imply.
    confidence : float
        Coverage of the intervals.
    """

    rankings: list[Ranking]
    intervals: pd.DataFrame
    partition: GenericRanking
    confidence: float

    @property
    def s(self) -> int:
        """Number of blocks of the partition."""
        return len(self.partition)

    def __repr__(self) -> str:
        first = self.partition.blocks[0]
        shown = ", ".join(first[:8]) + (" ..." if len(first) > 8 else "")
        return (
            f"StabilityPartition({len(self.rankings)} resamples, {self.confidence:.0%} intervals: "
            f"s = {self.s} block(s); first block {{{shown}}})"
        )


def _fit_one(ranker, X, y, rows, seed, method):
    est = clone(ranker)
    if "random_state" in est.get_params(deep=False):
        est.set_params(random_state=seed)
    Xb = X.iloc[rows] if isinstance(X, pd.DataFrame) else X[rows]
    yb = None if y is None else (y.iloc[rows] if isinstance(y, pd.Series) else np.asarray(y)[rows])
    est.fit(Xb, yb)
    return Ranking.from_ranker(est, method=method)


def stability_partition(
    ranker,
    X,
    y=None,
    *,
    n_bootstrap: int = 100,
    confidence: float = 0.9,
    n_jobs: int | None = None,
    random_state=None,
    progress=None,
) -> StabilityPartition:
    """Rank bootstrap resamples of ``X`` with one ranker: rank intervals and their partition.

    Every resample draws ``n_samples`` rows with replacement (the same rows of ``y``); the
    ranker (a clone, its ``random_state`` set from ``random_state``) ranks each. A feature's
    rank confidence interval at ``confidence`` leaves out ``(1 - confidence) / 2`` of the
    resamples on each side; the ordered partition is the finest one no such interval
    crosses (:func:`tolerant_generic` at that tolerance): its first block holds the
    features that rank above the rest in (about) ``confidence`` of the resamples.

    Parameters
    ----------
    ranker : BaseRanker
        An unfitted ranker (e.g. ``rankers.get("info_gain")``).
    X : array-like or DataFrame of shape (n_samples, n_features)
    y : array-like of shape (n_samples,), optional
        For supervised rankers.
    n_bootstrap : int, default=100
        Resamples.
    confidence : float in (0, 1], default=0.9
        Coverage of the rank intervals (1: each feature's full range over the resamples,
        the paper's strict definition).
    n_jobs : int or None, default=None
        Resamples ranked in parallel (joblib); the result does not depend on it.
    random_state : int, RandomState instance or None, default=None
        Draws the resamples and the ranker's seeds.
    progress : callable, optional
        Called with 1 as each resample is ranked (e.g. a tqdm bar's ``update``).

    Returns
    -------
    StabilityPartition
    """
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, (int, np.integer)):
        raise InvalidParameterError(f"n_bootstrap must be an integer >= 2; got {n_bootstrap!r}")
    if n_bootstrap < 2:
        raise InvalidParameterError(f"n_bootstrap must be >= 2; got {n_bootstrap}")
    if not 0.0 < float(confidence) <= 1.0:
        raise InvalidParameterError(f"confidence must lie in (0, 1]; got {confidence!r}")
    m = len(X)
    seeds = check_seed(random_state).spawn(n_bootstrap)
    draws = [np.random.default_rng(s) for s in seeds]
    jobs = [
        (rng.integers(0, m, size=m), int(rng.integers(np.iinfo(np.int32).max))) for rng in draws
    ]
    method = getattr(ranker, "name", None) or type(ranker).__name__
    runs = Parallel(n_jobs=check_n_jobs(n_jobs), return_as="generator")(
        watched(delayed(_fit_one)(ranker, X, y, rows, seed, method) for rows, seed in jobs)
    )  # in worker processes that die with this one
    rankings = []
    for r in runs:
        rankings.append(r)
        if progress is not None:
            progress(1)
    tolerance = min((1.0 - float(confidence)) / 2.0, 0.5 - 1e-12)
    intervals = rank_intervals(rankings, tolerance)
    partition = tolerant_generic(rankings, tolerance, method=f"stability({method})")
    return StabilityPartition(rankings, intervals, partition, float(confidence))


# ------------------------------------------------------------------ incompatible inputs
def agreement_profile(rankings: Iterable[AnyRanking], max_k: int | None = None) -> pd.DataFrame:
    """For every ``k``, the features every input puts in its top ``k``.

    Returns
    -------
    DataFrame
        One row per ``k = 1 .. max_k`` (default all): ``shared`` (how many features are in
        every input's top ``k``), ``agreement`` (``shared / k``: 1 where the inputs have the
        same top ``k``, a cut of the generic ranking), ``features`` (the shared ones, best
        median rank first). A feature tied across a block boundary counts at the block's
        end position (its worst).
    """
    inputs, names, _, ends = _starts_ends(rankings)
    n = len(names)
    max_k = n if max_k is None else int(max_k)
    if not 1 <= max_k <= n:
        raise InvalidParameterError(f"max_k must be in 1..{n}; got {max_k}")
    worst = ends.max(axis=0)  # in every input's top k iff worst <= k
    _, _, ranks = aligned(inputs, rank_vector)
    median = np.median(ranks, axis=0)
    order = np.lexsort((np.arange(n), median))
    rows = []
    for k in range(1, max_k + 1):
        shared = [names[i] for i in order if worst[i] <= k]
        rows.append({"k": k, "shared": len(shared), "agreement": len(shared) / k,
                     "features": shared})  # fmt: skip
    return pd.DataFrame(rows).set_index("k")


def shared_top(rankings: Iterable[AnyRanking], k: int | None = None) -> tuple[int, list[str]]:
    """The features every input puts in its top ``k``.

    With ``k=None``: the smallest ``k`` for which there is one, and those features (the
    features all inputs rank highest, the most useful statement when they share no block).

    Returns
    -------
    k : int
    features : list of str
        Best median rank first.
    """
    profile = agreement_profile(rankings)
    if k is None:
        k = int(profile.index[(profile["shared"] > 0).to_numpy()][0])
    if k not in profile.index:
        raise InvalidParameterError(f"k must be in 1..{len(profile)}; got {k}")
    return k, list(profile.loc[k, "features"])


def disagreement(rankings: Iterable[AnyRanking], top: int = 10) -> pd.DataFrame:
    """The features the inputs place most differently, widest rank spread first.

    Returns
    -------
    DataFrame
        ``top`` rows indexed by feature: ``median_rank``, ``best`` / ``worst`` rank over the
        inputs, ``spread`` (worst - best), and ``ranked_best_by`` / ``ranked_worst_by``
        (the input's method name, or its position).
    """
    inputs, names, ranks = aligned(rankings, rank_vector)
    labels = [r.method or f"input {i}" for i, r in enumerate(inputs)]
    best, worst = ranks.min(axis=0), ranks.max(axis=0)
    frame = pd.DataFrame(
        {
            "median_rank": np.median(ranks, axis=0),
            "best": best,
            "worst": worst,
            "spread": worst - best,
            "ranked_best_by": [labels[i] for i in ranks.argmin(axis=0)],
            "ranked_worst_by": [labels[i] for i in ranks.argmax(axis=0)],
        },
        index=pd.Index(names, name="feature"),
    )
    order = np.lexsort((frame["median_rank"].to_numpy(), -frame["spread"].to_numpy()))
    return frame.iloc[order[: int(top)]]
