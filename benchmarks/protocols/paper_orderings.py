"""Our average ranks next to the orderings the papers state in their text.

The papers' result tables are withheld from us, but their text says which method leads,
which follow and which pairs differ significantly. This script reads the committed protocol
tables, restricts each to the methods the paper compared, recomputes average ranks,
Friedman and Nemenyi on that set, and checks every stated claim: ``agrees``, ``differs``,
or, for a claimed place that the method shares with another, ``tied with ...``.
The random baseline is shown beside each comparison (it is not in the papers' tables).

Usage::

    python -m benchmarks.protocols.paper_orderings                   # prints the markdown
    python -m benchmarks.protocols.paper_orderings --out benchmarks/results/paper_orderings.md
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from aggregation.evaluation import stats

RESULTS = Path(__file__).resolve().parents[1] / "results"
WIN_RTOL = 1e-9  # values this close (relative) to the best share the win
RANK_ATOL = 1e-9  # average ranks this close share a place (they are fractions k / N)


@dataclass(frozen=True)
class Study:
    """One paper's comparison: which table, which methods, and what its text claims."""

    paper: str
    table: str
    metric: str
    higher_is_better: bool
    methods: tuple[str, ...]
    stated: str
    claims: tuple[tuple[str, Callable[[dict], bool | str]], ...]


def _place(method: str, place: int) -> Callable[[dict], bool | str]:
    """``method`` holds ``place`` in the order (0 first, 1 second, -1 last), alone.

    Average ranks are fractions (55/18 for two methods alike): a method whose rank is
    within ``RANK_ATOL`` of the place's is "tied with" the others there, not "agrees" by
    the order the paper listed the methods in.
    """

    def check(r: dict) -> bool | str:
        ranks = r["ranks"]
        target = ranks[r["order"][place]]
        holders = [m for m in r["order"] if abs(ranks[m] - target) <= RANK_ATOL]
        if method not in holders:
            return False
        if len(holders) == 1:
            return True
        return "tied with " + ", ".join(m for m in holders if m != method)

    return check


def _leads(method: str) -> Callable[[dict], bool | str]:
    return _place(method, 0)


def _second(method: str) -> Callable[[dict], bool | str]:
    return _place(method, 1)


def _differs(a: str, b: str) -> Callable[[dict], bool]:
    return lambda r: bool(r["pvalues"].loc[a, b] < 0.05)


def _same(a: str, b: str) -> Callable[[dict], bool]:
    return lambda r: bool(r["pvalues"].loc[a, b] >= 0.05)


def _all(*checks: Callable[[dict], bool]) -> Callable[[dict], bool]:
    return lambda r: all(check(r) for check in checks)


def _most_wins(method: str) -> Callable[[dict], bool]:
    return lambda r: r["wins"].idxmax() == method and (r["wins"] == r["wins"].max()).sum() == 1


ENSEMBLE_BASELINES = ("laplacian", "agnos_s", "ndfs", "mcfs", "spec")
STUDIES = (
    Study(
        "ensemble paper (unsupervised-ensemble-and-relief-ranking, §6.2)",
        "unsupervised/mse_at_16.csv",
        "1NN MSE@16",
        False,
        ("genie3", "urelief", *ENSEMBLE_BASELINES),
        "Genie3 best, URelief second; Genie3 significantly better than every method outside "
        "the top group {Genie3, URelief}; groups {URelief, Laplace, AgnoS-S, NDFS, MCFS} and "
        "{Laplace, AgnoS-S, NDFS, MCFS, SPEC}.",
        (
            ("genie3 has the best average rank", _leads("genie3")),
            ("urelief has the second-best average rank", _second("urelief")),
            ("genie3 and urelief do not differ significantly", _same("genie3", "urelief")),
            (
                "genie3 differs significantly from each of the five baselines",
                _all(*(_differs("genie3", b) for b in ENSEMBLE_BASELINES)),
            ),
        ),
    ),
    Study(
        "FRANe paper (frane-attribute-network-ranking, §5)",
        "unsupervised_frane/rmae_at_16.csv",
        "5NN RMAE@16",
        False,
        ("frane", "laplacian", "mcfs", "ndfs", "agnos_s"),
        "FRANe has the best average rank (1.88), Laplace the second (2.54); FRANe has the most "
        "wins (12 of 26), NDFS the second most (5).",
        (
            ("frane has the best average rank", _leads("frane")),
            ("laplacian has the second-best average rank", _second("laplacian")),
            ("frane has the most wins", _most_wins("frane")),
        ),
    ),
    Study(
        "error-curve paper (error-curve-ranking-quality-score, §5.2)",
        "supervised/eca_uniform.csv",
        "ECA (uniform weights) against the expected curve",
        True,
        ("relieff", "info_gain", "svm_rfe", "random_forest"),
        "ReliefF, Info Gain and SVM-RFE significantly outperform Random Forests and do not "
        "differ significantly among each other; random forests often have negative ECA.",
        (
            (
                "random_forest has the worst average rank",
                _place("random_forest", -1),
            ),
            (
                "relieff, info_gain and svm_rfe each differ significantly from random_forest",
                _all(*(_differs(m, "random_forest") for m in ("relieff", "info_gain", "svm_rfe"))),
            ),
            (
                "relieff, info_gain and svm_rfe do not differ significantly among each other",
                _all(
                    _same("relieff", "info_gain"),
                    _same("relieff", "svm_rfe"),
                    _same("info_gain", "svm_rfe"),
                ),
            ),
            (
                "random_forest has a negative ECA on some data sets",
                lambda r: bool((r["table"]["random_forest"] < 0).any()),
            ),
        ),
    ),
)


def verdicts(study: Study, r: dict) -> list[str]:
    """Each claim's verdict on :func:`compare`'s result: agrees, differs or tied with ..."""
    out = []
    for _, check in study.claims:
        v = check(r)
        out.append(v if isinstance(v, str) else ("agrees" if v else "differs"))
    return out


def _wins(table: pd.DataFrame, higher_is_better: bool) -> pd.Series:
    """Data sets on which each method is best; values within WIN_RTOL of the best all win."""
    values = table.to_numpy(dtype=float)
    best = values.max(axis=1) if higher_is_better else values.min(axis=1)
    won = np.isclose(values, best[:, None], rtol=WIN_RTOL, atol=0.0)
    return pd.Series(won.sum(axis=0), index=table.columns)


def compare(study: Study, results: Path = RESULTS) -> dict | None:
    """The study's table restricted to the paper's methods, with ranks, tests and wins."""
    path = results / study.table
    if not path.exists():
        return None
    full = pd.read_csv(path, index_col="dataset")
    table = full[list(study.methods)].dropna()
    fried = stats.friedman(table, higher_is_better=study.higher_is_better)
    nem = stats.nemenyi(table, higher_is_better=study.higher_is_better)
    ranks = fried.avg_ranks
    # a data set's ranks are multiples of 1/2 (a tie shares the mean of its places), so
    # the average ranks are exact multiples of 1 / (2N): sort by that count, with no
    # rounding boundary for two equal ranks summed in different orders to straddle
    half_steps = (ranks * 2 * len(table)).round()
    order = sorted(ranks.index, key=lambda m: (half_steps[m], study.methods.index(m)))
    with_random = None
    if "random" in full.columns:
        both = full[[*study.methods, "random"]].dropna()
        with_random = stats.friedman(both, higher_is_better=study.higher_is_better).avg_ranks
    return {
        "table": table,
        "ranks": ranks,
        "order": order,
        "friedman": fried,
        "nemenyi": nem,
        "pvalues": nem.pvalues,
        "wins": _wins(table, study.higher_is_better),
        "with_random": with_random,
    }


def markdown(results: Path = RESULTS) -> str:
    lines = [
        "# Our orderings next to the papers' stated orderings",
        "",
        f"Command: `python -m {__spec__.name} --out "
        "benchmarks/results/paper_orderings.md`. Each committed protocol table is restricted "
        "to the methods the paper compared (data sets with a missing cell are dropped); "
        "average ranks (1 = best), Friedman and Nemenyi (alpha = 0.05) are recomputed on that "
        "set. The random baseline is not in the papers' tables: its column shows where it "
        "would rank among the same methods.",
    ]
    for study in STUDIES:
        r = compare(study, results)
        lines += ["", f"## {study.paper}", ""]
        if r is None:
            lines.append(f"`{study.table}` is not committed: nothing to compare.")
            continue
        fried, nem = r["friedman"], r["nemenyi"]
        lines += [
            f"Metric: {study.metric}; {fried.n} data sets; Friedman p = {fried.pvalue:.2g}, "
            f"Nemenyi CD = {nem.cd:.2f}.",
            "",
            f"The paper states: {study.stated}",
            "",
            "| method | average rank | wins |"
            + (" average rank with random |" if r["with_random"] is not None else ""),
            "|---|---|---|" + ("---|" if r["with_random"] is not None else ""),
        ]
        for m in r["order"]:
            row = f"| {m} | {r['ranks'][m]:.2f} | {int(r['wins'][m])} |"
            if r["with_random"] is not None:
                row += f" {r['with_random'][m]:.2f} |"
            lines.append(row)
        if r["with_random"] is not None:
            lines.append(f"| random | | | {r['with_random']['random']:.2f} |")
        lines += ["", "| the paper's claim | here |", "|---|---|"]
        for (claim, _), verdict in zip(study.claims, verdicts(study, r), strict=True):
            lines.append(f"| {claim} | {verdict} |")
        groups = "; ".join("{" + ", ".join(g) + "}" for g in nem.groups)
        lines += ["", f"Groups not significantly different: {groups}."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--out", type=Path, help="write the markdown here too")
    args = parser.parse_args(argv)
    text = markdown(args.results)
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
