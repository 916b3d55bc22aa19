"""The optimisation passes of ``transforms.staging._passes`` that rewrite operands: each
test asserts that the lowered program changed as the pass says, and that replays equal
eager to the bit (signed zeros, infinities, NaN) in value, dtype and memory layout."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from jit_util import assert_same_bits

import transforms as T
import transforms.numpy as tnp

SPECIAL = np.array(
    [[-0.0, 0.0, np.inf, -np.inf], [np.nan, 5e-324, -1.5, 1e308], [3.0, -2.0, 1.0, 0.5]]
)


def _layouts(x: np.ndarray[Any, Any]) -> list[np.ndarray[Any, Any]]:
    """``x`` in C order, in Fortran order, and as a strided view (one signature, so one
    program serves them all)."""
    wide = np.zeros((x.shape[0], 2 * x.shape[1]))
    wide[:, ::2] = x
    return [x, np.asfortranarray(x), wide[:, ::2]]


def _uniform_operands(x: Any) -> Any:
    two = np.full(4, 2.0)  # a constant array holding one value: read as a 0-d array
    return (
        x * two,
        two - x,
        x / np.full((3, 1), -0.0),
        tnp.add(np.full((1, 4), np.inf), x),
        tnp.multiply(x, np.full(4, 3, np.int32)),  # (promotion: int32 array, float64 x)
        x * np.array([2.0, 3.0, 2.0, 2.0]),  # not uniform: kept
        x * np.full((3, 4), 2.0),  # two axes longer than one: kept
        x + np.array([0.0, -0.0, 0.0, 0.0]),  # not uniform to the bit: kept
    )


def test_uniform_constants_are_read_as_0d_arrays() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (overflow, invalid: eager warns alike)
        text = str(T.jit(_uniform_operands).lower(SPECIAL))
    assert text.count("literal:") == 3, text  # the three kept
    assert "multiply %1:float64[3,4] 2.0" in text and "subtract 2.0 %1" in text, text


@pytest.mark.parametrize("layout", range(3))
def test_uniform_constants_keep_eagers_bits_and_layout(layout: int) -> None:
    jitted = T.jit(_uniform_operands)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (both warn: overflow, invalid)
        jitted(SPECIAL)  # the recording, in C order
    for x in (_layouts(SPECIAL)[layout], _layouts(-SPECIAL)[layout]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected, actual = _uniform_operands(x), jitted(x)
        assert_same_bits(actual, expected, "replay")
        for a, e in zip(actual, expected, strict=True):
            assert a.strides == e.strides
    assert jitted.stats.records == 1


def test_a_hessian_multiplies_by_its_uniform_seed_as_a_scalar() -> None:
    A = np.random.default_rng(0).standard_normal((5, 5))

    def f(x: Any) -> Any:
        return tnp.sum(tnp.tanh(tnp.matmul(A, x)) ** 2) + 0.5 * tnp.sum(x**2)

    h = T.hessian(f)
    text = str(T.jit(h).lower(np.ones(5)))
    assert "literal:float64[5] " not in text and "literal:float64[5]\n" not in text, text
    jitted = T.jit(h)
    for x in (np.ones(5), np.array([-0.0, 0.0, 1e300, -1e300, 5e-324]), np.arange(5.0) - 2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (x**2 overflows: eager warns alike)
            assert_same_bits(jitted(x), h(x), f"x = {x}")


def _twice_with_equal_constants(x: Any) -> Any:
    half = np.float64(-0.5)
    return (
        x * half + x * np.float64(-0.5),  # two objects, one value: one product
        x * 0.0 + x * -0.0,  # two values (signed zeros): two products
        tnp.add(x, np.float32(2.0)) * tnp.add(x, np.float64(2.0)),  # two dtypes: two sums
        x * 3 - x * 3.0,  # an int and a float: two products (eager's own promotion each)
    )


def test_equal_scalar_constants_are_one_operand() -> None:
    x = np.array([-0.0, 0.0, np.inf, np.nan, 1.5])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (inf - inf: eager warns alike)
        text = str(T.jit(_twice_with_equal_constants).lower(x))
        assert text.count(" = multiply") == 6 and text.count(" = add") == 4, text
        jitted = T.jit(_twice_with_equal_constants)
        for v in (x, -x, x[::-1].copy()):
            assert_same_bits(jitted(v), _twice_with_equal_constants(v), f"x = {v}")
