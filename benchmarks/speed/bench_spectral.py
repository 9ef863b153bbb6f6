"""SPEC, MCFS, NDFS and the Laplacian score against scikit-feature (skfeature-chappers).

For each data set and method the script runs our ranker and the peer on the same data
and prints wall time (best of ``--repeat`` for ours, one run for the peer), the speed-up,
peak traced memory (tracemalloc: NumPy and Python allocations, not BLAS scratch) and two
Spearman correlations of the feature scores:

* ``rho same``: the peer fed the same graph and settings as ours (its own graph code,
  then the differences it has by default removed: SPEC's kernel width, the self loops of
  ``construct_W``; for MCFS LARS stopped at ``min(n, m - 1)`` non-zeros; for NDFS
  also its Laplacian line fixed through a wrapper and its k-means seeded like ours).
  Here the algorithms are the same and rho should be ~1 (``graph parts`` > 1: see
  MCFSRanker's Notes).
* ``rho default``: the peer exactly as a user calls it (its defaults, its own ranking
  output); the differences are explained in the rankers' docstrings (Notes). That call
  is timed too (``peer default s``, one run).

The peer runs in a child process under a time budget (``--budget`` seconds per call); a
run over budget is reported as such and only ours is shown. Its memory is traced in a
second run only when the first left enough budget. The peer's timing is of the aligned
call, which builds its graph with its own code (MCFS, NDFS, Laplacian) or kernel (SPEC).

Needs ``pip install skfeature-chappers`` (benchmark only, pure Python).
Run: ``python -m benchmarks.speed.bench_spectral`` (``--quick`` for a smoke test).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sys
import time
import tracemalloc
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.stats import spearmanr
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import rbf_kernel
from threadpoolctl import threadpool_limits

from benchmarks._common import measure, print_table
from rankers.unsupervised.laplacian import LaplacianRanker
from rankers.unsupervised.mcfs import MCFSRanker
from rankers.unsupervised.ndfs import NDFSRanker
from rankers.unsupervised.spec import SPECRanker

METHODS = ("spec", "mcfs", "ndfs", "laplacian")


# ------------------------------------------------------------------ data
def structured(m: int, n: int, n_classes: int = 5, seed: int = 0) -> np.ndarray:
    """Gaussian clusters in the first 20 features, noise elsewhere, all shifted positive."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, n_classes, size=m)
    X = rng.normal(size=(m, n))
    informative = min(20, n)
    X[:, :informative] += rng.normal(0.0, 1.0, size=(n_classes, informative))[labels]
    return X + 5.0


def datasets(names: list[str]) -> dict[str, tuple[np.ndarray, int]]:
    """Name -> (X without constant columns, number of classes)."""
    out = {}
    for name in names:
        if name == "digits":
            X, k = load_digits().data.astype(np.float64), 10
        else:
            m, n = (int(v) for v in name.lower().removeprefix("blobs").split("x"))
            X, k = structured(m, n), 5
        out[name] = (X[:, X.std(axis=0) > 0], k)
    return out


# ------------------------------------------------------------------ peer calls
class _FixedLaplacianW(sp.csc_matrix):
    """Affinity whose ``sum(1)`` makes scikit-feature's NDFS line build ``D - W``.

    NDFS computes ``L = np.array(W.sum(1))[:, 0] - W``, which broadcasts the degrees
    along rows (``d 1ᵀ - W``). Returning ``D`` shaped (m, 1, m) makes the same line
    give ``D - W`` without touching the peer's code.
    """

    def sum(self, axis=None, dtype=None, out=None):
        if axis == 1:
            d = np.asarray(sp.csc_matrix(self).sum(axis=1)).ravel()
            return np.diag(d)[:, None, :]
        return super().sum(axis=axis, dtype=dtype, out=out)


def _peer_graph(X: np.ndarray, **kwargs) -> sp.csc_matrix:
    """scikit-feature's construct_W on a copy (it rescales X in place), self loops removed."""
    from skfeature.utility.construct_W import construct_W

    W = sp.csc_matrix(construct_W(X.copy(), **kwargs))
    W.setdiag(0.0)
    W.eliminate_zeros()
    return W


def peer_aligned(method: str, X: np.ndarray, k: int, ours) -> np.ndarray:
    """The peer with our graph and settings; returns scores (higher = better) or ranks."""
    if method == "spec":
        from skfeature.function.similarity_based.SPEC import spec

        return -spec(X.copy(), W=rbf_kernel(X, gamma=ours.gamma_), style=0, mode="raw")
    if method == "mcfs":
        from skfeature.function.sparse_learning_based.MCFS import mcfs

        d = min(X.shape[1], X.shape[0] - 1)  # the whole LARS path, as ours
        coef = mcfs(X.copy(), n_selected_features=d, W=_peer_graph(X), n_clusters=k, mode="raw")
        return np.abs(coef).max(axis=1)
    if method == "ndfs":
        import sklearn.cluster
        from skfeature.function.sparse_learning_based.NDFS import ndfs

        from rankers.kmeans import kmeans_labels

        original = sklearn.cluster.KMeans

        class OurKMeans:  # the same start as ours (random_state=0); the peer's is unseeded
            def __init__(self, n_clusters, **kw):
                self.n_clusters = n_clusters

            def fit(self, Z):
                self.labels_ = kmeans_labels(Z, self.n_clusters, np.random.RandomState(0))
                return self

        # (passing F0 instead fails in skfeature-chappers 1.2.1: n_clusters is then unset)
        sklearn.cluster.KMeans = OurKMeans
        try:
            W = ndfs(X.copy(), W=_FixedLaplacianW(_peer_graph(X)), n_clusters=k, mode="raw")
        finally:
            sklearn.cluster.KMeans = original
        return np.sqrt((W * W).sum(axis=1))
    from skfeature.function.similarity_based.lap_score import lap_score

    # our heat kernel exp(-d²/t) is theirs exp(-d²/(2 t'²)) with t' = sqrt(t / 2)
    W = _peer_graph(X, metric="euclidean", weight_mode="heat_kernel", k=5, t=np.sqrt(ours.t_ / 2.0))
    return _order_to_scores(lap_score(X.copy(), W=W, mode="index"))


def peer_default(method: str, X: np.ndarray, k: int) -> np.ndarray:
    """The peer as a user calls it, turned into higher = better by its own ranking."""
    if method == "spec":
        from skfeature.function.similarity_based.SPEC import spec

        order = spec(X.copy(), mode="index")
    elif method == "mcfs":
        from skfeature.function.sparse_learning_based.MCFS import mcfs

        order = mcfs(X.copy(), n_clusters=k, mode="index")
    elif method == "ndfs":
        from skfeature.function.sparse_learning_based.NDFS import ndfs

        order = ndfs(X.copy(), n_clusters=k, mode="index")
    else:
        from skfeature.function.similarity_based.lap_score import lap_score

        order = lap_score(X.copy(), mode="index")
    return _order_to_scores(order)


def _order_to_scores(order) -> np.ndarray:
    """Feature indices best first -> n - position (higher = better).

    The peer's ``mode="rank"`` cannot be used: its ``reverse_argsort`` ranks the index
    values instead of inverting the permutation (it returns ``n - 1 - order``).
    """
    order = np.asarray(order, dtype=int).ravel()
    scores = np.empty(order.size)
    scores[order] = order.size - np.arange(order.size)
    return scores


def _child(conn, fn, args, budget, threads):
    warnings.simplefilter("ignore")
    threadpool_limits(threads)
    start = time.perf_counter()
    result = fn(*args)
    seconds = time.perf_counter() - start
    peak = np.nan
    if 3 * seconds < budget - seconds:
        tracemalloc.start()
        fn(*args)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    conn.send((seconds, peak, result))


def run_with_budget(fn, args, budget: float, threads: int | None):
    """(seconds, peak MB, result) of ``fn(*args)`` in a child process, or None over budget.

    A spawned child, not a forked one: k-means' OpenMP thread pool, started by our
    rankers in this process, does not survive a fork (the child hangs).
    """
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, fn, args, budget, threads))
    proc.start()
    deadline = time.monotonic() + budget * 4.0 / 3.0 + 5.0  # room for the memory run
    out = None
    while time.monotonic() < deadline:
        if parent.poll(0.2):
            out = parent.recv()
            break
        if not proc.is_alive() and not parent.poll(0.0):  # died without an answer
            raise RuntimeError(f"the peer's process failed (exit code {proc.exitcode})")
    proc.join(1.0)
    if proc.is_alive():
        proc.terminate()
        proc.join()
    return out


# ------------------------------------------------------------------ ours
def ours_ranker(method: str, k: int, **params):
    if method == "spec":
        return SPECRanker(**params)
    if method == "mcfs":
        return MCFSRanker(n_clusters=k, random_state=0, **params)
    if method == "ndfs":
        return NDFSRanker(n_clusters=k, random_state=0)
    return LaplacianRanker(**params)


# our settings timed per method: MCFS also with solver="lars", scikit-feature's computation
# (its default computes the end of a full LARS path as the least-squares fit, see Notes)
VARIANTS = {"mcfs": [("mcfs", {}), ("mcfs lars", {"solver": "lars"})]}


def compare(
    names: list[str],
    methods: list[str],
    repeat: int,
    budget: float,
    defaults: bool = True,
    threads: int | None = 1,
    verbose: bool = True,
) -> list[dict]:
    """One row per (data set, method, our variant): times, memory, Spearman rho."""
    rows = []
    for name, (X, k) in datasets(names).items():
        for method in methods:
            variants = VARIANTS.get(method, [(method, {})])
            fits = []
            for _, params in variants:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    fits.append(
                        measure(
                            lambda X=X, m=method, k=k, p=params: ours_ranker(m, k, **p).fit(X),
                            repeat,
                        )
                    )
            fitted = fits[0].result
            aligned = run_with_budget(peer_aligned, (method, X, k, fitted), budget, threads)
            default = None
            if aligned is not None and defaults:  # over budget: the same cost
                default = run_with_budget(peer_default, (method, X, k), budget, threads)
            for (label, _), ours in zip(variants, fits, strict=True):
                fitted = ours.result
                row = {
                    "data": f"{name} {X.shape[0]}x{X.shape[1]}",
                    "method": label,
                    "ours s": ours.seconds,
                    "peer s": aligned[0] if aligned else f">{budget:g}",
                    "speed-up": aligned[0] / ours.seconds if aligned else np.nan,
                    "ours MB": ours.peak_mb,
                    "peer MB": aligned[1] if aligned else np.nan,
                    "peer default s": default[0] if default else np.nan,
                    "rho same": spearmanr(fitted.scores_, aligned[2])[0] if aligned else np.nan,
                    "rho default": spearmanr(fitted.scores_, default[2])[0] if default else np.nan,
                }
                if method in ("mcfs", "ndfs"):
                    # with a disconnected graph the eigenvalue 1 is multiple and the peer
                    # keeps an arbitrary basis of it (MCFSRanker's Notes): rho same is not ~1
                    row["graph parts"] = connected_components(_peer_graph(X))[0]
                if method == "ndfs":
                    row["method"] = f"ndfs ({fitted.n_iter_} it)"
                rows.append(row)
                if verbose:
                    print_table(rows[-1:])
            sys.stdout.flush()
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data",
        nargs="+",
        default=["digits", "blobs200x5000", "blobs2000x500"],
        help="data sets: digits and/or blobsMxN (structured synthetic); default: all three",
    )
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--repeat", type=int, default=3, help="timing repeats for ours")
    parser.add_argument("--budget", type=float, default=300.0, help="seconds per peer call")
    parser.add_argument(
        "--no-defaults", action="store_true", help="skip the peers' default-settings runs"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="BLAS/OpenMP threads for ours and the peer alike (default 1: on a shared "
        "machine multi-threaded BLAS timings swing by several times; 0 = library default)",
    )
    parser.add_argument("--quick", action="store_true", help="small data, short budget")
    args = parser.parse_args(argv)
    threads = args.threads or None
    threadpool_limits(threads)
    if args.quick:
        args.data, args.repeat, args.budget = ["blobs150x40"], 1, 60.0

    rows = compare(args.data, args.methods, args.repeat, args.budget, not args.no_defaults, threads)
    print_table(rows, title="SPEC / MCFS / NDFS / Laplacian vs scikit-feature (skfeature-chappers)")


if __name__ == "__main__":
    main()
