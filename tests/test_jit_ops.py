"""Every row of the op-spec table jitted, in every mode the row allows, against eager.

Modes: the function itself, ``grad`` of a scalarisation (reverse mode through the row's
VJP rules), ``jvp`` (forward mode), and ``vmap`` over a batch of two (where eager ``vmap``
accepts the row). Each jitted function is called twice (the recording, then a replay) and
on a second draw of the same shapes; every result equals eager to the bit.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jit_util import assert_same_bits
from op_specs import OP_SPECS, OpSpec, cases

import transforms as T
import transforms.numpy as tnp
from transforms.core import current_traces


def _leaves(y: Any) -> list[Any]:
    return list(y) if isinstance(y, (tuple, list)) else [y]


def _scalar(f: Any) -> Any:
    def g(*xs: Any) -> Any:
        total = 0.0
        for v in _leaves(f(*xs)):
            if np.issubdtype(getattr(v, "dtype", None) or np.result_type(v), np.inexact):
                total = total + tnp.sum(tnp.real(v) * 1.5)
        return total

    return g


def _modes(f: Any, args: tuple[np.ndarray, ...]) -> dict[str, tuple[Any, tuple[Any, ...]]]:
    n = len(args)
    tangents = tuple(np.full_like(a, 0.5) for a in args)
    batched = tuple(np.stack([a, a * 0.5 + 0.25]) for a in args)
    return {
        "f": (f, args),
        "grad": (T.grad(_scalar(f), argnums=tuple(range(n))), args),
        "jvp": (lambda *xs: T.jvp(f, xs, tangents), args),
        "vmap": (T.vmap(f), batched),
    }


def _same_params(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_params(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same_params(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.shape(a) == np.shape(b) and np.array_equal(a, b))
    return bool(a == b)


def _eager(fun: Any, args: tuple[Any, ...]) -> Any:
    try:
        return fun(*args)
    except Exception:  # the row does not allow this mode (no derivative, not batchable)
        return None


@pytest.mark.parametrize("spec", OP_SPECS, ids=lambda s: s.name)
@settings(max_examples=1, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_row_jitted_equals_eager(spec: OpSpec, data: st.DataObject) -> None:
    first = data.draw(cases(spec), label="case")
    second = data.draw(cases(spec), label="second case")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a row's eager warnings: compared values, not text)
        for mode, (fun, args) in _modes(first.f, first.args).items():
            expected = _eager(fun, args)
            if expected is None:
                continue
            jitted = T.jit(fun)
            assert_same_bits(jitted(*args), expected, f"{spec.name} {mode}: recording")
            assert_same_bits(jitted(*args), expected, f"{spec.name} {mode}: replay")
            if [a.shape for a in second.args] == [a.shape for a in first.args]:
                fun2, args2 = _modes(second.f, second.args)[mode]
                expected2 = _eager(fun2, args2)
                if expected2 is not None and _same_params(second.params, first.params):
                    assert_same_bits(jitted(*args2), expected2, f"{spec.name} {mode}: new values")
    assert current_traces() == ()
