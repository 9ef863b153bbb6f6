"""Plots (PNG) and the self-contained HTML page of a run folder, drawn from its tables.

Only the saved tables are read, never the data, so ``moweights report FOLDER`` re-renders
a finished (or partial) run anywhere. The HTML page embeds every image as base64 and
carries its own style sheet: one file to mail or archive.
"""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd

from moweights.report import atomic_write, safe_name

__all__ = ["render"]

_PAGE = "report.html"


def _load(folder: Path, name: str, **kw) -> Any:
    path = folder / name
    if not path.is_file():
        return None
    if name.endswith(".json"):
        return json.loads(path.read_text(encoding="utf-8"))
    return pd.read_csv(path, **kw)


def _save(fig, path: Path) -> bytes:
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)
    atomic_write(path, buffer.getvalue())
    return buffer.getvalue()


# ------------------------------------------------------------------ the plots
def _curves(folder: Path):
    curves = _load(folder, "curves.csv")
    if curves is None or curves.empty:
        return None
    import matplotlib.pyplot as plt

    from aggregation.plots import plot_topk_curves

    sites = list(dict.fromkeys(curves["site"])) if "site" in curves else [None]
    fig, axes = plt.subplots(1, len(sites), figsize=(6.5 * len(sites), 4.3), squeeze=False)
    for ax, site in zip(axes[0], sites, strict=True):
        part = curves if site is None else curves[curves["site"] == site]
        by = {label: p for label, p in part.groupby("ranker", sort=False) if label != "random"}
        random = part[part["ranker"] == "random"]
        title = "Top-k kNN curves (lower is better)" if site is None else f"site {site}"
        plot_topk_curves(by, random if len(random) else None, ax=ax, title=title)
    fig.tight_layout()
    return fig


def _cd(folder: Path):
    st = _load(folder, "statistics.json")
    if st is None:
        return None
    from aggregation.plots import plot_cd_diagram

    ne = st["nemenyi"]
    blocks = f"{st['friedman']['n']} {st['blocks']}"
    where = f" at k = {st['k']}" if st.get("k") else ""
    title = (
        f"Average ranks over {blocks} ({st['metric']}{where}); "
        f"Friedman p = {st['friedman']['pvalue']:.3g}"
    )
    return plot_cd_diagram(pd.Series(ne["avg_ranks"]), ne["cd"], show_ranks=True, title=title)


def _error_curves(folder: Path):
    table = _load(folder, "error_curves.csv")
    if table is None or table.empty:
        return None
    from aggregation.plots import plot_error_curves

    curves = {
        name: part.drop(columns="ranking") for name, part in table.groupby("ranking", sort=False)
    }
    expected = _load(folder, "expected_curve.csv")
    return plot_error_curves(curves, expected, title="FFA (top-i) and RFA (bottom-i) curves")


def _clustering(folder: Path):
    table = _load(folder, "clustering.csv")
    if table is None or table.empty:
        return None
    import matplotlib.pyplot as plt

    table = table[table["evaluation"] == "all"]
    metrics = list(dict.fromkeys(table["metric"]))
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 3.6), squeeze=False)
    for ax, metric in zip(axes[0], metrics, strict=True):
        for name, part in table[table["metric"] == metric].groupby("ranking", sort=False):
            style = {"color": "0.3", "linestyle": "--"} if name == "random" else {"marker": "o"}
            ax.plot(part["k_features"], part["mean"], label=name, **style)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("top features")
        ax.set_title(f"k-means {metric} (higher is better)", fontsize=10)
        ax.grid(alpha=0.3)
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    return fig


def _similarity(folder: Path):
    files = sorted(folder.glob("similarity_*.csv"))
    if not files:
        return None
    import matplotlib.pyplot as plt

    from aggregation.plots import plot_pairwise

    n = len(files)
    size = len(pd.read_csv(files[0], index_col=0))
    side = 2.5 + 0.45 * size
    fig, axes = plt.subplots(1, n, figsize=(side * n, side), squeeze=False)
    for ax, path in zip(axes[0], files, strict=True):
        matrix = pd.read_csv(path, index_col=0)
        measure = path.stem.removeprefix("similarity_")
        plot_pairwise(matrix, ax=ax, title=f"rankers: {measure}")
    fig.tight_layout()
    return fig


def _generic(folder: Path):
    agg = _load(folder, "aggregated.json")
    if not agg or "generic" not in agg:
        return None
    from aggregation import GenericRanking
    from aggregation.plots import plot_generic

    g = GenericRanking(agg["generic"]["blocks"])
    return plot_generic(g, title=f"generic ranking of the rankers: s = {len(g)} block(s)")


def _site_maps(folder: Path) -> list[tuple[str, Callable]]:
    sims = _load(folder, "site_similarity.csv")
    info = _load(folder, "sites.json")
    if sims is None or not info:
        return []

    def draw(label: str):
        import matplotlib.pyplot as plt

        from aggregation.plots import plot_pairwise

        part = sims[sims["ranker"] == label]
        measures = list(dict.fromkeys(part["measure"]))
        q = part["site"].nunique()
        fig, axes = plt.subplots(
            1, len(measures), figsize=(3.2 + 2.4 * q, 1.6 + 0.7 * q), squeeze=False
        )
        for ax, measure in zip(axes[0], measures, strict=True):
            m = part[part["measure"] == measure].pivot(
                index="site", columns="other", values="value"
            )
            order = list(dict.fromkeys(part["site"]))
            plot_pairwise(m.loc[order, order], ax=ax, title=f"{measure}")
        verdict = {True: "compatible", False: "INCOMPATIBLE", None: "not assessed"}
        fig.suptitle(
            f"{label}: site similarity; generic ranking s = {info[label]['s']} "
            f"({verdict[info[label]['compatible']]})"
        )
        fig.tight_layout()
        return fig

    return [(f"sites_{safe_name(label)}.png", lambda _, lb=label: draw(lb)) for label in info]


def _pareto(folder: Path) -> list[tuple[str, Callable]]:
    from moweights.weighting.plots import plot_front, plot_front_weights

    ranks = _load(folder, "ranks.csv", index_col=0)
    labels = {safe_name(r["label"]): r["label"] for r in _load(folder, "summary.json")["rankers"]}
    out = []
    for path in sorted(folder.glob("pareto_*_objectives.csv")):
        stem = path.name.removeprefix("pareto_").removesuffix("_objectives.csv")
        weights = pd.read_csv(folder / f"pareto_{stem}_weights.csv", index_col=0)
        label = labels.get(stem)
        if ranks is not None and label in ranks:  # the ranker's own ranking, best first
            order = ranks[label].reindex(weights.columns).to_numpy()
        else:
            order = -weights.mean(axis=0).fillna(-1.0).to_numpy()
        fitted = SimpleNamespace(
            pareto_objectives_=pd.read_csv(path, index_col=0),
            pareto_weights_=weights,
            ranking_=np.argsort(order, kind="stable"),
        )
        out.append((f"pareto_{stem}.png", lambda _, f=fitted: plot_front(f)))
        out.append((f"pareto_weights_{stem}.png", lambda _, f=fitted: plot_front_weights(f)))
    return out


_PLOTS: list[tuple[str, Callable, str]] = [
    ("curves.png", _curves, "Top-k curves: a kNN model on each ranking's top k features "
     "predicts all features (cross-validated; the ranking is refit on every training fold)."),
    ("cd_diagram.png", _cd, "Critical-difference diagram: average ranks; methods joined by a "
     "bar do not differ significantly (Nemenyi)."),
    ("error_curves.png", _error_curves, "FFA/RFA error curves with the expected curve of a "
     "random ranking (band: 5%-95% of the sampled random curves)."),
    ("clustering.png", _clustering, "k-means on each ranking's top features, scored against "
     "the classes."),
    ("similarity.png", _similarity, "How alike the rankers' rankings are."),
    ("generic.png", _generic, "The generic ranking: the finest ordered partition every ranker "
     "agrees on."),
]  # fmt: skip


def render(folder, *, plots: bool = True, html: bool = True) -> dict[str, str]:
    """Draw a run folder's PNG plots and write its ``report.html``, from its tables.

    Returns
    -------
    dict
        File name -> sha256 of every file written.
    """
    import hashlib

    import matplotlib

    matplotlib.use("Agg", force=False)
    folder = Path(folder)
    images: list[tuple[str, bytes, str]] = []
    written: dict[str, str] = {}
    jobs = [(name, draw, caption) for name, draw, caption in _PLOTS]
    jobs += [
        (name, fn, "Site similarity of one ranker's per-site rankings.")
        for name, fn in _site_maps(folder)
    ]
    jobs += [
        (name, fn, "NSGA-II weighting: the Pareto front and the weights of its solutions.")
        for name, fn in _pareto(folder)
    ]
    for name, draw, caption in jobs if plots else []:
        fig = draw(folder)
        if fig is None:
            continue
        data = _save(fig, folder / name)
        written[name] = hashlib.sha256(data).hexdigest()
        images.append((name, data, caption))
    if html:
        page = _page(folder, images).encode("utf-8")
        atomic_write(folder / _PAGE, page)
        written[_PAGE] = hashlib.sha256(page).hexdigest()
    return written


# ------------------------------------------------------------------ the page
_STYLE = """
body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0;
color:#1d232a;background:#f5f6f8}
header{background:#20303f;color:#fff;padding:18px 32px}
header h1{margin:0 0 4px;font-size:22px} header p{margin:0;opacity:.85}
main{max-width:1180px;margin:0 auto;padding:8px 32px 40px}
section{background:#fff;border-radius:8px;padding:14px 20px;margin:16px 0;
box-shadow:0 1px 3px #0002}
h2{font-size:18px;margin:4px 0 10px}
table{border-collapse:collapse;margin:6px 0 10px;font-size:13px}
th,td{border-bottom:1px solid #e3e6ea;padding:4px 10px;text-align:left;vertical-align:top;
overflow-wrap:anywhere}
th{background:#eef1f4} td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.baseline td{color:#666;font-style:italic}
figure{margin:10px 0} figure img{max-width:100%;border:1px solid #e3e6ea}
figcaption{font-size:13px;color:#555}
.badge{display:inline-block;padding:2px 10px;border-radius:10px;font-weight:600;font-size:13px}
.complete{background:#2e7d32;color:#fff} .partial,.running{background:#ef6c00;color:#fff}
.failed{background:#c62828;color:#fff}
.notes{background:#fff8e1;border-left:4px solid #ef6c00}
code{font-size:12px;background:#eef1f4;padding:1px 4px;border-radius:3px}
"""


def _e(value: Any) -> str:
    return html.escape(str(value))


def _num(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        return f"{value:.4g}" if np.isfinite(value) else "–"
    return _e(value)


def _table(rows: list[dict], columns: list[str], baseline: str | None = None) -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in columns)
    body = []
    for row in rows:
        cls = ' class="baseline"' if baseline and baseline in row.values() else ""
        cells = "".join(
            f'<td class="num">{_num(row.get(c))}</td>'
            if isinstance(row.get(c), (int, float, np.number)) and not isinstance(row.get(c), bool)
            else f"<td>{_e(row.get(c, ''))}</td>"
            for c in columns
        )
        body.append(f"<tr{cls}>{cells}</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _figure(name: str, data: bytes, caption: str) -> str:
    encoded = base64.b64encode(data).decode("ascii")
    return (
        f'<figure id="{_e(name)}"><img alt="{_e(name)}" src="data:image/png;base64,{encoded}">'
        f"<figcaption>{_e(caption)} <code>{_e(name)}</code></figcaption></figure>"
    )


def _page(folder: Path, images: list[tuple[str, bytes, str]]) -> str:
    summary = _load(folder, "summary.json") or {}
    config = _load(folder, "config.json") or {}
    figures = {name: _figure(name, data, caption) for name, data, caption in images}
    data = summary.get("data", {})
    status = summary.get("status", "unknown")
    parts = [f"<section><h2>Data</h2>{_data_table(data)}</section>"]
    if summary.get("notes"):
        items = "".join(f"<li>{_e(n)}</li>" for n in summary["notes"])
        parts.insert(0, f'<section class="notes"><h2>Notes</h2><ul>{items}</ul></section>')
    rankers = [
        {"label": r["label"], "ranker": r["name"],
         "params": ", ".join(f"{k}={v}" for k, v in r["params"].items()) or "defaults",
         "top features": ", ".join(r["top"][:8]) if r["top"] else "(not run)"}
        for r in summary.get("rankers", [])
    ]  # fmt: skip
    parts.append(
        f"<section><h2>Rankers</h2>{_table(rankers, ['label', 'ranker', 'params', 'top features'])}"
        f"{figures.get('similarity.png', '')}</section>"
    )
    agg = summary.get("aggregated", {})
    if agg:
        rows = [
            {
                "method": m,
                "result": _generic_text(v) if "blocks" in v else ", ".join(v["order"][:10]),
            }
            for m, v in agg.items()
        ]
        parts.append(
            f"<section><h2>Aggregated rankings</h2>{_table(rows, ['method', 'result'])}"
            f"{figures.get('generic.png', '')}</section>"
        )
    ev = summary.get("evaluation", {})
    if ev.get("at_k") or "curves.png" in figures:
        cols = [
            c
            for c in ("site", "ranker", "k", "mean", "std")
            if ev.get("at_k") and c in ev["at_k"][0]
        ]
        table = _table(ev.get("at_k") or [], cols, baseline="random") if cols else ""
        parts.append(
            f"<section><h2>Top-k curves ({_e(ev.get('metric', '')).upper()}, "
            f"{_e(ev.get('cv', ''))}-fold)</h2>{table}{figures.get('curves.png', '')}</section>"
        )
    st = ev.get("statistics")
    if st:
        fr, ne = st["friedman"], st["nemenyi"]
        text = (
            f"<p>Friedman test over {fr['n']} {_e(st['blocks'])} and {fr['k']} methods: "
            f"χ² = {float(fr['statistic']):.4g}, p = {float(fr['pvalue']):.3g}; Iman–Davenport "
            f"F = {float(fr['f_statistic']):.4g}, p = {float(fr['f_pvalue']):.3g}. Nemenyi "
            f"critical difference {float(ne['cd']):.3g} at α = {st['alpha']}.</p>"
        )
        if st["blocks"] == "folds":
            text += (
                "<p>Blocks are cross-validation folds of one data set: they share training "
                "data, so the p-values are optimistic.</p>"
            )
        parts.append(
            f"<section><h2>Statistics</h2>{text}{figures.get('cd_diagram.png', '')}</section>"
        )
    if ev.get("eca") or "error_curves.png" in figures:
        eca = pd.DataFrame(ev.get("eca") or [], columns=["ranking", "weighting", "eca"])
        wide = eca.pivot(index="ranking", columns="weighting", values="eca")
        wide = wide.reindex(
            index=list(dict.fromkeys(eca["ranking"])), columns=list(dict.fromkeys(eca["weighting"]))
        )
        rows = [{"ranking": name, **row} for name, row in wide.to_dict(orient="index").items()]
        table = _table(rows, ["ranking", *wide.columns])
        parts.append(
            "<section><h2>Error curves and ECA</h2><p>ECA &gt; 0: the ranking beats a random "
            f"one.</p>{table}{figures.get('error_curves.png', '')}</section>"
        )
    if "clustering.png" in figures:
        parts.append(f"<section><h2>Clustering</h2>{figures['clustering.png']}</section>")
    sites = [f for n, f in figures.items() if n.startswith("sites_")]
    if sites:
        parts.append(f"<section><h2>Sites</h2>{''.join(sites)}</section>")
    pareto = [f for n, f in figures.items() if n.startswith("pareto")]
    if pareto:
        parts.append(f"<section><h2>NSGA-II weighting</h2>{''.join(pareto)}</section>")
    files = sorted(p.name for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    links = ", ".join(f'<a href="{_e(f)}">{_e(f)}</a>' for f in files)
    parts.append(f"<section><h2>Files</h2><p>{links}</p></section>")
    seed = config.get("run", {}).get("random_state", summary.get("random_state"))
    name = _e(data.get("name", folder.name))
    head = (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>moweights: {name}</title><style>{_STYLE}</style></head>"
    )
    header = (
        f'<header><h1>moweights run: {name} <span class="badge {_e(status)}">{_e(status)}'
        f"</span></h1><p>config {_e(summary.get('source', ''))} · random_state {_e(seed)} · "
        f"{_e(summary.get('seconds', ''))} s</p></header>"
    )
    return f"{head}<body>{header}<main>{''.join(parts)}</main></body></html>\n"


def _generic_text(agg: dict, limit: int = 400) -> str:
    text = f"s = {agg['s']}: " + " > ".join("{" + ", ".join(b) + "}" for b in agg["blocks"])
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _data_table(data: dict) -> str:
    rows = [
        {"": k.replace("_", " "), "value": v}
        for k, v in data.items()
        if k != "sites" and v is not None
    ]
    out = _table(rows, ["", "value"])
    if data.get("sites"):
        out += _table([{"site": s, "rows": n} for s, n in data["sites"].items()], ["site", "rows"])
    return out
