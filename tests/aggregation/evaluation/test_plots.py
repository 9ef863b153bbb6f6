"""Plots of FFA/RFA error curves and top-k curves: headless, one artist per curve / band."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from aggregation.evaluation.plots import plot_error_curves, plot_topk_curves
from rankers.exceptions import InvalidInputError, InvalidParameterError

plt = pytest.importorskip("matplotlib.pyplot")
from matplotlib.collections import PolyCollection  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def _headless():
    plt.switch_backend("Agg")
    yield
    plt.close("all")


def _curve(ffa, rfa, method=None):
    frame = pd.DataFrame({"i": [1, 2, 3, 4], "ffa": ffa, "rfa": rfa})
    frame.attrs.update(scoring="accuracy", ranking=method)
    return frame


GOOD = _curve([0.9, 0.85, 0.8, 0.8], [0.5, 0.55, 0.6, 0.8], "relieff")
BAD = _curve([0.6, 0.65, 0.7, 0.8], [0.7, 0.75, 0.8, 0.8], "variance")
EXPECTED = pd.DataFrame(
    {
        "i": [1, 2, 3, 4],
        "ffa": [0.6, 0.7, 0.75, 0.8],
        "rfa": [0.6, 0.7, 0.75, 0.8],
        "mean": [0.6, 0.7, 0.75, 0.8],
        "std": [0.05, 0.04, 0.02, 0.0],
        "lower": [0.5, 0.62, 0.7, 0.8],
        "upper": [0.72, 0.78, 0.79, 0.8],
    }
)


def _bands(ax, gid):
    return [c for c in ax.collections if isinstance(c, PolyCollection) and c.get_gid() == gid]


def test_error_curves_two_panels_lines_and_band(tmp_path):
    fig = plot_error_curves([GOOD, BAD], EXPECTED)
    ffa_ax, rfa_ax = fig.axes
    for ax, side in ((ffa_ax, "ffa"), (rfa_ax, "rfa")):
        lines = ax.get_lines()
        assert [line.get_label() for line in lines] == ["relieff", "variance", "random (expected)"]
        np.testing.assert_allclose(lines[0].get_ydata(), GOOD[side])
        np.testing.assert_allclose(lines[2].get_ydata(), EXPECTED[side])
        (band,) = _bands(ax, "expected-band")
        ys = band.get_paths()[0].vertices[:, 1]
        assert ys.min() == pytest.approx(0.5) and ys.max() == pytest.approx(0.8)
    assert ffa_ax.get_title() == "FFA" and rfa_ax.get_title() == "RFA"
    assert ffa_ax.get_ylabel() == "accuracy"
    fig.savefig(tmp_path / "curves.png", dpi=60)
    assert (tmp_path / "curves.png").read_bytes()[:8] == PNG_MAGIC


def test_error_axis_std_band_and_one_panel_on_given_axes():
    fig, ax = plt.subplots()
    out = plot_error_curves({"mine": GOOD}, EXPECTED, which="rfa", band="std", as_error=True, ax=ax)
    assert out is fig and len(fig.axes) == 1
    line, _ = ax.get_lines()
    assert line.get_label() == "mine"
    np.testing.assert_allclose(line.get_ydata(), 1 - GOOD["rfa"])
    (band,) = _bands(ax, "expected-band")
    ys = band.get_paths()[0].vertices[:, 1]
    assert ys.min() == pytest.approx(1 - 0.8) and ys.max() == pytest.approx(1 - 0.55)
    assert ax.get_ylabel() == "error (1 - accuracy)"


def test_no_expected_no_band_and_duplicate_labels_kept_apart():
    _, axes = plt.subplots(1, 2)
    plot_error_curves([GOOD, GOOD], ax=axes, band=None)
    for ax in axes:
        assert [line.get_label() for line in ax.get_lines()] == ["relieff (1)", "relieff (2)"]
        assert not ax.collections


def test_error_curve_plot_errors():
    with pytest.raises(InvalidParameterError, match="which"):
        plot_error_curves(GOOD, which="up")
    with pytest.raises(InvalidParameterError, match="band"):
        plot_error_curves(GOOD, band="iqr")
    with pytest.raises(InvalidInputError, match="lacks"):
        plot_error_curves(GOOD.drop(columns="rfa"))
    with pytest.raises(InvalidInputError, match="lower"):
        plot_error_curves(GOOD, EXPECTED.drop(columns="lower"))
    _, ax = plt.subplots()
    with pytest.raises(InvalidParameterError, match="2 panel"):
        plot_error_curves(GOOD, ax=ax)
    with pytest.raises(InvalidParameterError, match="DataFrame"):
        plot_error_curves("relieff")


def _topk(values, metric="mse"):
    k = [1, 2, 4, 8, 10]
    return pd.DataFrame({"k": k, "metric": metric, "mean": values, "std": [0.1] * 5, "n_folds": 10})


def test_topk_curves_with_random_baseline(tmp_path):
    curves = {
        "laplacian": _topk([1.0, 0.8, 0.6, 0.5, 0.4]),
        "spec": _topk([1.1, 1.0, 0.7, 0.5, 0.4]),
    }
    random = _topk([1.2, 1.1, 0.9, 0.6, 0.4])
    fig = plot_topk_curves(curves, random, show_std=True)
    (ax,) = fig.axes
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["laplacian", "spec", "random"]
    np.testing.assert_allclose(lines[1].get_ydata(), curves["spec"]["mean"])
    assert lines[2].get_linestyle() == "--"
    assert len(ax.collections) == 3  # a band per ranker and the baseline's
    assert len(_bands(ax, "random-band")) == 1
    assert ax.get_xscale() == "log"
    assert ax.get_ylabel() == "mse (lower is better)"
    fig.savefig(tmp_path / "topk.png", dpi=60)
    assert (tmp_path / "topk.png").read_bytes()[:8] == PNG_MAGIC


def test_topk_curves_plain_list_on_given_axes():
    fig, ax = plt.subplots()
    out = plot_topk_curves([_topk([1, 0.9, 0.8, 0.7, 0.6], "rmae")], ax=ax, logx=False)
    assert out is fig
    assert [line.get_label() for line in ax.get_lines()] == ["ranking 1"]
    assert not ax.collections and ax.get_xscale() == "linear"
    assert ax.get_ylabel() == "rmae (lower is better)"
    with pytest.raises(InvalidInputError, match="std"):
        plot_topk_curves([_topk([1] * 5).drop(columns="std")], show_std=True)
    with pytest.raises(InvalidInputError, match="no curve"):
        plot_topk_curves([])
