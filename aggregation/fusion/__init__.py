"""Rank fusion that survives failing members: one method per module, each registered by name.

Averaging ranks (:func:`~aggregation.combine.mean_rank`, Borda, Kemeny) lets a majority of
members that fail on a data set (rank its features at random, or worse) drown the member
that found the structure. The methods here reward a feature that *some* members rank high:

- :mod:`~aggregation.fusion.rra`: Robust Rank Aggregation (Kolde et al. 2012):
  :func:`rra`, whose scores are ``-log10 rho`` (the smallest order-statistic p-value of a
  feature's normalised ranks), and :func:`rra_pvalues`, the p-values corrected for the
  number of inputs (Bonferroni by default, the exact null distribution on request).
- :mod:`~aggregation.fusion.rrf`: reciprocal rank fusion (Cormack et al. 2009),
  :func:`rrf`: ``sum 1 / (c + rank)``, ``c = 60``.
- :mod:`~aggregation.fusion.best_rank`: :func:`best_rank`, a feature's best rank in any
  input, ties broken by its next-best ranks.

They share the conventions of :mod:`aggregation.combine` (which registers them in
:data:`~aggregation.combine.METHODS`, so a config selects them by name): rankings over one
feature set in, aligned by name; ties on input count as average ranks; a
:class:`~aggregation.ranking.Ranking` out, listing the features in the first input's
``names`` order, higher scores better, and a tie rule that decides the order only.

Names are imported on first access, so importing this package costs nothing.
"""

from __future__ import annotations

from typing import Any

from rankers._lazy import attach

#: submodule -> the public names it defines: the package's one list of its names
_EXPORTS = {
    "best_rank": ("best_rank",),
    "rra": ("rra", "rra_pvalues"),
    "rrf": ("rrf",),
}

_getattr, _dir, __all__ = attach(__name__, _EXPORTS)


def __getattr__(name: str) -> Any:
    return _getattr(name)


def __dir__() -> list[str]:
    return _dir()
