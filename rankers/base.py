"""The ranker contract: every feature ranker in moweights is a :class:`BaseRanker`."""

from __future__ import annotations

import warnings
from abc import abstractmethod
from numbers import Integral
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils._param_validation import InvalidParameterError as _SkInvalidParameterError
from sklearn.utils.validation import check_is_fitted

from rankers.exceptions import (
    ConstantFeatureWarning,
    InvalidInputError,
    InvalidParameterError,
    MoweightsError,
)
from rankers.validation import (
    check_X,
    check_y,
    default_feature_names,
    target_task,
    warn_few_samples,
)

__all__ = ["BaseRanker"]


class BaseRanker(SelectorMixin, BaseEstimator):
    """Base class of feature rankers: a scorer plus top-k selection.

    Subclasses implement :meth:`_score` and list their parameters in ``__init__``
    (which only stores them, as in scikit-learn). :meth:`fit` validates the input once,
    sets constant features aside (they get the lowest score and a
    :class:`~rankers.exceptions.ConstantFeatureWarning`), calls :meth:`_score` on the
    informative features and derives the ranking.

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
        Feature indices, best first. Ties are broken by lower index, except that
        constant features always come last.
    constant_features_ : ndarray of bool of shape (n_features_in_,)
        Which features were constant in the training data.
    statistic_ : ndarray of shape (n_features_in_,)
        Only for rankers whose own statistic is "lower is better" (e.g. the Laplacian
        score); ``scores_`` is a decreasing transform of it.
    n_features_in_ : int
        Number of features seen in :meth:`fit`.
    feature_names_in_ : ndarray of str
        Column names seen in :meth:`fit`, when ``X`` had string column names.

    Notes
    -----
    Class attributes describe a ranker to the registry: ``requires_y`` (bool),
    ``target_kind`` ("unsupervised", "classification", "regression" or "both"),
    ``accepts_sparse`` (bool: sparse input is kept sparse; otherwise it is densified),
    ``deterministic`` (bool: the method makes no random choice at all; randomised
    rankers are still reproducible under a fixed ``random_state``) and ``reference``.
    Unsupervised rankers accept and ignore ``y`` so they fit in pipelines.

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
    reference: ClassVar[str] = ""
    #: registry name (set by the registry for rankers registered with a decorator)
    name: ClassVar[str | None] = None
    #: score given to constant features; a ranker whose informative scores can fall
    #: below 0 sets the lowest value its scores can take
    _constant_score: ClassVar[float] = 0.0

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
        Xc, names = check_X(X, accepts_sparse=self.accepts_sparse)
        n = Xc.shape[1]
        self.n_features_in_ = n
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        yc = self._check_target(y, Xc.shape[0])
        if yc is None:  # check_y warns about supervised targets itself
            warn_few_samples(Xc.shape[0], stacklevel=3)
        self._check_input(Xc)

        constant = _constant_columns(Xc)
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
        if informative.any():
            Xi = Xc[:, informative] if constant.any() else Xc
            s = np.asarray(self._score(Xi, yc), dtype=np.float64)
            if s.shape != (int(informative.sum()),) or not np.isfinite(s).all():
                raise MoweightsError(
                    f"{type(self).__name__}._score returned invalid scores (shape {s.shape}, "
                    "expected one finite value per feature); this is a bug in the ranker"
                )
            scores[informative] = s
            if constant.any():
                scores[constant] = min(float(self._constant_score), float(s.min()))
        self.scores_ = scores
        # primary: higher score; then informative before constant; then lower index
        self.ranking_ = np.lexsort((np.arange(n), constant, -scores))
        transform = getattr(self, "_statistic_from_scores", None)
        if transform is not None:
            self.statistic_ = transform(scores)
        return self

    @abstractmethod
    def _score(self, X, y) -> np.ndarray:
        """Return one score per column of ``X`` (higher = more relevant).

        ``X`` holds only the non-constant features, is float64 and read-only; ``y`` is
        None for unsupervised rankers, class codes 0..C-1 for classification and floats
        for regression (see ``task_`` when ``target_kind == "both"``).
        """

    def _check_input(self, X) -> None:
        """Hook: ranker-specific checks of the whole validated ``X`` (all columns).

        Runs before constant features are set aside, so an error can name any column
        (see :meth:`_feature_labels`). The default accepts everything.
        """

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
        try:
            self._validate_params()
        except _SkInvalidParameterError as exc:
            raise InvalidParameterError(str(exc)) from None

    def _check_target(self, y, n_samples: int):
        if not self.requires_y:
            return None
        if y is None:
            raise InvalidInputError(
                f"{type(self).__name__} requires y to be passed, but the target y is None: "
                "it is supervised; pass fit(X, y) or choose an unsupervised ranker"
            )
        kind = self.target_kind
        if kind == "both":
            # unreadable or multi-output targets: check_y says what is wrong with them
            kind = target_task(y) or "classification"
        self.task_ = kind
        return check_y(y, n_samples, kind=kind, ranker=self.name or type(self).__name__)

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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = self.requires_y
        # sparse input is always accepted: kept sparse where accepts_sparse, else densified
        tags.input_tags.sparse = True
        tags.input_tags.allow_nan = False
        # every ranker is reproducible under a fixed random_state (our contract), so
        # scikit-learn's determinism checks apply to the randomised ones too
        tags.non_deterministic = False
        return tags


def _constant_columns(X) -> np.ndarray:
    if sp.issparse(X):
        lo = X.min(axis=0).toarray().ravel()
        hi = X.max(axis=0).toarray().ravel()
    else:
        lo = X.min(axis=0)
        hi = X.max(axis=0)
    return np.asarray(lo == hi)
