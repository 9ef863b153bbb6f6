"""The array NSGA-II loop (moweights.weighting.nsga2) against pymoo's own, in one process.

``nsga2`` must draw every random number as pymoo's ``minimize(problem, NSGA2(...))``
does, so the same seed gives the same final front, bit for bit, and the same
per-generation fronts and evaluation counts: compared here on the weighting criteria
and on a toy problem, across population sizes (odd, tiny), one to four objectives,
crossover and mutation probabilities at their extremes (where duplicates force extra
mating rounds, and where no unique offspring can be made at all), a given initial
population with duplicates, and both terminations the loop runs.
"""

from __future__ import annotations

import numpy as np
import pytest
from pymoo.core.problem import Problem
from pymoo.termination.max_eval import MaximumFunctionCallTermination
from pymoo.termination.max_gen import MaximumGenerationTermination

from moweights.data import make_weighting_benchmark
from moweights.weighting.criteria import Criteria, parse_objectives
from moweights.weighting.nsga2 import native_termination, nsga2, pymoo_nsga2
from moweights.weighting.problem import WeightingProblem
from rankers.preprocessing import minmax_scale


class _Linear(Problem):
    """Objectives ``X @ R`` plus a quadratic pull: conflicting, cheap, vectorised."""

    def __init__(self, n_var: int, n_obj: int, seed: int):
        rng = np.random.default_rng(seed)
        self.R = rng.normal(size=(n_var, n_obj))
        self.c = rng.uniform(size=(n_obj, n_var))
        super().__init__(n_var=n_var, n_obj=n_obj, xl=np.zeros(n_var), xu=np.ones(n_var))

    def _evaluate(self, X, out, *args, **kwargs):
        out["F"] = X @ self.R + ((X[:, None, :] - self.c[None]) ** 2).sum(axis=2)


def _weighting(objectives):
    X, y = make_weighting_benchmark(60, random_state=0)
    X = X.loc[:, X.nunique() > 1].to_numpy(dtype=float)
    parsed = parse_objectives(objectives)
    criteria = Criteria(minmax_scale(X), y, tuple(k for k, _ in parsed))
    return WeightingProblem(criteria, parsed)


def _both(problem, **settings):
    runs = []
    for solver in (nsga2, pymoo_nsga2):
        fronts, evals = [], []

        def record(F, n_eval, fronts=fronts, evals=evals):
            fronts.append(F.copy())
            evals.append(n_eval)

        X, F = solver(problem, on_generation=record, **settings)
        runs.append((X, F, fronts, evals))
    return runs


def _assert_same(runs):
    (X, F, fronts, evals), (X0, F0, fronts0, evals0) = runs
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(F, F0)
    assert evals == evals0
    assert len(fronts) == len(fronts0)
    for a, b in zip(fronts, fronts0, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    ("objectives", "pop_size", "crossover", "mutation", "termination", "seed"),
    [
        (("C1", "-C2", "-C3"), 40, 0.9, 1 / 8, ("n_gen", 40), 0),
        (("C1", "-C2", "-C3"), 11, 0.7, 0.2, ("n_eval", 157), 1),
        (("C4",), 12, 0.9, None, ("n_gen", 15), 2),
        (("C1", "-C2", "-C3", "C4"), 9, 1.0, 1.0, ("n_gen", 12), 3),
        (("-C3",), 4, 0.0, 0.05, ("n_gen", 20), 4),
        (("C1", "-C2"), 20, 0.9, 0.0, ("n_gen", 25), 5),
    ],
)
def test_same_fronts_as_pymoo_on_the_criteria(
    objectives, pop_size, crossover, mutation, termination, seed
):
    problem = _weighting(objectives)
    settings = dict(
        pop_size=pop_size,
        crossover_prob=crossover,
        mutation_prob=1.0 / problem.n_var if mutation is None else mutation,
        seed=seed,
    )
    runs = _both(problem, termination=termination, **settings)
    _assert_same(runs)
    assert runs[0][3][-1] >= (termination[1] if termination[0] == "n_eval" else 0)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(("n_var", "n_obj", "pop_size"), [(3, 2, 10), (25, 3, 31), (6, 5, 16)])
def test_same_fronts_as_pymoo_on_a_toy_problem(seed, n_var, n_obj, pop_size):
    problem = _Linear(n_var, n_obj, seed)
    settings = dict(pop_size=pop_size, crossover_prob=0.9, mutation_prob=1.0 / n_var, seed=seed)
    _assert_same(_both(problem, termination=("n_gen", 30), **settings))


def test_a_given_population_with_duplicates():
    problem = _weighting(("C1", "-C2", "-C3"))
    rng = np.random.default_rng(7)
    start = rng.uniform(size=(16, problem.n_var))
    start[5] = start[2]  # pymoo's initialisation drops the copy
    start[9] = 0.0
    settings = dict(pop_size=16, crossover_prob=0.9, mutation_prob=0.1, seed=7)
    runs = _both(problem, termination=("n_gen", 10), sampling=start, **settings)
    _assert_same(runs)
    assert runs[0][3][0] == 15  # the duplicate was not evaluated


def test_no_unique_offspring_ends_the_search_as_pymoo_does():
    # neither crossover nor mutation: every child is a copy of a parent, so no mating
    # round yields a new individual and pymoo stops after one more survival
    problem = _Linear(4, 2, 0)
    settings = dict(pop_size=8, crossover_prob=0.0, mutation_prob=0.0, seed=0)
    runs = _both(problem, termination=("n_gen", 50), **settings)
    _assert_same(runs)
    assert len(runs[0][2]) == 2 and runs[0][3] == [8, 8]


def test_native_terminations():
    assert native_termination(("n_gen", 100)) == ("n_gen", 100.0)
    assert native_termination(("n_iter", 7)) == ("n_gen", 7.0)
    assert native_termination(("n_evals", 500)) == ("n_eval", 500.0)
    assert native_termination(MaximumGenerationTermination(12)) == ("n_gen", 12.0)
    assert native_termination(MaximumFunctionCallTermination(90)) == ("n_eval", 90.0)
    for other in [("time", 5.0), ("n_gen", True), ("n_gen", float("nan")), ("moo",), "n_gen"]:
        assert native_termination(other) is None


def test_another_termination_runs_pymoos_loop_to_the_same_front():
    # a termination the array loop does not run goes through pymoo's minimize; one that
    # stops at the same generation gives the same front as the loop's
    from pymoo.core.termination import TerminateIfAny

    from moweights.weighting import MOWeighting

    X, y = make_weighting_benchmark(60, random_state=1)
    X = X.loc[:, X.nunique() > 1]
    either = TerminateIfAny(MaximumGenerationTermination(9), MaximumFunctionCallTermination(10**6))
    a = MOWeighting(pop_size=10, termination=either, random_state=0).fit(X, y)
    b = MOWeighting(pop_size=10, n_gen=9, random_state=0).fit(X, y)
    assert len(a.history_) == 9
    np.testing.assert_array_equal(a.pareto_weights_, b.pareto_weights_)
    np.testing.assert_array_equal(a.history_, b.history_)


# --- the operators, each against pymoo's own function (same draws, same bits) ---------


def _bounded(n_var: int, kind: str) -> Problem:
    """A problem that only carries bounds: unit, per-variable, or with a fixed variable."""
    rng = np.random.default_rng(n_var)
    if kind == "unit":
        xl, xu = np.zeros(n_var), np.ones(n_var)
    else:
        xl = rng.uniform(-3.0, 0.0, n_var)
        xu = xl + rng.uniform(0.5, 4.0, n_var)
        if kind == "fixed":
            xu[1] = xl[1]
    return Problem(n_var=n_var, n_obj=2, xl=xl, xu=xu)


def _parents(problem: Problem, n_matings: int, rng) -> np.ndarray:
    """``(2, n_matings, n_var)`` parents in bounds, with the awkward cases SBX skips or
    clamps: identical pairs, pairs closer than its 1e-14, values on the bounds."""
    xl, xu = problem.xl, problem.xu
    P = xl + (xu - xl) * rng.uniform(size=(2, n_matings, problem.n_var))
    P[1, 0] = P[0, 0]  # identical parents
    P[1, 1, :3] = P[0, 1, :3] + 1e-15  # too close on three variables
    P[0, 2] = xl  # on the bounds
    P[1, 2] = xu
    P[:, 3, 0] = xl[0]
    return P


@pytest.mark.parametrize("kind", ["unit", "box", "fixed"])
@pytest.mark.parametrize("seed", range(4))
def test_sbx_is_pymoos(kind, seed):
    from pymoo.operators.crossover.sbx import SBX

    from moweights.weighting.nsga2 import _Operators, _sbx

    problem = _bounded(7, kind)
    P = _parents(problem, 9, np.random.default_rng(seed))
    for prob_exch in (1.0, 0.5):  # pymoo's NSGA2 uses 1.0; the other branch too
        ops = _Operators(problem, 0.9, 0.2)
        ops.prob_exch = prob_exch
        ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
        Q = _sbx(ops, P.copy(), ours)
        Q0 = SBX(prob=0.9, prob_exch=prob_exch)._do(problem, P.copy(), random_state=theirs)
        np.testing.assert_array_equal(Q, Q0)
        assert np.signbit(Q).tolist() == np.signbit(Q0).tolist()
        assert ours.random() == theirs.random()  # as many draws
        assert ((problem.xl <= Q) & (problem.xu >= Q)).all()


@pytest.mark.parametrize("kind", ["unit", "box", "fixed"])
@pytest.mark.parametrize("prob_var", [0.0, 0.1, 1.0])
def test_pm_is_pymoos(kind, prob_var):
    from pymoo.operators.mutation.pm import PM

    from moweights.weighting.nsga2 import _Operators, _pm

    problem = _bounded(6, kind)
    X = _parents(problem, 12, np.random.default_rng(3)).reshape(-1, 6)
    X[5, 2] = problem.xl[2] - 1.0  # out of bounds (a given start population may be)
    ops = _Operators(problem, 0.9, prob_var)
    for seed in range(3):
        ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
        Y = _pm(ops, X.copy(), ours)
        Y0 = PM(prob=1.0, prob_var=prob_var)._do(problem, X.copy(), random_state=theirs)
        np.testing.assert_array_equal(Y, Y0)
        assert np.signbit(Y).tolist() == np.signbit(Y0).tolist()
        assert ours.random() == theirs.random()


def test_crowding_is_pymoos():
    from pymoo.operators.survival.rank_and_crowding.metrics import get_crowding_function

    from moweights.weighting.nsga2 import _crowding

    pymoo_cd = get_crowding_function("cd")
    rng = np.random.default_rng(0)
    for _ in range(40):
        sizes = rng.integers(1, 9, size=rng.integers(1, 6))
        n_obj = int(rng.integers(1, 5))
        # coarse values: ties within a front and across fronts
        F = rng.integers(0, 4, size=(sizes.sum(), n_obj)).astype(float) / 3
        if rng.random() < 0.3:
            F[:, 0] = 0.25  # one objective constant everywhere
        F[: sizes[0]] *= -1.0  # -0.0 next to 0.0
        front = np.repeat(np.arange(len(sizes)), sizes)
        expected = np.concatenate(
            [pymoo_cd.do(F[front == k], n_remove=0) for k in range(len(sizes))]
        )
        np.testing.assert_array_equal(_crowding(F, front, sizes), expected)


def test_duplicate_elimination_is_pymoos():
    from pymoo.core.duplicate import DefaultDuplicateElimination
    from pymoo.core.population import Population

    from moweights.weighting.nsga2 import _Operators, _unique

    rng = np.random.default_rng(1)
    others = rng.uniform(size=(10, 5))
    new = rng.uniform(size=(12, 5))
    new[1] = others[4]  # a copy of an old row
    new[3] = new[2]  # a copy of an earlier new row
    others[6, 2] = 0.3
    new[5] = others[6]
    new[5, 2] = np.nextafter(0.3, 1.0)  # one ulp (5.6e-17) away: within 1e-16
    new[7] = others[7]
    new[7, 0] += 1e-15  # ten times farther: kept
    new[8] = new[0]
    new[9, :] = 0.0  # with a -0.0 twin
    new[10, :] = -0.0
    ops = _Operators(Problem(n_var=5, n_obj=1, xl=0.0, xu=1.0), 0.9, 0.2)
    ours = _unique(ops, new, others)
    pop = DefaultDuplicateElimination().do(Population.new(X=new), Population.new(X=others))
    np.testing.assert_array_equal(ours, pop.get("X"))
    assert len(ours) == 12 - 5  # rows 1, 3, 5, 8 and 10 went
    # against nothing (the initial population) and with nothing to drop
    alone = DefaultDuplicateElimination().do(Population.new(X=new))
    np.testing.assert_array_equal(_unique(ops, new, np.empty((0, 5))), alone.get("X"))
    np.testing.assert_array_equal(_unique(ops, others, new[:0]), others)


class _Boxed(_Linear):
    """The toy problem on a box other than [0, 1]^n, one variable fixed."""

    def __init__(self, n_var: int, n_obj: int, seed: int):
        super().__init__(n_var, n_obj, seed)
        rng = np.random.default_rng(seed + 100)
        self.xl = rng.uniform(-2.0, 0.0, n_var)
        self.xu = self.xl + rng.uniform(0.5, 3.0, n_var)
        self.xu[0] = self.xl[0]


@pytest.mark.parametrize("seed", range(3))
def test_same_fronts_as_pymoo_on_zdt1_and_on_a_box(seed):
    from pymoo.problems import get_problem

    zdt1 = get_problem("zdt1", n_var=12)
    settings = dict(pop_size=24, crossover_prob=0.9, mutation_prob=1 / 12, seed=seed)
    _assert_same(_both(zdt1, termination=("n_gen", 40), **settings))
    settings["mutation_prob"] = 0.2
    _assert_same(_both(_Boxed(8, 3, seed), termination=("n_gen", 25), **settings))
