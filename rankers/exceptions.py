"""Exception and warning types of moweights.

Every error moweights raises on purpose is a :class:`MoweightsError` that also
subclasses the built-in exception users already catch (``ValueError``,
``LookupError``, ``TypeError``, ``MemoryError``), so ``except ValueError`` keeps working.

This module holds the base classes every layer subclasses (:class:`MoweightsError`,
:class:`InvalidInputError`, :class:`InvalidParameterError`) and the errors of the rankers
and of computing on rankings; the application's errors (a config, a data file, an output
folder, a run's lock) live in :mod:`moweights.errors`.
"""

from __future__ import annotations

__all__ = [
    "BrokenPluginWarning",
    "ConstantFeatureWarning",
    "FeatureMismatchError",
    "FewSamplesWarning",
    "InvalidInputError",
    "InvalidParameterError",
    "MoweightsError",
    "NotEnoughMemoryError",
    "PluginLoadError",
    "TargetKindWarning",
    "UnknownRankerError",
]


class MoweightsError(Exception):
    """Base class of every error moweights raises on purpose."""


class InvalidInputError(MoweightsError, ValueError):
    """The data given to a ranker or scorer cannot be used as it is.

    The message names the offending columns (or rows) and says what would be valid.
    """


class InvalidParameterError(MoweightsError, ValueError, TypeError):
    """A parameter has an unknown name or a value outside its valid range."""


class FeatureMismatchError(MoweightsError, ValueError):
    """Rankings or data sets that must share one feature set do not.

    Attributes
    ----------
    missing : dict
        For each offending input, the features it lacks.
    extra : dict
        For each offending input, the features it has that the reference lacks.
    """

    def __init__(self, message: str, missing=None, extra=None):
        super().__init__(message)
        self.missing = dict(missing or {})
        self.extra = dict(extra or {})


class UnknownRankerError(MoweightsError, LookupError):
    """No ranker is registered under the requested name."""

    def __init__(self, name: str, close_matches=(), available=()):
        self.name = name
        self.close_matches = list(close_matches)
        self.available = list(available)
        msg = f"no ranker named {name!r}"
        if self.close_matches:
            msg += "; did you mean " + " or ".join(repr(m) for m in self.close_matches) + "?"
        if self.available:
            msg += " Available: " + ", ".join(self.available) + "."
        super().__init__(msg)

    def __str__(self) -> str:  # LookupError would quote the message otherwise
        return self.args[0]


class NotEnoughMemoryError(MoweightsError, MemoryError):
    """A step would need more memory than the machine has available.

    Raised before the step allocates anything, so ``except MemoryError`` keeps working
    and the machine is never pushed into swapping or the out-of-memory killer.

    Attributes
    ----------
    needed : int
        Estimated peak bytes of the step.
    available : int
        Bytes available when the step was about to start.
    what : str
        The step, e.g. "FRANe's feature-similarity graph (2000 features)".
    """

    def __init__(self, message: str, needed: int, available: int, what: str):
        super().__init__(message)
        self.needed = int(needed)
        self.available = int(available)
        self.what = what

    def __reduce__(self):  # crosses process pools (joblib/loky) intact
        return (type(self), (self.args[0], self.needed, self.available, self.what))


class PluginLoadError(MoweightsError, ImportError):
    """A ranker is installed (has an entry point) but its code failed to import."""


class ConstantFeatureWarning(UserWarning):
    """Some features are constant; they get the lowest score."""


class FewSamplesWarning(UserWarning):
    """So few samples (or samples of a class) that any ranking is mostly noise."""


class TargetKindWarning(UserWarning):
    """A ranker for both kinds of target took a numeric target as a quantity although its
    values look like class labels (few, each repeated); the message says how to mean classes."""


class BrokenPluginWarning(UserWarning):
    """A ranker plugin could not be loaded; the other rankers are unaffected."""
