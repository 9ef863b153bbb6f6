"""Tests of aggregation.federated: per-site ranking, aggregation of rankings only, hierarchy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from joblib import parallel_config

import aggregation.federated.rank as rank_module
from aggregation import combine
from aggregation.compare import pairwise
from aggregation.federated import (
    SiteRankings,
    aggregate_hierarchy,
    aggregate_rankings,
    rank_one_site,
    rank_sites,
)
from aggregation.federated.sites import site_job
from aggregation.ranking import GenericRanking, Ranking
from rankers.exceptions import (
    FeatureMismatchError,
    InvalidInputError,
    InvalidParameterError,
    UnknownRankerError,
)

FEATURES = ["f1", "f2", "f3", "f10"]  # natural order: f1, f2, f3, f10


class DataFileError(InvalidInputError):
    """A stand-in of the application's reader error (moweights.errors, a layer above)."""


def _site(stds, m=40, seed=0, target=False) -> pd.DataFrame:
    """Gaussian columns with the given standard deviations (so a known variance order)."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(m, len(stds))) * stds, columns=FEATURES[: len(stds)])
    if target:
        frame["y"] = (frame["f1"] + 0.3 * rng.normal(size=m) > 0).astype(int)
    return frame


def _variances(frame: pd.DataFrame) -> Ranking:
    """Independent expectation of the variance ranker: numpy variances, natural name order."""
    cols = [c for c in FEATURES if c in frame.columns]
    return Ranking.from_scores(frame[cols].to_numpy().var(axis=0), names=cols)


# ------------------------------------------------------------------ the basic run
def test_variance_sites_match_an_independent_computation():
    sites = {
        "north": _site([4, 3, 2, 1], m=40, seed=1),
        "south": _site([4, 3, 1, 2], m=25, seed=2),
        "east": _site([3, 4, 2, 1], m=30, seed=3),
    }
    res = rank_sites(sites, "variance", aggregate=("generic", "mean_rank", "borda"))
    assert isinstance(res, SiteRankings)
    assert list(res.rankings) == ["north", "south", "east"]
    for s, frame in sites.items():
        expected = _variances(frame)
        assert res.rankings[s].names == ("f1", "f2", "f3", "f10")
        np.testing.assert_allclose(res.rankings[s].scores, expected.scores, rtol=1e-12)
        assert res.rankings[s].order == expected.order
    inputs = [_variances(f) for f in sites.values()]
    assert res.aggregated["generic"] == combine.generic(inputs)
    assert res.aggregated["mean_rank"] == combine.mean_rank(inputs)
    assert res.aggregated["borda"] == combine.borda(inputs)
    # by hand: north f1>f2>f3>f10, south f1>f2>f10>f3, east f2>f1>f3>f10
    assert [r.order for r in res.rankings.values()] == [
        ["f1", "f2", "f3", "f10"],
        ["f1", "f2", "f10", "f3"],
        ["f2", "f1", "f3", "f10"],
    ]
    assert str(res.generic) == "{f1,f2} > {f3,f10}"
    assert res.s == 2 and res.compatible is True
    assert res.sizes == {"north": 40, "south": 25, "east": 30}
    assert res.failed == {}
    assert res.ranker == "variance"
    # north/south: {f1}{f2}{f3,f10}; north/east: {f1,f2}{f3}{f10}; south/east: {f1,f2}{f3,f10}
    np.testing.assert_array_equal(
        res.similarity["s_measure"].to_numpy(), [[4, 3, 3], [3, 4, 2], [3, 2, 4]]
    )
    expected_rho = pairwise(inputs, "spearman", labels=list(sites))
    pd.testing.assert_frame_equal(res.similarity["spearman"], expected_rho)


def test_columns_are_aligned_by_name_whatever_their_order():
    rng = np.random.default_rng(5)
    base = {f"s{i}": _site([4, 3, 2, 1], seed=i) for i in range(3)}
    shuffled = {s: f[list(rng.permutation(f.columns))] for s, f in base.items()}
    assert any(list(f.columns) != list(base[s].columns) for s, f in shuffled.items())
    # urelief is randomised: equal results mean the same columns met the same seed
    a = rank_sites(base, "urelief", {"n_neighbors": 5}, random_state=3)
    b = rank_sites(shuffled, "urelief", {"n_neighbors": 5}, random_state=3)
    for s in base:
        assert a.rankings[s].names == ("f1", "f2", "f3", "f10")
        np.testing.assert_array_equal(a.rankings[s].scores, b.rankings[s].scores)
    assert a.aggregated["mean_rank"] == b.aggregated["mean_rank"]


def test_feature_mismatch_lists_every_site_before_any_ranking():
    class Exploding:
        """Fails on fit: if ranking ran before the check, this error would surface."""

        def get_params(self, deep=True):
            return {}

        def set_params(self, **p):
            return self

        def fit(self, X, y=None):
            raise RuntimeError("ranked before the feature check")

    sites = {
        "a": _site([4, 3, 2, 1]),
        "b": _site([4, 3, 2, 1]).drop(columns="f2"),
        "c": _site([4, 3, 2, 1]).assign(z=1.0),
        "d": _site([4, 3, 2, 1]).rename(columns={"f3": "g3"}),
        "e": _site([4, 3, 2, 1]),
    }
    with pytest.raises(FeatureMismatchError) as info:
        rank_sites(sites, Exploding(), on_error="raise")
    err = info.value
    assert err.missing == {"b": ["f2"], "c": [], "d": ["f3"]}
    assert err.extra == {"b": [], "c": ["z"], "d": ["g3"]}
    text = str(err)
    assert "site 'b': missing 'f2'; extra none" in text
    assert "site 'c': missing none; extra 'z'" in text
    assert "site 'd': missing 'f3'; extra 'g3'" in text
    assert "'a'" not in text and "'e'" not in text


def test_on_mismatch_drop_keeps_the_sites_that_share_the_majority_feature_set():
    sites = {f"s{i}": _site([4, 3, 2, 1], seed=i) for i in range(3)}
    sites["extra"] = _site([4, 3, 2, 1], seed=3).assign(z=np.arange(40.0))  # a frame site
    short = _site([4, 3, 2, 1], seed=4).drop(columns="f2")
    sites["short"] = lambda: short  # a loader site: known only from its ranking
    res = rank_sites(sites, "variance", on_mismatch="drop")
    kept = {s: sites[s] for s in ("s0", "s1", "s2")}
    assert list(res.rankings) == ["s0", "s1", "s2"]
    assert res.aggregated == rank_sites(kept, "variance").aggregated
    assert res.aggregated["mean_rank"] == combine.mean_rank([_variances(f) for f in kept.values()])
    assert list(res.similarity["s_measure"].index) == ["s0", "s1", "s2"]
    # the dropped sites are named, with their differences (this is the local, one-process API)
    assert list(res.failed) == ["extra", "short"]
    assert res.failed["extra"].startswith("FeatureMismatchError: dropped")
    assert "missing none; extra 'z'" in res.failed["extra"]
    assert "missing 'f2'; extra none" in res.failed["short"]
    assert "3 of the 5 sites" in res.failed["short"]
    assert res.hierarchy({"all": list(sites)}).global_ranking == res.generic
    # the default still stops every site, naming the differences
    with pytest.raises(FeatureMismatchError, match="site 'extra': missing none; extra 'z'"):
        rank_sites(sites, "variance")


def test_on_mismatch_drop_needs_a_feature_set_held_by_most_sites():
    # two sites: neither is the odd one; four sites split two against two: no majority
    for sites in (
        {"a": _site([3, 2, 1]), "b": _site([3, 2, 1]).assign(z=np.arange(40.0))},
        {
            "a": _site([3, 2, 1]),
            "b": _site([3, 2, 1]),
            "c": _site([3, 2]),
            "d": _site([3, 2]),
        },
    ):
        with pytest.raises(FeatureMismatchError, match="more than half of the sites"):
            rank_sites(sites, "variance", on_mismatch="drop")
    with pytest.raises(InvalidParameterError, match="on_mismatch must be 'raise' or 'drop'"):
        rank_sites({"a": _site([3, 2, 1])}, "variance", on_mismatch="ignore")


# ------------------------------------------------------------------ failures
def test_a_failing_site_is_reported_and_the_others_aggregated():
    sites = {f"s{i}": _site([4, 3, 2, 1], seed=i) for i in range(4)}
    sites["s1"].loc[3, "f2"] = np.nan
    sites["s3"] = sites["s3"].assign(f3=["x"] * len(sites["s3"]))
    res = rank_sites(sites, "variance")
    assert list(res.rankings) == ["s0", "s2"]
    assert set(res.failed) == {"s1", "s3"}
    assert res.failed["s1"].startswith("InvalidInputError:") and "f2" in res.failed["s1"]
    assert res.failed["s3"].startswith("InvalidInputError:") and "f3" in res.failed["s3"]
    kept = [_variances(sites[s]) for s in ("s0", "s2")]
    assert res.aggregated["mean_rank"] == combine.mean_rank(kept)
    assert res.sizes == {s: 40 for s in sites}  # DataFrame sizes are known even on failure
    assert "FAILED s1: InvalidInputError" in res.summary()
    assert "failed=2" in repr(res)

    with pytest.raises(InvalidInputError) as info:
        rank_sites(sites, "variance", on_error="raise")
    assert "while ranking site 's1'" in getattr(
        info.value, "__notes__", ["while ranking site 's1'"]
    )


def test_no_site_ranked_lists_every_error():
    def unreadable():
        raise DataFileError("site data file not found: /nowhere.csv")

    sites = {"a": unreadable, "b": _site([1, 2]).assign(f1=np.nan)}
    with pytest.raises(InvalidInputError, match="no site could be ranked") as info:
        rank_sites(sites, "variance")
    # a loader's error is its site's (a file's: moweights.data.SiteFile raises this one)
    assert "a: DataFileError: site data file not found" in str(info.value)
    assert "b: InvalidInputError" in str(info.value)


@pytest.mark.parametrize("path", ["site.csv", Path("site.csv")])
def test_a_path_is_refused_naming_the_moweights_loader(path):
    # aggregation computes on in-memory data only: files are read by moweights.data.readers
    hint = (
        r"aggregation\.federated reads no files: .*moweights\.data\.SiteFile\(path\).*"
        r"moweights\.federated\.rank_sites"
    )
    many = r"sites given as paths: 'b' \('site\.csv'\); "
    with pytest.raises(InvalidInputError, match=many + hint):
        rank_sites({"a": _site([2, 1]), "b": path}, "variance")
    with pytest.raises(InvalidInputError, match=r"given as a path \('site\.csv'\); " + hint):
        rank_one_site(path, "variance")
    out = site_job("b", path, "variance", None, None, None, "report")
    assert out.ranking is None and out.error.startswith("InvalidInputError: the site is given")


def test_bad_arguments_raise_before_any_site_runs():
    sites = {"a": _site([2, 1]), "b": _site([1, 2])}
    with pytest.raises(UnknownRankerError):
        rank_sites(sites, "varianse")
    with pytest.raises(InvalidParameterError, match="no parameter"):
        rank_sites(sites, "variance", {"nope": 1})
    with pytest.raises(InvalidParameterError, match="did you mean 'mean_rank'"):
        rank_sites(sites, "variance", aggregate=("mean_rnk",))
    with pytest.raises(InvalidParameterError, match="names no method"):
        rank_sites(sites, "variance", aggregate=())
    with pytest.raises(InvalidParameterError, match="on_error"):
        rank_sites(sites, "variance", on_error="ignore")
    with pytest.raises(InvalidParameterError, match="random_state"):
        rank_sites(sites, "variance", random_state=-1)
    with pytest.raises(InvalidParameterError, match="site_column"):
        rank_sites(_site([2, 1]), "variance")
    with pytest.raises(InvalidParameterError, match="only when sites is one DataFrame"):
        rank_sites(sites, "variance", site_column="f1")
    with pytest.raises(InvalidParameterError, match="'b' \\(list\\)"):
        rank_sites({"a": _site([2, 1]), "b": [1, 2]}, "variance")
    with pytest.raises(InvalidParameterError, match="weights"):
        rank_sites(sites, "variance", weights="rows")


# ------------------------------------------------------------------ seeds and backends
def _random_sites():
    # identical data at every site: only the per-site seed can make their rankings differ
    same = _site([1, 1, 1, 1], m=30, seed=7, target=True)
    return {f"site{i}": same.copy() for i in range(4)}


RF = {"n_estimators": 8, "max_features": None}


def test_site_seeds_come_from_random_state_by_site_order():
    sites = _random_sites()
    res = rank_sites(sites, "random_forest", RF, target="y", random_state=11)
    children = np.random.SeedSequence(11).spawn(4)
    for child, (s, frame) in zip(children, sites.items(), strict=True):
        seed = int(child.generate_state(1)[0])
        expected = rank_one_site(frame, "random_forest", RF, target="y", random_state=seed)
        np.testing.assert_array_equal(res.rankings[s].scores, expected.scores)
    scores = np.array([r.scores for r in res.rankings.values()])
    assert len({tuple(row) for row in scores}) == 4  # different seeds, different forests
    # a ranker with its own seed keeps it: same data, same seed, same scores everywhere
    own = rank_sites(sites, "random_forest", {**RF, "random_state": 5}, target="y", random_state=1)
    rows = np.array([r.scores for r in own.rankings.values()])
    np.testing.assert_array_equal(rows, np.repeat(rows[:1], 4, axis=0))


def test_same_results_for_n_jobs_1_and_2():
    sites = _random_sites()
    one = rank_sites(sites, "random_forest", RF, target="y", random_state=0, n_jobs=1)
    two = rank_sites(sites, "random_forest", RF, target="y", random_state=0, n_jobs=2)
    for s in sites:
        np.testing.assert_array_equal(one.rankings[s].scores, two.rankings[s].scores)
    assert one.aggregated == two.aggregated


def test_same_results_on_a_dask_cluster():
    distributed = pytest.importorskip(
        "distributed", reason="needs the 'dask' extra: pip install '.[dask]'"
    )
    sites = _random_sites()
    local = rank_sites(sites, "random_forest", RF, target="y", random_state=0, n_jobs=1)
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster, timeout="300s") as client,
        distributed.get_task_stream(client) as tasks,
        parallel_config(backend="dask"),
    ):
        remote = rank_sites(sites, "random_forest", RF, target="y", random_state=0)
    assert len(tasks.data) >= len(sites)  # the sites really ran on the cluster
    for s in sites:
        np.testing.assert_array_equal(local.rankings[s].scores, remote.rankings[s].scores)
    assert local.aggregated == remote.aggregated


# ------------------------------------------------------------------ only rankings move
def test_only_rankings_reach_the_aggregation_step(monkeypatch):
    seen = []
    real_aggregate, real_similarity = rank_module.aggregate_rankings, rank_module.site_similarity

    def spy(rankings, *args, **kwargs):
        seen.append((rankings, args, kwargs))
        return real_aggregate(rankings, *args, **kwargs)

    def spy_similarity(rankings):
        seen.append((rankings, (), {}))
        return real_similarity(rankings)

    monkeypatch.setattr(rank_module, "aggregate_rankings", spy)
    monkeypatch.setattr(rank_module, "site_similarity", spy_similarity)
    sites = {"a": _site([3, 2, 1], m=12), "b": _site([1, 2, 3], m=9)}
    rank_sites(sites, "variance", aggregate=("mean_rank", "weighted_mean_rank"))
    assert len(seen) == 3  # the aggregates, the generic verdict, the similarity matrices

    def leaves(obj):
        if isinstance(obj, dict):
            for v in obj.values():
                yield from leaves(v)
        elif isinstance(obj, (list, tuple)):
            for v in obj:
                yield from leaves(v)
        else:
            yield obj

    for rankings, args, kwargs in seen:
        assert set(rankings) == {"a", "b"}
        assert all(type(r) is Ranking for r in rankings.values())
        rest = list(leaves([args, kwargs]))
        assert all(isinstance(x, (str, int)) for x in rest), rest  # names, sizes: no rows
    assert seen[0][1][1] == {"a": 12, "b": 9}  # weights="size" default: row counts


def test_the_site_job_returns_a_ranking_and_a_row_count_only():
    out = site_job("a", _site([2, 1], m=9), "variance", None, None, None, "report")
    assert type(out.ranking) is Ranking and out.n_rows == 9 and out.error is None
    assert set(out._fields) == {"ranking", "n_rows", "error"}
    assert type(rank_one_site(_site([2, 1]), "variance")) is Ranking
    with pytest.raises(InvalidParameterError, match="'b' \\(DataFrame\\)"):
        aggregate_rankings({"a": Ranking.from_order(["x", "y"]), "b": _site([2, 1])})


# ------------------------------------------------------------------ inputs: loaders, site column
def test_progress_bar_when_verbose(capsys):
    rank_sites({"a": _site([2, 1]), "b": _site([1, 2])}, "variance", verbose=1)
    assert "sites" in capsys.readouterr().err
    rank_sites({"a": _site([2, 1]), "b": _site([1, 2])}, "variance")
    assert capsys.readouterr().err == ""


def test_loaders_are_called_in_the_site_job():
    frame = _site([3, 2, 1], seed=4)
    res = rank_sites({"a": lambda: frame, "b": frame}, "variance")
    np.testing.assert_array_equal(res.rankings["a"].scores, res.rankings["b"].scores)
    assert res.sizes["a"] == 40


def test_one_frame_split_by_site_column():
    parts = {"2": _site([3, 2, 1], m=20, seed=1), "10": _site([1, 2, 3], m=15, seed=2)}
    pooled = pd.concat([f.assign(hospital=int(s)) for s, f in parts.items()], ignore_index=True)
    pooled = pooled[["hospital", "f3", "f1", "f2"]]
    res = rank_sites(pooled, "variance", site_column="hospital")
    assert list(res.rankings) == ["2", "10"]  # sorted by the column's values, named by str
    assert res.sizes == {"2": 20, "10": 15}
    for s, f in parts.items():
        np.testing.assert_allclose(res.rankings[s].scores, _variances(f).scores, rtol=1e-12)
    with pytest.raises(InvalidInputError, match="missing in 1 row"):
        rank_sites(pooled.assign(hospital=[np.nan] + [1] * 34), "variance", site_column="hospital")


def test_target_column_is_dropped_and_passed_as_y():
    sites = {s: _site([1, 1, 1], seed=i, target=True) for i, s in enumerate("ab")}
    res = rank_sites(sites, "random_forest", RF, target="y", random_state=0)
    assert res.rankings["a"].names == ("f1", "f2", "f3")
    assert res.aggregated["mean_rank"].order[0] == "f1"  # y is built from f1
    with pytest.raises(InvalidInputError, match="target column 'label' is not in the site"):
        rank_sites(sites, "random_forest", RF, target="label")


# ------------------------------------------------------------------ verdict, weights
def test_compatibility_verdict_on_constructed_sites():
    # the paper's example: (4,3,1,2) and (2,1,3,4) share no proper prefix -> one block
    stds = {"f1": 2.0, "f2": 1.0, "f3": 3.0, "f10": 4.0}
    a = _site([stds[f] for f in FEATURES], seed=1)
    b = _site([3, 4, 2, 1], seed=2)
    inc = rank_sites({"a": a, "b": b}, "variance")
    assert inc.rankings["a"].order == ["f10", "f3", "f1", "f2"]
    assert inc.rankings["b"].order == ["f2", "f1", "f3", "f10"]
    assert inc.s == 1 and inc.compatible is False
    assert "NO: the generic ranking is one block" in inc.summary()
    comp = rank_sites({"a": a, "c": _site([2, 1, 3, 4], seed=5)}, "variance")
    assert comp.s == 4 and comp.compatible is True
    single = rank_sites({"a": a}, "variance")
    assert single.compatible is None and single.s == 4


def test_weights_size_weight_sites_by_their_rows():
    # a: x > y > z on 30 rows, b: z > y > x on 10 rows -> weighted mean ranks 1.5, 2, 2.5
    a = _site([3, 2, 1], m=30, seed=1)
    b = _site([1, 2, 3], m=10, seed=2)
    for w in (None, "size"):
        res = rank_sites({"a": a, "b": b}, "variance", aggregate="weighted_mean_rank", weights=w)
        r = res.aggregated["weighted_mean_rank"]
        assert r.order == ["f1", "f2", "f3"]
        np.testing.assert_allclose(len(r) + 1 - r.scores, [1.5, 2.0, 2.5])
    custom = rank_sites(
        {"a": a, "b": b}, "variance", aggregate="weighted_mean_rank", weights={"a": 1, "b": 3}
    )
    assert custom.aggregated["weighted_mean_rank"].order == ["f3", "f2", "f1"]
    with pytest.raises(InvalidParameterError, match="needs weights"):
        aggregate_rankings(custom.rankings, "weighted_mean_rank")
    with pytest.raises(InvalidParameterError, match="no value for site"):
        aggregate_rankings(custom.rankings, "weighted_mean_rank", weights={"a": 1})


# ------------------------------------------------------------------ hierarchy
def _tied_ranking(names, values) -> Ranking:
    return Ranking.from_scores(list(values), names=list(names))


@settings(max_examples=40)
@given(
    data=st.data(),
    q=st.integers(2, 7),
    n=st.integers(1, 7),
)
def test_hierarchical_generic_equals_flat_generic(data, q, n):
    names = [f"f{i}" for i in range(n)]
    # scores from a small range: many ties, so sites are often partly compatible
    scores = data.draw(
        st.lists(st.lists(st.integers(0, 3), min_size=n, max_size=n), min_size=q, max_size=q)
    )
    rankings = {f"s{i}": _tied_ranking(names, row) for i, row in enumerate(scores)}
    region_of = data.draw(st.lists(st.integers(0, 2), min_size=q, max_size=q))
    sub_of = data.draw(st.lists(st.integers(0, 1), min_size=q, max_size=q))
    tree: dict = {}
    for s, g, h in zip(rankings, region_of, sub_of, strict=True):
        tree.setdefault(f"R{g}", {}).setdefault(f"R{g}.{h}", []).append(s)
    h = aggregate_hierarchy(tree, rankings)
    assert h.global_ranking == combine.generic(list(rankings.values()))
    for region, subs in tree.items():
        members = [rankings[s] for sites in subs.values() for s in sites]
        assert h.regions[region] == combine.generic(members)
    assert h.method == "generic"


def test_hierarchy_of_site_rankings_skips_failed_sites_and_checks_placement():
    sites = {f"s{i}": _site([4, 3, 2, 1], seed=i) for i in range(5)}
    sites["s4"].loc[0, "f1"] = np.nan  # fails
    res = rank_sites(sites, "variance")
    tree = {"west": ["s0", "s1"], "east": {"e1": ["s2"], "e2": ["s3", "s4"]}, "far": ["s4"]}
    with pytest.raises(InvalidParameterError, match="more than one region: 's4'"):
        res.hierarchy(tree)
    tree.pop("far")
    h = res.hierarchy(tree)
    assert list(h.regions) == ["west", "e1", "e2", "east"]  # deepest first
    assert h.global_ranking == res.generic
    assert h.regions["e2"] == GenericRanking.from_ranking(res.rankings["s3"], method="generic")
    mean = res.hierarchy(tree, method="mean_rank")
    expected_east = combine.mean_rank([res.rankings["s2"], res.rankings["s3"]])
    assert mean.regions["east"] == combine.mean_rank(
        [combine.mean_rank([res.rankings["s2"]]), combine.mean_rank([res.rankings["s3"]])]
    )
    assert mean.regions["east"] == expected_east  # single-site sub-regions keep the ranks
    with pytest.raises(InvalidParameterError, match=r"unknown site\(s\): 'zz'.*no region: 's3'"):
        aggregate_hierarchy({"a": ["s0", "s1", "s2", "zz"]}, res)
    with pytest.raises(InvalidParameterError, match="list of site names"):
        aggregate_hierarchy({"a": "s0"}, res.rankings)
    with pytest.raises(InvalidParameterError, match="unknown aggregation"):
        aggregate_hierarchy(tree, res, method="weighted_mean_rank")


# ------------------------------------------------------------------ the per-site function
def test_rank_one_site_clones_and_seeds_the_ranker():
    from rankers import registry

    frame = _site([1, 1, 1], seed=3, target=True)
    est = registry.get("random_forest", **RF)
    r = rank_one_site(frame, est, target="y", random_state=4)
    assert not hasattr(est, "scores_") and est.random_state is None  # the caller's is untouched
    again = rank_one_site(frame, "random_forest", RF, target="y", random_state=4)
    np.testing.assert_array_equal(r.scores, again.scores)
    fitted = registry.get("random_forest", **RF, random_state=4).fit(
        frame[["f1", "f2", "f3"]], frame["y"]
    )
    np.testing.assert_array_equal(r.scores, fitted.scores_)
    assert r.method == "random_forest"
    with pytest.raises(FeatureMismatchError, match="missing 'f10'; extra 'f3'"):
        rank_one_site(frame, "variance", target="y", features=["f1", "f2", "f10"])
    with pytest.raises(InvalidInputError, match="strings"):
        rank_one_site(pd.DataFrame(np.eye(3)), "variance")


# ------------------------------------------------------------------ reporting
def test_to_frame_summary_and_repr():
    sites = {"a": _site([4, 3, 2, 1], seed=1), "b": _site([3, 4, 1, 2], seed=2)}
    res = rank_sites(sites, "variance", aggregate=("mean_rank", "generic"))
    frame = res.to_frame()
    assert list(frame.index) == res.aggregated["mean_rank"].order
    assert list(frame.columns) == [
        ("generic", "block"),
        ("aggregated", "mean_rank"),
        ("aggregated", "generic"),
        ("site", "a"),
        ("site", "b"),
    ]
    assert frame[("generic", "block")].to_dict() == {"f1": 1, "f2": 1, "f3": 2, "f10": 2}
    assert frame[("site", "b")].to_dict() == {"f1": 2.0, "f2": 1.0, "f3": 4.0, "f10": 3.0}
    assert frame[("aggregated", "generic")].to_dict() == {
        "f1": 1.5,
        "f2": 1.5,
        "f3": 3.5,
        "f10": 3.5,
    }
    text = res.summary()
    assert "2 of 2 site(s) ranked, 4 features" in text
    assert "generic ranking (s = 2): {f1,f2} > {f3,f10}" in text
    assert "mean_rank: f1, f2, f3, f10" in text
    assert "s-measure over 1 pair(s): min 2, mean 2" in text
    assert repr(res) == (
        "SiteRankings(ranker='variance', sites=2, failed=0, features=4, s=2, compatible=True)"
    )


def test_spearman_is_nan_for_a_site_that_ties_every_feature():
    flat = pd.DataFrame(
        np.tile([[1.0, 2.0, 3.0, 4.0], [3.0, 4.0, 5.0, 6.0]], (5, 1)), columns=FEATURES
    )
    res = rank_sites({"a": _site([4, 3, 2, 1]), "flat": flat}, "variance")
    rho = res.similarity["spearman"]
    assert rho.loc["a", "a"] == pytest.approx(1.0)
    assert np.isnan(rho.loc["flat", "a"]) and np.isnan(rho.loc["flat", "flat"])
    assert res.similarity["s_measure"].loc["flat", "a"] == 1


def test_plot_draws_the_similarity_and_the_generic_strip():
    plt = pytest.importorskip("matplotlib.pyplot")
    plt.switch_backend("Agg")
    sites = {f"s{i}": _site([4, 3, 2, 1], seed=i) for i in range(3)}
    res = rank_sites(sites, "variance")
    try:
        fig = res.plot()
        heat, strip = fig.axes[0], fig.axes[1]
        np.testing.assert_array_equal(
            heat.images[0].get_array(), res.similarity["s_measure"].to_numpy()
        )
        assert len(strip.collections[0].get_paths()) == res.s
        fig2 = res.plot(measure="spearman")
        assert "spearman" in fig2.axes[0].get_title()
        with pytest.raises(InvalidParameterError, match="measure"):
            res.plot(measure="kendall")
    finally:
        plt.close("all")
