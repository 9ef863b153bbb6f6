"""Redundancy-aware rankings: mRMR, JMI and CMIM choose features one at a time.

A univariate score ranks two copies of the best feature first and second; these methods
pick the next feature for what it adds to those already chosen. Each is a greedy forward
selection: the most relevant feature first, then at every step the candidate that
maximises the method's criterion given the chosen set ``S``. The ranking is the order of
selection; after ``n_selected`` steps the remaining features follow by relevance alone.

Information quantities are estimated on discretised features (the bins of
:class:`~rankers.supervised.information.InfoGainRanker`), in bits, from joint counts
computed for all candidates at once (one ``bincount`` per step: time ``O(m n)`` a step,
``O(n_selected m n)`` in all, memory ``O(m n)``). Every argmax goes through
:func:`rankers.ties.first_max`: candidates within ``1e-9`` of the best are tied and the
lower index wins, so the selection does not depend on the last bits of an entropy (two
copies of a feature have equal criteria in exact arithmetic).
"""

from __future__ import annotations

from abc import abstractmethod
from numbers import Integral
from typing import ClassVar

import numpy as np

from rankers.base import BaseRanker
from rankers.supervised.information import discretise
from rankers.supervised.univariate import f_statistic
from rankers.ties import TIE_RTOL, first_max, order_desc
from rankers.utils.param_validation import Interval, StrOptions

__all__ = ["CMIMRanker", "JMIRanker", "MRMRRanker"]

# the smallest redundancy a quotient divides by (mrmr_selection's FLOOR)
_FLOOR = 1e-3


def _entropy(counts: np.ndarray) -> np.ndarray:
    """Entropy in bits of every row of a table of counts."""
    total = counts.sum(axis=1, keepdims=True)
    p = np.divide(counts, total, out=np.zeros_like(counts), where=total > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log2(p), 0.0)
    return -terms.sum(axis=1)


def _joint_entropy(codes: np.ndarray, other=None, n_other: int = 1, y=None, n_y: int = 1):
    """``H(x_j[, other][, y])`` for every column ``j`` of ``codes`` (codes 0..B-1)."""
    n = codes.shape[1]
    size = int(codes.max()) + 1 if codes.size else 1
    key = codes.astype(np.int64)
    if other is not None:
        key = key * n_other + other[:, None]
        size *= n_other
    if y is not None:
        key = key * n_y + y[:, None]
        size *= n_y
    key += np.arange(n, dtype=np.int64) * size
    counts = np.bincount(key.ravel(), minlength=n * size).reshape(n, size)
    return _entropy(counts.astype(np.float64))


class _Data:
    """What every step of a greedy selection reads: the bins and their entropies."""

    def __init__(self, X: np.ndarray, y: np.ndarray, n_bins: int):
        self.X, self.y = X, y
        self.codes = discretise(X, n_bins)
        self.n_y = int(y.max()) + 1
        counts = np.bincount(y, minlength=self.n_y)[None, :].astype(np.float64)
        self.h_y = _entropy(counts)[0]
        self.h_x = _joint_entropy(self.codes)
        self.h_xy = _joint_entropy(self.codes, y=y, n_y=self.n_y)
        self._unit = None

    def mutual_info_y(self) -> np.ndarray:
        """``I(f; y)`` of every feature."""
        return self.h_y + self.h_x - self.h_xy

    def with_feature(self, s: int, conditional: bool = True):
        """``I(f; s)`` and (if asked, else None) ``I(f; s | y)`` of every feature ``f``."""
        cs = self.codes[:, s]
        ns = int(cs.max()) + 1
        i_fs = self.h_x + self.h_x[s] - _joint_entropy(self.codes, cs, ns)
        if not conditional:
            return i_fs, None
        h_xsy = _joint_entropy(self.codes, cs, ns, self.y, self.n_y)
        return i_fs, self.h_xy + self.h_xy[s] - h_xsy - self.h_y

    def abs_correlation(self, s: int) -> np.ndarray:
        """``|corr(f, s)|`` of every feature ``f`` with feature ``s``."""
        if self._unit is None:
            Z = self.X - self.X.mean(axis=0)
            self._unit = Z / np.linalg.norm(Z, axis=0)
        return np.abs(self._unit.T @ self._unit[:, s])


class _GreedyBase(BaseRanker):
    """Greedy forward selection on discretised features (mRMR, JMI, CMIM)."""

    target_kind = "classification"
    requires_y = True
    accepts_sparse = False
    deterministic = True
    redundancy_aware = True
    scale_invariant = True  # bins follow ranks; correlations and F are scale-free
    feature_scale_invariant = True
    _constant_score: ClassVar[float] = 0.0

    _parameter_constraints: ClassVar[dict] = {
        **BaseRanker._parameter_constraints,
        "n_selected": [Interval(Integral, 1, None, closed="left"), None],
        "n_bins": [Interval(Integral, 2, None, closed="left")],
    }

    def _relevance(self, data: _Data) -> np.ndarray:
        return data.mutual_info_y()

    def _initial_state(self, n: int) -> np.ndarray:
        """Running sums over the chosen features, one row each, before any is chosen."""
        return np.zeros((2, n))

    def _update(self, state: np.ndarray, data: _Data, s: int) -> None:
        """Fold the feature ``s`` just chosen into ``state``."""
        i_fs, i_fs_y = data.with_feature(s)
        state[0] += i_fs
        state[1] += i_fs_y

    @abstractmethod
    def _criterion(self, state: np.ndarray, relevance: np.ndarray, step: int) -> np.ndarray:
        """The criterion of every feature once ``step`` features are chosen."""

    def _score(self, X, y, context):
        n = X.shape[1]
        data = _Data(X, y, self.n_bins)
        relevance = self._relevance(data)
        K = n if self.n_selected is None else min(int(self.n_selected), n)
        chosen = np.zeros(n, dtype=bool)
        order, criterion = [], []
        state = self._initial_state(n)
        crit = relevance
        for step in range(K):
            if step > 0:
                self._update(state, data, order[-1])
                crit = self._criterion(state, relevance, step)
            crit = np.where(chosen, np.nan, crit)
            scale = float(np.nanmax(np.abs(crit)))
            best = first_max(crit, TIE_RTOL, scale=scale if scale > 0 else 1.0)
            criterion.append(float(crit[best]))
            order.append(best)
            chosen[best] = True
        rest = np.flatnonzero(~chosen)
        rest = rest[order_desc(relevance[rest])]
        full = np.concatenate([np.asarray(order, dtype=np.intp), rest])
        self.relevance_ = self._to_all_features(relevance, 0.0)
        selection = np.full(n, np.nan)
        selection[order] = criterion
        self.selection_scores_ = self._to_all_features(selection, np.nan)
        self.n_selected_ = len(order)
        scores = np.empty(n)
        scores[full] = np.arange(n, 0, -1, dtype=np.float64)
        return scores


class MRMRRanker(_GreedyBase):
    """Rank features by minimum-redundancy maximum-relevance selection (Peng et al. 2005).

    At each step the candidate ``f`` maximising ``I(f; y) - mean_{s in S} I(f; s)``
    (``scheme="difference"``, the paper's MID) or ``I(f; y) / mean_{s in S} I(f; s)``
    (``"quotient"``, MIQ) joins the chosen set ``S``. With ``relevance="f_statistic"``,
    ``redundancy="correlation"`` and ``scheme="quotient"`` it is the FCQ variant of Ding &
    Peng for continuous data: the ANOVA F over the mean absolute Pearson correlation with
    the chosen features (each floored at 0.001), as the ``mrmr_selection`` package
    computes it.

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.
    n_selected : int or None, default=100
        Greedy steps; the features not chosen follow by relevance. None runs the greedy
        selection over every feature (``O(n² m)`` time).
    relevance : {"mutual_info", "f_statistic"}, default="mutual_info"
        ``I(f; y)`` in bits on the binned feature, or the ANOVA F statistic.
    redundancy : {"mutual_info", "correlation"}, default="mutual_info"
        ``I(f; s)`` on the binned features, or ``|corr(f, s)|`` (floored at 0.001).
    scheme : {"difference", "quotient"}, default="difference"
        How relevance and redundancy combine (MID or MIQ).
    n_bins : int, default=10
        Bins of a continuous feature (see
        :class:`~rankers.supervised.information.InfoGainRanker`).

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        The greedy order as scores: ``n_features`` for the first feature chosen, down to
        1 for the last of the ranking (constant features score 0).
    relevance_ : ndarray of shape (n_features,)
        The relevance of each feature.
    selection_scores_ : ndarray of shape (n_features,)
        The criterion with which each chosen feature won its step (its relevance for
        the first); NaN for features not chosen.
    n_selected_ : int
        Greedy steps taken.
    ranking_ : ndarray of shape (n_features,)
        Feature indices in the order chosen, then by relevance.

    See Also
    --------
    JMIRanker, CMIMRanker : two other criteria of the same family.

    Notes
    -----
    **Where it works.** On the planted-structure atlas (the structures with a class; 200
    samples, 200 features, 0.5-50 % of them informative, 2 seeds; the mean share of the planted
    features in its top k, against a random ranking's), it recovers shift, imbalanced; it fails
    on xor (within 0.1 of chance). The shares are in
    ``benchmarks/results/atlas_grid/summary.md``; :doc:`/guide/which-ranker` has the tables and
    heat maps.

    References
    ----------
    .. [1] H. Peng, F. Long and C. Ding, "Feature selection based on mutual information:
       criteria of max-dependency, max-relevance, and min-redundancy", IEEE TPAMI 27(8),
       2005.
    .. [2] C. Ding and H. Peng, "Minimum redundancy feature selection from microarray
       gene expression data", J. Bioinformatics and Computational Biology 3(2), 2005.

    Examples
    --------
    >>> import numpy as np
    >>> from rankers.supervised.mrmr import MRMRRanker
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 200)
    >>> a = y + 0.3 * rng.normal(size=200)
    >>> b = y + 0.6 * rng.normal(size=200)
    >>> X = np.column_stack([a, a + 1e-3 * rng.normal(size=200), b])  # x1 copies x0
    >>> MRMRRanker().fit(X, y).ranking_.tolist()  # the copy comes after the new evidence
    [0, 2, 1]
    """

    name = "mrmr"
    reference: ClassVar[str] = (
        "Peng, Long & Ding (2005), minimum-redundancy maximum-relevance feature selection"
    )

    _parameter_constraints: ClassVar[dict] = {
        **_GreedyBase._parameter_constraints,
        "relevance": [StrOptions({"mutual_info", "f_statistic"})],
        "redundancy": [StrOptions({"mutual_info", "correlation"})],
        "scheme": [StrOptions({"difference", "quotient"})],
    }

    def __init__(
        self,
        k=None,
        n_selected: int | None = 100,
        relevance: str = "mutual_info",
        redundancy: str = "mutual_info",
        scheme: str = "difference",
        n_bins: int = 10,
    ):
        self.k = k
        self.n_selected = n_selected
        self.relevance = relevance
        self.redundancy = redundancy
        self.scheme = scheme
        self.n_bins = n_bins

    def _relevance(self, data: _Data) -> np.ndarray:
        if self.relevance == "mutual_info":
            return data.mutual_info_y()
        return f_statistic(data.X, data.y)[0]  # ANOVA F on the features as given

    def _initial_state(self, n: int) -> np.ndarray:
        return np.zeros((1, n))  # the summed redundancy with the chosen features

    def _update(self, state: np.ndarray, data: _Data, s: int) -> None:
        if self.redundancy == "mutual_info":
            red = data.with_feature(s, conditional=False)[0]
        else:
            red = data.abs_correlation(s)
        if self.scheme == "quotient" or self.redundancy == "correlation":
            red = np.clip(red, _FLOOR, None)
        state[0] += red

    def _criterion(self, state: np.ndarray, relevance: np.ndarray, step: int) -> np.ndarray:
        mean = state[0] / step
        if self.scheme == "difference":
            return relevance - mean
        crit = relevance / mean
        if self.redundancy == "correlation":
            # a copy of every chosen feature (|corr| 1 within the tie rule) adds nothing:
            # criterion 0, as mrmr_selection's "denominator 1 -> inf" gives
            crit[mean >= 1.0 - TIE_RTOL] = 0.0
        return crit


class JMIRanker(_GreedyBase):
    """Rank features by joint mutual information (Yang & Moody 1999; Brown et al. 2012).

    At each step the candidate ``f`` maximising ``Σ_{s in S} I(f, s; y)`` joins ``S``:
    the information about the class that ``f`` carries together with each chosen
    feature, which rewards complementary features and penalises copies. Computed in the
    equivalent form ``I(f; y) - mean_s I(f; s) + mean_s I(f; s | y)`` of Brown et al.'s
    unifying framework (scikit-feature's ``JMI``).

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.
    n_selected : int or None, default=100
        Greedy steps; the features not chosen follow by relevance (None: all).
    n_bins : int, default=10
        Bins of a continuous feature.

    Attributes
    ----------
    scores_, relevance_, selection_scores_, n_selected_, ranking_
        As :class:`MRMRRanker`'s.

    Notes
    -----
    **Where it works.** On the planted-structure atlas (the structures with a class; 200
    samples, 200 features, 0.5-50 % of them informative, 2 seeds; the mean share of the planted
    features in its top k, against a random ranking's), it recovers imbalanced, shift; it fails
    on xor (within 0.1 of chance). The shares are in
    ``benchmarks/results/atlas_grid/summary.md``; :doc:`/guide/which-ranker` has the tables and
    heat maps.

    References
    ----------
    .. [1] H. H. Yang and J. Moody, "Data visualization and feature selection: new
       algorithms for non-Gaussian data", NIPS 1999.
    .. [2] G. Brown, A. Pocock, M.-J. Zhao and M. Luján, "Conditional likelihood
       maximisation: a unifying framework for information theoretic feature selection",
       JMLR 13, 2012.
    """

    name = "jmi"
    reference: ClassVar[str] = "Brown et al. (2012), joint mutual information (JMI)"

    def __init__(self, k=None, n_selected: int | None = 100, n_bins: int = 10):
        self.k = k
        self.n_selected = n_selected
        self.n_bins = n_bins

    def _criterion(self, state: np.ndarray, relevance: np.ndarray, step: int) -> np.ndarray:
        return relevance - state[0] / step + state[1] / step


class CMIMRanker(_GreedyBase):
    """Rank features by conditional mutual information maximisation (Fleuret 2004).

    At each step the candidate ``f`` maximising ``min_{s in S} I(f; y | s)`` joins ``S``:
    what ``f`` still tells about the class once any single chosen feature is known.
    Computed as ``I(f; y) - max_s (I(f; s) - I(f; s | y))`` (scikit-feature's ``CMIM``).

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.
    n_selected : int or None, default=100
        Greedy steps; the features not chosen follow by relevance (None: all).
    n_bins : int, default=10
        Bins of a continuous feature.

    Attributes
    ----------
    scores_, relevance_, selection_scores_, n_selected_, ranking_
        As :class:`MRMRRanker`'s.

    Notes
    -----
    **Where it works.** On the planted-structure atlas (the structures with a class; 200
    samples, 200 features, 0.5-50 % of them informative, 2 seeds; the mean share of the planted
    features in its top k, against a random ranking's), it recovers part of imbalanced, shift;
    it fails on xor (within 0.1 of chance). The shares are in
    ``benchmarks/results/atlas_grid/summary.md``; :doc:`/guide/which-ranker` has the tables and
    heat maps.

    References
    ----------
    .. [1] F. Fleuret, "Fast binary feature selection with conditional mutual
       information", JMLR 5, 2004.
    """

    name = "cmim"
    reference: ClassVar[str] = "Fleuret (2004), conditional mutual information maximisation"

    def __init__(self, k=None, n_selected: int | None = 100, n_bins: int = 10):
        self.k = k
        self.n_selected = n_selected
        self.n_bins = n_bins

    def _initial_state(self, n: int) -> np.ndarray:
        return np.full((1, n), -np.inf)  # the largest I(f; s) - I(f; s | y) so far

    def _update(self, state: np.ndarray, data: _Data, s: int) -> None:
        i_fs, i_fs_y = data.with_feature(s)
        np.maximum(state[0], i_fs - i_fs_y, out=state[0])

    def _criterion(self, state: np.ndarray, relevance: np.ndarray, step: int) -> np.ndarray:
        return relevance - state[0]
