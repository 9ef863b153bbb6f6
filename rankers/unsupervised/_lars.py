"""Least-angle regression of several targets on one design, the paths in lockstep.

scikit-learn's ``Lars`` fits a multi-target ``y`` as one ``lars_path`` per target: every
step of every path reads the whole design for one matrix-vector product. MCFS regresses
its ``K`` eigenvectors on the same features, so here the ``K`` paths advance together and
each step reads the design once, for one ``n_features x K`` product (issue 17; the
timings are in ``benchmarks/results/width/spectral_peers.md``).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Lars

from rankers.ties import TIE_RTOL

__all__ = ["lar_end_coef"]

_TINY32 = np.finfo(np.float32).tiny  # keeps scikit-learn's guard against dividing by 0
_EQ_TOL = np.finfo(np.float32).eps  # scikit-learn's absolute stop on the correlation
_EPS = np.finfo(np.float64).eps  # Lars(eps=...) default, the floor of a Cholesky pivot
_MIN_PIVOT = 1e-7  # below it scikit-learn drops the entering regressor for good
# A column in the span of the active ones has a pivot of rounding size (~ sqrt(eps) |x_j|),
# on either side of 1e-7 by chance: below _SPAN_RTOL |x_j| it is dropped for good here.
# Another pivot below _SAFE_PIVOT is near 1e-7 too: that path is left to scikit-learn.
_SPAN_RTOL, _SAFE_PIVOT = 1e-4, 100 * _MIN_PIVOT
# a tied feature with AA -+ a_j below this (relative to AA) moves with the active ones
_DEN_RTOL = 1e-8
_DECIMALS = np.finfo(np.float64).precision  # scikit-learn rounds the direction's correlations


def lar_end_coef(X: np.ndarray, Y: np.ndarray, n_nonzero_coefs: int) -> np.ndarray:
    """End coefficients of scikit-learn's ``Lars`` for every column of ``Y``, batched.

    The same computation as ``Lars(n_nonzero_coefs=n_nonzero_coefs,
    fit_intercept=True).fit(X, Y).coef_.T`` in exact arithmetic: ``X`` and ``Y`` centred;
    each path adds, while its step count is below ``n_nonzero_coefs``, the inactive
    feature of largest absolute correlation with the residual and moves along the
    equiangular direction by scikit-learn's step (the smallest positive step at which an
    inactive feature's correlation reaches the active ones', capped at the step that
    zeroes them); a path stops early when that largest correlation divided by
    ``n_samples`` falls to float32's epsilon. Pure LAR: no lasso drops, but, as in
    scikit-learn, a step in which an active coefficient crosses zero flips that
    feature's sign and the next step adds no feature (it still counts as a step).

    Differences in floating point: the correlations of the ``K`` directions come from
    one matrix product and the equiangular directions from an incrementally updated
    inverse Cholesky factor, so results agree with scikit-learn's to about ``1e-12``
    relative, not bit for bit. The entering feature is the first (lowest index) whose
    absolute correlation is within ``TIE_RTOL`` of the largest
    (:mod:`rankers.ties`), where scikit-learn takes whichever rounding favours, in an
    order its column swaps have permuted. A path in which another inactive feature is
    then still tied with the active correlation (a tie in exact arithmetic, e.g. two
    columns whose difference is orthogonal to the target: scikit-learn lets it join
    after a rounding-size step, or steps on without it, as rounding falls) is
    recomputed by scikit-learn's ``Lars``, as is a path that meets one of scikit-learn's
    degenerate cases (an entering feature in the span of the active ones, i.e. a
    Cholesky pivot below ``1e-7``, or a non-finite equiangular normalisation), or comes
    close to one (a pivot below ``1e-5`` or ``1e-4`` times the feature's norm, where
    rounding decides which side of ``1e-7`` it falls): scikit-learn's handling of
    these is kept as the reference.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Design (centred here).
    Y : ndarray of shape (n_samples, n_targets)
        Targets, one path each (centred here).
    n_nonzero_coefs : int
        Steps per path, scikit-learn's ``n_nonzero_coefs`` (its ``max_iter``).

    Returns
    -------
    coef : ndarray of shape (n_features, n_targets)
        The coefficients at the end of each path.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Lars
    >>> rng = np.random.default_rng(0)
    >>> X, Y = rng.normal(size=(30, 8)), rng.normal(size=(30, 3))
    >>> ref = Lars(n_nonzero_coefs=4).fit(X, Y).coef_.T
    >>> bool(np.allclose(lar_end_coef(X, Y, 4), ref, rtol=1e-9, atol=1e-12))
    True
    """
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    m, n = X.shape
    K = Y.shape[1]
    Xc = X - X.mean(axis=0)
    Yc = Y - Y.mean(axis=0)
    max_iter = int(n_nonzero_coefs)
    d = min(max_iter, n)  # most features a path can hold
    cov = Yc.T @ Xc  # (K, n) correlations with the residual; meaningful where inactive
    sq = np.einsum("ij,ij->j", Xc, Xc)
    # per path, in entering order: feature, sign, coefficient, column, and the inverse
    # of the Cholesky factor of the active Gram matrix (all padded to d with zeros)
    order = np.zeros((K, d), dtype=np.intp)
    sign = np.zeros((K, d))
    beta = np.zeros((K, d))
    Xa = np.zeros((K, d, m))
    Linv = np.zeros((K, d, d))
    n_active = np.zeros(K, dtype=np.intp)
    taken = np.zeros(K * n, dtype=np.intp)  # flat (path, feature): active or dropped
    n_taken = 0
    running = np.ones(K, dtype=bool)
    flipped = np.zeros(K, dtype=bool)  # scikit-learn's `drop`: no feature enters next
    fallback = np.zeros(K, dtype=bool)
    corr, num, rec1, rec2 = (np.empty((K, n)) for _ in range(4))
    for n_iter in range(max_iter + 1):
        C = np.zeros(K)
        pending = running & ~flipped  # paths in which a feature enters this step
        first = True
        while first or pending.any():
            absc = np.abs(cov)
            absc.ravel()[taken[:n_taken]] = -1.0
            Cnew = np.maximum(absc.max(axis=1), 0.0)  # 0 once every feature is active
            look = pending if not first else running
            C = np.where(look, Cnew, C)
            running &= ~look | ((C / m > _EQ_TOL) & (n_iter < max_iter) & (n_active < n))
            pending &= running
            first = False
            tied = absc >= (C * (1.0 - TIE_RTOL))[:, None]  # at the largest correlation
            if not pending.any():
                break
            top = int(n_active.max())
            j = np.argmax(tied, axis=1)
            xj = Xc[:, j].T  # (K, m)
            g = np.matmul(Xa[:, :top], xj[:, :, None])  # Xaᵀ x_j
            w = np.matmul(Linv[:, :top, :top], g)[:, :, 0]
            pivot = np.maximum(np.sqrt(np.abs(sq[j] - (w * w).sum(axis=1))), _EPS)
            # x_j in the span of the active columns (to 1e-4 of its norm): it never enters
            # (scikit-learn's "drop for good", decided by a tolerance instead of rounding)
            span = pending & (pivot < _SPAN_RTOL * np.sqrt(sq[j]))
            # a pivot below 1e-5 that is not such a column: scikit-learn's reference
            bad = pending & ~span & (pivot < _SAFE_PIVOT)
            fallback |= bad
            running &= ~bad
            q = np.flatnonzero(span)
            taken[n_taken : n_taken + q.size] = q * n + j[q]
            n_taken += q.size
            enter = pending & ~span & ~bad
            pending = span
            q = np.flatnonzero(enter)
            a, jq = n_active[q], j[q]
            # last row of L⁻¹ when L grows to [[L, 0], [wᵀ, pivot]]: [-wᵀ L⁻¹, 1] / pivot
            newrow = np.matmul(w[q, None, :], Linv[q, :top, :top])[:, 0]
            Linv[q, a, :top] = -newrow / pivot[q, None]
            Linv[q, a, a] = 1.0 / pivot[q]
            Xa[q, a] = xj[q]
            order[q, a] = jq
            sign[q, a] = np.sign(cov[q, jq])
            taken[n_taken : n_taken + q.size] = q * n + jq
            n_taken += q.size
            n_active[q] += 1
        if not running.any():
            break
        top = int(n_active.max())
        Li = Linv[:, :top, :top]
        s = sign[:, :top]
        # least squares of the signs, (Xaᵀ Xa)⁻¹ s = L⁻ᵀ L⁻¹ s, scaled so Xaᵀ u = AA s
        ls = np.matmul(np.matmul(Li, s[:, :, None])[:, None, :, 0], Li)[:, 0]
        with np.errstate(divide="ignore", invalid="ignore"):
            AA = 1.0 / np.sqrt((ls * s).sum(axis=1))
        bad = running & ~np.isfinite(AA)
        fallback |= bad
        running &= ~bad
        ls[~running] = 0.0
        AA[~running] = 1.0
        ls *= AA[:, None]
        u = np.matmul(ls[:, None, :], Xa[:, :top])[:, 0]  # equiangular directions (K, m)
        np.matmul(u, Xc, out=corr)  # the one pass over the design per step
        np.around(corr, decimals=_DECIMALS, out=corr)
        # scikit-learn's step: the smallest positive (C -+ c_j) / (AA -+ a_j) over the
        # inactive j, capped at C / AA. Both numerators are >= 0 (C is the largest |c_j|),
        # so it is 1 / the largest of the reciprocals (one pass fewer than masking the
        # negative ratios).
        Cc, Ac = C[:, None], AA[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            np.subtract(Cc, cov, out=num)
            rec = np.subtract(Ac, corr, out=rec1)
            rec /= num
            np.add(Cc, cov, out=num)
            np.add(Ac, corr, out=rec2)
            rec2 /= num
            np.maximum(rec, rec2, out=rec)
            kt, jt = np.nonzero(tied)
            if kt.size:
                rec[kt, jt], tie = _tied_reciprocal(
                    C[kt], AA[kt], cov[kt, jt], corr[kt, jt], flipped[kt]
                )
                # a tie at the largest correlation, which scikit-learn settles by
                # rounding: its path is the reference (rare; 1 of 100 paths on pixraw10P)
                bad = np.zeros(K, dtype=bool)
                bad[kt[tie]] = True
                bad &= running
                fallback |= bad
                running &= ~bad
            rec.ravel()[taken[:n_taken]] = -np.inf
            best = rec.max(axis=1)
            gamma = np.minimum(np.where(best > 0.0, 1.0 / best, np.inf), C / AA)
        gamma[~running] = 0.0
        # an active coefficient that crosses zero in this step has its sign flipped
        b = beta[:, :top]
        z = -b / (ls + _TINY32)
        z[(z <= 0.0) | (np.arange(top) >= n_active[:, None])] = np.inf
        z_pos = z.min(axis=1)
        flipped = running & (z_pos < gamma)
        if flipped.any():
            s[(z == z_pos[:, None]) & flipped[:, None]] *= -1.0
        b += gamma[:, None] * ls
        cov -= gamma[:, None] * corr
    coef = np.zeros((K, n))
    rows = np.repeat(np.arange(K), n_active)
    slots = np.arange(d) < n_active[:, None]
    coef[rows, order[slots]] = beta[slots]
    if fallback.any():
        coef[fallback] = _sklearn_coef(X, Y[:, fallback], max_iter)
    return coef.T


def _tied_reciprocal(C, AA, c, a, flipped):
    """Reciprocal step ratios of inactive features tied with the active ones, and ties.

    A feature whose ``|c|`` is within ``TIE_RTOL`` of ``C`` (the largest) is at the
    active correlation: its ratio ``(C - s c) / (AA - s a)`` (``s`` the sign of ``c``)
    is 0 up to rounding. scikit-learn settles it by rounding: a tiny positive ratio
    lets the feature join after a step of about zero length, an exact 0 (or a negative
    one) leaves it out of ``min_pos`` and the step goes on without it, two different
    paths. Such a tie is returned as True, and its path is left to scikit-learn. Not a
    tie: a side whose denominator is 0 too (``a = s AA``: the feature moves with the
    active ones, a column in their span or a duplicate; 0/0, skipped), and, after a
    sign flip (no feature enters), the feature sitting exactly at ``C`` (the one that
    reached it; scikit-learn's ``min_pos`` skips its exact 0). The other side of a
    tied feature is an ordinary ratio.
    """
    rec = np.full(C.shape, -np.inf)
    tie = np.zeros(C.shape, dtype=bool)
    for num, den in ((C - c, AA - a), (C + c, AA + a)):
        near = num <= TIE_RTOL * C
        skip = near & ((np.abs(den) <= _DEN_RTOL * AA) | (flipped & (num == 0.0)))
        with np.errstate(divide="ignore", invalid="ignore"):
            r = den / num
        r[skip | np.isnan(r)] = -np.inf
        np.maximum(rec, r, out=rec)
        tie |= near & ~skip
    return rec, tie


def _sklearn_coef(X: np.ndarray, Y: np.ndarray, max_iter: int) -> np.ndarray:
    """scikit-learn's ``Lars`` end coefficients, shape (n_targets, n_features)."""
    lars = Lars(n_nonzero_coefs=max_iter, fit_intercept=True, precompute=X.shape[0] > X.shape[1])
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Early stopping the lars path", ConvergenceWarning)
        warnings.filterwarnings("ignore", "Regressors in active set", ConvergenceWarning)
        lars.fit(X, Y)
    return np.asarray(lars.coef_, dtype=np.float64).reshape(Y.shape[1], X.shape[1])
