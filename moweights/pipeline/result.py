"""What a run computed: :class:`RunResult`, filled in step by step."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from aggregation import GenericRanking, Ranking
from moweights.config import RunConfig

__all__ = ["RunResult"]


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
    generic_fallback : dict or None
        When the strict generic ranking is one block: the tolerant partition letting one
        input disagree, and the features in the top 10 of every input
        (:func:`moweights.pipeline.steps.generic_fallback`).
    similarity : dict of str -> DataFrame
        Ranker x ranker matrices, by measure.
    class_curves, class_folds : DataFrame
        Cross-validated class prediction from the top-k features of every ranking refit
        per fold (mean/std over folds, and per fold); ranker ``random`` is the baseline.
    curves, curve_folds : DataFrame
        Top-k kNN curves (mean/std over folds, and per fold); ranker ``random`` is the
        baseline; a ``site`` column in site runs.
    error_curves, expected, eca : DataFrame
        FFA/RFA curves of every ranking, the random ranking's expected curve, ECA.
    clustering : DataFrame
        k-means scores on each ranking's top features.
    statistics : dict
        Friedman and Nemenyi results over the blocks (folds or sites) on the headline score
        (:func:`moweights.pipeline.evaluate.headline`), with the table, the score tested,
        the winner and Demšar's cautions.
    pareto : dict of str -> dict of DataFrame
        For NSGA-II weighting rankers: ``weights``, ``objectives``, ``history``.
    significance : dict of str -> DataFrame
        For rankers that test each feature (``t_test``, ``anova_f``, ``fisher_score``,
        ``chi2``, ...): their ``pvalue`` and Benjamini-Hochberg ``qvalue`` per feature,
        fitted on all samples (not in site runs: a site's p-values are its own).
    stability : dict of str -> DataFrame
        With ``[stability]``: each ranking's bootstrap rank interval per feature
        (``low``, ``high``), by ranker label and aggregate.
    markers : DataFrame or None
        With ``[markers]``: every class against the rest, one row per class and feature
        (:func:`moweights.scverse.markers.find_markers`; ``group`` categorical in the
        classes' order).
    status : {"running", "complete", "partial", "failed"}
    notes : list of str
        Steps skipped and why, failed sites, the error that stopped a run.
    """

    config: RunConfig
    units: dict[str, tuple[pd.DataFrame, pd.Series | None]] = field(default_factory=dict)
    rankings: dict[str, Ranking] = field(default_factory=dict)
    site_rankings: dict[str, Any] = field(default_factory=dict)
    aggregated: dict[str, Ranking | GenericRanking] = field(default_factory=dict)
    generic_fallback: dict | None = None
    similarity: dict[str, pd.DataFrame] = field(default_factory=dict)
    class_curves: pd.DataFrame | None = None
    class_folds: pd.DataFrame | None = None
    curves: pd.DataFrame | None = None
    curve_folds: pd.DataFrame | None = None
    error_curves: pd.DataFrame | None = None
    expected: pd.DataFrame | None = None
    eca: pd.DataFrame | None = None
    clustering: pd.DataFrame | None = None
    statistics: dict | None = None
    pareto: dict[str, dict[str, pd.DataFrame]] = field(default_factory=dict)
    significance: dict[str, pd.DataFrame] = field(default_factory=dict)
    stability: dict[str, pd.DataFrame] = field(default_factory=dict)
    markers: pd.DataFrame | None = None
    status: str = "running"
    notes: list[str] = field(default_factory=list)
    #: steps found in the cache that an earlier run wrote
    cached: list[str] = field(default_factory=list)
    computed: list[str] = field(default_factory=list)
    #: steps met again within this run (the same key: e.g. a one-member mean rank's
    #: curves are its member's), found in the entry this run wrote
    repeated: list[str] = field(default_factory=list)
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

    def features(self) -> pd.DataFrame:
        """One row per feature: every ranker's score, rank, p- and q-value, every
        aggregate's rank (and the bootstrap rank intervals when computed), best first.

        The table the run writes as ``features.csv``; see
        :func:`moweights.output.features.feature_table` for its columns. A finished run
        folder's copy reads back with ``pandas.read_csv(folder / "features.csv")``.

        Examples
        --------
        >>> import moweights
        >>> result = moweights.run(moweights.load_config("config.toml"))  # doctest: +SKIP
        >>> table = result.features()  # doctest: +SKIP
        >>> table[table["t_test.qvalue"] <= 0.05]  # doctest: +SKIP
        """
        from moweights.output.features import feature_table

        return feature_table(self)
