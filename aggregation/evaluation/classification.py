"""Cross-validated class prediction from the top-k features of a ranking, nested.

The score a user with a labelled data set asks of a feature ranking first: does a model
that sees only the ``k`` best features predict the class of held-out samples? For every
fold, the ranking is **refit on the training rows** (:mod:`aggregation.evaluation.folds`),
a model is trained on those rows' top-k features and scores the test rows, as
``cross_validate(Pipeline([SelectKBest(k), model]))`` does in scikit-learn. A ranking of
pure noise then scores what a random ranking scores; ``"random"`` (seeded random orders per
fold, averaged) is the baseline every comparison reports beside the rankers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from joblib import delayed
from sklearn import config_context
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from aggregation._tasks import check_progress, run_in_order
from aggregation.evaluation._inputs import standardised
from aggregation.evaluation.folds import SubsetMemo, check_memo, curve_frame, orders_per_fold
from aggregation.evaluation.topk import geometric_grid
from rankers.exceptions import InvalidInputError, InvalidParameterError
from rankers.neighbors import nearest_neighbors
from rankers.validation import check_ks, check_seed, check_X, check_y, default_feature_names

__all__ = ["CLASS_METRICS", "CLASS_MODELS", "class_curve"]

#: the models a class curve can train on the top-k features
CLASS_MODELS = ("knn", "svm", "logistic")
#: how the predictions of a test fold are scored (higher is better)
CLASS_METRICS = ("balanced_accuracy", "accuracy")


def _score(metric: str, truth: np.ndarray, pred: np.ndarray) -> float:
    if metric == "accuracy":
        return float(np.mean(pred == truth))
    # balanced accuracy: the mean recall of the classes present in the test fold
    classes = np.unique(truth)
    return float(np.mean([np.mean(pred[truth == c] == c) for c in classes]))


def _knn_predict(Ztr, Zte, ytr, n_neighbors: int, n_classes: int) -> np.ndarray:
    # neighbours at equal distance are taken by lower index (rankers.neighbors); a tied
    # vote goes to the lower class code, as scikit-learn's KNeighborsClassifier does
    nb = nearest_neighbors(Ztr, n_neighbors, queries=Zte, return_distance=False)
    votes = np.zeros((len(Zte), n_classes), dtype=np.intp)
    np.add.at(votes, (np.repeat(np.arange(len(Zte)), n_neighbors), ytr[nb].ravel()), 1)
    return votes.argmax(axis=1)


def _model(name: str, seed: int):
    if name == "svm":
        from aggregation.evaluation.error_curves import default_estimator

        return default_estimator()
    return LogisticRegression(max_iter=1000, random_state=seed)


def _fold_scores(
    orders,
    Xtr,
    Xte,
    ytr,
    yte,
    ks,
    model,
    n_neighbors,
    metric,
    n_classes,
    seed,
    memo=None,
    fold=(),
) -> tuple[np.ndarray, dict]:
    """Scores at every k for one fold, averaged over ``orders`` (several for "random"), and
    the subsets newly scored (for the caller's ``memo``; ``fold`` names the fold's data in
    it, ``SubsetMemo.fold_keys``)."""
    # the seed only matters to the svm and logistic models
    model_key = (model, n_neighbors) if model == "knn" else (model, seed)
    known = SubsetMemo(memo, *fold, *model_key, metric, n_classes)
    if model != "svm":
        Xtr, Xte = standardised(Xtr, Xte)
    out = np.zeros(len(ks))
    with config_context(assume_finite=True):
        for order in orders:
            for i, k in enumerate(ks):
                top = np.sort(order[:k])  # the same subset scores the same whatever its order
                score = known.get(top)
                if score is None:
                    Atr = np.ascontiguousarray(Xtr[:, top])
                    Ate = np.ascontiguousarray(Xte[:, top])
                    if model == "knn":
                        pred = _knn_predict(Atr, Ate, ytr, n_neighbors, n_classes)
                    else:
                        pred = clone(_model(model, seed)).fit(Atr, ytr).predict(Ate)
                    score = _score(metric, yte, pred)
                    known.put(top, score)
                out[i] += score
    return out / len(orders), known.new


def class_curve(
    ranker: Any,
    X,
    y,
    *,
    params: dict | None = None,
    ks: Sequence[int] | None = None,
    model: str = "knn",
    n_neighbors: int = 5,
    metric: str = "balanced_accuracy",
    cv: Any = 10,
    n_random: int = 10,
    n_jobs: int | None = None,
    random_state=None,
    return_folds: bool = False,
    progress: Callable[[int], None] | None = None,
    memo: dict | None = None,
) -> pd.DataFrame:
    """Cross-validated class prediction from the top-k features of a ranking (higher = better).

    For every k in ``ks`` and every fold, ``model`` is trained on the training rows' k
    best-ranked features and predicts the test rows; ``metric`` scores the predictions.

    Parameters
    ----------
    ranker : str, ranker estimator, FoldRankings, "random", Ranking or sequence of names
        - a registry name (with ``params``) or an unfitted ranker: **refit on the training
          rows of every fold** (nested, the default use; no test row helps choose the
          features);
        - :class:`~aggregation.evaluation.folds.FoldRankings`: rankings already fitted per
          fold (e.g. an aggregate of several rankers, fold by fold); their folds are used;
        - ``"random"``: ``n_random`` seeded random orders per fold, averaged: the baseline;
        - a :class:`~aggregation.Ranking` or a sequence of feature names or indices: one
          fixed ranking on every fold. If it was fitted on these samples the curve is
          optimistic (the test rows chose the features); ``attrs["protocol"]`` says
          ``"fixed"``.
    X : array-like or DataFrame of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Class labels.
    params : dict, optional
        Parameters of the ranker when given by name.
    ks : sequence of int, optional
        Numbers of top features; default 1, 2, 4, ..., 2^floor(log2 n), n.
    model : {"knn", "svm", "logistic"}, default="knn"
        ``"knn"``: a ``n_neighbors``-nearest-neighbour majority vote on features
        standardised with the training rows' mean and standard deviation (equidistant
        neighbours by lower index and a tied vote by lower class, so the same on every
        machine); ``"svm"``: the error-curve paper's quadratic-kernel SVM (C = 0.1, on
        [0, 1]-scaled features); ``"logistic"``: scikit-learn's L2 logistic regression on
        standardised features.
    n_neighbors : int, default=5
        Neighbours of the kNN model.
    metric : {"balanced_accuracy", "accuracy"}, default="balanced_accuracy"
        Balanced accuracy (the mean recall of the classes of the test fold) does not
        reward predicting the majority class.
    cv : int, splitter or list of (train, test) pairs, default=10
        Stratified shuffled folds seeded by ``random_state`` (see
        :func:`~aggregation.evaluation.folds.cv_splits`); ignored for FoldRankings, which
        carry their folds.
    n_random : int, default=10
        Random orders per fold for ``ranker="random"``.
    n_jobs : int, optional
        Folds in parallel (joblib); the result does not depend on it.
    random_state : int, RandomState, Generator or None
        Seeds the folds, the rankers refit per fold and the random orders; the same int
        gives the same folds as :func:`fold_rankings` and :func:`ffa_rfa` with that int.
    return_folds : bool, default=False
        One row per (k, fold) instead of the mean and standard deviation over folds.
    progress : callable, optional
        Called with 1 as each fold finishes.
    memo : dict, optional
        Shared by the curves of several rankings on the same data and folds: a top-k
        subset one of them scored on a fold is not scored again, with the same result
        (``aggregation.evaluation.folds.SubsetMemo``).

    Returns
    -------
    DataFrame
        Columns ``k``, ``metric``, ``mean``, ``std``, ``n_folds`` (or ``k``, ``fold``,
        ``metric``, ``value``); ``attrs`` holds ``protocol`` ("nested", "random" or
        "fixed"), ``model`` and ``ranking``.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> X, y = load_wine(return_X_y=True, as_frame=True)
    >>> curve = class_curve("anova_f", X, y, ks=[1, 4], cv=3, random_state=0)
    >>> curve["k"].tolist(), curve.attrs["protocol"]
    ([1, 4], 'nested')
    """
    if model not in CLASS_MODELS:
        raise InvalidParameterError(f"model must be one of {CLASS_MODELS}; got {model!r}")
    if metric not in CLASS_METRICS:
        raise InvalidParameterError(f"metric must be one of {CLASS_METRICS}; got {metric!r}")
    check_progress(progress)
    memo = check_memo(memo)
    Xc, names = check_X(X)
    Xc = np.asarray(Xc)
    m, n = Xc.shape
    names = tuple(names) if names is not None else default_feature_names(n)
    yc = check_y(y, m, kind="classification")
    n_classes = int(yc.max()) + 1
    ks = geometric_grid(n) if ks is None else check_ks(ks, n)
    seed = check_seed(random_state)

    splits, per_fold, protocol, label = orders_per_fold(
        ranker, params, Xc, yc, names, cv=cv, seed=seed, n_random=n_random, n_jobs=n_jobs
    )
    if any(max(tr.max(), te.max()) >= m for tr, te in splits):
        raise InvalidInputError(f"the folds index rows that X (of {m} samples) does not have")
    smallest = min(len(tr) for tr, _ in splits)
    if model == "knn" and not 1 <= n_neighbors <= smallest:
        raise InvalidParameterError(
            f"n_neighbors={n_neighbors} must be in 1..{smallest} (the smallest training fold)"
        )
    model_seed = int(seed.generate_state(1)[0])
    fold_keys = SubsetMemo.fold_keys(memo, Xc, yc, splits)
    jobs = (
        delayed(_fold_scores)(
            per_fold[f],
            Xc[tr],
            Xc[te],
            yc[tr],
            yc[te],
            ks,
            model,
            n_neighbors,
            metric,
            n_classes,
            model_seed,
            memo,
            fold_keys[f],
        )
        for f, (tr, te) in enumerate(splits)
    )
    results = run_in_order(jobs, n_jobs=n_jobs, progress=progress)
    scores = SubsetMemo.gather(results, memo)  # (folds, ks)
    frame = curve_frame(scores, ks, metric, return_folds)
    frame.attrs.update(protocol=protocol, model=model, ranking=label)
    return frame
