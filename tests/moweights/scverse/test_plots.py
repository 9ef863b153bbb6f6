"""The marker dot plot: which features it shows, where, and in what colour and size."""

from __future__ import annotations

import numpy as np
import pytest

from moweights.scverse.markers import find_markers
from moweights.scverse.plots import plot_markers
from rankers.exceptions import InvalidInputError, InvalidParameterError


def table():
    rng = np.random.default_rng(1)
    y = np.repeat(["B", "NK", "T"], 30)
    counts = rng.poisson(0.5, size=(90, 10)).astype(float)
    counts[y == "B", 0] += 4
    counts[y == "NK", 1] += 4
    counts[y == "T", 2] += 4
    return find_markers(np.log1p(counts), y, rankers="t_test")


def test_the_dot_plot_shows_each_groups_top_markers_as_dots_coloured_by_fold_change():
    import matplotlib.pyplot as plt

    t = table()
    fig = plot_markers(t, n_top=2)
    ax = fig.axes[0]
    shown = [label.get_text() for label in ax.get_xticklabels()]
    expected = []
    for g in ("B", "NK", "T"):
        for f in t[t["group"] == g]["feature"].iloc[:2]:
            if f not in expected:
                expected.append(f)
    assert shown == expected
    assert shown[0] == "x0" and "x1" in shown and "x2" in shown
    assert [label.get_text() for label in ax.get_yticklabels()] == ["B", "NK", "T"]
    dots = ax.collections[0]
    offsets = dots.get_offsets()
    assert len(offsets) == 3 * len(expected)  # every group has every shown feature
    # the dot of (B, x0) has B's fold change of x0, the largest of that column
    colours = dots.get_array()
    at = int(np.flatnonzero((offsets[:, 0] == 0) & (offsets[:, 1] == 0))[0])
    lfc = t[(t["group"] == "B") & (t["feature"] == "x0")]["logfoldchange"].iloc[0]
    column = colours[offsets[:, 0] == 0]
    assert colours[at] == pytest.approx(lfc) and colours[at] == pytest.approx(column.max())
    plt.close(fig)


def test_the_dot_plot_refuses_a_table_without_its_columns():
    t = table()
    with pytest.raises(InvalidInputError, match="lacks the columns"):
        plot_markers(t.drop(columns=["pct_in"]))
    with pytest.raises(InvalidInputError, match="empty"):
        plot_markers(t.iloc[:0])
    with pytest.raises(InvalidParameterError, match="n_top"):
        plot_markers(t, n_top=0)
