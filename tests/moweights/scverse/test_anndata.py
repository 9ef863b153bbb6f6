"""AnnData in and out: the results in ``var`` and ``uns`` as documented, an ``.h5ad`` round
trip, nothing else of the object changed; markers against scanpy where it is installed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

ad = pytest.importorskip(
    "anndata", reason="needs the 'scverse' extra: pip install '.[scverse]'"
)

import rankers  # noqa: E402
from moweights.scverse import (  # noqa: E402
    find_markers,
    from_anndata,
    get_markers,
    rank_features,
    rank_markers,
)
from rankers.exceptions import InvalidInputError, InvalidParameterError  # noqa: E402

GROUPS = ("B", "NK", "T")


def make_adata(sparse: bool = True, seed: int = 0):
    """A small log1p AnnData: 3 cell types, gene2i higher in type i, with a layer, obsm,
    an unrelated uns entry and a var column of its own."""
    rng = np.random.default_rng(seed)
    n_per, d = 40, 15
    cells = np.repeat(GROUPS, n_per)
    counts = rng.poisson(0.7, size=(len(cells), d)).astype(float)
    for i, g in enumerate(GROUPS):
        counts[cells == g, 2 * i] += rng.poisson(3.0, size=n_per)
    X = np.log1p(counts)
    adata = ad.AnnData(
        sp.csr_matrix(X) if sparse else X,
        obs=pd.DataFrame(
            {
                "cell_type": pd.Categorical(cells),
                "depth": counts.sum(axis=1) + rng.random(len(cells)),
            },
            index=[f"cell{i}" for i in range(len(cells))],
        ),
        var=pd.DataFrame(
            {"symbol": [f"S{j}" for j in range(d)]}, index=[f"g{j}" for j in range(d)]
        ),
    )
    adata.layers["counts"] = sp.csr_matrix(counts)
    adata.obsm["X_pca"] = rng.normal(size=(len(cells), 2))
    adata.uns["log1p"] = {"base": None}
    return adata


def assert_same_except(before, after, var_prefix: str, uns_key: str):
    """Everything of ``after`` equals ``before`` but var columns starting with
    ``var_prefix`` and ``uns[uns_key]``."""
    assert before.shape == after.shape
    for a, b in [
        (before.X, after.X),
        *[(before.layers[k], after.layers[k]) for k in before.layers],
    ]:
        if sp.issparse(a):
            assert type(a) is type(b) and (a != b).nnz == 0
        else:
            np.testing.assert_array_equal(a, b)
    assert set(before.layers) == set(after.layers)
    pd.testing.assert_frame_equal(before.obs, after.obs)
    assert list(before.obsm) == list(after.obsm)
    for k in before.obsm:
        np.testing.assert_array_equal(before.obsm[k], after.obsm[k])
    own = [c for c in after.var.columns if not c.startswith(var_prefix)]
    pd.testing.assert_frame_equal(before.var, after.var[own])
    assert set(after.uns) - {uns_key} == set(before.uns) - {uns_key}
    for k in before.uns:
        if k != uns_key:
            assert before.uns[k] == after.uns[k]
    assert list(before.var_names) == list(after.var_names)
    assert list(before.obs_names) == list(after.obs_names)


def test_from_anndata_gives_any_ranker_its_matrix_target_and_names():
    adata = make_adata()
    X, y, names = from_anndata(adata, target="cell_type")
    assert sp.issparse(X) and X.shape == adata.shape
    assert y.name == "cell_type" and y.index.equals(adata.obs_names)
    assert names == tuple(adata.var_names)
    est = rankers.get("anova_f").fit(X, y)
    assert names[est.ranking_[0]] in {"g0", "g2", "g4"}
    Xl, none, _ = from_anndata(adata, layer="counts")
    assert none is None and (Xl != adata.layers["counts"]).nnz == 0
    dense, _, _ = from_anndata(make_adata(sparse=False))
    assert not dense.flags.writeable  # the caller's X cannot be written through it


def test_from_anndata_refuses_what_it_does_not_hold_naming_what_it_has():
    adata = make_adata()
    with pytest.raises(InvalidParameterError, match=r"'cell_typ'.*did you mean 'cell_type'"):
        from_anndata(adata, target="cell_typ")
    with pytest.raises(InvalidParameterError, match=r"layer 'count'.*'counts'"):
        from_anndata(adata, layer="count")
    with pytest.raises(InvalidParameterError, match=r"expected an anndata\.AnnData"):
        from_anndata(adata.X)


@pytest.mark.parametrize("sparse", [True, False])
def test_rank_features_writes_var_columns_and_uns_and_nothing_else(sparse):
    adata = make_adata(sparse)
    before = adata.copy()
    out = rank_features(
        adata, ["anova_f", "t_test", "variance"], target="cell_type", aggregate=["mean_rank"]
    )
    assert out is None
    assert_same_except(before, adata, "moweights_", "moweights")
    X, y, names = from_anndata(before, target="cell_type")
    for name in ("anova_f", "t_test", "variance"):
        est = rankers.get(name).fit(X, y)
        np.testing.assert_array_equal(adata.var[f"moweights_{name}_score"], est.scores_)
        rank = adata.var[f"moweights_{name}_rank"].to_numpy()
        np.testing.assert_array_equal(np.argsort(rank), est.ranking_)
        stored = adata.uns["moweights"]["rankings"][name]
        assert list(stored["order"]) == [names[i] for i in est.ranking_]
    np.testing.assert_array_equal(
        adata.var["moweights_anova_f_pvalue"], rankers.get("anova_f").fit(X, y).pvalues_
    )
    assert "moweights_variance_pvalue" not in adata.var
    import aggregation

    members = [
        aggregation.Ranking(names, est.scores_, order_idx=est.ranking_)
        for est in (rankers.get(n).fit(X, y) for n in ("anova_f", "t_test", "variance"))
    ]
    expected = aggregation.mean_rank(members)
    agg_rank = adata.var["moweights_mean_rank_rank"].to_numpy()
    assert [names[i] for i in np.argsort(agg_rank)] == expected.order
    np.testing.assert_array_equal(adata.var["moweights_mean_rank_score"], expected.scores)
    params = adata.uns["moweights"]["params"]
    assert params["target"] == "cell_type" and params["rankers"] == [
        "anova_f",
        "t_test",
        "variance",
    ]


def test_rank_features_results_survive_an_h5ad_round_trip(tmp_path):
    adata = make_adata()
    rank_features(
        adata,
        ["anova_f", "variance"],
        target="cell_type",
        aggregate=["mean_rank", "generic"],
        evaluate=True,
        cv=3,
        random_state=0,
    )
    evaluation = adata.uns["moweights"]["evaluation"]
    assert set(evaluation["method"]) == {"anova_f", "variance", "mean_rank", "generic", "random"}
    assert evaluation["metric"].eq("balanced_accuracy").all()
    path = tmp_path / "ranked.h5ad"
    adata.write_h5ad(path)
    back = ad.read_h5ad(path)
    pd.testing.assert_frame_equal(back.var, adata.var)
    pd.testing.assert_frame_equal(
        back.uns["moweights"]["evaluation"].reset_index(drop=True),
        evaluation.reset_index(drop=True),
        check_dtype=False,
    )
    for name in ("anova_f", "variance"):
        np.testing.assert_array_equal(
            back.uns["moweights"]["rankings"][name]["order"].astype(str),
            adata.uns["moweights"]["rankings"][name]["order"].astype(str),
        )


def test_defaults_write_and_read_back(tmp_path):
    adata = make_adata()
    rank_features(adata)
    rank_markers(adata, "cell_type", rankers="t_test")
    assert "layer" not in adata.uns["moweights"]["params"]  # None is left out
    adata.write_h5ad(tmp_path / "defaults.h5ad")
    back = ad.read_h5ad(tmp_path / "defaults.h5ad")
    assert back.uns["moweights"]["params"]["rankers"].tolist() == ["variance"]
    pd.testing.assert_frame_equal(get_markers(back), get_markers(adata), check_dtype=False)


def test_copy_leaves_the_callers_object_untouched():
    adata = make_adata()
    before = adata.copy()
    result = rank_features(adata, ["variance"], layer="counts", copy=True)
    assert_same_except(before, adata, "\0", "\0")  # nothing at all changed
    assert "moweights_variance_rank" in result.var
    counts = adata.layers["counts"].toarray()
    np.testing.assert_allclose(result.var["moweights_variance_score"], counts.var(axis=0))


def test_rank_features_without_target_and_with_a_numeric_one():
    adata = make_adata()
    rank_features(adata)  # no target: variance
    assert adata.uns["moweights"]["params"]["rankers"] == ["variance"]
    with pytest.raises(InvalidParameterError, match="'depth' holds quantities"):
        rank_features(adata, target="depth")
    with pytest.raises(InvalidParameterError, match="not in rankers"):
        rank_features(adata, ["variance"], params={"laplacian": {}})


@pytest.mark.parametrize("sparse", [True, False])
def test_rank_markers_stores_the_table_as_rank_genes_groups_does(sparse, tmp_path):
    adata = make_adata(sparse)
    before = adata.copy()
    rank_markers(adata, "cell_type", rankers=("t_test", "wilcoxon"))
    assert_same_except(before, adata, "\0", "moweights_markers")
    rec = adata.uns["moweights_markers"]
    assert rec["params"]["method"] == "t-test" and rec["params"]["reference"] == "rest"
    assert rec["names"].dtype.names == GROUPS
    assert rec["scores"].dtype["B"] == np.float32 and rec["pvals"].dtype["B"] == np.float64
    X, y, names = from_anndata(before, target="cell_type")
    table = find_markers(X, y, names, rankers=("t_test", "wilcoxon"))
    for g in GROUPS:
        block = table[table["group"] == g]
        assert list(rec["names"][g]) == block["feature"].tolist()
        np.testing.assert_allclose(rec["scores"][g], block["score"], rtol=1e-6)
        np.testing.assert_array_equal(rec["pvals_adj"][g], block["qvalue"])
        np.testing.assert_array_equal(rec["pts"][g].loc[block["feature"]], block["pct_in"])
    path = tmp_path / "markers.h5ad"
    adata.write_h5ad(path)
    back = get_markers(ad.read_h5ad(path))
    assert list(back.columns) == list(table.columns)
    pd.testing.assert_frame_equal(
        back.drop(columns=["score", "logfoldchange"]),
        table.drop(columns=["score", "logfoldchange"]),
        check_dtype=False,
    )
    np.testing.assert_allclose(back["score"], table["score"], rtol=1e-6)


def test_rank_markers_n_genes_and_errors():
    adata = make_adata()
    rank_markers(adata, "cell_type", rankers="t_test", n_genes=4, key_added="top4")
    assert len(adata.uns["top4"]["names"]) == 4
    assert len(get_markers(adata, "top4")) == 12
    with pytest.raises(InvalidParameterError, match="n_genes"):
        rank_markers(adata, "cell_type", rankers="t_test", n_genes=0)
    with pytest.raises(InvalidParameterError, match="holds no 'nothing'"):
        get_markers(adata, "nothing")
    one = make_adata()
    one.obs["cell_type"] = pd.Categorical(["B"] + ["T"] * (one.n_obs - 1))
    with pytest.raises(InvalidInputError, match="fewer than two samples"):
        rank_markers(one, "cell_type")


def test_markers_match_scanpy_rank_genes_groups():
    sc = pytest.importorskip(
        "scanpy", reason="needs 'scanpy' as the reference: pip install scanpy"
    )
    for method, members in (("t-test", ("t_test",)), ("wilcoxon", ("wilcoxon",))):
        for tie_correct in (False, True) if method == "wilcoxon" else (False,):
            ours = make_adata(sparse=True)
            ref = ours.copy()
            sc.tl.rank_genes_groups(
                ref, "cell_type", method=method, use_raw=False, pts=True, tie_correct=tie_correct
            )
            rank_markers(ours, "cell_type", rankers=members, method=method, tie_correct=tie_correct)
            a = sc.get.rank_genes_groups_df(ref, None).set_index(["group", "names"]).sort_index()
            b = sc.get.rank_genes_groups_df(ours, None, key="moweights_markers")
            b = b.set_index(["group", "names"]).sort_index()
            assert a.index.equals(b.index)
            for col in ("scores", "logfoldchanges"):
                np.testing.assert_allclose(b[col], a[col], rtol=1e-4, atol=1e-5)
            for col in ("pvals", "pvals_adj"):
                np.testing.assert_allclose(b[col], a[col], rtol=1e-5, atol=1e-12)
            for col in ("pct_nz_group", "pct_nz_reference"):
                np.testing.assert_allclose(b[col], a[col], atol=1e-12)
