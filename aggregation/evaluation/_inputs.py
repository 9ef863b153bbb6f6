"""Input checks shared by the evaluations: a ranking given in any of its forms, as columns of X."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from aggregation._names import format_names
from aggregation.ranking import GenericRanking, Ranking
from rankers.exceptions import InvalidInputError, InvalidParameterError
from rankers.ties import TIE_RTOL

__all__ = ["feature_order", "standardised"]


def _is_index(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def feature_order(
    ranking: Any, names: Sequence[str], *, complete: bool = True, what: str = "ranking"
) -> np.ndarray:
    """Column indices of ``X``, best first, from a ranking in any form the evaluations take.

    Parameters
    ----------
    ranking : Ranking, GenericRanking, fitted ranker, or sequence of names or of indices
        - a :class:`~aggregation.Ranking`: its ``order`` (ties as its ``order_idx`` breaks
          them);
        - a :class:`~aggregation.GenericRanking`: its blocks best first, names within a block
          in natural order;
        - a fitted ranker (anything with ``scores_``): ``Ranking.from_ranker(ranking)``;
        - a sequence or 1-D array of feature names (str), or of 0-based column indices (int,
          not bool), best first.
    names : sequence of str
        The columns of ``X``.
    complete : bool, default=True
        Whether the ranking must list every column (the curves score prefixes *and*
        suffixes of it); False accepts the best few only (the clustering evaluation).
    what : str
        The argument's name, for messages.

    Returns
    -------
    ndarray of int
        Positions into ``names``, best first; every position at most once.

    Raises
    ------
    InvalidParameterError
        When ``ranking`` is none of the forms above, or lists no feature.
    InvalidInputError
        When it names features not in ``X``, indices outside ``0..n-1``, mixes names and
        indices, lists a feature more than once, or (``complete``) leaves some out.

    Examples
    --------
    >>> feature_order(["c", "a", "b"], ["a", "b", "c"]).tolist()
    [2, 0, 1]
    >>> feature_order([2], ["a", "b", "c"], complete=False).tolist()
    [2]
    """
    if isinstance(ranking, Ranking):
        order: list[Any] = ranking.order
    elif isinstance(ranking, GenericRanking):
        order = list(ranking.names)
    elif hasattr(ranking, "scores_"):
        order = Ranking.from_ranker(ranking).order
    elif isinstance(ranking, (Sequence, np.ndarray, pd.Index)) and not isinstance(ranking, str):
        order = list(np.asarray(ranking, dtype=object).ravel()) if np.ndim(ranking) else []
    else:
        raise InvalidParameterError(
            f"{what} must be a Ranking, a GenericRanking, a fitted ranker or a sequence of "
            f"feature names or column indices, best first; got {type(ranking).__name__}"
        )
    if not order:
        raise InvalidParameterError(f"{what} lists no feature")
    n = len(names)
    if all(_is_index(o) for o in order):
        idx = np.asarray(order, dtype=np.intp)
        bad = idx[(idx < 0) | (idx >= n)]
        if bad.size:
            raise InvalidInputError(
                f"{what} has column indices outside 0..{n - 1}: {bad[:10].tolist()}"
            )
    elif all(isinstance(o, str) for o in order):
        idx = pd.Index(list(names)).get_indexer(order)
        if (idx < 0).any():
            unknown = [o for o, i in zip(order, idx, strict=True) if i < 0]
            raise InvalidInputError(f"{what} names features not in X: {format_names(unknown)}")
    else:
        raise InvalidInputError(
            f"{what} must list only feature names (str) or only column indices (int), not "
            f"both or anything else: {format_names(order)}"
        )
    counts = np.bincount(idx, minlength=n)
    if (counts > 1).any():
        twice = np.asarray(names, dtype=object)[counts > 1]
        must = f" (it must order all {n} features of X exactly once)" if complete else ""
        raise InvalidInputError(
            f"{what} lists a feature more than once: {format_names(twice)}{must}"
        )
    if complete and idx.size != n:
        missing = np.asarray(names, dtype=object)[counts == 0]
        raise InvalidInputError(
            f"{what} must order all {n} features of X exactly once; missing: "
            f"{format_names(missing)}"
        )
    return idx


def standardised(train: np.ndarray, test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both parts standardised with the training rows' mean and standard deviation (a
    feature constant on the training rows, within the tie rule's 1e-9, becomes 0)."""
    mean = train.mean(axis=0)
    std = train.std(axis=0)
    std[std <= TIE_RTOL * np.abs(train).max(axis=0)] = 1.0  # constant on the fold: 0
    return (train - mean) / std, (test - mean) / std
