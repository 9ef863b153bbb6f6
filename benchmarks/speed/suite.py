"""The speed suite's benchmarks in asv's shape: every registered ranker's fit, and its peers'.

Classes with ``params``/``param_names``, ``setup`` and ``time_*``/``peakmem_*`` methods, as
airspeed velocity (asv) runs them and as scikit-learn's ``asv_benchmarks/`` and scanpy's
``benchmarks/`` are written:

* :class:`RankerFit`: every registered ranker's ``fit`` on three synthetic shapes (rows x
  features): small 200 x 100, medium 1,000 x 500, wide 100 x 5,000. The data are seeded
  Gaussian clusters (``benchmarks._common.make_clusters``): 5 classes shift the first 20
  features, the others are noise, every value positive; the class is the label of
  supervised rankers and the ``n_clusters`` of MCFS and NDFS.
* :class:`PeerFit`: the peers that implement the same methods, on the same data, as their
  users call them: scikit-feature's ``lap_score``, ``SPEC``, ``MCFS``, ``NDFS`` and skrebate's
  ``ReliefF`` (k = 10, every feature continuous). A peer that is not installed is skipped
  (``setup`` raises ``NotImplementedError``, asv's skip). PyPI ``frane`` 0.1.0 needs an old
  numpy and scipy, so it runs in a venv of its own and only the runner below compares it.

``setup`` makes the data and the estimator and pays the lazy imports with one untimed fit
on a 60 x 30 sample; ``run`` is the timed call (it returns the scores, so the runner can
compare ours with the peer's).

Two ways to run the same classes:

* asv, where it is installed (``pip install asv``; not a dependency of the project), from
  the repository root with ``asv.conf.json``: ``asv run --python=same --quick`` (this
  environment, each benchmark once) or ``asv run`` (the project built at each commit).
* without asv: ``python -m benchmarks.speed.speed_suite`` runs every (shape, ranker) of
  these classes in a child process under a budget, times ``run`` with
  ``benchmarks._common.measure`` (best of ``--repeat``, traced peak memory), adds the
  frane peer and writes the table with the time ratios and the rank agreement
  (``benchmarks/results/speed/``). ``python -m benchmarks.speed.suite`` runs the classes in
  this process, for a quick look.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import warnings
from collections.abc import Callable

import numpy as np

import rankers
from benchmarks._common import make_clusters, measure, print_table

SHAPES = {"small": (200, 100), "medium": (1000, 500), "wide": (100, 5000)}
N_CLASSES = 5
SEED = 0
#: peer name -> (our ranker, our extra parameters, the module it needs or None). None:
#: PyPI frane 0.1.0, run by its own Python (``speed_suite --frane-python``), not here
PEERS = {
    "skfeature.lap_score": ("laplacian", {}, "skfeature"),
    "skfeature.SPEC": ("spec", {}, "skfeature"),
    "skfeature.MCFS": ("mcfs", {}, "skfeature"),
    "skfeature.NDFS": ("ndfs", {}, "skfeature"),
    "skrebate.ReliefF": ("relieff", {}, "skrebate"),
    "frane 0.1.0": ("frane", {"similarity": "correlation"}, None),
}
#: the peers that run in this Python
IN_PROCESS_PEERS = [peer for peer, (_, _, module) in PEERS.items() if module]


def ranker_params(name: str, seed: int = SEED) -> dict:
    """The parameters the suite gives ranker ``name``: the number of clusters of the data
    where it takes one, the seed where it takes one."""
    params = {}
    defaults = rankers.get(name).get_params()
    if "n_clusters" in defaults:
        params["n_clusters"] = N_CLASSES
    if "random_state" in defaults:
        params["random_state"] = seed
    return params


def ranker_fit(name: str, params: dict) -> Callable[[np.ndarray, np.ndarray], Callable]:
    """``make(X, y)``: a no-argument call fitting our ranker ``name`` on ``X`` (and ``y``
    when it needs one), returning its scores."""

    def make(X: np.ndarray, y: np.ndarray) -> Callable[[], np.ndarray]:
        est = rankers.get(name, **params)
        target = y if type(est).requires_y else None
        return lambda: est.fit(X, target).scores_

    return make


def _order_to_scores(order) -> np.ndarray:
    """Feature indices best first -> n - position (higher = better)."""
    order = np.asarray(order, dtype=int).ravel()
    scores = np.empty(order.size)
    scores[order] = order.size - np.arange(order.size)
    return scores


def peer_fit(peer: str) -> Callable[[np.ndarray, np.ndarray], Callable]:
    """``make(X, y)``: a no-argument call running ``peer`` as its users call it, returning
    its scores (higher = better)."""

    def make(X: np.ndarray, y: np.ndarray) -> Callable[[], np.ndarray]:
        if peer == "skfeature.lap_score":
            from skfeature.function.similarity_based.lap_score import lap_score

            return lambda: _order_to_scores(lap_score(X.copy(), mode="index"))
        if peer == "skfeature.SPEC":
            from skfeature.function.similarity_based.SPEC import spec

            return lambda: _order_to_scores(spec(X.copy(), mode="index"))
        if peer == "skfeature.MCFS":
            from skfeature.function.sparse_learning_based.MCFS import mcfs

            return lambda: _order_to_scores(mcfs(X.copy(), n_clusters=N_CLASSES, mode="index"))
        if peer == "skfeature.NDFS":
            from skfeature.function.sparse_learning_based.NDFS import ndfs

            return lambda: _order_to_scores(ndfs(X.copy(), n_clusters=N_CLASSES, mode="index"))
        if peer == "skrebate.ReliefF":
            from skrebate import ReliefF

            # categorical_threshold=0: every feature continuous, as ours treats them
            est = ReliefF(n_neighbors=10, categorical_threshold=0, n_jobs=1)
            return lambda: np.asarray(est.fit(X, y).feature_importances_, dtype=float)
        raise ValueError(f"unknown peer {peer!r}")

    return make


def prepare(make: Callable, shape: str, seed: int = SEED) -> Callable[[], np.ndarray]:
    """The timed call of ``make`` on ``shape``'s data, after one untimed call on a 60 x 30
    sample: a fresh process's first fit pays for lazy imports and library set-up, which
    would otherwise dominate the small shape."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with contextlib.suppress(Exception):
            make(*make_clusters(60, 30, seed=seed, n_classes=N_CLASSES))()
    return make(*make_clusters(*SHAPES[shape], seed=seed, n_classes=N_CLASSES))


class _Fit:
    """What both suites share: ``run`` is the timed call, made by ``setup``."""

    timeout = 300.0  # s per benchmark (asv's default of 60 s is short for the wide shape)
    run: Callable[[], np.ndarray]

    def time_fit(self, *params) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.run()

    def peakmem_fit(self, *params) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.run()


class RankerFit(_Fit):
    """Our ranker's ``fit`` on each shape."""

    params = (list(SHAPES), sorted(rankers.available()["name"]))
    param_names = ("shape", "ranker")

    def setup(self, shape: str, ranker: str, extra: dict | None = None) -> None:
        params = ranker_params(ranker) | (extra or {})
        self.run = prepare(ranker_fit(ranker, params), shape)


class PeerFit(_Fit):
    """A peer's fit on each shape (skipped where the peer is not installed)."""

    params = (list(SHAPES), IN_PROCESS_PEERS)
    param_names = ("shape", "peer")

    def setup(self, shape: str, peer: str) -> None:
        module = PEERS[peer][2]
        if module is None or importlib.util.find_spec(module) is None:
            # asv's way to skip a parameter combination (its docs: "raise NotImplementedError
            # in setup"); our runner (main) skips it the same way
            raise NotImplementedError(f"{peer}: `{module}` is not installed")
        self.run = prepare(peer_fit(peer), shape)


def main(argv: list[str] | None = None) -> None:
    """Run the classes in this process without asv: best-of-``--repeat`` seconds and the
    traced peak of each (shape, ranker), ours and the peers'."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="+", choices=list(SHAPES), default=["small"])
    parser.add_argument("--rankers", nargs="+", help="default: every registered ranker")
    parser.add_argument("--repeat", type=int, default=1, help="timing repeats (best is kept)")
    args = parser.parse_args(argv)
    names = args.rankers or RankerFit.params[1]
    rows = []
    for shape in args.shapes:
        cases = [(RankerFit, name, f"ours:{name}") for name in names]
        cases += [(PeerFit, p, f"peer:{p}") for p in IN_PROCESS_PEERS if PEERS[p][0] in names]
        for cls, param, label in cases:
            bench = cls()
            try:
                bench.setup(shape, param)
            except NotImplementedError as why:
                rows.append({"shape": shape, "who": label, "s": "skipped", "MB": str(why)})
                continue
            result = measure(bench.run, repeat=args.repeat, memory=True)
            rows.append({"shape": shape, "who": label, "s": result.seconds, "MB": result.peak_mb})
    print_table(rows, "the speed suite's classes, in this process (no asv)")


if __name__ == "__main__":
    main()
