"""AgnoS-S: fit time and memory on a few shapes, against the Laplacian score as baseline.

Both rankers run in this process on the same matrix; the script prints their times and
the ratio (how many Laplacian fits one AgnoS-S fit costs), the optimiser steps taken,
the time per step, and the traced peak memory of the AgnoS-S fit next to the size of
the input and of the network's parameters (memory is bounded by the parameters and one
batch, not by the number of samples).

With ``--madelon`` (needs ../shared/data/skfeature/madelon.mat) it also prints where
AgnoS-S puts madelon's 20 relevant features (5 informative + 15 linear combinations of
them, among 480 noise probes; the indices are the data set's documented ground truth).

Example::

    python -m benchmarks.speed.bench_agnos
    python -m benchmarks.speed.bench_agnos --shapes 200x500 100x5000 --madelon
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np

from benchmarks._common import load_skfeature, measure, print_table, traced_call
from rankers.unsupervised.agnos import AgnosSRanker
from rankers.unsupervised.laplacian import LaplacianRanker

# 0-based indices of madelon's relevant features (Guyon et al., NIPS 2003 challenge)
MADELON_RELEVANT = [28, 48, 64, 105, 128, 153, 241, 281, 318, 336]
MADELON_RELEVANT += [338, 378, 433, 442, 451, 453, 455, 472, 475, 493]


def noisy_factor_copies(n_samples: int, n_features: int, seed: int) -> np.ndarray:
    """Five latent factors seen through noisy copies (a tenth of the columns), rest noise."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n_samples, 5))
    X = rng.normal(size=(n_samples, n_features))
    informative = max(5, n_features // 10)
    X[:, :informative] = z[:, np.arange(informative) % 5] + 0.2 * X[:, :informative]
    return X


def n_parameters(est) -> int:
    """Slacks, weights and biases of the fitted ranker's autoencoder."""
    n = est.n_features_in_
    dims = [n, *est.hidden_layer_sizes_, est.latent_dim_, *est.hidden_layer_sizes_[::-1], n]
    return n + sum(a * b + b for a, b in itertools.pairwise(dims))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--shapes",
        nargs="*",
        default=["200x200", "100x2000", "2000x500"],
        help="matrices to time, as SAMPLESxFEATURES",
    )
    parser.add_argument("--epochs", default="auto", help="AgnoS-S epochs ('auto' or an int)")
    parser.add_argument("--madelon", action="store_true", help="also rank madelon (shared data)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    epochs = args.epochs if args.epochs == "auto" else int(args.epochs)

    rows = []
    for shape in args.shapes:
        m, n = (int(v) for v in shape.lower().split("x"))
        X = noisy_factor_copies(m, n, args.seed)
        base = measure(lambda X=X: LaplacianRanker().fit(X), memory=False)
        est = AgnosSRanker(epochs=epochs, random_state=args.seed)
        seconds, peak = traced_call(lambda est=est, X=X: est.fit(X))
        rows.append(
            {
                "shape": shape,
                "latent": est.latent_dim_,
                "hidden": est.hidden_layer_sizes_,
                "epochs": est.n_iter_,
                "steps": est.n_steps_,
                "agnos_s": seconds,
                "laplacian_s": base.seconds,
                "ratio": seconds / base.seconds,
                "ms_per_step": 1e3 * seconds / est.n_steps_,
                "peak_MiB": peak,
                "input_MiB": X.nbytes / 2**20,
                # float32 parameters; Adam keeps two more vectors of this size, plus one buffer
                "params_MiB": 4 * n_parameters(est) / 2**20,
            }
        )
    print_table(rows, title="AgnoS-S fit (traced) vs Laplacian score fit, same data")

    if args.madelon:
        data = load_skfeature("madelon")
        if data is None:
            print("madelon.mat not found under ../shared/data/skfeature; skipped")
            return
        X = data[0]
        start = time.perf_counter()
        est = AgnosSRanker(epochs=epochs, random_state=args.seed).fit(X)
        seconds = time.perf_counter() - start
        position = np.empty(X.shape[1], dtype=int)
        position[est.ranking_] = np.arange(1, X.shape[1] + 1)
        lap = LaplacianRanker().fit(X)
        lap_position = np.empty(X.shape[1], dtype=int)
        lap_position[lap.ranking_] = np.arange(1, X.shape[1] + 1)
        print(f"\n## madelon {X.shape}: ranks (1 = best) of the 20 relevant features")
        print(f"AgnoS-S  ({seconds:.1f} s): {sorted(position[MADELON_RELEVANT].tolist())}")
        print(f"Laplacian          : {sorted(lap_position[MADELON_RELEVANT].tolist())}")


if __name__ == "__main__":
    main()
