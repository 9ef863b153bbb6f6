"""MOWeighting: feature weights searched by NSGA-II, whose Pareto set becomes a ranking."""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import pandas as pd
from pymoo.core.termination import Termination
from pymoo.indicators.hv import HV
from sklearn.utils import check_random_state
from tqdm.auto import tqdm

from aggregation.combine import mean_rank
from aggregation.ranking import Ranking
from moweights.weighting.criteria import (
    PAPER_CRITERIA,
    Criteria,
    n_entropy_pairs,
    needs_labels,
    objective_label,
    parse_objectives,
    peak_bytes,
)
from moweights.weighting.nsga2 import native_termination, nsga2, pymoo_nsga2
from moweights.weighting.problem import WeightingProblem
from moweights.weighting.relevance import pair_sample_size
from moweights.weighting.width import (
    AUTO_SEEDS,
    AUTO_WIDTH,
    SLOW_SEARCH,
    check_preselect,
    filter_order,
    resolve_filters,
    search_seconds,
    seeded_population,
)
from rankers.base import BaseRanker
from rankers.exceptions import MoweightsError
from rankers.memory import check_memory
from rankers.preprocessing import minmax_scale
from rankers.utils.param_validation import Interval, StrOptions

__all__ = ["FRONT_TO_RANKING", "MOWeighting"]

FRONT_TO_RANKING = ("mean_rank", "mean_weight", "median_weight", "max_weight", "vote")


class _Recorder:
    """Keeps each generation's non-dominated objective values and drives the progress bar."""

    def __init__(self, bar):
        self.bar = bar
        self.fronts: list[np.ndarray] = []
        self.n_evals: list[int] = []

    def __call__(self, front: np.ndarray, n_eval: int) -> None:
        self.fronts.append(np.array(front, dtype=np.float64))
        self.n_evals.append(int(n_eval))
        if self.bar is not None:
            self.bar.update(1)


class MOWeighting(BaseRanker):
    """Rank features by weights that NSGA-II optimises for several criteria at once.

    Feature weights w ∈ [0, 1]^n are searched by the NSGA-II evolutionary algorithm
    (pymoo) to minimise the listed criteria on min–max scaled data; each solution of the
    final Pareto set is a weight vector, hence a ranking, and the set is turned into one
    ranking by ``front_to_ranking`` (by default the paper's averaged rank).

    Default criteria. The paper's C1, -C2, -C3 (``objectives="paper"``, with
    ``seed_rankers="auto"`` then the paper's uniform random start: its run exactly) read
    distances on min–max scaled data, where spread counts as much as class signal: Eq. 1's
    c(i) is larger for uniform noise than for a class-shifted Gaussian feature, so planted
    features rank below noise (``docs/guide/weighting.md``). The default ``"relevance"``
    is ``("-NCA", "-FR", "SP")``: the soft leave-one-out nearest-neighbour class
    agreement of the weighted space and its Fisher trace ratio, maximised, against the
    effective share of weighted features, minimised
    (:mod:`moweights.weighting.relevance`), searched from anova_f's top sets
    (``seed_rankers="auto"``), so that the front runs from a few well-chosen features to
    many and a feature's averaged rank rewards being needed in small subsets.

    Wide data. With the paper's 80 individuals and 250 generations the search finds the
    few informative features among hundreds only slowly and among thousands hardly at
    all: the evaluations are spread over [0, 1]^n. Two parameters let cheap filter rankers
    guide it: ``seed_rankers`` starts the search from the filters' top sets, and
    ``preselect`` narrows it to the filters' best features
    (``benchmarks/speed/bench_weighting_width.py`` measures what they recover on planted data
    of 2,000 features). Up to 1,000 features (``width.AUTO_WIDTH``) the default is the
    paper's search over every weight; above it, ``preselect="auto"`` searches the 1,000
    best of the filters (``anova_f``, or ``laplacian`` for C4 alone) and says so in a
    warning: the plain search at 20,000 features costs about 1.5 CPU minutes per fit
    with C1-C3 and about 20 with C4 (200 samples, the paper's settings), for a poorer
    ranking. ``preselect="all"`` (or None) searches every weight at any width. Any
    search estimated above ten CPU minutes
    (:func:`~moweights.weighting.width.search_seconds`) warns before it starts.

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.
    objectives : str or sequence of str, default="relevance"
        A named set (:data:`~moweights.weighting.criteria.PRESETS`: ``"relevance"`` =
        ``("-NCA", "-FR", "SP")``, ``"paper"`` = ``("C1", "-C2", "-C3")``) or criteria, written
        as in the paper's tables: ``C1`` intra-class dissimilarity,
        ``C2`` inter-class dissimilarity, ``C3`` attribute–class correlation, ``C4``
        entropy (aliases intra, inter, correlation, entropy); and the relevance criteria
        ``FR`` (fisher), ``NCA`` (nca), ``HM`` (margin), ``SP`` (sparsity), ``C3R``
        (rank_correlation). The notation means what the
        paper means: C1–C3 are minimised and a leading "-" maximises them (the paper's
        ``("C1", "-C2", "-C3")``: compact classes, far-apart classes, high correlation);
        the entropy C4 is minimised written either ``C4`` or ``-C4`` (the paper's Eq. 2
        carries the minus, and every row the paper prints minimises the entropy, which
        puts the class label first on its data). ``min:X`` / ``max:X`` give a direction
        explicitly (``max:C4`` maximises the entropy). C1–C3 need class labels; C4 alone
        works without ``y``.
    pop_size : int, default=80
        Population size (paper: 80).
    n_gen : int, default=250
        Number of generations (paper: 250); ignored when ``termination`` is given.
    crossover_prob : float, default=0.9
        Probability that a mating applies SBX crossover (paper: 0.9).
    mutation_prob : float or None, default=None
        Per-variable polynomial-mutation probability; None = 1/n (paper).
    termination : int, tuple or pymoo Termination, optional
        Overrides ``n_gen``: an int number of generations, a pymoo termination tuple such
        as ``("n_eval", 5000)``, or a Termination object.
    front_to_ranking : {"mean_rank", "mean_weight", "median_weight", "max_weight", "vote"}
        How the Pareto set becomes one ranking: the averaged rank of the solutions'
        rankings (paper's default), a statistic of the weights, or the most frequent rank.
    max_pairs : int or None, default=20000
        Sample pairs C4 uses; a seeded subsample when m(m−1)/2 is larger (None = all).
        The default keeps every pair up to 200 samples; C4's cost is proportional to it
        (``benchmarks/results/weighting_width.md`` measures how far a smaller subsample
        agrees with all pairs).
    entropy_precision : {"single", "double"}, default="single"
        Floating-point precision of C4's per-pair arrays (C1–C3 are always double).
        Single precision is about 1e-7 relative off the double value and makes C4
        several times cheaper; where C4 alone leaves features with weights too small to
        change it in single precision, more Pareto solutions tie and the order among
        those features may differ from "double".
    seed_rankers : "auto", str, ranker or sequence of them, default="auto"
        Filter rankers (registry names such as ``"anova_f"``, or unfitted rankers) whose
        rankings seed the initial population: up to half of it holds top-t indicator
        vectors (weight 1 on a filter's t best features, 0 elsewhere; t = 1, 2, 4, ...),
        the rest is uniform random. None = pymoo's uniform random start (the paper's).
        "auto" = ``anova_f`` (``laplacian`` without labels) when a relevance criterion is
        among the objectives, None for the paper's criteria alone.
        With ``preselect``, they also choose the searched features. Each is fitted on
        the data with a seed drawn from ``random_state``.
    preselect : "auto", "all", int or None, default="auto"
        Search the weights of only this many features, the best of the filters' averaged
        ranking (``seed_rankers``; ``anova_f`` when None, ``laplacian`` for C4 alone);
        the others weigh 0 in ``pareto_weights_`` and follow the searched ones in
        ``ranking_``, in the filters' order. "all" or None (or at least the number of
        features) = search all. "auto" = all up to 1,000 features, the filters' best
        1,000 above them (with a warning).
    random_state : int, RandomState or None
        Seeds NSGA-II, the pair subsample, the seed rankers and the seeded population.
    verbose : int, default=0
        >0 shows a progress bar per generation.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        Higher = more relevant; for "mean_rank", ``n_informative + 1 − mean rank`` (what
        :attr:`score_name` says, the column name of a run's features.csv).
    pareto_weights_ : DataFrame
        One row per Pareto solution, one column per feature (NaN for constant features,
        which are set aside before the optimisation).
    pareto_mean_weights_ : Series
        Each feature's weight averaged over the Pareto set: the numbers the paper's
        tables print (NaN for constant features).
    pareto_objectives_ : DataFrame
        The minimised values (sign applied) of each solution, one column per objective:
        ``C1``, ``-C2`` (the negated C2) or ``max:C4`` (the negated entropy).
    preselected_ : ndarray of str or None
        Names of the features whose weights were searched, when ``preselect`` cut.
    history_ : DataFrame
        Per generation: evaluations, front size, hypervolume of the front (reference
        point: the worst value seen per objective plus 10% of its range), best value per
        objective.

    References
    ----------
    .. [1] D. Zaharie, D. Lungeanu and S. Holban, "Feature ranking based on weights
       estimated by multiobjective optimization", IADIS European Conference on Data
       Mining, 2007.
    .. [2] K. Deb et al., "A fast elitist non-dominated sorting genetic algorithm for
       multi-objective optimization: NSGA-II", PPSN VI, 2000.

    Examples
    --------
    >>> from moweights.data import make_weighting_benchmark
    >>> X, y = make_weighting_benchmark(100, random_state=0)
    >>> mow = MOWeighting(n_gen=30, random_state=0).fit(X, y)
    >>> mow.pareto_weights_.shape[1]
    10
    """

    name = "mo_weighting"
    target_kind = "classification"
    requires_y = True
    accepts_sparse = False
    deterministic = False  # NSGA-II is randomised: reproducible only under random_state
    scale_invariant = True
    feature_scale_invariant = True  # the criteria read min-max scaled features
    reference: ClassVar[str] = "Zaharie, Lungeanu & Holban 2007 (NSGA-II feature weighting)"
    _contract_test_params: ClassVar[dict] = {"pop_size": 8, "n_gen": 3}

    _parameter_constraints: ClassVar[dict] = {
        **BaseRanker._parameter_constraints,
        "objectives": [list, tuple, str],
        "pop_size": [Interval(Integral, 4, None, closed="left")],
        "n_gen": [Interval(Integral, 1, None, closed="left")],
        "crossover_prob": [Interval(Real, 0, 1, closed="both")],
        "mutation_prob": [Interval(Real, 0, 1, closed="both"), None],
        "termination": [None, Interval(Integral, 1, None, closed="left"), tuple, Termination],
        "front_to_ranking": [StrOptions(set(FRONT_TO_RANKING))],
        "max_pairs": [Interval(Integral, 1, None, closed="left"), None],
        "entropy_precision": [StrOptions({"single", "double"})],
        "seed_rankers": [None, str, list, tuple],
        "preselect": [
            Interval(Integral, 1, None, closed="left"),
            StrOptions({"auto", "all"}),
            None,
        ],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        k=None,
        objectives="relevance",
        pop_size: int = 80,
        n_gen: int = 250,
        crossover_prob: float = 0.9,
        mutation_prob: float | None = None,
        termination=None,
        front_to_ranking: str = "mean_rank",
        max_pairs: int | None = 20000,
        entropy_precision: str = "single",
        seed_rankers="auto",
        preselect: int | str | None = "auto",
        random_state=None,
        verbose: int = 0,
    ):
        self.k = k
        self.objectives = objectives
        self.pop_size = pop_size
        self.n_gen = n_gen
        self.crossover_prob = crossover_prob
        self.mutation_prob = mutation_prob
        self.termination = termination
        self.front_to_ranking = front_to_ranking
        self.max_pairs = max_pairs
        self.entropy_precision = entropy_precision
        self.seed_rankers = seed_rankers
        self.preselect = preselect
        self.random_state = random_state
        self.verbose = verbose

    def _needs_labels(self) -> bool:
        return needs_labels(key for key, _ in parse_objectives(self.objectives))

    def _seed_rankers(self):
        """``seed_rankers`` with "auto" resolved: the filters for the relevance criteria,
        pymoo's uniform random start (None) for the paper's criteria alone."""
        if not (isinstance(self.seed_rankers, str) and self.seed_rankers == "auto"):
            return self.seed_rankers
        keys = {key for key, _ in parse_objectives(self.objectives)}
        return None if keys <= set(PAPER_CRITERIA) else AUTO_SEEDS[self._needs_labels()]

    def _requires_y(self) -> bool:
        # the tags' requires_y: C1-C3 need class labels, C4 alone does not; a bad
        # objective is reported by fit and validate_params, the tags keep the class's word
        try:
            return self._needs_labels()
        except MoweightsError:
            return bool(self.requires_y)

    def _check_target(self, y, n_samples: int):
        parse_objectives(self.objectives)  # a bad objective is reported before anything runs
        if not self._needs_labels():
            return None  # unsupervised criteria only: y is ignored, as unsupervised rankers do
        # C1–C3 need class labels: the shared check refuses continuous targets by name
        return super()._check_target(y, n_samples)

    def _termination(self):
        if self.termination is None:
            return ("n_gen", int(self.n_gen))
        if isinstance(self.termination, (Integral, np.integer)):
            return ("n_gen", int(self.termination))
        return self.termination

    def _score(self, X, y, context):
        objectives = parse_objectives(self.objectives)
        rng = check_random_state(self.random_state)
        seed = int(rng.randint(np.iinfo(np.int32).max))
        pair_rng = np.random.default_rng(int(rng.randint(np.iinfo(np.int32).max)))
        m, n_all = X.shape
        # the width path (module width.py): drawn after the seeds above, so that the
        # default path's random stream is the one it always was
        searched, rest, sampling, tie_order = self._width_path(X, y, rng)
        X = X[:, searched]
        n = X.shape[1]
        keys = tuple(k for k, _ in objectives)
        check_memory(
            peak_bytes(m, n, keys, self.max_pairs, int(self.pop_size), self.entropy_precision),
            f"MOWeighting's criteria over {n} features ({n_entropy_pairs(m, self.max_pairs):.3g} "
            f"sample pairs for C4, populations of {self.pop_size})",
            "lower max_pairs (C4 holds max_pairs x n_features differences, and "
            "max_pairs=None keeps all m(m-1)/2 pairs), lower pop_size, or fewer features "
            "(preselect)",
        )
        self._warn_if_slow(m, n, keys)
        Xs = minmax_scale(X)  # constant columns never reach _score
        criteria = Criteria(
            Xs, y, keys, max_pairs=self.max_pairs, rng=pair_rng, precision=self.entropy_precision
        )
        problem = WeightingProblem(criteria, objectives)
        mutation = 1.0 / n if self.mutation_prob is None else float(self.mutation_prob)
        termination = self._termination()
        native = native_termination(termination)
        total = int(native[1]) if native is not None and native[0] == "n_gen" else None
        bar = tqdm(total=total, desc="NSGA-II", unit="gen", leave=False) if self.verbose else None
        recorder = _Recorder(bar)
        settings = {
            "pop_size": int(self.pop_size),
            "crossover_prob": float(self.crossover_prob),
            "mutation_prob": mutation,
            "seed": seed,
            "sampling": sampling,
            "on_generation": recorder,
        }
        try:
            if native is not None:  # pymoo's NSGA-II on arrays (nsga2.py): the same front
                W, F = nsga2(
                    problem,
                    termination=native,
                    evaluate=lambda P: criteria.search_values(P, objectives),
                    **settings,
                )
            else:  # any other pymoo termination: pymoo's own loop
                W, F = pymoo_nsga2(problem, termination=termination, **settings)
        finally:
            if bar is not None:
                bar.close()
        # a stable order of the solutions: by their objective values as the search compared
        # them; reported, the relevance criteria's exact values (not the search's rounding)
        order = np.lexsort(F.T[::-1])
        if any(key not in PAPER_CRITERIA for key, _ in objectives):
            F = criteria.evaluate(W, objectives)
        W, F = W[order], F[order]
        full = np.zeros((len(W), n_all))
        full[:, searched] = W  # features left out by preselect weigh 0
        self._store_front(full, F, objectives)
        self.history_ = self._history(recorder, objectives)
        self.n_solutions_ = len(W)
        scores = self._front_scores(W, tie_order)
        if rest is None:
            return scores
        # below every searched feature, in the filters' order (rest is best first)
        out = np.empty(n_all)
        out[searched] = scores
        out[rest] = scores.min() - 1.0 - np.arange(len(rest)) / len(rest)
        return out

    def _width_path(self, X, y, rng):
        """Searched features (indices), the others best first, the initial population, and
        the filters' order of the searched features (positions in them; None unseeded)."""
        n = X.shape[1]
        everything = np.arange(n)
        keep = check_preselect(self.preselect, n)
        seed_rankers = self._seed_rankers()
        if keep is None and seed_rankers is None:
            self.preselected_ = None
            return everything, None, None, None
        filters = resolve_filters(seed_rankers, self._needs_labels())
        filter_seed = int(rng.randint(np.iinfo(np.int32).max))
        combined, orders = filter_order(filters, X, y, filter_seed)
        if keep is None:
            searched, rest = everything, None
        else:
            searched, rest = np.sort(combined[:keep]), combined[keep:]
        if keep is not None and isinstance(self.preselect, str):  # "auto" cut
            names = ", ".join(type(f).__name__ for f in filters)
            warnings.warn(
                f"MOWeighting: {n} features are more than the {AUTO_WIDTH} whose weights "
                f"NSGA-II searches by default; it searches the {keep} best of {names} and "
                f"ranks the other {n - keep} after them in that order (preselect='auto'). "
                "preselect='all' searches every weight: slower, and at thousands of "
                "features it finds fewer of the informative ones",
                UserWarning,
                stacklevel=4,
            )
        names = self._feature_labels()[~self.constant_features_]
        self.preselected_ = None if rest is None else np.asarray(names[searched])
        if seed_rankers is None:
            return searched, rest, None, None
        relevance = {key for key, _ in parse_objectives(self.objectives)} - set(PAPER_CRITERIA)
        # each filter's order restricted to the searched features, as positions in them
        position = np.full(n, -1, dtype=np.intp)
        position[searched] = np.arange(len(searched))
        local = [position[o][position[o] >= 0] for o in orders]
        # the relevance criteria's sparse fronts: equal weights in the filters' order
        tie_order = position[combined][position[combined] >= 0] if relevance else None
        population_rng = np.random.default_rng(int(rng.randint(np.iinfo(np.int32).max)))
        population = seeded_population(local, int(self.pop_size), population_rng)
        return searched, rest, population, tie_order

    def _warn_if_slow(self, m: int, n: int, keys) -> None:
        """Warn before a search estimated above ``SLOW_SEARCH`` CPU seconds."""
        native = native_termination(self._termination())
        if native is None:
            n_evals = float(self.pop_size) * float(self.n_gen)  # a guess: pymoo decides
        elif native[0] == "n_gen":
            n_evals = float(self.pop_size) * native[1]
        else:
            n_evals = native[1]
        pairs = n_entropy_pairs(m, self.max_pairs)
        seconds = search_seconds(
            m,
            n,
            keys,
            pairs,
            n_evals,
            self.entropy_precision,
            neighbour_samples=pair_sample_size(m, self.max_pairs),
        )
        if seconds > SLOW_SEARCH:
            warnings.warn(
                f"MOWeighting's search over {n} weights ({n_evals:.0f} evaluations on {m} "
                f"samples) is estimated at ~{seconds / 60:.0f} CPU minutes; preselect "
                "(e.g. 200) narrows it to the filters' best features, and pop_size, n_gen "
                "or termination (and max_pairs, for C4) bound it",
                UserWarning,
                stacklevel=4,
            )

    @property
    def score_name(self) -> str:
        """What ``scores_`` holds, by ``front_to_ranking``: "reversed_mean_rank" (``n + 1 −``
        the mean rank over the Pareto set), "vote_score", or the weight statistic
        ("mean_weight", "median_weight", "max_weight")."""
        return {"mean_rank": "reversed_mean_rank", "vote": "vote_score"}.get(
            self.front_to_ranking, str(self.front_to_ranking)
        )

    def _front_scores(self, W: np.ndarray, tie_order=None) -> np.ndarray:
        """One score per searched feature from the Pareto set ``W`` (solutions x features).

        ``tie_order`` (a seeded search with a relevance criterion: the filters' averaged
        order of the searched features) orders each solution's equal weights for
        ``"mean_rank"``: such a front is sparse, and features that no solution weighs
        would otherwise tie in index order; each solution's ranking is then strict
        (weight descending, equal weights in the filters' order) and the score is
        ``n + 1 −`` the mean rank over the solutions. Otherwise (the paper's criteria),
        equal weights tie as the paper's averaged rank has them.
        """
        how = self.front_to_ranking
        if how == "mean_rank" and tie_order is not None:
            n = W.shape[1]
            filter_position = np.empty(n)
            filter_position[tie_order] = np.arange(n)
            # weights come from SBX/PM arithmetic, not BLAS: equal means equal everywhere
            orders = np.lexsort((np.broadcast_to(filter_position, W.shape), -W), axis=-1)
            ranks = np.empty(W.shape)
            np.put_along_axis(ranks, orders, np.arange(1.0, n + 1.0)[None, :], axis=-1)
            return n + 1.0 - ranks.mean(axis=0)
        if how == "mean_weight":
            return W.mean(axis=0)
        if how == "median_weight":
            return np.median(W, axis=0)
        if how == "max_weight":
            return W.max(axis=0)
        n = W.shape[1]
        names = [f"w{i}" for i in range(n)]
        rankings = [Ranking.from_scores(w, names=names) for w in W]
        if len(rankings) == 1:
            return rankings[0].scores.copy()
        if how == "vote":
            from aggregation.combine import vote

            return vote(rankings).reindex(names).scores.copy()
        return mean_rank(rankings).reindex(names).scores.copy()

    def _store_front(self, W, F, objectives):
        names = self._feature_labels()
        informative = ~self.constant_features_
        full = np.full((len(W), len(names)), np.nan)
        full[:, informative] = W
        self.pareto_weights_ = pd.DataFrame(full, columns=list(names))
        self.pareto_weights_.index.name = "solution"
        self.pareto_mean_weights_ = self.pareto_weights_.mean(axis=0).rename("mean_weight")
        labels = [objective_label(key, sign) for key, sign in objectives]
        self.pareto_objectives_ = pd.DataFrame(F, columns=labels)
        self.pareto_objectives_.index.name = "solution"

    @staticmethod
    def _history(recorder: _Recorder, objectives) -> pd.DataFrame:
        labels = [objective_label(key, sign) for key, sign in objectives]
        fronts = recorder.fronts
        rows = {
            "n_gen": np.arange(1, len(fronts) + 1),
            "n_eval": recorder.n_evals,
            "n_front": [len(f) for f in fronts],
        }
        if fronts:
            stacked = np.vstack(fronts)
            worst, best = stacked.max(axis=0), stacked.min(axis=0)
            ref = worst + 0.1 * np.maximum(worst - best, 1e-12)
            indicator = HV(ref_point=ref)
            rows["hypervolume"] = [float(indicator(f)) for f in fronts]
            for j, label in enumerate(labels):
                rows[f"best_{label}"] = [float(f[:, j].min()) for f in fronts]
        return pd.DataFrame(rows)

    def validate_params(self) -> None:
        """Check every parameter, the objectives' spelling and the seed rankers included."""
        super().validate_params()
        parse_objectives(self.objectives)
        seed_rankers = self._seed_rankers()
        if seed_rankers is not None:
            resolve_filters(seed_rankers, self._needs_labels())
