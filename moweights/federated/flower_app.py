"""The files of the Flower app: its run config, its app folder and the results it writes.

Shared by the apps themselves (:mod:`moweights.federated.flower`) and by the local
deployment (:mod:`moweights.federated.local`); nothing here needs Flower installed. The
results are JSON and CSV only: :func:`read_result` parses, it never unpickles.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from aggregation.combine import check_methods
from aggregation.federated.rank import SiteRankings
from aggregation.ranking import GenericRanking, Ranking
from rankers.exceptions import InvalidParameterError

__all__ = [
    "RUN_CONFIG",
    "check_run_config",
    "read_result",
    "toml_values",
    "write_app",
    "write_result",
]

#: run-config keys of the app and their defaults (Flower run configs hold str/int/float/bool)
RUN_CONFIG: dict[str, str | int | float] = {
    "ranker": "variance",
    "ranker-params": "{}",
    "target": "",
    "random-state": -1,
    "sites": "",
    "min-sites": 0,
    "node-timeout": 60.0,
    "reply-timeout": 300.0,
    "aggregate": "generic,mean_rank",
    "on-mismatch": "raise",
    "output-dir": "moweights-flower-output",
}


def check_run_config(run_config: Mapping[str, Any]) -> dict[str, Any]:
    """The run config with its defaults, checked; every problem is reported at once."""
    cfg = {**RUN_CONFIG, **run_config}
    errors = [f"unknown run-config key {k!r}" for k in sorted(set(run_config) - set(RUN_CONFIG))]
    try:
        if not isinstance(json.loads(str(cfg["ranker-params"])), dict):
            errors.append("ranker-params must be a JSON object, e.g. '{\"n_estimators\": 50}'")
    except json.JSONDecodeError as exc:
        errors.append(f"ranker-params is not JSON: {exc}")
    sites = [s.strip() for s in str(cfg["sites"]).split(",") if s.strip()]
    if len(set(sites)) != len(sites):
        errors.append(f"sites names a site twice: {cfg['sites']!r}")
    methods: list[str] = []
    try:
        methods = check_methods([m.strip() for m in str(cfg["aggregate"]).split(",")])
    except InvalidParameterError as exc:
        errors.append(str(exc))
    if "weighted_mean_rank" in methods:
        errors.append("weighted_mean_rank needs the sites' sizes, which never leave a site here")
    for key in ("min-sites", "random-state"):
        if isinstance(cfg[key], bool) or not isinstance(cfg[key], int):
            errors.append(f"{key} must be an integer, got {cfg[key]!r}")
    if isinstance(cfg["min-sites"], int) and cfg["min-sites"] < 0:
        errors.append(f"min-sites must be >= 0 (0 = every listed site), got {cfg['min-sites']}")
    for key in ("node-timeout", "reply-timeout"):
        if isinstance(cfg[key], bool) or not isinstance(cfg[key], (int, float)) or cfg[key] <= 0:
            errors.append(f"{key} must be a positive number of seconds, got {cfg[key]!r}")
    if cfg["on-mismatch"] not in ("raise", "drop"):
        errors.append(f"on-mismatch must be 'raise' or 'drop', got {cfg['on-mismatch']!r}")
    if errors:
        raise InvalidParameterError("invalid run config:\n  " + "\n  ".join(errors))
    return {
        **cfg,
        "site-list": sites,
        "methods": methods,
        "min-sites": int(cfg["min-sites"]) or max(len(sites), 1),
        "seed": None if int(cfg["random-state"]) < 0 else int(cfg["random-state"]),
    }


# ------------------------------------------------------------------ writing and reading results
def _ranking_json(r: Ranking | GenericRanking) -> dict[str, Any]:
    if isinstance(r, GenericRanking):
        return {"method": r.method, "blocks": [list(b) for b in r.blocks]}
    names, scores, order = list(r.names), r.scores.tolist(), r.order_idx.tolist()
    return {"method": r.method, "features": names, "scores": scores, "order": order}


def _ranking_from_json(d: Mapping[str, Any]) -> Ranking | GenericRanking:
    if "blocks" in d:
        return GenericRanking(d["blocks"], d.get("method"))
    return Ranking(d["features"], d["scores"], d.get("method"), np.asarray(d["order"]))


def _long(rankings: Mapping[str, Ranking | GenericRanking], key: str) -> pd.DataFrame:
    """One row per (key, feature): rank (1 = best, ties averaged), block or score."""
    frames = []
    for name, r in rankings.items():
        if isinstance(r, GenericRanking):
            frame = r.to_frame()
        else:
            frame = pd.DataFrame({"feature": list(r.names), "rank": r.ranks.to_numpy()})
            frame["score"] = r.scores
        frames.append(frame.sort_values("rank", kind="stable").assign(**{key: name}))
    cols = [key, "feature", "rank", "block", "score"]
    if not frames:
        return pd.DataFrame(columns=cols)
    table = pd.concat(frames, ignore_index=True).reindex(columns=cols)
    return table.astype({"block": "Int64"})


def write_result(out: Path, cfg: Mapping[str, Any], found: Mapping[str, Any], **extra: Any) -> None:
    """``result.json`` (everything, for :func:`read_result`) and three CSV tables."""
    out.mkdir(parents=True, exist_ok=True)
    rankings, aggregated = found["rankings"], found.get("aggregated", {})
    doc = {
        "ranker": str(cfg["ranker"]),
        "run-config": {k: cfg[k] for k in RUN_CONFIG},
        "rankings": {s: _ranking_json(r) for s, r in rankings.items()},
        "aggregated": {m: _ranking_json(r) for m, r in aggregated.items()},
        "failed": dict(found["failed"]),
        "error": None,
        **extra,
    }
    (out / "result.json").write_text(json.dumps(doc, indent=2), encoding="utf-8")
    _long(rankings, "site").drop(columns="block").to_csv(out / "site_rankings.csv", index=False)
    _long(aggregated, "method").to_csv(out / "aggregated.csv", index=False)
    failed = pd.DataFrame(list(found["failed"].items()), columns=["site", "error"])
    failed.to_csv(out / "failed.csv", index=False)


def read_result(output_dir: str | Path) -> SiteRankings:
    """The :class:`~aggregation.federated.SiteRankings` a Flower run wrote to ``output_dir``.

    The per-site rankings, aggregates and failures come from ``result.json``; the similarity
    matrices and the generic ranking are recomputed from the rankings, as ``rank_sites`` does.
    Site sizes are unknown (they never leave a site), so ``sizes`` is empty.

    Raises
    ------
    RuntimeError
        If the run could not aggregate (its error and the failed sites are quoted).
    """
    doc = json.loads((Path(output_dir) / "result.json").read_text(encoding="utf-8"))
    if doc["error"]:
        raise RuntimeError(f"the Flower run failed: {doc['error']}; failed sites: {doc['failed']}")
    return SiteRankings.from_rankings(
        doc["ranker"],
        {s: _ranking_from_json(d) for s, d in doc["rankings"].items()},
        {m: _ranking_from_json(d) for m, d in doc["aggregated"].items()},
        doc["failed"],
    )


# ------------------------------------------------------------------ helpers
def toml_values(values: Mapping[str, str | int | float]) -> str:
    # JSON strings and numbers are valid TOML values.
    return "".join(f"{k} = {json.dumps(v)}\n" for k, v in values.items())


# ------------------------------------------------------------------ the app folder
def write_app(directory: str | Path, **run_config: str | int | float) -> Path:
    """Write a Flower app folder (just a ``pyproject.toml``) that runs this module's apps.

    Flower's ``flwr run DIRECTORY`` bundles the folder and sends it to the SuperLink; the
    components point at ``moweights.federated.flower``, so every machine needs moweights
    installed.

    Parameters
    ----------
    directory : path
        Created if needed; Flower wants its name made of letters, digits and hyphens.
    **run_config
        Defaults replacing those of :data:`RUN_CONFIG` (``output_dir=...`` for ``output-dir``).

    Returns
    -------
    Path
        ``directory``, ready for ``flwr run``.
    """
    values = dict(RUN_CONFIG)
    for key, value in run_config.items():
        key = key.replace("_", "-")
        if key not in RUN_CONFIG:
            raise InvalidParameterError(
                f"unknown run-config key {key!r}; known: {list(RUN_CONFIG)}"
            )
        values[key] = value
    text = _APP_TEMPLATE.replace("@CONFIG@\n", toml_values(values))
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "pyproject.toml").write_text(text, encoding="utf-8")
    return directory


_APP_TEMPLATE = """\
# A Flower app that runs moweights' federated per-site ranking (moweights.federated.flower).
# Every machine (SuperLink, SuperNodes) needs: pip install "moweights[federated]".
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "moweights-flower"
version = "0.1.0"
description = "Federated per-site feature ranking with moweights"
license = "BSD-3-Clause"
# flwr is skipped by Flower's runtime installer; moweights must already be installed.
dependencies = ["flwr>=1.41,<1.42"]

[tool.flwr.app]
publisher = "moweights"

[tool.flwr.app.components]
serverapp = "moweights.federated.flower:server_app"
clientapp = "moweights.federated.flower:client_app"

[tool.flwr.app.config]
@CONFIG@
"""
