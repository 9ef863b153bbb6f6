"""NSGA-II on whole-population arrays: pymoo's algorithm without its per-individual objects.

pymoo's ``NSGA2`` keeps the population as an array of ``Individual`` objects and reads
and writes every attribute one individual at a time (``Population.get`` loops over
them): on the default demo (40 individuals, 30 weights, 100 generations) that
bookkeeping cost 14 times the objectives themselves. :func:`nsga2` runs the same
algorithm on plain arrays (the population's weights ``X``, objectives ``F``, ranks and
crowding distances) with pymoo's settings and pymoo's own non-dominated sorting
(``NonDominatedSorting``), randomised argsort and ``cdist``. pymoo's array operators
themselves spend most of their time in per-call overhead on arrays this small (SBX
alone cost more than a generation's objectives), so SBX crossover, polynomial mutation,
the crowding distance of all fronts and duplicate elimination are written here once
more, vectorised: the same formulas, the same floating-point operations and the same
random draws as pymoo's ``cross_sbx``, ``mut_pm``, ``calc_crowding_distance`` and
``DefaultDuplicateElimination``, in fewer numpy calls. The loops are ours too: the
binary tournament (vectorised), the mating loop that refills duplicates, survival.

Every random number is drawn from the same generator, in the same order and by the same
calls as pymoo 0.6's ``minimize(problem, NSGA2(...), termination, seed=seed)``, so the
same seed gives the same Pareto set, bit for bit (``tests/moweights/weighting/test_nsga2.py``
compares each operator with pymoo's function and whole searches with pymoo's loop on
many settings; ``test_weighting_pinned.py`` pins fronts computed with pymoo's loop;
``benchmarks/speed/bench_weighting_demo.py`` measures the bookkeeping). Terminations other
than a number of generations or of evaluations run pymoo's own loop (:func:`pymoo_nsga2`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from numbers import Real

import numpy as np
from pymoo.core.duplicate import DefaultDuplicateElimination
from pymoo.core.variable import get
from pymoo.operators.crossover.sbx import SBX
from pymoo.operators.mutation.pm import PM
from pymoo.util.misc import cdist
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
    """NSGA-II's operators with pymoo's settings, on whole-population arrays.

    The parameters are read from pymoo's own ``SBX``, ``PM`` and
    ``DefaultDuplicateElimination`` objects as ``NSGA2`` builds them; :func:`_sbx`,
    :func:`_pm` and :func:`_crowding` compute what pymoo's ``cross_sbx``, ``mut_pm`` and
    ``calc_crowding_distance`` compute, with the same draws and the same floating-point
    operations element by element (``tests/moweights/weighting/test_nsga2.py`` compares them with
    pymoo's functions, bit for bit).
    """

    def __init__(self, problem, crossover_prob: float, mutation_prob: float):
        crossover = SBX(prob=crossover_prob)
        mutation = PM(prob=1.0, prob_var=mutation_prob)
        self.crossover_prob = float(crossover_prob)
        self.eta_c, self.prob_var_c, self.prob_exch, self.prob_bin = (
            float(v)
            for v in get(crossover.eta, crossover.prob_var, crossover.prob_exch, crossover.prob_bin)
        )
        self.eta_m = float(get(mutation.eta))
        self.prob_var_m = float(get(mutation.prob_var))
        self.prob_m = float(get(mutation.prob))
        # pymoo's default duplicate elimination: its tolerance, applied by _unique
        self.epsilon = DefaultDuplicateElimination().epsilon
        self.sorting = NonDominatedSorting()
        self._earlier: dict[int, np.ndarray] = {}
        xl = np.asarray(problem.xl, dtype=np.float64)
        xu = np.asarray(problem.xu, dtype=np.float64)
        self.xl, self.xu = xl, xu
        self.fixed = xl == xu
        self.any_fixed = bool(self.fixed.any())
        # one bound for every variable: the masked bounds are that number (same bits)
        self.scalar_bounds = len(xl) > 0 and bool((xl == xl[0]).all() and (xu == xu[0]).all())

    def earlier(self, n: int) -> np.ndarray:
        """``(n, n)`` mask of the pairs (row, an earlier row)."""
        mask = self._earlier.get(n)
        if mask is None:
            mask = self._earlier[n] = np.tri(n, k=-1, dtype=bool)
        return mask

    def bounds(self, mask: np.ndarray) -> tuple:
        """The lower and upper bounds of the variables ``mask`` picks (rows x n_var)."""
        if self.scalar_bounds:
            return float(self.xl[0]), float(self.xu[0])
        shape = mask.shape
        return np.broadcast_to(self.xl, shape)[mask], np.broadcast_to(self.xu, shape)[mask]


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
    """RankAndCrowding: survivors' indices, their front index and crowding distance.

    Non-dominated sorting stops once ``n_survive`` individuals are ranked, so only the
    last front can be cut: by its crowding distance, ties broken by pymoo's randomised
    argsort. The crowding distances of all the fronts come from one :func:`_crowding`.
    """
    n_survive = min(n_survive, len(F))
    fronts = ops.sorting.do(F, n_stop_if_ranked=n_survive)
    sizes = np.array([len(front) for front in fronts])
    order = np.concatenate(fronts)
    rank = np.repeat(np.arange(len(fronts)), sizes)
    crowd = _crowding(F[order], rank, sizes)
    n_before = len(order) - sizes[-1]
    n_remove = len(order) - n_survive
    if n_remove > 0:
        keep = randomized_argsort(
            crowd[n_before:], order="descending", method="numpy", random_state=rs
        )
        keep = np.concatenate([np.arange(n_before), n_before + keep[:-n_remove]])
        order, rank, crowd = order[keep], rank[keep], crowd[keep]
    return order, rank, crowd


def _crowding(F: np.ndarray, front: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """pymoo's ``calc_crowding_distance`` of each front, for consecutive fronts at once.

    ``F`` holds the fronts one after the other (``front``: each row's front, ``sizes``:
    their lengths). Per front and objective: the values sorted stably (pymoo's mergesort),
    the gaps to the previous and next value (infinite at the ends) over the front's range
    (a range of 0 counts as no gap), summed over the objectives and divided by their
    number; a front of one or two points is infinitely far from everything (pymoo's
    ``FunctionalDiversity``). The same operations on the same values as pymoo's, so the
    same bits.
    """
    n, n_obj = F.shape
    if n == 0:
        return np.empty(0)
    ends = np.cumsum(sizes)
    starts = ends - sizes
    cols = np.arange(n_obj)
    # stable sort by value, then stably by front: each front sorted as mergesort sorts it
    by_value = np.argsort(F, axis=0, kind="stable")
    order = by_value[np.argsort(front[by_value], axis=0, kind="stable"), cols]
    S = F[order, cols]
    gap = np.empty((2, n, n_obj))  # to the previous value, to the next one
    step = S[1:] - S[:-1]
    gap[0, 1:] = step
    gap[1, :-1] = step
    gap[0, starts] = np.inf
    gap[1, ends - 1] = np.inf
    norm = S[ends - 1] - S[starts]  # max - min of each front
    norm[norm == 0] = np.nan
    gap /= np.repeat(norm, sizes, axis=0)
    gap[np.isnan(gap)] = 0.0
    summed = np.empty((n, n_obj))
    summed[order, cols] = gap[0] + gap[1]
    crowd = np.sum(summed, axis=1) / n_obj
    small = sizes <= 2
    if small.any():
        crowd[np.repeat(small, sizes)] = np.inf
    return crowd


def _offspring(ops: _Operators, X, F, crowd, n_offsprings: int, rs) -> np.ndarray:
    """pymoo's mating loop: select, cross, mutate; drop duplicates; repeat until full."""
    off = np.empty((0, X.shape[1]))
    for _ in range(_MAX_MATING_ROUNDS):
        n_remaining = n_offsprings - len(off)
        new = _mate(ops, X, F, crowd, n_remaining, rs)
        new = _unique(ops, new, np.concatenate([X, off]) if len(off) else X)
        off = np.concatenate([off, new[:n_remaining]]) if len(off) else new[:n_remaining]
        if len(off) >= n_offsprings:
            break
    return off


def _unique(ops: _Operators, new: np.ndarray, others: np.ndarray) -> np.ndarray:
    """``DefaultDuplicateElimination.do(new, *others)``: the rows of ``new`` farther than
    ``epsilon`` from every earlier row of ``new`` and from every row of ``others``, in order.

    pymoo filters against each set in turn; whether a row goes depends only on that row,
    so one mask gives the same rows. pymoo's test is scipy's Euclidean ``cdist`` at most
    ``epsilon`` (1e-16). Two rows that close have row sums within sqrt(n_var) x epsilon
    of each other (plus the sums' rounding), so only pairs whose sums are that close are
    compared: equal rows are duplicates, the others (rare) go through pymoo's ``cdist``.
    """
    n_new, n_var = new.shape
    if n_new == 0:
        return new
    pool = np.concatenate([others, new]) if len(others) else new
    sums = pool.sum(axis=1)
    # |sum a - sum b| <= sqrt(n) ||a - b||, and each sum is off by at most
    # n * 2^-52 * sum |x| (numpy's pairwise sum does better): a safe margin of both
    scale = float(np.abs(pool).sum(axis=1).max())
    margin = 2.0 * math.sqrt(n_var) * ops.epsilon + 4.0 * n_var * np.finfo(float).eps * scale
    close = np.abs(sums[-n_new:, None] - sums[None, :]) <= margin
    close[:, len(pool) - n_new :] &= ops.earlier(n_new)
    i, j = np.nonzero(close)
    if len(i) == 0:
        return new
    same = (new[i] == pool[j]).all(axis=1)
    dup = np.zeros(n_new, dtype=bool)
    dup[i[same]] = True
    for a, b in zip(i[~same], j[~same], strict=True):
        dup[a] |= bool(cdist(new[a : a + 1], pool[b : b + 1])[0, 0] <= ops.epsilon)
    return new[~dup] if dup.any() else new


def _mate(ops: _Operators, X, F, crowd, n_offsprings: int, rs) -> np.ndarray:
    """One round: tournament selection, SBX crossover, polynomial mutation."""
    n_matings = math.ceil(n_offsprings / 2)
    parents = _tournament(F, crowd, n_matings, rs)
    P = np.swapaxes(X[parents], 0, 1)  # (2, n_matings, n_var), as Crossover.do builds it
    # Crossover.do: which matings cross, SBX on all of them, the parents where none
    cross = rs.random(n_matings) < ops.crossover_prob
    if cross.any():  # pymoo runs SBX (and draws its numbers) only then
        Q = _sbx(ops, P, rs)
        if not cross.all():
            Q[:, ~cross] = P[:, ~cross]
    else:
        Q = P.copy()
    Xp = Q.reshape(-1, P.shape[-1])
    # Mutation.do: PM on all, kept where a draw is at most prob (1.0: everywhere)
    Xm = _pm(ops, Xp, rs)
    mutate = rs.random(size=len(Xp)) <= ops.prob_m
    if mutate.all():
        return Xm
    Xp[mutate] = Xm[mutate]
    return Xp


def _sbx(ops: _Operators, P: np.ndarray, rs, eps: float = 1.0e-14) -> np.ndarray:
    """pymoo's ``SBX._do`` (``cross_sbx``, then ``repair_clamp``) on ``(2, n_matings,
    n_var)`` parents: the same draws, in the same order, and the same arithmetic.

    pymoo computes the spread factor of both children one after the other, each power
    over a whole array; here both at once, in one array of two rows (a power is computed
    element by element, so its values do not depend on the array's shape); the exponents
    are held in arrays as pymoo's are (numpy may take another code path for a scalar).
    """
    _, n_matings, n_var = P.shape
    exchange = rs.random((n_matings, 1)) <= ops.prob_exch  # SBX._do's draw
    cross = rs.random((n_matings, n_var)) < ops.prob_var_c
    cross[np.abs(P[0] - P[1]) <= eps] = False  # parents too close: no crossover
    if ops.any_fixed:
        cross[:, ops.fixed] = False
    p1, p2 = P[0][cross], P[1][cross]
    n = len(p1)
    sm = p1 < p2
    y1 = np.where(sm, p1, p2)
    y2 = np.where(sm, p2, p1)
    xl, xu = ops.bounds(cross)
    rand = rs.random(n)
    delta = y2 - y1
    room = np.empty((2, n))  # to the lower bound from y1, to the upper one from y2
    np.subtract(y1, xl, out=room[0])
    np.subtract(xu, y2, out=room[1])
    beta = 1.0 + (2.0 * room / delta)
    alpha = 2.0 - np.power(beta, np.full((2, n), -(ops.eta_c + 1.0)))
    ra = rand * alpha
    root = np.full((2, n), 1.0 / (ops.eta_c + 1.0))
    inside = rand <= (1.0 / alpha)
    outside = rand > (1.0 / alpha)
    betaq = np.where(
        inside, np.power(ra, root), np.where(outside, np.power(1.0 / (2.0 - ra), root), 0.0)
    )
    spread = betaq * delta
    total = y1 + y2
    c1 = 0.5 * (total - spread[0])
    c2 = 0.5 * (total + spread[1])
    if exchange.all():
        swap = rs.random(n) < ops.prob_bin
    else:  # prob_exch < 1: a mating's prob_bin is 0 when its draw is above it
        prob_bin = np.where(exchange, ops.prob_bin, 0.0)
        swap = rs.random(n) < np.broadcast_to(prob_bin, cross.shape)[cross]
    # the child of parent 1 is c1 where parent 1 is the smaller, exchanged where swap
    first = sm ^ (swap ^ (p1 > p2))
    Q = P.copy()
    Q[0][cross] = np.where(first, c1, c2)
    Q[1][cross] = np.where(first, c2, c1)
    return _clamp(Q, ops.xl, ops.xu)


def _pm(ops: _Operators, X: np.ndarray, rs) -> np.ndarray:
    """pymoo's ``PM._do`` (``mut_pm``) on ``(n, n_var)``: the same draws and arithmetic
    (the two branches' powers in one two-row array, as :func:`_sbx` does)."""
    mut = rs.random(X.shape) < ops.prob_var_m
    if ops.any_fixed:
        mut[:, ops.fixed] = False
    x = X[mut]
    n = len(x)
    xl, xu = ops.bounds(mut)
    span = xu - xl
    delta = np.empty((2, n))  # delta1, delta2 of mut_pm
    np.subtract(x, xl, out=delta[0])
    np.subtract(xu, x, out=delta[1])
    delta /= span
    rand = rs.random(n)
    with np.errstate(invalid="ignore"):
        power = np.power(1.0 - delta, np.full((2, n), ops.eta_m + 1.0))
        val = np.empty((2, n))
        val[0] = 2.0 * rand + (1.0 - 2.0 * rand) * power[0]
        val[1] = 2.0 * (1.0 - rand) + 2.0 * (rand - 0.5) * power[1]
        root = np.power(val, np.full((2, n), 1.0 / (ops.eta_m + 1.0)))
    deltaq = np.where(rand <= 0.5, root[0] - 1.0, 1.0 - root[1])
    Y = x + deltaq * span
    Xp = X.copy()
    Xp[mut] = _clamp(Y, xl, xu)
    return _clamp(Xp, ops.xl, ops.xu)


def _clamp(values: np.ndarray, low, high) -> np.ndarray:
    """pymoo's repairs, in place: values below ``low`` (above ``high``) set to it.

    Not ``np.clip``, which may turn a -0.0 at a bound of 0.0 into 0.0."""
    np.copyto(values, low, where=values < low)
    np.copyto(values, high, where=values > high)
    return values


def _tournament(F, crowd, n_matings: int, rs) -> np.ndarray:
    """NSGA-II's binary tournament (dominance, then crowding), vectorised.

    The same as pymoo's ``binary_tournament`` with ``comp_by_dom_and_crowding``: a
    dominating individual wins, otherwise the larger crowding distance, otherwise a
    random one of the two. The competitors come from pymoo's ``random_permutations``
    (one ``permutation`` per pass over the population), a tie from ``rs.integers(2)``,
    the draw ``rs.choice`` of two makes, in tournament order.
    """
    n_select = n_matings * 2
    n_random = n_select * 2
    n_perms = math.ceil(n_random / len(F))
    P = [rs.permutation(len(F)) for _ in range(n_perms)]
    P = (np.concatenate(P) if n_perms > 1 else P[0])[:n_random]
    a, b = P[0::2], P[1::2]
    Fa, Fb = F[a], F[b]
    a_less = (Fa < Fb).any(axis=1)
    b_less = (Fb < Fa).any(axis=1)
    ca, cb = crowd[a], crowd[b]
    a_wins = np.where(a_less != b_less, a_less, ca > cb)
    b_wins = np.where(a_less != b_less, b_less, ca < cb)
    S = np.where(a_wins, a, b)
    for i in np.flatnonzero(~(a_wins | b_wins)):
        S[i] = (a[i], b[i])[rs.integers(2)]
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
