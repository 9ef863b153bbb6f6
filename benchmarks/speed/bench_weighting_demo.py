"""NSGA-II's bookkeeping on the default demo: three loops side by side, same fronts.

The default demo (``examples/config.toml``) fits the NSGA-II weighting (breast cancer,
569 x 30, 40 individuals x 100 generations) on all rows and on each of 10 training
folds. Three loops run the same search with the same seed (``moweights.weighting.nsga2``):

* ``ours``: ``nsga2`` as installed, whole-population arrays and our vectorised copies
  of pymoo's SBX, polynomial mutation, crowding distance and duplicate elimination;
* ``ours+pymoo_ops``: the same loop calling pymoo's own operators instead (``SBX._do``,
  ``PM._do``, ``calc_crowding_distance`` front by front, two scipy ``cdist`` for the
  duplicates): the array loop as first written for issue 39 (commit aa622aa), swapped in
  through our module's attributes (pymoo is not touched);
* ``pymoo``: ``pymoo_nsga2``, pymoo's ``minimize`` with ``NSGA2`` (the code before issue
  39), whose ``Population`` of ``Individual`` objects is read one individual at a time.

Sections (each alternates the loops, repeat after repeat):

1. ``fit``: the demo's weighting search alone, in this process: CPU seconds of the whole
   search, of the objectives (the criteria's matrix products) and of everything else
   (selection, crossover, mutation, duplicate elimination, sorting, survival: the
   "bookkeeping"), their ratio, the number of ``Individual.get`` calls (one profiled run
   each), and whether the fronts of the three are identical.
2. ``profile``: the top functions of one profiled fit with each loop.
3. ``demo``: the whole demo from the command line under ``/usr/bin/time -v`` (user +
   system CPU, wall, peak RSS), each loop swapped in in the child process, ``--no-cache``,
   one BLAS thread.
4. ``rates`` (``--rates``): the multiply-add rates behind
   ``moweights.weighting.width.search_seconds``, measured at 200 x 5,000.

CPU time (not wall) is the measure: the machine is shared. The load (``os.getloadavg``)
is printed before and after.

    python -m benchmarks.speed.bench_weighting_demo --out benchmarks/results/weighting_demo.md
    python -m benchmarks.speed.bench_weighting_demo --skip-demo --repeat 5   # the fit only
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import platform
import pstats
import re
import subprocess
import sys
import tempfile
from pathlib import Path

_ONE_THREAD = {k: "1" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
os.environ.update(_ONE_THREAD)  # before numpy loads its BLAS (_common imports it)

import numpy as np  # noqa: E402

from benchmarks._common import cpu_seconds, rows_markdown_4g  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

LOOPS = ("ours", "ours+pymoo_ops", "pymoo")

# pymoo's own operators in our loop (run by this process and by the demo's child): the
# loop's module names for its operators are pointed at thin calls of pymoo's functions
_PYMOO_OPERATORS = """
def use_pymoo_operators():
    from types import SimpleNamespace

    import numpy as np
    from pymoo.operators.crossover.sbx import SBX
    from pymoo.operators.mutation.pm import PM
    from pymoo.operators.survival.rank_and_crowding.metrics import get_crowding_function
    from pymoo.util.misc import cdist

    import moweights.weighting.nsga2 as loop

    crowding = get_crowding_function("cd")

    def bounds(ops):
        return SimpleNamespace(xl=ops.xl, xu=ops.xu, n_var=len(ops.xl))

    def sbx(ops, P, rs):
        return SBX(prob=ops.crossover_prob)._do(bounds(ops), P, random_state=rs)

    def pm(ops, X, rs):
        return PM(prob=1.0, prob_var=ops.prob_var_m)._do(bounds(ops), X, random_state=rs)

    def crowd(F, front, sizes):
        return np.concatenate(
            [crowding.do(F[front == k], n_remove=0) for k in range(len(sizes))]
        )

    def unique(ops, new, others):
        if len(new) == 0:
            return new
        dup = np.tril(cdist(new, new) <= ops.epsilon, k=-1).any(axis=1)
        if len(others):
            dup |= (cdist(new, others) <= ops.epsilon).any(axis=1)
        return new[~dup]

    loop._sbx, loop._pm, loop._crowding, loop._unique = sbx, pm, crowd, unique
"""
exec(_PYMOO_OPERATORS)

# the children that run the demo: as installed, with pymoo's operators in our loop, or
# with pymoo's loop (the ranker module's name for the loop pointed at pymoo_nsga2, which
# takes no ``evaluate``: pymoo calls problem.evaluate)
_MAIN = """
from moweights.cli import main
sys.exit(main(sys.argv[1:]))
"""
_CHILDREN = {
    "ours": "import sys\n" + _MAIN,
    "ours+pymoo_ops": "import sys\n" + _PYMOO_OPERATORS + "use_pymoo_operators()\n" + _MAIN,
    "pymoo": """
import sys
import moweights.weighting.ranker as ranker
from moweights.weighting.nsga2 import pymoo_nsga2
ranker.nsga2 = lambda problem, evaluate=None, **settings: pymoo_nsga2(problem, **settings)
"""
    + _MAIN,
}


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f}, {five:.2f}, {fifteen:.2f}"


def _problem(seed_rows: bool = False):
    from sklearn.datasets import load_breast_cancer

    from moweights.weighting.criteria import Criteria, parse_objectives
    from moweights.weighting.problem import WeightingProblem
    from rankers.preprocessing import minmax_scale

    X, y = load_breast_cancer(return_X_y=True)
    objectives = parse_objectives(["C1", "-C2", "-C3"])
    criteria = Criteria(minmax_scale(X), y, tuple(k for k, _ in objectives))
    return criteria, objectives, WeightingProblem(criteria, objectives)


class _Timed:
    """CPU seconds spent in the criteria, however the loop reaches them."""

    def __init__(self, criteria, objectives):
        self.criteria, self.objectives, self.seconds = criteria, objectives, 0.0

    def __call__(self, X):
        start = cpu_seconds()
        F = self.criteria.evaluate(X, self.objectives)
        self.seconds += cpu_seconds() - start
        return F


def _search(loop: str, seed: int):
    """One search with ``loop``: its front, its CPU seconds and the objectives' share
    (the data and the criteria are prepared outside the timed part)."""
    from moweights.weighting import nsga2 as module
    from moweights.weighting.problem import WeightingProblem

    criteria, objectives, problem = _problem()
    timed = _Timed(criteria, objectives)
    settings = dict(pop_size=40, crossover_prob=0.9, mutation_prob=1 / 30, seed=seed)
    if loop == "pymoo":

        class _TimedProblem(WeightingProblem):
            def _evaluate(self, X, out, *args, **kwargs):
                out["F"] = timed(X)

        problem = _TimedProblem(criteria, objectives)
        start = cpu_seconds()
        front = module.pymoo_nsga2(problem, termination=("n_gen", 100), **settings)
        return front, cpu_seconds() - start, timed.seconds
    names = ("_sbx", "_pm", "_crowding", "_unique")
    saved = {name: getattr(module, name) for name in names}
    if loop == "ours+pymoo_ops":
        use_pymoo_operators()  # noqa: F821 (defined by exec above)
    try:
        start = cpu_seconds()
        front = module.nsga2(problem, termination=("n_gen", 100), evaluate=timed, **settings)
        return front, cpu_seconds() - start, timed.seconds
    finally:
        for name, function in saved.items():
            setattr(module, name, function)


def _get_calls(loop: str) -> tuple[int, str]:
    profile = cProfile.Profile()
    profile.enable()
    _search(loop, 0)
    profile.disable()
    stats = pstats.Stats(profile)
    calls = sum(
        v[1]
        for (file, _, name), v in stats.stats.items()
        if name == "get" and file.endswith(os.path.join("core", "individual.py"))
    )
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(12)
    lines = [line for line in text.getvalue().splitlines() if line.strip()]
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("ncalls"))
    body = [re.sub(r"\S*site-packages/", "", line) for line in lines[start : start + 13]]
    return calls, "\n".join(body).replace(str(ROOT) + "/", "")


def _rotations(repeat: int):
    """The loops' order in each repeat: rotated, so that none always runs first."""
    for r in range(repeat):
        yield r, LOOPS[r % len(LOOPS) :] + LOOPS[: r % len(LOOPS)]


def fit_section(repeat: int) -> tuple[list[dict], dict[str, str]]:
    rows = {loop: [] for loop in LOOPS}
    fronts = {}
    for loop in LOOPS:
        _search(loop, 0)  # warm-up: imports, BLAS
    for r, order in _rotations(repeat):
        for loop in order:
            front, total, objective = _search(loop, r)
            rows[loop].append((total, objective))
            fronts[(loop, r)] = front
    same = all(
        np.array_equal(fronts[(loop, r)][k], fronts[("pymoo", r)][k])
        for loop in LOOPS
        for r in range(repeat)
        for k in (0, 1)
    )
    out, profiles = [], {}
    for loop in LOOPS:
        totals = np.array([t for t, _ in rows[loop]])
        objective = np.array([o for _, o in rows[loop]])
        calls, profiles[loop] = _get_calls(loop)
        out.append(
            {
                "loop": loop,
                "search_cpu_s (median)": float(np.median(totals)),
                "objectives_cpu_s": float(np.median(objective)),
                "bookkeeping_cpu_s": float(np.median(totals - objective)),
                "bookkeeping / objectives": float(np.median((totals - objective) / objective)),
                "Individual.get calls": calls,
                "same fronts (all three)": same,
            }
        )
    ours = out[0]["search_cpu_s (median)"]
    for row in out:
        row["CPU / ours"] = row["search_cpu_s (median)"] / ours
    return out, profiles


def _time_demo(loop: str, out_dir: Path) -> dict:
    code = _CHILDREN[loop]
    config = str(ROOT / "examples" / "config.toml")
    argv = ["/usr/bin/time", "-v", sys.executable, "-c", code, "run", config, "-o",
            str(out_dir), "-q", "--no-cache"]  # fmt: skip
    env = {**os.environ, **_ONE_THREAD}
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT)
    if proc.returncode != 0:
        raise RuntimeError(f"the demo failed ({loop}):\n{proc.stderr[-2000:]}")

    def field(name: str) -> str:
        return re.search(rf"{re.escape(name)}: (.+)", proc.stderr).group(1).strip()

    wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")
    return {
        "cpu": float(field("User time (seconds)")) + float(field("System time (seconds)")),
        "wall": sum(float(v) * 60**i for i, v in enumerate(reversed(wall))),
        "rss_mb": float(field("Maximum resident set size (kbytes)")) / 1024,
    }


def demo_section(repeat: int) -> list[dict]:
    runs = {loop: [] for loop in LOOPS}
    with tempfile.TemporaryDirectory() as tmp:
        for r, order in _rotations(repeat):
            for loop in order:
                runs[loop].append(_time_demo(loop, Path(tmp) / f"{loop}{r}"))
                print(f"  demo {loop} #{r}: {runs[loop][-1]}", flush=True)
        same = all(
            (Path(tmp) / f"{loop}{r}" / name).read_bytes()
            == (Path(tmp) / f"pymoo{r}" / name).read_bytes()
            for loop in LOOPS
            for r in range(repeat)
            for name in ("scores.csv", "ranks.csv")
        )
    rows = []
    for loop in LOOPS:
        cpu = [run["cpu"] for run in runs[loop]]
        rows.append(
            {
                "loop": loop,
                "cpu_s (median)": float(np.median(cpu)),
                "cpu_s (each)": ", ".join(f"{c:.1f}" for c in cpu),
                "wall_s (median)": float(np.median([run["wall"] for run in runs[loop]])),
                "peak_rss_mb": float(np.max([run["rss_mb"] for run in runs[loop]])),
                "same scores.csv, ranks.csv (all three)": same,
            }
        )
    for row in rows:
        row["CPU / ours"] = row["cpu_s (median)"] / rows[0]["cpu_s (median)"]
    return rows


def rates_section() -> list[dict]:
    import warnings

    from moweights.weighting import MOWeighting
    from moweights.weighting.criteria import n_entropy_pairs
    from moweights.weighting.width import search_seconds

    rng = np.random.default_rng(0)
    m, n = 200, 5000
    y = rng.integers(0, 2, m)
    X = rng.normal(size=(m, n))
    X[:, :20] += y[:, None]
    rows = []
    cases = [
        ("C1,-C2,-C3", ["C1", "-C2", "-C3"], "single", (2, 12)),
        ("C4 single", ["C4"], "single", (2, 6)),
        ("C4 double", ["C4"], "double", (2, 6)),
    ]
    for label, objectives, precision, (few, many) in cases:
        cpu = []
        for n_gen in (few, many):
            est = MOWeighting(objectives=objectives, n_gen=n_gen, entropy_precision=precision,
                              preselect="all", random_state=0)  # fmt: skip
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                start = cpu_seconds()
                est.fit(X, y)
                cpu.append(cpu_seconds() - start)
        evals = 80 * (many - few)
        keys = [o.lstrip("-") for o in objectives]
        estimate = search_seconds(m, n, keys, n_entropy_pairs(m, 20000), evals, precision)
        rows.append(
            {
                "criteria": label,
                "shape": f"{m}x{n}",
                "evaluations": evals,
                "measured_cpu_s": cpu[1] - cpu[0],
                "search_seconds estimate": estimate,
                "estimate / measured": estimate / (cpu[1] - cpu[0]),
            }
        )
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="fits per loop (alternating)")
    parser.add_argument("--demo-repeat", type=int, default=3, help="demo runs per loop")
    parser.add_argument("--skip-demo", action="store_true", help="only the fit alone")
    parser.add_argument("--rates", action="store_true", help="also measure search_seconds' rates")
    parser.add_argument("--out", type=Path, help="write the results as Markdown here")
    args = parser.parse_args(argv)

    import pymoo

    sections = [
        "# NSGA-II's bookkeeping on the default demo: three loops, the same fronts (issue 39)",
        "",
        f"Command: `python -m {__spec__.name} {' '.join(argv or sys.argv[1:])}`  ",
        f"Versions: python {platform.python_version()}, numpy {np.__version__}, pymoo "
        f"{pymoo.__version__}; {platform.platform()}; {os.cpu_count()} CPUs (shared)  ",
        "Times: CPU seconds (user + system of this process, getrusage; user + system of "
        "/usr/bin/time -v for the demo), one BLAS thread.",
        "",
        f"Load average before: {_load()}",
    ]
    print("\n".join(sections), flush=True)
    fit, profiles = fit_section(args.repeat)
    block = [
        "",
        f"## The demo's weighting search alone (breast cancer 569 x 30, 40 x 100, "
        f"median of {args.repeat} seeds; data and criteria prepared outside the timing)",
        "",
        rows_markdown_4g(fit),
        "",
        "`bookkeeping` = the search's CPU minus the objectives' (selection, SBX, mutation, "
        "duplicate elimination, sorting, survival, the loop).",
    ]
    for loop in LOOPS:
        block += ["", f"Profile of one fit, `{loop}` (cProfile, top 12 by own time):", "",
                  "```", profiles[loop], "```"]  # fmt: skip
    print("\n".join(block), flush=True)
    sections += block
    if not args.skip_demo:
        demo = demo_section(args.demo_repeat)
        block = [
            "",
            f"## The default demo, `moweights run examples/config.toml -q --no-cache` "
            f"({args.demo_repeat} runs per loop, order rotated)",
            "",
            rows_markdown_4g(demo),
        ]
        print("\n".join(block), flush=True)
        sections += block
    if args.rates:
        block = ["", "## search_seconds' rates (200 x 5,000, 80 individuals)", "",
                 rows_markdown_4g(rates_section())]  # fmt: skip
        print("\n".join(block), flush=True)
        sections += block
    sections += ["", f"Load average after: {_load()}"]
    print(sections[-1])
    if args.out:
        args.out.write_text("\n".join(sections) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
