"""moweights: feature ranking, rank aggregation and error-curve evaluation.

Importing :mod:`moweights` is cheap: the names below are imported on first access
(PEP 562), so ``import moweights`` and ``moweights --help`` load no numerical library.

- :mod:`moweights.config` -- run configurations: the schema, checks, generated docs;
- :mod:`moweights.pipeline` -- a config run: data, steps, cache, lock, progress;
- :mod:`moweights.output` -- the run folder: files, tables, figures, the HTML report;
- :mod:`moweights.weighting` -- the NSGA-II feature weighting (:class:`MOWeighting`);
- :mod:`moweights.data` -- every data set and its preparation, one door: a user's files
  (:mod:`moweights.data.readers`, the one place a data file is read), bundled, generated,
  planted and downloaded data sets, the preparation of a table and its transforms;
- :mod:`moweights.ensemble` -- the stacking ensemble (:class:`~moweights.ensemble.StackedRanker`);
- :mod:`moweights.federated` -- per-site ranking of sites given by file, and the Flower apps;
- :mod:`moweights.errors` -- the errors and warnings moweights raises;
- :mod:`moweights.cli` -- the ``moweights`` command.
"""

from __future__ import annotations

from typing import Any

from moweights.about import __version__ as __version__
from rankers.utils.lazy import attach

#: submodule -> the public names it defines: the package's one list of its names
_EXPORTS = {
    "config": ("load_config", "parse_config"),
    "pipeline": ("run",),
    "weighting": ("MOWeighting",),
}

_getattr, _dir, __all__ = attach(
    __name__,
    _EXPORTS,
    submodules=("cli", "data", "ensemble", "errors", "federated", "output"),
)


def __getattr__(name: str) -> Any:
    return _getattr(name)


def __dir__() -> list[str]:
    return _dir()
