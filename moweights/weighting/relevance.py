"""Criteria of a feature-weight vector that measure relevance to the classes, not spread.

The paper's C1–C3 (:mod:`moweights.weighting.criteria`) read distances on min–max scaled
data, where a feature's spread counts as much as its class signal: Eq. 1's c(i), which
``-C3`` maximises, is larger for a uniform noise feature (spread 1/3 of its range) than
for a Gaussian class-shifted one (most mass near its mean), so the paper's default puts
planted features below noise (``docs/guide/weighting.md``, "the paper's criteria").
The criteria here are invariant to multiplying all weights by one constant and never
reward a feature's spread on its own:

- ``FR`` **Fisher trace ratio** (Nie et al. 2008): the weighted between-class scatter
  over the weighted within-class scatter, ``Σ_i w_i² B_i / Σ_i w_i² W_i`` with
  ``B_i = Σ_c m_c (μ_ci − μ_i)²`` and ``W_i = Σ_c Σ_{x∈c} (x_i − μ_ci)²``: the class
  separation of the weighted space along the axes. A noise feature adds to the
  denominator what it adds to the numerator (nearly nothing), so its weight can only
  lower the ratio. Univariate in what it sees; cheap (two dot products).
- ``NCA`` **neighbourhood class agreement** (the soft leave-one-out nearest-neighbour
  accuracy of Goldberger et al. 2005, as NCFS weighs features with it, Yang et al. 2012):
  each sample i picks a neighbour j ≠ i with probability ``p_ij ∝ exp(−d_w(i,j)² / σ_i²)``,
  σ_i² its squared distance to its ``NCA_NEIGHBOURS``-th nearest neighbour, at least
  ``NCA_FLOOR`` times its mean squared distance (so the criterion is scale-free in w, and
  duplicates or a discrete feature, whose near distances are 0, do not collapse the
  bandwidth); ``Σ_{j: y_j = y_i} p_ij`` is the chance its neighbour
  shares its class; averaged within each class, then over classes (balanced). It sees
  feature interactions and redundancy: what matters is who is near whom in the weighted
  space. A soft neighbour, not a hard vote: a last-bit change of a distance changes the
  value by a last-bit amount instead of flipping a neighbour (machine-independent
  fronts).
- ``HM`` **hypothesis margin** (Gilad-Bachrach, Navot & Tishby 2004, the margin Relief
  maximises): per sample, ``(d_w(x, nearest miss) − d_w(x, nearest hit)) / 2``, averaged
  within classes then over classes, divided by the mean ``d_w`` over the pairs (so that
  scaling w or spreading a feature does not raise it).
- ``SP`` **effective share of features** ``Σ_i w_i / (n max_i w_i)``: the weight mass
  relative to the largest weight, from 1/n (one feature) to 1 (all weights equal), to
  minimise beside a relevance criterion: the front then runs from sparse weightings (a
  few features) to dense ones, and a feature's averaged rank over the front rewards being
  needed in small subsets. Scale-free like the relevance criteria (a plain weight mass
  would let every solution shrink towards zero weights without changing its relevance,
  and the front collapse onto one direction).

(``C3R``, Eq. 1 on ranks, is Eq. 1's own code: :mod:`moweights.weighting.criteria`.)

The pair criteria (NCA, HM) use every pair of a stratified subsample of at most
``s`` samples, ``s(s − 1)/2 ≤ max_pairs`` (200 samples at the default 20,000 pairs),
stored like C4's pairs: squared differences, single precision, (features × pairs).
"""

from __future__ import annotations

import numpy as np

from rankers.exceptions import InvalidInputError

__all__ = [
    "NCA_FLOOR",
    "NCA_NEIGHBOURS",
    "RELEVANCE",
    "PairSample",
    "Relevance",
    "pair_sample_size",
]

#: criterion -> (readable name, needs class labels, uses sample pairs)
RELEVANCE = {
    "FR": ("Fisher trace ratio", True, False),
    "NCA": ("neighbourhood class agreement", True, True),
    "HM": ("hypothesis margin", True, True),
    "SP": ("effective share of features", False, False),
}
#: the neighbour whose squared distance sets each sample's NCA bandwidth σ_i²
NCA_NEIGHBOURS = 5
#: σ_i² is at least this share of sample i's mean squared distance to the others
NCA_FLOOR = 0.1
#: individuals per block of the pair criteria (their (block × s × s) arrays)
_BLOCK_VALUES = 2**20
_TINY = 1e-300


def pair_sample_size(m: int, max_pairs: int | None) -> int:
    """Samples the pair criteria use: all ``m``, or the most whose pairs fit ``max_pairs``."""
    if max_pairs is None or m * (m - 1) // 2 <= max_pairs:
        return m
    return max(2, int((1.0 + np.sqrt(1.0 + 8.0 * float(max_pairs))) / 2.0))


def _stratified(codes: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` row indices, each class kept in proportion (at least 2 rows where it has them)."""
    m = len(codes)
    if size >= m:
        return np.arange(m)
    counts = np.bincount(codes)
    share = np.maximum(np.minimum(counts, 2), np.floor(counts * size / m)).astype(int)
    # hand out what rounding left, largest remainders first (ties: lower class first)
    left = size - share.sum()
    if left > 0:
        room = counts - share
        remainder = counts * size / m - np.floor(counts * size / m)
        for c in np.lexsort((np.arange(len(counts)), -remainder)):
            if left == 0:
                break
            take = min(room[c], left)
            share[c] += take
            left -= take
    rows = [rng.permutation(np.flatnonzero(codes == c))[: share[c]] for c in range(len(counts))]
    return np.sort(np.concatenate(rows))


class PairSample:
    """Every pair of a stratified sample subset: squared differences, single precision.

    Parameters
    ----------
    X : ndarray of shape (m, n)
        Scaled data.
    codes : ndarray of int of shape (m,)
        Class codes 0..C−1.
    max_pairs : int or None
        Bound on the pairs (the subset's size follows, :func:`pair_sample_size`).
    rng : numpy Generator
        Source of the subsample.
    """

    def __init__(self, X: np.ndarray, codes: np.ndarray, max_pairs, rng: np.random.Generator):
        m = X.shape[0]
        rows = _stratified(codes, pair_sample_size(m, max_pairs), rng)
        self.rows = rows
        self.codes = codes[rows]
        s = len(rows)
        self.i, self.j = np.triu_indices(s, k=1)
        Xt = np.ascontiguousarray(X[rows].T, dtype=np.float32)
        diff = Xt[:, self.i]
        diff -= Xt[:, self.j]
        self.pair_sq = np.square(diff, out=diff)  # (n, pairs)
        self.size = s
        # every (a, b) position of the (s × s) matrix -> its pair's column; the diagonal
        # -> one extra column that holds inf (a sample is not its own neighbour)
        full = np.full((s, s), len(self.i), dtype=np.intp)
        full[self.i, self.j] = np.arange(len(self.i))
        full[self.j, self.i] = np.arange(len(self.i))
        self._full = full.ravel()
        same = self.codes[:, None] == self.codes[None, :]
        np.fill_diagonal(same, False)
        self.same = same
        self.same_f = same.astype(np.float32)
        sizes = np.bincount(self.codes).astype(np.float64)
        # balanced: each class weighs 1/C, shared by its samples
        self.sample_weight = 1.0 / (len(sizes) * sizes[self.codes])

    def distances(self, W2: np.ndarray) -> np.ndarray:
        """Squared weighted distances (P, s, s), single precision, for squared weights ``W2``
        (P, n); the diagonal is inf."""
        v = np.empty((len(W2), len(self.i) + 1), dtype=np.float32)
        np.matmul(W2.astype(np.float32), self.pair_sq, out=v[:, :-1])  # (P, pairs)
        v[:, -1] = np.inf
        return np.take(v, self._full, axis=1).reshape(len(W2), self.size, self.size)

    def block(self) -> int:
        return max(1, _BLOCK_VALUES // (self.size * self.size))


class Relevance:
    """Precomputed parts of the relevance criteria for one scaled data set.

    Parameters
    ----------
    X : ndarray of shape (m, n)
        Data, min–max scaled to [0, 1].
    y : ndarray or None
        Class labels (needed by every criterion but ``SP``).
    needed : iterable of str
        Which of :data:`RELEVANCE` will be evaluated.
    max_pairs : int or None
        Bound on the sample pairs of NCA and HM.
    rng : numpy Generator
        Source of their sample subset.
    """

    def __init__(self, X: np.ndarray, y, needed, max_pairs, rng: np.random.Generator):
        needed = tuple(needed)
        self.n_features = X.shape[1]
        labelled = [c for c in needed if RELEVANCE[c][1]]
        if labelled and y is None:
            raise InvalidInputError(
                f"criteria {', '.join(labelled)} need class labels y; pass fit(X, y)"
            )
        codes = None if y is None else np.unique(np.asarray(y), return_inverse=True)[1]
        if "FR" in needed:
            sizes = np.bincount(codes).astype(np.float64)
            centroids = np.zeros((len(sizes), X.shape[1]))
            np.add.at(centroids, codes, X)
            centroids /= sizes[:, None]
            self._between = sizes @ (centroids - X.mean(axis=0)) ** 2
            self._within = ((X - centroids[codes]) ** 2).sum(axis=0)
        self.pairs = None
        if any(RELEVANCE[c][2] for c in needed):
            self.pairs = PairSample(X, codes, max_pairs, rng)

    # --- the criteria: W is (P, n), each returns (P,) --------------------------------
    def fisher(self, W: np.ndarray) -> np.ndarray:
        """FR: Σ w² B / Σ w² W (0 where every weight is 0)."""
        W2 = W**2
        num, den = W2 @ self._between, W2 @ self._within
        out = np.zeros(len(W))
        ok = den > 0
        out[ok] = num[ok] / den[ok]
        return out

    def sparsity(self, W: np.ndarray) -> np.ndarray:
        """SP: Σ w / (n max w), 0 where every weight is 0."""
        top = W.max(axis=1)
        out = np.zeros(len(W))
        ok = top > 0
        out[ok] = W[ok].sum(axis=1) / (W.shape[1] * top[ok])
        return out

    def _pairwise(self, W: np.ndarray, one) -> np.ndarray:
        W2 = np.square(W)
        out = np.empty(len(W))
        rows = self.pairs.block()
        for start in range(0, len(W), rows):
            out[start : start + rows] = one(self.pairs.distances(W2[start : start + rows]))
        return out

    def nca(self, W: np.ndarray) -> np.ndarray:
        """NCA: balanced soft leave-one-out nearest-neighbour class agreement."""
        pairs = self.pairs
        k = min(NCA_NEIGHBOURS, pairs.size - 1)

        def one(D):
            # σ_i²: the k-th smallest squared distance of row i (a continuous function of
            # the distances, whichever neighbour it is), at least NCA_FLOOR x the row's
            # mean; all-zero weights (every distance 0) give 1 (then every p_ij is equal)
            finite = np.where(np.isinf(D), np.float32(0.0), D)
            mean = finite.sum(axis=2, dtype=np.float64) / (pairs.size - 1)
            sigma = np.partition(D, k - 1, axis=2)[:, :, k - 1]
            sigma = np.maximum(sigma, (NCA_FLOOR * mean).astype(np.float32))
            sigma = np.where(sigma > 0, sigma, np.float32(1.0))
            # exp(−d²/σ²): the nearest neighbour's term is at least exp(−1), so no shift
            # is needed against underflow; the diagonal's inf gives 0
            U = np.divide(D, -sigma[:, :, None], out=D)
            np.exp(U, out=U)
            total = U.sum(axis=2, dtype=np.float64)
            agree = np.einsum("pab,ab->pa", U, pairs.same_f, dtype=np.float64) / total
            return agree @ pairs.sample_weight

        return self._pairwise(W, one)

    def margin(self, W: np.ndarray) -> np.ndarray:
        """HM: balanced mean hypothesis margin over the mean weighted distance."""
        pairs = self.pairs
        same = pairs.same
        other = ~same
        np.fill_diagonal(other, False)

        def one(D):
            d = np.sqrt(D)  # the diagonal stays inf
            finite = np.where(np.isinf(d), 0.0, d)
            mean = finite.sum(axis=(1, 2)) / (pairs.size * (pairs.size - 1))
            hit = np.where(same, d, np.inf).min(axis=2)
            miss = np.where(other, d, np.inf).min(axis=2)
            # a class of one sample has no hit: it counts as margin 0
            theta = np.where(np.isfinite(hit) & np.isfinite(miss), 0.5 * (miss - hit), 0.0)
            out = theta @ pairs.sample_weight
            ok = mean > 0
            out[ok] /= mean[ok]
            out[~ok] = 0.0
            return out

        return self._pairwise(W, one)

    def table(self) -> dict:
        return {
            "FR": self.fisher,
            "NCA": self.nca,
            "HM": self.margin,
            "SP": self.sparsity,
        }
