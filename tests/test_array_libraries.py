"""The array-library seam (``transforms.core.arrays``): what it promises on its own.

- A derivative comes back in its primal's library (a Dask input's gradient is a Dask array,
  even where it does not depend on the input's values), as JAX keeps a derivative on its
  primal's device.
- An operation the library lacks raises ``ArrayLibraryError`` naming the primitive and the
  library, in every mode: never a silent computation of the whole array (Dask's fallback),
  never NumPy's bare "no implementation found" (CuPy's refusal).
- The warnings filter that makes Dask's fallback an error lives only while a foreign array
  is in flight: a user's own Dask code outside the transforms keeps Dask's warning.

Every op-spec row on Dask arrays is tests/test_dask.py; the transforms on a cluster,
tests/test_dask_cluster.py.
"""

from __future__ import annotations

import threading
import warnings
from typing import Any

import numpy as np
import pytest

import transforms as T
import transforms.numpy as tnp
from transforms.core import ArrayLibraryError, arrays

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")


def _refuse_compute(dsk: Any, keys: Any, **kwargs: Any) -> Any:
    raise AssertionError("a Dask array was computed")


@pytest.fixture
def lazy() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        with dask.config.set(scheduler=_refuse_compute):
            yield


def _dask(a: np.ndarray) -> Any:
    return da.from_array(a, chunks=tuple(max(1, (n + 1) // 2) for n in a.shape))


# ---- a derivative is in its primal's library -------------------------------------------


def test_a_constant_gradient_of_a_dask_input_is_a_dask_array(lazy: Any) -> None:
    x = _dask(np.arange(6.0).reshape(2, 3))
    g = T.grad(lambda x: tnp.sum(x) * 2.0)(x)  # 2 everywhere, whatever x holds
    assert isinstance(g, da.Array)
    np.testing.assert_array_equal(g.compute(scheduler="sync"), np.full((2, 3), 2.0))


def test_a_constant_tangent_of_a_dask_output_is_a_dask_array(lazy: Any) -> None:
    x = _dask(np.arange(4.0))
    y, t = T.jvp(lambda x: x * 0.0 + 1.0, (x,), (np.ones(4),))
    assert isinstance(y, da.Array) and isinstance(t, da.Array)
    np.testing.assert_array_equal(t.compute(scheduler="sync"), np.zeros(4))


def test_numpy_parameters_with_dask_data_give_a_lazy_exact_gradient(lazy: Any) -> None:
    rng = np.random.default_rng(0)
    xn, yn, w = rng.standard_normal((30, 4)), rng.random(30), rng.standard_normal(4)
    x, y = _dask(xn), _dask(yn)

    def loss(w: Any, x: Any, y: Any) -> Any:
        z = x @ w
        return tnp.sum(tnp.logaddexp(0.0, z) - y * z)

    value, grad = T.value_and_grad(loss)(w, x, y)
    assert isinstance(value, da.Array) and isinstance(grad, da.Array)
    expected = xn.T @ (1 / (1 + np.exp(-(xn @ w))) - yn)  # the closed form
    value, grad = dask.compute(value, grad, scheduler="sync")
    np.testing.assert_allclose(grad, expected, rtol=1e-12)
    np.testing.assert_allclose(value, loss(w, xn, yn), rtol=1e-12)


# ---- what a library lacks: a clear error -------------------------------------------------


@pytest.mark.parametrize(
    "mode",
    [
        lambda f, x: f(x),
        lambda f, x: T.grad(lambda x: tnp.sum(f(x)))(x),
        lambda f, x: T.jvp(f, (x,), (x,)),
        lambda f, x: T.vmap(f)(da.stack([x, x])),
    ],
    ids=["plain", "grad", "jvp", "vmap"],
)
def test_an_operation_dask_lacks_is_an_error_naming_primitive_and_library(
    lazy: Any, mode: Any
) -> None:
    x = _dask(np.array([[2.0, 1.0], [1.0, 3.0]]))
    with pytest.raises(ArrayLibraryError, match=r"primitive 'det' .*dask arrays"):
        mode(tnp.linalg.det, x)


class _Refusing:
    """An array of a library that implements nothing NumPy asks of it (as CuPy answers a
    NumPy function it does not have)."""

    __module__ = "fakelib"
    shape = (2,)
    dtype = np.dtype(np.float64)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        if func is np.shape:  # (what it is, but not what it holds)
            return self.shape
        return NotImplemented

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return NotImplemented


def test_a_function_the_library_does_not_implement_names_the_library() -> None:
    message = r"primitive '\w+' \(numpy\.\w+\) is not available for fakelib arrays"
    with pytest.raises(ArrayLibraryError, match=message):
        tnp.cumsum(_Refusing())
    with pytest.raises(ArrayLibraryError, match=r"primitive 'sin' \(sin.__call__\).*fakelib"):
        tnp.sin(_Refusing())


def test_a_ufunc_method_dask_does_not_carry_names_the_method() -> None:
    x = _dask(np.arange(4.0))
    error = TypeError(
        "operand type(s) all returned NotImplemented from __array_ufunc__(<ufunc 'maximum'>, "
        "'reduce', dask.array<...>): 'Array'"
    )
    refusal = arrays.library_error("max", error, (x,))
    assert refusal is not None and "maximum.reduce" in str(refusal) and "dask" in str(refusal)
    assert arrays.library_error("max", TypeError("an unrelated TypeError"), (x,)) is None


# ---- the fallback filter lives only while a foreign array is in flight ---------------------


def _dask_fallback_filters() -> int:
    return sum(1 for f in warnings.filters if f[1] is not None and "Dask" in f[1].pattern)


def test_the_filter_is_gone_after_a_transform_and_after_an_error() -> None:
    x = _dask(np.arange(4.0).reshape(2, 2))
    before = _dask_fallback_filters()
    T.grad(lambda x: tnp.sum(tnp.sin(x)))(x)
    tnp.sin(x)
    assert _dask_fallback_filters() == before
    with pytest.raises(ArrayLibraryError):
        T.grad(tnp.linalg.det)(x)
    assert _dask_fallback_filters() == before
    with pytest.warns(FutureWarning, match="not implemented by Dask"):  # the user's own call
        np.linalg.det(da.eye(2))


def test_threads_share_the_filter_and_the_last_one_removes_it() -> None:
    x = _dask(np.arange(4.0))
    inside = threading.Event()
    leave = threading.Event()
    seen: list[int] = []

    def hold_in_a_transform() -> None:
        def f(x: Any) -> Any:
            inside.set()
            leave.wait(10)
            return tnp.sum(tnp.sin(x))

        T.grad(f)(x)

    thread = threading.Thread(target=hold_in_a_transform)
    thread.start()
    inside.wait(10)
    T.grad(lambda x: tnp.sum(x * x))(x)  # this thread's transform ends first
    seen.append(_dask_fallback_filters())  # the other thread still holds the filter
    leave.set()
    thread.join(10)
    seen.append(_dask_fallback_filters())
    assert seen == [1, 0]
