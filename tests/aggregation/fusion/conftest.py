"""Shared inputs of the fusion tests (fixtures: the tests run with --import-mode=importlib)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from aggregation.ranking import Ranking

#: features, planted features, members that find them, members that rank at random
N, K, GOOD, RANDOM = 1000, 5, 2, 3


def _failing_majority(seed: int) -> tuple[list[Ranking], set[str]]:
    """``GOOD`` members rank the ``K`` planted features first (in a random order among
    themselves), ``RANDOM`` members are random permutations; the members are shuffled."""
    rng = np.random.default_rng(seed)
    names = tuple(f"f{i}" for i in range(N))
    members = [
        Ranking.from_order(np.r_[rng.permutation(K), K + rng.permutation(N - K)], names=names)
        for _ in range(GOOD)
    ]
    members += [Ranking.from_order(rng.permutation(N), names=names) for _ in range(RANDOM)]
    return [members[i] for i in rng.permutation(len(members))], set(names[:K])


@pytest.fixture(scope="session")
def majority_runs() -> list[tuple[list[Ranking], set[str]]]:
    """20 seeded draws of 2 members that rank the 5 planted features of 1,000 first and 3
    members that rank at random: a failing majority."""
    return [_failing_majority(seed) for seed in range(20)]


def _nudge(values, ulps) -> np.ndarray:
    """``values`` each moved by ``ulps`` units in the last place (up if positive)."""
    out = np.array(values, dtype=float)
    for i, u in enumerate(ulps):
        for _ in range(abs(int(u))):
            out[i] = np.nextafter(out[i], np.inf if u > 0 else -np.inf)
    return out


@pytest.fixture(scope="session")
def nudge() -> Callable:
    """``nudge(values, ulps)``: each value moved by a few ulps (session-scoped, so that
    hypothesis tests may use it)."""
    return _nudge
