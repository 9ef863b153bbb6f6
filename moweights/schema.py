"""The config file's schema, written once as data.

Both the validation of a config (:func:`check`, used by :mod:`moweights.config`) and
the JSON Schema for editors (:func:`json_schema`, ``moweights schema``) derive from
:data:`SCHEMA`, so they cannot drift apart. Checks that need the registry or the file
system (ranker names and parameters, data files, labels) live in
:mod:`moweights.config`; the JSON Schema carries what JSON Schema can say, including
every built-in ranker's parameters.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from aggregation.compare import MEASURES
from aggregation.curves import METRICS
from aggregation.error_curves import WEIGHTINGS
from moweights.datasets import DATASETS

__all__ = [
    "AGGREGATIONS",
    "BACKENDS",
    "SCHEMA",
    "Key",
    "Problems",
    "Section",
    "Type",
    "check",
    "json_schema",
]

AGGREGATIONS = (
    "mean_rank",
    "median_rank",
    "borda",
    "vote",
    "weighted_mean_rank",
    "kemeny",
    "generic",
)
BACKENDS = ("loky", "threading", "multiprocessing", "dask")
AUTO = "auto"


@dataclass(frozen=True)
class Type:
    """One kind of value a key accepts (a key may accept several)."""

    kind: str  # string | integer | number | boolean | array | table
    choices: tuple = ()
    minimum: float | None = None
    maximum: float | None = None
    exclude: tuple = ()
    items: Type | None = None
    min_items: int | None = None
    max_items: int | None = None
    values: Type | None = None  # a table with free keys: the type of its values

    def accepts(self, value: Any) -> bool:
        kind = self.kind
        if kind == "boolean":
            return isinstance(value, bool)
        if isinstance(value, bool):
            return False
        if kind == "string":
            return isinstance(value, str) and (not self.choices or value in self.choices)
        if kind in ("integer", "number"):
            numeric = int if kind == "integer" else (int, float)
            if not isinstance(value, numeric) or not math.isfinite(value):
                return False
            return (
                (self.minimum is None or value >= self.minimum)
                and (self.maximum is None or value <= self.maximum)
                and value not in self.exclude
            )
        if kind == "array":
            return (
                isinstance(value, list)
                and (self.min_items is None or len(value) >= self.min_items)
                and (self.max_items is None or len(value) <= self.max_items)
                and (self.items is None or all(self.items.accepts(v) for v in value))
            )
        if kind == "table":
            return isinstance(value, dict) and (
                self.values is None or all(self.values.accepts(v) for v in value.values())
            )
        raise ValueError(f"unknown kind {kind!r}")  # a defect of SCHEMA itself

    def describe(self) -> str:
        if self.choices:
            if len(self.choices) == 1:
                return repr(self.choices[0])
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.kind in ("integer", "number"):
            text = "an integer" if self.kind == "integer" else "a number"
            bounds = []
            if self.minimum is not None:
                bounds.append(f">= {self.minimum:g}")
            if self.maximum is not None:
                bounds.append(f"<= {self.maximum:g}")
            bounds += [f"other than {v!r}" for v in self.exclude]
            return f"{text} {' and '.join(bounds)}".strip()
        if self.kind == "array":
            items = self.items
            if items is None:
                of = ""
            elif items.choices:
                of = " of values among " + ", ".join(repr(c) for c in items.choices)
            else:
                of = " of " + _plural(items.describe())
            if self.min_items is not None and self.min_items == self.max_items:
                return f"a list of {self.min_items}{of.removeprefix(' of')}"
            return f"a {'non-empty ' if self.min_items else ''}list{of}"
        if self.kind == "table":
            of = f" whose values are {_plural(self.values.describe())}" if self.values else ""
            return "a table" + of
        return {"string": "a string", "boolean": "true or false"}[self.kind]

    def json(self) -> dict:
        if self.kind == "string":
            return {"enum": list(self.choices)} if self.choices else {"type": "string"}
        out: dict[str, Any] = {"type": "object" if self.kind == "table" else self.kind}
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        if self.exclude:
            out["not"] = {"enum": list(self.exclude)}
        if self.items is not None:
            out["items"] = self.items.json()
        if self.min_items is not None:
            out["minItems"] = self.min_items
        if self.max_items is not None:
            out["maxItems"] = self.max_items
        if self.values is not None:
            out["additionalProperties"] = self.values.json()
        return out


def _plural(text: str) -> str:
    for one, many in (
        ("an integer", "integers"),
        ("a number", "numbers"),
        ("a string", "strings"),
        ("a table", "tables"),
        ("a list", "lists"),
        ("true or false", "booleans"),
    ):
        if text.startswith(one):
            return many + text[len(one) :]
    return text


def String(*choices: str) -> Type:
    return Type("string", choices=tuple(choices))


def Integer(minimum=None, maximum=None, exclude=()) -> Type:
    return Type("integer", minimum=minimum, maximum=maximum, exclude=tuple(exclude))


def Number(minimum=None, maximum=None) -> Type:
    return Type("number", minimum=minimum, maximum=maximum)


BOOLEAN = Type("boolean")
STRING = String()
SWITCH = (BOOLEAN, String(AUTO))  # true, false or "auto"


def Array(items: Type | None = None, min_items=None, max_items=None) -> Type:
    return Type("array", items=items, min_items=min_items, max_items=max_items)


def Table(values: Type | None = None) -> Type:
    return Type("table", values=values)


_NO_DEFAULT = object()


@dataclass(frozen=True)
class Key:
    """A key of a section: the types it accepts, what it means, its default."""

    name: str
    types: tuple[Type, ...]
    doc: str
    default: Any = _NO_DEFAULT
    required: bool = False

    @property
    def has_default(self) -> bool:
        return self.default is not _NO_DEFAULT

    def describe(self) -> str:
        text = " or ".join(t.describe() for t in self.types)
        return text.replace("true or false or", "true, false or")


@dataclass(frozen=True)
class Section:
    """A table (``[name]``) or an array of tables (``[[name]]``) of the config."""

    name: str
    doc: str
    keys: tuple[Key, ...]
    array: bool = False
    required: bool = False
    sections: tuple[Section, ...] = ()
    exclusive: tuple[str, ...] = ()  # at most one of these keys
    one_of: tuple[str, ...] = ()  # exactly one of these keys (array items)

    def key(self, name: str) -> Key:
        return next(k for k in self.keys if k.name == name)


def K(name, types, doc, default=_NO_DEFAULT, required=False) -> Key:
    types = types if isinstance(types, tuple) else (types,)
    return Key(name, types, doc, default, required)


# fmt: off
_DATA_SOURCE = (
    K("builtin", String(*DATASETS), "a data set shipped with or generated by the package: "
      "scikit-learn's bundled ones, weighting_benchmark (the NSGA-II paper's synthetic data), "
      "error_curve_single|pair|combined (the error-curve paper's)"),
    K("path", STRING, "a data file (.csv, .tsv, optionally .gz; .parquet; .mat with X and Y), "
      "relative to the config file"),
    K("target", STRING, "the target column of a table file; it is removed from the features "
      "(.mat files and built-ins bring their own)"),
)
_WHEN_CLASSES = "true, false or 'auto' (when the target is a class label)"

SCHEMA = Section("", "moweights run configuration: rank features with several rankers, "
                 "aggregate the rankings and evaluate them.", (), sections=(
    Section("data", "Where the data comes from: one data set, or one file split into sites "
            "by a column.", (
        *_DATA_SOURCE,
        K("site_column", STRING, "a column naming each row's site: every site is ranked on its "
          "own and only rankings are combined (a federated run)"),
        K("drop", Array(STRING), "columns to leave out (identifiers, dates)", []),
        K("n_samples", Integer(4), "rows to use: the size of a generated data set, or a seeded "
          "random subsample of a larger one"),
    ), exclusive=("builtin", "path")),
    Section("sites", "Data sites of a federated run, one [[sites]] block each; every site is "
            "ranked on its own and only the rankings are combined. Instead of [data].", (
        K("name", STRING, "the site's name, unique", required=True),
        *_DATA_SOURCE,
        K("rows", Array(Integer(0), 2, 2), "[start, stop): the rows of the data set this site "
          "holds (to split one data set into sites)"),
    ), array=True, one_of=("builtin", "path")),
    Section("rankers", "The rankers to run, one [[rankers]] block each.", (
        K("name", STRING, "a registered ranker (see `moweights rankers`; plugins included)",
          required=True),
        K("label", STRING, "the name in outputs (default: name); unique"),
        K("params", Table(), "the ranker's parameters, e.g. { n_neighbors = 5 }; the run's "
          "random_state reaches rankers that take one", {}),
    ), array=True, required=True),
    Section("aggregation", "How the rankings are combined and compared.", (
        K("methods", Array(String(*AGGREGATIONS)), "combinations of the rankers' rankings "
          "('generic' is the ordered partition they all agree on)", ["mean_rank", "generic"]),
        K("weights", Table(Number(0)), "weights of weighted_mean_rank: ranker label -> weight "
          "(site runs: site name -> weight; default the site sizes)"),
        K("compare", Array(String(*MEASURES)), "similarity measures between the rankers' "
          "rankings", ["spearman", "s_measure"]),
        K("compare_k", Integer(1), "top-k of the set measures (jaccard, kuncheva) and depth of "
          "rbo", 10),
    )),
    Section("evaluation", "How good the rankings are. Statistics compare the rankers over "
            "blocks: the sites of a site run, else the cross-validation folds.", (
        K("enabled", BOOLEAN, "false skips every evaluation", True),
        K("cv", Integer(2), "cross-validation folds of every evaluation", 10),
    ), sections=(
        Section("topk", "Top-k kNN curves: the ranking is refit on each training fold; a kNN "
                "regressor on the top k features predicts all features (lower is better).", (
            K("enabled", BOOLEAN, "compute the curves", True),
            K("metric", String(*METRICS), "mse (1NN), rmse or rmae (5NN)", "mse"),
            K("n_neighbors", Integer(1), "neighbours (default by metric)"),
            K("ks", Array(Integer(1), 1), "numbers of top features (default 1, 2, 4, ..., n)"),
            K("at_k", Integer(1), "the k at which rankers are compared and tested (the largest "
              "grid point <= at_k and < n)", 16),
            K("random_baseline", BOOLEAN, "also score random rankings", True),
            K("n_random", Integer(1), "random rankings per fold", 10),
        )),
        Section("error_curves", "FFA/RFA error curves of each ranking (quadratic-kernel SVM) "
                "and ECA against a random ranking; needs a class target.", (
            K("enabled", SWITCH, _WHEN_CLASSES, AUTO),
            K("grid", (String("every", "geometric"), Integer(1), Array(Integer(1), 1)),
              "subset sizes: 'every', 'geometric' (1, 2, 4, ..., n), a step or a list",
              "geometric"),
            K("weighting", Array(String(*WEIGHTINGS), 1), "ECA weightings", ["uniform"]),
            K("n_random", Integer(0), "random rankings of the expected curve (plot band, "
              "magnitude weightings); 0 = none", 20),
        )),
        Section("clustering", "k-means on the top features of each ranking, scored against "
                "the classes (F1W, NMI, ACC); needs a class target.", (
            K("enabled", SWITCH, _WHEN_CLASSES, AUTO),
            K("k_features", Array(Integer(1), 1), "numbers of top features (default 1, 2, 4, "
              "..., n)"),
            K("n_restarts", Integer(1), "k-means runs averaged", 5),
            K("two_step", BOOLEAN, "the two-step evaluation for imbalanced data", False),
        )),
        Section("statistics", "Friedman + Nemenyi over the blocks (sites, else folds) on the "
                "top-k error at at_k, random baseline included; a CD diagram.", (
            K("enabled", SWITCH, "true, false or 'auto' (when there are at least two blocks "
              "and two methods)", AUTO),
            K("alpha", Number(0.001, 0.5), "significance level", 0.05),
        )),
    )),
    Section("output", "Where and what to write.", (
        K("dir", STRING, "output folder, relative to the working directory", "results"),
        K("plots", BOOLEAN, "write PNG plots", True),
        K("html", BOOLEAN, "write the self-contained report.html", True),
        K("cache", BOOLEAN, "keep finished results in <dir>/.cache (data files, never "
          "code) so an unchanged re-run resumes; edited code recomputes", True),
    )),
    Section("run", "How the run executes.", (
        K("random_state", Integer(0, 2**32 - 1), "seed of every random choice", 0),
        K("n_jobs", Integer(exclude=(0,)), "parallel jobs (joblib; -1 = all the CPUs this "
          "process may use; more than that are clipped, with a warning); one layer at a "
          "time: the rankers' fits or the evaluations' folds, never both"),
        K("backend", String(*BACKENDS), "joblib backend: 'loky' leaves each library its "
          "choice (processes for folds, threads for many small fits); 'threading' and "
          "'multiprocessing' force one; 'dask' runs on a Dask cluster", "loky"),
        K("scheduler", STRING, "address of the Dask scheduler (backend = 'dask'); without it "
          "a local cluster is started"),
        K("threads", Integer(1), "BLAS/OpenMP threads per job; many small fits run fastest "
          "single-threaded, big data may gain from more", 1),
        K("verbose", Integer(0, 2), "0 silent, 1 progress bars, 2 also log steps", 1),
    )),
))
# fmt: on


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


# ------------------------------------------------------------------ JSON Schema
def _key_json(key: Key) -> dict:
    parts = [t.json() for t in key.types]
    out: dict[str, Any] = {"description": key.doc}
    out.update(parts[0] if len(parts) == 1 else {"anyOf": parts})
    if key.has_default:
        out["default"] = key.default
    return out


def _section_json(section: Section) -> dict:
    obj: dict[str, Any] = {
        "type": "object",
        "description": section.doc,
        "additionalProperties": False,
        "properties": {k.name: _key_json(k) for k in section.keys},
    }
    for sub in section.sections:
        obj["properties"][sub.name] = _section_json(sub)
    required = [k.name for k in section.keys if k.required]
    if required:
        obj["required"] = required
    if section.exclusive:
        obj["not"] = {"required": list(section.exclusive)}
    if section.one_of:
        obj["oneOf"] = [{"required": [k]} for k in section.one_of]
    if not section.array:
        return obj
    return {"type": "array", "description": section.doc, "minItems": 1, "items": obj}


def json_schema(ranker_params: dict[str, dict] | None = None) -> dict:
    """The JSON Schema (draft 2020-12) of a config file, for editors.

    Parameters
    ----------
    ranker_params : dict, optional
        Ranker name -> JSON Schema of its ``params`` table; each becomes an if/then rule
        on ``[[rankers]]`` and the names become the suggested values of ``name``.
    """
    doc = _section_json(SCHEMA)
    doc = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://moweights.invalid/config-schema.json",
        "title": "moweights run configuration",
        **doc,
        "required": [s.name for s in SCHEMA.sections if s.required],
    }
    if ranker_params:
        item = doc["properties"]["rankers"]["items"]
        item["properties"]["name"] = {
            "description": item["properties"]["name"]["description"],
            "anyOf": [{"enum": sorted(ranker_params)}, {"type": "string"}],
        }
        item["allOf"] = [
            {
                "if": {"properties": {"name": {"const": name}}, "required": ["name"]},
                "then": {"properties": {"params": params}},
            }
            for name, params in sorted(ranker_params.items())
        ]
    return doc


def _param_docs(cls: type) -> dict[str, str]:
    """First sentence of each parameter's numpydoc description."""
    import inspect

    lines = (inspect.getdoc(cls) or "").splitlines()
    found: dict[str, str] = {}
    try:
        i = lines.index("Parameters") + 2
    except ValueError:
        return found
    name, body = None, []
    for j in range(i, len(lines)):
        line = lines[j]
        if j + 1 < len(lines) and lines[j + 1].startswith("---"):
            break  # the next section's title
        head = re.match(r"^(\w+)\s*:", line)
        if head:
            name, body = head.group(1), []
            found[name] = ""
        elif name and line.strip():
            body.append(line.strip())
            found[name] = re.split(r"(?<=\.)\s", " ".join(body), maxsplit=1)[0]
    return {k: v for k, v in found.items() if v}


def _constraint_json(constraint: Any) -> dict | None:
    """A scikit-learn parameter constraint as JSON Schema; None when TOML cannot say it."""
    from numbers import Integral, Real

    from sklearn.utils._param_validation import Interval, StrOptions

    if isinstance(constraint, Interval):
        out: dict[str, Any] = {"type": "integer" if constraint.type is Integral else "number"}
        for bound, closed, inclusive, exclusive in (
            (constraint.left, constraint.closed in ("left", "both"), "minimum", "exclusiveMinimum"),
            (
                constraint.right,
                constraint.closed in ("right", "both"),
                "maximum",
                "exclusiveMaximum",
            ),
        ):
            if bound is not None:
                out[inclusive if closed else exclusive] = bound
        return out
    if isinstance(constraint, StrOptions):
        return {"enum": sorted(o for o in constraint.options if o not in constraint.deprecated)}
    simple = {
        "random_state": {"type": "integer", "minimum": 0},
        "verbose": {"type": ["integer", "boolean"]},
        "boolean": {"type": "boolean"},
        "array-like": {"type": "array"},
        Integral: {"type": "integer"},
        Real: {"type": "number"},
        bool: {"type": "boolean"},
        str: {"type": "string"},
        list: {"type": "array"},
        tuple: {"type": "array"},
    }
    try:
        return simple.get(constraint)
    except TypeError:  # unhashable constraint objects
        return None


def ranker_params_schemas() -> dict[str, dict]:
    """JSON Schema of the ``params`` table of every built-in ranker (plugins excluded).

    Types and bounds come from each class's ``_parameter_constraints``, defaults from a
    default instance, descriptions from its docstring; a value TOML cannot write (None,
    an object) is left out.
    """
    import json
    import warnings

    import rankers

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        names = list(rankers.available()["name"])
    out = {}
    for name in names:
        cls = rankers.get_class(name)
        if not cls.__module__.startswith(("rankers.", "moweights.")):
            continue  # a plugin: the committed schema must not depend on what is installed
        constraints = getattr(cls, "_parameter_constraints", {})
        defaults = cls().get_params(deep=False)
        docs = _param_docs(cls)
        props = {}
        for param in sorted(defaults):
            options = [_constraint_json(c) for c in constraints.get(param, [])]
            options = list({json.dumps(o): o for o in options if o is not None}.values())
            prop: dict[str, Any] = {}
            if docs.get(param):
                prop["description"] = docs[param]
            if len(options) == 1:
                prop.update(options[0])
            elif options:
                prop["anyOf"] = options
            default = defaults[param]
            default = list(default) if isinstance(default, tuple) else default
            try:
                if default is not None:
                    json.dumps(default)
                    prop["default"] = default
            except TypeError:
                pass
            props[param] = prop
        out[name] = {"type": "object", "additionalProperties": False, "properties": props}
    return out


# ------------------------------------------------------------------ commented example
_STARTER = {
    "data": {"builtin": "breast_cancer"},
    "rankers": [
        {"name": "variance"},
        {"name": "laplacian", "params": {"n_neighbors": 5}},
        {"name": "info_gain"},
    ],
    "evaluation": {"cv": 5},
    "run": {"random_state": 0, "n_jobs": 1},
}
_COMMENTED_EXAMPLES = {
    "sites": [{"name": "north", "builtin": "breast_cancer", "rows": [0, 285]}],
    "rankers": [
        {"name": "mo_weighting", "label": "nsga2",
         "params": {"objectives": ["C1", "-C2", "-C3"], "pop_size": 40, "n_gen": 50}},
    ],
}  # fmt: skip


#: placeholders shown (commented out) for keys without a default: key -> section -> value
_KEY_EXAMPLES = {
    "path": {"data": "data.csv"},
    "target": {"data": "label"},
    "site_column": {"data": "hospital"},
    "n_samples": {"data": 300},
    "weights": {"aggregation": {"variance": 1.0, "laplacian": 2.0, "info_gain": 1.0}},
    "n_neighbors": {"topk": 1},
    "ks": {"topk": [1, 2, 4, 8, 16, 30]},
    "k_features": {"clustering": [2, 4, 8, 16]},
    "n_jobs": {"run": -1},
    "scheduler": {"run": "tcp://127.0.0.1:8786"},
}


def toml_value(value: Any) -> str:
    """A Python value as a TOML value (strings, numbers, booleans, arrays, inline tables)."""
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        items = ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items())
        return "{ " + items + " }" if items else "{}"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def _comment(text: str, prefix: str = "# ") -> list[str]:
    import textwrap

    return textwrap.wrap(text, 96, initial_indent=prefix, subsequent_indent=prefix)


def _block(section: Section, values: dict, header: str, commented: bool) -> list[str]:
    lead = "# " if commented else ""
    lines = [f"{lead}{header}"]
    for key in section.keys:
        doc = f"{key.doc}. Valid: {key.describe()}"
        if key.name in values:
            lines += _comment(doc)
            lines.append(f"{lead}{key.name} = {toml_value(values[key.name])}")
        elif key.has_default and not section.array:
            lines += _comment(doc)
            lines.append(f"# {key.name} = {toml_value(key.default)}")
        elif (
            key.name in _KEY_EXAMPLES
            and not section.array
            and section.name in _KEY_EXAMPLES[key.name]
        ):
            lines += _comment(doc)
            lines.append(f"# {key.name} = {toml_value(_KEY_EXAMPLES[key.name][section.name])}")
    return lines


def example_config() -> str:
    """A commented example config: every section and key with what it means and accepts.

    Written by ``moweights init``; it runs as it is (three rankers on the bundled breast
    cancer data) and shows every other setting commented out at its default.
    """
    out = [
        "# moweights run configuration (written by `moweights init`).",
        "# Run it with: moweights run <this file>. Check it with: moweights validate <this file>.",
        "# Every setting is listed; '#'-commented ones show their default.",
    ]
    for section in SCHEMA.sections:
        out += ["", *_comment(section.doc, "## ")]
        if section.array:
            for entry in _STARTER.get(section.name, []):
                out += [*_block(section, entry, f"[[{section.name}]]", commented=False), ""]
            for entry in _COMMENTED_EXAMPLES.get(section.name, []):
                out += [*_block(section, entry, f"[[{section.name}]]", commented=True), ""]
            continue
        values = _STARTER.get(section.name, {})
        out += _block(section, values, f"[{section.name}]", commented=False)
        for sub in section.sections:
            out += ["", *_comment(sub.doc, "## ")]
            out += _block(sub, values.get(sub.name, {}), f"[{section.name}.{sub.name}]", False)
    return "\n".join(out).rstrip() + "\n"


# ------------------------------------------------------------------ reference documentation
def markdown() -> str:
    """The config reference (docs/config.md) in Markdown, from :data:`SCHEMA`."""

    def cell(text: str) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    out = [
        "# Config file reference",
        "",
        "Generated from `moweights/schema.py` by `moweights schema --format markdown -o "
        "docs/config.md`; the JSON Schema for editors is `docs/config-schema.json` "
        "(`moweights schema -o docs/config-schema.json`). `moweights init` writes a commented "
        "example, `moweights validate CONFIG` checks a file and reports every problem at once.",
        "",
        "A config is TOML. Data paths are relative to the config file, the output folder to "
        "the working directory. Any key can be overridden on the command line: "
        "`moweights run CONFIG --set evaluation.cv=5 --set rankers.0.params.n_neighbors=7`.",
    ]

    def table(section: Section, header: str) -> None:
        out.extend(["", f"## `{header}`", "", section.doc, ""])
        if section.exclusive:
            out.extend([f"At most one of {', '.join(section.exclusive)}.", ""])
        if section.one_of:
            out.extend([f"Exactly one of {', '.join(section.one_of)} per block.", ""])
        out.append("| key | accepts | default | meaning |")
        out.append("|---|---|---|---|")
        for key in section.keys:
            default = (
                toml_value(key.default) if key.has_default else ("required" if key.required else "")
            )
            out.append(
                f"| `{key.name}` | {cell(key.describe())} | {cell(default)} | {cell(key.doc)} |"
            )

    for section in SCHEMA.sections:
        table(section, f"[[{section.name}]]" if section.array else f"[{section.name}]")
        for sub in section.sections:
            table(sub, f"[{section.name}.{sub.name}]")
    out += [
        "",
        "## Ranker parameters",
        "",
        "`params` are the ranker's own constructor parameters (`moweights rankers` lists the "
        "rankers; `help(rankers.get_class(NAME))` documents each). They are checked against "
        "the ranker's constraints when the config is validated, and the JSON Schema carries "
        "them for every built-in ranker. The NSGA-II weighting is the ranker `mo_weighting`: "
        '`objectives` (e.g. `["C1", "-C2", "-C3"]`), `pop_size`, `n_gen`, '
        '`crossover_prob`, `mutation_prob`, `termination` (e.g. `["n_eval", 5000]`), '
        "`front_to_ranking`, `max_pairs`.",
    ]
    return "\n".join(out) + "\n"
