"""The bootstrap step of a run: each feature's rank interval, per ranker and aggregate.

With ``[aggregation] bootstrap = B`` every ranker is refit on B bootstrap resamples of the
data (:func:`aggregation.stability_partition`; the same rows for every ranker, since the
resamples are drawn from the run's seed alone), and every aggregate is combined resample
by resample from the rankers' rankings of that resample. A feature's interval is the
central ``confidence`` share of its ranks over the resamples
(:func:`aggregation.uncertainty.rank_intervals`, trimmed at ``(1 - confidence) / 2`` on
each side); ``features.csv`` holds it as ``<name>.rank_low`` and ``<name>.rank_high``.
Each ranker's resamples are cached like its fit.
"""

from __future__ import annotations

import pandas as pd

import rankers
from aggregation import Ranking
from aggregation.uncertainty import rank_intervals, stability_partition
from moweights.pipeline.data import fingerprint
from moweights.pipeline.steps import (
    combine_method,
    make_ranker,
    member_labels,
    needs_y,
    spec_key,
)

__all__ = ["stability"]


def _check(names):
    def check(value) -> None:
        if not isinstance(value, list) or not all(isinstance(r, Ranking) for r in value):
            raise ValueError("bootstrap rankings must be a list of rankings")
        if any(tuple(r.names) != tuple(map(str, names)) for r in value):
            raise ValueError("bootstrap rankings of other features")

    return check


def _intervals(rankings: list, confidence: float) -> pd.DataFrame:
    tolerance = min((1.0 - confidence) / 2.0, 0.5 - 1e-12)
    return rank_intervals(rankings, tolerance)[["low", "high"]]


def stability(config, result, cache, progress, save, n_jobs) -> None:
    """Bootstrap rank intervals of every ranker and aggregate into ``result.stability``."""
    agg = config.aggregation
    n_boot = int(agg.get("bootstrap") or 0)
    if n_boot < 2:
        return
    if config.is_site_run:  # the config check refuses this; a study's members are single
        result.notes.append("bootstrap intervals skipped: a site run ranks each site apart")
        return
    X, y = result.X, result.y
    confidence = float(agg.get("confidence") or 0.9)
    fp = fingerprint(X, y)
    resamples: dict[str, list] = {}
    with progress.bar(total=len(config.rankers), desc="bootstrap", unit="ranker") as bar:
        for spec in config.rankers:
            bar.set_postfix_str(spec.label)
            key = cache.key(
                "bootstrap",
                fp,
                spec_key(spec, config),
                n_boot,
                config.random_state,
                ranker=spec.name,
            )

            def compute(spec=spec):
                est = make_ranker(spec, config, main=False)
                with progress.tasks(f"{spec.label}: resamples", n_boot, unit="fit") as update:
                    found = stability_partition(
                        est,
                        X,
                        y if needs_y(est) else None,
                        n_bootstrap=n_boot,
                        confidence=confidence,
                        n_jobs=n_jobs,
                        random_state=config.random_state,
                        progress=update,
                    )
                return [Ranking(r.names, r.scores, spec.label) for r in found.rankings]

            try:
                resamples[spec.label] = cache.fetch(
                    f"bootstrap {spec.label}", key, compute, _check(X.columns)
                )
            except rankers.MoweightsError as exc:  # e.g. a resample without a rare class
                result.notes.append(f"bootstrap interval of {spec.label} skipped: {exc}")
            else:
                result.stability[spec.label] = _intervals(resamples[spec.label], confidence)
                save()
            bar.update(1)
    labels = member_labels(config)
    if any(lb not in resamples for lb in labels):
        return  # an aggregate of the other rankers would not be the run's aggregate
    for method in result.aggregated:
        try:
            combined = [
                combine_method(
                    method,
                    [resamples[lb][b] for lb in labels],
                    labels,
                    agg.weights,
                    agg.tolerance,
                )
                for b in range(n_boot)
            ]
        except rankers.MoweightsError as exc:
            result.notes.append(f"bootstrap interval of {method} skipped: {exc}")
            continue
        result.stability[method] = _intervals(combined, confidence)
    result.notes.append(
        f"rank intervals: the central {confidence:.0%} of each feature's rank over {n_boot} "
        "bootstrap resamples (every ranker refit on each; the aggregates combined resample "
        "by resample): features.csv <name>.rank_low / <name>.rank_high"
    )
    save()
