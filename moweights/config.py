"""Reading and validating a run configuration (TOML, or the JSON a run writes back).

The keys, their types and defaults are defined once in :mod:`moweights.schema`; this
module adds the checks that need the ranker registry or the file system, and reports
every problem at once, each naming the file and the key and what would be valid.

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
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import rankers
from moweights import schema
from rankers.exceptions import ConfigError, MoweightsError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = [
    "AGGREGATIONS",
    "RankerSpec",
    "RunConfig",
    "Settings",
    "apply_overrides",
    "load_config",
    "parse_config",
]

AGGREGATIONS = schema.AGGREGATIONS
_TABLE_SUFFIXES = (".csv", ".tsv", ".tab", ".parquet")


class Settings(Mapping):
    """A validated config section: read-only, keys as attributes (``cfg.run.n_jobs``)."""

    def __init__(self, values: Mapping[str, Any]):
        self._values = dict(values)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Settings({self._values!r})"

    def to_dict(self) -> dict:
        """Plain nested dict without unset (None) values, as a config file holds it."""
        out = {}
        for key, value in self._values.items():
            if isinstance(value, Settings):
                value = value.to_dict()
            elif isinstance(value, Path):
                value = str(value)
            elif isinstance(value, tuple):
                value = list(value)
            if value is not None:
                out[key] = value
        return out


def _settings(section: schema.Section, values: dict) -> Settings:
    values = dict(values)
    for sub in section.sections:
        values[sub.name] = _settings(sub, values[sub.name])
    return Settings(values)


@dataclass(frozen=True)
class RankerSpec:
    """One ranker of a run: registry name, parameters and the label used in outputs."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)
    label: str = ""


@dataclass(frozen=True)
class RunConfig:
    """A validated run configuration; sections as :class:`Settings`.

    ``data`` holds the single data set (``path`` resolved against the config's folder);
    ``sites`` the sites of a federated run (from ``[[sites]]``; empty otherwise — a
    ``[data].site_column`` run finds its sites in the data).
    """

    data: Settings
    sites: tuple[Settings, ...]
    rankers: tuple[RankerSpec, ...]
    aggregation: Settings
    evaluation: Settings
    output: Settings
    run: Settings
    source: str = "<config>"

    @property
    def is_site_run(self) -> bool:
        """Whether rankings are made per site (``[[sites]]`` or ``[data].site_column``)."""
        return bool(self.sites) or self.data.site_column is not None

    @property
    def random_state(self) -> int:
        return self.run.random_state

    @property
    def n_jobs(self) -> int | None:
        return self.run.n_jobs

    @property
    def output_dir(self) -> Path:
        return Path(self.output.dir)

    def describe_data(self) -> str:
        """A short name of the data (for titles and summaries)."""
        if self.sites:
            return f"{len(self.sites)} sites: " + ", ".join(s.name for s in self.sites)
        name = self.data.builtin or Path(self.data.path).name
        return f"{name} by {self.data.site_column}" if self.data.site_column else name

    def to_dict(self) -> dict:
        """The resolved configuration (defaults filled, paths absolute) as plain data.

        ``parse_config(config.to_dict())`` gives the same configuration back.
        """
        out = {"data": self.data.to_dict()} if not self.sites else {}
        if self.sites:
            out["sites"] = [s.to_dict() for s in self.sites]
        out["rankers"] = [
            {"name": r.name, "label": r.label, "params": _plain(r.params)} for r in self.rankers
        ]
        for name in ("aggregation", "evaluation", "output", "run"):
            out[name] = getattr(self, name).to_dict()
        return out


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


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
    try:
        return json.loads(text) if kind == "JSON" else tomllib.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        message = " ".join(str(exc).split())
        raise ConfigError([f"{path}: not valid {kind}: {message}"], path=path) from None


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


def parse_config(raw: dict, source: str = "<config>", base_dir=None) -> RunConfig:
    """Validate a configuration given as a dict (the parsed TOML); see :func:`load_config`."""
    p = schema.Problems(source)
    base_dir = Path(base_dir) if base_dir is not None else Path.cwd()
    values = schema.check(raw, p)
    sections = {s.name: s for s in schema.SCHEMA.sections}
    given = raw.get("data") if isinstance(raw, dict) and isinstance(raw.get("data"), dict) else {}
    data = _check_data(p, values["data"], values["sites"], base_dir, given)
    sites = _check_sites(p, values["sites"] or [], data, base_dir)
    specs = _check_rankers(p, values["rankers"] or [], data, sites)
    _check_aggregation(p, values["aggregation"], specs, bool(sites or data["site_column"]), sites)
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
        evaluation=_settings(sections["evaluation"], values["evaluation"]),
        output=Settings(values["output"]),
        run=Settings(values["run"]),
        source=source,
    )


def _resolve(p, where: str, path: str | None, base_dir: Path) -> Path | None:
    if path is None:
        return None
    resolved = Path(path).expanduser()
    resolved = resolved if resolved.is_absolute() else (base_dir / resolved).resolve()
    if not resolved.is_file():
        p.add(where, f"file not found: {resolved}")
    return resolved


def _check_data(p, data: dict, sites, base_dir: Path, given: dict) -> dict:
    data = dict(data)
    source = [k for k in ("builtin", "path") if k in given]  # even if its value was bad
    if sites is not None and source:
        p.add("[[sites]]", "give the data either in [data] or as [[sites]] blocks, not both")
    elif sites is None and not source:
        p.add("[data]", "missing: give builtin = NAME or path = FILE (or [[sites]] blocks)")
    data["path"] = _resolve(p, "[data].path", data["path"], base_dir)
    _check_columns(p, "[data]", data["path"], data, data["drop"])
    if data["builtin"] is not None:
        for key in ("target", "site_column"):
            if data[key] is not None:
                p.add(
                    f"[data].{key}",
                    "built-in data sets bring their own target and no "
                    "site column; use a data file (path = ...)",
                )
    if sites is not None and data["n_samples"] is not None:
        p.add("[data].n_samples", "applies to [data] builtin/path, not to [[sites]]")
    return data


def _check_columns(p, where: str, path: Path | None, entry: dict, drop) -> None:
    """The data file's header has the columns the config names (the data are not read)."""
    if path is None or not path.is_file():
        return
    from moweights.datasets import read_columns

    try:
        columns = read_columns(path)
    except MoweightsError as exc:
        p.add(f"{where}.path", str(exc))
        return
    if path.suffix.lower() == ".mat":
        return  # its target is its Y matrix; its columns are named x0, x1, ...
    shown = ", ".join(map(repr, columns[:10])) + (", ..." if len(columns) > 10 else "")
    for key in ("target", "site_column"):
        name = entry.get(key)
        if name is not None and name not in columns:
            p.add(
                f"{where}.{key}", f"column {name!r} is not in {path.name}; its columns are {shown}"
            )
    missing = [c for c in drop or () if c not in columns]
    if missing:
        p.add("[data].drop", f"columns {missing} are not in {path.name}; its columns are {shown}")


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
        needs_y = getattr(est, "requires_y", False)
        if getattr(est, "name", None) == "mo_weighting":
            from moweights.weighting import parse_objectives

            try:  # a bad objective would otherwise surface only when the ranker is fitted
                parse_objectives(est.objectives)
                needs_y = est._needs_labels()
            except MoweightsError as exc:
                p.add(f"{where}.params.objectives", str(exc))
        if needs_y and has_target is False:
            p.add(
                f"{where}.name",
                f"ranker {name!r} needs a target but the data has none; set [data].target",
            )
        label = entry["label"] if entry["label"] is not None else name
        if not label:
            p.add(f"{where}.label", "must be a non-empty string")
            label = name
        if label in labels or label == "random":
            taken = "reserved for the baseline" if label == "random" else "used twice"
            p.add(f"{where}.label", f"label {label!r} is {taken}; give each ranker its own label")
        labels.add(label)
        specs.append(RankerSpec(name=name, params=params, label=label))
    return specs


def _check_aggregation(p, agg: dict, specs: list[RankerSpec], site_run: bool, sites) -> None:
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
        missing = [label for label in labels if label not in weights]
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
