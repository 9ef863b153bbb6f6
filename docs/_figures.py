"""Fill the figures the prose quotes from the committed tables they come from.

A measured figure in the README or a guide is never typed: it stands in a marked block that
names its table and the cell, and this script writes the value between the markers::

    `jmi` <!-- figure leaderboard/supervised.csv#jmi/average_rank:.2f -->5.21<!-- /figure -->

(the comments do not show on GitHub or in the built pages). After a table changes, run
``python docs/_figures.py`` from the repository root to rewrite every block; ``--check``
changes nothing and exits 1 naming each block whose text is not its table's value (the test
suite runs it: ``tests/test_figures.py``). Docstrings and example configs cite the table
instead of quoting it.

A block's reference is ``PATH#SELECTOR[:FORMAT]``, PATH relative to the repository root:

* ``ROW/COLUMN``: a cell of a CSV table (ROW a value of its first column); ``min(A,B,...)/
  COLUMN`` and ``max(A,B,...)/COLUMN`` the smallest and largest of those rows' cells;
* ``mean(COL=VALUE,...)/COLUMN``: the mean of COLUMN over the rows whose columns hold those
  values (a long table such as ``benchmarks/results/atlas_v3_200/atlas.csv``);
* ``place/ROW``: ROW's position in the table, 1 = its first row; ``rows``: how many rows;
* in a JSON file, the keys down to the value, ``/``-separated (an integer picks a list item;
  ``min(*)`` or ``max(K1,K2,...)`` the smallest or largest of the rest of the path over
  those children);
* ``SELECTOR~SELECTOR``: the first value minus the second (a margin), from the same file;
* in a Markdown file (a results page), the same selectors as a CSV's on the first of its
  tables that answers them; ``@N`` names a table's N-th column (1 = the first), for a header
  with spaces.

A whole table is a block too, for a summary that groups rows with equal values::

    <!-- table benchmarks/results/width/bench_width.md#COLUMN=Label;COLUMN=Label -->
    (the rendered Markdown table)
    <!-- /table -->

its rows are the source table's, those with the same values in every named column joined in
one row (their first column listed in backticks, in the source's order).

FORMAT is a Python format spec (``.2f``, ``.2g``, ``d``), ``th`` for an ordinal (``20th``)
or ``code`` for a name in backticks (a marker inside a code span would show as text); without
one the value is written as it is (counts, names).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable
from functools import partial
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]

#: the prose that quotes figures: the README and every page of the guides
DOCUMENTS = ("README.md", "docs/*.md", "docs/guide/*.md", "leaderboard/README.md")

#: one marked figure: its reference and the text between the markers (never a newline, never
#: another marker)
BLOCK = re.compile(r"<!-- figure (?P<ref>[^\s>]+) -->(?P<text>[^<\n]*)<!-- /figure -->")
#: one marked table: its reference (a file and its columns, which may hold spaces) and body
TABLE = re.compile(r"<!-- table (?P<ref>[^\n>]+?) -->\n(?P<text>.*?)<!-- /table -->", re.S)


class FigureError(ValueError):
    """A reference that names no table, no row or no key, or that cannot be read."""


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _csv_value(table: pd.DataFrame, selector: str, *, ref: str):
    if selector == "rows":
        return len(table)
    head, _, column = selector.partition("/")
    if head == "place":
        if column not in table.index:
            raise FigureError(f"{ref}: no row {column!r} (rows: {', '.join(table.index)})")
        return list(table.index).index(column) + 1
    if re.fullmatch(r"@\d+", column) and 2 <= int(column[1:]) <= len(table.columns) + 1:
        column = table.columns[int(column[1:]) - 2]  # @1 is the first column, the index
    if column not in table.columns:
        raise FigureError(f"{ref}: no column {column!r} (columns: {', '.join(table.columns)})")
    mean = re.fullmatch(r"mean\((.+)\)", head)
    if mean:
        keep = pd.Series(True, index=range(len(table)))
        flat = table.reset_index()
        for condition in mean.group(1).split(","):
            name, _, wanted = condition.partition("=")
            if name not in flat.columns:
                raise FigureError(f"{ref}: no column {name!r} to select rows by")
            keep &= flat[name].astype(str) == wanted
        if not keep.any():
            raise FigureError(f"{ref}: no row has {mean.group(1)}")
        return flat.loc[keep.to_numpy(), column].mean()
    many = re.fullmatch(r"(min|max)\((.+)\)", head)
    rows = many.group(2).split(",") if many else [head]
    missing = [r for r in rows if r not in table.index]
    if missing:
        raise FigureError(f"{ref}: no row {missing[0]!r} in the table's first column")
    cells = table.loc[rows, column]
    return (cells.min() if many.group(1) == "min" else cells.max()) if many else cells.iloc[0]


def markdown_tables(text: str) -> list[pd.DataFrame]:
    """The pipe tables of a Markdown text, each indexed by its first column (backticks
    stripped), numbers as numbers."""
    tables, rows = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            rows.append([c.strip().strip("`").strip() for c in line.strip().strip("|").split("|")])
            continue
        if len(rows) > 2 and set("".join(rows[1])) <= set("-: "):
            frame = pd.DataFrame(rows[2:], columns=rows[0])
            frame = frame.set_index(rows[0][0])
            for name in frame.columns:
                numbers = pd.to_numeric(frame[name].str.replace(",", ""), errors="coerce")
                if numbers.notna().all():
                    frame[name] = numbers
            tables.append(frame)
        rows = []
    return tables


def _markdown_value(tables: list[pd.DataFrame], selector: str, *, ref: str):
    why = None
    for table in tables:
        try:
            return _csv_value(table, selector, ref=ref)
        except FigureError as error:
            why = why or error
    raise why or FigureError(f"{ref}: the file holds no table")


def _json_value(data, selector: str, *, ref: str):
    keys = selector.split("/")
    for i, key in enumerate(keys):
        many = re.fullmatch(r"(min|max)\((.+)\)", key)
        if many and isinstance(data, dict):
            names = list(data) if many.group(2) == "*" else many.group(2).split(",")
            rest = "/".join(keys[i + 1 :])
            found = [_json_value(data[n], rest, ref=ref) if rest else data[n] for n in names]
            return min(found) if many.group(1) == "min" else max(found)
        try:
            data = data[int(key)] if isinstance(data, list) else data[key]
        except (KeyError, IndexError, ValueError):
            raise FigureError(f"{ref}: no key {key!r}") from None
    return data


def value(ref: str, root: Path = ROOT) -> str:
    """The text a figure reference ``PATH#SELECTOR[:FORMAT]`` renders to, from its table."""
    path, hash_, rest = ref.partition("#")
    selector, _, spec = rest.partition(":")
    if not hash_ or not selector:
        raise FigureError(f"{ref}: a reference is PATH#SELECTOR[:FORMAT]")
    file = root / path
    if not file.is_file():
        raise FigureError(f"{ref}: no table {path}")
    if file.suffix == ".json":
        read = partial(_json_value, json.loads(file.read_text(encoding="utf-8")), ref=ref)
    elif file.suffix == ".csv":
        table = pd.read_csv(file, index_col=0)
        table.index = table.index.astype(str)
        read = partial(_csv_value, table, ref=ref)
    elif file.suffix == ".md":
        read = partial(_markdown_value, markdown_tables(file.read_text(encoding="utf-8")), ref=ref)
    else:
        raise FigureError(f"{ref}: a table is a .csv, .json or .md file")
    first, minus, second = selector.partition("~")
    found = read(first) - read(second) if minus else read(first)
    if hasattr(found, "item"):  # a numpy scalar
        found = found.item()
    if spec == "th":
        return _ordinal(int(found))
    if spec == "code":
        return f"`{found}`"
    return format(found, spec) if spec else str(found)


def table(ref: str, root: Path = ROOT) -> str:
    """The Markdown table a table reference ``PATH#COLUMN=Label;...`` renders to."""
    path, hash_, rest = ref.partition("#")
    file = root / path
    if not hash_ or not rest:
        raise FigureError(f"{ref}: a table reference is PATH#COLUMN=Label;COLUMN=Label")
    if not file.is_file():
        raise FigureError(f"{ref}: no table {path}")
    wanted = dict(part.partition("=")[::2] for part in rest.split(";"))
    if file.suffix == ".md":
        tables = markdown_tables(file.read_text(encoding="utf-8"))
    else:
        tables = [pd.read_csv(file, index_col=0)]
    source = next((t for t in tables if set(wanted) <= set(t.columns)), None)
    if source is None:
        raise FigureError(f"{ref}: no table in {path} has the columns {', '.join(wanted)}")
    groups: dict[tuple, list[str]] = {}
    for name, row in source[list(wanted)].astype(str).iterrows():
        groups.setdefault(tuple(row), []).append(f"`{name}`")
    lines = [
        "| "
        + " | ".join([source.index.name or "", *(label or c for c, label in wanted.items())])
        + " |",
        "|" + "---|" * (len(wanted) + 1),
    ]
    lines += [f"| {', '.join(names)} | " + " | ".join(key) + " |" for key, names in groups.items()]
    return "\n".join(lines) + "\n"


def render(text: str, root: Path = ROOT) -> str:
    """``text`` with every marked figure and table rewritten from its source."""
    text = TABLE.sub(
        lambda m: f"<!-- table {m['ref']} -->\n{table(m['ref'], root)}<!-- /table -->", text
    )
    return BLOCK.sub(
        lambda m: f"<!-- figure {m['ref']} -->{value(m['ref'], root)}<!-- /figure -->", text
    )


def documents(root: Path = ROOT) -> list[Path]:
    """The files whose figures this script keeps: :data:`DOCUMENTS` under ``root``."""
    return sorted({p for pattern in DOCUMENTS for p in root.glob(pattern) if p.is_file()})


def disagreements(paths: Iterable[Path], root: Path = ROOT) -> list[str]:
    """``path:line: ...`` for every marked figure whose text is not its table's value."""
    found = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        marked = [(m, value) for m in BLOCK.finditer(text)]
        marked += [(m, table) for m in TABLE.finditer(text)]
        for m, render_one in sorted(marked, key=lambda pair: pair[0].start()):
            line = text.count("\n", 0, m.start()) + 1
            where = f"{path.relative_to(root).as_posix()}:{line}"
            try:
                want = render_one(m["ref"], root)
            except FigureError as why:
                found.append(f"{where}: {why}")
                continue
            if m["text"] != want:
                shown = (m["text"], want) if render_one is value else ("its body", "another")
                found.append(f"{where}: {m['ref']} says {shown[0]!r}, the table {shown[1]!r}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 if a figure disagrees"
    )
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository root")
    args = parser.parse_args(argv)
    paths = documents(args.root)
    if args.check:
        wrong = disagreements(paths, args.root)
        print("\n".join(wrong) or f"{len(paths)} files: every figure is its table's")
        return 1 if wrong else 0
    for path in paths:
        text = path.read_text(encoding="utf-8")
        new = render(text, args.root)
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"rewrote {path.relative_to(args.root).as_posix()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
