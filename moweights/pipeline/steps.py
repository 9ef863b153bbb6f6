"""The steps of a run that make rankings: fitting each ranker (per site in a site run),
then combining and comparing the rankings.

Each step fetches its result from the run cache or computes it, and calls ``save`` so the
output folder holds every finished step at once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import false_discovery_control

import rankers
from aggregation import GenericRanking, Ranking, combine, compare, rra_pvalues
from aggregation.ranking import natural_key
from aggregation.uncertainty import tolerant_generic
from moweights.config import RunConfig
from moweights.pipeline.cache import StepCache
from moweights.pipeline.checks import EXTRAS, SIGNIFICANCE, check_fit, check_sites
from moweights.pipeline.data import fingerprint
from moweights.pipeline.progress import Progress
from moweights.pipeline.result import RunResult

__all__ = [
    "aggregate",
    "combine_method",
    "feature_order",
    "fitted_ranker",
    "make_ranker",
    "member_labels",
    "needs_y",
    "rank",
    "significance",
    "spec_key",
]


def needs_y(est) -> bool:
    """Whether the ranker needs a target, from its tags (they may depend on its parameters)."""
    return rankers.ranker_tags(est).requires_y


def make_ranker(
    spec, config: RunConfig, *, main: bool, progress: Progress | None = None, n_jobs: int = 1
):
    """The ranker of ``spec`` with the run's seed, and ``n_jobs`` and a progress bar for
    the main fit (evaluations parallelise over folds instead, one layer at a time).

    With ``[data] scale`` it is a :class:`~moweights.data.ScaledRanker`: the scaling
    is learnt from the rows each fit is given (a fold's training rows, or all of them).
    """
    est = _configured(spec, config, main=main, progress=progress, n_jobs=n_jobs)
    scale = config.data.get("scale") or "none"
    if scale == "none":
        return est
    from moweights.data import ScaledRanker

    # its random_state stands for the ranker's, so callers that seed one seed both alike
    seed = est.get_params(deep=False).get("random_state")
    return ScaledRanker(est, scale=scale, random_state=seed if isinstance(seed, int) else None)


def fitted_ranker(est):
    """The ranker that was fitted: the inner one of a :class:`~moweights.data.ScaledRanker`."""
    return getattr(est, "ranker_", est)


def _configured(spec, config: RunConfig, *, main: bool, progress, n_jobs: int):
    est = rankers.get(spec.name, **spec.params)
    given = est.get_params(deep=False)
    # the run's seed reaches every ranker that takes one, unless set per ranker
    if "random_state" in given and "random_state" not in spec.params:
        est.set_params(random_state=config.random_state)
    if main and "n_jobs" in given and "n_jobs" not in spec.params:
        est.set_params(n_jobs=n_jobs)
    if "verbose" in given and "verbose" not in spec.params:
        # only a ranker whose verbose draws a bar (its tags say so) follows the run's bars;
        # a verbose that prints joblib messages would only add noise
        shows = progress is not None and progress.shown and rankers.ranker_tags(est).progress
        est.set_params(verbose=int(main and shows))
    return est


def _fit_one(spec, config, X, y, progress, n_jobs):
    est = make_ranker(spec, config, main=True, progress=progress, n_jobs=n_jobs)
    supervised = needs_y(est)
    if supervised and y is None:
        raise rankers.InvalidInputError(
            f"ranker {spec.label!r} is supervised but the data has no target; set [data].target"
        )
    est.fit(X, y if supervised else None)
    extras = {}
    inner = fitted_ranker(est)
    for attr, name in EXTRAS.items():
        if isinstance(getattr(inner, attr, None), pd.DataFrame):
            extras[name] = getattr(inner, attr)
    tests = significance(est, X.columns)
    if tests is not None:
        extras[SIGNIFICANCE] = tests
    return Ranking.from_ranker(est, method=spec.label), extras


def significance(est, names) -> pd.DataFrame | None:
    """A fitted ranker's per-feature test results, or None when it has none: ``pvalue``
    and Benjamini-Hochberg ``qvalue`` from ``pvalues_`` / ``qvalues_``, ``statistic`` from
    a signed ``statistic_`` (or a two-group test's one-row ``t_``) and ``logfc`` from
    ``log_fold_change_`` -- each where the ranker (or the ranker a wrapper fitted) has it
    with one value per feature.

    A ranker with p-values but no q-values gets them from
    :func:`scipy.stats.false_discovery_control` (Benjamini-Hochberg).
    """
    inner = fitted_ranker(est)

    def attribute(name: str):
        for holder in (est, inner):
            value = getattr(holder, name, None)
            if value is not None:
                value = np.asarray(value, dtype=np.float64)
                if value.ndim == 2 and value.shape[0] == 1:
                    value = value[0]
                return value if value.shape == (len(names),) else None
        return None

    columns = {}
    p = attribute("pvalues_")
    if p is not None:
        q = attribute("qvalues_")
        if q is None:
            from scipy.stats import false_discovery_control

            q = false_discovery_control(np.nan_to_num(p, nan=1.0), method="bh")
        columns.update(pvalue=p, qvalue=np.asarray(q, dtype=np.float64))
    statistic = attribute("statistic_")
    if statistic is None:
        statistic = attribute("t_")
    if statistic is not None:
        columns["statistic"] = statistic
    logfc = attribute("log_fold_change_")
    if logfc is not None:
        columns["logfc"] = logfc
    if not columns:
        return None
    index = pd.Index([str(n) for n in names], name="feature")
    return pd.DataFrame(columns, index=index)


def spec_key(spec, config: RunConfig | None = None) -> dict:
    """The part of a cache key that stands for a ranker: its name and parameters, and the
    ``[data] scale`` it is fitted under (part of the fitted estimator)."""
    key = {"name": spec.name.strip().lower(), "params": spec.params}
    scale = "none" if config is None else (config.data.get("scale") or "none")
    if scale != "none":
        key["scale"] = scale
    return key


def rank(config: RunConfig, result: RunResult, cache: StepCache, progress, save, n_jobs) -> None:
    """Every ranker's ranking (site runs: per site, then their mean rank)."""
    seed = config.random_state
    from moweights.data import scale_notes

    configured = {spec.label: make_ranker(spec, config, main=False) for spec in config.rankers}
    result.notes.extend(scale_notes(config.data.get("scale") or "none", configured))
    bar = progress.bar(total=len(config.rankers), desc="rankers", unit="ranker")
    with bar:
        for spec in config.rankers:
            bar.set_postfix_str(spec.label)
            if config.is_site_run:
                result.site_rankings[spec.label] = _rank_sites(
                    config, spec, result, cache, progress, n_jobs
                )
                result.rankings[spec.label] = _named(
                    _site_mean(result.site_rankings[spec.label]), spec.label
                )
            else:
                X, y = result.X, result.y
                key = cache.key(
                    "rank", fingerprint(X, y), spec_key(spec, config), seed, ranker=spec.name
                )
                ranking, extras = cache.fetch(
                    f"ranker {spec.label}",
                    key,
                    lambda s=spec, X=X, y=y: _fit_one(s, config, X, y, progress, n_jobs),
                    check=check_fit(X.columns),
                )
                result.rankings[spec.label] = _named(ranking, spec.label)
                tests = extras.pop(SIGNIFICANCE, None)
                if tests is not None:
                    result.significance[spec.label] = tests
                if extras:
                    result.pareto[spec.label] = extras
            save()
            bar.update(1)


def _rank_sites(config, spec, result, cache, progress, n_jobs):
    from aggregation.federated import rank_sites

    frames, target = {}, "__target__"
    for name, (X, y) in result.units.items():
        frames[name] = X if y is None else X.assign(**{target: np.asarray(y)})
    has_y = all(y is not None for _, y in result.units.values())
    methods = tuple(m for m in config.aggregation.methods)
    weights = config.aggregation.weights
    parts = [(n, fingerprint(X, y)) for n, (X, y) in result.units.items()]
    settings = (config.random_state, methods, weights)
    key = cache.key("sites", parts, spec_key(spec, config), *settings, ranker=spec.name)
    est = make_ranker(spec, config, main=False)
    if "random_state" in est.get_params(deep=False) and "random_state" not in spec.params:
        est.set_params(random_state=None)  # rank_sites spawns one seed per site

    def compute():
        with progress.tasks(f"{spec.label}: sites", len(frames), unit="site") as update:
            return rank_sites(
                frames,
                est,
                target=target if has_y else None,
                aggregate=methods,
                weights=weights,
                n_jobs=n_jobs,
                random_state=config.random_state,
                on_error="report",
                progress=update,
            )

    sites = cache.fetch(
        f"ranker {spec.label} (sites)", key, compute, check=check_sites(result.units)
    )
    for site, error in sites.failed.items():
        result.notes.append(f"ranker {spec.label}: site {site} failed: {error}")
    return sites


def _site_mean(site_rankings) -> Ranking:
    ranking = site_rankings.aggregated.get("mean_rank")
    if ranking is None:
        ranking = combine.mean_rank(list(site_rankings.rankings.values()))
    return ranking


def member_labels(config: RunConfig) -> list[str]:
    """The labels of the rankers the aggregates combine, in the config's order:
    ``[aggregation] members``, or every ranker."""
    members = config.aggregation.members
    return [s.label for s in config.rankers if members is None or s.label in members]


def combine_method(method: str, rankings: list, labels: list[str], weights, tolerance=0.0) -> Any:
    """The rankings combined by one configured aggregation ``method``."""
    if method == "generic" and tolerance:
        return tolerant_generic(rankings, tolerance)
    if method == "weighted_mean_rank":
        w = [1.0] * len(labels) if weights is None else [weights[label] for label in labels]
        return combine.weighted_mean_rank(rankings, w)
    return getattr(combine, method)(rankings)


def aggregate(config: RunConfig, result: RunResult) -> None:
    """The rankings combined by every configured method, and compared pairwise."""
    labels = list(result.rankings)
    members = [lb for lb in member_labels(config) if lb in result.rankings]
    if config.is_site_run:
        per_ranker = {m: [] for m in config.aggregation.methods}
        for label in members:
            for m in per_ranker:
                per_ranker[m].append(result.site_rankings[label].aggregated[m])
        inputs = per_ranker
        weights = None  # sites were weighted inside each ranker; rankers count alike
    else:
        inputs = {m: [result.rankings[lb] for lb in members] for m in config.aggregation.methods}
        weights = config.aggregation.weights
    if len(members) < len(labels):
        left = [lb for lb in labels if lb not in members]
        result.notes.append(
            f"the aggregates combine {', '.join(members)} ([aggregation] members); "
            f"left out: {', '.join(left)}"
        )
    for method, rankings_ in inputs.items():
        try:
            agg = combine_method(method, rankings_, members, weights, config.aggregation.tolerance)
        except rankers.MoweightsError as exc:
            result.notes.append(f"aggregation {method} skipped: {exc}")
            continue
        result.aggregated[method] = _named(agg, method)
        if method == "rra":  # Kolde et al.'s p-value per feature (Bonferroni over the inputs)
            p = rra_pvalues(rankings_)
            q = false_discovery_control(p.to_numpy(), method="bh")
            result.significance[method] = pd.DataFrame(
                {"pvalue": p.to_numpy(), "qvalue": q}, index=p.index
            )
    generic = result.aggregated.get("generic")
    if generic is not None and len(generic) == 1 and not config.aggregation.tolerance:
        # a site run's inputs are each ranker's partition over its sites, one block each
        # here: their "top 10" would be column order, so the fallback reads the sites'
        # own rankings (every member at every site)
        fallback = (
            [r for lb in members for r in result.site_rankings[lb].rankings.values()]
            if config.is_site_run
            else inputs["generic"]
        )
        result.generic_fallback = generic_fallback(fallback)
    if len(labels) > 1:
        k = min(config.aggregation.compare_k, len(result.feature_names))
        for measure in config.aggregation.compare:
            kw = {"k": k} if measure in ("jaccard", "kuncheva", "rbo") else {}
            try:
                result.similarity[measure] = compare.pairwise(
                    list(result.rankings.values()), measure, labels=labels, **kw
                )
            except rankers.MoweightsError as exc:
                result.notes.append(f"similarity {measure} skipped: {exc}")


def generic_fallback(rankings: list, k: int = 10) -> dict:
    """What to show when the strict generic ranking is one block (no boundary every input
    agrees on): the tolerant partition that lets one input disagree on each side (three or
    more inputs), and the features in the top ``k`` of every input."""
    q = len(rankings)
    out: dict[str, Any] = {"q": q, "n": len(rankings[0].names)}
    if q >= 3:
        tolerance = min(1.5 / q, 0.49)  # floor(tolerance * q) = 1: one input may disagree
        tolerant = tolerant_generic(rankings, tolerance)
        out["tolerance"] = round(tolerance, 4)
        out["tolerant"] = {"s": len(tolerant), "blocks": [list(b) for b in tolerant.blocks]}
    k = min(k, out["n"])
    tops = [set(feature_order(r)[:k]) for r in rankings]
    shared = set.intersection(*tops)
    first = feature_order(rankings[0])
    out["shared_top"] = {"k": k, "features": [f for f in first if f in shared]}
    return out


def _named(ranking, method: str):
    if isinstance(ranking, GenericRanking):
        return GenericRanking(ranking.blocks, method=method)
    # the method's own order of tied scores (best_rank's next-best ranks, rra's mean rank)
    return Ranking(ranking.names, ranking.scores, method=method, order_idx=ranking.order_idx)


def feature_order(ranking) -> list[str]:
    """Features best first; a generic ranking's ties in natural name order."""
    if isinstance(ranking, Ranking):
        return list(ranking.order)
    return [f for block in ranking.blocks for f in sorted(block, key=natural_key)]
