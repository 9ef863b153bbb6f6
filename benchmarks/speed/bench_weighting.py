"""Speed of the NSGA-II feature weighting.

1. One generation's evaluation (a population of 80) with the population-vectorised
   problem vs a pymoo ElementwiseProblem that evaluates one individual at a time with the
   same criteria, side by side: the ratio per objective set.
2. Full paper settings (pop 80 x 250 generations) on 200 x 1,000 data: time and peak
   traced memory; and on 1,000 x 1,000 with ``max_pairs`` bounding the entropy pairs.

    python -m benchmarks.speed.bench_weighting            # all, a few minutes on 2 cores
    python -m benchmarks.speed.bench_weighting --quick    # smaller shapes
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from benchmarks._common import measure, one_at_a_time_problem, print_table
from moweights.weighting import MOWeighting
from moweights.weighting.criteria import Criteria, parse_objectives
from moweights.weighting.problem import WeightingProblem


def _data(m, n, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=m)
    X = rng.uniform(size=(m, n))
    X[:, : n // 10] += 0.5 * y[:, None]
    lo, hi = X.min(axis=0), X.max(axis=0)
    return (X - lo) / (hi - lo), y


def per_generation(m, n, pop, repeat):
    X, y = _data(m, n)
    rows = []
    for spec in [("C1", "-C2", "-C3"), ("C4",), ("C1", "-C2", "-C3", "C4")]:
        objectives = parse_objectives(spec)
        crit = Criteria(X, y, tuple(k for k, _ in objectives))
        W = np.random.default_rng(1).uniform(size=(pop, n))
        fast = WeightingProblem(crit, objectives)
        slow = one_at_a_time_problem(crit, objectives)
        a = measure(lambda p=fast, W=W: p.evaluate(W), repeat=repeat, memory=False)
        b = measure(lambda p=slow, W=W: p.evaluate(W), repeat=repeat, memory=False)
        # C4's entropies are float32 (criteria.ENTROPY_DTYPE): summed over a whole
        # population or one individual at a time they may differ in the last float32 bit
        np.testing.assert_allclose(a.result, b.result, rtol=4 * np.finfo(np.float32).eps)
        rows.append(
            {
                "objectives": ",".join(spec),
                "shape": f"{m}x{n}",
                "vectorised_s": a.seconds,
                "one_at_a_time_s": b.seconds,
                "speedup": b.seconds / a.seconds,
            }
        )
    print_table(rows, f"one generation (population {pop}): vectorised vs ElementwiseProblem")


def full_runs(shapes, n_gen):
    rows = []
    for m, n, max_pairs, spec in shapes:
        X, y = _data(m, n)
        est = MOWeighting(objectives=spec, n_gen=n_gen, max_pairs=max_pairs, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = measure(lambda e=est, X=X, y=y: e.fit(X, y), repeat=1)
        rows.append(
            {
                "shape": f"{m}x{n}",
                "objectives": ",".join(spec),
                "max_pairs": max_pairs,
                "pop x gen": f"80x{n_gen}",
                "seconds": res.seconds,
                "peak_MB": res.peak_mb,
            }
        )
    print_table(rows, "full NSGA-II runs (paper settings)")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller shapes and fewer generations")
    parser.add_argument("--repeat", type=int, default=3, help="best of N timings")
    args = parser.parse_args(argv)
    if args.quick:
        per_generation(100, 200, 80, args.repeat)
        full_runs([(100, 200, None, ("C1", "-C2", "-C3")), (100, 200, 2000, ("C4",))], 30)
        return
    per_generation(200, 1000, 80, args.repeat)
    full_runs(
        [
            (200, 1000, None, ("C1", "-C2", "-C3")),
            (200, 1000, 20000, ("C1", "-C2", "-C3", "C4")),
            (1000, 1000, 20000, ("C1", "-C2", "-C3", "C4")),
        ],
        250,
    )


if __name__ == "__main__":
    main()
