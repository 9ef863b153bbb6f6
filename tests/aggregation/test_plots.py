"""Tests of aggregation.plots: headless rendering, one artist per cell / block, labels."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from aggregation import plots
from aggregation.compare import pairwise
from aggregation.plots import plot_generic, plot_pairwise
from aggregation.ranking import GenericRanking, Ranking
from rankers.exceptions import InvalidInputError, InvalidParameterError

plt = pytest.importorskip("matplotlib.pyplot")


PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def _headless():
    plt.switch_backend("Agg")
    yield
    plt.close("all")


def _save(fig, path):
    fig.savefig(path, dpi=80)
    assert path.read_bytes()[:8] == PNG_MAGIC
    assert path.stat().st_size > 1000


def _rankings():
    names = [f"x{i}" for i in range(8)]
    orders = ["01234567", "10234576", "76543210", "01324567"]
    methods = ["laplacian", "spec", "frane", "urelief"]
    return [
        Ranking.from_order([f"x{c}" for c in o], names=names, method=m)
        for o, m in zip(orders, methods, strict=True)
    ]


def test_module_level_code_neither_imports_matplotlib_nor_picks_a_backend():
    # Statically: a subprocess import would cost seconds (sklearn et al.) for the same answer.
    tree = ast.parse(Path(plots.__file__).read_text())
    top = [n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.If))]
    imported = [
        alias.name if isinstance(n, ast.Import) else n.module
        for n in top
        if isinstance(n, (ast.Import, ast.ImportFrom))
        for alias in n.names
    ]
    assert not [m for m in imported if m and m.startswith("matplotlib")]
    guarded = [n for n in tree.body if isinstance(n, ast.If)]
    assert all(ast.unparse(n.test) == "TYPE_CHECKING" for n in guarded)
    assert "matplotlib.use(" not in Path(plots.__file__).read_text()


# ------------------------------------------------------------------------- plot_pairwise


def test_plot_pairwise_annotates_every_cell(tmp_path):
    df = pairwise(_rankings(), "spearman")
    fig = plot_pairwise(df)
    _save(fig, tmp_path / "pairwise.png")
    ax, cbar_ax = fig.axes
    texts = [t.get_text() for t in ax.texts]
    assert len(texts) == 16
    assert texts == [format(v, ".2f") for v in df.to_numpy().ravel()]
    assert [t.get_text() for t in ax.get_xticklabels()] == list(df.columns)
    assert [t.get_text() for t in ax.get_yticklabels()] == list(df.index)
    assert cbar_ax.get_ylabel() == "spearman"


def test_plot_pairwise_integer_values_nan_and_no_annotation(tmp_path):
    df = pairwise(_rankings(), "s_measure")
    texts = [t.get_text() for t in plot_pairwise(df).axes[0].texts]
    assert texts[0] == "8" and texts[1] == str(df.iloc[0, 1])  # whole numbers: no decimals
    holes = df.astype(float)
    holes.iloc[0, 1] = np.nan
    assert len(plot_pairwise(holes).axes[0].texts) == 15  # the NaN cell stays blank
    assert len(plot_pairwise(df, annotate=False).axes[0].texts) == 0
    fig = plot_pairwise(df, fmt=".1f", cmap="magma", vmin=0, vmax=8, title="s")
    assert fig.axes[0].texts[0].get_text() == "8.0"
    assert fig.axes[0].get_title() == "s"
    _save(fig, tmp_path / "s.png")


def test_plot_pairwise_contrasting_text():
    df = pd.DataFrame([[0.0, 1.0], [1.0, 0.0]], index=["a", "b"], columns=["a", "b"])
    ax = plot_pairwise(df, cmap="gray").axes[0]
    # black cell -> white text, white cell -> black text
    assert [t.get_color() for t in ax.texts] == ["white", "black", "black", "white"]


def test_plot_pairwise_on_given_axes():
    fig, axes = plt.subplots(1, 2)
    out = plot_pairwise(pairwise(_rankings(), "kendall"), ax=axes[1])
    assert out is fig
    assert len(axes[1].texts) == 16 and len(axes[0].texts) == 0


def test_plot_pairwise_rejects_non_square():
    with pytest.raises(InvalidInputError, match="square"):
        plot_pairwise(pd.DataFrame(np.zeros((2, 3))))


# ------------------------------------------------------------------------- plot_generic


def _blocks(fig):
    (strip,) = [c for c in fig.axes[0].collections if c.get_gid() == "blocks"]
    return strip


def test_plot_generic_one_rectangle_per_block_with_names(tmp_path):
    g = GenericRanking(
        [["x0", "x1"], ["x2"], [f"x{i}" for i in range(3, 11)], ["x11"], ["x12"]],
        method="generic",
    )
    fig = plot_generic(g)
    _save(fig, tmp_path / "generic.png")
    strip = _blocks(fig)
    assert len(strip.get_paths()) == 5
    # rectangles left to right, width = block size
    extents = [p.get_extents() for p in strip.get_paths()]
    assert [e.x0 for e in extents] == [0, 2, 3, 11, 12]
    assert [e.width for e in extents] == [2, 1, 8, 1, 1]
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts == ["x0\nx1", "x2", "x3\nx4\nx5\nx6\nx7\n+3 more", "x11", "x12"]
    assert fig.axes[0].get_title() == "generic: s = 5 blocks, n = 13"


def test_plot_generic_falls_back_when_names_do_not_fit():
    wide = GenericRanking([[f"a_rather_long_feature_name_{i}" for i in range(3)], ["b"]])
    texts = [t.get_text() for t in plot_generic(wide, max_names_per_block=0).axes[0].texts]
    assert texts == ["3 features"]  # a singleton block has no size label
    # 1000 singletons, all drawn: under a pixel each; no labels, no edges
    fig = plot_generic(Ranking.from_order(list(range(1000))), max_blocks=1000)
    assert len(_blocks(fig).get_paths()) == 1000
    assert len(fig.axes[0].texts) == 0
    assert np.all(np.asarray(_blocks(fig).get_linewidths()) == 0)


def test_plot_generic_summarises_the_blocks_after_max_blocks():
    fig = plot_generic(Ranking.from_order(list(range(1000))))  # max_blocks=200
    paths = _blocks(fig).get_paths()
    assert len(paths) == 201  # 200 blocks and one box for the 800 others
    last = paths[-1].get_extents()
    assert (last.x0, last.width) == (200, 800)
    assert [t.get_text() for t in fig.axes[0].texts] == ["+800 blocks\n800 features"]
    with pytest.raises(InvalidParameterError, match="max_blocks"):
        plot_generic(Ranking.from_order(["a", "b"]), max_blocks=0)


def test_plot_generic_turns_names_upright_in_narrow_blocks():
    r = Ranking.from_order([f"feature_{i}" for i in range(40)], method="m")
    texts = plot_generic(r).axes[0].texts
    assert len(texts) == 40
    assert {t.get_rotation() for t in texts} == {90.0}
    assert texts[0].get_text() == "feature_0"


def test_plot_generic_on_given_axes_and_errors():
    fig, axes = plt.subplots(2, 1)
    g = GenericRanking([["a"], ["b", "c"]])
    assert plot_generic(g, ax=axes[0], title="t") is fig
    assert axes[0].get_title() == "t" and len(axes[1].collections) == 0
    with pytest.raises(InvalidParameterError, match="GenericRanking or a Ranking"):
        plot_generic(["a", "b"])
    with pytest.raises(InvalidParameterError, match="max_names_per_block"):
        plot_generic(g, max_names_per_block=-1)
