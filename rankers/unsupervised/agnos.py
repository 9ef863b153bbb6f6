"""AgnoS-S: rank features by the input slack weights of a sparse autoencoder."""

from __future__ import annotations

import itertools
import math
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.utils import check_random_state
from tqdm.auto import tqdm

from rankers.base import BaseRanker
from rankers.exceptions import InvalidParameterError
from rankers.neighbors import nearest_neighbors
from rankers.preprocessing import column_norms
from rankers.ties import TIE_RTOL
from rankers.utils.param_validation import Interval, StrOptions

__all__ = ["AgnosSRanker", "twonn_dimension"]

# optimiser steps that epochs="auto" aims for: with Adam every parameter moves by about
# learning_rate per step, so a slack starting at 1 needs ~1/learning_rate steps to reach 0
_AUTO_STEPS = 3000
_AUTO_MAX_EPOCHS = 2000
# widest hidden layer hidden_layer_sizes="auto" builds (cost is linear in it)
_AUTO_MAX_HIDDEN = 128
# rows the intrinsic-dimension estimate looks at (a kNN search is quadratic in rows)
_ID_MAX_SAMPLES = 5000
_ADAM_BETA1, _ADAM_BETA2, _ADAM_EPS = 0.9, 0.999, 1e-8


def twonn_dimension(X, fraction: float = 0.9) -> float:
    """Intrinsic dimension of the rows of ``X`` by the TWO-NN estimator of Facco et al.

    For each point, ``mu = r2 / r1`` is the ratio of the distances to its second and
    first nearest neighbours. On a locally uniform d-dimensional manifold
    ``-log(1 - F(mu)) = d log(mu)``; ``d`` is the slope of the least-squares line
    through the origin fitted to the empirical distribution of ``mu``, after dropping
    the largest ``1 - fraction`` of the ratios (the noisiest tail, as Facco et al.
    recommend). Points with a duplicate (``r1 = 0``) are left out.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The points.
    fraction : float in (0, 1], default=0.9
        Share of the smallest ratios kept for the fit.

    Returns
    -------
    float
        The estimated dimension, or NaN when fewer than 3 distinct points make it
        undefined.

    References
    ----------
    .. [1] E. Facco, M. d'Errico, A. Rodriguez and A. Laio, "Estimating the intrinsic
       dimension of datasets by a minimal neighborhood information", Scientific
       Reports 7, 12140 (2017).
    """
    X = np.asarray(X, dtype=np.float64)
    if X.shape[0] < 3:
        return float("nan")
    dist, _ = nearest_neighbors(X, 2)
    r1, r2 = dist[:, 0], dist[:, 1]
    # a duplicate (up to the last bits: rows that differ by rounding only) is no neighbour
    distinct = r1 > TIE_RTOL * r2.max()
    mu = np.sort(r2[distinct] / r1[distinct])
    n = mu.size
    kept = math.floor(fraction * n)
    x = np.log(mu[:kept])
    sxx = float(x @ x)
    if kept < 2 or sxx <= 0.0:  # every neighbour pair equidistant: no slope to fit
        return float("nan")
    y = -np.log1p(-np.arange(1, kept + 1) / n)
    return float(x @ y) / sxx


class _SlackAutoencoder:
    """A tanh autoencoder whose input first passes a per-feature slack layer ``x * a``.

    All parameters live in one flat vector ``theta`` (slacks first, then each layer's
    weights and biases), so that the optimiser updates them in a single vectorised step.
    The last layer is linear (the standardised data are unbounded); every other layer,
    the latent one included, is tanh.
    """

    def __init__(self, n_features: int, layer_sizes, rng, dtype=np.float64):
        dims = [n_features, *layer_sizes, n_features]
        self.n_features = n_features
        self.shapes = list(itertools.pairwise(dims))
        size = n_features + sum(fi * fo + fo for fi, fo in self.shapes)
        self.theta = np.empty(size, dtype=dtype)
        self.slack = self.theta[:n_features]
        self.slack[:] = 1.0  # start as the identity: every feature passes unchanged
        self.weights, self.biases, offset = [], [], n_features
        for fi, fo in self.shapes:
            W = self.theta[offset : offset + fi * fo].reshape(fi, fo)
            offset += fi * fo
            b = self.theta[offset : offset + fo]
            offset += fo
            limit = math.sqrt(6.0 / (fi + fo))  # Glorot uniform, the Keras default
            W[...] = rng.uniform(-limit, limit, size=(fi, fo))
            b[...] = 0.0
            self.weights.append(W)
            self.biases.append(b)

    def loss_and_grad(self, Xb, penalty: float, weight_decay: float, grad=None):
        """Objective on the standardised batch ``Xb``; fills ``grad`` (same layout as theta).

        ``objective = mean((x_hat - x)²) + (penalty ||a||_1 + weight_decay/2 Σ||W||²) / D``.
        Returns ``(objective, reconstruction mean squared error)``.
        """
        n_layers = len(self.weights)
        acts = [Xb * self.slack]
        for i, (W, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            z = acts[-1] @ W + b
            acts.append(np.tanh(z) if i < n_layers - 1 else z)
        err = acts[-1] - Xb
        recon = float(np.mean(err * err))
        sq = sum(float(np.vdot(W, W)) for W in self.weights)
        D = self.n_features
        l1 = float(np.abs(self.slack).sum())
        objective = recon + (penalty * l1 + 0.5 * weight_decay * sq) / D
        if grad is None:
            return objective, recon
        g = err * (2.0 / err.size)
        end = grad.size
        for i in range(n_layers - 1, 0, -1):
            fi, fo = self.shapes[i]
            grad[end - fo : end] = g.sum(axis=0)
            end -= fo
            gW = grad[end - fi * fo : end].reshape(fi, fo)
            end -= fi * fo
            np.matmul(acts[i].T, g, out=gW)
            gW += (weight_decay / D) * self.weights[i]
            g = g @ self.weights[i].T
            g *= 1.0 - acts[i] * acts[i]  # tanh' = 1 - tanh²
        # first layer: its input is x * a, so with P = xᵀg the weight gradient is a * P
        # and the slack gradient is Σ_j W_ij P_ij: no product back through W is needed
        fi, fo = self.shapes[0]
        grad[end - fo : end] = g.sum(axis=0)
        end -= fo
        gW = grad[end - fi * fo : end].reshape(fi, fo)
        np.matmul(Xb.T, g, out=gW)
        W = self.weights[0]
        # the L1 subgradient (sign(0) = 0), as a loss-term L1 penalty has in Keras/PyTorch
        grad[:D] = np.einsum("ij,ij->i", W, gW) + (penalty / D) * np.sign(self.slack)
        gW *= self.slack[:, None]
        gW += (weight_decay / D) * W
        return objective, recon


class _Adam:
    """Adam (Kingma & Ba 2015) on one flat parameter vector, updated in place."""

    def __init__(self, theta, learning_rate: float):
        self.theta, self.learning_rate, self.t = theta, learning_rate, 0
        self.m = np.zeros_like(theta)
        self.v = np.zeros_like(theta)
        self._buffer = np.empty_like(theta)  # no temporaries: the vectors can be large

    def step(self, grad) -> None:
        self.t += 1
        buf = self._buffer
        self.m *= _ADAM_BETA1
        np.multiply(grad, 1.0 - _ADAM_BETA1, out=buf)
        self.m += buf
        self.v *= _ADAM_BETA2
        np.multiply(grad, grad, out=buf)
        buf *= 1.0 - _ADAM_BETA2
        self.v += buf
        # bias corrections folded into the step size (the paper's "efficient" form)
        rate = (
            self.learning_rate * math.sqrt(1.0 - _ADAM_BETA2**self.t) / (1.0 - _ADAM_BETA1**self.t)
        )
        np.sqrt(self.v, out=buf)
        buf += _ADAM_EPS
        np.divide(self.m, buf, out=buf)
        buf *= rate
        self.theta -= buf


class AgnosSRanker(BaseRanker):
    """Rank features by the slack weights AgnoS-S learns (Doquet & Sebag, 2019).

    AgnoS ("agnostic feature selection") asks which features are needed to
    *reconstruct the whole data set*, not to predict a target. AgnoS-S puts a slack
    layer in front of an autoencoder: feature ``i`` enters the network as ``a_i x_i``.
    The network is trained to reconstruct its (standardised) input with an L1 penalty
    on the slacks ``a``; features the reconstruction cannot do without keep a large
    ``|a_i|``, the others are driven towards 0. ``scores_ = |a|``.

    The objective, per feature, is ::

        mean((x_hat - x)²) + (penalty * ||a||_1 + weight_decay / 2 * Σ_l ||W_l||²) / D

    (mean over the batch and the ``D`` features; each slack is one group, so the
    L2,1 penalty of AgnoS's other variants is the L1 norm here). Dividing the penalties
    by ``D`` keeps their balance with the reconstruction error the same whatever the
    number of features.

    Choices ("paper": Doquet & Sebag as summarised by the unsupervised-ensemble paper,
    §2; "assumed": ours, the paper's values not being at hand):

    - Slack layer, L1 penalty, score ``|a|``: paper. Slacks start at 1 (identity, no
      feature favoured): assumed.
    - Latent width = intrinsic dimension, TWO-NN estimate (Facco et al. 2017): paper
      (``latent_dim="auto"``; rounded, clipped to [1, D]; at most 5000 rows, drawn
      with ``random_state``).
    - L2 weight decay on every weight matrix: assumed. Some such term is needed, or
      the L1 penalty is void: scaling ``a`` down and the next weights up leaves the
      output unchanged. Any later layer can compensate, so all are penalised.
    - Architecture: assumed. Symmetric tanh autoencoder
      ``D -> h... -> latent -> ...h -> D``, linear output layer, Glorot-uniform
      weights, zero biases; ``"auto"`` hidden layers = one of width
      ``round(sqrt(D * latent))`` (geometric mean of its neighbours), at most 128 but
      never narrower than the latent layer.
    - Training: assumed. Adam (0.9, 0.999), learning rate 1e-3, batches of 32
      reshuffled every epoch, the L1 term by its subgradient (as a loss-term penalty
      in Keras/PyTorch). ``epochs="auto"``: enough epochs for about 3000 steps (at
      most 2000 epochs), since Adam moves a slack by about the learning rate per
      step; the cost then hardly depends on the number of samples.
    - ``penalty=3``, ``weight_decay=0.3``: assumed, checked on synthetic latent
      factors with noisy copies plus independent noise (every factor's best copy
      outranks every noise feature; tests/rankers/unsupervised/test_agnos.py).
    - Standardisation: every feature is centred and scaled to unit variance inside
      ``fit`` (batch by batch, no standardised copy is held), so the reconstruction
      error weighs features alike and units do not matter; TWO-NN sees the same.
    - Early stopping: training ends when the epoch's mean objective has not improved
      by ``tol`` for ``n_iter_no_change`` epochs (``converged_`` True), else after
      ``epochs`` epochs, without a warning (``converged_`` False, see
      ``loss_curve_``).

    What it measures: a feature scores high when reconstructing *all* features needs
    it. Among redundant copies one suffices, so the others get low slacks (AgnoS picks
    a non-redundant subset); a feature independent of all others is needed to
    reconstruct itself, so it keeps a slack when the latent layer is wide enough to
    pass it (many such features raise the intrinsic dimension). Memory: the
    parameters (about ``2 D h``, four times over with Adam's vectors), one batch, and
    the standardised TWO-NN sample (at most 5000 rows); time: about
    ``steps * batch_size * D * h``.

    Parameters
    ----------
    k : int, "all" or None, default=None
        Number of best features kept by ``transform``.
    hidden_layer_sizes : "auto" or sequence of int, default="auto"
        Widths of the encoder's hidden layers between the slack layer and the latent
        layer; the decoder mirrors them. ``()`` joins the input to the latent layer
        directly.
    latent_dim : "auto" or int, default="auto"
        Width of the latent layer; ``"auto"`` is the TWO-NN intrinsic dimension.
    epochs : "auto" or int, default="auto"
        Maximum number of passes over the data (see above for ``"auto"``).
    batch_size : int, default=32
        Samples per optimiser step (clipped to the number of samples).
    learning_rate : float, default=1e-3
        Adam's step size.
    penalty : float, default=3.0
        Weight of the L1 penalty on the slacks.
    weight_decay : float, default=0.3
        Weight of the L2 penalty on the network's weight matrices.
    tol : float, default=1e-4
        Improvement of the epoch objective below which an epoch counts as no progress.
    n_iter_no_change : int or None, default=10
        Epochs without progress before training stops; None trains for ``epochs``.
    random_state : int, RandomState instance or None, default=None
        Seeds the intrinsic-dimension subsample, the weights and the batch order; an
        int makes the scores reproducible.
    verbose : int, default=0
        When > 0, a progress bar over the epochs shows the objective.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        ``|a_i|``, the absolute learned slack of each feature; constant features get 0.
    slack_ : ndarray of shape (n_features,)
        The learned slacks themselves (signed; 0 for constant features).
    ranking_ : ndarray of shape (n_features,)
        Feature indices, best first.
    intrinsic_dimension_ : float
        The TWO-NN estimate (NaN when ``latent_dim`` was given, or when fewer than
        3 distinct samples make it undefined; the latent layer then has width 1).
    latent_dim_ : int
        Width of the latent layer used.
    hidden_layer_sizes_ : tuple of int
        Widths of the encoder's hidden layers used.
    loss_curve_ : ndarray of shape (n_iter_,)
        Mean objective of each epoch (over its mini-batches, before their updates).
    reconstruction_curve_ : ndarray of shape (n_iter_,)
        The reconstruction part of ``loss_curve_`` (mean squared error on the
        standardised data).
    n_iter_ : int
        Epochs run.
    n_steps_ : int
        Optimiser steps taken.
    converged_ : bool
        Whether early stopping ended the training.

    See Also
    --------
    rankers.unsupervised.laplacian.LaplacianRanker : a graph-based unsupervised score.
    twonn_dimension : the intrinsic-dimension estimate that sizes the latent layer.

    Notes
    -----
    **Where it works.** On the planted-structure atlas (every structure; 200 samples, 200
    features, 0.5-50 % of them informative, 2 seeds; the mean share of the planted features in
    its top k, against a random ranking's), it fails on shift, manifold, modules, xor, clusters,
    imbalanced (within 0.1 of chance). The shares are in
    ``benchmarks/results/atlas_grid/summary.md``; :doc:`/guide/which-ranker` has the tables and
    heat maps.

    **The seed matters as much as the data.** On real high-dimensional data most slacks end
    near 0, and which of them stay above it depends on the initial weights and the batch
    order. Two default trainings that differ only in ``random_state`` barely agree
    (Spearman's rho near 0, few of their top 50 features shared) on colon (62 x 2,000),
    GLIOMA (50 x 4,434) and Yale (165 x 1,024); the figures are in
    ``benchmarks/results/width/agnos_budget.md``. Fix ``random_state`` to reproduce a
    ranking, and compare AgnoS-S with other rankers over several seeds; its top features
    on such data are one of many comparable subsets, not the only one. They are comparably
    *useful*, though: in the unsupervised protocol (8 data sets, 10 folds) the default's
    1NN MSE@16 moves by a few per cent with the seed (the same file).

    **Do not shorten the training to save time.** Cut to 300 or 1,000 Adam steps (a small
    ``epochs``), the same protocol scored it worse than the default on most (data set,
    seed) pairs, and worse than a random ranking on most of them (the same file). The cost
    is about 3,000 Adam steps through the ``D x h`` layers whatever the number of samples
    (~34 s at 100 x 5,000);
    narrower ``hidden_layer_sizes`` or ``latent_dim`` lower it per step.

    References
    ----------
    .. [1] G. Doquet and M. Sebag, "Agnostic Feature Selection", ECML PKDD 2019,
       LNCS 11906, pp. 343-358 (2020).
    .. [2] E. Facco, M. d'Errico, A. Rodriguez and A. Laio, "Estimating the intrinsic
       dimension of datasets by a minimal neighborhood information", Scientific
       Reports 7, 12140 (2017).

    Examples
    --------
    >>> import numpy as np
    >>> from rankers.unsupervised.agnos import AgnosSRanker
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=(200, 1))
    >>> X = np.hstack([z + 0.1 * rng.normal(size=(200, 3)), rng.normal(size=(200, 1))])
    >>> ranker = AgnosSRanker(latent_dim=1, random_state=0).fit(X)
    >>> bool(ranker.scores_[:3].max() > ranker.scores_[3])
    True
    """

    name = "agnos_s"
    target_kind = "unsupervised"
    accepts_sparse = False
    deterministic = False
    scale_invariant = True
    feature_scale_invariant = True  # the network reads standardised features
    reference: ClassVar[str] = "Doquet & Sebag (2019), Agnostic Feature Selection (AgnoS-S)"
    _constant_score: ClassVar[float] = 0.0
    _contract_test_params: ClassVar[dict] = {"epochs": 20, "hidden_layer_sizes": (4,)}

    _parameter_constraints: ClassVar[dict] = {
        **BaseRanker._parameter_constraints,
        "hidden_layer_sizes": [StrOptions({"auto"}), list, tuple],
        "latent_dim": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
        "epochs": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "penalty": [Interval(Real, 0, None, closed="left")],
        "weight_decay": [Interval(Real, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        k=None,
        hidden_layer_sizes="auto",
        latent_dim="auto",
        epochs="auto",
        batch_size: int = 32,
        learning_rate: float = 1e-3,
        penalty: float = 3.0,
        weight_decay: float = 0.3,
        tol: float = 1e-4,
        n_iter_no_change: int | None = 10,
        random_state=None,
        verbose: int = 0,
    ):
        self.k = k
        self.hidden_layer_sizes = hidden_layer_sizes
        self.latent_dim = latent_dim
        self.epochs = epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.penalty = penalty
        self.weight_decay = weight_decay
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.random_state = random_state
        self.verbose = verbose

    def _score(self, X, y, context):
        m, D = X.shape
        hidden = self._check_hidden_sizes()
        rng = check_random_state(self.random_state)
        mean = X.mean(axis=0)
        # > 0: constant columns never reach _score (and column_norms keeps a feature in
        # units of 1e-300 beside features of unit order from a std of 0)
        scale = column_norms(X - mean) / math.sqrt(m)

        self.intrinsic_dimension_ = float("nan")
        if self.latent_dim == "auto":
            rows = rng.choice(m, _ID_MAX_SAMPLES, replace=False) if m > _ID_MAX_SAMPLES else None
            sample = X if rows is None else X[rows]
            self.intrinsic_dimension_ = twonn_dimension((sample - mean) / scale)
            est = self.intrinsic_dimension_
            latent = 1 if math.isnan(est) else min(D, max(1, round(est)))
        else:
            latent = int(self.latent_dim)
        if hidden is None:
            width = max(latent, min(_AUTO_MAX_HIDDEN, round(math.sqrt(D * latent))))
            hidden = (width,)
        self.latent_dim_ = latent
        self.hidden_layer_sizes_ = hidden

        # float32 halves the cost of the matrix products; the seed fixes every draw, so
        # the result is still reproducible
        net = _SlackAutoencoder(D, [*hidden, latent, *hidden[::-1]], rng, dtype=np.float32)
        batch = min(int(self.batch_size), m)
        steps_per_epoch = -(-m // batch)
        if self.epochs == "auto":
            epochs = min(_AUTO_MAX_EPOCHS, -(-_AUTO_STEPS // steps_per_epoch))
        else:
            epochs = int(self.epochs)
        grad = np.zeros_like(net.theta)
        adam = _Adam(net.theta, float(self.learning_rate))
        penalty, decay = float(self.penalty), float(self.weight_decay)
        patience = self.n_iter_no_change
        losses, recons = [], []
        best, stale, converged = np.inf, 0, False
        with tqdm(range(epochs), disable=not self.verbose, desc="agnos_s", unit="epoch") as bar:
            for _ in bar:
                order = rng.permutation(m)
                total = total_recon = 0.0
                for start in range(0, m, batch):
                    rows = order[start : start + batch]
                    # standardised in float64 first: large raw values would overflow float32
                    Xb = ((X[rows] - mean) / scale).astype(np.float32)
                    loss, recon = net.loss_and_grad(Xb, penalty, decay, grad)
                    adam.step(grad)
                    total += loss * rows.size
                    total_recon += recon * rows.size
                losses.append(total / m)
                recons.append(total_recon / m)
                bar.set_postfix(loss=f"{losses[-1]:.4g}", recon=f"{recons[-1]:.4g}", refresh=False)
                if patience is None:
                    continue
                stale = stale + 1 if losses[-1] > best - self.tol else 0
                best = min(best, losses[-1])
                if stale >= patience:
                    converged = True
                    break

        self.loss_curve_ = np.asarray(losses)
        self.reconstruction_curve_ = np.asarray(recons)
        self.n_iter_ = len(losses)
        self.n_steps_ = adam.t
        self.converged_ = converged
        slack = net.slack.astype(np.float64)
        self.slack_ = self._to_all_features(slack, 0.0)
        return np.abs(slack)

    def _check_hidden_sizes(self) -> tuple[int, ...] | None:
        sizes = self.hidden_layer_sizes
        if isinstance(sizes, str):
            return None
        if not all(isinstance(s, Integral) and not isinstance(s, bool) and s >= 1 for s in sizes):
            raise InvalidParameterError(
                "hidden_layer_sizes must be 'auto' or a sequence of positive integers; "
                f"got {sizes!r}"
            )
        return tuple(int(s) for s in sizes)
