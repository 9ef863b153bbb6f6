"""Progress of a run: tqdm bars, and the callbacks the library calls advance them with.

The library's long calls (top-k curves, error curves, clustering, per-site ranking) take
``progress``, a callable given the number of units just finished; a bar's ``update`` is
one. Rankers whose ``verbose`` draws a bar (their tags say ``progress``) draw their own.
Nothing is patched: a bar moves only because it was handed to the call it counts.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator

from tqdm.auto import tqdm

__all__ = ["Progress"]


class Progress:
    """tqdm bars: off at verbose 0, on a terminal at 1, always at 2."""

    def __init__(self, verbose: int):
        self.disable = False if verbose >= 2 else (None if verbose == 1 else True)
        self.verbose = verbose

    def bar(self, **kw) -> tqdm:
        """A bar (a step over rankers, curves, ...); a disabled one when bars are off."""
        return tqdm(disable=self.disable, dynamic_ncols=True, **kw)

    @property
    def shown(self) -> bool:
        """Whether bars are drawn (verbose 2, or verbose 1 on a terminal)."""
        return self.disable is False or (self.disable is None and sys.stderr.isatty())

    @contextlib.contextmanager
    def tasks(
        self, desc: str, total: int | None, unit: str = "fold"
    ) -> Iterator[Callable[[int], None] | None]:
        """A transient bar for the units of one library call; yields its callback.

        Pass what it yields as the call's ``progress``: a bar's ``update`` when bars are
        shown, else None (the call then reports nothing).
        """
        if not self.shown:
            yield None
            return
        bar = self.bar(total=total, desc=desc, leave=False, unit=unit)
        try:
            yield bar.update
        finally:
            bar.close()
