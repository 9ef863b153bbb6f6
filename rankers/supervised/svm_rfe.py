"""SVM-RFE: rank features by when recursive elimination with a linear SVM drops them."""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.svm import SVC
from tqdm.auto import tqdm

from rankers.base import BaseRanker
from rankers.preprocessing import column_norms, minmax_scale
from rankers.utils.param_validation import Interval, RealNotInt, StrOptions

try:  # the solver behind SVC, without SVC's per-call validation (~10x its solve time here)
    from sklearn.svm import _libsvm
except ImportError:  # pragma: no cover - a future scikit-learn may move it
    _libsvm = None

__all__ = ["SVMRFERanker"]

# up to this many samples the linear kernel is kept as a matrix and downdated feature by
# feature (128 MB of float64); beyond it libsvm computes the linear kernel itself
_MAX_KERNEL_SAMPLES = 4096
# relative tolerance under which two squared weights count as equal (tied features are
# eliminated together and share a score, e.g. duplicated columns)
_TIE_RTOL = 1e-10


class SVMRFERanker(BaseRanker):
    """Rank features by recursive feature elimination with a linear SVM (Guyon et al. 2002).

    A soft-margin linear SVM (hinge loss, unpenalised intercept: scikit-learn's
    ``SVC(kernel="linear")``, the problem of Guyon et al. and of Weka's SMO that the
    error-curve benchmark ran) is trained on the remaining features; the ``step``
    features with the smallest squared weight ``w_i²`` are removed; this repeats until
    one feature is left. A feature eliminated later scores higher: ``scores_`` is the
    elimination rank (1 = removed first), and features removed in the same iteration are
    ordered by their ``w_i²`` in that iteration, so the ranking is total. Features whose
    ``w_i²`` tie exactly (up to rounding, e.g. duplicated columns) are removed together
    and share a score. For more than two classes one SVM per class (one-vs-rest) is
    trained and ``w_i²`` is summed over them.

    ``LinearSVC`` is not used: it minimises the squared hinge loss and penalises the
    intercept, a different problem. Speed comes instead from the kernel: for up to 4096
    samples the linear kernel matrix is computed once and the eliminated features'
    contributions are subtracted from it (recomputed whenever half the features have
    gone, which bounds rounding error), so an iteration costs one SVM solve on a
    precomputed kernel plus ``O(n_samples · n_remaining)`` for the weights, with the
    same result as refitting ``SVC(kernel="linear")``.

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.
    C : float, default=0.1
        SVM complexity (0.1 in the error-curve benchmark).
    step : int or float in (0, 1), default=0.05
        Features removed per round: an int is a count (as in
        :class:`sklearn.feature_selection.RFE`); a float is that fraction of the features
        still remaining, rounded down and at least 1 (chunked elimination as Guyon et al.
        do it, halving the remaining genes; scikit-learn's RFE takes the fraction of the
        *initial* number instead, which orders the best features in coarse chunks).
        ``step=1`` is Guyon's one-at-a-time procedure and the error-curve benchmark's; it
        trains ``n_features - 1`` SVMs per class model. The default 0.05 trains about
        ``ln(n_features / 40) / 0.05 + 40`` rounds (119 at 2,000 features, 5-11 s of CPU at
        2,000 x 2,000 against over 120 s for ``step=1``;
        ``benchmarks/speed/bench_width_rankers.py``), removes coarse chunks only while many
        features remain and one at a time from the last 39 on, so the top of the ranking
        is resolved as with ``step=1``: on 200 x 600 synthetic sets (20 informative
        features) its scores have Spearman 0.984-0.988 with ``step=1``'s and the same
        best 50 features but 6-7. With fewer than 40 features it equals ``step=1``.
    scaling : {"minmax", "standard"} or None, default="minmax"
        How features are scaled once, before the elimination. "minmax" maps each to
        [0, 1] as Weka's SMO does by default, the setting under which C = 0.1 was chosen
        in the benchmark; "standard" (zero mean, unit variance) is Guyon et al.'s
        preprocessing; None uses the raw values (the ranking then depends on the units).
        With either scaling the ranking is unchanged by a positive affine rescaling of a
        feature.
    tol : float, default=1e-3
        Stopping tolerance of the SVM solver (libsvm's and Weka SMO's default).
    verbose : int, default=0
        Show a progress bar of eliminated features when > 0.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        Elimination rank: 1 for the feature removed first, up to the number of distinct
        ranks; constant features score 0.
    ranking_ : ndarray of shape (n_features,)
        Feature indices, best first.
    elimination_iteration_ : ndarray of int of shape (n_features,)
        Iteration (1-based) in which each feature was removed; the surviving feature gets
        ``n_iterations_ + 1``; constant features 0. Equals ``n_iterations_ + 2 -``
        ``RFE(n_features_to_select=1).ranking_`` on the informative features.
    n_iterations_ : int
        Number of SVM trainings rounds (elimination iterations).

    See Also
    --------
    sklearn.feature_selection.RFE : the generic recursive elimination.

    Notes
    -----
    **Where it works.** On the planted-structure atlas (the structures with a class; 200
    samples, 200 and 2,000 features, 0.5-50 % of them informative, 2 seeds; the mean share of
    the planted features in its top k, against a random ranking's), it recovers shift,
    imbalanced; it fails on xor (within 0.1 of chance). The shares are in
    ``benchmarks/results/atlas_grid/summary.md``; :doc:`/guide/which-ranker` has the tables and
    heat maps.

    References
    ----------
    .. [1] I. Guyon, J. Weston, S. Barnhill and V. Vapnik, "Gene selection for cancer
       classification using support vector machines", Machine Learning 46, 389-422, 2002.

    Examples
    --------
    >>> import numpy as np
    >>> from rankers.supervised.svm_rfe import SVMRFERanker
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 20)
    >>> X = np.column_stack([rng.normal(size=40), y + 0.1 * rng.normal(size=40),
    ...                      rng.normal(size=40)])
    >>> SVMRFERanker().fit(X, y).ranking_[0]
    np.int64(1)
    """

    name = "svm_rfe"
    target_kind = "classification"
    requires_y = True
    accepts_sparse = False
    deterministic = True
    scale_invariant = True
    reference: ClassVar[str] = "Guyon, Weston, Barnhill & Vapnik (2002), SVM-RFE"
    _constant_score: ClassVar[float] = 0.0

    _parameter_constraints: ClassVar[dict] = {
        **BaseRanker._parameter_constraints,
        "C": [Interval(Real, 0, None, closed="neither")],
        "step": [
            Interval(Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="neither"),
        ],
        "scaling": [StrOptions({"minmax", "standard"}), None],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        k=None,
        C: float = 0.1,
        step=0.05,
        scaling: str | None = "minmax",
        tol: float = 1e-3,
        verbose: int = 0,
    ):
        self.k = k
        self.C = C
        self.step = step
        self.scaling = scaling
        self.tol = tol
        self.verbose = verbose

    def _score_units(self) -> int | None:
        return None if self.scaling is None else 0  # C weighs raw values otherwise

    def _feature_scale_invariant(self) -> bool:
        return self.scaling is not None  # each feature scaled on its own first

    def _score(self, X, y, context):
        Xs = _scale(X, self.scaling)
        m, n = Xs.shape
        n_classes = int(y.max()) + 1
        # binary: one SVM; otherwise one-vs-rest, whose w_i² are summed
        targets = [y] if n_classes == 2 else [(y == c).astype(np.int64) for c in range(n_classes)]
        step = self.step
        model = _LinearModel(Xs, use_kernel=m <= _MAX_KERNEL_SAMPLES)

        alive = np.arange(n)
        iteration = np.zeros(n, dtype=np.int64)
        weight = np.zeros(n)
        tols = [0.0]  # tie tolerance of each iteration (index = iteration)
        it = 0
        with tqdm(total=n, disable=not self.verbose, desc="svm_rfe", unit="feature") as bar:
            while alive.size > 1:
                it += 1
                w2 = sum(model.weights(alive, t, self.C, self.tol) ** 2 for t in targets)
                tols.append(_TIE_RTOL * float(w2.max()))
                drop = _to_eliminate(w2, _count(step, alive.size), tols[-1])
                iteration[alive[drop]] = it
                weight[alive[drop]] = w2[drop]
                keep = np.ones(alive.size, dtype=bool)
                keep[drop] = False
                model.remove(alive[drop], alive[keep])
                alive = alive[keep]
                bar.update(int(drop.size))
            iteration[alive] = it + 1
            tols.append(0.0)
            bar.update(int(alive.size))
        self.n_iterations_ = it
        self.elimination_iteration_ = self._to_all_features(iteration, fill=0).astype(np.int64)
        return _elimination_ranks(iteration, weight, np.asarray(tols))


def _count(step, n_alive: int) -> int:
    """Features removed from ``n_alive`` in one round: ``step`` itself when an int, else
    that fraction of the remaining features, rounded down; at least 1, and one survivor."""
    count = step if isinstance(step, Integral) else int(step * n_alive)
    return max(1, min(int(count), n_alive - 1))


def _scale(X: np.ndarray, scaling: str | None) -> np.ndarray:
    if scaling == "minmax":
        return minmax_scale(X)  # no constant columns reach _score
    if scaling == "standard":
        # the population std, through column_norms: a feature in units of 1e-300 beside
        # features of unit order would get a std of 0 from its underflowing squares
        Z = X - X.mean(axis=0)
        return Z / (column_norms(Z) / np.sqrt(X.shape[0]))
    return X


def _to_eliminate(w2: np.ndarray, count: int, tol: float) -> np.ndarray:
    """Positions of the ``count`` smallest ``w2`` plus any tied with them (within ``tol``):
    no tie needs breaking, so the result does not depend on feature order."""
    cut = np.partition(w2, count - 1)[count - 1]
    return np.flatnonzero(w2 <= cut + tol)


def _elimination_ranks(iteration: np.ndarray, weight: np.ndarray, tols: np.ndarray) -> np.ndarray:
    """Dense ranks of (iteration, w²): later iterations, then larger w², score higher;
    weights equal within the tie tolerance of their iteration share a rank."""
    order = np.lexsort((weight, iteration))
    it_sorted, w_sorted = iteration[order], weight[order]
    new_group = np.ones(order.size, dtype=bool)
    same_it = it_sorted[1:] == it_sorted[:-1]
    tied = w_sorted[1:] - w_sorted[:-1] <= tols[it_sorted[1:]]
    new_group[1:] = ~(same_it & tied)
    ranks = np.empty(order.size)
    ranks[order] = np.cumsum(new_group)
    return ranks


def _solve_precomputed(K: np.ndarray, target: np.ndarray, C: float, tol: float):
    """Support indices and dual coefficients (α_i y_i, up to one sign) of a C-SVM on a
    precomputed kernel; ``target`` holds class codes 0/1."""
    if _libsvm is not None:
        try:
            _libsvm.set_verbosity_wrap(0)  # libsvm's global switch; SVC sets it per fit too
            out = _libsvm.fit(
                K,
                target.astype(np.float64),
                svm_type=0,  # C-SVC
                kernel="precomputed",
                C=C,
                tol=tol,
                cache_size=200,
                max_iter=-1,
                random_seed=0,  # used for probability estimates only
            )
            return out[0], out[3][0]
        except TypeError:  # the private signature changed: use the public estimator
            pass
    svm = SVC(kernel="precomputed", C=C, tol=tol).fit(K, target)
    return svm.support_, svm.dual_coef_[0]


class _LinearModel:
    """Linear-SVM weights of a shrinking feature set, with a downdated kernel when small."""

    def __init__(self, Xs: np.ndarray, use_kernel: bool):
        self.Xs = Xs
        self.use_kernel = use_kernel
        self.columns = np.arange(Xs.shape[1])  # features held in self.block
        self.block = Xs
        if use_kernel:
            self.K = Xs @ Xs.T
            self.kernel_size = Xs.shape[1]

    def weights(self, alive: np.ndarray, target: np.ndarray, C: float, tol: float) -> np.ndarray:
        if not self.use_kernel:
            svm = SVC(kernel="linear", C=C, tol=tol).fit(self.Xs[:, alive], target)
            return svm.coef_[0]
        support, coef = _solve_precomputed(self.K, target, C, tol)
        alpha = np.zeros(self.K.shape[0])
        alpha[support] = coef
        # w = Σ α_i y_i x_i over the support vectors, on the features still alive; einsum
        # (memory-bound) rather than BLAS gemv, which was slower on a busy machine
        w = np.einsum("i,ij->j", alpha, self.block)
        return w[np.searchsorted(self.columns, alive)]

    def remove(self, gone: np.ndarray, alive: np.ndarray) -> None:
        if not self.use_kernel:
            return
        if alive.size < 0.75 * self.columns.size:
            # drop dead columns from the block the weights are computed on
            self.block = np.ascontiguousarray(self.Xs[:, alive])
            self.columns = alive.copy()
        if alive.size <= self.kernel_size // 2:
            # recompute from the survivors: the downdates' rounding error stays small
            block = self.Xs[:, alive]
            self.K = block @ block.T
            self.kernel_size = alive.size
        else:
            E = self.Xs[:, gone]
            self.K -= E @ E.T
