"""The markers step of a run (``[markers]``): every class of the target against the rest.

:func:`moweights.scverse.markers.find_markers` on the run's data: per class the test's
statistic, log fold change, p- and q-values and the fractions expressing in and out of the
class, and each class's features ordered by the consensus of the member rankers, each fitted
to "this class vs the rest". The table goes to ``result.markers`` (``markers.csv``, the
report's dot plot) and is cached like a ranker's fit.
"""

from __future__ import annotations

import pandas as pd

from moweights.pipeline.data import fingerprint

__all__ = ["MARKER_KEYS", "markers"]

#: the [markers] keys that decide the table (n_top only decides what the report draws)
MARKER_KEYS = ("rankers", "aggregate", "test", "direction")


def _check(names, members):
    from moweights.scverse.markers import MARKER_COLUMNS

    expected = [*MARKER_COLUMNS, *(f"{m}.rank" for m in members)]

    def check(value) -> None:
        if not isinstance(value, pd.DataFrame) or list(value.columns) != expected:
            raise ValueError("a marker table of other columns")
        if not set(value["feature"]) <= set(map(str, names)):
            raise ValueError("a marker table of other features")

    return check


def markers(config, result, cache, progress, save) -> None:
    """Marker features of every class into ``result.markers`` (nothing without
    ``[markers] enabled``)."""
    settings = config.markers
    if not settings.get("enabled"):
        return
    from moweights.scverse.markers import find_markers

    X, y = result.X, result.y
    chosen = {k: settings[k] for k in MARKER_KEYS}
    members = list(chosen["rankers"])
    key = cache.key("markers", fingerprint(X, y), chosen)

    def compute() -> pd.DataFrame:
        with progress.bar(total=1, desc="markers", unit="table") as bar:
            table = find_markers(
                X,
                y,
                rankers=members,
                aggregate=chosen["aggregate"],
                test=chosen["test"],
                direction=chosen["direction"],
            )
            bar.update(1)
        table = table.copy()
        table["group"] = table["group"].astype(str)  # the cache holds text, not categories
        table.attrs = {}
        return table

    table = cache.fetch("markers", key, compute, _check(X.columns, members))
    groups = pd.unique(table["group"])  # the classes in the table's order
    table["group"] = pd.Categorical(table["group"], categories=groups)
    result.markers = table
    result.notes.append(
        f"markers: each of {len(groups)} classes against the rest ({chosen['test']}; order: "
        f"{chosen['aggregate']} of {', '.join(members)}): markers.csv"
    )
    save()
