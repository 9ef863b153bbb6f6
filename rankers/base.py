"""The ranker contract: every feature ranker in moweights is a :class:`BaseRanker`."""

from __future__ import annotations

import functools
import warnings
from abc import abstractmethod
from numbers import Integral
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.validation import check_is_fitted

from rankers.columns import column_extremes
from rankers.context import FitContext, Scores
from rankers.exceptions import (
    ConstantFeatureWarning,
    InvalidInputError,
    InvalidParameterError,
    MoweightsError,
)
from rankers.memory import memory_errors
from rankers.preprocessing import scale_by_power_of_two
from rankers.tags import RankerTags
from rankers.ties import TIE_RTOL, ranking_order
from rankers.utils.param_validation import Interval, SklearnInvalidParameterError, StrOptions
from rankers.validation import (
    check_finite,
    check_X,
    check_y,
    default_feature_names,
    target_task,
    warn_few_samples,
    warn_labels_as_quantity,
)

__all__ = ["TASKS", "BaseRanker"]

#: the ``task`` parameter of a ranker for both kinds of target: chosen from ``y``
#: ("auto": a numeric target of few repeated values reads as classes), or the kind named
TASKS = ("auto", "classification", "regression")

# largest absolute values accepted for a ranker whose results depend on the scale of X:
# their squares stay within float64's normal range with room for sums of 1e20 of them
_SAFE_MAGNITUDE = (1e-140, 1e140)


class BaseRanker(SelectorMixin, BaseEstimator):
    """Base class of feature rankers: a scorer plus top-k selection.

    Subclasses implement :meth:`_score` and list their parameters in ``__init__``
    (which only stores them, as in scikit-learn). :meth:`fit` validates the input once,
    sets constant features aside (they get the lowest score and a
    :class:`~rankers.exceptions.ConstantFeatureWarning`), calls
    ``_score(X, y, context)`` on the informative features, with what it computed on the
    way in ``context`` (a :class:`~rankers.context.FitContext`), and derives the ranking.

    Parameters
    ----------
    k : int, "all" or None, default=None
        How many of the best features :meth:`transform` keeps; None or "all" keeps all.
        It is read at transform time, so ``set_params(k=...)`` needs no refit.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features_in_,)
        Relevance of every feature, **higher = more relevant**, for every ranker.
    ranking_ : ndarray of shape (n_features_in_,)
        Feature indices, best first. Two scores within ``1e-9`` of the larger of the
        two (relative) are tied, without chaining, and tied features come by lower index
        (constant features last): the order does not depend on the last bits of a
        computation, which differ between machines (:mod:`rankers.ties`). The rule
        decides the order only; ``scores_`` are the method's own values.
    constant_features_ : ndarray of bool of shape (n_features_in_,)
        Which features were constant in the training data: their range is at most
        ``1e-9`` times their largest absolute value (:mod:`rankers.ties`).
    statistic_ : ndarray of shape (n_features_in_,)
        Only for rankers whose own statistic is "lower is better" (e.g. the Laplacian
        score); ``scores_`` is a decreasing transform of it.
    n_features_in_ : int
        Number of features seen in :meth:`fit`.
    feature_names_in_ : ndarray of str
        Column names seen in :meth:`fit`, when ``X`` had string column names.

    Notes
    -----
    Class attributes describe a ranker: ``requires_y`` (bool),
    ``target_kind`` ("unsupervised", "classification", "regression" or "both"),
    ``accepts_sparse`` (bool: sparse input is kept sparse; otherwise it is densified),
    ``deterministic`` (bool: the method makes no random choice at all; randomised
    rankers are still reproducible under a fixed ``random_state``), ``scale_invariant``
    (bool, see below), ``progress_bar`` (bool: its ``verbose``, if any, draws a progress
    bar) and ``reference``. A pipeline reads them, for the parameters set, from the
    instance's tags (:func:`rankers.ranker_tags`, scikit-learn's ``__sklearn_tags__``):
    a ranker whose needs depend on its parameters overrides :meth:`_requires_y`,
    :meth:`_accepts_sparse` or :meth:`_score_units`.
    Unsupervised rankers accept and ignore ``y`` so they fit in pipelines.

    A ranker is ``scale_invariant`` when multiplying all of ``X`` by one constant
    ``c > 0`` leaves its ranking unchanged (with its default parameters;
    :meth:`_score_units` says it for the parameters set). :meth:`fit` then divides ``X``
    by the power of two that brings its largest absolute value into [0.5, 1) before
    :meth:`_score` runs, which is exact in floating point, so no square overflows or
    underflows and no fixed tolerance (scikit-learn's 1e-7 split threshold, an epsilon in
    a denominator) sees a different number whatever ``c``; scores that carry units of
    ``X`` are converted back. A ranker whose results depend on the scale gets ``X`` as
    it is, and values whose squares would leave float64's range are refused.

    Every supervised ranker's target goes through one check (:meth:`_check_target`, then
    :func:`~rankers.validation.check_y`): a target of a kind the ranker does not take
    (as :func:`~sklearn.utils.multiclass.type_of_target` names it) is refused with
    :class:`~rankers.exceptions.InvalidInputError` listing the registered rankers that
    take it, and fewer than 10 samples (or a class with fewer than 5) give a
    :class:`~rankers.exceptions.FewSamplesWarning`. A step whose memory grows with the
    square of the features or samples checks its estimate first with
    :func:`rankers.memory.check_memory`.
    """

    requires_y: ClassVar[bool] = False
    target_kind: ClassVar[str] = "unsupervised"
    accepts_sparse: ClassVar[bool] = False
    deterministic: ClassVar[bool] = True
    #: the score of a feature depends on the others already ranked (greedy selection):
    #: a copy of a feature ranks below it rather than tied with it
    redundancy_aware: ClassVar[bool] = False
    reference: ClassVar[str] = ""
    #: the ranking does not change when X is multiplied by a constant c > 0 (default
    #: parameters); False, the safe default for a ranker that says nothing, leaves X as it is
    scale_invariant: ClassVar[bool] = False
    #: the ranking does not change when any one feature is multiplied by its own constant
    #: c > 0 (default parameters; :meth:`_feature_scale_invariant` for the parameters set)
    feature_scale_invariant: ClassVar[bool] = False
    #: a ``verbose`` parameter, if the ranker has one, draws a progress bar (tqdm) while it
    #: fits; a ranker whose ``verbose`` means something else (log lines) sets False
    progress_bar: ClassVar[bool] = True
    #: registry name (set by the registry for rankers registered with a decorator)
    name: ClassVar[str | None] = None
    #: score given to constant features; a ranker whose informative scores can fall
    #: below 0 sets the lowest value its scores can take
    _constant_score: ClassVar[float] = 0.0
    #: its ``_score`` divides every column by a power of two itself where needed (exact)
    #: and returns scores in the units of the caller's X: :meth:`fit` then skips its own
    #: global rescaling, a copy of X
    _rescales_columns: ClassVar[bool] = False
    #: parameters that make a fit quick on tiny data; the shared contract tests (which
    #: fit every registered ranker dozens of times) apply them, users never see them
    _contract_test_params: ClassVar[dict] = {}

    _parameter_constraints: ClassVar[dict] = {
        "k": [None, Interval(Integral, 1, None, closed="left"), StrOptions({"all"})],
    }

    def __init__(self, k: int | str | None = None):
        self.k = k

    # ------------------------------------------------------------------ fit
    def fit(self, X, y=None):
        """Score every feature of ``X``.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
            Training data; never modified.
        y : array-like of shape (n_samples,), default=None
            Target; required by supervised rankers, ignored by unsupervised ones.

        Returns
        -------
        self : BaseRanker
            The fitted ranker.
        """
        self.validate_params()
        # the extremes below say whether every value is finite: no pass of its own
        Xc, names = check_X(X, accepts_sparse=self._accepts_sparse(), finite=False)
        if sp.issparse(Xc) and not Xc.has_canonical_format:
            # duplicate entries summed (and indices sorted) before the sparse statistics
            # read the stored values one by one, in fit's own copy (check_X's matrix may
            # share the caller's arrays, read-only)
            Xc = Xc.copy()
            Xc.sum_duplicates()
        n = Xc.shape[1]
        self.n_features_in_ = n
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        yc = self._check_target(y, Xc.shape[0])
        if yc is None:  # check_y warns about supervised targets itself
            warn_few_samples(Xc.shape[0], stacklevel=3)
        # every column's extremes, once: the constant columns, the scale and the checks
        # of _check_input (e.g. negative values) all read them
        lo, hi, column_pass = self._column_pass(Xc, yc)
        if not (np.isfinite(lo).all() and np.isfinite(hi).all()):  # NaN and inf reach them
            check_finite(Xc, X, names)
        self._check_input(Xc, lo, hi)
        units = self._score_units()
        top = np.negative(lo)  # max(|lo|, |hi|) for lo <= hi, without temporaries
        np.maximum(top, hi, out=top)
        if self._rescales_columns:
            shift = 0  # _score is exact at any scale: no copy of X
        else:
            Xc, shift = _rescale(
                Xc, units is not None, type(self).__name__, float(top.max(initial=0.0))
            )
        # a range within the tie tolerance of the column's largest absolute value: a
        # constant written out by a computation may differ in its last bits from row to row
        # (rankers.ties); a power-of-two rescale leaves the test unchanged
        constant = np.asarray(hi - lo <= TIE_RTOL * top)
        del lo, hi
        # a column over 1e308 times smaller than X's largest value leaves float64's normal
        # range in the common rescale: its values would be zeros and rounding; say so
        lost = ~constant & (np.ldexp(top, -shift) < np.finfo(np.float64).tiny)
        if lost.any():
            labels = self._feature_labels()[lost]
            shown = ", ".join(map(str, labels[:10])) + (" ..." if len(labels) > 10 else "")
            raise InvalidInputError(
                f"the values of column(s) {shown} are over 1e308 times smaller than X's "
                f"largest ({float(top.max()):.3g}): at the scale of X, float64 cannot hold "
                f"both, and {type(self).__name__} would see them as zeros; rescale the "
                "columns first (e.g. sklearn.preprocessing.StandardScaler) or drop them"
            )
        self.constant_features_ = constant
        if constant.any():
            labels = self._feature_labels()[constant]
            shown = ", ".join(map(str, labels[:10])) + (" ..." if len(labels) > 10 else "")
            warnings.warn(
                f"{constant.sum()} constant feature(s) get the lowest score: {shown}",
                ConstantFeatureWarning,
                stacklevel=2,
            )
        scores = np.full(n, float(self._constant_score))
        informative = ~constant
        hint = None
        if informative.any():
            Xi = Xc[:, informative] if constant.any() else Xc
            # the largest absolute value of every column _score sees (rankers that rescale
            # their columns themselves read it instead of another pass over X)
            if constant.any() or shift:
                top = np.ldexp(top[informative], -shift)
            top.flags.writeable = informative.flags.writeable = False
            context = FitContext(
                top=top, scale_shift=shift, informative=informative, column_pass=column_pass
            )
            del top, column_pass  # the context holds them for _score, and only it
            step = f"{type(self).__name__}.fit on {Xi.shape[0]} samples x {Xi.shape[1]} features"
            with memory_errors(step):  # numpy's bare MemoryError named as our step's
                raw = self._score(Xi, yc, context)
            if isinstance(raw, Scores):
                raw, hint = raw
            s = context.to_data_units(raw, units, f"{type(self).__name__}'s scores")
            if s.shape != (int(informative.sum()),) or not np.isfinite(s).all():
                raise MoweightsError(
                    f"{type(self).__name__}._score returned invalid scores (shape {s.shape}, "
                    "expected one finite value per feature); this is a bug in the ranker"
                )
            scores[informative] = s
            if constant.any():
                scores[constant] = min(float(self._constant_score), float(s.min()))
            del raw, s, context  # a fitted ranker keeps no per-column scratch of fit's
        self.scores_ = scores
        # near-equal scores are tied for the order only (rankers.ties), so the order is
        # the same on every machine; then informative before constant; then lower index
        # the order _score may have sorted its scores in (tie_groups checks it, then skips
        # its own sort); it is the scores' order only when no feature was set aside
        self.ranking_ = ranking_order(scores, constant, order=hint)
        transform = getattr(self, "_statistic_from_scores", None)
        if transform is not None:
            self.statistic_ = transform(scores)
        return self

    @abstractmethod
    def _score(self, X, y, context: FitContext) -> np.ndarray | Scores:
        """Return one score per column of ``X`` (higher = more relevant).

        ``X`` holds only the non-constant features, is float64 and read-only; ``y`` is
        None for unsupervised rankers, class codes 0..C-1 for classification and floats
        for regression (see ``task_`` when ``target_kind == "both"``). ``context`` is what
        :meth:`fit` computed on the way (:class:`~rankers.context.FitContext`: the
        columns' largest absolute values, the common rescale and its conversion back,
        what :meth:`_column_pass` took); a ranker that needs none of it ignores it. Return
        :class:`~rankers.context.Scores` instead to hand fit the order the scores were
        already sorted in.
        """

    def _column_pass(self, X, y) -> tuple[np.ndarray, np.ndarray, object]:
        """Hook: every column's smallest and largest value (a sparse matrix's zeros
        included), from fit's one pass over the validated ``X`` (all columns), and what
        else the ranker took in that pass.

        A ranker whose statistics need a pass over ``X`` of their own may take them in
        the same pass (one read of ``X``, not two) and return them third: :meth:`_score`
        receives them as ``context.column_pass`` (``context.informative`` says which
        columns it sees). ``y`` is the checked target (None for unsupervised rankers).
        The default computes the extremes alone, and None.
        """
        lo, hi = column_extremes(X)
        return lo, hi, None

    def _check_input(self, X, lo: np.ndarray, hi: np.ndarray) -> None:
        """Hook: ranker-specific checks of the whole validated ``X`` (all columns).

        ``lo`` and ``hi`` are every column's smallest and largest value (from
        :meth:`_column_pass`), e.g. for a ranker that refuses negative values. Runs before
        constant features are set aside, so an error can name any column (see
        :meth:`_feature_labels`). The default accepts everything.
        """

    def _score_units(self) -> int | None:
        """How the scores follow a global rescale ``X -> c·X`` with the parameters set.

        An int ``p`` when ``scores_`` are multiplied by ``c**p`` for every ``c > 0`` (0:
        unit-free scores, e.g. ranks or correlations; 2: a variance), so the ranking does
        not depend on ``c`` and :meth:`fit` rescales ``X`` internally; None when the
        ranking depends on the scale of ``X`` (a fixed kernel width or penalty in the
        units of ``X``). Rankers whose answer depends on their parameters override it.
        """
        return 0 if self.scale_invariant else None

    def _to_all_features(self, values, fill: float) -> np.ndarray:
        """Spread per-informative-feature ``values`` (as ``_score`` sees them) to all features.

        For per-feature attributes besides ``scores_`` (e.g. p-values); constant features
        get ``fill``. Usable inside ``_score``: ``constant_features_`` is set before it runs.
        """
        out = np.full(self.constant_features_.shape, fill, dtype=np.float64)
        out[~self.constant_features_] = values
        return out

    # --------------------------------------------------------------- helpers
    def validate_params(self) -> None:
        """Check every parameter against its constraints.

        Raises
        ------
        InvalidParameterError
            Naming the parameter, the value given and what would be valid.
        """
        # the same parameters are checked once: filters fitted in loops (bootstraps, CV,
        # stability selection) would otherwise pay scikit-learn's checks on every call
        key = _params_key(self)
        if key is not None and key == getattr(self, "_validated_params", None):
            return
        try:
            self._validate_params()
        except SklearnInvalidParameterError as exc:
            raise InvalidParameterError(str(exc)) from None
        self._validated_params = key

    def _check_target(self, y, n_samples: int):
        if not self._requires_y():
            return None
        if y is None:
            raise InvalidInputError(
                f"{type(self).__name__} requires y to be passed, but the target y is None: "
                "it is supervised; pass fit(X, y) or choose an unsupervised ranker"
            )
        kind = self._target_kind()
        name = self.name or type(self).__name__
        if kind == "both":
            # unreadable or multi-output targets: check_y says what is wrong with them
            kind = target_task(y) or "classification"
            if kind == "regression":
                checked = check_y(y, n_samples, kind=kind, ranker=name)
                warn_labels_as_quantity(checked, name, stacklevel=4)
                self.task_ = kind
                return checked
        self.task_ = kind
        return check_y(y, n_samples, kind=kind, ranker=name)

    def _feature_labels(self) -> np.ndarray:
        names = getattr(self, "feature_names_in_", None)
        return names if names is not None else default_feature_names(self.n_features_in_)

    def _get_support_mask(self) -> np.ndarray:
        check_is_fitted(self, "scores_")
        n = self.n_features_in_
        k = n if self.k in (None, "all") else self.k
        if not isinstance(k, (int, np.integer)) or k < 1:
            raise InvalidParameterError(f"k must be a positive integer, 'all' or None; got {k!r}")
        if k > n:
            raise InvalidParameterError(
                f"k={k} but the ranker was fitted on {n} features; choose k <= {n} or 'all'"
            )
        mask = np.zeros(n, dtype=bool)
        mask[self.ranking_[:k]] = True
        return mask

    def _requires_y(self) -> bool:
        """Whether ``fit`` needs a target with the parameters set (default: ``requires_y``)."""
        return bool(self.requires_y)

    def _target_kind(self) -> str:
        """The target ``fit`` takes with the parameters set (default: ``target_kind``; a
        ranker whose parameters choose the task, such as the ensemble's ``task``, answers
        by them). A ranker for both kinds of target with a ``task`` parameter (one of
        ``TASKS``) takes the kind it names, or chooses from ``y`` with ``"auto"``."""
        kind = str(self.target_kind)
        if kind == "both":
            task = getattr(self, "task", "auto")
            if task in ("classification", "regression"):
                return task
        return kind

    def _accepts_sparse(self) -> bool:
        """Whether ``fit`` keeps sparse input sparse with the parameters set (default:
        ``accepts_sparse``)."""
        return bool(self.accepts_sparse)

    def _feature_scale_invariant(self) -> bool:
        """Whether rescaling one feature leaves the ranking unchanged, with the parameters
        set (default: ``feature_scale_invariant``; a ranker with a per-feature scaling
        option answers by it)."""
        return bool(self.feature_scale_invariant)

    def __sklearn_tags__(self) -> RankerTags:
        """scikit-learn's tags of this instance, extended by :class:`~rankers.tags.RankerTags`.

        Read them with :func:`rankers.ranker_tags`. ``requires_y`` comes from
        :meth:`_requires_y` (so it may depend on the parameters), ``target_kind`` from
        :meth:`_target_kind`, ``scale_invariant`` from
        :meth:`_score_units`, ``feature_scale_invariant`` from
        :meth:`_feature_scale_invariant`, ``accepts_sparse`` from :meth:`_accepts_sparse`,
        ``progress`` from a ``verbose`` parameter unless
        the class sets ``progress_bar = False``; the other fields from the class attributes.
        """
        tags = super().__sklearn_tags__()
        # sparse input is always accepted: kept sparse where accepts_sparse, else densified
        tags.input_tags.sparse = True
        tags.input_tags.allow_nan = False
        # every ranker is reproducible under a fixed random_state (our contract), so
        # scikit-learn's determinism checks apply to the randomised ones too
        tags.non_deterministic = False
        return RankerTags.extend(
            tags,
            requires_y=self._requires_y(),
            target_kind=self._target_kind(),
            accepts_sparse=self._accepts_sparse(),
            progress=bool(self.progress_bar) and "verbose" in self.get_params(deep=False),
            deterministic=bool(self.deterministic),
            scale_invariant=self._score_units() is not None,
            feature_scale_invariant=self._feature_scale_invariant(),
        )


def _params_key(est) -> tuple | None:
    """The estimator's parameters as a hashable tuple (its class included), or None when
    one of them is not hashable (then they are checked every time)."""
    names = _param_names(type(est))
    try:
        values = (getattr(est, name, None) for name in names)
        # the type too: 1 == 1.0 == True, but a constraint may take one and refuse another
        key = (type(est), *((n, type(v), v) for n, v in zip(names, values, strict=True)))
        hash(key)
    except TypeError:
        return None
    return key


@functools.cache
def _param_names(cls) -> tuple[str, ...]:
    return tuple(cls._get_param_names())


def _rescale(X, invariant: bool, name: str, top: float):
    """``X`` divided by ``2**shift`` so that its largest absolute value is in [0.5, 1),
    and ``shift``; or, for a scale-dependent ranker, ``X`` itself after checking that its
    values keep their squares, and sums of many squares, inside float64's normal range.

    A power of two is exact (unless a value falls below 2.2e-308 times the largest one,
    where it was already lost to rounding), so a scale-invariant ranker sees the same
    numbers whatever the scale of the caller's data. ``top`` is the largest absolute value
    of ``X``. Never modifies ``X``.
    """
    if top == 0.0:  # all zeros: every feature is constant
        return X, 0
    shift = int(np.frexp(top)[1])
    if not invariant:
        if not _SAFE_MAGNITUDE[0] <= top <= _SAFE_MAGNITUDE[1]:
            raise InvalidInputError(
                f"the largest absolute value of X is {top:.3g}: at this scale squares of its "
                "values, and sums of them, reach the limits of float64 (about 1e-308 and "
                f"1e308), and {name}'s results depend on the scale of X, so it cannot rescale "
                "X itself. Rescale X first so that its values lie within "
                f"{_SAFE_MAGNITUDE[0]:.0e} ... {_SAFE_MAGNITUDE[1]:.0e} (e.g. standardise it "
                "with sklearn.preprocessing.StandardScaler)"
            )
        return X, 0
    if shift == 0:
        return X, 0
    if sp.issparse(X):
        out = X.copy()
        out.data = scale_by_power_of_two(out.data, -shift)
        return out, shift
    out = scale_by_power_of_two(X, -shift)
    out.flags.writeable = False  # as check_X hands it over
    return out, shift
