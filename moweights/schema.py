"""Old path of the config schema, kept for outside code: see :mod:`moweights.config`.

The schema itself is :mod:`moweights.config.schema`, the type check
:mod:`moweights.config.check`, the JSON Schema, Markdown and example
:mod:`moweights.config.export`.
"""

from __future__ import annotations

from moweights.config.check import Problems, check
from moweights.config.export import (
    example_config,
    json_schema,
    markdown,
    ranker_params_schemas,
    toml_value,
)
from moweights.config.schema import (
    AGGREGATIONS,
    BACKENDS,
    SCHEMA,
    Array,
    Integer,
    Key,
    Number,
    Section,
    String,
    Table,
    Type,
)

__all__ = [
    "AGGREGATIONS",
    "BACKENDS",
    "SCHEMA",
    "Array",
    "Integer",
    "Key",
    "Number",
    "Problems",
    "Section",
    "String",
    "Table",
    "Type",
    "check",
    "example_config",
    "json_schema",
    "markdown",
    "ranker_params_schemas",
    "toml_value",
]
