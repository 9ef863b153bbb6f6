"""Pictures of a fitted MOWeighting: its Pareto front and the weights of its solutions."""

from __future__ import annotations

import numpy as np

from moweights.weighting.criteria import parse_objectives

__all__ = ["plot_front", "plot_front_weights"]


def _check_fitted(mow) -> None:
    if not hasattr(mow, "pareto_objectives_"):
        from sklearn.exceptions import NotFittedError

        raise NotFittedError("fit the MOWeighting before plotting its Pareto front")


def plot_front(mow, ax=None):
    """Scatter the Pareto front: 2 objectives in 2-D, 3 in 3-D, more as a pairs grid.

    Values are shown as the criteria themselves (a "-C2" objective is plotted as C2),
    so axes read in the criteria's own units.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    _check_fitted(mow)
    F = mow.pareto_objectives_
    parsed = parse_objectives(list(F.columns))
    values = F.to_numpy() * np.array([sign for _, sign in parsed])
    names = [key for key, _ in parsed]
    n_obj = values.shape[1]
    if n_obj == 1:
        fig, ax = (ax.figure, ax) if ax is not None else plt.subplots(figsize=(5, 3.5))
        ax.plot(np.arange(len(values)), values[:, 0], "o")
        ax.set_xlabel("solution")
        ax.set_ylabel(names[0])
    elif n_obj == 2:
        fig, ax = (ax.figure, ax) if ax is not None else plt.subplots(figsize=(5, 4))
        order = np.argsort(values[:, 0])
        ax.plot(values[order, 0], values[order, 1], "o-", ms=4)
        ax.set_xlabel(names[0])
        ax.set_ylabel(names[1])
    elif n_obj == 3 and ax is None:
        fig = plt.figure(figsize=(6, 5))
        ax = fig.add_subplot(projection="3d")
        ax.scatter(values[:, 0], values[:, 1], values[:, 2], c=values[:, 2], cmap="viridis")
        ax.set_xlabel(names[0])
        ax.set_ylabel(names[1])
        ax.set_zlabel(names[2])
    else:
        fig, axes = plt.subplots(n_obj, n_obj, figsize=(2.2 * n_obj, 2.2 * n_obj))
        for i in range(n_obj):
            for j in range(n_obj):
                a = axes[i, j]
                if i == j:
                    a.hist(values[:, i], bins=15, color="0.6")
                else:
                    a.plot(values[:, j], values[:, i], ".", ms=4)
                if i == n_obj - 1:
                    a.set_xlabel(names[j])
                if j == 0:
                    a.set_ylabel(names[i])
    fig.suptitle(f"Pareto front ({len(values)} solutions)")
    fig.tight_layout()
    return fig


def plot_front_weights(mow, ax=None, cmap: str = "viridis"):
    """Heat map of the weights of every Pareto solution (rows) for every feature (columns).

    Features are ordered by the final ranking (best on the left); constant features,
    which the optimisation sets aside, are left blank.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    _check_fitted(mow)
    W = mow.pareto_weights_
    cols = [W.columns[i] for i in mow.ranking_]
    values = W[cols].to_numpy()
    if ax is None:
        width = min(14.0, 2.0 + 0.35 * len(cols))
        fig, ax = plt.subplots(figsize=(width, 3.0 + 0.03 * len(values)))
    else:
        fig = ax.figure
    image = ax.imshow(np.ma.masked_invalid(values), aspect="auto", cmap=cmap, vmin=0, vmax=1)
    rotation = 90 if len(cols) > 12 else 0
    ax.set_xticks(np.arange(len(cols)), [str(c) for c in cols], rotation=rotation)
    ax.set_ylabel("Pareto solution")
    ax.set_xlabel("feature (best first)")
    fig.colorbar(image, ax=ax, label="weight")
    fig.tight_layout()
    return fig
