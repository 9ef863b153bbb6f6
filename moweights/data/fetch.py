"""Public benchmark data at hand: scikit-feature's ``.mat`` collection, PMLB tables, OpenML.

Every fetcher looks in a local cache first and downloads only what is missing, checks the
file against its SHA-256 before it is used (a file that does not match is refused and
left out of the cache), and says plainly what to do when the machine is offline: where
to put the file by hand. The cache directory is ``data_home`` when given, else the
``MOWEIGHTS_DATA`` environment variable, else ``$XDG_CACHE_HOME/moweights`` (by default
``~/.cache/moweights``).

The checksums are those of the upstream files at fixed commits (scikit-feature
``48cffad4e88f``, PMLB ``253138e2aa40``); data sets whose upstream file could not be
verified are listed without one and refused.
"""

from __future__ import annotations

import hashlib
import os
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np

from moweights.data.readers.matlab import read_mat
from moweights.data.readers.tables import read_table
from moweights.errors import DataFetchError, InvalidParameterError

__all__ = [
    "PMLB",
    "SKFEATURE",
    "DataFetchError",
    "fetch_openml",
    "fetch_pmlb",
    "fetch_skfeature",
    "get_data_home",
    "missing_file_hint",
    "pmlb_path",
    "skfeature_path",
]

SKFEATURE_URL = (
    "https://github.com/jundongl/scikit-feature/raw/48cffad4e88f/skfeature/data/{name}.mat"
)
PMLB_URL = "https://github.com/EpistasisLab/pmlb/raw/253138e2aa40/datasets/{name}/{name}.tsv.gz"

#: scikit-feature data sets: name -> (sha256 or "" when unverified, samples, features, classes)
SKFEATURE: dict[str, tuple[str, int, int, int]] = {
    "ALLAML": ("068afe0fe1021932e1e7d801294c267de8aeaa9d41899acfac024e72b0d44c1e", 72, 7129, 2),
    "arcene": ("779d678207b9a8c0ba8f2f5ecdb2216d9f98bf475ab040e806797efd36331bc5", 200, 10000, 2),
    "BASEHOCK": ("e0452e0f3c0fefdc5cb6352165e4ba4a25c3a2a7b5a5b4d44e103742d6317aa0", 1993, 4862, 2),
    "Carcinom": ("", 174, 9182, 11),
    "CLL-SUB-111": ("", 111, 11340, 3),
    "COIL20": ("4595ebdda07f47b0eb014fcfaddc22b452f9aed9c1d9261a0d5bc336c1ee1344", 1440, 1024, 20),
    "colon": ("ffcdeba03eb67cec403fa1dc9f827c22a6e2c57786bf3e01dfe1b4b3e25e0a2f", 62, 2000, 2),
    "gisette": ("", 7000, 5000, 2),
    "GLI-85": ("", 85, 22283, 2),
    "GLIOMA": ("c31cd32edd770c7a102729839e670e588bc959a591e0eae5a0676c9ca11d4c4f", 50, 4434, 4),
    "Isolet": ("ea73c69b1342a7def8199458e53a70307a83d557eceb2579863dda57c3ccd2b1", 1560, 617, 26),
    "leukemia": ("eb92382fb77c968864cb0a92a2c77acde7f88ba7fe5fd5a64b98184e3a05269d", 72, 7070, 2),
    "lung": ("", 203, 3312, 5),
    "lymphoma": ("bd834ed911d47ecf2e07625ed77617d514d89ee398fa2e7a787230f7cf5243f8", 96, 4026, 9),
    "madelon": ("7dc9c9ff8d902651948e2df7f9cb6ed38c5d91e4c4159914cecb1ddbc7def12c", 2600, 500, 2),
    "nci9": ("e336aa43eaf3103803252604375a89141043994a54f93222f7ccc12b5b910789", 60, 9712, 9),
    "ORL": ("e257ec36002e48688ed7f3b9fda13f479f2fd98864fa0672d1353eda1912b189", 400, 1024, 40),
    "orlraws10P": (
        "6ffa58759c5636f4ce311d23e44ef8de9f39bbb844902154c0cc5daac71226d6", 100, 10304, 10,
    ),
    "PCMAC": ("9999dfccf97ab88f87127dd3457da436acb75cda9f0af4750e7cae5fe1a31b25", 1943, 3289, 2),
    "pixraw10P": (
        "aa4b474244ae847dc2efdc868c0ff58fc3748a830c2ffdf760a1697cf72088f8", 100, 10000, 10,
    ),
    "Prostate-GE": (
        "050b598534dbc662f23e30f39b41354b61d02ab8567837bcf9b1091c1c636ab4", 102, 5966, 2,
    ),
    "RELATHE": ("1091fe26c721aa69ddc5ce3ebcef54e03565809cae07e1769cef45ad23ab28d0", 1427, 4322, 2),
    "SMK-CAN-187": ("", 187, 19993, 2),
    "TOX-171": ("f52f57e61775b7830c84750456d7fadfd220d1cc8eed26419c3390eb9216cc84", 171, 5748, 4),
    "USPS": ("", 9298, 256, 10),
    "warpPIE10P": (
        "0d22b0e4fe224ea7347ae266370b6eb0d724d5fd0ad7da71261a58c24e08c3c2", 210, 2420, 10,
    ),
    "Yale": ("cccd29abd2c520dd5cc8ff7645b422c2bdadd59406a6b6a0239143d9d44afcf3", 165, 1024, 15),
}  # fmt: skip

#: PMLB (UCI) tables: name -> (sha256, samples, features, classes)
PMLB: dict[str, tuple[str, int, int, int]] = {
    "sonar": ("64378cabaecdb50e2e1e644c1d6bc359f0627ebe313870ad09e1e41ed972529b", 208, 60, 2),
    "ionosphere": ("adb6fc877404f2b55f6d59fc7322265c733f5cf0ae6d7c2e52c3468733630023", 351, 34, 2),
    "heart_statlog": (
        "8961cb48eb662faa5d55d7849ee8be88d8b2a3eeebd383cfa5df38c60133ebcb", 270, 13, 2,
    ),
    "breast_w": ("cad1a46f50ff7ff713e8abdff5837ebb28ddb9be5823c5fa35c85ee14400760b", 699, 9, 2),
    "australian": ("7f3e5e96b80f5217830cdd198d33b4262cbded4f7cc22981daaa5d61fdcb8329", 690, 14, 2),
    "german": ("c1f93ad10392a83fbcba5af44580193e7a99faf782264f082e32aa293554b137", 1000, 20, 2),
    "waveform_21": (
        "7c2cc6b218c3c4868ccc2edcf6a637c796f4e6bf4ad9f0994e95a260bfe3aabc", 5000, 21, 3,
    ),
}  # fmt: skip

_TIMEOUT = 60  # seconds without an answer before a download is given up


def get_data_home(path=None) -> Path:
    """The cache directory of fetched data (created when missing)."""
    if path is None:
        path = os.environ.get("MOWEIGHTS_DATA")
    if path is None:
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        path = Path(base) / "moweights"
    home = Path(path).expanduser()
    home.mkdir(parents=True, exist_ok=True)
    return home


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _fetch_file(name: str, sha256: str, url: str, target: Path, download: bool) -> Path:
    """``target`` checked against ``sha256``, downloaded from ``url`` when missing."""
    if not sha256:
        raise DataFetchError(
            f"{name}: no verified copy of this data set is known, so it is not fetched; "
            f"place a copy you trust at {target} and load it with moweights.data.load_file"
        )
    if target.is_file():
        if _sha256(target) == sha256:
            return target
        raise DataFetchError(
            f"{name}: {target} does not match its SHA-256 (expected {sha256[:16]}...); "
            "delete it to download it again"
        )
    if not download:
        raise DataFetchError(f"{name}: not in {target.parent} and download=False")
    part = target.with_name(f".{target.name}.{os.getpid()}.part")
    try:
        with urllib.request.urlopen(url, timeout=_TIMEOUT) as response, part.open("wb") as out:
            while chunk := response.read(1 << 20):
                out.write(chunk)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        part.unlink(missing_ok=True)
        reason = getattr(exc, "reason", exc)
        raise DataFetchError(
            f"{name}: could not download {url} ({reason}). Offline? Download the file on a "
            f"machine that is online and put it at {target}"
        ) from None
    if _sha256(part) != sha256:
        part.unlink(missing_ok=True)
        raise DataFetchError(
            f"{name}: the file downloaded from {url} does not match its SHA-256; "
            "nothing was kept (a changed or corrupted upstream file)"
        )
    os.replace(part, target)
    return target


def _known(name: str, table: dict, what: str) -> tuple[str, tuple]:
    lower = {k.lower(): k for k in table}
    key = lower.get(str(name).lower())
    if key is None:
        raise InvalidParameterError(f"unknown {what} data set {name!r}; known: {', '.join(table)}")
    return key, table[key]


def skfeature_path(name: str, *, data_home=None, download: bool = True) -> Path:
    """The checked local copy of a scikit-feature ``.mat`` file (fetched when missing).

    The path a config's ``[data] path`` can name; :func:`fetch_skfeature` loads it.
    """
    key, (sha, _, _, _) = _known(name, SKFEATURE, "scikit-feature")
    target = get_data_home(data_home) / "skfeature" / f"{key}.mat"
    target.parent.mkdir(parents=True, exist_ok=True)
    return _fetch_file(key, sha, SKFEATURE_URL.format(name=key), target, download)


def missing_file_hint(path) -> str:
    """How to get a missing data file the benchmarks use; "" for any other file.

    Examples
    --------
    >>> missing_file_hint("data/Isolet.mat").startswith("it is scikit-feature's Isolet")
    True
    """
    stem = Path(path).name.split(".")[0].lower()
    lower = {k.lower(): k for k in SKFEATURE}
    if Path(path).suffix.lower() == ".mat" and stem in lower:
        key = lower[stem]
        return (
            f"it is scikit-feature's {key}: `moweights fetch skfeature {key}` downloads and "
            "checks it and prints its path (or moweights.data.fetch.skfeature_path"
            f"({key!r})); point [data].path at that file"
        )
    return ""


def fetch_skfeature(name: str, *, data_home=None, download: bool = True):
    """A scikit-feature benchmark data set (``.mat``) as ``(X, y)``.

    Parameters
    ----------
    name : str
        One of :data:`SKFEATURE` (case-insensitive), e.g. ``"Isolet"``, ``"ALLAML"``.
    data_home : path, optional
        Cache directory (see :func:`get_data_home`); the file is ``<dir>/skfeature/<name>.mat``.
    download : bool, default=True
        Download when the file is not cached.

    Returns
    -------
    X : DataFrame of float64, shape (n_samples, n_features)
        Columns ``x0``, ``x1``, ...
    y : Series
        The labels as stored (``1..C``, or ``-1/+1`` for a few data sets), named ``target``.
    """
    key, (_, m, n, _) = _known(name, SKFEATURE, "scikit-feature")
    X, y = read_mat(skfeature_path(key, data_home=data_home, download=download))
    if X.shape != (m, n):
        raise DataFetchError(f"{key}: X has shape {X.shape}, expected {(m, n)}")
    if y is None:
        raise DataFetchError(f"{key}: the file has no label matrix 'Y'")
    return X, y


def pmlb_path(name: str, *, data_home=None, download: bool = True) -> Path:
    """The checked local copy of a PMLB table (``.tsv.gz``, fetched when missing)."""
    key, (sha, _, _, _) = _known(name, PMLB, "PMLB")
    target = get_data_home(data_home) / "pmlb" / f"{key}.tsv.gz"
    target.parent.mkdir(parents=True, exist_ok=True)
    return _fetch_file(key, sha, PMLB_URL.format(name=key), target, download)


def fetch_pmlb(name: str, *, data_home=None, download: bool = True):
    """A PMLB (UCI) table as ``(X, y)``: features by their names, ``target`` as ``y``.

    Parameters
    ----------
    name : str
        One of :data:`PMLB`, e.g. ``"sonar"``.
    data_home, download
        As :func:`fetch_skfeature`; the file is ``<dir>/pmlb/<name>.tsv.gz``.
    """
    key, (_, m, n, _) = _known(name, PMLB, "PMLB")
    frame = read_table(pmlb_path(key, data_home=data_home, download=download))
    if frame.shape != (m, n + 1) or "target" not in frame.columns:
        raise DataFetchError(f"{key}: the table has shape {frame.shape}, expected {(m, n + 1)}")
    return frame.drop(columns="target").astype(np.float64), frame["target"]


def fetch_openml(name_or_id, *, version="active", target=None, data_home=None):
    """An OpenML data set as ``(X, y)``, cached; OpenML's own MD5 checksum is verified.

    A thin wrapper of :func:`sklearn.datasets.fetch_openml` (``as_frame=True``,
    ``parser="auto"``) that caches under :func:`get_data_home` and turns an offline machine's
    error into :class:`DataFetchError` with what to do.

    Parameters
    ----------
    name_or_id : str or int
        The data set's name (with ``version``) or its numeric id.
    version : int or "active", default="active"
    target : str, optional
        The target column (default the data set's own).
    """
    from sklearn.datasets import fetch_openml as sk_fetch

    kwargs = {"data_id": int(name_or_id)} if str(name_or_id).isdigit() else {
        "name": str(name_or_id), "version": version}  # fmt: skip
    try:
        bunch = sk_fetch(
            **kwargs,
            target_column=target if target is not None else "default-target",
            data_home=str(get_data_home(data_home) / "openml"),
            as_frame=True,
            parser="auto",
        )
    except (urllib.error.URLError, OSError) as exc:
        raise DataFetchError(
            f"OpenML {name_or_id}: could not download ({getattr(exc, 'reason', exc)}). "
            "Offline? Fetch it once on a machine that is online with the same data_home"
        ) from None
    return bunch.data, bunch.target
