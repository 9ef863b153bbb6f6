"""Package façades that import their modules on first access (PEP 562).

``import rankers`` or ``import aggregation`` then costs nothing: pandas, scipy and
scikit-learn are imported with the first name that needs them. A façade writes each public
name once, in one table (submodule -> the public names it defines); :func:`attach` derives
the package's ``__all__``, its ``__getattr__`` and its ``__dir__`` from it::

    _EXPORTS = {"ranking": ("GenericRanking", "Ranking"), "combine": ("borda", ...)}
    _getattr, _dir, __all__ = attach(__name__, _EXPORTS, submodules=("plots",))

    def __getattr__(name: str) -> Any:
        return _getattr(name)

The ``def`` (rather than assigning ``_getattr`` to ``__getattr__``) is what type checkers
recognise as a module ``__getattr__``: every lazily loaded name then reads as ``Any``
instead of as an error. Used by the façades of all three packages (the lowest layer holds
it).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["attach"]


def attach(
    package: str,
    exports: Mapping[str, Iterable[str]],
    submodules: Iterable[str] = (),
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``__getattr__``, ``__dir__`` and ``__all__`` of ``package``, from one table.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    exports : mapping
        Submodule (its name inside ``package``) -> the public names it defines. These
        names are the package's ``__all__`` (sorted); each is imported from its submodule
        on first access, and each submodule is reachable as an attribute.
    submodules : iterable of str
        Further submodules reachable as attributes (``package.name``) and listed by
        ``dir``, that export no name of their own to the package.

    Returns
    -------
    __getattr__ : callable
    __dir__ : callable
    __all__ : list of str
    """
    names: dict[str, str] = {}
    for module, defined in exports.items():
        for name in defined:
            if name in names:
                raise ValueError(f"{package}: {name!r} is listed under two submodules")
            names[name] = f"{package}.{module}"
    reachable = frozenset({*exports, *submodules})
    public = sorted(names)
    listed = sorted({*names, *exports, *submodules})

    def __getattr__(name: str) -> Any:
        if name in names:
            value = getattr(importlib.import_module(names[name]), name)
        elif name in reachable:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        importlib.import_module(package).__dict__[name] = value  # later accesses are plain
        return value

    def __dir__() -> list[str]:
        return list(listed)

    return __getattr__, __dir__, public
