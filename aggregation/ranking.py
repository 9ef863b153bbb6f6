"""Rankings of features: a scored ranking (:class:`Ranking`, what a ranker produces) and an
ordered partition (:class:`GenericRanking`, the paper's generic ranking, §2.3)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Union

import numpy as np
import pandas as pd
from pandas.api.types import infer_dtype

from aggregation._names import SHOWN, format_names, natural_key
from rankers.exceptions import FeatureMismatchError, InvalidInputError
from rankers.ties import tie_groups, tie_threshold
from rankers.validation import check_k

__all__ = ["AnyRanking", "GenericRanking", "Ranking", "natural_key", "rank_vector"]


def _default_names(n: int) -> tuple[str, ...]:
    return tuple(f"x{i}" for i in range(n))


# Immutable name sequences validated lately, by identity (the entry holds the object, so
# its id cannot be reused): building many rankings over one tuple of names, e.g. another
# ranking's ``names``, validates it once.
_VALIDATED: dict[int, tuple[Any, tuple[str, ...]]] = {}
_VALIDATED_SIZE = 8


def _check_names(names: Any, n: int | None = None, what: str = "feature names") -> tuple[str, ...]:
    """Validate feature names: strings, unique, and ``n`` of them when ``n`` is given."""
    hit = _VALIDATED.get(id(names))
    if hit is not None and hit[0] is names and (n is None or len(hit[1]) == n):
        return hit[1]
    out = _validate_names(names, n, what)
    # the result (what ``Ranking.names`` returns) and an immutable input are remembered
    for key in (out, names) if isinstance(names, (tuple, pd.Index)) else (out,):
        while len(_VALIDATED) >= _VALIDATED_SIZE:
            del _VALIDATED[next(iter(_VALIDATED))]
        _VALIDATED[id(key)] = (key, out)
    return out


def _validate_names(names: Any, n: int | None, what: str) -> tuple[str, ...]:
    if isinstance(names, str):
        raise InvalidInputError(f"{what} must be a sequence of strings, not the string {names!r}")
    arr = np.asarray(list(names), dtype=object)
    if arr.ndim != 1:
        raise InvalidInputError(f"{what} must be one-dimensional, got shape {arr.shape}")
    if n is not None and len(arr) != n:
        raise InvalidInputError(f"got {len(arr)} {what} for {n} features")
    if len(arr) and infer_dtype(arr, skipna=False) != "string":
        bad = [x for x in arr if not isinstance(x, str)]
        raise InvalidInputError(
            f"{what} must be strings; not strings: {format_names(bad)} "
            "(pass names=... or convert them, e.g. with str)"
        )
    index = pd.Index(arr)
    if index.has_duplicates:
        dup = index[index.duplicated()].unique()
        raise InvalidInputError(f"{what} must be unique; duplicated: {format_names(dup)}")
    return tuple(map(str, arr))


def _as_float_vector(values: Any, what: str) -> np.ndarray:
    try:
        if isinstance(values, (pd.Series, pd.Index)):
            arr = values.to_numpy(dtype=float, na_value=np.nan)
        else:
            arr = np.array(values, dtype=float)  # a copy: the caller's array stays theirs
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{what} must be numeric: {exc}") from None
    if arr.ndim != 1:
        raise InvalidInputError(f"{what} must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise InvalidInputError(f"{what} are empty; a ranking needs at least one feature")
    return arr


def _reorder(have: Sequence[str], want: tuple[str, ...]) -> np.ndarray:
    """Indices into ``have`` listing ``want``; both must hold the same (unique) names."""
    idx = pd.Index(have).get_indexer(want)
    if len(idx) != len(have) or (idx < 0).any():
        missing = sorted(set(have) - set(want), key=natural_key)
        extra = list(np.asarray(want, dtype=object)[idx < 0])
        raise FeatureMismatchError(
            "names must be the same features, reordered; "
            f"missing: {format_names(missing) or 'none'}; "
            f"unknown: {format_names(extra) or 'none'}",
            missing={"names": missing},
            extra={"names": extra},
        )
    return idx


def _check_permutation(positions: np.ndarray, names: Sequence[str], what: str) -> np.ndarray:
    """``positions`` must hold every index 0..n-1 exactly once; say which are off if not."""
    n = len(names)
    if len(positions) and (positions.min() < 0 or positions.max() >= n):
        bad = positions[(positions < 0) | (positions >= n)]
        raise InvalidInputError(
            f"{what} has positions outside 0..{n - 1}: {format_names(bad.tolist())} "
            "(positions are 0-based indices into names)"
        )
    counts = np.bincount(positions, minlength=n)
    if (counts != 1).any():
        names_arr = np.asarray(names, dtype=object)
        raise InvalidInputError(
            f"{what} must list every feature exactly once; duplicated: "
            f"{format_names(names_arr[counts > 1]) or 'none'}; "
            f"missing: {format_names(names_arr[counts == 0]) or 'none'}"
        )
    return positions


class Ranking:
    """One scored ranking of features: names, scores (higher = more relevant), a best-first order.

    Build one with :meth:`from_scores`, :meth:`from_order` or :meth:`from_ranker`; the
    constructor is the low-level door they share. Instances are immutable: the arrays are
    read-only and there are no setters.

    Parameters
    ----------
    names : sequence of str
        Feature names, unique.
    scores : array-like of shape (n_features,)
        Finite scores aligned with ``names``; higher = more relevant. They are kept as
        given. Two scores within ``1e-9`` of the larger of the two (relative, without
        chaining: :mod:`rankers.ties`) are tied, so that an order, a rank or a generic
        block never depends on the last bits of a computed score.
    method : str or None, default=None
        Name of the method that produced the ranking.
    order_idx : array-like of int, default=None
        Indices into ``names``, best first. Default: by decreasing score, tied scores
        (near-ties included) by the earlier name. When given it must be a permutation
        that never puts a lower score before a higher one (only ties may be broken
        differently).

    Examples
    --------
    >>> r = Ranking.from_scores({"a": 0.1, "b": 0.7, "c": 0.7}, method="demo")
    >>> r.order
    ['b', 'c', 'a']
    >>> r.ranks.tolist()
    [3.0, 1.5, 1.5]
    >>> r.top(1)
    ['b']
    """

    __slots__ = ("_method", "_names", "_order_idx", "_scores", "_starts")

    def __init__(
        self,
        names: Sequence[str],
        scores: Any,
        method: str | None = None,
        order_idx: Any = None,
    ) -> None:
        scores = _as_float_vector(scores, "scores")
        names = _check_names(names, len(scores))
        bad = ~np.isfinite(scores)
        if bad.any():
            where = np.flatnonzero(bad)
            listed = [f"{names[i]!r} ({scores[i]})" for i in where[:SHOWN]]
            more = f" ... and {len(where) - SHOWN} more" if len(where) > SHOWN else ""
            raise InvalidInputError(
                "scores must be finite; not finite for feature(s) " + ", ".join(listed) + more
            )
        scores = scores.copy()
        if order_idx is None:
            order_idx, group = tie_groups(scores)
        else:
            order_idx = np.asarray(order_idx)
            if order_idx.ndim != 1 or len(order_idx) != len(scores):
                raise InvalidInputError(
                    f"order_idx must have shape ({len(scores)},), got {order_idx.shape}"
                )
            if order_idx.dtype.kind not in "iu":
                raise InvalidInputError(f"order_idx must hold integers, not {order_idx.dtype}")
            order_idx = _check_permutation(order_idx.astype(np.intp), names, "order_idx")
            group = _groups_along(scores, order_idx, names)
        # where each group of tied scores starts along the order
        starts = np.flatnonzero(np.r_[True, np.diff(group) != 0])
        scores.flags.writeable = False
        order_idx = np.array(order_idx, dtype=np.intp)
        order_idx.flags.writeable = False
        self._names = names
        self._scores = scores
        self._method = None if method is None else str(method)
        self._order_idx = order_idx
        starts.flags.writeable = False
        self._starts = starts

    # ----------------------------------------------------------------- constructors
    @classmethod
    def from_scores(
        cls, scores: Any, names: Sequence[str] | None = None, method: str | None = None
    ) -> Ranking:
        """Build a ranking from a score per feature (higher = more relevant).

        Parameters
        ----------
        scores : array-like, pandas Series or Mapping
            Scores. A Series' index or a Mapping's keys are the feature names.
        names : sequence of str, optional
            Feature names. With an array, one per score (default ``"x0", "x1", ...``); with a
            Series or Mapping, the same set of names in the order the ranking should list them.
        method : str, optional
            Name of the method that produced the scores.

        Returns
        -------
        Ranking

        Examples
        --------
        >>> Ranking.from_scores([0.2, 0.9, 0.5]).order
        ['x1', 'x2', 'x0']
        """
        if isinstance(scores, (pd.Series, Mapping)):
            if isinstance(scores, pd.Series):
                labels, values = scores.index, scores
            else:
                labels, values = list(scores.keys()), list(scores.values())
            values = _as_float_vector(values, "scores")
            labels = _check_names(labels, len(values), what="score labels")
            if names is None:
                return cls(labels, values, method)
            names = _check_names(names)
            return cls(names, values[_reorder(labels, names)], method)
        values = _as_float_vector(scores, "scores")
        if names is None:
            names = _default_names(len(values))
        return cls(names, values, method)

    @classmethod
    def from_order(
        cls, order: Sequence[Any], names: Sequence[str] | None = None, method: str | None = None
    ) -> Ranking:
        """Build a ranking from an order, best first; scores become ``n - position``.

        Parameters
        ----------
        order : sequence of str or of int
            Feature names best first, or integer 0-based positions into ``names`` (into
            ``"x0", ..., "x{n-1}"`` when ``names`` is not given). Must list every feature once.
        names : sequence of str, optional
            The features in the order the ranking lists them (``names`` attribute). Default:
            ``order`` itself when it holds names.
        method : str, optional
            Name of the method that produced the order.

        Returns
        -------
        Ranking
            The best feature scores ``n``, the worst ``1``.

        Examples
        --------
        >>> r = Ranking.from_order(["c", "a", "b"])
        >>> dict(zip(r.names, r.scores.tolist()))
        {'c': 3.0, 'a': 2.0, 'b': 1.0}
        >>> Ranking.from_order([2, 0, 1], names=["a", "b", "c"]).order
        ['c', 'a', 'b']
        """
        if isinstance(order, str):
            raise InvalidInputError("order must be a sequence of names or positions, not a string")
        arr = np.asarray(list(order), dtype=object)
        if arr.ndim != 1 or arr.size == 0:
            raise InvalidInputError("order must be a non-empty, one-dimensional sequence")
        kind = infer_dtype(arr, skipna=False)
        if kind == "integer":
            names = _default_names(len(arr)) if names is None else _check_names(names)
            positions = arr.astype(np.intp)
        elif kind == "string":
            names = _check_names(
                arr if names is None else names, what="order" if names is None else "names"
            )
            positions = pd.Index(names).get_indexer(arr)
            if (positions < 0).any():
                raise InvalidInputError(
                    f"order names features not in names: {format_names(arr[positions < 0])}"
                )
        else:
            raise InvalidInputError(
                f"order must hold only feature names (str) or only positions (int); got {kind}"
            )
        positions = _check_permutation(positions, names, "order")
        n = len(names)
        scores = np.empty(n)
        scores[positions] = np.arange(n, 0, -1)
        return cls(names, scores, method, order_idx=positions)

    @classmethod
    def from_ranker(cls, fitted: Any, method: str | None = None) -> Ranking:
        """Build a ranking from a fitted ranker (duck-typed).

        Uses ``fitted.scores_``, ``fitted.ranking_`` (indices best first; its tie-breaking is
        kept) when present, and ``fitted.feature_names_in_`` when present (else
        ``"x0", "x1", ...``).

        Parameters
        ----------
        fitted : object
            A fitted ranker (any object with ``scores_``).
        method : str, optional
            Default ``fitted.name`` if set, else the class name.

        Returns
        -------
        Ranking

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If ``fitted`` has no ``scores_`` (it also subclasses ``ValueError``).

        Examples
        --------
        >>> class Fitted:
        ...     scores_ = [0.1, 0.3, 0.2]
        ...     ranking_ = [1, 2, 0]
        >>> r = Ranking.from_ranker(Fitted())
        >>> r.method, r.order
        ('Fitted', ['x1', 'x2', 'x0'])
        """
        scores = getattr(fitted, "scores_", None)
        if scores is None:
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(
                f"{type(fitted).__name__} is not fitted (it has no scores_); "
                "call fit(X) before Ranking.from_ranker"
            )
        scores = _as_float_vector(scores, "scores_")
        names = getattr(fitted, "feature_names_in_", None)
        names = _default_names(len(scores)) if names is None else names
        if method is None:
            method = getattr(fitted, "name", None) or type(fitted).__name__
        return cls(names, scores, method, order_idx=getattr(fitted, "ranking_", None))

    # ------------------------------------------------------------------- accessors
    @property
    def names(self) -> tuple[str, ...]:
        """Feature names, in the order ``scores`` is aligned with."""
        return self._names

    @property
    def scores(self) -> np.ndarray:
        """Scores aligned with ``names`` (read-only); higher = more relevant."""
        return self._scores

    @property
    def method(self) -> str | None:
        """Name of the method that produced the ranking."""
        return self._method

    @property
    def order_idx(self) -> np.ndarray:
        """Indices into ``names``, best first (read-only)."""
        return self._order_idx

    @property
    def order(self) -> list[str]:
        """Feature names, best first."""
        return [self._names[i] for i in self._order_idx]

    @property
    def ranks(self) -> pd.Series:
        """Rank of each feature (1 = best; tied scores share their average rank), by name."""
        return pd.Series(rank_vector(self), index=pd.Index(self._names), name="rank")

    def top(self, k: int) -> list[str]:
        """The ``k`` best feature names, best first (``1 <= k <= n_features``)."""
        return self.order[: check_k(k, len(self))]

    def to_series(self) -> pd.Series:
        """Scores as a Series indexed by feature name, named after the method."""
        return pd.Series(self._scores, index=pd.Index(self._names), name=self._method)

    def reindex(self, names: Sequence[str]) -> Ranking:
        """The same ranking with its features listed in another order (same set of names)."""
        names = _check_names(names)
        idx = _reorder(self._names, names)
        new_pos = np.empty(len(idx), dtype=np.intp)
        new_pos[idx] = np.arange(len(idx))
        return Ranking(names, self._scores[idx], self._method, order_idx=new_pos[self._order_idx])

    @property
    def tie_starts(self) -> np.ndarray:
        """Positions along :attr:`order` where a group of tied scores starts (read-only).

        Scores within ``1e-9`` of the larger of two (relative, without chaining) are tied
        (:mod:`rankers.ties`); with distinct scores this is ``0, 1, ..., n - 1``.
        """
        return self._starts

    def __len__(self) -> int:
        return len(self._names)

    def __eq__(self, other: object) -> bool:
        # Same features in the same order with the same scores; names order and method ignored.
        if not isinstance(other, Ranking):
            return NotImplemented
        return self.order == other.order and np.array_equal(
            self._scores[self._order_idx], other._scores[other._order_idx]
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        order = self.order
        shown = ", ".join(order[:SHOWN]) + (", ..." if len(order) > SHOWN else "")
        return f"Ranking(method={self._method!r}, n_features={len(self)}, order=[{shown}])"


class GenericRanking:
    """An ordered partition of the features: blocks of indiscernible features, best block first.

    The generic ranking of the paper (§2.3); :func:`aggregation.combine.generic` builds one
    from several rankings. Names within a block are kept in natural sort order (``x2`` before
    ``x10``), so two generic rankings with the same blocks compare and print the same.

    Parameters
    ----------
    blocks : iterable of iterables of str
        Best block first. A bare string stands for a one-feature block. Blocks must be
        non-empty and disjoint.
    method : str or None, default=None
        Name of the method that produced it.

    Examples
    --------
    >>> g = GenericRanking([["4", "3"], ["1", "2"]])
    >>> print(g)
    {3,4} > {1,2}
    >>> len(g), g.ranks.to_dict()
    (2, {'3': 1.5, '4': 1.5, '1': 3.5, '2': 3.5})
    """

    __slots__ = ("_block_no", "_blocks", "_index", "_method", "_sizes")

    def __init__(self, blocks: Iterable[Iterable[str]], method: str | None = None) -> None:
        if isinstance(blocks, str):
            raise InvalidInputError("blocks must be a list of blocks of names, not a string")
        blocks = [(b,) if isinstance(b, str) else tuple(b) for b in blocks]
        if not blocks:
            raise InvalidInputError("a generic ranking needs at least one block")
        empty = [i + 1 for i, b in enumerate(blocks) if not b]
        if empty:
            raise InvalidInputError(
                f"blocks must be non-empty; empty block(s) at {format_names(empty)}"
            )
        sizes = np.array([len(b) for b in blocks], dtype=np.intp)
        flat = [n for b in blocks for n in b]
        _check_names(flat, what="feature names in blocks")  # strings, disjoint blocks
        self._blocks = tuple(
            b if len(b) == 1 else tuple(sorted(b, key=natural_key)) for b in blocks
        )
        self._sizes = sizes
        self._sizes.flags.writeable = False
        self._index = pd.Index([n for b in self._blocks for n in b])
        self._block_no = np.repeat(np.arange(1, len(sizes) + 1), sizes)
        self._method = None if method is None else str(method)

    @classmethod
    def from_ranking(cls, ranking: Ranking, method: str | None = None) -> GenericRanking:
        """The generic ranking of ``ranking``: its features in order, tied scores in one block.

        With distinct scores every block is a singleton (a simple ranking).

        Examples
        --------
        >>> print(GenericRanking.from_ranking(Ranking.from_order(["b", "a"])))
        {b} > {a}
        >>> print(GenericRanking.from_ranking(Ranking.from_scores([1.0, 2.0, 1.0])))
        {x1} > {x0,x2}
        """
        method = ranking.method if method is None else method
        names = np.asarray(ranking.names, dtype=object)[ranking.order_idx]
        return cls(np.split(names, ranking.tie_starts[1:]), method=method)

    @property
    def blocks(self) -> tuple[tuple[str, ...], ...]:
        """Blocks, best first; names within a block in natural sort order."""
        return self._blocks

    @property
    def names(self) -> tuple[str, ...]:
        """All features, block by block."""
        return tuple(self._index)

    @property
    def method(self) -> str | None:
        """Name of the method that produced it."""
        return self._method

    @property
    def n_features(self) -> int:
        """Number of features (``len()`` is the number of blocks)."""
        return len(self._index)

    @property
    def is_simple(self) -> bool:
        """Whether every block holds one feature (a total order)."""
        return bool((self._sizes == 1).all())

    @property
    def ranks(self) -> pd.Series:
        """Rank of each feature: the mean of the 1-based positions its block spans."""
        return pd.Series(rank_vector(self), index=self._index.copy(), name="rank")

    def block_of(self, name: str) -> int:
        """The 1-based number of the block holding feature ``name``."""
        loc = self._index.get_indexer([name])[0]
        if loc < 0:
            raise KeyError(f"no feature named {name!r} in this generic ranking")
        return int(self._block_no[loc])

    def to_frame(self) -> pd.DataFrame:
        """One row per feature: ``feature``, ``block`` (1-based) and ``rank``."""
        return pd.DataFrame(
            {
                "feature": np.asarray(self._index, dtype=object),
                "block": self._block_no,
                "rank": self.ranks.to_numpy(),
            }
        )

    def __len__(self) -> int:
        return len(self._blocks)

    def __eq__(self, other: object) -> bool:
        # Blocks are stored canonically sorted, so equal as sets <=> equal tuples.
        if not isinstance(other, GenericRanking):
            return NotImplemented
        return self._blocks == other._blocks

    __hash__ = None  # type: ignore[assignment]

    def __str__(self) -> str:
        return " > ".join("{" + ",".join(b) + "}" for b in self._blocks)

    def __repr__(self) -> str:
        text = str(self)
        if len(text) > 200:
            text = text[:197] + "..."
        return f"GenericRanking({text!r}, method={self._method!r})"


#: either kind of ranking, as the combination and comparison functions take them
AnyRanking = Union[Ranking, GenericRanking]  # noqa: UP007 - used at runtime on py3.10


def rank_vector(r: AnyRanking) -> np.ndarray:
    """Average ranks of ``r`` (1 = best), aligned with ``r.names``: ``r.ranks`` as an array.

    Tied scores of a :class:`Ranking` (:attr:`Ranking.tie_starts`), or the features of one
    :class:`GenericRanking` block, share the mean of the positions they span (scipy's
    ``rankdata(..., method="average")``). O(n): the groups were found when the ranking was
    built, which matters when thousands of rankings are combined.
    """
    if isinstance(r, GenericRanking):
        sizes = np.array([len(b) for b in r.blocks], dtype=np.intp)
        return np.repeat(np.cumsum(sizes) - (sizes - 1) / 2.0, sizes)
    order = r.order_idx
    n = len(order)
    ranks = np.empty(n)
    starts = r.tie_starts
    if len(starts) == n:
        ranks[order] = np.arange(1, n + 1)
    else:
        ends = np.r_[starts[1:], n]
        ranks[order] = np.repeat((starts + 1 + ends) / 2.0, ends - starts)
    return ranks


def _groups_along(scores: np.ndarray, order_idx: np.ndarray, names) -> np.ndarray:
    """Tie groups (:mod:`rankers.ties`) along a given order, checked against the scores.

    The order may break ties its own way but never put a lower score before a higher one.
    """
    ordered = scores[order_idx]
    if len(ordered) < 2 or (ordered[1:] < tie_threshold(ordered[:-1])).all():
        return np.arange(len(ordered), dtype=np.intp)  # no ties: one group per feature
    by_rule, group = tie_groups(scores)
    group_of = np.empty(len(scores), dtype=np.intp)
    group_of[by_rule] = group
    along = group_of[order_idx]
    up = np.flatnonzero(np.diff(along) < 0)
    if up.size:
        i, j = order_idx[up[0]], order_idx[up[0] + 1]
        raise InvalidInputError(
            f"order_idx contradicts the scores: it puts {names[i]!r} (score "
            f"{scores[i]}) before {names[j]!r} (score {scores[j]}); higher scores go first"
        )
    return along
