"""The base of the statistical test results (shared by stats and bayes)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import pandas as pd

__all__ = ["Result"]


class Result:
    """A test's result as a frozen dataclass; :meth:`to_dict` for report writers."""

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python summary (numbers, strings, lists, dicts) for report writers."""
        out = {}
        for key, value in asdict(self).items():
            if isinstance(value, pd.Series):
                value = {str(k): float(v) for k, v in value.items()}
            elif isinstance(value, pd.DataFrame):
                continue  # the long form is to_frame()
            elif isinstance(value, tuple):
                value = [list(v) if isinstance(v, tuple) else v for v in value]
            out[key] = value
        return out
