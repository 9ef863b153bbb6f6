"""The deprecation of module paths that moved: one warning, one removal release.

The regrouping of the packages left re-export modules at the old paths
(``aggregation.stats``, ``moweights.cache``, ...) so that outside code keeps working for one
release; each calls :func:`warn_moved` when imported. Used by both upper packages (the lower
layer holds it, as it holds :mod:`rankers._lazy`).
"""

from __future__ import annotations

import sys
import warnings

__all__ = ["REMOVED_IN", "warn_moved"]

#: the release that deletes the old module paths (the next minor release after 0.1)
REMOVED_IN = "0.2.0"


def warn_moved(old: str, new: str) -> None:
    """Warn, at the import of the old module ``old``, that it moved to ``new``.

    Call it at the top level of the old module. The :class:`DeprecationWarning` points at
    the user's line that reached the old module -- ``import aggregation.stats``,
    ``from aggregation import stats``, ``importlib.import_module(...)`` or an attribute
    access ``aggregation.stats`` served by the package's lazy ``__getattr__`` -- as
    ``warnings.warn(..., stacklevel=2)`` would for a plain import: the import machinery and
    the lazy façade's frames are skipped. Python's default filter then shows it when that
    line is in ``__main__``, pytest in a test, and ``-W error::DeprecationWarning:pkg``
    turns it into an error for the package ``pkg`` that still imports an old path.

    Parameters
    ----------
    old : str
        The old module's dotted name (its ``__name__``).
    new : str
        Where its names live now (a module, or several joined by ", " and " and ").
    """
    message = (
        f"{old} is deprecated and will be removed in moweights {REMOVED_IN}: "
        f"import from {new} instead"
    )
    frame = sys._getframe(2)  # 0: here, 1: the old module, 2: the import machinery
    while frame.f_back is not None and _machinery(frame):
        frame = frame.f_back
    globals_ = frame.f_globals
    warnings.warn_explicit(
        message,
        DeprecationWarning,
        frame.f_code.co_filename,
        frame.f_lineno,
        module=globals_.get("__name__", "<unknown>"),
        registry=globals_.setdefault("__warningregistry__", {}),
    )


def _machinery(frame) -> bool:
    """Whether ``frame`` belongs to importing rather than to the code that asked for it."""
    module = frame.f_globals.get("__name__", "")
    if module == "importlib" or module.startswith("importlib."):
        return True
    if module == "rankers._lazy":
        return True
    # a package's module-level __getattr__ (the lazy façade's wrapper)
    return frame.f_code.co_name == "__getattr__" and frame.f_code.co_filename.endswith(
        "__init__.py"
    )
