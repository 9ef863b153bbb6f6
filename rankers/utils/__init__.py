"""The shared internal helpers of the three packages, in the lowest layer so every layer may
import them.

- :mod:`~rankers.utils.lazy`: :func:`~rankers.utils.lazy.attach`, the packages' lazy
  ``__init__`` (PEP 562) built from one table of names.
- :mod:`~rankers.utils.parallel`: whether joblib's active backend sends tasks away (a Dask
  cluster), so loops of small tasks keep their grain.
- :mod:`~rankers.utils.param_validation`: the one owner of scikit-learn's private
  parameter-validation helpers (``Interval``, ``StrOptions``, ...).

Internal: a module of ``rankers``, ``aggregation`` or ``moweights`` imports these by their
module path; they are not part of the public API documented for users, and they import
nothing of the three packages (import-linter contract in ``pyproject.toml``).
"""
