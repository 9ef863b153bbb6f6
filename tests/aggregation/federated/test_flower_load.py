"""The real Flower deployment when sites go down mid-round.

Five SuperNodes on 127.0.0.1, each with its own data file; every site's ranker sleeps a
little in ``fit`` (a plugin ranker), and once the doomed site has started ranking its
SuperNode is killed (SIGKILL to its process group). The run must finish with the other
sites, name the dead site, and aggregate exactly what ``rank_sites`` gives on the survivors.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import aggregation.federated.flower as fl
import rankers
from aggregation.federated import rank_sites

#: a ranker that marks when it starts (file ``<rows>.<pid>`` in $SLEEPY_MARKS) and then
BENCH = Path(__file__).resolve().parents[3] / "benchmarks"


def _bench():
    """benchmarks/bench_federation_load.py, whose sleepy ranker plugin the tests share."""
    spec = importlib.util.spec_from_file_location(
        "bench_federation_load", BENCH / "bench_federation_load.py"
    )
    module = importlib.util.module_from_spec(spec)
    saved = list(sys.path)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = saved
    return module


N_SITES = 5
KILLED = ("site2", "site4")
DELAY = 8.0  # seconds each site ranks: the window in which a site is killed


@pytest.fixture
def sleepy_plugin(tmp_path_factory, monkeypatch):
    """The benchmark's sleepy ranker, installed on this process's and Flower's path."""
    folder = tmp_path_factory.mktemp("plugin")
    _bench().write_plugin(folder)
    monkeypatch.syspath_prepend(str(folder))
    path = [str(folder), *filter(None, [os.environ.get("PYTHONPATH")])]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(path))
    marks = tmp_path_factory.mktemp("marks")
    monkeypatch.setenv("SLEEPY_MARKS", str(marks))
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


def _wait_for(pred, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise TimeoutError("waited too long")
        time.sleep(0.2)


@pytest.mark.slow
def test_sites_killed_mid_round_are_named_and_the_others_aggregated(sleepy_plugin, tmp_path):
    pytest.importorskip("flwr", minversion="1.41")
    paths = site_files(tmp_path, N_SITES)
    nodes = {s: {"data-path": str(p)} for s, p in paths.items()}
    rows = {s: 30 + i for i, s in enumerate(paths, start=1)}
    outcome: dict = {}
    with fl.LocalDeployment(nodes, tmp_path / "flower") as deployment:

        def run():
            try:
                outcome["result"] = deployment.run(
                    timeout=180,
                    ranker="sleepy_variance",
                    ranker_params=f'{{"delay": {DELAY}}}',
                    sites=",".join(paths),
                    node_timeout=60.0,
                    reply_timeout=45.0,
                )
            except BaseException as exc:  # re-raised below, in the test's thread
                outcome["error"] = exc

        runner = threading.Thread(target=run, daemon=True)
        runner.start()
        # mid-round: as soon as a doomed site is ranking, its machine goes down
        doomed = set(KILLED)

        def kill_started() -> bool:
            for site in [s for s in doomed if any(sleepy_plugin.glob(f"{rows[s]}.*"))]:
                deployment.kill_site(site)
                doomed.discard(site)
            return not doomed

        _wait_for(kill_started, timeout=120)
        runner.join(timeout=200)
        assert not runner.is_alive()
    assert deployment.leftover_pids() == []
    if "error" in outcome:
        raise outcome["error"]
    got = outcome["result"]
    survivors = {s: p for s, p in paths.items() if s not in KILLED}
    assert list(got.rankings) == list(survivors)
    # named by their site names
    assert got.failed == {s: "TimeoutError: no reply within reply-timeout=45.0 s" for s in KILLED}
    ref = rank_sites(survivors, "sleepy_variance", {"delay": 0.0})
    for site in survivors:
        assert got.rankings[site] == ref.rankings[site]
    assert got.aggregated == ref.aggregated and got.generic == ref.generic


def test_a_reply_the_superlink_makes_for_a_lost_node_names_its_site(monkeypatch):
    pytest.importorskip("flwr", minversion="1.41")
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
