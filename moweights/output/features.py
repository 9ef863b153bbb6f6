"""The per-feature table of a run: ``features.csv`` and :meth:`RunResult.features`.

One row per feature, best first (by the ``mean_rank`` aggregate when the run computed it,
else by the mean of the rankers' ranks), and these columns, in this order:

- ``feature``;
- for every ranker, by its label: ``<label>.score`` (the method's own score, higher =
  more relevant; named for what it holds when the ranker's scores are not its own number:
  the ranker's ``score_name``, e.g. ``<label>.minus_mean_rank`` for the stacking ensemble,
  ``<label>.reversed_mean_rank`` for an NSGA-II weighting's averaged rank) and
  ``<label>.rank`` (1 = best; tied scores share their average rank),
  then ``<label>.pvalue`` and ``<label>.qvalue`` (Benjamini-Hochberg) for rankers that
  test each feature (``t_test``, ``anova_f``, ``fisher_score``, ``chi2``, ...), then
  ``<label>.statistic`` (a signed statistic, ``statistic_``, e.g. a two-group t) and
  ``<label>.logfc`` (``log_fold_change_``) for rankers that give them, then
  ``<label>.weight`` for an NSGA-II weighting (each feature's weight averaged over the
  Pareto set, the numbers the report's table shows), then
  ``<label>.rank_low`` and ``<label>.rank_high``, its bootstrap rank interval, when the
  run computed stability (``[stability]``);
- for every aggregate: ``<method>.rank`` (a generic ranking's is the mean position of
  the feature's block, and ``generic.block`` its block, 1 = best), for ``rra`` its
  ``rra.pvalue`` (Kolde et al.'s Bonferroni-corrected rho, ``aggregation.rra_pvalues``)
  and ``rra.qvalue`` (Benjamini-Hochberg over the features), and its bootstrap interval
  when computed.

In the spirit of limma's ``topTable`` and scanpy's ``rank_genes_groups_df``, with one
statistic, p- and q-value column group per method. The ranks and scores are those of
the rankings fitted on all samples (what ``scores.csv`` and ``ranks.csv`` hold); the
held-out evaluations are elsewhere. In a site run the scores and ranks are the mean rank
over the sites and no p-values are given (each site's would be its own).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from aggregation import GenericRanking
from aggregation.ranking import natural_key

__all__ = ["FEATURES", "feature_table", "significant_counts"]

#: the file name in a run folder
FEATURES = "features.csv"


def _interval(table: dict, name: str, stability: dict) -> None:
    frame = stability.get(name)
    if frame is None:
        return
    table[f"{name}.rank_low"] = frame["low"]
    table[f"{name}.rank_high"] = frame["high"]


def feature_table(result) -> pd.DataFrame:
    """The per-feature table of a run result (see the module's notes for the columns).

    Parameters
    ----------
    result : RunResult
        A run's result, finished or partial (the columns of the steps it has).

    Returns
    -------
    DataFrame
        One row per feature, best first, with a ``feature`` column and a default index.
    """
    if not result.rankings:
        return pd.DataFrame({"feature": pd.Series(dtype=str)})
    names = [str(n) for n in result.feature_names]
    index = pd.Index(names, name="feature")
    stability = getattr(result, "stability", None) or {}
    significance = getattr(result, "significance", None) or {}
    columns: dict[str, pd.Series] = {}
    kinds = _score_names(result)
    for label, ranking in result.rankings.items():
        columns[f"{label}.{kinds.get(label, 'score')}"] = ranking.to_series()
        columns[f"{label}.rank"] = ranking.ranks
        tests = significance.get(label)
        if tests is not None:  # the columns it has, in the order pvalue qvalue statistic logfc
            for name in tests.columns:
                columns[f"{label}.{name}"] = tests[name]
        weights = (getattr(result, "pareto", None) or {}).get(label, {}).get("weights")
        if isinstance(weights, pd.DataFrame):  # NSGA-II: the weights the report's table shows
            columns[f"{label}.weight"] = weights.mean(axis=0)
        _interval(columns, label, stability)
    for method, agg in result.aggregated.items():
        columns[f"{method}.rank"] = agg.ranks
        tests = significance.get(method)  # rra: its p-value per feature, and BH's q-value
        if tests is not None:
            for name in tests.columns:
                columns[f"{method}.{name}"] = tests[name]
        if isinstance(agg, GenericRanking):
            columns[f"{method}.block"] = pd.Series(
                {f: i + 1 for i, block in enumerate(agg.blocks) for f in block}
            )
        _interval(columns, method, stability)
    table = pd.DataFrame({k: v.reindex(index) for k, v in columns.items()}, index=index)
    for col in table.columns:
        if col.endswith(".block"):
            table[col] = table[col].astype(np.int64)
    return table.loc[_best_first(result, table)].reset_index()


def _score_names(result) -> dict[str, str]:
    """Per ranker label, what its score column is named: ``score`` when the ranking's
    scores are the method's own number, else what the ranker says they are (its
    ``score_name``, e.g. "minus_mean_rank" for a ranking made of ranks: a class attribute,
    or a property of the ranker made with the run's parameters when the parameters decide,
    as an NSGA-II weighting's ``front_to_ranking`` does)."""
    import rankers

    out = {}
    for spec in getattr(getattr(result, "config", None), "rankers", None) or []:
        try:
            cls = rankers.get_class(spec.name)
        except LookupError:
            continue
        name = getattr(cls, "score_name", None)
        if isinstance(name, property):
            try:
                name = rankers.get(spec.name, **dict(getattr(spec, "params", {}) or {})).score_name
            except (TypeError, ValueError, LookupError):  # parameters the run refused
                name = None
        if isinstance(name, str) and name and name != "score":
            out[spec.label] = name
    return out


def _best_first(result, table: pd.DataFrame) -> list[str]:
    """The features in the order of the mean rank aggregate (as the run prints it), else
    by the mean of the rankers' ranks with ties in natural name order (x2 before x10):
    the same order on every machine."""
    agg = result.aggregated.get("mean_rank")
    if agg is not None and hasattr(agg, "order"):
        return [str(f) for f in agg.order]
    mean = table[[f"{label}.rank" for label in result.rankings]].mean(axis=1)
    key = dict(zip(table.index, mean.to_numpy().tolist(), strict=True))  # not a Series lookup
    names = sorted(table.index, key=natural_key)
    return sorted(names, key=key.__getitem__)  # stable: ties keep the natural order


def significant_counts(table: pd.DataFrame, q: float) -> dict[str, int]:
    """Per ranker with q-values: how many features have ``qvalue <= q``."""
    return {
        col.removesuffix(".qvalue"): int((table[col] <= q).sum())
        for col in table.columns
        if col.endswith(".qvalue")
    }
