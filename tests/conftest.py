"""Hypothesis profiles: ``dev`` (quick, the default), ``ci`` (thorough but bounded, replayable)
and ``long`` (a soak run). Pick one with the ``HYPOTHESIS_PROFILE`` environment variable."""

import contextlib
import os
import warnings

from hypothesis import HealthCheck, settings

_SLOW_IS_FINE = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

settings.register_profile("dev", max_examples=15, deadline=None, derandomize=True)
settings.register_profile(
    "ci", max_examples=25, deadline=None, derandomize=True, suppress_health_check=_SLOW_IS_FINE
)
settings.register_profile(
    "long", max_examples=2000, deadline=None, suppress_health_check=_SLOW_IS_FINE
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

# Hypothesis's pytest plugin imports its patch writer only when a test fails, and that import
# (through libcst) can raise a third-party DeprecationWarning, which `filterwarnings = error`
# turns into an INTERNALERROR that hides the real failure. Import it once here, quietly.
with warnings.catch_warnings(), contextlib.suppress(ImportError):
    warnings.simplefilter("ignore")
    import hypothesis.extra._patching  # noqa: F401
