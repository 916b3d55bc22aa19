"""Elementwise ops writing into a dying operand's buffer (``transforms.staging._inplace``).

Each test asserts that the generated code does it (``out=``) or, where it would be wrong,
does not; and that every replay equals eager to the bit, in dtype and in memory layout
(strides), over arguments of several layouts under one signature, with results that are
fresh arrays of their own.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from jit_util import assert_same_bits
from random_programs import Program, programs

import transforms as T
import transforms.numpy as tnp
from transforms.staging import _inplace
from transforms.tree_util import tree_leaves

N = 64  # 64 x 64 float64: 32 KiB, the smallest operand worth writing into


def _source(jitted: Any) -> str:
    (entry,) = jitted._cache.entries.values()
    return str(entry.programs[0].source)


def _layouts(x: np.ndarray[Any, Any]) -> list[np.ndarray[Any, Any]]:
    wide = np.zeros((x.shape[0], 2 * x.shape[1]))
    wide[:, ::2] = x
    return [x, np.asfortranarray(x), wide[:, ::2], x[::-1]]


def _check_every_layout(fun: Any, *args: np.ndarray[Any, Any]) -> Any:
    jitted = T.jit(fun)
    for k in range(4):
        laid = [_layouts(a)[(k + j) % 4] for j, a in enumerate(args)]  # (mixed layouts)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (inf - inf and the like: both warn)
            expected, first, second = fun(*laid), jitted(*laid), jitted(*laid)
        for actual in (first, second):
            assert_same_bits(actual, expected, f"layout {k}")
            for a, e in zip(actual, expected, strict=True):
                assert a.strides == e.strides, f"layout {k}"
        for a, b in zip(first, second, strict=True):
            assert a is not b and not np.shares_memory(a, b)  # fresh at each call
    assert jitted.stats.records == 1
    return jitted


def _specials(seed: int) -> np.ndarray[Any, Any]:
    x = np.random.default_rng(seed).standard_normal((N, N))
    x.flat[:6] = [-0.0, 0.0, np.inf, -np.inf, np.nan, 5e-324]
    return x


def _chain(x: Any, w: Any) -> Any:
    y = tnp.sin(x) * 2.0  # into sin's result
    z = -y  # unary: into y
    u = w + z  # w of the full shape: only where w's strides are z's (checked at replay)
    v = u * tnp.arange(float(N))  # a one-axis operand: into u
    return v, tnp.exp(v) - 1.0


def test_a_chain_of_elementwise_ops_writes_in_place_with_eagers_bits_and_layout() -> None:
    jitted = _check_every_layout(_chain, _specials(0), _specials(1))
    source = _source(jitted)
    assert source.count("out=") == 5 and ".strides ==" in source, source


def test_a_3d_permuted_chain_keeps_its_layout() -> None:
    def f(x: Any) -> Any:
        y = tnp.cos(tnp.transpose(x, (2, 0, 1)))  # a compact result in a permuted order
        return (y * 3.0 + 1.0,)

    x = np.random.default_rng(2).standard_normal((16, 32, 8))
    jitted = T.jit(f)
    for arg in (x, np.asfortranarray(x), x.transpose(1, 0, 2).copy().transpose(1, 0, 2)):
        (actual,), (expected,) = jitted(arg), f(arg)
        assert_same_bits(actual, expected) and actual.strides == expected.strides
        assert actual.strides == expected.strides
    assert "out=" in _source(jitted)


def test_a_value_something_views_is_never_written() -> None:
    def f(x: Any) -> Any:
        y = tnp.sin(x)
        t = tnp.transpose(y)  # a view of y, alive after y's last read
        return y * 2.0, t

    jitted = _check_every_layout(f, _specials(3))
    assert "out=" not in _source(jitted)


def test_arguments_outputs_and_values_read_later_are_never_written() -> None:
    def f(x: Any) -> Any:
        y = tnp.sin(x)
        a = x * 2.0  # x: an argument
        b = y + 1.0  # y: read again below
        return a, b, y * b, y

    jitted = _check_every_layout(f, _specials(4))
    assert "out=" not in _source(jitted)


def test_matmul_and_small_arrays_allocate() -> None:
    def f(x: Any) -> Any:
        y = tnp.sin(x)
        return tnp.matmul(y, y.T) + 1.0, tnp.cos(x[:8, :8]) * 2.0

    jitted = _check_every_layout(f, _specials(5))
    source = _source(jitted)
    assert source.count("out=") == 1 and ", 1.0, out=" in source, source  # (the sum)


@pytest.mark.parametrize("n", [N, 100])
def test_a_hessian_writes_in_place(n: int) -> None:
    A = np.random.default_rng(n).standard_normal((n, n)) / np.sqrt(n)

    def f(x: Any) -> Any:
        return tnp.sum(tnp.tanh(tnp.matmul(A, x)) ** 2) + 0.5 * tnp.sum(x**2)

    h = T.hessian(f)
    jitted = T.jit(h)
    x = np.random.default_rng(0).standard_normal(n)
    for arg in (x, -x, np.where(x > 0, x, -0.0)):
        actual, expected = jitted(arg), h(arg)
        assert_same_bits(actual, expected) and actual.strides == expected.strides
        assert actual.strides == expected.strides
    assert _source(jitted).count("out=") >= 5


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(program=programs(max_nodes=10), seed=st.integers(0, 2**32 - 1))
def test_random_programs_writing_in_place_at_every_size_equal_eager(
    program: Program, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Random programs (``tests/random_programs.py``) jitted with every eligible op writing
    into its operand whatever its size (the programs' arrays are small), as they are and
    under ``grad`` and ``hessian``: each call equals eager to the bit and in layout."""
    monkeypatch.setattr(_inplace, "MIN_BYTES", 0)
    note(repr(program))
    calls = [program.point, program.point, *program.examples[1:]]
    y = np.asarray(program(*program.point))
    w = np.random.default_rng(seed).uniform(-1, 1, y.shape)
    argnums = tuple(range(program.n_inputs))

    def scalarised(*xs: Any) -> Any:
        return tnp.sum(program(*xs) * w)

    for fun in (
        lambda *xs: program(*xs),
        T.grad(scalarised, argnums=argnums),
        T.hessian(scalarised, argnums=argnums),
    ):
        jitted = T.jit(fun)
        for args in calls:
            with warnings.catch_warnings(record=True):
                warnings.simplefilter("always")
                expected, actual = fun(*args), jitted(*args)
            assert_same_bits(actual, expected)
            for a, e in zip(tree_leaves(actual), tree_leaves(expected), strict=True):
                assert np.shape(a) == np.shape(e)
                compact = isinstance(e, np.ndarray) and (
                    e.flags.c_contiguous or e.flags.f_contiguous
                )
                if compact and e.size > 1:  # (a ufunc's result: compact; a broadcast view
                    assert a.strides == e.strides  # of a constant is copied, docs/jit.md)
