"""What :meth:`BaseRanker.fit <rankers.BaseRanker.fit>` hands a ranker's ``_score``, and
what ``_score`` may hand back.

``fit`` validates ``X`` once and reads every column in one pass (extremes, constant
columns, the common rescale). What it learned there that a ranker may reuse comes to
``_score(X, y, context)`` as a :class:`FitContext`; a ranker that needs nothing of it
ignores the argument. ``_score`` returns one score per column, or :class:`Scores` when it
sorted them itself on the way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from rankers.exceptions import InvalidInputError

__all__ = ["FitContext", "Scores"]


@dataclass(frozen=True, eq=False)
class FitContext:
    """What :meth:`~rankers.BaseRanker.fit` computed before it called ``_score``.

    Every array describes the columns ``_score`` receives (the informative ones, in
    their order), unless its field says otherwise.

    Attributes
    ----------
    top : ndarray of shape (n_scored,)
        Largest absolute value of every column ``_score`` sees, at the scale it sees
        them (after the common rescale): a ranker that scales columns itself reads it
        instead of another pass over ``X``.
    scale_shift : int
        ``_score``'s ``X`` is the caller's ``X`` times ``2**-scale_shift`` (exact); 0 when
        ``fit`` did not rescale (a scale-dependent ranker, one that sets
        ``_rescales_columns``, or ``X`` already in [0.5, 1)). :meth:`to_data_units`
        converts values back.
    informative : ndarray of bool of shape (n_features_in_,)
        Which of all columns ``_score`` sees (``~constant_features_``).
    column_pass : object
        What the ranker's ``_column_pass`` hook returned beside the extremes, from
        ``fit``'s one pass over the caller's ``X`` (all columns, before the rescale; index
        it with ``informative``); None for the default hook.
    """

    top: np.ndarray
    scale_shift: int
    informative: np.ndarray
    column_pass: Any = None

    def to_data_units(self, values, power: int | None, what: str | None = None) -> np.ndarray:
        """``values`` computed on ``_score``'s ``X``, in the units of the caller's ``X``
        to the power ``power`` (nothing to do for 0 or None).

        ``fit`` converts the scores (``what`` names them); ``_score`` converts its other
        attributes that carry units (a kernel width, power 2; regression coefficients,
        power -1) with ``what=None``: those follow IEEE arithmetic (inf beyond float64's
        range, 0 or a subnormal below it) rather than refuse a ranking whose scores are
        fine.

        Raises
        ------
        InvalidInputError
            When ``what`` names the values (e.g. ``"VarianceRanker's scores"``) and one of
            them is not representable in float64 at the caller's scale.
        """
        values = np.asarray(values, dtype=np.float64)
        if not power or not self.scale_shift:
            return values
        with np.errstate(over="ignore", under="ignore"):  # checked below when it matters
            out = np.ldexp(values, power * self.scale_shift)
        if what is None:
            return out
        # only finite values can be lost here; anything else is the ranker's own doing
        given = np.isfinite(values) & (values != 0)
        lost = given & (~np.isfinite(out) | (np.abs(out) < np.finfo(np.float64).tiny))
        if lost.any():
            top = np.ldexp(1.0, self.scale_shift)
            raise InvalidInputError(
                f"{what} are in units of X**{power}: at the scale of this X (largest "
                f"absolute value about {top:.0e}) they are not representable in float64 "
                "(about 1e-308 to 1e308). Rescale X first (e.g. multiply it by a constant, "
                "or standardise it)"
            )
        return out


class Scores(NamedTuple):
    """``_score``'s scores with the order it sorted them in.

    A ranker that needed its scores' order for its own numbers (q-values) returns it, and
    ``fit``'s ranking checks it (one comparison of neighbours) instead of sorting again;
    it saves the sort, never changes the answer (:func:`rankers.ties.tie_groups`).
    """

    #: one score per column of ``_score``'s ``X``, higher = more relevant
    values: np.ndarray
    #: ``np.argsort(-values, kind="stable")``, or None
    order: np.ndarray | None = None
