"""The critical-difference (average-rank) diagram of Demšar (2006), drawn with matplotlib.

pyplot is imported inside :func:`plot_cd_diagram`, so importing this module loads no backend.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from aggregation.evaluation.stats import (
    FriedmanResult,
    NemenyiResult,
    cd_groups,
    critical_difference,
)
from rankers.exceptions import InvalidInputError, InvalidParameterError

if TYPE_CHECKING:  # matplotlib stays unimported until a plot is drawn
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["plot_cd_diagram"]

# Vertical layout in data units (y grows downwards); one unit is _INCH_PER_UNIT inches on a
# figure this module makes, so text rows do not collide at the default font size.
_INCH_PER_UNIT = 0.4
_ROW = 0.6  # between two label rows
_GROUP_STEP = 0.25  # between two stacked group bars
_FIRST_GROUP = 0.3  # axis to first group bar
_CD_Y = -1.1  # the CD bar, above the tick labels


def _inputs(
    avg_ranks: Any, cd: float | None, alpha: float
) -> tuple[pd.Series, float | None, tuple[tuple[str, ...], ...]]:
    """Average ranks, critical difference and groups from a result or from plain arguments."""
    if isinstance(avg_ranks, NemenyiResult):
        if cd is not None:
            raise InvalidParameterError("cd comes from the NemenyiResult; do not pass it as well")
        return avg_ranks.avg_ranks, avg_ranks.cd, avg_ranks.groups
    if isinstance(avg_ranks, FriedmanResult):
        if cd is None:
            cd = critical_difference(avg_ranks.k, avg_ranks.n, alpha)
        avg_ranks = avg_ranks.avg_ranks
    if not isinstance(avg_ranks, (pd.Series, Mapping)):
        raise InvalidInputError(
            "avg_ranks must be a Series or mapping {method: average rank}, a NemenyiResult or a "
            f"FriedmanResult; got {type(avg_ranks).__name__}"
        )
    ranks = pd.Series(avg_ranks, dtype=object)
    values = pd.to_numeric(ranks, errors="coerce").astype(float)
    k = len(values)
    if k < 2:
        raise InvalidInputError(f"a CD diagram needs at least 2 methods, got {k}")
    if ranks.index.has_duplicates:
        dup = ranks.index[ranks.index.duplicated()].tolist()
        raise InvalidInputError(f"method names must be unique; repeated: {dup}")
    bad = values.index[~np.isfinite(values.to_numpy()) | (values < 1) | (values > k)].tolist()
    if bad:
        raise InvalidInputError(
            f"average ranks of {k} methods lie in [1, {k}]; {bad} do not (scores rather than "
            "ranks? use aggregation.evaluation.average_ranks)"
        )
    if cd is not None and not (isinstance(cd, (int, float, np.floating)) and cd > 0):
        raise InvalidParameterError(f"cd must be a positive number or None, got {cd!r}")
    groups = cd_groups(values, float(cd)) if cd is not None else ()
    return values, (None if cd is None else float(cd)), groups


def plot_cd_diagram(
    avg_ranks: pd.Series | Mapping[str, float] | NemenyiResult | FriedmanResult,
    cd: float | None = None,
    ax: Axes | None = None,
    *,
    alpha: float = 0.05,
    reverse: bool = False,
    show_ranks: bool = False,
    group_color: str = "black",
    title: str | None = None,
    figsize: tuple[float, float] | None = None,
) -> Figure:
    """Critical-difference diagram: methods on an average-rank axis, groups joined by bars.

    The axis runs over ranks 1..k with the better methods (lower ranks) labelled on the side of
    rank 1 and the rest on the other side. The bar marked CD shows the critical difference;
    a thick bar joins every maximal group of methods whose average ranks are less than CD
    apart (not significantly different), as in Demšar (2006, Fig. 1).

    Parameters
    ----------
    avg_ranks : Series, mapping, NemenyiResult or FriedmanResult
        Average rank per method. A ``NemenyiResult`` brings its CD and groups; a
        ``FriedmanResult`` brings ranks, k and N, and the CD is Nemenyi's at ``alpha``.
    cd : float, optional
        Critical difference (e.g. :func:`aggregation.evaluation.critical_difference`). None with
        plain ranks draws the ranks only, without CD bar or groups.
    ax : matplotlib Axes, optional
        Drawn on (its frame is switched off); labels extend beyond its data area, so leave room
        or use a constrained layout. Default: a new constrained-layout figure.
    alpha : float, default=0.05
        Only for a ``FriedmanResult`` without ``cd``.
    reverse : bool, default=False
        Put rank 1 on the right.
    show_ranks : bool, default=False
        Append each method's average rank to its label.
    group_color : str, default="black"
        Colour of the group bars (the ensemble paper draws them red).
    title : str, optional
    figsize : (float, float), optional
        Size of a new figure; default fits the number of methods and groups.

    Returns
    -------
    Figure

    See Also
    --------
    aggregation.evaluation.nemenyi : the test the diagram shows.

    References
    ----------
    Demšar, J. (2006). Statistical comparisons of classifiers over multiple data sets. JMLR 7.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> from aggregation.evaluation import nemenyi
    >>> t = pd.DataFrame({"a": [0.9] * 10, "b": [0.8] * 10, "c": [0.7] * 10})
    >>> fig = plot_cd_diagram(nemenyi(t, higher_is_better=True))
    """
    ranks, cd, groups = _inputs(avg_ranks, cd, alpha)
    k = len(ranks)
    ordered = ranks.sort_values(kind="stable")
    n_left = (k + 1) // 2  # the better half is labelled on rank 1's side
    label_top = _FIRST_GROUP + len(groups) * _GROUP_STEP + 0.3
    bottom = label_top + (max(n_left, k - n_left) - 1) * _ROW + 0.4
    top = _CD_Y - 0.5 if cd is not None else -0.8

    own_figure = ax is None
    if own_figure:
        import matplotlib.pyplot as plt

        size = figsize or (6.0, (bottom - top) * _INCH_PER_UNIT)
        fig, ax = plt.subplots(figsize=size, layout="constrained")
    else:
        fig = ax.figure
        fig = getattr(fig, "figure", None) or fig  # a SubFigure's root figure

    lo, hi = 1.0, float(k)
    span = hi - lo

    def x(rank: float | np.ndarray) -> Any:
        return lo + hi - rank if reverse else rank

    pad = max(0.1 * span, 0.2)  # label lines run this far past the axis ends
    ax.set_xlim(lo - 1.5 * pad, hi + 1.5 * pad)
    ax.set_ylim(bottom, top)  # y grows downwards
    ax.set_axis_off()
    line = {"color": "black", "linewidth": 1.0}

    # rank axis with ticks on top
    ax.plot([lo, hi], [0, 0], **line)
    ticks = np.arange(1, k + 1)
    halves = np.arange(1.5, k, 1.0)
    ax.vlines(x(ticks), -0.25, 0, **line)
    ax.vlines(x(halves), -0.12, 0, color="black", linewidth=0.7)
    for t in ticks:
        ax.text(x(t), -0.33, str(t), ha="center", va="bottom")

    if cd is not None:
        start = lo if not reverse else hi - cd
        ax.plot([start, start + cd], [_CD_Y, _CD_Y], **line)
        ax.vlines([start, start + cd], _CD_Y - 0.1, _CD_Y + 0.1, **line)
        ax.text(start + cd / 2, _CD_Y - 0.15, "CD", ha="center", va="bottom")

    # methods: a drop line from the axis, then out to the label on the nearer side
    labels: dict[bool, list[str]] = {True: [], False: []}
    for pos, (name, rank) in enumerate(ordered.items()):
        left = pos < n_left
        row = pos if left else k - 1 - pos  # outermost ranks nearest the axis: no crossings
        y = label_top + row * _ROW
        on_low_side = left != reverse  # low x = left side of the axes
        end = lo - pad if on_low_side else hi + pad
        ax.plot([x(rank), x(rank), end], [0, y, y], **line)
        text = f"{name} ({rank:.2f})" if show_ranks else str(name)
        gap = 0.02 * span + 0.02
        labels[on_low_side].append(text)
        ax.text(
            end - gap if on_low_side else end + gap,
            y,
            text,
            ha="right" if on_low_side else "left",
            va="center",
        )

    # thick bars joining groups that are not significantly different
    for g, members in enumerate(groups):
        r = ordered[list(members)]
        y = _FIRST_GROUP + g * _GROUP_STEP
        ends = x(np.array([r.min(), r.max()]))
        ax.plot(
            [ends.min() - 0.03, ends.max() + 0.03],
            [y, y],
            color=group_color,
            linewidth=3.5,
            solid_capstyle="butt",
            gid="cd-group",
        )
    if title:
        ax.set_title(title)
    if own_figure and figsize is None:
        _fit_width(fig, ax, k, labels)
    return fig


def _fit_width(fig: Figure, ax: Axes, k: int, labels: dict[bool, list[str]]) -> None:
    """Widen a figure made here so the rank axis keeps its length beside long method names."""
    widths = {
        side: max(
            (t.get_window_extent().width for t in ax.texts if t.get_text() in names), default=0
        )
        for side, names in labels.items()
    }
    label_in = (widths[True] + widths[False]) / fig.dpi
    axis_in = max(3.0, 0.5 * (k - 1))
    fig.set_size_inches(max(axis_in + label_in + 0.6, 4.0), fig.get_size_inches()[1])
