"""Plots of rankings and their comparisons (matplotlib).

Every public function draws on ``ax`` when one is given (and returns that axes' figure), or
else on a new figure made with ``pyplot.subplots``, and returns the
:class:`~matplotlib.figure.Figure`. pyplot is imported inside the functions: importing this
module neither loads pyplot nor chooses a backend, so a library user's backend choice stands,
and a machine without a display gets matplotlib's non-interactive fallback (Agg).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from aggregation._cd_diagram import plot_cd_diagram
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

_FONT = 8  # points; annotation and in-block labels
_BLOCK_COLOURS = ("#c6dbef", "#fdd9b5")  # alternate, so neighbouring blocks stay apart


# ------------------------------------------------------------------ shared helpers
def _figure_axes(ax: Axes | None, figsize: tuple[float, float]) -> tuple[Figure, Axes]:
    """The figure and axes to draw on: ``ax``'s own, or a new constrained-layout figure."""
    if ax is not None:
        fig = ax.figure
        return getattr(fig, "figure", None) or fig, ax  # a SubFigure's root figure
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    return fig, ax


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
    fig, ax = _figure_axes(ax, (1.2 + 0.55 * q + 1.2, 0.8 + 0.55 * q))
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

    Returns
    -------
    matplotlib.figure.Figure
        The blocks are one ``PatchCollection`` (``gid="blocks"``) with a rectangle per
        block, best first; the labels are ``ax.texts``.
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
    sizes = np.array([len(b) for b in blocks])
    starts = np.cumsum(sizes) - sizes
    lines = min(int(sizes.max()), max_names_per_block)
    fig, ax = _figure_axes(ax, (10.0, 1.3 + 0.16 * max(lines, 2)))
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
    strip = PatchCollection(
        [Rectangle((a, 0), w, 1) for a, w in zip(starts, sizes, strict=True)],
        facecolors=[_BLOCK_COLOURS[i % 2] for i in range(len(sizes))],
        edgecolors="0.3",
        linewidths=np.where(width_px >= 4, 0.8, 0.0),
        gid="blocks",
    )
    ax.add_collection(strip, autolim=False)
    for i in np.flatnonzero(width_px >= 6):  # narrower than one character: no label
        _first_fitting(
            ax,
            starts[i] + sizes[i] / 2,
            0.5,
            np.array([x0[i], x1[i]]),
            _block_candidates(blocks[i], max_names_per_block),
            ha="center",
            va="center",
            fontsize=_FONT,
            linespacing=1.1,
            clip_on=True,
        )
    return fig


# ------------------------------------------------------------------ curves
def _labelled(curves: Any, needed: tuple[str, ...], what: str) -> dict[str, pd.DataFrame]:
    """Curves as {label: frame}: a dict as given, else labelled by method or position."""
    if isinstance(curves, pd.DataFrame):
        curves = [curves]
    if isinstance(curves, dict):
        items = [(str(k), v) for k, v in curves.items()]
    elif isinstance(curves, (list, tuple)):
        items = [
            (
                str(c.attrs.get("ranking") or f"ranking {j + 1}")
                if isinstance(c, pd.DataFrame)
                else f"ranking {j + 1}",
                c,
            )
            for j, c in enumerate(curves)
        ]
    else:
        raise InvalidParameterError(
            f"{what} must be a DataFrame, a list of them or a dict label -> DataFrame; "
            f"got {type(curves).__name__}"
        )
    if not items:
        raise InvalidInputError(f"no {what} to plot")
    for label, frame in items:
        if not isinstance(frame, pd.DataFrame):
            raise InvalidParameterError(
                f"{what} {label!r} is a {type(frame).__name__}, not a DataFrame"
            )
        missing = [c for c in needed if c not in frame.columns]
        if missing:
            raise InvalidInputError(f"{what} {label!r} lacks the column(s) {missing}")
    labels = [label for label, _ in items]
    if len(set(labels)) != len(labels):  # two rankings of one method: keep both legible
        items = [(f"{label} ({j + 1})", frame) for j, (label, frame) in enumerate(items)]
    return dict(items)


def plot_error_curves(
    curves: Any,
    expected: pd.DataFrame | None = None,
    *,
    which: str = "both",
    band: str | None = "quantile",
    as_error: bool = False,
    ax: Any = None,
    title: str | None = None,
) -> Figure:
    """FFA and RFA curves of rankings (:func:`aggregation.error_curves.ffa_rfa`) side by side.

    As Fig. 2 of the error-curve paper: the FFA panel (top-i features) left, the RFA panel
    (bottom-i features) right, each with one line per ranking and, when given, the expected
    curve of a random ranking as a dashed black line with its spread as a shaded band.

    Parameters
    ----------
    curves : DataFrame, list of DataFrames or dict label -> DataFrame
        Curves with columns ``i``, ``ffa``, ``rfa``. Unlabelled curves are named after
        ``attrs["ranking"]`` (the ranking's method) or their position.
    expected : DataFrame, optional
        From :func:`aggregation.error_curves.expected_curve`.
    which : {"both", "ffa", "rfa"}, default="both"
    band : {"quantile", "std"} or None, default="quantile"
        The expected curve's band: between its ``lower`` and ``upper`` quantiles, or its
        ``mean`` ± one ``std``; None draws no band.
    as_error : bool, default=False
        Plot ``1 - score`` (the paper's error axis; meaningful for accuracy-like scores).
    ax : Axes, or a pair of Axes for ``which="both"``, optional
        Where to draw; a new figure when omitted.
    title : str, optional
        The figure's title.

    Returns
    -------
    matplotlib.figure.Figure
        Each panel holds one line per ranking, then the expected line; the band is a
        ``PolyCollection`` with ``gid="expected-band"``.
    """
    if which not in ("both", "ffa", "rfa"):
        raise InvalidParameterError(f"which must be 'both', 'ffa' or 'rfa'; got {which!r}")
    if band not in ("quantile", "std", None):
        raise InvalidParameterError(f"band must be 'quantile', 'std' or None; got {band!r}")
    frames = _labelled(curves, ("i", "ffa", "rfa"), "curve")
    if expected is not None:
        band_columns = {"quantile": ("lower", "upper"), "std": ("mean", "std")}.get(band, ())
        need = ("i", "ffa", "rfa", *band_columns)
        _labelled({"expected": expected}, need, "expected curve")
    sides = ("ffa", "rfa") if which == "both" else (which,)
    if ax is None:
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(
            1, len(sides), figsize=(5.0 * len(sides), 3.8), layout="constrained", sharey=True
        )
        axes = list(np.atleast_1d(axes))
    else:
        axes = list(ax) if isinstance(ax, (list, tuple, np.ndarray)) else [ax]
        if len(axes) != len(sides):
            raise InvalidParameterError(
                f"which={which!r} draws {len(sides)} panel(s); got {len(axes)} axes"
            )
        fig = _figure_axes(axes[0], (5.0, 3.8))[0]  # the root figure of the given axes
    first = next(iter(frames.values()))
    scoring = first.attrs.get("scoring", "score")
    ylabel = f"error (1 - {scoring})" if as_error else scoring

    def flip(values) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        return 1.0 - values if as_error else values

    for side, axis in zip(sides, axes, strict=True):
        for label, frame in frames.items():
            marker = "o" if len(frame) <= 30 else None
            axis.plot(frame["i"], flip(frame[side]), marker=marker, markersize=3, label=label)
        if expected is not None:
            axis.plot(
                expected["i"],
                flip(expected[side]),
                color="black",
                linestyle="--",
                label="random (expected)",
            )
            if band is not None:
                lo, hi = (
                    (expected["lower"], expected["upper"])
                    if band == "quantile"
                    else (expected["mean"] - expected["std"], expected["mean"] + expected["std"])
                )
                axis.fill_between(
                    expected["i"],
                    flip(lo),
                    flip(hi),
                    color="0.6",
                    alpha=0.3,
                    linewidth=0,
                    gid="expected-band",
                )
        end = "top" if side == "ffa" else "bottom"
        axis.set_xlabel(f"number of features i ({end}-i of the ranking)")
        axis.set_title(side.upper())
        axis.grid(True, alpha=0.3)
    axes[0].set_ylabel(ylabel)
    axes[-1].legend(fontsize=_FONT)
    if title is not None:
        fig.suptitle(title)
    return fig


def plot_topk_curves(
    curves: Any,
    random: pd.DataFrame | None = None,
    *,
    show_std: bool = False,
    logx: bool = True,
    ax: Axes | None = None,
    title: str | None = None,
) -> Figure:
    """Top-k kNN error curves (:func:`aggregation.curves.topk_curve`) of several rankers.

    Parameters
    ----------
    curves : DataFrame, list of DataFrames or dict label -> DataFrame
        Frames with columns ``k`` and ``mean`` (``std`` for ``show_std``; ``metric`` names
        the y axis). Unlabelled frames are named by position.
    random : DataFrame, optional
        The random-ranking baseline (``topk_curve("random", ...)``), drawn as a dashed
        black line with a grey band of ± one standard deviation over folds.
    show_std : bool, default=False
        Shade ± one standard deviation (over folds) around every ranker's curve.
    logx : bool, default=True
        A base-2 logarithmic k axis, for the geometric grid 1, 2, 4, ...
    ax : matplotlib Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
        One line per ranker, then the baseline's line; bands are ``PolyCollection``s.
    """
    frames = _labelled(curves, ("k", "mean", *(("std",) if show_std else ())), "curve")
    if random is not None:
        _labelled({"random": random}, ("k", "mean"), "random baseline")
    fig, ax = _figure_axes(ax, (6.0, 4.0))
    for label, frame in frames.items():
        (line,) = ax.plot(frame["k"], frame["mean"], marker="o", markersize=3, label=label)
        if show_std:
            ax.fill_between(
                frame["k"],
                frame["mean"] - frame["std"],
                frame["mean"] + frame["std"],
                color=line.get_color(),
                alpha=0.15,
                linewidth=0,
            )
    if random is not None:
        ax.plot(random["k"], random["mean"], color="black", linestyle="--", label="random")
        if "std" in random.columns:
            ax.fill_between(
                random["k"],
                random["mean"] - random["std"],
                random["mean"] + random["std"],
                color="0.6",
                alpha=0.3,
                linewidth=0,
                gid="random-band",
            )
    if logx:
        ax.set_xscale("log", base=2)
    first = next(iter(frames.values()))
    metric = str(first["metric"].iloc[0]) if "metric" in first.columns else "error"
    ax.set_xlabel("number of top-ranked features k")
    ax.set_ylabel(f"{metric} (lower is better)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=_FONT)
    if title is not None:
        ax.set_title(title)
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
    fig, ax = _figure_axes(ax, (8.0, 1.2 + 0.22 * k))
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
    ax.set_yticks(rows, [str(f) for f in shown.index], fontsize=_FONT)
    ax.set_ylim(k - 0.5, -0.5)
    ax.set_xlim(0.5, max(float(intervals["worst"].max()), 1.0) + 0.5)
    ax.set_xlabel("position (1 = best): dot = median, bar = trimmed interval, line = all inputs")
    n_blocks = int(intervals["block"].max())
    more = f", best {k} of {len(intervals)} shown" if k < len(intervals) else ""
    ax.set_title(title if title is not None else f"rank intervals: s = {n_blocks} blocks{more}")
    return fig
