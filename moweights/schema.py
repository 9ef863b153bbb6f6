"""Deprecated old path of the config schema, its type check and its exports: import from
:mod:`moweights.config.schema`, :mod:`moweights.config.check` and
:mod:`moweights.config.export`.

Importing it warns (:class:`DeprecationWarning`); it re-exports the moved names until
its removal in moweights 0.2.0 (:data:`rankers._moved.REMOVED_IN`).
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
from rankers._moved import warn_moved

warn_moved(__name__, "moweights.config.schema, moweights.config.check and moweights.config.export")

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
