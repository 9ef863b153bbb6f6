"""The unsupervised top-k kNN error curve of a feature ranking.

For k = 1, 2, 4, ..., 2^floor(log2 n), n, a nearest-neighbour regressor that sees only the k
best features predicts *all* features, under k-fold cross-validation (the protocol of the
unsupervised ensemble paper and of the FRANe paper). The ranking is recomputed on every
training fold, so the test fold never influences the ranking it judges (docs/design.md,
"Evaluation").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from numbers import Integral

import numpy as np
import pandas as pd
from joblib import delayed
from sklearn.base import clone

import rankers
from aggregation._tasks import check_progress, run_in_order
from aggregation.evaluation._inputs import feature_order
from aggregation.evaluation.folds import FoldRankings, cv_splits
from rankers.exceptions import InvalidInputError, InvalidParameterError
from rankers.neighbors import nearest_neighbors
from rankers.ties import TIE_RTOL
from rankers.validation import check_ks, check_seed, check_X, default_feature_names

__all__ = ["METRICS", "geometric_grid", "topk_curve"]

#: metric name -> default number of neighbours (the papers' settings)
METRICS = {"mse": 1, "rmse": 1, "rmae": 5}


def geometric_grid(n_features: int) -> list[int]:
    """Numbers of top features 1, 2, 4, ..., 2^floor(log2 n), n (no repeats).

    Examples
    --------
    >>> geometric_grid(20)
    [1, 2, 4, 8, 16, 20]
    >>> geometric_grid(16)
    [1, 2, 4, 8, 16]
    """
    if n_features < 1:
        raise InvalidParameterError(f"n_features must be >= 1, got {n_features}")
    grid = [2**j for j in range(int(np.floor(np.log2(n_features))) + 1)]
    if grid[-1] != n_features:
        grid.append(n_features)
    return grid


def _resolve_ranker(ranker, params):
    """A ranker to refit per fold, "random", or a fixed ranking (returned as it is)."""
    if isinstance(ranker, str):
        if ranker == "random":
            return "random"
        return rankers.get(ranker, **(params or {}))
    if params:
        raise InvalidParameterError("params are only used when the ranker is given by name")
    if hasattr(ranker, "fit") and hasattr(ranker, "get_params"):
        return clone(ranker)
    return ranker  # a fixed ranking: feature_order reads it, or says what it is not


def _scaled(train: np.ndarray, test: np.ndarray):
    mean = train.mean(axis=0)
    std = train.std(axis=0)
    # a constant feature (within the tie tolerance) is no target (see _fold_curve); as an
    # input it is 0 rather than its last bits magnified
    std[std <= TIE_RTOL * np.abs(train).max(axis=0)] = 1.0
    return (train - mean) / std, (test - mean) / std


def _error(metric: str, truth: np.ndarray, pred: np.ndarray) -> float:
    diff = truth - pred
    if metric == "mse":
        return float(np.mean(diff**2))
    if metric == "rmse":
        return float(np.sqrt(np.mean(diff**2)))
    return float(np.mean(np.abs(diff)))  # rmae: data scaled by the training std


def _fold_curve(est, Xtr, Xte, ytr, ks, metric, n_neighbors, scale, seed, n_random):
    """Errors at every k for one fold (averaged over n_random orders for 'random')."""
    if isinstance(est, str):  # "random": orders drawn from the fold's own seed
        rng = np.random.default_rng(seed)
        orders = [rng.permutation(Xtr.shape[1]) for _ in range(n_random)]
    elif isinstance(est, np.ndarray):  # this fold's order (fold rankings) or a fixed one
        orders = [est]
    else:
        if "random_state" in est.get_params() and est.get_params()["random_state"] is None:
            est.set_params(random_state=int(seed))
        orders = [est.fit(Xtr, ytr).ranking_]
    # A feature constant on the training fold is predicted as that constant by every
    # neighbour model, whatever the ranking: its test error is the same for all rankings
    # and, unscaled, can swamp the rest. It is left out of the targets.
    # "constant" as for the rankers (rankers.ties): a range within 1e-9 of the largest value
    targets = np.flatnonzero(np.ptp(Xtr, axis=0) > TIE_RTOL * np.abs(Xtr).max(axis=0))
    if targets.size == 0:
        targets = np.arange(Xtr.shape[1])
    if scale:
        Xtr, Xte = _scaled(Xtr, Xte)
    Ytr, Yte = Xtr[:, targets], Xte[:, targets]
    errors = np.zeros(len(ks))
    for order in orders:
        for i, k in enumerate(ks):
            top = order[:k]
            # scikit-learn's KNeighborsRegressor, with equidistant training samples taken
            # by lower index whatever the last bits of their distances (rankers.neighbors)
            _, nb = nearest_neighbors(Xtr[:, top], n_neighbors, queries=Xte[:, top])
            pred = Ytr[nb].mean(axis=1)
            errors[i] += _error(metric, Yte, pred)
    return errors / len(orders)


def topk_curve(
    ranker,
    X,
    y=None,
    *,
    params: dict | None = None,
    ks: Sequence[int] | None = None,
    metric: str = "mse",
    n_neighbors: int | None = None,
    cv: int = 10,
    scale: bool = True,
    n_random: int = 10,
    n_jobs: int | None = None,
    random_state=None,
    return_folds: bool = False,
    progress: Callable[[int], None] | None = None,
) -> pd.DataFrame:
    """Cross-validated top-k kNN error curve of a feature ranking (lower is better).

    For every k in ``ks``, a k-nearest-neighbour regressor that sees only the k
    best-ranked features predicts all features of the held-out fold.

    Parameters
    ----------
    ranker : str, ranker estimator, FoldRankings, "random", Ranking or sequence of names
        A registry name or an unfitted ranker is **refit on every training fold**
        (no leakage). :class:`~aggregation.evaluation.folds.FoldRankings` (rankings
        already fitted per fold, e.g. an aggregate computed fold by fold) are scored on
        their own folds. ``"random"`` scores ``n_random`` seeded random rankings per fold
        and averages them: the baseline every comparison should report. A
        :class:`~aggregation.Ranking` or a sequence of feature names (or indices) is a
        fixed ranking, scored as it is (optimistic when it was fitted on these samples).
    X : array-like or DataFrame of shape (n_samples, n_features)
        The data; never modified.
    y : array-like, optional
        Target, passed to supervised rankers on each training fold; the curve itself
        never uses it.
    params : dict, optional
        Parameters of the ranker when given by name.
    ks : sequence of int, optional
        Numbers of top features; default 1, 2, 4, ..., 2^floor(log2 n), n.
    metric : {"mse", "rmse", "rmae"}, default="mse"
        ``"mse"``: mean squared error over test samples and features (the unsupervised
        ensemble paper, 1NN); ``"rmse"``: its square root; ``"rmae"``: mean over
        features of MAE/σ (the FRANe paper, 5NN).
    n_neighbors : int, optional
        Neighbours of the regressor; default 1 for mse/rmse and 5 for rmae.
    cv : int, splitter or list of (train, test) pairs, default=10
        Number of folds (shuffled, seeded by ``random_state``; not stratified), or the
        folds themselves; ignored for FoldRankings, which carry their folds.
    scale : bool, default=True
        Standardise features with the training fold's mean and standard deviation
        before the neighbour search and the error, so every feature counts alike
        (σ in RMAE is then the training fold's). The ranker always sees raw data.
        Whatever ``scale``, features constant on a training fold are not targets of
        that fold: every neighbour model predicts them as the constant, so their error
        does not depend on the ranking (unscaled, it can dwarf all the others).
    n_random : int, default=10
        Random rankings per fold when ``ranker="random"``.
    n_jobs : int, optional
        Folds run in parallel with joblib; results do not depend on it.
    random_state : int, RandomState or None
        Seeds the folds and, for rankers whose ``random_state`` is None, the ranker.
    return_folds : bool, default=False
        Return one row per (k, fold) instead of the mean and standard deviation.
    progress : callable, optional
        Called with 1 as each fold finishes (in fold order): ``cv`` calls in all, e.g. a
        ``tqdm(total=cv)`` bar's ``update``.

    Returns
    -------
    DataFrame
        Columns ``k``, ``metric``, ``mean``, ``std``, ``n_folds`` (or ``k``, ``fold``,
        ``metric``, ``value`` with ``return_folds=True``).

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> X = load_wine(as_frame=True).data
    >>> curve = topk_curve("variance", X, cv=3, random_state=0)
    >>> curve["k"].tolist()
    [1, 2, 4, 8, 13]
    """
    if metric not in METRICS:
        raise InvalidParameterError(f"metric must be one of {sorted(METRICS)}; got {metric!r}")
    check_progress(progress)
    Xc, names = check_X(X)
    Xc = np.asarray(Xc)
    m, n = Xc.shape
    names = names if names is not None else default_feature_names(n)
    ks = geometric_grid(n) if ks is None else check_ks(ks, n)
    n_neighbors = METRICS[metric] if n_neighbors is None else int(n_neighbors)
    if isinstance(ranker, FoldRankings):
        splits = list(ranker.splits)
        if any(max(tr.max(), te.max()) >= m for tr, te in splits):
            raise InvalidInputError(f"the folds index rows that X (of {m} samples) lacks")
        per_fold = ranker.orders(names)
        rank_seeds = [0] * len(splits)
    else:
        if isinstance(cv, (Integral, np.integer)) and not isinstance(cv, bool):
            if cv < 2:
                raise InvalidParameterError(f"cv must be an integer >= 2; got {cv!r}")
            if cv > m:
                raise InvalidParameterError(f"cv={cv} folds but X has only {m} samples")
        seed = check_seed(random_state)
        # word 0 of the seed shuffles the folds (as cv_splits), the others seed the rankers
        splits = cv_splits(Xc, None, cv=cv, random_state=seed, stratify=False)
        rank_seeds = seed.generate_state(len(splits) + 1)[1:]
        per_fold = None
    min_train = min(len(tr) for tr, _ in splits)
    if n_neighbors < 1 or n_neighbors > min_train:
        raise InvalidParameterError(
            f"n_neighbors={n_neighbors} must be in 1..{min_train} (the smallest training fold)"
        )
    if per_fold is None:
        est = _resolve_ranker(ranker, params)
        if not isinstance(est, str) and not hasattr(est, "get_params"):
            est = feature_order(est, names, what="ranker")
    yc = None if y is None else np.asarray(y)
    if yc is not None and len(yc) != m:
        raise InvalidInputError(f"y has {len(yc)} values but X has {m} samples")

    def fold_est(i):
        if per_fold is not None:
            return per_fold[i]
        return est if isinstance(est, (str, np.ndarray)) else clone(est)

    jobs = (
        delayed(_fold_curve)(
            fold_est(i),
            Xc[tr],
            Xc[te],
            None if yc is None else yc[tr],
            ks,
            metric,
            n_neighbors,
            scale,
            rank_seeds[i],
            n_random,
        )
        for i, (tr, te) in enumerate(splits)
    )
    errors = np.array(run_in_order(jobs, n_jobs=n_jobs, progress=progress))  # (cv, len(ks))
    cv = len(splits)
    if return_folds:
        folds, kk = np.meshgrid(np.arange(cv), ks, indexing="ij")
        return pd.DataFrame(
            {"k": kk.ravel(), "fold": folds.ravel(), "metric": metric, "value": errors.ravel()}
        ).sort_values(["k", "fold"], ignore_index=True)
    return pd.DataFrame(
        {
            "k": ks,
            "metric": metric,
            "mean": errors.mean(axis=0),
            "std": errors.std(axis=0, ddof=1),
            "n_folds": cv,
        }
    )
