"""The self-contained HTML page of a run folder, and :func:`render` (figures + page).

Only the saved tables are read, never the data, so ``moweights report FOLDER`` re-renders
a finished (or partial) run anywhere. The page is a Jinja2 template shipped with the
package (``templates/report.html`` and its style sheet); it embeds every image as base64
and carries its own styles: one file to mail or archive.
"""

from __future__ import annotations

import base64
import hashlib
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from moweights.output.baselines import (
    RANDOM_CLASS,
    RANDOM_ECA,
    RANDOM_TOPK,
    cut_after_name,
    generic_one_block_text,
)
from moweights.output.files import atomic_write, safe_name
from moweights.output.plots import STUDY, draw, draw_study, is_study, load
from moweights.output.plots import tables as listed_tables

__all__ = ["FEATURE_ROWS", "LOW_FIRST", "PAGE", "page", "render", "reused_steps", "study_page"]

PAGE = "report.html"


def render(folder, *, plots: bool = True, html: bool = True) -> dict[str, str]:
    """Draw a run folder's PNG plots and write its ``report.html``, from its tables.

    Returns
    -------
    dict
        File name -> sha256 of every file written.
    """
    folder = Path(folder)
    study = is_study(folder)
    images = (draw_study(folder) if study else draw(folder)) if plots else []
    written = {name: hashlib.sha256(data).hexdigest() for name, data, _ in images}
    if html:
        text = (study_page if study else page)(folder, images).encode("utf-8")
        atomic_write(folder / PAGE, text)
        written[PAGE] = hashlib.sha256(text).hexdigest()
    return written


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.number)) and not isinstance(value, bool)


def _number(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        return f"{value:.4g}" if np.isfinite(value) else "–"
    return str(value)


@cache
def _environment():
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("moweights.output", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.tests["number"] = _is_number
    env.filters["number"] = _number
    return env


def _generic_text(agg: dict, limit: int = 400) -> str:
    """A generic ranking in at most ``limit`` characters, cut after a whole name."""
    text = f"s = {agg['s']}: " + " > ".join("{" + ", ".join(b) + "}" for b in agg["blocks"])
    return cut_after_name(text, limit)


def _fallback_text(fallback: dict) -> str:
    """A one-block strict generic ranking in plain words, with what can be said instead."""
    parts = [generic_one_block_text(fallback) + "."]
    tolerant = fallback.get("tolerant")
    if tolerant:
        parts.append(
            f"Letting one of the {fallback['q']} rankings disagree on each side (tolerance "
            f"{fallback['tolerance']:g}): "
            + _generic_text({"s": tolerant["s"], "blocks": tolerant["blocks"]}, limit=300)
            + "."
        )
    shared = fallback["shared_top"]
    listed = ", ".join(shared["features"]) or "none"
    parts.append(f"In the top {shared['k']} of every ranking: {listed}.")
    return " ".join(parts)


def _eca_table(rows: list[dict]) -> tuple[list[dict], list[str]]:
    """ECA as rankings x weightings, in the order they were computed."""
    eca = pd.DataFrame(rows, columns=["ranking", "weighting", "eca"])
    wide = eca.pivot(index="ranking", columns="weighting", values="eca")
    wide = wide.reindex(
        index=list(dict.fromkeys(eca["ranking"])), columns=list(dict.fromkeys(eca["weighting"]))
    )
    table = [{"ranking": name, **row} for name, row in wide.to_dict(orient="index").items()]
    return table, ["ranking", *wide.columns]


def page(folder, images: list[tuple[str, bytes, str]]) -> str:
    """The HTML page of a run folder, with ``images`` (name, PNG bytes, caption) embedded."""
    folder = Path(folder)
    summary = load(folder, "summary.json") or {}
    config = load(folder, "config.json") or {}
    figures = {
        name: {"name": name, "caption": caption, "data": base64.b64encode(data).decode("ascii")}
        for name, data, caption in images
    }
    data = summary.get("data", {})
    rankers = [
        {"label": r["label"], "ranker": r["name"],
         "params": ", ".join(f"{k}={v}" for k, v in r["params"].items()) or "defaults",
         "top features": ", ".join(r["top"][:8]) if r["top"] else "(not run)"}
        for r in summary.get("rankers", [])
    ]  # fmt: skip
    fallback = summary.get("generic_fallback")
    aggregated = [
        {"method": m, "result": _generic_text(v) if "blocks" in v else ", ".join(v["order"][:10])}
        for m, v in summary.get("aggregated", {}).items()
    ]
    for row in aggregated:
        if row["method"] == "generic" and fallback and summary["aggregated"]["generic"]["s"] == 1:
            row["result"] = _fallback_text(fallback)
    ev = summary.get("evaluation", {})
    at_k = ev.get("at_k") or []
    at_k_columns = [c for c in ("site", "ranker", "k", "mean", "std") if at_k and c in at_k[0]]
    cl = ev.get("classification") or {}
    class_at_k = cl.get("at_k") or []
    class_columns = [
        c for c in ("site", "ranker", "k", "mean", "std") if class_at_k and c in class_at_k[0]
    ]
    model = cl.get("model", "")
    model = f"{cl.get('n_neighbors')}-NN" if model == "knn" else model
    eca_rows, eca_columns = _eca_table(ev.get("eca") or [])
    context = {
        "identical": [" = ".join(group) for group in summary.get("identical") or []],
        "random_topk": RANDOM_TOPK,
        "random_eca": RANDOM_ECA,
        "random_class": RANDOM_CLASS,
        "classification": cl,
        "class_at_k": class_at_k,
        "class_columns": class_columns,
        "class_model": model,
        "class_metric": str(cl.get("metric", "")).replace("_", " "),
        "eca_protocol": ev.get("eca_protocol") or ("nested" if ev.get("nested") else "whole_data"),
        "pareto_tables": _pareto_tables(folder),
        "features": _feature_table(folder, summary),
        "markers": summary.get("markers"),
        "markers_rows": [
            {"class": group, "top markers": ", ".join(features)}
            for group, features in ((summary.get("markers") or {}).get("top") or {}).items()
        ],
        "name": data.get("name", folder.name),
        "status": summary.get("status", "unknown"),
        "source": summary.get("source", ""),
        "seed": config.get("run", {}).get("random_state", summary.get("random_state")),
        "seconds": summary.get("seconds", ""),
        "reused": len(reused_steps(summary)),
        "notes": summary.get("notes") or [],
        "data_rows": [
            {"": k.replace("_", " "), "value": v}
            for k, v in data.items()
            if k != "sites" and v is not None
        ],
        "sites": [{"site": s, "rows": n} for s, n in (data.get("sites") or {}).items()],
        "rankers": rankers,
        "aggregated": aggregated,
        "evaluation": ev,
        "at_k": at_k,
        "at_k_columns": at_k_columns,
        "statistics": ev.get("statistics"),
        "eca_rows": eca_rows,
        "eca_columns": eca_columns,
        "figures": figures,
        "site_figures": [f for n, f in figures.items() if n.startswith("sites_")],
        "pareto_figures": [f for n, f in figures.items() if n.startswith("pareto")],
        "files": sorted(
            p.name for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")
        ),
    }
    return _environment().get_template(PAGE).render(context)


#: rows of the feature table the page shows (features.csv holds them all)
FEATURE_ROWS = 200
#: features.html columns that read best low to high (ranks, p- and q-values, blocks); every
#: other number (a score under any name, a weight, a statistic) reads best high to low
LOW_FIRST = (".rank", ".pvalue", ".qvalue", ".rank_low", ".rank_high", ".block")


def reused_steps(summary: dict) -> list[str]:
    """The steps a run's summary says came from an earlier run's cache (a step met again
    within the run, e.g. an identical ranking's, is not among them: the cache tells those
    apart, :class:`~moweights.pipeline.cache.StepCache`'s ``on_repeat``)."""
    return list(summary.get("cache", {}).get("reused", []))


def _cell(column: str, value: Any) -> dict:
    """A feature-table cell: its text, and the number the page sorts it by."""
    if column == "feature":
        return {"text": str(value), "v": None}
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return {"text": "–", "v": ""}
    number = float(value)
    if column.endswith((".pvalue", ".qvalue")):
        text = f"{number:.3g}"
    elif column.endswith((".rank", ".rank_low", ".rank_high", ".block")):
        text = f"{number:.0f}" if number == int(number) else f"{number:.1f}"
    else:
        text = f"{number:.4g}"
    return {"text": text, "v": repr(number)}


def _feature_table(folder: Path, summary: dict) -> dict | None:
    """The first :data:`FEATURE_ROWS` rows of ``features.csv`` (best first by mean rank)
    for the page's sortable, filterable table, with the q-value threshold."""
    if not (folder / "features.csv").is_file():
        return None
    table = pd.read_csv(folder / "features.csv", dtype={"feature": str}, keep_default_na=False,
                        na_values=[""])  # fmt: skip
    feats = summary.get("features") or {}
    q = float(feats.get("q", 0.05))
    qcols = [c for c in table.columns if c.endswith(".qvalue")]
    shown = table.head(FEATURE_ROWS)
    rows = []
    for record in shown.to_dict(orient="records"):
        cells = [_cell(c, record[c]) for c in table.columns]
        significant = {c for c in qcols if pd.notna(record[c]) and record[c] <= q}
        for cell, column in zip(cells, table.columns, strict=True):
            cell["sig"] = column in significant or (
                column.endswith(".pvalue") and column.replace(".pvalue", ".qvalue") in significant
            )
        rows.append({"cells": cells, "sig": bool(significant)})
    return {
        "columns": [
            {"name": c, "num": c != "feature", "high": c != "feature" and not c.endswith(LOW_FIRST)}
            for c in table.columns
        ],
        "rows": rows,
        "n": len(table),
        "shown": len(shown),
        "q": q,
        "tested": [c.removesuffix(".qvalue") for c in qcols],
        "significant": feats.get("significant") or {},
        "bootstrap": feats.get("bootstrap"),
        "confidence": feats.get("confidence"),
    }


def _pareto_tables(folder: Path) -> list[dict]:
    """Per NSGA-II weighting ranker: each feature's weight averaged over the Pareto set
    (the numbers the weighting paper's tables print) next to its mean-rank score."""
    scores = folder / "scores.csv"
    scores = pd.read_csv(scores, index_col=0) if scores.is_file() else None
    tables = []
    for path in listed_tables(folder, "pareto_*_weights.csv"):
        stem = path.name.removeprefix("pareto_").removesuffix("_weights.csv")
        mean = pd.read_csv(path, index_col=0).mean(axis=0)
        column = next(
            (c for c in (scores.columns if scores is not None else []) if c == stem), None
        )
        rows = []
        for feature in mean.sort_values(ascending=False, na_position="last").index:
            score = scores.at[feature, column] if column is not None else None
            rows.append(
                {
                    "feature": feature,
                    "mean weight": "constant" if pd.isna(mean[feature]) else f"{mean[feature]:.3f}",
                    "mean-rank score": "" if score is None or pd.isna(score) else f"{score:.3f}",
                }
            )
        tables.append({"label": stem, "rows": rows})
    return tables


def study_page(folder, images: list[tuple[str, bytes, str]]) -> str:
    """The HTML page of a study folder: its data sets (linked to their own pages) and the
    comparison of the methods across them, with ``images`` (the CD diagrams) embedded."""
    folder = Path(folder)
    summary = load(folder, "summary.json") or {}
    study = summary.get("study", {})
    figures = {
        name: {"name": name, "caption": caption, "data": base64.b64encode(data).decode("ascii")}
        for name, data, caption in images
    }
    scores = []
    for score, entry in study.get("comparisons", {}).items():
        stem = safe_name(score)
        table = load(folder, f"{STUDY}/scores_{stem}.csv")
        rows = [] if table is None else table.to_dict(orient="records")
        ranks = [
            {"method": m, "average rank": r} for m, r in (entry.get("average_ranks") or {}).items()
        ]
        scores.append(
            {
                "score": score,
                "entry": entry,
                "better": "higher" if entry.get("higher_is_better") else "lower",
                "rows": rows,
                "columns": [] if table is None else list(table.columns),
                "ranks": ranks,
                "figure": figures.get(f"{STUDY}/cd_{stem}.png"),
            }
        )
    context = {
        "name": summary.get("data", {}).get("name", folder.name),
        "status": summary.get("status", "unknown"),
        "source": summary.get("source", ""),
        "seed": summary.get("random_state"),
        "seconds": summary.get("seconds", ""),
        "reused": len(reused_steps(summary)),
        "notes": summary.get("notes") or [],
        "data_sets": study.get("data_sets", []),
        "rankers": [
            {
                "label": r["label"],
                "ranker": r["name"],
                "params": ", ".join(f"{k}={v}" for k, v in r["params"].items()) or "defaults",
            }
            for r in summary.get("rankers", [])
        ],
        "scores": scores,
        "random_topk": RANDOM_TOPK,
        "random_eca": RANDOM_ECA,
        "files": sorted(
            p.relative_to(folder).as_posix()
            for p in [*folder.glob("*"), *(folder / STUDY).glob("*")]
            if p.is_file() and not p.name.startswith(".")
        ),
    }
    return _environment().get_template("study.html").render(context)
