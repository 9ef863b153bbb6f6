"""The evaluation steps of a run: fold rankings, class prediction, top-k curves, error
curves, clustering, statistics.

Every evaluation that scores a ranking on held-out samples is **nested**: each ranker is
refit on the training part of every fold (:func:`_fold_rankings`, cached per ranker), the
aggregates are computed fold by fold from those refits, and a fold's test part scores only
the rankings fitted without it (docs/design.md, "Evaluation"). The error-curve paper's
whole-data protocol stays available (``[evaluation.error_curves] protocol = "whole_data"``)
and is labelled optimistic wherever it is reported.

Each step is cached and written as soon as it is done; the long library calls report their
progress through a callback (a tqdm bar's ``update``), nothing is patched.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pandas as pd

import rankers
from aggregation import Ranking
from aggregation.evaluation import (
    FoldRankings,
    class_curve,
    cluster_scores,
    combine_folds,
    cv_splits,
    eca,
    expected_curve,
    ffa_rfa_many,
    stats,
    topk_curve,
)
from aggregation.evaluation.topk import geometric_grid
from moweights.pipeline.checks import check_table
from moweights.pipeline.data import fingerprint, is_classes
from moweights.pipeline.steps import (
    combine_method,
    feature_order,
    make_ranker,
    member_labels,
    spec_key,
)

__all__ = ["evaluate", "headline"]

#: how the statistics and the summary name the scores they test
SCORE_NAMES = {
    "balanced_accuracy": "balanced accuracy",
    "accuracy": "accuracy",
    "mse": "MSE",
    "rmse": "RMSE",
    "rmae": "RMAE",
}


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


def _digest(folds: FoldRankings) -> str:
    """A hash of every fold's order: the cache key of what is evaluated."""
    h = hashlib.sha256()
    for order in folds.orders():
        h.update(np.ascontiguousarray(order, dtype=np.int64).tobytes())
    return h.hexdigest()


def _splits(config, X, y) -> list:
    """The folds every evaluation of a unit shares (stratified with a class target)."""
    return cv_splits(X, y if is_classes(y) else None, cv=config.evaluation.cv,
                     random_state=config.random_state)  # fmt: skip


# ------------------------------------------------------------------ fold rankings
def _fold_rankings(config, result, cache, progress, n_jobs) -> dict[str, dict[str, Any]]:
    """Per unit: every ranker refit on each training fold, and the aggregates of them
    computed fold by fold (what the held-out evaluations score)."""
    out: dict[str, dict[str, Any]] = {}
    total = len(config.rankers) * len(result.units)
    with progress.bar(total=total, desc="fold rankings", unit="ranker") as bar:
        for site, (X, y) in result.units.items():
            splits = _splits(config, X, y)
            fp = fingerprint(X, y)
            settings = {"cv": config.evaluation.cv, "random_state": config.random_state,
                        "stratified": is_classes(y)}  # fmt: skip
            members: dict[str, FoldRankings] = {}
            for spec in config.rankers:
                where = f"{spec.label} @ {site}" if config.is_site_run else spec.label
                bar.set_postfix_str(where)
                key = cache.key("folds", fp, spec_key(spec, config), settings, ranker=spec.name)

                def compute(spec=spec, X=X, y=y, where=where, splits=splits):
                    from aggregation.evaluation import fold_rankings

                    est = make_ranker(spec, config, main=False)
                    with progress.tasks(f"{where}: folds", len(splits)) as update:
                        folds = fold_rankings(
                            est,
                            X,
                            y,
                            cv=splits,
                            method=spec.label,
                            n_jobs=n_jobs,
                            random_state=config.random_state,
                            progress=update,
                        )
                    return list(folds.rankings)

                rankings_ = cache.fetch(f"fold rankings {where}", key, compute, _check_folds(X))
                members[spec.label] = FoldRankings(rankings_, splits, spec.label)
                bar.update(1)
            targets: dict[str, Any] = dict(members)
            combined = {lb: members[lb] for lb in member_labels(config) if lb in members}
            for method in config.aggregation.methods:
                if method == "generic":  # blocks, not an order: judged through its members
                    continue
                weights = None if config.is_site_run else config.aggregation.weights
                try:
                    targets[method] = combine_folds(
                        list(combined.values()),
                        lambda rs, m=method, w=weights, lb=list(combined): combine_method(
                            m, rs, lb, w
                        ),
                        method=method,
                    )
                except rankers.MoweightsError as exc:
                    result.notes.append(f"evaluation of {method} skipped: {exc}")
            out[site] = {"splits": splits, "targets": targets}
    return out


def _check_folds(X):
    def check(value):
        if not isinstance(value, list) or not all(isinstance(r, Ranking) for r in value):
            raise ValueError("fold rankings must be a list of rankings")
        if any(tuple(r.names) != tuple(map(str, X.columns)) for r in value):
            raise ValueError("fold rankings of other features")

    return check


# ------------------------------------------------------------------ curves per fold
def _curve_step(config, result, cache, progress, save, n_jobs, folds, *, kind: str) -> None:
    """Top-k kNN curves (``kind="topk"``) or class-prediction curves (``"classification"``)
    of every target of every unit, one row per (k, fold)."""
    ev = config.evaluation
    section = ev[kind]
    frames = []
    site_run = config.is_site_run
    units = list(result.units.items())
    n_targets = sum(len(folds[s]["targets"]) + 1 for s, _ in units)
    desc = "class prediction" if kind == "classification" else "top-k curves"
    with progress.bar(total=n_targets, desc=desc, unit="curve") as bar:
        for site, (X, y) in units:
            n = X.shape[1]
            splits = folds[site]["splits"]
            ks = None if section.ks is None else sorted({min(k, n) for k in section.ks})
            fp = fingerprint(X, y)
            targets = dict(folds[site]["targets"])
            if kind == "classification" or section.random_baseline:
                targets["random"] = "random"
            for label, target in targets.items():
                where = f"{label} @ {site}" if site_run else label
                bar.set_postfix_str(where)
                what = "random" if isinstance(target, str) else _digest(target)
                if kind == "classification":
                    settings = dict(ks=ks, model=section.model, n_neighbors=section.n_neighbors,
                                    metric=section.metric, n_random=section.n_random)  # fmt: skip
                else:
                    settings = dict(ks=ks, metric=section.metric, n_neighbors=section.n_neighbors,
                                    n_random=section.n_random)  # fmt: skip
                key = cache.key(kind, fp, what, settings, ev.cv, config.random_state)

                def compute(target=target, X=X, y=y, where=where, settings=settings,
                            splits=splits):  # fmt: skip
                    with progress.tasks(f"{where}: folds", len(splits)) as update:
                        common = dict(cv=splits, n_jobs=n_jobs, return_folds=True,
                                      random_state=config.random_state,
                                      progress=update)  # fmt: skip
                        if kind == "classification":
                            return class_curve(target, X, y, **settings, **common)
                        return topk_curve(target, X, **settings, **common)

                check = check_table("k", "fold", "metric", "value")
                part = cache.fetch(f"{desc} {where}", key, compute, check).assign(ranker=label)
                frames.append(part.assign(site=site) if site_run else part)
                table = pd.concat(frames, ignore_index=True)
                if kind == "classification":
                    result.class_folds, result.class_curves = table, _summarise(table)
                else:
                    result.curve_folds, result.curves = table, _summarise(table)
                save()
                bar.update(1)


# ------------------------------------------------------------------ error curves
def _units(config, result) -> list[tuple[str, Any, Any]]:
    """The data an evaluation runs on: the one data set, or each site's own (a site run).

    In a site run every site evaluates the rankings on its own rows and only the curves
    leave it; :func:`_site_mean` combines them, weighted by the sites' sizes.
    """
    return [(site, X, y) for site, (X, y) in result.units.items()]


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


def _whole_data_targets(result) -> dict[str, Any]:
    """The rankings fitted on all samples: the rankers' and the rank-based aggregates
    (a generic ranking's blocks are ties, so it is judged through its members)."""
    simple = {m: r for m, r in result.aggregated.items() if isinstance(r, Ranking)}
    return {**result.rankings, **simple}


def _error_curves(config, result, cache, progress, save, n_jobs, folds) -> None:
    ec = config.evaluation.error_curves
    nested = ec.protocol == "nested"
    units = _units(config, result)
    sizes = [len(X) for _, X, _ in units]
    fps = [fingerprint(X, y) for _, X, y in units]
    if nested:
        names = list(folds[units[0][0]]["targets"])
    else:
        names = list(_whole_data_targets(result))
        result.notes.append(
            "error curves: whole_data protocol (the error-curve paper's): the rankings were "
            "fitted on all samples, so the test folds helped choose the features and the "
            "curves and ECA are optimistic (pure noise scores above random); the default "
            "'nested' refits every ranking on each training fold"
        )
    curves, rows = {}, []
    with progress.bar(
        total=len(names) + bool(ec.n_random), desc="error curves", unit="curve"
    ) as bar:
        if ec.n_random:
            parts = []
            for (site, X, y), fp in zip(units, fps, strict=True):
                splits = folds[site]["splits"]
                common = dict(cv=splits, grid=ec.grid, random_state=config.random_state)
                key = cache.key("expected", fp, ec.n_random, ec.grid, config.evaluation.cv,
                                config.random_state)  # fmt: skip

                def expected(X=X, y=y, common=common):
                    with progress.tasks("expected curve", None, unit="point") as update:
                        return expected_curve(
                            X, y, n_random=ec.n_random, n_jobs=n_jobs, progress=update, **common
                        )

                check = check_table("i", "ffa", "rfa", "mean", "std")
                parts.append(cache.fetch("expected random curve", key, expected, check))
            result.expected = _site_mean(parts, sizes, ["i"])
            bar.update(1)
        whole = {} if nested else _whole_data_targets(result)
        for name in names:
            bar.set_postfix_str(name)
            parts = []
            for (site, X, y), fp in zip(units, fps, strict=True):
                splits = folds[site]["splits"]
                if nested:
                    target = folds[site]["targets"].get(name)
                    if target is None:
                        continue
                    what = _digest(target)
                else:
                    target, what = whole[name], feature_order(whole[name])
                key = cache.key("ffa_rfa", fp, ec.protocol, what, ec.grid, config.evaluation.cv,
                                config.random_state)  # fmt: skip

                def compute(target=target, name=name, X=X, y=y, splits=splits):
                    with progress.tasks(f"{name}: FFA/RFA", None, unit="point") as update:
                        return ffa_rfa_many(
                            [target],
                            X,
                            y,
                            cv=splits,
                            grid=ec.grid,
                            n_jobs=n_jobs,
                            random_state=config.random_state,
                            progress=update,
                        )[0]

                check = check_table("i", "ffa", "rfa")
                parts.append(cache.fetch(f"error curves {name}", key, compute, check))
            if not parts:
                continue
            curves[name] = _site_mean(parts, sizes, ["i"])
            for w in ec.weighting:
                other = "random" if "magnitude" not in w else result.expected
                rows.append(
                    {"ranking": name, "weighting": w, "eca": eca(curves[name], other, weighting=w)}
                )
            frames = [c.assign(ranking=k) for k, c in curves.items()]
            table = pd.concat(frames, ignore_index=True)
            result.error_curves = table[["ranking", *[c for c in table if c != "ranking"]]]
            result.eca = pd.DataFrame(rows).assign(protocol=ec.protocol)
            save()
            bar.update(1)


# ------------------------------------------------------------------ clustering
def _clustering(config, result, cache, progress, save, n_jobs) -> None:
    units = _units(config, result)
    sizes = [len(X) for _, X, _ in units]
    cl = config.evaluation.clustering
    n = units[0][1].shape[1]
    k_features = (
        geometric_grid(n) if cl.k_features is None else sorted({min(k, n) for k in cl.k_features})
    )
    settings = dict(
        k_features=k_features,
        n_restarts=cl.n_restarts,
        two_step=cl.two_step,
        random_state=config.random_state,
    )
    targets = {name: feature_order(r) for name, r in _whole_data_targets(result).items()}
    rng = np.random.default_rng(config.random_state)
    targets["random"] = [str(f) for f in rng.permutation(np.asarray(result.feature_names))]
    fps = [fingerprint(X, y) for _, X, y in units]
    frames = []
    with progress.bar(total=len(targets), desc="clustering", unit="ranking") as bar:
        for name, order in targets.items():
            bar.set_postfix_str(name)
            parts = []
            for (_, X, y), fp in zip(units, fps, strict=True):
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
    supervised = [
        spec.label
        for spec in config.rankers
        if rankers.ranker_tags(make_ranker(spec, config, main=False)).requires_y
    ]
    if supervised:
        result.notes.append(
            "clustering scores the rankings fitted on all samples against the same classes: "
            f"optimistic for the supervised rankers ({', '.join(supervised)}) and the "
            "aggregates of them, which saw those classes"
        )


# ------------------------------------------------------------------ statistics
def headline(config, result) -> dict | None:
    """Which score the run tests and reports first: its per-fold table and how to read it.

    With a class target (and the class prediction computed) the cross-validated class
    prediction at ``[evaluation.classification].at_k``, else the top-k error at
    ``[evaluation.topk].at_k``. None when neither was computed.
    """
    ev = config.evaluation
    choice = ev.statistics.score
    classes = result.class_folds is not None
    if choice == "classification" or (choice == "auto" and classes):
        folds, section, higher = result.class_folds, ev.classification, True
        kind = "classification"
    else:
        folds, section, higher = result.curve_folds, ev.topk, False
        kind = "topk"
    if folds is None:
        return None
    if kind == "classification":
        model = section.model if section.model != "knn" else f"{section.n_neighbors}-NN"
        what = f"{SCORE_NAMES[section.metric]} of {model} predicting the class"
    else:
        nn = section.n_neighbors or {"mse": 1, "rmse": 1, "rmae": 5}[section.metric]
        what = f"{SCORE_NAMES[section.metric]} of {nn}-NN predicting every feature"
    return {"kind": kind, "folds": folds, "at_k": section.at_k, "higher": higher, "what": what}


def _statistics(config, result) -> None:
    switch = config.evaluation.statistics.enabled
    head = headline(config, result)
    if switch is False or head is None:
        if switch is True:
            result.notes.append("statistics skipped: they need the headline curves")
        return
    folds = head["folds"]
    methods = list(dict.fromkeys(folds["ranker"]))
    if "site" in folds.columns and folds["site"].nunique() > 1:
        blocks, parts = "sites", []
        for site, part in folds.groupby("site", sort=False):
            k = _at_k(part["k"], result.units[site][0].shape[1], head["at_k"])
            at = part[part["k"] == k].groupby("ranker", sort=False)["value"].mean()
            parts.append(at.rename(site))
        table = pd.DataFrame(parts)
        k_used = None
    else:
        blocks = "folds"
        k_used = _at_k(folds["k"], result.X.shape[1], head["at_k"])
        at = folds[folds["k"] == k_used]
        table = at.pivot(index="fold", columns="ranker", values="value")
    table = table[methods]
    table.index.name = "site" if blocks == "sites" else "fold"
    if table.shape[0] < 2 or table.shape[1] < 2:
        if switch is True:
            result.notes.append("statistics skipped: they need two blocks and two methods")
        return
    higher = head["higher"]
    alpha = config.evaluation.statistics.alpha
    try:
        fr = stats.friedman(table, higher_is_better=higher)
        ne = stats.nemenyi(table, higher_is_better=higher, alpha=alpha)
    except rankers.MoweightsError as exc:
        result.notes.append(f"statistics skipped: {exc}")
        return
    avg = ne.avg_ranks
    from rankers.ties import order_desc

    order = order_desc(-avg.to_numpy(dtype=np.float64))
    best = [m for m in avg.index[order] if m != "random"]
    winner = best[0] if best else None
    caution = []
    if table.shape[0] < 5:
        caution.append(
            f"only {table.shape[0]} {blocks}: Demšar (2006) advises at least 5 blocks for the "
            "Friedman test; read the p-value as a rough guide"
        )
    if blocks == "folds":
        caution.append(
            "the blocks are cross-validation folds of one data set: they share training data, "
            "so they are not independent and the p-values are optimistic (Demšar 2006)"
        )
    score = f"{head['what']} from the top {k_used if k_used else head['at_k']} features"
    significant = bool(fr.pvalue < alpha)
    beats_random = None
    if winner is not None and "random" in ne.pvalues.index:
        beats_random = bool(
            ne.pvalues.loc[winner, "random"] < alpha and avg[winner] < avg["random"]
        )
    result.statistics = {
        "blocks": blocks,
        "k": k_used,
        "score": head["kind"],
        "metric": folds["metric"].iloc[0],
        "description": score,
        "higher_is_better": higher,
        "winner": winner,
        "winner_rank": None if winner is None else float(avg[winner]),
        "significant": significant,
        "beats_random": beats_random,
        "random_rank": float(avg["random"]) if "random" in avg.index else None,
        "caution": caution,
        "alpha": alpha,
        "friedman": fr.to_dict(),
        "nemenyi": ne.to_dict(),
        "table": table,
        "pvalues": ne.pvalues,
    }


def evaluate(config, result, cache, progress, save, n_jobs) -> None:
    """All enabled evaluations of a run, each written as soon as it is done."""
    ev = config.evaluation
    classes = all(is_classes(y) for _, y in result.units.values())
    wants = {
        part: ev[part].enabled is True or (ev[part].enabled == "auto" and classes)
        for part in ("classification", "error_curves", "clustering")
    }
    for part in wants:
        if ev[part].enabled is True and not classes:
            result.notes.append(f"{part} skipped: needs a class target")
            wants[part] = False
    folds = None
    if (
        ev.topk.enabled
        or wants["classification"]
        or (wants["error_curves"] and ev.error_curves.protocol == "nested")
    ):
        folds = _fold_rankings(config, result, cache, progress, n_jobs)
    if wants["classification"]:
        _curve_step(config, result, cache, progress, save, n_jobs, folds, kind="classification")
    if ev.topk.enabled:
        _curve_step(config, result, cache, progress, save, n_jobs, folds, kind="topk")
    if config.is_site_run and (wants["error_curves"] or wants["clustering"]):
        result.notes.append(
            "error curves and clustering: each site evaluated the rankings on its own rows; "
            "the curves are averaged over the sites, weighted by their sizes (no data left a "
            "site)"
        )
    if wants["error_curves"]:
        _error_curves(config, result, cache, progress, save, n_jobs, folds)
    if wants["clustering"]:
        _clustering(config, result, cache, progress, save, n_jobs)
    _statistics(config, result)
    save()
