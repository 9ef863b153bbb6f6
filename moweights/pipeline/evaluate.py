"""The evaluation steps of a run: top-k curves, error curves, clustering, statistics.

Each is cached and written as soon as it is done; the long library calls report their
progress through a callback (a tqdm bar's ``update``), nothing is patched.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

import rankers
from aggregation import Ranking, stats
from aggregation.evaluation import cluster_scores, eca, expected_curve, ffa_rfa, topk_curve
from aggregation.evaluation.topk import geometric_grid
from moweights.pipeline.checks import check_table
from moweights.pipeline.data import fingerprint, is_classes
from moweights.pipeline.steps import feature_order, make_ranker, needs_y, spec_key

__all__ = ["evaluate"]


def _at_k(ks, n: int, at_k: int) -> int:
    """The grid point rankers are compared at: the largest k <= at_k that is below n."""
    ks = sorted(set(int(k) for k in ks))
    below = [k for k in ks if k <= at_k and k < n]
    return below[-1] if below else ks[0]


def _summarise(folds: pd.DataFrame) -> pd.DataFrame:
    keys = [c for c in ("site", "ranker") if c in folds.columns] + ["k", "metric"]
    grouped = folds.groupby(keys, sort=False)["value"]
    out = grouped.agg(mean="mean", std=lambda v: v.std(ddof=1), n_folds="count").reset_index()
    return out.astype({"k": np.int64, "n_folds": np.int64})


def _topk(config, result, cache, progress, save, n_jobs) -> None:
    ev, tk = config.evaluation, config.evaluation.topk
    targets = [(spec.label, spec) for spec in config.rankers]
    if tk.random_baseline:
        targets.append(("random", None))
    site_run = config.is_site_run
    frames = []
    bar = progress.bar(total=len(targets) * len(result.units), desc="top-k curves", unit="curve")
    with bar:
        for site, (X, y) in result.units.items():
            n = X.shape[1]
            ks = None if tk.ks is None else sorted({min(k, n) for k in tk.ks})
            settings = dict(
                ks=ks,
                metric=tk.metric,
                n_neighbors=tk.n_neighbors,
                cv=ev.cv,
                random_state=config.random_state,
            )
            fp = fingerprint(X, y)
            for label, spec in targets:
                where = f"{label} @ {site}" if site_run else label
                bar.set_postfix_str(where)
                extra = {"n_random": tk.n_random} if spec is None else {}
                key = cache.key(
                    "topk", fp, spec and spec_key(spec), settings, extra, ranker=spec and spec.name
                )

                def compute(spec=spec, X=X, y=y, where=where, extra=extra, settings=settings):
                    est = "random" if spec is None else make_ranker(spec, config, main=False)
                    yy = y if spec is not None and needs_y(est) else None
                    with progress.tasks(f"{where}: folds", ev.cv) as update:
                        return topk_curve(
                            est,
                            X,
                            yy,
                            n_jobs=n_jobs,
                            return_folds=True,
                            progress=update,
                            **settings,
                            **extra,
                        )

                check = check_table("k", "fold", "metric", "value")
                folds = cache.fetch(f"top-k {where}", key, compute, check).assign(ranker=label)
                frames.append(folds.assign(site=site) if site_run else folds)
                result.curve_folds = pd.concat(frames, ignore_index=True)
                result.curves = _summarise(result.curve_folds)
                save()
                bar.update(1)


def _targets(result) -> dict[str, Any]:
    """Rankings judged with fixed orders: the rankers' and the rank-based aggregates.

    A generic ranking's blocks are ties, and an arbitrary order inside a large block would
    be judged instead of the aggregate, so generic rankings are left out.
    """
    simple = {m: r for m, r in result.aggregated.items() if isinstance(r, Ranking)}
    return {**result.rankings, **simple}


def _units(config, result) -> list[tuple[Any, Any]]:
    """The data an evaluation runs on: the one data set, or each site's own (a site run).

    In a site run every site evaluates the rankings on its own rows and only the curves
    leave it; :func:`_site_mean` combines them, weighted by the sites' sizes.
    """
    if config.is_site_run:
        return list(result.units.values())
    return [(result.X, result.y)]


def _site_mean(frames: list[pd.DataFrame], sizes: list[int], keys: list[str]) -> pd.DataFrame:
    """Row-wise mean of curves with the same ``keys`` (one frame per site), size-weighted."""
    if len(frames) == 1:
        return frames[0]
    w = np.asarray(sizes, dtype=np.float64) / float(sum(sizes))
    values = [c for c in frames[0].columns if c not in keys]
    out = frames[0][keys].copy()
    for col in values:
        out[col] = sum(
            wi * f[col].to_numpy(dtype=np.float64) for wi, f in zip(w, frames, strict=True)
        )
    return out


def _error_curves(config, result, cache, progress, save, n_jobs) -> None:
    ec = config.evaluation.error_curves
    common = dict(cv=config.evaluation.cv, grid=ec.grid, random_state=config.random_state)
    units = _units(config, result)
    sizes = [len(X) for X, _ in units]
    fps = [fingerprint(X, y) for X, y in units]
    targets = _targets(result)
    curves, rows = {}, []
    with progress.bar(total=len(targets) + bool(ec.n_random), desc="error curves") as bar:
        if ec.n_random:
            parts = []
            for (X, y), fp in zip(units, fps, strict=True):
                key = cache.key("expected", fp, ec.n_random, common)

                def expected(X=X, y=y):
                    with progress.tasks("expected curve", None, unit="point") as update:
                        return expected_curve(
                            X, y, n_random=ec.n_random, n_jobs=n_jobs, progress=update, **common
                        )

                check = check_table("i", "ffa", "rfa", "mean", "std")
                parts.append(cache.fetch("expected random curve", key, expected, check))
            result.expected = _site_mean(parts, sizes, ["i"])
            bar.update(1)
        for name, ranking in targets.items():
            bar.set_postfix_str(name)
            parts = []
            for (X, y), fp in zip(units, fps, strict=True):
                key = cache.key("ffa_rfa", fp, feature_order(ranking), common)

                def compute(ranking=ranking, name=name, X=X, y=y):
                    with progress.tasks(f"{name}: FFA/RFA", None, unit="point") as update:
                        return ffa_rfa(ranking, X, y, n_jobs=n_jobs, progress=update, **common)

                check = check_table("i", "ffa", "rfa")
                parts.append(cache.fetch(f"error curves {name}", key, compute, check))
            curves[name] = _site_mean(parts, sizes, ["i"])
            for w in ec.weighting:
                other = "random" if "magnitude" not in w else result.expected
                rows.append(
                    {"ranking": name, "weighting": w, "eca": eca(curves[name], other, weighting=w)}
                )
            frames = [c.assign(ranking=k) for k, c in curves.items()]
            table = pd.concat(frames, ignore_index=True)
            result.error_curves = table[["ranking", *[c for c in table if c != "ranking"]]]
            result.eca = pd.DataFrame(rows)
            save()
            bar.update(1)


def _clustering(config, result, cache, progress, save, n_jobs) -> None:
    units = _units(config, result)
    sizes = [len(X) for X, _ in units]
    cl = config.evaluation.clustering
    n = units[0][0].shape[1]
    k_features = (
        geometric_grid(n) if cl.k_features is None else sorted({min(k, n) for k in cl.k_features})
    )
    settings = dict(
        k_features=k_features,
        n_restarts=cl.n_restarts,
        two_step=cl.two_step,
        random_state=config.random_state,
    )
    targets = {name: feature_order(r) for name, r in _targets(result).items()}
    rng = np.random.default_rng(config.random_state)
    targets["random"] = [str(f) for f in rng.permutation(np.asarray(result.feature_names))]
    fps = [fingerprint(X, y) for X, y in units]
    frames = []
    with progress.bar(total=len(targets), desc="clustering") as bar:
        for name, order in targets.items():
            bar.set_postfix_str(name)
            parts = []
            for (X, y), fp in zip(units, fps, strict=True):
                key = cache.key("clustering", fp, order, settings)

                def compute(order=order, name=name, X=X, y=y):
                    with progress.tasks(f"{name}: k-means", None, unit="run") as update:
                        return cluster_scores(
                            X, y, order, n_jobs=n_jobs, progress=update, **settings
                        )

                check = check_table("k_features", "evaluation", "metric", "mean", "std")
                parts.append(cache.fetch(f"clustering {name}", key, compute, check))
            table = _site_mean(parts, sizes, ["k_features", "evaluation", "metric"])
            frames.append(table.assign(ranking=name))
            both = pd.concat(frames, ignore_index=True)
            result.clustering = both[["ranking", *[c for c in both if c != "ranking"]]]
            save()
            bar.update(1)


def _statistics(config, result) -> None:
    switch = config.evaluation.statistics.enabled
    folds = result.curve_folds
    if switch is False or folds is None:
        if switch is True:
            result.notes.append("statistics skipped: they need the top-k curves")
        return
    tk = config.evaluation.topk
    methods = list(dict.fromkeys(folds["ranker"]))
    if "site" in folds.columns and folds["site"].nunique() > 1:
        blocks, parts = "sites", []
        for site, part in folds.groupby("site", sort=False):
            k = _at_k(part["k"], result.units[site][0].shape[1], tk.at_k)
            at = part[part["k"] == k].groupby("ranker", sort=False)["value"].mean()
            parts.append(at.rename(site))
        table = pd.DataFrame(parts)
        k_used = None
    else:
        blocks = "folds"
        k_used = _at_k(folds["k"], result.X.shape[1], tk.at_k)
        at = folds[folds["k"] == k_used]
        table = at.pivot(index="fold", columns="ranker", values="value")
    table = table[methods]
    table.index.name = "site" if blocks == "sites" else "fold"
    if table.shape[0] < 2 or table.shape[1] < 2:
        if switch is True:
            result.notes.append("statistics skipped: they need two blocks and two methods")
        return
    try:
        fr = stats.friedman(table, higher_is_better=False)
        ne = stats.nemenyi(table, higher_is_better=False, alpha=config.evaluation.statistics.alpha)
    except rankers.MoweightsError as exc:
        result.notes.append(f"statistics skipped: {exc}")
        return
    result.statistics = {
        "blocks": blocks,
        "k": k_used,
        "metric": tk.metric,
        "alpha": config.evaluation.statistics.alpha,
        "friedman": fr.to_dict(),
        "nemenyi": ne.to_dict(),
        "table": table,
        "pvalues": ne.pvalues,
    }


def evaluate(config, result, cache, progress, save, n_jobs) -> None:
    """All enabled evaluations of a run, each written as soon as it is done."""
    ev = config.evaluation
    if ev.topk.enabled:
        _topk(config, result, cache, progress, save, n_jobs)
    classes = all(is_classes(y) for _, y in result.units.values())
    for part, step in (("error_curves", _error_curves), ("clustering", _clustering)):
        switch = ev[part].enabled
        if switch is False:
            continue
        if not classes:
            if switch is True:
                result.notes.append(f"{part} skipped: needs a class target")
            continue
        if config.is_site_run:
            result.notes.append(
                f"{part}: each site evaluated the rankings on its own rows; the curves are "
                "averaged over the sites, weighted by their sizes (no data left a site)"
            )
        step(config, result, cache, progress, save, n_jobs)
    _statistics(config, result)
    save()
