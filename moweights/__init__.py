"""moweights: feature ranking, rank aggregation and error-curve evaluation.

Importing :mod:`moweights` is cheap: the names below are imported on first access
(PEP 562), so ``import moweights`` and ``moweights --help`` load no numerical library.

- :mod:`moweights.config` -- run configurations: the schema, checks, generated docs;
- :mod:`moweights.pipeline` -- a config run: data, steps, cache, lock, progress;
- :mod:`moweights.output` -- the run folder: files, tables, figures, the HTML report;
- :mod:`moweights.weighting` -- the NSGA-II feature weighting (:class:`MOWeighting`);
- :mod:`moweights.datasets`, :mod:`moweights.fetch` -- bundled, generated, downloaded data;
- :mod:`moweights.errors` -- the errors and warnings moweights raises;
- :mod:`moweights.cli` -- the ``moweights`` command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from moweights.about import __version__ as __version__
from rankers._lazy import attach

if TYPE_CHECKING:
    from moweights import datasets
    from moweights.config import load_config, parse_config
    from moweights.pipeline import run
    from moweights.weighting import MOWeighting

__all__ = ["MOWeighting", "datasets", "load_config", "parse_config", "run"]

__getattr__, __dir__ = attach(
    __name__,
    {
        "MOWeighting": "moweights.weighting",
        "load_config": "moweights.config",
        "parse_config": "moweights.config",
        "run": "moweights.pipeline",
    },
    submodules=(
        "cli",
        "config",
        "datasets",
        "errors",
        "fetch",
        "output",
        "pipeline",
        "weighting",
    ),
    public=__all__,
)
