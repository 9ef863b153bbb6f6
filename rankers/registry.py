"""The ranker registry: every ranker is reached by name the same way.

Rankers are found through the entry-point group ``moweights.rankers`` (the built-ins
register there through the distribution's own ``pyproject.toml``, exactly as a
third-party package does) and through the :func:`register` decorator for code that is
not installed. A plugin that fails to import is reported, never fatal for the others.

Examples
--------
A third-party package registers its ranker in its own ``pyproject.toml``::

    [project.entry-points."moweights.rankers"]
    my_score = "my_package.scores:MyScoreRanker"

and users get it with ``rankers.get("my_score", **params)``.
"""

from __future__ import annotations

import difflib
import inspect
import warnings
from typing import TYPE_CHECKING

from rankers.exceptions import (
    BrokenPluginWarning,
    InvalidParameterError,
    PluginLoadError,
    UnknownRankerError,
)

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

    import pandas as pd

__all__ = ["ENTRY_POINT_GROUP", "available", "broken", "get", "get_class", "register", "reload"]

ENTRY_POINT_GROUP = "moweights.rankers"

_decorated: dict[str, type] = {}
# name -> entry point, read once (reading entry points imports none of the rankers)
_points: dict[str, EntryPoint] | None = None
# classes loaded so far, and the plugins that failed to load (name -> reason)
_loaded: dict[str, type] = {}
_broken: dict[str, str] = {}


def _normalise(name: str) -> str:
    if not isinstance(name, str):
        raise InvalidParameterError(f"a ranker name must be a string; got {name!r}")
    return name.strip().lower().replace("-", "_").replace(" ", "_")


def _entry_points() -> dict[str, EntryPoint]:
    """The group's entry points by normalised name (the first one wins on a clash)."""
    global _points
    if _points is None:
        from importlib.metadata import entry_points  # read when a ranker is first asked for

        found: dict[str, EntryPoint] = {}
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            found.setdefault(_normalise(ep.name), ep)
        _points = found
    return _points


def _load_one(name: str) -> type | None:
    """The class behind entry point ``name``, imported now; None if it fails (reported)."""
    if name in _loaded:
        return _loaded[name]
    if name in _broken:
        return None
    ep = _entry_points()[name]
    try:
        cls = ep.load()
    except Exception as exc:  # a broken plugin must not take the others down
        reason, message = f"{ep.value}: {type(exc).__name__}: {exc}", f"failed to load: {exc}"
    else:
        if inspect.isclass(cls) and hasattr(cls, "fit"):
            _loaded[name] = cls
            return cls
        reason, message = f"{ep.value}: not an estimator class", "is not an estimator class"
    _broken[name] = reason
    warnings.warn(
        f"ranker plugin {name!r} ({ep.value}) {message}", BrokenPluginWarning, stacklevel=4
    )
    return None


def _all() -> dict[str, type]:
    """Every ranker that loads, by name (imports every plugin)."""
    merged = {name: cls for name in _entry_points() if (cls := _load_one(name)) is not None}
    merged.update(_decorated)
    return merged


def reload() -> None:
    """Forget what was loaded so entry points are read again (after installing a plugin)."""
    global _points
    _points = None
    _loaded.clear()
    _broken.clear()


def register(name: str | None = None, *, replace: bool = False):
    """Class decorator that registers a ranker under ``name`` for this process.

    Parameters
    ----------
    name : str, optional
        Registry name; defaults to the class attribute ``name``.
    replace : bool, default=False
        Allow replacing a ranker already registered under the same name.

    Examples
    --------
    >>> from rankers import BaseRanker, register
    >>> @register("column_mean")
    ... class ColumnMean(BaseRanker):
    ...     def _score(self, X, y, context):
    ...         return X.mean(axis=0)
    """

    def decorate(cls: type) -> type:
        key = _normalise(name or getattr(cls, "name", None) or cls.__name__)
        existing = _decorated.get(key)
        if existing is None and key in _entry_points():
            existing = _load_one(key)
        if existing is not None and existing is not cls and not replace:
            raise InvalidParameterError(
                f"a ranker named {key!r} is already registered "
                f"({existing.__module__}.{existing.__qualname__}); pass replace=True to replace it"
            )
        if getattr(cls, "name", None) is None:
            cls.name = key
        _decorated[key] = cls
        return cls

    return decorate


def get_class(name: str) -> type:
    """The ranker class registered under ``name``.

    Raises
    ------
    UnknownRankerError
        When no ranker has that name; the message lists close matches.
    PluginLoadError
        When the ranker is installed but failed to import.
    """
    key = _normalise(name)
    if key in _decorated:
        return _decorated[key]
    if key in _entry_points():
        cls = _load_one(key)  # this plugin only: the others stay unimported
        if cls is None:
            raise PluginLoadError(f"ranker {key!r} is installed but failed to load: {_broken[key]}")
        return cls
    names = sorted((set(_entry_points()) - set(_broken)) | set(_decorated))
    close = difflib.get_close_matches(key, names, n=3, cutoff=0.6)
    raise UnknownRankerError(name, close_matches=close, available=names)


def get(name: str, **params):
    """An unfitted ranker, by registry name, with its parameters checked.

    Parameters
    ----------
    name : str
        Registry name, e.g. ``"laplacian"`` (case and ``-``/``_`` do not matter).
    **params
        Parameters of the ranker.

    Returns
    -------
    BaseRanker
        A new, unfitted estimator.

    Raises
    ------
    UnknownRankerError
        Unknown name (with close matches).
    InvalidParameterError
        A parameter the ranker does not have, or a value outside its valid range.
    """
    cls = get_class(name)
    param_names = getattr(cls, "_get_param_names", None)  # scikit-learn's own introspection
    if param_names is not None:
        valid = sorted(param_names())
        unknown = sorted(set(params) - set(valid))
        if unknown:
            raise InvalidParameterError(
                f"ranker {_normalise(name)!r} has no parameter(s) {', '.join(map(repr, unknown))}; "
                f"valid parameters: {', '.join(valid)}"
            )
    try:
        est = cls(**params)
    except TypeError as exc:
        raise InvalidParameterError(f"ranker {_normalise(name)!r}: {exc}") from None
    check = getattr(est, "validate_params", None)
    if callable(check):
        check()
    return est


def _summary(cls: type) -> str:
    doc = inspect.getdoc(cls) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def _default_tags(cls: type) -> tuple[bool, str]:
    """``requires_y`` and ``target_kind`` of a default instance's tags (class attributes
    for a class that needs constructor arguments)."""
    from rankers.tags import ranker_tags

    try:
        tags = ranker_tags(cls())
    except Exception:  # a plugin whose class cannot be built without arguments
        return bool(getattr(cls, "requires_y", False)), getattr(cls, "target_kind", "unsupervised")
    return tags.requires_y, tags.target_kind


def available() -> pd.DataFrame:
    """The table of registered rankers, one row each, sorted by name.

    Imports every ranker (and so scikit-learn and pandas).

    Returns
    -------
    DataFrame
        Columns ``name``, ``class``, ``requires_y``, ``target_kind`` (from the tags of a
        ranker with its default parameters, :func:`rankers.ranker_tags`), ``summary``,
        ``reference`` and ``params`` (the constructor's parameters with their defaults,
        e.g. ``"n_neighbors=5, metric='cosine'"``; ``k`` left out). Plugins that failed
        to load are listed by :func:`broken`.
    """
    import pandas as pd

    rows = []
    for key, cls in sorted(_all().items()):
        requires_y, target_kind = _default_tags(cls)
        rows.append(
            {
                "name": key,
                "class": f"{cls.__module__}.{cls.__qualname__}",
                "requires_y": requires_y,
                "target_kind": target_kind,
                "summary": _summary(cls),
                "reference": getattr(cls, "reference", ""),
                "params": _params(cls),
            }
        )
    columns = ["name", "class", "requires_y", "target_kind", "summary", "reference", "params"]
    return pd.DataFrame(rows, columns=columns)


def _params(cls) -> str:
    """``name=default, ...`` of a ranker's constructor (``k`` left out)."""
    import inspect

    try:
        signature = inspect.signature(cls.__init__)
    except (TypeError, ValueError):
        return ""
    shown = []
    for p in signature.parameters.values():
        if p.name in ("self", "k") or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        shown.append(p.name if p.default is p.empty else f"{p.name}={p.default!r}")
    return ", ".join(shown)


def broken() -> dict[str, str]:
    """Plugins that are installed but failed to load: name -> reason (loads every plugin)."""
    _all()
    return dict(_broken)
