"""Run configurations: the schema as data, checking a config, and what is generated from it.

- :mod:`~moweights.config.schema` -- every section and key, their types and defaults
  (:data:`SCHEMA`), written once as data;
- :mod:`~moweights.config.check` -- the type check against the schema and the checks that
  need the registry or the file system; :func:`parse_config`;
- :mod:`~moweights.config.load` -- reading TOML (or a run's config.json) and ``--set``
  overrides; :func:`load_config`;
- :mod:`~moweights.config.settings` -- the validated result, :class:`RunConfig`;
- :mod:`~moweights.config.export` -- the JSON Schema, the Markdown reference and the
  commented example config.
"""

from __future__ import annotations

from moweights.config.check import parse_config
from moweights.config.load import apply_overrides, load_config
from moweights.config.schema import AGGREGATIONS
from moweights.config.settings import RankerSpec, RunConfig, Settings

__all__ = [
    "AGGREGATIONS",
    "RankerSpec",
    "RunConfig",
    "Settings",
    "apply_overrides",
    "load_config",
    "parse_config",
]
