"""SPEC: spectral feature selection, how well a feature follows the similarity graph's spectrum."""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.utils import check_random_state

from rankers.base import BaseRanker
from rankers.memory import check_memory
from rankers.neighbors import choose_components, search_space
from rankers.unsupervised._affinity import knn_affinity, nontrivial_eigenvectors
from rankers.utils.param_validation import Interval, StrOptions

__all__ = ["SPECRanker"]

# largest (rows x n_samples) block of the RBF kernel held at once (~32 MB of float64)
_BLOCK_ELEMENTS = 1 << 22


class SPECRanker(BaseRanker):
    """Rank features by SPEC, the spectral feature selection of Zhao & Liu (2007).

    The samples are linked by a similarity matrix ``S`` (by default the full RBF kernel
    ``S_ij = exp(-γ ||x_i - x_j||²)``, as in the paper). With ``D = diag(S 1)``, the
    normalised Laplacian ``L̂ = I - D^{-1/2} S D^{-1/2}`` (eigenpairs ``λ_j, ξ_j``,
    ascending, ``ξ_1 ∝ D^{1/2} 1`` trivial) and a feature ``f`` turned into
    ``f̂ = D^{1/2} f / ||D^{1/2} f||``, the three rankings of the paper are

    * ``style=-1``: ``φ1 = f̂ᵀ L̂ f̂ = fᵀLf / fᵀDf`` (lower is better);
    * ``style=0``: ``φ2 = φ1 / (1 - (f̂ᵀξ_1)²)``, which drops the trivial component and
      equals the Laplacian score ``f̃ᵀLf̃ / f̃ᵀDf̃`` of the D-centred feature on ``S``
      (lower is better; scikit-feature's default);
    * ``style=s >= 2``: ``φ3 = Σ_{j=2..s} (2 - λ_j) (f̂ᵀξ_j)²`` over the ``s - 1``
      smallest non-trivial eigenvalues (higher is better).

    All lie in [0, 2]. ``statistic_`` holds the paper's value; ``scores_`` is
    ``2 - φ`` for styles -1 and 0 and ``φ3`` itself for ``s >= 2``, so higher is better
    for every style. Styles -1 and 0 need no eigendecomposition (the sums over the
    spectrum collapse to ``fᵀLf`` and ``fᵀDf``): they cost one pass over the kernel,
    computed in row blocks, so no ``n_samples`` square matrix is held. Style ``s``
    needs ``s - 1`` eigenvectors and holds the kernel (dense for ``affinity="rbf"``:
    about 24 bytes per pair of samples, 2.4 GB for 10,000 samples, checked against the
    memory available before it is built; use ``affinity="knn"`` for many samples).

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.
    style : int, default=0
        -1, 0, or ``s >= 2`` as above (scikit-feature's encoding and default). ``s`` is
        clipped to ``n_samples``.
    affinity : {"rbf", "knn"}, default="rbf"
        ``"rbf"``: the full RBF kernel (the paper's graph); ``"knn"``: a sparse
        symmetric kNN graph (Euclidean neighbours) with heat-kernel weights on its edges.
    gamma : "auto" or float > 0, default="auto"
        Kernel coefficient, ``S_ij = exp(-γ d²_ij)``. ``"auto"``: for ``"rbf"``,
        ``γ = 1 / (2 Σ_j Var(x_j))``, the inverse mean squared distance between two
        samples; for ``"knn"``, the inverse mean squared length of the graph's edges.
        Either way scaling all features by one constant leaves the scores unchanged.
        scikit-feature uses ``γ = 1`` on the raw data, which makes the kernel the
        identity matrix on data whose distances are large (e.g. pixels in 0..16).
    n_neighbors : int, default=5
        Neighbours per sample for ``affinity="knn"`` (clipped to ``n_samples - 1``).
    random_state : int, RandomState instance or None, default=None
        Seeds the start vector of the sparse eigensolver (styles ``s >= 2`` only).
    knn_components : int or None, default=None
        For ``affinity="knn"``: None finds the neighbours among all features (the exact
        graph); an int among the first ``knn_components`` principal components, an
        approximate graph for many samples (see
        :class:`~rankers.unsupervised.laplacian.LaplacianRanker`). Sparse input stays
        sparse with ``affinity="knn"`` and styles -1 and 0.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        Higher = more relevant, in [0, 2]; 0 for constant features.
    statistic_ : ndarray of shape (n_features,)
        The paper's ``φ1``, ``φ2`` (lower is better; 2 for constant features) or
        ``φ3`` (higher is better, equal to ``scores_``).
    ranking_ : ndarray of shape (n_features,)
        Feature indices, best first.
    gamma_ : float
        Kernel coefficient used.
    eigenvalues_ : ndarray of shape (style - 1,)
        For ``style >= 2``, the eigenvalues ``λ_2 <= ... <= λ_s`` used.
    n_neighbors_ : int
        Neighbours per sample used (``affinity="knn"``).

    See Also
    --------
    rankers.unsupervised.laplacian.LaplacianRanker : the Laplacian score on a kNN
        heat-kernel graph; ``style=0`` is that score on SPEC's graph.

    Notes
    -----
    **Many samples.** With ``affinity="knn"`` and ``knn_components=None``, above
    :data:`rankers.neighbors.EXACT_MAX_SAMPLES` (10,000) samples the neighbours are
    searched among the first 50 principal components (approximate), said in a
    ``UserWarning``: the exact search costs samples² x features. Pass
    ``knn_components`` explicitly to choose.

    scikit-feature's ``SPEC.spec`` (skfeature-chappers 1.2.1) returns the paper's
    statistic, but its ``feature_ranking`` sorts styles -1 and 0 in descending order
    and ``s >= 2`` in ascending order: the opposite of the paper for all three
    styles (its sentinels for zero features, 1000 and -1000, follow the paper's
    direction). This ranker follows the paper.

    **Where it works.** On the planted-structure atlas (every structure; 200 samples, 200 and
    2,000 features, 0.5-50 % of them informative, 2 seeds; the mean share of the planted
    features in its top k, against a random ranking's), it recovers manifold, clusters, shift;
    it recovers part of modules, imbalanced; it fails on xor (within 0.1 of chance). The shares
    are in ``benchmarks/results/atlas_grid/summary.md``; :doc:`/guide/which-ranker` has the
    tables and heat maps.

    References
    ----------
    .. [1] Z. Zhao and H. Liu, "Spectral Feature Selection for Supervised and
       Unsupervised Learning", ICML 2007, 1151-1157.

    Examples
    --------
    >>> import numpy as np
    >>> from rankers.unsupervised.spec import SPECRanker
    >>> rng = np.random.default_rng(0)
    >>> groups = np.repeat([0.0, 4.0], 20)
    >>> X = np.column_stack([rng.normal(size=40), groups + 0.3 * rng.normal(size=40)])
    >>> SPECRanker().fit(X).ranking_.tolist()
    [1, 0]
    """

    name = "spec"
    target_kind = "unsupervised"
    accepts_sparse = True  # kept sparse by the kNN graph; the RBF kernel makes it dense
    deterministic = True
    scale_invariant = True
    reference: ClassVar[str] = (
        "Zhao & Liu (2007), Spectral Feature Selection for Supervised and Unsupervised Learning"
    )
    _constant_score: ClassVar[float] = 0.0

    _parameter_constraints: ClassVar[dict] = {
        **BaseRanker._parameter_constraints,
        "style": [
            Interval(Integral, -1, 0, closed="both"),
            Interval(Integral, 2, None, closed="left"),
        ],
        "affinity": [StrOptions({"rbf", "knn"})],
        "gamma": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "knn_components": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(
        self,
        k=None,
        style: int = 0,
        affinity: str = "rbf",
        gamma="auto",
        n_neighbors: int = 5,
        random_state=None,
        knn_components: int | None = None,
    ):
        self.k = k
        self.style = style
        self.affinity = affinity
        self.gamma = gamma
        self.n_neighbors = n_neighbors
        self.random_state = random_state
        self.knn_components = knn_components

    def _statistic_from_scores(self, scores: np.ndarray) -> np.ndarray:
        return scores.copy() if self.style >= 2 else 2.0 - scores

    def _score_units(self) -> int | None:
        return 0 if self.gamma == "auto" else None  # a fixed gamma is in units of X**-2

    def _score(self, X, y, context):
        m, n = X.shape
        style = int(self.style)
        if sp.issparse(X) and (self.affinity != "knn" or style >= 2):
            check_memory(
                8.0 * m * n,
                f"SPEC on {m} x {n} sparse data made dense (affinity={self.affinity!r})",
                "affinity='knn' with style 0 or -1 (sparse data stay sparse)",
            )
            X = X.toarray()
        if self.affinity == "knn":
            t = "auto" if self.gamma == "auto" else 1.0 / float(self.gamma)
            space = None
            components = choose_components(self.knn_components, m, n, "SPECRanker")
            if components is not None:
                space = search_space(X, components)
            elif sp.issparse(X):  # the exact search needs dense rows
                X = search_space(X, None, what="SPEC's graph")
            graph = knn_affinity(
                X, self.n_neighbors, metric="euclidean", weight_mode="heat", t=t, space=space
            )
            self.n_neighbors_ = graph.n_neighbors
            gamma = 1.0 / graph.t
            S = graph.W
        else:
            gamma = _auto_gamma(X) if self.gamma == "auto" else float(self.gamma)
            S = None
        # X may have been rescaled by a power of two (BaseRanker.fit): gamma_ is in the
        # caller's units, X**-2
        self.gamma_ = float(context.to_data_units(gamma, -2))
        if style >= 2:
            if S is None:  # the eigenvectors need the kernel itself
                check_memory(
                    _dense_peak_bytes(m, n),
                    f"SPEC's dense RBF kernel over {m} samples (style={style})",
                    "affinity='knn' (a sparse kNN graph, memory linear in the samples), "
                    "style=0 or -1 (the kernel is visited in blocks), or fewer samples",
                )
                S = rbf_kernel(X, gamma=gamma)
            return self._phi3(X, S, min(style, m))
        if sp.issparse(X):
            return _sparse_phi(X, S, style)
        d, SX = _degree_and_product(S, X) if S is not None else _rbf_pass(X, gamma)
        if d.sum() <= 0.0:  # every kNN heat weight underflowed (a fixed gamma far too large)
            return np.zeros(n)
        if style == 0:
            mean = (d @ X) / d.sum()
            Xt = X - mean  # D-centred: drops the trivial component
            SX -= np.outer(d, mean)  # S (X - 1 meanᵀ)
        else:
            Xt = X
        den = np.einsum("i,ij,ij->j", d, Xt, Xt)  # fᵀDf
        num = den - np.einsum("ij,ij->j", Xt, SX)  # fᵀLf = fᵀDf - fᵀSf
        # a feature that varies only on samples of degree 0 (heat weights that
        # underflowed) is constant as far as the graph can tell: worst statistic
        scale = np.finfo(np.float64).eps * 64 * np.abs(Xt).max(axis=0)
        seen = den > d.sum() * scale**2
        phi = np.full(n, 2.0)
        phi[seen] = np.clip(num[seen] / den[seen], 0.0, 2.0)
        return 2.0 - phi

    def _phi3(self, X, S, s):
        mu, U, sqrt_d, _ = nontrivial_eigenvectors(S, s - 1, check_random_state(self.random_state))
        self.eigenvalues_ = 1.0 - mu  # λ_2 <= ... <= λ_s of the normalised Laplacian
        Fh = sqrt_d[:, None] * X  # D^{1/2} f for every feature
        norms2 = np.einsum("ij,ij->j", Fh, Fh)
        alpha2 = (U.T @ Fh) ** 2  # (ξ_jᵀ D^{1/2} f)², one row per eigenvector
        score = (1.0 + mu) @ alpha2  # 2 - λ_j = 1 + μ_j
        out = np.zeros(X.shape[1])
        ok = norms2 > 0
        out[ok] = np.clip(score[ok] / norms2[ok], 0.0, 2.0)
        return out


def _dense_peak_bytes(m: int, n: int) -> float:
    """Peak bytes of a style >= 2 fit on the dense RBF kernel: the kernel and the
    normalised matrix built from it, with one temporary, all m x m float64 (measured
    with tracemalloc, ``benchmarks/memory/bench_memory.py``)."""
    return 24.0 * m * m + 16.0 * m * n


def _auto_gamma(X: np.ndarray) -> float:
    """1 / mean squared distance between two samples, ``1 / (2 Σ_j Var(x_j))``."""
    total = 2.0 * X.var(axis=0).sum()
    return 1.0 / total if total > 0 else 1.0


def _rbf_pass(X: np.ndarray, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """Degrees ``S 1`` and ``S X`` of the RBF kernel, in row blocks of the kernel."""
    m = X.shape[0]
    d = np.empty(m)
    SX = np.empty_like(X)
    step = max(1, _BLOCK_ELEMENTS // m)
    for s in range(0, m, step):
        block = rbf_kernel(X[s : s + step], X, gamma=gamma)
        d[s : s + step] = block.sum(axis=1)
        SX[s : s + step] = block @ X
    return d, SX


def _degree_and_product(S, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(S.sum(axis=1)).ravel(), np.array(S @ X)  # a writable copy


def _sparse_phi(X, S, style: int) -> np.ndarray:
    """``2 - φ1`` or ``2 - φ2`` of a CSR ``X`` on the sparse graph ``S``: the sums of the
    dense path, one block of columns made dense at a time."""
    m, n = X.shape
    d = np.asarray(S.sum(axis=1)).ravel()
    vol = d.sum()
    if vol <= 0.0:
        return np.zeros(n)
    mean = (X.T @ d) / vol if style == 0 else np.zeros(n)
    columns = X.tocsc()
    num, den, top = np.empty(n), np.empty(n), np.empty(n)
    width = max(1, (1 << 20) // m)  # ~8 MB a block
    for j in range(0, n, width):
        cols = slice(j, min(j + width, n))
        Xt = columns[:, cols].toarray()
        Xt -= mean[cols]  # D-centred for style 0: drops the trivial component
        SXt = S @ Xt
        den[cols] = np.einsum("i,ij,ij->j", d, Xt, Xt)  # fᵀDf
        num[cols] = den[cols] - np.einsum("ij,ij->j", Xt, SXt)  # fᵀLf
        top[cols] = np.abs(Xt).max(axis=0)
    scale = np.finfo(np.float64).eps * 64 * top
    seen = den > vol * scale**2
    phi = np.full(n, 2.0)
    phi[seen] = np.clip(num[seen] / den[seen], 0.0, 2.0)
    return 2.0 - phi
