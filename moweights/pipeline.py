"""One config run: data -> rankers -> aggregation -> evaluation -> report.

Every finished step is written to the output folder at once (each file atomically, see
:mod:`moweights.report`), so a run stopped by Ctrl-C leaves a valid, partial folder
whose ``manifest.json`` and ``summary.json`` say so. One run at a time writes into a
folder: a run holds the folder's lock (:mod:`moweights.lock`) from start to end.
Finished rankers and evaluations are cached in ``<output>/.cache`` as data files
(:mod:`moweights.cache`, never pickles) under a hash of the data, the ranker's spec, the
seed, the settings and the code: re-running an unchanged config resumes instead of
starting over.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from joblib import parallel_config
from tqdm.auto import tqdm

import rankers
from aggregation import GenericRanking, Ranking, combine, compare, stats
from aggregation.clustering import cluster_scores
from aggregation.curves import geometric_grid, topk_curve
from aggregation.error_curves import eca, expected_curve, ffa_rfa
from moweights.cache import StepCache
from moweights.config import RunConfig
from moweights.datasets import load_dataset, load_file, split_sites, subsample
from rankers.validation import check_n_jobs

__all__ = ["RunResult", "load_data", "load_units", "run"]

log = logging.getLogger("moweights")


@dataclass
class RunResult:
    """Everything a run computed; tables are ``None`` for steps that did not run.

    Attributes
    ----------
    units : dict of str -> (DataFrame, Series or None)
        The data: one entry for a single data set, one per site in a site run.
    rankings : dict of str -> Ranking
        One ranking per ranker label (site runs: the mean rank over the sites).
    site_rankings : dict of str -> SiteRankings
        Site runs: each ranker's per-site rankings, aggregates and site similarity.
    aggregated : dict of str -> Ranking or GenericRanking
        The rankers' rankings combined, by method.
    similarity : dict of str -> DataFrame
        Ranker x ranker matrices, by measure.
    curves, curve_folds : DataFrame
        Top-k kNN curves (mean/std over folds, and per fold); ranker ``random`` is the
        baseline; a ``site`` column in site runs.
    error_curves, expected, eca : DataFrame
        FFA/RFA curves of every ranking, the random ranking's expected curve, ECA.
    clustering : DataFrame
        k-means scores on each ranking's top features.
    statistics : dict
        Friedman and Nemenyi results over the blocks (folds or sites), with the table.
    pareto : dict of str -> dict of DataFrame
        For NSGA-II weighting rankers: ``weights``, ``objectives``, ``history``.
    status : {"running", "complete", "partial", "failed"}
    notes : list of str
        Steps skipped and why, failed sites, the error that stopped a run.
    """

    config: RunConfig
    units: dict[str, tuple[pd.DataFrame, pd.Series | None]] = field(default_factory=dict)
    rankings: dict[str, Ranking] = field(default_factory=dict)
    site_rankings: dict[str, Any] = field(default_factory=dict)
    aggregated: dict[str, Ranking | GenericRanking] = field(default_factory=dict)
    similarity: dict[str, pd.DataFrame] = field(default_factory=dict)
    curves: pd.DataFrame | None = None
    curve_folds: pd.DataFrame | None = None
    error_curves: pd.DataFrame | None = None
    expected: pd.DataFrame | None = None
    eca: pd.DataFrame | None = None
    clustering: pd.DataFrame | None = None
    statistics: dict | None = None
    pareto: dict[str, dict[str, pd.DataFrame]] = field(default_factory=dict)
    status: str = "running"
    notes: list[str] = field(default_factory=list)
    cached: list[str] = field(default_factory=list)
    computed: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    seconds: float = 0.0
    output_dir: Path | None = None

    @property
    def X(self) -> pd.DataFrame:
        """The data of a single-data run (the first site's in a site run)."""
        return next(iter(self.units.values()))[0]

    @property
    def y(self) -> pd.Series | None:
        return next(iter(self.units.values()))[1]

    @property
    def feature_names(self) -> list[str]:
        if self.rankings:
            return list(next(iter(self.rankings.values())).names)
        return list(self.X.columns)


# ------------------------------------------------------------------ data
def _prepare(X: pd.DataFrame, y, drop) -> tuple[pd.DataFrame, pd.Series | None]:
    missing = [c for c in drop if c not in X.columns]
    if missing:
        raise rankers.InvalidInputError(f"[data].drop names columns the data lacks: {missing}")
    return X.drop(columns=list(drop)), y


def load_units(config: RunConfig) -> dict[str, tuple[pd.DataFrame, pd.Series | None]]:
    """The data of a run: ``{name: (X, y)}``, one entry per site (one for a single data set)."""
    seed = config.random_state
    if config.sites:
        units = {}
        for site in config.sites:
            if site.builtin is not None:
                X, y = load_dataset(site.builtin, random_state=seed)
            else:
                X, y = load_file(site.path, target=site.target)
            if site.rows is not None:
                start, stop = site.rows
                X = X.iloc[start:stop].reset_index(drop=True)
                y = None if y is None else y.iloc[start:stop].reset_index(drop=True)
                if len(X) == 0:
                    raise rankers.InvalidInputError(
                        f"site {site.name!r}: rows {list(site.rows)} select no rows"
                    )
            units[site.name] = _prepare(X, y, config.data.drop)
        return units
    data = config.data
    if data.builtin is not None:
        X, y = load_dataset(data.builtin, data.n_samples, random_state=seed)
        name = data.builtin
    else:
        X, y = load_file(data.path, target=data.target)
        X, y = subsample(X, y, data.n_samples, seed)
        name = Path(data.path).name.split(".")[0]
    if data.site_column is not None:
        sites = split_sites(X, y, data.site_column)
        return {s: _prepare(Xs, ys, data.drop) for s, (Xs, ys) in sites.items()}
    return {name: _prepare(X, y, data.drop)}


def load_data(config: RunConfig) -> tuple[pd.DataFrame, pd.Series | None]:
    """The data set named by a single-data configuration, as (X, y)."""
    return next(iter(load_units(config).values()))


def _is_classes(y) -> bool:
    from sklearn.utils.multiclass import type_of_target

    return y is not None and type_of_target(np.asarray(y)) in ("binary", "multiclass")


def _fingerprint(X: pd.DataFrame, y) -> str:
    h = hashlib.sha256("\x1f".join(map(str, X.columns)).encode())
    h.update(pd.util.hash_pandas_object(X, index=False).to_numpy().tobytes())
    if y is not None:
        h.update(pd.util.hash_pandas_object(pd.Series(np.asarray(y)), index=False).to_numpy())
    return h.hexdigest()


# ------------------------------------------------------------------ cache checks
# What a cached value must look like to stand for its step (the cache has checked its
# format already): a foreign entry that decodes to well-formed data of another step, or
# of other data, is recomputed like a damaged one.
def _expect(condition: bool, what: str) -> None:
    if not condition:
        raise rankers.InvalidInputError(f"the cached value is not {what}")


def _check_ranking(ranking, names) -> None:
    _expect(isinstance(ranking, Ranking), "a ranking")
    _expect(list(ranking.names) == [str(n) for n in names], "a ranking of the data's features")


def _check_fit(names):
    def check(value) -> None:
        _expect(isinstance(value, tuple) and len(value) == 2, "(ranking, extras)")
        ranking, extras = value
        _check_ranking(ranking, names)
        _expect(isinstance(extras, dict), "a dict of extras")
        for name, frame in extras.items():
            _expect(name in _EXTRAS.values() and isinstance(frame, pd.DataFrame), "an extra table")

    return check


def _check_sites(units):
    def check(value) -> None:
        from aggregation.federated import SiteRankings

        _expect(isinstance(value, SiteRankings), "site rankings")
        _expect(set(value.rankings) | set(value.failed) == set(units), "of the run's sites")
        names = set(map(str, next(iter(units.values()))[0].columns))
        for ranking in [*value.rankings.values(), *value.aggregated.values(), value.generic]:
            _expect(isinstance(ranking, (Ranking, GenericRanking)), "rankings")
            _expect(set(ranking.names) == names, "rankings of the data's features")
        _expect(all(isinstance(f, pd.DataFrame) for f in value.similarity.values()), "tables")

    return check


def _check_table(*columns: str):
    def check(value) -> None:
        _expect(isinstance(value, pd.DataFrame) and len(value) > 0, "a table")
        _expect(set(columns) <= set(value.columns), f"a table with columns {list(columns)}")

    return check


# ------------------------------------------------------------------ progress
class _Progress:
    """tqdm bars: off at verbose 0, on a terminal at 1, always at 2."""

    def __init__(self, verbose: int):
        self.disable = False if verbose >= 2 else (None if verbose == 1 else True)
        self.verbose = verbose

    def bar(self, **kw) -> tqdm:
        return tqdm(disable=self.disable, dynamic_ncols=True, **kw)

    @property
    def shown(self) -> bool:
        import sys

        return self.disable is False or (self.disable is None and sys.stderr.isatty())

    @contextlib.contextmanager
    def tasks(self, desc: str, total: int | None, unit: str = "fold") -> Iterator[None]:
        """A bar advanced by the tasks of the outermost joblib call made inside.

        The library functions hand their folds (or grid points) to one joblib
        ``Parallel`` call; counting its completed tasks is the one progress signal they
        expose without changing their signatures. Nested calls (inside a ranker) are
        not counted.
        """
        if not self.shown:
            yield
            return
        from joblib import parallel as jp

        bar = self.bar(total=total, desc=desc, leave=False, unit=unit)
        call, progress = jp.Parallel.__call__, jp.Parallel.print_progress
        owner: list = []

        def tracked_call(par, iterable):
            if owner:
                return call(par, iterable)
            owner.append(par)
            try:
                return call(par, iterable)
            finally:
                owner.clear()

        def tracked_progress(par):
            if owner and par is owner[0]:
                bar.update(max(0, par.n_completed_tasks - bar.n))
            return progress(par)

        jp.Parallel.__call__, jp.Parallel.print_progress = tracked_call, tracked_progress
        try:
            yield
        finally:
            jp.Parallel.__call__, jp.Parallel.print_progress = call, progress
            bar.close()


# ------------------------------------------------------------------ rankers
def _needs_y(est) -> bool:
    needs = getattr(est, "_needs_labels", None)
    return bool(needs()) if callable(needs) else bool(getattr(est, "requires_y", False))


def _make_ranker(
    spec, config: RunConfig, *, main: bool, progress: _Progress | None = None, n_jobs: int = 1
):
    est = rankers.get(spec.name, **spec.params)
    given = est.get_params(deep=False)
    # the run's seed reaches every ranker that takes one, unless set per ranker; n_jobs
    # only the main fit's (evaluations parallelise over folds instead, one layer at a time)
    if "random_state" in given and "random_state" not in spec.params:
        est.set_params(random_state=config.random_state)
    if main and "n_jobs" in given and "n_jobs" not in spec.params:
        est.set_params(n_jobs=n_jobs)
    if "verbose" in given and "verbose" not in spec.params:
        est.set_params(verbose=int(main and progress is not None and _shows_bar(est, progress)))
    return est


def _shows_bar(est, progress: _Progress) -> bool:
    """Whether the ranker's ``verbose`` draws a progress bar (generations, epochs, ...).

    Only those are switched on with the run's bars; a ``verbose`` that prints joblib
    messages would only add noise.
    """
    from moweights.schema import _param_docs

    return progress.shown and "progress bar" in _param_docs(type(est)).get("verbose", "")


#: fitted attributes kept beside a ranking (the NSGA-II weighting's): attribute -> name
_EXTRAS = {"pareto_weights_": "weights", "pareto_objectives_": "objectives", "history_": "history"}


def _fit_one(spec, config, X, y, progress, n_jobs):
    est = _make_ranker(spec, config, main=True, progress=progress, n_jobs=n_jobs)
    if _needs_y(est) and y is None:
        raise rankers.InvalidInputError(
            f"ranker {spec.label!r} is supervised but the data has no target; set [data].target"
        )
    est.fit(X, y if _needs_y(est) else None)
    extras = {}
    for attr, name in _EXTRAS.items():
        if isinstance(getattr(est, attr, None), pd.DataFrame):
            extras[name] = getattr(est, attr)
    return Ranking.from_ranker(est, method=spec.label), extras


def _spec_key(spec) -> dict:
    return {"name": spec.name.strip().lower(), "params": spec.params}


def _rank(config: RunConfig, result: RunResult, cache: StepCache, progress, save, n_jobs) -> None:
    seed = config.random_state
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
                key = cache.key("rank", _fingerprint(X, y), _spec_key(spec), seed, ranker=spec.name)
                ranking, extras = cache.fetch(
                    f"ranker {spec.label}",
                    key,
                    lambda s=spec, X=X, y=y: _fit_one(s, config, X, y, progress, n_jobs),
                    check=_check_fit(X.columns),
                )
                result.rankings[spec.label] = _named(ranking, spec.label)
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
    parts = [(n, _fingerprint(X, y)) for n, (X, y) in result.units.items()]
    key = cache.key(
        "sites", parts, _spec_key(spec), config.random_state, methods, weights, ranker=spec.name
    )
    est = _make_ranker(spec, config, main=False)
    if "random_state" in est.get_params(deep=False) and "random_state" not in spec.params:
        est.set_params(random_state=None)  # rank_sites spawns one seed per site

    def compute():
        return rank_sites(
            frames,
            est,
            target=target if has_y else None,
            aggregate=methods,
            weights=weights,
            n_jobs=n_jobs,
            random_state=config.random_state,
            on_error="report",
            verbose=int(progress.shown),
        )

    sites = cache.fetch(
        f"ranker {spec.label} (sites)", key, compute, check=_check_sites(result.units)
    )
    for site, error in sites.failed.items():
        result.notes.append(f"ranker {spec.label}: site {site} failed: {error}")
    return sites


def _site_mean(site_rankings) -> Ranking:
    ranking = site_rankings.aggregated.get("mean_rank")
    if ranking is None:
        ranking = combine.mean_rank(list(site_rankings.rankings.values()))
    return ranking


def _combine(method: str, rankings: list, labels: list[str], weights) -> Any:
    if method == "weighted_mean_rank":
        w = [1.0] * len(labels) if weights is None else [weights[label] for label in labels]
        return combine.weighted_mean_rank(rankings, w)
    return getattr(combine, method)(rankings)


def _aggregate(config: RunConfig, result: RunResult) -> None:
    labels = list(result.rankings)
    if config.is_site_run:
        per_ranker = {m: [] for m in config.aggregation.methods}
        for sites in result.site_rankings.values():
            for m in per_ranker:
                per_ranker[m].append(sites.aggregated[m])
        inputs = per_ranker
        weights = None  # sites were weighted inside each ranker; rankers count alike
    else:
        inputs = {m: list(result.rankings.values()) for m in config.aggregation.methods}
        weights = config.aggregation.weights
    for method, rankings_ in inputs.items():
        try:
            agg = _combine(method, rankings_, labels, weights)
        except rankers.MoweightsError as exc:
            result.notes.append(f"aggregation {method} skipped: {exc}")
            continue
        result.aggregated[method] = _named(agg, method)
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


def _named(ranking, method: str):
    if isinstance(ranking, GenericRanking):
        return GenericRanking(ranking.blocks, method=method)
    return Ranking(ranking.names, ranking.scores, method=method)


def _order(ranking) -> list[str]:
    """Features best first; a generic ranking's ties in natural name order."""
    if isinstance(ranking, Ranking):
        return list(ranking.order)
    from aggregation.ranking import _natural_key

    return [f for block in ranking.blocks for f in sorted(block, key=_natural_key)]


# ------------------------------------------------------------------ evaluation
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
            fp = _fingerprint(X, y)
            for label, spec in targets:
                where = f"{label} @ {site}" if site_run else label
                bar.set_postfix_str(where)
                extra = {"n_random": tk.n_random} if spec is None else {}
                key = cache.key(
                    "topk", fp, spec and _spec_key(spec), settings, extra, ranker=spec and spec.name
                )

                def compute(spec=spec, X=X, y=y, where=where, extra=extra, settings=settings):
                    est = "random" if spec is None else _make_ranker(spec, config, main=False)
                    yy = y if spec is not None and _needs_y(est) else None
                    with progress.tasks(f"{where}: folds", ev.cv):
                        return topk_curve(
                            est, X, yy, n_jobs=n_jobs, return_folds=True, **settings, **extra
                        )

                check = _check_table("k", "fold", "metric", "value")
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


def _error_curves(config, result, cache, progress, save, n_jobs) -> None:
    X, y = result.X, result.y
    ec = config.evaluation.error_curves
    common = dict(cv=config.evaluation.cv, grid=ec.grid, random_state=config.random_state)
    fp = _fingerprint(X, y)
    targets = _targets(result)
    curves, rows = {}, []
    with progress.bar(total=len(targets) + bool(ec.n_random), desc="error curves") as bar:
        if ec.n_random:
            key = cache.key("expected", fp, ec.n_random, common)

            def expected():
                with progress.tasks("expected curve", None, unit="task"):
                    return expected_curve(X, y, n_random=ec.n_random, n_jobs=n_jobs, **common)

            check = _check_table("i", "ffa", "rfa", "mean", "std")
            result.expected = cache.fetch("expected random curve", key, expected, check)
            bar.update(1)
        for name, ranking in targets.items():
            bar.set_postfix_str(name)
            key = cache.key("ffa_rfa", fp, _order(ranking), common)

            def compute(ranking=ranking, name=name):
                with progress.tasks(f"{name}: FFA/RFA", None, unit="task"):
                    return ffa_rfa(ranking, X, y, n_jobs=n_jobs, **common)

            check = _check_table("i", "ffa", "rfa")
            curves[name] = cache.fetch(f"error curves {name}", key, compute, check)
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
    X, y = result.X, result.y
    cl = config.evaluation.clustering
    n = X.shape[1]
    k_features = (
        geometric_grid(n) if cl.k_features is None else sorted({min(k, n) for k in cl.k_features})
    )
    settings = dict(
        k_features=k_features,
        n_restarts=cl.n_restarts,
        two_step=cl.two_step,
        random_state=config.random_state,
    )
    targets = {name: _order(r) for name, r in _targets(result).items()}
    rng = np.random.default_rng(config.random_state)
    targets["random"] = [str(f) for f in rng.permutation(np.asarray(result.feature_names))]
    fp = _fingerprint(X, y)
    frames = []
    with progress.bar(total=len(targets), desc="clustering") as bar:
        for name, order in targets.items():
            bar.set_postfix_str(name)
            key = cache.key("clustering", fp, order, settings)
            table = cache.fetch(
                f"clustering {name}",
                key,
                lambda order=order: cluster_scores(X, y, order, n_jobs=n_jobs, **settings),
                check=_check_table("k_features", "evaluation", "metric", "mean", "std"),
            )
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
    classes = all(_is_classes(y) for _, y in result.units.values())
    for part, step in (("error_curves", _error_curves), ("clustering", _clustering)):
        switch = ev[part].enabled
        if switch is False:
            continue
        if config.is_site_run or not classes:
            if switch is True:
                why = "not computed per site" if config.is_site_run else "needs a class target"
                result.notes.append(f"{part} skipped: {why}")
            continue
        step(config, result, cache, progress, save, n_jobs)
    _statistics(config, result)
    save()


# ------------------------------------------------------------------ the run
@contextlib.contextmanager
def _backend(config: RunConfig) -> Iterator[int]:
    """The run's joblib context; yields the number of workers of its parallel steps.

    ``n_jobs`` goes through :func:`rankers.validation.check_n_jobs` (clipped to the CPUs
    available, -1 = all of them) and reaches one layer at a time: the main ranker fits
    (e.g. a forest's trees) or the evaluations' folds, never both at once. With the
    default "loky" the libraries keep their own hints (threads for many small tree fits,
    processes for folds): forcing a process pool on every call made genie3 on iris take
    a minute at ``-j 16`` instead of a second.
    """
    from threadpoolctl import threadpool_limits

    run_ = config.run
    if run_.backend != "dask":
        forced = {} if run_.backend == "loky" else {"backend": run_.backend}
        with parallel_config(**forced), threadpool_limits(run_.threads):
            yield check_n_jobs(run_.n_jobs, what="[run].n_jobs")
        return
    from dask.distributed import Client

    kwargs = {} if run_.scheduler else {"processes": False, "dashboard_address": None}
    client = Client(run_.scheduler, **kwargs) if run_.scheduler else Client(**kwargs)
    try:
        with parallel_config(backend="dask"):
            yield check_n_jobs(-1 if run_.n_jobs is None else run_.n_jobs, what="[run].n_jobs")
    finally:
        client.close()


def run(config: RunConfig, output_dir=None, *, cache: bool | None = None) -> RunResult:
    """Execute one configured run and write its report folder.

    Parameters
    ----------
    config : RunConfig
        A validated configuration (see :func:`moweights.config.load_config`).
    output_dir : path, optional
        Overrides ``[output].dir``.
    cache : bool, optional
        Overrides ``[output].cache``: reuse and keep finished steps' results.

    Returns
    -------
    RunResult
        ``status`` is "complete"; a run stopped by Ctrl-C writes a partial folder and
        re-raises ``KeyboardInterrupt``, a failed one writes what it has and re-raises.

    Raises
    ------
    OutputFolderError
        The output folder is a file, lies under a file, or is not writable.
    RunLockedError
        Another run is writing into the output folder; nothing was written.
    """
    from moweights import report
    from moweights.lock import RunLock

    start = time.perf_counter()
    out = report.make_output_dir(output_dir if output_dir is not None else config.output_dir)
    with RunLock(out):  # released at the end, also on failure and Ctrl-C
        return _run_locked(config, out, cache, start)


def _run_locked(config: RunConfig, out: Path, cache: bool | None, start: float) -> RunResult:
    from moweights import report

    result = RunResult(config=config, output_dir=out)
    folder = report.RunFolder(out, config)
    use_cache = config.output.cache if cache is None else cache
    cacher = StepCache(
        out / ".cache" if use_cache else None,
        on_hit=result.cached.append,
        on_miss=result.computed.append,
    )
    progress = _Progress(config.run.verbose)

    def save() -> None:
        result.seconds = time.perf_counter() - start
        folder.write(result)

    try:
        with warnings.catch_warnings():
            if config.run.verbose == 0:
                warnings.simplefilter("ignore")
            with _backend(config) as n_jobs:
                result.units = load_units(config)
                save()
                _rank(config, result, cacher, progress, save, n_jobs)
                _aggregate(config, result)
                save()
                if config.evaluation.enabled:
                    evaluate(config, result, cacher, progress, save, n_jobs)
    except KeyboardInterrupt:
        result.status = "partial"
        result.notes.append("interrupted (Ctrl-C): the files listed are complete, the rest missing")
        folder.finish(result, time.perf_counter() - start)
        raise
    except BaseException as exc:
        result.status = "failed"
        result.notes.append(f"failed: {type(exc).__name__}: {exc}")
        with contextlib.suppress(Exception):
            folder.finish(result, time.perf_counter() - start)
        raise
    result.status = "complete"
    folder.finish(result, time.perf_counter() - start)
    return result
