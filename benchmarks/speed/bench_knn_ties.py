"""The kNN tie rule (``rankers.ties.kth_nearest``) against its code before and a plain-numpy floor.

``kth_nearest`` picks the ``k`` nearest columns of every row of a distance matrix with the
module's tie rule (distances within ``1e-9`` of the row's scale are tied, the lower column
wins), so that the neighbours never depend on the last bits of the distances. Issue 50
(item 5) measured it at 16 % of the default demo. Three implementations run on the same
matrices, alternating, one BLAS thread:

* ``new``: ``rankers.ties.kth_nearest`` in this tree (wide rows folded with ``np.fmin``
  to a bound of the ``k``-th distance, the rule applied to the few columns under it);
* ``prev``: the module as of commit 197a193 (``git show 197a193:rankers/ties.py``
  imported from a temporary copy), the code before the folding: one ``np.partition`` of
  every row for the ``k``-th distance, then the candidates off one comparison;
* ``old``: the module as of commit 1557e30, which selected the ``k`` smallest twice
  (``np.partition`` for the boundary, ``np.argpartition`` for the columns) and grouped the
  near-ties of every row;
* ``floor``: plain numpy without a tie rule (``np.argpartition`` and a stable sort of the
  ``k`` values): what the neighbours cost when rounding may decide them.

Every ``new`` answer is compared with ``prev``'s and ``old``'s (``same``: equal in every
row of every call).

Three workloads:

* the default (no option): the demo's kinds of calls rebuilt on its data (scikit-learn's
  breast cancer, 569 x 30, standardised): per fold of a 10-fold split the queries of the
  test part against the training part on the top 1, 2, 4, 8, 16 and 30 features of a
  seeded ranking (``k = 1``: the 1NN curves, ``k = 5``: the class prediction), the
  training part's own graph (``k = 5``, itself excluded: laplacian), the stacked
  ranker's inner folds (3 per training part, the same top features, ``k = 5``: two
  thirds of the demo's calls) and k-means' assignments (``k = 1`` among 2 centres),
  squared distances computed as ``rankers.neighbors`` does;
* a larger graph: the blocks of queries ``rankers.neighbors.nearest_neighbors`` searches
  for the kNN graph of 5,000 x 50 samples (``k = 5`` and ``10``), on gaussian data and on
  the same data rounded to one decimal (many exact ties);
* ``--demo``: the default demo itself (``moweights run examples/config.toml``, in this
  process, no cache): every ``kth_nearest`` call it makes runs ``prev`` and ``new`` on the
  same arguments (in alternating order), each timed in thread CPU seconds, and is checked
  for the same answer; the demo continues with ``prev``'s. Share = the implementation's
  CPU over the demo's CPU with only that implementation (the demo's CPU less the other
  one's).

Examples::

    python -m benchmarks.speed.bench_knn_ties --repeat 5
    python -m benchmarks.speed.bench_knn_ties --demo --out benchmarks/results/knn_ties.md
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks._common import cpu_seconds, module_at, rows_markdown_4g

ROOT = Path(__file__).resolve().parents[2]
OLD_COMMIT = "1557e30"
PREV_COMMIT = "197a193"
_PATCHED = (
    "rankers.ties",
    "rankers.neighbors",
    "rankers.kmeans",
    "rankers.supervised.relief",
    "rankers.unsupervised.urelief",
)


def floor_nearest(D: np.ndarray, k: int, rtol: float = 0.0, scale=None) -> np.ndarray:
    """The ``k`` smallest of each row, nearest first, no tie rule (plain numpy)."""
    if k < D.shape[1]:
        cols = np.argpartition(D, k - 1, axis=1)[:, :k]
    else:
        cols = np.broadcast_to(np.arange(D.shape[1]), D.shape)
    order = np.argsort(np.take_along_axis(D, cols, axis=1), axis=1, kind="stable")
    return np.take_along_axis(cols, order, axis=1)


def _sq_distances(Q: np.ndarray, X: np.ndarray, own: bool) -> tuple[np.ndarray, np.ndarray]:
    """Squared euclidean distances as ``rankers.neighbors`` computes them, and the scale."""
    centre = X.mean(axis=0)
    Z, ZQ = X - centre, Q - centre
    D = ZQ @ Z.T
    D *= -2.0
    D += np.einsum("ij,ij->i", ZQ, ZQ)[:, None]
    D += np.einsum("ij,ij->i", Z, Z)[None, :]
    np.maximum(D, 0.0, out=D)
    scale = D.max(axis=1)
    if own:
        D[np.arange(D.shape[0]), np.arange(D.shape[0])] = np.inf
    return D, scale


def demo_calls(seed: int = 0) -> list[tuple[str, np.ndarray, int, object]]:
    """(kind, D, k, scale) of the calls the default demo makes, rebuilt on its data."""
    from sklearn.datasets import load_breast_cancer

    X = load_breast_cancer().data
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    rng = np.random.default_rng(seed)
    m = X.shape[0]
    folds = np.array_split(rng.permutation(m), 10)
    ranking = rng.permutation(X.shape[1])
    calls = []
    for test in folds:
        train = np.setdiff1d(np.arange(m), test)
        Xtr, Xte = X[train], X[test]
        for n_top in (1, 2, 4, 8, 16, 30):
            top = ranking[:n_top]
            D, scale = _sq_distances(Xte[:, top], Xtr[:, top], own=False)
            calls.append(("1NN curve", D, 1, scale))
            calls.append(("5NN classes", D, 5, scale))
        D, scale = _sq_distances(Xtr, Xtr, own=True)
        calls.append(("own 5NN graph", D, 5, scale))
        inner = np.array_split(rng.permutation(train.size), 3)
        for part in inner:  # the stacked ranker's 3 inner folds score its pool the same way
            rest = np.setdiff1d(np.arange(train.size), part)
            for n_top in (1, 2, 4, 8, 16, 30):
                top = ranking[:n_top]
                D, scale = _sq_distances(Xtr[part][:, top], Xtr[rest][:, top], own=False)
                calls.append(("stacked inner 5NN", D, 5, scale))
        centres = Xtr[rng.choice(Xtr.shape[0], 2, replace=False)]
        calls.append(("k-means", ((Xtr[:, None, :] - centres[None]) ** 2).sum(axis=2), 1, None))
    return calls


def large_calls(seed: int = 0) -> list[tuple[str, np.ndarray, int, object]]:
    """(kind, D, k, scale) of the blocks the kNN graph of 5,000 x 50 samples is searched in
    (``rankers.neighbors``' block size), on gaussian data and rounded to one decimal."""
    from rankers.neighbors import _BLOCK_ELEMENTS

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((5_000, 50))
    calls = []
    for name, data in (("5000x50 graph", X), ("5000x50 graph, ties", np.round(X, 1))):
        step = max(1, _BLOCK_ELEMENTS // data.shape[0])
        for k in (5, 10):
            for start in range(0, data.shape[0], step):
                rows = slice(start, min(start + step, data.shape[0]))
                D, scale = _sq_distances(data[rows], data, own=False)
                D[np.arange(D.shape[0]), np.arange(rows.start, rows.stop)] = np.inf
                calls.append((f"{name} {k}NN", D, k, scale))
    return calls


def _time(fn, args, repeat: int) -> float:
    best = np.inf
    for _ in range(repeat):
        start = time.thread_time()
        fn(*args)
        best = min(best, time.thread_time() - start)
    return best


def run_calls(calls, impls: dict, repeat: int) -> list[dict]:
    """Each kind of call: seconds of every implementation (best of ``repeat``, summed over
    the calls of that kind, the implementations alternating call by call), their ratios to
    ``new`` and whether ``new`` gives the baselines' answers."""
    from rankers.ties import TIE_RTOL

    names = list(impls)
    kinds: dict[str, dict] = {}
    for i, (kind, D, k, scale) in enumerate(calls):
        row = kinds.setdefault(
            kind, {"calls": kind, "shape": "x".join(map(str, D.shape)), "k": k, "n": 0,
                   **{f"{name} s": 0.0 for name in names}, "same": True}
        )  # fmt: skip
        args = (D, k, TIE_RTOL, scale)
        row["n"] += 1
        answer = impls["new"](*args)
        row["same"] &= all(
            bool(np.array_equal(answer, impls[name](*args))) for name in names if name != "floor"
        )
        for name in names if i % 2 == 0 else names[::-1]:
            row[f"{name} s"] += _time(impls[name], args, repeat)
    rows = list(kinds.values())
    total = {"calls": "all", "shape": "", "k": "", "n": sum(r["n"] for r in rows)}
    for name in names:
        total[f"{name} s"] = sum(r[f"{name} s"] for r in rows)
    total["same"] = all(r["same"] for r in rows)
    rows.append(total)
    for r in rows:
        for name in names[1:]:
            if name == "floor":
                r["new / floor"] = r["new s"] / r["floor s"]
            else:
                r[f"{name} / new"] = r[f"{name} s"] / r["new s"]
    return rows


def _demo_cpu() -> float:
    """CPU seconds of the default demo in this process (no cache), as the tree has it."""
    import moweights.cli

    with tempfile.TemporaryDirectory() as tmp:
        start = cpu_seconds()
        moweights.cli.main(["run", str(ROOT / "examples" / "config.toml"), "-o", tmp, "--no-cache"])
        return cpu_seconds() - start


def run_demo(old) -> dict:
    """The default demo with every kth_nearest call made by ``old`` (the baseline given:
    prev) and new (see the module), then once more as the tree has it (new alone, nothing
    wrapped)."""
    import importlib

    from rankers import ties

    new_fn = ties.kth_nearest
    spent = {"new": 0.0, "old": 0.0, "calls": 0, "differ": 0}

    def both(D, k, rtol=ties.TIE_RTOL, scale=None):
        order = (("new", new_fn), ("old", old.kth_nearest))
        if spent["calls"] % 2:
            order = order[::-1]
        out = {}
        for name, fn in order:
            start = time.thread_time()
            out[name] = fn(D, k, rtol, scale)
            spent[name] += time.thread_time() - start
        spent["calls"] += 1
        spent["differ"] += not np.array_equal(out["new"], out["old"])
        return out["old"]

    modules = [importlib.import_module(name) for name in _PATCHED]
    saved = [module.kth_nearest for module in modules]
    for module in modules:
        module.kth_nearest = both
    try:
        total = _demo_cpu()
    finally:
        for module, fn in zip(modules, saved, strict=True):
            module.kth_nearest = fn
    rest = total - spent["new"] - spent["old"]
    return {
        "demo CPU s (new alone)": _demo_cpu(),
        "demo CPU s (both)": total,
        "calls": spent["calls"],
        "differ": spent["differ"],
        "old s": spent["old"],
        "new s": spent["new"],
        "old / new": spent["old"] / spent["new"],
        "old share of demo": spent["old"] / (rest + spent["old"]),
        "new share of demo": spent["new"] / (rest + spent["new"]),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="timing repeats per call (best of)")
    parser.add_argument("--demo", action="store_true", help="also the default demo (~2-4 min)")
    parser.add_argument("--quick", action="store_true", help="one repeat, no demo: a smoke run")
    parser.add_argument("--out", type=Path, help="also write the tables (markdown) here")
    args = parser.parse_args(argv)
    from rankers.ties import kth_nearest

    prev = module_at(PREV_COMMIT, "rankers/ties.py", "ties_prev")
    old = module_at(OLD_COMMIT, "rankers/ties.py", "ties_old")
    impls = {
        "new": kth_nearest,
        "prev": prev.kth_nearest,
        "old": old.kth_nearest,
        "floor": floor_nearest,
    }
    repeat = 1 if args.quick else args.repeat
    with threadpool_limits(1, user_api="blas"):
        rows = run_calls(demo_calls(), impls, repeat)
        large = run_calls(large_calls(), impls, 1 if args.quick else max(1, repeat // 2))
        demo = run_demo(prev) if args.demo and not args.quick else None
    tree = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    command = "python -m benchmarks.speed.bench_knn_ties " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    lines = [
        "# kNN tie rule: `rankers.ties.kth_nearest` against its code before and a numpy floor",
        "",
        f"Command: `{command.strip()}`  ",
        f"Tree: {tree} (plus uncommitted edits, if any); prev = {PREV_COMMIT}, old = "
        f"{OLD_COMMIT}; python {platform.python_version()}, numpy {np.__version__}; "
        f"{platform.platform()}  ",
        "Thread CPU seconds, one BLAS thread; per call the best of "
        f"{repeat} (the larger graph: {1 if args.quick else max(1, repeat // 2)}), summed over "
        "the calls of each kind, the implementations alternating; same = new's answer equals "
        "prev's and old's in every row of every call.",
        "",
        "## The demo's kinds of calls, rebuilt on its data (569 x 30, 10 folds)",
        "",
        rows_markdown_4g(rows),
        "",
        "## A larger graph: the blocks of the kNN graph of 5,000 x 50 samples",
        "",
        rows_markdown_4g(large),
    ]
    if demo is not None:
        lines += [
            "",
            "## The default demo (`moweights run examples/config.toml`), every call by new "
            "and prev",
            "",
            rows_markdown_4g([demo]).replace("old", "prev"),
        ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
