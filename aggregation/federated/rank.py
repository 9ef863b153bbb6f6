"""Federated per-site ranking in one process: :func:`rank_sites` and its result.

:func:`rank_sites` runs the per-site step (:func:`~aggregation.federated.sites.rank_one_site`,
one joblib task per site) and then the aggregation of the rankings
(:func:`~aggregation.federated.aggregate.aggregate_rankings`); :class:`SiteRankings` holds
the per-site rankings, their aggregates, the site similarity and the compatibility verdict.
What leaves a site, and how mismatched sites are handled: see :mod:`aggregation.federated`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from joblib import delayed

from aggregation._tasks import check_progress, run_in_order
from aggregation.combine import check_methods
from aggregation.federated.aggregate import (
    HierarchicalRanking,
    aggregate_hierarchy,
    aggregate_rankings,
    site_similarity,
)
from aggregation.federated.sites import (
    SiteData,
    check_same_features,
    make_ranker,
    odd_sites,
    site_features,
    site_job,
    site_sources,
    spawn_seeds,
)
from aggregation.ranking import AnyRanking, GenericRanking, Ranking
from rankers.exceptions import InvalidInputError, InvalidParameterError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["SiteRankings", "rank_sites"]


# ------------------------------------------------------------------ the result
@dataclass(frozen=True, repr=False)
class SiteRankings:
    """The outcome of :func:`rank_sites`: per-site rankings, their aggregates and a verdict.

    Attributes
    ----------
    ranker : str
        Name of the ranker used at every site.
    rankings : dict
        Site -> :class:`~aggregation.Ranking`, for the sites that were ranked, in site order.
    aggregated : dict
        Method -> aggregated ranking (GenericRanking for "generic", else Ranking).
    similarity : dict
        ``"s_measure"`` and ``"spearman"`` -> DataFrame (site x site), labelled by site.
        Spearman is NaN for a site whose ranking ties every feature (undefined there).
    generic : GenericRanking
        The generic ranking of all ranked sites (computed whether or not "generic" was
        asked for in ``aggregate``): it gives ``s`` and the ``compatible`` verdict.
    failed : dict
        Site -> ``"ErrorType: message"`` for sites whose loading or ranking raised, or that
        were dropped for their feature set (``"FeatureMismatchError: dropped, ..."``).
    sizes : dict
        Site -> number of rows (for failed sites only when the rows were known up front).
    """

    ranker: str
    rankings: dict[str, Ranking]
    aggregated: dict[str, AnyRanking]
    similarity: dict[str, pd.DataFrame]
    generic: GenericRanking
    failed: dict[str, str] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)

    @property
    def s(self) -> int:
        """Number of blocks of the sites' generic ranking (the paper's similarity ``s``)."""
        return len(self.generic)

    @property
    def compatible(self) -> bool | None:
        """Whether the sites' rankings are compatible, in the paper's sense (§3).

        False exactly when the generic ranking of the ranked sites has a single block
        (``s == 1``): no proper prefix of the rankings holds the same set of features at
        every site, which the paper reads as statistical differences between the sites'
        data. True when ``s >= 2``: at least one cut agrees at every site -- the weakest
        agreement; ``s`` and ``similarity`` say how much more. None when fewer than two
        sites were ranked or there is a single feature (nothing to compare). Note that sites
        whose own rankings tie every feature also give one block.
        """
        if len(self.rankings) < 2 or self.generic.n_features < 2:
            return None
        return self.s > 1

    @classmethod
    def from_rankings(
        cls,
        ranker: str,
        rankings: Mapping[str, Ranking],
        aggregated: Mapping[str, AnyRanking],
        failed: Mapping[str, str] | None = None,
        sizes: Mapping[str, int] | None = None,
    ) -> SiteRankings:
        """The result for these per-site rankings and aggregates: the site similarity and
        the sites' generic ranking are computed here (as :func:`rank_sites` and the Flower
        server both need)."""
        generic = aggregated.get("generic") or aggregate_rankings(rankings, "generic")["generic"]
        return cls(
            ranker=ranker,
            rankings=dict(rankings),
            aggregated=dict(aggregated),
            similarity=site_similarity(rankings),
            generic=generic,
            failed=dict(failed or {}),
            sizes=dict(sizes or {}),
        )

    def hierarchy(self, regions: Mapping[str, Any], method: str = "generic") -> HierarchicalRanking:
        """Aggregate sites -> regions -> global; see :func:`aggregate_hierarchy`."""
        return aggregate_hierarchy(regions, self, method=method)

    def to_frame(self) -> pd.DataFrame:
        """One row per feature, in the first aggregate's order; ranks are 1 = best.

        Columns (two levels): ``("generic", "block")`` the feature's block number in
        :attr:`generic`, ``("aggregated", method)`` its rank in each aggregate, and
        ``("site", name)`` its rank at each ranked site (ties share their average rank).
        """
        first = next(iter(self.aggregated.values()))
        order = first.order if isinstance(first, Ranking) else list(first.names)
        cols: dict[tuple[str, str], pd.Series] = {
            ("generic", "block"): self.generic.to_frame().set_index("feature")["block"]
        }
        cols.update({("aggregated", m): r.ranks for m, r in self.aggregated.items()})
        cols.update({("site", s): r.ranks for s, r in self.rankings.items()})
        frame = pd.DataFrame(cols).loc[order]
        frame.index.name = "feature"
        frame.columns.names = ["kind", "name"]
        return frame

    def summary(self, top: int = 10) -> str:
        """A readable report: sites, verdict, aggregates (best ``top``), similarity, failures."""
        q, n = len(self.rankings), self.generic.n_features
        sized = ", ".join(f"{s} ({self.sizes[s]})" if s in self.sizes else s for s in self.rankings)
        verdict = {
            None: "not assessed (fewer than two sites or one feature)",
            True: f"yes: s = {self.s} blocks agree at every site",
            False: "NO: the generic ranking is one block (the paper's incompatible sites)",
        }[self.compatible]
        text = str(self.generic)
        lines = [
            f"SiteRankings: ranker {self.ranker!r}, {q} of {q + len(self.failed)} site(s) "
            f"ranked, {n} features",
            f"  sites (rows): {sized}",
            f"  generic ranking (s = {self.s}): "
            + (text if len(text) <= 200 else text[:197] + "..."),
            f"  compatible: {verdict}",
        ]
        for m, r in self.aggregated.items():
            if m != "generic":
                best = r.order[:top]
                more = f", ... (+{n - len(best)})" if n > len(best) else ""
                lines.append(f"  {m}: " + ", ".join(best) + more)
        if q > 1:
            off = ~np.eye(q, dtype=bool)
            for key, label in (("s_measure", "s-measure"), ("spearman", "Spearman")):
                vals = self.similarity[key].to_numpy(dtype=float)[off]
                lines.append(
                    f"  site similarity, {label} over {q * (q - 1) // 2} pair(s): "
                    f"min {np.nanmin(vals):.3g}, mean {np.nanmean(vals):.3g}"
                    if np.isfinite(vals).any()
                    else f"  site similarity, {label}: undefined"
                )
        lines += [f"  FAILED {s}: {e}" for s, e in self.failed.items()]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"SiteRankings(ranker={self.ranker!r}, sites={len(self.rankings)}, "
            f"failed={len(self.failed)}, features={self.generic.n_features}, s={self.s}, "
            f"compatible={self.compatible})"
        )

    def plot(self, measure: str = "s_measure", annotate: bool = True) -> Figure:
        """Heat map of the site similarity (``measure``) above the generic ranking's strip."""
        import matplotlib.pyplot as plt

        from aggregation.plots import plot_generic, plot_pairwise

        if measure not in self.similarity:
            raise InvalidParameterError(
                f"measure must be one of {', '.join(self.similarity)}, got {measure!r}"
            )
        q = len(self.rankings)
        heights = (1.8 + 0.5 * q, 2.2)
        fig, (top, bottom) = plt.subplots(
            2, 1, figsize=(10, sum(heights)), height_ratios=heights, layout="constrained"
        )
        plot_pairwise(
            self.similarity[measure],
            ax=top,
            annotate=annotate,
            title=f"site similarity ({measure})",
        )
        plot_generic(self.generic, ax=bottom, title=f"generic ranking of the sites: s = {self.s}")
        return fig


def rank_sites(
    sites: Mapping[str, SiteData] | pd.DataFrame,
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
    """Rank every site's data where it lives, then aggregate the rankings (docs/design.md,
    "Federated per-site ranking").

    Parameters
    ----------
    sites : mapping or DataFrame
        Site name -> DataFrame or zero-argument loader (called inside the site's job: a
        site's file is ``moweights.data.SiteFile(path)``, read there); or one DataFrame
        split by ``site_column``. Names become str. A path is refused (InvalidInputError):
        aggregation reads no files; :func:`moweights.federated.rank_sites` accepts paths.
    ranker : str or estimator
        Registry name (with ``params``) or an unfitted estimator, cloned per site. A bad name
        or parameter raises here, before any site runs.
    params : mapping, optional
        Ranker parameters.
    target : str, optional
        Target column at every site: dropped from the features and passed as ``y``.
    site_column : str, optional
        With one DataFrame: the column naming each row's site (sites sorted by its values;
        not a feature).
    aggregate : str or sequence of str, default=("generic", "mean_rank")
        Methods of :func:`aggregate_rankings`.
    weights : None, "size" or mapping site -> float
        For "weighted_mean_rank": None or "size" weight each site by its number of rows.
    n_jobs : int, optional
        Sites ranked in parallel through joblib; inside ``joblib.parallel_config(
        backend="dask")`` the sites run on the Dask cluster.
    random_state : None, int, Generator or SeedSequence
        Spawns one seed per site (by site order, so results do not depend on ``n_jobs`` or
        the backend); it is given to a ranker whose own ``random_state`` is None.
    on_error : {"report", "raise"}, default="report"
        A site whose loading or ranking raises is listed in ``failed`` and the others are
        aggregated; "raise" re-raises the first error (noting the site). The message is kept
        whole in ``failed``: it stays in this process (the Flower server, where results are
        shared, gets a fixed one; see :mod:`moweights.federated.flower`).
    on_mismatch : {"raise", "drop"}, default="raise"
        Sites whose feature sets differ: "raise" stops every site (FeatureMismatchError);
        "drop" keeps the sites holding the feature set that more than half of the sites
        hold and lists the others in ``failed`` (``"FeatureMismatchError: dropped, ..."``,
        naming their missing and extra features). Sites are ranked first and compared by
        their rankings' feature names, as the Flower server does. Without such a majority
        (two sites, or two camps) no site is the odd one and the mismatch is raised.
    verbose : int, default=0
        Show a progress bar over the sites when > 0 (and ``progress`` is None).
    progress : callable, optional
        Called with 1 as each site finishes (loaded and ranked, or failed), in site order:
        one call per site, e.g. a ``tqdm(total=len(sites))`` bar's ``update``.

    Returns
    -------
    SiteRankings

    Raises
    ------
    FeatureMismatchError
        Sites with different feature sets (matched by name): every site's missing and extra
        features at once. DataFrame sites are checked before ranking; loader sites
        after, from their rankings' names. With ``on_mismatch="drop"``, only when no
        feature set is held by more than half of the sites.
    InvalidInputError
        When a site is given as a path, or no site could be ranked (each site's error is
        listed).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> sites = {s: pd.DataFrame(rng.normal(size=(30, 3)) * [3, 2, 1], columns=list("abc"))
    ...          for s in ("north", "south")}
    >>> res = rank_sites(sites, "variance")
    >>> print(res.generic), res.compatible
    {a} > {b} > {c}
    (None, True)
    """
    if on_error not in ("report", "raise"):
        raise InvalidParameterError(f"on_error must be 'report' or 'raise', got {on_error!r}")
    if on_mismatch not in ("raise", "drop"):
        raise InvalidParameterError(f"on_mismatch must be 'raise' or 'drop', got {on_mismatch!r}")
    if not (weights is None or weights == "size" or isinstance(weights, Mapping)):
        raise InvalidParameterError(
            f"weights must be None, 'size' or a mapping site -> weight, got {weights!r}"
        )
    sources = site_sources(sites, site_column)
    methods = check_methods(aggregate)
    proto = make_ranker(ranker, params)
    frames = {s: d for s, d in sources.items() if isinstance(d, pd.DataFrame)}
    named = {s: d for s, d in frames.items() if all(isinstance(c, str) for c in d.columns)}
    if on_mismatch == "raise":
        check_same_features({s: site_features(d, target) for s, d in named.items()})
    check_progress(progress)
    seeds = spawn_seeds(random_state, len(sources))
    jobs = (
        delayed(site_job)(s, d, proto, None, target, seed, on_error)
        for (s, d), seed in zip(sources.items(), seeds, strict=True)
    )
    with contextlib.ExitStack() as stack:
        if verbose and progress is None:
            from tqdm.auto import tqdm

            bar = stack.enter_context(tqdm(total=len(sources), desc="sites", unit="site"))
            progress = bar.update
        outcomes = run_in_order(jobs, n_jobs=n_jobs, progress=progress)
    rankings: dict[str, Ranking] = {}
    failed: dict[str, str] = {}
    sizes = {s: len(d) for s, d in frames.items()}
    for site, out in zip(sources, outcomes, strict=True):
        if out.error is not None:
            failed[site] = out.error
        else:
            rankings[site], sizes[site] = out.ranking, out.n_rows
    if not rankings:
        raise InvalidInputError(
            "no site could be ranked:\n" + "\n".join(f"  {s}: {e}" for s, e in failed.items())
        )
    if on_mismatch == "drop":
        for site, why in odd_sites({s: r.names for s, r in rankings.items()}).items():
            del rankings[site]
            failed[site] = why
        failed = {s: failed[s] for s in sources if s in failed}  # in site order
    if "weighted_mean_rank" in methods and not isinstance(weights, Mapping):
        weights = {s: sizes[s] for s in rankings}
    aggregated = aggregate_rankings(rankings, methods, weights)
    name = ranker if isinstance(ranker, str) else getattr(proto, "name", type(proto).__name__)
    return SiteRankings.from_rankings(
        str(name), rankings, aggregated, failed, sizes={s: sizes[s] for s in sources if s in sizes}
    )
