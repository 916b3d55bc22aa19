"""Nested transforms: every pairing of forward and reverse mode, checked against analytic values.

Covers perturbation confusion (Siskind & Pearlmutter), higher-order derivatives, mixed
partials, Hessians by every composition of the Jacobian transforms, Python control flow under
differentiation, derivatives of functions that themselves differentiate, and pullbacks that
are reused and differentiated.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from numpy.testing import assert_allclose

import transforms as T
import transforms.numpy as tnp
from transforms.core import concrete

RTOL = 1e-10
ATOL = 1e-12


def close(actual: Any, expected: Any, rtol: float = RTOL, atol: float = ATOL) -> None:
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert_allclose(actual, expected, rtol=rtol, atol=atol)


def jvp_derivative(f: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """d/dx f(x) for scalar x, by forward mode."""
    return lambda x: T.jvp(f, (x,), (tnp.ones_like(x),))[1]


# ---------------------------------------------------------------------------------------
# Perturbation confusion: d/dx [x * d/dy (x + y)] = 1 everywhere (confusion would give 2).
# ---------------------------------------------------------------------------------------
def _inner_grad(g: Callable[[Any], Any], y: Any) -> Any:
    return T.grad(g)(y)


def _inner_jvp(g: Callable[[Any], Any], y: Any) -> Any:
    return T.jvp(g, (y,), (1.0,))[1]


def _outer_grad(f: Callable[[Any], Any], x: float) -> Any:
    return T.grad(f)(x)


def _outer_jvp(f: Callable[[Any], Any], x: float) -> Any:
    return T.jvp(f, (x,), (1.0,))[1]


INNER = {"inner_grad": _inner_grad, "inner_jvp": _inner_jvp}
OUTER = {"outer_grad": _outer_grad, "outer_jvp": _outer_jvp}


@pytest.mark.parametrize("inner", sorted(INNER))
@pytest.mark.parametrize("outer", sorted(OUTER))
@pytest.mark.parametrize("x0", [-2.5, 0.0, 1.0, 3.7])
def test_perturbation_confusion_constant_point(outer: str, inner: str, x0: float) -> None:
    # y evaluated at a constant point (the classic formulation)
    def f(x: Any) -> Any:
        return x * INNER[inner](lambda y: x + y, 1.0)

    close(OUTER[outer](f, x0), 1.0)


@pytest.mark.parametrize("inner", sorted(INNER))
@pytest.mark.parametrize("outer", sorted(OUTER))
@pytest.mark.parametrize("x0", [-2.5, 0.5, 3.7])
def test_perturbation_confusion_point_depends_on_x(outer: str, inner: str, x0: float) -> None:
    # y evaluated at x itself: the inner derivative is still 1, so d/dx = 1
    def f(x: Any) -> Any:
        return x * INNER[inner](lambda y: x + y, x)

    close(OUTER[outer](f, x0), 1.0)


@pytest.mark.parametrize("inner", sorted(INNER))
@pytest.mark.parametrize("outer", sorted(OUTER))
@pytest.mark.parametrize("x0", [-1.5, 0.5, 2.0])
def test_perturbation_confusion_product(outer: str, inner: str, x0: float) -> None:
    # d/dy (x * y) = x, so d/dx [x * x] = 2x; confusing the perturbations gives another value
    def f(x: Any) -> Any:
        return x * INNER[inner](lambda y: x * y, 3.0)

    close(OUTER[outer](f, x0), 2 * x0)


# ---------------------------------------------------------------------------------------
# Higher order: grad applied k times to sin.
# ---------------------------------------------------------------------------------------
SIN_DERIVATIVES = [np.sin, np.cos, lambda x: -np.sin(x), lambda x: -np.cos(x)]


@pytest.mark.parametrize("order", range(1, 7))
@pytest.mark.parametrize("x0", [-2.0, 0.0, 0.3, 1.0, 4.5])
def test_repeated_grad_of_sin(order: int, x0: float) -> None:
    f: Callable[[Any], Any] = tnp.sin
    for _ in range(order):
        f = T.grad(f)
    close(f(x0), SIN_DERIVATIVES[order % 4](x0))


@pytest.mark.parametrize("x0", [-2.0, 0.3, 1.0])
def test_sixth_grad_of_sin_is_minus_sin(x0: float) -> None:
    f: Callable[[Any], Any] = tnp.sin
    for _ in range(6):
        f = T.grad(f)
    close(f(x0), -np.sin(x0))


@pytest.mark.parametrize("order", range(1, 6))
def test_repeated_forward_derivative_of_sin(order: int) -> None:
    f: Callable[[Any], Any] = tnp.sin
    for _ in range(order):
        f = jvp_derivative(f)
    x0 = 0.7
    close(f(x0), SIN_DERIVATIVES[order % 4](x0))


@pytest.mark.parametrize("order", range(1, 6))
def test_alternating_forward_and_reverse_derivatives_of_exp_sin(order: int) -> None:
    # f(x) = exp(2x): the k-th derivative is 2^k exp(2x), whichever modes are interleaved
    f: Callable[[Any], Any] = lambda x: tnp.exp(2.0 * x)
    for k in range(order):
        f = T.grad(f) if k % 2 == 0 else jvp_derivative(f)
    x0 = 0.4
    close(f(x0), 2.0**order * np.exp(2 * x0))


def test_fourth_derivative_of_polynomial_all_reverse() -> None:
    f: Callable[[Any], Any] = lambda x: 3 * x**5 - 2 * x**3 + x
    d4 = T.grad(T.grad(T.grad(T.grad(f))))
    x0 = 1.3
    close(d4(x0), 360.0 * x0)
    close(T.grad(d4)(x0), 360.0)
    close(T.grad(T.grad(d4))(x0), 0.0)


# ---------------------------------------------------------------------------------------
# Mixed partials of f(x, y) = sin(x) * y**3: d2f/dxdy = 3 cos(x) y^2.
# ---------------------------------------------------------------------------------------
def mixed_f(x: Any, y: Any) -> Any:
    return tnp.sin(x) * y**3


POINTS = [(0.3, 1.2), (-1.1, 2.0), (2.5, -0.7)]


@pytest.mark.parametrize(("x0", "y0"), POINTS)
def test_mixed_partial_grad_x_then_y(x0: float, y0: float) -> None:
    close(T.grad(T.grad(mixed_f, 0), 1)(x0, y0), 3 * np.cos(x0) * y0**2)


@pytest.mark.parametrize(("x0", "y0"), POINTS)
def test_mixed_partial_grad_y_then_x(x0: float, y0: float) -> None:
    close(T.grad(T.grad(mixed_f, 1), 0)(x0, y0), 3 * np.cos(x0) * y0**2)


@pytest.mark.parametrize(("x0", "y0"), POINTS)
def test_mixed_partial_jvp_over_jvp(x0: float, y0: float) -> None:
    def df_dx(x: Any, y: Any) -> Any:
        return T.jvp(lambda u: mixed_f(u, y), (x,), (1.0,))[1]

    d2 = T.jvp(lambda v: df_dx(x0, v), (y0,), (1.0,))[1]
    close(d2, 3 * np.cos(x0) * y0**2)

    # and the other order
    def df_dy(x: Any, y: Any) -> Any:
        return T.jvp(lambda v: mixed_f(x, v), (y,), (1.0,))[1]

    close(T.jvp(lambda u: df_dy(u, y0), (x0,), (1.0,))[1], 3 * np.cos(x0) * y0**2)


@pytest.mark.parametrize(("x0", "y0"), POINTS)
def test_mixed_partial_jvp_over_grad_and_grad_over_jvp(x0: float, y0: float) -> None:
    expected = 3 * np.cos(x0) * y0**2
    close(T.jvp(lambda v: T.grad(mixed_f, 0)(x0, v), (y0,), (1.0,))[1], expected)
    close(T.grad(lambda u: T.jvp(lambda v: mixed_f(u, v), (y0,), (1.0,))[1])(x0), expected)


@pytest.mark.parametrize(("x0", "y0"), POINTS)
def test_full_second_derivatives_of_mixed_f(x0: float, y0: float) -> None:
    fxx = -np.sin(x0) * y0**3
    fxy = 3 * np.cos(x0) * y0**2
    fyy = 6 * np.sin(x0) * y0
    close(T.grad(T.grad(mixed_f, 0), 0)(x0, y0), fxx)
    close(T.grad(T.grad(mixed_f, 1), 1)(x0, y0), fyy)
    h = T.hessian(mixed_f, argnums=(0, 1))(x0, y0)
    close(h[0][0], fxx)
    close(h[0][1], fxy)
    close(h[1][0], fxy)
    close(h[1][1], fyy)


# ---------------------------------------------------------------------------------------
# Hessians of g(x) = sum(tanh(A x)^2) + 0.5 |x|^2 by every composition.
# ---------------------------------------------------------------------------------------
RNG = np.random.default_rng(1234)
A = RNG.standard_normal((4, 3))
X0 = RNG.standard_normal(3)


def g(x: Any) -> Any:
    return tnp.sum(tnp.tanh(A @ x) ** 2) + 0.5 * tnp.sum(x**2)


def g_grad(x: np.ndarray) -> np.ndarray:
    t = np.tanh(A @ x)
    return A.T @ (2 * t * (1 - t**2)) + x


def g_hessian(x: np.ndarray) -> np.ndarray:
    t = np.tanh(A @ x)
    return A.T @ np.diag(2 * (1 - t**2) * (1 - 3 * t**2)) @ A + np.eye(len(x))


HESSIANS: dict[str, Callable[[Callable[[Any], Any]], Callable[[Any], Any]]] = {
    "jacfwd(jacfwd)": lambda f: T.jacfwd(T.jacfwd(f)),
    "jacfwd(jacrev)": lambda f: T.jacfwd(T.jacrev(f)),
    "jacrev(jacfwd)": lambda f: T.jacrev(T.jacfwd(f)),
    "jacrev(jacrev)": lambda f: T.jacrev(T.jacrev(f)),
    "jacfwd(grad)": lambda f: T.jacfwd(T.grad(f)),
    "jacrev(grad)": lambda f: T.jacrev(T.grad(f)),
    "hessian": T.hessian,
}


def test_gradient_of_g_is_analytic() -> None:
    close(T.grad(g)(X0), g_grad(X0))
    close(T.jacfwd(g)(X0), g_grad(X0))
    close(T.jacrev(g)(X0), g_grad(X0))


@pytest.mark.parametrize("how", sorted(HESSIANS))
def test_hessian_by_every_composition(how: str) -> None:
    h = HESSIANS[how](g)(X0)
    close(h, g_hessian(X0))
    close(h, np.asarray(h).T)  # symmetric


@pytest.mark.parametrize("how", sorted(HESSIANS))
def test_hessian_at_several_points(how: str) -> None:
    for x in (np.zeros(3), np.array([0.5, -1.0, 2.0]), RNG.standard_normal(3)):
        close(HESSIANS[how](g)(x), g_hessian(x))


@pytest.mark.parametrize("how", sorted(HESSIANS))
def test_hessian_of_matrix_input(how: str) -> None:
    # f(M) = sum(M^3) elementwise: Hessian is diag(6 M) in the (2,2,2,2) layout
    m = np.array([[0.5, -1.0], [2.0, 1.5]])
    h = HESSIANS[how](lambda w: tnp.sum(w**3))(m)
    expected = np.zeros((2, 2, 2, 2))
    for i in range(2):
        for j in range(2):
            expected[i, j, i, j] = 6 * m[i, j]
    close(h, expected)


# ---------------------------------------------------------------------------------------
# Python control flow under grad.
# ---------------------------------------------------------------------------------------
def square_until(x: Any, threshold: float = 100.0) -> Any:
    while x < threshold:
        x = x * x
    return x


@pytest.mark.parametrize(("x0", "k"), [(1.5, 4), (3.0, 3), (11.0, 1), (150.0, 0)])
def test_while_loop_repeated_squaring(x0: float, k: int) -> None:
    # k squarings: f(x) = x^(2^k), f'(x) = 2^k x^(2^k - 1)
    n = 2**k
    close(square_until(x0), x0**n)
    close(T.grad(square_until)(x0), n * x0 ** (n - 1))
    close(jvp_derivative(square_until)(x0), n * x0 ** (n - 1))
    close(T.grad(T.grad(square_until))(x0), n * (n - 1) * x0 ** (n - 2) if n > 1 else 0.0)


def newton_sqrt(a: Any) -> Any:
    x = a
    while abs(x * x - a) > 1e-13 * a:
        x = 0.5 * (x + a / x)
    return x


@pytest.mark.parametrize("a0", [2.0, 9.0, 0.3])
def test_while_loop_newton_iterations(a0: float) -> None:
    close(newton_sqrt(a0), np.sqrt(a0))
    # the derivative of the converged iterate is that of sqrt (Newton converges in derivative)
    close(T.grad(newton_sqrt)(a0), 0.5 / np.sqrt(a0), rtol=1e-8)
    close(jvp_derivative(newton_sqrt)(a0), 0.5 / np.sqrt(a0), rtol=1e-8)


def branchy(x: Any) -> Any:
    if x > 0:
        return x**3
    return tnp.sin(x)


@pytest.mark.parametrize("x0", [-2.0, -0.5, 0.5, 2.0])
def test_if_else_on_value(x0: float) -> None:
    if x0 > 0:
        d1, d2 = 3 * x0**2, 6 * x0
    else:
        d1, d2 = np.cos(x0), -np.sin(x0)
    close(T.grad(branchy)(x0), d1)
    close(jvp_derivative(branchy)(x0), d1)
    close(T.grad(T.grad(branchy))(x0), d2)
    close(jvp_derivative(T.grad(branchy))(x0), d2)


def test_if_on_array_element_and_any_all() -> None:
    def f(x: Any) -> Any:
        if x[0] > x[1]:
            return tnp.sum(x * x)
        return tnp.sum(x * x * x)

    close(T.grad(f)(np.array([2.0, 1.0])), [4.0, 2.0])
    close(T.grad(f)(np.array([1.0, 2.0])), [3.0, 12.0])


JACOBIAN_DERIVATIVES: dict[str, Callable[[Callable[[Any], Any]], Callable[[Any], Any]]] = {
    "jacfwd": T.jacfwd,
    "jacrev": T.jacrev,
}
SECOND_DERIVATIVES: dict[str, Callable[[Callable[[Any], Any]], Callable[[Any], Any]]] = {
    "hessian": T.hessian,
    "jacfwd(jacfwd)": lambda f: T.jacfwd(T.jacfwd(f)),
    "jacrev(jacrev)": lambda f: T.jacrev(T.jacrev(f)),
    "jacrev(jacfwd)": lambda f: T.jacrev(T.jacfwd(f)),
}


@pytest.mark.parametrize("how", sorted(JACOBIAN_DERIVATIVES))
def test_jacobians_through_control_flow(how: str) -> None:
    d = JACOBIAN_DERIVATIVES[how]
    close(d(square_until)(1.5), 16 * 1.5**15)
    close(d(newton_sqrt)(2.0), 0.5 / np.sqrt(2.0), rtol=1e-8)
    close(d(branchy)(-0.5), np.cos(-0.5))
    close(d(branchy)(0.5), 0.75)


@pytest.mark.parametrize("how", sorted(SECOND_DERIVATIVES))
def test_second_derivatives_through_control_flow(how: str) -> None:
    d2 = SECOND_DERIVATIVES[how]
    close(d2(square_until)(1.5), 16 * 15 * 1.5**14)
    close(d2(newton_sqrt)(2.0), -0.25 * 2.0**-1.5, rtol=1e-7)
    close(d2(branchy)(-0.5), -np.sin(-0.5))
    close(d2(branchy)(0.5), 3.0)


def per_element_branches(x: Any) -> Any:
    total: Any = 0.0
    for i in range(len(x)):
        if x[i] > 0:
            total = total + x[i] ** 2
        else:
            total = total + tnp.sin(x[i])
    return total


def test_control_flow_on_vector_elements() -> None:
    x = np.array([1.0, -0.5, 2.0])
    expected_grad = np.array([2.0, np.cos(-0.5), 4.0])
    close(T.grad(per_element_branches)(x), expected_grad)
    close(T.jacfwd(per_element_branches)(x), expected_grad)
    close(T.jacrev(per_element_branches)(x), expected_grad)
    expected_hessian = np.diag([2.0, -np.sin(-0.5), 2.0])
    for how in sorted(SECOND_DERIVATIVES):
        close(SECOND_DERIVATIVES[how](per_element_branches)(x), expected_hessian)


def rpow(x: Any, n: int) -> Any:
    return 1.0 if n == 0 else x * rpow(x, n - 1)


def horner(coeffs: list[float], x: Any) -> Any:
    if len(coeffs) == 1:
        return coeffs[0] + 0 * x
    return coeffs[0] + x * horner(coeffs[1:], x)


@pytest.mark.parametrize("n", [1, 2, 5, 9])
def test_recursive_power(n: int) -> None:
    x0 = 1.3
    close(T.grad(lambda x: rpow(x, n))(x0), n * x0 ** (n - 1))
    close(T.grad(T.grad(lambda x: rpow(x, n)))(x0), n * (n - 1) * x0 ** (n - 2))
    close(jvp_derivative(lambda x: rpow(x, n))(x0), n * x0 ** (n - 1))


def test_recursive_polynomial() -> None:
    coeffs = [1.0, -2.0, 0.5, 3.0, -1.0]  # 1 - 2x + 0.5x^2 + 3x^3 - x^4
    x0 = 0.8
    p = np.polynomial.Polynomial(coeffs)
    close(horner(coeffs, x0), p(x0))
    close(T.grad(lambda x: horner(coeffs, x))(x0), p.deriv(1)(x0))
    close(T.grad(T.grad(lambda x: horner(coeffs, x)))(x0), p.deriv(2)(x0))
    close(jvp_derivative(T.grad(T.grad(lambda x: horner(coeffs, x))))(x0), p.deriv(3)(x0))


def test_closures_over_constants_and_tracers() -> None:
    def make_scaled_sin(a: Any) -> Callable[[Any], Any]:
        return lambda x: a * tnp.sin(x)

    x0, a0 = 0.9, 2.5
    close(T.grad(make_scaled_sin(a0))(x0), a0 * np.cos(x0))

    # the closure captures a tracer of the outer transform: d/da [a cos(x0)] = cos(x0)
    def outer(a: Any) -> Any:
        return T.grad(make_scaled_sin(a))(x0)

    close(outer(a0), a0 * np.cos(x0))
    close(T.grad(outer)(a0), np.cos(x0))
    close(jvp_derivative(outer)(a0), np.cos(x0))


def test_closure_with_mutable_accumulator_inside_loop() -> None:
    # sum_{k=1..4} x^k built in a for loop through a closure-held list
    def f(x: Any) -> Any:
        terms: list[Any] = []

        def add_term(k: int) -> None:
            terms.append(x**k)

        for k in range(1, 5):
            add_term(k)
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        return total

    x0 = 1.5
    close(T.grad(f)(x0), 1 + 2 * x0 + 3 * x0**2 + 4 * x0**3)
    close(T.grad(T.grad(f))(x0), 2 + 6 * x0 + 12 * x0**2)


# ---------------------------------------------------------------------------------------
# Hessian-vector products.
# ---------------------------------------------------------------------------------------
V = np.array([0.3, -1.2, 0.7])


def test_hvp_forward_over_reverse() -> None:
    close(T.jvp(T.grad(g), (X0,), (V,))[1], g_hessian(X0) @ V)


def test_hvp_reverse_over_reverse() -> None:
    close(T.grad(lambda x: tnp.sum(T.grad(g)(x) * V))(X0), g_hessian(X0) @ V)


def test_hvp_reverse_over_forward() -> None:
    close(T.grad(lambda x: T.jvp(g, (x,), (V,))[1])(X0), g_hessian(X0) @ V)


def test_hvp_forward_over_forward_along_two_directions() -> None:
    w = np.array([1.0, 0.5, -2.0])

    def directional(x: Any) -> Any:
        return T.jvp(g, (x,), (V,))[1]

    close(T.jvp(directional, (X0,), (w,))[1], w @ g_hessian(X0) @ V)


# ---------------------------------------------------------------------------------------
# Derivatives of functions that take derivatives.
# ---------------------------------------------------------------------------------------
def test_grad_of_function_that_computes_grad_scalar() -> None:
    # F(x) = x * sin'(x) = x cos x, F'(x) = cos x - x sin x
    def F(x: Any) -> Any:
        return x * T.grad(tnp.sin)(x)

    x0 = 0.6
    close(T.grad(F)(x0), np.cos(x0) - x0 * np.sin(x0))
    close(jvp_derivative(F)(x0), np.cos(x0) - x0 * np.sin(x0))


def test_grad_of_squared_gradient_norm() -> None:
    # h(x) = |grad g(x)|^2, grad h = 2 H(x) grad g(x)
    def h(x: Any) -> Any:
        return tnp.sum(T.grad(g)(x) ** 2)

    expected = 2 * g_hessian(X0) @ g_grad(X0)
    close(T.grad(h)(X0), expected)
    close(T.jacfwd(h)(X0), expected)
    close(T.jacrev(h)(X0), expected)


def test_grad_of_value_and_grad_inside() -> None:
    # value_and_grad inside: F(x) = f(x) * f'(x) with f = exp(x^2/2)
    def F(x: Any) -> Any:
        value, slope = T.value_and_grad(lambda u: tnp.exp(u * u / 2))(x)
        return value * slope

    # F = x exp(x^2), F' = (1 + 2x^2) exp(x^2)
    x0 = 0.7
    close(F(x0), x0 * np.exp(x0**2))
    close(T.grad(F)(x0), (1 + 2 * x0**2) * np.exp(x0**2))


def test_newton_step_differentiated() -> None:
    # one Newton step for a root of f(y) = y^3 - a: y1 = y0 - f/f'; d y1 / d a = 1 / (3 y0^2)
    def step(a: Any) -> Any:
        f = lambda y: y**3 - a
        y0 = 2.0
        return y0 - f(y0) / T.grad(f)(y0)

    close(T.grad(step)(5.0), 1 / 12.0)
    close(jvp_derivative(step)(5.0), 1 / 12.0)


# ---------------------------------------------------------------------------------------
# Pullbacks: reused, called after vjp returned, and differentiated.
# ---------------------------------------------------------------------------------------
def tanh_map(x: Any) -> Any:
    return tnp.tanh(A @ x)


def tanh_map_jacobian(x: np.ndarray) -> np.ndarray:
    t = np.tanh(A @ x)
    return (1 - t**2)[:, None] * A


CT = np.array([0.5, -1.0, 2.0, 0.25])


def test_pullback_called_several_times() -> None:
    out, pullback = T.vjp(tanh_map, X0)
    close(out, np.tanh(A @ X0))
    jac = tanh_map_jacobian(X0)
    cts = [CT, np.ones(4), np.array([0.0, 0.0, 1.0, 0.0]), -2 * CT]
    results = [pullback(ct) for ct in cts]
    for ct, res in zip(cts, results, strict=True):
        assert isinstance(res, tuple)
        assert len(res) == 1
        close(res[0], jac.T @ ct)
    # calling again gives the same answer (no state consumed)
    close(pullback(CT)[0], results[0][0])
    # linearity
    close(pullback(CT + np.ones(4))[0], results[0][0] + results[1][0])


def test_pullback_outlives_vjp_and_other_transforms() -> None:
    _, pullback = T.vjp(tanh_map, X0)
    # run unrelated transforms in between: the pullback is unaffected
    close(T.grad(tnp.sin)(0.0), 1.0)
    close(T.hessian(g)(X0), g_hessian(X0))
    close(pullback(CT)[0], tanh_map_jacobian(X0).T @ CT)


def test_pullback_of_several_arguments() -> None:
    def f(x: Any, y: Any) -> Any:
        return x * tnp.sin(y)

    x0, y0 = np.array([1.0, 2.0]), np.array([0.5, -0.3])
    _, pullback = T.vjp(f, x0, y0)
    ct = np.array([2.0, -1.0])
    gx, gy = pullback(ct)
    close(gx, ct * np.sin(y0))
    close(gy, ct * x0 * np.cos(y0))


def test_grad_of_pullback_with_respect_to_cotangent() -> None:
    # <pullback(ct)[0], v> = <ct, J v>, so its gradient in ct is J v
    _, pullback = T.vjp(tanh_map, X0)
    jac = tanh_map_jacobian(X0)

    def pairing(ct: Any) -> Any:
        return tnp.sum(pullback(ct)[0] * V)

    close(T.grad(pairing)(CT), jac @ V)
    # the pullback is linear: second derivative vanishes
    close(T.jacfwd(T.grad(pairing))(CT), np.zeros((4, 4)))


def test_jvp_of_pullback_with_respect_to_cotangent() -> None:
    _, pullback = T.vjp(tanh_map, X0)
    dct = np.array([1.0, 0.0, -1.0, 0.5])
    out, tangent = T.jvp(lambda ct: pullback(ct)[0], (CT,), (dct,))
    jac = tanh_map_jacobian(X0)
    close(out, jac.T @ CT)
    close(tangent, jac.T @ dct)


def test_jacobian_of_pullback_is_transposed_jacobian() -> None:
    _, pullback = T.vjp(tanh_map, X0)
    jac = tanh_map_jacobian(X0)
    close(T.jacfwd(lambda ct: pullback(ct)[0])(CT), jac.T)
    close(T.jacrev(lambda ct: pullback(ct)[0])(CT), jac.T)


def pullback_in_x(x: Any) -> Any:
    """J(x)^T CT, with the vjp built inside: differentiable in x."""
    return T.vjp(tanh_map, x)[1](CT)[0]


def pullback_in_x_derivative(x: np.ndarray) -> np.ndarray:
    """d/dx [A^T ((1 - t^2) * CT)] = A^T diag(-2 t (1 - t^2) CT) A, t = tanh(A x)."""
    t = np.tanh(A @ x)
    return A.T @ np.diag(-2 * t * (1 - t**2) * CT) @ A


def test_jvp_through_pullback_over_x() -> None:
    out, tangent = T.jvp(pullback_in_x, (X0,), (V,))
    close(out, tanh_map_jacobian(X0).T @ CT)
    close(tangent, pullback_in_x_derivative(X0) @ V)


def test_grad_and_jacobians_through_pullback_over_x() -> None:
    m = pullback_in_x_derivative(X0)
    close(T.grad(lambda x: tnp.sum(pullback_in_x(x) * V))(X0), m.T @ V)
    close(T.jacfwd(pullback_in_x)(X0), m)
    close(T.jacrev(pullback_in_x)(X0), m)


def test_pullback_returned_from_outer_vjp_and_differentiated_again() -> None:
    # vjp of a function whose body itself calls a pullback of an inner vjp
    out, pullback = T.vjp(pullback_in_x, X0)
    close(out, tanh_map_jacobian(X0).T @ CT)
    close(pullback(V)[0], pullback_in_x_derivative(X0).T @ V)


# ---------------------------------------------------------------------------------------
# A reverse trace with another one open above it shares repeated applications (the makers
# above repeat its work): the shared entry must be exactly the repeated one, no other.
# ---------------------------------------------------------------------------------------
def _under_inner_grad(h: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """x -> h(x), with h run on the outer trace's tracer while two inner grads are open."""

    def middle(x: Any, y: Any) -> Any:
        return y * T.grad(lambda z: z * h(x))(tnp.ones_like(x))

    return lambda x: T.grad(lambda y: middle(x, y))(tnp.ones_like(x))


def test_a_reverse_trace_with_one_trace_above_records_every_application() -> None:
    indices: list[tuple[int, int]] = []

    def h(x: Any) -> Any:
        a, b = tnp.sin(x), tnp.sin(x)
        indices.append((a.index, b.index))
        return a + b

    close(T.grad(lambda x: T.grad(lambda y: y * h(x))(tnp.ones_like(x)))(0.3), 2 * np.cos(0.3))
    assert indices and indices[0][0] != indices[0][1]


def test_a_covered_reverse_trace_shares_a_repeated_application() -> None:
    indices: list[tuple[int, int]] = []

    def h(x: Any) -> Any:
        a, b = tnp.sin(x), tnp.sin(x)
        indices.append((a.index, b.index))  # the outer trace's tape positions
        return a + b

    close(T.grad(_under_inner_grad(h))(0.3), 2 * np.cos(0.3))
    assert indices and indices[0][0] == indices[0][1]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_covered_reverse_trace_shares_a_commutative_application_in_either_order(
    dtype: Any,
) -> None:
    indices: list[list[int]] = []

    def h(x: Any) -> Any:
        s, c = tnp.sin(x), tnp.cos(x)
        terms = [s * c, c * s, x + 2.0, 2.0 + x, x * 3, 3 * x, s - c, c - s, x / 2.0, 2.0 / x]
        indices.append([t.index for t in terms])
        return (
            3.0 * terms[0] + terms[1] + terms[2] * terms[3] + terms[4] - 2 * terms[5]
            + 5.0 * terms[6] + terms[7] + terms[8] + terms[9]
        )  # fmt: skip

    x0 = dtype(0.3)
    expected = (
        4 * np.cos(2 * 0.3) + 2 * (0.3 + 2.0) + 3 - 6
        + 4 * (np.cos(0.3) + np.sin(0.3)) + 0.5 - 2.0 / 0.3**2
    )  # fmt: skip
    got = T.grad(_under_inner_grad(h))(x0)
    assert got.dtype == dtype
    close(got, expected, rtol=RTOL if dtype == np.float64 else 1e-5)
    i = indices[0]
    assert i[0] == i[1] and i[2] == i[3] and i[4] == i[5]  # shared: the same entry
    assert i[6] != i[7] and i[8] != i[9]  # not commutative: two entries
    # and higher derivatives through the shared entries, against the closed form
    f = lambda x: tnp.sin(x) * tnp.cos(x) + tnp.cos(x) * tnp.sin(x)  # sin 2x
    for k, want in enumerate([2 * np.cos(0.6), -4 * np.sin(0.6), -8 * np.cos(0.6)], 1):
        g: Callable[[Any], Any] = f
        for _ in range(k):
            g = T.grad(g)
        close(g(x0), want, rtol=RTOL if dtype == np.float64 else 1e-5, atol=1e-6)


def _alike(x: Any) -> list[Any]:
    """Applications that differ only in a constant's type or sign, an operand's position."""
    return [
        x * 2, x * 2.0, 2 * x, x - 2, 2 - x, x / 3, 3 / x, x**3, 3.0**x, x**3.0,
        x * x, x * (x * 1.0), tnp.sin(x) * tnp.cos(x), tnp.cos(x) * tnp.sin(x),
    ]  # fmt: skip


def _alike_derivatives(x: float) -> list[float]:
    return [
        2, 2, 2, 1, -1, 1 / 3, -3 / x**2, 3 * x**2, np.log(3) * 3**x, 3 * x**2,
        2 * x, 2 * x, np.cos(2 * x), np.cos(2 * x),
    ]  # fmt: skip


@pytest.mark.parametrize("x0", [0.3, -1.7])
def test_shared_applications_keep_every_term_apart(x0: float) -> None:
    for i, expected in enumerate(_alike_derivatives(x0)):
        h: Callable[[Any], Any] = lambda x, i=i: sum(_alike(x)) + 10.0 * _alike(x)[i]
        close(T.grad(_under_inner_grad(h))(x0), sum(_alike_derivatives(x0)) + 10.0 * expected)


def test_shared_applications_keep_constant_types_and_signed_zeros() -> None:
    seen: dict[str, Any] = {}

    def h(x: Any) -> Any:
        terms = {
            "weak": x * 2.0,  # a Python float keeps float32
            "strong": x * np.float64(2.0),  # a NumPy float64 promotes
            "int": x * 2,
            "zero": x * 0.0,
            "negative zero": x * -0.0,
            "zero again": x * 0.0,
        }
        seen.update(terms)
        return sum(t.astype(np.float32) for t in terms.values())

    T.grad(_under_inner_grad(h))(np.float32(0.5))
    assert concrete(seen["weak"]).dtype == np.float32
    assert concrete(seen["strong"]).dtype == np.float64
    assert concrete(seen["int"]).dtype == np.float32
    assert not np.signbit(concrete(seen["zero"])) and not np.signbit(concrete(seen["zero again"]))
    assert np.signbit(concrete(seen["negative zero"]))


@pytest.mark.parametrize("op", ["+", "-", "*", "/", "**"])
def test_operators_between_tracers_of_one_trace_and_of_two(op: str) -> None:
    # x op y with both traced by the same grad (the operator's own fast path) and with y
    # traced one level down (bind's choice), in both orders: d/dx at x = 0.7, y = 1.3
    apply = {
        "+": lambda a, b: a + b,
        "-": lambda a, b: a - b,
        "*": lambda a, b: a * b,
        "/": lambda a, b: a / b,
        "**": lambda a, b: a**b,
    }[op]
    x0, y0 = 0.7, 1.3
    both = T.grad(lambda x: apply(x, tnp.sin(x)) + apply(tnp.exp(x), x))(x0)
    h = 1e-6
    fd = (
        apply(x0 + h, np.sin(x0 + h)) + apply(np.exp(x0 + h), x0 + h)
        - apply(x0 - h, np.sin(x0 - h)) - apply(np.exp(x0 - h), x0 - h)
    ) / (2 * h)  # fmt: skip
    close(both, fd, rtol=1e-7, atol=1e-9)
    two = T.grad(lambda y: T.grad(lambda x: apply(x, y) + apply(y, x))(x0))(y0)
    fd2 = (
        T.grad(lambda x: apply(x, y0 + h) + apply(y0 + h, x))(x0)
        - T.grad(lambda x: apply(x, y0 - h) + apply(y0 - h, x))(x0)
    ) / (2 * h)
    close(two, fd2, rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------------------------------
# Tracer operators with an ndarray operand (the tracer's own trace interprets them at once;
# a 0-d array, which may be grad's unit seed, takes the operator's path)
# ---------------------------------------------------------------------------------------
OP_A = np.array([0.5, -1.5, 2.0])
OP_B = np.array([1.5, 2.5, 0.75])
OP_X = np.array([0.7, 1.3, 0.4])


def _operators_with_arrays(x: Any) -> Any:
    seed_like = np.asarray(2.0)  # 0-d
    return tnp.sum(x * OP_A + (x - OP_A) * (x / OP_B) + x**OP_B + (x + OP_A) * seed_like)


def _operators_with_arrays_grad(x: Any) -> Any:
    return OP_A + (2 * x - OP_A) / OP_B + OP_B * x ** (OP_B - 1) + 2.0


def _operators_with_arrays_hessian(x: Any) -> Any:
    return np.diag(2 / OP_B + OP_B * (OP_B - 1) * x ** (OP_B - 2))


def test_tracer_operators_with_array_operands_in_every_mode() -> None:
    f, x = _operators_with_arrays, OP_X
    close(T.grad(f)(x), _operators_with_arrays_grad(x))
    close(T.jvp(f, (x,), (OP_B,))[1], _operators_with_arrays_grad(x) @ OP_B)
    hessians = (T.hessian(f), T.jacrev(T.jacfwd(f)), T.jacfwd(T.jacfwd(f)), T.jacrev(T.grad(f)))
    for hess in hessians:
        close(hess(x), _operators_with_arrays_hessian(x))
    xs = np.stack([OP_X, 1.5 * OP_X])
    close(T.vmap(T.grad(f))(xs), np.stack([_operators_with_arrays_grad(x) for x in xs]))
