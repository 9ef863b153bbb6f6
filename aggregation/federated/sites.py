"""Sites of a federated ranking: their data, the per-site step, and the checks across sites.

The per-site step loads a site's data where it lives, ranks it and returns only the ranking
(:func:`rank_one_site`, :func:`site_job`); the checks compare what the sites' rankings
say about their features; :func:`split_sites` cuts one table into sites and
:func:`spawn_seeds` gives each site its seed.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, Union

import numpy as np
import pandas as pd

from aggregation._names import format_names, natural_key
from aggregation.ranking import Ranking
from rankers.exceptions import FeatureMismatchError, InvalidInputError, InvalidParameterError
from rankers.validation import check_seed

__all__ = [
    "SiteData",
    "SiteOutcome",
    "check_same_features",
    "load_site",
    "make_ranker",
    "odd_sites",
    "rank_one_site",
    "refuse_path",
    "site_features",
    "site_job",
    "site_sources",
    "spawn_seeds",
    "split_sites",
]

#: what a site's data may be given as: a table, or a loader called at the site (a file:
#: ``moweights.data.SiteFile(path)``, which reads it there)
SiteData = Union[pd.DataFrame, Callable[[], pd.DataFrame]]  # noqa: UP007

#: what to give instead of a path: aggregation computes on in-memory data only
PATH_HINT = (
    "aggregation.federated reads no files: give the site as "
    "moweights.data.SiteFile(path), a loader that reads the file at the site, or rank "
    "paths with moweights.federated.rank_sites, which accepts them"
)


# ------------------------------------------------------------------ one site
def refuse_path(data: Any) -> None:
    """Raise :class:`InvalidInputError` if ``data`` is a path, naming what to use instead."""
    if isinstance(data, (str, os.PathLike)):
        raise InvalidInputError(f"the site is given as a path ({str(data)!r}); {PATH_HINT}")


def load_site(data: SiteData) -> pd.DataFrame:
    """The site's table: the DataFrame itself, or the loader's result (called here)."""
    refuse_path(data)
    if callable(data):
        data = data()
    if not isinstance(data, pd.DataFrame):
        raise InvalidInputError(
            f"site data must be a DataFrame (or a loader giving one), not "
            f"{type(data).__name__}; feature columns are matched across sites by name"
        )
    return data


def make_ranker(ranker: Any, params: Mapping[str, Any] | None) -> Any:
    """An unfitted estimator: from the registry by name, or a clone of the one given."""
    params = dict(params or {})
    if isinstance(ranker, str):
        from rankers import registry

        return registry.get(ranker, **params)
    if not hasattr(ranker, "get_params") or not hasattr(ranker, "fit"):
        raise InvalidParameterError(
            f"ranker must be a registry name or an unfitted scikit-learn style estimator, "
            f"not {type(ranker).__name__}"
        )
    from sklearn.base import clone  # scikit-learn only once a site is ranked

    est = clone(ranker)
    if params:
        est.set_params(**params)
    return est


def site_features(data: pd.DataFrame, target: str | None) -> list[str]:
    bad = [c for c in data.columns if not isinstance(c, str)]
    if bad:
        raise InvalidInputError(
            "site columns must be named by strings to be matched across sites; not: "
            + format_names(bad)
        )
    return sorted((c for c in data.columns if c != target), key=natural_key)


def rank_one_site(
    data: SiteData,
    ranker: Any,
    params: Mapping[str, Any] | None = None,
    target: str | None = None,
    random_state: int | None = None,
    *,
    features: Sequence[str] | None = None,
) -> Ranking:
    """Rank one site's features where the data lives; only the ranking is returned.

    Parameters
    ----------
    data : DataFrame or callable
        The site's table, or a zero-argument callable giving it, called here (a file:
        ``moweights.data.SiteFile(path)``; a path is refused, as aggregation reads no
        files). Column names must be strings.
    ranker : str or estimator
        Registry name (with ``params``) or an unfitted estimator, cloned (never fitted itself).
    params : mapping, optional
        Parameters for the ranker (``set_params`` on the clone when an estimator is given).
    target : str, optional
        Name of the target column: removed from the features and passed to ``fit`` as ``y``.
    random_state : int, optional
        Seed given to the ranker when it has a ``random_state`` parameter set to None; a
        ranker with its own seed keeps it.
    features : sequence of str, optional
        The features to use, in this order; the site must have exactly these (besides the
        target). Default: all its columns in natural sort order of their names.

    Returns
    -------
    Ranking
        Built by ``Ranking.from_ranker`` from the fitted clone.

    Raises
    ------
    FeatureMismatchError
        If ``features`` is given and the site lacks some of them or has others.
    InvalidInputError
        If ``data`` is a path, ``target`` is not a column, or the ranker refuses the data
        (NaN, text columns...).
    """
    frame = load_site(data)
    if target is not None and target not in frame.columns:
        raise InvalidInputError(
            f"target column {target!r} is not in the site's columns "
            f"({format_names(list(frame.columns))})"
        )
    own = site_features(frame, target)
    if features is not None:
        features = list(features)
        missing = sorted(set(features) - set(own), key=natural_key)
        extra = sorted(set(own) - set(features), key=natural_key)
        if missing or extra:
            raise FeatureMismatchError(
                f"the site's features differ: missing {format_names(missing) or 'none'}; "
                f"extra {format_names(extra) or 'none'}",
                missing={"site": missing},
                extra={"site": extra},
            )
        own = features
    est = make_ranker(ranker, params)
    if random_state is not None and est.get_params(deep=False).get("random_state", 0) is None:
        est.set_params(random_state=random_state)
    y = None if target is None else frame[target]
    est.fit(frame[own], y)
    return Ranking.from_ranker(est)


class SiteOutcome(NamedTuple):
    """What the per-site job sends back: a ranking and a row count, or an error message."""

    ranking: Ranking | None
    n_rows: int | None
    error: str | None


def site_job(name, data, ranker, params, target, seed, on_error) -> SiteOutcome:
    try:
        frame = load_site(data)
        ranking = rank_one_site(frame, ranker, params, target, seed)
    except Exception as exc:
        if on_error == "raise":
            if hasattr(exc, "add_note"):  # Python >= 3.11
                exc.add_note(f"while ranking site {name!r}")
            raise
        return SiteOutcome(None, None, f"{type(exc).__name__}: {exc}")
    return SiteOutcome(ranking, len(frame), None)


# ------------------------------------------------------------------ checks shared by the steps
def _feature_differences(
    names: Mapping[str, Sequence[str]],
) -> tuple[list[str], dict[str, tuple[list[str], list[str]]]]:
    """The reference features and, for each site that differs from them, (missing, extra).

    The reference is the set of features present at at least half of the sites, so one odd
    site is reported as the odd one (with two sites, each is missing what the other adds).
    When one feature set is held by more than half of the sites, it is the reference.
    """
    sets = {site: set(feats) for site, feats in names.items()}
    counts = Counter(f for s in sets.values() for f in s)
    ref = {f for f, c in counts.items() if 2 * c >= len(sets)}
    diffs = {
        k: (sorted(ref - s, key=natural_key), sorted(s - ref, key=natural_key))
        for k, s in sets.items()
        if s != ref
    }
    return sorted(ref, key=natural_key), diffs


def _difference(missing: list[str], extra: list[str], named: bool) -> str:
    if named:
        return f"missing {format_names(missing) or 'none'}; extra {format_names(extra) or 'none'}"
    return f"{len(missing)} missing, {len(extra)} extra"


def _mismatch_error(
    n_sites: int, diffs: Mapping[str, tuple[list[str], list[str]]], named: bool, hint: str = ""
) -> FeatureMismatchError:
    lines = [f"  site {k!r}: {_difference(m, e, named)}" for k, (m, e) in diffs.items()]
    return FeatureMismatchError(
        "every site must have the same features (matched by name; the reference is the "
        f"features found at at least half of the {n_sites} sites):\n" + "\n".join(lines) + hint,
        missing={k: m for k, (m, _) in diffs.items()},
        extra={k: e for k, (_, e) in diffs.items()},
    )


def check_same_features(
    names: Mapping[str, Sequence[str]], *, named: bool = True, hint: str = ""
) -> None:
    """Every site must have the same features; list each site's differences at once.

    ``named=False`` gives counts of missing and extra features instead of their names (for
    the Flower server, whose errors travel to logs every participant reads); the
    exception's ``missing`` and ``extra`` attributes hold the names either way.
    """
    _, diffs = _feature_differences(names)
    if diffs:
        raise _mismatch_error(len(names), diffs, named, hint)


def odd_sites(names: Mapping[str, Sequence[str]], *, named: bool = True) -> dict[str, str]:
    """The sites to drop (site -> why) so that the others share one feature set.

    Kept: the sites holding the feature set that more than half of the sites hold. Without
    such a majority no site can be called the odd one (two sites, or two camps): the
    mismatch is raised as :func:`check_same_features` raises it.
    """
    ref, diffs = _feature_differences(names)
    kept = len(names) - len(diffs)
    if not diffs:
        return {}
    if 2 * kept <= len(names):
        raise _mismatch_error(
            len(names),
            diffs,
            named,
            "\nno feature set is held by more than half of the sites, so no site can be "
            "dropped as the odd one",
        )
    return {
        k: f"FeatureMismatchError: dropped, as its features differ from the {len(ref)} that "
        f"{kept} of the {len(names)} sites share: {_difference(m, e, named)}"
        for k, (m, e) in diffs.items()
    }


# ------------------------------------------------------------------ driver
def split_sites(
    X: pd.DataFrame, y: pd.Series | None, column: str
) -> dict[str, tuple[pd.DataFrame, pd.Series | None]]:
    """Split one table into sites by the values of ``column`` (which is then dropped).

    Sites are named by the column's values as strings and listed in natural order of the
    names (``site2`` before ``site10``, ``2`` before ``10``); each keeps its rows in their
    order, with a fresh index. A row without a site value, or two values that print alike
    (``1`` and ``"1"``), is an error rather than a site of its own.

    Parameters
    ----------
    X : DataFrame
        The table, ``column`` among its columns.
    y : Series, optional
        The target, aligned with ``X``'s rows; split alike.
    column : str
        The column naming each row's site.

    Returns
    -------
    dict
        Site name -> (features without ``column``, target or None).

    Raises
    ------
    InvalidInputError
        ``column`` is not a column of ``X``, has missing values, or two of its values turn
        into the same name.

    Examples
    --------
    >>> X = pd.DataFrame({"site": ["b", "a", "b"], "f": [1.0, 2.0, 3.0]})
    >>> {s: part["f"].tolist() for s, (part, _) in split_sites(X, None, "site").items()}
    {'a': [2.0], 'b': [1.0, 3.0]}
    """
    if column not in X.columns:
        raise InvalidInputError(
            f"site column {column!r} is not in the data; its columns are "
            f"{format_names(list(X.columns))}"
        )
    values = X[column]
    n_missing = int(values.isna().sum())
    if n_missing:
        raise InvalidInputError(
            f"site column {column!r} is missing in {n_missing} row(s); every row needs a site"
        )
    keys = values.astype(str).to_numpy()
    names = sorted(set(keys), key=natural_key)
    if len(names) != values.nunique():
        raise InvalidInputError(
            f"site column {column!r} holds values that print alike (e.g. 1 and '1'); site "
            "names must stay distinct when turned into strings"
        )
    features = X.drop(columns=column)
    sites = {}
    for name in names:
        rows = np.flatnonzero(keys == name)
        part = features.iloc[rows].reset_index(drop=True)
        sites[name] = (part, None if y is None else y.iloc[rows].reset_index(drop=True))
    return sites


def site_sources(sites: Any, site_column: str | None) -> dict[str, SiteData]:
    """Site name -> its data, from a mapping or from one table split by ``site_column``."""
    if isinstance(sites, pd.DataFrame):
        if site_column is None:
            raise InvalidParameterError(
                "a single DataFrame needs site_column=... naming the column that tells the "
                "sites apart (or pass a mapping site -> DataFrame or loader)"
            )
        return {name: part for name, (part, _) in split_sites(sites, None, site_column).items()}
    if site_column is not None:
        raise InvalidParameterError("site_column applies only when sites is one DataFrame")
    if not isinstance(sites, Mapping) or not sites:
        raise InvalidParameterError(
            "sites must be a non-empty mapping site -> DataFrame or loader, or one "
            f"DataFrame with site_column; got {type(sites).__name__}"
        )
    pairs = list(sites.items())
    paths = [f"{k!r} ({str(v)!r})" for k, v in pairs if isinstance(v, (str, os.PathLike))]
    if paths:
        raise InvalidInputError(f"sites given as paths: {', '.join(paths)}; {PATH_HINT}")
    bad = [
        f"{k!r} ({type(v).__name__})"
        for k, v in pairs
        if not isinstance(v, pd.DataFrame) and not callable(v)
    ]
    if bad:
        raise InvalidParameterError(
            "each site must be a DataFrame or a zero-argument loader giving one; not: "
            + ", ".join(bad)
        )
    out = {str(k): v for k, v in pairs}
    if len(out) != len(pairs):
        raise InvalidParameterError("site names must stay distinct when turned into strings")
    return out


def spawn_seeds(random_state: Any, n: int) -> list[int | None]:
    """One seed per site, spawned from ``random_state`` by site position (never by worker).

    Child ``i`` of the :class:`~numpy.random.SeedSequence` of ``random_state``
    (:func:`rankers.validation.check_seed`) seeds site ``i``, so results depend neither on
    ``n_jobs`` nor on the backend. None leaves every site unseeded (its ranker keeps its
    own ``random_state``).
    """
    if random_state is None:
        return [None] * n
    return [int(child.generate_state(1)[0]) for child in check_seed(random_state).spawn(n)]
