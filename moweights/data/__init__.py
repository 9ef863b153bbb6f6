"""Data in moweights: where every data set comes from and how it is prepared, one door.

Each concept is one module, and this package re-exports what users and the pipeline need:

- :mod:`~moweights.data.readers`: reading a user's data files (csv, tsv, parquet, .mat,
  .h5ad, headers, genes as rows, a federated site's file): the one place a file is read;
- :mod:`~moweights.data.loaders`: data sets by name (scikit-learn's bundled ones, the
  generated ones: :func:`load_dataset`) or by file (:func:`load_file`, :func:`read_file`),
  and what a config check needs of a file (:func:`check_data_path`, :func:`read_columns`,
  :func:`duplicate_columns`);
- :mod:`~moweights.data.synthetic`: the papers' synthetic data
  (:func:`make_weighting_benchmark`, :func:`make_error_curve_data`, :func:`noisy_rankings`);
- :mod:`~moweights.data.planted`: data with a planted structure, the atlas's
  (:func:`make_planted`);
- :mod:`~moweights.data.fetch`: public benchmark data, downloaded and checksummed;
- :mod:`~moweights.data.preprocess`: a table made numeric (:func:`prepare_table`);
- :mod:`~moweights.data.transform`: fixed transforms and scalings (:func:`log_transform`,
  :class:`ScaledRanker`).

``atlas.csv``, the atlas summary ``recommend`` reads, is package data here. How a config
run turns its ``[data]`` section into arrays is pipeline logic
(:mod:`moweights.pipeline.data`), which comes through this door. Names are imported on
first access, so importing this package costs nothing.
"""

from __future__ import annotations

from typing import Any

from rankers.utils.lazy import attach

#: submodule -> the public names it defines: the package's one list of its names
_EXPORTS = {
    "loaders": (
        "BUILTIN", "DATASETS", "GENERATED", "check_data_path", "duplicate_columns",
        "load_builtin", "load_dataset", "load_file", "read_columns", "read_file", "subsample",
    ),
    "synthetic": (
        "ERROR_CURVE_DATA", "make_error_curve_data", "make_weighting_benchmark",
        "noisy_rankings",
    ),
    "planted": ("REGRESSION", "STRUCTURES", "Planted", "make_planted"),
    "fetch": (
        "PMLB", "SKFEATURE", "fetch_openml", "fetch_pmlb", "fetch_skfeature", "get_data_home",
        "missing_file_hint", "pmlb_path", "skfeature_path",
    ),
    "preprocess": ("CATEGORICAL", "MISSING", "PreparedTable", "prepare_table"),
    "transform": (
        "SCALES", "TRANSFORMS", "ScaledRanker", "log_transform", "negative_columns",
        "scale_notes",
    ),
    "readers": ("READERS", "SiteFile", "read_table", "transpose_table"),
}  # fmt: skip

_getattr, _dir, __all__ = attach(__name__, _EXPORTS)


def __getattr__(name: str) -> Any:
    return _getattr(name)


def __dir__() -> list[str]:
    return _dir()
