"""Quality criteria of a feature-weight vector, evaluated for a whole population at once.

The criteria of the multiobjective weighting paper (Zaharie, Lungeanu & Holban), as
SPEC §4 fixes them, on min–max scaled data with the weighted Euclidean distance
``d_w(x, y) = sqrt(sum_i w_i² (x_i - y_i)²)``:

- C1 intra-class dissimilarity: mean d_w from each sample to its class centroid;
- C2 inter-class dissimilarity: class-size-weighted mean d_w from the class centroids
  to the overall centroid;
- C3 attribute–class correlation: Eq. 1, ``sum_i w_i c(i) / sum_i w_i`` with
  φ = 1 for pairs of different classes and −0.05 for pairs of the same class;
- C4 entropy: Eq. 2 with ``s_ij = exp(-α d_w(x_i, x_j))``, ``α = -ln 0.5 / mean d_w``,
  s_ij clipped to (ε, 1 − ε), averaged over pairs.

Beside them, criteria that measure relevance instead of spread
(:mod:`moweights.weighting.relevance`: FR, NCA, HM, SP, C3R), and named sets of
objectives (:data:`PRESETS`): ``"paper"`` is the paper's ``("C1", "-C2", "-C3")``.

Everything that does not depend on the weights is computed once in
:class:`Criteria` (``fit`` time); evaluating a population ``W`` (P × n) is then one
matrix product per criterion, with no Python loop over individuals or pairs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.stats import rankdata

from moweights.weighting.relevance import RELEVANCE, Relevance, pair_sample_size
from rankers.exceptions import InvalidInputError, InvalidParameterError

__all__ = [
    "ALIASES",
    "CRITERIA",
    "ENTROPY_DTYPE",
    "PRECISIONS",
    "PRESETS",
    "Criteria",
    "n_entropy_pairs",
    "objective_label",
    "parse_objectives",
    "peak_bytes",
]

#: the paper's criteria -> (readable name, needs class labels)
PAPER_CRITERIA = {
    "C1": ("intra-class dissimilarity", True),
    "C2": ("inter-class dissimilarity", True),
    "C3": ("attribute-class correlation", True),
    "C4": ("entropy", False),
}
#: every criterion -> (readable name, needs class labels): the paper's, then relevance.py's
CRITERIA = {
    **PAPER_CRITERIA,
    "C3R": ("rank attribute-class correlation", True),
    **{k: v[:2] for k, v in RELEVANCE.items()},
}
ALIASES = {
    "intra": "C1",
    "inter": "C2",
    "correlation": "C3",
    "entropy": "C4",
    "fisher": "FR",
    "nca": "NCA",
    "margin": "HM",
    "sparsity": "SP",
    "rank_correlation": "C3R",
}
#: significant bits of the relevance criteria's values as the search compares them
#: (:meth:`Criteria.search_values`): about 1e-10 relative, far above a few ulps
SEARCH_BITS = 33
#: named sets of objectives: the paper's default row, and the default of MOWeighting
PRESETS = {
    "paper": ("C1", "-C2", "-C3"),
    "relevance": ("-NCA", "-FR", "SP"),
}

#: φ of Eq. 1 for a pair of samples of the same class (pairs of different classes: 1)
PHI_SAME = -0.05
_EPS = 1e-12
#: precision of C4's pair arrays (its whole cost), by name; "single" is the default
PRECISIONS = {"single": np.float32, "double": np.float64}
#: the default precision of C4's pair arrays, see Criteria.entropy
ENTROPY_DTYPE = np.float32
#: pair values per block of C4's evaluation (single precision: 1 MiB, cache-sized)
_BLOCK_VALUES = 2**18


def _entropy_constants(dtype):
    """u = α d_w at which s = exp(−u) reaches 1 − ε and ε (the clip of Eq. 2), ε, 1 and
    ln 2, in C4's precision (a double-precision scalar would upcast single arrays)."""
    return (
        dtype(-np.log1p(-_EPS)),
        dtype(-np.log(_EPS)),
        dtype(_EPS),
        dtype(1.0),
        dtype(np.log(2.0)),
    )


#: the direction an explicit ``min:``/``max:`` prefix gives: the sign the criterion is multiplied by
_EXPLICIT = {"min": 1.0, "max": -1.0}


def parse_objectives(objectives) -> list[tuple[str, float]]:
    """Turn ``("C1", "-C2", "-inter")``-style objectives into ``[(criterion, sign)]``.

    NSGA-II minimises ``sign * criterion`` for every pair. The notation is the weighting
    paper's, read so that its rows mean what the paper means:

    - ``C1``, ``C2``, ``C3`` are minimised; a leading "-" minimises the negation, i.e.
      maximises the criterion (``("C1", "-C2", "-C3")``: small intra-class, large
      inter-class dissimilarity, large attribute–class correlation).
    - ``C4`` (entropy) is minimised whether it is written ``C4`` or ``-C4``. Eq. 2 of the
      paper defines the entropy with its leading minus, and every row the paper prints
      minimises it (low entropy = clear cluster structure, Handl & Knowles); read as a
      negation, its ``(-C2, -C4)`` row would maximise the entropy and rank the class
      label eighth of eight informative features instead of first.
    - ``min:C4`` / ``max:C4`` (any criterion or alias) state the direction explicitly;
      ``max:C4`` is the only way to maximise the entropy.
    """
    if isinstance(objectives, str):
        objectives = PRESETS.get(objectives.strip().lower(), [objectives])
    out: list[tuple[str, float]] = []
    for item in objectives:
        if not isinstance(item, str) or not item.strip():
            raise InvalidParameterError(
                f"an objective must be a string like 'C1', '-C2' or 'max:C4'; got {item!r}"
            )
        text = item.strip()
        prefix, colon, rest = text.partition(":")
        if colon:
            if prefix.strip().lower() not in _EXPLICIT:
                raise InvalidParameterError(
                    f"unknown direction {prefix!r} in objective {item!r}; use 'min:' or 'max:'"
                )
            sign = _EXPLICIT[prefix.strip().lower()]
            text = rest.strip()
            if text.startswith(("-", "+")):
                raise InvalidParameterError(
                    f"objective {item!r} gives a direction twice; write 'min:C2' or '-C2'"
                )
        else:
            sign = -1.0 if text.startswith("-") else 1.0
        key = text.lstrip("+-").strip()
        key = ALIASES.get(key.lower(), key.upper())
        if key not in CRITERIA:
            valid = ", ".join(list(CRITERIA) + list(ALIASES))
            raise InvalidParameterError(
                f"unknown criterion {item!r}; valid: {valid} "
                "(optionally with '-', or with 'min:' / 'max:'), or one of the named sets "
                f"{', '.join(map(repr, PRESETS))} alone"
            )
        if key == "C4" and not colon:
            sign = 1.0  # the paper's "-C4" is the entropy of Eq. 2, minimised (see above)
        out.append((key, sign))
    if not out:
        raise InvalidParameterError("objectives is empty: give at least one criterion")
    keys = [k for k, _ in out]
    if len(set(keys)) != len(keys):
        raise InvalidParameterError(f"a criterion is listed twice in {list(objectives)!r}")
    return out


def objective_label(key: str, sign: float) -> str:
    """The column name of a minimised objective: ``C1``, ``-C2`` or ``max:C4``.

    :func:`parse_objectives` reads every label back to the same ``(key, sign)``.
    """
    if sign > 0:
        return key
    return "max:C4" if key == "C4" else f"-{key}"


def needs_labels(keys) -> bool:
    """Whether any of the criteria ``keys`` needs class labels."""
    return any(CRITERIA[key][1] for key in keys)


def _pair_abs_sum(X: np.ndarray) -> np.ndarray:
    """Σ_{j<k} |x_j - x_k| per column, exactly, in O(m log m).

    With the values sorted, x_(r) appears r − 1 times as the larger and m − r times as
    the smaller member of a pair, so it weighs 2r − m − 1.
    """
    m = X.shape[0]
    if m < 2:
        return np.zeros(X.shape[1])
    weights = 2.0 * np.arange(1, m + 1) - m - 1
    return weights @ np.sort(X, axis=0)


def n_entropy_pairs(m: int, max_pairs: int | None) -> int:
    """Number of sample pairs C4 uses: all ``m(m−1)/2``, or ``max_pairs`` when fewer."""
    n_pairs = m * (m - 1) // 2
    return n_pairs if max_pairs is None else min(n_pairs, int(max_pairs))


def entropy_block(n_pairs: int) -> int:
    """Individuals per block of C4's evaluation: about a megabyte of pair values each."""
    return max(1, _BLOCK_VALUES // max(int(n_pairs), 1))


def peak_bytes(
    m: int, n: int, needed, max_pairs: int | None, pop_size: int, precision: str = "single"
) -> float:
    """Peak bytes of :class:`Criteria` and of evaluating populations of ``pop_size``.

    C4 holds the squared differences of its pairs (4 bytes per pair and feature in single
    precision, 8 in double, plus the pair indices when all pairs are used) and, per block
    of individuals (:func:`entropy_block`), three (block × pairs) arrays.
    C1–C3 hold a few (samples × features) arrays. Measured with tracemalloc
    (``benchmarks/memory/bench_memory.py``, ``tests/rankers/test_memory.py``).
    """
    linear = 32.0 * m * n
    if set(needed) & {"NCA", "HM"}:
        # every pair of a subsample: squared differences (single precision, and the
        # gathering's copy), and a block of (individuals x s x s) single-precision arrays
        s = pair_sample_size(m, max_pairs)
        pairs = s * (s - 1) / 2.0
        block = min(max(1, 2**20 // (s * s)), int(pop_size))
        linear += 8.0 * pairs * n + 4.0 * (pairs + 1) * block + 5 * 4.0 * block * s * s
    if "C4" not in needed:
        return linear
    pairs = n_entropy_pairs(m, max_pairs)
    indices = 18.0 * pairs if pairs == m * (m - 1) // 2 else 0.0  # np.triu_indices
    block = min(entropy_block(pairs), int(pop_size))
    size = 8.0 if precision == "double" else 4.0
    return size * pairs * n + max(indices, 3.0 * size * pairs * block) + linear


@dataclass
class Criteria:
    """Precomputed, weight-independent parts of C1–C4 for one (scaled) data set.

    Parameters
    ----------
    X : ndarray of shape (m, n)
        Data, min–max scaled to [0, 1] by the caller.
    y : ndarray of int of shape (m,), or None
        Class codes 0..C−1; required for C1–C3.
    needed : iterable of str
        Which criteria will be evaluated (only their precomputation is done).
    max_pairs : int or None
        Number of sample pairs C4 uses (a seeded subsample when m(m−1)/2 is larger).
    rng : numpy Generator
        Source of the pair subsample.
    precision : {"single", "double"}, default="single"
        Floating-point precision of C4's pair arrays (C1–C3 are always double).
    """

    X: np.ndarray
    y: np.ndarray | None
    needed: tuple[str, ...]
    max_pairs: int | None = None
    rng: np.random.Generator = field(default_factory=np.random.default_rng)
    precision: str = "single"

    def __post_init__(self):
        X = np.asarray(self.X, dtype=np.float64)
        m, n = X.shape
        self.n_features = n
        if any(c in ("C1", "C2", "C3", "C3R") for c in self.needed):
            if self.y is None:
                labelled = [c for c in self.needed if CRITERIA[c][1]]
                raise InvalidInputError(
                    f"criteria {', '.join(labelled)} need class labels y; pass fit(X, y) "
                    "or use only unsupervised criteria (C4, entropy)"
                )
            y = np.asarray(self.y)
            classes, codes = np.unique(y, return_inverse=True)
            sizes = np.bincount(codes).astype(np.float64)
            centroids = np.zeros((len(classes), n))
            np.add.at(centroids, codes, X)
            centroids /= sizes[:, None]
            # C1: squared differences of every sample to its own class centroid (m × n)
            self._intra_sq = (X - centroids[codes]) ** 2
            # C2: squared differences of class centroids to the overall centroid (C × n)
            self._inter_sq = (centroids - X.mean(axis=0)) ** 2
            self._class_share = sizes / m
            # C3: c(i) of Eq. 1. Σ_{pairs} |Δ| φ = S_all − (1 − φ_same) S_same, where S_same
            # sums over pairs within a class; the sums are exact via sorting (no pairs).
            s_all = _pair_abs_sum(X)
            s_same = sum(_pair_abs_sum(X[codes == c]) for c in range(len(classes)))
            # Eq. 1 sums over j ≠ k (each unordered pair twice) and divides by m(m−1)/2
            self.c_ = 2.0 * (s_all - (1.0 - PHI_SAME) * s_same) / (m * (m - 1) / 2.0)
            if "C3R" in self.needed:
                # C3R: Eq. 1 on each feature's ranks scaled to [0, 1]: without ties every
                # feature's ranks spread alike, so c(i) keeps only the class term
                R = (rankdata(X, axis=0) - 1.0) / max(m - 1, 1)
                r_all = _pair_abs_sum(R)
                r_same = sum(_pair_abs_sum(R[codes == c]) for c in range(len(classes)))
                self.c_rank_ = 2.0 * (r_all - (1.0 - PHI_SAME) * r_same) / (m * (m - 1) / 2.0)
        if "C4" in self.needed:
            n_pairs = m * (m - 1) // 2
            if n_entropy_pairs(m, self.max_pairs) < n_pairs:
                i = self.rng.integers(0, m, size=self.max_pairs)
                j = (i + self.rng.integers(1, m, size=self.max_pairs)) % m  # j ≠ i
            else:
                i, j = np.triu_indices(m, k=1)
            # float32: the pair work is C4's whole cost, and single precision runs the
            # transcendental functions several times faster (SIMD); see entropy()
            # stored (n, n_pairs): the reductions over pairs then run along contiguous
            # memory, with numpy's pairwise summation (accurate in single precision)
            if self.precision not in PRECISIONS:
                raise InvalidParameterError(
                    f"entropy_precision must be one of {', '.join(PRECISIONS)}; "
                    f"got {self.precision!r}"
                )
            self._dtype = PRECISIONS[self.precision]
            Xt = np.ascontiguousarray(X.T, dtype=self._dtype)
            diff = Xt[:, i]
            diff -= Xt[:, j]
            self._pair_sq = np.square(diff, out=diff)  # (n, n_pairs)
            self.n_pairs = len(i)
        relevance = [c for c in self.needed if c in RELEVANCE]
        self._relevance = (
            Relevance(X, self.y, relevance, self.max_pairs, self.rng) if relevance else None
        )

    # --- the criteria: W is (P, n), each returns (P,) --------------------------------
    def intra(self, W: np.ndarray) -> np.ndarray:
        """C1: mean weighted distance of samples to their class centroid."""
        return np.sqrt(self._intra_sq @ (W**2).T).mean(axis=0)

    def inter(self, W: np.ndarray) -> np.ndarray:
        """C2: class-size-weighted mean weighted distance of centroids to the overall centroid."""
        return self._class_share @ np.sqrt(self._inter_sq @ (W**2).T)

    def correlation(self, W: np.ndarray) -> np.ndarray:
        """C3: Eq. 1, the weight-averaged attribute–class correlation (0 when all w = 0)."""
        total = W.sum(axis=1)
        out = np.zeros(len(W))
        ok = total > 0
        out[ok] = (W[ok] @ self.c_) / total[ok]
        return out

    def rank_correlation(self, W: np.ndarray) -> np.ndarray:
        """C3R: Eq. 1's weighted mean of c(i) computed on ranks (0 when all w = 0)."""
        total = W.sum(axis=1)
        out = np.zeros(len(W))
        ok = total > 0
        out[ok] = (W[ok] @ self.c_rank_) / total[ok]
        return out

    def entropy(self, W: np.ndarray) -> np.ndarray:
        """C4: Eq. 2 averaged over pairs, s_ij clipped to (ε, 1 − ε).

        With ``u = α d_w`` the logarithm of ``s = exp(−u)`` is known, ``ln s = −u``, so per
        pair only ``exp`` and one ``log`` (of ``1 − s``) are computed, and clipping ``s``
        to (ε, 1 − ε) is clipping ``u`` to (−ln(1 − ε), −ln ε). The pair arrays are
        single precision by default (``precision``) and the population is taken a few
        individuals at a time, so that the arrays stay in the processor's cache (the
        block depends only on the number of pairs: the same data give the same blocks).
        The value agrees with the direct formula in double precision to about 1e-6
        relative (``tests/moweights/weighting/test_criteria.py`` checks both by hand).
        """
        u_low, u_high, eps, one, ln2 = _entropy_constants(self._dtype)
        w2 = np.square(np.atleast_2d(W)).astype(self._dtype)
        out = np.empty(len(w2))
        rows = entropy_block(self.n_pairs)
        for start in range(0, len(w2), rows):
            v = w2[start : start + rows] @ self._pair_sq  # squared distances (rows, pairs)
            np.sqrt(v, out=v)  # d_w
            mean_d = v.mean(axis=1)
            alpha = np.zeros_like(mean_d)
            ok = mean_d > 0  # all-zero weights: every distance is 0, every s_ij is 1 − ε
            alpha[ok] = ln2 / mean_d[ok]
            v *= -alpha[:, None]  # v = −u = ln s
            np.clip(v, -u_high, -u_low, out=v)  # s = exp(v) in (ε, 1 − ε)
            s = np.exp(v)
            v *= s  # s ln s
            np.subtract(one, s, out=s)  # 1 − s
            np.maximum(s, eps, out=s)  # ≥ ε already, unless single precision rounds to 0
            h = np.log(s)
            h *= s  # (1 − s) ln(1 − s)
            v += h
            out[start : start + rows] = -v.mean(axis=1)
        return out

    def search_values(self, W: np.ndarray, objectives: list[tuple[str, float]]) -> np.ndarray:
        """The objectives as NSGA-II compares them: :meth:`evaluate`, with the relevance
        criteria's values rounded to ``SEARCH_BITS`` significant bits.

        On data with exact ties (values on a grid, duplicates) two weightings can have
        equal relevance in exact arithmetic and values a few ulps apart in floating point,
        whose order depends on the machine's summation order; rounded, they compare equal
        on every machine, so the search takes the same path (a tie rule for the order of
        the search only: the reported ``pareto_objectives_`` are recomputed exactly). The
        paper's C1–C4 are compared as computed, so that its fronts stay what they were.
        """
        F = self.evaluate(W, objectives)
        for col, (key, _) in enumerate(objectives):
            if key not in PAPER_CRITERIA:
                mantissa, exponent = np.frexp(F[:, col])
                F[:, col] = np.ldexp(np.round(mantissa * 2.0**SEARCH_BITS), exponent - SEARCH_BITS)
        return F

    def evaluate(self, W: np.ndarray, objectives: list[tuple[str, float]]) -> np.ndarray:
        """Objective matrix (P, len(objectives)) to minimise, signs applied."""
        W = np.atleast_2d(np.asarray(W, dtype=np.float64))
        table = {"C1": self.intra, "C2": self.inter, "C3": self.correlation, "C4": self.entropy}
        table["C3R"] = self.rank_correlation
        if self._relevance is not None:
            table.update(self._relevance.table())
        return np.column_stack([sign * table[key](W) for key, sign in objectives])
