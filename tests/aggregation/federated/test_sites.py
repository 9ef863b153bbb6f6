"""One table split into sites (split_sites): one home, used by rank_sites and by moweights'
data loading alike (moweights.pipeline.data; a site's file is read by moweights.data.readers:
tests/moweights/data/readers)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import moweights.pipeline.data
from aggregation.federated import rank_sites, split_sites
from aggregation.federated.sites import spawn_seeds
from rankers.exceptions import InvalidInputError, InvalidParameterError


def _table(sites):
    rng = np.random.default_rng(0)
    n = len(sites)
    return pd.DataFrame({"site": sites, "a": rng.normal(size=n), "b": rng.normal(size=n)})


# ------------------------------------------------------------------ split_sites
def test_sites_are_named_by_their_values_in_natural_order():
    X = _table(["s10", "s2", "s10", "s1", "s2"])
    y = pd.Series([0, 1, 0, 1, 1], name="target")
    sites = split_sites(X, y, "site")
    assert list(sites) == ["s1", "s2", "s10"]  # not "s1", "s10", "s2"
    part, target = sites["s10"]
    assert list(part.columns) == ["a", "b"]
    assert part["a"].tolist() == X["a"].iloc[[0, 2]].tolist()  # rows keep their order
    assert part.index.tolist() == [0, 1] and target.index.tolist() == [0, 1]
    assert target.tolist() == [0, 0]
    numbers = split_sites(_table([10, 2, 1]), None, "site")
    assert list(numbers) == ["1", "2", "10"] and numbers["1"][1] is None


def test_a_row_without_a_site_is_refused_not_a_site_named_nan():
    X = _table(["a", None, "b", np.nan])
    with pytest.raises(InvalidInputError, match=r"'site' is missing in 2 row\(s\)"):
        split_sites(X, None, "site")


def test_values_that_print_alike_are_refused():
    X = _table([1, "1", 2])
    with pytest.raises(InvalidInputError, match="print alike"):
        split_sites(X, None, "site")


def test_a_missing_column_is_named_with_the_columns_there_are():
    with pytest.raises(InvalidInputError, match=r"'hospital' is not in the data.*'site', 'a'"):
        split_sites(_table(["a"]), None, "hospital")


def test_moweights_and_rank_sites_split_the_same_way():
    assert moweights.pipeline.data.split_sites is split_sites
    X = _table(["s10", "s2"] * 15 + ["s1"] * 10)
    res = rank_sites(X, "variance", site_column="site")
    assert list(res.rankings) == ["s1", "s2", "s10"]
    assert res.sizes == {s: len(part) for s, (part, _) in split_sites(X, None, "site").items()}
    with pytest.raises(InvalidInputError, match="missing in 1 row"):
        rank_sites(_table(["a", None]), "variance", site_column="site")


def test_site_seeds_follow_the_site_positions():
    assert spawn_seeds(None, 3) == [None, None, None]
    children = np.random.SeedSequence(11).spawn(2)
    assert spawn_seeds(11, 2) == [int(c.generate_state(1)[0]) for c in children]
    assert spawn_seeds(np.random.SeedSequence(11), 2) == spawn_seeds(11, 2)
    with pytest.raises(InvalidParameterError, match="random_state"):
        spawn_seeds(True, 2)
