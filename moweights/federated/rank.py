"""Federated per-site ranking of sites whose data are files: paths become site loaders.

:mod:`aggregation.federated` computes on in-memory data only. These two entry points take
what it takes and, besides, a path per site: each path becomes a
:class:`~moweights.data.SiteFile`, a loader that reads the file inside the site's job
(a joblib or Dask worker), never in the process that hands out the jobs. Everything else
is :func:`aggregation.federated.rank_sites` and
:func:`aggregation.federated.rank_one_site`, unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from aggregation.federated.rank import SiteRankings
from aggregation.federated.rank import rank_sites as _rank_sites_in_memory
from aggregation.federated.sites import rank_one_site as _rank_one_site_in_memory
from aggregation.ranking import Ranking
from moweights.data import SiteFile

__all__ = ["rank_one_site", "rank_sites", "site_loader"]


def site_loader(data: Any) -> Any:
    """A site's data as :mod:`aggregation.federated` takes it: a path becomes a
    :class:`~moweights.data.SiteFile` (read when the site's job calls it); a
    DataFrame, a loader or anything else is passed on as it is (and checked there)."""
    if isinstance(data, (str, os.PathLike)):
        return SiteFile(data)
    return data


def rank_sites(
    sites: Mapping[str, Any] | pd.DataFrame,
    ranker: Any,
    params: Mapping[str, Any] | None = None,
    *,
    target: str | None = None,
    site_column: str | None = None,
    aggregate: str | Sequence[str] = ("generic", "mean_rank"),
    weights: str | Mapping[str, float] | None = None,
    n_jobs: int | None = None,
    random_state: Any = None,
    on_error: str = "report",
    on_mismatch: str = "raise",
    verbose: int = 0,
    progress: Callable[[int], None] | None = None,
) -> SiteRankings:
    """Rank every site's data where it lives, then aggregate the rankings; sites may be files.

    :func:`aggregation.federated.rank_sites`, with one addition: a site may be given as a
    path (``.csv``, ``.tsv``/``.tab``, optionally compressed, or ``.parquet``), read inside
    the site's job by a :class:`~moweights.data.SiteFile`. A file that is missing or
    unreadable fails its site (listed in ``failed``, or raised with ``on_error="raise"``),
    as any other error of a site does; the sites' feature sets are compared from their
    rankings' names. Every other argument, the result and the errors are those of
    :func:`aggregation.federated.rank_sites`.

    Parameters
    ----------
    sites : mapping or DataFrame
        Site name -> path, DataFrame or zero-argument loader; or one DataFrame split by
        ``site_column``.
    ranker : str or estimator
        Registry name (with ``params``) or an unfitted estimator, cloned per site.
    params : mapping, optional
        Ranker parameters.
    target, site_column, aggregate, weights, n_jobs, random_state
        As in :func:`aggregation.federated.rank_sites`.
    on_error, on_mismatch, verbose, progress
        As in :func:`aggregation.federated.rank_sites`.

    Returns
    -------
    SiteRankings

    Examples
    --------
    >>> import numpy as np, pandas as pd, tempfile, pathlib
    >>> rng = np.random.default_rng(0)
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> for s in ("north", "south"):
    ...     frame = pd.DataFrame(rng.normal(size=(30, 3)) * [3, 2, 1], columns=list("abc"))
    ...     frame.to_csv(folder / f"{s}.csv", index=False)
    >>> res = rank_sites({s: folder / f"{s}.csv" for s in ("north", "south")}, "variance")
    >>> print(res.generic)
    {a} > {b} > {c}
    """
    if isinstance(sites, Mapping):
        sites = {name: site_loader(data) for name, data in sites.items()}
    return _rank_sites_in_memory(
        sites,
        ranker,
        params,
        target=target,
        site_column=site_column,
        aggregate=aggregate,
        weights=weights,
        n_jobs=n_jobs,
        random_state=random_state,
        on_error=on_error,
        on_mismatch=on_mismatch,
        verbose=verbose,
        progress=progress,
    )


def rank_one_site(
    data: Any,
    ranker: Any,
    params: Mapping[str, Any] | None = None,
    target: str | None = None,
    random_state: int | None = None,
    *,
    features: Sequence[str] | None = None,
) -> Ranking:
    """Rank one site's features where the data lives; the site may be a file.

    :func:`aggregation.federated.rank_one_site`, with ``data`` also a path (read here, by a
    :class:`~moweights.data.SiteFile`). Every other argument, the result and the
    errors are those of :func:`aggregation.federated.rank_one_site`.

    Parameters
    ----------
    data : path, DataFrame or callable
        The site's file (csv, tsv or parquet), its table, or a zero-argument callable
        giving the table.
    ranker : str or estimator
        Registry name (with ``params``) or an unfitted estimator (cloned).
    params, target, random_state, features
        As in :func:`aggregation.federated.rank_one_site`.

    Returns
    -------
    Ranking
    """
    return _rank_one_site_in_memory(
        site_loader(data), ranker, params, target, random_state, features=features
    )
