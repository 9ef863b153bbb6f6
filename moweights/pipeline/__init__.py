"""Config runs: data -> rankers -> aggregation -> evaluation, written to a run folder.

- :mod:`~moweights.pipeline.runner` -- :func:`run`: the folder, its lock, the joblib backend,
  the steps in order, the final status;
- :mod:`~moweights.pipeline.result` -- :class:`RunResult`, what a run computed;
- :mod:`~moweights.pipeline.data` -- the data of a run (one data set or one per site);
- :mod:`~moweights.pipeline.steps` -- fitting the rankers, combining and comparing them;
- :mod:`~moweights.pipeline.evaluate` -- top-k curves, error curves, clustering, statistics;
- :mod:`~moweights.pipeline.cache` -- finished steps kept as data (never pickles), and
  :mod:`~moweights.pipeline.checks`, what a cached value must look like;
- :mod:`~moweights.pipeline.lock` -- one run per output folder;
- :mod:`~moweights.pipeline.progress` -- tqdm bars and the callbacks that move them.
"""

from __future__ import annotations

from moweights.pipeline.data import load_data, load_units
from moweights.pipeline.evaluate import evaluate
from moweights.pipeline.result import RunResult
from moweights.pipeline.runner import run

__all__ = ["RunResult", "evaluate", "load_data", "load_units", "run"]
