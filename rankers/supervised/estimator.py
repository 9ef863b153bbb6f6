"""Any scikit-learn estimator as a ranker: its coefficients, impurity or permutation importances."""

from __future__ import annotations

from numbers import Integral
from typing import ClassVar

import numpy as np
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.inspection import permutation_importance
from sklearn.utils import check_random_state

from rankers.base import TASKS, BaseRanker
from rankers.exceptions import InvalidInputError, InvalidParameterError
from rankers.preprocessing import standardise
from rankers.utils.param_validation import HasMethods, Interval, StrOptions
from rankers.validation import check_n_jobs

__all__ = ["EstimatorImportanceRanker"]

IMPORTANCES = ("auto", "coef", "feature_importances", "permutation")


class EstimatorImportanceRanker(BaseRanker):
    """Rank features by the importance a fitted scikit-learn model gives them.

    The model (a clone of ``estimator``) is fitted on ``X`` (z-scored first when
    ``standardize``, so that linear coefficients compare across features) and the
    features are scored by

    - ``"feature_importances"``: its ``feature_importances_`` (trees, forests, boosting);
    - ``"coef"``: the magnitude of its ``coef_``, summed over classes or targets (the
      L1 norm, as :class:`sklearn.feature_selection.SelectFromModel` does);
    - ``"permutation"``: :func:`sklearn.inspection.permutation_importance` on the
      training data (the mean drop of ``scoring`` when the feature is shuffled,
      ``n_repeats`` times); any model, including one without either attribute;
    - ``"auto"``: the first of those the fitted model has.

    For a :class:`~sklearn.pipeline.Pipeline` the attributes of its last step are used
    when that step sees the features as given (same count), else permutation importance.
    So a user's own model is a ranker in one line:
    ``rankers.get("estimator_importance", estimator=LassoCV())``.

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.
    estimator : scikit-learn estimator or None, default=None
        The model. None: :class:`~sklearn.linear_model.LogisticRegression` (``C=1``,
        ``max_iter=1000``) for a class target, :class:`~sklearn.linear_model.RidgeCV`
        for a numeric one.
    importance : {"auto", "coef", "feature_importances", "permutation"}, default="auto"
        Which importance scores the features (see above).
    standardize : bool, default=True
        Fit the model on z-scores of the features instead of ``X`` as given.
    n_repeats : int, default=5
        Shuffles per feature for permutation importance.
    scoring : str, callable or None, default=None
        Scorer of permutation importance (None: the model's ``score``).
    n_jobs : int or None, default=None
        Parallel jobs of permutation importance (see :func:`rankers.validation.check_n_jobs`).
    random_state : int, RandomState instance or None, default=None
        Seeds the shuffles, and the model's own ``random_state`` parameters that are None.
    task : {"auto", "classification", "regression"}, default="auto"
        The kind of target: chosen from ``y`` (``"auto"``: a numeric target whose few
        values each repeat, such as counts or scores, is read as class labels), or the
        kind named (``"regression"`` fits such a target as a quantity).

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        The importances (higher = more relevant); constant features get the lowest.
    importance_ : str
        Which importance was used.
    estimator_ : estimator
        The fitted model (on z-scores when ``standardize``).
    importances_std_ : ndarray of shape (n_features,)
        Only for permutation importance: the standard deviation over the repeats.
    ranking_ : ndarray of shape (n_features,)
        Feature indices, best first.

    Notes
    -----
    The cost is the model's fit, plus ``n_repeats * n_features`` scorings for permutation
    importance. Coefficients of a model on correlated features can split an effect
    between them: rank with care, or prefer permutation importance on held-out data.

    See Also
    --------
    rankers.supervised.forest.RandomForestRanker : a random forest's importances, with
        scale handling and reproducible trees.
    sklearn.feature_selection.SelectFromModel : selection by a threshold on the same
        importances.

    References
    ----------
    .. [1] L. Breiman, "Random Forests", Machine Learning 45, 2001 (permutation
       importance).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from rankers.supervised.estimator import EstimatorImportanceRanker
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50, 3))
    >>> y = 3 * X[:, 2] - X[:, 0]
    >>> est = EstimatorImportanceRanker(estimator=LinearRegression(), standardize=False)
    >>> est.fit(X, y).ranking_.tolist()
    [2, 0, 1]
    """

    name = "estimator_importance"
    target_kind = "both"
    requires_y = True
    accepts_sparse = False
    deterministic = False
    scale_invariant = True
    reference: ClassVar[str] = "A scikit-learn model's coefficients or importances"
    _constant_score: ClassVar[float] = 0.0

    _parameter_constraints: ClassVar[dict] = {
        **BaseRanker._parameter_constraints,
        "estimator": [HasMethods(["fit"]), None],
        "importance": [StrOptions(set(IMPORTANCES))],
        "standardize": ["boolean"],
        "n_repeats": [Interval(Integral, 1, None, closed="left")],
        "scoring": [str, callable, None],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "task": [StrOptions(set(TASKS))],
    }

    def __init__(
        self,
        k=None,
        estimator=None,
        importance: str = "auto",
        standardize: bool = True,
        n_repeats: int = 5,
        scoring=None,
        n_jobs: int | None = None,
        random_state=None,
        task: str = "auto",
    ):
        self.k = k
        self.estimator = estimator
        self.importance = importance
        self.standardize = standardize
        self.n_repeats = n_repeats
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.task = task

    def _score_units(self) -> int | None:
        # on z-scores every importance is unit-free; on raw X a coefficient carries the
        # inverse units of its feature, and a model may depend on the scale
        return 0 if self.standardize else None

    def _feature_scale_invariant(self) -> bool:
        return bool(self.standardize)  # the model sees z-scores

    def _model(self):
        if self.estimator is not None:
            model = clone(self.estimator)
        elif self.task_ == "regression":
            from sklearn.linear_model import RidgeCV

            model = RidgeCV()
        else:
            from sklearn.linear_model import LogisticRegression

            model = LogisticRegression(C=1.0, max_iter=1000)
        if self.random_state is not None:
            seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
            unset = {
                key: seed
                for key, value in model.get_params(deep=True).items()
                if key.split("__")[-1] == "random_state" and value is None
            }
            model.set_params(**unset)
        if self.task_ == "classification" and is_regressor(model):
            raise InvalidInputError(
                f"y holds class labels but the estimator {type(model).__name__} is a "
                "regressor; pass a classifier or a numeric target"
            )
        if self.task_ == "regression" and is_classifier(model):
            raise InvalidInputError(
                f"y is numeric but the estimator {type(model).__name__} is a classifier; "
                "pass a regressor or class labels"
            )
        return model

    def _score(self, X, y, context):
        n = X.shape[1]
        Z = standardise(X) if self.standardize else X
        model = self._model().fit(Z, y)
        self.estimator_ = model
        how, values = self.importance, None
        if how == "auto":
            found = _attribute_importance(model, n)
            how, values = found if found is not None else ("permutation", None)
        elif how != "permutation":
            values = _own(model, how, n)
            if values is None:
                raise InvalidParameterError(
                    f"importance={how!r} but the fitted {type(model).__name__} has no usable "
                    f"{how}_ (one finite value per feature); use 'permutation' or 'auto'"
                )
        if how == "permutation":
            result = permutation_importance(
                model,
                Z,
                y,
                scoring=self.scoring,
                n_repeats=self.n_repeats,
                n_jobs=check_n_jobs(self.n_jobs),
                random_state=self.random_state,
            )
            values = result.importances_mean
            self.importances_std_ = self._to_all_features(result.importances_std, 0.0)
        self.importance_ = how
        return np.asarray(values, dtype=np.float64)


def _final_step(model):
    steps = getattr(model, "steps", None)
    return steps[-1][1] if steps else model


def _own(model, how: str, n: int):
    """``model``'s (last step's) importance ``how`` as one value per feature, or None."""
    step = _final_step(model)
    values = getattr(step, f"{how}_", None)
    if values is None:
        return None
    values = np.asarray(values, dtype=np.float64)
    if how == "coef":
        values = np.abs(values)
        if values.ndim == 2:  # one row per class or target
            values = values.sum(axis=0)
    if values.shape != (n,) or not np.isfinite(values).all():
        return None
    return values


def _attribute_importance(model, n: int):
    """("feature_importances" | "coef", values) of the fitted model, or None."""
    for how in ("feature_importances", "coef"):
        values = _own(model, how, n)
        if values is not None:
            return how, values
    return None
