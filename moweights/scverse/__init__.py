"""Single-cell and omics data (the scverse stack): AnnData in and out, marker features per group.

- :mod:`~moweights.scverse.anndata`: an ``AnnData`` as ranker input
  (:func:`from_anndata`: ``X`` or a layer, the target a column of ``obs``, names from
  ``var_names``), and scanpy-style calls that rank and write the results back:
  :func:`rank_features` (the whole target: columns ``<key>_<method>_<field>`` in
  ``adata.var``, rankings, aggregates, evaluation and parameters in
  ``adata.uns[key_added]``) and :func:`rank_markers` (per group, stored as
  ``scanpy.tl.rank_genes_groups`` stores it, so ``scanpy.get.rank_genes_groups_df``
  reads it); :func:`get_markers` reads the long table back.
- :mod:`~moweights.scverse.markers`: :func:`find_markers`, one-vs-rest statistics (Welch's t
  or the Wilcoxon rank-sum, log fold changes, p- and q-values, fraction expressing) and a
  consensus rank of the member rankers per group, on arrays, frames or sparse matrices.
- :mod:`~moweights.scverse.plots`: :func:`plot_markers`, a dot plot of the top markers of
  every group.

Invariants: nothing of the caller's object changes but the entries named above (never
``X``, the layers, ``obs``, ``obsm``); everything written is a plain type an ``.h5ad``
file holds (numbers, strings, arrays, record arrays, data frames, dicts). The optional
extra ``pip install 'moweights[scverse]'`` installs ``anndata``; only
:mod:`~moweights.scverse.anndata` needs it, and imports it when called. Reading ``.h5ad``
files stays in :mod:`moweights.data.readers`. Names are imported on first access.
"""

from __future__ import annotations

from typing import Any

from rankers.utils.lazy import attach

#: submodule -> the public names it defines: the package's one list of its names
_EXPORTS = {
    "anndata": ("AnnDataInput", "from_anndata", "get_markers", "rank_features", "rank_markers"),
    "markers": (
        "DIRECTIONS",
        "MARKER_COLUMNS",
        "TESTS",
        "find_markers",
        "group_statistics",
        "rank_positions",
    ),
    "plots": ("plot_markers",),
}

_getattr, _dir, __all__ = attach(__name__, _EXPORTS)


def __getattr__(name: str) -> Any:
    return _getattr(name)


def __dir__() -> list[str]:
    return _dir()
