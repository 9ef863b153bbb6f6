"""Rankings refit on the training part of every fold: what a held-out evaluation scores.

An evaluation that scores a ranking on held-out samples must not let those samples choose
the features: a ranking fitted on all samples, then judged by cross-validation, has seen
every test fold (the selection bias of Ambroise & McLachlan, 2002; on pure noise it makes
features that carry nothing look far better than random). The evaluations here are
**nested** instead, as scikit-learn's ``cross_validate`` over a
``Pipeline(SelectKBest, model)`` is: whatever is evaluated, a ranker, an aggregate of
rankers or the NSGA-II weighting, is refit on the training part of each fold, and only that
fold's test part scores it (docs/design.md, "Evaluation").

:class:`FoldRankings` holds one ranking per fold with the folds themselves;
:func:`fold_rankings` fits a ranker on every training part, :func:`combine_folds` combines
several rankers' fold rankings fold by fold (an aggregate evaluated nested), and
:func:`cv_splits` draws the folds every evaluation of a run shares.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from numbers import Integral
from typing import Any

import numpy as np
import pandas as pd
from joblib import delayed
from sklearn.base import clone
from sklearn.model_selection import KFold, StratifiedKFold

import rankers
from aggregation._tasks import check_progress, run_in_order
from aggregation.evaluation._inputs import feature_order
from aggregation.ranking import Ranking
from rankers.exceptions import InvalidInputError, InvalidParameterError
from rankers.validation import check_seed, check_X, default_feature_names

__all__ = [
    "FoldRankings",
    "SubsetMemo",
    "check_memo",
    "combine_folds",
    "curve_frame",
    "cv_splits",
    "fold_rankings",
    "orders_per_fold",
    "resolve_ranker",
]

Split = tuple[np.ndarray, np.ndarray]


def _is_classes(y: np.ndarray) -> bool:
    """Whether ``y`` holds class labels (integers, strings, booleans), not quantities."""
    from sklearn.utils.multiclass import type_of_target

    return type_of_target(y) in ("binary", "multiclass")


def cv_splits(
    X, y=None, *, cv: Any = 10, random_state=None, stratify: bool | None = None
) -> list[Split]:
    """The (training, test) row indices of a shuffled, seeded k-fold cross-validation.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,), optional
        Class labels stratify the folds (``stratify=None``); quantities do not.
    cv : int, splitter or sequence of (train, test) pairs, default=10
        A number of folds, an object with ``split(X, y)`` (split once), or the folds
        themselves (returned as index arrays).
    random_state : int, RandomState, Generator or None
        Seeds the shuffle: the same seed gives the same folds.
    stratify : bool, optional
        Force (True) or forbid (False) stratified folds; default when ``y`` holds classes.

    Returns
    -------
    list of (ndarray, ndarray)

    Examples
    --------
    >>> import numpy as np
    >>> folds = cv_splits(np.zeros((6, 2)), cv=3, random_state=0)
    >>> [len(test) for _, test in folds]
    [2, 2, 2]
    """
    m = len(X)
    if isinstance(cv, (Integral, np.integer)) and not isinstance(cv, bool):
        if cv < 2:
            raise InvalidParameterError(f"cv must be an integer >= 2; got {cv}")
        if cv > m:
            raise InvalidParameterError(f"cv={cv} folds but X has only {m} samples")
        yc = None if y is None else np.asarray(y)
        if stratify is None:
            stratify = yc is not None and _is_classes(yc)
        seed = int(check_seed(random_state).generate_state(1)[0])
        if stratify:
            if yc is None:
                raise InvalidParameterError("stratified folds need class labels y")
            labels, counts = np.unique(yc, return_counts=True)
            if counts.max() < cv:
                raise InvalidInputError(
                    f"stratified {cv}-fold CV needs a class with at least {cv} samples; the "
                    f"largest of the {labels.size} classes has {counts.max()}: pass cv="
                    f"{counts.max()} or fewer"
                )
            splitter = StratifiedKFold(n_splits=int(cv), shuffle=True, random_state=seed)
        else:
            splitter = KFold(n_splits=int(cv), shuffle=True, random_state=seed)
        pairs = splitter.split(np.zeros((m, 1)), yc)
    elif hasattr(cv, "split"):
        pairs = cv.split(np.zeros((m, 1)), None if y is None else np.asarray(y))
    elif isinstance(cv, Sequence) and not isinstance(cv, str):
        pairs = cv
    else:
        raise InvalidParameterError(
            f"cv must be a number of folds, a splitter with split() or a list of (train, test) "
            f"index pairs; got {cv!r}"
        )
    out = []
    for pair in pairs:
        if not (isinstance(pair, Sequence | np.ndarray) and len(pair) == 2):
            raise InvalidParameterError("every fold must be a (train, test) pair of indices")
        train, test = (np.asarray(part, dtype=np.intp) for part in pair)
        if train.size == 0 or test.size == 0 or np.intersect1d(train, test).size:
            raise InvalidParameterError(
                "every fold needs training and test rows, and no row in both"
            )
        if max(train.max(), test.max()) >= m or min(train.min(), test.min()) < 0:
            raise InvalidParameterError(f"fold indices must lie in 0..{m - 1}")
        out.append((train, test))
    if len(out) < 2:
        raise InvalidParameterError(f"cv must give at least 2 folds; got {len(out)}")
    return out


class FoldRankings:
    """One ranking per fold of a cross-validation, each fitted on that fold's training rows.

    What the held-out evaluations score (:func:`~aggregation.evaluation.ffa_rfa`,
    :func:`~aggregation.evaluation.topk_curve`,
    :func:`~aggregation.evaluation.class_curve`): fold ``f``'s test rows judge only
    ``rankings[f]``, which never saw them.

    Parameters
    ----------
    rankings : sequence of Ranking
        One per fold, over the same features.
    splits : sequence of (train, test) index arrays
        The folds, in the same order.
    method : str, optional
        Name of what was ranked (default: the first ranking's method).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> folds = fold_rankings("anova_f", X, y, cv=3, random_state=0)
    >>> len(folds), folds.method
    (3, 'anova_f')
    """

    __slots__ = ("_method", "_rankings", "_splits")

    def __init__(self, rankings: Sequence[Ranking], splits: Sequence[Split], method=None):
        rankings = tuple(rankings)
        splits = tuple((np.asarray(tr, np.intp), np.asarray(te, np.intp)) for tr, te in splits)
        if not rankings or len(rankings) != len(splits):
            raise InvalidParameterError(
                f"one ranking per fold: got {len(rankings)} rankings for {len(splits)} folds"
            )
        names = rankings[0].names
        for r in rankings:
            if not isinstance(r, Ranking):
                raise InvalidParameterError(
                    f"fold rankings must be Ranking objects, not {type(r).__name__}"
                )
            if set(r.names) != set(names):
                raise InvalidInputError("every fold's ranking must rank the same features")
        self._rankings = tuple(r if r.names == names else r.reindex(names) for r in rankings)
        self._splits = splits
        self._method = rankings[0].method if method is None else str(method)

    @property
    def rankings(self) -> tuple[Ranking, ...]:
        """One ranking per fold."""
        return self._rankings

    @property
    def splits(self) -> tuple[Split, ...]:
        """The folds: (training, test) row indices."""
        return self._splits

    @property
    def names(self) -> tuple[str, ...]:
        """The features ranked."""
        return self._rankings[0].names

    @property
    def method(self) -> str | None:
        """What was ranked."""
        return self._method

    def orders(self, names: Sequence[str] | None = None) -> list[np.ndarray]:
        """Every fold's order as column indices of ``names`` (default :attr:`names`)."""
        names = self.names if names is None else names
        return [feature_order(r, names) for r in self._rankings]

    def same_folds(self, splits: Sequence[Split]) -> bool:
        """Whether ``splits`` are these folds (same rows, same order)."""
        return len(splits) == len(self._splits) and all(
            np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
            for a, b in zip(self._splits, splits, strict=True)
        )

    def __len__(self) -> int:
        return len(self._rankings)

    def __repr__(self) -> str:
        return (
            f"FoldRankings(method={self._method!r}, n_folds={len(self)}, "
            f"n_features={len(self.names)})"
        )


def resolve_ranker(ranker: Any, params: dict | None = None):
    """A ranker to refit per fold (an unfitted estimator), from a registry name or itself.

    Returns None when ``ranker`` is not a ranker to fit (a fixed ranking, "random", fold
    rankings), so the caller can treat those.
    """
    if isinstance(ranker, str) and ranker != "random":
        return rankers.get(ranker, **(params or {}))
    if params:
        raise InvalidParameterError("params are only used when the ranker is given by name")
    if hasattr(ranker, "fit") and hasattr(ranker, "get_params"):
        return clone(ranker)
    return None


def _fit_fold(est, X, y, train, names, seed, method, named=False):
    est = clone(est)
    if "random_state" in est.get_params() and est.get_params()["random_state"] is None:
        est.set_params(random_state=int(seed))
    needs_y = rankers.ranker_tags(est).requires_y
    if needs_y and y is None:
        raise InvalidInputError(
            f"{type(est).__name__} is supervised: the fold rankings need a target y"
        )
    Xt = X[train]
    if named:  # the user's column names reach the fit's messages (a constant column)
        Xt = pd.DataFrame(Xt, columns=list(names), copy=False)
    est.fit(Xt, y[train] if needs_y else None)
    return Ranking(names, est.scores_, method, order_idx=est.ranking_)


def fold_rankings(
    ranker: Any,
    X,
    y=None,
    *,
    cv: Any = 10,
    params: dict | None = None,
    method: str | None = None,
    n_jobs: int | None = None,
    random_state=None,
    progress: Callable[[int], None] | None = None,
) -> FoldRankings:
    """Fit ``ranker`` on the training rows of every fold.

    Parameters
    ----------
    ranker : str or ranker estimator
        A registry name (with ``params``) or an unfitted ranker; cloned per fold. A
        ``random_state`` left None is seeded per fold from ``random_state``.
    X : array-like or DataFrame of shape (n_samples, n_features)
    y : array-like, optional
        Target of supervised rankers (ignored by unsupervised ones) and, when it holds
        classes, the stratification of the folds.
    cv : int, splitter or list of (train, test) pairs, default=10
        See :func:`cv_splits`.
    method : str, optional
        Name of the rankings; default the ranker's registry name or class name.
    n_jobs : int, optional
        Folds fitted in parallel with joblib; the result does not depend on it.
    random_state : int, RandomState, Generator or None
        Seeds the folds (when ``cv`` is a number) and the rankers.
    progress : callable, optional
        Called with 1 as each fold's fit finishes.

    Returns
    -------
    FoldRankings
    """
    check_progress(progress)
    est = resolve_ranker(ranker, params)
    if est is None:
        raise InvalidParameterError(
            "ranker must be a registered ranker's name or an unfitted ranker estimator; "
            f"got {type(ranker).__name__}"
        )
    Xc, names = check_X(X)
    Xc = np.asarray(Xc)
    named = names is not None and all(isinstance(n, str) for n in names)
    names = tuple(names) if names is not None else default_feature_names(Xc.shape[1])
    yc = None if y is None else np.asarray(y)
    if yc is not None and len(yc) != len(Xc):
        raise InvalidInputError(f"y has {len(yc)} values but X has {len(Xc)} samples")
    seed = check_seed(random_state)
    # word 0 seeds the folds (as cv_splits with the same random_state), the rest the rankers
    splits = cv_splits(Xc, yc, cv=cv, random_state=seed)
    seeds = seed.generate_state(len(splits) + 1)[1:]
    if method is None:
        method = getattr(est, "name", None) or type(est).__name__
    jobs = (
        delayed(_fit_fold)(est, Xc, yc, train, names, seeds[f], method, named)
        for f, (train, _) in enumerate(splits)
    )
    rankings = run_in_order(jobs, n_jobs=n_jobs, progress=progress)
    return FoldRankings(rankings, splits, method)


def combine_folds(
    members: Sequence[FoldRankings],
    combine: Callable[[list[Ranking]], Any],
    *,
    method: str | None = None,
) -> FoldRankings:
    """An aggregate of several fold rankings, fold by fold: ``combine`` of the members'
    rankings of each fold (e.g. :func:`aggregation.mean_rank`).

    Every member must have the same folds; the aggregate of fold ``f`` then sees only fold
    ``f``'s training rows, as its members did.

    Parameters
    ----------
    members : sequence of FoldRankings
    combine : callable
        Takes a list of Rankings (one per member) and returns a Ranking.
    method : str, optional
        Name of the aggregate.
    """
    members = list(members)
    if not members:
        raise InvalidParameterError("combine_folds needs at least one member")
    first = members[0]
    for m in members[1:]:
        if not m.same_folds(first.splits):
            raise InvalidParameterError(
                f"fold rankings {first.method!r} and {m.method!r} were fitted on different "
                "folds; fit every member with the same cv and random_state"
            )
    out = []
    for f in range(len(first)):
        agg = combine([m.rankings[f] for m in members])
        if not isinstance(agg, Ranking):
            raise InvalidParameterError(
                f"combine must return a Ranking (an order to evaluate); got {type(agg).__name__}"
            )
        out.append(agg)
    return FoldRankings(out, first.splits, method or out[0].method)


def orders_per_fold(ranker, params, X, y, names, *, cv, seed, n_random, n_jobs, stratify=None):
    """The folds and, per fold, the feature orders a curve of the top-k features scores:
    ``(splits, per_fold, protocol, label)``, for a ranker given by name or unfitted
    (refit on each training part: "nested"), as :class:`FoldRankings` (their folds),
    ``"random"`` (``n_random`` seeded orders per fold) or a fixed ranking ("fixed").
    ``seed`` is a ``SeedSequence`` (:func:`rankers.validation.check_seed`); ``stratify`` as
    for :func:`cv_splits`."""
    from aggregation.evaluation._inputs import feature_order

    n = X.shape[1]
    est = resolve_ranker(ranker, params)
    if isinstance(ranker, FoldRankings):
        return list(ranker.splits), [[o] for o in ranker.orders(names)], "nested", ranker.method
    splits = cv_splits(X, y, cv=cv, random_state=seed, stratify=stratify)
    if est is not None:
        # the fits see the columns' names, so their rankings name the features of X
        named = pd.DataFrame(X, columns=list(names), copy=False)
        folds = fold_rankings(est, named, y, cv=splits, random_state=seed, n_jobs=n_jobs)
        return splits, [[o] for o in folds.orders(names)], "nested", folds.method
    if isinstance(ranker, str):  # "random"
        if not isinstance(n_random, int) or n_random < 1:
            raise InvalidParameterError(f"n_random must be an integer >= 1; got {n_random!r}")
        words = seed.generate_state(2 * len(splits) + 1)[len(splits) + 1 :]
        per_fold = []
        for w in words:
            rng = np.random.default_rng(int(w))
            per_fold.append([rng.permutation(n) for _ in range(n_random)])
        return splits, per_fold, "random", "random"
    order = feature_order(ranker, names, what="ranker")
    return splits, [[order] for _ in splits], "fixed", getattr(ranker, "method", None)


class SubsetMemo:
    """The score of every feature subset a curve has scored on one fold, by the fold's data.

    The curves of several rankings on the same data and folds (an ensemble scoring its
    pool: members that agree on their top k features) score many of the same subsets.
    A curve given a ``memo`` dict reads each subset's score from it when the fold's data,
    the curve's settings and the subset are all the same, and adds the ones it scored: the
    key is a digest of the fold's training and test rows and targets, the settings and
    the subset, so a memo shared by mistake across other data or settings is never read.
    The scores are the same computation's, bit for bit; only the time changes.

    A fold's data is named by ``fold_keys``: a digest of the whole ``X`` and ``y``,
    taken once per curve, with the fold's row indices (which fix its training and test rows
    and targets), so that a curve scored many times (NSGA-II's member weights) does not
    read the data once per fold and call.
    """

    def __init__(self, memo: dict | None, *parts: Any):
        self.memo = memo
        self.new: dict[tuple[str, bytes], float] = {}
        if memo is None:
            return
        self.fold = SubsetMemo.digest(*parts)

    @staticmethod
    def digest(*parts: Any) -> str:
        """A digest of arrays (dtype, shape and bytes) and other values (their repr)."""
        import hashlib

        digest = hashlib.blake2b(digest_size=16)
        for part in parts:
            if isinstance(part, np.ndarray):
                part = np.ascontiguousarray(part)
                digest.update(f"{part.dtype.str}{part.shape}".encode())
                digest.update(part.tobytes())
            else:
                digest.update(repr(part).encode())
            digest.update(b"|")
        return digest.hexdigest()

    @staticmethod
    def fold_keys(memo: dict | None, X: np.ndarray, y: np.ndarray, splits) -> list:
        """Per fold, what names its data in a memo: ``(digest of X and y, train rows, test
        rows)``; ``()`` for every fold without a memo (nothing is read)."""
        if memo is None:
            return [() for _ in splits]
        data = SubsetMemo.digest(X, y)
        return [(data, np.asarray(tr, np.int64), np.asarray(te, np.int64)) for tr, te in splits]

    def get(self, subset: np.ndarray) -> float | None:
        if self.memo is None:
            return None
        return self.memo.get((self.fold, np.asarray(subset, dtype=np.int64).tobytes()))

    def put(self, subset: np.ndarray, value: float) -> None:
        if self.memo is not None:
            self.new[(self.fold, np.asarray(subset, dtype=np.int64).tobytes())] = value

    @staticmethod
    def gather(results, memo: dict | None) -> np.ndarray:
        """The (folds, ks) scores of ``(scores, new entries)`` per fold, the folds' new
        entries added to ``memo`` (folds run in other processes return theirs)."""
        if memo is not None:
            for _, new in results:
                memo.update(new)
        return np.array([fold for fold, _ in results])


def check_memo(memo: Any) -> dict | None:
    """``memo`` if it is None or a dict (:class:`SubsetMemo`); else an error naming it."""
    if memo is None or isinstance(memo, dict):
        return memo
    raise InvalidParameterError(
        f"memo must be None or a dict the curves share; got {type(memo).__name__}"
    )


def curve_frame(scores: np.ndarray, ks, metric: str, return_folds: bool) -> pd.DataFrame:
    """A curve's table from its (folds, ks) scores: one row per k (mean, std over the
    folds) or, with ``return_folds``, one per (k, fold)."""
    n_folds = scores.shape[0]
    if return_folds:
        fold, kk = np.meshgrid(np.arange(n_folds), ks, indexing="ij")
        return pd.DataFrame(
            {"k": kk.ravel(), "fold": fold.ravel(), "metric": metric, "value": scores.ravel()}
        ).sort_values(["k", "fold"], ignore_index=True)
    return pd.DataFrame(
        {
            "k": ks,
            "metric": metric,
            "mean": scores.mean(axis=0),
            "std": scores.std(axis=0, ddof=1) if n_folds > 1 else 0.0,
            "n_folds": n_folds,
        }
    )
