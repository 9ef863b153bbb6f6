"""What the stacking ensemble costs: its share of the default demo, and each pool member's part.

Issue 46 asks that the default demo (``moweights run examples/config.toml``) spend at most a
quarter of its time in the ensemble (``[[rankers]] name = "stacked"``, the default
``StackedRanker``), and that each task's pool have its cost measured. Two measurements, in
CPU seconds with one BLAS thread:

* **the demo's share**: the demo in this process without a cache, with the config as
  committed and with its ``stacked`` ranker left out, alternating (``--repeat`` times
  each, the median); share = (with - without) / with. The demo fits the ensemble 11 times:
  on each of the evaluation's 10 training folds and on all the samples.
* **one ensemble fit, taken apart**: for each task's default pool
  (``moweights.ensemble.POOLS``) on a scikit-learn data set (classification: breast cancer
  569 x 30, the demo's data; regression: Friedman #1, 500 x 20, 5 of them informative;
  unsupervised: breast cancer without its classes), every member's fits on the ensemble's
  inner training parts, the inner curve that scores them (each member alone: no memo
  shared with the others, which the ensemble itself does), then the final refits of the
  members it chose, as ``StackedRanker._score`` runs them. ``same`` checks that the inner
  scores rebuilt here are the fitted ensemble's ``inner_scores_`` (so the parts are the
  ensemble's own work); the last row of a task is the ensemble's own fit, timed whole.

Examples::

    python -m benchmarks.speed.bench_ensemble_cost --repeat 3 \\
        --out benchmarks/results/ensemble_cost.md
    python -m benchmarks.speed.bench_ensemble_cost --quick     # the parts only, a smoke run
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import tomllib
from threadpoolctl import threadpool_limits

from benchmarks._common import cpu_call, rows_markdown_4g

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "config.toml"


def demo_without_ensemble(folder: Path) -> Path:
    """The demo's config with its ``stacked`` ranker left out (everything else the same)."""
    text = DEMO.read_text()
    block = '[[rankers]]\nname = "stacked"\n'
    if block not in text:
        raise SystemExit(f"{DEMO} has no '{block.strip()}' block to leave out")
    out = folder / "no_ensemble.toml"
    out.write_text(text.replace(block, ""))
    if any(r["name"] == "stacked" for r in tomllib.loads(out.read_text())["rankers"]):
        raise SystemExit("the ensemble is still in the config")
    return out


def demo_cpu(config: Path) -> float:
    """CPU seconds of one demo run of ``config`` in this process, no cache."""
    import moweights.cli

    with tempfile.TemporaryDirectory() as tmp:
        seconds, _ = cpu_call(
            lambda: moweights.cli.main(["run", str(config), "-o", tmp, "--no-cache"])
        )
    return seconds


def demo_share(repeat: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        without = demo_without_ensemble(Path(tmp))
        runs = {"with": [], "without": []}
        for i in range(repeat):
            order = [("with", DEMO), ("without", without)]
            for name, config in order if i % 2 == 0 else order[::-1]:
                runs[name].append(demo_cpu(config))
    with_s, without_s = statistics.median(runs["with"]), statistics.median(runs["without"])
    return {
        "demo CPU s": with_s,
        "without the ensemble": without_s,
        "ensemble CPU s": with_s - without_s,
        "ensemble share": (with_s - without_s) / with_s,
        "goal share": 0.25,
        "runs": repeat,
    }


def task_data(task: str):
    from sklearn.datasets import load_breast_cancer, make_friedman1

    if task == "regression":  # a continuous target (diabetes' integers read as classes)
        return make_friedman1(n_samples=500, n_features=20, random_state=0)
    X, y = load_breast_cancer(return_X_y=True)
    return X, (None if task == "unsupervised" else y)


def ensemble_parts(task: str, random_state: int = 0) -> list[dict]:
    """One default ``StackedRanker`` fit of ``task`` taken apart, member by member."""
    from sklearn.base import clone
    from sklearn.model_selection import KFold, StratifiedKFold

    import rankers
    from aggregation import Ranking
    from aggregation.evaluation import class_curve, regression_curve, topk_curve
    from aggregation.evaluation.folds import FoldRankings
    from moweights.ensemble import POOLS, StackedRanker
    from rankers.validation import default_feature_names

    X, y = task_data(task)
    fitted = StackedRanker(task=task, random_state=random_state)
    total, _ = cpu_call(lambda: fitted.fit(X, y))
    names = default_feature_names(X.shape[1])
    Split = StratifiedKFold if task == "classification" else KFold
    splits = list(Split(3, shuffle=True, random_state=random_state).split(X, y))
    n_neighbors = min(5, min(len(train) for train, _ in splits))
    ks = list(range(1, min(64, X.shape[1]) + 1))
    rows = []
    for name in POOLS[task]:
        est = rankers.get(name)
        if "random_state" in est.get_params():
            est.set_params(random_state=random_state)
        target = y if rankers.ranker_tags(est).requires_y else None

        def inner_fits(est=est, target=target, name=name):
            return [
                Ranking(names, f.scores_, name, order_idx=f.ranking_)
                for f in (
                    clone(est).fit(X[tr], None if target is None else target[tr])
                    for tr, _ in splits
                )
            ]

        fit_s, folds = cpu_call(inner_fits)
        rankings = FoldRankings(folds, splits, name)

        def curve(r=rankings):
            if task == "classification":
                return class_curve(r, X, y, ks=ks, n_neighbors=n_neighbors, return_folds=True)
            if task == "regression":
                return regression_curve(r, X, y, ks=ks, n_neighbors=n_neighbors, return_folds=True)
            return topk_curve(r, X, ks=[min(16, X.shape[1])], return_folds=True)

        curve_s, table = cpu_call(curve)
        chosen = name in fitted.members_
        refit_s = cpu_call(lambda est=est, t=target: clone(est).fit(X, t))[0] if chosen else 0.0
        rows.append(
            {
                "task": task,
                "member": name,
                "inner fits s": fit_s,
                "inner curve s": curve_s,
                "chosen": chosen,
                "final refit s": refit_s,
                "member s": fit_s + curve_s + refit_s,
                "inner score": float(table["value"].mean()),
                "same": bool(
                    np.isclose(table["value"].mean(), fitted.inner_scores_[name], rtol=1e-12)
                ),
            }
        )
    parts = sum(r["member s"] for r in rows)
    for r in rows:
        r["share of fit"] = r["member s"] / parts
    rows.append(
        {
            "task": task,
            "member": "(the ensemble's own fit)",
            "member s": total,
            "share of fit": total / parts,
            "same": all(r["same"] for r in rows),
        }
    )
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=1, help="demo runs each way (median)")
    parser.add_argument("--quick", action="store_true", help="the parts only, no demo")
    parser.add_argument("--out", type=Path, help="also write the tables (markdown) here")
    args = parser.parse_args(argv)
    with threadpool_limits(1, user_api="blas"):
        parts = [r for task in ("classification", "regression", "unsupervised")
                 for r in ensemble_parts(task)]  # fmt: skip
        share = None if args.quick else demo_share(args.repeat)
    tree = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    command = "python -m benchmarks.speed.bench_ensemble_cost " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    lines = [
        "# The stacking ensemble's cost: its share of the default demo, each member's part",
        "",
        f"Command: `{command.strip()}`  ",
        f"Tree: {tree} (plus uncommitted edits, if any); python {platform.python_version()}, "
        f"numpy {np.__version__}; {platform.platform()}  ",
        "CPU seconds, one BLAS thread.",
        "",
    ]
    if share is not None:
        lines += [
            "## The default demo with and without its ensemble (median of the runs)",
            "",
            rows_markdown_4g([share]),
            "",
        ]
    lines += [
        "## One default ensemble fit per task, taken apart (3 inner folds, seed 0)",
        "",
        rows_markdown_4g(parts),
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
