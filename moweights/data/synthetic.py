"""The papers' synthetic data: the weighting benchmark, the error-curve data and its noisy rankings.

- :func:`make_weighting_benchmark`: the multiobjective weighting paper's ten features (§3);
- :func:`make_error_curve_data`: the error-curve paper's interaction sets and their ground
  truth (§4.1, Table 2, :data:`ERROR_CURVE_DATA`);
- :func:`noisy_rankings`: noisy versions of that ground truth (§4.2).

The planted-structure generator of the atlas is :mod:`moweights.data.planted`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from aggregation.ranking import Ranking
from rankers.exceptions import InvalidInputError

__all__ = [
    "ERROR_CURVE_DATA",
    "make_error_curve_data",
    "make_weighting_benchmark",
    "noisy_rankings",
]


def make_weighting_benchmark(
    n_samples: int = 100, random_state=None, *, class_means=(0.0, 1.0), sd: float = 1.0
) -> tuple[pd.DataFrame, pd.Series]:
    """The synthetic data of the multiobjective weighting paper (§3).

    Two classes and ten independent features ``f1``..``f10``:

    - ``f1`` is the class label itself (0 or 1): the most relevant feature;
    - ``f2``..``f6`` are drawn from normal distributions whose mean depends on the class
      (``class_means[c]``, standard deviation ``sd``; the paper gives no values — we use
      means 0 and 1 and sd 1, a separation of one standard deviation);
    - ``f7`` and ``f8`` are constant (0.5 and 1.0);
    - ``f9`` and ``f10`` are uniform on [0, 1].

    Classes are balanced (the first ``ceil(n/2)`` rows are class 0), rows are shuffled.

    Parameters
    ----------
    n_samples : int, default=100
        Number of rows (at least 4).
    random_state : int, Generator or None
        Seed.

    Returns
    -------
    X : DataFrame of shape (n_samples, 10)
    y : Series
        The class, named ``target`` (equal to ``f1``).
    """
    if not isinstance(n_samples, (int, np.integer)) or n_samples < 4:
        raise InvalidInputError(f"n_samples must be an integer >= 4; got {n_samples!r}")
    rng = np.random.default_rng(random_state)
    y = np.zeros(n_samples, dtype=np.int64)
    y[(n_samples + 1) // 2 :] = 1
    y = rng.permutation(y)
    means = np.asarray(class_means, dtype=np.float64)[y]
    X = np.empty((n_samples, 10))
    X[:, 0] = y
    X[:, 1:6] = means[:, None] + sd * rng.standard_normal((n_samples, 5))
    X[:, 6] = 0.5
    X[:, 7] = 1.0
    X[:, 8:10] = rng.uniform(0.0, 1.0, size=(n_samples, 2))
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(1, 11)])
    return frame, pd.Series(y, name="target")


# ------------------------------------------------------------------ error-curve paper (§4)
#: Table 2 of the error-curve paper: per data set, the interaction sets as (arity, P), where
#: arity 1 is a single feature f = F_i and arity 2 a pair with f = XOR(F_i, F_j), and
#: P = P(f = target). Each set has 3 copies (the set and its two redundant copies); the rest
#: of the 100 features are irrelevant.
ERROR_CURVE_DATA = {
    "single": ((1, 0.8), (1, 0.7), (1, 0.6)),
    "pair": ((2, 0.8), (2, 0.7), (2, 0.6)),
    "combined": ((2, 0.8), (2, 0.7), (2, 0.6), (1, 0.8), (1, 0.7), (1, 0.6)),
}
_COPIES = 3
_N_FEATURES = 100


def _binary_entropy(p: float) -> float:
    return float(-p * np.log2(p) - (1 - p) * np.log2(1 - p)) if 0 < p < 1 else 0.0


def make_error_curve_data(
    kind: str = "combined", n_samples: int = 1000, random_state=None
) -> tuple[pd.DataFrame, pd.Series, Ranking]:
    """The synthetic data of the error-curve paper (§4.1, Table 2) and its ground truth.

    A balanced binary target ``y`` and 100 binary features. Each relevant *interaction set*
    has a function ``f`` that equals ``y`` with probability ``P``:

    - a single feature ``F_i``: ``F_i = y`` flipped with probability ``1 - P``;
    - a pair with ``f = XOR(F_i, F_j)``: ``F_i`` is a fair coin and ``F_j = F_i ⊕ y ⊕ e``
      with ``e`` a flip of probability ``1 - P``, so each of ``F_i``, ``F_j`` alone is
      independent of ``y`` while the pair predicts it with accuracy ``P``.

    Every interaction set comes in 3 copies (the paper's "two additional redundant copies"):
    identically defined but independently realised, i.e. with their own coins and flips.
    The remaining features are irrelevant fair coins. "single" has 9 relevant features,
    "pair" 18, "combined" 27 (see :data:`ERROR_CURVE_DATA`). Columns are the relevant
    features in Table 2's order (copy by copy) followed by the irrelevant ones.

    The ground truth is the paper's ``rel(F_i) = I(F_int; y) / |F_int|`` computed from the
    definition, not estimated from the sample: with a uniform ``y`` both set kinds give
    ``I(F_int; y) = 1 - H_2(P)`` bits (for a pair, ``F_i`` is independent of ``(y, XOR)``),
    so a single feature with P = 0.8 scores 0.278, each feature of a 0.8-pair 0.139, and an
    irrelevant feature 0. Equally relevant features (copies, irrelevant ones) tie.

    Parameters
    ----------
    kind : {"single", "pair", "combined"}, default="combined"
    n_samples : int, default=1000
        Number of rows (at least 10); the paper uses 1000.
    random_state : int, Generator or None

    Returns
    -------
    X : DataFrame of shape (n_samples, 100)
        0/1 integers. Names say what a feature is: ``single0.8_1`` (copy 1 of the single
        feature with P = 0.8), ``xor0.7_2a`` / ``xor0.7_2b`` (copy 2 of the 0.7 pair),
        ``irrelevant01`` ...
    y : Series
        0/1 target, named ``target``.
    truth : aggregation.Ranking
        Scores = ``rel`` in bits, method ``"ground_truth"``.

    References
    ----------
    Slavkov, Petković, Kocev, Džeroski. Quantitative score for assessing the quality of
    feature rankings. Informatica 42 (2018), §4.1.

    Examples
    --------
    >>> X, y, truth = make_error_curve_data("pair", n_samples=200, random_state=0)
    >>> X.shape, truth.order[:2]
    ((200, 100), ['xor0.8_1a', 'xor0.8_1b'])
    """
    if kind not in ERROR_CURVE_DATA:
        raise InvalidInputError(
            f"unknown kind {kind!r}; choose one of {', '.join(map(repr, ERROR_CURVE_DATA))}"
        )
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)):
        raise InvalidInputError(f"n_samples must be an integer >= 10; got {n_samples!r}")
    if n_samples < 10:
        raise InvalidInputError(f"n_samples must be an integer >= 10; got {n_samples}")
    rng = np.random.default_rng(random_state)
    y = rng.integers(0, 2, size=n_samples)
    columns, names, relevance = [], [], []
    for arity, p in ERROR_CURVE_DATA[kind]:
        rel = (1.0 - _binary_entropy(p)) / arity
        flips = (rng.random((n_samples, _COPIES)) >= p).astype(np.int64)
        if arity == 1:
            columns.append(y[:, None] ^ flips)
            names += [f"single{p}_{c + 1}" for c in range(_COPIES)]
        else:
            first = rng.integers(0, 2, size=(n_samples, _COPIES))
            second = first ^ y[:, None] ^ flips
            # interleave so each copy's two features sit side by side: 1a 1b 2a 2b ...
            columns.append(np.stack([first, second], axis=2).reshape(n_samples, 2 * _COPIES))
            names += [f"xor{p}_{c + 1}{s}" for c in range(_COPIES) for s in "ab"]
        relevance += [rel] * (arity * _COPIES)
    n_irrelevant = _N_FEATURES - len(names)
    columns.append(rng.integers(0, 2, size=(n_samples, n_irrelevant)))
    names += [f"irrelevant{j + 1:02d}" for j in range(n_irrelevant)]
    relevance += [0.0] * n_irrelevant
    X = pd.DataFrame(np.hstack(columns).astype(np.int64), columns=names)
    truth = Ranking(names, relevance, method="ground_truth")
    return X, pd.Series(y, name="target"), truth


def noisy_rankings(
    truth: Ranking, theta: float, n_rankings: int = 100, random_state=None
) -> list[Ranking]:
    """Noisy versions of a ground-truth ranking (§4.2 of the error-curve paper).

    In each ranking a proportion ``theta`` of the features (``round(theta * n)`` of them,
    chosen at random) get a random relevance, drawn uniformly between the smallest and the
    largest true score; the other features keep their true score. ``theta = 0`` returns the
    truth itself; ``theta = 1`` gives uniformly random rankings (i.i.d. scores). Ties keep
    the truth's tie-break (the earlier feature first), so a noisy ranking differs from the
    truth only where the noise moved a feature.

    Parameters
    ----------
    truth : aggregation.Ranking
        The ground truth, e.g. from :func:`make_error_curve_data`.
    theta : float in [0, 1]
    n_rankings : int, default=100
    random_state : int, Generator or None

    Returns
    -------
    list of aggregation.Ranking
        Named like ``truth``, method ``"noisy(theta=...)"``.

    Examples
    --------
    >>> _, _, truth = make_error_curve_data("single", n_samples=50, random_state=0)
    >>> noisy_rankings(truth, 0.0, n_rankings=1)[0] == truth
    True
    """
    if not isinstance(truth, Ranking):
        raise InvalidInputError(f"truth must be an aggregation.Ranking, not {type(truth).__name__}")
    if isinstance(theta, bool) or not isinstance(theta, (int, float, np.floating, np.integer)):
        raise InvalidInputError(f"theta must be a number in [0, 1]; got {theta!r}")
    if not 0.0 <= float(theta) <= 1.0:
        raise InvalidInputError(f"theta must be in [0, 1]; got {theta}")
    if isinstance(n_rankings, bool) or not isinstance(n_rankings, (int, np.integer)):
        raise InvalidInputError(f"n_rankings must be an integer >= 1; got {n_rankings!r}")
    if n_rankings < 1:
        raise InvalidInputError(f"n_rankings must be an integer >= 1; got {n_rankings}")
    rng = np.random.default_rng(random_state)
    n = len(truth)
    n_noisy = round(float(theta) * n)
    low, high = float(truth.scores.min()), float(truth.scores.max())
    # all random numbers at once: a random subset per ranking (first n_noisy of a
    # permutation) and a candidate random relevance for every feature
    chosen = rng.permuted(np.tile(np.arange(n), (n_rankings, 1)), axis=1)[:, :n_noisy]
    values = rng.uniform(low, high, size=(n_rankings, n))
    scores = np.tile(truth.scores, (n_rankings, 1))
    rows = np.arange(n_rankings)[:, None]
    scores[rows, chosen] = values[rows, chosen]
    method = f"noisy(theta={float(theta):g})"
    return [Ranking(truth.names, s, method=method) for s in scores]
