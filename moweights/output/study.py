"""A study's output folder: one run folder per data set, and the comparison across them.

Layout (besides each data set's own run folder ``<name>/``, laid out as in
:mod:`moweights.output.folder`)::

    manifest.json summary.json config.json      as in a run folder; summary.json has "study"
    study/scores_<score>.csv     data sets x methods (the random baseline a method)
    study/ranks_<score>.csv      each method's rank on each data set (1 = best, ties averaged)
    study/average_ranks.csv      score, method, avg_rank, position (near-ties share one)
    study/friedman.csv           score, data sets, methods, chi2 + p, Iman-Davenport F + p
    study/nemenyi.csv            score, alpha, q_alpha, critical difference, groups
    study/nemenyi_pvalues_<score>.csv
    study/study.json             all of it as JSON, and why a score has no statistics
    study/cd_<score>.png report.html

Data only (CSV, JSON, PNG): nothing written here executes when read back.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pandas as pd

from moweights.errors import OutputFolderError, OutputWriteError
from moweights.output.files import (
    ResultsFolder,
    csv_text,
    json_text,
    read_json,
    safe_name,
    sigint_ignored,
)
from moweights.output.plots import STUDY
from moweights.output.report import reused_steps

__all__ = ["StudyFolder", "study_summary_text"]


def _study_json(result) -> dict[str, Any]:
    out = {}
    for score, entry in result.comparisons.items():
        plain = {k: v for k, v in entry.items() if k not in ("average_ranks", "ranks", "pvalues")}
        if "average_ranks" in entry:
            ranks = entry["average_ranks"]
            plain["average_ranks"] = dict(zip(ranks["method"], ranks["avg_rank"], strict=True))
        plain["data_sets"] = list(result.scores[score].index)
        plain["methods"] = list(result.scores[score].columns)
        out[score] = plain
    return out


def _tables(result) -> dict[str, Any]:
    tables: dict[str, Any] = {}
    friedman, nemenyi, average = [], [], []
    for score, table in result.scores.items():
        stem = safe_name(score)
        tables[f"{STUDY}/scores_{stem}.csv"] = table
        entry = result.comparisons[score]
        if "friedman" not in entry:
            continue
        fr, ne = entry["friedman"], entry["nemenyi"]
        tables[f"{STUDY}/ranks_{stem}.csv"] = entry["ranks"].rename_axis(index="data_set")
        tables[f"{STUDY}/nemenyi_pvalues_{stem}.csv"] = entry["pvalues"].rename_axis(index="method")
        average.append(
            entry["average_ranks"].assign(score=score, higher_is_better=entry["higher_is_better"])
        )
        friedman.append(
            {"score": score, "n_datasets": fr["n"], "n_methods": fr["k"],
             "chi2": fr["statistic"], "pvalue": fr["pvalue"],
             "iman_davenport_f": fr["f_statistic"], "f_pvalue": fr["f_pvalue"]}
        )  # fmt: skip
        nemenyi.append(
            {"score": score, "alpha": ne["alpha"], "q_alpha": ne["q_alpha"], "cd": ne["cd"],
             "groups": "; ".join(" = ".join(g) for g in ne["groups"])}
        )  # fmt: skip
    if average:
        frame = pd.concat(average, ignore_index=True)
        tables[f"{STUDY}/average_ranks.csv"] = frame[
            ["score", "method", "avg_rank", "position", "higher_is_better"]
        ]
        tables[f"{STUDY}/friedman.csv"] = pd.DataFrame(friedman)
        tables[f"{STUDY}/nemenyi.csv"] = pd.DataFrame(nemenyi)
    tables[f"{STUDY}/study.json"] = _study_json(result)
    return tables


def _summary(result, status: str, files: list[str]) -> dict[str, Any]:
    cfg = result.config
    data_sets = []
    for d in cfg.datasets:
        run = result.runs.get(d.name)
        row: dict[str, Any] = {"name": d.name, "folder": safe_name(d.name), "done": run is not None}
        if run is not None and run.units:
            row.update(n_samples=len(run.X), n_features=int(run.X.shape[1]), status=run.status)
        for state in ("failed", "skipped"):  # and the error that stopped it
            if d.name in getattr(result, state, {}):
                row.update(status=state, error=getattr(result, state)[d.name])
        data_sets.append(row)
    return {
        "status": status,
        "source": cfg.source,
        "data": {"name": cfg.describe_data()},
        "random_state": cfg.random_state,
        "rankers": [{"label": s.label, "name": s.name, "params": s.params} for s in cfg.rankers],
        "study": {"data_sets": data_sets, "comparisons": _study_json(result)},
        "notes": list(result.notes),
        "cache": {"reused": result.cached, "computed": result.computed},
        "seconds": round(float(result.seconds), 2),
        "files": files,
    }


class StudyFolder(ResultsFolder):
    """The output folder of a study; :meth:`write` after every data set, :meth:`finish` last."""

    def __init__(self, path: Path, config):
        figures = Path(path) / STUDY
        if figures.is_symlink() or (figures.exists() and not figures.is_dir()):
            raise OutputFolderError(
                f"{figures} is a symbolic link or a file where the study writes its tables; "
                "moweights writes only into folders of its own: delete it, or choose another "
                "output folder"
            )
        figures.mkdir(parents=True, exist_ok=True)
        super().__init__(path, config)

    def _manifest_fields(self) -> dict[str, Any]:
        return {"data_sets": {d.name: safe_name(d.name) for d in self.config.datasets}}

    def write(self, result, status: str = "running") -> None:
        """(Re)write the study's tables, then its summary and manifest."""
        try:
            for name, value in _tables(result).items():
                if name.endswith(".json"):
                    self._put(name, json_text(value))
                else:
                    index = not isinstance(value.index, pd.RangeIndex)
                    self._put(name, csv_text(value, index=index))
            self._put("summary.json", json_text(_summary(result, status, sorted(self.files))))
            self._manifest(status, "; ".join(result.notes) or None)
        except OutputWriteError as exc:  # a full disk: the manifest must not say "running"
            self._manifest_after_failure("failed", "; ".join([*result.notes, str(exc)]))
            raise

    def finish(self, result, seconds: float) -> None:
        """Final tables with the study's status, then the CD diagrams and report.html,
        then the manifest (last, see ``ResultsFolder._draw``)."""
        result.seconds = seconds
        with sigint_ignored():
            self.write(result, status=result.status)
        from moweights.output.report import render

        self._draw(result, render)


# ------------------------------------------------------------------ text
def study_summary_text(folder) -> str:
    """A short human summary of a study folder (from its ``summary.json``), for the terminal."""
    folder = Path(folder)
    summary = read_json(folder / "summary.json", what="summary")
    study = summary["study"]
    lines = [
        f"moweights study: {len(study['data_sets'])} data sets, {len(summary['rankers'])} "
        f"rankers, random_state={summary['random_state']} -- {summary['status'].upper()}",
        "",
    ]
    for d in study["data_sets"]:
        shape = f" ({d['n_samples']} x {d['n_features']})" if "n_samples" in d else ""
        state = d.get("status", "not run")
        if d.get("error"):
            lines.append(f"  {d['name']}: {state}: {d['error']}")
        else:
            lines.append(f"  {d['name']}{shape}: {state}, report in {d['folder']}/report.html")
    for score, entry in study["comparisons"].items():
        better = "higher" if entry["higher_is_better"] else "lower"
        missing = f" (missing: {', '.join(entry['missing'])})" if entry.get("missing") else ""
        lines += [
            "",
            f"{score} ({better} is better) across {entry['n_datasets']} data sets{missing}:",
        ]
        if "reason" in entry:
            lines.append(f"  no statistics: {entry['reason']}")
            continue
        fr, ne = entry["friedman"], entry["nemenyi"]
        ranks = ", ".join(f"{m} {r:.2f}" for m, r in entry["average_ranks"].items())
        lines += [
            f"  average ranks: {ranks}",
            f"  Friedman chi2 = {float(fr['statistic']):.3g}, p = {float(fr['pvalue']):.3g}; "
            f"Iman-Davenport F = {float(fr['f_statistic']):.3g}, "
            f"p = {float(fr['f_pvalue']):.3g}; Nemenyi CD = {float(ne['cd']):.3g} at "
            f"alpha = {entry['alpha']}",
        ]
        if entry.get("caution"):
            lines.append(f"  caution: {entry['caution']}")
    for note in summary["notes"]:
        lines.append(f"note: {note}")
    reused = 0
    for d in study["data_sets"]:
        path = folder / d["folder"] / "summary.json"
        with contextlib.suppress(OSError, ValueError):  # a member not run, or not readable
            reused += len(reused_steps(read_json(path, what="summary")))
    more = f", {reused} step(s) from an earlier run's cache" if reused else ""
    lines += ["", f"wrote the study to {folder}/ in {summary['seconds']:.1f} s{more}"]
    return "\n".join(lines)
