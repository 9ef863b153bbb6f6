"""Cross-validated prediction of a numeric target from the top-k features of a ranking, nested.

The numeric-target sibling of :func:`~aggregation.evaluation.class_curve`: for every fold the
ranking is **refit on the training rows** (:mod:`aggregation.evaluation.folds`), a
k-nearest-neighbour regressor on those rows' top-k features (standardised with the training
rows) predicts the test rows, and the prediction is scored by the out-of-sample R²,
``1 - Σ(y - ŷ)² / Σ(y - ȳ_train)²``: 0 is what predicting the training mean scores, 1 a
perfect prediction, and a ranking of pure noise scores what a random ranking scores (below
0 on small folds, where a kNN on noise predicts worse than the mean).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from joblib import delayed

from aggregation._tasks import check_progress, run_in_order
from aggregation.evaluation._inputs import standardised
from aggregation.evaluation.folds import SubsetMemo, check_memo, curve_frame, orders_per_fold
from aggregation.evaluation.topk import geometric_grid
from rankers.exceptions import InvalidInputError, InvalidParameterError
from rankers.neighbors import nearest_neighbors
from rankers.validation import check_ks, check_seed, check_X, check_y, default_feature_names

__all__ = ["REGRESSION_METRICS", "regression_curve"]

#: how the predictions of a test fold are scored (higher is better)
REGRESSION_METRICS = ("r2",)


def _r2(truth: np.ndarray, pred: np.ndarray, train_mean: float) -> float:
    """Out-of-sample R² against the training mean (0 when the test rows' target is
    constant and predicted exactly, else -inf-free: a constant test target that the
    prediction misses scores by the squared error against the training mean)."""
    sse = float(np.sum((truth - pred) ** 2))
    sst = float(np.sum((truth - train_mean) ** 2))
    if sst == 0.0:
        return 0.0 if sse == 0.0 else -1.0
    return 1.0 - sse / sst


def _fold_scores(orders, Xtr, Xte, ytr, yte, ks, n_neighbors, memo=None, fold=()):
    """R² at every k for one fold, averaged over ``orders`` (several for "random"), and the
    subsets newly scored (for the caller's ``memo``; ``fold`` names the fold's data in it,
    ``SubsetMemo.fold_keys``)."""
    known = SubsetMemo(memo, *fold, "knn", n_neighbors, "r2")
    Xtr, Xte = standardised(Xtr, Xte)
    mean = float(ytr.mean())
    out = np.zeros(len(ks))
    for order in orders:
        for i, k in enumerate(ks):
            top = np.sort(order[:k])  # the same subset scores the same whatever its order
            score = known.get(top)
            if score is None:
                Atr = np.ascontiguousarray(Xtr[:, top])
                Ate = np.ascontiguousarray(Xte[:, top])
                # neighbours at equal distance by lower index, on any machine
                nb = nearest_neighbors(Atr, n_neighbors, queries=Ate, return_distance=False)
                score = _r2(yte, ytr[nb].mean(axis=1), mean)
                known.put(top, score)
            out[i] += score
    return out / len(orders), known.new


def regression_curve(
    ranker: Any,
    X,
    y,
    *,
    params: dict | None = None,
    ks: Sequence[int] | None = None,
    n_neighbors: int = 5,
    metric: str = "r2",
    cv: Any = 10,
    n_random: int = 10,
    n_jobs: int | None = None,
    random_state=None,
    return_folds: bool = False,
    progress: Callable[[int], None] | None = None,
    memo: dict | None = None,
) -> pd.DataFrame:
    """Cross-validated kNN regression of a numeric target from the top-k features (higher
    = better).

    Parameters
    ----------
    ranker : str, ranker estimator, FoldRankings, "random", Ranking or sequence of names
        As for :func:`~aggregation.evaluation.class_curve`: a name or an unfitted ranker is
        **refit on the training rows of every fold**; ``"random"`` gives ``n_random`` seeded
        random orders per fold, averaged (the baseline); a fixed ranking is scored as given
        (``attrs["protocol"]`` says ``"fixed"``).
    X : array-like or DataFrame of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        The numeric target.
    params : dict, optional
        Parameters of the ranker when given by name.
    ks : sequence of int, optional
        Numbers of top features; default 1, 2, 4, ..., 2^floor(log2 n), n.
    n_neighbors : int, default=5
        Neighbours of the kNN regressor (the mean of their targets).
    metric : {"r2"}, default="r2"
        The out-of-sample R² against the training rows' mean.
    cv : int, splitter or list of (train, test) pairs, default=10
        Shuffled folds seeded by ``random_state`` (not stratified: the target is a
        quantity; see :func:`~aggregation.evaluation.folds.cv_splits`).
    n_random : int, default=10
        Random orders per fold for ``ranker="random"``.
    n_jobs : int, optional
        Folds in parallel (joblib); the result does not depend on it.
    random_state : int, RandomState, Generator or None
        Seeds the folds, the rankers refit per fold and the random orders.
    return_folds : bool, default=False
        One row per (k, fold) instead of the mean and standard deviation over folds.
    progress : callable, optional
        Called with 1 as each fold finishes.
    memo : dict, optional
        Shared by the curves of several rankings on the same data and folds, as for
        :func:`~aggregation.evaluation.class_curve`.

    Returns
    -------
    DataFrame
        Columns ``k``, ``metric``, ``mean``, ``std``, ``n_folds`` (or ``k``, ``fold``,
        ``metric``, ``value``); ``attrs`` holds ``protocol``, ``model`` ("knn") and
        ``ranking``.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> curve = regression_curve("rrelieff", X, y, ks=[2, 4], cv=3, random_state=0)
    >>> curve["k"].tolist(), curve.attrs["protocol"]
    ([2, 4], 'nested')
    """
    if metric not in REGRESSION_METRICS:
        raise InvalidParameterError(f"metric must be one of {REGRESSION_METRICS}; got {metric!r}")
    check_progress(progress)
    memo = check_memo(memo)
    Xc, names = check_X(X)
    Xc = np.asarray(Xc)
    m, n = Xc.shape
    names = tuple(names) if names is not None else default_feature_names(n)
    yc = check_y(y, m, kind="regression")
    ks = geometric_grid(n) if ks is None else check_ks(ks, n)
    seed = check_seed(random_state)
    splits, per_fold, protocol, label = orders_per_fold(
        ranker, params, Xc, yc, names, cv=cv, seed=seed, n_random=n_random, n_jobs=n_jobs,
        stratify=False,  # a quantity, even when its values are whole numbers
    )  # fmt: skip
    if any(max(tr.max(), te.max()) >= m for tr, te in splits):
        raise InvalidInputError(f"the folds index rows that X (of {m} samples) does not have")
    smallest = min(len(tr) for tr, _ in splits)
    if not 1 <= n_neighbors <= smallest:
        raise InvalidParameterError(
            f"n_neighbors={n_neighbors} must be in 1..{smallest} (the smallest training fold)"
        )
    keys = SubsetMemo.fold_keys(memo, Xc, yc, splits)
    jobs = (
        delayed(_fold_scores)(
            per_fold[f], Xc[tr], Xc[te], yc[tr], yc[te], ks, n_neighbors, memo, keys[f]
        )
        for f, (tr, te) in enumerate(splits)
    )
    results = run_in_order(jobs, n_jobs=n_jobs, progress=progress)
    scores = SubsetMemo.gather(results, memo)  # (folds, ks)
    frame = curve_frame(scores, ks, metric, return_folds)
    frame.attrs.update(protocol=protocol, model="knn", ranking=label)
    return frame
