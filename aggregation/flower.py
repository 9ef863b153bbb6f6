"""Deprecated old path of the Flower apps of federated ranking: import from
:mod:`aggregation.federated.flower`.

Importing it warns (:class:`DeprecationWarning`); it re-exports the moved names until
its removal in moweights 0.2.0 (:data:`rankers._moved.REMOVED_IN`).

App folders written before the move (``aggregation.flower:client_app``,
``aggregation.flower:server_app``) still load the same apps until then.
"""

from __future__ import annotations

from typing import Any

from aggregation.federated import flower as _flower
from aggregation.federated.flower import (
    MESSAGE_TYPE,
    RUN_CONFIG,
    LocalDeployment,
    build_client_app,
    build_server_app,
    read_result,
    site_error,
    site_seeds,
    write_app,
)
from rankers._moved import warn_moved

warn_moved(__name__, "aggregation.federated.flower")

__all__ = [  # noqa: F822 - client_app and server_app come from __getattr__
    "MESSAGE_TYPE",
    "RUN_CONFIG",
    "LocalDeployment",
    "build_client_app",
    "build_server_app",
    "client_app",
    "read_result",
    "server_app",
    "site_error",
    "site_seeds",
    "write_app",
]


def __getattr__(name: str) -> Any:
    if name in ("client_app", "server_app"):
        return getattr(_flower, name)  # the same app objects as the new path's
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
