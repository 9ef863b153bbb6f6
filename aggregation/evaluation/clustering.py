"""Clustering evaluation of a feature ranking: k-means on the top features, scored by labels.

The protocol of the Distance Rank paper (Firdová, Labart & Martel 2024, §4.3): the
data are min-max scaled, k-means with k = number of classes clusters all samples on the
k best features, five times with different seeds, and the clusters are compared with the
known classes by weighted F1 (after matching clusters to classes), normalised mutual
information and accuracy. For imbalanced data (one major class, several minor ones) the
same clustering is also evaluated in two steps: the major class against the merged minor
classes, then among the minor classes only.
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Integral

import numpy as np
import pandas as pd
from joblib import delayed
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import normalized_mutual_info_score

from aggregation._tasks import check_progress, run_in_order
from aggregation.evaluation._inputs import feature_order
from rankers.exceptions import InvalidInputError, InvalidParameterError
from rankers.kmeans import kmeans_labels
from rankers.preprocessing import minmax_scale
from rankers.validation import check_ks, check_seed, check_X, default_feature_names

__all__ = [
    "METRICS",
    "cluster_scores",
    "clustering_metrics",
    "match_clusters",
    "two_step_metrics",
]

#: metric names, in the order result tables list them
METRICS = ("f1_weighted", "nmi", "acc")


def _codes(labels) -> tuple[np.ndarray, np.ndarray]:
    uniques, codes = np.unique(np.asarray(labels), return_inverse=True)
    return uniques, codes.ravel()


def match_clusters(y_true, y_pred) -> np.ndarray:
    """Class assigned to every sample by the best one-to-one matching of clusters to classes.

    The matching maximises the number of samples whose cluster is matched to their class
    (Hungarian algorithm on the contingency table). With more clusters than classes the
    unmatched clusters get no class (-1 in the result, always an error); with fewer, some
    classes receive no cluster.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Known classes (any labels).
    y_pred : array-like of shape (n_samples,)
        Cluster labels (any labels).

    Returns
    -------
    ndarray of shape (n_samples,)
        Index, into ``np.unique(y_true)``, of the class each sample's cluster is matched
        to, or -1.

    Examples
    --------
    >>> match_clusters(["a", "a", "b", "b"], [1, 1, 0, 0]).tolist()
    [0, 0, 1, 1]
    """
    _, t = _codes(y_true)
    _, p = _codes(y_pred)
    if t.size != p.size:
        raise InvalidInputError(f"y_true has {t.size} labels but y_pred has {p.size}")
    table = np.zeros((t.max() + 1, p.max() + 1), dtype=np.int64)
    np.add.at(table, (t, p), 1)
    classes, clusters = linear_sum_assignment(table, maximize=True)
    to_class = np.full(table.shape[1], -1)
    to_class[clusters] = classes
    return to_class[p]


def _metrics_of_codes(t: np.ndarray, matched: np.ndarray, clusters: np.ndarray) -> dict:
    """F1W, NMI and ACC from class codes, matched class codes (-1 = none) and clusters."""
    n_classes = t.max() + 1
    support = np.bincount(t, minlength=n_classes)
    hit = matched == t
    tp = np.bincount(t[hit], minlength=n_classes)
    predicted = np.bincount(matched[matched >= 0], minlength=n_classes)
    # F1 = 2 TP / (|class| + |predicted as class|): the harmonic mean of precision and
    # recall (the paper's Eq. 6 omits the factor 2); 0 for a class no cluster is matched to
    f1 = 2.0 * tp / (support + predicted)
    return {
        "f1_weighted": float(support @ f1 / t.size),
        "nmi": float(normalized_mutual_info_score(t, clusters)),
        "acc": float(hit.mean()),
    }


def clustering_metrics(y_true, y_pred) -> dict[str, float]:
    """Weighted F1, NMI and accuracy of a clustering against known classes.

    Clusters are matched one-to-one to classes first (:func:`match_clusters`). ``acc``
    is the share of samples whose cluster is matched to their class (paper's Eq. 4);
    ``f1_weighted`` the mean over classes of F1, weighted by class size (Eq. 9); ``nmi``
    scikit-learn's normalised mutual information (arithmetic normalisation), which needs
    no matching.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        Known classes and cluster labels.

    Returns
    -------
    dict
        ``{"f1_weighted": ..., "nmi": ..., "acc": ...}``, each in [0, 1].

    Examples
    --------
    >>> clustering_metrics([0, 0, 1, 1], [5, 5, 7, 7])
    {'f1_weighted': 1.0, 'nmi': 1.0, 'acc': 1.0}
    """
    _, t = _codes(y_true)
    _, p = _codes(y_pred)
    return _metrics_of_codes(t, match_clusters(t, p), p)


def two_step_metrics(y_true, y_pred, major=None) -> dict[str, dict[str, float]]:
    """The paper's two-step evaluation of one clustering of imbalanced data.

    Only the evaluation is split; the clustering is the one of all samples (the paper's
    Remark 3).

    - ``"major_vs_minor"``: the minor classes are merged into one and every cluster not
      matched to the major class (matching of :func:`match_clusters` on all classes)
      predicts "minor"; the paper reports F1W for this step.
    - ``"within_minor"``: only the samples of the minor classes, their clusters matched
      anew to the minor classes, so a minor class hidden in the major cluster can still
      be told apart from the others; the paper reports ACC and NMI for this step.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        Known classes and cluster labels.
    major : label, optional
        The major class; default the most frequent (the first in sorted order on ties).

    Returns
    -------
    dict
        ``{"all": ..., "major_vs_minor": ..., "within_minor": ...}``, each a dict of the
        three metrics of :func:`clustering_metrics`.

    Examples
    --------
    >>> y = [0, 0, 0, 0, 1, 2]
    >>> out = two_step_metrics(y, [7, 7, 7, 7, 8, 8])
    >>> out["major_vs_minor"]["acc"], out["within_minor"]["acc"]
    (1.0, 0.5)
    """
    uniques, t = _codes(y_true)
    _, p = _codes(y_pred)
    if uniques.size < 3:
        raise InvalidInputError(
            f"the two-step evaluation needs a major class and at least two minor classes; "
            f"y_true has {uniques.size} class(es)"
        )
    if major is None:
        major_code = int(np.argmax(np.bincount(t)))
    else:
        where = np.flatnonzero(uniques == major)
        if not where.size:
            raise InvalidInputError(f"major={major!r} is not a class of y_true")
        major_code = int(where[0])
    matched = match_clusters(t, p)
    out = {"all": _metrics_of_codes(t, matched, p)}
    is_minor = (t != major_code).astype(np.int64)
    out["major_vs_minor"] = _metrics_of_codes(is_minor, (matched != major_code).astype(np.int64), p)
    minor = is_minor.astype(bool)
    out["within_minor"] = clustering_metrics(t[minor], p[minor])
    return out


def _one_run(Xk, t, n_clusters, seed, major_code):
    # k-means++ and Lloyd's iteration under the tie rule (rankers.kmeans): on discrete
    # features scikit-learn's KMeans assigns equidistant samples by BLAS rounding
    labels = kmeans_labels(Xk, n_clusters, np.random.RandomState(seed), n_init=1)
    if major_code is None:
        return {"all": clustering_metrics(t, labels)}
    return two_step_metrics(t, labels, major=major_code)


def cluster_scores(
    X,
    y,
    ranking=None,
    *,
    k_features=None,
    n_restarts: int = 5,
    n_clusters: int | None = None,
    scale: str | None = "minmax",
    two_step: bool = False,
    major_class=None,
    n_jobs: int | None = None,
    random_state=None,
    return_runs: bool = False,
    progress: Callable[[int], None] | None = None,
) -> pd.DataFrame:
    """k-means on the top features of a ranking, scored against the classes.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_features)
        The data; never modified.
    y : array-like of shape (n_samples,)
        Known classes, used only to score the clusters.
    ranking : Ranking, fitted ranker, sequence of names or column indices, or None
        Features best first. A sequence may list only some features. None takes the
        columns of ``X`` in their order.
    k_features : int, sequence of int or None, default=None
        Number(s) of top features to cluster on; a sequence gives one result per k (a
        curve). None uses every feature the ranking lists.
    n_restarts : int, default=5
        Independent k-means runs (one k-means++ initialisation each, seeds drawn from
        ``random_state``); the tables report their mean and standard deviation.
    n_clusters : int, optional
        Clusters of k-means; default the number of classes in ``y``.
    scale : "minmax" or None, default="minmax"
        Min-max scale every feature to [0, 1] before clustering (the paper's
        preprocessing); None clusters the data as given.
    two_step : bool, default=False
        Also report the two-step evaluation for imbalanced data
        (:func:`two_step_metrics`): rows with ``evaluation`` "major_vs_minor" and
        "within_minor" besides "all".
    major_class : label, optional
        The major class for ``two_step``; default the most frequent.
    n_jobs : int, optional
        Runs in parallel with joblib (threads preferred); results do not depend on it.
    random_state : int, RandomState instance or None
        Seeds the k-means runs; the same seeds serve every k.
    return_runs : bool, default=False
        Return one row per run instead of the mean and standard deviation.
    progress : callable, optional
        Called with 1 as each k-means run finishes (in order): ``len(k_features) *
        n_restarts`` calls in all (``n_restarts`` when ``k_features`` is one number or
        None), e.g. a tqdm bar's ``update``.

    Returns
    -------
    DataFrame
        Columns ``k_features``, ``evaluation``, ``metric``, ``mean``, ``std`` (ddof=1; NaN
        for a single run), ``n_restarts``; with ``return_runs=True`` columns
        ``k_features``, ``restart``, ``evaluation``, ``metric``, ``value``.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> table = cluster_scores(X, y, [3, 2, 0, 1], k_features=[1, 4], random_state=0)
    >>> table[table["metric"] == "acc"]["k_features"].tolist()
    [1, 4]
    """
    check_progress(progress)
    Xc, names = check_X(X, min_features=1, what="X")
    Xc = np.asarray(Xc)
    m, n = Xc.shape
    names = names if names is not None else default_feature_names(n)
    y_arr = np.asarray(y).ravel()
    if y_arr.size != m:
        raise InvalidInputError(f"y has {y_arr.size} labels but X has {m} samples")
    if pd.isna(pd.Series(y_arr)).any():
        raise InvalidInputError("y has missing labels; every sample needs a class")
    uniques, t = _codes(y_arr)
    order = np.arange(n) if ranking is None else feature_order(ranking, names, complete=False)
    if k_features is None:
        ks = [order.size]
    else:
        ks = check_ks(
            k_features, order.size, what="k_features", of="the features the ranking lists"
        )
    if not isinstance(n_restarts, Integral) or n_restarts < 1:
        raise InvalidParameterError(f"n_restarts must be a positive integer; got {n_restarts!r}")
    n_clusters = uniques.size if n_clusters is None else n_clusters
    if not isinstance(n_clusters, Integral) or not 2 <= n_clusters <= m:
        raise InvalidParameterError(f"n_clusters must be an integer in 2..{m}; got {n_clusters!r}")
    if scale not in ("minmax", None):
        raise InvalidParameterError(f"scale must be 'minmax' or None; got {scale!r}")
    major_code = None
    if two_step:
        if uniques.size < 3:
            raise InvalidInputError(
                "two_step needs a major class and at least two minor classes; "
                f"y has {uniques.size} class(es)"
            )
        major_code = int(np.argmax(np.bincount(t)))
        if major_class is not None:
            where = np.flatnonzero(uniques == major_class)
            if not where.size:
                raise InvalidInputError(f"major_class={major_class!r} is not a class of y")
            major_code = int(where[0])

    if scale == "minmax":
        Xc = minmax_scale(Xc)  # a constant column stays constant (0)
    rng = np.random.default_rng(check_seed(random_state))
    seeds = rng.integers(np.iinfo(np.int32).max, size=n_restarts)
    jobs = [
        delayed(_one_run)(Xc[:, order[:k]], t, n_clusters, int(seeds[r]), major_code)
        for k in ks
        for r in range(n_restarts)
    ]
    # threads: k-means spends its time in compiled code that releases the GIL
    results = run_in_order(jobs, n_jobs=n_jobs, progress=progress, prefer="threads")
    rows = [
        {"k_features": k, "restart": r, "evaluation": ev, "metric": metric, "value": value}
        for (k, r), res in zip(
            ((k, r) for k in ks for r in range(n_restarts)), results, strict=True
        )
        for ev, values in res.items()
        for metric, value in values.items()
    ]
    runs = pd.DataFrame(rows)
    if return_runs:
        return runs
    table = (
        runs.groupby(["k_features", "evaluation", "metric"], sort=False)["value"]
        .agg(["mean", "std"])
        .reset_index()
    )
    table["n_restarts"] = n_restarts
    return table
