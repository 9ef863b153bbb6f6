"""Feature and site names in messages and in natural order (shared by the whole package)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["SHOWN", "format_names", "natural_key"]

#: how many names an error message or a repr lists before "... and k more"
SHOWN = 10


def format_names(names: Iterable[Any], limit: int = SHOWN) -> str:
    """``'a', 'b', ... and k more``: the first ``limit`` names, quoted, for a message."""
    names = list(names)
    shown = ", ".join(repr(n) for n in names[:limit])
    return shown + (f" ... and {len(names) - limit} more" if len(names) > limit else "")


@functools.lru_cache(maxsize=1 << 17)  # a run sorts the same feature names many times
def natural_key(name: str) -> tuple:
    """Sort key putting ``x2`` before ``x10``: digit runs compare as numbers.

    Examples
    --------
    >>> sorted(["x10", "x2", "b", "a1"], key=natural_key)
    ['a1', 'b', 'x2', 'x10']
    """
    # re.split with a capture group alternates text / digits, so keys always compare.
    parts = re.split(r"(\d+)", name)
    return tuple(int(p) if i % 2 else p for i, p in enumerate(parts)), name
