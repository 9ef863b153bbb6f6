"""Figures of marker tables: a dot plot of the top markers of every group (matplotlib)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from rankers.exceptions import InvalidInputError, InvalidParameterError

if TYPE_CHECKING:  # matplotlib stays unimported until a plot is drawn
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["plot_markers"]

#: columns a marker table must hold to be drawn
_NEEDED = ("group", "feature", "rank")


def plot_markers(
    table: pd.DataFrame,
    n_top: int = 5,
    *,
    color: str = "logfoldchange",
    size: str = "pct_in",
    cmap: Any = "RdBu_r",
    ax: Axes | None = None,
    title: str | None = None,
) -> Figure:
    """Dot plot of the ``n_top`` best markers of every group, as scanpy's marker dot plots.

    One row per group, one column per marker (the groups' top features side by side, a
    feature listed once, under the first group that has it); a dot's area is ``size``
    (default the fraction of the row's group expressing the feature), its colour
    ``color`` (default the log2 fold change, on a scale symmetric about 0).

    Parameters
    ----------
    table : DataFrame
        A marker table: :func:`~moweights.scverse.markers.find_markers`, or
        :func:`~moweights.scverse.anndata.get_markers` of an AnnData.
    n_top : int, default=5
        Markers per group.
    color, size : str, default="logfoldchange", "pct_in"
        Columns of ``table`` for the colour and the area (``size`` a fraction in [0, 1]).
    cmap : str or Colormap, default="RdBu_r"
    ax : matplotlib Axes, optional
        Where to draw; a new figure when omitted.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    InvalidInputError
        A table without the columns named, or empty.
    InvalidParameterError
        ``n_top`` below 1.
    """
    missing = [c for c in (*_NEEDED, color, size) if c not in table.columns]
    if missing:
        raise InvalidInputError(
            f"the marker table lacks the columns {missing}; it has {list(table.columns)}"
        )
    if len(table) == 0:
        raise InvalidInputError("the marker table is empty")
    if int(n_top) < 1:
        raise InvalidParameterError(f"n_top must be at least 1; got {n_top!r}")
    groups = (
        list(table["group"].cat.categories)
        if isinstance(table["group"].dtype, pd.CategoricalDtype)
        else list(dict.fromkeys(table["group"]))
    )
    features: list[str] = []
    blocks: list[tuple[Any, int, int]] = []  # group, first column, last column + 1
    for g in groups:
        top = table[table["group"] == g].nsmallest(int(n_top), "rank", keep="first")
        start = len(features)
        features += [f for f in top["feature"] if f not in features]
        blocks.append((g, start, len(features)))
    colours = table.pivot_table(index="group", columns="feature", values=color, observed=False)
    areas = table.pivot_table(index="group", columns="feature", values=size, observed=False)
    colours = colours.reindex(index=groups, columns=features)
    areas = areas.reindex(index=groups, columns=features)

    if ax is None:
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(
            figsize=(2.5 + 0.32 * len(features), 1.2 + 0.35 * len(groups)), layout="constrained"
        )
    else:
        fig = ax.figure
        fig = getattr(fig, "figure", None) or fig
    rows, cols = np.meshgrid(np.arange(len(groups)), np.arange(len(features)), indexing="ij")
    c = colours.to_numpy(dtype=float)
    s = np.clip(areas.to_numpy(dtype=float), 0.0, 1.0)
    shown = np.isfinite(c) & np.isfinite(s)
    limit = float(np.nanmax(np.abs(c[shown]))) if shown.any() else 1.0
    limit = limit if limit > 0 else 1.0
    dots = ax.scatter(
        cols[shown],
        rows[shown],
        s=20.0 + 180.0 * s[shown],
        c=c[shown],
        cmap=cmap,
        vmin=-limit,
        vmax=limit,
        edgecolors="0.3",
        linewidths=0.4,
    )
    ax.set_xticks(np.arange(len(features)), labels=features, rotation=90, fontsize=8)
    ax.set_yticks(np.arange(len(groups)), labels=[str(g) for g in groups], fontsize=8)
    ax.set_xlim(-0.6, len(features) - 0.4)
    ax.set_ylim(len(groups) - 0.4, -0.6)
    for _, start, stop in blocks[1:]:
        if start < stop or start < len(features):
            ax.axvline(start - 0.5, color="0.8", linewidth=0.6)
    secondary = ax.secondary_xaxis("top")
    centres = [(start + stop - 1) / 2 for _, start, stop in blocks if stop > start]
    secondary.set_xticks(
        centres, labels=[str(g) for g, start, stop in blocks if stop > start], fontsize=8
    )
    fig.colorbar(dots, ax=ax, label=color, shrink=0.8)
    for frac in (0.25, 0.5, 1.0):
        ax.scatter([], [], s=20.0 + 180.0 * frac, color="0.6", label=f"{frac:.0%}")
    ax.legend(
        title=size, fontsize=7, title_fontsize=7, loc="upper left", bbox_to_anchor=(1.15, 1.0),
        frameon=False, labelspacing=1.0,
    )  # fmt: skip
    ax.set_title(title if title is not None else f"top {int(n_top)} markers per group")
    return fig
