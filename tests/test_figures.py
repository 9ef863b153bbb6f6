"""Every figure the prose quotes is its committed table's (issue 49 item 4).

The README and the guides quote measured figures only in marked blocks that ``docs/_figures.py``
fills from the tables under ``leaderboard/`` and ``benchmarks/results/``; a test here fails
when a block's text and its table disagree, and a planted disagreement shows that it can. The
README's first screen, the guide's board summaries and the example configs type no figure
outside a block (the configs and docstrings cite the table instead).
"""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

pytestmark = pytest.mark.quick  # in the quick suite (pytest -m quick): see pyproject.toml

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def figures():
    """docs/_figures.py, the one generator of quoted figures."""
    spec = importlib.util.spec_from_file_location("_docs_figures", REPO / "docs" / "_figures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _bare(text: str) -> str:
    """``text`` without its marked figures."""
    return re.sub(r"<!-- figure [^>]*-->[^<\n]*<!-- /figure -->", "", text)


#: a typed measured figure: a decimal number or a place ("20th"); a figure block removes them
TYPED = re.compile(r"(?<![\w.`-])\d+\.\d+(?![\w.])|\b\d+(?:st|nd|rd|th)\b")


def test_every_quoted_figure_is_its_tables(figures):
    paths = figures.documents()
    assert REPO / "README.md" in paths and REPO / "docs" / "guide" / "leaderboards.md" in paths
    assert figures.disagreements(paths) == []


def test_no_marker_stands_in_a_code_span(figures):
    # inside backticks a marker is literal text on GitHub and in the built pages: a name in
    # code is rendered with the ``code`` format instead
    for path in figures.documents():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            outside = re.sub(r"`[^`]*`", "", re.sub(r"<!-- (/?figure)[^>]*-->", r"<\1>", line))
            assert outside.count("<figure>") == line.count("<!-- figure "), (path.name, number)


def test_a_planted_disagreement_fails_the_check(figures, tmp_path, capsys):
    (tmp_path / "leaderboard").mkdir()
    shutil.copy(REPO / "leaderboard" / "supervised.csv", tmp_path / "leaderboard")
    readme = tmp_path / "README.md"
    board = pd.read_csv(REPO / "leaderboard" / "supervised.csv")
    first, second = board["method"].iloc[0], board["method"].iloc[1]
    rank = board["average_rank"].iloc[0]
    readme.write_text(
        f"Best: <!-- figure leaderboard/supervised.csv#{first}/average_rank:.2f -->{rank:.2f}"
        f"<!-- /figure -->\nplace <!-- figure leaderboard/supervised.csv#place/{first}:th -->1st"
        "<!-- /figure -->\n",
        encoding="utf-8",
    )
    assert figures.main(["--check", "--root", str(tmp_path)]) == 0
    table = tmp_path / "leaderboard" / "supervised.csv"
    # the committed table moves (a re-scored board): the first's rank changes, it drops to 2nd
    moved = board.copy()
    moved.loc[0, "average_rank"] = rank + 0.55
    moved = moved.iloc[[1, 0, *range(2, len(moved))]]
    moved.to_csv(table, index=False)
    wrong = figures.disagreements([readme], tmp_path)
    assert wrong == [
        f"README.md:1: leaderboard/supervised.csv#{first}/average_rank:.2f says '{rank:.2f}', "
        f"the table '{rank + 0.55:.2f}'",
        f"README.md:2: leaderboard/supervised.csv#place/{first}:th says '1st', the table '2nd'",
    ]
    assert second != first
    assert figures.main(["--check", "--root", str(tmp_path)]) == 1
    assert "README.md:1" in capsys.readouterr().out
    # writing renders the table's values, after which the check passes
    assert figures.main(["--root", str(tmp_path)]) == 0
    assert f"-->{rank + 0.55:.2f}<!--" in readme.read_text(encoding="utf-8")
    assert figures.disagreements([readme], tmp_path) == []


def test_a_reference_reads_cells_places_ranges_and_json_keys(figures):
    import json

    value = figures.value
    board = pd.read_csv(REPO / "leaderboard" / "supervised.csv").set_index("method")
    n = len(board)
    assert value("leaderboard/supervised.csv#rows") == str(n)
    place = board.index.get_loc("random") + 1
    assert value("leaderboard/supervised.csv#place/random:th") == figures._ordinal(place)
    assert value("leaderboard/supervised.csv#jmi/n_datasets") == str(board.loc["jmi", "n_datasets"])
    pair = board.loc[["borda", "kemeny_top32"], "average_rank"]
    assert value("leaderboard/supervised.csv#max(borda,kemeny_top32)/average_rank:.4f") == (
        f"{pair.max():.4f}"
    )
    assert value("leaderboard/supervised.csv#min(borda,kemeny_top32)/average_rank:.4f") == (
        f"{pair.min():.4f}"
    )
    ref = "leaderboard/supervised/stats.json#scores/bacc_1_64/head_to_head/1/b"
    stats = json.loads((REPO / "leaderboard" / "supervised" / "stats.json").read_text())
    assert value(ref) == stats["scores"]["bacc_1_64"]["head_to_head"][1]["b"] == "stacked_auto"
    assert value(ref + ":code") == "`stacked_auto`"
    margin = "leaderboard/supervised.csv#jmi/average_rank~borda/average_rank:.4f"
    assert value(margin) == f"{board.loc['jmi', 'average_rank'] - pair['borda']:.4f}"
    assert [figures._ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th"
    ]  # fmt: skip


@pytest.mark.parametrize(
    "ref, message",
    [
        ("leaderboard/supervised.csv#nobody/average_rank:.2f", "no row 'nobody'"),
        ("leaderboard/supervised.csv#jmi/nothing", "no column 'nothing'"),
        ("leaderboard/supervised.csv#place/nobody", "no row 'nobody'"),
        ("leaderboard/nowhere.csv#jmi/average_rank", "no table leaderboard/nowhere.csv"),
        ("leaderboard/supervised/stats.json#scores/nothing", "no key 'nothing'"),
        ("leaderboard/supervised.csv", "PATH#SELECTOR"),
    ],
)
def test_a_reference_to_nothing_is_reported_with_what_it_named(figures, ref, message):
    with pytest.raises(figures.FigureError, match=re.escape(message)):
        figures.value(ref)


def test_the_readme_first_screen_types_no_figure():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    first = _bare(readme[: readme.index("\n## A short tour")])
    code = re.sub(r"```.*?```", "", first, flags=re.S)  # the install lines are not figures
    assert TYPED.findall(code) == []


def test_the_guides_board_summaries_type_no_figure():
    guide = (REPO / "docs" / "guide" / "leaderboards.md").read_text(encoding="utf-8")
    start = guide.index("\n### Status")
    section = _bare(guide[start : guide.index("**The atlas half of the goal", start)])
    assert TYPED.findall(section) == []
    assert section.count("\n* **") >= 4  # the boards' bullets are all there


#: words that place a method on a board: a sentence of an example config that names a board
#: uses none of them and no measured figure, it cites the table
PLACING = re.compile(r"\b(first|second|third|ahead of|behind|beats|below the best)\b", re.I)


@pytest.mark.parametrize("path", sorted((REPO / "examples").glob("*.toml")), ids=lambda p: p.name)
def test_the_example_configs_cite_the_boards_instead_of_quoting_them(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    comments = " ".join(line[line.index("#") + 1 :].strip() for line in lines if "#" in line)
    for sentence in re.split(r"(?<=[.;])\s+", comments):
        if re.search(r"leaderboard|\bboards?\b|atlas", sentence, re.I):
            assert not TYPED.findall(sentence), (path.name, sentence)
            assert not PLACING.findall(sentence), (path.name, sentence)


def test_the_config_check_catches_the_old_drift(tmp_path):
    """The sentence examples/config.toml carried until issue 49 fails the check above."""
    old = (
        "# Second on the supervised real-data leaderboard (after jmi, not significantly "
        "different), ahead of every single\n# ranker on the unsupervised one.\n"
    )
    (tmp_path / "old.toml").write_text(old, encoding="utf-8")
    with pytest.raises(AssertionError):
        test_the_example_configs_cite_the_boards_instead_of_quoting_them(tmp_path / "old.toml")


def test_a_results_page_table_is_read_by_row_and_column(figures):
    page = "benchmarks/results/width/bench_width.md#"
    assert figures.value(page + "frane/features@200_1min_4GB") == "~33,000"
    assert figures.value(page + "frane/@2:.2f") == "1.79"  # time~features: a '~' in the name
    tables = figures.markdown_tables("| a | b |\n|---|---|\n| `x` | 1,500 |\n| y | z |\n\ntext")
    assert len(tables) == 1 and tables[0].loc["x", "b"] == "1,500"  # a column with text stays
    only = figures.markdown_tables("| a | b |\n|---|---|\n| `x` | 1,500 |\n")[0]
    assert only.loc["x", "b"] == 1500


def test_a_table_block_groups_equal_rows_and_fails_when_its_source_moves(figures, tmp_path):
    (tmp_path / "r.md").write_text(
        "| ranker | wide | tall |\n|---|---|---|\n| a | >9 | 5 |\n| b | ~3 | 5 |\n| c | >9 | 5 |\n",
        encoding="utf-8",
    )
    doc = tmp_path / "README.md"
    doc.write_text("<!-- table r.md#wide=Wide (200);tall=Tall -->\n<!-- /table -->\n", "utf-8")
    assert figures.disagreements([doc], tmp_path) == [
        "README.md:1: r.md#wide=Wide (200);tall=Tall says 'its body', the table 'another'"
    ]
    figures.main(["--root", str(tmp_path)])
    assert doc.read_text(encoding="utf-8") == (
        "<!-- table r.md#wide=Wide (200);tall=Tall -->\n| ranker | Wide (200) | Tall |\n"
        "|---|---|---|\n| `a`, `c` | >9 | 5 |\n| `b` | ~3 | 5 |\n<!-- /table -->\n"
    )
    assert figures.disagreements([doc], tmp_path) == []
    (tmp_path / "r.md").write_text(
        "| ranker | wide | tall |\n|---|---|---|\n| a | >9 | 5 |\n| b | >9 | 5 |\n| c | >9 | 5 |\n",
        encoding="utf-8",
    )
    assert len(figures.disagreements([doc], tmp_path)) == 1


#: a verdict of a ranker's "Where it works" note: the structures after each phrase
_VERDICTS = re.compile(r"it (recovers part of|recovers|fails on) ([a-z_, ]+?)(?=;|\.| \(within)")


#: the atlas the "Where it works" notes cite
ATLAS = REPO / "benchmarks" / "results" / "atlas_grid" / "atlas.csv"


def _verdicts_in(text: str) -> dict[str, str]:
    return {s.strip(): v for v, names in _VERDICTS.findall(text) for s in names.split(",")}


def _atlas_verdicts() -> dict[str, dict[str, str]]:
    """Per ranker, each structure's verdict on the atlas grid by the which-ranker guide's
    rule: mean precision 0.75 or more recovers, within 0.1 of the random row's fails, else
    part (every share, width and seed the ranker ran on)."""
    atlas = pd.read_csv(ATLAS)
    chance = atlas[atlas["ranker"] == "random"].groupby("structure")["precision"].mean()
    means = atlas.groupby(["ranker", "structure"])["precision"].mean()
    out: dict[str, dict[str, str]] = {}
    for (ranker, structure), precision in means.items():
        verdict = (
            "recovers"
            if precision >= 0.75
            else "fails on"
            if precision <= chance[structure] + 0.1
            else "recovers part of"
        )
        out.setdefault(ranker, {})[structure] = verdict
    return out


def test_each_rankers_where_it_works_note_is_the_atlas_verdict():
    """The verdicts a ranker's docstring states (recovers / part / fails, per structure)
    are those its committed atlas table gives today, structure by structure, and it names
    every structure the ranker ran on: a re-run atlas that moves a verdict fails here."""
    import inspect

    import rankers

    verdicts = _atlas_verdicts()
    atlas = pd.read_csv(ATLAS)
    checked = 0
    for name in rankers.available()["name"]:
        doc = inspect.getdoc(type(rankers.get(name))) or ""
        note = re.search(r"\*\*Where it works\.\*\*(.*?)The shares are in", doc, re.S)
        if note is None:
            continue
        text = " ".join(note.group(1).split())
        assert _verdicts_in(text) == verdicts[name], (name, text)
        widths = "200 and 2,000 features" if "2,000" in text else "200 features"
        ran = sorted(atlas.loc[atlas["ranker"] == name, "n_features"].unique())
        assert widths == ("200 and 2,000 features" if ran == [200, 2000] else "200 features"), (
            name,
            ran,
        )
        checked += 1
    assert checked >= 20  # the notes are found (a changed heading would skip them all)


def test_a_moved_atlas_verdict_fails_the_docstring_check():
    verdicts = _atlas_verdicts()
    text = "it recovers imbalanced, shift; it fails on xor (within 0.1 of chance). "
    stated = _verdicts_in(text)
    assert stated == {"imbalanced": "recovers", "shift": "recovers", "xor": "fails on"}
    assert stated == verdicts["anova_f"]
    moved = text.replace("imbalanced, shift", "shift; it recovers part of imbalanced")
    assert _verdicts_in(moved) != verdicts["anova_f"]
