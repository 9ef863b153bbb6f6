"""Stacking for rankings: the members that rank best on inner folds, combined by mean rank.

The best single ranker changes with the structure of the data (``docs/guide/which-ranker.md``):
a fixed combination of every ranker averages the good members with those that fail on this
structure. :class:`StackedRanker` chooses instead, on the data it is given: it splits them
into inner folds, refits every member of a pool on each inner training part, scores the
member's ranking on the inner test part by the task's held-out score, and combines the
``n_members`` best members, refit on all the data, by mean rank. It is the ensemble of the
leaderboards (``docs/guide/leaderboards.md``), where it is itself evaluated nested: fitted
on each outer training fold, so the inner folds only ever see training rows.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import pandas as pd

from moweights.ensemble.members import HIGHER_IS_BETTER, POOLS, choose_members
from moweights.ensemble.weights import learn_weights
from rankers.base import TASKS, BaseRanker
from rankers.exceptions import (
    FewSamplesWarning,
    InvalidInputError,
    InvalidParameterError,
    TargetKindWarning,
)
from rankers.utils.param_validation import Interval, StrOptions

__all__ = ["StackedRanker"]


class StackedRanker(BaseRanker):
    """The pool's best rankers on inner folds, combined by mean rank (stacking for rankings).

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.
    task : {"classification", "regression", "unsupervised"}, default="classification"
        What the inner folds score. ``"classification"``: balanced accuracy of a 5-nearest-
        neighbour classifier on the top k features, averaged over k = 1..64
        (:func:`aggregation.evaluation.class_curve`; needs class labels).
        ``"regression"``: the out-of-sample R² of a 5-nearest-neighbour regression of the
        numeric target from the top k features, averaged over k = 1..64
        (:func:`aggregation.evaluation.regression_curve`); the members fit the target as a
        quantity, those for both kinds of target too (given ``task="regression"``, so
        integer targets such as counts are not read as classes); with
        ``"classification"`` they are given ``task="classification"``.
        ``"unsupervised"``: mean squared error of a 1NN regression of every feature from
        the top 16 (:func:`aggregation.evaluation.topk_curve`; y is ignored).
    pool : sequence of str or None, default=None
        Registry names of the candidate members; None: :data:`POOLS` of the task.
    n_members : int or "auto", default="auto"
        How many of the best-scoring members are combined; ``"auto"``: those within
        ``margin`` of the best inner score (:func:`choose_members`), at most 5 (the
        leaderboards' ``stacked_auto``: its places are in ``leaderboard/supervised.csv`` and
        ``leaderboard/unsupervised.csv``; on the atlas it finds the XOR pairs, where a fixed 3
        averages relieff with members at chance, ``benchmarks/results/atlas_v3_200/atlas.csv``).
    margin : float, default=0.02
        For ``n_members="auto"``: how far from the best inner score a member may be
        (balanced accuracy points for classification, R² points for regression; a
        relative share of the error for the unsupervised task).
    cv : int, default=3
        Inner folds (stratified by the classes for classification), shuffled with
        ``random_state``.
    n_clusters : int or None, default=None
        Passed to members that take it (MCFS, NDFS); None leaves their default.
    random_state : int, RandomState or None, default=None
        Seeds the inner folds and every member that has a ``random_state`` (the same
        value is passed to each), and NSGA-II with ``combine="nsga2"``.
    combine : {"mean_rank", "nsga2"}, default="mean_rank"
        How the members are combined. ``"mean_rank"``: the ``n_members`` chosen by inner
        score, by mean rank. ``"nsga2"``: a weight per pool member learned by NSGA-II on
        the same inner folds (``moweights.ensemble.weights.learn_weights``: the inner
        score of the weighted mean rank against the number of members; ``n_members`` and
        ``margin`` are not used), then the members with a weight, refit on all the data,
        by weighted mean rank.
    population, generations : int, default=20, 10
        NSGA-II's population size and generations for ``combine="nsga2"`` (each solution
        costs one inner score; repeated top-k subsets are scored once).

    Attributes
    ----------
    scores_ : ndarray of shape (n_features_in_,)
        Minus the mean rank of each feature over the chosen members (higher = better).
    members_ : list of str
        The chosen members, best inner score first.
    inner_scores_ : Series
        Every pool member's mean inner score (higher is better for classification and
        regression, lower for the unsupervised error).
    member_weights_ : Series
        Every pool member fitted on the inner folds, with its weight in the combination
        (1 for each chosen member of ``"mean_rank"``, the learned weight for ``"nsga2"``;
        0: left out).
    weights_front_ : DataFrame
        ``combine="nsga2"`` only: NSGA-II's final non-dominated solutions, best inner score
        first (``score``, ``n_members``, then one weight column per member).
    failed_members_ : dict of str to str
        Pool members that raised on an inner training part (say, a class with one sample
        there), with the reason: left out of the choice, with a
        :class:`~rankers.exceptions.FewSamplesWarning`.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> X, y = load_wine(return_X_y=True)
    >>> ranker = StackedRanker(pool=["anova_f", "chi2", "relieff", "t_test"], n_members=3,
    ...                        random_state=0)
    >>> len(ranker.fit(X, y).members_)
    3

    Or by name, as a config selects it (``[[rankers]] name = "stacked"``):

    >>> import rankers
    >>> type(rankers.get("stacked")).__name__
    'StackedRanker'
    """

    #: what ``scores_`` holds (the column name of a run's features.csv)
    score_name = "minus_mean_rank"

    target_kind = "classification"
    requires_y = True
    accepts_sparse = False
    deterministic = False
    scale_invariant = False
    reference: ClassVar[str] = "moweights leaderboards (docs/guide/leaderboards.md)"
    _contract_test_params: ClassVar[dict] = {"pool": ["anova_f", "chi2", "t_test"], "cv": 2}
    _parameter_constraints: ClassVar[dict] = {
        **BaseRanker._parameter_constraints,
        "task": [StrOptions({"classification", "regression", "unsupervised"})],
        "pool": [None, list, tuple],
        "n_members": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "margin": [Interval(Real, 0, None, closed="left")],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "n_clusters": [None, Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "combine": [StrOptions({"mean_rank", "nsga2"})],
        "population": [Interval(Integral, 2, None, closed="left")],
        "generations": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        k=None,
        task: str = "classification",
        pool=None,
        n_members: int | str = "auto",
        margin: float = 0.02,
        cv: int = 3,
        n_clusters: int | None = None,
        random_state=None,
        combine: str = "mean_rank",
        population: int = 20,
        generations: int = 10,
    ):
        self.k = k
        self.task = task
        self.pool = pool
        self.n_members = n_members
        self.margin = margin
        self.cv = cv
        self.n_clusters = n_clusters
        self.random_state = random_state
        self.combine = combine
        self.population = population
        self.generations = generations

    def _requires_y(self) -> bool:
        return self.task != "unsupervised"

    def _target_kind(self) -> str:
        return self.task if self.task in POOLS else "classification"

    def _feature_scale_invariant(self) -> bool:
        # the inner scores standardise each feature with the training rows (kNN / 1NN), so
        # the choice and the mean rank move with a feature's units only through the members
        import rankers

        try:
            members = self._members()
        except InvalidParameterError:  # tags of an unfit, misconfigured instance: no claim
            return False
        return all(rankers.ranker_tags(est).feature_scale_invariant for _, est in members)

    def _members(self) -> list:
        import rankers

        names = list(POOLS[self.task] if self.pool is None else self.pool)
        if len(set(names)) != len(names) or not names:
            raise InvalidParameterError(f"pool must name distinct rankers; got {names}")
        if self.n_members != "auto" and self.n_members > len(names):
            raise InvalidParameterError(
                f"n_members={self.n_members} but the pool has {len(names)} rankers"
            )
        out = []
        for name in names:
            est = rankers.get(name)
            params = est.get_params()
            if "random_state" in params:
                est.set_params(random_state=self.random_state)
            if "n_clusters" in params and self.n_clusters is not None:
                est.set_params(n_clusters=int(self.n_clusters))
            if (
                "task" in params
                and self.task in TASKS
                and rankers.ranker_tags(est).target_kind == "both"
            ):  # a member for both kinds of target fits the ensemble's own task
                est.set_params(task=self.task)
            out.append((name, est))
        return out

    def _check_inner_folds(self, X, y) -> None:
        """Name the data's problem before scikit-learn's splitter meets it."""
        n = X.shape[0]
        if n < self.cv:
            raise InvalidInputError(
                f"the ensemble chooses its members on cv={self.cv} inner folds and needs at "
                f"least {self.cv} samples (each fold holds one out); got {n}: lower cv or rank "
                "with a single ranker"
            )
        if self.task == "classification":
            counts = np.unique(np.asarray(y), return_counts=True)[1]
            if counts.max() < self.cv:
                raise InvalidInputError(
                    f"the ensemble's inner folds are stratified by class and cv={self.cv} needs "
                    f"a class of at least {self.cv} samples; the largest has {counts.max()}: "
                    "lower cv or rank with a single ranker"
                )

    @staticmethod
    def _warn_members_read_classes(members, y) -> None:
        """A numeric target whose values repeat (integers such as counts or scores) is read
        as class labels by the members for both kinds of target that cannot be told the
        task (no ``task`` parameter: a third party's): say so, and who."""
        import rankers
        from rankers.validation import target_task

        if target_task(y) != "classification":
            return
        both = [n for n, est in members if rankers.ranker_tags(est).target_kind == "both"]
        if both:
            warnings.warn(
                f"y holds {np.unique(y).size} distinct values, each repeated like class "
                f"labels: {', '.join(both)} (for both kinds of target) fit it as classes on "
                "the inner folds, while the regression ensemble scores them by R²; the "
                "rankers for a quantity alone (rrelieff) fit it as a number",
                TargetKindWarning,
                stacklevel=4,
            )

    def _score(self, X, y, context):
        from sklearn.base import clone
        from sklearn.model_selection import KFold, StratifiedKFold
        from sklearn.utils import check_random_state

        import rankers
        from aggregation import Ranking, mean_rank, weighted_mean_rank
        from aggregation.evaluation import class_curve, regression_curve, topk_curve
        from aggregation.evaluation.folds import FoldRankings
        from rankers.validation import default_feature_names

        members = self._members()
        names = default_feature_names(X.shape[1])
        # the same int seeds the folds and the members (as the leaderboards' seed 0 does)
        self._check_inner_folds(X, y)
        if self.task == "regression":
            self._warn_members_read_classes(members, y)
        if self.task == "classification":
            splitter = StratifiedKFold(self.cv, shuffle=True, random_state=self.random_state)
        else:
            splitter = KFold(self.cv, shuffle=True, random_state=self.random_state)
        splits = list(splitter.split(X, y))
        # 5 neighbours as on the leaderboards; fewer only where an inner training part is
        # smaller than that (a data set of a handful of samples)
        n_neighbors = min(5, min(len(train) for train, _ in splits))
        memo: dict = {}  # members that agree on a top-k subset score it once per fold
        ks = list(range(1, min(64, X.shape[1]) + 1))

        def inner_score(folds: list) -> float:
            """The task's held-out score of one ranking per inner fold, averaged."""
            rankings = FoldRankings(folds, splits, "inner")
            if self.task == "classification":
                curve = class_curve(
                    rankings, X, y, ks=ks, n_neighbors=n_neighbors, return_folds=True, memo=memo
                )
            elif self.task == "regression":
                curve = regression_curve(
                    rankings, X, y, ks=ks, n_neighbors=n_neighbors, return_folds=True, memo=memo
                )
            else:
                curve = topk_curve(rankings, X, ks=[min(16, X.shape[1])], return_folds=True)
            return float(curve["value"].mean())

        inner, outer, failed, fold_rankings = {}, {}, {}, {}
        for name, est in members:
            supervised = rankers.ranker_tags(est).requires_y
            folds = []
            try:
                with warnings.catch_warnings():
                    # the data's warnings (few samples, a tiny class) came from this fit
                    warnings.simplefilter("ignore", FewSamplesWarning)
                    for train, _ in splits:
                        fitted = clone(est).fit(X[train], y[train] if supervised else None)
                        folds.append(
                            Ranking(names, fitted.scores_, name, order_idx=fitted.ranking_)
                        )
            except InvalidInputError as error:  # e.g. t_test on an inner part with 1 sample
                failed[name] = str(error)  # of a class: not a candidate on these data
                continue
            inner[name] = inner_score(folds)
            fold_rankings[name] = folds
            outer[name] = (est, supervised)
        if failed:
            reasons = "; ".join(f"{n}: {why}" for n, why in failed.items())
            if not inner:
                raise InvalidInputError(
                    f"no member of the pool could be fitted on the inner folds ({reasons})"
                )
            warnings.warn(
                f"left out of the ensemble's choice, failing on its inner folds: {reasons}",
                FewSamplesWarning,
                stacklevel=3,
            )
        self.failed_members_ = failed
        higher = HIGHER_IS_BETTER[self.task]
        self.inner_scores_ = pd.Series(inner, name="inner_score")
        if self.combine == "nsga2":
            weights, self.weights_front_ = learn_weights(
                fold_rankings,
                inner_score,
                higher,
                population=self.population,
                generations=self.generations,
                seed=int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max)),
            )
            weights = weights[weights > 0].sort_values(ascending=False, kind="stable")
            self.members_ = list(weights.index)
        else:
            self.__dict__.pop("weights_front_", None)
            self.members_ = choose_members(inner, higher, self.n_members, self.margin)
            weights = pd.Series(1.0, index=self.members_)
        self.member_weights_ = weights.reindex(list(inner), fill_value=0.0).rename("weight")
        chosen = []
        for name in self.members_:
            est, supervised = outer[name]
            fitted = clone(est).fit(X, y if supervised else None)
            chosen.append(Ranking(names, fitted.scores_, name, order_idx=fitted.ranking_))
        if self.combine == "nsga2":
            combined = weighted_mean_rank(chosen, weights.to_numpy())
        else:
            combined = mean_rank(chosen)
        return -np.asarray(combined.ranks, dtype=float)
