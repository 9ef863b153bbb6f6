"""A validated configuration as objects: :class:`RunConfig`, its sections as :class:`Settings`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

__all__ = ["RankerSpec", "RunConfig", "Settings"]


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

    @classmethod
    def from_section(cls, section, values: Mapping[str, Any]) -> Settings:
        """A checked section's values (a :class:`~moweights.config.schema.Section`'s), its
        subsections as nested :class:`Settings`."""
        values = dict(values)
        for sub in section.sections:
            values[sub.name] = cls.from_section(sub, values[sub.name])
        return cls(values)


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
    ``[data].site_column`` run finds its sites in the data); ``datasets`` the data sets of
    a study (from ``[[data]]`` blocks or ``[data].paths``; empty unless there are two or
    more, and then ``data`` is the first of them).
    """

    data: Settings
    sites: tuple[Settings, ...]
    rankers: tuple[RankerSpec, ...]
    aggregation: Settings
    evaluation: Settings
    output: Settings
    run: Settings
    markers: Settings = field(default_factory=lambda: Settings({"enabled": False}))
    source: str = "<config>"
    datasets: tuple[Settings, ...] = ()

    @property
    def is_study(self) -> bool:
        """Whether the run is a study over several data sets."""
        return len(self.datasets) > 1

    def for_dataset(self, data: Settings) -> RunConfig:
        """The single-data configuration of one of a study's data sets."""
        return replace(self, data=data, datasets=())

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
        if self.is_study:
            return f"{len(self.datasets)} data sets: " + ", ".join(d.name for d in self.datasets)
        name = self.data.get("name") or self.data.builtin or Path(self.data.path).name
        return f"{name} by {self.data.site_column}" if self.data.site_column else name

    def to_dict(self) -> dict:
        """The resolved configuration (defaults filled, paths absolute) as plain data.

        ``parse_config(config.to_dict())`` gives the same configuration back.
        """
        out = {"data": self.data.to_dict()} if not self.sites else {}
        if self.is_study:
            out["data"] = [d.to_dict() for d in self.datasets]
        if self.sites:
            out["sites"] = [s.to_dict() for s in self.sites]
        out["rankers"] = [
            {"name": r.name, "label": r.label, "params": _plain(r.params)} for r in self.rankers
        ]
        for name in ("aggregation", "evaluation", "markers", "output", "run"):
            out[name] = getattr(self, name).to_dict()
        return out


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
