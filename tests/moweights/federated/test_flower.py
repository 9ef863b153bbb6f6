"""Tests of moweights.federated.flower: the Flower ClientApp/ServerApp of per-site ranking.

Fast tests drive the apps in this process (a stand-in Grid hands each message to the
ClientApp); the slow one starts real Flower processes on 127.0.0.1 (a SuperLink, one
SuperNode per site, ``flwr run``) and checks the result against ``rank_sites``.
"""

from __future__ import annotations

import io
import json
import logging
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_wine

import moweights.federated.flower as fl
import moweights.federated.flower_app as app
import rankers
from aggregation.ranking import GenericRanking, Ranking
from moweights.federated import rank_one_site, rank_sites
from rankers.exceptions import (
    FeatureMismatchError,
    InvalidInputError,
    InvalidParameterError,
    MoweightsError,
    UnknownRankerError,
)

REPO = Path(__file__).resolve().parents[3]
#: the most the real deployments wait for the nodes, for the replies and for ``flwr run``:
#: each wait ends as soon as its condition holds (seconds on an idle machine), the bounds
#: only stop a hung run, however busy the machine
HUNG = 900.0
RF = {"n_estimators": 15}  # a randomised ranker, so the seeds matter
READ_OR_REFUSED = "the site's data could not be read or was refused by the ranker"

# What a site must keep to itself: a label value and a column name of its own.
SECRET_LABEL = "SECRET-LABEL-7"
SECRET_COLUMN = "SECRET_COLUMN_9"
ODD_COLUMN = "ODD_EXTRA_COLUMN"  # the extra column of a site whose features differ

#: a third-party ranker whose error quotes the site's data, in its text and in its type name
LEAKY_PLUGIN = f"""
from rankers import BaseRanker
from rankers.exceptions import InvalidInputError


class LeakyVariance(BaseRanker):
    \"\"\"Variance; a site labelling a row {SECRET_LABEL!r} makes it fail chattily.\"\"\"

    def fit(self, X, y=None):
        labels = [] if y is None else [str(v) for v in y]
        if {SECRET_LABEL!r} in labels:
            error = type("Label_" + {SECRET_LABEL!r}.replace("-", "_") + "_Error",
                         (InvalidInputError,), {{}})
            raise error(f"label {{labels[-1]!r}} is not allowed; columns: {{list(X.columns)}}")
        return super().fit(X, y)

    def _score(self, X, y, context):
        return X.var(axis=0)
"""


@pytest.fixture(scope="module")
def wine_sites(tmp_path_factory) -> dict[str, Path]:
    """Wine split at random into three sites, one csv each, plus a site whose file is absent."""
    folder = tmp_path_factory.mktemp("sites")
    X, y = load_wine(return_X_y=True, as_frame=True)
    frame = X.assign(label=y)
    parts = np.array_split(np.random.default_rng(0).permutation(len(frame)), 3)
    paths = {}
    for i, rows in enumerate(parts, start=1):
        paths[f"site{i}"] = folder / f"site{i}.csv"
        frame.iloc[rows].to_csv(paths[f"site{i}"], index=False)
    paths["broken"] = folder / "missing.csv"
    return paths


@pytest.fixture
def leaky_plugin(tmp_path_factory, monkeypatch):
    """LEAKY_PLUGIN installed as a real distribution (module + dist-info) in a folder that
    is on this process's path and on PYTHONPATH (so Flower's processes find it too)."""
    folder = tmp_path_factory.mktemp("plugin")
    (folder / "leaky_plugin.py").write_text(LEAKY_PLUGIN)
    info = folder / "leaky_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: leaky-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[moweights.rankers]\nleaky_variance = leaky_plugin:LeakyVariance\n"
    )
    monkeypatch.syspath_prepend(str(folder))
    path = [str(folder), *filter(None, [os.environ.get("PYTHONPATH")])]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(path))
    rankers.reload()
    yield folder
    rankers.reload()


def _leaky_site(source: Path, path: Path) -> Path:
    """The rows of ``source`` with a column of the site's own and one row labelled secretly."""
    frame = pd.read_csv(source)
    frame[SECRET_COLUMN] = np.arange(len(frame), dtype=float)
    frame["label"] = frame["label"].astype(str)
    frame.loc[frame.index[-1], "label"] = SECRET_LABEL
    frame.to_csv(path, index=False)
    return path


def _odd_site(source: Path, path: Path) -> Path:
    """The rows of ``source`` with one extra column: a feature set of its own."""
    frame = pd.read_csv(source)
    frame[ODD_COLUMN] = np.linspace(0.0, 1.0, len(frame))
    frame.to_csv(path, index=False)
    return path


def _assert_private(*texts: str) -> None:
    for text in texts:
        for secret in (SECRET_LABEL, SECRET_COLUMN, ODD_COLUMN, "Label_SECRET"):
            assert secret not in text, (secret, text[-2000:])


@pytest.fixture
def flwr_app(monkeypatch):
    """Flower's app API, with the process identity a Message needs outside a real run."""
    pytest.importorskip(
        "flwr", minversion="1.41", reason="needs the 'federated' extra: pip install '.[federated]'"
    )
    from flwr.supercore.task_identity import TaskIdentity

    for key, value in (("_run_id", 1), ("_node_id", 0), ("_task_id", 0)):
        monkeypatch.setattr(TaskIdentity, key, value)
    import flwr.app

    return flwr.app


class InProcessGrid:
    """A Grid stand-in: every message goes to the ClientApp in this process."""

    def __init__(self, nodes: dict[int, dict], silent=()):
        self.nodes, self.silent, self.replies = nodes, set(silent), []

    def get_node_ids(self):
        return list(self.nodes)

    def send_and_receive(self, messages, *, timeout=None):
        from flwr.app import Context, RecordDict

        for m in messages:
            node = m.metadata.dst_node_id
            if node not in self.silent:
                ctx = Context(1, node, self.nodes[node], RecordDict(), {})
                self.replies.append(fl.client_app(m, ctx))
        return list(self.replies)


def _nodes(paths, **extra):
    return {
        100 + i: {"site": s, "data-path": str(p), "target": "label", **extra}
        for i, (s, p) in enumerate(paths.items())
    }


def _serve(flwr_app, grid, out, **run_config):
    cfg = {"output-dir": str(out), **{k.replace("_", "-"): v for k, v in run_config.items()}}
    fl._server_main(grid, flwr_app.Context(1, 0, {}, flwr_app.RecordDict(), cfg))


# ------------------------------------------------------------------ in this process
def test_server_equals_rank_sites_and_reports_the_failed_site(flwr_app, wine_sites, tmp_path):
    grid = InProcessGrid(_nodes(wine_sites))
    sites = ",".join(wine_sites)
    _serve(
        flwr_app,
        grid,
        tmp_path,
        ranker="random_forest",
        ranker_params=json.dumps(RF),
        sites=sites,
        random_state=7,
    )
    got = fl.read_result(tmp_path)
    ref = rank_sites(wine_sites, "random_forest", RF, target="label", random_state=7)
    assert list(got.rankings) == ["site1", "site2", "site3"] == list(ref.rankings)
    for site in ref.rankings:
        assert got.rankings[site] == ref.rankings[site]
        np.testing.assert_array_equal(got.rankings[site].scores, ref.rankings[site].scores)
    assert got.aggregated == ref.aggregated
    assert got.generic == ref.generic and got.compatible == ref.compatible
    # the server gets the error's type and a fixed message; rank_sites (one process) the text
    assert got.failed == {"broken": "InvalidInputError: " + READ_OR_REFUSED}
    assert ref.failed == {
        "broken": f"DataFileError: site data file not found: {wine_sites['broken']}"
    }
    # another seed gives other forests: the seeds really reach the sites
    other = rank_sites(wine_sites, "random_forest", RF, target="label", random_state=8)
    assert got.rankings["site1"] != other.rankings["site1"]


def test_reply_holds_only_strings_numbers_and_numeric_arrays(flwr_app, wine_sites, tmp_path):
    grid = InProcessGrid(_nodes({"site1": wine_sites["site1"], "broken": wine_sites["broken"]}))
    _serve(flwr_app, grid, tmp_path, ranker="variance", sites="site1,broken")
    ok, failed = grid.replies
    assert set(ok.content) == {"site", "ranking"} and set(failed.content) == {"site"}
    for reply in grid.replies:
        assert set(reply.content.config_records) == {"site"}
        assert not reply.content.metric_records
        for value in reply.content["site"].values():
            items = value if isinstance(value, list) else [value]
            assert all(isinstance(v, (str, int, float)) for v in items), value
    arrays = ok.content.array_records["ranking"]
    assert set(arrays) == {"scores", "order"}
    for array in arrays.values():
        # the bytes on the wire are .npy without pickles: np.load refuses object arrays
        loaded = np.load(io.BytesIO(array.data), allow_pickle=False)
        assert loaded.dtype in (np.float64, np.int64)
    meta = ok.content["site"]
    assert meta["status"] == "ok" and meta["method"] == "variance"
    assert len(meta["features"]) == 13 and "label" not in meta["features"]
    # what the site sent is exactly its local ranking: names, scores, order -- nothing else
    frame = pd.read_csv(wine_sites["site1"]).drop(columns="label")
    variances = frame[meta["features"]].var(ddof=0).to_numpy()
    np.testing.assert_allclose(arrays["scores"].numpy(), variances)
    np.testing.assert_array_equal(arrays["order"].numpy(), np.argsort(-variances, kind="stable"))
    assert failed.content["site"]["status"] == "error"
    assert failed.content["site"]["error"] == "InvalidInputError: " + READ_OR_REFUSED


def test_silent_and_unexpected_nodes_are_reported_and_the_others_kept(
    flwr_app, wine_sites, tmp_path
):
    nodes = _nodes({s: wine_sites[s] for s in ("site1", "site2", "site3")})
    nodes[200] = {"site": "intruder", "data-path": str(wine_sites["site1"])}
    grid = InProcessGrid(nodes, silent={102})  # site3's node never answers
    _serve(flwr_app, grid, tmp_path, sites="site1,site2,site3", reply_timeout=5.0)
    got = fl.read_result(tmp_path)
    assert list(got.rankings) == ["site1", "site2"]
    assert set(got.failed) == {"site3", "intruder"}
    assert got.failed["site3"].startswith("TimeoutError: no reply")
    assert "not one of this run's sites" in got.failed["intruder"]
    assert "site1,site2,site3" not in got.failed["intruder"]  # the site is not told the list
    ref = rank_sites({s: wine_sites[s] for s in ("site1", "site2")}, "variance", target="label")
    assert got.aggregated == ref.aggregated
    # the tables a person reads
    assert pd.read_csv(tmp_path / "failed.csv")["site"].tolist() == ["site3", "intruder"]
    table = pd.read_csv(tmp_path / "site_rankings.csv")
    assert table.groupby("site").size().to_dict() == {"site1": 13, "site2": 13}
    first = table[table.site == "site1"].iloc[0]
    assert first.feature == got.rankings["site1"].order[0] and first["rank"] == 1.0
    agg = pd.read_csv(tmp_path / "aggregated.csv")
    assert set(agg.method) == {"generic", "mean_rank"}
    blocks = agg[agg.method == "generic"].groupby("block")["feature"].apply(set).tolist()
    assert blocks == [set(b) for b in got.aggregated["generic"].blocks]


def test_a_site_without_data_path_and_an_unlisted_run_are_reported(flwr_app, tmp_path, wine_sites):
    nodes = {1: {"site": "a", "data-path": str(wine_sites["site1"])}, 2: {"site": "b"}}
    _serve(flwr_app, InProcessGrid(nodes), tmp_path)  # no site list: every site accepted
    got = fl.read_result(tmp_path)
    assert list(got.rankings) == ["a"]
    assert got.failed["b"] == (
        "InvalidParameterError: the SuperNode's node config does not fit this run "
        "(no data-path, a site name the run does not list, or a genes-as-rows not true or false)"
    )


def test_a_site_with_genes_as_rows_reads_its_file_turned(flwr_app, tmp_path, wine_sites):
    """genes-as-rows = true: the site's file holds one row per feature (and the target's
    row), read through SiteFile(transpose=True); the ranking is the one of the same data
    with samples as rows. Anything but a boolean fails that site with the fixed message."""
    turned = tmp_path / "site1_genes_as_rows.csv"
    frame = pd.read_csv(wine_sites["site1"])
    frame.T.rename_axis("feature").reset_index().to_csv(turned, index=False)
    nodes = {
        1: {"site": "a", "data-path": str(turned), "target": "label", "genes-as-rows": True},
        2: {"site": "b", "data-path": str(turned), "target": "label", "genes-as-rows": "yes"},
    }
    _serve(flwr_app, InProcessGrid(nodes), tmp_path / "out", sites="a,b")
    got = fl.read_result(tmp_path / "out")
    want = rank_one_site(wine_sites["site1"], "variance", None, "label")
    assert got.rankings["a"] == want
    np.testing.assert_array_equal(got.rankings["a"].scores, want.scores)
    assert got.failed["b"].startswith("InvalidParameterError: the SuperNode's node config")


def test_a_site_with_other_features_stops_the_aggregation_but_its_rankings_are_kept(
    flwr_app, tmp_path, wine_sites
):
    odd = tmp_path / "odd.csv"
    pd.read_csv(wine_sites["site2"]).drop(columns="hue").to_csv(odd, index=False)
    nodes = _nodes({"site1": wine_sites["site1"], "site2": odd, "site3": wine_sites["site3"]})
    with pytest.raises(FeatureMismatchError, match="site 'site2': 1 missing, 0 extra") as info:
        _serve(flwr_app, InProcessGrid(nodes), tmp_path / "out", sites="site1,site2,site3")
    assert "hue" not in str(info.value)  # counts, never a site's feature names, in an error
    doc = json.loads((tmp_path / "out" / "result.json").read_text())
    assert doc["error"].startswith("FeatureMismatchError") and doc["aggregated"] == {}
    assert "hue" not in doc["error"] and "on-mismatch='drop'" in doc["error"]
    assert list(doc["rankings"]) == ["site1", "site2", "site3"]
    assert "hue" not in doc["rankings"]["site2"]["features"]


def test_two_nodes_claiming_one_site_fail_that_site(flwr_app, tmp_path, wine_sites):
    nodes = _nodes({"site1": wine_sites["site1"], "site2": wine_sites["site2"]})
    nodes[7] = {"site": "site1", "data-path": str(wine_sites["site3"]), "target": "label"}
    _serve(flwr_app, InProcessGrid(nodes), tmp_path, sites="site1,site2")
    got = fl.read_result(tmp_path)
    assert got.rankings == {"site2": rank_one_site(wine_sites["site2"], "variance", None, "label")}
    assert got.failed == {"site1": "InvalidReply: 2 nodes answered as this site: [7, 100]"}


def test_no_ranking_at_all_writes_the_failures_then_fails(flwr_app, tmp_path, wine_sites):
    grid = InProcessGrid({1: {"site": "a", "data-path": str(wine_sites["broken"])}})
    with pytest.raises(RuntimeError, match="no site returned a ranking"):
        _serve(flwr_app, grid, tmp_path)
    doc = json.loads((tmp_path / "result.json").read_text())
    assert doc["rankings"] == {} and set(doc["failed"]) == {"a"}
    with pytest.raises(RuntimeError, match="no site returned a ranking"):
        fl.read_result(tmp_path)


def test_flower_error_replies_and_malformed_replies_fail_only_their_site(flwr_app):
    from flwr.app import Array, ArrayRecord, ConfigRecord, Error, Message, RecordDict

    ask = Message(RecordDict(), dst_node_id=5, message_type=fl.MESSAGE_TYPE)
    # Flower's reason for a crashed ClientApp quotes the exception: it is withheld
    crashed = Message(
        Error(code=2, reason=f"<class 'ValueError'>:<'{SECRET_LABEL}'>"), reply_to=ask
    )
    site, ranking, error = fl._read_reply(crashed)
    assert (site, ranking) == ("node-5", None)
    assert error.startswith("FlowerError: code 2 (CLIENT_APP_RAISED_EXCEPTION)")
    _assert_private(error)
    meta = ConfigRecord({"site": "x", "status": "ok", "method": "m", "features": ["a", "b"]})
    for scores, order in (
        (np.array([1.0, np.nan]), np.array([0, 1])),  # not finite
        (np.array([1.0, 2.0]), np.array([0, 1])),  # order contradicts the scores
        (np.array([1, 2]), np.array([1, 0])),  # integer scores: not what a site sends
    ):
        arrays = ArrayRecord({"scores": Array(scores), "order": Array(order)})
        reply = Message(RecordDict({"site": meta, "ranking": arrays}), reply_to=ask)
        site, ranking, error = fl._read_reply(reply)
        assert site == "x" and ranking is None and error.startswith("InvalidReply")


def test_run_config_problems_are_reported_together():
    with pytest.raises(InvalidParameterError) as info:
        app.check_run_config(
            {
                "ranker-params": "[1]",
                "aggregate": "mean_rnk",
                "sites": "a,a",
                "min-sites": 1.5,
                "reply-timeout": 0,
                "on-mismatch": "ignore",
                "colour": "red",
            }
        )
    text = str(info.value)
    for part in (
        "'colour'",
        "JSON object",
        "did you mean 'mean_rank'",
        "names a site twice",
        "min-sites must be an integer",
        "reply-timeout must be a positive",
        "on-mismatch must be 'raise' or 'drop'",
    ):
        assert part in text
    cfg = app.check_run_config({"sites": " a, b ", "random-state": 3})
    assert cfg["site-list"] == ["a", "b"] and cfg["min-sites"] == 2 and cfg["seed"] == 3
    assert cfg["on-mismatch"] == "raise"  # the default stops the run, as before
    assert app.check_run_config({})["seed"] is None


def test_site_seeds_are_rank_sites_seeds(wine_sites):
    # site i gets child i of SeedSequence(random_state); check it against rank_sites directly
    seeds = fl.site_seeds(7, ["site1", "site2", "site3"])
    children = np.random.SeedSequence(7).spawn(3)
    assert list(seeds.values()) == [int(c.generate_state(1)[0]) for c in children]
    assert fl.site_seeds(None, ["a"]) == {"a": None}
    three = {s: wine_sites[s] for s in ("site1", "site2", "site3")}
    ref = rank_sites(three, "random_forest", RF, target="label", random_state=7)
    alone = rank_one_site(wine_sites["site2"], "random_forest", RF, "label", seeds["site2"])
    assert alone == ref.rankings["site2"]


def test_example_app_is_what_write_app_writes(tmp_path):
    app = fl.write_app(tmp_path / "app")
    example = REPO / "examples" / "flower-app" / "pyproject.toml"
    assert example.read_text() == (app / "pyproject.toml").read_text()
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    config = tomllib.loads(
        fl.write_app(tmp_path / "b", random_state=3, sites="x,y")
        .joinpath("pyproject.toml")
        .read_text()
    )["tool"]["flwr"]["app"]
    assert config["components"] == {
        "serverapp": "moweights.federated.flower:server_app",
        "clientapp": "moweights.federated.flower:client_app",
    }
    assert config["config"] == {**fl.RUN_CONFIG, "random-state": 3, "sites": "x,y"}
    with pytest.raises(InvalidParameterError, match="unknown run-config key 'colour'"):
        fl.write_app(tmp_path / "c", colour="red")


def test_module_imports_without_flower_and_says_how_to_install(monkeypatch):
    for name in [m for m in sys.modules if m == "flwr" or m.startswith("flwr.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "flwr", None)  # "import flwr" now raises ImportError
    for name in ("client_app", "server_app"):  # built and kept by earlier tests
        monkeypatch.delitem(vars(fl), name, raising=False)
    with pytest.raises(ImportError, match=r'pip install "moweights\[federated\]"'):
        fl.build_client_app()
    with pytest.raises(ImportError, match="moweights"):
        fl.server_app  # noqa: B018
    assert fl.RUN_CONFIG["ranker"] == "variance"


def test_json_result_round_trips_rankings_exactly(tmp_path):
    r = Ranking(["a", "b", "c"], [0.1, 1 / 3, 1 / 3], "m", order_idx=[2, 1, 0])
    g = GenericRanking([["b", "c"], ["a"]], "generic")
    for item in (r, g):
        back = app._ranking_from_json(json.loads(json.dumps(app._ranking_json(item))))
        assert back == item and back.method == item.method
    assert app._ranking_from_json(app._ranking_json(r)).order == ["c", "b", "a"]


# ------------------------------------------------------------------ privacy of errors
def test_a_site_error_reaches_the_server_as_its_type_and_a_fixed_message(
    flwr_app, leaky_plugin, wine_sites, tmp_path, caplog
):
    leaky = _leaky_site(wine_sites["site2"], tmp_path / "leaky.csv")
    grid = InProcessGrid(_nodes({"site1": wine_sites["site1"], "leaky": leaky}))
    with caplog.at_level(logging.DEBUG):
        _serve(flwr_app, grid, tmp_path / "out", ranker="leaky_variance", sites="site1,leaky")
    # what left the site: the type the plugin's error derives from, and a fixed message
    reply = next(r for r in grid.replies if r.content["site"]["site"] == "leaky")
    assert reply.content["site"]["error"] == "InvalidInputError: " + READ_OR_REFUSED
    # the server's record: its result, its tables, its logs, its SiteRankings
    got = fl.read_result(tmp_path / "out")
    assert list(got.rankings) == ["site1"]
    assert got.failed == {"leaky": "InvalidInputError: " + READ_OR_REFUSED}
    server_logs = [r for r in caplog.records if r.name.split(".")[0] == "flwr"]
    assert any("leaky" in r.getMessage() for r in server_logs)  # the failure is reported
    _assert_private(
        *(p.read_text() for p in (tmp_path / "out").iterdir()),
        *(caplog.handler.format(r) for r in server_logs),
        got.summary(),
    )
    # the site's own log holds the whole story: the text and the traceback, at ERROR
    (record,) = [r for r in caplog.records if r.name == "moweights.federated.flower"]
    assert record.levelno == logging.ERROR and record.exc_info is not None
    site_log = caplog.handler.format(record)
    assert SECRET_LABEL in site_log and SECRET_COLUMN in site_log and "Traceback" in site_log
    assert "leaky" in record.getMessage()


def test_site_errors_are_reported_by_a_standard_type_name_and_a_fixed_message():
    plugin_error = type(f"Patient_{SECRET_LABEL}", (InvalidInputError,), {})
    dynamic_value_error = type(SECRET_COLUMN, (ValueError,), {})
    dynamic_error = type(SECRET_COLUMN, (Exception,), {})
    chatty = f"label {SECRET_LABEL!r}; columns {[SECRET_COLUMN, 'alcohol']}"
    generic = "the site could not rank its data"
    expected = {
        InvalidInputError(chatty): "InvalidInputError: " + READ_OR_REFUSED,
        plugin_error(chatty): "InvalidInputError: " + READ_OR_REFUSED,  # our base, not its name
        FeatureMismatchError(chatty): (
            "FeatureMismatchError: the site's features differ from the requested ones"
        ),
        UnknownRankerError(SECRET_COLUMN): (
            "UnknownRankerError: the requested ranker is not installed at the site"
        ),
        InvalidParameterError(
            chatty
        ): "InvalidParameterError: the site refused the ranker's parameters",
        MoweightsError(chatty): "MoweightsError: " + generic,
        KeyError(SECRET_COLUMN): "KeyError: " + generic,
        dynamic_value_error(chatty): "ValueError: " + generic,  # the built-in it derives from
        dynamic_error(chatty): "Error: " + generic,  # nothing standard to name: "Error"
        FileNotFoundError(2, "No such file", f"/data/{SECRET_COLUMN}.csv"): (
            "FileNotFoundError: the site could not read its data file"
        ),
        MemoryError(chatty): "MemoryError: the site ran out of memory while ranking",
    }
    for exc, text in expected.items():
        assert fl.site_error(exc) == text
        _assert_private(fl.site_error(exc))
    # the deployment guide lists every fixed message
    from moweights.federated import _site_errors

    guide = (REPO / "examples" / "flower_deployment.md").read_text()
    for message in [*_site_errors._MESSAGES.values(), _site_errors.GENERIC]:
        assert f"| {message} |" in guide, message


def test_the_server_withholds_error_text_that_is_not_a_fixed_message(flwr_app):
    from flwr.app import ConfigRecord, Message, RecordDict

    ask = Message(RecordDict(), dst_node_id=5, message_type=fl.MESSAGE_TYPE)

    def reply(error):
        meta = ConfigRecord({"site": "s", "status": "error", "error": error})
        return fl._read_reply(Message(RecordDict({"site": meta}), reply_to=ask))

    # an older or altered site may still send its exception text: it is not passed on
    site, ranking, error = reply(f"InvalidInputError: label {SECRET_LABEL!r} is not allowed")
    assert (site, ranking) == ("s", None) and error.startswith("InvalidReply")
    _assert_private(error)
    assert reply(f"{SECRET_COLUMN}Error: " + READ_OR_REFUSED)[2].startswith("InvalidReply")
    for fixed in (
        "InvalidInputError: " + READ_OR_REFUSED,
        "Error: the site could not rank its data",
    ):
        assert reply(fixed)[2] == fixed


def test_on_mismatch_drop_at_the_server_aggregates_the_others_and_counts_only(
    flwr_app, tmp_path, wine_sites, caplog
):
    odd = _odd_site(wine_sites["site2"], tmp_path / "odd.csv")
    three = {"site1": wine_sites["site1"], "odd": odd, "site3": wine_sites["site3"]}
    with caplog.at_level(logging.DEBUG):
        _serve(
            flwr_app,
            InProcessGrid(_nodes(three)),
            tmp_path / "out",
            sites="site1,odd,site3",
            on_mismatch="drop",
        )
    got = fl.read_result(tmp_path / "out")
    ref = rank_sites(three, "variance", target="label", on_mismatch="drop")
    assert list(got.rankings) == list(ref.rankings) == ["site1", "site3"]
    assert got.aggregated == ref.aggregated and got.generic == ref.generic
    assert list(got.failed) == ["odd"]
    assert got.failed["odd"].startswith("FeatureMismatchError: dropped")
    assert "0 missing, 1 extra" in got.failed["odd"]
    assert ODD_COLUMN in ref.failed["odd"]  # the one-process API names the column
    flower_logs = [caplog.handler.format(r) for r in caplog.records]
    _assert_private(*(p.read_text() for p in (tmp_path / "out").iterdir()), *flower_logs)


# ------------------------------------------------------------------ real Flower processes
@pytest.mark.slow
def test_real_deployment_equals_rank_sites(wine_sites, tmp_path):
    """A SuperLink, four SuperNodes (one with no data file) and ``flwr run``, all on 127.0.0.1."""
    pytest.importorskip(
        "flwr", minversion="1.41", reason="needs the 'federated' extra: pip install '.[federated]'"
    )
    nodes = {s: {"data-path": str(p), "target": "label"} for s, p in wine_sites.items()}
    # "ghost" is listed but never connects: it is reported, the run goes on with 4 nodes
    # (had it waited for the ghost, node-timeout would outlast flwr run's own timeout)
    sites = "site1,site2,site3,broken,ghost"
    with fl.LocalDeployment(nodes, tmp_path) as deployment:
        got = deployment.run(
            timeout=2 * HUNG,
            ranker="random_forest",
            ranker_params=json.dumps(RF),
            sites=sites,
            min_sites=4,
            random_state=7,
            node_timeout=4 * HUNG,
            reply_timeout=HUNG,
        )
    assert deployment.leftover_pids() == []
    ref = rank_sites(
        {**wine_sites, "ghost": tmp_path / "never.csv"},
        "random_forest",
        RF,
        target="label",
        random_state=7,
    )
    assert list(got.rankings) == list(ref.rankings) == ["site1", "site2", "site3"]
    for site in ref.rankings:
        assert got.rankings[site] == ref.rankings[site]
    assert got.aggregated == ref.aggregated and got.generic == ref.generic
    assert set(got.failed) == {"broken", "ghost"}
    assert got.failed["broken"] == "InvalidInputError: " + READ_OR_REFUSED
    assert "missing.csv" in ref.failed["broken"]  # the site's path stays at the site
    assert "missing.csv" not in (tmp_path / "output" / "result.json").read_text()
    assert got.failed["ghost"].startswith("TimeoutError")
    for name in ("result.json", "site_rankings.csv", "aggregated.csv", "failed.csv"):
        assert (tmp_path / "output" / name).is_file()


@pytest.mark.slow
def test_real_deployment_keeps_site_errors_private_and_drops_the_odd_site(
    wine_sites, tmp_path, leaky_plugin
):
    """Real processes: a site whose plugin error quotes its data, a site with an extra column."""
    pytest.importorskip(
        "flwr", minversion="1.41", reason="needs the 'federated' extra: pip install '.[federated]'"
    )
    paths = {
        "site1": wine_sites["site1"],
        "site2": wine_sites["site2"],
        "odd": _odd_site(wine_sites["site3"], tmp_path / "odd.csv"),
        "leaky": _leaky_site(wine_sites["site3"], tmp_path / "leaky.csv"),
    }
    nodes = {s: {"data-path": str(p), "target": "label"} for s, p in paths.items()}
    with fl.LocalDeployment(nodes, tmp_path / "flower") as deployment:
        got = deployment.run(
            timeout=3 * HUNG,
            ranker="leaky_variance",
            sites=",".join(paths),
            on_mismatch="drop",
            node_timeout=HUNG,
            reply_timeout=HUNG,
        )
    assert deployment.leftover_pids() == []
    ref = rank_sites(paths, "leaky_variance", target="label", on_mismatch="drop")
    assert list(got.rankings) == list(ref.rankings) == ["site1", "site2"]
    assert got.aggregated == ref.aggregated
    assert got.failed == {
        "odd": got.failed["odd"],
        "leaky": "InvalidInputError: " + READ_OR_REFUSED,
    }
    assert got.failed["odd"].startswith("FeatureMismatchError: dropped")
    assert "0 missing, 1 extra" in got.failed["odd"]
    # the server side: the result folder, the SuperLink's log (the ServerApp's output too)
    # and what `flwr run --stream` showed the operator
    work = tmp_path / "flower"
    server = [*(work / "output").iterdir(), work / "superlink.log", work / "flwr-run.log"]
    _assert_private(*(p.read_text(errors="replace") for p in server))
    # the leaky site's own log holds its full error
    site_log = (work / "supernode-leaky.log").read_text(errors="replace")
    assert SECRET_LABEL in site_log and SECRET_COLUMN in site_log
