"""What a cached value must look like to stand for its step.

The cache has checked its format already; a foreign entry that decodes to well-formed
data of another step, or of other data, is recomputed like a damaged one (the checks
raise, :meth:`~moweights.pipeline.cache.StepCache.fetch` recomputes).
"""

from __future__ import annotations

import pandas as pd

import rankers
from aggregation import GenericRanking, Ranking

__all__ = ["EXTRAS", "SIGNIFICANCE", "TESTS", "check_fit", "check_sites", "check_table"]

#: fitted attributes kept beside a ranking (the NSGA-II weighting's): attribute -> name
EXTRAS = {"pareto_weights_": "weights", "pareto_objectives_": "objectives", "history_": "history"}
#: the extra holding a ranker's per-feature tests (the columns of TESTS it has)
SIGNIFICANCE = "significance"
#: its columns, in this order: p- and q-value, signed statistic, log fold change
TESTS = ("pvalue", "qvalue", "statistic", "logfc")


def _expect(condition: bool, what: str) -> None:
    if not condition:
        raise rankers.InvalidInputError(f"the cached value is not {what}")


def _check_ranking(ranking, names) -> None:
    _expect(isinstance(ranking, Ranking), "a ranking")
    _expect(list(ranking.names) == [str(n) for n in names], "a ranking of the data's features")


def check_fit(names):
    def check(value) -> None:
        _expect(isinstance(value, tuple) and len(value) == 2, "(ranking, extras)")
        ranking, extras = value
        _check_ranking(ranking, names)
        _expect(isinstance(extras, dict), "a dict of extras")
        for name, frame in extras.items():
            known = name in EXTRAS.values() or name == SIGNIFICANCE
            _expect(known and isinstance(frame, pd.DataFrame), "an extra table")
        tests = extras.get(SIGNIFICANCE)
        if tests is not None:
            cols = list(tests.columns)
            _expect(cols == [c for c in TESTS if c in cols] and cols, "per-feature tests")
            _expect(("pvalue" in cols) == ("qvalue" in cols), "p- and q-values")
            _expect(list(tests.index) == [str(n) for n in names], "p-values of the features")

    return check


def check_sites(units):
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


def check_table(*columns: str):
    def check(value) -> None:
        _expect(isinstance(value, pd.DataFrame) and len(value) > 0, "a table")
        _expect(set(columns) <= set(value.columns), f"a table with columns {list(columns)}")

    return check
