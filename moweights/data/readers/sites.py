"""A federated site's data file, read at the site: :class:`SiteFile`.

:mod:`aggregation.federated` computes on in-memory data only: a site is a DataFrame or a
zero-argument loader called inside the site's job. A site whose data is a file is given
as ``SiteFile(path)``, a small picklable loader that names the file and reads it when
called, so the file is read where the site's job runs (a joblib worker, a Dask worker, the
Flower ClientApp at the site), never by the process that hands out the jobs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from moweights.data.readers.tables import read_table, transpose_table
from rankers.exceptions import InvalidParameterError

__all__ = ["SiteFile"]


class SiteFile:
    """A site's csv, tsv or parquet file, read when called (at the site, not before).

    Give it as a site's data to :func:`aggregation.federated.rank_sites` or
    :func:`~aggregation.federated.rank_one_site` (:func:`moweights.federated.rank_sites`
    turns a path into one). Constructing it reads nothing and checks nothing on disk: the
    file lives where the site's job runs, and a file that is missing or unreadable there is
    that site's error.

    Parameters
    ----------
    path : str or path
        ``.csv``, ``.tsv``/``.tab`` (optionally compressed, e.g. ``.csv.gz``) or
        ``.parquet``, as seen from where the site's job runs.
    transpose : bool, default=False
        The file holds one row per feature (genes as rows): its first column names the
        features (and the target's row, which becomes the target column), every other
        column is a sample (:func:`~moweights.data.readers.transpose_table`).

    Examples
    --------
    >>> site = SiteFile("/data/north.csv")
    >>> site
    SiteFile('/data/north.csv')
    >>> import pickle; pickle.loads(pickle.dumps(site)) == site
    True
    """

    __slots__ = ("path", "transpose")

    def __init__(self, path: str | os.PathLike, *, transpose: bool = False) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise InvalidParameterError(
                f"a site's file is a path (str or os.PathLike), not {type(path).__name__}"
            )
        if not isinstance(transpose, bool):
            raise InvalidParameterError(f"transpose must be True or False, got {transpose!r}")
        self.path = Path(path)
        self.transpose = transpose

    def __call__(self) -> Any:
        """The site's table (a DataFrame, column names as strings), read now."""
        frame = read_table(self.path, what="site data file")
        return transpose_table(frame) if self.transpose else frame

    def __repr__(self) -> str:
        extra = ", transpose=True" if self.transpose else ""
        return f"{type(self).__name__}({str(self.path)!r}{extra})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SiteFile):
            return NotImplemented
        return (self.path, self.transpose) == (other.path, other.transpose)

    def __hash__(self) -> int:
        return hash((self.path, self.transpose))

    def __getstate__(self) -> tuple[Path, bool]:
        return self.path, self.transpose

    def __setstate__(self, state: tuple[Path, bool]) -> None:
        self.path, self.transpose = state
