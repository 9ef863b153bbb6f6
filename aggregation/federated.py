"""Federated per-site ranking: rank each site's data where it lives, aggregate only rankings.

The multiobjective weighting paper (§1, §2.3, §3) ranks horizontally distributed data that
cannot be pooled: each location ranks its own features and the local rankings are
aggregated, e.g. into a generic ranking, whose single block signals incompatible sites.

Two steps, kept apart on purpose:

1. :func:`rank_one_site` (run per site, through joblib, so a Dask cluster can take over with
   ``joblib.parallel_config(backend="dask")``) reads the site's data -- a DataFrame, a
   csv/tsv/parquet path read inside the job, or a zero-argument loader called inside the
   job -- fits a fresh clone of the ranker and returns a :class:`~aggregation.Ranking`.
2. :func:`aggregate_rankings` receives ``{site: Ranking}`` and nothing else.

**What leaves a site**: its :class:`~aggregation.Ranking` (feature names, one score per
feature, the method's name and the order) and its number of rows (for ``weights="size"``,
like Flower's ``num_examples``); for a failed site, the error message instead (with
``on_error="raise"``, the exception). No row, column of values or fitted model leaves the
per-site job. The error message is kept whole here, as it stays in this process; across
machines (:mod:`aggregation.flower`) a site sends only the error's type and a fixed message.

Sites whose feature sets differ stop the run (``on_mismatch="raise"``) or are dropped from
the aggregation and listed in ``failed`` (``on_mismatch="drop"``: the sites holding the
feature set that more than half of the sites hold are kept).

Every site puts its feature columns in natural sort order of their names (``x2`` before
``x10``) before fitting, so results depend neither on a site's column order nor on which
site comes first, and sites agree on one order without talking to each other.
"""

from __future__ import annotations

import contextlib
import difflib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union

import numpy as np
import pandas as pd
from joblib import delayed

from aggregation import combine
from aggregation._sites import (
    SiteData,
    _check_same_features,
    _features,
    _make_ranker,
    _odd_sites,
    _site_job,
    _site_seeds,
    _site_sources,
    rank_one_site,
)
from aggregation._tasks import check_progress, run_in_order
from aggregation.compare import pairwise
from aggregation.ranking import GenericRanking, Ranking, _fmt
from rankers.exceptions import InvalidInputError, InvalidParameterError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "AGGREGATES",
    "HierarchicalRanking",
    "SiteRankings",
    "aggregate_hierarchy",
    "aggregate_rankings",
    "rank_one_site",
    "rank_sites",
]

AnyRanking = Union[Ranking, GenericRanking]  # noqa: UP007 - used at runtime on py3.10

#: aggregation methods by name; "weighted_mean_rank" needs weights
AGGREGATES: dict[str, Callable[..., AnyRanking]] = {
    "generic": combine.generic,
    "mean_rank": combine.mean_rank,
    "median_rank": combine.median_rank,
    "borda": combine.borda,
    "weighted_mean_rank": combine.weighted_mean_rank,
    "vote": combine.vote,
    "kemeny": combine.kemeny,
}


def _check_methods(aggregate: str | Sequence[str], allowed=AGGREGATES) -> list[str]:
    methods = [aggregate] if isinstance(aggregate, str) else list(aggregate)
    if not methods:
        raise InvalidParameterError(f"aggregate names no method; choose from {', '.join(allowed)}")
    for m in methods:
        if m not in allowed:
            close = difflib.get_close_matches(str(m), list(allowed), n=2)
            hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
            raise InvalidParameterError(
                f"unknown aggregation {m!r}{hint} Known: {', '.join(allowed)}"
            )
    return list(dict.fromkeys(methods))


def _site_weights(weights: Any, sites: list[str]) -> Any:
    if isinstance(weights, Mapping):
        absent = [s for s in sites if s not in weights]
        if absent:
            raise InvalidParameterError(f"weights has no value for site(s) {_fmt(absent)}")
        return [weights[s] for s in sites]
    if isinstance(weights, str):
        raise InvalidParameterError(
            f"weights={weights!r} is only known to rank_sites; here pass a mapping site -> "
            "weight or one number per ranking"
        )
    return weights


# ------------------------------------------------------------------ aggregation
def aggregate_rankings(
    rankings: Mapping[str, AnyRanking],
    aggregate: str | Sequence[str] = ("generic", "mean_rank"),
    weights: Mapping[str, float] | Sequence[float] | None = None,
) -> dict[str, AnyRanking]:
    """Aggregate per-site rankings; this step only ever sees rankings, never data.

    Parameters
    ----------
    rankings : mapping site -> Ranking or GenericRanking
        At least one, over one feature set (matched by name).
    aggregate : str or sequence of str, default=("generic", "mean_rank")
        Methods from :data:`AGGREGATES`: "generic", "mean_rank", "median_rank", "borda",
        "weighted_mean_rank", "vote", "kemeny" (see :mod:`aggregation.combine`).
    weights : mapping site -> float or sequence, optional
        For "weighted_mean_rank" (required by it): one non-negative weight per site, e.g.
        the site sizes; a sequence follows the order of ``rankings``.

    Returns
    -------
    dict
        Method name -> aggregated ranking (a GenericRanking for "generic", else a Ranking).

    Raises
    ------
    InvalidParameterError
        An item is not a ranking (naming its site), an unknown method, or missing weights.
    FeatureMismatchError
        The sites' feature sets differ; each site's missing and extra features are listed.
    """
    if not isinstance(rankings, Mapping) or not rankings:
        raise InvalidParameterError("rankings must be a non-empty mapping site -> Ranking")
    wrong = [f"{k!r} ({type(r).__name__})" for k, r in rankings.items() if not _is_ranking(r)]
    if wrong:
        raise InvalidParameterError(
            "aggregate_rankings takes rankings only (Ranking or GenericRanking); not for "
            "site(s) " + ", ".join(wrong)
        )
    methods = _check_methods(aggregate)
    sites = list(rankings)
    _check_same_features({s: r.names for s, r in rankings.items()})
    inputs = [rankings[s] for s in sites]
    out: dict[str, AnyRanking] = {}
    for m in methods:
        if m == "weighted_mean_rank":
            if weights is None:
                raise InvalidParameterError(
                    "weighted_mean_rank needs weights (e.g. the site sizes), one per site"
                )
            out[m] = combine.weighted_mean_rank(inputs, _site_weights(weights, sites))
        else:
            out[m] = AGGREGATES[m](inputs)
    return out


def _is_ranking(r: object) -> bool:
    return isinstance(r, (Ranking, GenericRanking))


def _similarity(rankings: Mapping[str, AnyRanking]) -> dict[str, pd.DataFrame]:
    """Pairwise s-measure and Spearman matrices of the sites, labelled by site."""
    sites = list(rankings)
    inputs = list(rankings.values())
    out = {"s_measure": pairwise(inputs, "s_measure", labels=sites)}
    # Spearman is undefined for a site that ties every feature: NaN there, not an error.
    ok = [s for s in sites if rankings[s].ranks.nunique() > 1]
    rho = pd.DataFrame(np.nan, index=pd.Index(sites), columns=pd.Index(sites))
    if len(ok) == 1:  # compare.pairwise's Spearman kernel needs two rows (np.corrcoef)
        rho.loc[ok, ok] = 1.0
    elif ok:
        sub = pairwise([rankings[s] for s in ok], "spearman", labels=ok)
        rho.loc[ok, ok] = sub.to_numpy()
    rho.attrs["measure"] = "spearman"
    out["spearman"] = rho
    return out


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
    """Rank every site's data where it lives, then aggregate the rankings (SPEC §6).

    Parameters
    ----------
    sites : mapping or DataFrame
        Site name -> DataFrame, path (.csv/.tsv/.parquet, read inside the site's job) or
        zero-argument loader; or one DataFrame split by ``site_column``. Names become str.
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
        shared, gets a fixed one; see :mod:`aggregation.flower`).
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
        features at once. DataFrame sites are checked before ranking; path and loader
        sites after, from their rankings' names. With ``on_mismatch="drop"``, only when no
        feature set is held by more than half of the sites.
    InvalidInputError
        When no site could be ranked (each site's error is listed).

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
    sources = _site_sources(sites, site_column)
    methods = _check_methods(aggregate)
    proto = _make_ranker(ranker, params)
    frames = {s: d for s, d in sources.items() if isinstance(d, pd.DataFrame)}
    named = {s: d for s, d in frames.items() if all(isinstance(c, str) for c in d.columns)}
    if on_mismatch == "raise":
        _check_same_features({s: _features(d, target) for s, d in named.items()})
    check_progress(progress)
    seeds = _site_seeds(random_state, len(sources))
    jobs = (
        delayed(_site_job)(s, d, proto, None, target, seed, on_error)
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
        for site, why in _odd_sites({s: r.names for s, r in rankings.items()}).items():
            del rankings[site]
            failed[site] = why
        failed = {s: failed[s] for s in sources if s in failed}  # in site order
    if "weighted_mean_rank" in methods and not isinstance(weights, Mapping):
        weights = {s: sizes[s] for s in rankings}
    aggregated = aggregate_rankings(rankings, methods, weights)
    if "generic" in aggregated:
        generic = aggregated["generic"]
    else:
        generic = aggregate_rankings(rankings, "generic")["generic"]
    name = ranker if isinstance(ranker, str) else getattr(proto, "name", type(proto).__name__)
    return SiteRankings(
        ranker=str(name),
        rankings=rankings,
        aggregated=aggregated,
        similarity=_similarity(rankings),
        generic=generic,
        failed=failed,
        sizes={s: sizes[s] for s in sources if s in sizes},
    )


# ------------------------------------------------------------------ hierarchy
@dataclass(frozen=True)
class HierarchicalRanking:
    """Rankings aggregated level by level: sites -> regions (-> sub-regions) -> global.

    Attributes
    ----------
    global_ranking : Ranking or GenericRanking
        The aggregate of the top-level regions.
    regions : dict
        Every region (at any depth) -> the aggregate of its members, deepest first.
    method : str
        The aggregation used at every level.
    """

    global_ranking: AnyRanking
    regions: dict[str, AnyRanking]
    method: str


def _leaves(tree: Mapping[str, Any], path: str = "") -> list[tuple[str, list[str]]]:
    """(region, its sites) for every region holding sites; checks the tree's shape."""
    out = []
    for region, members in tree.items():
        where = f"{path}{region!s}"
        if isinstance(members, Mapping):
            out += _leaves(members, where + " / ")
        elif isinstance(members, str) or not isinstance(members, Sequence):
            raise InvalidParameterError(
                f"region {where!r}: give a list of site names or a mapping of sub-regions, "
                f"not {type(members).__name__}"
            )
        else:
            out.append((where, [str(m) for m in members]))
    return out


def aggregate_hierarchy(
    hierarchy: Mapping[str, Any],
    rankings: Mapping[str, AnyRanking] | SiteRankings,
    method: str = "generic",
) -> HierarchicalRanking:
    """Aggregate per-site rankings region by region, then the regions into one ranking.

    With ``method="generic"`` the result equals the generic ranking of all sites at once:
    ``generic`` never splits an input's blocks and is associative, so sites -> regions ->
    global loses nothing. Rank-based methods ("mean_rank", ...) aggregate the regions'
    aggregates, which in general differs from aggregating all sites at once.

    Parameters
    ----------
    hierarchy : mapping
        Region -> list of site names, or region -> mapping of sub-regions (any depth).
        Region names must be distinct at all depths; every ranked site in exactly one region.
    rankings : mapping site -> Ranking/GenericRanking, or SiteRankings
        With a SiteRankings, its failed sites may appear in ``hierarchy`` and are skipped;
        a region left without ranked sites is left out.
    method : str, default="generic"
        One of :data:`AGGREGATES` except "weighted_mean_rank".

    Returns
    -------
    HierarchicalRanking
    """
    failed: set[str] = set()
    if isinstance(rankings, SiteRankings):
        failed, rankings = set(rankings.failed), rankings.rankings
    allowed = {k: v for k, v in AGGREGATES.items() if k != "weighted_mean_rank"}
    (method,) = _check_methods(str(method), allowed)
    if not isinstance(hierarchy, Mapping) or not hierarchy:
        raise InvalidParameterError("hierarchy must be a non-empty mapping region -> sites")
    leaves = _leaves(hierarchy)
    placed = Counter(s for _, members in leaves for s in members)
    problems = []
    for label, bad in (
        ("unknown site(s)", [s for s in placed if s not in rankings and s not in failed]),
        ("site(s) in more than one region", [s for s, c in placed.items() if c > 1]),
        ("site(s) in no region", [s for s in rankings if s not in placed]),
    ):
        if bad:
            problems.append(f"{label}: {_fmt(bad)}")
    if problems:
        raise InvalidParameterError("hierarchy does not fit the sites; " + "; ".join(problems))
    regions: dict[str, AnyRanking] = {}

    def combine_node(name: str, members: Any) -> AnyRanking | None:
        if isinstance(members, Mapping):
            parts = {str(k): combine_node(str(k), v) for k, v in members.items()}
        else:
            parts = {str(s): rankings[str(s)] for s in members if str(s) in rankings}
        parts = {k: v for k, v in parts.items() if v is not None}
        if not parts:
            return None
        if name in regions:
            raise InvalidParameterError(f"region name {name!r} is used twice")
        regions[name] = aggregate_rankings(parts, method)[method]
        return regions[name]

    top = {str(k): combine_node(str(k), v) for k, v in hierarchy.items()}
    top = {k: v for k, v in top.items() if v is not None}
    return HierarchicalRanking(aggregate_rankings(top, method)[method], regions, method)
