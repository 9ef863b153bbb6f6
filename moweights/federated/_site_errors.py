"""What a site may tell the Flower server about its failure: a type name and a fixed message.

An exception's text can quote the site's data -- a label value, the site's column list, the
path of its file -- and whatever a site replies ends up in the server's ``result.json``, its
tables and its logs, which every participant of a run may read. So a site's reply carries
only ``"TypeName: message"``, both chosen here from fixed sets, never built from the
exception's text (used by :mod:`moweights.federated.flower`).

- The message is fixed per exception class (:data:`_MESSAGES`, looked up along the
  exception's MRO): moweights' own errors and a few built-ins get a message of their own,
  anything else the generic one.
- The type name is that of the moweights class the message came from, or else the nearest
  **standard built-in** class in the exception's MRO (``ValueError``, ``KeyError``,
  ``FileNotFoundError`` ...): a plugin's own class name is never sent, because it can be
  data too (a plugin may build its class with ``type(f"...{value}...", ...)``). A class
  counts as built-in only when the ``builtins`` module holds it under its name. When the
  nearest one says nothing (``Exception``), the name is ``"Error"``.
"""

from __future__ import annotations

import builtins

from rankers.exceptions import (
    FeatureMismatchError,
    InvalidInputError,
    InvalidParameterError,
    MoweightsError,
    PluginLoadError,
    UnknownRankerError,
)


class NodeConfigError(InvalidParameterError):
    """A SuperNode's node config does not fit the run (no data-path, an unlisted site name,
    a genes-as-rows that is not a boolean)."""


GENERIC = "the site could not rank its data"

#: class -> the fixed message a site sends for it (the first class found along the MRO)
_MESSAGES: dict[type[BaseException], str] = {
    NodeConfigError: (
        "the SuperNode's node config does not fit this run "
        "(no data-path, a site name the run does not list, or a genes-as-rows not true or false)"
    ),
    FeatureMismatchError: "the site's features differ from the requested ones",
    UnknownRankerError: "the requested ranker is not installed at the site",
    PluginLoadError: "the requested ranker's plugin failed to import at the site",
    InvalidParameterError: "the site refused the ranker's parameters",
    InvalidInputError: "the site's data could not be read or was refused by the ranker",
    MemoryError: "the site ran out of memory while ranking",
    ImportError: "a module the ranker needs cannot be imported at the site",
    OSError: "the site could not read its data file",
}

#: the type name sent for moweights' classes (NodeConfigError is private: its public base)
_NAMES: dict[type[BaseException], str] = {
    cls: cls.__name__ for cls in _MESSAGES if issubclass(cls, MoweightsError)
}
_NAMES[NodeConfigError] = InvalidParameterError.__name__


def _builtin_name(cls: type) -> str:
    """The nearest standard built-in exception class of ``cls`` by name, or ``"Error"``."""
    for base in cls.__mro__:
        if vars(builtins).get(base.__name__) is base:
            return "Error" if base in (Exception, BaseException) else base.__name__
    return "Error"


def site_error(exc: BaseException) -> str:
    """What a site tells the server about ``exc``: ``"TypeName: fixed message"``.

    Nothing of the exception's text, notes or own class name is used (see the module
    docstring for the rule); the full error belongs in the site's own log.

    Examples
    --------
    >>> site_error(InvalidInputError("label 'x' has a single row; columns: a, b"))
    "InvalidInputError: the site's data could not be read or was refused by the ranker"
    >>> site_error(type("Plugin_x_Error", (ValueError,), {})("value x"))
    'ValueError: the site could not rank its data'
    """
    for cls in type(exc).__mro__:
        if cls in _MESSAGES:
            return f"{_NAMES.get(cls) or _builtin_name(type(exc))}: {_MESSAGES[cls]}"
    if isinstance(exc, MoweightsError):
        return f"{MoweightsError.__name__}: {GENERIC}"
    return f"{_builtin_name(type(exc))}: {GENERIC}"


_PUBLIC_NAMES = frozenset(
    [*_NAMES.values(), MoweightsError.__name__, "Error"]
    + [n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)]
)
_PUBLIC_MESSAGES = frozenset([*_MESSAGES.values(), GENERIC])


def is_site_error(text: str) -> bool:
    """Whether ``text`` is one that :func:`site_error` can return (so it holds no data).

    The server checks every error a site sends: a site running an older moweights, or
    altered, may still send its exception's text, which must not be passed on.
    """
    name, sep, message = text.partition(": ")
    return bool(sep) and name in _PUBLIC_NAMES and message in _PUBLIC_MESSAGES
