"""Hypothesis profiles: ``dev`` (quick, the default), ``ci`` (thorough but bounded, replayable)
and ``long`` (a soak run). Pick one with the ``HYPOTHESIS_PROFILE`` environment variable.
And the fixtures more than one test module uses."""

import contextlib
import os
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

import transforms as T
from transforms.core import Tracer
from transforms.lax._branch import switch_p
from transforms.lax._loops import fori_loop_p, while_loop_p
from transforms.lax._scan import scan_p, scan_segment_p

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


_CONSTRUCTS = (switch_p, while_loop_p, fori_loop_p, scan_p, scan_segment_p)


@pytest.fixture
def traced_binds(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The ``transforms.lax`` construct primitives applied on traced operands while the test
    runs (bound, and not refused): whether a construct ran as one primitive or as its
    algorithm at the caller's level."""
    seen: list[str] = []
    bind = T.Primitive.bind

    def spy(self: T.Primitive[Any], *args: Any, **params: Any) -> Any:
        out = bind(self, *args, **params)
        if self in _CONSTRUCTS and any(isinstance(a, Tracer) for a in args):
            seen.append(self.name)
        return out

    monkeypatch.setattr(T.Primitive, "bind", spy)
    yield seen
