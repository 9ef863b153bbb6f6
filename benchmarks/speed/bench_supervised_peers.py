"""The supervised rankers users reach for first, next to the peer each one replaces.

* ``anova_f`` against scikit-learn's ``f_classif``; ``t_test`` against SciPy's
  ``ttest_ind(equal_var=False)``; ``fisher_score`` against scikit-feature's
  ``fisher_score`` (it returns an order only: agreement is the same order);
* ``mrmr`` in its FCQ form (``relevance="f_statistic"``, ``redundancy="correlation"``,
  ``scheme="quotient"``) against the ``mrmr_selection`` package (the same selections);
  ``cmim`` against scikit-feature's ``CMIM`` on the same bins;
* ``multisurf`` against skrebate's ``MultiSURF``;
* ``estimator_importance`` against scikit-learn's ``permutation_importance`` on the same
  fitted model (the straightforward two-step call).

Both sides get the same data in the same process; CPU seconds (user + system,
``_common.cpu_seconds``; BLAS on one thread), median of ``--repeat`` alternating runs,
the peer over budget is run once. "agreement": the largest absolute difference of the
scores, or whether the selections / orders are the same. Data: ALLAML (72 x 7,129, two
classes) from ``../shared/data`` when present, seeded synthetic gene-like matrices
otherwise.

Run: ``python -m benchmarks.speed.bench_supervised_peers`` (``--quick``: small shapes, for the
smoke test); ``--out FILE.md`` also writes the table with the command and versions.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

import rankers
from benchmarks._common import cpu_seconds, load_skfeature, print_table
from benchmarks._protocol import to_markdown, versions

COLUMNS = ["method", "data", "peer", "ours s", "peer s", "speed-up", "agreement"]


def genes(m: int, n: int, n_classes: int = 2, seed: int = 0):
    """Gene-like data: log-normal expression, 20 shifted genes and 20 noisy copies."""
    rng = np.random.default_rng(seed)
    y = np.arange(m) % n_classes
    X = rng.normal(size=(m, n))
    k = min(20, n // 3)
    X[:, :k] += 0.8 * (y[:, None] == 1)
    X[:, k : 2 * k] = X[:, :k] + 0.3 * rng.normal(size=(m, k))  # redundant copies
    return np.exp(X / 2.0), y


def cpu(fn, repeat: int):
    """(median CPU seconds over ``repeat`` runs, last result)."""
    times, result = [], None
    for _ in range(repeat):
        start = cpu_seconds()
        result = fn()
        times.append(cpu_seconds() - start)
    return statistics.median(times), result


def compare(label, data_name, peer, ours_fn, peer_fn, agree, repeat):
    ours_times, peer_times = [], []
    ours = theirs = None
    ours_fn()  # warm-up: the first call pays for lazy imports
    for _ in range(repeat):  # alternate, so that machine load hits both alike
        t, ours = cpu(ours_fn, 1)
        ours_times.append(t)
        t, theirs = cpu(peer_fn, 1)
        peer_times.append(t)
    o, p = statistics.median(ours_times), statistics.median(peer_times)
    return {
        "method": label,
        "data": data_name,
        "peer": peer,
        "ours s": o,
        "peer s": p,
        "speed-up": p / o if o > 0 else np.nan,
        "agreement": agree(ours, theirs),
    }


def max_diff(a, b) -> str:
    return f"max |diff| {np.max(np.abs(np.asarray(a) - np.asarray(b))):.2g}"


def same_order(fitted, peer_order) -> str:
    """Whether the peer's order is ours, or differs only among scores tied by our rule.

    Near-equal scores (within ``TIE_RTOL`` of the score range) are tied; we order them by
    column index, a peer by whatever its sort does, so such swaps are not disagreements.
    """
    from rankers.ties import TIE_RTOL

    ours, scores = fitted.ranking_, np.asarray(fitted.scores_, dtype=float)
    if np.array_equal(ours, peer_order):
        return "same order"
    tol = TIE_RTOL * float(np.ptp(scores))
    if np.all(np.diff(scores[peer_order]) <= tol):  # non-increasing up to ties
        swapped = int(np.count_nonzero(ours != peer_order))
        return f"same order up to ties ({swapped} tied positions ordered otherwise)"
    return "orders differ"


def rows_for(data_name, X, y, repeat, quick) -> list[dict]:
    from scipy import stats
    from sklearn.feature_selection import f_classif

    frame = pd.DataFrame(X, columns=[f"g{i}" for i in range(X.shape[1])])
    out = [
        compare(
            "anova_f", data_name, "sklearn f_classif",
            lambda: rankers.get("anova_f").fit(X, y).scores_,
            lambda: f_classif(X, y)[0],
            max_diff, repeat,
        ),
    ]  # fmt: skip
    if len(np.unique(y)) == 2:
        a, b = y == np.unique(y)[1], y == np.unique(y)[0]
        out.append(
            compare(
                "t_test (p-values)", data_name, "scipy ttest_ind",
                lambda: rankers.get("t_test").fit(X, y).pvalues_,
                lambda: stats.ttest_ind(X[a], X[b], equal_var=False).pvalue,
                max_diff, repeat,
            )
        )  # fmt: skip
    try:
        from skfeature.function.similarity_based.fisher_score import fisher_score

        out.append(
            compare(
                "fisher_score (order)", data_name, "scikit-feature",
                lambda: rankers.get("fisher_score").fit(X, y),
                lambda: np.ravel(fisher_score(X, y, mode="index")),
                same_order,
                repeat,
            )
        )  # fmt: skip
    except ImportError:
        pass
    K = 10 if quick else 50
    try:
        from mrmr import mrmr_classif

        fcq = {"relevance": "f_statistic", "redundancy": "correlation", "scheme": "quotient"}
        out.append(
            compare(
                f"mrmr FCQ (first {K})", data_name, "mrmr_selection",
                lambda: list(frame.columns[rankers.get("mrmr", n_selected=K, **fcq)
                                           .fit(frame, y).ranking_[:K]]),
                lambda: mrmr_classif(frame, pd.Series(y), K=K, show_progress=False, n_jobs=1),
                lambda a, b: "same selections" if a == b else f"{sum(x == z for x, z in zip(a, b, strict=True))}/{K} same",  # noqa: E501
                repeat,
            )
        )  # fmt: skip
    except ImportError:
        pass
    try:
        from skfeature.function.information_theoretical_based.CMIM import cmim

        if X.shape[1] > 1000:  # the peer's Python loops take hours on thousands of features
            raise ImportError

        from rankers.supervised.information import discretise

        codes = discretise(X, 10)
        kk = 5 if quick else 20
        out.append(
            compare(
                f"cmim (first {kk})", data_name, "scikit-feature",
                lambda: rankers.get("cmim", n_selected=kk).fit(codes.astype(float), y)
                .ranking_[:kk],
                lambda: np.ravel(cmim(codes, y, mode="index", n_selected_features=kk)),
                lambda a, b: _cmim_agreement(a, b, codes, y),
                1 if not quick else repeat,
            )
        )  # fmt: skip
    except ImportError:
        pass
    return out


def _cmim_agreement(ours, theirs, codes, y) -> str:
    """Same selections, or where they part: a tie (rankers.ties) or a real difference."""
    from skfeature.utility.entropy_estimators import cmidd, midd

    if np.array_equal(ours, theirs):
        return "same selections"
    step = int(np.flatnonzero(np.asarray(ours) != np.asarray(theirs))[0])
    chosen = list(ours[:step])

    def criterion(f):
        gap = max(midd(codes[:, s], codes[:, f]) - cmidd(codes[:, s], codes[:, f], y)
                  for s in chosen)  # fmt: skip
        return midd(codes[:, f], y) - gap

    a, b = criterion(ours[step]), criterion(theirs[step])
    if abs(a - b) <= 1e-9 * max(abs(a), abs(b)):
        return f"same to step {step}; then a tie ({abs(a - b):.0e}): ours the lower index"
    return f"differ at step {step} ({a:.6g} vs {b:.6g})"


def multisurf_rows(shapes, repeat) -> list[dict]:
    try:
        from skrebate import MultiSURF
    except ImportError:
        return []
    out = []
    for m, n in shapes:
        X, y = genes(m, n, seed=1)
        X = np.log(X)
        out.append(
            compare(
                "multisurf", f"genes {m}x{n}", "skrebate MultiSURF",
                lambda X=X, y=y: rankers.get("multisurf").fit(X, y).scores_,
                lambda X=X, y=y: MultiSURF(n_jobs=1).fit(X, y).feature_importances_,
                max_diff, repeat,
            )
        )  # fmt: skip
    return out


def estimator_rows(repeat) -> list[dict]:
    from sklearn.inspection import permutation_importance
    from sklearn.linear_model import LogisticRegression

    from rankers.preprocessing import standardise

    X, y = genes(200, 300, seed=2)

    def peer():
        Z = standardise(X)
        model = LogisticRegression(max_iter=1000).fit(Z, y)
        return permutation_importance(model, Z, y, n_repeats=5, random_state=0).importances_mean

    return [
        compare(
            "estimator_importance (perm.)", "genes 200x300", "sklearn permutation_importance",
            lambda: rankers.get("estimator_importance", importance="permutation",
                                random_state=0).fit(X, y).scores_,
            peer, max_diff, repeat,
        )
    ]  # fmt: skip


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small shapes (smoke test)")
    parser.add_argument("--repeat", type=int, default=3, help="alternating runs per side")
    parser.add_argument("--out", help="also write the table (Markdown) to this file")
    args = parser.parse_args(argv)
    repeat = 1 if args.quick else args.repeat
    rows = []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = [("genes 60x300", *genes(60, 300))] if args.quick else []
        if not args.quick:
            allaml = load_skfeature("ALLAML")
            if allaml is not None:
                data.append(("ALLAML 72x7129", allaml[0], allaml[1]))
            data.append(("genes 200x2000", *genes(200, 2000)))
            data.append(("genes 300x500, 3 classes", *genes(300, 500, n_classes=3)))
        for name, X, y in data:
            rows += rows_for(name, X, y, repeat, args.quick)
        shapes = [(80, 30)] if args.quick else [(200, 200), (400, 400), (800, 400)]
        rows += multisurf_rows(shapes, repeat)
        if not args.quick:
            rows += estimator_rows(repeat)
    table = print_table(rows, title="Supervised rankers vs their peers (CPU seconds)")
    if args.out:
        command = f"python -m {__spec__.name} " + " ".join(argv or sys.argv[1:])
        text = f"Command: `{command.strip()}`\n\n{to_markdown(table[COLUMNS])}\n\n{versions()}\n"
        Path(args.out).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
