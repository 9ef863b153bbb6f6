"""Federated per-site ranking of data files: sites given by path, and the Flower apps.

:mod:`aggregation.federated` ranks each site where its data lives and aggregates only the
rankings, on in-memory data (a DataFrame or a loader per site). Whatever reads a site's
file lives here, above it, and calls :mod:`moweights.data.readers`:

- :mod:`~moweights.federated.rank`: :func:`rank_sites` and :func:`rank_one_site`, which
  also take a path per site (a :class:`~moweights.data.SiteFile`, read inside the
  site's job, never by the process handing out the jobs).
- :mod:`~moweights.federated.flower`: the Flower ClientApp (at each site: reads the
  file its SuperNode's ``data-path`` names, ranks it, replies with the ranking) and
  ServerApp (aggregates the replies), across machines.
- :mod:`~moweights.federated.flower_app`: the apps' run config, app folder and result
  files; :mod:`~moweights.federated.local`: a real deployment on one machine.

Names are imported on first access, so importing this package costs nothing (and needs
no Flower).
"""

from __future__ import annotations

from typing import Any

from rankers.utils.lazy import attach

#: submodule -> the public names it defines: the package's one list of its names
_EXPORTS = {
    "rank": ("rank_one_site", "rank_sites"),
    "flower": ("MESSAGE_TYPE", "build_client_app", "build_server_app", "site_error", "site_seeds"),
    "flower_app": ("RUN_CONFIG", "read_result", "write_app"),
    "local": ("LocalDeployment",),
}

_getattr, _dir, __all__ = attach(__name__, _EXPORTS)


def __getattr__(name: str) -> Any:
    return _getattr(name)


def __dir__() -> list[str]:
    return _dir()
