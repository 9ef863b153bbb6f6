"""The HTML report renders in a real browser (headless Chromium), offline."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from moweights.config import parse_config
from moweights.pipeline import run

CHROMIUM = next(
    (shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)), None
)


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed")
def test_report_renders_in_headless_chromium(tmp_path):
    raw = {
        "data": {"builtin": "wine"},
        "rankers": [{"name": "variance"}, {"name": "laplacian"}, {"name": "info_gain"}],
        "evaluation": {
            "cv": 3,
            "topk": {"n_random": 2},
            "error_curves": {"n_random": 2, "grid": [1, 4, 13]},
            "clustering": {"k_features": [4], "n_restarts": 1},
        },
        "run": {"verbose": 0},
    }
    out = tmp_path / "run"
    run(parse_config(raw), out)
    shot = tmp_path / "shot.png"
    proc = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            "--window-size=1280,2400",
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--screenshot={shot}",
            (out / "report.html").as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=600,  # a bound for a hang: seconds on an idle machine
    )
    assert proc.returncode == 0, proc.stderr
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)[..., :3]
    assert pixels.shape[:2] == (2400, 1280)
    # the dark header band is drawn at the top, the light page below it
    assert pixels[:40].mean() < 0.3 and pixels[200:].mean() > 0.8
    # the embedded plots are drawn: many distinct colours, not an empty page
    colours = np.unique((pixels[200:] * 255).astype(np.uint8).reshape(-1, 3), axis=0)
    assert len(colours) > 500
