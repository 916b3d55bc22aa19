"""Gradients of CuPy arrays stay on the device and equal NumPy's (issue 34).

Runs only where ``cupy`` imports and a GPU is present; skipped otherwise. CuPy forbids
mixing its arrays with NumPy's (no implicit host transfer), so a rule that made a NumPy
array beside a CuPy operand fails here: every result must be a CuPy array, and brought to
the host it must equal the gradient NumPy computes, to rounding.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import transforms as T
import transforms.numpy as tnp

cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
try:
    _DEVICES = int(cupy.cuda.runtime.getDeviceCount())
except Exception:  # no driver, no device
    _DEVICES = 0
pytestmark = pytest.mark.skipif(_DEVICES == 0, reason="no GPU: CuPy cannot allocate")

rng = np.random.default_rng(34)
A, B = rng.normal(size=(6, 4)), rng.normal(size=(4, 3))
x, y = rng.normal(size=(6,)), rng.uniform(0.5, 2.0, size=(6,))

CASES: dict[str, tuple[Callable[..., Any], tuple[np.ndarray, ...]]] = {
    "elementwise": (lambda x, y: tnp.sum(tnp.sin(x) * tnp.exp(-x) / y + tnp.log(y) ** 2), (x, y)),
    "tanh_square": (lambda x: tnp.sum(tnp.tanh(x) ** 2), (x,)),
    "max_mean": (lambda a: tnp.max(a, axis=0) @ tnp.mean(a**2, axis=1)[:4], (A,)),
    "logsumexp": (lambda a: tnp.sum(tnp.log(tnp.sum(tnp.exp(a), axis=1))), (A,)),
    "matmul": (lambda a, b: tnp.sum(tnp.tanh(a @ b)), (A, B)),
    "dot_vector": (lambda a, v: tnp.sum((a @ v[:4]) ** 2), (A, x)),
}


@pytest.mark.parametrize("name", CASES)
def test_grad_of_cupy_arrays_stays_on_device_and_equals_numpy(name: str) -> None:
    f, args = CASES[name]
    argnums = tuple(range(len(args)))
    expected = T.grad(f, argnums=argnums)(*args)
    got = T.grad(f, argnums=argnums)(*(cupy.asarray(a) for a in args))
    for g, e in zip(got, expected, strict=True):
        assert isinstance(g, cupy.ndarray), f"{name}: a {type(g).__name__}, not a CuPy array"
        np.testing.assert_allclose(cupy.asnumpy(g), e, rtol=1e-10, atol=1e-12)


def test_value_and_grad_of_a_loss_over_cupy_data_with_numpy_parameters() -> None:
    """Parameters NumPy, data on the device: the value and the gradient stay on the device."""

    def loss(w: Any, X: Any, y: Any) -> Any:
        z = X @ w
        return tnp.sum(tnp.logaddexp(0.0, z) - y * z)

    w, X, labels = rng.normal(size=4), rng.normal(size=(50, 4)), rng.integers(0, 2, 50) * 1.0
    value, grad = T.value_and_grad(loss)(w, cupy.asarray(X), cupy.asarray(labels))
    assert isinstance(grad, cupy.ndarray)
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    np.testing.assert_allclose(cupy.asnumpy(grad), X.T @ (p - labels), rtol=1e-10)
    np.testing.assert_allclose(float(value), float(loss(w, X, labels)), rtol=1e-12)
