"""benchmarks._common.load_dataset reads through the product's reader and gives what
scipy.io.loadmat gives, to the byte and in the same (Fortran) memory order: the committed
protocol and leaderboard tables were computed from loadmat's arrays, and BLAS sums depend
on the order."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.io import loadmat, savemat

from benchmarks._common import load_dataset, load_skfeature

COLON = Path(__file__).resolve().parents[3] / "shared" / "data" / "skfeature" / "colon.mat"


def _same_as_loadmat(path: Path) -> None:
    content = loadmat(path)
    want_X = np.asarray(content["X"], dtype=np.float64)
    want_y = np.asarray(content["Y"]).ravel()
    X, y = load_dataset(path)
    assert X.dtype == np.float64 and X.flags.f_contiguous and want_X.flags.f_contiguous
    assert X.tobytes(order="A") == want_X.tobytes(order="A")
    assert y.dtype == want_y.dtype and np.array_equal(y, want_y)


@pytest.mark.parametrize("dtype", [np.int16, np.uint8, np.float64])
def test_a_mat_file_reads_as_loadmat_reads_it(tmp_path, dtype):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 200, size=(23, 17)).astype(dtype)
    path = tmp_path / "d.mat"
    savemat(path, {"X": X, "Y": rng.integers(1, 4, size=(23, 1)).astype(np.uint8)})
    _same_as_loadmat(path)


@pytest.mark.skipif(not COLON.is_file(), reason="needs ../shared/data")
def test_colon_reads_as_loadmat_reads_it():
    _same_as_loadmat(COLON)
    X, y = load_skfeature("colon")
    assert X.flags.f_contiguous and X.shape == (62, 2000) and y.shape == (62,)
