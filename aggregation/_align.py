"""Aligning several rankings of one feature set: the shared first step of every combination
and comparison (used inside the aggregation package)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
import pandas as pd

from aggregation._names import format_names, natural_key
from aggregation.ranking import AnyRanking, GenericRanking, Ranking
from rankers.exceptions import FeatureMismatchError, InvalidInputError, InvalidParameterError

__all__ = ["aligned", "block_ends", "is_ranking"]


def _label(pos: int, r: AnyRanking) -> str:
    return f"input {pos} ({r.method!r})" if r.method else f"input {pos}"


def block_ends(r: AnyRanking) -> np.ndarray:
    """For each feature of ``r`` (in ``r.names`` order), the 1-based end of its block.

    A :class:`Ranking`'s blocks are its runs of equal scores: tied features are
    indiscernible, so no aggregation splits them by the arbitrary tie-break of ``order``.
    With distinct scores every block is a singleton (a total order).
    """
    if isinstance(r, Ranking):
        order = r.order_idx
        n = len(order)
        ordered = r.scores[order]  # non-increasing
        ends = np.empty(n, dtype=np.intp)
        if n > 1 and (ordered[1:] == ordered[:-1]).any():
            last = np.flatnonzero(np.r_[ordered[1:] != ordered[:-1], True])  # run ends
            run_end = np.repeat(last + 1, np.diff(np.r_[0, last + 1]))
            ends[order] = run_end
        else:
            ends[order] = np.arange(1, n + 1)
        return ends
    sizes = np.array([len(b) for b in r.blocks], dtype=np.intp)
    return np.repeat(np.cumsum(sizes), sizes)  # r.names lists the features block by block


def aligned(
    rankings: Iterable[AnyRanking], values: Callable[[AnyRanking], np.ndarray]
) -> tuple[list[AnyRanking], tuple[str, ...], np.ndarray]:
    """Validate the inputs and stack ``values(r)`` into a (q, n) matrix in one feature order.

    The common order is the first input's ``names``. Each input is aligned with one
    ``Index.get_indexer`` call, so the whole step is O(q·n).

    Returns
    -------
    inputs : list
        The inputs as a list.
    names : tuple of str
        The common feature order (columns of the matrix).
    matrix : ndarray of shape (q, n)
        ``values(r)`` of input ``r`` in row ``r``, aligned with ``names``.
    """
    if isinstance(rankings, (Ranking, GenericRanking)):
        raise InvalidParameterError("pass a list of rankings, not a single ranking")
    inputs = list(rankings)
    if not inputs:
        raise InvalidInputError("no rankings to combine; pass at least one")
    wrong = [f"{i} ({type(r).__name__})" for i, r in enumerate(inputs) if not is_ranking(r)]
    if wrong:
        raise InvalidParameterError(
            "every input must be a Ranking or a GenericRanking; not at position(s) "
            + ", ".join(wrong)
        )
    names = tuple(inputs[0].names)
    ref = pd.Index(names)
    first = values(inputs[0])  # the reference is aligned with itself
    mat = np.empty((len(inputs), len(names)), dtype=first.dtype)
    mat[0] = first
    missing: dict[int, list[str]] = {}
    extra: dict[int, list[str]] = {}
    for pos, r in enumerate(inputs[1:], start=1):  # a loop over inputs, never over features
        listed = r.names
        if listed == names:  # the common case; tuple equality checks identity first
            mat[pos] = values(r)
            continue
        idx = ref.get_indexer(listed)
        if len(idx) != len(names) or (idx < 0).any():
            missing[pos] = sorted(ref.difference(pd.Index(listed)), key=natural_key)
            extra[pos] = list(np.asarray(listed, dtype=object)[idx < 0])
        else:
            mat[pos, idx] = values(r)
    if missing:
        lines = [
            f"  {_label(p, inputs[p])}: missing {format_names(missing[p]) or 'none'}; "
            f"extra {format_names(extra[p]) or 'none'}"
            for p in missing
        ]
        raise FeatureMismatchError(
            f"rankings must share one feature set; compared with {_label(0, inputs[0])}:\n"
            + "\n".join(lines),
            missing=missing,
            extra=extra,
        )
    return inputs, names, mat


def is_ranking(r: object) -> bool:
    return isinstance(r, (Ranking, GenericRanking))
