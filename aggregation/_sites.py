"""The per-site step of federated ranking: load a site's data where it lives, rank it, and
return only the ranking (private to the aggregation package; see aggregation.federated)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Union

import numpy as np
import pandas as pd
from sklearn.base import clone

from aggregation.ranking import Ranking, _fmt, _natural_key
from rankers.exceptions import FeatureMismatchError, InvalidInputError, InvalidParameterError

SiteData = Union[pd.DataFrame, str, os.PathLike, Callable[[], pd.DataFrame]]  # noqa: UP007


# ------------------------------------------------------------------ one site
def _read_table(path: Path) -> pd.DataFrame:
    suffixes = [s.lower() for s in path.suffixes]
    if ".parquet" in suffixes:
        frame = pd.read_parquet(path)
    elif ".tsv" in suffixes or ".tab" in suffixes:
        frame = pd.read_csv(path, sep="\t")
    elif ".csv" in suffixes:
        frame = pd.read_csv(path)
    else:
        raise InvalidInputError(
            f"cannot read {path.name}: use .csv, .tsv (optionally compressed, e.g. .csv.gz) "
            "or .parquet"
        )
    frame.columns = [str(c) for c in frame.columns]
    return frame


def _load_site(data: SiteData) -> pd.DataFrame:
    """The site's table: the DataFrame itself, a file read here, or the loader's result."""
    if isinstance(data, (str, os.PathLike)):
        path = Path(data)
        if not path.is_file():
            raise InvalidInputError(f"site data file not found: {path}")
        data = _read_table(path)
    elif callable(data):
        data = data()
    if not isinstance(data, pd.DataFrame):
        raise InvalidInputError(
            f"site data must be a DataFrame (or a path or loader giving one), not "
            f"{type(data).__name__}; feature columns are matched across sites by name"
        )
    return data


def _make_ranker(ranker: Any, params: Mapping[str, Any] | None) -> Any:
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
    est = clone(ranker)
    if params:
        est.set_params(**params)
    return est


def _features(data: pd.DataFrame, target: str | None) -> list[str]:
    bad = [c for c in data.columns if not isinstance(c, str)]
    if bad:
        raise InvalidInputError(
            f"site columns must be named by strings to be matched across sites; not: {_fmt(bad)}"
        )
    return sorted((c for c in data.columns if c != target), key=_natural_key)


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
    data : DataFrame, path or callable
        The site's table; a csv/tsv/parquet path is read here, a zero-argument callable is
        called here. Column names must be strings.
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
        If ``target`` is not a column, or the ranker refuses the data (NaN, text columns...).
    """
    frame = _load_site(data)
    if target is not None and target not in frame.columns:
        raise InvalidInputError(
            f"target column {target!r} is not in the site's columns ({_fmt(list(frame.columns))})"
        )
    own = _features(frame, target)
    if features is not None:
        features = list(features)
        missing = sorted(set(features) - set(own), key=_natural_key)
        extra = sorted(set(own) - set(features), key=_natural_key)
        if missing or extra:
            raise FeatureMismatchError(
                f"the site's features differ: missing {_fmt(missing) or 'none'}; "
                f"extra {_fmt(extra) or 'none'}",
                missing={"site": missing},
                extra={"site": extra},
            )
        own = features
    est = _make_ranker(ranker, params)
    if random_state is not None and est.get_params(deep=False).get("random_state", 0) is None:
        est.set_params(random_state=random_state)
    y = None if target is None else frame[target]
    est.fit(frame[own], y)
    return Ranking.from_ranker(est)


class _SiteOutcome(NamedTuple):
    """What the per-site job sends back: a ranking and a row count, or an error message."""

    ranking: Ranking | None
    n_rows: int | None
    error: str | None


def _site_job(name, data, ranker, params, target, seed, on_error) -> _SiteOutcome:
    try:
        frame = _load_site(data)
        ranking = rank_one_site(frame, ranker, params, target, seed)
    except Exception as exc:
        if on_error == "raise":
            if hasattr(exc, "add_note"):  # Python >= 3.11
                exc.add_note(f"while ranking site {name!r}")
            raise
        return _SiteOutcome(None, None, f"{type(exc).__name__}: {exc}")
    return _SiteOutcome(ranking, len(frame), None)


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
        k: (sorted(ref - s, key=_natural_key), sorted(s - ref, key=_natural_key))
        for k, s in sets.items()
        if s != ref
    }
    return sorted(ref, key=_natural_key), diffs


def _difference(missing: list[str], extra: list[str], named: bool) -> str:
    if named:
        return f"missing {_fmt(missing) or 'none'}; extra {_fmt(extra) or 'none'}"
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


def _check_same_features(
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


def _odd_sites(names: Mapping[str, Sequence[str]], *, named: bool = True) -> dict[str, str]:
    """The sites to drop (site -> why) so that the others share one feature set.

    Kept: the sites holding the feature set that more than half of the sites hold. Without
    such a majority no site can be called the odd one (two sites, or two camps): the
    mismatch is raised as ``_check_same_features`` raises it.
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
def _site_sources(sites: Any, site_column: str | None) -> dict[str, SiteData]:
    if isinstance(sites, pd.DataFrame):
        if site_column is None:
            raise InvalidParameterError(
                "a single DataFrame needs site_column=... naming the column that tells the "
                "sites apart (or pass a mapping site -> DataFrame or path)"
            )
        if site_column not in sites.columns:
            raise InvalidInputError(f"site_column {site_column!r} is not a column of sites")
        n_missing = int(sites[site_column].isna().sum())
        if n_missing:
            raise InvalidInputError(f"site_column {site_column!r} is missing in {n_missing} row(s)")
        groups = sites.groupby(site_column, sort=True, observed=True)
        pairs = [(k, g.drop(columns=site_column)) for k, g in groups]
    else:
        if site_column is not None:
            raise InvalidParameterError("site_column applies only when sites is one DataFrame")
        if not isinstance(sites, Mapping) or not sites:
            raise InvalidParameterError(
                "sites must be a non-empty mapping site -> DataFrame, path or loader, or one "
                f"DataFrame with site_column; got {type(sites).__name__}"
            )
        pairs = list(sites.items())
        bad = [
            f"{k!r} ({type(v).__name__})"
            for k, v in pairs
            if not isinstance(v, (pd.DataFrame, str, os.PathLike)) and not callable(v)
        ]
        if bad:
            raise InvalidParameterError(
                "each site must be a DataFrame, a path (csv/tsv/parquet) or a loader; not: "
                + ", ".join(bad)
            )
    out = {str(k): v for k, v in pairs}
    if len(out) != len(pairs):
        raise InvalidParameterError("site names must stay distinct when turned into strings")
    return out


def _site_seeds(random_state: Any, n: int) -> list[int | None]:
    """One seed per site, spawned from ``random_state`` by site position (never by worker)."""
    if random_state is None:
        return [None] * n
    if isinstance(random_state, np.random.SeedSequence):
        seq = random_state
    elif isinstance(random_state, np.random.Generator):
        seq = np.random.SeedSequence(int(random_state.integers(2**63)))
    elif (
        isinstance(random_state, (int, np.integer))
        and not isinstance(random_state, bool)
        and random_state >= 0
    ):
        seq = np.random.SeedSequence(int(random_state))
    else:
        raise InvalidParameterError(
            "random_state must be None, a non-negative int, a numpy Generator or SeedSequence; "
            f"got {random_state!r}"
        )
    return [int(child.generate_state(1)[0]) for child in seq.spawn(n)]
