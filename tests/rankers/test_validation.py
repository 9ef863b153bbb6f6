"""The validation helpers shared by every layer: numbers of top features and seeds."""

from __future__ import annotations

import numpy as np
import pytest

from rankers.exceptions import InvalidParameterError
from rankers.validation import check_k, check_ks, check_seed

pytestmark = pytest.mark.quick  # in the quick suite (pytest -m quick): see pyproject.toml


# ------------------------------------------------------------------ k
@pytest.mark.parametrize("k", [1, 3, np.int64(2)])
def test_check_k_takes_integers_in_range(k):
    assert check_k(k, 3) == int(k) and type(check_k(k, 3)) is int


@pytest.mark.parametrize(
    ("k", "message"),
    [
        (0, r"k must be in 1..3 \(3 features\), got 0"),
        (4, r"k must be in 1..3"),
        (True, "k must be an integer"),
        (2.0, "k must be an integer"),
        ("2", "k must be an integer"),
        (None, "k must be an integer"),
    ],
)
def test_check_k_refuses_what_is_no_count_of_features(k, message):
    with pytest.raises(InvalidParameterError, match=message):
        check_k(k, 3)


def test_check_k_upper_bound_and_name():
    assert check_k(2, 3, upper=2) == 2
    with pytest.raises(InvalidParameterError, match=r"at_k must be in 1..2 \(3 features\)"):
        check_k(3, 3, what="at_k", upper=2)


@pytest.mark.parametrize(
    ("ks", "expected"),
    [
        (2, [2]),
        ([4, 1, 4, 2], [1, 2, 4]),
        ((3,), [3]),
        (np.array([2, 1]), [1, 2]),
        (range(1, 4), [1, 2, 3]),
    ],
)
def test_check_ks_sorts_and_drops_repeats(ks, expected):
    assert check_ks(ks, 4) == expected


@pytest.mark.parametrize(
    ("ks", "message"),
    [
        ([], "lists no number"),
        ([1, 5], r"ks must lie in 1..4 \(the number of features\); got \[5\]"),
        ([0, 2], r"got \[0\]"),
        ([1.5], "must hold integers"),
        ([2.0], "must hold integers"),  # int(2.7) would pass silently: refused
        ([True], "must hold integers"),
        ("12", "must be an integer or a list"),
        (None, "must be an integer or a list"),
        (3.0, "must be an integer or a list"),
    ],
)
def test_check_ks_refuses(ks, message):
    with pytest.raises(InvalidParameterError, match=message):
        check_ks(ks, 4)


def test_check_ks_says_what_the_bound_counts():
    with pytest.raises(InvalidParameterError, match=r"k_features must lie in 1..2 \(the feat"):
        check_ks([3], 2, what="k_features", of="the features the ranking lists")


# ------------------------------------------------------------------ seeds
def _state(seq):
    return seq.generate_state(4).tolist()


def test_an_int_seed_is_the_seed_sequence_of_that_int():
    assert _state(check_seed(7)) == _state(np.random.SeedSequence(7))
    assert _state(check_seed(np.int32(7))) == _state(np.random.SeedSequence(7))
    # the generator numpy builds from an int is the one built from the sequence
    a = np.random.default_rng(7).random(3)
    assert a.tolist() == np.random.default_rng(check_seed(7)).random(3).tolist()


def test_a_seed_sequence_is_used_as_it_is():
    seq = np.random.SeedSequence(3)
    assert check_seed(seq) is seq


def test_generators_are_drawn_from_once_and_reproducibly():
    g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
    assert _state(check_seed(g1)) == _state(check_seed(g2))
    assert _state(check_seed(g1)) != _state(check_seed(np.random.default_rng(5)))  # advanced
    r1, r2 = np.random.RandomState(5), np.random.RandomState(5)
    assert _state(check_seed(r1)) == _state(check_seed(r2))


def test_none_is_fresh_entropy():
    assert _state(check_seed(None)) != _state(check_seed(None))


@pytest.mark.parametrize("bad", [-1, True, 1.5, "0", [0]])
def test_other_seeds_are_refused_by_name(bad):
    with pytest.raises(InvalidParameterError, match="random_state must be None, a non-negative"):
        check_seed(bad)


# --- targets: the same answer from class rankers and rankers for both kinds (issue 48 item 12)
def _data(n=20):
    return np.random.default_rng(0).random((n, 4))


@pytest.mark.parametrize("label", [np.int64(0), np.int32(3), np.float64(2.0)])
def test_the_one_class_message_prints_the_plain_label(label):
    import rankers
    from rankers.exceptions import InvalidInputError

    y = np.full(20, label)
    with pytest.raises(InvalidInputError, match=r"single class \(") as info:
        rankers.get("anova_f").fit(_data(), y)
    assert "np." not in str(info.value)
    assert f"({label.item()!r})" in str(info.value)


@pytest.mark.parametrize("name", ["estimator_importance", "multisurf", "random_forest"])
def test_label_like_floats_are_a_quantity_for_both_kinds_and_it_is_said(name):
    import warnings

    import rankers
    from rankers.exceptions import InvalidInputError, TargetKindWarning

    y = np.array([1.5, 2.5] * 10)
    with pytest.warns(TargetKindWarning, match=r"2 distinct values \(1\.5, 2\.5\).*astype\(str\)"):
        ranker = rankers.get(name).fit(_data(), y)
    assert ranker.task_ == "regression"
    # the class rankers refuse the same target and say how to mean classes
    with pytest.raises(InvalidInputError, match=r"class labels, pass them as integers or strings"):
        rankers.get("anova_f").fit(_data(), y)
    # as strings, both kinds rank for classes, without the warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", TargetKindWarning)
        assert rankers.get(name).fit(_data(), y.astype(str)).task_ == "classification"
        # a real quantity (every value its own) is fitted as one, silently
        rankers.get(name).fit(_data(), np.random.default_rng(1).random(20))


def test_sparse_csr_input_is_read_through_read_only_views_not_copied():
    """A CSR float64 matrix reaches the rankers without a copy of its stored values (a
    gigabyte at 10^8 of them), through read-only views: the caller's arrays stay writable
    and unchanged, and what a ranker scores from the views is what it scores from a copy."""
    import scipy.sparse as sp

    import rankers
    from rankers.validation import check_X

    rng = np.random.default_rng(0)
    X = sp.random(200, 30, density=0.2, format="csr", random_state=0, dtype=np.float64)
    y = rng.integers(0, 3, 200)
    before = X.copy()
    Xc, _ = check_X(X, accepts_sparse=True)
    assert np.shares_memory(Xc.data, X.data) and np.shares_memory(Xc.indices, X.indices)
    assert not Xc.data.flags.writeable and X.data.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        Xc.data[0] = 1.0
    for name in ("t_test", "anova_f", "variance", "fisher_score"):
        shared = rankers.get(name).fit(X, y if name != "variance" else None).scores_
        copied = rankers.get(name).fit(X.copy(), y if name != "variance" else None).scores_
        np.testing.assert_array_equal(shared, copied)
    assert (before != X).nnz == 0 and X.data.flags.writeable
    # other dtypes and formats are converted (new arrays), and duplicates summed in a copy
    for other in (X.astype(np.float32), X.tocsc(), X.tocoo()):
        Xo, _ = check_X(other, accepts_sparse=True)
        assert Xo.format == "csr" and Xo.dtype == np.float64
        assert not np.shares_memory(Xo.data, getattr(other, "data", other.toarray()))
    dup = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([0, 0, 1]), np.array([0, 2, 3])),
                        shape=(2, 2))  # fmt: skip
    assert not dup.has_canonical_format
    rankers.get("variance").fit(dup)
    assert dup.data.tolist() == [1.0, 2.0, 3.0]  # the caller's duplicates stay as given
