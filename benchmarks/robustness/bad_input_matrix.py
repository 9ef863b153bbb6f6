"""Every registered ranker against a table of bad inputs: named error, correct result, or a defect.

Each ranker runs in a process of its own (one cell after the other, each under a time
bound, so a hang is counted and the ranker's next cell still runs); every cell is
classified as

* ``named``   -- the ranker refused the input with one of our errors (``MoweightsError``),
* ``result``  -- it fitted: finite scores, one per feature, a permutation as ranking_;
  where the cell re-encodes float64 data (float32, int64 and boolean columns, numbers as
  text, a sparse matrix, class labels as text or floats) its scores must equal the fit of
  the same values as float64 (rtol 1e-7), else the cell is ``silent``,
* ``n/a``     -- the input does not apply to the ranker (a target for an unsupervised one),

or as a defect:

* ``raw``     -- any other exception (a numpy / pandas / sklearn traceback reaching the user),
  or the bare ``MoweightsError`` of fit's guard against a ranker's invalid scores (a bug),
* ``silent``  -- a result where the input must be refused (NaN, text, one sample, a bad
  target ...), or a result that is not one (non-finite scores, wrong shape, scores other
  than the float64 reference's),
* ``hang``    -- no answer within ``--timeout`` seconds.

The cases follow SPEC §9 (docs/design.md, "Bad input") and the audits of issues 25/37.
``python -m benchmarks.robustness.bad_input_matrix`` prints the totals and every defect; ``--json``
the cells. Exit code 1 when any defect was found. CPU: a few minutes on two cores.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from collections import Counter

# ------------------------------------------------------------------ the cases (child side)
_CHILD = r"""
import json, sys, warnings
import numpy as np, pandas as pd, scipy.sparse as sp
import rankers
from rankers.exceptions import MoweightsError

name = sys.argv[1]
skip = set(json.loads(sys.argv[2])) if len(sys.argv) > 2 else set()  # cells that hung
cls = rankers.get_class(name)
supervised = cls.requires_y
kind = cls.target_kind


def make(m=40, n=5, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], m // 2)
    X = rng.normal(size=(m, n)) + 0.8 * y[:, None] * (np.arange(n) < 2)
    if kind == "regression":
        y = X[:, 0] + 0.1 * rng.normal(size=m)
    return pd.DataFrame(X, columns=[f"g{i}" for i in range(n)]), y


def est():
    e = rankers.get(name)
    e.set_params(**type(e)._contract_test_params)
    if "random_state" in e.get_params():
        e.set_params(random_state=0)
    return e


X0, y0 = make()
cases = {}
refs = {}  # label -> (X, y) of float64 with the same values: the result must equal its fit
def put(label, X, y="default", expect="error", needs_y=False, ref=None):
    cases[label] = (X, y0 if isinstance(y, str) else y, expect, needs_y)
    if ref is not None:
        refs[label] = ref

Xn = X0.copy(); Xn.iloc[3, 2] = np.nan; put("nan", Xn)
Xi = X0.copy(); Xi.iloc[3, 2] = np.inf; put("inf", Xi)
Xi = X0.copy(); Xi.iloc[3, 2] = -np.inf; put("-inf", Xi)
Xa = X0.copy(); Xa["g2"] = np.nan; put("all-nan column", Xa)
Xc = X0.copy(); Xc["g1"] = 3.0; put("constant column", Xc, expect="result")
put("all constant", pd.DataFrame(np.ones((10, 3))), np.repeat([0, 1], 5) if kind != "regression"
    else np.linspace(0, 1, 10), expect="result")
Xt = X0.copy(); Xt["colour"] = ["red", "blue"] * 20; put("text column", Xt)
Xd = X0.copy(); Xd["when"] = pd.Timestamp("2024-01-01"); put("datetime column", Xd)
# numbers written as text are numbers (as numpy reads them); words are not
put("numbers as strings", X0.to_numpy().astype(str), expect="result_or_named",
    ref=(X0.to_numpy(), y0))
# other encodings of the same values: a result must be the float64 fit's
X32 = X0.astype(np.float32); put("float32", X32, expect="result", ref=(X32.astype(np.float64), y0))
Xint = (X0 * 10).round().astype(np.int64)
put("int64 columns", Xint, expect="result", ref=(Xint.astype(np.float64), y0))
if kind == "classification":
    put("y text labels", X0, np.where(y0 == 0, "ctrl", "case"), expect="result", needs_y=True,
        ref=(X0, np.where(y0 == 0, 1, 0)))  # "case" < "ctrl": the labels' sorted order
    put("y float labels", X0, y0.astype(float), expect="result", needs_y=True, ref=(X0, y0))
Xw = X0.to_numpy().astype(object); Xw[:, 1] = "word"; put("object array with words", Xw)
put("one sample", X0.iloc[:1], y0[:1])
put("one feature", X0[["g0"]])
put("no rows", X0.iloc[:0], y0[:0])
put("1-d X", X0["g0"].to_numpy())
put("3-d X", X0.to_numpy()[:, :, None])
Xs = X0.abs().where(X0.abs() > 0.5, 0.0)
put("sparse csr", sp.csr_matrix(Xs.to_numpy()), expect="result", ref=(Xs.to_numpy(), y0))
Sn = sp.csr_matrix(Xs.to_numpy()); Sn.data[0] = np.nan; put("sparse with nan", Sn)
put("huge values 1e300", (X0 + 5) * 1e300, expect="result_or_named")
put("tiny values 1e-300", (X0 + 5) * 1e-300, expect="result_or_named")
Xm = X0 + 5.0; Xm["g3"] *= 1e300; Xm["g4"] *= 1e-300; put("mixed 1e300 / 1e-300", Xm,
                                                          expect="result_or_named")
put("repeated column names", X0.set_axis(["a", "a", "b", "c", "d"], axis=1))
put("non-string column names", X0.set_axis(["a", 3.5, "b", "c", "d"], axis=1))
put("complex values", X0.to_numpy() + 1j)
Xb = X0 > 0; put("boolean columns", Xb, expect="result", ref=(Xb.astype(np.float64), y0))
Xe = X0.round().astype("Int64"); Xe.iloc[2, 1] = pd.NA
put("nullable Int64 with NA", Xe)
Xk = X0.copy(); Xk["cat"] = pd.Categorical(["a", "b"] * 20); put("categorical dtype column", Xk)
put("two samples", X0.iloc[[0, 39]], y0[[0, 39]], expect="result_or_named")
# the target (supervised rankers only)
put("no y", X0, None, needs_y=True)
put("y too short", X0, y0[:-1], needs_y=True)
yn = np.asarray(y0, dtype=float).copy(); yn[5] = np.nan; put("y with nan", X0, yn, needs_y=True)
if kind == "classification":
    put("y one class", X0, np.zeros(40), needs_y=True)
    put("y continuous", X0, np.random.default_rng(1).normal(size=40), needs_y=True)
    put("y ids", X0, np.array([f"p{i}" for i in range(40)]), needs_y=True)
if kind == "regression":
    put("y class labels", X0, np.where(np.arange(40) < 20, "a", "b"), needs_y=True)
put("y two columns", X0, np.column_stack([y0, y0]), needs_y=True)

for label, (X, y, expect, needs_y) in cases.items():
    if label in skip:
        continue
    if needs_y and not supervised:
        print(json.dumps({"case": label, "outcome": "n/a"}), flush=True)
        continue
    before = None if not isinstance(X, (pd.DataFrame, np.ndarray)) else (
        X.copy(deep=True) if isinstance(X, pd.DataFrame) else X.copy())
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            e = est().fit(X, y)
        scores, order = np.asarray(e.scores_), np.asarray(e.ranking_)
        n = X.shape[1] if hasattr(X, "shape") and len(X.shape) == 2 else -1
        ok = (scores.shape == (n,) and np.isfinite(scores).all()
              and sorted(order.tolist()) == list(range(n)))
        changed = before is not None and not (
            before.equals(X) if isinstance(X, pd.DataFrame)
            else np.array_equal(before, X, equal_nan=X.dtype.kind in "fc"))
        differs = None
        if ok and not changed and label in refs:  # correct = the float64 reference's result
            rX, ry = refs[label]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ref = np.asarray(est().fit(rX, ry).scores_, dtype=np.float64)
            got = scores.astype(np.float64)
            scale = np.max(np.abs(ref)) if ref.size else 0.0
            if ref.shape != got.shape or not np.allclose(
                    got, ref, rtol=1e-7, atol=1e-12 * scale, equal_nan=True):
                same = scale and ref.shape == got.shape
                gap = np.max(np.abs(got - ref)) / scale if same else np.inf
                differs = f"scores differ from the float64 fit's (max gap {gap:.2g} of the top)"
        if not ok or changed or differs:
            outcome = "silent"
            why = differs or ("not a valid result" if not ok else "the input was modified")
        elif expect == "error":
            outcome, why = "silent", "fitted an input that must be refused"
        else:
            outcome, why = "result", ""
    except MoweightsError as exc:  # refusing even a usable input is not a defect here
        outcome, why = "named", f"{type(exc).__name__}: {str(exc)[:160]}"
        if type(exc) is MoweightsError:  # the base class: a guard against our own bugs
            outcome = "raw"
    except Exception as exc:
        outcome, why = "raw", f"{type(exc).__module__}.{type(exc).__name__}: {str(exc)[:200]}"
    print(json.dumps({"case": label, "outcome": outcome, "why": why}), flush=True)
print(json.dumps({"done": True}), flush=True)
"""

DEFECTS = ("raw", "silent", "hang")


def _run_ranker(name: str, timeout: float) -> list[dict]:
    """The cells of one ranker; a hang is recorded and the ranker restarted after it."""
    cells: list[dict] = []
    skip: set[str] = set()
    while True:
        proc = subprocess.Popen(
            [sys.executable, "-c", _CHILD, name, json.dumps(sorted(skip))],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        lines: list[str] = []
        last = [time.monotonic()]

        def read(proc=proc, lines=lines, last=last) -> None:
            for line in proc.stdout:
                lines.append(line)
                last[0] = time.monotonic()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        while reader.is_alive() and time.monotonic() - last[0] < timeout:
            reader.join(0.5)
        hung = reader.is_alive()
        if hung:
            proc.kill()
        proc.wait()
        reader.join(5)
        seen = [json.loads(line) for line in lines if line.strip().startswith("{")]
        done = any(c.get("done") for c in seen)
        for c in seen:
            if "case" in c and c["case"] not in {x["case"] for x in cells}:
                cells.append({"ranker": name, **c})
        if done:
            return cells
        # the child stopped in the cell after the last one reported: a hang or a crash
        order = _case_order(name)
        reported = {c["case"] for c in cells}
        pending = [c for c in order if c not in reported]
        if not pending:
            return cells
        stuck = pending[0]
        why = "no answer" if hung else f"the process died: {proc.stderr.read()[-300:]}"
        cells.append({"ranker": name, "case": stuck, "outcome": "hang" if hung else "raw",
                      "why": why})  # fmt: skip
        skip.add(stuck)
        if len(skip) > 40:
            return cells


_ORDER: dict[str, list[str]] = {}


def _case_order(name: str) -> list[str]:
    """The case labels in the child's order (a dry listing of the same table)."""
    if name not in _ORDER:
        probe = _CHILD.split("for label, (X, y, expect, needs_y)")[0]
        probe += "\nprint(json.dumps(list(cases)))\n"
        out = subprocess.run([sys.executable, "-c", probe, name], capture_output=True, text=True)
        _ORDER[name] = json.loads(out.stdout.strip().splitlines()[-1])
    return _ORDER[name]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rankers", nargs="*", help="names (default: every registered one)")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds per cell")
    parser.add_argument("--json", action="store_true", help="print every cell as JSON")
    args = parser.parse_args(argv)
    import rankers

    names = args.rankers or list(rankers.available()["name"])
    cells: list[dict] = []
    for name in names:
        cells += _run_ranker(name, args.timeout)
        print(f"{name}: {dict(Counter(c['outcome'] for c in cells if c['ranker'] == name))}",
              file=sys.stderr, flush=True)  # fmt: skip
    counts = Counter(c["outcome"] for c in cells)
    n_cases = len({c["case"] for c in cells})
    if args.json:
        print(json.dumps(cells, indent=1))
    print(
        f"{len(names)} rankers x {n_cases} inputs = {len(cells)} cells: "
        f"{counts['named']} named errors, {counts['result']} correct results, "
        f"{counts['n/a']} n/a; {counts['raw']} raw tracebacks, {counts['silent']} silent, "
        f"{counts['hang']} hangs"
    )
    for c in cells:
        if c["outcome"] in DEFECTS:
            print(f"  {c['outcome']:<6} {c['ranker']:<22} {c['case']:<26} {c.get('why', '')}")
    return 1 if any(counts[d] for d in DEFECTS) else 0


if __name__ == "__main__":
    sys.exit(main())
