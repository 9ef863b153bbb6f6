"""Random-forest importance: how much a forest relies on each feature to predict the target."""

from __future__ import annotations

from numbers import Integral
from typing import ClassVar

import numpy as np
from joblib import Parallel, delayed
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.inspection import permutation_importance
from sklearn.utils import check_random_state

from rankers.base import TASKS, BaseRanker
from rankers.preprocessing import standardise
from rankers.utils.parallel import on_local_threads, remote_backend
from rankers.utils.param_validation import Interval, RealNotInt, StrOptions
from rankers.validation import check_n_jobs

__all__ = ["RandomForestRanker"]


class RandomForestRanker(BaseRanker):
    """Rank features by the importance a random forest gives them.

    A :class:`~sklearn.ensemble.RandomForestClassifier` (class target) or
    :class:`~sklearn.ensemble.RandomForestRegressor` (continuous target) is fitted on
    the data, chosen from ``y`` (``task_``). The score of a feature is either its mean
    decrease in impurity (``importance="impurity"``, the forest's
    ``feature_importances_``, which sum to 1) or its permutation importance on the
    training data (``importance="permutation"``: mean drop of the forest's accuracy or
    R² when the feature's values are shuffled, which can be negative). The defaults
    (100 trees, ``max_features="log2"``) are the setting of the error-curve benchmark.

    The trees are grown on the z-scores of the features: a tree only sees the order of
    each feature's values, and scikit-learn's trees work in float32 and never split
    values closer than 1e-7, so on raw values a feature measured in small units (say
    1e-8) was never used and values beyond 3.4e38 were refused. The scores therefore do
    not depend on the units of any feature.

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.
    n_estimators : int, default=100
        Number of trees.
    max_features : {"log2", "sqrt"}, int, float in (0, 1] or None, default="log2"
        Features drawn as split candidates at each node (as in scikit-learn).
    max_depth : int or None, default=None
        Maximum depth of a tree; None grows trees fully.
    min_samples_leaf : int, default=1
        Minimum number of samples in a leaf.
    importance : {"impurity", "permutation"}, default="impurity"
        Which importance becomes the score.
    n_repeats : int, default=5
        Shuffles per feature for ``importance="permutation"``.
    n_jobs : int or None, default=None
        Parallel jobs (joblib) for the forest and the permutations. The scores do not
        depend on it.
    random_state : int, RandomState instance or None, default=None
        Seeds the forest and the permutations; an int makes the scores reproducible.
    task : {"auto", "classification", "regression"}, default="auto"
        The kind of target: chosen from ``y`` (``"auto"``: a numeric target whose few
        values each repeat, such as counts or scores, is read as class labels), or the
        kind named (``"regression"`` fits such a target as a quantity).

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        Importance of each feature; constant features get
        ``min(0, lowest informative score)``.
    ranking_ : ndarray of shape (n_features,)
        Feature indices, best first.
    estimator_ : RandomForestClassifier or RandomForestRegressor
        The fitted forest. It was trained on the z-scores of the non-constant features,
        ``rankers.preprocessing.standardise(X[:, ~constant_features_])``, not on ``X``
        itself: pass it data transformed the same way.
    task_ : {"classification", "regression"}
        The task fitted: ``task``, or inferred from ``y`` with ``task="auto"``.

    See Also
    --------
    sklearn.inspection.permutation_importance : the permutation importance used here.

    Notes
    -----
    **Where it works.** On the planted-structure atlas (the structures with a class; 200
    samples, 200 and 2,000 features, 0.5-50 % of them informative, 2 seeds; the mean share of
    the planted features in its top k, against a random ranking's), it recovers shift; it
    recovers part of imbalanced; it fails on xor (within 0.1 of chance). The shares are in
    ``benchmarks/results/atlas_grid/summary.md``; :doc:`/guide/which-ranker` has the tables and
    heat maps.

    References
    ----------
    .. [1] L. Breiman, "Random Forests", Machine Learning 45(1), 5-32, 2001.

    Examples
    --------
    >>> import numpy as np
    >>> from rankers.supervised.forest import RandomForestRanker
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 20)
    >>> X = np.column_stack([y + 0.1 * rng.normal(size=40), rng.normal(size=40)])
    >>> RandomForestRanker(n_estimators=20, random_state=0).fit(X, y).ranking_.tolist()
    [0, 1]
    """

    name = "random_forest"
    target_kind = "both"
    requires_y = True
    accepts_sparse = False
    deterministic = False
    scale_invariant = True
    feature_scale_invariant = True  # trees split each feature at its own thresholds
    reference: ClassVar[str] = "Breiman (2001), Random Forests (impurity or permutation importance)"
    # permutation importance can be negative; the base gives constant features
    # min(0, lowest informative score), which stays at or below every other score
    _constant_score: ClassVar[float] = 0.0

    _parameter_constraints: ClassVar[dict] = {
        **BaseRanker._parameter_constraints,
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "max_features": [
            StrOptions({"log2", "sqrt"}),
            Interval(Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="right"),
            None,
        ],
        "max_depth": [Interval(Integral, 1, None, closed="left"), None],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "importance": [StrOptions({"impurity", "permutation"})],
        "n_repeats": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "task": [StrOptions(set(TASKS))],
    }

    def __init__(
        self,
        k=None,
        n_estimators: int = 100,
        max_features="log2",
        max_depth: int | None = None,
        min_samples_leaf: int = 1,
        importance: str = "impurity",
        n_repeats: int = 5,
        n_jobs: int | None = None,
        random_state=None,
        task: str = "auto",
    ):
        self.k = k
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.importance = importance
        self.n_repeats = n_repeats
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.task = task

    def _score(self, X, y, context):
        # scikit-learn's trees cast X to float32 (overflow beyond 3.4e38, 7 digits) and
        # never split values closer than 1e-7: raw features in small units (1e-8) were
        # never split. A tree depends on each feature only through the order of its
        # values, so it is grown on the z-scores instead.
        X = standardise(X)
        rng = check_random_state(self.random_state)
        n_jobs = check_n_jobs(self.n_jobs)
        Forest = RandomForestClassifier if self.task_ == "classification" else RandomForestRegressor
        # the forest draws one seed per tree up front, so its result does not depend on
        # n_jobs; the permutations below take their seed from the same generator
        forest = Forest(
            n_estimators=self.n_estimators,
            max_features=self.max_features,
            max_depth=self.max_depth,
            min_samples_leaf=self.min_samples_leaf,
            n_jobs=n_jobs,
            random_state=rng.randint(np.iinfo(np.int32).max),
        )
        n_repeats = self.n_repeats if self.importance == "permutation" else None
        if n_jobs > 1 and remote_backend():
            # on a Dask cluster a tree (milliseconds) is too small a task, and so is each
            # tree's importance: the forest grows and is scored inside one task, on
            # n_jobs threads there (rng travels with it, in the state it has here)
            job = delayed(on_local_threads)(_grow_and_score, forest, X, y, n_repeats, rng)
            ((forest, scores),) = Parallel(n_jobs=n_jobs)([job])
        else:
            forest, scores = _grow_and_score(forest, X, y, n_repeats, rng)
        self.estimator_ = forest
        return scores


def _grow_and_score(forest, X: np.ndarray, y: np.ndarray, n_repeats: int | None, rng):
    """Fit ``forest``; its impurity importances, or (``n_repeats``) permutation ones."""
    forest.fit(X, y)
    if n_repeats is None:
        return forest, forest.feature_importances_
    result = permutation_importance(
        forest, X, y, n_repeats=n_repeats, n_jobs=forest.n_jobs, random_state=rng
    )
    return forest, result.importances_mean
