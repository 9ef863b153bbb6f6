"""Federated per-site ranking: rank each site's data where it lives, aggregate only rankings.

The multiobjective weighting paper (§1, §2.3, §3) ranks horizontally distributed data that
cannot be pooled: each location ranks its own features and the local rankings are
aggregated, e.g. into a generic ranking, whose single block signals incompatible sites.

Two steps, kept apart on purpose, each in its module:

1. :mod:`~aggregation.federated.sites`: :func:`rank_one_site` (run per site, through
   joblib, so a Dask cluster can take over with ``joblib.parallel_config(backend="dask")``)
   takes the site's data -- a DataFrame, or a zero-argument loader called inside the job
   (a site's file: :class:`moweights.data.SiteFile`, which reads it there) --
   fits a fresh clone of the ranker and returns a :class:`~aggregation.Ranking`.
2. :mod:`~aggregation.federated.aggregate`: :func:`aggregate_rankings` and
   :func:`aggregate_hierarchy` receive ``{site: Ranking}`` and nothing else.

:func:`rank_sites` (:mod:`~aggregation.federated.rank`) runs both in one process and returns
a :class:`SiteRankings`. This package computes on in-memory data only and reads no file:
a path given as a site is refused with an :class:`~rankers.exceptions.InvalidInputError`
naming what to use instead. Reading files, and with it the Flower apps whose ClientApp
reads a site's file (step 1 at each site; the ServerApp is step 2) and their local
deployment, live in :mod:`moweights.federated`, whose
:func:`~moweights.federated.rank_sites` accepts paths.

**What leaves a site**: its :class:`~aggregation.Ranking` (feature names, one score per
feature, the method's name and the order) and its number of rows (for ``weights="size"``,
like Flower's ``num_examples``); for a failed site, the error message instead (with
``on_error="raise"``, the exception). No row, column of values or fitted model leaves the
per-site job. The error message is kept whole here, as it stays in this process; across
machines (:mod:`moweights.federated.flower`) a site sends only the error's type and a
fixed message.

Sites whose feature sets differ stop the run (``on_mismatch="raise"``) or are dropped from
the aggregation and listed in ``failed`` (``on_mismatch="drop"``: the sites holding the
feature set that more than half of the sites hold are kept).

Every site puts its feature columns in natural sort order of their names (``x2`` before
``x10``) before fitting, so results depend neither on a site's column order nor on which
site comes first, and sites agree on one order without talking to each other.

Names are imported on first access, so importing this package costs nothing.
"""

from __future__ import annotations

from typing import Any

from rankers.utils.lazy import attach

#: submodule -> the public names it defines: the package's one list of its names
_EXPORTS = {
    "aggregate": (
        "AGGREGATES",
        "HierarchicalRanking",
        "aggregate_hierarchy",
        "aggregate_rankings",
        "site_similarity",
    ),
    "rank": ("SiteRankings", "rank_sites"),
    "sites": ("SiteData", "rank_one_site", "split_sites"),
}

_getattr, _dir, __all__ = attach(__name__, _EXPORTS)


def __getattr__(name: str) -> Any:
    return _getattr(name)


def __dir__() -> list[str]:
    return _dir()
