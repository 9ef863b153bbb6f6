"""Plots of evaluation results: FFA/RFA error curves and top-k kNN curves (matplotlib).

As :mod:`aggregation.plots` (which re-exports them): each function draws on ``ax`` when one is
given or on a new figure, returns the :class:`~matplotlib.figure.Figure`, and imports pyplot
only when it draws.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from aggregation._plotting import FONT, figure_axes
from rankers.exceptions import InvalidInputError, InvalidParameterError

if TYPE_CHECKING:  # matplotlib stays unimported until a plot is drawn
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["plot_error_curves", "plot_topk_curves"]


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
    """FFA and RFA curves of rankings (:func:`aggregation.evaluation.ffa_rfa`) side by side.

    As Fig. 2 of the error-curve paper: the FFA panel (top-i features) left, the RFA panel
    (bottom-i features) right, each with one line per ranking and, when given, the expected
    curve of a random ranking as a dashed black line with its spread as a shaded band.

    Parameters
    ----------
    curves : DataFrame, list of DataFrames or dict label -> DataFrame
        Curves with columns ``i``, ``ffa``, ``rfa``. Unlabelled curves are named after
        ``attrs["ranking"]`` (the ranking's method) or their position.
    expected : DataFrame, optional
        From :func:`aggregation.evaluation.expected_curve`.
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
        fig = figure_axes(axes[0], (5.0, 3.8))[0]  # the root figure of the given axes
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
    axes[-1].legend(fontsize=FONT, loc="upper left", bbox_to_anchor=(1.02, 1.0))
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
    """Top-k kNN error curves (:func:`aggregation.evaluation.topk_curve`) of several rankers.

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
        One line per ranker, then the baseline's line; bands are ``PolyCollection`` objects.
    """
    frames = _labelled(curves, ("k", "mean", *(("std",) if show_std else ())), "curve")
    if random is not None:
        _labelled({"random": random}, ("k", "mean"), "random baseline")
    fig, ax = figure_axes(ax, (6.0, 4.0))
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
    ax.legend(fontsize=FONT, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    if title is not None:
        ax.set_title(title)
    return fig
