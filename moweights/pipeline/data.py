"""The data of a run: one data set, or one per site, as ``{name: (X, y)}``; their fingerprints."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd

import rankers
from aggregation.federated.sites import split_sites
from moweights.config import RunConfig
from moweights.data import load_dataset, log_transform, prepare_table, read_file, subsample

__all__ = ["fingerprint", "is_classes", "load_data", "load_units", "prepare_units"]


def _prepare(X: pd.DataFrame, y, drop) -> tuple[pd.DataFrame, pd.Series | None]:
    missing = [c for c in drop if c not in X.columns]
    if missing:
        raise rankers.InvalidInputError(f"[data].drop names columns the data lacks: {missing}")
    return X.drop(columns=list(drop)), y


def prepare_units(config: RunConfig, units: dict) -> tuple[dict, list[str]]:
    """Apply ``[data]``'s transform and missing / categorical options to every unit; the
    steps taken.

    Under the defaults ("error") a table with gaps or text columns stops the run with the
    columns named and the option that handles them. ``transform`` (a log of counts) comes
    first, on the numeric columns as read (:func:`moweights.data.transform.log_transform`).
    """
    data = config.data
    out, notes = {}, []
    for name, (X, y) in units.items():
        try:
            X, logged = log_transform(X, data.get("transform") or "none")
            prepared = prepare_table(X, y, missing=data.missing, categorical=data.categorical)
        except rankers.InvalidInputError as exc:
            where = f"site {name!r}: " if len(units) > 1 else ""
            raise rankers.InvalidInputError(f"{where}{exc} ([data] options)") from None
        out[name] = (prepared.X, prepared.y)
        where = f"{name}: " if len(units) > 1 else ""
        steps = ([logged] if logged else []) + prepared.steps
        notes += [f"data {where}{step}" for step in steps]
    return out, notes


def load_units(config: RunConfig) -> dict[str, tuple[pd.DataFrame, pd.Series | None]]:
    """The data of a run: ``{name: (X, y)}``, one entry per site (one for a single data set)."""
    seed = config.random_state
    if config.sites:
        units = {}
        for site in config.sites:
            if site.builtin is not None:
                X, y = load_dataset(site.builtin, random_state=seed)
            else:
                X, y = read_file(site.path, target=site.target)
            if site.rows is not None:
                start, stop = site.rows
                X = X.iloc[start:stop].reset_index(drop=True)
                y = None if y is None else y.iloc[start:stop].reset_index(drop=True)
                if len(X) == 0:
                    raise rankers.InvalidInputError(
                        f"site {site.name!r}: rows {list(site.rows)} select no rows"
                    )
            units[site.name] = _prepare(X, y, config.data.drop)
        return units
    data = config.data
    if data.builtin is not None:
        X, y = load_dataset(data.builtin, data.n_samples, random_state=seed)
        name = data.builtin
    else:
        X, y = read_file(data.path, target=data.target, transpose=bool(data.transpose))
        X, y = subsample(X, y, data.n_samples, seed)
        name = Path(data.path).name.split(".")[0]
    if data.site_column is not None:
        sites = split_sites(X, y, data.site_column)
        return {s: _prepare(Xs, ys, data.drop) for s, (Xs, ys) in sites.items()}
    return {name: _prepare(X, y, data.drop)}


def load_data(config: RunConfig) -> tuple[pd.DataFrame, pd.Series | None]:
    """The data set named by a single-data configuration, as (X, y)."""
    return next(iter(prepare_units(config, load_units(config))[0].values()))


def is_classes(y) -> bool:
    """Whether ``y`` is a class label (binary or multiclass)."""
    from sklearn.utils.multiclass import type_of_target

    return y is not None and type_of_target(np.asarray(y)) in ("binary", "multiclass")


def fingerprint(X: pd.DataFrame, y) -> str:
    """A hash of the data (shape, column names and dtypes, values, target): part of every
    cache key.

    The numeric columns are hashed as one block of bytes per dtype (column by column,
    little-endian: the same on every machine), the others (text, categories, dates,
    nullable columns) by pandas' seeded ``hash_pandas_object``; nothing is hashed one
    Series at a time, which at 20,000 columns took a second. Equal tables (as read from
    the same file) hash equal; any change of a value, a name, a dtype or the column order
    changes the hash.
    """
    h = hashlib.blake2b(digest_size=32)
    h.update(repr(X.shape).encode())
    h.update("\x1f".join(map(str, X.columns)).encode())
    h.update(b"\x1e")
    dtypes = list(X.dtypes)
    h.update("\x1f".join(map(str, dtypes)).encode())
    numeric = np.array([isinstance(d, np.dtype) and d.kind in "biufc" for d in dtypes], bool)
    positions = np.flatnonzero(numeric)
    kinds = np.array(dtypes, dtype=object)[positions]
    for dtype in dict.fromkeys(kinds):
        where = positions[kinds == dtype]
        part = X if len(where) == X.shape[1] else X.iloc[:, where]
        block = part.to_numpy(dtype=dtype).T  # a column per row: C order as pandas stores it
        h.update(np.ascontiguousarray(block, dtype=dtype.newbyteorder("<")))
    if not numeric.all():
        other = X.iloc[:, np.flatnonzero(~numeric)]
        h.update(pd.util.hash_pandas_object(other, index=False).to_numpy())
    if y is not None:
        h.update(pd.util.hash_pandas_object(pd.Series(np.asarray(y)), index=False).to_numpy())
    return h.hexdigest()
