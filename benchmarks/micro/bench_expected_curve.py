"""The expected curve with the default model: scaled-once folds against per-call sklearn.

``expected_curve`` scores ``n_random`` random rankings at every grid point on every fold
(the supervised protocol: 100 x ~33 x 2 x 10 = ~66,000 SVM fits per data set). With the
paper's model and accuracy, the folds are now min-max scaled once and each subset's
kernel goes straight to libsvm (``_fold_accuracies``); before, every (subset, fold) cloned
the model and ran scikit-learn's scaler and scorer (``_fold_scores``). Both run here in
one process, alternating, CPU time, one BLAS thread; the curves must be identical.

Run: ``python benchmarks/micro/bench_expected_curve.py [--datasets colon Yale] [--n-random 5]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _protocol import DEFAULT_DATA_DIR, list_datasets, load_dataset, to_markdown

from aggregation.evaluation import error_curves


def _cpu(fn):
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


_INIT = error_curves._Setup.__init__


def _per_call_init(self, *args, **kwargs):
    """The evaluation as before: a clone, a scaler and a scorer per (subset, fold)."""
    _INIT(self, *args, **kwargs)
    self.default_accuracy = False


def compare(name: str, n_random: int, repeat: int) -> dict:
    present, _ = list_datasets(DEFAULT_DATA_DIR)
    path = next(d.path for d in present if d.name == name)
    X, y = load_dataset(path)
    y = np.unique(y, return_inverse=True)[1]
    grid = max(1, -(-X.shape[1] // 32))  # the protocol's points:32
    args = {"n_random": n_random, "cv": 10, "grid": grid, "random_state": 0}
    fast, slow = [], []
    for _ in range(repeat):
        t, new = _cpu(lambda: error_curves.expected_curve(X, y, **args))
        fast.append(t)
        with mock.patch.object(error_curves._Setup, "__init__", _per_call_init):
            t, old = _cpu(lambda: error_curves.expected_curve(X, y, **args))
        slow.append(t)
    pd.testing.assert_frame_equal(new, old)  # identical curves, every column
    return {
        "data": f"{name} {X.shape[0]}x{X.shape[1]}",
        "n_random": n_random,
        "per-call CPU s": min(slow),
        "scaled-once CPU s": min(fast),
        "speed-up": min(slow) / min(fast),
        "identical": True,
    }


def main(argv: list[str] | None = None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["colon", "Yale"])
    parser.add_argument("--n-random", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)
    with threadpool_limits(1):
        rows = [compare(name, args.n_random, args.repeat) for name in args.datasets]
    table = pd.DataFrame(rows)
    print(to_markdown(table, index=False))
    return table


if __name__ == "__main__":
    main()
