"""Progress of a run: tqdm bars on a terminal, a line per step in a log, and the callbacks
the library calls advance them with.

Where the output goes decides the form: on a terminal (or in a Jupyter notebook, where
tqdm draws widgets) the steps are bars; anywhere else -- a log file, a pipe, a batch job's
output -- each finished unit of a step is one line on stderr (``rankers 2/3: t_test done
in 0.4 s``), so a long run is never silent in a log and never fills it with bar redraws.
``verbose = 0`` (``-q``) silences both.

The library's long calls (top-k curves, error curves, clustering, per-site ranking) take
``progress``, a callable given the number of units just finished; a bar's ``update`` is
one. Rankers whose ``verbose`` draws a bar (their tags say ``progress``) draw their own,
on a terminal only. Nothing is patched: a bar moves only because it was handed to the call
it counts.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator

from tqdm.auto import tqdm

__all__ = ["Lines", "Progress"]


def _interactive() -> bool:
    """Whether stderr is a terminal, or the code runs in a Jupyter kernel (tqdm.auto
    draws widgets there)."""
    try:
        if sys.stderr.isatty():
            return True
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False
    shell = sys.modules.get("IPython")
    get = getattr(shell, "get_ipython", None)
    return get is not None and type(get()).__name__ == "ZMQInteractiveShell"


def _seconds(dt: float) -> str:
    return f"{dt:.2f} s" if dt < 10 else f"{dt:.0f} s"


class Lines:
    """A step's progress as lines on stderr, with the part of tqdm's interface a run
    uses (``update``, ``set_postfix_str``, ``close``, a context manager).

    A line when the step starts (what it does and how many units) and one per finished
    unit: its number, what it was (the last ``set_postfix_str``) and how long it took.
    """

    def __init__(self, total: int | None = None, desc: str = "", unit: str = "step", **_):
        self.total, self.desc, self.unit = total, desc, unit
        self.n = 0
        self.postfix = ""
        self._last = self._start = time.perf_counter()
        of = f"{total} {unit}{'s' if total != 1 else ''}" if total is not None else "started"
        self._say(f"{desc}: {of}")

    @staticmethod
    def _say(text: str) -> None:
        print(f"[moweights] {text}", file=sys.stderr, flush=True)

    def set_postfix_str(self, text: str = "", refresh: bool = True) -> None:
        self.postfix = str(text)

    def update(self, n: int = 1) -> None:
        now = time.perf_counter()
        self.n += n
        count = f"{self.n}/{self.total}" if self.total is not None else str(self.n)
        what = f" {self.postfix}" if self.postfix else ""
        self._say(f"{self.desc} {count}:{what} done in {_seconds(now - self._last)}")
        self._last = now

    def close(self) -> None:
        """Nothing more to say: every unit had its line."""

    def __enter__(self) -> Lines:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Progress:
    """The progress of one run: off at ``verbose`` 0, else bars on a terminal (or in a
    notebook) and lines elsewhere.

    Parameters
    ----------
    verbose : int
        The run's ``[run] verbose``: 0 silent, 1 or 2 progress (2 also logs each step).
    terminal : bool, optional
        Whether the output is interactive (bars); default: stderr is a terminal or the
        code runs in a notebook.
    """

    def __init__(self, verbose: int, *, terminal: bool | None = None):
        self.verbose = verbose
        if verbose <= 0:
            self.mode = "off"
        else:
            self.mode = "bars" if (_interactive() if terminal is None else terminal) else "lines"

    def bar(self, **kw) -> tqdm | Lines:
        """A step's progress (over rankers, curves, ...): a bar, lines, or a silent bar;
        counting "step"s unless ``unit`` says what (tqdm's own default reads "10 its")."""
        kw.setdefault("unit", "step")
        if self.mode == "lines":
            return Lines(**kw)
        return tqdm(disable=self.mode == "off", dynamic_ncols=True, **kw)

    @property
    def shown(self) -> bool:
        """Whether bars are drawn (a ranker's own bar follows this)."""
        return self.mode == "bars"

    @contextlib.contextmanager
    def tasks(
        self, desc: str, total: int | None, unit: str = "fold"
    ) -> Iterator[Callable[[int], None] | None]:
        """A transient bar for the units of one library call; yields its callback.

        Pass what it yields as the call's ``progress``: a bar's ``update`` when bars are
        shown, else None (the call then reports nothing; in a log the step's own line
        says when it is done).
        """
        if not self.shown:
            yield None
            return
        bar = self.bar(total=total, desc=desc, leave=False, unit=unit)
        try:
            yield bar.update
        finally:
            bar.close()
