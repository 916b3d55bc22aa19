"""Random programs (``tests/random_programs.py``) jitted, against the same programs eager.

Each program runs as it is, under ``grad`` of a scalarisation, under ``hessian`` and under
``vmap`` of its vectorised form, each jitted: the recording call and a replay on the point,
then every other example of the program (same shapes, new values: a replay, or a guard miss
at a branch that flips, then a new recording), all equal to eager to the bit.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from jit_util import assert_same_bits
from random_programs import Program, programs

import transforms as T
import transforms.numpy as tnp
from transforms.core import current_traces

_SLOW_IS_FINE = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]


def _scalarised(f: Any, w: np.ndarray) -> Any:
    return lambda *xs: tnp.sum(f(*xs) * w)


def _same_as_eager(fun: Any, calls: list[tuple[Any, ...]], what: str) -> None:
    jitted = T.jit(fun)
    for i, args in enumerate(calls):
        with warnings.catch_warnings(record=True):  # both sides may warn (overflow): compared
            warnings.simplefilter("always")
            expected = fun(*args)
            actual = jitted(*args)
        assert_same_bits(actual, expected, f"{what}, call {i}")
    assert current_traces() == ()


@settings(max_examples=10, deadline=None, suppress_health_check=_SLOW_IS_FINE)
@given(program=programs(), seed=st.integers(0, 2**32 - 1))
def test_random_programs_jitted_equal_eager(program: Program, seed: int) -> None:
    note(repr(program))
    calls = [program.point, program.point, *program.examples[1:], program.point]
    _same_as_eager(lambda *xs: program(*xs), calls, "f")
    y = np.asarray(program(*program.point))
    w = np.random.default_rng(seed).uniform(-1, 1, y.shape)
    argnums = tuple(range(program.n_inputs))
    _same_as_eager(T.grad(_scalarised(program, w), argnums=argnums), calls, "grad")
    _same_as_eager(T.hessian(_scalarised(program, w), argnums=argnums), calls[:3], "hessian")
    batched = program.batched_inputs()
    mapped = T.vmap(program.vectorized, in_axes=program.in_axes)
    _same_as_eager(mapped, [batched, batched], "vmap")


@settings(max_examples=8, deadline=None, suppress_health_check=_SLOW_IS_FINE)
@given(program=programs(max_nodes=10, weights=(4, 0, 3)), seed=st.integers(0, 2**32 - 1))
def test_random_programs_with_branches_jitted_equal_eager(program: Program, seed: int) -> None:
    note(repr(program))
    calls = [program.point, *program.examples[1:], program.point, *program.examples[1:]]
    y = np.asarray(program(*program.point))
    w = np.random.default_rng(seed).uniform(-1, 1, y.shape)
    _same_as_eager(lambda *xs: program(*xs), calls, "f")
    grad = T.grad(_scalarised(program, w), argnums=tuple(range(program.n_inputs)))
    _same_as_eager(grad, calls, "grad")
