"""Genie3 and random-forest scores: feature relevance from ensembles of clustering trees."""

from __future__ import annotations

import warnings
from abc import ABCMeta, abstractmethod
from contextlib import nullcontext
from itertools import pairwise
from numbers import Integral
from typing import ClassVar

import numpy as np
from joblib import Parallel, delayed, parallel_config
from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor
from sklearn.tree import DecisionTreeRegressor, ExtraTreeRegressor
from sklearn.utils import check_random_state

from rankers.base import BaseRanker
from rankers.exceptions import MoweightsError
from rankers.ties import TIE_RTOL
from rankers.utils.parallel import on_local_threads, remote_backend
from rankers.utils.param_validation import Interval, RealNotInt, StrOptions
from rankers.validation import check_n_jobs

__all__ = ["Genie3Ranker", "RFScoreRanker"]

_MAX_INT = np.iinfo(np.int32).max
# largest (changed predictions x features) block of differences held at once (32 MB)
_BLOCK_ELEMENTS = 1 << 22
# targets have unit variance, so an OOB error below this means the tree predicts its OOB
# rows perfectly and a relative increase (Eq. 2) is undefined: such a tree is left out
_MIN_OOB_ERROR = 1e-12


def _resolve_max_features(max_features, ensemble: str, n: int) -> int:
    """Candidate features per split. The paper's n' = log2 n is rounded up, as is sqrt n
    (scikit-learn rounds both down); ints and fractions follow scikit-learn."""
    if ensemble == "bagging" or max_features is None:
        return n
    if max_features == "log2":
        size = np.ceil(np.log2(n))
    elif max_features == "sqrt":
        size = np.ceil(np.sqrt(n))
    elif isinstance(max_features, Integral):
        size = max_features
    else:
        size = int(max_features * n)
    return int(min(max(1, size), n))


def _inputs_and_targets(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The float32 z-scores the trees split on, and the same values rescaled to unit
    variance in float64 as the targets they predict.

    Dividing by the largest absolute value first keeps the squares of very large or very
    small values finite and non-zero. The targets are a function of the float32 inputs
    alone, so data that differ by a positive affine map of a feature (whose z-scores
    differ in the last float64 bits) give the same float32 values and bit-identical
    trees; otherwise those bits would decide the exact ties between features inducing
    the same partition of a small node, which are frequent. The float32 cast rounds
    away last-bit differences everywhere but near 0, where centred values within 1e-9 of
    the feature's largest are set to 0.
    """
    # one memory layout, so that equal values give equal bits whatever the caller's order
    X = np.ascontiguousarray(X)
    Xs = X / np.abs(X).max(axis=0)
    Z = Xs - Xs.mean(axis=0)
    # a value equal to its feature's mean in exact arithmetic computes as a tiny number of
    # either sign, which float32 keeps: it is 0 (the tie rule of rankers.ties)
    Z[np.abs(Z) <= TIE_RTOL * np.abs(Z).max(axis=0)] = 0.0
    Z32 = (Z / _nonzero(Z.std(axis=0))).astype(np.float32)
    Y = Z32.astype(np.float64)
    Y /= _nonzero(Y.std(axis=0))
    return Z32, Y


def _nonzero(std: np.ndarray) -> np.ndarray:
    return np.where(std > 0, std, 1.0)


def _bootstrap_counts(seed: int, m: int) -> np.ndarray:
    """How often each row is in the bootstrap replicate of the tree seeded with ``seed``:
    the draw scikit-learn's forests make, passed to the tree as sample weights."""
    draw = np.random.RandomState(seed).randint(0, m, m)
    return np.bincount(draw, minlength=m).astype(np.float64)


def _genie3_tree(tree_, n: int) -> np.ndarray:
    """Eq. 1 for one tree: sum over the nodes splitting on each feature of
    h* = |E| impu(E) - |E_left| impu(E_left) - |E_right| impu(E_right)."""
    left, right = tree_.children_left, tree_.children_right
    inner = np.flatnonzero(left >= 0)
    mass = tree_.weighted_n_node_samples * tree_.impurity
    h = mass[inner] - mass[left[inner]] - mass[right[inner]]
    return np.bincount(tree_.feature[inner], weights=h, minlength=n)


def _leaves_with_value(tree_, X, rows, features, values) -> np.ndarray:
    """Leaf reached by each ``X[rows[q]]`` when its feature ``features[q]`` is ``values[q]``.

    All queries descend together, one tree level per step, without copying any row. The
    comparison is scikit-learn's: a float32 value against the float64 threshold.
    """
    feature, threshold = tree_.feature, tree_.threshold
    left, right = tree_.children_left, tree_.children_right
    node = np.zeros(rows.size, dtype=np.intp)
    active = np.flatnonzero(left[node] >= 0)
    while active.size:
        at = node[active]
        f = feature[at]
        x = np.where(f == features[active], values[active], X[rows[active], f])
        node[active] = np.where(x <= threshold[at], left[at], right[at])
        active = active[left[node[active]] >= 0]
    return node


def _rf_tree(tree, Z32, Z, oob, perm_seed, n: int) -> np.ndarray:
    """Eq. 2 for one tree: relative increase of its OOB error when each feature's OOB
    values are permuted (NaN for every feature when the tree's OOB error is undefined).

    The error is the mean over features of the variance of the residuals. Only OOB rows
    whose path tests feature j can move when j is permuted, so only those (j, row) pairs
    are sent down the tree again, and the error of each permuted set is updated from the
    sums of the unpermuted residuals instead of being recomputed.
    """
    if oob.size < 2:
        return np.full(n, np.nan)
    t = tree.tree_
    X, V = Z32[oob], t.value[:, :, 0]
    leaf = tree.apply(X)
    R = Z[oob] - V[leaf]
    e0 = R.var(axis=0).mean()
    if e0 <= _MIN_OOB_ERROR:
        return np.full(n, np.nan)
    out = np.zeros(n)
    N, K = R.shape
    paths = tree.decision_path(X)
    path_rows = np.repeat(np.arange(N), np.diff(paths.indptr))
    f = t.feature[paths.indices]
    tested = f >= 0
    j, r = np.divmod(np.unique(f[tested].astype(np.int64) * N + path_rows[tested]), N)
    # one permutation of the OOB rows per tree, used for every feature: each feature's
    # scramble is still uniform, and the score then does not depend on column order
    perm = np.random.default_rng(perm_seed).permutation(N)
    new = _leaves_with_value(t, X, r, j, X[perm[r], j])
    moved = new != leaf[r]
    j, r, new = j[moved], r[moved], new[moved]
    if j.size == 0:
        return out
    # e = (sum_k S2_k - sum_k S1_k^2 / N) / (N K) with S1, S2 the residual sums and sums of
    # squares; the unpermuted error goes through the same formula so rounding cancels
    S1 = R.sum(axis=0)
    S2, S1S1 = np.einsum("ik,ik->", R, R), S1 @ S1
    base = (S2 - S1S1 / N) / (N * K)
    feats, starts = np.unique(j, return_index=True)
    # whole features per block, about _BLOCK_ELEMENTS differences each
    block_of = starts // max(1, _BLOCK_ELEMENTS // K)
    cuts = np.r_[0, np.flatnonzero(np.diff(block_of)) + 1, feats.size]
    for a, b in pairwise(cuts):
        lo, hi = starts[a], starts[b] if b < feats.size else j.size
        rr = r[lo:hi]
        D = V[leaf[rr]] - V[new[lo:hi]]  # permuted residual = residual + D
        seg = starts[a:b] - lo
        dS2 = np.add.reduceat(np.einsum("pk,pk->p", 2.0 * R[rr] + D, D), seg)
        dS1 = np.add.reduceat(D, seg, axis=0)
        sq = S1S1 + 2.0 * (dS1 @ S1) + np.einsum("jk,jk->j", dS1, dS1)
        out[feats[a:b]] = ((S2 + dS2 - sq / N) / (N * K) - base) / e0
    return out


class _TreeEnsembleRanker(BaseRanker, metaclass=ABCMeta):
    """Shared fitting of the ensembles of predictive clustering trees (see subclasses)."""

    target_kind = "unsupervised"
    accepts_sparse = False
    deterministic = False
    scale_invariant = True  # the trees split z-scores
    feature_scale_invariant = True
    progress_bar = False  # verbose passes on to joblib's log lines
    _contract_test_params: ClassVar[dict] = {"n_estimators": 10}

    _parameter_constraints: ClassVar[dict] = {
        **BaseRanker._parameter_constraints,
        "ensemble": [StrOptions({"extra_trees", "random_forest", "bagging"})],
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "max_features": [
            StrOptions({"log2", "sqrt"}),
            Interval(Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="right"),
            None,
        ],
        "max_depth": [Interval(Integral, 1, None, closed="left"), None],
        "min_samples_leaf": [
            Interval(Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0, 0.5, closed="right"),
        ],
        "keep_estimator": ["boolean"],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def _score(self, X, y, context):
        n = X.shape[1]
        Z32, Z = _inputs_and_targets(X)
        bootstrap = getattr(self, "bootstrap", True)  # RF score always bootstraps
        self.max_features_ = _resolve_max_features(self.max_features, self.ensemble, n)
        rng = check_random_state(self.random_state)
        # a forest with this seed gives its trees the seeds below (one draw per tree), so
        # the streamed trees are the forest's trees, whatever n_jobs
        forest_seed = rng.randint(_MAX_INT)
        seeds = np.random.RandomState(forest_seed).randint(_MAX_INT, size=self.n_estimators)
        perm_seeds = rng.randint(_MAX_INT, size=self.n_estimators)
        tree_params = {
            "max_features": self.max_features_,
            "max_depth": self.max_depth,
            "min_samples_leaf": self.min_samples_leaf,
        }
        n_jobs = check_n_jobs(self.n_jobs)
        parallel = Parallel(n_jobs=n_jobs, verbose=self.verbose, prefer="threads")
        self.__dict__.pop("estimator_", None)
        if self.keep_estimator:
            Forest = (
                ExtraTreesRegressor if self.ensemble == "extra_trees" else RandomForestRegressor
            )
            forest = Forest(
                n_estimators=self.n_estimators,
                bootstrap=bootstrap,
                n_jobs=n_jobs,
                random_state=forest_seed,
                **tree_params,
            )
            # on a remote backend (Dask) the forest's trees grow on local threads: one
            # task per tree is too fine a grain, and its estimators_ are needed here
            with parallel_config(backend="threading") if remote_backend() else nullcontext():
                forest.fit(Z32, Z)
            self.estimator_ = forest
            calls = list(zip(forest.estimators_, perm_seeds, strict=True))
        else:
            # (seed, params) rather than trees: a tree is made where it grows, and no
            # list keeps the fitted ones (memory of n_jobs trees)
            calls = [((seed, tree_params), s) for seed, s in zip(seeds, perm_seeds, strict=True)]
        if n_jobs > 1 and remote_backend():
            # on a Dask cluster one task per tree would be milliseconds: the trees go in
            # n_jobs batches, each grown and scored one tree at a time in its task
            batches = np.array_split(np.arange(len(calls)), n_jobs)
            jobs = (
                delayed(on_local_threads)(
                    self._tree_batch, [calls[i] for i in b], Z32, Z, bootstrap
                )
                for b in batches
                if b.size
            )
            per_tree = np.vstack(parallel(jobs)).reshape(self.n_estimators, n)
        else:
            jobs = (delayed(self._one_tree)(tree, Z32, Z, bootstrap, s) for tree, s in calls)
            per_tree = np.array(parallel(jobs)).reshape(self.n_estimators, n)
        self.tree_scores_ = np.zeros((self.n_estimators, self.constant_features_.size))
        self.tree_scores_[:, ~self.constant_features_] = per_tree
        return self._combine(per_tree)

    def _tree_batch(self, calls, Z32, Z, bootstrap) -> np.ndarray:
        """:meth:`_one_tree` for each ``(tree, perm_seed)``, one after the other."""
        return np.array([self._one_tree(tree, Z32, Z, bootstrap, s) for tree, s in calls])

    def _one_tree(self, tree, Z32, Z, bootstrap, perm_seed) -> np.ndarray:
        """Grow one tree (given as ``(seed, params)``) or take a fitted forest's, and score
        the features with it."""
        fit = isinstance(tree, tuple)
        if fit:
            Tree = ExtraTreeRegressor if self.ensemble == "extra_trees" else DecisionTreeRegressor
            tree = Tree(random_state=tree[0], **tree[1])
        counts = _bootstrap_counts(tree.random_state, Z.shape[0]) if bootstrap else None
        if fit:
            tree.fit(Z32, Z, sample_weight=counts, check_input=False)
        elif bootstrap and tree.tree_.n_node_samples[0] != np.count_nonzero(counts):
            # the tree's root holds exactly the distinct in-bag rows: a cheap check that
            # the out-of-bag rows derived above are the forest's
            raise MoweightsError(
                "scikit-learn's forest drew its bootstrap samples differently than expected, "
                "so the out-of-bag rows are unknown; fit with keep_estimator=False"
            )
        return self._tree_score(tree, Z32, Z, counts, perm_seed)

    @abstractmethod
    def _tree_score(self, tree, Z32, Z, counts, perm_seed) -> np.ndarray:
        """Per-feature scores of one fitted tree (the Genie3 or the RandomForest score)."""

    def _combine(self, per_tree: np.ndarray) -> np.ndarray:
        return per_tree.mean(axis=0)


class Genie3Ranker(_TreeEnsembleRanker):
    """Rank features by the Genie3 score of an ensemble of predictive clustering trees.

    Each tree predicts all features from all features: a multi-output regression tree
    on targets scaled to unit variance, so that its impurity is the paper's mean over
    features of ``Var(E, x) / Var(D, x)``. The score of a feature (Eq. 1 of Petković et
    al.) is the mean over the trees of the summed ``h* = |E| impu(E) - sum_i |E_i|
    impu(E_i)`` of the nodes that split on it (``|E|`` counts bootstrap duplicates), not
    normalised per tree as scikit-learn's ``feature_importances_`` are.

    The trees are scikit-learn's ``ExtraTreeRegressor`` / ``DecisionTreeRegressor``, each
    grown on a bootstrap replicate (for extra trees too, as in the paper) drawn and seeded
    as ``ExtraTreesRegressor`` / ``RandomForestRegressor`` would: the ensemble is that
    forest, but each tree is fitted, scored and dropped in its own job (a tree stores one
    prototype value per node and feature: ~18 MB at 85 x 22,283, 1.8 GB for 100 trees).
    They split on float32 z-scores of the features: splits follow any positive affine
    map of a feature, so this is the ensemble on raw data, without scikit-learn's float32
    cast of raw values (overflow, lost resolution) or its absolute 1e-7 tolerance under
    which a feature is constant in a node; and the scores do not change when a feature
    is scaled or shifted (same ``random_state``).

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.
    ensemble : {"extra_trees", "random_forest", "bagging"}, default="extra_trees"
        Extra trees (one random threshold per candidate feature), random forest (best
        threshold per candidate feature) or bagging (random forest with every feature a
        candidate: ``max_features`` is ignored).
    n_estimators : int, default=100
        Number of trees.
    max_features : {"log2", "sqrt"}, int, float in (0, 1] or None, default="log2"
        Candidate features per split: ``ceil(log2 n)`` (the paper's n', rounded up; sklearn
        rounds down), ``ceil(sqrt n)``, a count (clipped to n), a fraction of n (as in
        sklearn) or None for all, n counting the non-constant features.
    max_depth : int or None, default=None
        None grows the trees fully (the paper); an int limits their depth.
    min_samples_leaf : int or float in (0, 0.5], default=1
        Fewest rows in a leaf (a float is a fraction of the rows, as in scikit-learn).
        1 grows the trees fully (the paper); larger leaves keep the deepest splits, which
        separate a handful of rows and fit every noise target, out of the scores.
    bootstrap : bool, default=True
        Grow each tree on a bootstrap replicate (the paper); False uses all rows.
    keep_estimator : bool, default=False
        Fit the scikit-learn forest itself and keep it as ``estimator_`` (same scores,
        all trees in memory); by default at most ``n_jobs`` trees are.
    n_jobs : int or None, default=None
        Trees fitted and scored in parallel (joblib threads); scores do not depend on it.
    random_state : int, RandomState instance or None, default=None
        Seeds the bootstrap samples, the trees (and the permutations).
    verbose : int, default=0
        Progress messages of joblib over the trees.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        Genie3 score of each feature (>= 0); constant features score 0.
    ranking_ : ndarray of shape (n_features,)
        Feature indices, best first.
    tree_scores_ : ndarray of shape (n_estimators, n_features)
        The score from each tree; ``scores_`` is their mean.
    max_features_ : int
        Candidate features per split actually used.
    estimator_ : ExtraTreesRegressor or RandomForestRegressor
        Only with ``keep_estimator=True``: the fitted forest, which maps the z-scores of
        the non-constant features (population standard deviation) to themselves.

    See Also
    --------
    RFScoreRanker : the permutation (random-forest) score of the same ensembles.
    rankers.supervised.forest.RandomForestRanker : supervised impurity importance.

    Notes
    -----
    **Where it works.** On the planted-structure atlas (every structure; 200 samples, 200
    features, 0.5-50 % of them informative, 2 seeds; the mean share of the planted features in
    its top k, against a random ranking's), it recovers part of manifold, clusters, modules,
    shift; it fails on imbalanced, xor (within 0.1 of chance). It needs many informative
    features: it finds most of them on clusters, modules and manifold when 10-50 % are
    informative, few when 0.5-2 % are. Larger leaves (``min_samples_leaf=0.05``) help there, but
    on the ensemble paper's protocol (3 smallest data sets, 5 folds) they raised the MSE at 16
    features on Yale, so the default stays 1 (the measurements:
    ``benchmarks/results/atlas_defaults.md``). The shares are in
    ``benchmarks/results/atlas_grid/summary.md``; :doc:`/guide/which-ranker` has the tables and
    heat maps.

    References
    ----------
    .. [1] M. Petković, D. Kocev, B. Škrlj and S. Džeroski, "Ensemble- and
       Distance-Based Feature Ranking for Unsupervised Learning", arXiv:2011.11679, 2020.
    .. [2] V. A. Huynh-Thu, A. Irrthum, L. Wehenkel and P. Geurts, "Inferring regulatory
       networks from expression data using tree-based methods", PLoS One 5(9), 2010.

    Examples
    --------
    >>> import numpy as np
    >>> from rankers.unsupervised.ensemble import Genie3Ranker
    >>> rng = np.random.default_rng(0)
    >>> groups = np.repeat([0.0, 4.0], 30)  # two clusters in x0, x1, x2; x3..x5 noise
    >>> X = np.column_stack([groups[:, None] + rng.normal(size=(60, 3)), rng.normal(size=(60, 3))])
    >>> ranker = Genie3Ranker(n_estimators=50, random_state=0).fit(X)
    >>> sorted(ranker.ranking_[:3].tolist())
    [0, 1, 2]
    """

    name = "genie3"
    reference: ClassVar[str] = (
        "Petković et al. (2020), Ensemble- and Distance-Based Feature Ranking for "
        "Unsupervised Learning (Genie3 score)"
    )
    _parameter_constraints: ClassVar[dict] = {
        **_TreeEnsembleRanker._parameter_constraints,
        "bootstrap": ["boolean"],
    }

    def __init__(
        self,
        k=None,
        ensemble: str = "extra_trees",
        n_estimators: int = 100,
        max_features="log2",
        max_depth: int | None = None,
        min_samples_leaf=1,
        bootstrap: bool = True,
        keep_estimator: bool = False,
        n_jobs: int | None = None,
        random_state=None,
        verbose: int = 0,
    ):
        self.k = k
        self.ensemble = ensemble
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.bootstrap = bootstrap
        self.keep_estimator = keep_estimator
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _tree_score(self, tree, Z32, Z, counts, perm_seed) -> np.ndarray:
        return _genie3_tree(tree.tree_, Z.shape[1])


class RFScoreRanker(_TreeEnsembleRanker):
    """Rank features by the random-forest (permutation) score of clustering-tree ensembles.

    The ensemble is that of :class:`Genie3Ranker`, bootstrap always on. The score of a
    feature (Eq. 2 of Petković et al.) is the mean over the trees of the relative increase
    ``(e(OOB_T^i) - e(OOB_T)) / e(OOB_T)`` of the tree's error on its out-of-bag rows when
    the feature's values among them are permuted, ``e`` being the mean over features of
    the variance of the residuals (of the unit-variance targets). It can be negative; a
    feature no tree splits on scores exactly 0. Each tree draws one permutation of its OOB
    rows and applies it to each feature in turn (so column order does not matter). Trees
    with an undefined error (fewer than 2 OOB rows, perfect OOB fit) are left out.

    Only OOB rows whose path tests a feature can move when it is permuted: only those
    (feature, row) pairs walk down the tree again (vectorised over the tree arrays, no
    row copies), and the permuted error is updated from the residual sums, so a tree
    costs about (OOB rows x depth) steps plus (changed predictions x features) flops.

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.
    ensemble : {"extra_trees", "random_forest", "bagging"}, default="extra_trees"
        Extra trees (one random threshold per candidate feature), random forest (best
        threshold per candidate feature) or bagging (random forest with every feature a
        candidate: ``max_features`` is ignored).
    n_estimators : int, default=100
        Number of trees.
    max_features : {"log2", "sqrt"}, int, float in (0, 1] or None, default="log2"
        Candidate features per split: ``ceil(log2 n)`` (the paper's n', rounded up; sklearn
        rounds down), ``ceil(sqrt n)``, a count (clipped to n), a fraction of n (as in
        sklearn) or None for all, n counting the non-constant features.
    max_depth : int or None, default=None
        None grows the trees fully (the paper); an int limits their depth.
    min_samples_leaf : int or float in (0, 0.5], default=1
        Fewest rows in a leaf (a float is a fraction of the rows, as in scikit-learn).
        1 grows the trees fully (the paper); larger leaves keep the deepest splits, which
        separate a handful of rows and fit every noise target, out of the scores.
    keep_estimator : bool, default=False
        Fit the scikit-learn forest itself and keep it as ``estimator_`` (same scores,
        all trees in memory); by default at most ``n_jobs`` trees are.
    n_jobs : int or None, default=None
        Trees fitted and scored in parallel (joblib threads); scores do not depend on it.
    random_state : int, RandomState instance or None, default=None
        Seeds the bootstrap samples, the trees (and the permutations).
    verbose : int, default=0
        Progress messages of joblib over the trees.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        RF score of each feature; constant features get ``min(0, lowest score)``.
    ranking_ : ndarray of shape (n_features,)
        Feature indices, best first.
    tree_scores_ : ndarray of shape (n_estimators, n_features)
        The relative error increase from each tree (NaN rows for trees left out);
        ``scores_`` is the mean of the other rows.
    oob_trees_ : ndarray of bool of shape (n_estimators,)
        Which trees had a defined OOB error and entered the mean.
    max_features_ : int
        Candidate features per split actually used.
    estimator_ : ExtraTreesRegressor or RandomForestRegressor
        Only with ``keep_estimator=True``: the fitted forest (on z-scores, see
        :class:`Genie3Ranker`).

    See Also
    --------
    Genie3Ranker : the impurity score of the same ensembles (better in the paper).

    Notes
    -----
    **Where it works.** On the planted-structure atlas (every structure; 200 samples, 200
    features, 0.5-50 % of them informative, 2 seeds; the mean share of the planted features in
    its top k, against a random ranking's), it recovers part of manifold, clusters, modules,
    shift, imbalanced; it fails on xor (within 0.1 of chance). It needs many informative
    features: it finds most of them on clusters, modules and manifold when 10-50 % are
    informative, few when 0.5-2 % are. Larger leaves (``min_samples_leaf=0.05``) help there, but
    on the ensemble paper's protocol (3 smallest data sets, 5 folds) they raised the MSE at 16
    features on Yale, so the default stays 1 (the measurements:
    ``benchmarks/results/atlas_defaults.md``). The shares are in
    ``benchmarks/results/atlas_grid/summary.md``; :doc:`/guide/which-ranker` has the tables and
    heat maps.

    References
    ----------
    .. [1] M. Petković, D. Kocev, B. Škrlj and S. Džeroski, "Ensemble- and
       Distance-Based Feature Ranking for Unsupervised Learning", arXiv:2011.11679, 2020.
    .. [2] L. Breiman, "Random Forests", Machine Learning 45(1), 5-32, 2001.

    Examples
    --------
    >>> import numpy as np
    >>> from rankers.unsupervised.ensemble import RFScoreRanker
    >>> rng = np.random.default_rng(0)
    >>> groups = np.repeat([0.0, 4.0], 30)  # two clusters in x0, x1, x2; x3..x5 noise
    >>> X = np.column_stack([groups[:, None] + rng.normal(size=(60, 3)), rng.normal(size=(60, 3))])
    >>> ranker = RFScoreRanker(n_estimators=50, random_state=0).fit(X)
    >>> sorted(ranker.ranking_[:3].tolist())
    [0, 1, 2]
    """

    name = "rf_score"
    reference: ClassVar[str] = (
        "Petković et al. (2020), Ensemble- and Distance-Based Feature Ranking for "
        "Unsupervised Learning (RandomForest score)"
    )

    def __init__(
        self,
        k=None,
        ensemble: str = "extra_trees",
        n_estimators: int = 100,
        max_features="log2",
        max_depth: int | None = None,
        min_samples_leaf=1,
        keep_estimator: bool = False,
        n_jobs: int | None = None,
        random_state=None,
        verbose: int = 0,
    ):
        self.k = k
        self.ensemble = ensemble
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.keep_estimator = keep_estimator
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _tree_score(self, tree, Z32, Z, counts, perm_seed) -> np.ndarray:
        return _rf_tree(tree, Z32, Z, np.flatnonzero(counts == 0), perm_seed, Z.shape[1])

    def _combine(self, per_tree: np.ndarray) -> np.ndarray:
        self.oob_trees_ = ~np.isnan(per_tree).any(axis=1)
        self.tree_scores_[~self.oob_trees_] = np.nan
        if not self.oob_trees_.any():
            warnings.warn(
                "no tree had a defined out-of-bag error (too few samples, or every tree "
                "predicts its out-of-bag rows perfectly); all RF scores are 0",
                UserWarning,
                stacklevel=4,
            )
            return np.zeros(per_tree.shape[1])
        return per_tree[self.oob_trees_].mean(axis=0)
