"""The real Flower deployment when sites go down mid-round.

Five SuperNodes on 127.0.0.1, each with its own data file. Every site ranks with a plugin
ranker that marks its start and then waits at a gate the test opens; once every site is
ranking, the doomed sites' SuperNodes are killed (SIGKILL to their process groups) and the
gate is opened. The run must finish with the other sites, name the dead sites, and
aggregate exactly what ``rank_sites`` gives on the survivors. Every wait is on a condition
(a file, a process, a reply), never on how long something takes, so a busy machine passes.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import moweights.federated.flower as fl
import rankers
from moweights.federated import rank_sites

#: a ranker that marks its start (file ``<rows>.<pid>`` in $GATED_MARKS), then waits until
#: the file ``open`` is there: the doomed sites are killed while they wait, the others go on
GATED_PLUGIN = """
import os
import time
from pathlib import Path

from rankers import BaseRanker


class GatedVariance(BaseRanker):
    \"\"\"Variance, once $GATED_MARKS/open exists (at most ``wait`` seconds later).\"\"\"

    def __init__(self, wait=900.0):
        self.wait = wait

    def fit(self, X, y=None):
        marks = Path(os.environ["GATED_MARKS"])
        (marks / f"{len(X)}.{os.getpid()}").touch()
        deadline = time.monotonic() + self.wait
        while not (marks / "open").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return super().fit(X, y)

    def _score(self, X, y, context):
        return X.var(axis=0)
"""

N_SITES = 5
KILLED = ("site2", "site4")
#: the most to wait for any one step; each wait ends as soon as its condition holds
HUNG = 900.0
#: how a killed site is reported: no reply within the reply timeout, or (sooner, when the
#: SuperLink misses the node's heartbeats) Flower's own NODE_UNAVAILABLE reply
LOST = ("TimeoutError: no reply within reply-timeout=", "FlowerError: code 5 (NODE_UNAVAILABLE)")


@pytest.fixture
def gated_plugin(tmp_path_factory, monkeypatch):
    """GATED_PLUGIN installed as a distribution on this process's and Flower's path; yields
    the folder of the marks and the gate."""
    folder = tmp_path_factory.mktemp("plugin")
    (folder / "gated_plugin.py").write_text(GATED_PLUGIN)
    info = folder / "gated_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: gated-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[moweights.rankers]\ngated_variance = gated_plugin:GatedVariance\n"
    )
    monkeypatch.syspath_prepend(str(folder))
    path = [str(folder), *filter(None, [os.environ.get("PYTHONPATH")])]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(path))
    marks = tmp_path_factory.mktemp("marks")
    monkeypatch.setenv("GATED_MARKS", str(marks))
    rankers.reload()
    yield marks
    rankers.reload()


def site_files(folder: Path, n_sites: int, seed: int = 0) -> dict[str, Path]:
    """One csv per site (site i has 30 + i rows, so its rows tell it apart)."""
    rng = np.random.default_rng(seed)
    paths = {}
    for i in range(1, n_sites + 1):
        X = rng.normal(size=(30 + i, 12)) * np.linspace(0.5, 3.0, 12)
        paths[f"site{i}"] = folder / f"site{i}.csv"
        pd.DataFrame(X, columns=[f"f{j}" for j in range(12)]).to_csv(paths[f"site{i}"], index=False)
    return paths


def _wait_for(pred, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout:g} s for {what}")
        time.sleep(0.2)


@pytest.mark.slow
def test_sites_killed_mid_round_are_named_and_the_others_aggregated(gated_plugin, tmp_path):
    pytest.importorskip(
        "flwr", minversion="1.41", reason="needs the 'federated' extra: pip install '.[federated]'"
    )
    paths = site_files(tmp_path, N_SITES)
    nodes = {s: {"data-path": str(p)} for s, p in paths.items()}
    rows = {s: 30 + i for i, s in enumerate(paths, start=1)}
    outcome: dict = {}
    with fl.LocalDeployment(nodes, tmp_path / "flower") as deployment:

        def run():
            try:
                outcome["result"] = deployment.run(
                    timeout=3 * HUNG,
                    ranker="gated_variance",
                    sites=",".join(paths),
                    node_timeout=HUNG,
                    reply_timeout=HUNG,
                )
            except BaseException as exc:  # re-raised below, in the test's thread
                outcome["error"] = exc

        runner = threading.Thread(target=run, daemon=True)
        runner.start()

        def ranking(site: str) -> bool:
            return any(gated_plugin.glob(f"{rows[site]}.*"))

        # mid-round: every site is ranking; the doomed ones' machines go down, then the
        # others may finish
        _wait_for(lambda: all(map(ranking, paths)) or not runner.is_alive(), HUNG, "the sites")
        for site in KILLED:
            deployment.kill_site(site)
        (gated_plugin / "open").touch()
        runner.join(timeout=4 * HUNG)
        assert not runner.is_alive()
    assert deployment.leftover_pids() == []
    if "error" in outcome:
        raise outcome["error"]
    got = outcome["result"]
    survivors = {s: p for s, p in paths.items() if s not in KILLED}
    assert list(got.rankings) == list(survivors)
    # named by their site names
    assert list(got.failed) == list(KILLED)
    assert all(got.failed[s].startswith(LOST) for s in KILLED), got.failed
    ref = rank_sites(survivors, "gated_variance")
    for site in survivors:
        assert got.rankings[site] == ref.rankings[site]
    assert got.aggregated == ref.aggregated and got.generic == ref.generic


def test_a_reply_the_superlink_makes_for_a_lost_node_names_its_site(monkeypatch):
    pytest.importorskip(
        "flwr", minversion="1.41", reason="needs the 'federated' extra: pip install '.[federated]'"
    )
    from flwr.app import ConfigRecord, Error, Message, RecordDict
    from flwr.supercore.task_identity import TaskIdentity

    for key, value in (("_run_id", 1), ("_node_id", 0), ("_task_id", 0)):
        monkeypatch.setattr(TaskIdentity, key, value)

    def ask(node: int, message_id: str) -> Message:
        msg = Message(RecordDict(), dst_node_id=node, message_type=fl.MESSAGE_TYPE)
        msg.metadata.__dict__["_message_id"] = message_id  # as Flower's push sets it
        return msg

    def lost(message: Message) -> Message:
        # the SuperLink's own reply: sent from its id (1) on behalf of the lost node
        relay = ask(1, message.metadata.message_id)
        return Message(Error(code=5, reason="Error: Node Unavailable"), reply_to=relay)

    sent = {"m10": 10, "m11": 11, "m12": 12}
    meta = ConfigRecord({"site": "a", "status": "error", "error": "Error: " + "x"})
    named = Message(RecordDict({"site": meta}), reply_to=ask(10, "m10"))
    cfg = {"site-list": ["a", "b", "c"], "reply-timeout": 5.0}
    found = fl._collect(
        [named, lost(ask(11, "m11")), lost(ask(12, "m12"))], [10, 11, 12], cfg, sent
    )
    unavailable = "FlowerError: code 5 (NODE_UNAVAILABLE)"
    assert list(found["failed"]) == ["a", "b", "c"]
    assert all(found["failed"][s].startswith(unavailable) for s in ("b", "c"))
    # a silent node besides: which site is which can no longer be told, nodes are named
    found = fl._collect([named, lost(ask(11, "m11"))], [10, 11, 12], cfg, sent)
    assert found["failed"]["node-11"].startswith(unavailable)
    assert found["failed"]["b"].startswith("TimeoutError") and "node-1" not in found["failed"]
