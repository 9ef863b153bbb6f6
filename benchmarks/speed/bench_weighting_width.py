"""Issue 17's goals for the NSGA-II weighting, measured side by side in one run.

1. Paper settings (population 80, 250 generations) on 200 x 1,000 with (C1, -C2, -C3):
   CPU time (goal: at most 60 s).
2. C4 against C1-C3: full runs at 200 x 10 side by side, C4 in single and in double
   precision (goal: C4 within 3x of C1-C3); and how far C4's pair subsample
   (``max_pairs``) agrees with all pairs.
3. The population-vectorised problem against a per-individual pymoo
   ``ElementwiseProblem`` with the same criteria, full NSGA-II runs at 10, 100 and 1,000
   features.
4. Planted 200 x 2,000 data (``make_planted``, 2% informative): precision of the planted
   features among the first k (k = their number) for the plain search, the search
   seeded by a filter (``seed_rankers``) and the search over the filter's top features
   (``preselect``), per seed, with the filter alone as the reference.

Every time is CPU time (user + system, ``_common.cpu_seconds``) of one process with BLAS
limited to one thread, so other work on the machine moves it little; ratios come from
the same run.

    python -m benchmarks.speed.bench_weighting_width --out benchmarks/results/weighting_width.md
    python -m benchmarks.speed.bench_weighting_width --quick     # fewer generations, a minute
"""

from __future__ import annotations

import argparse
import platform
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pymoo
import scipy.stats
import sklearn
from pymoo.algorithms.moo.nsga2 import NSGA2
from pymoo.operators.crossover.sbx import SBX
from pymoo.operators.mutation.pm import PM
from pymoo.optimize import minimize
from threadpoolctl import threadpool_limits

import rankers
from benchmarks._common import cpu_call, one_at_a_time_problem
from moweights.data import make_planted, make_weighting_benchmark
from moweights.weighting import MOWeighting
from moweights.weighting.criteria import Criteria, parse_objectives
from moweights.weighting.problem import WeightingProblem

PAPER = ("C1", "-C2", "-C3")


def _data(m, n, seed=0):
    """Two classes, a tenth of the features shifted by the class, min-max scaled."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=m)
    X = rng.uniform(size=(m, n))
    X[:, : max(1, n // 10)] += 0.5 * y[:, None]
    lo, hi = X.min(axis=0), X.max(axis=0)
    return (X - lo) / (hi - lo), y


def goal1(n_gen):
    X, y = _data(200, 1000)
    est = MOWeighting(objectives=PAPER, n_gen=n_gen, random_state=0)
    seconds, _ = cpu_call(lambda: est.fit(X, y))
    return pd.DataFrame(
        [
            {
                "shape": "200x1000",
                "objectives": ",".join(PAPER),
                "pop x gen": f"80x{n_gen}",
                "cpu_s": round(seconds, 2),
                "goal": "<= 60 s",
            }
        ]
    )


class _DirectEntropy(Criteria):
    """The baseline for C4: Eq. 2 as written before issue 17 (double precision, clip, then
    s ln s and (1 - s) ln(1 - s) computed, the whole population at once)."""

    def __init__(self, *args, **kwargs):
        kwargs["precision"] = "double"
        super().__init__(*args, **kwargs)

    def entropy(self, W):
        d = np.sqrt(np.square(np.atleast_2d(W)) @ self._pair_sq)  # (P, n_pairs)
        mean_d = d.mean(axis=1)
        alpha = np.zeros_like(mean_d)
        ok = mean_d > 0
        alpha[ok] = -np.log(0.5) / mean_d[ok]
        s = np.clip(np.exp(-alpha[:, None] * d), 1e-12, 1.0 - 1e-12)
        return -(s * np.log(s) + (1.0 - s) * np.log1p(-s)).mean(axis=1)


def _fit_with(criteria_class, est, X, y):
    """Fit ``est`` with ``criteria_class`` in place of the package's Criteria."""
    import moweights.weighting.ranker as ranker_module

    saved = ranker_module.Criteria
    ranker_module.Criteria = criteria_class
    try:
        return est.fit(X, y)
    finally:
        ranker_module.Criteria = saved


def goal2(n_gen, repeat):
    X, y = _data(200, 10)
    runs = {
        "C1,-C2,-C3": dict(objectives=PAPER),
        "C4 (single)": dict(objectives=("C4",)),
        "C4 (double)": dict(objectives=("C4",), entropy_precision="double"),
        "C4 (direct formula, before)": dict(objectives=("C4",)),
    }
    best = {}
    for _ in range(repeat):  # interleaved, best of `repeat`, so drift hits all alike
        for label, params in runs.items():
            est = MOWeighting(n_gen=n_gen, random_state=0, **params)
            kind = _DirectEntropy if "before" in label else Criteria
            seconds, _ = cpu_call(lambda e=est, c=kind: _fit_with(c, e, X, y))
            best[label] = min(best.get(label, np.inf), seconds)
    base = best["C1,-C2,-C3"]
    rows = [
        {
            "objectives": k,
            "shape": "200x10",
            "pop x gen": f"80x{n_gen}",
            "cpu_s": round(v, 2),
            "ratio_to_C1-C3": round(v / base, 2),
        }
        for k, v in best.items()
    ]
    return pd.DataFrame(rows)


def pair_agreement(n_gen, seeds):
    """C4 with a pair subsample against all pairs: values and the final rankings."""
    X, y = make_weighting_benchmark(200, random_state=0)
    Xs = X.drop(columns=["f7", "f8"]).to_numpy(float)
    Xs = (Xs - Xs.min(axis=0)) / (Xs.max(axis=0) - Xs.min(axis=0))
    W = np.random.default_rng(1).uniform(size=(80, Xs.shape[1]))
    full = Criteria(Xs, None, ("C4",), max_pairs=None).entropy(W)
    refs = {
        seed: MOWeighting(
            objectives=("-C2", "-C4"), n_gen=n_gen, max_pairs=None, random_state=seed
        ).fit(X, y)
        for seed in seeds
    }
    rows = []
    for max_pairs in (10000, 5000, 2000):
        crit = Criteria(Xs, None, ("C4",), max_pairs=max_pairs, rng=np.random.default_rng(0))
        values = crit.entropy(W)
        rho_values = scipy.stats.spearmanr(values, full).statistic
        rhos, same_first = [], []
        for seed in seeds:
            ref = refs[seed]
            sub = MOWeighting(
                objectives=("-C2", "-C4"), n_gen=n_gen, max_pairs=max_pairs, random_state=seed
            ).fit(X, y)
            rhos.append(scipy.stats.spearmanr(ref.scores_, sub.scores_).statistic)
            same_first.append(int(ref.ranking_[0] == sub.ranking_[0]))
        rows.append(
            {
                "max_pairs": f"{max_pairs} of 19900",
                "C4 rel. error (median)": float(np.median(np.abs(values / full - 1))),
                "spearman(C4 values)": round(float(rho_values), 4),
                "(-C2,-C4) ranking spearman, per seed": ", ".join(f"{r:.3f}" for r in rhos),
                "same first feature": f"{sum(same_first)}/{len(seeds)}",
            }
        )
    return pd.DataFrame(rows)


def goal3(widths, n_gen):
    objectives = parse_objectives(PAPER)
    rows = []
    for n in widths:
        X, y = _data(200, n)
        crit = Criteria(X, y, ("C1", "C2", "C3"))
        times, fronts = {}, {}
        for label, problem in (
            ("vectorised", WeightingProblem(crit, objectives)),
            ("elementwise", one_at_a_time_problem(crit, objectives)),
        ):
            algorithm = NSGA2(
                pop_size=80, crossover=SBX(prob=0.9), mutation=PM(prob=1.0, prob_var=1.0 / n)
            )
            times[label], res = cpu_call(
                lambda p=problem, a=algorithm: minimize(p, a, ("n_gen", n_gen), seed=0)
            )
            fronts[label] = res.F
        same = fronts["vectorised"].shape == fronts["elementwise"].shape and np.allclose(
            fronts["vectorised"], fronts["elementwise"], rtol=1e-9
        )
        rows.append(
            {
                "features": n,
                "pop x gen": f"80x{n_gen}",
                "vectorised_cpu_s": round(times["vectorised"], 2),
                "elementwise_cpu_s": round(times["elementwise"], 2),
                "ratio": round(times["elementwise"] / times["vectorised"], 2),
                "same front": same,
            }
        )
    return pd.DataFrame(rows)


def goal4(seeds, n_gen, structure, preselect):
    rows = []
    for seed in seeds:
        data = make_planted(
            structure, n_samples=200, n_features=2000, informative=0.02, random_state=seed
        )
        k = int(data.truth.sum())
        runs = {
            "plain": dict(),
            "seeded (anova_f)": dict(seed_rankers="anova_f"),
            f"preselect={preselect} (anova_f)": dict(preselect=preselect),
        }
        for label, params in runs.items():
            est = MOWeighting(n_gen=n_gen, random_state=seed, **params)
            seconds, _ = cpu_call(lambda e=est, d=data: e.fit(d.X, d.y))
            precision, _ = data.recovery(data.X.columns[est.ranking_])
            rows.append(
                {
                    "seed": seed,
                    "run": label,
                    "k": k,
                    f"precision@{k}": precision,
                    "cpu_s": round(seconds, 2),
                }
            )
        filt = rankers.get("anova_f")
        seconds, _ = cpu_call(lambda f=filt, d=data: f.fit(d.X, d.y))
        precision, _ = data.recovery(data.X.columns[filt.ranking_])
        rows.append(
            {
                "seed": seed,
                "run": "anova_f alone (reference)",
                "k": k,
                f"precision@{k}": precision,
                "cpu_s": round(seconds, 2),
            }
        )
    return pd.DataFrame(rows)


def _md(frame: pd.DataFrame) -> str:
    cols = list(frame.columns)
    lines = ["| " + " | ".join(map(str, cols)) + " |", "|" + "---|" * len(cols)]
    for row in frame.itertuples(index=False):
        cells = [f"{v:.3g}" if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer generations and seeds")
    parser.add_argument("--out", type=Path, help="write the tables as markdown here")
    parser.add_argument("--structure", default="clusters", help="make_planted structure")
    parser.add_argument("--preselect", type=int, default=200, help="features preselected")
    parser.add_argument("--repeat", type=int, default=2, help="best of N for goal 2")
    args = parser.parse_args(argv)
    n_gen = 50 if args.quick else 250
    seeds = (0, 1) if args.quick else (0, 1, 2)
    warnings.simplefilter("ignore")
    sections = []
    with threadpool_limits(1):
        for title, make in (
            ("Goal 1: paper settings on 200 x 1,000", lambda: goal1(n_gen)),
            (
                "Goal 2: C4 against C1-C3 (full runs, 200 x 10)",
                lambda: goal2(n_gen, 1 if args.quick else args.repeat),
            ),
            (
                "Goal 2: C4's pair subsample against all pairs (paper's data, 200 samples)",
                lambda: pair_agreement(n_gen, seeds),
            ),
            (
                "Goal 3: vectorised vs ElementwiseProblem (full NSGA-II runs, 200 samples)",
                lambda: goal3((10, 100, 1000), n_gen),
            ),
            (
                f"Goal 4: planted 200 x 2,000 ({args.structure}, 2% informative)",
                lambda: goal4(seeds, n_gen, args.structure, args.preselect),
            ),
        ):
            frame = make()
            print(f"\n## {title}\n{frame.to_string(index=False)}", flush=True)
            sections.append(f"## {title}\n\n{_md(frame)}\n")
    if args.out:
        command = f"python -m {__spec__.name} " + " ".join(sys.argv[1:] if argv is None else argv)
        head = (
            "# NSGA-II weighting: width, entropy and vectorisation (issue 17)\n\n"
            f"Command: `{command.strip()}`  \n"
            f"Versions: python {platform.python_version()}, numpy {np.__version__}, "
            f"scipy {scipy.__version__}, scikit-learn {sklearn.__version__}, "
            f"pymoo {pymoo.__version__}, pandas {pd.__version__}  \n"
            "Times: CPU seconds (user + system, getrusage), one process, BLAS limited to one "
            "thread (threadpoolctl), on a machine shared with other jobs.\n\n"
        )
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(head + "\n".join(sections))


if __name__ == "__main__":
    main()
