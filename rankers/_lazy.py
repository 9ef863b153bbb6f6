"""Package façades that import their modules on first access (PEP 562).

``import rankers`` or ``import aggregation`` then costs nothing: pandas, scipy and
scikit-learn are imported with the first name that needs them, and a static reader still
finds every name in the package's ``__all__``. Used by the façades of both packages (the
lower layer holds it).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["attach"]


def attach(
    package: str,
    names: Mapping[str, str],
    submodules: Iterable[str] = (),
    public: Iterable[str] = (),
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    names : mapping
        Public name -> the module (absolute name) that defines it.
    submodules : iterable of str
        Modules of the package reachable as attributes (``package.name``).
    public : iterable of str
        Further names ``__dir__`` lists (the package's ``__all__``).
    """
    names = dict(names)
    submodules = frozenset(submodules)
    listed = sorted({*names, *submodules, *public})

    def __getattr__(name: str) -> Any:
        if name in names:
            value = getattr(importlib.import_module(names[name]), name)
        elif name in submodules:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        importlib.import_module(package).__dict__[name] = value  # later accesses are plain
        return value

    def __dir__() -> list[str]:
        return listed

    return __getattr__, __dir__
