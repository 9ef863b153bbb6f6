"""AnnData in and out: rankers on an ``AnnData``, results written back where scanpy puts them.

Conventions (scanpy's, ``scanpy.tl.rank_genes_groups`` and
``scanpy.pp.highly_variable_genes``): per-feature results are columns of
``adata.var``; everything else lives under one key of ``adata.uns``, as plain types an
``.h5ad`` file holds. ``X``, the layers, ``obs``, ``obsm``, ``varm``, ``obsp`` and the
other entries of ``uns`` are never changed; with ``copy=True`` the caller's object is not
touched at all and the result is returned.

:func:`rank_features` writes, for ``key_added="moweights"`` and each ranker or aggregate
``<m>``:

- ``adata.var["moweights_<m>_score"]`` (higher = more relevant) and
  ``adata.var["moweights_<m>_rank"]`` (1 = best; the method's own order);
- ``adata.var["moweights_<m>_pvalue"]`` and ``["moweights_<m>_qvalue"]`` for rankers
  that test a null hypothesis (Benjamini–Hochberg q-values);
- ``adata.uns["moweights"]``: ``params`` (target, layer, rankers, aggregates, the
  rankers' parameters as JSON), ``rankings`` and ``aggregates`` (per method: ``order``,
  the names best first, and ``scores`` in ``var_names`` order) and, when asked for,
  ``evaluation`` (a data frame: ``method``, ``k``, ``metric``, ``mean``, ``std``,
  ``n_folds``).

:func:`rank_markers` stores :func:`~moweights.scverse.markers.find_markers` as
``rank_genes_groups`` does (``params``, ``names``, ``scores``, ``pvals``, ``pvals_adj``,
``logfoldchanges`` as record arrays with one field per group, best first; ``pts`` and
``pts_rest`` as data frames), so ``scanpy.get.rank_genes_groups_df(adata, None,
key="moweights_markers")`` and scanpy's marker plots read it, plus ``ranks`` (the
consensus rank of every feature per group) and ``member_ranks``.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import scipy.sparse as sp

from aggregation.combine import METHODS, check_methods
from aggregation.ranking import GenericRanking, Ranking
from moweights.scverse.markers import find_markers, rank_positions
from rankers.exceptions import InvalidInputError, InvalidParameterError

__all__ = ["AnnDataInput", "from_anndata", "get_markers", "rank_features", "rank_markers"]

#: the aggregates that combine a plain list of rankings (weighted_mean_rank needs weights)
_AGGREGATES = tuple(m for m in METHODS if m != "weighted_mean_rank")


def _anndata():
    try:
        import anndata
    except ImportError as err:  # pragma: no cover - the extra is what installs it
        raise ImportError(
            "moweights.scverse needs anndata: pip install 'moweights[scverse]'"
        ) from err
    return anndata


class AnnDataInput(NamedTuple):
    """What a ranker takes from an ``AnnData``: the matrix, the target and the names."""

    #: ``X`` or the layer: a sparse matrix stays sparse, a dense one is a read-only view
    X: Any
    #: the ``obs`` column (a Series indexed by ``obs_names``), or None
    y: pd.Series | None
    #: ``var_names`` as strings
    names: tuple[str, ...]


def _close(name: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(str(name), [str(k) for k in known], n=2)
    listed = ", ".join(map(repr, known)) if known else "none"
    hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
    return f"{hint} (it has: {listed})"


def from_anndata(
    adata: Any, target: str | None = None, *, layer: str | None = None
) -> AnnDataInput:
    """The data matrix, target and feature names of an ``AnnData``, for any ranker.

    Parameters
    ----------
    adata : anndata.AnnData
        In memory (a backed object: ``adata.to_memory()`` first). Never modified.
    target : str, optional
        A column of ``adata.obs`` (cell types, conditions, a quantity).
    layer : str, optional
        A key of ``adata.layers`` to use instead of ``X``.

    Returns
    -------
    AnnDataInput
        ``(X, y, names)``: fit a ranker with ``est.fit(X, y)`` and name its scores with
        ``names``.

    Raises
    ------
    InvalidParameterError
        When ``adata`` is no AnnData, or ``target`` / ``layer`` names nothing it holds
        (with the names it has).
    InvalidInputError
        When ``adata`` is backed, or its matrix is not 2-dimensional numbers.

    Examples
    --------
    >>> import anndata, numpy as np, pandas as pd, rankers
    >>> adata = anndata.AnnData(
    ...     np.array([[0.0, 1.0], [0.1, 1.0], [2.0, 0.0], [2.1, 0.1]]),
    ...     obs=pd.DataFrame({"cell_type": ["a", "a", "b", "b"]}, index=list("wxyz")),
    ... )
    >>> X, y, names = from_anndata(adata, target="cell_type")
    >>> rankers.get("anova_f").fit(X, y).ranking_.tolist(), names
    ([0, 1], ('0', '1'))
    """
    anndata = _anndata()
    if not isinstance(adata, anndata.AnnData):
        raise InvalidParameterError(
            f"expected an anndata.AnnData, got {type(adata).__name__}; for arrays and frames "
            "call the rankers directly"
        )
    if adata.isbacked:
        raise InvalidInputError(
            f"the AnnData is backed by {adata.filename}: load it with adata.to_memory() first"
        )
    if layer is None:
        X = adata.X
        if X is None:
            raise InvalidInputError("the AnnData has no X; name one of its layers with layer=")
    else:
        if layer not in adata.layers:
            raise InvalidParameterError(
                f"layer {layer!r} is not a layer of the AnnData" + _close(layer, list(adata.layers))
            )
        X = adata.layers[layer]
    if not sp.issparse(X):
        if hasattr(X, "toarray") and not isinstance(X, np.ndarray):
            raise InvalidInputError(
                f"the AnnData's matrix is a {type(X).__name__}; give it in memory as a numpy "
                "array or a scipy sparse matrix"
            )
        X = np.asarray(X).view()
        X.flags.writeable = False
    y = None
    if target is not None:
        if target not in adata.obs.columns:
            raise InvalidParameterError(
                f"target {target!r} is not a column of adata.obs"
                + _close(target, list(adata.obs.columns))
            )
        y = adata.obs[target].copy()
    return AnnDataInput(X, y, tuple(str(n) for n in adata.var_names))


def _set_only(params: dict[str, Any]) -> dict[str, Any]:
    """The parameters that were given: a None is left out, since not every anndata version
    writes one to ``.h5ad``."""
    return {k: v for k, v in params.items() if v is not None}


def _default_rankers(y: pd.Series | None) -> tuple[str, ...]:
    if y is None:
        return ("variance",)
    from rankers.validation import target_task

    if target_task(y.to_numpy()) == "classification" or isinstance(y.dtype, pd.CategoricalDtype):
        return ("anova_f", "t_test")
    raise InvalidParameterError(
        f"target {y.name!r} holds quantities: name the rankers (rankers.available() lists "
        "those whose target kind is 'regression' or 'both')"
    )


def _fit(name: str, X, y, params: dict, random_state) -> Any:
    import rankers

    est = rankers.get(name, **params.get(name, {}))
    if random_state is not None and est.get_params().get("random_state", 0) is None:
        est.set_params(random_state=random_state)
    return est.fit(X, y)


def _record(ranking: Ranking | GenericRanking, names: tuple[str, ...]) -> dict[str, np.ndarray]:
    pos = rank_positions(ranking, names)
    order = np.empty(len(names), dtype=np.intp)
    order[pos] = np.arange(len(names))
    if isinstance(ranking, Ranking):
        scores = ranking.reindex(names).scores.copy()
    else:  # a generic ranking has no scores: n + 1 - its average rank
        scores = len(names) + 1 - ranking.ranks.reindex(list(names)).to_numpy(dtype=float)
    return {"order": np.asarray(names, dtype=object)[order], "scores": scores}


def _ordered(combine):
    """``combine`` giving a Ranking: a generic ranking's blocks become tied scores."""

    def ordered(rankings: list[Ranking]) -> Ranking:
        r = combine(rankings)
        if isinstance(r, GenericRanking):
            ranks = r.ranks
            return Ranking(tuple(ranks.index), len(ranks) + 1 - ranks.to_numpy(), r.method)
        return r

    return ordered


def _evaluate(Xd, y, members: list[str], fitted_params: dict, aggregates: list[str], cv, seed):
    from aggregation.evaluation import (
        class_curve,
        combine_folds,
        cv_splits,
        fold_rankings,
        topk_curve,
    )
    from rankers.validation import target_task

    classes = y is not None and target_task(y.to_numpy()) == "classification"
    yv = None if y is None else y.to_numpy()
    splits = cv_splits(Xd, yv if classes else None, cv=cv, random_state=seed)
    curve = class_curve if classes else topk_curve
    folds = {
        name: fold_rankings(
            name, Xd, yv, cv=splits, params=fitted_params.get(name), random_state=seed
        )
        for name in members
    }
    for agg in aggregates:
        combine = _ordered(METHODS[agg])
        folds[agg] = combine_folds([folds[name] for name in members], combine, method=agg)
    frames = []
    for method, fr in folds.items():
        frames.append(curve(fr, Xd, yv).assign(method=method))
    random = curve("random", Xd, yv, cv=splits, random_state=seed)
    frames.append(random.assign(method="random"))
    table = pd.concat(frames, ignore_index=True)
    table.attrs.clear()
    cols = ["method"] + [c for c in table.columns if c != "method"]
    return table[cols]


def rank_features(
    adata: Any,
    rankers: Sequence[str] | str | None = None,
    target: str | None = None,
    *,
    layer: str | None = None,
    key_added: str = "moweights",
    aggregate: Sequence[str] | str | None = None,
    evaluate: bool = False,
    cv: int = 5,
    params: dict[str, dict] | None = None,
    random_state: int | None = None,
    copy: bool = False,
) -> Any:
    """Rank the features of an ``AnnData`` and write the results back, scanpy-style.

    Parameters
    ----------
    adata : anndata.AnnData
        The data (``X`` or ``layer``; sparse or dense). Only ``adata.var`` (new columns)
        and ``adata.uns[key_added]`` change.
    rankers : str or sequence of str, optional
        Registry names (:func:`rankers.available`). Default ``("anova_f", "t_test")``
        with a class target, ``("variance",)`` without one; a numeric target needs them
        named.
    target : str, optional
        A column of ``adata.obs``: the classes or quantity supervised rankers fit.
    layer : str, optional
        A key of ``adata.layers`` used instead of ``X``.
    key_added : str, default="moweights"
        Prefix of the ``var`` columns and key of the ``uns`` entry.
    aggregate : str or sequence of str, optional
        Names of :data:`aggregation.combine.METHODS` combining the rankers (any but
        ``"weighted_mean_rank"``).
    evaluate : bool, default=False
        Also score every ranker and aggregate on held-out cells, refitted on each
        training fold (nested): with a class target
        :func:`~aggregation.evaluation.class_curve` (balanced accuracy of a kNN on the
        top k), otherwise :func:`~aggregation.evaluation.topk_curve`; the seeded random
        ranking as the baseline. Densifies the matrix.
    cv : int, default=5
        Folds of the evaluation.
    params : dict, optional
        Parameters of the rankers, by name (``{"laplacian": {"n_neighbors": 10}}``).
    random_state : int, optional
        Seeds the rankers whose ``random_state`` is not set, and the evaluation's folds.
    copy : bool, default=False
        Work on a copy and return it, leaving ``adata`` untouched.

    Returns
    -------
    anndata.AnnData or None
        The copy when ``copy=True``, else None (``adata`` holds the results).

    Raises
    ------
    InvalidParameterError
        An unknown ranker, aggregate, target or layer.

    Examples
    --------
    >>> import anndata, numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 3))
    >>> X[:20, 1] += 3.0
    >>> adata = anndata.AnnData(X, obs=pd.DataFrame({"cell_type": np.repeat(["a", "b"], 20)},
    ...                         index=[f"c{i}" for i in range(40)]))
    >>> rank_features(adata, ["anova_f"], target="cell_type")
    >>> adata.var["moweights_anova_f_rank"].tolist()
    [2, 1, 3]
    """
    X, y, names = from_anndata(adata, target, layer=layer)
    members = list(
        _default_rankers(y)
        if rankers is None
        else ([rankers] if isinstance(rankers, str) else rankers)
    )
    if not members:
        raise InvalidParameterError("rankers names no ranker; give at least one")
    aggregates = [] if aggregate is None else check_methods(aggregate, _AGGREGATES)
    params = dict(params or {})
    unknown = sorted(set(params) - set(members))
    if unknown:
        raise InvalidParameterError(f"params names rankers that are not in rankers: {unknown}")
    if not isinstance(key_added, str) or not key_added:
        raise InvalidParameterError(f"key_added must be a non-empty string; got {key_added!r}")

    yv = None if y is None else y.to_numpy()
    columns: dict[str, np.ndarray] = {}
    rankings: dict[str, Ranking] = {}
    for name in members:
        est = _fit(name, X, yv, params, random_state)
        r = Ranking(names, est.scores_, method=name, order_idx=est.ranking_)
        rankings[name] = r
        columns[f"{key_added}_{name}_score"] = np.asarray(est.scores_, dtype=np.float64)
        columns[f"{key_added}_{name}_rank"] = rank_positions(r, names) + 1
        for field in ("pvalue", "qvalue"):
            values = getattr(est, f"{field}s_", None)
            if values is not None:
                columns[f"{key_added}_{name}_{field}"] = np.asarray(values, dtype=np.float64)
    combined = {agg: METHODS[agg](list(rankings.values())) for agg in aggregates}
    for agg, r in combined.items():
        rec = _record(r, names)
        columns[f"{key_added}_{agg}_score"] = rec["scores"]
        columns[f"{key_added}_{agg}_rank"] = rank_positions(r, names) + 1

    record: dict[str, Any] = {
        "params": _set_only(
            {
                "target": target,
                "layer": layer,
                "rankers": list(members),
                "aggregate": list(aggregates),
                "ranker_params": json.dumps(params, sort_keys=True, default=str),
                "random_state": random_state,
            }
        ),
        "rankings": {name: _record(r, names) for name, r in rankings.items()},
        "aggregates": {agg: _record(r, names) for agg, r in combined.items()},
    }
    if evaluate:
        Xd = X.toarray() if sp.issparse(X) else np.asarray(X)
        seed = 0 if random_state is None else random_state
        record["evaluation"] = _evaluate(Xd, y, members, params, aggregates, cv, seed)
        record["params"]["cv"] = int(cv)

    out = adata.copy() if copy else adata
    for col, values in columns.items():
        out.var[col] = values
    out.uns[key_added] = record
    return out if copy else None


def rank_markers(
    adata: Any,
    groupby: str,
    *,
    rankers: Sequence[str] | str = ("t_test", "wilcoxon"),
    layer: str | None = None,
    key_added: str = "moweights_markers",
    aggregate: str = "mean_rank",
    method: str = "t-test",
    direction: str = "up",
    tie_correct: bool = False,
    n_genes: int | None = None,
    params: dict[str, dict] | None = None,
    copy: bool = False,
) -> Any:
    """Marker features of every group of ``adata.obs[groupby]``, stored as scanpy stores them.

    The computation is :func:`~moweights.scverse.markers.find_markers` (one-vs-rest
    statistics of ``method``, the members' consensus order per group); the result goes
    to ``adata.uns[key_added]`` in ``scanpy.tl.rank_genes_groups``' layout, so
    ``scanpy.get.rank_genes_groups_df(adata, None, key=key_added)`` reads it. The base of
    the log1p transform is read from ``adata.uns["log1p"]["base"]`` when set (as scanpy).

    Parameters
    ----------
    adata : anndata.AnnData
        ``X`` (or ``layer``) should hold log1p values for the fold changes to mean what
        scanpy's mean. Only ``adata.uns[key_added]`` changes.
    groupby : str
        A column of ``adata.obs`` holding the groups (cell types, clusters).
    rankers : str or sequence of str, default=("t_test", "wilcoxon")
        The members ordering each group's features (see
        :func:`~moweights.scverse.markers.find_markers`).
    layer : str, optional
        A key of ``adata.layers`` used instead of ``X``.
    key_added : str, default="moweights_markers"
        The key of ``adata.uns``.
    aggregate : str, default="mean_rank"
        A name of :data:`aggregation.combine.METHODS` combining the members per group.
    method : {"t-test", "wilcoxon"}, default="t-test"
        The test of the scores, p-values and q-values (scanpy's ``method``).
    direction : {"up", "down", "both"}, default="up"
        Features higher in the group first (scanpy's default), lower, or either.
    tie_correct : bool, default=False
        Tie correction of the rank-sum test.
    n_genes : int, optional
        Features kept per group in the record arrays (scanpy's ``n_genes``; default all).
    params : dict, optional
        Parameters of the member rankers, by name.
    copy : bool, default=False
        Work on a copy and return it.

    Returns
    -------
    anndata.AnnData or None
        The copy when ``copy=True``, else None.
    """
    if not isinstance(groupby, str):
        raise InvalidParameterError(f"groupby must name a column of adata.obs; got {groupby!r}")
    X, y, names = from_anndata(adata, groupby, layer=layer)
    base = adata.uns.get("log1p", {}).get("base") if "log1p" in adata.uns else None
    table = find_markers(
        X,
        y,
        names,
        rankers=rankers,
        aggregate=aggregate,
        test=method,
        direction=direction,
        tie_correct=tie_correct,
        log_base=base,
        params=params,
    )
    groups = [str(g) for g in table["group"].cat.categories]
    d = len(names)
    keep = d if n_genes is None else int(n_genes)
    if not 1 <= keep <= d:
        raise InvalidParameterError(f"n_genes must be in 1..{d}; got {n_genes!r}")
    by_group = {str(g): block for g, block in table.groupby("group", observed=True, sort=False)}

    def records(column: str, dtype: str) -> np.recarray:
        arrays = [by_group[g][column].to_numpy()[:keep].astype(dtype) for g in groups]
        return np.rec.fromarrays(arrays, dtype=[(g, dtype) for g in groups])

    def wide(column: str) -> pd.DataFrame:
        frame = pd.DataFrame(
            {g: by_group[g].set_index("feature")[column].reindex(names).to_numpy() for g in groups},
            index=pd.Index(names),
        )
        return frame

    members = table.attrs["params"]["rankers"]
    record = {
        "params": _set_only(
            {
                "groupby": groupby,
                "reference": "rest",
                "method": method,
                "use_raw": False,
                "layer": layer,
                "corr_method": "benjamini-hochberg",
                "rankers": list(members),
                "aggregate": aggregate,
                "direction": direction,
                "tie_correct": bool(tie_correct),
            }
        ),
        "names": records("feature", "O"),
        "scores": records("score", "float32"),
        "pvals": records("pvalue", "float64"),
        "pvals_adj": records("qvalue", "float64"),
        "logfoldchanges": records("logfoldchange", "float32"),
        "pts": wide("pct_in"),
        "pts_rest": wide("pct_out"),
        "ranks": wide("rank"),
        "member_ranks": {name: wide(f"{name}.rank") for name in members},
    }
    out = adata.copy() if copy else adata
    out.uns[key_added] = record
    return out if copy else None


def _member_order(rec: dict) -> list[str]:
    """The members of a stored marker record in the order they were given (a file read
    back lists a dict's keys sorted)."""
    stored = list(rec.get("member_ranks", {}))
    given = [str(n) for n in np.atleast_1d(rec.get("params", {}).get("rankers", []))]
    return [n for n in given if n in stored] + [n for n in stored if n not in given]


def get_markers(adata: Any, key: str = "moweights_markers") -> pd.DataFrame:
    """The long marker table back from ``adata.uns[key]`` (as :func:`rank_markers` wrote it).

    Parameters
    ----------
    adata : anndata.AnnData
    key : str, default="moweights_markers"

    Returns
    -------
    DataFrame
        The columns of :func:`~moweights.scverse.markers.find_markers` (``group``,
        ``feature``, ``rank``, ``score``, ``logfoldchange``, ``pvalue``, ``qvalue``,
        ``pct_in``, ``pct_out``, the members' ranks), the features kept per group best
        first; the statistics as stored (scores and fold changes in float32, as scanpy).
    """
    if key not in adata.uns:
        raise InvalidParameterError(
            f"adata.uns holds no {key!r}; run rank_markers(adata, ..., key_added={key!r})"
            + _close(key, list(adata.uns))
        )
    rec = adata.uns[key]
    groups = list(rec["names"].dtype.names)
    blocks = []
    for g in groups:
        feats = np.asarray(rec["names"][g]).astype(str)
        block = pd.DataFrame(
            {
                "group": g,
                "feature": feats,
                "rank": (
                    np.asarray(rec["ranks"][g].reindex(feats), dtype=np.int64)
                    if "ranks" in rec
                    else np.arange(1, len(feats) + 1)
                ),
                "score": np.asarray(rec["scores"][g], dtype=np.float64),
                "logfoldchange": np.asarray(rec["logfoldchanges"][g], dtype=np.float64),
                "pvalue": np.asarray(rec["pvals"][g], dtype=np.float64),
                "qvalue": np.asarray(rec["pvals_adj"][g], dtype=np.float64),
                "pct_in": rec["pts"][g].reindex(feats).to_numpy(),
                "pct_out": rec["pts_rest"][g].reindex(feats).to_numpy(),
            }
        )
        member_ranks = rec.get("member_ranks", {})
        for name in _member_order(rec):
            block[f"{name}.rank"] = np.asarray(member_ranks[name][g].reindex(feats), dtype=np.int64)
        blocks.append(block)
    table = pd.concat(blocks, ignore_index=True)
    table["group"] = pd.Categorical(table["group"], categories=groups)
    return table
