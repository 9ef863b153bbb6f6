"""The experiments of §3 of the multiobjective weighting paper, with moweights.

1. NSGA-II weighting on the paper's synthetic data with every single criterion and three
   combinations (the paper's tables list simple and combined criteria; its text singles
   out (C1, -C2, -C3)); the ranking from the averaged rank of the Pareto solutions.
2. Classical rankers (chi², information gain, ReliefF) and the weighting, aggregated into
   one generic ranking.
3. The weighting on five independently drawn samples ("five sites"), aggregated into one
   generic ranking.

    python examples/weighting_paper.py [--n-samples 100] [--seed 0] [--n-gen 250]

Nothing here is tuned to the paper's numbers: the paper's settings are used as written
(population 80, 250 generations, crossover 0.9, mutation 1/n).
"""

from __future__ import annotations

import argparse
import warnings

import rankers
from aggregation import Ranking, generic, mean_rank
from moweights.data import make_weighting_benchmark
from moweights.weighting import MOWeighting

SINGLE = [("C1",), ("-C2",), ("-C3",), ("C4",)]
COMBINED = [("C1", "-C2"), ("C1", "-C3"), ("-C2", "-C4"), ("C1", "-C2", "-C3")]


def _order(ranking: Ranking) -> str:
    return " ".join(name.lstrip("f") for name in ranking.order)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-gen", type=int, default=250)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", rankers.exceptions.ConstantFeatureWarning)

    X, y = make_weighting_benchmark(args.n_samples, random_state=args.seed)
    print(f"data: {X.shape[0]} samples x {X.shape[1]} features (f1 = class, f2-f6 normal with")
    print("class-dependent means, f7-f8 constant, f9-f10 uniform); rankings best first\n")

    print("1. criteria (ranking from the averaged rank of the Pareto solutions)")
    weighting = {}
    for spec in SINGLE + COMBINED:
        est = MOWeighting(objectives=spec, n_gen=args.n_gen, random_state=args.seed).fit(X, y)
        ranking = Ranking.from_ranker(est, method=",".join(spec))
        weighting[spec] = ranking
        mean_w = est.pareto_mean_weights_.round(2).tolist()
        print(f"  {','.join(spec):<12} {_order(ranking):<28} mean weights {mean_w}")

    print("\n2. classical rankers and the weighting (C1,-C2,-C3)")
    methods = {}
    for name in ("chi2", "info_gain", "relieff"):
        est = rankers.get(name).fit(X, y)
        methods[name] = Ranking.from_ranker(est, method=name)
    methods["weighting"] = weighting[("C1", "-C2", "-C3")]
    for name, ranking in methods.items():
        print(f"  {name:<12} {_order(ranking)}")
    print(f"  mean rank    {_order(mean_rank(list(methods.values())))}")
    print(f"  generic      {generic(list(methods.values()))}")

    print("\n3. the weighting (C1,-C2,-C3) on five independent samples")
    sites = []
    for site in range(5):
        Xs, ys = make_weighting_benchmark(args.n_samples, random_state=args.seed + 100 + site)
        est = MOWeighting(n_gen=args.n_gen, random_state=args.seed).fit(Xs, ys)
        sites.append(Ranking.from_ranker(est, method=f"sample {site + 1}"))
        print(f"  sample {site + 1}     {_order(sites[-1])}")
    aggregated = generic(sites)
    print(f"  generic      {aggregated}   (s = {len(aggregated)})")


if __name__ == "__main__":
    main()
