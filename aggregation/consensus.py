"""Consensus rankings beyond rank averages: the paper's vote and the Kemeny–Young ranking.

The shared conventions (average ranks on input ties, the first input's ``names`` order as
the last tie-break) are those of :mod:`aggregation.combine`, which re-exports these names.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from aggregation._align import aligned
from aggregation.ranking import AnyRanking, Ranking, rank_vector
from rankers.exceptions import InvalidParameterError

__all__ = ["KEMENY_MAX_BLOCK", "KEMENY_MAX_FEATURES", "kemeny", "vote", "vote_table"]

KEMENY_MAX_BLOCK = 18
"""Largest block of features :func:`kemeny` orders exactly (2^18 subsets: ~0.2 s, ~75 MB)."""

KEMENY_MAX_FEATURES = 1000
"""Most features :func:`kemeny` accepts at all (it builds an n × n pairwise matrix)."""


# -------------------------------------------------------------------------------- vote


def _vote_columns(rankings: Iterable[AnyRanking]) -> tuple[tuple[str, ...], dict, np.ndarray]:
    """Per feature (first input's order): modal rank, its frequency, number of modes, mean
    rank; and the vote order. Vectorised: one sort of the (n, q) rank matrix, then runs."""
    _, names, ranks = aligned(rankings, rank_vector)
    q, n = ranks.shape
    # average ranks are k/2, so 2·rank is an exact small integer; one contiguous row per
    # feature makes the sort (the costly step) run along memory
    doubled = np.ascontiguousarray((2 * ranks).astype(np.int32).T)
    doubled.sort(axis=1)
    flat = doubled.ravel()  # feature by feature, each feature's ranks ascending
    change = np.empty(n * q, dtype=bool)
    change[0] = True
    np.not_equal(flat[1:], flat[:-1], out=change[1:])
    change[::q] = True  # every feature starts a run
    starts = np.flatnonzero(change)
    lengths = np.diff(starts, append=n * q)
    run_feature = starts // q
    first_run = np.searchsorted(starts, np.arange(n) * q)  # each feature starts a run
    top = np.maximum.reduceat(lengths, first_run)
    is_mode = lengths == top[run_feature]
    modes = np.flatnonzero(is_mode)
    # runs are ascending within a feature, so its first modal run is its smallest modal rank
    first_mode = modes[np.searchsorted(run_feature[modes], np.arange(n))]
    modal = flat[starts[first_mode]] / 2.0
    frequency = lengths[first_mode]
    mean = ranks.mean(axis=0)
    order = np.lexsort((np.arange(n), mean, -frequency, modal))
    _, inverse, counts = np.unique(modal, return_inverse=True, return_counts=True)
    columns = {
        "modal_rank": modal,
        "frequency": frequency,
        "n_modal_ranks": np.bincount(run_feature[is_mode], minlength=n),
        "n_sharing_rank": counts[inverse],
        "mean_rank": mean,
    }
    return names, columns, order


def vote_table(rankings: Iterable[AnyRanking]) -> pd.DataFrame:
    """The vote behind :func:`vote`: each feature's most frequent rank and how clear it is.

    Parameters
    ----------
    rankings : iterable of Ranking or GenericRanking
        Over one feature set; ties count as average ranks (so a modal rank can be ``2.5``).

    Returns
    -------
    DataFrame
        One row per feature, in :func:`vote` order, indexed by feature name, with columns
        ``position`` (1-based place in the vote order), ``modal_rank`` (the most frequent
        rank; the smallest one when several are equally frequent), ``frequency`` (how many
        inputs give it), ``n_modal_ranks`` (how many ranks share that top frequency: above 1
        is the paper's first caveat), ``n_sharing_rank`` (how many features have the same
        modal rank: above 1 is the paper's second caveat) and ``mean_rank``.

    Raises
    ------
    InvalidInputError
        If ``rankings`` is empty.
    FeatureMismatchError
        If the inputs' feature sets differ.

    Examples
    --------
    >>> rs = [Ranking.from_order(list(o)) for o in ("abc", "abc", "bca", "bca")]
    >>> vote_table(rs)[["modal_rank", "frequency", "n_modal_ranks", "mean_rank"]]
    ... # doctest: +NORMALIZE_WHITESPACE
             modal_rank  frequency  n_modal_ranks  mean_rank
    feature
    b               1.0          2              2        1.5
    a               1.0          2              2        2.0
    c               2.0          2              2        2.5
    """
    names, columns, order = _vote_columns(rankings)
    frame = pd.DataFrame(columns, index=pd.Index(names, name="feature")).iloc[order]
    frame.insert(0, "position", np.arange(1, len(order) + 1))
    return frame


def vote(rankings: Iterable[AnyRanking], method: str = "vote") -> Ranking:
    """The paper's vote: each feature gets its most frequent rank over the inputs (§2.2).

    The paper names two drawbacks, resolved here deterministically:

    1. *Several ranks are equally frequent for one feature*: the smallest (best) of them is
       the feature's modal rank.
    2. *Several features share a modal rank* (and some ranks are nobody's): they are ordered
       by that rank, then by frequency (more inputs agreeing first), then by mean rank,
       then by the first input's ``names`` order.

    :func:`vote_table` shows the modal ranks, their frequencies and both caveats per feature.

    Parameters
    ----------
    rankings : iterable of Ranking or GenericRanking
        Over one feature set; ties count as average ranks.
    method : str, default="vote"
        Name given to the result.

    Returns
    -------
    Ranking
        Features in the first input's ``names`` order with ``scores = n + 1 - modal rank``
        and ``order`` = the vote order above.

    Raises
    ------
    InvalidInputError
        If ``rankings`` is empty.
    FeatureMismatchError
        If the inputs' feature sets differ.

    Examples
    --------
    >>> rs = [Ranking.from_order(list(o)) for o in ("abc", "abc", "bca", "bca")]
    >>> r = vote(rs)
    >>> r.order, (len(r) + 1 - r.scores).tolist()
    (['b', 'a', 'c'], [1.0, 1.0, 2.0])
    """
    names, columns, order = _vote_columns(rankings)
    return Ranking(names, len(names) + 1 - columns["modal_rank"], method=method, order_idx=order)


# ------------------------------------------------------------------------------ Kemeny


def _pairwise(ranks: np.ndarray) -> np.ndarray:
    """``P[a, b] = 2·#{inputs ranking a before b} + #{inputs tying a and b}`` (a ≠ b).

    Doubled so that the half point of a tie stays an integer. Placing ``a`` before ``b``
    costs ``P[b, a] / 2`` in summed Kendall distance.
    """
    q, n = ranks.shape
    out = np.zeros((n, n), dtype=np.int64)
    step = max(1, 2**22 // (n * n))  # bounds the (step, n, n) temporaries to a few MB
    for lo in range(0, q, step):  # a loop over chunks of inputs, never over features
        r = ranks[lo : lo + step]
        a, b = r[:, :, None], r[:, None, :]
        out += 2 * (a < b).sum(axis=0) + (a == b).sum(axis=0)
    np.fill_diagonal(out, 0)
    return out


def _majority_blocks(pairs: np.ndarray) -> list[np.ndarray]:
    """Split the features into blocks that every Kemeny ranking keeps in this order.

    Blocks are the strongly connected components of the graph with an edge a → b whenever
    at least half the inputs put a before b. Between two blocks every pair is a strict
    majority the same way (a draw would give edges both ways and merge them), so moving a
    later block's feature in front of an earlier block's one costs strictly more: every
    optimal ranking lists the blocks in order, and each block can be solved on its own.
    """
    n = len(pairs)
    graph = csr_matrix((pairs >= pairs.T) & ~np.eye(n, dtype=bool))
    k, labels = connected_components(graph, directed=True, connection="strong")
    # A feature of an earlier block beats strictly more features than any of a later one
    # (all of the later block and after, against at most |block| - 1 + after), so any
    # member's count orders the blocks.
    beats = (pairs > pairs.T).sum(axis=1)
    key = np.empty(k, dtype=np.int64)
    key[labels] = beats
    members = np.argsort(labels, kind="stable")  # first input's order inside each block
    blocks = np.split(members, np.cumsum(np.bincount(labels, minlength=k))[:-1])
    return [blocks[c] for c in np.argsort(-key, kind="stable")]


def _kemeny_block(pairs: np.ndarray) -> list[int]:
    """Exact Kemeny order of one block (Held–Karp style dynamic program over subsets).

    ``best[S]`` = least cost of ordering the features in ``S`` among themselves; a cost only
    depends on the relative order, so ``best[S]`` also prices ``S`` placed anywhere. Among
    optimal orders, the lexicographically smallest in local index order is returned: the
    order is rebuilt from the front, taking the lowest index that starts an optimal order
    of the remaining features. O(2^m · m) time and memory.
    """
    m = len(pairs)
    # after[S, x] = cost of x placed after every feature of S = sum over a in S of P[x, a];
    # built one bit at a time, so row S holds the subset whose bitmask is S.
    after = np.zeros((1, m), dtype=np.int64)
    size = np.zeros(1, dtype=np.int64)
    for j in range(m):
        after = np.concatenate([after, after + pairs[:, j]])
        size = np.concatenate([size, size + 1])
    best = np.zeros(1 << m, dtype=np.int64)
    by_size = np.argsort(size, kind="stable")
    bounds = np.cumsum(np.bincount(size, minlength=m + 1))
    for k in range(1, m + 1):  # subsets of k features need those of k - 1
        subsets = by_size[bounds[k - 1] : bounds[k]]
        cost = np.full(len(subsets), np.iinfo(np.int64).max)
        for x in range(m):
            has = (subsets >> x) & 1 == 1
            rest = subsets[has] ^ (1 << x)
            cost[has] = np.minimum(cost[has], best[rest] + after[rest, x])
        best[subsets] = cost
    order, remaining = [], (1 << m) - 1
    while remaining:
        for x in range(m):
            if not (remaining >> x) & 1:
                continue
            rest = remaining ^ (1 << x)
            others = [b for b in range(m) if (rest >> b) & 1]
            if best[rest] + pairs[others, x].sum() == best[remaining]:
                order.append(x)
                remaining = rest
                break
    return order


def kemeny(rankings: Iterable[AnyRanking], method: str = "kemeny") -> Ranking:
    """Exact Kemeny–Young consensus: the order closest to all inputs in Kendall distance.

    Minimises the sum over inputs of the Kendall tau distance, the number of feature pairs
    the two orders put the other way round; a pair the input ties costs 1/2 whichever way
    the consensus orders it (the usual convention for ties, Fagin et al.'s ``K^(1/2)``);
    as it costs the same either way, it changes the distance but not the consensus: a tie
    is no preference. The consensus is a total order (no ties).

    NP-hard in general, so the solution is exact but exponential: the features are first
    split into blocks that every optimal order keeps in majority order (features an input
    majority ranks consistently above all the others are never mixed with them), then each
    block is solved by a dynamic program over its subsets, O(2^m · m) for a block of m.

    Parameters
    ----------
    rankings : iterable of Ranking or GenericRanking
        Over one feature set.
    method : str, default="kemeny"
        Name given to the result.

    Returns
    -------
    Ranking
        Features in the first input's ``names`` order, ``scores = n - position`` (the best
        feature scores ``n``). Among several optimal orders, the one that is
        lexicographically first in the first input's ``names`` order.

    Raises
    ------
    InvalidParameterError
        If there are more than :data:`KEMENY_MAX_FEATURES` (1000) features, or if a block
        the inputs' majority does not split has more than :data:`KEMENY_MAX_BLOCK` (18)
        features. Up to 18 features always work; use :func:`~aggregation.combine.mean_rank`
        or :func:`~aggregation.combine.borda` beyond.
    InvalidInputError
        If ``rankings`` is empty.
    FeatureMismatchError
        If the inputs' feature sets differ.

    References
    ----------
    Kemeny, J. G. (1959). Mathematics without numbers. *Daedalus* 88(4), 577–591.
    Fagin, R., Kumar, R., Mahdian, M., Sivakumar, D. and Vee, E. (2004). Comparing and
    aggregating rankings with ties. *PODS 2004*, 47–58.

    Examples
    --------
    >>> rs = [Ranking.from_order(list(o)) for o in ("abcd", "bcad", "cabd")]
    >>> kemeny(rs).order
    ['a', 'b', 'c', 'd']
    """
    _, names, ranks = aligned(rankings, rank_vector)
    n = len(names)
    if n > KEMENY_MAX_FEATURES:
        raise InvalidParameterError(
            f"kemeny takes at most KEMENY_MAX_FEATURES = {KEMENY_MAX_FEATURES} features, got "
            f"{n}; exact Kemeny is exponential: use mean_rank or borda for this many"
        )
    pairs = _pairwise(ranks)
    blocks = _majority_blocks(pairs)
    largest = max(blocks, key=len)
    if len(largest) > KEMENY_MAX_BLOCK:
        shown = ", ".join(repr(names[i]) for i in largest[:10])
        raise InvalidParameterError(
            f"kemeny is exact only for blocks of at most KEMENY_MAX_BLOCK = {KEMENY_MAX_BLOCK} "
            f"features; the inputs' majority leaves a block of {len(largest)} features "
            f"({shown}{', ...' if len(largest) > 10 else ''}) unsplit, and the exact "
            "solution is exponential in its size: use mean_rank or borda instead"
        )
    order = np.concatenate([b[_kemeny_block(pairs[np.ix_(b, b)])] for b in blocks])
    scores = np.empty(n)
    scores[order] = np.arange(n, 0, -1)
    return Ranking(names, scores, method=method, order_idx=order)
