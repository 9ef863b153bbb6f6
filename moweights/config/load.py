"""Reading a run configuration: TOML, or the JSON a run writes back, and ``--set`` overrides.

Example
-------
.. code-block:: toml

    [data]
    builtin = "wine"            # or: path = "data.csv" and target = "label"

    [[rankers]]
    name = "laplacian"
    params = { n_neighbors = 5 }

    [aggregation]
    methods = ["mean_rank", "generic"]

    [evaluation.topk]
    metric = "mse"

    [run]
    random_state = 0

``moweights schema`` writes the full JSON Schema; ``moweights init`` a commented example.
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from moweights.config.check import parse_config
from moweights.config.settings import RunConfig
from moweights.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["apply_overrides", "load_config"]


def _read(path: Path) -> dict:
    kind = "JSON" if path.suffix.lower() == ".json" else "TOML"
    if path.is_dir():
        raise ConfigError([f"{path}: is a folder, not a config file"], path=path)
    if not path.is_file():
        raise ConfigError([f"{path}: config file not found"], path=path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise ConfigError([f"{path}: cannot read the config file: {why}"], path=path) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            [f"{path}: not a {kind} text file (undecodable byte at position {exc.start})"],
            path=path,
        ) from None
    depth, where = _nesting(text)
    if depth > MAX_NESTING:
        raise ConfigError(
            [
                f"{path}: arrays or tables nested more than {MAX_NESTING} deep (at "
                f"character {where}); a config nests a few levels: flatten the value"
            ],
            path=path,
        )
    try:
        return json.loads(text) if kind == "JSON" else tomllib.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        message = " ".join(str(exc).split())
        raise ConfigError([f"{path}: not valid {kind}: {message}"], path=path) from None
    except RecursionError:  # nesting the scan above did not see: still the file's fault
        raise ConfigError(
            [f"{path}: nested too deep to read; flatten its arrays and tables"], path=path
        ) from None


#: the deepest nesting of arrays and inline tables a config file may have
MAX_NESTING = 64


def _nesting(text: str) -> tuple[int, int]:
    """The deepest nesting of ``[``/``{`` outside strings and comments, and where it is
    first reached: checked before parsing, since the parsers recurse (a file of a
    hundred thousand ``[`` took a minute to end in a RecursionError). Scans TOML and
    JSON alike; it stops as soon as the nesting passes :data:`MAX_NESTING`."""
    depth = deepest = where = 0
    quote = None  # the quote character of the string the scan is in
    comment = escaped = False
    for i, char in enumerate(text):
        if comment:
            comment = char != "\n"
        elif quote is not None:
            if escaped:
                escaped = False
            elif char == "\\" and quote == '"':
                escaped = True
            elif char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char == "#":
            comment = True
        elif char in "[{":
            depth += 1
            if depth > deepest:
                deepest, where = depth, i
                if deepest > MAX_NESTING:
                    break
        elif char in "]}":
            depth = max(depth - 1, 0)
    return deepest, where


def load_config(path, overrides: Sequence[str] = ()) -> RunConfig:
    """Read and validate a run configuration file (TOML; JSON as a run writes it back).

    Relative data paths are resolved against the config file's folder; the output
    folder is relative to the working directory.

    Parameters
    ----------
    path : str or Path
    overrides : sequence of str
        ``"section.key=value"`` settings applied before validation (see
        :func:`apply_overrides`).

    Raises
    ------
    ConfigError
        Listing every problem, each with the file and the key.
    """
    path = Path(path)
    raw = apply_overrides(_read(path), overrides, source=str(path))
    return parse_config(raw, source=str(path), base_dir=path.parent)


def apply_overrides(raw: dict, overrides: Sequence[str], source: str = "<config>") -> dict:
    """A copy of ``raw`` with ``"dotted.key=value"`` settings applied.

    The key walks tables by name and arrays by index (``rankers.0.params.n_gen=5``);
    the value is read as a TOML value (``3``, ``true``, ``[1, 2]``, ``"text"``) and
    otherwise kept as a plain string (``data.builtin=wine``).
    """
    raw = copy.deepcopy(raw)
    problems = []
    for item in overrides:
        key, sep, text = item.partition("=")
        parts = key.strip().split(".")
        if not sep or not all(parts):
            problems.append(f"--set {item!r}: write KEY=VALUE, e.g. evaluation.cv=5")
            continue
        try:
            value = tomllib.loads(f"v = {text.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            value = text.strip()
        node: Any = raw
        try:
            for i, part in enumerate(parts[:-1]):
                if isinstance(node, list):
                    node = node[int(part)]
                else:
                    nxt = parts[i + 1]
                    node = node.setdefault(part, [] if nxt.isdigit() else {})
            if isinstance(node, list):
                node[int(parts[-1])] = value
            else:
                node[parts[-1]] = value
        except (ValueError, IndexError, TypeError, AttributeError):
            problems.append(f"--set {item!r}: {key} does not name a key of {source}")
    if problems:
        raise ConfigError(problems, path=source)
    return raw
