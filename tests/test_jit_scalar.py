"""Programs of 0-d float64 values replayed on Python floats (``transforms.staging._scalar``).

A replay computes ``+``, ``-``, ``*`` and unary ``-`` of 0-d float64 values in derivative
code as Python float arithmetic: each test asserts that it does (the generated source) and
that every result equals eager's to the bit and in type, at signed zeros, infinities, NaN,
subnormals and overflow; that a value leaving Python floats gets eager's type back (a
float32 operand's promotion, an operator, a guard, an output); and that ops in the caller's
floating-point error state stay NumPy's (they may warn).
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pytest
from jit_util import assert_same_bits

import transforms as T
import transforms.numpy as tnp
from transforms.core._quiet import quiet

SPECIAL = [0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, -np.nan, 5e-324, 1e308, -1e-308]


def _bump(x: Any) -> Any:
    return tnp.sin(x) * tnp.exp(-(x**2) / 4)


def _nested_grad(k: int) -> Any:
    f = _bump
    for _ in range(k):
        f = T.grad(f)
    return f


def _same_as_eager(fun: Any, *args: Any) -> Any:
    jitted = T.jit(fun)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (eager and replay alike; compared elsewhere)
        for _ in range(2):  # the recording, then a replay
            assert_same_bits(jitted(*args), fun(*args), f"{args!r}")
    return jitted


def _python_operators(source: str) -> int:
    """How many lines of generated code apply a Python operator to floats."""
    return len(re.findall(r"^\s+\w+ = (?:-\w+|\S+ [-+*] \S+)$", source, re.MULTILINE))


def test_nested_grad_replays_on_python_floats() -> None:
    lowered = T.jit(_nested_grad(4)).lower(np.array(0.3))
    ops = str(lowered).count(" = ")
    arithmetic = _python_operators(lowered.source)
    assert arithmetic > 0.8 * ops, (arithmetic, ops, lowered.source)


@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("x", [0.0, -0.0, 1.5, -2.25, 5e-324, -1e-308, 40.0, -1e154])
def test_nested_grad_at_special_points_equals_eager(k: int, x: float) -> None:
    """(Points where the derivative is a number: at one with a NaN, eager recomputes it
    NaN-safely, ``transforms.nansafe``, which a recording does not, docs/jit.md.)"""
    _same_as_eager(_nested_grad(k), np.array(x))


@pytest.mark.parametrize("x", SPECIAL)
@pytest.mark.parametrize("y", SPECIAL)
def test_arithmetic_of_special_values_equals_eager(x: float, y: float) -> None:
    @quiet  # (as derivative code runs: the ops become Python float arithmetic)
    def f(a: Any, b: Any) -> Any:
        s = a * b + (-a) - b * -0.0
        return s, -s * s, a + 0.0, a * np.inf, b - np.nan, a * 3, (b + a) * (a - b)

    jitted = _same_as_eager(f, np.array(x), np.array(y))
    source = next(iter(jitted._cache.entries.values())).programs[0].source
    assert _python_operators(source) >= 10, source


def test_a_python_float_meeting_a_float32_array_keeps_eagers_promotion() -> None:
    """``np.float64 * float32 array`` is float64 (a NumPy scalar is a strong type); a
    Python float there would make it float32: the value is boxed back to a NumPy scalar."""

    @quiet
    def f(x: Any, v: Any) -> Any:
        y = x * x + x  # Python floats in the replay
        return tnp.multiply(y, v), y * v, tnp.sin(y)

    v = np.array([1.1, -2.3, 3.7], np.float32)
    out = _same_as_eager(f, np.array(1.3), v)(np.array(1.3), v)
    assert out[0].dtype == np.float64 and out[1].dtype == np.float64


def test_a_python_float_read_by_an_operator_a_guard_and_a_reshape_is_eagers() -> None:
    @quiet
    def f(x: Any) -> Any:
        y = x * x - x
        z = y / 2.0  # an operator NumPy's scalar arithmetic computes (division: not Python's)
        w = tnp.reshape(y, (1,))
        return (z if y > 0 else -z), w, y

    jitted = T.jit(f)
    for x in (2.0, 3.0, 0.5, -0.0, 2.0, 0.25):
        assert_same_bits(jitted(np.array(x)), f(np.array(x)), f"x = {x}")
    source = jitted._cache.entries[((), np.dtype(np.float64)),].programs[0].source
    assert "bx0 = _f64(" in source and _python_operators(source) >= 2, source
    assert jitted.stats.records == 2 and jitted.stats.replays == 4  # (one guard: y > 0)


def test_ops_in_the_callers_error_state_stay_numpys_and_warn() -> None:
    def f(x: Any) -> Any:
        return x * x + 1.0

    jitted = T.jit(f)
    jitted(np.array(2.0))
    assert _python_operators(next(iter(jitted._cache.entries.values())).programs[0].source) == 0
    with pytest.warns(RuntimeWarning, match="overflow"):
        jitted(np.array(1e200))
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        jitted(np.array(1e200))


def test_division_by_a_value_or_by_zero_stays_numpys() -> None:
    """(Python's ``/`` raises ``ZeroDivisionError`` where NumPy gives an infinity or NaN.)"""

    @quiet
    def f(x: Any, y: Any) -> Any:
        return (x * 1.0) / (y * 1.0), x / y, (x * 1.0) / 0.0, tnp.divide(x * 1.0, -0.0)

    for x, y in [(1.0, 0.0), (-1.0, -0.0), (0.0, 0.0), (np.inf, np.inf), (2.0, 3.0)]:
        jitted = _same_as_eager(f, np.array(x), np.array(y))
    source = next(iter(jitted._cache.entries.values())).programs[0].source
    assert " / " not in source, source


@pytest.mark.parametrize("x", SPECIAL)
def test_division_by_a_constant_other_than_zero_is_pythons(x: float) -> None:
    @quiet
    def f(x: Any) -> Any:
        y = x * 1.0
        return y / 4, y / -0.5, tnp.divide(y, np.inf), y / np.nan, y / 3.0, y / 5e-324

    jitted = _same_as_eager(f, np.array(x))
    source = next(iter(jitted._cache.entries.values())).programs[0].source
    assert source.count(" / ") == 6, source


def test_results_get_eagers_types_and_a_0d_array_returned_twice_is_one_object() -> None:
    @quiet
    def f(x: Any) -> Any:
        y = tnp.multiply(x, x)  # bind's 0-d array
        z = x * x  # NumPy's operator: a NumPy scalar (a 0-d array from jit, docs/jit.md)
        return y, y, z, -z

    jitted = _same_as_eager(f, np.array(1.5))
    out = jitted(np.array(-0.0))
    assert all(type(v) is np.ndarray and v.shape == () for v in out)
    assert out[0] is out[1] and out[2] is not out[3]
    assert _python_operators(_source(jitted)) == 3


def _source(jitted: Any) -> str:
    (entry,) = jitted._cache.entries.values()
    return str(entry.programs[0].source)
