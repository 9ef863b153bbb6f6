"""moweights-mad: a ranker plugin for moweights, registered through an entry point."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from rankers import BaseRanker, InvalidParameterError

__all__ = ["MADRanker"]


class MADRanker(BaseRanker):
    """Rank features by their median absolute deviation (a spread robust to outliers).

    The score of a feature is ``median(|x - median(x)|)``, optionally divided by the
    feature's absolute median (``relative=True``, a unit-free spread). Higher = more spread
    = more relevant, as for every ranker.

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.
    relative : bool, default=False
        Divide each deviation by the absolute median of the feature.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        The median absolute deviation of each feature.
    ranking_ : ndarray of shape (n_features,)
        Feature indices, best first.

    Examples
    --------
    >>> import numpy as np, rankers
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 1.1], [100.0, 1.2]])
    >>> rankers.get("mad").fit(X).ranking_.tolist()
    [0, 1]
    """

    # what a pipeline asks of a ranker, read by rankers.ranker_tags (docs: "Capabilities")
    target_kind = "unsupervised"  # fit(X) needs no y
    accepts_sparse = False  # sparse input is densified before _score
    deterministic = True  # no random choice
    scale_invariant = True  # multiplying X by c > 0 leaves the ranking as it is
    reference: ClassVar[str] = "Hampel (1974), the median absolute deviation"
    complexity: ClassVar[str] = "O(n d) (a median per feature)"

    def __init__(self, k=None, relative: bool = False):
        # like scikit-learn: store the parameters, nothing else
        self.k = k
        self.relative = relative

    def _score_units(self) -> int:
        # scores_ multiply by c when X does (by c**0 for the relative MAD): fit then works
        # on X rescaled by a power of two, exactly, and converts the scores back
        return 0 if self.relative else 1

    def _score(self, X, y, context):
        # X arrives validated (finite float array, constant features set aside); context
        # (rankers.FitContext) is what fit computed on the way -- the columns' largest
        # absolute values, the power of two X was divided by -- which this ranker needs
        # none of
        if not isinstance(self.relative, bool):
            raise InvalidParameterError(f"relative must be True or False; got {self.relative!r}")
        median = np.median(X, axis=0)
        mad = np.median(np.abs(X - median), axis=0)
        if self.relative:
            with np.errstate(divide="ignore", invalid="ignore"):
                mad = np.where(median != 0, mad / np.abs(median), 0.0)
        return mad
