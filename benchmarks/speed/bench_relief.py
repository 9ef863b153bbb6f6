"""ReliefF against skrebate's ReliefF: agreement (Spearman) and speed, side by side.

Both implementations get the same data and k = 10. skrebate is told that every feature
is continuous (``categorical_threshold=0``; by default it treats features with at most
10 distinct values as discrete, which would change its diff and distance functions), and
constant features are dropped first (skrebate divides by their zero range).

Known differences that remain, from skrebate 0.8.4's source:
- multi-class misses: skrebate weights each miss class by its share of the misses found
  (k each, so 1/(C-1)) instead of ReliefF's P(C) / (1 - P(class(R))); the two agree on
  balanced classes only (the "unbalanced" row shows the effect);
- neighbour order: skrebate sorts with ``np.argsort``'s default (unstable) sort, we break
  equal distances by the lower index; this matters only for tied distances (digits);
- scale: skrebate divides by n, like us, so binary scores agree to rounding.

The peer runs in a child process with a time budget; a size it cannot finish in time is
reported as such, with our numbers alone. ``--svm-rfe`` also times our SVM-RFE against
scikit-learn's RFE around ``SVC(kernel="linear")`` (the naive loop) on the same task.

Run: ``python -m benchmarks.speed.bench_relief`` (``--quick`` for a smoke test).
"""

from __future__ import annotations

import argparse
import gc
import multiprocessing as mp
import tracemalloc
import warnings

import numpy as np
from scipy.stats import spearmanr
from sklearn.datasets import load_digits

from benchmarks._common import measure, print_table
from rankers.supervised.relief import ReliefFRanker, RReliefFRanker


def _synthetic(m: int, n: int, n_classes: int, seed: int, sizes=None):
    """Noise features plus a few that shift with the class (and an XOR pair)."""
    rng = np.random.default_rng(seed)
    classes = np.arange(n_classes)
    y = np.resize(classes, m) if sizes is None else np.repeat(classes, sizes)
    X = rng.normal(size=(y.size, n))
    X[:, : min(5, n)] += 0.8 * y[:, None]
    if n >= 8:
        a, b = rng.integers(0, 2, size=(2, y.size))
        X[:, 6] += 2.0 * a
        X[:, 7] += 2.0 * b
        if n_classes == 2:
            y = a ^ b
    return X, y


def data_sets(quick: bool):
    digits = load_digits()
    X = digits.data[:, np.ptp(digits.data, axis=0) > 0]
    if quick:
        rows = slice(0, 300)
        X = X[rows][:, np.ptp(X[rows], axis=0) > 0]
        return [
            ("digits[:300]", X, digits.target[rows]),
            ("random 100x300", *_synthetic(100, 300, 2, 1)),
        ]
    sets = [("digits", X, digits.target)]
    sets += [
        ("random 200x5000", *_synthetic(200, 5000, 2, 1)),
        ("random 2000x500", *_synthetic(2000, 500, 2, 2)),
        ("balanced 4 classes 400x40", *_synthetic(400, 40, 4, 3)),
        ("unbalanced 3 classes 400x40", *_synthetic(400, 40, 3, 4, sizes=(300, 80, 20))),
    ]
    return sets


def _skrebate(X, y):
    from skrebate import ReliefF

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = ReliefF(n_neighbors=10, categorical_threshold=0, n_jobs=1)
        return est.fit(X, y).feature_importances_


def _traced_peak(fn) -> float:
    """Peak traced memory (MB) of one call, as benchmarks/_common.measure traces it,
    without its timing run first."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def _child(conn, X, y, memory: bool):
    try:
        if memory:
            conn.send(_traced_peak(lambda: _skrebate(X, y)))
        else:
            m = measure(lambda: _skrebate(X, y), memory=False)
            conn.send((m.seconds, m.result))
    except Exception as exc:  # report the peer's failure instead of hanging
        conn.send(exc)


def _in_child(X, y, memory: bool, budget: float):
    """Run the peer in a child process; its answer, or a string saying why there is none."""
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, X, y, memory))
    proc.start()
    child.close()
    if not parent.poll(budget):
        proc.terminate()  # our own child, by its handle
        proc.join()
        return f"{'traced run' if memory else 'run'} > {budget:.0f} s budget"
    out = parent.recv()
    proc.join()
    if isinstance(out, Exception):
        return f"failed: {type(out).__name__}: {out}"
    return out


def _peer(X, y, budget: float):
    """skrebate's (seconds, peak MB, scores, note) or the reason it has none.

    Timing and the memory trace are separate runs, each with the whole budget:
    tracemalloc slows skrebate's many small allocations down several times.
    """
    timed = _in_child(X, y, False, budget)
    if isinstance(timed, str):
        return timed
    seconds, scores = timed
    traced = _in_child(X, y, True, budget)
    if isinstance(traced, str):
        return seconds, np.nan, scores, traced
    return seconds, traced, scores, ""


def relief_rows(sets, budget: float, peer: bool, repeat: int):
    rows = []
    for name, X, y in sets:
        ours = measure(lambda X=X, y=y: ReliefFRanker().fit(X, y).scores_, repeat=repeat)
        row = {
            "data": name,
            "shape": f"{X.shape[0]}x{X.shape[1]}",
            "classes": int(np.unique(y).size),
            "ours_s": ours.seconds,
            "ours_MB": ours.peak_mb,
        }
        if peer:
            res = _peer(X, y, budget)
            if isinstance(res, str):
                row.update(skrebate_s=np.nan, skrebate_MB=np.nan, speedup=np.nan, note=res)
            else:
                seconds, peak, scores, note = res
                rho = spearmanr(ours.result, scores).statistic
                diff = np.abs(ours.result - scores).max()
                row.update(
                    skrebate_s=seconds,
                    skrebate_MB=peak,
                    speedup=seconds / ours.seconds,
                    spearman=rho,
                    max_abs_diff=diff,
                    note=note,
                )
        rows.append(row)
    return rows


def rrelieff_rows(sets, repeat: int):
    rows = []
    for name, X, _ in sets:
        target = X[:, 0] * X[:, 1] + X[:, 2]
        ours = measure(lambda X=X, t=target: RReliefFRanker().fit(X, t).scores_, repeat=repeat)
        rows.append(
            {
                "data": name,
                "shape": f"{X.shape[0]}x{X.shape[1]}",
                "ours_s": ours.seconds,
                "ours_MB": ours.peak_mb,
                "note": "no peer implements RReliefF (skrebate's continuous target is a "
                "different method)",
            }
        )
    return rows


def svm_rfe_rows(quick: bool, repeat: int):
    from sklearn.feature_selection import RFE
    from sklearn.svm import SVC

    from rankers.supervised.svm_rfe import SVMRFERanker

    rows = []
    shapes = [(72, 300)] if quick else [(72, 2000), (200, 1000)]
    for m, n in shapes:
        X, y = _synthetic(m, n, 2, 5)
        Xs = (X - X.min(axis=0)) / np.ptp(X, axis=0)
        ours = measure(lambda X=X, y=y: SVMRFERanker(step=1).fit(X, y).scores_, repeat=repeat)
        naive = measure(
            lambda Xs=Xs, y=y: (
                RFE(SVC(kernel="linear", C=0.1), n_features_to_select=1).fit(Xs, y).ranking_
            ),
            memory=False,
        )
        rows.append(
            {
                "shape": f"{m}x{n}",
                "ours_s": ours.seconds,
                "ours_MB": ours.peak_mb,
                "sklearn_RFE_s": naive.seconds,
                "speedup": naive.seconds / ours.seconds,
                "same_ranking": bool(np.array_equal(ours.result, n + 1 - naive.result)),
            }
        )
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    parser.add_argument(
        "--budget", type=float, default=600.0, help="seconds the peer gets per data set"
    )
    parser.add_argument("--no-peer", action="store_true", help="time ours only")
    parser.add_argument("--repeat", type=int, default=3, help="timing runs of ours (best of)")
    parser.add_argument("--svm-rfe", action="store_true", help="also time SVM-RFE vs sklearn RFE")
    args = parser.parse_args(argv)

    sets = data_sets(args.quick)
    print_table(
        relief_rows(sets, args.budget, not args.no_peer, args.repeat),
        "ReliefF (k=10, all instances): ours vs skrebate.ReliefF",
    )
    print_table(rrelieff_rows(sets[:3], args.repeat), "RReliefF (k=10): ours alone")
    if args.svm_rfe:
        print_table(
            svm_rfe_rows(args.quick, args.repeat),
            "SVM-RFE (C=0.1, step=1): ours vs sklearn RFE(SVC(kernel='linear'))",
        )


if __name__ == "__main__":
    main()
