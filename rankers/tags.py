"""What a ranker can do, read from the estimator itself: :class:`RankerTags`.

A pipeline asks a ranker's tags whether it needs a target, which kind of target, whether
sparse input stays sparse, whether its ``verbose`` draws a progress bar, whether it makes
random choices and whether its ranking ignores the scale of ``X`` -- never its registry
name or its docstring. The tags are scikit-learn's (``__sklearn_tags__``, read with
:func:`sklearn.utils.get_tags`), extended by the fields below; they belong to an
*instance*, so they can depend on its parameters (the NSGA-II weighting with only the
entropy criterion C4 needs no target).

Examples
--------
>>> import rankers
>>> tags = rankers.ranker_tags(rankers.get("laplacian"))
>>> tags.requires_y, tags.target_kind, tags.scale_invariant
(False, 'unsupervised', True)
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from sklearn.utils import Tags, TargetTags, get_tags

from rankers.exceptions import InvalidParameterError

__all__ = ["TARGET_KINDS", "RankerTags", "ranker_tags"]

#: values of :attr:`RankerTags.target_kind`
TARGET_KINDS = ("unsupervised", "classification", "regression", "both")


@dataclass(slots=True)
class RankerTags(Tags):
    """scikit-learn's estimator tags plus what a feature-ranking pipeline asks of a ranker.

    Every field of :class:`sklearn.utils.Tags` is there (``target_tags.required`` equals
    ``requires_y``), so scikit-learn's own checks read these tags as they read any.

    Parameters
    ----------
    requires_y : bool, default=False
        ``fit`` needs a target (a supervised ranker); unsupervised rankers accept and
        ignore one.
    target_kind : {"unsupervised", "classification", "regression", "both"}
        The kind of target the ranker takes ("both": classes or numbers).
    accepts_sparse : bool, default=False
        Sparse input is kept sparse; otherwise it is densified before scoring.
    progress : bool, default=False
        The ranker has a ``verbose`` parameter and ``verbose > 0`` draws a progress bar
        (tqdm, on stderr) while it fits.
    deterministic : bool, default=True
        The ranker makes no random choice at all (a randomised one is still reproducible
        under a fixed ``random_state``).
    scale_invariant : bool, default=False
        With the parameters set, multiplying all of ``X`` by one constant ``c > 0`` leaves
        the ranking unchanged.
    feature_scale_invariant : bool, default=False
        With the parameters set, multiplying any one feature by its own constant ``c > 0``
        leaves the ranking unchanged: the ranker does not read the features' units (a
        test statistic, a tree, a ranker that min-max scales each feature). False for a
        ranker whose scores follow each feature's spread (variance, the Laplacian score,
        spectral methods on raw distances), which rescaling a feature reorders.
    """

    requires_y: bool = False
    target_kind: str = "unsupervised"
    accepts_sparse: bool = False
    progress: bool = False
    deterministic: bool = True
    scale_invariant: bool = False
    feature_scale_invariant: bool = False

    @classmethod
    def extend(cls, tags: Tags, **ranker_fields) -> RankerTags:
        """``tags`` (scikit-learn's) with the ranker fields given; ``tags`` is not modified."""
        base = {f.name: getattr(tags, f.name) for f in fields(Tags)}
        out = cls(**base, **ranker_fields)
        out.target_tags.required = out.requires_y
        return out


def _target_kind(estimator, tags: Tags, requires_y: bool) -> str:
    kind = getattr(estimator, "target_kind", None)
    if kind in TARGET_KINDS:
        return kind
    if tags.estimator_type == "classifier":
        return "classification"
    if tags.estimator_type == "regressor":
        return "regression"
    return "both" if requires_y else "unsupervised"


def ranker_tags(estimator) -> RankerTags:
    """The tags of a ranker instance: what it needs and what it does.

    A :class:`~rankers.BaseRanker` (or any estimator whose ``__sklearn_tags__`` returns
    :class:`RankerTags`) answers for itself. For another estimator the tags are built
    from scikit-learn's tags and the class attributes a ranker plugin may declare
    (``requires_y``, ``target_kind``, ``accepts_sparse``, ``deterministic``,
    ``scale_invariant``, ``feature_scale_invariant``); what neither says falls back on: a
    target is required when scikit-learn's ``target_tags.required`` says so, the kind from
    its estimator type, deterministic when it has no ``random_state`` parameter, no progress
    bar, not scale invariant. An object without ``__sklearn_tags__`` (a duck-typed ranker) gets
    scikit-learn's defaults as its base.

    Parameters
    ----------
    estimator : estimator instance
        Fitted or not.

    Returns
    -------
    RankerTags

    Raises
    ------
    InvalidParameterError
        When ``estimator`` is a class rather than an instance (tags depend on parameters).

    Examples
    --------
    >>> from sklearn.feature_selection import SelectKBest
    >>> ranker_tags(SelectKBest()).requires_y
    True
    """
    if isinstance(estimator, type):
        raise InvalidParameterError(
            f"ranker_tags needs an estimator instance, e.g. {estimator.__name__}(), not the "
            "class: tags may depend on the parameters"
        )
    if hasattr(estimator, "__sklearn_tags__"):
        tags = get_tags(estimator)
    else:
        tags = Tags(estimator_type=None, target_tags=TargetTags(required=False))
    if isinstance(tags, RankerTags):
        return tags
    requires_y = bool(getattr(estimator, "requires_y", tags.target_tags.required))
    params = estimator.get_params(deep=False) if hasattr(estimator, "get_params") else {}
    return RankerTags.extend(
        tags,
        requires_y=requires_y,
        target_kind=_target_kind(estimator, tags, requires_y),
        accepts_sparse=bool(getattr(estimator, "accepts_sparse", tags.input_tags.sparse)),
        progress=False,
        deterministic=bool(getattr(estimator, "deterministic", "random_state" not in params)),
        scale_invariant=bool(getattr(estimator, "scale_invariant", False)),
        feature_scale_invariant=bool(getattr(estimator, "feature_scale_invariant", False)),
    )
