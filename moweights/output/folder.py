"""A run's output folder: tables (CSV + JSON) written as steps finish, then plots and HTML.

Layout of a run folder (every file written atomically; tables without timestamps or
machine details, so the same configuration and seed give byte-identical CSV files)::

    manifest.json        status (running | complete | partial | failed), every file + sha256
    summary.json         data, rankers and their top features, aggregates, headline numbers
    config.json          the resolved configuration (re-runnable: moweights run config.json)
    features.csv         one row per feature: every ranker's score, rank, p- and q-value,
                         every aggregate's rank (see :mod:`moweights.output.features`)
    scores.csv ranks.csv aggregated.json              rankers and their combinations
    similarity_<measure>.csv                          ranker x ranker
    site_scores.csv site_ranks.csv sites.json site_similarity.csv      site runs
    class_curves.csv class_folds.csv class_at_k.csv   class prediction from the top k features
    curves.csv curve_folds.csv curve_at_k.csv         top-k kNN curves (+ random baseline)
    error_curves.csv expected_curve.csv eca.csv       FFA/RFA curves, ECA against random
    clustering.csv                                    k-means scores on top features
    statistics.json statistics_table.csv nemenyi_pvalues.csv
    pareto_<label>_{weights,objectives,history}.csv   NSGA-II weighting rankers
    evaluation.json      every evaluation table as JSON records
    *.png  report.html   drawn from the tables by :func:`moweights.output.render`
    .cache/<key>.npz     finished steps as data, never pickles, for resuming
                         (``[output].cache``; see :mod:`moweights.pipeline.cache`)
    .moweights.lock      while a run writes the folder: its pid, host and start time
                         (one run per folder; see :mod:`moweights.pipeline.lock`)

Numbers JSON cannot hold (inf, nan: e.g. the Iman-Davenport F when every fold ranks the
methods alike) are written as the strings "inf", "-inf", "nan" in the JSON files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from aggregation import GenericRanking, Ranking
from moweights.errors import OutputWriteError
from moweights.output.baselines import (
    RANDOM_CLASS,
    RANDOM_ECA,
    RANDOM_TOPK,
    cut_after_name,
    generic_one_block_text,
)
from moweights.output.features import FEATURES, feature_table, significant_counts
from moweights.output.files import (
    MANIFEST,
    ResultsFolder,
    csv_text,
    json_text,
    read_json,
    records,
    safe_name,
    sigint_ignored,
)

#: the marker table of a run with [markers]: one row per class and feature
MARKERS = "markers.csv"

__all__ = [
    "MANIFEST",
    "RunFolder",
    "curve_point",
    "identical_rankings",
    "summary_text",
]


def curve_point(curves: pd.DataFrame, k: int = 16, n_features=None) -> pd.DataFrame:
    """Each ranker's curve at the comparison point: the largest k <= ``k`` below n.

    The unsupervised papers compare rankings at 16 features; on data with fewer features
    the largest grid point below the full set is used (at the full set all rankings give
    the same model). ``n_features``: the number of features (default the largest k).
    """
    rows = []
    keys = [c for c in ("site", "ranker") if c in curves.columns]
    for key, part in curves.groupby(keys, sort=False):
        n = part["k"].max() if n_features is None else n_features
        below = part[(part["k"] <= k) & (part["k"] < n)]
        row = (below if len(below) else part).sort_values("k").iloc[0 if not len(below) else -1]
        key = key if isinstance(key, tuple) else (key,)
        rows.append(
            {
                **dict(zip(keys, key, strict=True)),
                "k": int(row["k"]),
                "mean": row["mean"],
                "std": row["std"],
            }
        )
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ tables of a result
def _ranks_table(result) -> pd.DataFrame:
    names = result.feature_names
    table = pd.DataFrame(index=pd.Index(names, name="feature"))
    for label, ranking in result.rankings.items():
        table[label] = ranking.ranks.reindex(names)
    for method, agg in result.aggregated.items():
        if method == "mean_rank":  # the averaged rank itself, not the rank of it
            table[method] = (len(agg) + 1 - agg.to_series()).reindex(names)
        else:
            table[method] = agg.ranks.reindex(names)
        if isinstance(agg, GenericRanking):
            block = {f: i + 1 for i, b in enumerate(agg.blocks) for f in b}
            table[f"{method}_block"] = [block[f] for f in names]
    if "mean_rank" in result.aggregated:
        table = table.sort_values("mean_rank", kind="stable")
    return table


def _aggregated_json(aggregated: dict) -> dict:
    out = {}
    for method, agg in aggregated.items():
        if isinstance(agg, GenericRanking):
            out[method] = {"s": len(agg), "blocks": [list(b) for b in agg.blocks], "text": str(agg)}
        elif isinstance(agg, Ranking):
            scores = agg.to_series()
            mean = (len(agg) + 1 - scores.to_numpy(dtype=float)).tolist()
            out[method] = {
                "order": list(agg.order),
                "mean_rank": dict(zip(scores.index, mean, strict=True)),
            }
    return out


def _site_tables(result) -> dict[str, Any]:
    names = result.feature_names
    scores, ranks, sims, info = {}, {}, [], {}
    for label, sr in result.site_rankings.items():
        for site, ranking in sr.rankings.items():
            scores[f"{label}@{site}"] = ranking.to_series().reindex(names)
            ranks[f"{label}@{site}"] = ranking.ranks.reindex(names)
        for measure, matrix in sr.similarity.items():
            long = matrix.rename_axis(index="site").reset_index()
            long = long.melt(id_vars="site", var_name="other", value_name="value")
            sims.append(long.assign(ranker=label, measure=measure))
        info[label] = {
            "s": sr.s,
            "compatible": sr.compatible,
            "generic": [list(b) for b in sr.generic.blocks],
            "failed": sr.failed,
            "sizes": sr.sizes,
            "aggregated": _aggregated_json(sr.aggregated),
        }
    frame = pd.concat(sims, ignore_index=True) if sims else None
    if frame is not None:
        frame = frame[["ranker", "measure", "site", "other", "value"]]
    index = pd.Index(names, name="feature")
    return {
        "site_scores.csv": pd.DataFrame(scores, index=index),
        "site_ranks.csv": pd.DataFrame(ranks, index=index),
        "site_similarity.csv": frame,
        "sites.json": info,
    }


def _evaluation(result) -> dict:
    cfg = result.config
    out: dict[str, Any] = {}
    n = None if cfg.is_site_run or not result.units else result.X.shape[1]
    if result.class_curves is not None:
        out["class_at_k"] = curve_point(result.class_curves, cfg.evaluation.classification.at_k, n)
    if result.curves is not None:
        out["curve_at_k"] = curve_point(result.curves, cfg.evaluation.topk.at_k, n)
    out.update(
        class_curves=result.class_curves,
        class_folds=result.class_folds,
        curves=result.curves,
        curve_folds=result.curve_folds,
        eca=result.eca,
        error_curves=result.error_curves,
        expected_curve=result.expected,
        clustering=result.clustering,
    )
    return out


def _target_name(cfg, y) -> str | None:
    """The target as the user named it: the column of a data file, else the data's own."""
    if y is None:
        return None
    named = cfg.data.get("target") or next(
        (s.get("target") for s in cfg.sites if s.get("target")), None
    )
    return str(named) if named else f"{y.name} (the data set's own labels)"


def identical_rankings(result) -> list[list[str]]:
    """Groups of rankings (rankers' and aggregated) with exactly the same order."""
    orders: dict[tuple, list[str]] = {}
    named = dict(result.rankings)
    named.update({m: r for m, r in result.aggregated.items() if hasattr(r, "order")})
    for label, ranking in named.items():
        orders.setdefault(tuple(ranking.order), []).append(label)
    return [group for group in orders.values() if len(group) > 1]


def _summary(
    result,
    status: str,
    files: list[str],
    features: pd.DataFrame | None = None,
    aggregated: dict | None = None,
) -> dict:
    """The run's ``summary.json``; ``features`` and ``aggregated``: the feature table and
    :func:`_aggregated_json` when the caller has built them (else built here)."""
    cfg = result.config
    n_top = min(10, len(result.feature_names)) if result.units else 0
    data = {"name": cfg.describe_data()}
    left_out = [s.name for s in cfg.sites if result.units and s.name not in result.units]
    if left_out:  # [data] on_mismatch = "drop": the notes say why
        kept = ", ".join(result.units)
        data["name"] = f"{len(result.units)} of {len(cfg.sites)} sites: {kept} (left out: "
        data["name"] += ", ".join(left_out) + ")"
    if result.units:
        data.update(
            n_samples=int(sum(len(X) for X, _ in result.units.values())),
            n_features=len(result.feature_names),
            target=_target_name(cfg, result.y),
            sites={s: len(X) for s, (X, _) in result.units.items()} if cfg.is_site_run else None,
        )
    ev = _evaluation(result)
    stats = result.statistics
    return {
        "status": status,
        "source": cfg.source,
        "data": data,
        "random_state": cfg.random_state,
        "rankers": [
            {
                "label": s.label,
                "name": s.name,
                "params": s.params,
                "top": result.rankings[s.label].top(n_top) if s.label in result.rankings else None,
            }
            for s in cfg.rankers
        ],
        "aggregated": _aggregated_json(result.aggregated) if aggregated is None else aggregated,
        "generic_tolerance": float(cfg.aggregation.get("tolerance") or 0.0),
        "generic_fallback": result.generic_fallback,
        "evaluation": {
            "metric": cfg.evaluation.topk.metric,
            "cv": cfg.evaluation.cv,
            "nested": True,
            "classification": None
            if result.class_curves is None
            else {
                "metric": cfg.evaluation.classification.metric,
                "model": cfg.evaluation.classification.model,
                "n_neighbors": cfg.evaluation.classification.n_neighbors,
                "at_k": records(ev.get("class_at_k")),
            },
            "at_k": records(ev.get("curve_at_k")),
            "eca": records(result.eca),
            "eca_protocol": cfg.evaluation.error_curves.protocol,
            "statistics": None
            if stats is None
            else {k: v for k, v in stats.items() if k not in ("table", "pvalues")},
        },
        "identical": identical_rankings(result),
        "features": _features_summary(result, features),
        "markers": _markers_summary(result),
        "notes": list(result.notes),
        "cache": {"reused": list(result.cached), "computed": list(result.computed)},
        "seconds": round(float(result.seconds), 2),
        "files": files,
    }


def _markers_summary(result) -> dict | None:
    """Where the marker table is, how it was made, and each class's top markers (as many
    as ``[markers] n_top``), or None without ``[markers]``."""
    table = result.markers
    if table is None:
        return None
    settings = result.config.markers
    n_top = int(settings.get("n_top") or 5)
    top = {
        str(group): rows["feature"].head(n_top).tolist()
        for group, rows in table.groupby("group", observed=True, sort=False)
    }
    return {
        "file": MARKERS,
        "test": settings.get("test"),
        "rankers": list(settings.get("rankers") or ()),
        "aggregate": settings.get("aggregate"),
        "direction": settings.get("direction"),
        "n_top": n_top,
        "top": top,
    }


def _features_summary(result, table: pd.DataFrame | None = None) -> dict | None:
    """Where the per-feature table is, the q-value threshold, and per ranker with
    q-values how many features pass it (from ``table``, the result's feature table, when
    the caller has it)."""
    if not result.rankings:
        return None
    q = float(result.config.output.get("q", 0.05))
    table = feature_table(result) if table is None else table
    return {
        "file": FEATURES,
        "q": q,
        "significant": significant_counts(table, q),
        "transform": result.config.data.get("transform") or "none",
        "scale": result.config.data.get("scale") or "none",
        "bootstrap": int(result.config.aggregation.get("bootstrap") or 0)
        if result.stability
        else None,
        "confidence": float(result.config.aggregation.get("confidence") or 0.9),
    }


def _same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two arrays print the same in a CSV: equal dtype and shape, and the same
    bytes (numbers: -0.0 is not 0.0) or objects of the same type and repr."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind in "biufcmM":
        return a.tobytes() == b.tobytes()
    return [(type(v), repr(v)) for v in a.ravel().tolist()] == [
        (type(v), repr(v)) for v in b.ravel().tolist()
    ]


def _same_table(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    """Whether ``csv_text`` would write ``a`` and ``b`` alike: the same labels, names,
    dtypes and values, bit for bit (a False only costs writing the table again)."""
    if a.shape != b.shape or list(a.dtypes) != list(b.dtypes):
        return False
    if a.index.names != b.index.names or a.columns.names != b.columns.names:
        return False
    if not (
        _same_values(a.index.to_numpy(), b.index.to_numpy())
        and _same_values(a.columns.to_numpy(), b.columns.to_numpy())
    ):
        return False
    return all(
        _same_values(a.iloc[:, j].to_numpy(), b.iloc[:, j].to_numpy()) for j in range(a.shape[1])
    )


class RunFolder(ResultsFolder):
    """The output folder of one run; :meth:`write` after every step, :meth:`finish` at the end."""

    def write(self, result, status: str = "running") -> None:
        """(Re)write every table the result holds so far, then the summary and manifest."""
        tables: dict[str, Any] = {}
        features = None
        if result.rankings:
            names = result.feature_names
            scores = pd.DataFrame(
                {k: r.to_series().reindex(names) for k, r in result.rankings.items()}
            )
            scores.index.name = "feature"
            tables["scores.csv"] = scores
            tables["ranks.csv"] = _ranks_table(result)
            features = feature_table(result)  # for the summary too: one build per write
            tables[FEATURES] = (features, False)
            tables["aggregated.json"] = _aggregated_json(result.aggregated)
        for measure, matrix in result.similarity.items():
            tables[f"similarity_{measure}.csv"] = matrix.rename_axis(index="ranker")
        if result.markers is not None:
            tables[MARKERS] = (result.markers, False)
        if result.site_rankings:
            tables.update(_site_tables(result))
        evaluation = _evaluation(result)
        for name, frame in evaluation.items():
            tables[f"{name}.csv"] = frame
        if result.statistics is not None:
            stats = result.statistics
            tables["statistics.json"] = {
                k: v for k, v in stats.items() if k not in ("table", "pvalues")
            }
            tables["statistics_table.csv"] = stats["table"]
            tables["nemenyi_pvalues.csv"] = stats["pvalues"].rename_axis(index="method")
        for label, parts in result.pareto.items():
            for part, frame in parts.items():
                index = part != "history"
                tables[f"pareto_{safe_name(label)}_{part}.csv"] = (frame, index)
        if any(v is not None for v in evaluation.values()) or result.statistics is not None:
            as_json = {k: records(v) for k, v in evaluation.items() if v is not None}
            as_json["statistics"] = tables.get("statistics.json")
            tables["evaluation.json"] = as_json
        try:
            for name, value in tables.items():
                if value is None:
                    continue
                if name.endswith(".json"):
                    self._put(name, json_text(value))
                    continue
                frame, index = value if isinstance(value, tuple) else (value, None)
                if index is None:
                    index = not isinstance(frame.index, pd.RangeIndex)
                self._put(name, self._csv(name, frame, index))
            summary = _summary(
                result, status, sorted(self.files), features, tables.get("aggregated.json")
            )
            self._put("summary.json", json_text(summary))
            self._manifest(status, "; ".join(result.notes) or None)
        except OutputWriteError as exc:  # a full disk: the manifest must not say "running"
            self._manifest_after_failure("failed", "; ".join([*result.notes, str(exc)]))
            raise

    def _csv(self, name: str, frame: pd.DataFrame, index: bool) -> str:
        """``csv_text(frame, index=index)``, or the text of the previous write of ``name``
        when its table was the same bit for bit: a run rewrites its tables after every
        step, most of them unchanged (20,000 rows take a tenth of a second each)."""
        memo = self.__dict__.setdefault("_csv_memo", {})
        previous = memo.get(name)
        if previous is not None and previous[1] == index and _same_table(previous[0], frame):
            return previous[2]
        text = csv_text(frame, index=index)
        memo[name] = (frame.copy(), index, text)  # a copy: the caller's table may change
        return text

    def finish(self, result, seconds: float) -> None:
        """Final tables and summary with the run's status, then plots and HTML, then the
        manifest (last: "complete" only when every file is written; see ``_draw``)."""
        result.seconds = seconds
        with sigint_ignored():  # a second Ctrl-C must not leave the final tables half
            self.write(result, status=result.status)
        from moweights.output.report import render  # plots need matplotlib: only here

        self._draw(result, render)


def summary_text(folder) -> str:
    """A short human summary of a run folder (from its ``summary.json``), for the terminal."""
    folder = Path(folder)
    summary = read_json(folder / "summary.json", what="summary")
    if "study" in summary:
        from moweights.output.study import study_summary_text

        return study_summary_text(folder)
    data = summary["data"]
    shape = (
        f" ({data['n_samples']} samples x {data['n_features']} features)"
        if "n_samples" in data
        else ""
    )
    lines = [
        f"moweights run: {data['name']}{shape}, {len(summary['rankers'])} rankers, "
        f"random_state={summary['random_state']} -- {summary['status'].upper()}",
    ]
    done = [r for r in summary["rankers"] if r["top"] is not None]
    agg = summary["aggregated"]
    width = max([len(r["label"]) for r in done] + [9])
    if done:
        lines += ["", "top 5 features per ranker:"]
        for r in done:
            lines.append(f"  {r['label']:<{width}}  {', '.join(r['top'][:5])}")
    if "mean_rank" in agg:
        lines.append(f"  {'mean rank':<{width}}  {', '.join(agg['mean_rank']['order'][:5])}")
    if "generic" in agg:
        text = _cut(agg["generic"]["text"])
        tol = summary.get("generic_tolerance") or 0.0
        q = len(done) if not summary["data"].get("sites") else len(summary["data"]["sites"])
        how = (
            f" (tolerance {tol:g}: {int(tol * q)} of {q} rankings may disagree on each side)"
            if tol
            else ""
        )
        fallback = summary.get("generic_fallback")
        if agg["generic"]["s"] == 1 and fallback:
            lines += ["", *_fallback_lines(fallback)]
        else:
            lines += ["", f"generic ranking{how}: s = {agg['generic']['s']} block(s): {text}"]
    for group in summary.get("identical") or []:
        lines.append(f"  identical rankings (fitted on all samples): {' = '.join(group)}")
    lines += _features_lines(summary)
    markers = summary.get("markers")
    if markers:
        lines += ["", f"top markers per class ({markers['test']}; {markers['file']}):"]
        wide = max(len(g) for g in markers["top"]) if markers["top"] else 0
        for group, features in markers["top"].items():
            lines.append(f"  {group:<{wide}}  {', '.join(features)}")
    ev = summary["evaluation"]
    head = _class_lines(ev) + _statistics_lines(ev, "classification")
    topk = _topk_lines(ev) + _statistics_lines(ev, "topk")
    # with a class target the class prediction is the headline: it comes first
    lines += head + _eca_lines(ev) + topk if ev.get("classification") else topk + _eca_lines(ev)
    for note in summary["notes"]:
        lines.append(f"note: {note}")
    from moweights.output.report import reused_steps

    earlier = reused_steps(summary)
    reused = f", {len(earlier)} step(s) from an earlier run's cache" if earlier else ""
    manifest = read_json(folder / MANIFEST, what="manifest")
    n_files = len(manifest["files"]) + 1
    lines += ["", f"wrote {n_files} files to {folder}/ in {summary['seconds']:.1f} s{reused}"]
    return "\n".join(lines)


def _cut(text: str, width: int = 100) -> str:
    """The summary's generic ranking line: :func:`~moweights.output.baselines.cut_after_name`."""
    return cut_after_name(text, width)


def _features_lines(summary: dict) -> list[str]:
    """Where the per-feature table is and how many features pass the q-value threshold."""
    feats = summary.get("features")
    if not feats:
        return []
    n = summary["data"].get("n_features")
    of = f" of {n}" if n else ""
    passed = ", ".join(f"{label} {count}{of}" for label, count in feats["significant"].items())
    tested = f"; q-value <= {feats['q']:g}: {passed}" if passed else ""
    return ["", f"per-feature table: {feats['file']} (scores, ranks, p- and q-values){tested}"]


def _fallback_lines(fallback: dict) -> list[str]:
    lines = [generic_one_block_text(fallback)]
    tolerant = fallback.get("tolerant")
    if tolerant:
        blocks = " > ".join("{" + ",".join(b[:6]) + (",..." if len(b) > 6 else "") + "}"
                            for b in tolerant["blocks"][:6])  # fmt: skip
        more = " > ..." if tolerant["s"] > 6 else ""
        lines.append(
            f"  letting one of the {fallback['q']} disagree on each side (tolerance "
            f"{fallback['tolerance']:g}): s = {tolerant['s']} block(s): {blocks}{more}"
        )
    shared = fallback["shared_top"]
    listed = ", ".join(shared["features"]) or "none"
    lines.append(f"  in the top {shared['k']} of all {fallback['q']} rankings: {listed}")
    return lines


def _class_lines(ev: dict) -> list[str]:
    cl = ev.get("classification")
    if not cl or not cl.get("at_k"):
        return []
    model = f"{cl['n_neighbors']}-NN" if cl["model"] == "knn" else cl["model"]
    lines = [
        "",
        f"{cl['metric'].replace('_', ' ')} of {model} predicting the class from the top k "
        f"features ({ev['cv']}-fold CV, every ranking refit on each training fold; higher is "
        "better):",
    ]
    for row in cl["at_k"]:
        where = f"{row['ranker']} @ {row['site']}" if "site" in row else row["ranker"]
        lines.append(f"  {where:<24} k={row['k']:<3d} {row['mean']:.4f} ± {row['std']:.4f}")
    lines.append(f"  {RANDOM_CLASS}")
    return lines


def _statistics_lines(ev: dict, score: str) -> list[str]:
    """The test of the headline score, printed under the table it tests."""
    st = ev.get("statistics")
    if not st or st.get("score", "topk") != score:
        return []
    fr, ne = st["friedman"], st["nemenyi"]
    lines = [
        "",
        f"tested: {st.get('description', st['metric'])} -- Friedman over {fr['n']} "
        f"{st['blocks']}: chi2 = {float(fr['statistic']):.3g}, p = {float(fr['pvalue']):.3g}; "
        f"Nemenyi CD = {float(ne['cd']):.3g} at alpha = {st['alpha']}",
    ]
    if st.get("winner"):
        random = st.get("random_rank")
        versus = f"; random {random:.2f}" if random is not None else ""
        rank = f"average rank {st['winner_rank']:.2f} of {fr['k']}{versus}; 1 = best"
        if not st.get("significant", True):
            lines.append(
                f"no significant difference (Friedman p >= {st['alpha']}); the best average "
                f"rank is {st['winner']}'s ({rank})"
            )
        else:
            against = {True: "better than random", False: "not significantly better than "
                       "random", None: ""}[st.get("beats_random")]  # fmt: skip
            against = f"; Nemenyi: {against}" if against else ""
            lines.append(f"winner: {st['winner']} ({rank}){against}")
    for caution in st.get("caution") or []:
        lines.append(f"caution: {caution}")
    return lines


def _topk_lines(ev: dict) -> list[str]:
    if not ev.get("at_k"):
        return []
    lines = [
        "",
        f"{ev['metric'].upper()} of {ev['cv']}-fold kNN at k top features, every ranking refit "
        "on each training fold (lower is better):",
    ]
    for row in ev["at_k"]:
        where = f"{row['ranker']} @ {row['site']}" if "site" in row else row["ranker"]
        lines.append(f"  {where:<24} k={row['k']:<3d} {row['mean']:.4f} ± {row['std']:.4f}")
    lines.append(f"  {RANDOM_TOPK}")
    return lines


def _eca_lines(ev: dict) -> list[str]:
    if not ev.get("eca"):
        return []
    protocol = ev.get("eca_protocol") or ("nested" if ev.get("nested") else "whole_data")
    if protocol == "whole_data":
        how = "rankings fitted on all samples (whole_data protocol: OPTIMISTIC, the test folds "
        how += "helped choose the features)"
    else:
        how = "every ranking refit on each training fold"
    lines = ["", f"ECA against a random ranking ({how}; > 0: better than random):"]
    for row in ev["eca"]:
        lines.append(f"  {row['ranking']:<24} {row['weighting']:<12} {row['eca']:+.4f}")
    lines.append(f"  {RANDOM_ECA}")
    return lines
