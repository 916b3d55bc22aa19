"""Derivative code runs with NumPy's floating-point warnings off.

A derivative may be infinite or NaN where the function is finite (``sqrt'(0)``,
``arcsin'(1)``), and NumPy warns while computing it: warnings the user's own (forward)
computation never emitted, which break test suites that turn warnings into errors. JAX
returns such values silently; so do the rules here. Only derivative code is quiet: the
forward computation warns exactly as NumPy does.

``np.errstate`` costs microseconds per entry (it is built for rare use); the rules enter the
same state by setting NumPy's own context variable, a fraction of that (where that variable
is missing, a future NumPy, ``np.errstate`` is the fallback).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

__all__ = ["quiet"]

F = TypeVar("F", bound=Callable[..., Any])

_STATE: Any = getattr(getattr(np, "_core", None), "umath", None)
_STATE = getattr(_STATE, "_extobj_contextvar", None)  # None: a NumPy without it
_QUIET: Any = None
if _STATE is not None:
    with np.errstate(all="ignore"):
        _QUIET = _STATE.get()


def quiet(fn: F) -> F:
    """``fn`` run with NumPy's floating-point warnings (divide, invalid, overflow) off."""
    if _STATE is None:  # pragma: no cover

        @functools.wraps(fn)
        def slow(*args: Any, **kwargs: Any) -> Any:
            with np.errstate(all="ignore"):
                return fn(*args, **kwargs)

        return slow  # type: ignore[return-value]
    state, silent = _STATE, _QUIET

    @functools.wraps(fn)
    def quieted(*args: Any, **kwargs: Any) -> Any:
        token = state.set(silent)
        try:
            return fn(*args, **kwargs)
        finally:
            state.reset(token)

    return quieted  # type: ignore[return-value]
