"""``transforms.scipy.integrate.odeint`` by value: against ``scipy.integrate.odeint`` and
closed forms (the linear ODE ``y' = A y``, whose solution is ``expm(t A) y0``, and
exponential decay), derivatives in ``y0``, the times and the arguments in every mode, second
order, ``vmap``, and its errors. The op-spec rows check finite differences and duality."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.integrate as si
import scipy.linalg as sl

import transforms as T
import transforms.numpy as tnp
from transforms.scipy.integrate import odeint

A = np.array([[-0.5, 1.0], [-1.0, -0.3]])
Y0 = np.array([1.0, 0.5])
TIMES = np.linspace(0.0, 2.0, 5)
TIGHT = {"rtol": 1e-11, "atol": 1e-11}


def linear(y: Any, t: Any, a: Any) -> Any:
    return a @ y


def test_values_are_scipys() -> None:
    def f(y: Any, t: Any, k: Any) -> Any:
        return -k * y + tnp.sin(t)

    expected = si.odeint(f, Y0, TIMES, args=(0.7,))
    np.testing.assert_array_equal(odeint(f, Y0, TIMES, 0.7), expected)
    np.testing.assert_array_equal(odeint(f, Y0, TIMES, args=(0.7,)), expected)
    traced = T.jvp(lambda y0: odeint(f, y0, TIMES, 0.7), (Y0,), (Y0,))[0]
    np.testing.assert_array_equal(traced, expected)
    tight = si.odeint(f, Y0, TIMES, args=(0.7,), rtol=1e-11, atol=1e-11, mxstep=1000)
    np.testing.assert_array_equal(odeint(f, Y0, TIMES, 0.7, mxstep=1000, **TIGHT), tight)


def test_state_of_any_shape() -> None:
    y0 = np.arange(6.0).reshape(2, 3)
    out = odeint(lambda y, t: -y, y0, TIMES)
    assert out.shape == (5, 2, 3)
    np.testing.assert_allclose(out, np.exp(-TIMES)[:, None, None] * y0, rtol=1e-6)


def test_linear_ode_derivatives_closed_forms() -> None:
    """y(T) = expm(T A) y0: d|y(T)|^2/dy0 = 2 E^T y(T); d/dA through expm's Fréchet
    derivative; d/dT = f(y(T)); d/dt0 = -E f(y0) summed."""

    def loss(y0: Any, a: Any) -> Any:
        return tnp.sum(odeint(linear, y0, TIMES, a, **TIGHT)[-1] ** 2)

    e = sl.expm(2.0 * A)
    y_end = e @ Y0
    g_y0, g_a = T.grad(loss, argnums=(0, 1))(Y0, A)
    np.testing.assert_allclose(g_y0, 2 * e.T @ y_end, rtol=1e-8)
    expected_a = np.zeros((2, 2))
    for i in range(2):
        for j in range(2):
            direction = np.zeros((2, 2))
            direction[i, j] = 1.0
            frechet = sl.expm_frechet(2.0 * A, 2.0 * direction, compute_expm=False)
            expected_a[i, j] = 2 * y_end @ (frechet @ Y0)
    np.testing.assert_allclose(g_a, expected_a, rtol=1e-8)
    _, tangent = T.jvp(lambda a: odeint(linear, Y0, TIMES, a, **TIGHT), (A,), (np.ones((2, 2)),))
    expected = sl.expm_frechet(2.0 * A, 2.0 * np.ones((2, 2)), compute_expm=False) @ Y0
    np.testing.assert_allclose(tangent[-1], expected, rtol=1e-8)
    g_t = T.grad(lambda t: tnp.sum(odeint(linear, Y0, t, A, **TIGHT)[-1]))(TIMES)
    np.testing.assert_allclose(g_t, [-np.sum(e @ A @ Y0), 0, 0, 0, np.sum(A @ y_end)], atol=1e-9)
    # an autonomous system: shifting every time leaves the solution unchanged
    _, shift = T.jvp(lambda t: odeint(linear, Y0, t, A, **TIGHT), (TIMES,), (np.ones(5),))
    np.testing.assert_allclose(shift, 0.0, atol=1e-9)


def test_jacobians_agree_between_modes() -> None:
    def f(y0: Any, a: Any) -> Any:
        return odeint(linear, y0, TIMES, a, **TIGHT)

    for argnums in (0, 1):
        fwd = T.jacfwd(f, argnums=argnums)(Y0, A)
        rev = T.jacrev(f, argnums=argnums)(Y0, A)
        np.testing.assert_allclose(fwd, rev, rtol=1e-7, atol=1e-10)


def test_second_order_closed_form() -> None:
    """y' = -a y^2, y(0) = 1: y(1) = 1 / (1 + a), d2/da2 = 2 / (1 + a)^3."""

    def end(a: Any) -> Any:
        return odeint(lambda y, t, a: -a * y**2, 1.0, np.array([0.0, 1.0]), a, **TIGHT)[-1]

    np.testing.assert_allclose(end(0.5), 1 / 1.5, rtol=1e-9)
    np.testing.assert_allclose(T.grad(end)(0.5), -1 / 1.5**2, rtol=1e-8)
    np.testing.assert_allclose(T.hessian(end)(0.5), 2 / 1.5**3, rtol=1e-7)
    np.testing.assert_allclose(T.grad(T.grad(end))(0.5), 2 / 1.5**3, rtol=1e-7)
    np.testing.assert_allclose(T.jacfwd(T.jacrev(end))(np.array(0.5)), 2 / 1.5**3, rtol=1e-7)


def test_exponential_decay_in_the_rate_and_times() -> None:
    """y = y0 exp(-k t): d/dk = -t y, d/dt = -k y."""
    k, t = 0.8, np.array([0.0, 0.5, 1.5])

    def f(k: Any, t: Any) -> Any:
        return odeint(lambda y, s, k: -k * y, 2.0, t, k, **TIGHT)

    jk = T.jacrev(f, argnums=0)(k, t)
    np.testing.assert_allclose(jk, -t * 2.0 * np.exp(-k * t), rtol=1e-8, atol=1e-12)
    jt = T.jacfwd(f, argnums=1)(k, t)
    exact = np.diag(-k * 2.0 * np.exp(-k * t))
    exact[:, 0] += k * 2.0 * np.exp(-k * t)  # moving t0 shifts the whole solution
    exact[0, 0] = 0.0  # y(t0) = y0 whatever t0
    np.testing.assert_allclose(jt, exact, atol=1e-8)


def test_vmap_equals_the_loop() -> None:
    y0s = np.stack([Y0, 2 * Y0, -Y0])
    batched = T.vmap(lambda y0: odeint(linear, y0, TIMES, A))(y0s)
    np.testing.assert_array_equal(
        batched, np.stack([si.odeint(lambda y, t: A @ y, y, TIMES) for y in y0s])
    )
    scales = np.array([0.5, 1.0, 2.0])
    grads = T.vmap(T.grad(lambda s: tnp.sum(odeint(linear, Y0, TIMES, s * A, **TIGHT)[-1])))(scales)
    for s, g in zip(scales, grads, strict=True):
        expected = np.sum(A @ sl.expm(2.0 * s * A) @ Y0) * 2.0
        np.testing.assert_allclose(g, expected, rtol=1e-7)


def test_errors() -> None:
    with pytest.raises(TypeError, match="odeint: give func's extra arguments either"):
        odeint(linear, Y0, TIMES, A, args=(A,))
    with pytest.raises(ValueError, match="t must be a non-empty 1-d array"):
        odeint(linear, Y0, np.array(1.0), A)
    with pytest.raises(TypeError, match="y0 is complex"):
        odeint(linear, Y0 + 1j, TIMES, A)


def test_pytree_arguments() -> None:
    """A dict of parameters, as a network's: gradients come back as a dict."""
    params = {"w": np.array([[0.1, 0.2], [0.3, -0.4]]), "b": np.array([0.1, 0.0])}

    def loss(p: Any) -> Any:
        def f(y: Any, t: Any, p: Any) -> Any:
            return tnp.tanh(p["w"] @ y + p["b"])

        return tnp.sum(odeint(f, Y0, TIMES, p, **TIGHT) ** 2)

    grads = T.grad(loss)(params)
    assert set(grads) == {"w", "b"}
    direction = {"w": np.ones((2, 2)), "b": np.array([1.0, -1.0])}
    h = 1e-5
    plus = loss({k: params[k] + h * direction[k] for k in params})
    minus = loss({k: params[k] - h * direction[k] for k in params})
    exact = sum(float(np.sum(grads[k] * direction[k])) for k in params)
    np.testing.assert_allclose(exact, (plus - minus) / (2 * h), rtol=1e-6)
    np.testing.assert_allclose(T.jvp(loss, (params,), (direction,))[1], exact, rtol=1e-7)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_and_derivatives_keep_y0s_dtype(dtype: type) -> None:
    """Issue 31: a float32 y0 gave float64 values (its derivatives were float32 already)."""

    def f(y: Any, t: Any, k: Any) -> Any:
        return -k * y

    y0 = Y0.astype(dtype)
    k = dtype(0.7)
    values = odeint(f, y0, TIMES, k)
    assert values.dtype == dtype
    np.testing.assert_allclose(values, si.odeint(f, Y0, TIMES, args=(0.7,)).astype(dtype))
    traced, tangent = T.jvp(lambda y: odeint(f, y, TIMES, k), (y0,), (y0,))
    assert traced.dtype == tangent.dtype == dtype
    grads = T.grad(lambda y, k: tnp.sum(odeint(f, y, TIMES, k)), argnums=(0, 1))(y0, k)
    assert [g.dtype for g in grads] == [dtype, dtype]
    exact = np.exp(-0.7 * TIMES)  # y(t) = y0 exp(-k t)
    np.testing.assert_allclose(grads[0], np.full(2, exact.sum()), rtol=1e-4)
    np.testing.assert_allclose(grads[1], -np.sum(TIMES * exact) * Y0.sum(), rtol=1e-4)
