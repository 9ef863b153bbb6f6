"""Federated per-site ranking deployed for real with Flower: each site ranks where its data lives.

The multiobjective weighting paper (§1, §2.3) ranks data held by several locations that cannot
pool it: every site ranks its own features and only the rankings are aggregated.
:func:`moweights.federated.rank_sites` does that in one process; this module does the same
across machines with `Flower <https://flower.ai>`_ 1.41 (``pip install "moweights[federated]"``):
a **ClientApp** runs on each site (a Flower SuperNode), reads the site's table from the site's
own disk (:class:`moweights.data.SiteFile`), ranks it with
:func:`~aggregation.federated.rank_one_site` and replies with the
ranking only; the **ServerApp** asks every connected site, waits for the replies (with a
timeout), aggregates them with :func:`~aggregation.federated.aggregate_rankings` and writes the
result. A site that fails or does not answer is reported; the others are aggregated.

What leaves a site
------------------
One reply to one message (type ``query.rank``), made of Flower records -- strings, integers and
numeric numpy arrays (serialised by ``np.save(..., allow_pickle=False)``), never a pickled
object; the server unpickles nothing:

- ConfigRecord ``"site"``: ``site`` (the site's name), ``status`` (``"ok"`` or ``"error"``),
  ``method`` (the ranker's name), ``features`` (the feature names); for a failed site
  ``error`` (``"TypeName: fixed message"``, see below) instead of a ranking;
- ArrayRecord ``"ranking"``: ``scores`` (float64, one per feature, aligned with ``features``)
  and ``order`` (int64, feature indices best first).

No row, column of values, row count or fitted model leaves a site.

Errors: what a failed site says
-------------------------------
An exception's text can quote the site's data -- a label value, the site's column list, the
path of its file -- and what a site replies is written to the server's ``result.json``,
its tables and the ServerApp's log, which Flower streams to the operator. So a failed site
replies with :func:`site_error`: an error **type** and a **fixed message** chosen by that
type, never built from the exception (e.g. ``"InvalidInputError: the site's data could not
be read or was refused by the ranker"``; a generic ``"... the site could not rank its
data"`` for types without a message of their own). The type is moweights' own class the
message belongs to, or else the nearest standard built-in type of the exception
(``ValueError``, ``FileNotFoundError``...; ``"Error"`` when that is only ``Exception``):
a plugin's own class name is never sent, as a plugin may build it from data. The full
error, with its traceback, goes to the **site's own log**: Python logging, logger
``moweights.federated.flower``, at ERROR, in the ClientApp's process (which writes to the
SuperNode's stderr unless the site configures logging); Flower does not forward a
ClientApp's log to the server. The server checks what it receives: an error that is not
one of the fixed texts (an older or altered site) is withheld, and so is Flower's own
reason for a crashed ClientApp (it quotes the exception), leaving the error code.

The per-site errors of :func:`~moweights.federated.rank_sites` keep their full text: they
stay in the one process that ranked the sites.

Sites whose features differ
---------------------------
The server compares the feature names that come with the sites' rankings (they travel, as
aggregation needs them); no column list travels in an error. Run config ``on-mismatch``:
``"raise"`` (the default, as before: a silent drop would change whom the result speaks for
without the operator choosing it) stops the run, after writing ``result.json`` with every
ranking received; ``"drop"`` aggregates the sites that hold the feature set more than half
of the sites hold, and reports each other site in ``failed`` as ``"FeatureMismatchError:
dropped, ..."``; the ranking of a dropped site is neither aggregated nor written. Without
such a majority (two sites, two camps) nothing can be called the odd site and the run stops.

*Decision: counts, not names, in errors.* Feature names are schema, not rows, and they
reach the server inside every ranking (aggregation needs them); ``result.json`` keeps the
rankings the server used or, when the run stops, every ranking received, for diagnosis.
But an error is copied further than the result -- the ServerApp's log is streamed to the
operator and kept by the SuperLink, a traceback gets pasted into tickets -- and a site's
extra columns are its own schema (a column name can tell what a site records about
people). So errors, logs and ``failed`` name a differing site and count its missing and
extra features without naming them. The count says which site to look at; its operator
finds the names locally by comparing its columns with the features in ``result.json``
(``rank_sites`` on the same tables names them).

Deployment
----------
Every machine needs ``pip install "moweights[federated]"``. The exact commands, for a
SuperLink on ``SERVER`` and three sites (``examples/flower_deployment.md`` walks through them
and through TLS; ``--insecure`` is for a trusted network only)::

    # the server (SuperLink: one HTTP port for the sites, the operator and the ServerApp)
    flower-superlink --insecure --port 9093 --disable-runtime-dependency-installation
    # each site, with its own name, file and target column
    flower-supernode --insecure --superlink SERVER:9093 \\
        --node-config "site='site1' data-path='/data/site1.csv' target='label'"
    # the operator: a connection in $FLWR_HOME/config.toml (default ~/.flwr) ...
    #   [superlink.moweights]
    #   address = "SERVER:9093"
    #   insecure = true
    # ... then the run (the app is examples/flower-app, or one written by write_app)
    flwr run examples/flower-app moweights --stream --run-config \\
        "ranker='random_forest' target='label' sites='site1,site2,site3' \\
         random-state=0 output-dir='/srv/moweights/run1'"

Node config (``--node-config``, per site): ``site`` (its name; default ``node-<id>``),
``data-path`` (an absolute path to a .csv/.tsv/.parquet file on the site), ``target`` (the
target column, for supervised rankers; overrides the run's ``target``), ``genes-as-rows``
(``true`` when the file holds one row per feature and one column per sample, its first column
naming the features and the target's row: :class:`~moweights.data.SiteFile`'s
``transpose``; default ``false``).

Run config (``--run-config``; defaults in :data:`RUN_CONFIG`): ``ranker`` (registry name),
``ranker-params`` (a JSON object), ``target``, ``random-state`` (``-1`` = unseeded), ``sites``
(the expected sites, comma-separated, in the order that derives their seeds exactly as
``rank_sites`` does for a dict in that order; a site not listed is refused; empty = accept
every site, each seeded with ``random-state`` itself), ``min-sites`` (how many sites to wait
for; 0 = all listed sites), ``node-timeout`` and ``reply-timeout`` (seconds), ``aggregate``
(comma-separated :data:`~aggregation.combine.METHODS` names), ``on-mismatch``
(``"raise"`` or ``"drop"``, above) and ``output-dir`` (on the
server; a relative path starts at the SuperLink's working directory), which receives
``result.json`` (read it back with :func:`read_result`), ``site_rankings.csv``,
``aggregated.csv`` and ``failed.csv``.

The run config, the app folder and the result files are in
:mod:`moweights.federated.flower_app`, the local deployment (real processes on one
machine) in :mod:`moweights.federated.local`; both are importable from here. The apps
lived in ``aggregation.federated.flower`` (and ``aggregation.flower``) before reading a
site's file moved up into :mod:`moweights`: those paths are gone, so an app folder written
before names ``moweights.federated.flower:server_app`` and ``:client_app`` now
(:func:`write_app` writes them).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from aggregation.federated.aggregate import aggregate_rankings
from aggregation.federated.rank import SiteRankings
from aggregation.federated.sites import check_same_features, odd_sites, rank_one_site, spawn_seeds
from aggregation.ranking import Ranking
from moweights.data import SiteFile
from moweights.federated._site_errors import NodeConfigError, is_site_error, site_error
from moweights.federated.flower_app import (
    RUN_CONFIG,
    check_run_config,
    read_result,
    write_app,
    write_result,
)
from moweights.federated.local import LocalDeployment
from rankers.exceptions import FeatureMismatchError

# client_app and server_app are made on first access (module __getattr__, below); Flower's
# loader finds them in __all__.
__all__ = [  # noqa: F822
    "MESSAGE_TYPE",
    "RUN_CONFIG",
    "LocalDeployment",
    "build_client_app",
    "build_server_app",
    "client_app",
    "read_result",
    "server_app",
    "site_error",
    "site_seeds",
    "write_app",
]

#: the site's own log (Python logging in the ClientApp's process, which writes to the
#: SuperNode's stderr unless the site configures logging): every failure in full, at ERROR
#: (named after this module: ``moweights.federated.flower``; before the apps moved up from
#: aggregation it was ``aggregation.federated.flower``, which a site's logging configuration
#: may still name)
_LOG = logging.getLogger(__name__)

#: the one message a site answers (Flower's "query" category, action "rank")
MESSAGE_TYPE = "query.rank"

#: the sender id of the replies the SuperLink makes itself (flwr.common.constant)
_SUPERLINK_NODE_ID = 1

#: what the server records for a site whose error text is not one of the fixed messages
_WITHHELD = (
    "InvalidReply: the site's error message is not one of moweights' fixed messages, so it "
    "is withheld (an older or altered site may quote its data); see the site's log"
)

_INSTALL_HINT = 'the Flower apps need Flower 1.41: pip install "moweights[federated]"'


def _flwr() -> Any:
    """Import Flower's app modules, or say how to install them."""
    try:
        import flwr.app
        import flwr.clientapp
        import flwr.serverapp
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    return flwr


def site_seeds(random_state: int | None, sites: Iterable[str]) -> dict[str, int | None]:
    """Each site's seed, derived exactly as :func:`~aggregation.federated.rank_sites` does.

    One child of ``np.random.SeedSequence(random_state)`` per site, spawned in site order;
    None (unseeded) for every site when ``random_state`` is None.

    Examples
    --------
    >>> seeds = site_seeds(0, ["north", "south"])
    >>> seeds == site_seeds(0, ["north", "south"]), seeds["north"] != seeds["south"]
    (True, True)
    """
    sites = list(sites)
    return dict(zip(sites, spawn_seeds(random_state, len(sites)), strict=True))


# ------------------------------------------------------------------ the site (ClientApp)
def _site_reply(msg: Any, context: Any) -> Any:
    """Rank this site's local table as asked; reply with the ranking or a data-free error."""
    from flwr.app import ConfigRecord, Message, RecordDict

    site = str(context.node_config.get("site", f"node-{context.node_id}"))
    try:
        content = _rank_here(msg.content["request"], context.node_config, site)
    except Exception as exc:
        # A site's failure is its answer, so the server keeps the other sites' rankings. The
        # reply says only what kind of failure (site_error); the text stays here.
        public = site_error(exc)
        _LOG.error(
            "site %r could not rank its data; the server is told %r", site, public, exc_info=True
        )
        record = ConfigRecord({"site": site, "status": "error", "error": public})
        content = RecordDict({"site": record})
    return Message(content, reply_to=msg)


def _rank_here(ask: Any, node: Mapping[str, Any], site: str) -> Any:
    """The reply content of a site that ranked: its ranking's names, scores and order."""
    from flwr.app import Array, ArrayRecord, ConfigRecord, RecordDict

    names = list(ask["site-names"]) if "site-names" in ask else []
    if names and site not in names:
        raise NodeConfigError(
            f"site {site!r} is not one of this run's sites ({', '.join(names)}); "
            "check its --node-config site=..."
        )
    seed = int(ask["site-seeds"][names.index(site)]) if names else int(ask["seed"])
    path = node.get("data-path")
    if not path:
        raise NodeConfigError(
            "this SuperNode has no data-path: start it with "
            "--node-config \"data-path='/path/to/table.csv'\""
        )
    genes_as_rows = node.get("genes-as-rows", False)
    if not isinstance(genes_as_rows, bool):
        raise NodeConfigError(
            f"genes-as-rows must be true or false, got {genes_as_rows!r}: start the SuperNode "
            'with --node-config "genes-as-rows=true" for a file with one row per feature'
        )
    target = str(node.get("target") or ask["target"]) or None
    params = json.loads(str(ask["ranker-params"]))
    data = SiteFile(str(path), transpose=genes_as_rows)
    ranking = rank_one_site(data, str(ask["ranker"]), params, target, None if seed < 0 else seed)
    meta = {"site": site, "status": "ok", "method": ranking.method or ""}
    meta["features"] = list(ranking.names)
    arrays = {
        "scores": Array(np.ascontiguousarray(ranking.scores, dtype=np.float64)),
        "order": Array(np.ascontiguousarray(ranking.order_idx, dtype=np.int64)),
    }
    return RecordDict({"site": ConfigRecord(meta), "ranking": ArrayRecord(arrays)})


def build_client_app() -> Any:
    """A Flower ``ClientApp`` answering :data:`MESSAGE_TYPE` with the site's ranking."""
    flwr = _flwr()
    app = flwr.clientapp.ClientApp()
    app.query("rank")(_site_reply)
    return app


# ------------------------------------------------------------------ the server (ServerApp)
def _wait_for_nodes(grid: Any, needed: int, timeout: float) -> list[int]:
    """Connected node ids, once ``needed`` are there or ``timeout`` seconds have passed."""
    deadline = time.monotonic() + timeout
    while True:
        nodes = sorted(grid.get_node_ids())
        if len(nodes) >= needed or time.monotonic() >= deadline:
            return nodes
        time.sleep(0.25)


def _request(cfg: Mapping[str, Any]) -> Any:
    """What every site is sent: the ranker, its parameters, the target and the seeds."""
    from flwr.app import ConfigRecord

    seed = cfg["seed"]
    ask: dict[str, Any] = {
        "ranker": str(cfg["ranker"]),
        "ranker-params": str(cfg["ranker-params"]),
        "target": str(cfg["target"]),
        "seed": -1 if seed is None else seed,
    }
    if cfg["site-list"]:  # Flower records cannot hold an empty list
        seeds = site_seeds(seed, cfg["site-list"])
        ask["site-names"] = list(seeds)
        ask["site-seeds"] = [-1 if v is None else v for v in seeds.values()]
    return ConfigRecord(ask)


def _flower_error(code: int) -> str:
    """A Flower error reply, by its code only: Flower's reason for a crashed ClientApp
    quotes the exception (``"<class ...>:<'text'>"``), which may quote the site's data."""
    from flwr.common.constant import ErrorCode

    names = {v: k for k, v in vars(ErrorCode).items() if isinstance(v, int) and k.isupper()}
    return (
        f"FlowerError: code {code} ({names.get(code, 'UNKNOWN')}); Flower's reason is "
        "withheld, as it may quote the site's data; see the site's log"
    )


def _read_reply(reply: Any, node_id: int | None = None) -> tuple[str, Ranking | None, str | None]:
    """(site, ranking, error) from one reply; only strings and numeric arrays are read.

    ``node_id`` is the node the reply speaks for, when not its sender (the SuperLink answers
    for a node that stopped sending heartbeats)."""
    node = f"node-{reply.metadata.src_node_id if node_id is None else node_id}"
    if reply.has_error():  # Flower's own error: the ClientApp crashed or could not load
        return node, None, _flower_error(int(reply.error.code))
    site = node
    try:  # a malformed reply fails its site, never the run
        meta = reply.content["site"]
        site = str(meta["site"])
        if meta["status"] != "ok":
            error = str(meta["error"])
            return site, None, error if is_site_error(error) else _WITHHELD
        arrays = reply.content["ranking"]
        scores, order = arrays["scores"].numpy(), arrays["order"].numpy()  # allow_pickle=False
        if scores.dtype.kind != "f" or order.dtype.kind not in "iu":
            raise TypeError(f"scores are {scores.dtype} and order {order.dtype}")
        ranking = Ranking(list(meta["features"]), scores, str(meta["method"]) or None, order)
    except Exception as exc:
        return site, None, f"InvalidReply: {type(exc).__name__}: {exc}"
    return site, ranking, None


def _collect(
    replies: Iterable[Any],
    nodes: list[int],
    cfg: Mapping[str, Any],
    sent: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """Per-site rankings (in the configured site order, then by name) and failures.

    ``sent`` maps the id of each message sent to its node: a reply the SuperLink made for a
    node it lost (Flower's NODE_UNAVAILABLE, sent from the SuperLink's own id) is that
    node's. Such a reply names no site; when the listed sites without an answer are exactly
    that many, and no node stayed silent, they are those nodes' sites and get the error.
    """
    got: dict[str, Ranking] = {}
    failed: dict[str, str] = {}
    claims: dict[str, list[int]] = {}
    unnamed: dict[str, str] = {}  # node-<id> -> Flower's error, for a reply naming no site
    for reply in replies:
        src = reply.metadata.src_node_id
        if src == _SUPERLINK_NODE_ID and reply.has_error() and sent:
            src = sent.get(reply.metadata.reply_to_message_id, src)
        site, ranking, error = _read_reply(reply, src)
        claims.setdefault(site, []).append(src)
        if ranking is None:
            failed[site] = str(error)
            if reply.has_error():
                unnamed[site] = str(error)
        else:
            got[site] = ranking
    listed = cfg["site-list"]
    for site in [s for s in claims if listed and s not in listed and s not in unnamed]:
        got.pop(site, None)
        failed[site] = (
            "InvalidReply: not one of this run's sites (its --node-config site=...); "
            "see the run config's sites"
        )
    answered = {n for ids in claims.values() for n in ids}
    for site, ids in claims.items():  # which one is the site? Trust neither.
        if len(ids) > 1:
            got.pop(site, None)
            failed[site] = f"InvalidReply: {len(ids)} nodes answered as this site: {sorted(ids)}"
    silent = [n for n in nodes if n not in answered]
    missing = [s for s in listed if s not in got and s not in failed]
    same = len(set(unnamed.values())) == 1
    if missing and not silent and len(unnamed) == len(missing) and same:
        for node in unnamed:  # exactly the missing sites' nodes, all with one error
            error = failed.pop(node)
        for s in missing:
            failed[s] = error
        missing = []
    for s in missing:  # whether its node never connected or did not answer in time
        failed[s] = f"TimeoutError: no reply within reply-timeout={cfg['reply-timeout']} s"
    if len(silent) > len(missing):  # silent nodes that no listed site accounts for
        for n in silent:
            failed[f"node-{n}"] = f"TimeoutError: no reply within {cfg['reply-timeout']} s"
    first = {s: i for i, s in enumerate(listed)}  # listed sites in their order, then the rest
    rank = sorted(got, key=lambda s: (first.get(s, len(first)), s))
    fails = sorted(failed, key=lambda s: first.get(s, len(first)))  # stable: reply order
    return {"rankings": {s: got[s] for s in rank}, "failed": {s: failed[s] for s in fails}}


def _server_main(grid: Any, context: Any) -> None:
    from flwr.app import Message, RecordDict
    from flwr.common import log

    cfg = check_run_config(context.run_config)
    out = Path(str(cfg["output-dir"])).expanduser().resolve()
    nodes = _wait_for_nodes(grid, cfg["min-sites"], float(cfg["node-timeout"]))
    log(logging.INFO, "moweights: asking %d site(s) to rank with %r", len(nodes), cfg["ranker"])
    content = RecordDict({"request": _request(cfg)})
    messages = [Message(content, dst_node_id=n, message_type=MESSAGE_TYPE) for n in nodes]
    replies = grid.send_and_receive(messages, timeout=float(cfg["reply-timeout"]))
    # sending gave every message its id: a reply the SuperLink makes for a lost node says it
    sent = {m.metadata.message_id: m.metadata.dst_node_id for m in messages}
    sent.pop("", None)  # a Grid that sets no ids (a stand-in) leaves them empty
    found = _collect(replies, nodes, cfg, sent)
    try:
        _check_features(found, cfg)
    except FeatureMismatchError as exc:  # keep what the sites sent, then stop
        write_result(out, cfg, found, error=f"{type(exc).__name__}: {exc}")
        raise
    finally:
        for site, error in found["failed"].items():
            log(logging.WARNING, "moweights: site %s failed: %s", site, error)
    if not found["rankings"]:
        write_result(out, cfg, found, error="no site returned a ranking")
        raise RuntimeError(f"no site returned a ranking; see {out / 'result.json'}")
    try:
        found["aggregated"] = aggregate_rankings(found["rankings"], cfg["methods"])
    except ValueError as exc:  # e.g. kemeny over too many features: keep what the sites sent
        write_result(out, cfg, found, error=f"{type(exc).__name__}: {exc}")
        raise
    result = SiteRankings.from_rankings(str(cfg["ranker"]), **found)
    write_result(out, cfg, found, compatible=result.compatible, s=result.s)
    log(logging.INFO, "moweights: %d site(s) ranked; result in %s", len(result.rankings), out)


def _check_features(found: dict[str, Any], cfg: Mapping[str, Any]) -> None:
    """The sites' feature sets, compared by their rankings' names (which travel anyway).

    Errors and failures name a differing site and count its missing and extra features,
    never naming them (see the module docstring). ``on-mismatch="drop"`` moves the odd
    sites from the rankings to the failures, in the configured site order.
    """
    names = {s: r.names for s, r in found["rankings"].items()}
    if cfg["on-mismatch"] == "raise":
        hint = "\nrun with on-mismatch='drop' to aggregate the sites that share one feature set"
        check_same_features(names, named=False, hint=hint)
        return
    dropped = odd_sites(names, named=False)
    if dropped:
        failed = {**found["failed"], **dropped}
        first = {s: i for i, s in enumerate(cfg["site-list"])}
        found["rankings"] = {s: r for s, r in found["rankings"].items() if s not in dropped}
        found["failed"] = {
            s: failed[s] for s in sorted(failed, key=lambda s: first.get(s, len(first)))
        }


def build_server_app() -> Any:
    """A Flower ``ServerApp`` that asks every site for its ranking and aggregates them."""
    flwr = _flwr()
    app = flwr.serverapp.ServerApp()
    app.main()(_server_main)
    return app


def __getattr__(name: str) -> Any:
    # Flower loads "moweights.federated.flower:client_app" / ":server_app"; they are built
    # on first access, so importing this module (and moweights) never needs Flower.
    builders = {"client_app": build_client_app, "server_app": build_server_app}
    if name in builders:
        app = builders[name]()
        globals()[name] = app
        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
