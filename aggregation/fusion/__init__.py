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

Each module is named after its function, as in ranx's ``fusion/``: the package imports
the three functions itself (``aggregation.fusion.rra`` is the function; the module is
``sys.modules["aggregation.fusion.rra"]``), since a lazy name would be shadowed by its
submodule once imported. :mod:`aggregation` still imports this package on first access.
"""

from __future__ import annotations

from aggregation.fusion.best_rank import best_rank
from aggregation.fusion.rra import rra, rra_pvalues
from aggregation.fusion.rrf import rrf

__all__ = ["best_rank", "rra", "rra_pvalues", "rrf"]
