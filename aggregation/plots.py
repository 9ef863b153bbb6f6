"""Plots of rankings and their comparisons (matplotlib); the evaluation plots are here too.

Every public function draws on ``ax`` when one is given (and returns that axes' figure), or
else on a new figure made with ``pyplot.subplots``, and returns the
:class:`~matplotlib.figure.Figure`. pyplot is imported inside the functions: importing this
module neither loads pyplot nor chooses a backend, so a library user's backend choice stands,
and a machine without a display gets matplotlib's non-interactive fallback (Agg).

:func:`plot_pairwise` and :func:`plot_generic` draw rankings and are defined here; the plots
of evaluation results (:func:`plot_error_curves`, :func:`plot_topk_curves`,
:func:`plot_cd_diagram`) live in :mod:`aggregation.evaluation` and are importable from here,
so one module draws everything the aggregation package computes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from aggregation._plotting import FONT, figure_axes
from aggregation.evaluation.cd_diagram import plot_cd_diagram
from aggregation.evaluation.plots import plot_error_curves, plot_topk_curves
from aggregation.ranking import GenericRanking, Ranking
from rankers.exceptions import InvalidInputError, InvalidParameterError

if TYPE_CHECKING:  # matplotlib stays unimported until a plot is drawn
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.text import Text

__all__ = [
    "plot_cd_diagram",
    "plot_error_curves",
    "plot_generic",
    "plot_pairwise",
    "plot_rank_intervals",
    "plot_topk_curves",
]

_BLOCK_COLOURS = ("#c6dbef", "#fdd9b5")  # alternate, so neighbouring blocks stay apart


# ------------------------------------------------------------------ shared helpers
def _text_colour(rgba: tuple[float, ...]) -> str:
    """Black or white, whichever reads better on a cell of colour ``rgba``."""
    luminance = 0.299 * rgba[0] + 0.587 * rgba[1] + 0.114 * rgba[2]
    return "black" if luminance > 0.5 else "white"


def _fits(text: Text, box: np.ndarray, pad: float = 2.0) -> bool:
    """Whether ``text``'s drawn extent lies inside the display-space box [[x0, y0], [x1, y1]]."""
    ext = text.get_window_extent()
    return ext.width <= box[1, 0] - box[0, 0] - 2 * pad and (
        ext.height <= box[1, 1] - box[0, 1] - 2 * pad
    )


def _first_fitting(ax: Axes, x: float, y: float, box: np.ndarray, candidates, **kw) -> Text | None:
    """Draw the first candidate label (``(text, rotation)``) that fits ``box``; None if none."""
    for label, rotation in candidates:
        text = ax.text(x, y, label, rotation=rotation, **kw)
        text.set_in_layout(False)  # labels sit inside the axes; never let them move it
        if _fits(text, box):
            return text
        text.remove()
    return None


# ------------------------------------------------------------------ pairwise matrix
def plot_pairwise(
    matrix: pd.DataFrame,
    ax: Axes | None = None,
    annotate: bool = True,
    cmap: Any = "viridis",
    fmt: str | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
    title: str | None = None,
) -> Figure:
    """Heat map of a pairwise comparison matrix, e.g. from :func:`aggregation.compare.pairwise`.

    Parameters
    ----------
    matrix : DataFrame of shape (q, q)
        Numeric; its index labels the rows, its columns the columns. NaN cells are left blank.
        ``matrix.attrs["measure"]`` (set by ``pairwise``) labels the colour bar.
    ax : matplotlib Axes, optional
        Where to draw; a new figure when omitted.
    annotate : bool, default=True
        Write each cell's value in it (black or white, whichever contrasts).
    cmap : str or Colormap, default="viridis"
    fmt : str, optional
        Format spec of the annotations, e.g. ``".3f"``; default ``".0f"`` when every value is
        a whole number, else ``".2f"``.
    vmin, vmax : float, optional
        Colour scale limits; default the data's range.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    if not isinstance(matrix, pd.DataFrame):
        matrix = pd.DataFrame(matrix)
    values = matrix.to_numpy(dtype=float)
    if values.ndim != 2 or values.shape[0] != values.shape[1] or values.size == 0:
        raise InvalidInputError(f"matrix must be square and non-empty, got shape {values.shape}")
    q = values.shape[0]
    fig, ax = figure_axes(ax, (1.2 + 0.55 * q + 1.2, 0.8 + 0.55 * q))
    im = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=vmin, vmax=vmax)
    ax.set_xticks(np.arange(q), labels=[str(c) for c in matrix.columns])
    ax.set_yticks(np.arange(q), labels=[str(i) for i in matrix.index])
    ax.tick_params(axis="x", labelrotation=45)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right")
        label.set_rotation_mode("anchor")
    fig.colorbar(im, ax=ax, label=matrix.attrs.get("measure"))
    if title is not None:
        ax.set_title(title)
    if annotate:
        finite = np.isfinite(values)
        if fmt is None:
            fmt = ".0f" if np.all(values[finite] == np.round(values[finite])) else ".2f"
        size = float(np.clip(110 / q, 5, 10))
        for i, j in np.argwhere(finite):  # one text artist per cell: a loop over cells
            ax.text(
                j,
                i,
                format(values[i, j], fmt),
                ha="center",
                va="center",
                fontsize=size,
                color=_text_colour(im.cmap(im.norm(values[i, j]))),
            )
    return fig


# ------------------------------------------------------------------ generic ranking
def _block_candidates(block: tuple[str, ...], max_names: int) -> list[tuple[str, float]]:
    """Labels for one block, most informative first, each horizontal then turned upright."""
    if len(block) > max_names:
        shown = [*block[: max(max_names - 1, 0)], f"+{len(block) - max_names + 1} more"]
    else:
        shown = list(block)
    out = []
    if shown and max_names > 0:
        names = "\n".join(shown)
        out += [(names, 0.0), (names, 90.0)]
    count = str(len(block)) if len(block) > 1 else ""
    if count:
        out += [(f"{count} features", 0.0), (count, 0.0)]
    return out


def plot_generic(
    ranking: GenericRanking | Ranking,
    ax: Axes | None = None,
    max_names_per_block: int = 6,
    title: str | None = None,
    order: Sequence[str] | None = None,
    max_blocks: int = 200,
) -> Figure:
    """A generic ranking as a strip of blocks, best left, each as wide as its feature count.

    Inside each block go its feature names (one a line, at most ``max_names_per_block``, the
    rest summarised as ``+k more``) when they fit, else the same names turned upright, else
    the block's size, else nothing. The fit is judged for the figure's size at drawing time.

    Parameters
    ----------
    ranking : GenericRanking or Ranking
        A ``Ranking`` is drawn as its singleton blocks, in order.
    ax : matplotlib Axes, optional
        Where to draw; a new figure when omitted.
    max_names_per_block : int, default=6
        0 shows sizes only.
    title : str, optional
        Default: the method, ``s`` (blocks) and ``n`` (features).
    order : sequence of str, optional
        The features best first (e.g. their mean rank): the names shown inside a block
        follow it, so a large block lists its best features, not its first by name.
        Default the block's own (natural name) order.
    max_blocks : int, default=200
        The first ``max_blocks`` blocks are drawn one by one; the rest, as one summary
        box labelled with how many blocks and features it holds (a ranking of thousands
        of singletons draws in a fraction of a second and stays readable).

    Returns
    -------
    matplotlib.figure.Figure
        The blocks are one ``PatchCollection`` (``gid="blocks"``) with a rectangle per
        block drawn, best first (and the summary box last); the labels are ``ax.texts``.
    """
    if isinstance(ranking, Ranking):
        ranking = GenericRanking.from_ranking(ranking)
    if not isinstance(ranking, GenericRanking):
        raise InvalidParameterError(
            f"ranking must be a GenericRanking or a Ranking, not {type(ranking).__name__}"
        )
    if isinstance(max_names_per_block, bool) or not isinstance(max_names_per_block, int):
        raise InvalidParameterError(
            f"max_names_per_block must be an integer >= 0, got {max_names_per_block!r}"
        )
    if max_names_per_block < 0:
        raise InvalidParameterError(f"max_names_per_block must be >= 0, got {max_names_per_block}")
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Rectangle
    from matplotlib.ticker import MaxNLocator

    blocks, n = ranking.blocks, ranking.n_features
    if order is not None:
        position = {name: i for i, name in enumerate(order)}
        missing = [f for f in ranking.names if f not in position]
        if missing:
            raise InvalidParameterError(
                f"order must list every feature of the ranking; missing {missing[:5]}"
            )
        blocks = tuple(tuple(sorted(b, key=position.__getitem__)) for b in blocks)
    if isinstance(max_blocks, bool) or not isinstance(max_blocks, int) or max_blocks < 1:
        raise InvalidParameterError(f"max_blocks must be an integer >= 1, got {max_blocks!r}")
    rest = blocks[max_blocks:]
    blocks = blocks[:max_blocks]
    sizes = np.array([len(b) for b in blocks])
    starts = np.cumsum(sizes) - sizes
    lines = min(int(sizes.max()), max_names_per_block)
    fig, ax = figure_axes(ax, (10.0, 1.3 + 0.16 * max(lines, 2)))
    ax.set_xlim(0, n)
    ax.set_ylim(0, 1)
    ax.set_yticks([])
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    ax.set_xlabel("position, best \u2192 worst (block width \u221d its number of features)")
    name = ranking.method or "generic ranking"
    ax.set_title(title if title is not None else f"{name}: s = {len(blocks)} blocks, n = {n}")
    fig.draw_without_rendering()  # settle the layout, so block sizes in pixels are final
    x0 = ax.transData.transform(np.column_stack([starts, np.zeros(len(sizes))]))
    x1 = ax.transData.transform(np.column_stack([starts + sizes, np.ones(len(sizes))]))
    width_px = x1[:, 0] - x0[:, 0]
    # One collection, not a patch per block: add_patch costs ~2 ms each on a large n. Edges
    # only where a block is wide enough, else thousands of edges paint the strip grey.
    boxes = [Rectangle((a, 0), w, 1) for a, w in zip(starts, sizes, strict=True)]
    faces = [_BLOCK_COLOURS[i % 2] for i in range(len(sizes))]
    widths = list(np.where(width_px >= 4, 0.8, 0.0))
    if rest:  # one box for every block after the first max_blocks
        begin = int(starts[-1] + sizes[-1])
        boxes.append(Rectangle((begin, 0), n - begin, 1, hatch="//"))
        faces.append("0.92")
        widths.append(0.8)
    strip = PatchCollection(
        boxes, facecolors=faces, edgecolors="0.3", linewidths=widths, gid="blocks"
    )
    ax.add_collection(strip, autolim=False)
    if rest:
        held = sum(len(b) for b in rest)
        ax.text((begin + n) / 2, 0.5, f"+{len(rest)} blocks\n{held} features", ha="center",
                va="center", fontsize=FONT, clip_on=True)  # fmt: skip
    for i in np.flatnonzero(width_px >= 6):  # narrower than one character: no label
        _first_fitting(
            ax,
            starts[i] + sizes[i] / 2,
            0.5,
            np.array([x0[i], x1[i]]),
            _block_candidates(blocks[i], max_names_per_block),
            ha="center",
            va="center",
            fontsize=FONT,
            linespacing=1.1,
            clip_on=True,
        )
    return fig


# ------------------------------------------------------------------ rank intervals
def plot_rank_intervals(
    intervals: pd.DataFrame,
    ax: Axes | None = None,
    max_features: int = 40,
    title: str | None = None,
) -> Figure:
    """Each feature's rank interval across the inputs (or resamples), its blocks shaded.

    One row per feature, best median rank on top: a thin line from its best to its worst
    position, a thick bar over its (trimmed) interval ``low``..``high``, a dot at its median
    rank; bands of alternating colour mark the blocks of the partition the intervals imply.

    Parameters
    ----------
    intervals : DataFrame
        :func:`aggregation.uncertainty.rank_intervals` (or ``Stability.intervals``):
        columns ``median_rank``, ``best``, ``worst``, ``low``, ``high``, ``block``.
    ax : matplotlib Axes, optional
        Where to draw; a new figure when omitted.
    max_features : int, default=40
        The features drawn: the best ``max_features`` by block then median rank.
    title : str, optional
        Default: the number of blocks and features.

    Returns
    -------
    matplotlib.figure.Figure
        The bars are one ``LineCollection`` (``gid="intervals"``), the bands patches with
        ``gid="block"``.
    """
    needed = {"median_rank", "best", "worst", "low", "high", "block"}
    if not isinstance(intervals, pd.DataFrame) or not needed <= set(intervals.columns):
        raise InvalidParameterError(
            f"intervals must be a DataFrame with columns {sorted(needed)} "
            "(aggregation.uncertainty.rank_intervals)"
        )
    if isinstance(max_features, bool) or not isinstance(max_features, int) or max_features < 1:
        raise InvalidParameterError(f"max_features must be an integer >= 1, got {max_features!r}")
    from matplotlib.collections import LineCollection

    shown = intervals.sort_values(["block", "median_rank"], kind="stable").iloc[:max_features]
    k = len(shown)
    fig, ax = figure_axes(ax, (8.0, 1.2 + 0.22 * k))
    rows = np.arange(k)
    blocks = shown["block"].to_numpy()
    for i, block in enumerate(np.unique(blocks)):
        at = rows[blocks == block]
        ax.axhspan(at.min() - 0.5, at.max() + 0.5, color=_BLOCK_COLOURS[i % 2], zorder=0,
                   gid="block", lw=0)  # fmt: skip
    whiskers = [
        [(b, r), (w, r)] for b, w, r in zip(shown["best"], shown["worst"], rows, strict=True)
    ]
    ax.add_collection(LineCollection(whiskers, colors="0.55", linewidths=0.8, zorder=1))
    bars = [[(lo, r), (hi, r)] for lo, hi, r in zip(shown["low"], shown["high"], rows, strict=True)]
    ax.add_collection(LineCollection(bars, colors="#2b6cb0", linewidths=4, zorder=2,
                                     gid="intervals"))  # fmt: skip
    ax.scatter(shown["median_rank"], rows, s=14, color="black", zorder=3)
    ax.set_yticks(rows, [str(f) for f in shown.index], fontsize=FONT)
    ax.set_ylim(k - 0.5, -0.5)
    ax.set_xlim(0.5, max(float(intervals["worst"].max()), 1.0) + 0.5)
    ax.set_xlabel("position (1 = best): dot = median, bar = trimmed interval, line = all inputs")
    n_blocks = int(intervals["block"].max())
    more = f", best {k} of {len(intervals)} shown" if k < len(intervals) else ""
    ax.set_title(title if title is not None else f"rank intervals: s = {n_blocks} blocks{more}")
    return fig
