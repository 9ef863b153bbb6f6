"""The default error-curve model is fitted on a precomputed Gram matrix: same curves."""

from __future__ import annotations

import numpy as np
import pytest

from aggregation.error_curves import default_estimator, ffa_rfa


@pytest.mark.parametrize("n_classes", [2, 3])
def test_default_model_gives_the_curves_of_the_pipeline_it_stands_for(n_classes):
    rng = np.random.default_rng(n_classes)
    y = np.arange(90) % n_classes
    X = rng.normal(size=(90, 40)) * rng.uniform(0.1, 30, size=40)  # unequal column scales
    X[:, :5] += 1.5 * y[:, None]
    order = list(rng.permutation(40))
    fast = ffa_rfa(order, X, y, cv=5, grid="every", random_state=0)
    # default_estimator() passed explicitly is fitted as given: libsvm's own poly kernel
    plain = ffa_rfa(order, X, y, estimator=default_estimator(), cv=5, grid="every", random_state=0)
    np.testing.assert_allclose(fast.to_numpy(), plain.to_numpy(), rtol=0, atol=1e-12)
