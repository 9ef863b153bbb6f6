"""The per-samples tables of summary.md: ``python by_samples.py atlas.csv``."""

import sys

import pandas as pd

STRUCTURES = ["clusters", "modules", "manifold", "shift", "xor", "imbalanced"]


def main(path: str) -> str:
    d = pd.read_csv(path)
    out = [
        "## By number of samples",
        "",
        "Mean precision over the two shares (0.02, 0.1) and both seeds, 1,000 features; "
        "`change` = 800 minus 60 samples.",
        "",
    ]
    for s in STRUCTURES:
        t = d[d.structure == s].groupby(["ranker", "n_samples"]).precision.mean().unstack()
        t["change"] = t[800] - t[60]
        t = t.sort_values(800, ascending=False)
        out += [f"### {s}", "", "| ranker | 60 | 200 | 800 | change |", "|---|---|---|---|---|"]
        for r, row in t.iterrows():
            cells = f"{row[60]:.2f} | {row[200]:.2f} | {row[800]:.2f} | {row['change']:+.2f}"
            out.append(f"| {r} | {cells} |")
        out.append("")
    cpu = d.groupby(["ranker", "n_samples"]).cpu_seconds.median().unstack()
    out += [
        "### Median CPU seconds of a fit, by number of samples",
        "",
        "| ranker | 60 | 200 | 800 |",
        "|---|---|---|---|",
    ]
    for r, row in cpu.iterrows():
        out.append(f"| {r} | {row[60]:.3g} | {row[200]:.3g} | {row[800]:.3g} |")
    return "\n".join(out)


if __name__ == "__main__":
    print(main(sys.argv[1]))
