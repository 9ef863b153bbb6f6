"""A study: every ranker on every data set of a config, then the methods compared across them.

Each data set is an ordinary single-data run (:func:`moweights.pipeline.runner.run`) into
its own sub-folder of the study's folder, with its own cache, so a re-run resumes data set
by data set, and the run's joblib/Dask settings parallelise inside each data set as they do
for one (one layer at a time: the data sets follow one another).

Across the data sets, every evaluation score the runs computed becomes a table
score[data set, method] -- with class targets the nested class prediction at its ``at_k``
(``class_<metric>``, higher is better; the random baseline is a method), the top-k kNN
error at ``at_k`` (lower is better; the random baseline is a method) and, with class
targets, ECA per weighting (higher is better; the random ranking's ECA is 0 by definition
and is its row), and the k-means scores of the top features averaged over the
``k_features`` grid (``clustering_nmi``, ...; higher is better; a random order is the
baseline) -- and the methods are compared on it with Friedman / Iman-Davenport and
Nemenyi's critical difference (:mod:`aggregation.evaluation.stats`, Demšar 2006), the data
sets being the blocks.
A score with fewer than two data sets or methods gets the reason instead of statistics;
fewer than five data sets get Demšar's caution beside them.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import rankers
from aggregation.evaluation import stats
from moweights.config import RunConfig
from moweights.output.files import safe_name
from moweights.pipeline.result import RunResult
from rankers.ties import average_ranks, order_desc

__all__ = ["StudyResult", "compare_datasets", "dataset_folder", "outcome_text", "run_study"]


@dataclass
class StudyResult:
    """What a study computed.

    Attributes
    ----------
    runs : dict of str -> RunResult
        Each data set's run, by the data set's name.
    scores : dict of str -> DataFrame
        Per score (``topk_mse``, ``eca_uniform``, ...): data sets x methods.
    comparisons : dict of str -> dict
        Per score: ``higher_is_better``, and ``friedman`` / ``nemenyi`` results (plain
        dicts), the average ranks and the per-data-set ranks -- or ``reason``, why the
        statistics are absent.
    failed : dict of str -> str
        The data sets whose run stopped with an error, and the error (type: message).
    skipped : dict of str -> str
        The data sets that did not run, and why (their folder in use by another run).
    status : {"running", "complete", "partial", "failed"}
        "partial" when some data sets failed or were skipped (or Ctrl-C), "failed" when
        none finished.
    notes : list of str
    """

    config: RunConfig
    runs: dict[str, RunResult] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    scores: dict[str, pd.DataFrame] = field(default_factory=dict)
    comparisons: dict[str, dict[str, Any]] = field(default_factory=dict)
    status: str = "running"
    notes: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    seconds: float = 0.0
    output_dir: Path | None = None

    @property
    def cached(self) -> list[str]:
        return [f"{name}: {step}" for name, r in self.runs.items() for step in r.cached]

    @property
    def computed(self) -> list[str]:
        return [f"{name}: {step}" for name, r in self.runs.items() for step in r.computed]


def dataset_folder(out: Path, name: str) -> Path:
    """The sub-folder of a study's data set."""
    return Path(out) / safe_name(name)


def run_study(
    config: RunConfig, out: Path, cache: bool | None, start: float, run: Callable
) -> StudyResult:
    """Run every data set of a study into its sub-folder, then compare across them.

    ``run(config, folder, cache=...)`` runs one data set
    (:func:`moweights.pipeline.runner.run`, which calls this one: passed in, not imported).
    Each data set runs, fails or is skipped on its own: an error in one (its file, its
    data, a ranker that refuses it, memory) is recorded with the data set -- its own
    folder says how far it got -- and the study goes on with the next; the comparison
    uses the data sets that finished and names the others. Only Ctrl-C stops the study.
    """
    from moweights.errors import RunLockedError
    from moweights.output.study import StudyFolder

    result = StudyResult(config=config, output_dir=out)
    folder = StudyFolder(out, config)
    interrupted = "interrupted (Ctrl-C): the data sets listed are complete"
    with folder.finishing(result, start, interrupted):
        for data in config.datasets:
            sub = config.for_dataset(data)
            try:
                member = run(sub, dataset_folder(out, data.name), cache=cache)
            except RunLockedError as exc:  # another run writes its folder: not a failure
                result.skipped[data.name] = str(exc)
                result.notes.append(f"{data.name}: skipped: {exc}")
                warnings.warn(f"data set {data.name} skipped: {exc}", UserWarning, stacklevel=2)
            except Exception as exc:  # Ctrl-C and SystemExit stop the study; nothing else
                result.failed[data.name] = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
                result.notes.append(f"{data.name}: failed: {result.failed[data.name]}")
                warnings.warn(  # at once: the summary comes at the end (-q: silent)
                    f"data set {data.name} failed ({result.failed[data.name]}); the study "
                    "goes on with the others",
                    UserWarning,
                    stacklevel=2,
                )
            else:
                result.runs[data.name] = member
                result.notes.extend(f"{data.name}: {note}" for note in member.notes)
            compare_datasets(config, result)
            result.seconds = time.perf_counter() - start
            folder.write(result)
        lost = {**result.failed, **result.skipped}
        if lost:
            result.status = "partial" if result.runs else "failed"
            result.notes.append(outcome_text(result))
    return result


def outcome_text(result: StudyResult) -> str:
    """One line: which data sets did not finish, and what the statistics use."""
    n = len(result.config.datasets)
    parts = []
    if result.failed:
        parts.append(f"{len(result.failed)} of {n} data sets failed: {', '.join(result.failed)}")
    if result.skipped:
        parts.append(f"{len(result.skipped)} skipped: {', '.join(result.skipped)}")
    return "; ".join(parts) + (
        f"; the comparisons use the {len(result.runs)} that finished"
        if result.runs
        else "; none finished"
    )


# ------------------------------------------------------------------ scores per data set
def _run_scores(run: RunResult, config: RunConfig) -> dict[str, tuple[dict[str, float], bool]]:
    """One data set's scores: name -> ({method: value}, higher_is_better)."""
    from moweights.output.folder import curve_point

    out: dict[str, tuple[dict[str, float], bool]] = {}
    if run.class_curves is not None and len(run.class_curves):
        section = config.evaluation.classification
        point = curve_point(run.class_curves, section.at_k, run.X.shape[1])
        values = dict(zip(point["ranker"], point["mean"].astype(float), strict=True))
        out[f"class_{section.metric}"] = (values, True)
    if run.curves is not None and len(run.curves):
        point = curve_point(run.curves, config.evaluation.topk.at_k, run.X.shape[1])
        values = dict(zip(point["ranker"], point["mean"].astype(float), strict=True))
        out[f"topk_{config.evaluation.topk.metric}"] = (values, False)
    if run.eca is not None and len(run.eca):
        for weighting, part in run.eca.groupby("weighting", sort=False):
            values = dict(zip(part["ranking"], part["eca"].astype(float), strict=True))
            values["random"] = 0.0  # a random ranking's ECA against random, by definition
            out[f"eca_{weighting}"] = (values, True)
    if run.clustering is not None and len(run.clustering):
        table = run.clustering[run.clustering["evaluation"] == "all"]
        for metric, part in table.groupby("metric", sort=False):
            # the score over the k_features grid, averaged (an area under the curve)
            means = part.groupby("ranking", sort=False)["mean"].mean().astype(float)
            out[f"clustering_{metric}"] = (means.to_dict(), True)
    return out


def compare_datasets(config: RunConfig, result: StudyResult) -> None:
    """The cross-data-set tables and statistics of every score, from the finished runs."""
    collected: dict[str, dict[str, dict[str, float]]] = {}
    direction: dict[str, bool] = {}
    for name, run in result.runs.items():
        for score, (values, higher) in _run_scores(run, config).items():
            collected.setdefault(score, {})[name] = values
            direction[score] = higher
    alpha = config.evaluation.statistics.alpha
    result.scores, result.comparisons = {}, {}
    for score, per_data in collected.items():
        table = pd.DataFrame.from_dict(per_data, orient="index")
        table.index.name = "data_set"
        complete = table.dropna(axis=1)  # a method every data set has (none skipped)
        result.scores[score] = table
        result.comparisons[score] = _compare(
            complete, direction[score], alpha, len(config.datasets)
        )
        result.comparisons[score]["missing"] = _missing(config, result, set(per_data))


def _missing(config: RunConfig, result: StudyResult, present: set[str]) -> dict[str, str]:
    """The study's data sets a score lacks, and why: failed, skipped, not run (yet), or
    finished without that score."""
    why = {}
    for data in config.datasets:
        name = data.name
        if name in present:
            continue
        if name in result.failed:
            why[name] = "failed"
        elif name in result.skipped:
            why[name] = "skipped"
        elif name not in result.runs:
            why[name] = "not run"
        else:
            why[name] = "no such score"
    return why


def _compare(table: pd.DataFrame, higher: bool, alpha: float, n_planned: int) -> dict[str, Any]:
    entry: dict[str, Any] = {"higher_is_better": higher, "n_datasets": int(table.shape[0])}
    n, k = table.shape
    if n < 2 or k < 2:
        have = f"{n} data set(s)" + (f" of {n_planned}" if n < n_planned else "")
        entry["reason"] = (
            f"the statistics need at least 2 data sets and 2 methods with this score; "
            f"there are {have} and {k} method(s)"
        )
        return entry
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fr = stats.friedman(table, higher_is_better=higher)
            ne = stats.nemenyi(table, higher_is_better=higher, alpha=alpha)
            ranks = stats.rank_table(table, higher_is_better=higher)
    except rankers.MoweightsError as exc:
        entry["reason"] = str(exc)
        return entry
    if n < 5:
        entry["caution"] = (
            f"only {n} data sets: Demšar (2006) advises at least 5 for the Friedman test and "
            "Nemenyi's critical difference; read the p-values as a rough guide"
        )
    avg = ne.avg_ranks
    # near-equal average ranks are ties (rankers.ties): the same position, listed in the
    # config's method order, never ordered by their last bits
    order = order_desc(-avg.to_numpy(dtype=np.float64))
    position = average_ranks(avg.to_numpy(dtype=np.float64), descending=False)
    entry.update(
        friedman=fr.to_dict(),
        nemenyi=ne.to_dict(),
        alpha=alpha,
        average_ranks=pd.DataFrame(
            {
                "method": avg.index[order],
                "avg_rank": avg.to_numpy()[order],
                "position": position[order],
            }
        ),
        ranks=ranks,
        pvalues=ne.pvalues,
    )
    return entry
