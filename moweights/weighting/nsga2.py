"""NSGA-II on whole-population arrays: pymoo's algorithm without its per-individual objects.

pymoo's ``NSGA2`` keeps the population as an array of ``Individual`` objects and reads
and writes every attribute one individual at a time (``Population.get`` loops over
them): on the default demo (40 individuals, 30 weights, 100 generations) that
bookkeeping cost several times the objectives themselves. :func:`nsga2` runs the same
algorithm on plain arrays (the population's weights ``X``, objectives ``F``, ranks and
crowding distances), calling pymoo's own operators where they work on arrays: SBX
crossover and polynomial mutation (``SBX._do``, ``PM._do``), non-dominated sorting
(``NonDominatedSorting``), the crowding distance and the randomised argsort of
``RankAndCrowding``, duplicate elimination (``DefaultDuplicateElimination``'s
distance and tolerance), the random permutations of the tournament. Only the loops are ours: the
binary tournament (vectorised), the mating loop that refills duplicates, survival.

Every random number is drawn from the same generator, in the same order and by the same
calls as pymoo 0.6's ``minimize(problem, NSGA2(...), termination, seed=seed)``, so the
same seed gives the same Pareto set, bit for bit (``tests/moweights/test_nsga2.py``
compares the two on many settings; ``test_weighting_pinned.py`` pins fronts computed
with pymoo's loop). Terminations other than a number of generations or of evaluations
run pymoo's own loop (:func:`pymoo_nsga2`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from numbers import Real

import numpy as np
from pymoo.core.duplicate import DefaultDuplicateElimination
from pymoo.operators.crossover.sbx import SBX
from pymoo.operators.mutation.pm import PM
from pymoo.operators.survival.rank_and_crowding.metrics import get_crowding_function
from pymoo.util.misc import cdist, random_permutations
from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting
from pymoo.util.randomized_argsort import randomized_argsort

__all__ = ["native_termination", "nsga2", "pymoo_nsga2"]

#: mating rounds per generation before giving up on unique offspring (pymoo's
#: ``InfillCriterion.n_max_iterations`` for genetic algorithms)
_MAX_MATING_ROUNDS = 100

#: pymoo's names of the terminations :func:`nsga2` runs itself
_KINDS = {"n_gen": "n_gen", "n_iter": "n_gen", "n_eval": "n_eval", "n_evals": "n_eval"}

#: called after every generation with the non-dominated objective values and the
#: number of evaluations so far
OnGeneration = Callable[[np.ndarray, int], None]


def native_termination(termination) -> tuple[str, float] | None:
    """``("n_gen", k)`` or ``("n_eval", k)`` when :func:`nsga2` runs ``termination``.

    pymoo's tuples ``("n_gen", k)`` / ``("n_iter", k)`` and ``("n_eval", k)`` /
    ``("n_evals", k)`` and its ``MaximumGenerationTermination`` /
    ``MaximumFunctionCallTermination`` objects; None for any other termination.
    """
    from pymoo.termination.max_eval import MaximumFunctionCallTermination
    from pymoo.termination.max_gen import MaximumGenerationTermination

    if type(termination) is MaximumGenerationTermination:
        termination = ("n_gen", termination.n_max_gen)
    elif type(termination) is MaximumFunctionCallTermination:
        termination = ("n_eval", termination.n_max_evals)
    if not isinstance(termination, tuple) or len(termination) != 2:
        return None
    kind = _KINDS.get(termination[0]) if isinstance(termination[0], str) else None
    limit = termination[1]
    if kind is None or isinstance(limit, bool) or not isinstance(limit, Real) or limit != limit:
        return None
    return kind, float(limit)


class _Operators:
    """pymoo's NSGA-II operators, applied to arrays."""

    def __init__(self, problem, crossover_prob: float, mutation_prob: float):
        self.problem = problem
        self.crossover = SBX(prob=crossover_prob)
        self.crossover_prob = float(crossover_prob)
        self.mutation = PM(prob=1.0, prob_var=mutation_prob)
        # pymoo's default duplicate elimination: its tolerance, applied by _unique
        self.epsilon = DefaultDuplicateElimination().epsilon
        self.sorting = NonDominatedSorting()
        self.crowding = get_crowding_function("cd")


def nsga2(
    problem,
    *,
    pop_size: int,
    crossover_prob: float,
    mutation_prob: float,
    termination: tuple[str, float],
    seed: int,
    sampling: np.ndarray | None = None,
    evaluate: Callable[[np.ndarray], np.ndarray] | None = None,
    on_generation: OnGeneration | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Run NSGA-II as pymoo's ``NSGA2`` does, on arrays; the final non-dominated set.

    Parameters
    ----------
    problem : pymoo Problem
        Supplies ``n_var``, ``xl`` and ``xu`` (the operators' bounds) and, unless
        ``evaluate`` is given, ``problem.evaluate``.
    pop_size : int
        Population size (and offspring per generation).
    crossover_prob : float
        Probability that a mating applies SBX crossover (``SBX(prob=...)``).
    mutation_prob : float
        Per-variable probability of polynomial mutation (``PM(prob=1, prob_var=...)``).
    termination : ("n_gen", k) or ("n_eval", k)
        Stop after ``k`` generations or once ``k`` evaluations are done, as pymoo's
        terminations do (see :func:`native_termination`).
    seed : int
        pymoo's ``seed``: the one generator every random number is drawn from.
    sampling : ndarray of shape (pop_size, n_var), optional
        The initial population; None = pymoo's uniform random sampling.
    evaluate : callable, optional
        ``X (P, n_var) -> F (P, n_obj)``, float64; the problem's values without pymoo's
        per-call wrapping (default: ``problem.evaluate``).
    on_generation : callable, optional
        ``(F_front, n_eval)`` after each generation (pymoo's callback moment).

    Returns
    -------
    X, F : ndarray
        Weights and objective values of the last population's first front, in
        population order (pymoo's ``res.X`` and ``res.F``).
    """
    kind, limit = termination
    evaluate = problem.evaluate if evaluate is None else evaluate
    rs = np.random.default_rng(seed)
    ops = _Operators(problem, crossover_prob, mutation_prob)

    if sampling is None:  # pymoo's FloatRandomSampling
        X = rs.random((pop_size, problem.n_var))
        X = problem.xl + (problem.xu - problem.xl) * X
    else:
        X = np.array(np.atleast_2d(sampling), dtype=np.float64)
    X = _unique(ops, X, np.empty((0, X.shape[1])))  # Initialization drops duplicates
    F = np.asarray(evaluate(X), dtype=np.float64)
    n_eval = len(X)
    pop, rank, crowd = _survive(ops, F, len(X), rs)
    X, F = X[pop], F[pop]
    n_gen = 1
    _report(on_generation, F, rank, n_eval)
    while not _done(kind, limit, n_gen, n_eval):
        Xo = _offspring(ops, X, F, crowd, pop_size, rs)
        if len(Xo) == 0:  # no unique offspring: pymoo forces termination after survival
            pop, rank, crowd = _survive(ops, F, pop_size, rs)
            X, F = X[pop], F[pop]
            _report(on_generation, F, rank, n_eval)
            break
        Fo = np.asarray(evaluate(Xo), dtype=np.float64)
        n_eval += len(Xo)
        X, F = np.concatenate([X, Xo]), np.concatenate([F, Fo])
        pop, rank, crowd = _survive(ops, F, pop_size, rs)
        X, F = X[pop], F[pop]
        n_gen += 1
        _report(on_generation, F, rank, n_eval)
    front = rank == 0
    return X[front], F[front]


def _done(kind: str, limit: float, n_gen: int, n_eval: int) -> bool:
    return (n_gen if kind == "n_gen" else n_eval) >= limit


def _report(on_generation, F, rank, n_eval) -> None:
    if on_generation is not None:
        on_generation(F[rank == 0], n_eval)


def _survive(ops: _Operators, F: np.ndarray, n_survive: int, rs):
    """RankAndCrowding: survivors' indices, their front index and crowding distance."""
    n_survive = min(n_survive, len(F))
    fronts = ops.sorting.do(F, n_stop_if_ranked=n_survive)
    survivors, ranks, crowding = [], [], []
    n_kept = 0
    for k, front in enumerate(fronts):
        if n_kept + len(front) > n_survive:
            n_remove = n_kept + len(front) - n_survive
            cd = ops.crowding.do(F[front, :], n_remove=n_remove)
            keep = randomized_argsort(cd, order="descending", method="numpy", random_state=rs)
            keep = keep[:-n_remove]
        else:
            cd = ops.crowding.do(F[front, :], n_remove=0)
            keep = slice(None)
        survivors.append(front[keep])
        crowding.append(cd[keep])
        ranks.append(np.full(len(survivors[-1]), k))
        n_kept += len(survivors[-1])
    return np.concatenate(survivors), np.concatenate(ranks), np.concatenate(crowding)


def _offspring(ops: _Operators, X, F, crowd, n_offsprings: int, rs) -> np.ndarray:
    """pymoo's mating loop: select, cross, mutate; drop duplicates; repeat until full."""
    off = np.empty((0, X.shape[1]))
    for _ in range(_MAX_MATING_ROUNDS):
        n_remaining = n_offsprings - len(off)
        new = _mate(ops, X, F, crowd, n_remaining, rs)
        new = _unique(ops, new, np.concatenate([X, off]))
        off = np.concatenate([off, new[:n_remaining]])
        if len(off) >= n_offsprings:
            break
    return off


def _unique(ops: _Operators, new: np.ndarray, others: np.ndarray) -> np.ndarray:
    """``DefaultDuplicateElimination.do(new, *others)`` in one pass: the rows of ``new``
    farther than ``epsilon`` (Euclidean) from every earlier row of ``new`` and from every
    row of ``others``, in order. pymoo filters against each set in turn; whether a row
    goes depends only on that row, so one mask gives the same rows."""
    if len(new) == 0:
        return new
    dup = np.tril(cdist(new, new) <= ops.epsilon, k=-1).any(axis=1)
    if len(others):
        dup |= (cdist(new, others) <= ops.epsilon).any(axis=1)
    return new[~dup]


def _mate(ops: _Operators, X, F, crowd, n_offsprings: int, rs) -> np.ndarray:
    """One round: tournament selection, SBX crossover, polynomial mutation."""
    n_matings = math.ceil(n_offsprings / 2)
    parents = _tournament(X, F, crowd, n_matings, rs)
    P = np.swapaxes(X[parents], 0, 1)  # (2, n_matings, n_var), as Crossover.do builds it
    # Crossover.do: which matings cross, SBX on all of them, the parents where none
    cross = rs.random(n_matings) < np.full(n_matings, ops.crossover_prob)
    Xp = np.empty(P.shape)
    if cross.any():
        Q = ops.crossover._do(ops.problem, P, random_state=rs)
        Xp[:, cross] = Q[:, cross]
    Xp[:, ~cross] = P[:, ~cross]
    Xp = Xp.reshape(-1, P.shape[-1])
    # Mutation.do: PM on all, kept where a draw is below prob (1.0: everywhere)
    Xm = ops.mutation._do(ops.problem, Xp, random_state=rs)
    mutate = rs.random(size=len(Xp)) <= np.full(len(Xp), 1.0)
    Xp[mutate] = Xm[mutate]
    return Xp


def _tournament(X, F, crowd, n_matings: int, rs) -> np.ndarray:
    """NSGA-II's binary tournament (dominance, then crowding), vectorised.

    The same as pymoo's ``binary_tournament`` with ``comp_by_dom_and_crowding``: a
    dominating individual wins, otherwise the larger crowding distance, otherwise a
    random one of the two, drawn by ``rs.choice`` in tournament order as pymoo does.
    """
    n_select = n_matings * 2
    n_random = n_select * 2
    n_perms = math.ceil(n_random / len(X))
    P = random_permutations(n_perms, len(X), random_state=rs)[:n_random]
    P = np.reshape(P, (n_select, 2))
    a, b = P[:, 0], P[:, 1]
    a_less = (F[a] < F[b]).any(axis=1)
    b_less = (F[b] < F[a]).any(axis=1)
    S = np.where(a_less & ~b_less, a, np.where(b_less & ~a_less, b, -1))
    open_ = S < 0
    ca, cb = crowd[a], crowd[b]
    S = np.where(open_ & (ca > cb), a, np.where(open_ & (ca < cb), b, S))
    for i in np.flatnonzero(S < 0):
        S[i] = rs.choice([a[i], b[i]])
    return np.reshape(S, (n_matings, 2))


def pymoo_nsga2(
    problem,
    *,
    pop_size: int,
    crossover_prob: float,
    mutation_prob: float,
    termination,
    seed: int,
    sampling: np.ndarray | None = None,
    on_generation: OnGeneration | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The same search through pymoo's ``minimize`` and ``NSGA2`` (any termination)."""
    from pymoo.algorithms.moo.nsga2 import NSGA2
    from pymoo.core.callback import Callback
    from pymoo.optimize import minimize

    class _Forward(Callback):
        def notify(self, algorithm):
            if on_generation is not None:
                F = np.array(algorithm.opt.get("F"), dtype=np.float64)
                on_generation(F, int(algorithm.evaluator.n_eval))

    extra = {} if sampling is None else {"sampling": sampling}
    algorithm = NSGA2(
        pop_size=int(pop_size),
        crossover=SBX(prob=float(crossover_prob)),
        mutation=PM(prob=1.0, prob_var=float(mutation_prob)),
        **extra,
    )
    result = minimize(problem, algorithm, termination, seed=seed, callback=_Forward())
    return np.atleast_2d(result.X), np.atleast_2d(result.F)
