"""The Dask cluster of a run (``[run] backend = "dask"``): connected with a deadline, or refused.

``dask.distributed.Client(address)`` trusts the address: a peer that accepts the
connection and stays silent keeps it waiting past its own connect timeout (the handshake
has none), and one that answers something else (an HTTP server, the dashboard's port)
has its reply read as a frame length ("Unable to allocate 3.07 EiB"). So before a client
is made, :func:`connect` asks the scheduler who it is (Dask's ``identity`` call) in a
thread of its own, under one deadline for the connection, the handshake and the reply:
Dask's ``distributed.comm.timeouts.connect`` (30 s by default; set it in Dask's config or
with ``DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT``). Silence, garbage, a refused
connection or a reply that is not a scheduler's become one
:class:`~moweights.errors.SchedulerError` naming the address and what happened. A TCP
address is first opened with a plain socket, so that a refused or unreachable one is told
from a silent one by what the network said, not by which deadline a busy machine hit first.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from moweights.errors import SchedulerError

__all__ = ["connect", "connect_timeout"]


def connect_timeout() -> float:
    """Seconds a connection, handshake and first reply may take: Dask's own setting."""
    import dask
    from dask.utils import parse_timedelta

    value = dask.config.get("distributed.comm.timeouts.connect", "30s")
    return float(parse_timedelta(value, default="seconds"))


async def _identity(address: str, timeout: float) -> Any:
    from distributed.comm import connect as open_comm
    from distributed.security import Security

    comm = await open_comm(address, timeout=timeout, **Security().get_connection_args("client"))
    try:
        await comm.write({"op": "identity", "reply": True})
        return await comm.read()
    finally:
        comm.abort()


def _reachable(address: str, timeout: float) -> None:
    """Open and close a TCP connection to a ``tcp://host:port`` address (other schemes
    are left to Dask); a refused, unreachable or unknown one is a SchedulerError."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    if parts.scheme != "tcp":
        return
    try:
        host, port = parts.hostname, parts.port
    except ValueError:  # a port that is not a number: Dask's parsing names it
        return
    if host is None or port is None:
        return
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except TimeoutError:
        return  # no answer to the connection itself: the exchange's deadline says so
    except OSError as exc:
        why = " ".join(str(exc).split()) or type(exc).__name__
        raise SchedulerError(
            f"cannot connect to the Dask scheduler at {address} ([run].scheduler): {why}",
            address=address,
        ) from None


def _ask(address: str, timeout: float) -> Any:
    """The scheduler's identity, or the exception; never much longer than ``timeout``,
    whatever the peer does: the exchange runs in a daemon thread of its own, on
    an event loop of its own (the caller's may be running already, e.g. in Jupyter)."""
    _reachable(address, timeout)
    outcome: dict[str, Any] = {}

    def ask() -> None:
        try:
            # Dask's connect gives up on a refused address at ``timeout``; a second more
            # bounds a handshake or reply that never comes
            deadline = _identity(address, timeout)
            outcome["reply"] = asyncio.run(asyncio.wait_for(deadline, timeout + 1.0))
        except BaseException as exc:  # garbage from the peer can raise anything
            outcome["error"] = exc

    thread = threading.Thread(target=ask, name="moweights-scheduler-probe", daemon=True)
    thread.start()
    thread.join(timeout + 3.0)
    if thread.is_alive() or isinstance(outcome.get("error"), (TimeoutError, asyncio.TimeoutError)):
        raise SchedulerError(
            f"the Dask scheduler at {address} ([run].scheduler) did not answer within "
            f"{timeout:g} s: something accepts connections there but does not speak Dask's "
            "protocol (is it the scheduler's address and port, not the dashboard's or "
            "another service's?)",
            address=address,
        )
    if "error" in outcome:
        exc = outcome["error"]
        if isinstance(exc, OSError):  # refused, unreachable, no such host
            why = " ".join(str(exc).split()) or type(exc).__name__
            cause = exc.__cause__ or exc.__context__
            if isinstance(cause, OSError) and str(cause):
                why += f" ({' '.join(str(cause).split())})"
            raise SchedulerError(
                f"cannot connect to the Dask scheduler at {address} ([run].scheduler): {why}",
                address=address,
            ) from None
        raise SchedulerError(
            f"{address} ([run].scheduler) did not answer as a Dask scheduler: its reply "
            f"could not be read ({type(exc).__name__}); is it the scheduler's address, not "
            "the dashboard's or another service's?",
            address=address,
        ) from None
    return outcome.get("reply")


def connect(address: str | None, timeout: float | None = None):
    """A ``dask.distributed.Client``: on the scheduler at ``address``, checked first; or
    an in-process cluster when ``address`` is None.

    Raises
    ------
    SchedulerError
        ``address`` does not answer as a Dask scheduler within the timeout.
    """
    from dask.distributed import Client

    if address is None:
        return Client(processes=False, dashboard_address=None)
    timeout = connect_timeout() if timeout is None else float(timeout)
    reply = _ask(address, timeout)
    if not (isinstance(reply, dict) and reply.get("type") == "Scheduler"):
        kind = reply.get("type") if isinstance(reply, dict) else type(reply).__name__
        raise SchedulerError(
            f"{address} ([run].scheduler) answered, but not as a Dask scheduler (it says "
            f"it is {kind!r}); give the scheduler's address",
            address=address,
        )
    try:
        return Client(address, timeout=timeout)
    except (OSError, TimeoutError) as exc:  # the scheduler went away since it answered
        raise SchedulerError(
            f"cannot connect to the Dask scheduler at {address} ([run].scheduler): {exc}",
            address=address,
        ) from None
