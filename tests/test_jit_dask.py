"""``T.jit`` over Dask arrays: recorded once, replayed lazily, never stale, computing nothing.

Every call runs with Dask's scheduler replaced by one that fails the test (a recording, a
replay or a guard that computed a Dask array would be caught), and Dask's warning for a NumPy
function it lacks is an error. Results are Dask arrays; computed, they equal the eager
function's Dask results to the bit (the same graph) and NumPy's to rounding.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from jit_util import assert_same_bits

import transforms as T
import transforms.numpy as tnp
from transforms.core import ArrayLibraryError
from transforms.staging._program import Const, Op

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

rng = np.random.default_rng(7)
X_NP = rng.standard_normal((40, 3))
Y_NP = (rng.uniform(size=40) > 0.5).astype(np.float64)
W = np.array([0.1, -0.2, 0.3])


def _refuse(dsk: Any, keys: Any, **kwargs: Any) -> Any:
    raise AssertionError("a Dask array was computed")


@contextmanager
def lazily() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # Dask: "... is not implemented"
        with dask.config.set(scheduler=_refuse):
            yield


def computed(tree: Any) -> Any:
    """``tree`` with its Dask arrays computed (each must be one: the result was lazy)."""
    if isinstance(tree, (tuple, list)):
        return type(tree)(computed(t) for t in tree)
    assert isinstance(tree, da.Array), f"a {type(tree).__name__} where a Dask array was due"
    return np.asarray(tree.compute(scheduler="sync"))


def loss(w: Any, X: Any, y: Any) -> Any:
    z = X @ w
    return tnp.sum(tnp.logaddexp(0.0, z) - y * z) / X.shape[0]


def _data(X: np.ndarray = X_NP, y: np.ndarray = Y_NP, rows: int = 10) -> tuple[Any, Any]:
    return da.from_array(X, chunks=(rows, X.shape[1])), da.from_array(y, chunks=rows)


@pytest.mark.parametrize(
    "transform",
    [
        T.value_and_grad,
        T.grad,
        lambda f: T.grad(f, argnums=(0, 2)),
        lambda f: lambda w, X, y: T.jvp(lambda v: f(v, X, y), (w,), (np.ones_like(w),)),
        lambda f: T.hessian(f),
    ],
    ids=["value_and_grad", "grad", "grad-data", "jvp", "hessian"],
)
def test_jit_over_dask_records_once_replays_lazily_and_equals_eager(transform: Any) -> None:
    fun = transform(loss)
    X, y = _data()
    jitted = T.jit(fun)
    with lazily():
        eager = fun(W, X, y)
        results = [jitted(W, X, y), jitted(W, X, y), jitted(W * 2.0, X, y)]
        eager2 = fun(W * 2.0, X, y)
    assert (jitted.stats.records, jitted.stats.replays) == (1, 2)
    assert_same_bits(computed(results[0]), computed(eager), "recording")
    assert_same_bits(computed(results[1]), computed(eager), "replay")
    assert_same_bits(computed(results[2]), computed(eager2), "replay, new parameters")
    numpy = fun(W, X_NP, Y_NP)
    for got, want in zip(computed(results[0]), numpy, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def test_new_data_of_the_same_chunks_replays_other_chunks_record() -> None:
    fun = T.jit(T.value_and_grad(loss))
    X, y = _data()
    X2, y2 = _data(X_NP[::-1].copy(), Y_NP[::-1].copy())
    X3, y3 = _data(rows=20)
    with lazily():
        fun(W, X, y)
        second = fun(W, X2, y2)
        assert (fun.stats.records, fun.stats.replays) == (1, 1)
        third = fun(W, X3, y3)
        assert fun.stats.records == 2  # chunks key the program (its graph's shape)
    assert_same_bits(computed(second), computed(T.value_and_grad(loss)(W, X2, y2)))
    assert_same_bits(computed(third), computed(T.value_and_grad(loss)(W, X3, y3)))


def test_a_closed_over_dask_array_replaced_or_written_is_never_stale() -> None:
    X, y = _data()
    data = {"X": X}

    def closed(w: Any) -> Any:
        return loss(w, data["X"], y)

    jitted = T.jit(T.value_and_grad(closed))
    with lazily():
        first = jitted(W)
        data["X"] = _data(X_NP * 2.0)[0]  # rebound: a binding miss
        second = jitted(W)
        data["X"][0] = np.array([5.0, -5.0, 1.0])  # written: its graph's name changed
        third = jitted(W)
        fourth = jitted(W)
    assert jitted.stats.records == 3 and jitted.stats.replays == 1
    assert_same_bits(computed(first), computed(T.value_and_grad(loss)(W, X, y)))
    expected = T.value_and_grad(loss)(W, _data(X_NP * 2.0)[0], y)
    assert_same_bits(computed(second), computed(expected))
    written = X_NP * 2.0
    written[0] = [5.0, -5.0, 1.0]
    for got in (third, fourth):
        np.testing.assert_allclose(computed(got)[1], T.grad(loss)(W, written, Y_NP), rtol=1e-12)
    assert not np.allclose(computed(third)[1], computed(second)[1])


def test_a_value_derived_from_a_closed_over_dask_array_by_dask_itself_is_not_stale() -> None:
    """``mean`` is computed by Dask at recording (not a primitive: baked into the program as
    a Dask array); an item assignment into ``X`` must still reach it."""
    X, y = _data()

    def centred(w: Any) -> Any:
        mean = X.mean(axis=0)  # Dask's own, lazily: part of the recording's constants
        return loss(w, X - mean, y)

    jitted = T.jit(T.grad(centred))
    with lazily():
        jitted(W)
        X[3] = np.array([9.0, 9.0, 9.0])
        got = jitted(W)
    written = X_NP.copy()
    written[3] = 9.0
    expected = T.grad(loss)(W, written - written.mean(axis=0), Y_NP)
    np.testing.assert_allclose(computed(got), expected, rtol=1e-12, atol=1e-15)


def test_a_function_that_writes_into_a_dask_array_it_reads_runs_eagerly() -> None:
    X, y = _data()

    def writes(w: Any) -> Any:
        X[0] = np.zeros(3)
        return loss(w, X, y)

    with lazily(), pytest.warns(T.JitWarning, match="writes into an array it reads"):
        got = T.jit(writes)(W)
    written = X_NP.copy()
    written[0] = 0.0
    np.testing.assert_allclose(computed(got), loss(W, written, Y_NP), rtol=1e-12)


class _Foreign:
    """An array of a foreign library other than Dask (as CuPy's: written in place, its bits
    not readable without a transfer)."""

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return NotImplemented


def test_a_closed_over_array_of_another_library_runs_eagerly_with_a_warning() -> None:
    held = _Foreign()

    def reads(x: Any) -> Any:
        return x * 2.0 if held is not None else x

    jitted = T.jit(reads)
    with pytest.warns(T.JitWarning, match="array by name"):
        got = jitted(np.ones(3))
    assert_same_bits(got, np.ones(3) * 2.0)
    assert jitted.stats.records == 0


def test_what_dask_lacks_raises_inside_jit_too() -> None:
    x = da.from_array(rng.standard_normal((4, 4)), chunks=2)
    with lazily(), pytest.raises(ArrayLibraryError, match=r"det.*dask"):
        T.jit(T.grad(lambda a: tnp.linalg.det(a)))(x)


def test_keys_and_guards_read_no_dask_value() -> None:
    """The key of a call is the tree, shapes, dtypes and chunks: a replay and a guard miss
    alike compute nothing (the scheduler refuses), and the program holds no Dask value."""
    X, y = _data()
    jitted = T.jit(T.value_and_grad(loss))
    with lazily():
        jitted(W, X, y)
        X[0] = np.zeros(3)  # an argument written: read afresh, no guard involved
        got = jitted(W, X, y)
    assert jitted.stats.replays == 1
    written = X_NP.copy()
    written[0] = 0.0
    np.testing.assert_allclose(computed(got)[1], T.grad(loss)(W, written, Y_NP), rtol=1e-12)
    program = jitted.lower(W, X, y).program
    held = [
        c.value
        for op in program.instructions
        if isinstance(op, Op)
        for c in op.inputs
        if isinstance(c, Const) and isinstance(c.value, da.Array)
    ]
    for value in held:  # the data are inputs, never constants: no constant is built on them
        # (a Dask constant may be one of the data's shape that reads none of them: the
        # cotangent ones_like(X) * ct of sum's VJP, in the data's chunks)
        assert not set(dict(value.__dask_graph__())) & set(dict(X.__dask_graph__()))


def test_an_array_of_unknown_chunk_sizes_replays() -> None:
    """A boolean mask's result has chunks of unknown size (NaN): keyed by their text, a call
    with the same chunks replays (a NaN key would equal no other and record every call)."""
    x = da.from_array(np.linspace(-1.0, 1.0, 10), chunks=5)

    def f(m: Any) -> Any:
        return tnp.sum(tnp.sin(m) * 2.0)

    jitted = T.jit(f)
    with lazily():
        masked = x[x > 0]
        results = [jitted(masked), jitted(masked), jitted(x[x < 0])]
    assert (jitted.stats.records, jitted.stats.replays) == (1, 2)
    for got, m in zip(results, (x[x > 0], x[x > 0], x[x < 0]), strict=True):
        assert_same_bits(computed(got), computed(f(m)))
