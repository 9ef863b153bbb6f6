"""Our markers per group against scanpy's ``rank_genes_groups``: the same statistics?

For each data set and test (``t-test``; ``wilcoxon`` with and without tie correction),
:func:`moweights.scverse.rank_markers` (the test itself as the one member, so the order is
the test's) and ``scanpy.tl.rank_genes_groups(..., use_raw=False, pts=True)`` run on the
same AnnData; the results are aligned by (group, gene) through
``scanpy.get.rank_genes_groups_df`` (which reads both records) and the largest absolute
differences of scores, log fold changes, p-values, q-values and fractions expressing are
reported, with the largest relative difference of the p-values (those above 1e-300) and
how many of scanpy's top 10 genes per group are in ours.

Data: planted log1p Poisson counts (sparse CSR, 6 groups, 3 marker genes each), and
``scanpy.datasets.pbmc68k_reduced()``, which ships inside the scanpy package (no
download): its ``raw`` (log1p values, 700 cells x 765 genes) by ``bulk_labels`` (10 cell
types) and by ``louvain`` (11 clusters).

Needs scanpy and anndata, which pin pandas < 3: run it in a venv of its own with the
project installed (``pip install scanpy && pip install -e . --no-deps``)::

    python -m benchmarks.protocols.markers_vs_scanpy --out benchmarks/results/markers_vs_scanpy
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

#: the comparisons: (scanpy method, tie_correct, our member)
TESTS = (
    ("t-test", False, "t_test"),
    ("wilcoxon", False, "wilcoxon"),
    ("wilcoxon", True, "wilcoxon"),
)
#: columns of ``rank_genes_groups_df`` compared
COLUMNS = ("scores", "logfoldchanges", "pvals", "pvals_adj", "pct_nz_group", "pct_nz_reference")


def planted(n_cells: int, n_genes: int, seed: int = 0):
    """An AnnData of log1p Poisson counts, 6 groups, genes 3g..3g+2 higher in group g."""
    import anndata
    import pandas as pd
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    groups = np.array([f"type{g}" for g in range(6)])
    cells = groups[rng.integers(0, 6, size=n_cells)]
    counts = rng.poisson(0.3, size=(n_cells, n_genes)).astype(np.float32)
    for g, label in enumerate(groups):
        inside = cells == label
        counts[np.ix_(inside, np.arange(3 * g, 3 * g + 3))] += rng.poisson(
            2.0, size=(inside.sum(), 3)
        )
    return anndata.AnnData(
        sp.csr_matrix(np.log1p(counts)),
        obs=pd.DataFrame(
            {"cell_type": pd.Categorical(cells)}, index=[f"cell{i}" for i in range(n_cells)]
        ),
        var=pd.DataFrame(index=[f"gene{j}" for j in range(n_genes)]),
    )


def compare(adata, groupby: str, method: str, tie_correct: bool, member: str) -> dict:
    """One comparison: the largest differences between scanpy's record and ours."""
    import scanpy as sc

    from moweights.scverse import rank_markers

    ref, ours = adata.copy(), adata.copy()
    sc.tl.rank_genes_groups(
        ref, groupby, method=method, use_raw=False, pts=True, tie_correct=tie_correct
    )
    rank_markers(ours, groupby, rankers=member, method=method, tie_correct=tie_correct)
    a = sc.get.rank_genes_groups_df(ref, None)
    b = sc.get.rank_genes_groups_df(ours, None, key="moweights_markers")
    top = np.mean(
        [
            len(
                set(a.loc[a["group"] == g, "names"].iloc[:10])
                & set(b.loc[b["group"] == g, "names"].iloc[:10])
            )
            / 10
            for g in a["group"].unique()
        ]
    )
    a = a.set_index(["group", "names"]).sort_index()
    b = b.set_index(["group", "names"]).sort_index()
    if not a.index.equals(b.index):
        raise RuntimeError("scanpy's and our records hold different (group, gene) pairs")
    row = {
        "groupby": groupby,
        "method": method,
        "tie_correct": tie_correct,
        "cells": adata.n_obs,
        "genes": adata.n_vars,
        "groups": int(a.index.get_level_values(0).nunique()),
    }
    for col in COLUMNS:
        row[f"max_abs_{col}"] = float(np.max(np.abs(b[col].to_numpy() - a[col].to_numpy())))
    p_ref, p_ours = a["pvals"].to_numpy(), b["pvals"].to_numpy()
    big = p_ref > 1e-300
    row["max_rel_pvals"] = float(np.max(np.abs(p_ours[big] - p_ref[big]) / p_ref[big]))
    row["top10_shared"] = float(top)
    ref_p = scipy_pvalues(adata, groupby, method, tie_correct)
    if ref_p is not None:  # both against scipy.stats on float64 values
        for who, table in (("scanpy", a), ("ours", b)):
            p = np.concatenate([table.loc[g].reindex(adata.var_names)["pvals"] for g in ref_p])
            truth = np.concatenate(list(ref_p.values()))
            big = truth > 1e-300
            row[f"scipy_max_rel_pvals_{who}"] = float(
                np.max(np.abs(p[big] - truth[big]) / truth[big])
            )
    return row


def scipy_pvalues(adata, groupby: str, method: str, tie_correct: bool):
    """Per group, scipy's p-values of the same test on float64 values (group vs rest):
    ``ttest_ind(equal_var=False)``, or the asymptotic Mann-Whitney U without continuity
    correction (always tie-corrected, hence only beside ``tie_correct=True``)."""
    from scipy import stats

    if method == "wilcoxon" and not tie_correct:
        return None
    X = adata.X.toarray() if hasattr(adata.X, "toarray") else np.asarray(adata.X)
    X = X.astype(np.float64)
    y = adata.obs[groupby].astype(str).to_numpy()
    out = {}
    for g in adata.obs[groupby].cat.categories.astype(str):
        inside = y == g
        if method == "t-test":
            p = stats.ttest_ind(X[inside], X[~inside], equal_var=False).pvalue
        else:
            p = stats.mannwhitneyu(
                X[inside], X[~inside], method="asymptotic", use_continuity=False
            ).pvalue
        out[g] = np.nan_to_num(p, nan=1.0)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=3000, help="planted data: cells")
    parser.add_argument("--genes", type=int, default=500, help="planted data: genes")
    parser.add_argument(
        "--out", type=Path, default=None, help="write <out>.csv (full precision) and <out>.md"
    )
    args = parser.parse_args(argv)

    import pandas as pd
    import scanpy as sc

    pbmc = sc.datasets.pbmc68k_reduced()
    real = pbmc.raw.to_adata()
    real.obs = pbmc.obs[["bulk_labels", "louvain"]].copy()
    cases = [("planted", planted(args.cells, args.genes), "cell_type")]
    cases += [("pbmc68k_reduced", real, "bulk_labels"), ("pbmc68k_reduced", real, "louvain")]
    rows = []
    for name, adata, groupby in cases:
        for method, tie_correct, member in TESTS:
            rows.append({"data": name, **compare(adata, groupby, method, tie_correct, member)})
            print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    versions = f"scanpy {sc.__version__}, anndata {__import__('anndata').__version__}"
    text = (
        "# Markers per group: moweights against scanpy's rank_genes_groups\n\n"
        f"Command: `python -m benchmarks.protocols.markers_vs_scanpy --cells {args.cells} "
        f"--genes {args.genes}`; {versions}. Largest absolute differences over all "
        "(group, gene) pairs; `max_rel_pvals` over p-values above 1e-300; `top10_shared`: "
        "the mean share of scanpy's 10 best genes per group among ours (the order is the "
        "test's: Welch p-value for ours, t for scanpy's t-test); `scipy_max_rel_pvals_*`: "
        "each side's p-values against scipy.stats on float64 values (`ttest_ind` with "
        "`equal_var=False`; the asymptotic `mannwhitneyu` without continuity correction, "
        "tie-corrected, so only beside `tie_correct=True`), p above 1e-300. Full precision: "
        "the .csv beside this file.\n\n" + table.to_markdown(index=False, floatfmt=".3g") + "\n"
    )
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(args.out.with_suffix(".csv"), index=False, float_format="%.17g")
        args.out.with_suffix(".md").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
