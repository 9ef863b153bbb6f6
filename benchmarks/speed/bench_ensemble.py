"""Genie3 and RF scores: speed and memory against straightforward scikit-learn baselines.

Data: random matrices of the shapes of GLI-85 (85 x 22,283) and madelon (2,600 x 500),
and madelon itself when ../shared/data/skfeature/madelon.mat is present.

Genie3. Baseline: scikit-learn's ``ExtraTreesRegressor`` (bootstrap on) fitted on the
same standardised inputs/targets with the same seed, then the mean over its trees of
``tree_.compute_feature_importances(normalize=False)`` times the root weight (Eq. 1).
The trees are the ranker's trees, so the scores must agree to rounding ("max rel diff").
Peak memory is traced with tracemalloc, which does not see the trees' node and prototype
arrays (scikit-learn allocates them in C); "trees MB held" gives their size: all trees
for the forest, ``n_jobs`` trees at a time for the ranker, which drops each tree once
scored.

RF score. The permutation phase alone, on the first ``--rf-trees`` trees of that forest:
the ranker's per-tree routine (re-walks only the out-of-bag rows whose path tests the
permuted feature, updates the error from residual sums) against the straightforward
loop (for each feature a tree splits on, permute that column of the OOB rows and call
``tree.predict``; features a tree never tests score 0 either way). Then the whole
``RFScoreRanker`` fit, timed.

Example::

    python -m benchmarks.speed.bench_ensemble
    python -m benchmarks.speed.bench_ensemble --trees 20 --rf-trees 3 --no-madelon
"""

from __future__ import annotations

import argparse

import numpy as np
from sklearn.ensemble import ExtraTreesRegressor

from benchmarks._common import cpu_seconds, load_skfeature, measure, print_table
from rankers.unsupervised import ensemble
from rankers.unsupervised.ensemble import Genie3Ranker, RFScoreRanker

MAX_INT = np.iinfo(np.int32).max


def measure_cpu(fn, memory: bool = True):
    """``measure(fn)`` plus the process CPU time (all threads) of its timed call: on a
    shared machine wall time depends on the load, CPU time much less."""
    cpu = []

    def run():
        start = cpu_seconds()
        out = fn()
        cpu.append(cpu_seconds() - start)
        return out

    result = measure(run, memory=memory)
    result.cpu = cpu[0]
    return result


def forest_seed(random_state: int) -> int:
    """The seed the rankers hand to their forest for this ``random_state``."""
    return int(np.random.RandomState(random_state).randint(MAX_INT))


def baseline_forest(Z32, Y, n_trees, n_jobs, random_state) -> ExtraTreesRegressor:
    max_features = ensemble._resolve_max_features("log2", "extra_trees", Z32.shape[1])
    return ExtraTreesRegressor(
        n_estimators=n_trees,
        max_features=max_features,
        bootstrap=True,
        n_jobs=n_jobs,
        random_state=forest_seed(random_state),
    ).fit(Z32, Y)


def baseline_genie3(X, n_trees, n_jobs, random_state, keep):
    """Eq. 1 from sklearn's forest; also the trees' sizes and the first ``keep`` trees
    (the rest of the forest is dropped on return)."""
    Z32, Y = ensemble._inputs_and_targets(X)
    forest = baseline_forest(Z32, Y, n_trees, n_jobs, random_state)
    per_tree = [
        t.tree_.compute_feature_importances(normalize=False) * t.tree_.weighted_n_node_samples[0]
        for t in forest.estimators_
    ]
    sizes = [tree_megabytes(t) for t in forest.estimators_]
    return np.mean(per_tree, axis=0), sizes, forest.estimators_[:keep]


def tree_megabytes(tree) -> float:
    t = tree.tree_
    return (t.value.nbytes + t.node_count * 64) / 2**20  # prototypes + node records


def naive_rf_tree(tree, Z32, Y, oob, perm) -> np.ndarray:
    X, Yo = Z32[oob], Y[oob]
    e0 = np.var(Yo - tree.predict(X), axis=0).mean()
    out = np.zeros(X.shape[1])
    for j in np.unique(tree.tree_.feature[tree.tree_.feature >= 0]):
        Xp = X.copy()
        Xp[:, j] = X[perm, j]
        out[j] = (np.var(Yo - tree.predict(Xp), axis=0).mean() - e0) / e0
    return out


def rf_phase(trees, Z32, Y, naive: bool) -> np.ndarray:
    rows = []
    for i, tree in enumerate(trees):
        counts = ensemble._bootstrap_counts(tree.random_state, len(Y))
        oob = np.flatnonzero(counts == 0)
        if naive:
            perm = np.random.default_rng(i).permutation(oob.size)
            rows.append(naive_rf_tree(tree, Z32, Y, oob, perm))
        else:
            rows.append(ensemble._rf_tree(tree, Z32, Y, oob, i, Y.shape[1]))
    return np.array(rows)


def datasets(args) -> list[tuple[str, np.ndarray]]:
    rng = np.random.default_rng(args.seed)
    out = []
    for shape in args.shapes:
        m, n = (int(v) for v in shape.lower().split("x"))
        out.append((f"random {m}x{n}", rng.normal(size=(m, n))))
    if not args.no_madelon:
        loaded = load_skfeature("madelon")
        if loaded is None:
            print("madelon.mat not found under ../shared/data/skfeature: skipped")
        else:
            out.append(("madelon", loaded[0]))
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trees", type=int, default=100, help="trees per ensemble (100)")
    parser.add_argument(
        "--rf-trees", type=int, default=5, help="trees in the RF permutation-phase comparison"
    )
    parser.add_argument("--n-jobs", type=int, default=2, help="joblib jobs (2)")
    parser.add_argument(
        "--shapes",
        nargs="+",
        default=["85x22283", "2600x500"],
        help="random matrices to run, as MxN (default: the GLI-85 and madelon shapes)",
    )
    parser.add_argument("--no-madelon", action="store_true", help="skip the real madelon data")
    parser.add_argument("--no-rf", action="store_true", help="only Genie3")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    for label, X in datasets(args):
        m, n = X.shape
        ours = measure_cpu(
            lambda X=X: Genie3Ranker(
                n_estimators=args.trees, n_jobs=args.n_jobs, random_state=args.seed
            ).fit(X)
        )
        base = measure_cpu(
            lambda X=X: baseline_genie3(X, args.trees, args.n_jobs, args.seed, args.rf_trees)
        )
        base_scores, sizes, trees = base.result
        scores = ours.result.scores_
        diff = np.abs(scores - base_scores).max() / np.abs(base_scores).max()
        print_table(
            [
                {
                    "method": "Genie3Ranker",
                    "seconds": ours.seconds,
                    "cpu s": ours.cpu,
                    "traced peak MB": ours.peak_mb,
                    "trees MB held": args.n_jobs * max(sizes),
                },
                {
                    "method": "ExtraTreesRegressor + loop",
                    "seconds": base.seconds,
                    "cpu s": base.cpu,
                    "traced peak MB": base.peak_mb,
                    "trees MB held": sum(sizes),
                },
                {
                    "method": "ratio baseline / ours",
                    "seconds": base.seconds / ours.seconds,
                    "cpu s": base.cpu / ours.cpu,
                    "traced peak MB": base.peak_mb / ours.peak_mb,
                    "trees MB held": sum(sizes) / (args.n_jobs * max(sizes)),
                },
            ],
            title=f"Genie3, {label} ({m} x {n}), {args.trees} trees, n_jobs={args.n_jobs}; "
            f"max rel diff of scores {diff:.1e}",
        )
        if args.no_rf:
            continue
        Z32, Y = ensemble._inputs_and_targets(X)
        fast = measure_cpu(lambda trees=trees, Z32=Z32, Y=Y: rf_phase(trees, Z32, Y, naive=False))
        slow = measure_cpu(lambda trees=trees, Z32=Z32, Y=Y: rf_phase(trees, Z32, Y, naive=True))
        full = measure_cpu(
            lambda X=X: RFScoreRanker(
                n_estimators=args.trees, n_jobs=args.n_jobs, random_state=args.seed
            ).fit(X),
            memory=False,
        )
        k = len(trees)
        # same permutation per tree on both sides, so the increases must agree to rounding
        rf_diff = np.nanmax(np.abs(fast.result - slow.result))
        print_table(
            [
                {
                    "method": "ours (_rf_tree)",
                    "s per tree": fast.seconds / k,
                    "cpu s per tree": fast.cpu / k,
                    "traced peak MB": fast.peak_mb,
                },
                {
                    "method": "per-feature permute + predict",
                    "s per tree": slow.seconds / k,
                    "cpu s per tree": slow.cpu / k,
                    "traced peak MB": slow.peak_mb,
                },
                {
                    "method": "ratio baseline / ours",
                    "s per tree": slow.seconds / fast.seconds,
                    "cpu s per tree": slow.cpu / fast.cpu,
                    "traced peak MB": slow.peak_mb / fast.peak_mb,
                },
            ],
            title=f"RF score permutation phase, {label}, first {k} trees (1 job); "
            f"max abs diff {rf_diff:.1e}",
        )
        print(
            f"RFScoreRanker fit, {args.trees} trees, n_jobs={args.n_jobs}: "
            f"{full.seconds:.2f} s, cpu {full.cpu:.2f} s "
            f"(Genie3Ranker: {ours.seconds:.2f} s, cpu {ours.cpu:.2f} s)"
        )


if __name__ == "__main__":
    main()
