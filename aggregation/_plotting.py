"""Helpers shared by the plotting modules of the aggregation package (matplotlib)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # matplotlib stays unimported until a plot is drawn
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["FONT", "figure_axes"]

FONT = 8  # points; annotation, in-block labels and legends


def figure_axes(ax: Axes | None, figsize: tuple[float, float]) -> tuple[Figure, Axes]:
    """The figure and axes to draw on: ``ax``'s own, or a new constrained-layout figure."""
    if ax is not None:
        fig = ax.figure
        return getattr(fig, "figure", None) or fig, ax  # a SubFigure's root figure
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    return fig, ax
