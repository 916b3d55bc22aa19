"""Issue 11, item 5: the derivative code adds no NumPy warnings of its own.

For every row of the op-spec table, at boundary points (zeros of both signs, +-1, +-2, a
tiny number: where ``sqrt'``, ``log'``, ``arcsin'``, ``power``'s derivatives are infinite or
undefined), whenever NumPy's forward computation emits no ``RuntimeWarning``, neither do
``jvp``, ``vjp`` nor a second-order derivative (``jvp`` of the ``vjp``): JAX returns such
derivatives (``inf``, ``nan``) silently, and a test suite that turns warnings into errors
must be able to differentiate there. Exceptions (a singular matrix) are not this test's
business: only warnings are compared.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_specs import OP_SPECS, OpSpec, cases

import transforms as T

BOUNDARY = (0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 1e-200)


def _warnings_of(call: Callable[[], Any]) -> list[str] | None:
    """The RuntimeWarnings ``call`` emits (``None`` if it raises)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call()
        except Exception:
            return None
    return [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]


def _real_leaves(out: Any) -> list[np.ndarray]:
    leaves = list(out) if isinstance(out, (tuple, list)) else [out]
    return [np.asarray(o) for o in leaves]


@pytest.mark.parametrize("spec", OP_SPECS, ids=lambda s: s.name)
@settings(max_examples=8, deadline=None)  # 8 draws of 7 boundary values per row: ~640 rows
@given(data=st.data())
def test_derivatives_add_no_warnings_at_boundary_points(spec: OpSpec, data: st.DataObject) -> None:
    case = data.draw(cases(spec), label="shapes and parameters")
    xs = tuple(
        np.array(
            data.draw(st.lists(st.sampled_from(BOUNDARY), min_size=a.size, max_size=a.size)),
            dtype=a.dtype,
        ).reshape(a.shape)
        for a in case.args
    )
    outs: list[Any] = []
    forward = _warnings_of(lambda: outs.append(case.f(*xs)))
    if forward is None or forward:  # the forward raised or warned itself: nothing to compare
        return
    out = outs[0]
    if not all(np.issubdtype(o.dtype, np.floating) for o in _real_leaves(out)):
        return
    ts = tuple(np.ones_like(x) for x in xs)
    ws = (
        type(out)(np.ones_like(o) for o in out)
        if isinstance(out, (tuple, list))
        else np.ones_like(out)
    )

    def first_vjp(*a: Any) -> Any:
        return T.vjp(case.f, *a)[1](ws)

    derivatives = {
        "jvp": lambda: T.jvp(case.f, xs, ts),
        "vjp": lambda: first_vjp(*xs),
        "jvp of vjp": lambda: T.jvp(first_vjp, xs, ts),
    }
    for mode, call in derivatives.items():
        emitted = _warnings_of(call)
        assert not emitted, f"{spec.name} {mode} at {xs}: {emitted}"
