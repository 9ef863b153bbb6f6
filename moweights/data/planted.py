"""Seeded data with planted structure, and the ground truth of which features carry it.

One generator for the structures our rankers claim to find, so that "which ranker when" is
measured rather than argued (``benchmarks/protocols/atlas.py`` runs every ranker on a grid of them):

==============  ============================================================  ==========
structure       what the informative features hold                            target
==============  ============================================================  ==========
``clusters``    ``n_groups`` Gaussian clusters (each informative feature has  cluster
                its own centre per cluster, ``effect`` × N(0, 1))
``modules``     co-expression blocks: ``n_groups`` latent factors, each       none
                feature = ``effect`` × its block's factor + noise
``manifold``    a circle in the informative features: feature j =             none
                ``effect`` × cos(t − φ_j) for a latent angle t
``shift``       class-shifted means: class c moves every informative feature  class
                by ``effect`` × its own direction (the ``n_groups`` classes
                are balanced)
``xor``         interactions: informative features come in pairs whose signs  class
                agree for class 0 and disagree for class 1; each feature
                alone says nothing about the class
``imbalanced``  ``shift`` with one minority class holding a share             class
                ``minority`` of the samples
``linear``      a numeric target: y = the informative features' latent        number
                values (``effect`` × N(0, 1) each) summed with weights ±[0.5,
                1], scaled to unit variance, plus ``noise`` × N(0, 1)
``product``     a numeric interaction: informative features come in pairs,    number
                y = the sum of the pairs' latent products (scaled) plus noise;
                each feature alone is uncorrelated with y (the regression
                analogue of ``xor``, what RReliefF is made for)
==============  ============================================================  ==========

Every feature, informative or not, is ``noise`` × N(0, 1) plus its signal; ``standardize``
gives every column mean 0 and variance 1, so a ranker cannot find the signal by its
variance alone. Columns are shuffled by default, so the tie rule's "lower column index
first" never favours the planted features.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import pandas as pd

from rankers.exceptions import InvalidParameterError

__all__ = ["REGRESSION", "STRUCTURES", "Planted", "make_planted"]

STRUCTURES = (
    "clusters", "modules", "manifold", "shift", "xor", "imbalanced", "linear", "product",
)  # fmt: skip
#: structures whose target is a number (regression)
REGRESSION = ("linear", "product")
#: structures that come with a class target
SUPERVISED = ("shift", "xor", "imbalanced")


@dataclass(frozen=True)
class Planted:
    """Data with planted structure and its ground truth.

    Attributes
    ----------
    X : DataFrame
        Features ``f0001``, ``f0002`` ..., one row per sample.
    y : Series or None
        The class (``shift``, ``xor``, ``imbalanced``), the cluster (``clusters``) or a
        number (``linear``, ``product``), named ``target``; None for ``modules`` and
        ``manifold``.
    truth : Series of bool
        Indexed by feature name: True for the planted (informative) features.
    groups : Series of int
        Indexed by feature name: the block (``modules``), the pair (``xor``,
        ``product``) or 0 for
        an informative feature, −1 for noise.
    structure : str
    """

    X: pd.DataFrame
    y: pd.Series | None
    truth: pd.Series
    groups: pd.Series
    structure: str

    @property
    def informative(self) -> list[str]:
        """Names of the planted features, in column order."""
        return self.truth.index[self.truth.to_numpy()].tolist()

    def recovery(self, order, k: int | None = None) -> tuple[float, float]:
        """Precision and recall of the planted features among the first ``k`` of ``order``.

        Parameters
        ----------
        order : sequence of str
            Feature names, most relevant first (e.g. ``Ranking.order``).
        k : int, optional
            How many to look at; the number of planted features by default (then
            precision equals recall).
        """
        planted = set(self.informative)
        k = len(planted) if k is None else int(k)
        hits = len(planted.intersection(list(order)[:k]))
        return hits / max(k, 1), hits / max(len(planted), 1)


def _count(informative, n_features: int, structure: str) -> int:
    if isinstance(informative, bool) or not isinstance(informative, (Integral, Real)):
        raise InvalidParameterError(
            f"informative must be a share in (0, 1] or a count; got {informative!r}"
        )
    if isinstance(informative, Integral) and informative >= 1:
        count = int(informative)
    elif 0 < float(informative) <= 1:
        count = max(1, round(float(informative) * n_features))
    else:
        raise InvalidParameterError(
            f"informative must be a share in (0, 1] or a count >= 1; got {informative!r}"
        )
    if structure in ("xor", "product"):
        count = max(2, count - count % 2)  # features come in pairs
    if count > n_features:
        raise InvalidParameterError(
            f"{count} informative features do not fit in n_features={n_features}"
        )
    return count


def _check(name: str, value, low: float, integer: bool = False) -> None:
    kind = Integral if integer else Real
    if isinstance(value, bool) or not isinstance(value, kind) or value < low:
        what = "an integer" if integer else "a number"
        raise InvalidParameterError(f"{name} must be {what} >= {low}; got {value!r}")


def make_planted(
    structure: str = "clusters",
    n_samples: int = 200,
    n_features: int = 1000,
    informative: float | int = 0.05,
    *,
    effect: float = 2.0,
    noise: float = 1.0,
    n_groups: int = 4,
    minority: float = 0.1,
    standardize: bool = False,
    shuffle: bool = True,
    random_state=None,
) -> Planted:
    """Data whose informative features carry a chosen structure, and the ground truth.

    Parameters
    ----------
    structure : str, default="clusters"
        What the informative features hold, one of :data:`STRUCTURES`: "clusters",
        "modules", "manifold", "shift", "xor", "imbalanced", "linear", "product" (see the
        module's table).
    n_samples, n_features : int
        Shape of ``X``.
    informative : float in (0, 1] or int, default=0.05
        Share (or number) of informative features; at least one, and an even number
        of at least two for ``xor``.
    effect : float, default=2.0
        Strength of the signal, in units of the noise's standard deviation when
        ``noise=1``.
    noise : float, default=1.0
        Standard deviation of the Gaussian noise on every feature.
    n_groups : int, default=4
        Clusters, co-expression blocks or classes (``shift``); ``xor`` and
        ``imbalanced`` have two classes.
    minority : float, default=0.1
        Share of the minority class for ``imbalanced``.
    standardize : bool, default=False
        Give every column mean 0 and variance 1.
    shuffle : bool, default=True
        Shuffle the columns (the planted ones are first otherwise).
    random_state : int, Generator or None
        Seeds everything.

    Returns
    -------
    Planted
        ``X``, ``y``, ``truth`` and ``groups``; ``recovery(order)`` scores a ranking.

    Examples
    --------
    >>> data = make_planted("shift", n_samples=60, n_features=100, informative=5,
    ...                     random_state=0)
    >>> data.X.shape, int(data.truth.sum()), sorted(data.y.unique().tolist())
    ((60, 100), 5, [0, 1, 2, 3])
    """
    if structure not in STRUCTURES:
        raise InvalidParameterError(
            f"unknown structure {structure!r}; choose one of {', '.join(STRUCTURES)}"
        )
    _check("n_samples", n_samples, 4, integer=True)
    _check("n_features", n_features, 1, integer=True)
    _check("n_groups", n_groups, 2, integer=True)
    _check("effect", effect, 0.0)
    _check("noise", noise, 0.0)
    if not 0 < minority < 0.5:
        raise InvalidParameterError(f"minority must be in (0, 0.5); got {minority!r}")
    n_inf = _count(informative, int(n_features), structure)
    rng = np.random.default_rng(random_state)
    m, n = int(n_samples), int(n_features)

    X = noise * rng.standard_normal((m, n))
    signal, y, groups = _SIGNALS[structure](rng, m, n_inf, effect, int(n_groups), minority)
    if structure in REGRESSION:  # the target's own noise, drawn after the signal
        y = y + noise * rng.standard_normal(m)
    X[:, :n_inf] += signal
    if standardize:
        sd = X.std(axis=0)
        X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)

    truth = np.zeros(n, dtype=bool)
    truth[:n_inf] = True
    group = np.full(n, -1, dtype=np.int64)
    group[:n_inf] = groups
    order = rng.permutation(n) if shuffle else np.arange(n)
    names = [f"f{j + 1:0{len(str(n))}d}" for j in range(n)]
    frame = pd.DataFrame(X[:, order], columns=names)
    target = None if y is None else pd.Series(y, name="target")
    return Planted(
        X=frame,
        y=target,
        truth=pd.Series(truth[order], index=names, name="informative"),
        groups=pd.Series(group[order], index=names, name="group"),
        structure=structure,
    )


def _balanced(rng, m: int, k: int) -> np.ndarray:
    return rng.permutation(np.arange(m) % k)


def _clusters(rng, m, n_inf, effect, k, _minority):
    labels = _balanced(rng, m, k)
    centres = effect * rng.standard_normal((k, n_inf))
    return centres[labels], labels, np.zeros(n_inf, dtype=np.int64)


def _modules(rng, m, n_inf, effect, k, _minority):
    blocks = np.arange(n_inf) % min(k, n_inf)
    factors = rng.standard_normal((m, min(k, n_inf)))
    return effect * factors[:, blocks], None, blocks


def _manifold(rng, m, n_inf, effect, _k, _minority):
    t = rng.uniform(0.0, 2.0 * np.pi, size=m)
    phase = rng.uniform(0.0, 2.0 * np.pi, size=n_inf)
    return effect * np.cos(t[:, None] - phase[None, :]), None, np.zeros(n_inf, dtype=np.int64)


def _shift(rng, m, n_inf, effect, k, _minority):
    labels = _balanced(rng, m, k)
    directions = rng.choice([-1.0, 1.0], size=(k, n_inf)) * rng.uniform(0.5, 1.0, (k, n_inf))
    directions -= directions.mean(axis=0)  # classes differ; the overall mean does not move
    return effect * directions[labels], labels, np.zeros(n_inf, dtype=np.int64)


def _imbalanced(rng, m, n_inf, effect, _k, minority):
    n_min = max(2, round(minority * m))
    labels = rng.permutation(
        np.r_[np.zeros(m - n_min, dtype=np.int64), np.ones(n_min, dtype=np.int64)]
    )
    directions = rng.choice([-1.0, 1.0], size=n_inf) * rng.uniform(0.5, 1.0, n_inf)
    return effect * labels[:, None] * directions[None, :], labels, np.zeros(n_inf, dtype=np.int64)


def _xor(rng, m, n_inf, effect, _k, _minority):
    labels = _balanced(rng, m, 2)
    pairs = n_inf // 2
    first = rng.choice([-1.0, 1.0], size=(m, pairs))
    # the second sign equals the first for class 0 and is its opposite for class 1
    second = first * np.where(labels == 0, 1.0, -1.0)[:, None]
    signal = np.empty((m, n_inf))
    signal[:, 0::2] = effect * first
    signal[:, 1::2] = effect * second
    return signal, labels, np.repeat(np.arange(pairs), 2)


def _linear(rng, m, n_inf, effect, _k, _minority):
    latent = rng.standard_normal((m, n_inf))
    weights = rng.choice([-1.0, 1.0], size=n_inf) * rng.uniform(0.5, 1.0, n_inf)
    y = latent @ weights / np.sqrt(np.sum(weights**2))  # unit variance
    return effect * latent, y, np.zeros(n_inf, dtype=np.int64)


def _product(rng, m, n_inf, effect, _k, _minority):
    latent = rng.standard_normal((m, n_inf))
    pairs = n_inf // 2
    y = (latent[:, 0::2] * latent[:, 1::2]).sum(axis=1) / np.sqrt(pairs)  # unit variance
    return effect * latent, y, np.repeat(np.arange(pairs), 2)


_SIGNALS = {
    "clusters": _clusters,
    "modules": _modules,
    "manifold": _manifold,
    "shift": _shift,
    "xor": _xor,
    "imbalanced": _imbalanced,
    "linear": _linear,
    "product": _product,
}
