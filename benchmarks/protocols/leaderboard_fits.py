"""Fold rankings for the leaderboards: every ranker fitted on every training fold, cached.

The leaderboards (``benchmarks/protocols/leaderboard.py``) score rankings that were refit on the
training part of each fold (nested evaluation). Fitting is the expensive half, so it lives
here, apart from the scoring: one *cell* = one data set x one ranker, fitted on each
training fold of one fixed, seeded fold scheme (``StratifiedKFold(10, shuffle=True,
random_state=0)``; fewer folds when the largest class has fewer than 10 samples: nci9 has
9). Each fold's full order (uint32, best first) and scores (float64) are stored in a cache
**outside the repository** as ``.npy`` files read without pickle, one fold at a time, so a
cell cut short by its budget or the end of a session resumes at its first missing fold.

The cell's folder names everything its result depends on, except the project's code::

    <cache>/fits/<data set>-<sha256[:12]>/skf<k>-s<seed>/<ranker>__<params hash>/
        cell.json                       data set, sha256, ranker, params, folds, seed, attempts
        fold_00.order.npy, fold_00.scores.npy, fold_00.json   (commit, CPU and wall seconds)

The code is deliberately not in the key: other work edits the rankers all the time (tie
rules, speed), and a change there must not throw away hours of fits. Each fold records the
git commit (and whether the tree had uncommitted edits) it was computed at; ``--refit``
fits the named cells again.

Cells run one at a time in a forked child process (one core; run the script under
``nice -n 19``) with a wall-clock budget; a child over budget is killed, its finished folds
kept, and the attempt recorded. A later run resumes cells that saved folds, retries a
timed-out cell only with a larger ``--budget``, and an error only with ``--retry-failed``.
The queue runs cheap rankers on every data set first (a prior cost tier per ranker, then
data-set size), so an interrupted run leaves the widest possible table.

    nice -n 19 python -m benchmarks.protocols.leaderboard_fits --protocol both --budget 1800
    python -m benchmarks.protocols.leaderboard_fits --costs   # per-cell costs, from the cache
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import signal
import subprocess
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from moweights.ensemble import POOLS

ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = ROOT.parent / "shared" / "data" / "skfeature"
#: the fit cache, outside the clone: $MOWEIGHTS_LEADERBOARD_CACHE, else the user's cache
#: folder ($XDG_CACHE_HOME or ~/.cache)/moweights-leaderboard
CACHE = Path(
    os.environ.get("MOWEIGHTS_LEADERBOARD_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "moweights-leaderboard"
)
#: a near copy of ORL, left out as in the ensemble and FRANe papers (§5.1)
NOT_INDEPENDENT = ("orlraws10P",)
#: queue order only (cheap first), from the unsupervised and supervised protocols' costs
TIERS = {
    0: (
        "variance", "laplacian", "compactness", "spec", "mcfs", "frane",
        "anova_f", "t_test", "fisher_score", "chi2", "info_gain",
    ),
    1: ("ndfs", "urelief", "relieff", "random_forest", "estimator_importance", "svm_rfe"),
    2: ("mrmr", "jmi", "cmim", "multisurf", "distance_rank", "mo_weighting"),
    3: ("agnos_s", "genie3", "rf_score"),
}  # fmt: skip
N_FOLDS, FOLD_SEED, RANKER_SEED = 10, 0, 0
#: inner folds of every training part, for the ensemble's stacking (its members' pool only)
N_INNER = 3
#: the stacking ensemble's pool (the product's default, moweights.ensemble.POOLS): members
#: whose inner fits are affordable (cost tiers 0-1 but frane), chosen by cost before any
#: score was seen (docs/guide/leaderboards.md)
POOL = {"supervised": POOLS["classification"], "unsupervised": POOLS["unsupervised"]}
#: board methods that are a registered ranker with settings of their own: method ->
#: (registered name, parameters beside the defaults; they are part of the cell's key).
#: ``mo_weighting`` is the ranker with its default objectives written out, so that its
#: cells never meet fits of another default; ``mo_weighting_paper`` the paper's C1, -C2, -C3.
VARIANTS = {
    "mo_weighting": ("mo_weighting", {"objectives": ("-NCA", "-FR", "SP")}),
    "mo_weighting_paper": ("mo_weighting", {"objectives": ("C1", "-C2", "-C3")}),
    # fitted whole on each outer training fold (its own inner folds inside the fit), not
    # stacked from the pool's stored inner fits as stacked_auto is: NSGA-II weights need
    # the members' inner rankings inside the optimisation (leaderboard/README.md, the
    # pre-registration of the NSGA-II member weights)
    "stacked_nsga2": ("stacked", {"combine": "nsga2", "population": 20, "generations": 10}),
    # stacked_auto fitted the same way: what the NSGA-II weights cost beside it, fold by fold
    # (the board scores stacked_auto from its pool's stored inner fits, not from these)
    "stacked_mean_rank": ("stacked", {"combine": "mean_rank"}),
}
#: the variants that are ensembles: fitted as cells, but not single rankers of the board
#: (no best-single candidate, not an aggregate's member)
FITTED_ENSEMBLES = ("stacked_nsga2", "stacked_mean_rank")


def base_ranker(method: str) -> str:
    """The registered ranker a board method fits (itself, or its variant's ranker)."""
    return VARIANTS.get(method, (method, {}))[0]


# ------------------------------------------------------------------ data and folds
@dataclass(frozen=True)
class Dataset:
    name: str
    path: Path
    n_samples: int
    n_features: int
    n_classes: int
    sha256: str


def list_datasets(data_dir: Path = DATA_DIR) -> tuple[list[Dataset], list[str]]:
    """The present data sets of ``data_dir``'s MANIFEST.csv (smallest first), and the missing
    (the harness's reading of the manifest, ``_protocol.list_datasets``)."""
    from benchmarks._protocol import list_datasets as read_manifest

    present, missing = read_manifest(data_dir)
    return [
        Dataset(d.name, Path(d.path), d.n_samples, d.n_features, d.n_classes, d.sha256)
        for d in present
    ], missing


def load(dataset: Dataset) -> tuple[np.ndarray, np.ndarray]:
    """``X`` as float64 and the labels re-coded 0..C-1 (the product's reader: a ``.mat``
    file's ``X``/``Y``, or a table's ``target`` column, as the UCI sets' PMLB files)."""
    from moweights.data import load_file

    is_mat = Path(dataset.path).suffix == ".mat"
    frame, target = load_file(dataset.path, None if is_mat else "target")
    _, y = np.unique(np.asarray(target), return_inverse=True)
    return frame.to_numpy(dtype=np.float64), y.astype(np.intp)


def n_folds(y: np.ndarray, wanted: int | None = None) -> int:
    """Stratified folds need a class with that many samples: nci9's largest has 9."""
    return int(min(wanted or N_FOLDS, np.bincount(y).max()))


def splits(y: np.ndarray, k: int, seed: int = FOLD_SEED) -> list[tuple[np.ndarray, np.ndarray]]:
    """The fixed fold scheme: ``StratifiedKFold(k, shuffle=True, random_state=seed)``."""
    import warnings

    from sklearn.model_selection import StratifiedKFold

    cv = StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
    with warnings.catch_warnings():  # a class smaller than k: sklearn warns, splits anyway
        warnings.simplefilter("ignore", UserWarning)
        return [(tr, te) for tr, te in cv.split(np.zeros((len(y), 1)), y)]


def inner_splits(y: np.ndarray, outer, inner: int = N_INNER):
    """Inner folds of every outer training part, as row indices of the whole data set:
    ``StratifiedKFold(inner, shuffle=True, random_state=FOLD_SEED)`` on ``y[train]``;
    job ``f * inner + j`` is outer fold ``f``'s inner fold ``j``."""
    out = []
    for train, _ in outer:
        out += [(train[tr], train[te]) for tr, te in splits(y[train], inner)]
    return out


# ------------------------------------------------------------------ cells
def ranker_params(name: str, dataset: Dataset) -> dict:
    """The leaderboard's parameters: defaults, ``n_clusters`` = the number of classes (as
    the unsupervised protocol), ``random_state`` = RANKER_SEED where the ranker has one."""
    import rankers

    defaults = rankers.get(base_ranker(name)).get_params()
    params = {}
    if "n_clusters" in defaults:
        params["n_clusters"] = int(dataset.n_classes)
    if "random_state" in defaults:
        params["random_state"] = RANKER_SEED
    params.update(VARIANTS.get(name, (name, {}))[1])
    return params


def _hash(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:10]


@dataclass(frozen=True)
class Cell:
    dataset: Dataset
    ranker: str
    params: tuple  # sorted (key, value) pairs, hashable
    k: int
    inner: int = 0  # 0: the outer folds; else that many inner folds of each training part

    @property
    def n_jobs(self) -> int:
        return self.k * (self.inner or 1)

    @property
    def folder(self) -> Path:
        d = self.dataset
        scheme = f"skf{self.k}-s{FOLD_SEED}" + (
            f"/in{self.inner}-s{FOLD_SEED}" if self.inner else ""
        )
        return (
            CACHE
            / "fits"
            / f"{d.name}-{d.sha256[:12]}"
            / scheme
            / f"{self.ranker}__{_hash(dict(self.params))}"
        )

    def key(self) -> dict:
        d = self.dataset
        return {
            "dataset": d.name,
            "sha256": d.sha256,
            "ranker": self.ranker,
            "params": dict(self.params),
            "folds": {"kind": "StratifiedKFold", "n_splits": self.k, "shuffle": True},
            "inner_folds": self.inner,
            "fold_seed": FOLD_SEED,
        }

    def done(self) -> list[int]:
        return [f for f in range(self.n_jobs) if (self.folder / f"fold_{f:02d}.json").is_file()]

    def record(self) -> dict:
        path = self.folder / "cell.json"
        return json.loads(path.read_text()) if path.is_file() else {**self.key(), "attempts": []}

    def write_record(self, record: dict) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write(self.folder / "cell.json", json.dumps(record, indent=1))


def read_fold(folder: Path, f: int) -> tuple[np.ndarray, np.ndarray, dict]:
    """One fold's order, scores and record (``.npy`` without pickle)."""
    order = np.load(folder / f"fold_{f:02d}.order.npy", allow_pickle=False)
    scores = np.load(folder / f"fold_{f:02d}.scores.npy", allow_pickle=False)
    return order, scores, json.loads((folder / f"fold_{f:02d}.json").read_text())


def atomic_write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _save_npy(path: Path, array: np.ndarray) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        np.save(fh, array, allow_pickle=False)
    os.replace(tmp, path)


def commit_info() -> dict:
    def git(*args):
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        return out.stdout.strip()

    return {"commit": git("rev-parse", "HEAD"), "dirty": bool(git("status", "--porcelain"))}


# ------------------------------------------------------------------ fitting
def _fit_folds(cell: Cell, X, y, folds, todo, commit) -> None:
    """Child process: fit ``cell``'s missing folds one after another, saving each."""
    os.setpgrp()  # the parent kills the whole group at the budget
    import warnings

    import rankers

    warnings.simplefilter("ignore")  # constant features, convergence: the log stays readable

    est_proto = rankers.get(base_ranker(cell.ranker), **dict(cell.params))
    needs_y = rankers.ranker_tags(est_proto).requires_y
    for f in todo:
        train = folds[f][0]
        est = rankers.get(base_ranker(cell.ranker), **dict(cell.params))
        cpu, wall = time.process_time(), time.perf_counter()
        est.fit(X[train], y[train] if needs_y else None)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        order = np.asarray(est.ranking_, dtype=np.uint32)
        _save_npy(cell.folder / f"fold_{f:02d}.order.npy", order)
        _save_npy(cell.folder / f"fold_{f:02d}.scores.npy", np.asarray(est.scores_, float))
        meta = {"fold": f, "cpu_seconds": cpu, "wall_seconds": wall, **commit}
        if hasattr(est, "member_weights_"):  # a fitted ensemble's learned weights
            meta["member_weights"] = {m: float(w) for m, w in est.member_weights_.items()}
        meta["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S")
        atomic_write(cell.folder / f"fold_{f:02d}.json", json.dumps(meta))


def run_cell(cell: Cell, X, y, folds, budget: float, commit: dict) -> str:
    """Fit the missing folds of ``cell`` in a forked child under ``budget`` wall seconds."""
    record = cell.record()
    before = cell.done()
    todo = [f for f in range(cell.n_jobs) if f not in before]
    cell.folder.mkdir(parents=True, exist_ok=True)
    ctx = multiprocessing.get_context("fork")
    errfile = cell.folder / "error.txt"
    errfile.unlink(missing_ok=True)
    proc = ctx.Process(target=_child, args=(cell, X, y, folds, todo, commit, errfile))
    start = time.perf_counter()
    proc.start()
    proc.join(budget)
    status = "ok"
    if proc.is_alive():
        with _suppress():
            os.killpg(proc.pid, signal.SIGKILL)
        proc.join()
        status = "timeout"
    elif proc.exitcode != 0:
        status = "error"
    after = cell.done()
    attempt = {
        "status": status,
        "budget": budget,
        "seconds": time.perf_counter() - start,
        "folds_before": len(before),
        "folds_after": len(after),
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        **commit,
    }
    if status == "error":
        attempt["reason"] = errfile.read_text()[-2000:] if errfile.is_file() else "killed"
    record["attempts"].append(attempt)
    cell.write_record(record)
    return status


def _child(cell, X, y, folds, todo, commit, errfile) -> None:
    try:
        _fit_folds(cell, X, y, folds, todo, commit)
    except BaseException:
        errfile.write_text(traceback.format_exc())
        raise


class _suppress:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return exc[0] is not None and issubclass(exc[0], ProcessLookupError)


def should_run(cell: Cell, budget: float, retry_failed: bool) -> bool:
    """A missing fold, and no earlier attempt that already failed the way this one would."""
    if len(cell.done()) == cell.n_jobs:
        return False
    attempts = cell.record()["attempts"]
    if not attempts:
        return True
    last = attempts[-1]
    if last["status"] == "error":
        return retry_failed
    if last["status"] == "timeout":
        # resume one that saved folds; else only with a larger budget
        return last["folds_after"] > last["folds_before"] or budget > last["budget"]
    return True


# ------------------------------------------------------------------ the queue
def protocol_rankers(protocol: str) -> list[str]:
    """Every registered ranker of the protocol's kind (classification for supervised)."""
    import rankers

    table = rankers.available()
    if protocol == "unsupervised":
        names = table.loc[table["target_kind"] == "unsupervised", "name"]
    else:
        kinds = table["target_kind"].isin(["classification", "both"])
        names = table.loc[kinds & table["requires_y"], "name"]
    # the registered ensemble is scored from its pool's stored folds (leaderboard.py), as
    # stacked_auto / stacked_top3 / stacked_top1, not fitted as one more member
    variants = {
        v for v, (base, _) in VARIANTS.items() if base in set(names) and v not in FITTED_ENSEMBLES
    }
    return sorted((set(names) - {"stacked"}) | variants)


def tier(name: str) -> int:
    name = base_ranker(name)
    return next((t for t, names in TIERS.items() if name in names), 2)


def make_cells(datasets, rankers_by_protocol, inner: bool = True) -> list[Cell]:
    """The queue: outer cells of every ranker, inner cells of the pool's members; cheap
    tiers over every data set first (inner cells after the outer tiers 0-1), then by size.
    The fold count (``k = 0`` here) is set once the data set's labels are loaded."""
    cells = []
    for d in datasets:
        for protocol, names in rankers_by_protocol.items():
            for name in names:
                params = tuple(sorted(ranker_params(name, d).items()))
                cells.append(Cell(d, name, params, 0))
                if inner and name in POOL[protocol]:
                    cells.append(Cell(d, name, params, 0, N_INNER))

    def order(c: Cell):
        t = 1.5 if c.inner else tier(c.ranker)
        return (t, c.dataset.n_samples * c.dataset.n_features)

    return sorted(cells, key=order)


def cost_table(datasets) -> pd.DataFrame:
    """Every cached cell: folds done, CPU seconds per fold, estimated cell seconds, status."""
    rows = []
    for d in datasets:
        base = CACHE / "fits" / f"{d.name}-{d.sha256[:12]}"
        for folder in sorted([*base.glob("skf*/*__*"), *base.glob("skf*/in*/*__*")]):
            rec_path = folder / "cell.json"
            if not rec_path.is_file():
                continue
            rec = json.loads(rec_path.read_text())
            k = rec["folds"]["n_splits"] * (rec.get("inner_folds") or 1)
            metas = [json.loads(p.read_text()) for p in sorted(folder.glob("fold_*.json"))]
            cpu = [m["cpu_seconds"] for m in metas]
            last = rec["attempts"][-1] if rec["attempts"] else {}
            rows.append(
                {
                    "dataset": d.name,
                    "ranker": rec["ranker"] + (" (inner)" if rec.get("inner_folds") else ""),
                    "folds_done": len(metas),
                    "n_folds": k,
                    "cpu_per_fold": float(np.mean(cpu)) if cpu else np.nan,
                    "cell_cpu_estimate": float(np.mean(cpu)) * k if cpu else np.nan,
                    "last_status": last.get("status", ""),
                    "last_budget": last.get("budget", np.nan),
                    "attempt_seconds": sum(a["seconds"] for a in rec["attempts"]),
                }
            )
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--protocol", choices=("supervised", "unsupervised", "both"), default="both"
    )
    parser.add_argument(
        "--datasets", nargs="+", help="only these data sets (default: all present but orlraws10P)"
    )
    parser.add_argument("--rankers", nargs="+", help="only these rankers")
    parser.add_argument(
        "--exclude",
        nargs="+",
        default=[],
        metavar="DATASET:RANKER",
        help="cells to skip (e.g. BASEHOCK:genie3)",
    )
    parser.add_argument(
        "--max-tier", type=int, default=3, help="queue rankers of cost tier <= this only"
    )
    parser.add_argument(
        "--no-inner", action="store_true", help="skip the ensemble pool's inner-fold cells"
    )
    parser.add_argument(
        "--budget", type=float, default=1800.0, help="wall seconds per cell attempt"
    )
    parser.add_argument("--retry-failed", action="store_true", help="run cells that raised again")
    parser.add_argument(
        "--refit", action="store_true", help="delete the named cells' folds and fit them again"
    )
    parser.add_argument(
        "--costs", action="store_true", help="print the per-cell costs from the cache and stop"
    )
    parser.add_argument(
        "--costs-out", type=Path, metavar="CSV", help="with --costs: also write the table here"
    )
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    args = parser.parse_args(argv)  # fmt: skip
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)  # one core: BLAS and OpenMP on one thread (forked children too)

    present, missing = list_datasets(args.data_dir)
    if args.datasets:
        wanted = {n.lower() for n in args.datasets}
        datasets = [d for d in present if d.name.lower() in wanted]
    else:
        datasets = [d for d in present if d.name not in NOT_INDEPENDENT]
    if args.costs:
        table = cost_table(datasets)
        print(table.to_string(index=False) if len(table) else "no cells in the cache")
        if args.costs_out is not None and len(table):
            table.to_csv(args.costs_out, index=False, float_format="%.4g")
        return
    protocols = ("supervised", "unsupervised") if args.protocol == "both" else (args.protocol,)
    by_protocol = {p: protocol_rankers(p) for p in protocols}
    if args.rankers:
        # the fitted ensembles (classification task) only when named
        named = [e for e in FITTED_ENSEMBLES if e in args.rankers]
        by_protocol = {
            p: [n for n in v if n in args.rankers] + (named if p == "supervised" else [])
            for p, v in by_protocol.items()
        }
    by_protocol = {p: [n for n in v if tier(n) <= args.max_tier] for p, v in by_protocol.items()}
    skip = set(args.exclude)
    commit = commit_info()
    cells = [
        c
        for c in make_cells(datasets, by_protocol, inner=not args.no_inner)
        if f"{c.dataset.name}:{c.ranker}" not in skip
    ]
    print(f"{len(cells)} cells; missing data sets here: {missing}", flush=True)
    loaded: dict[str, tuple] = {}
    for i, cell in enumerate(cells):
        d = cell.dataset
        if d.name not in loaded:
            loaded.clear()  # one data set in memory at a time
            X, y = load(d)
            k = n_folds(y)
            outer = splits(y, k)
            loaded[d.name] = (X, y, k, outer, inner_splits(y, outer))
        X, y, k, outer, inner = loaded[d.name]
        folds = inner if cell.inner else outer
        cell = Cell(d, cell.ranker, cell.params, k, cell.inner)
        if args.refit:
            for p in cell.folder.glob("fold_*"):
                p.unlink()
        if not should_run(cell, args.budget, args.retry_failed):
            continue
        start = time.perf_counter()
        status = run_cell(cell, X, y, folds, args.budget, commit)
        print(
            f"[{i + 1}/{len(cells)}] {d.name} {cell.ranker}{' (inner)' if cell.inner else ''}: "
            f"{status}, {len(cell.done())}/{cell.n_jobs} folds, "
            f"{time.perf_counter() - start:.1f} s",
            flush=True,
        )


if __name__ == "__main__":
    main()
