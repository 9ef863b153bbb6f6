"""FFA/RFA error curves of a feature ranking and their score, the ECA (error-curve paper, §3).

The error-curve paper (Slavkov et al., 2018) judges a ranking by models trained on nested
feature subsets: the *forward feature addition* curve FFA(i) is the cross-validated score on
the top-i features, the *reverse feature addition* curve RFA(i) the score on the bottom-i
features. A good ranking has a high FFA and a low RFA. Two rankings compare by the weighted
mean differences of their curves (Eqs. 1-3) combined into the error curve average
``ECA = (FFA_delta - RFA_delta) / 2`` (Eq. 4); against a random ranking the *expected curve*
serves as the second ranking (§3.3).

Scores follow scikit-learn's scorer convention, **higher is better** (accuracy by default for
a classifier). The paper's curves behave the same way (a good ranking's FFA lies *above* the
expected curve), so its signs carry over unchanged: ECA > 0 means the first ranking is
better. To plot classification *error*, use ``1 - curve[["ffa", "rfa"]]`` (accuracy) or
``plots.plot_error_curves(..., as_error=True)``; compute ECA on the scores.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from numbers import Integral
from typing import Any

import numpy as np
import pandas as pd
from joblib import delayed
from sklearn import config_context
from sklearn.base import BaseEstimator, ClassifierMixin, clone, is_classifier
from sklearn.metrics import check_scoring
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC

from aggregation._tasks import check_progress, run_in_order
from aggregation.evaluation._inputs import feature_order
from aggregation.evaluation.folds import FoldRankings, cv_splits, fold_rankings, resolve_ranker
from aggregation.evaluation.topk import geometric_grid
from aggregation.ranking import GenericRanking, Ranking
from rankers.exceptions import InvalidInputError, InvalidParameterError
from rankers.validation import check_ks, check_seed, check_X, check_y, default_feature_names

__all__ = [
    "WEIGHTINGS",
    "curve_delta",
    "curve_grid",
    "default_estimator",
    "eca",
    "expected_curve",
    "ffa_rfa",
    "ffa_rfa_many",
    "pool_random_curves",
    "random_curves",
]

#: the weighting functions w_i of Eqs. 1-2 (``|S_i| = i``, the size of the feature subset)
WEIGHTINGS = ("uniform", "inverse_size", "magnitude", "inverse_size_magnitude")
_POSITION_ONLY = ("uniform", "inverse_size")  # weights free of delta: the §3.3 shortcut holds


def default_estimator():
    """The paper's classifier: an SVM with a quadratic polynomial kernel and C = 0.1.

    The paper ran Weka's SMO. Its defaults are matched here: the ``PolyKernel`` without
    lower-order terms (``-L`` off) is ``K(x, z) = (x . z)^2``, i.e. ``SVC(kernel="poly",
    degree=2, gamma=1, coef0=0)`` (scikit-learn's own ``gamma="scale"`` would differ); SMO
    normalises every attribute to [0, 1] on the training data (``-N 0``), here a
    ``MinMaxScaler`` fitted on each training fold; tolerance 1e-3 (Weka's ``-L``). The
    paper's epsilon 1e-12 is SMO's round-off guard, which libsvm has no counterpart of.
    Multi-class problems are one-vs-one in both.

    Returns
    -------
    sklearn.pipeline.Pipeline
    """
    return make_pipeline(
        MinMaxScaler(), SVC(kernel="poly", degree=2, gamma=1.0, coef0=0.0, C=0.1, tol=1e-3)
    )


def _quadratic_gram(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """The paper's kernel ``(a . b)^2`` between the (scaled) rows of ``A`` and ``B``."""
    return np.square(A @ B.T)


def _precomputed_svc() -> SVC:
    """libsvm's SVC with the paper's C and tolerance, on a precomputed kernel."""
    return SVC(kernel="precomputed", C=0.1, tol=1e-3)


class _GramQuadraticSVC(ClassifierMixin, BaseEstimator):
    """:func:`default_estimator` with its kernel as one matrix product (internal).

    The same model: min-max scaling fitted on the training rows, then libsvm's SVC with
    C = 0.1 on ``K(x, z) = (x . z)^2``, here passed as a precomputed Gram matrix. libsvm
    evaluates its poly kernel one pair of samples at a time without BLAS; on wide subsets
    (thousands of features) that is most of an error curve's time, and the product is
    about 10x faster at 20,000 features (``benchmarks/speed/bench_error_curve_svc.py``).
    The kernel values differ from libsvm's only in rounding.
    """

    def fit(self, X, y):
        self.scaler_ = MinMaxScaler().fit(X)
        self.train_ = self.scaler_.transform(X)
        self.svc_ = _precomputed_svc().fit(_quadratic_gram(self.train_, self.train_), y)
        self.classes_ = self.svc_.classes_
        return self

    def _gram(self, X):
        return _quadratic_gram(self.scaler_.transform(X), self.train_)

    def predict(self, X):
        return self.svc_.predict(self._gram(X))

    def decision_function(self, X):
        return self.svc_.decision_function(self._gram(X))


def curve_grid(grid: Any, n_features: int) -> list[int]:
    """The subset sizes ``i`` at which the curves are evaluated.

    Parameters
    ----------
    grid : "every", "geometric", int or sequence of int
        ``"every"``: 1..n (the paper). ``"geometric"``: 1, 2, 4, ..., n. An int step ``s``:
        1, s, 2s, ..., n (the paper's Δi speed-up; 1 and n always included). A sequence:
        those sizes, sorted, repeats dropped.
    n_features : int

    Examples
    --------
    >>> curve_grid(5, 12)
    [1, 5, 10, 12]
    """
    if isinstance(grid, str):
        if grid == "every":
            return list(range(1, n_features + 1))
        if grid == "geometric":
            return geometric_grid(n_features)
        raise InvalidParameterError(
            f"grid must be 'every', 'geometric', an int step or a list of sizes; got {grid!r}"
        )
    if isinstance(grid, (Integral, np.integer)) and not isinstance(grid, bool):
        if grid < 1:
            raise InvalidParameterError(f"a grid step must be >= 1; got {grid}")
        return sorted({1, *range(int(grid), n_features + 1, int(grid)), n_features})
    if isinstance(grid, (Sequence, np.ndarray)):
        return check_ks(grid, n_features, what="grid")
    raise InvalidParameterError(
        f"grid must be 'every', 'geometric', an int step or a list of sizes; got {grid!r}"
    )


# ------------------------------------------------------------------ evaluation machinery
class _Setup:
    """Validated data, estimator, scorer, folds and grid shared by every curve of one call."""

    def __init__(self, X, y, estimator, scoring, cv, grid, random_state):
        Xc, names = check_X(X, min_features=1)
        self.X = np.asarray(Xc)
        m, n = self.X.shape
        self.names = names if names is not None else default_feature_names(n)
        self.estimator = default_estimator() if estimator is None else clone(estimator)
        # what is fitted: the default model with its kernel as a matrix product
        self.fitted = _GramQuadraticSVC() if estimator is None else self.estimator
        classifier = is_classifier(self.estimator)
        self.y = check_y(y, m, kind="classification" if classifier else "regression")
        try:
            self.scorer = check_scoring(self.estimator, scoring=scoring)
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError(f"invalid scoring {scoring!r}: {exc}") from None
        self.scoring = (
            scoring
            if isinstance(scoring, str)
            else (("accuracy" if classifier else "r2") if scoring is None else repr(scoring))
        )
        # the paper's model scored by accuracy: evaluated without per-call overhead
        self.default_accuracy = estimator is None and self.scoring == "accuracy"
        self.grid = curve_grid(grid, n)
        # three words always, so every function seeded alike shares the folds
        self.seed = check_seed(random_state)
        _, est_seed, self.perm_seed = self.seed.generate_state(3)
        for key, value in self.estimator.get_params().items():
            if key.endswith("random_state") and value is None:
                self.estimator.set_params(**{key: int(est_seed)})
        self.splits = self._splits(cv, classifier, self.seed)

    def _splits(self, cv, classifier, seed):
        # the folds cv_splits draws for the same seed (word 0), so every function seeded
        # alike (fold_rankings, class_curve) shares them
        return cv_splits(self.X, self.y, cv=cv, random_state=seed, stratify=classifier)

    def attrs(self, **extra) -> dict:
        return {
            "scoring": self.scoring,
            "n_features": self.X.shape[1],
            "n_folds": len(self.splits),
            **extra,
        }


def _fold_scores(estimator, X_sub, y, splits, scorer) -> np.ndarray:
    """The scorer's value on every test fold for one feature subset."""
    out = np.empty(len(splits))
    for f, (train, test) in enumerate(splits):
        model = clone(estimator).fit(X_sub[train], y[train])
        out[f] = scorer(model, X_sub[test], y[test])
    return out


def _scaled_folds(X: np.ndarray, splits) -> list[tuple[np.ndarray, np.ndarray]]:
    """Every fold's (training, test) rows min-max scaled on its training rows, all columns."""
    out = []
    for train, test in splits:
        scaler = MinMaxScaler().fit(X[train])
        out.append((scaler.transform(X[train]), scaler.transform(X[test])))
    return out


def _fold_accuracies(folds, y, splits, cols: list[int]) -> np.ndarray:
    """:func:`_fold_scores` of the default model with accuracy, the scaling done per fold.

    Min-max scaling works column by column, so the columns ``cols`` of the once-scaled
    folds are the numbers :class:`_GramQuadraticSVC` computes for the subset, laid out
    alike (C order), hence the same kernel, the same libsvm model and the same accuracy
    (the share of equal labels), bit for bit; what is saved is scikit-learn's per-call
    validation of a clone, a scaler and a scorer, which costs ~10x the arithmetic on
    the expected curve's small subsets.
    """
    out = np.empty(len(splits))
    # the kernels are finite products of finite, validated data and the parameters are
    # fixed: scikit-learn's checks of both are skipped (its public switches)
    with config_context(assume_finite=True, skip_parameter_validation=True):
        for f, ((Ztr, Zte), (train, test)) in enumerate(zip(folds, splits, strict=True)):
            A = np.ascontiguousarray(Ztr[:, cols])
            svc = _precomputed_svc().fit(_quadratic_gram(A, A), y[train])
            pred = svc.predict(_quadratic_gram(np.ascontiguousarray(Zte[:, cols]), A))
            out[f] = np.mean(pred == y[test])
    return out


def _chain_accuracies(folds, y, splits, order, grid: list[int]) -> np.ndarray:
    """FFA and RFA accuracies of the default model for one ranking, kernels grown in steps.

    ``order`` is one order for every fold, or a list of one order per fold (a ranking
    refit on each training fold).

    The top-i (bottom-i) sets of a ranking are nested, so each fold's linear kernel
    ``Z_S @ Z_S.T`` is carried from one grid point to the next and only the block of
    features added in between is multiplied: one pass over the ranking's features per
    fold and side, instead of one per grid point (a ``points:32`` grid does ~16x the
    arithmetic of one pass). The model and the accuracy are those of
    :func:`_fold_accuracies`; the kernel values differ from its direct product in
    rounding only (the sum runs over the blocks, in the ranking's order). The last grid
    point, when it is ``n`` (every feature), is left out: it is the same set for every
    ranking and scored once, directly.

    Returns
    -------
    ndarray of shape (2, len(grid), n_folds)
        ``[0]`` the FFA, ``[1]`` the RFA accuracies; the ``n`` point, if any, unset (0).
    """
    n = folds[0][0].shape[1]  # every feature of the data
    points = [i for i in grid if i < n]
    out = np.zeros((2, len(grid), len(splits)))
    with config_context(assume_finite=True, skip_parameter_validation=True):
        for f, ((Ztr, Zte), (train, test)) in enumerate(zip(folds, splits, strict=True)):
            own = order[f] if isinstance(order, list) else order
            for side, ranked in enumerate((own, own[::-1])):
                Ktr = np.zeros((len(train), len(train)))
                Kte = np.zeros((len(test), len(train)))
                done = 0
                for g, i in enumerate(points):
                    block = ranked[done:i]
                    A = np.ascontiguousarray(Ztr[:, block])
                    Ktr += A @ A.T
                    Kte += np.ascontiguousarray(Zte[:, block]) @ A.T
                    done = i
                    svc = _precomputed_svc().fit(np.square(Ktr), y[train])
                    pred = svc.predict(np.square(Kte))
                    out[side, g, f] = np.mean(pred == y[test])
    return out


def _evaluate_chains(
    setup: _Setup, orders: list[np.ndarray], n_jobs, progress=None
) -> tuple[np.ndarray, ...]:
    """:func:`_evaluate` for the default model with accuracy, by :func:`_chain_accuracies`.

    One job per ranking (both sides, every fold), after one job for the set of every
    feature when the grid ends at ``n`` (shared by all rankings, scored directly as in
    :func:`_fold_accuracies`). Each ranking's numbers depend on that ranking alone, so
    the result is the same whatever ``n_jobs``.
    """
    n, grid = setup.X.shape[1], setup.grid
    folds = _scaled_folds(setup.X, setup.splits)
    full = grid[-1] == n
    jobs = [delayed(_fold_accuracies)(folds, setup.y, setup.splits, list(range(n)))] * full
    jobs += [delayed(_chain_accuracies)(folds, setup.y, setup.splits, o, grid) for o in orders]
    units_done = [0] * full + [len(grid) * (r + 1) for r in range(len(orders))]
    outputs = run_in_order(jobs, n_jobs=n_jobs, progress=progress, units_done=units_done)
    scores = np.array(outputs[full:])  # (n_rankings, 2, len(grid), n_folds)
    if full:
        scores[:, :, -1] = outputs[0]
    return scores[:, 0], scores[:, 1]


def _nested_scores(estimator, X, y, splits, scorer, per_fold, grid) -> np.ndarray:
    """FFA and RFA scores of one ranking refit per fold: fold ``f`` scores only the
    subsets of ``per_fold[f]`` (shape (2, len(grid), n_folds))."""
    out = np.empty((2, len(grid), len(splits)))
    for f, ((train, test), order) in enumerate(zip(splits, per_fold, strict=True)):
        seen: dict[tuple[int, ...], float] = {}
        for g, i in enumerate(grid):
            for side, cols in enumerate((order[:i], order[len(order) - i :])):
                key = tuple(np.sort(cols).tolist())
                if key not in seen:
                    sub = X[:, list(key)]
                    model = clone(estimator).fit(sub[train], y[train])
                    seen[key] = scorer(model, sub[test], y[test])
                out[side, g, f] = seen[key]
    return out


def _evaluate_nested(
    setup: _Setup, per_fold: list[list[np.ndarray]], n_jobs, progress=None
) -> tuple[np.ndarray, ...]:
    """Per-fold FFA and RFA scores of rankings refit on every training fold.

    ``per_fold[r][f]`` is ranking ``r``'s order fitted on fold ``f``'s training rows; only
    fold ``f``'s test rows score it. Same shapes as :func:`_evaluate`.
    """
    if setup.default_accuracy:
        return _evaluate_chains(setup, per_fold, n_jobs, progress)
    jobs = (
        delayed(_nested_scores)(
            setup.fitted, setup.X, setup.y, setup.splits, setup.scorer, orders, setup.grid
        )
        for orders in per_fold
    )
    units_done = [len(setup.grid) * (r + 1) for r in range(len(per_fold))]
    scores = np.array(run_in_order(jobs, n_jobs=n_jobs, progress=progress, units_done=units_done))
    return scores[:, 0], scores[:, 1]


def _evaluate(
    setup: _Setup, orders: list[np.ndarray], n_jobs, progress=None
) -> tuple[np.ndarray, ...]:
    """Per-fold FFA and RFA scores, each of shape (len(orders), len(grid), n_folds).

    Subsets are deduplicated (FFA(n) = RFA(n); noisy rankings share many top sets) and
    evaluated with sorted columns, so a subset's score never depends on which ranking
    asked for it, nor on n_jobs. ``progress`` counts grid points of rankings: one is done
    when both its subsets are scored (``len(orders) * len(grid)`` in all).
    """
    keys: dict[tuple[int, ...], int] = {}
    where = np.empty((2, len(orders), len(setup.grid)), dtype=np.intp)
    for r, order in enumerate(orders):
        for g, i in enumerate(setup.grid):
            for side, cols in enumerate((order[:i], order[len(order) - i :])):
                key = tuple(sorted(cols.tolist()))
                where[side, r, g] = keys.setdefault(key, len(keys))
    if setup.default_accuracy:
        folds = _scaled_folds(setup.X, setup.splits)
        jobs = (delayed(_fold_accuracies)(folds, setup.y, setup.splits, list(key)) for key in keys)
    else:
        jobs = (
            delayed(_fold_scores)(
                setup.fitted, setup.X[:, list(key)], setup.y, setup.splits, setup.scorer
            )
            for key in keys
        )
    # subsets are scored in the order of their keys, so a grid point is done once the
    # larger of its two keys is
    last_key = np.maximum(where[0], where[1]).ravel()
    units_done = np.cumsum(np.bincount(last_key, minlength=len(keys)))
    outputs = run_in_order(jobs, n_jobs=n_jobs, progress=progress, units_done=units_done)
    scores = np.array(outputs)  # (n_unique, n_folds)
    return scores[where[0]], scores[where[1]]


def _frame(setup: _Setup, ffa: np.ndarray, rfa: np.ndarray, **attrs) -> pd.DataFrame:
    ddof = 1 if ffa.shape[-1] > 1 else 0
    frame = pd.DataFrame(
        {
            "i": setup.grid,
            "ffa": ffa.mean(axis=-1),
            "rfa": rfa.mean(axis=-1),
            "ffa_std": ffa.std(axis=-1, ddof=ddof),
            "rfa_std": rfa.std(axis=-1, ddof=ddof),
        }
    )
    frame.attrs.update(setup.attrs(**attrs))
    return frame


# ------------------------------------------------------------------ public curves
def ffa_rfa_many(
    rankings: Sequence[Any],
    X,
    y,
    *,
    estimator=None,
    scoring=None,
    cv=10,
    grid="every",
    n_jobs: int | None = None,
    random_state=None,
    progress: Callable[[int], None] | None = None,
) -> list[pd.DataFrame]:
    """FFA/RFA curves of several rankings on the same folds (one :func:`ffa_rfa` each).

    Feature subsets shared between rankings (frequent among noisy versions of one
    ranking) are evaluated once. Parameters as :func:`ffa_rfa`; ``progress`` is called
    ``len(rankings) * len(grid)`` times in all (one per grid point of each ranking).

    Returns
    -------
    list of DataFrame
        One curve per ranking, in order.
    """
    if isinstance(rankings, (str, Ranking, GenericRanking, FoldRankings)) or not len(rankings):
        raise InvalidParameterError("rankings must be a non-empty list of rankings")
    check_progress(progress)
    carried = [r for r in rankings if isinstance(r, FoldRankings)]
    if carried and isinstance(cv, (Integral, np.integer)):
        cv = list(carried[0].splits)  # fold rankings bring their folds
    setup = _Setup(X, y, estimator, scoring, cv, grid, random_state)
    per_fold, protocols, labels = [], [], []
    for r in rankings:
        est = resolve_ranker(r) if not isinstance(r, FoldRankings) else None
        if est is not None:  # refit on every training fold
            r = fold_rankings(est, X, y, cv=setup.splits, random_state=setup.seed)
        if isinstance(r, FoldRankings):
            if not r.same_folds(setup.splits):
                raise InvalidParameterError(
                    f"fold rankings {r.method!r} were fitted on other folds than cv gives"
                )
            per_fold.append(r.orders(setup.names))
            protocols.append("nested")
        else:
            order = feature_order(r, setup.names)
            per_fold.append([order] * len(setup.splits))
            protocols.append("fixed")
        labels.append(getattr(r, "method", None))
    if all(p == "fixed" for p in protocols):  # one order on every fold: shared subsets
        ffa, rfa = _evaluate(setup, [orders[0] for orders in per_fold], n_jobs, progress)
    else:
        ffa, rfa = _evaluate_nested(setup, per_fold, n_jobs, progress)
    return [
        _frame(setup, ffa[r], rfa[r], kind="ranking", ranking=labels[r], protocol=protocols[r])
        for r in range(len(rankings))
    ]


def ffa_rfa(
    ranking: Any,
    X,
    y,
    *,
    estimator=None,
    scoring=None,
    cv=10,
    grid="every",
    n_jobs: int | None = None,
    random_state=None,
    progress: Callable[[int], None] | None = None,
) -> pd.DataFrame:
    """Forward and reverse feature addition curves of one ranking.

    FFA(i) is the mean cross-validated score of ``estimator`` trained on the ``i``
    best-ranked features, RFA(i) on the ``i`` worst-ranked ones (FFA(n) = RFA(n)).

    Parameters
    ----------
    ranking : ranker name or estimator, FoldRankings, Ranking, GenericRanking or sequence
        A registry name or an unfitted ranker is **refit on the training rows of every
        fold** and each fold's test rows score that fold's ranking (nested: the honest
        estimate). :class:`~aggregation.evaluation.folds.FoldRankings` are rankings already
        fitted per fold (e.g. an aggregate computed fold by fold); their folds are used.
        A fixed ranking (a Ranking, a GenericRanking, whose ties are broken by natural name
        order, or feature names / column indices best first, listing every column once)
        is scored as it is on every fold: the error-curve paper's protocol, which is
        optimistic when the ranking was fitted on these samples (the test folds then
        helped choose the features; on pure noise such a ranking beats random).
    X : array-like or DataFrame of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Class labels (encoded 0..C-1 in sorted order) for a classifier, else numbers.
    estimator : estimator, optional
        Default :func:`default_estimator` (the paper's quadratic-kernel SVM, C = 0.1, on
        [0, 1]-normalised data). Cloned per fold; a ``random_state`` left None is seeded.
    scoring : str or callable, optional
        A scikit-learn scorer (higher is better). Default: the estimator's ``score``,
        accuracy for a classifier, R² for a regressor.
    cv : int, splitter or list of (train, test) pairs, default=10
        Number of shuffled folds (stratified for a classifier; the paper's 10-fold CV) seeded
        by ``random_state``, a splitter (split once; give it a fixed seed), or the folds.
        Fold rankings bring their own folds.
    grid : "every", "geometric", int step or sequence of int, default="every"
        Subset sizes, see :func:`curve_grid`.
    n_jobs : int, optional
        Feature subsets are scored in parallel with joblib (any joblib backend, e.g. dask).
        The result does not depend on it.
    random_state : int, RandomState, Generator or None
        Seeds the folds. Curves to be compared (:func:`eca`) must share it: the same seed
        gives the same folds in every call, so their points pair up.
    progress : callable, optional
        Called with the number of grid points just finished (both their subsets scored,
        in grid order): they add up to ``len(curve_grid(grid, n_features))``, e.g. for a
        ``tqdm`` bar's ``update``.

    Returns
    -------
    DataFrame
        Columns ``i``, ``ffa``, ``rfa`` (mean over folds), ``ffa_std``, ``rfa_std`` (over
        folds); ``attrs`` holds ``scoring``, ``n_features``, ``n_folds``, ``kind``,
        ``ranking`` (the ranking's method) and ``protocol`` (``"nested"`` or ``"fixed"``).

    References
    ----------
    Slavkov, Petković, Kocev, Džeroski. Quantitative score for assessing the quality of
    feature rankings. Informatica 42 (2018), §3.1.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True, as_frame=True)
    >>> order = ["petal width (cm)", "petal length (cm)", "sepal length (cm)", "sepal width (cm)"]
    >>> curve = ffa_rfa(order, X, y, cv=3, random_state=0)
    >>> bool(curve.loc[0, "ffa"] > curve.loc[0, "rfa"])
    True
    """
    return ffa_rfa_many(
        [ranking],
        X,
        y,
        estimator=estimator,
        scoring=scoring,
        cv=cv,
        grid=grid,
        n_jobs=n_jobs,
        random_state=random_state,
        progress=progress,
    )[0]


def expected_curve(
    X,
    y,
    *,
    n_random: int = 100,
    pool: bool = True,
    quantiles: tuple[float, float] = (0.05, 0.95),
    estimator=None,
    scoring=None,
    cv=10,
    grid="every",
    n_jobs: int | None = None,
    random_state=None,
    progress: Callable[[int], None] | None = None,
) -> pd.DataFrame:
    """The expected FFA/RFA curve of a uniformly random ranking, by sampling (§3.3, Eq. 5).

    ``n_random`` seeded random permutations are scored like :func:`ffa_rfa` (same folds for
    the same ``random_state``). The top-i and the bottom-i sets of a random permutation are
    both uniform random i-subsets, so FFA and RFA share one expectation (the paper's point);
    with ``pool=True`` both columns are the mean of all ``2 * n_random`` sampled curves.
    The same as :func:`pool_random_curves` of :func:`random_curves`, which computes the
    samples in parts (on several machines, or over several sessions).

    Parameters
    ----------
    X, y, estimator, scoring, cv, grid, n_jobs, random_state
        As :func:`ffa_rfa`; ``random_state`` also seeds the permutations.
    n_random : int, default=100
        Random rankings (the paper uses 100).
    pool : bool, default=True
        False keeps the ``ffa`` and ``rfa`` columns as separate means of the FFA and the RFA
        samples (they differ only by sampling noise).
    quantiles : (float, float), default=(0.05, 0.95)
        Levels of the ``lower`` and ``upper`` columns.
    progress : callable, optional
        Called with the number of grid points of the random rankings just finished:
        ``n_random * len(curve_grid(grid, n_features))`` in all.

    Returns
    -------
    DataFrame
        Columns ``i``, ``ffa``, ``rfa``, then over all sampled curves (FFA and RFA pooled)
        ``mean``, ``std``, ``lower``, ``upper``; ``attrs`` as :func:`ffa_rfa` with
        ``kind="expected"``, ``n_random`` and ``quantiles``.
    """
    lo, hi = _check_quantiles(quantiles)
    samples = random_curves(
        X,
        y,
        n_random=n_random,
        estimator=estimator,
        scoring=scoring,
        cv=cv,
        grid=grid,
        n_jobs=n_jobs,
        random_state=random_state,
        progress=progress,
    )
    return pool_random_curves(samples, pool=pool, quantiles=(lo, hi))


def random_curves(
    X,
    y,
    *,
    n_random: int = 100,
    start: int = 0,
    estimator=None,
    scoring=None,
    cv=10,
    grid="every",
    n_jobs: int | None = None,
    random_state=None,
    progress: Callable[[int], None] | None = None,
) -> pd.DataFrame:
    """The FFA/RFA curves of the random rankings :func:`expected_curve` averages, or a part.

    The permutations are drawn one after another from one stream seeded by
    ``random_state``; this call scores numbers ``start .. start + n_random - 1`` of them.
    So the 100 rankings of the paper can be computed as parts (``start=0, 10, ...`` with
    ``n_random=10``) anywhere and at any time, and :func:`pool_random_curves` of all the
    parts is :func:`expected_curve`, to the last bit. With the paper's model and accuracy
    each ranking's kernels are grown from one grid point to the next (one pass over its
    features per fold and side); the set of every feature is scored once, directly.

    Parameters
    ----------
    X, y, estimator, scoring, cv, grid, n_jobs, progress
        As :func:`expected_curve`.
    n_random : int, default=100
        Random rankings scored by this call.
    start : int, default=0
        Position of the first of them in the stream.
    random_state : int, SeedSequence, Generator, RandomState or None
        Seeds the folds and the permutations; parts of one expected curve need the same
        int (None draws a fresh stream each call).

    Returns
    -------
    DataFrame
        Long: columns ``ranking`` (position in the stream), ``i``, ``ffa``, ``rfa`` (each the
        mean over the folds). ``attrs`` as :func:`ffa_rfa` with ``kind="random"``, ``start``,
        ``n_random`` and ``random_state`` (the int, else None).
    """
    for name, value, least in (("n_random", n_random, 1), ("start", start, 0)):
        if isinstance(value, bool) or not isinstance(value, (Integral, np.integer)):
            raise InvalidParameterError(f"{name} must be an integer >= {least}; got {value!r}")
        if value < least:
            raise InvalidParameterError(f"{name} must be an integer >= {least}; got {value}")
    check_progress(progress)
    setup = _Setup(X, y, estimator, scoring, cv, grid, random_state)
    rng = np.random.default_rng(setup.perm_seed)
    n = setup.X.shape[1]
    orders = [rng.permutation(n) for _ in range(start + n_random)][start:]
    # random rankings hardly share a subset but the last: their kernels are grown in steps
    evaluate = _evaluate_chains if setup.default_accuracy else _evaluate
    ffa, rfa = evaluate(setup, orders, n_jobs, progress)
    size = len(setup.grid)
    frame = pd.DataFrame(
        {
            "ranking": np.repeat(np.arange(start, start + n_random), size),
            "i": np.tile(setup.grid, n_random),
            "ffa": ffa.mean(axis=-1).ravel(),
            "rfa": rfa.mean(axis=-1).ravel(),
        }
    )
    seed = int(random_state) if isinstance(random_state, (Integral, np.integer)) else None
    frame.attrs.update(
        setup.attrs(
            kind="random", ranking="random", start=start, n_random=n_random, random_state=seed
        )
    )
    return frame


def pool_random_curves(
    samples: pd.DataFrame | Sequence[pd.DataFrame],
    *,
    pool: bool = True,
    quantiles: tuple[float, float] = (0.05, 0.95),
) -> pd.DataFrame:
    """The expected curve (Eq. 5) from :func:`random_curves`, in one frame or in parts.

    Parameters
    ----------
    samples : DataFrame or sequence of DataFrame
        :func:`random_curves` outputs of one data set, grid, folds and seed, in any order;
        each ranking once.
    pool, quantiles
        As :func:`expected_curve`.

    Returns
    -------
    DataFrame
        :func:`expected_curve`'s frame; equal to it, bit for bit, when the parts cover the
        rankings ``0 .. n_random - 1`` of the same ``random_state``.
    """
    lo, hi = _check_quantiles(quantiles)
    parts = [samples] if isinstance(samples, pd.DataFrame) else list(samples)
    if not parts or not all(isinstance(p, pd.DataFrame) for p in parts):
        raise InvalidParameterError("samples must be random_curves frames (one or a list)")
    first = parts[0].attrs
    keys = ("scoring", "n_features", "n_folds", "random_state")
    for part in parts:
        if part.attrs.get("kind") != "random" or not {"ranking", "i", "ffa", "rfa"} <= set(
            part.columns
        ):
            raise InvalidInputError("samples must come from random_curves")
        differ = [k for k in keys if part.attrs.get(k) != first.get(k)]
        if differ:
            raise InvalidInputError(f"the parts differ in {', '.join(differ)}")
    if len(parts) > 1 and first.get("random_state") is None:
        raise InvalidInputError("parts of one expected curve need the same int random_state")
    table = pd.concat(parts, ignore_index=True)
    counts = table.groupby("ranking")["i"].count()
    if table.duplicated(["ranking", "i"]).any() or counts.nunique() != 1:
        raise InvalidInputError("every ranking must appear once, at the same grid points")
    wide = {c: table.pivot(index="ranking", columns="i", values=c) for c in ("ffa", "rfa")}
    grid = wide["ffa"].columns.to_numpy()
    ffa, rfa = wide["ffa"].to_numpy(), wide["rfa"].to_numpy()  # (n_random, len(grid))
    both = np.vstack([ffa, rfa])
    mean = both.mean(axis=0)
    frame = pd.DataFrame(
        {
            "i": grid,
            "ffa": mean if pool else ffa.mean(axis=0),
            "rfa": mean if pool else rfa.mean(axis=0),
            "mean": mean,
            "std": both.std(axis=0, ddof=1) if len(both) > 1 else np.zeros(len(mean)),
            "lower": np.quantile(both, lo, axis=0),
            "upper": np.quantile(both, hi, axis=0),
        }
    )
    attrs = {k: first[k] for k in ("scoring", "n_features", "n_folds") if k in first}
    frame.attrs.update(
        attrs
        | {"kind": "expected", "ranking": "random", "n_random": len(ffa)}
        | {"quantiles": (lo, hi)}
    )
    return frame


def _check_quantiles(quantiles) -> tuple[float, float]:
    try:
        lo, hi = (float(q) for q in quantiles)
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"quantiles must be two numbers in [0, 1]; got {quantiles!r}"
        ) from None
    if not 0.0 <= lo <= hi <= 1.0:
        raise InvalidParameterError(
            f"quantiles must satisfy 0 <= lower <= upper <= 1; got {quantiles!r}"
        )
    return lo, hi


# ------------------------------------------------------------------ scores
def _check_curve(curve: Any, what: str) -> pd.DataFrame:
    if not isinstance(curve, pd.DataFrame):
        raise InvalidParameterError(
            f"{what} must be a curve DataFrame (from ffa_rfa or expected_curve); "
            f"got {type(curve).__name__}"
        )
    missing = [c for c in ("i", "ffa", "rfa") if c not in curve.columns]
    if missing:
        raise InvalidInputError(f"{what} lacks the column(s) {missing}; it needs i, ffa and rfa")
    if len(curve) == 0:
        raise InvalidInputError(f"{what} is empty")
    values = curve[["i", "ffa", "rfa"]].to_numpy(dtype=float)
    if not np.isfinite(values).all():
        raise InvalidInputError(f"{what} has NaN or infinite values")
    i = values[:, 0]
    if (i < 1).any() or (i != np.round(i)).any() or (np.diff(i) <= 0).any():
        raise InvalidInputError(f"{what}'s column i must hold increasing subset sizes >= 1")
    return curve


def _check_pair(a: pd.DataFrame, b: pd.DataFrame) -> None:
    if not np.array_equal(a["i"].to_numpy(), b["i"].to_numpy()):
        raise InvalidInputError(
            "the curves were evaluated on different grids: "
            f"{a['i'].tolist()[:8]}... vs {b['i'].tolist()[:8]}...; use the same grid"
        )
    for key in ("n_features", "scoring", "n_folds"):
        va, vb = a.attrs.get(key), b.attrs.get(key)
        if va is not None and vb is not None and va != vb:
            raise InvalidInputError(f"the curves differ in {key}: {va!r} vs {vb!r}")


def _weighted_mean(delta: np.ndarray, size: np.ndarray, weighting: str) -> float:
    """Eq. 3: sum w_i delta_i / sum w_i, with the weighting function w_i of §3.2."""
    w = {
        "uniform": np.ones_like(delta),
        "inverse_size": 1.0 / size,
        "magnitude": np.abs(delta),
        "inverse_size_magnitude": np.abs(delta) / size,
    }[weighting]
    total = w.sum()
    return float(w @ delta / total) if total > 0 else 0.0  # all deltas 0: curves agree


def _check_weighting(weighting: Any) -> str:
    if weighting not in WEIGHTINGS:
        raise InvalidParameterError(
            f"unknown weighting {weighting!r}; choose one of {', '.join(map(repr, WEIGHTINGS))}"
        )
    return weighting


def curve_delta(
    curve_a: pd.DataFrame, curve_b: pd.DataFrame, *, curve: str = "ffa", weighting="uniform"
) -> float:
    """FFA_delta (Eq. 1) or RFA_delta (Eq. 2): the weighted mean of ``a - b`` over the grid.

    With ``delta_i = curve_a(i) - curve_b(i)`` and ``|S_i| = i``, the weights are ``uniform``
    w_i = 1, ``inverse_size`` 1/i, ``magnitude`` ``|delta_i|`` and ``inverse_size_magnitude``
    ``|delta_i|/i``; the mean runs over the grid points the curves share (every i, or the
    subsampled sizes). A better ``a`` gives FFA_delta > 0 and RFA_delta < 0.

    Examples
    --------
    >>> a = pd.DataFrame({"i": [1, 2], "ffa": [0.9, 0.9], "rfa": [0.5, 0.9]})
    >>> b = pd.DataFrame({"i": [1, 2], "ffa": [0.6, 0.9], "rfa": [0.6, 0.9]})
    >>> round(curve_delta(a, b, curve="ffa", weighting="inverse_size"), 6)
    0.2
    """
    if curve not in ("ffa", "rfa"):
        raise InvalidParameterError(f"curve must be 'ffa' or 'rfa'; got {curve!r}")
    weighting = _check_weighting(weighting)
    a, b = _check_curve(curve_a, "curve_a"), _check_curve(curve_b, "curve_b")
    _check_pair(a, b)
    delta = a[curve].to_numpy(dtype=float) - b[curve].to_numpy(dtype=float)
    return _weighted_mean(delta, a["i"].to_numpy(dtype=float), weighting)


def eca(
    a: Any,
    b: Any = "random",
    *,
    weighting: str = "uniform",
    X=None,
    y=None,
    n_random: int = 100,
    progress: Callable[[int], None] | None = None,
    **curve_params,
) -> float:
    """Error curve average difference ECA = (FFA_delta - RFA_delta) / 2 (Eq. 4); > 0: a is better.

    Both the FFA and the RFA pair enter: ``FFA_delta = agg_i w_i (FFA_a(i) - FFA_b(i))``
    and ``RFA_delta = agg_i w_i (RFA_a(i) - RFA_b(i))`` (:func:`curve_delta`), each with its
    own delta_i in the magnitude weights. FFA_delta is positive and RFA_delta negative when
    ``a`` is better, hence the minus sign.

    Parameters
    ----------
    a : curve DataFrame or ranking
        A curve from :func:`ffa_rfa`, or a ranking (then ``X`` and ``y`` are required).
    b : curve DataFrame, ranking or "random", default="random"
        ``"random"`` compares with a uniformly random ranking. For the position-only
        weightings ("uniform", "inverse_size") this needs no expected curve (§3.3): since
        the expected FFA and RFA coincide they cancel, and
        ``ECA = sum_i w_i (FFA_a(i) - RFA_a(i)) / (2 sum_i w_i)`` (the paper states it for
        w_i = 1; the cancellation holds for any weights free of delta). The magnitude
        weightings need the expected curve: pass ``expected_curve(...)`` as ``b``, or give
        rankings and data, and it is sampled with ``n_random`` random rankings.
    weighting : {"uniform", "inverse_size", "magnitude", "inverse_size_magnitude"}
    X, y : data, optional
        Needed when ``a`` or ``b`` is a ranking.
    n_random : int, default=100
        Random rankings of the expected curve when one must be sampled.
    progress : callable, optional
        Passed to every curve computed here (see :func:`ffa_rfa`): the calls add up to
        ``len(grid)`` for each of ``a`` and ``b`` given as a ranking, plus
        ``n_random * len(grid)`` when the expected curve is sampled; none when only curves
        are given.
    **curve_params
        Passed to :func:`ffa_rfa` / :func:`expected_curve` (estimator, scoring, cv, grid,
        n_jobs, random_state). One seed is used for every curve, so all share the folds.

    Returns
    -------
    float

    Examples
    --------
    >>> a = pd.DataFrame({"i": [1, 2, 3], "ffa": [0.9, 0.9, 0.8], "rfa": [0.5, 0.6, 0.8]})
    >>> round(eca(a, "random"), 6)  # ((0.4 + 0.3 + 0) / 3) / 2
    0.116667
    """
    weighting = _check_weighting(weighting)
    check_progress(progress)
    a_is_curve = isinstance(a, pd.DataFrame)
    b_is_random = isinstance(b, str) and b == "random"
    if isinstance(b, str) and not b_is_random:
        raise InvalidParameterError(f"b must be a curve, a ranking or 'random'; got {b!r}")
    needs_data = not a_is_curve or not (b_is_random or isinstance(b, pd.DataFrame))
    needs_data = needs_data or (b_is_random and weighting not in _POSITION_ONLY)
    if needs_data:
        if a_is_curve and b_is_random:
            raise InvalidParameterError(
                f"weighting={weighting!r} needs the expected curve: pass "
                "b=expected_curve(X, y, ...) (same random_state and grid as the curve)"
            )
        if X is None or y is None:
            raise InvalidParameterError("X and y are required when a ranking is given")
        # one seed sequence for every curve of this comparison: the folds must pair up
        curve_params["random_state"] = check_seed(curve_params.get("random_state"))
        if not a_is_curve:
            a = ffa_rfa(a, X, y, progress=progress, **curve_params)
        if b_is_random and weighting not in _POSITION_ONLY:
            b = expected_curve(X, y, n_random=n_random, progress=progress, **curve_params)
            b_is_random = False
        elif not b_is_random and not isinstance(b, pd.DataFrame):
            b = ffa_rfa(b, X, y, progress=progress, **curve_params)
    elif curve_params:
        raise InvalidParameterError(
            f"{sorted(curve_params)} only apply when curves must be computed from rankings"
        )
    a = _check_curve(a, "a")
    if b_is_random:  # the §3.3 shortcut
        delta = a["ffa"].to_numpy(dtype=float) - a["rfa"].to_numpy(dtype=float)
        return _weighted_mean(delta, a["i"].to_numpy(dtype=float), weighting) / 2.0
    ffa_delta = curve_delta(a, b, curve="ffa", weighting=weighting)
    rfa_delta = curve_delta(a, b, curve="rfa", weighting=weighting)
    return (ffa_delta - rfa_delta) / 2.0
