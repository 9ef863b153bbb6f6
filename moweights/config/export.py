"""What is generated from the schema: the JSON Schema for editors, the Markdown reference
(docs/config.md) and the commented example config ``moweights init`` writes.

The JSON Schema also carries every built-in ranker's parameters, read from the ranker
classes (their ``_parameter_constraints``, defaults and docstrings).
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from moweights.config.schema import SCHEMA, Key, Section

__all__ = ["example_config", "json_schema", "markdown", "ranker_params_schemas", "toml_value"]


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
    if len(section.exclusive) == 2:
        obj["not"] = {"required": list(section.exclusive)}
    elif section.exclusive:  # at most one: no two of them together
        pairs = itertools.combinations(section.exclusive, 2)
        obj["not"] = {"anyOf": [{"required": list(pair)} for pair in pairs]}
    if section.one_of:
        obj["oneOf"] = [{"required": [k]} for k in section.one_of]
    if section.many:  # [data] or [[data]] (a study)
        blocks = {"type": "array", "minItems": 1, "items": obj}
        return {"description": section.doc, "anyOf": [obj, blocks]}
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

    from rankers.utils.param_validation import Interval, StrOptions

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
    "sites": [
        {"name": "north", "builtin": "breast_cancer", "rows": [0, 285]},
        {"name": "clinic_b", "path": "clinic_b.csv", "target": "label"},  # a site's own file
    ],
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
        # a TOML basic string: JSON escapes the control characters below U+0020, TOML also
        # forbids DEL (U+007F) unescaped
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
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
        "Generated from `moweights/config/schema.py` by `moweights schema --format markdown "
        "--force -o docs/config.md`; the JSON Schema for editors is `docs/config-schema.json` "
        "(`moweights schema --force -o docs/config-schema.json`). `moweights init` writes a "
        "commented example, `moweights validate CONFIG` checks a file and reports every "
        "problem at once.",
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
        if section.many:
            out.extend(
                [
                    f"A study over several data sets: one `[[{section.name}]]` block per data "
                    f"set (same keys; `name` tells them apart), or `paths = GLOB` in "
                    f"`[{section.name}]`.",
                    "",
                ]
            )
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
        "`front_to_ranking`, `max_pairs`, `seed_rankers` (filter rankers whose top sets seed "
        'the search) and `preselect` (default `"auto"`: every weight up to 1,000 features, '
        "the filters' best 1,000 above them, with a warning; a number narrows the search to "
        'that many, `"all"` searches every weight).',
    ]
    return "\n".join(out) + "\n"
