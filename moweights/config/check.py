"""Checking a configuration, reporting every problem at once.

Two passes: the type check against :data:`~moweights.config.schema.SCHEMA` (:func:`check`:
unknown keys, bad values, defaults filled in), then the checks that need the ranker
registry or the file system (:func:`parse_config`: ranker names and parameters, data
files and their columns, targets, labels). Each problem names the file and the key and
says what would be valid.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import rankers
from moweights.config.schema import SCHEMA, Key, Section
from moweights.config.settings import RankerSpec, RunConfig, Settings
from moweights.errors import ConfigError
from rankers.exceptions import MoweightsError

__all__ = ["Problems", "check", "parse_config"]

_TABLE_SUFFIXES = (".csv", ".tsv", ".tab", ".parquet", ".h5ad")  # no target unless named


class Problems:
    """Problems found in one config, each with the file and the key."""

    def __init__(self, source: str):
        self.source = source
        self.items: list[str] = []

    def add(self, where: str, message: str) -> None:
        self.items.append(f"{self.source}: {where}: {message}" if where else message)


def _where(path: str, key: str | None = None) -> str:
    return f"{path}.{key}" if key and path else (key or path)


def _unknown(problems: Problems, where: str, given, allowed) -> None:
    import difflib

    for key in sorted(set(given) - set(allowed), key=str):
        close = difflib.get_close_matches(str(key), sorted(allowed), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        problems.add(
            _where(where, str(key)), f"unknown key{hint} (valid: {', '.join(sorted(allowed))})"
        )


def _hint(key: Key, value: Any) -> str:
    import difflib

    choices = [str(c) for t in key.types for c in t.choices]
    close = difflib.get_close_matches(value, choices, n=1) if isinstance(value, str) else []
    return (f"did you mean {close[0]!r}? " if close else "") + f"expected {key.describe()}"


def _check_table(section: Section, table: dict, label: str, problems: Problems) -> dict:
    """Type-check one table of ``section``; defaults fill what is missing."""
    names = [k.name for k in section.keys] + [s.name for s in section.sections]
    _unknown(problems, label, table, names)
    out: dict[str, Any] = {}
    for key in section.keys:
        if key.name not in table:
            if key.required:
                problems.add(_where(label, key.name), f"missing; give {key.describe()}")
            out[key.name] = key.default if key.has_default else None
            continue
        value = table[key.name]
        if not any(t.accepts(value) for t in key.types):
            problems.add(_where(label, key.name), f"invalid value {value!r}; {_hint(key, value)}")
            value = key.default if key.has_default else None
        out[key.name] = value
    given = [k for k in section.exclusive if k in table]
    if len(given) > 1:
        problems.add(label, f"give one of {' and '.join(given)}, not both")
    if section.one_of and sum(k in table for k in section.one_of) != 1:
        problems.add(label, f"give exactly one of {', '.join(section.one_of)}")
    for sub in section.sections:
        out[sub.name] = _check_section(
            sub, table.get(sub.name), f"{label[:-1]}.{sub.name}]", problems
        )
    return out


def _check_section(section: Section, value: Any, label: str, problems: Problems):
    if section.many and isinstance(value, list):  # [[data]]: one block per data set
        label = f"[[{section.name}]]"
        if not value:
            problems.add(label, f"empty: add at least one {label} block")
        if not all(isinstance(v, dict) for v in value):
            problems.add(label, f"must be an array of tables ({label} blocks)")
            return []
        return [_check_table(section, v, f"{label}[{i}]", problems) for i, v in enumerate(value)]
    if section.array:
        if value is None:
            if section.required:
                problems.add(label, f"missing: add at least one {label} block")
            return None
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            problems.add(label, f"must be an array of tables ({label} blocks)")
            return None
        if not value and section.required:
            problems.add(label, f"empty: add at least one {label} block")
        return [_check_table(section, v, f"{label}[{i}]", problems) for i, v in enumerate(value)]
    if value is None:
        return _check_table(section, {}, label, Problems(problems.source))
    if not isinstance(value, dict):
        problems.add(label, "must be a table")
        value = {}
    return _check_table(section, value, label, problems)


def check(raw: Any, problems: Problems) -> dict:
    """Type-check a parsed config against :data:`SCHEMA`, collecting every problem.

    Returns the config with defaults filled in: every section present (arrays as a
    list or None), every key present (None when it has no default and was not given).
    """
    if not isinstance(raw, dict):
        problems.add("", "a config must be a table of sections")
        raw = {}
    _unknown(problems, "", raw, [s.name for s in SCHEMA.sections])
    out = {}
    for section in SCHEMA.sections:
        label = f"[[{section.name}]]" if section.array else f"[{section.name}]"
        out[section.name] = _check_section(section, raw.get(section.name), label, problems)
    return out


def parse_config(raw: dict, source: str = "<config>", base_dir=None) -> RunConfig:
    """Validate a configuration given as a dict (the parsed TOML); see :func:`load_config`."""
    p = Problems(source)
    base_dir = Path(base_dir) if base_dir is not None else Path.cwd()
    values = check(raw, p)
    sections = {s.name: s for s in SCHEMA.sections}
    given = raw.get("data") if isinstance(raw, dict) else None
    data, datasets = _check_datasets(p, values["data"], values["sites"], base_dir, given)
    sites = _check_sites(p, values["sites"] or [], data, base_dir)
    specs = _check_rankers(p, values["rankers"] or [], data, sites or datasets)
    site_run = bool(sites or data["site_column"])
    _check_aggregation(p, values["aggregation"], specs, site_run, sites)
    _check_on_mismatch(p, given, site_run)
    _check_markers(p, values["markers"], site_run, _has_target(data, sites))
    _check_rest(p, values)
    if p.items:
        raise ConfigError(p.items, path=source)
    agg = dict(values["aggregation"])
    agg["methods"] = tuple(dict.fromkeys(agg["methods"]))
    return RunConfig(
        data=Settings(data),
        sites=tuple(Settings(s) for s in sites),
        rankers=tuple(specs),
        aggregation=Settings(agg),
        evaluation=Settings.from_section(sections["evaluation"], values["evaluation"]),
        output=Settings(values["output"]),
        run=Settings(values["run"]),
        markers=Settings(values["markers"]),
        source=source,
        datasets=tuple(Settings(d) for d in datasets),
    )


def _resolve(p, where: str, path: str | None, base_dir: Path) -> Path | None:
    if path is None:
        return None
    resolved = Path(path).expanduser()
    resolved = resolved if resolved.is_absolute() else (base_dir / resolved).resolve()
    from moweights.data import check_data_path

    try:
        check_data_path(resolved)
    except MoweightsError as exc:  # missing, a folder, a FIFO or a device
        p.add(where, str(exc))
    return resolved


def dataset_name(data) -> str:
    """A data set's name in outputs: its ``name``, else the built-in's, else the file's stem."""
    if data.get("name"):
        return str(data["name"])
    if data.get("builtin") is not None:
        return str(data["builtin"])
    return Path(data["path"]).name.split(".")[0] if data.get("path") is not None else "data"


def _check_datasets(p, data, sites, base_dir: Path, given) -> tuple[dict, list[dict]]:
    """``[data]`` (one data set), ``[[data]]`` blocks or ``[data].paths`` (a study).

    Returns the data set of a single run (a study's first) and a study's data sets (empty
    unless there are at least two).
    """
    if isinstance(data, list):  # [[data]] blocks
        entries = []
        for i, entry in enumerate(data):
            where = f"[[data]][{i}]"
            raw = given[i] if isinstance(given, list) and isinstance(given[i], dict) else {}
            for key, why in (
                (
                    "paths",
                    "give one path = FILE per [[data]] block (paths = GLOB goes in a "
                    "single [data] table)",
                ),
                ("site_column", "a study ranks whole data sets; a site run takes one [data]"),
            ):
                if entry[key] is not None:
                    p.add(f"{where}.{key}", why)
            entries.append(_check_data(p, entry, None, base_dir, raw, where))
        if sites is not None and data:
            p.add("[[sites]]", "a study ([[data]] blocks) has no [[sites]]; give one or the other")
    elif data["paths"] is not None:
        entries = _glob_paths(p, data, base_dir, given if isinstance(given, dict) else {})
        if sites is not None:
            p.add(
                "[[sites]]",
                "[data].paths makes a study, which has no [[sites]]; give one or the other",
            )
    else:
        return _check_data(p, data, sites, base_dir, given if isinstance(given, dict) else {}), []
    _unique_names(p, entries, "[data].paths" if isinstance(data, dict) else "[[data]]")
    if not entries:  # reported above; the rest of the checks need a data table
        section = next(s for s in SCHEMA.sections if s.name == "data")
        return {k.name: k.default if k.has_default else None for k in section.keys}, []
    if len(entries) == 1:  # one data set: the single run it always was
        entries[0]["name"] = data[0]["name"] if isinstance(data, list) else None
        return entries[0], []
    return entries[0], entries


def _glob_paths(p, data: dict, base_dir: Path, given: dict) -> list[dict]:
    pattern = Path(data["paths"]).expanduser()
    pattern = pattern if pattern.is_absolute() else base_dir / pattern
    anchor = Path(pattern.anchor)
    files = sorted(f for f in anchor.glob(str(pattern.relative_to(anchor))) if f.is_file())
    if not files:
        p.add("[data].paths", f"no file matches {str(pattern)!r}")
        return []
    if data["site_column"] is not None:
        p.add(
            "[data].site_column",
            "a study ([data].paths) ranks whole data sets; a site run takes one data file",
        )
    if data["name"] is not None:
        p.add("[data].name", "names one data set; [data].paths names each by its file's stem")
    entries = []
    for f in files:
        entry = dict(data, paths=None, path=str(f), name=None)
        entry = _check_data(
            p, entry, None, base_dir, {**given, "path": str(f)}, f"[data].paths ({f.name})"
        )
        entry["name"] = dataset_name(entry)
        entries.append(entry)
    return entries


#: a data set's name is its sub-folder's: letters, digits, _ . - (never "..", never a path)
_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?")


def _unique_names(p, entries: list[dict], where: str) -> None:
    seen: dict[str, int] = {}
    for i, entry in enumerate(entries):
        entry["name"] = dataset_name(entry)
        if not _NAME.fullmatch(entry["name"]):
            p.add(
                f"{where}[{i}].name" if where == "[[data]]" else where,
                f"data set name {entry['name']!r} names its folder: use letters, digits, "
                "_ . and - (starting and ending with a letter or digit)",
            )
        if entry["name"] in seen:
            at = f"{where}[{i}].name" if where == "[[data]]" else where
            p.add(
                at,
                f"data set name {entry['name']!r} is used twice (entries {seen[entry['name']]} "
                f"and {i}); give each data set its own name",
            )
        elif entry["name"] == "study":
            p.add(
                f"{where}[{i}].name" if where == "[[data]]" else where,
                "data set name 'study' is reserved for the study's own tables",
            )
        seen.setdefault(entry["name"], i)


def _check_data(p, data: dict, sites, base_dir: Path, given: dict, where: str = "[data]") -> dict:
    data = dict(data)
    source = [k for k in ("builtin", "path", "paths") if k in given]  # even if its value was bad
    if sites is not None and source:
        p.add("[[sites]]", "give the data either in [data] or as [[sites]] blocks, not both")
    elif sites is None and not source:
        p.add(where, "missing: give builtin = NAME or path = FILE (or [[sites]] blocks)")
    data["path"] = _resolve(p, f"{where}.path", data["path"], base_dir)
    if data["transpose"]:
        if data["path"] is None:
            p.add(f"{where}.transpose", "applies to a data file (path = ...)")
        elif data["site_column"] is not None:
            p.add(f"{where}.site_column", "a transposed table has no site column")
    else:  # a transposed file's header names the samples, not the features
        _check_columns(p, where, data["path"], data, data["drop"])
    if data["builtin"] is not None:
        for key in ("target", "site_column"):
            if data[key] is not None:
                p.add(
                    f"{where}.{key}",
                    "built-in data sets bring their own target and no "
                    "site column; use a data file (path = ...)",
                )
    if sites is not None and data["n_samples"] is not None:
        p.add(f"{where}.n_samples", "applies to [data] builtin/path, not to [[sites]]")
    return data


def _check_columns(p, where: str, path: Path | None, entry: dict, drop) -> None:
    """The data file's header has the columns the config names (the data are not read)."""
    if path is None or not path.is_file():
        return
    from moweights.data import read_columns

    try:
        columns = read_columns(path)
    except MoweightsError as exc:
        p.add(f"{where}.path", str(exc))
        return
    if path.suffix.lower() == ".mat":
        return  # its target is its Y matrix; its columns are named x0, x1, ...
    shown = ", ".join(map(repr, columns[:10])) + (", ..." if len(columns) > 10 else "")
    other = _other_separator(path, columns)
    for key in ("target", "site_column"):
        name = entry.get(key)
        if name is not None and name not in columns:
            close = None if other else _close_column(name, columns)
            hint = f"did you mean {close!r}? " if close else ""
            if other:
                hint = (
                    f"its header reads as one column {columns[0][:60]!r}: the file seems "
                    f"separated by {other!r}, and a {path.suffix.lower() or 'table'} file is "
                    "read with ','; re-save it comma-separated (or tab-separated as .tsv). "
                )
                p.add(f"{where}.{key}", f"column {name!r} is not in {path.name}; {hint}")
                continue
            p.add(
                f"{where}.{key}",
                f"column {name!r} is not in {path.name}; {hint}its columns are {shown}",
            )
    missing = [c for c in drop or () if c not in columns]
    if missing:
        at = "[data].drop" if where.startswith("[[sites]]") else f"{where}.drop"
        p.add(at, f"columns {missing} are not in {path.name}; its columns are {shown}")


def _other_separator(path: Path, columns: list[str]) -> str | None:
    """The separator a csv/tsv file seems to use instead of its own (``;``, ``|``, a tab
    in a .csv, ``,`` in a .tsv), when its header reads as a single column holding it."""
    if len(columns) != 1 or not path.name.lower().endswith((".csv", ".tsv", ".csv.gz", ".tsv.gz")):
        return None
    own = "\t" if ".tsv" in path.name.lower() else ","
    for sep in (";", "\t", ",", "|"):
        if sep != own and sep in str(columns[0]):
            return sep
    return None


#: the longest ranker label (a 5,000-character one made a drawing take 5 GB and 149 s)
MAX_LABEL = 64


def _close_column(name: str, columns: list[str]) -> str | None:
    """The column the user most likely meant: the same name in other case or spacing,
    else the closest spelling (difflib), else None."""
    import difflib

    def folded(text: str) -> str:
        return re.sub(r"[\s_.-]+", "", str(text)).casefold()

    same = [c for c in columns if folded(c) == folded(name)]
    if same:
        return same[0]
    close = difflib.get_close_matches(name, [str(c) for c in columns], n=1, cutoff=0.6)
    return close[0] if close else None


def _check_on_mismatch(p, given, site_run: bool) -> None:
    """``[data].on_mismatch`` says what to do with sites: "drop" outside a site run would
    be silently ignored (the default "raise" is written into every config.json)."""
    if site_run:
        return
    entries = given if isinstance(given, list) else [given]
    for i, entry in enumerate(entries):
        if isinstance(entry, dict) and entry.get("on_mismatch", "raise") != "raise":
            at = f"[[data]][{i}]" if isinstance(given, list) else "[data]"
            p.add(
                f"{at}.on_mismatch",
                "applies to a site run ([[sites]] blocks or [data].site_column), whose sites "
                "may hold different columns; this config ranks whole data sets: remove it",
            )


def _check_markers(p, markers: dict, site_run: bool, has_target: bool | None) -> None:
    """``[markers]``: a class target of one data set, and members that rank classes."""
    if not markers["enabled"]:
        return
    if site_run:
        p.add("[markers].enabled", "markers are computed on one data set's classes; a site "
              "run ranks each site apart: set enabled = false")  # fmt: skip
    if has_target is False:  # None: only loading the data will tell (a .mat file)
        p.add("[markers].enabled", "markers compare each class with the rest and need a "
              "class target: set [data].target")  # fmt: skip
    for name in markers["rankers"] or []:
        if name == "wilcoxon":
            continue
        try:
            kind = rankers.get_class(name).target_kind
        except (rankers.UnknownRankerError, rankers.PluginLoadError) as exc:
            p.add("[markers].rankers", str(exc))
            continue
        if kind not in ("classification", "both"):
            p.add("[markers].rankers", f"{name!r} ranks for a {kind} target; a marker "
                  "member is fitted to 'class vs rest': name class rankers (t_test, "
                  "anova_f, ...) or 'wilcoxon'")  # fmt: skip


def _check_sites(p, sites: list[dict], data: dict, base_dir: Path) -> list[dict]:
    seen: set[str] = set()
    out = []
    for i, site in enumerate(sites):
        where = f"[[sites]][{i}]"
        site = dict(site)
        if site["name"] in seen:
            p.add(f"{where}.name", f"site name {site['name']!r} is used twice")
        seen.add(site["name"])
        site["path"] = _resolve(p, f"{where}.path", site["path"], base_dir)
        if site["builtin"] is not None and site["target"] is not None:
            p.add(f"{where}.target", "built-in data sets bring their own target")
        if site["path"] is not None and site["target"] is None:
            site["target"] = data["target"]  # [data].target is every site's default
        _check_columns(p, where, site["path"], site, data["drop"])
        rows = site["rows"]
        if rows is not None and rows[0] >= rows[1]:
            p.add(f"{where}.rows", f"[start, stop) needs start < stop; got {rows}")
        out.append(site)
    return out


def _has_target(data: dict, sites: list[dict]) -> bool | None:
    """Whether the data has a target: True, False, or None when only loading will tell."""
    entries = sites or [data]
    known = []
    for entry in entries:
        if entry.get("builtin") is not None or entry.get("target") is not None:
            known.append(True)
        elif entry.get("path") is not None and Path(entry["path"]).suffix.lower() == ".mat":
            return None  # a .mat file's target is its Y matrix, when present
        elif entry.get("path") is not None:
            suffixes = [s.lower() for s in Path(entry["path"]).suffixes]
            known.append(False if any(s in _TABLE_SUFFIXES for s in suffixes) else None)
    if not known or None in known:
        return None
    return all(known)


def _make(name: str, params: dict):
    """The ranker from the registry; TOML arrays are retried as tuples where lists fail."""
    try:
        return rankers.get(name, **params)
    except rankers.InvalidParameterError as first:
        lists = [k for k, v in params.items() if isinstance(v, list)]
        if not lists:
            raise
        as_tuples = {k: tuple(v) if k in lists else v for k, v in params.items()}
        try:
            est = rankers.get(name, **as_tuples)
        except MoweightsError:
            raise first from None
        params.update(as_tuples)
        return est


def _check_rankers(p, entries: list[dict], data: dict, sites: list[dict]) -> list[RankerSpec]:
    specs, labels = [], set()
    has_target = _has_target(data, sites)
    for i, entry in enumerate(entries):
        where = f"[[rankers]][{i}]"
        name, params = entry["name"], dict(entry["params"] or {})
        if name is None:
            continue  # reported by the schema check
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = _make(name, params)
        except rankers.UnknownRankerError as exc:
            p.add(f"{where}.name", str(exc))
            continue
        except rankers.PluginLoadError as exc:
            p.add(f"{where}.name", str(exc))
            continue
        except MoweightsError as exc:
            p.add(f"{where}.params", str(exc) or f"invalid parameters {params!r}")
            continue
        # what the ranker needs comes from its tags (they may depend on its parameters:
        # the NSGA-II weighting with only the entropy criterion needs no target)
        needs_y = rankers.ranker_tags(est).requires_y
        if needs_y and has_target is False:
            p.add(
                f"{where}.name",
                f"ranker {name!r} needs a target but the data has none; set [data].target",
            )
        label = entry["label"] if entry["label"] is not None else name
        if not label:
            p.add(f"{where}.label", "must be a non-empty string")
            label = name
        elif len(label) > MAX_LABEL:  # it names table columns, files and every plot entry
            p.add(
                f"{where}.label",
                f"label {label[:20]!r}... has {len(label)} characters; a label names the "
                f"ranker's columns, files and plot entries: give one of at most {MAX_LABEL}",
            )
            label = label[:MAX_LABEL]
        if label in labels or label == "random":
            taken = "reserved for the baseline" if label == "random" else "used twice"
            p.add(f"{where}.label", f"label {label!r} is {taken}; give each ranker its own label")
        labels.add(label)
        specs.append(RankerSpec(name=name, params=params, label=label))
    return specs


def _check_aggregation(p, agg: dict, specs: list[RankerSpec], site_run: bool, sites) -> None:
    if agg["bootstrap"] and site_run:
        p.add(
            "[aggregation].bootstrap",
            "bootstrap rank intervals resample one data set; a site run ranks every site "
            "on its own (set bootstrap = 0)",
        )
    members = agg["members"]
    if members is not None and specs:
        labels = [s.label for s in specs]
        unknown = [m for m in members if m not in labels]
        if unknown:
            p.add("[aggregation].members", f"unknown ranker label(s) {unknown}; valid: {labels}")
        twice = sorted({m for m in members if members.count(m) > 1})
        if twice:
            p.add("[aggregation].members", f"label(s) {twice} listed twice")
    weights = agg["weights"]
    if weights is not None and sites:
        unknown = sorted(set(weights) - {s["name"] for s in sites})
        if unknown:
            names = [s["name"] for s in sites]
            p.add("[aggregation].weights", f"unknown site(s) {unknown}; valid: {names}")
    if "weighted_mean_rank" in agg["methods"] and weights is None and not site_run:
        p.add(
            "[aggregation].weights",
            "weighted_mean_rank needs weights = { <ranker label> = <weight>, ... }",
        )
    if weights is not None and not site_run and specs:
        labels = [s.label for s in specs]
        unknown = sorted(set(weights) - set(labels))
        combined = labels if members is None else [lb for lb in labels if lb in members]
        missing = [label for label in combined if label not in weights]
        if unknown:
            p.add("[aggregation].weights", f"unknown ranker label(s) {unknown}; valid: {labels}")
        if missing:
            p.add("[aggregation].weights", f"no weight for ranker label(s) {missing}")


def _check_rest(p, values: dict) -> None:
    errors = values["evaluation"]["error_curves"]
    magnitude = [w for w in errors["weighting"] if "magnitude" in w]
    if magnitude and errors["n_random"] == 0:
        p.add(
            "[evaluation.error_curves].n_random",
            f"weighting {magnitude} needs the expected random curve; set n_random >= 1",
        )
    run = values["run"]
    if run["scheduler"] is not None and run["backend"] != "dask":
        p.add("[run].scheduler", "a scheduler address needs backend = 'dask'")
    if run["backend"] == "dask":
        try:
            import dask.distributed  # noqa: F401
        except ImportError:
            p.add("[run].backend", "'dask' needs dask.distributed: pip install 'moweights[dask]'")
