"""The leaderboards: every ranker, the aggregates and the stacking ensemble, nested, scored.

Reads the fold rankings ``leaderboard_fits`` stored (one per training fold of
``StratifiedKFold(10, shuffle=True, random_state=0)``), builds the aggregates **fold by
fold from the members' rankings of that fold only**, and scores every ranking on its own
fold's test rows with the product's nested scorers:

* ``supervised``: :func:`aggregation.evaluation.class_curve` (5NN on the training fold's
  z-scores, balanced accuracy) at every k = 1..64; the headline is the mean over those k
  (``bacc_1_64``), ``bacc_16`` beside it. Higher is better.
* ``unsupervised``: :func:`aggregation.evaluation.topk_curve` at k = 16: 1NN MSE (the
  ensemble paper, ``mse_16``, the headline) and 5NN RMAE (the FRANe paper, ``rmae_16``).
  Lower is better.

Rows: every ranker of the protocol's kind, ``random`` (10 seeded random orders per fold,
averaged), and the aggregates of all those rankers: ``mean_rank``, ``borda``,
``kemeny_top32`` (exact Kemeny on the 32 features mean rank puts first, 18 when a majority
cycle makes 32 intractable; the rest in mean-rank order), ``generic_tol`` (the tolerant
generic ranking at tolerance 0.2: its blocks in order, each block's features in mean-rank
order, so its first block leads) and ``stacked_top3``, the ensemble: on each outer fold,
every member of a pool (cost tiers 0-1, fixed before measuring) is refit on 3 inner folds
of the training part and scored there by the protocol's headline; the 3 best members'
outer-fold rankings are combined by mean rank (``stacked_top1``, the single best, beside).

Outputs in ``--out`` (default ``leaderboard/``): ``<protocol>.csv`` (method, average_rank,
n_datasets), ``<protocol>/scores_<score>.csv`` (data sets x methods), ``folds.csv`` (every
fold's scores), ``stats.json`` (Friedman, Iman-Davenport, Nemenyi CD, Wilcoxon-Holm against
the best single ranker), ``cd_<score>.png``, ``summary.md`` (with the command), ``members.csv``
(which members the ensemble chose per fold) and ``orders/<data set>/<method>.npy.gz``:
every fold's first 256 features (uint16), so the scores re-derive from the repository with
``--from-orders`` when the cache is gone. The tables hold every float at full precision
(:func:`write_table`).

    python -m benchmarks.protocols.leaderboard --protocol supervised
    python -m benchmarks.protocols.leaderboard --protocol unsupervised --from-orders leaderboard
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.protocols import leaderboard_fits as fits  # the fitting half: cells, folds, cache
from moweights.ensemble import best_first, choose_members

TOP_K = 256
SCORES = {  # protocol -> {score: (higher is better, description)}
    "supervised": {
        "bacc_1_64": (True, "nested 5NN balanced accuracy, mean over k = 1..64"),
        "bacc_16": (True, "nested 5NN balanced accuracy at k = 16"),
    },
    "unsupervised": {
        "mse_16": (False, "nested 1NN MSE of all features from the top 16 (ensemble paper)"),
        "rmae_16": (False, "nested 5NN RMAE of all features from the top 16 (FRANe paper)"),
    },
}
HEADLINE = {"supervised": "bacc_1_64", "unsupervised": "mse_16"}
AGGREGATES = ("mean_rank", "borda", "kemeny_top32", "generic_tol")
#: the fusions that keep what a minority of members found (issue 46 item 2), aggregates
#: too; with ``--from-orders`` they are built from the members' committed top-256 orders,
#: each member a partial list (its 256 first, the rest one block below them), the form in
#: which Kolde et al. apply RRA and Cormack et al. fuse runs
FUSIONS = ("rra", "rrf", "best_rank")
ENSEMBLES = ("stacked_top3", "stacked_top1", "stacked_auto")
#: pairs tested on their own, as pre-registered: the NSGA-II member weights against the
#: mean rank of the chosen members (issue 46)
PAIRS = (("stacked_nsga2", "stacked_auto"),)
#: the NSGA-II weighting, the fourth contender of the head-to-head table (issue 46)
WEIGHTING = "mo_weighting"
#: how many members each ensemble combines (moweights.ensemble.choose_members)
ENSEMBLE_MEMBERS = {"stacked_top3": 3, "stacked_top1": 1, "stacked_auto": "auto"}
GENERIC_TOLERANCE = 0.2
N_RANDOM = 10
#: the ECA table (supervised, --eca): data sets up to this many samples (the SVM fits of
#: the error curves grow with the training rows; the 6 larger sets cost hours per method)
ECA_MAX_SAMPLES = 500
#: about 32 subset sizes per curve, as the supervised protocol's default grid
ECA_POINTS = 32
#: where fold scores are cached (``scores/<protocol>/<data set>/<method>__<key>.json``):
#: set by :func:`main` from ``--cache-dir``; a re-scoring of committed orders defaults to
#: ``<out>/.cache`` (its own output folder), a scoring of fits to the fit cache
SCORE_CACHE: Path | None = None


def _score_cache() -> Path:
    return fits.CACHE if SCORE_CACHE is None else SCORE_CACHE


# ------------------------------------------------------------------ scoring one ranking
def fold_scores(protocol: str, orders, X, y, folds) -> dict[str, np.ndarray]:
    """Every score of ``protocol`` per fold for fold orders (or ``"random"``)."""
    from aggregation.evaluation import class_curve, topk_curve

    ranking = orders if isinstance(orders, str) else _fold_rankings(orders, folds, X.shape[1])
    common = {"cv": [tuple(f) for f in folds], "random_state": 0, "return_folds": True}
    if isinstance(orders, str):
        common["n_random"] = N_RANDOM
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if protocol == "supervised":
            n = X.shape[1]
            ks = list(range(1, min(64, n) + 1))
            curve = class_curve(ranking, X, y, ks=ks, **common)
            wide = curve.pivot(index="fold", columns="k", values="value")
            return {
                "bacc_1_64": wide.mean(axis=1).to_numpy(),
                "bacc_16": wide[min(16, n)].to_numpy(),
            }
        out = {}
        for score, metric in (("mse_16", "mse"), ("rmae_16", "rmae")):
            curve = topk_curve(ranking, X, ks=[min(16, X.shape[1])], metric=metric, **common)
            out[score] = curve.sort_values("fold")["value"].to_numpy()
        return out


def _fold_rankings(orders, folds, n: int):
    """FoldRankings from per-fold orders (a top-K prefix is completed in index order: the
    scores at k <= K do not depend on the rest)."""
    from aggregation.evaluation.folds import FoldRankings
    from aggregation.ranking import Ranking
    from rankers.validation import default_feature_names

    names = default_feature_names(n)
    rankings = []
    for order in orders:
        order = np.asarray(order, dtype=np.intp)
        if len(order) < n:
            rest = np.setdiff1d(np.arange(n), order)
            order = np.concatenate([order, rest])
        rankings.append(Ranking(names, n - np.argsort(order).astype(float), None, order_idx=order))
    return FoldRankings(rankings, [tuple(f) for f in folds])


def cached_scores(protocol, method, orders, X, y, folds, dataset) -> dict[str, np.ndarray]:
    """:func:`fold_scores` through a cache keyed by the folds' top-64 orders and the folds."""
    digest = hashlib.sha256()
    digest.update(
        json.dumps([protocol, dataset.sha256, sorted(SCORES[protocol]), N_RANDOM]).encode()
    )
    for train, test in folds:
        digest.update(np.asarray(test, np.int64).tobytes())
        digest.update(np.asarray(train, np.int64).tobytes())
    if isinstance(orders, str):
        digest.update(orders.encode())
    else:
        for order in orders:
            digest.update(np.asarray(order[:64], np.int64).tobytes())
    path = (
        _score_cache()
        / "scores"
        / protocol
        / dataset.name
        / f"{method}__{digest.hexdigest()[:16]}.json"
    )
    if path.is_file():
        return {k: np.asarray(v) for k, v in json.loads(path.read_text()).items()}
    out = fold_scores(protocol, orders, X, y, folds)
    path.parent.mkdir(parents=True, exist_ok=True)
    fits.atomic_write(path, json.dumps({k: v.tolist() for k, v in out.items()}))
    return out


def cached_eca(method, orders, X, y, folds, dataset) -> float:
    """Nested ECA (uniform weighting, against random) of full fold orders: the error-curve
    paper's score with the paper's quadratic SVM, each fold's curves from its own ranking."""
    from aggregation.evaluation import eca, ffa_rfa

    n = X.shape[1]
    digest = hashlib.sha256(json.dumps(["eca", dataset.sha256, ECA_POINTS]).encode())
    for (_, test), order in zip(folds, orders, strict=True):
        digest.update(np.asarray(test, np.int64).tobytes())
        digest.update(np.asarray(order, np.int64).tobytes())
    path = (
        _score_cache()
        / "scores"
        / "eca"
        / dataset.name
        / f"{method}__{digest.hexdigest()[:16]}.json"
    )
    if path.is_file():
        return json.loads(path.read_text())["eca"]
    step = max(1, -(-n // ECA_POINTS))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        curve = ffa_rfa(_fold_rankings(orders, folds, n), X, y, grid=step, random_state=0)
    value = float(eca(curve))
    path.parent.mkdir(parents=True, exist_ok=True)
    fits.atomic_write(path, json.dumps({"eca": value}))
    return value


# ------------------------------------------------------------------ fold rankings and aggregates
def member_folds(dataset, ranker: str, k: int, inner: int = 0):
    """A ranker's stored fold rankings as [(order, scores)], or None while incomplete."""
    cell = fits.Cell(
        dataset, ranker, tuple(sorted(fits.ranker_params(ranker, dataset).items())), k, inner
    )
    if len(cell.done()) < cell.n_jobs:
        return None
    return [fits.read_fold(cell.folder, f)[:2] for f in range(cell.n_jobs)]


def fitted_folds(dataset, method: str, k: int) -> tuple[list | None, list[dict]]:
    """A fitted ensemble's fold orders from the fit cache (None while incomplete) and the
    member weights each fold learned (one row per fold and member)."""
    stored = member_folds(dataset, method, k)
    if stored is None:
        return None, []
    cell = fits.Cell(dataset, method, tuple(sorted(fits.ranker_params(method, dataset).items())), k)
    rows = []
    for f in range(k):
        meta = fits.read_fold(cell.folder, f)[2]
        for member, weight in meta.get("member_weights", {}).items():
            rows.append(
                {"dataset": dataset.name, "method": method, "fold": f, "member": member,
                 "weight": weight}
            )  # fmt: skip
    return [np.asarray(o, np.intp) for o, _ in stored], rows


def committed_weights(board: Path) -> pd.DataFrame:
    """``board``'s member_weights.csv (empty, with its columns, when there is none)."""
    path = board / "member_weights.csv"
    if not path.is_file():
        return pd.DataFrame(columns=["dataset", "method", "fold", "member", "weight"])
    return pd.read_csv(path)


def _ranking(order, scores, names, method):
    from aggregation.ranking import Ranking

    scores = np.asarray(scores, float)
    if not np.isfinite(scores).all():  # an order is what is aggregated: keep it exactly
        scores = len(order) - np.argsort(order).astype(float)
    return Ranking(names, scores, method, order_idx=np.asarray(order, np.intp))


def aggregate(name: str, rankings: list) -> np.ndarray:
    """One aggregate's order of one fold, from the members' rankings of that fold only."""
    from aggregation.combine import borda, kemeny, mean_rank
    from aggregation.uncertainty import tolerant_generic

    index = {f: i for i, f in enumerate(rankings[0].names)}
    if name in FUSIONS:
        from aggregation.combine import METHODS

        return _order(METHODS[name](rankings), index)
    if name == "borda":
        return _order(borda(rankings), index)
    mean = _order(mean_rank(rankings), index)
    if name == "mean_rank":
        return mean
    if name == "kemeny_top32":
        from aggregation.ranking import Ranking
        from rankers.exceptions import InvalidParameterError

        names = rankings[0].names
        positions = []
        for r in rankings:  # each member's position of every feature
            pos = np.empty(len(index), np.intp)
            pos[_order(r, index)] = np.arange(len(index))
            positions.append(pos)
        for size in (32, 18):  # 18: the exact solver's largest block, always tractable
            top = mean[:size]
            subset = [names[i] for i in top]
            projected = [
                Ranking.from_order(
                    [names[i] for i in top[np.argsort(pos[top], kind="stable")]], names=subset
                )
                for pos in positions
            ]
            try:
                head = _order(kemeny(projected), index)
            except InvalidParameterError:
                continue
            return np.concatenate([head, mean[size:]])
        raise RuntimeError("kemeny on 18 features is always tractable")
    if name == "generic_tol":
        blocks = tolerant_generic(rankings, tolerance=GENERIC_TOLERANCE).blocks
        position = np.empty(len(mean), np.intp)
        position[mean] = np.arange(len(mean))
        out = []
        for block in blocks:  # a block's features in mean-rank order
            out += sorted((index[f] for f in block), key=lambda i: position[i])
        return np.asarray(out, np.intp)
    raise ValueError(name)


def _order(ranking, index) -> np.ndarray:
    return np.asarray([index[f] for f in ranking.order], np.intp)


def prefix_ranking(order, names, method: str):
    """A member's committed top-256 order as a partial list: its features one block each,
    best first, then every other feature in one block (tied) below them."""
    from aggregation.ranking import GenericRanking

    top = [names[i] for i in order]
    listed = set(top)
    rest = [f for f in names if f not in listed]
    return GenericRanking([[f] for f in top] + ([rest] if rest else []), method=method)


def partial_list_fusions(orders: dict, members: list[str], n: int, k: int) -> dict:
    """:data:`FUSIONS` of the members' committed prefixes, fold by fold."""
    from rankers.validation import default_feature_names

    names = default_feature_names(n)
    index = {f: i for i, f in enumerate(names)}
    present = [m for m in members if m in orders]
    out = {}
    for name in FUSIONS:
        from aggregation.combine import METHODS

        out[name] = [
            _order(
                METHODS[name]([prefix_ranking(orders[m][f], names, m) for m in present]),
                index,
            )
            for f in range(k)
        ]
    return out


def stacking(
    protocol, dataset, pool, X, y, outer, k, memo
) -> tuple[dict, list, pd.DataFrame] | None:
    """The ensemble's orders per fold: each outer fold's best pool members by inner score.

    Inner scores: the pool member refit on 3 inner folds of the outer training part
    (``leaderboard_fits.inner_splits``), scored by the protocol's headline on the inner test
    rows (the outer test rows are never seen). Returns None while an inner cell is missing.
    """
    inner = fits.inner_splits(y, outer)
    headline = HEADLINE[protocol]
    higher = SCORES[protocol][headline][0]
    per_member = {}
    for name in pool:
        stored = member_folds(dataset, name, k, fits.N_INNER)
        if stored is None:
            return None
        orders = [o for o, _ in stored]
        scores = cached_scores(protocol, f"{name}.inner", orders, X, y, inner, dataset)[headline]
        per_member[name] = scores.reshape(k, fits.N_INNER).mean(axis=1)
    table = pd.DataFrame(per_member)  # outer folds x pool members
    out = {m: [] for m in ENSEMBLES}
    chosen = []
    for f in range(k):
        row = table.loc[f]
        # best first; scores within 1e-9 (relative) tie and keep the pool's order
        ranked = best_first({m: float(row[m]) for m in pool}, higher)
        names = memo["names"]
        for label, size in ENSEMBLE_MEMBERS.items():
            picked = choose_members({m: float(row[m]) for m in pool}, higher, size)
            members = [memo["members"][m][f] for m in picked]
            rankings = [_ranking(o, s, names, m) for (o, s), m in zip(members, picked, strict=True)]
            out[label].append(
                aggregate("mean_rank", rankings)
                if len(picked) > 1
                else np.asarray(members[0][0], np.intp)
            )
        chosen.append({"dataset": dataset.name, "fold": f, "chosen": " ".join(ranked[:3])})
    return out, chosen, table


def dataset_orders(protocol, dataset, X, y, outer, k, members, pool):
    """Every method's fold orders on one data set (None for a missing ranker or aggregate)."""
    from rankers.validation import default_feature_names

    names = default_feature_names(X.shape[1])
    stored = {m: member_folds(dataset, m, k) for m in members}
    orders = {m: (None if s is None else [o for o, _ in s]) for m, s in stored.items()}
    complete = all(s is not None for s in stored.values())
    for name in AGGREGATES + FUSIONS:
        orders[name] = None
        if complete:
            orders[name] = [
                aggregate(name, [_ranking(*stored[m][f], names, m) for m in members])
                for f in range(k)
            ]
    memo = {"names": names, "members": stored}
    result = None
    if all(stored.get(m) is not None for m in pool):
        result = stacking(protocol, dataset, pool, X, y, outer, k, memo)
    chosen = []
    for name in ENSEMBLES:
        orders[name] = None if result is None else result[0][name]
    if result is not None:
        chosen = result[1]
    return orders, chosen


# ------------------------------------------------------------------ the compact record
def write_orders(folder: Path, method: str, orders) -> None:
    """Every fold's first TOP_K features (uint16, one row per fold) as a gzipped .npy."""
    head = np.stack([np.asarray(o[:TOP_K]) for o in orders]).astype(np.uint16)
    buf = io.BytesIO()
    np.save(buf, head, allow_pickle=False)
    folder.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(folder / f"{method}.npy.gz", "wb", mtime=0) as fh:
        fh.write(buf.getvalue())


def read_orders(path: Path) -> np.ndarray:
    with gzip.open(path, "rb") as fh:
        return np.load(io.BytesIO(fh.read()), allow_pickle=False)


# ------------------------------------------------------------------ statistics and tables
def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values."""
    order = np.argsort(p)
    adjusted = np.maximum.accumulate((len(p) - np.arange(len(p))) * p[order]).clip(max=1)
    out = np.empty_like(adjusted)
    out[order] = adjusted
    return out


def statistics(table: pd.DataFrame, higher: bool, singles: list[str]) -> dict:
    """Friedman + Iman-Davenport, Nemenyi, and Wilcoxon (zsplit) + Holm of every method
    against the best single ranker (the one of ``singles`` with the lowest average rank)."""
    from scipy.stats import wilcoxon

    from aggregation.evaluation.stats import friedman, nemenyi

    fr = friedman(table, higher_is_better=higher)
    ne = nemenyi(table, higher_is_better=higher)
    # equal average ranks: the table's column order (stable sort), never the sort's whim
    ranks = fr.avg_ranks.sort_values(kind="stable")
    best = next(m for m in ranks.index if m in singles)
    others = [m for m in ranks.index if m != best]
    raw = []
    for m in others:
        d = table[m] - table[best]
        raw.append(
            1.0 if np.all(d == 0) else wilcoxon(table[m], table[best], zero_method="zsplit").pvalue
        )
    adj = holm(np.asarray(raw)) if raw else np.array([])
    return {
        "n_datasets": int(fr.n),
        "n_methods": int(fr.k),
        "friedman_chi2": float(fr.statistic),
        "friedman_p": float(fr.pvalue),
        "iman_davenport_F": float(fr.f_statistic),
        "iman_davenport_p": float(fr.f_pvalue),
        "nemenyi_cd": float(ne.cd),
        "nemenyi_groups": [list(g) for g in ne.groups],
        "best_single": best,
        "wilcoxon_holm_vs_best_single": {
            m: {
                "p": float(p),
                "p_holm": float(q),
                "wins": int(
                    ((table[m] > table[best]) if higher else (table[m] < table[best])).sum()
                ),
                "losses": int(
                    ((table[m] < table[best]) if higher else (table[m] > table[best])).sum()
                ),
            }
            for m, p, q in zip(others, raw, adj, strict=True)
        },
        "average_ranks": {m: float(r) for m, r in ranks.items()},
    }


def regret(table: pd.DataFrame, higher: bool, singles: list[str]) -> pd.DataFrame:
    """Each method's regret against the best single ranker in hindsight, per data set.

    On every data set (row of ``table``) the best score of ``singles`` (the single rankers,
    random excluded) minus the method's, for a higher-is-better score; for an error
    (lower is better), ``(method - best) / best``. 0 for the best single ranker itself,
    negative where a method beats every single ranker. Returns the per-data-set table with
    two rows more, ``worst`` and ``mean`` (SPEC §13).
    """
    singles = [m for m in singles if m in table.columns and m != "random"]
    if higher:
        gap = table[singles].max(axis=1).to_numpy()[:, None] - table.to_numpy()
    else:
        best = table[singles].min(axis=1).to_numpy()[:, None]
        gap = (table.to_numpy() - best) / best
    out = pd.DataFrame(gap, index=table.index, columns=table.columns)
    return pd.concat(
        [out, out.max().rename("worst").to_frame().T, out.mean().rename("mean").to_frame().T]
    )


def head_to_head(table: pd.DataFrame, higher: bool, stats: dict) -> list[dict]:
    """The issue's contenders pairwise: the best single ranker, the best aggregate (lowest
    average rank of :data:`AGGREGATES` and :data:`FUSIONS`, the first of them in that order
    on a tie), the product's ensemble ``stacked_auto`` and, where the table has it, the
    NSGA-II weighting ``mo_weighting`` (the pre-registration of leaderboard/README.md);
    Wilcoxon signed-rank (zsplit) per pair, Holm over these pairs (three, or six with
    ``mo_weighting``). ``stats``: :func:`statistics` of the same table, whose average ranks
    and best single ranker it reads. Empty when the table lacks an aggregate or the
    ensemble."""
    from itertools import combinations

    ranks = stats["average_ranks"]
    every = AGGREGATES + FUSIONS
    aggregates = [m for m in every if m in ranks]
    if not aggregates or "stacked_auto" not in table.columns:
        return []
    # equal average ranks (sums of the same ranks): the first in AGGREGATES' order
    best_aggregate = min(aggregates, key=lambda m: (round(ranks[m], 9), every.index(m)))
    names = [stats["best_single"], best_aggregate, "stacked_auto"]
    if WEIGHTING in ranks and WEIGHTING not in names:
        names.append(WEIGHTING)
    rows = pair_tests(table, higher, ranks, list(combinations(names, 2)))
    for row, q in zip(rows, holm(np.array([r["p"] for r in rows])), strict=True):
        row["p_holm"] = float(q)
    return rows


def pair_tests(table: pd.DataFrame, higher: bool, ranks: dict, pairs: list) -> list[dict]:
    """Wilcoxon signed-rank (zsplit) of each pair of methods over the data sets, with their
    average ranks and wins (``p = 1`` for identical columns)."""
    from scipy.stats import wilcoxon

    rows = []
    for a, b in pairs:
        d = table[a] - table[b]
        p = 1.0 if np.all(d == 0) else wilcoxon(table[a], table[b], zero_method="zsplit").pvalue
        better = (d > 0) if higher else (d < 0)
        worse = (d < 0) if higher else (d > 0)
        rows.append(
            {
                "a": a,
                "b": b,
                "rank_a": float(ranks[a]),
                "rank_b": float(ranks[b]),
                "wins_a": int(better.sum()),
                "wins_b": int(worse.sum()),
                "p": float(p),
            }
        )
    return rows


def complete_table(table: pd.DataFrame) -> tuple[pd.DataFrame, list[str], list[str]]:
    """The largest table without gaps: drop, one at a time, the method or data set with the
    largest share of missing cells (methods first on a tie). Returns it and the dropped."""
    dropped_methods, dropped_sets = [], []
    while table.isna().any().any() and table.size:
        by_method = table.isna().mean(axis=0)
        by_set = table.isna().mean(axis=1)
        if by_method.max() >= by_set.max():
            name = by_method.idxmax()
            dropped_methods.append(name)
            table = table.drop(columns=name)
        else:
            name = by_set.idxmax()
            dropped_sets.append(name)
            table = table.drop(index=name)
    return table, dropped_methods, dropped_sets


def write_table(frame: pd.DataFrame, path: Path, index: bool = False) -> None:
    """Write a score table at full precision: every float as its shortest round-trip repr.

    Rounded tables (6 digits, as before) made scores that differ in the 7th digit equal, and
    equal data-set means (identical orders) unequal, so ranks re-derived from the file moved
    by half a rank; read back (``pd.read_csv``) every value is the one computed, so a table
    re-derived from ``folds.csv`` ties where the scorer's did.
    """
    frame.to_csv(path, index=index, float_format=None)


def _markdown(frame: pd.DataFrame, fmt: str = ".4f") -> str:
    return frame.to_markdown(floatfmt=fmt)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--protocol", choices=("supervised", "unsupervised"), required=True)
    parser.add_argument(
        "--datasets", nargs="+", help="only these (default: all present but orlraws10P)"
    )
    parser.add_argument(
        "--members", nargs="+", help="rankers (default: every ranker of the protocol's kind)"
    )
    parser.add_argument("--out", type=Path, default=fits.ROOT / "leaderboard")
    parser.add_argument(
        "--from-orders",
        type=Path,
        metavar="DIR",
        help="score the committed top-256 orders in DIR/<protocol>/orders instead of the cache",
    )
    parser.add_argument("--data-dir", type=Path, default=fits.DATA_DIR)
    parser.add_argument(
        "--cache-dir",
        type=Path,
        help="the fold scores' cache (default: with --from-orders OUT/.cache, else the fit "
        "cache, $MOWEIGHTS_LEADERBOARD_CACHE)",
    )
    parser.add_argument(
        "--fusion-members",
        nargs="+",
        metavar="METHOD",
        help="with --from-orders: build rra, rrf and best_rank from these methods' committed "
        "top-256 orders (partial lists) and write their orders beside them",
    )
    parser.add_argument(
        "--fitted",
        nargs="+",
        default=[],
        metavar="METHOD",
        help="with --from-orders: also these methods' fold fits from the fit cache (a fitted "
        f"ensemble: {', '.join(fits.FITTED_ENSEMBLES)}), their orders written beside the "
        "committed ones and their learned member weights to <protocol>/member_weights.csv",
    )
    parser.add_argument(
        "--eca",
        action="store_true",
        help=f"supervised: also the nested ECA table (data sets up to {ECA_MAX_SAMPLES} samples)",
    )
    args = parser.parse_args(argv)  # fmt: skip
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)  # one core: BLAS and OpenMP on one thread (forked children too)
    argv_text = " ".join(sys.argv[1:] if argv is None else argv)
    global SCORE_CACHE
    SCORE_CACHE = args.cache_dir or (args.out / ".cache" if args.from_orders else None)
    protocol = args.protocol
    present, missing = fits.list_datasets(args.data_dir)
    if args.datasets:
        wanted = {n.lower() for n in args.datasets}
        datasets = [d for d in present if d.name.lower() in wanted]
    else:
        datasets = [d for d in present if d.name not in fits.NOT_INDEPENDENT]
    members = args.members or fits.protocol_rankers(protocol)
    pool = [m for m in fits.POOL[protocol] if m in members]
    folder = args.out / protocol
    start = time.perf_counter()
    rows, chosen_all, eca_rows, weight_rows = [], [], [], []
    # read before the loop: this run rewrites the file in the same folder at its end
    committed = committed_weights(args.from_orders / protocol) if args.from_orders else None
    for d in datasets:
        X, y = fits.load(d)
        k = fits.n_folds(y)
        outer = fits.splits(y, k)
        if args.from_orders:
            src = args.from_orders / protocol / "orders" / d.name
            orders = {
                p.name[: -len(".npy.gz")]: list(read_orders(p))
                for p in sorted(src.glob("*.npy.gz"))
            }
            if args.fusion_members:
                fused = partial_list_fusions(orders, args.fusion_members, X.shape[1], k)
                for method, o in fused.items():
                    orders[method] = o
                    write_orders(folder / "orders" / d.name, method, o)
            for method in args.fitted:
                o, weights = fitted_folds(d, method, k)
                if o is None:
                    # committed before (a run that finished this set), or not yet: a method
                    # without every set is listed as not ranked (complete_table)
                    keep = (committed["dataset"] == d.name) & (committed["method"] == method)
                    weight_rows += committed[keep].to_dict("records")
                    state = "its committed orders" if method in orders else "not fitted yet"
                    print(f"{d.name}: {method}'s fits are not all in the cache: {state}")
                    continue
                orders[method] = o
                weight_rows += weights
                write_orders(folder / "orders" / d.name, method, o)
        else:
            orders, chosen = dataset_orders(protocol, d, X, y, outer, k, members, pool)
            chosen_all += chosen
            for method, o in orders.items():
                if o is not None:
                    write_orders(folder / "orders" / d.name, method, o)
        if args.eca and protocol == "supervised" and d.n_samples <= ECA_MAX_SAMPLES:
            for method, o in orders.items():
                if o is not None and len(o[0]) == X.shape[1]:  # full orders only
                    value = cached_eca(method, o, X, y, outer, d)
                    eca_rows.append({"dataset": d.name, "method": method, "eca": value})
            # a random ranking's expected ECA is 0 exactly (uniform weighting, §3.3)
            eca_rows.append({"dataset": d.name, "method": "random", "eca": 0.0})
        orders["random"] = "random"
        for method, o in orders.items():
            if o is None:
                continue
            scores = cached_scores(protocol, method, o, X, y, outer, d)
            for f in range(k):
                rows.append(
                    {
                        "dataset": d.name,
                        "method": method,
                        "fold": f,
                        **{s: v[f] for s, v in scores.items()},
                    }
                )
        print(f"{d.name}: {sum(o is not None for o in orders.values())} methods scored", flush=True)
    long = pd.DataFrame(rows)
    folder.mkdir(parents=True, exist_ok=True)
    write_table(long, folder / "folds.csv")
    if chosen_all:
        pd.DataFrame(chosen_all).to_csv(folder / "members.csv", index=False)
    if weight_rows:
        write_table(pd.DataFrame(weight_rows), folder / "member_weights.csv")
    singles = [m for m in members if m in set(long["method"])] + ["random"]
    headline = HEADLINE[protocol]
    report = {
        "protocol": protocol,
        "command": f"python -m {__spec__.name} {argv_text}",
        "scores": {},
    }
    lines = [
        f"# {protocol.capitalize()} leaderboard (nested: rankings refit on each training fold)",
        "",
    ]
    lines += [
        f"Command: `{report['command']}`  ",
        f"Commit: {fits.commit_info()['commit'][:12]}; {time.strftime('%Y-%m-%d')}",
        "",
    ]
    scores = dict(SCORES[protocol])
    if eca_rows:
        eca_long = pd.DataFrame(eca_rows)
        eca_long["fold"] = -1
        long = pd.concat([long, eca_long], ignore_index=True)
        scores["eca"] = (True, "nested ECA against random, uniform weighting (error-curve paper)")
    for score, (higher, text) in scores.items():
        wide = long.pivot_table(index="dataset", columns="method", values=score, aggfunc="mean")
        write_table(wide, folder / f"scores_{score}.csv", index=True)
        table, dropped_methods, dropped_sets = complete_table(wide)
        stats = statistics(table, higher, [m for m in singles if m != "random"])
        stats.update(dropped_methods=dropped_methods, dropped_datasets=dropped_sets)
        stats["head_to_head"] = head_to_head(table, higher, stats)
        # pre-registered single pairs (leaderboard/README.md), outside the Holm family above
        stats["pairs"] = pair_tests(
            table, higher, stats["average_ranks"],
            [(a, b) for a, b in PAIRS if a in table.columns and b in table.columns],
        )  # fmt: skip
        gaps = regret(table, higher, [m for m in singles if m != "random"])
        write_table(gaps, folder / f"regret_{score}.csv", index=True)
        stats["regret"] = {
            m: {"worst": float(gaps.loc["worst", m]), "mean": float(gaps.loc["mean", m])}
            for m in gaps.columns
        }
        report["scores"][score] = stats
        ranks = pd.Series(stats["average_ranks"]).rename("average_rank")
        board = ranks.rename_axis("method").reset_index()
        board["n_datasets"] = stats["n_datasets"]
        if score == headline:
            write_table(board, args.out / f"{protocol}.csv")
        _cd_diagram(table, higher, folder / f"cd_{score}.png", f"{protocol}: {text}")
        lines += [f"## {score}: {text} ({'higher' if higher else 'lower'} is better)", ""]
        lines += [_markdown(board.set_index("method"), ".3f"), ""]
        lines += [
            f"Friedman chi2 = {stats['friedman_chi2']:.2f} (p = {stats['friedman_p']:.2g}), "
            f"Iman-Davenport F = {stats['iman_davenport_F']:.2f} "
            f"(p = {stats['iman_davenport_p']:.2g}); Nemenyi CD = {stats['nemenyi_cd']:.2f} "
            f"for {stats['n_methods']} methods on {stats['n_datasets']} data sets.",
            f"Not ranked (incomplete): methods {dropped_methods or 'none'}, "
            f"data sets {dropped_sets or 'none'}.",
            "",
            "Wilcoxon signed-rank (zsplit), Holm-adjusted, against the best single ranker "
            f"**{stats['best_single']}**:",
            "",
            "| method | wins | losses | p | p (Holm) |",
            "|---|---|---|---|---|",
        ]
        for m, w in stats["wilcoxon_holm_vs_best_single"].items():
            lines.append(
                f"| {m} | {w['wins']} | {w['losses']} | {w['p']:.3g} | {w['p_holm']:.3g} |"
            )
        if stats["head_to_head"]:
            lines += [
                "",
                "Head to head: the best single ranker, the best aggregate, the ensemble "
                "(`stacked_auto`) and, where ranked, the NSGA-II weighting (`mo_weighting`); "
                f"Wilcoxon signed-rank (zsplit), Holm over these {len(stats['head_to_head'])} "
                "pairs:",
                "",
                "| a | b | average ranks | wins a / b | p | p (Holm) |",
                "|---|---|---|---|---|---|",
            ]
            lines += [
                f"| {h['a']} | {h['b']} | {h['rank_a']:.2f} / {h['rank_b']:.2f} | "
                f"{h['wins_a']} / {h['wins_b']} | {h['p']:.3g} | {h['p_holm']:.3g} |"
                for h in stats["head_to_head"]
            ]
        if stats["pairs"]:
            lines += [
                "",
                "Pre-registered pairs (Wilcoxon signed-rank, zsplit, each on its own):",
                "",
                "| a | b | average ranks | wins a / b | p |",
                "|---|---|---|---|---|",
            ]
            lines += [
                f"| {h['a']} | {h['b']} | {h['rank_a']:.2f} / {h['rank_b']:.2f} | "
                f"{h['wins_a']} / {h['wins_b']} | {h['p']:.3g} |"
                for h in stats["pairs"]
            ]
        lines += ["", f"Per data set ({score}, mean over folds):", "", _markdown(wide, ".4f"), ""]
    left_out = [d.name for d in present if d not in datasets]
    note = {n: " (a near copy of ORL)" for n in fits.NOT_INDEPENDENT}
    lines += [
        f"Data sets missing here: {', '.join(missing) or 'none'}; "
        f"left out: {', '.join(n + note.get(n, '') for n in left_out) or 'none'}.",
        "",
    ]
    lines.append(f"Scoring took {time.perf_counter() - start:.0f} s.")
    (folder / "summary.md").write_text("\n".join(lines) + "\n")
    (folder / "stats.json").write_text(json.dumps(report, indent=1))
    print("\n".join(lines))
    return report


def _cd_diagram(table, higher, path, title) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from aggregation.evaluation import nemenyi, plot_cd_diagram

    fig = plot_cd_diagram(nemenyi(table, higher_is_better=higher), title=title)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


if __name__ == "__main__":
    main()
