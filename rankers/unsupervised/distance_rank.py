"""Distance Rank Score: how well a feature's pairwise distances follow the total distances."""

from __future__ import annotations

import sys
from numbers import Integral
from typing import ClassVar

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from scipy.spatial.distance import pdist
from sklearn.utils import check_random_state

from rankers.base import BaseRanker
from rankers.memory import check_memory
from rankers.preprocessing import minmax_scale
from rankers.ties import TIE_RTOL
from rankers.utils.param_validation import Interval, RealNotInt, StrOptions
from rankers.validation import check_n_jobs

__all__ = ["DistanceRankRanker"]

# Pairs x features ranked at once by default: each array of a block then stays within
# a typical L2/L3 cache (1 MiB of float64). Larger blocks only add cache misses, since
# every feature's work is already a long vectorised pass; smaller ones add overhead.
_BLOCK_PAIRS = 1 << 17
# Positions of the 16-bit words holding bits 48-63 and 32-47 of a float64.
_WORD_48, _WORD_32 = (3, 2) if sys.byteorder == "little" else (0, 1)
# Steps taken outwards from an inversion to find the ends of its run of equal top bits
# before falling back to a binary search over the block.
_LOCAL_STEPS = 8


class DistanceRankRanker(BaseRanker):
    """Rank features by the Distance Rank Score of Firdová, Labart & Martel (2024).

    A feature is relevant when the distances it puts between samples follow the
    distances in the whole data space, near pairs as well as distant ones. For every
    pair (i, j) of the ``N = m(m-1)/2`` pairs of samples, the total squared distance
    ``V^D = Σ_r (x_ir - x_jr)²`` and the feature's own squared distance
    ``V^r = (x_ir - x_jr)²`` are replaced by their ranks among all pairs, and the score
    is Spearman's rank correlation between the two rank vectors (paper's Eq. 3):
    close to 1 = relevant, in [-1, 1], higher is better. Ties get average ranks and the
    correlation is Pearson's on those ranks (``scipy.stats.spearmanr``), which equals
    Eq. 3 when there are no ties. The data are min-max scaled first (the paper's
    preprocessing), so the score does not depend on any feature's units.

    The total distances are ranked once; features are ranked block by block, so memory
    stays bounded whatever the number of features; it grows with the square of the
    number of samples (about 64 bytes a pair of samples, 130 MB for 2,000 samples, 3.2 GB
    for 10,000), is estimated before anything is allocated, and a fit the machine cannot
    hold stops with :class:`~rankers.exceptions.NotEnoughMemoryError` naming
    ``max_samples``. A feature's pair distances are
    ordered exactly with two linear-time radix passes on the top 32 bits of their
    float64 pattern (non-negative floats sort like their bits); only the rare runs of
    values those bits cannot tell apart are then sorted by full value.

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.
    scale : "minmax" or None, default="minmax"
        ``"minmax"`` rescales every feature to [0, 1] before the total distances are
        computed (the paper's preprocessing); None uses the data as given, so features
        with large values dominate the total distance.
    max_samples : int, float in (0, 1] or None, default=500
        Rank on a random subset of the samples, as the paper suggests for speed (cost
        grows with the square of the number of samples): an int is a number of samples
        (clipped to ``n_samples``), a float a fraction (at least 2 samples). None uses
        every sample. Min-max scaling still uses the ranges of all samples. The default
        500 (124,750 pairs) ranks 2,000 x 2,000 in 16-20 s of CPU against over 120 s
        for all samples (``benchmarks/speed/bench_width_rankers.py``) and leaves data of up to
        500 samples untouched. Its scores agree with the full computation's, as
        Spearman's rho over the features (min / mean over random_state 0, 1, 2), on real
        data: Isolet (scikit-feature, 1,560 x 617) 0.988 / 0.990, german (PMLB,
        1,000 x 20) 0.970 / 0.975, australian (PMLB, 690 x 14) 0.974 / 0.985, breast_w
        (PMLB, 699 x 9) 0.983 / 0.994. With 300 samples the minimum falls to 0.907
        (german); 700 cost twice the time of 500 for 0.979-0.990
        (``python -m benchmarks.speed.bench_width_rankers --agreement-only``).
    block_size : int or None, default=None
        Features ranked at once; a block holds about 64 bytes per pair and feature
        (e.g. 128 MB per feature for 2,000 samples). None picks a cache-sized block of
        about 131,072 pairs x features, at least one feature.
    n_jobs : int or None, default=None
        Blocks ranked in parallel (joblib, threads preferred); each job holds one block.
        The scores do not depend on it.
    random_state : int, RandomState instance or None, default=None
        Draws the subset of samples when ``max_samples`` is below ``n_samples``; unused
        otherwise.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        Distance Rank Score of each feature, in [-1, 1]; constant features score -1
        (the lowest possible value). A feature whose pair distances are all tied (only
        possible with 2 samples) or data whose total distances are all tied score 0:
        there is no order to correlate.
    ranking_ : ndarray of shape (n_features,)
        Feature indices, best first.
    sample_indices_ : ndarray of shape (n_samples_used_,)
        The samples used (sorted): all of them when ``max_samples`` is None or at least
        ``n_samples``.
    n_samples_used_ : int
        Number of samples used.
    n_pairs_ : int
        Number of pairs of samples ranked, ``n_samples_used_ * (n_samples_used_ - 1) / 2``.
    block_size_ : int
        Features ranked at once.

    See Also
    --------
    rankers.unsupervised.laplacian.LaplacianRanker : local-structure score on a kNN graph.
    rankers.unsupervised.compactness.CompactnessRanker : the Compactness score (Eq. 2).

    Notes
    -----
    **Where it works.** On the planted-structure atlas (every structure; 200 samples, 200
    features, 0.5-50 % of them informative, 2 seeds; the mean share of the planted features in
    its top k, against a random ranking's), it recovers part of clusters, manifold, shift,
    imbalanced, modules, xor. The shares are in ``benchmarks/results/atlas_grid/summary.md``;
    :doc:`/guide/which-ranker` has the tables and heat maps.

    References
    ----------
    .. [1] K. Firdová, C. Labart and A. Martel, "Distance Rank Score: unsupervised
       filter method for feature selection on imbalanced dataset", 2024.

    Examples
    --------
    >>> import numpy as np
    >>> from rankers.unsupervised.distance_rank import DistanceRankRanker
    >>> rng = np.random.default_rng(0)
    >>> groups = np.repeat([0.0, 1.0], 10)
    >>> X = np.column_stack([groups + 0.05 * rng.normal(size=20), rng.normal(size=20)])
    >>> ranker = DistanceRankRanker().fit(X)
    >>> ranker.ranking_.tolist()
    [0, 1]
    >>> bool(ranker.scores_[0] > 0.5)
    True
    """

    name = "distance_rank"
    target_kind = "unsupervised"
    accepts_sparse = False
    deterministic = True
    scale_invariant = True
    reference: ClassVar[str] = (
        "Firdová, Labart & Martel (2024), Distance Rank Score: unsupervised filter method "
        "for feature selection on imbalanced dataset"
    )
    # Spearman's rho lies in [-1, 1]; a constant feature orders no pair
    _constant_score: ClassVar[float] = -1.0

    _parameter_constraints: ClassVar[dict] = {
        **BaseRanker._parameter_constraints,
        "scale": [StrOptions({"minmax"}), None],
        "max_samples": [
            Interval(Integral, 2, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="right"),
            None,
        ],
        "block_size": [Interval(Integral, 1, None, closed="left"), None],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        k=None,
        scale: str | None = "minmax",
        max_samples=500,
        block_size: int | None = None,
        n_jobs: int | None = None,
        random_state=None,
    ):
        self.k = k
        self.scale = scale
        self.max_samples = max_samples
        self.block_size = block_size
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _feature_scale_invariant(self) -> bool:
        return self.scale == "minmax"  # raw distances weigh each feature by its units

    def _score(self, X, y, context):
        m, n = X.shape
        if self.scale == "minmax":
            X = minmax_scale(X)  # one scaled copy; no constant column reaches _score
        rows = self._sample_rows(m)
        if rows.size < m:
            X = X[rows]
        m_used = rows.size
        n_pairs = m_used * (m_used - 1) // 2
        self.sample_indices_ = rows
        self.n_samples_used_ = m_used
        self.n_pairs_ = n_pairs
        block = self._block(n, n_pairs)
        n_jobs = check_n_jobs(self.n_jobs)
        jobs = min(effective_n_jobs(n_jobs), -(-n // block))
        check_memory(
            _peak_bytes(m_used, n, n_pairs, block, jobs),
            f"Distance Rank Score over {m_used} samples ({n_pairs:.3g} pairs of samples, "
            f"{jobs} parallel block(s) of {block} feature(s))",
            "set max_samples (memory grows with its square; e.g. max_samples=2000 keeps "
            "2e6 pairs), or n_jobs=1 (every parallel block holds its own ranks)",
        )

        total = pdist(X, "sqeuclidean")
        # List the pairs by increasing total distance (pdist's pair order, then sorted):
        # the total-distance rank of the pair at position p is then p + 1 unless totals
        # tie, so no per-feature gather of total ranks is needed in the common case.
        by_total = np.argsort(total, kind="stable")
        total_sorted = total[by_total]
        del total
        total_ranks = None
        # ties within the tolerance of rankers.ties: duplicated samples or equal
        # distances must not be ordered by the last bits of their squared distances
        tol = TIE_RTOL * total_sorted[-1:]
        if (np.diff(total_sorted) <= tol).any():
            total_ranks = _average_ranks_of_sorted(total_sorted[None, :], tol)[0]
            total_ranks -= (n_pairs + 1) / 2.0  # centred, like every average-rank vector
        total_ss = _sum_of_squares(total_ranks, n_pairs)
        del total_sorted
        self.block_size_ = block
        if total_ss == 0.0:  # one pair, or every pair equally far apart: nothing to follow
            return np.zeros(n)

        iu, ju = np.triu_indices(m_used, 1)
        iu, ju = iu[by_total], ju[by_total]
        del by_total
        XT = np.ascontiguousarray(X.T)  # rows = features, so a block's pairs are contiguous
        del X  # the scaled copy is no longer needed: only one copy of the data stays alive
        parts = Parallel(n_jobs=n_jobs, prefer="threads")(
            delayed(_block_correlation)(XT[j : j + block], iu, ju, total_ranks)
            for j in range(0, n, block)
        )
        cov = np.concatenate([p[0] for p in parts])
        ss = np.concatenate([p[1] for p in parts])
        rho = np.zeros(n)
        ordered = ss > 0.0  # zero only when every pair is tied on the feature (m = 2)
        rho[ordered] = cov[ordered] / np.sqrt(ss[ordered] * total_ss)
        return np.clip(rho, -1.0, 1.0)

    def _sample_rows(self, m: int) -> np.ndarray:
        if self.max_samples is None:
            return np.arange(m)
        if isinstance(self.max_samples, (Integral, np.integer)):
            size = min(int(self.max_samples), m)
        else:
            size = max(2, round(float(self.max_samples) * m))
        if size >= m:
            return np.arange(m)
        rng = check_random_state(self.random_state)
        return np.sort(rng.choice(m, size=size, replace=False))

    def _block(self, n_features: int, n_pairs: int) -> int:
        if self.block_size is not None:
            return min(int(self.block_size), n_features)
        return int(min(n_features, max(1, _BLOCK_PAIRS // n_pairs)))


def _peak_bytes(m: int, n: int, n_pairs: int, block: int, jobs: int) -> float:
    """Peak bytes of :meth:`DistanceRankRanker._score` (measured with tracemalloc,
    ``benchmarks/memory/bench_memory.py``): the pair indices and the total-distance ranks stay
    alive (24 bytes a pair; 16 when no totals tie), and every block being ranked holds
    its differences, sort orders and ranks (40 bytes a pair and feature; 34 without
    ties). Ties are assumed, so the estimate is at most ~1.3 times the peak without them.
    """
    return n_pairs * (24.0 + 40.0 * block * jobs) + 16.0 * m * n


def _sum_of_squares(centred_ranks, n_pairs: int) -> float:
    """Σ (r - mean)² of average ranks; ``None`` stands for the untied ranks 1..N."""
    if centred_ranks is None:
        return n_pairs * (n_pairs * n_pairs - 1.0) / 12.0
    return float(np.einsum("i,i->", centred_ranks, centred_ranks))


def _block_correlation(XT, iu, ju, total_ranks):
    """Rank covariance of a block of features with the total distances, and its scale.

    The pairs ``(iu[p], ju[p])`` are listed by increasing total distance and
    ``total_ranks`` holds their centred ranks, or is None when no totals tie (the
    centred rank of position p is then ``p - (N - 1) / 2``). Returns, per feature,
    ``(Σ_p c_p a_p, Σ_p a_p²)`` where ``a`` are the feature's centred average ranks
    of its pair distances and ``c`` the centred total-distance ranks.
    """
    n_pairs = iu.size
    # np.take along axis 1 gathers several times faster than fancy indexing of a 2-D array
    diff = np.take(XT, iu, axis=1)
    diff -= np.take(XT, ju, axis=1)
    # |d| orders the pairs like d² and keeps apart differences whose squares would round
    # (or underflow) to the same value
    np.abs(diff, out=diff)
    order, diff = _sorted_rows(diff)
    # order[f, q] = position (in total-distance order) of the pair whose distance on
    # feature f has rank q + 1, so the total-distance rank of that pair is order[f, q] + 1
    centre = (n_pairs - 1) / 2.0
    tol = TIE_RTOL * diff[:, -1]  # each row's largest distance (rows are sorted)
    untied = ~(np.diff(diff, axis=1) <= tol[:, None]).any(axis=1)
    cov = np.empty(len(diff))
    ss = np.empty(len(diff))
    if untied.any():
        # the feature's centred ranks are the fixed vector q - centre
        positions = np.arange(n_pairs) - centre
        mine = order[untied]
        gathered = mine if total_ranks is None else total_ranks[mine]
        # Σ (order - centre)(q - centre) = Σ order (q - centre), since Σ (q - centre) = 0.
        # einsum, not BLAS: a threaded BLAS dot can stall on a busy machine.
        cov[untied] = np.einsum("ij,j->i", gathered, positions)
        ss[untied] = _sum_of_squares(None, n_pairs)
    tied = ~untied
    if tied.any():
        ranks = _average_ranks_of_sorted(diff[tied], tol[tied])
        ranks -= centre + 1.0
        mine = order[tied]
        gathered = mine - centre if total_ranks is None else total_ranks[mine]
        cov[tied] = np.einsum("ij,ij->i", gathered, ranks)
        ss[tied] = np.einsum("ij,ij->i", ranks, ranks)
    return cov, ss


def _sorted_rows(d):
    """Exact ascending order of each row of non-negative ``d``, and the sorted rows.

    Non-negative IEEE doubles sort like their bit patterns read as unsigned integers.
    Two stable radix passes (numpy sorts 16-bit integers by counting, in linear time)
    order each row by the top 32 bits - sign, exponent and 20 mantissa bits. Values
    still out of order afterwards share those bits, i.e. agree to about 1e-6
    relatively; only the runs of such values are re-sorted, by their full value.
    Gathers go through flat indices: ``take_along_axis`` builds a broadcast index per
    element and is far slower.
    """
    b, n = d.shape
    offsets = (np.arange(b) * n)[:, None]
    flat = d.reshape(-1)
    # the 16-bit words of each double that hold bits 48-63 and 32-47
    words = flat.view(np.uint16).reshape(b, n, 4)
    order = np.argsort(words[:, :, _WORD_32], axis=1, kind="stable")
    order += offsets
    # the second digit is copied out contiguously, then gathered as 2-byte values
    high = np.ascontiguousarray(words[:, :, _WORD_48]).reshape(-1)[order]
    second = np.argsort(high, axis=1, kind="stable")
    del high
    second += offsets
    order = order.reshape(-1)[second]
    del second
    out = flat[order]
    _repair_runs(order.reshape(-1), out.reshape(-1), n)
    order -= offsets
    return order, out


def _repair_runs(order, out, n: int) -> None:
    """Sort, in place, the runs of equal top-32-bit keys that hold an inversion.

    ``out`` is the flattened rows of length ``n``, each sorted by its top 32 bits, and
    ``order`` the matching flat indices. Such runs are short (values that agree to
    about 1e-6), so their ends are found by stepping out from each inversion, touching
    only their neighbourhood; runs still growing after a few steps are delimited by a
    binary search over the whole block instead.
    """
    inverted = np.flatnonzero(out[1:] < out[:-1])
    inverted = inverted[(inverted + 1) % n != 0]  # a row's end next to the next row's start
    if not inverted.size:
        return
    bits = out.view(np.uint64)
    top = bits[inverted] >> np.uint64(32)  # an inversion lies inside one run: same top bits
    first = inverted - inverted % n  # run ends never cross their row's ends
    stop = first + n
    lo, hi = inverted.copy(), inverted + 2
    for _ in range(_LOCAL_STEPS):
        left = lo > first
        left[left] = (bits[lo[left] - 1] >> np.uint64(32)) == top[left]
        right = hi < stop
        right[right] = (bits[hi[right]] >> np.uint64(32)) == top[right]
        if not (left.any() or right.any()):
            break
        lo -= left
        hi += right
    else:
        # (row, top bits) increases along the flattened rows: each run is an interval
        key = (np.arange(out.size, dtype=np.uint64) // np.uint64(n)) << np.uint64(32)
        key |= bits >> np.uint64(32)
        lo = np.searchsorted(key, key[inverted], side="left")
        hi = np.searchsorted(key, key[inverted], side="right")
    lo, unique = np.unique(lo, return_index=True)
    lengths = hi[unique] - lo
    run = np.repeat(np.arange(lo.size), lengths)
    idx = np.arange(lengths.sum()) + np.repeat(lo - (np.cumsum(lengths) - lengths), lengths)
    fix = idx[np.lexsort((out[idx], run))]
    order[idx] = order[fix]
    out[idx] = out[fix]


def _average_ranks_of_sorted(s, tol):
    """Average ranks (1-based, ties share their mean rank) of rows already sorted.

    Successive values at most ``tol`` (one per row) apart are tied, as in
    :mod:`rankers.ties`.
    """
    b, n = s.shape
    new = np.empty((b, n), dtype=bool)
    new[:, 0] = True
    np.greater(np.diff(s, axis=1), np.asarray(tol, dtype=np.float64).reshape(b, 1), out=new[:, 1:])
    if new.all():
        return np.broadcast_to(np.arange(1.0, n + 1.0), (b, n)).copy()
    # tie groups never span rows: every row starts a new group
    starts = np.flatnonzero(new.ravel())
    sizes = np.diff(np.append(starts, b * n))
    mean_rank = starts % n + (sizes + 1) / 2.0
    return np.repeat(mean_rank, sizes).reshape(b, n)
