"""Speed of combining many rankings: generic, mean rank and Borda vs plain Python loops.

Random permutations (seeded) of ``--n-features`` features, ``--n-rankings`` of them. Each
vectorised combination is timed (best of ``--repeat``, plus peak traced memory) beside a
straightforward pure-Python implementation run in the same process:

- mean rank / Borda: a dict per feature, one loop over every input's order (ties averaged);
- generic: the paper's definition (§2.3) with growing prefix sets, one per input, cut
  wherever all prefix sets are equal.

The loops are slow, so they run on the first ``--baseline-rankings`` inputs and their time
is scaled linearly to ``--n-rankings`` (both are one pass per input); the vectorised
function is also run on that subsample and must give the same result.

    python -m benchmarks.speed.bench_aggregation
    python -m benchmarks.speed.bench_aggregation --n-rankings 200 --n-features 5000
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from aggregation.combine import borda, generic, mean_rank
from aggregation.ranking import GenericRanking, Ranking
from benchmarks._common import measure, print_table


def _loop_average_ranks(rankings):
    """{feature: [rank in each input]} by walking each input's order; ties averaged."""
    ranks = {name: [] for name in rankings[0].names}
    for r in rankings:
        scores = dict(zip(r.names, r.scores.tolist(), strict=True))
        order = r.order
        start = 0
        while start < len(order):
            end = start
            while end + 1 < len(order) and scores[order[end + 1]] == scores[order[start]]:
                end += 1
            average = (start + end) / 2 + 1
            for name in order[start : end + 1]:
                ranks[name].append(average)
            start = end + 1
    return ranks


def loop_mean_rank(rankings):
    names = list(rankings[0].names)
    position = {name: i for i, name in enumerate(names)}
    totals = dict.fromkeys(names, 0.0)
    for name, values in _loop_average_ranks(rankings).items():
        for value in values:
            totals[name] += value
    mean = {name: totals[name] / len(rankings) for name in names}
    order = sorted(names, key=lambda f: (mean[f], position[f]))
    return order, [len(names) + 1 - mean[f] for f in names]


def loop_borda(rankings):
    names = list(rankings[0].names)
    n = len(names)
    position = {name: i for i, name in enumerate(names)}
    points = dict.fromkeys(names, 0.0)
    for name, values in _loop_average_ranks(rankings).items():
        for value in values:
            points[name] += n - value
    order = sorted(names, key=lambda f: (-points[f], position[f]))
    return order, [points[f] for f in names]


def loop_generic(rankings):
    """The paper's k(1) < ... < k(s): grow every input's prefix, cut where all are equal."""
    orders = [r.order for r in rankings]
    prefixes = [set() for _ in orders]
    blocks, previous = [], set()
    for k in range(len(orders[0])):
        for prefix, order in zip(prefixes, orders, strict=True):
            prefix.add(order[k])
        if all(p == prefixes[0] for p in prefixes[1:]):
            blocks.append(prefixes[0] - previous)
            previous = set(prefixes[0])
    return blocks


def _same(kind, fast, slow):
    if kind == "generic":
        return [set(b) for b in fast.blocks] == slow
    order, scores = slow
    return fast.order == order and np.allclose(fast.scores, scores)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n-rankings", type=int, default=1000, help="inputs (default 1000)")
    parser.add_argument("--n-features", type=int, default=20000, help="features (default 20000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the permutations")
    parser.add_argument(
        "--baseline-rankings",
        type=int,
        default=100,
        help="inputs the Python loops run on; their time is scaled to --n-rankings (default 100)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="timing runs, best kept")
    args = parser.parse_args(argv)
    q, n = args.n_rankings, args.n_features
    q_loop = min(args.baseline_rankings, q)

    rng = np.random.default_rng(args.seed)
    names = tuple(f"x{i}" for i in range(n))
    start = time.perf_counter()
    rankings = [Ranking(names, rng.permutation(n).astype(float)) for _ in range(q)]
    print(f"built {q} random rankings of {n} features in {time.perf_counter() - start:.1f} s")
    sample = rankings[:q_loop]
    scale = q / q_loop
    if q_loop < q:
        print(
            f"Python-loop baselines run on the first {q_loop} rankings; their times are "
            f"scaled x{scale:g} to {q} rankings"
        )

    rows = []
    for kind, fast, slow in [
        ("generic", generic, loop_generic),
        ("mean_rank", mean_rank, loop_mean_rank),
        ("borda", borda, loop_borda),
    ]:
        vec = measure(lambda f=fast: f(rankings), repeat=args.repeat)
        loop = measure(lambda f=slow: f(sample), repeat=1, memory=False)
        if not _same(kind, fast(sample), loop.result):
            raise SystemExit(f"{kind}: the vectorised result differs from the Python loop")
        extra = ""
        if isinstance(vec.result, GenericRanking):
            extra = f"s = {len(vec.result)} blocks"
        rows.append(
            {
                "method": kind,
                "vectorised_s": vec.seconds,
                "peak_MB": vec.peak_mb,
                "python_loop_s": loop.seconds * scale,
                "speedup": loop.seconds * scale / vec.seconds,
                "note": extra,
            }
        )
    print_table(rows, f"{q} rankings x {n} features (loop time scaled from {q_loop} rankings)")


if __name__ == "__main__":
    main()
