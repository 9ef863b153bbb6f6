"""The error curves' classifier on wide subsets: libsvm's poly kernel against a BLAS Gram.

The default-style run at 200 x 20,000 (``benchmarks/results/width/config_run_20000.md``)
spends most of its time in the FFA/RFA error curves, whose every grid point fits the
paper's quadratic-kernel SVM (``default_estimator``) on up to all 20,000 features in each
of 10 folds. libsvm evaluates ``(x . z)^2`` one pair at a time without BLAS; the same
kernel as a precomputed Gram matrix ``(A A^T)^2`` is one matrix product. This script fits
one fold (180 training, 20 test samples of ``make_planted("clusters")``) both ways at
several widths and prints the CPU seconds, whether the predictions agree and the largest
difference of the decision values.

Run: ``python -m benchmarks.speed.bench_error_curve_svc`` (about 10 CPU seconds).
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


import numpy as np
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

from aggregation.evaluation.error_curves import default_estimator
from benchmarks._common import cpu_seconds
from moweights.data import make_planted


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    threadpool_limits(1)
    planted = make_planted(
        "clusters", n_samples=200, n_features=20000, informative=0.01, random_state=0
    )
    X, y = planted.X.to_numpy() + 8.0, planted.y.to_numpy()
    train, test = np.arange(180), np.arange(180, 200)
    for k in (1024, 4096, 20000):
        Xk = X[:, :k]
        start = cpu_seconds()
        model = default_estimator().fit(Xk[train], y[train])
        poly_pred, poly_dec = model.predict(Xk[test]), model.decision_function(Xk[test])
        poly_s = cpu_seconds() - start
        start = cpu_seconds()
        scaler = MinMaxScaler().fit(Xk[train])
        A, B = scaler.transform(Xk[train]), scaler.transform(Xk[test])
        svc = SVC(kernel="precomputed", C=0.1, tol=1e-3).fit((A @ A.T) ** 2, y[train])
        gram = (B @ A.T) ** 2
        gram_pred, gram_dec = svc.predict(gram), svc.decision_function(gram)
        gram_s = cpu_seconds() - start
        print(
            f"k={k}: poly kernel {poly_s:.3f} CPU s, precomputed Gram {gram_s:.3f} CPU s "
            f"({poly_s / gram_s:.1f}x), same predictions {np.array_equal(poly_pred, gram_pred)}, "
            f"max |decision difference| {np.abs(poly_dec - gram_dec).max():.1e}"
        )


if __name__ == "__main__":
    main()
