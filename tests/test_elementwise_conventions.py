"""Conventions of the elementwise family, checked by value.

- complex numbers follow JAX: a VJP is the transpose of the JVP under ``Re(sum(a * b))``;
- kinks and jumps: ``|x|`` has derivative 0 at 0 (complex too); piecewise-constant functions
  have derivative 0 (not an error); ``clip`` passes the derivative inside its interval, to the
  selected bound outside, and half-and-half at a bound (JAX's values: clip is
  ``minimum(maximum(a, lo), hi)`` with shared ties); ``fmax``/``fmin`` give it to the non-NaN
  operand and share ties like ``maximum``/``minimum`` (JAX gives a tie to the second operand);
- ``sinc`` is exact at 0 at every order; dtypes are kept; every function batches under
  ``vmap`` like a loop over the batch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import transforms as T
import transforms.numpy as tnp

RNG = np.random.default_rng(0)


def _complex(shape: tuple[int, ...], rng: np.random.Generator = RNG) -> np.ndarray:
    return rng.uniform(0.5, 1.5, shape) + 1j * rng.choice([-1, 1], shape) * rng.uniform(
        0.5, 1.5, shape
    )


# ---- complex: JAX's convention ----------------------------------------------------------------
def test_grad_of_squared_modulus_is_jax_convention() -> None:
    g = T.grad(lambda z: tnp.abs(z) ** 2)(np.array(3 + 4j))
    np.testing.assert_allclose(g, 6 - 8j, rtol=1e-14)


def test_grad_of_real_imag_conj() -> None:
    z = np.array(0.3 - 1.2j)
    np.testing.assert_allclose(T.grad(tnp.real)(z), 1 + 0j)
    np.testing.assert_allclose(T.grad(tnp.imag)(z), -1j)
    np.testing.assert_allclose(T.grad(lambda z: tnp.imag(tnp.conj(z)))(z), 1j)
    np.testing.assert_allclose(T.grad(lambda z: tnp.real(tnp.conjugate(z) * 2j))(z), -2j)


def test_holomorphic_grad_is_the_complex_derivative() -> None:
    z = np.array(0.7 + 0.4j)
    np.testing.assert_allclose(T.grad(tnp.sinh, holomorphic=True)(z), np.cosh(z), rtol=1e-14)
    np.testing.assert_allclose(
        T.grad(tnp.arcsin, holomorphic=True)(z), 1 / np.sqrt(1 - z * z), rtol=1e-14
    )
    np.testing.assert_allclose(
        T.grad(tnp.arccosh, holomorphic=True)(z), 1 / np.sqrt(z * z - 1), rtol=1e-14
    )


COMPLEX_FUNCTIONS: dict[str, Callable[[Any], Any]] = {
    name: getattr(tnp, name)
    for name in (
        "sin cos tan exp log tanh sqrt square sinh cosh exp2 expm1 log2 log10 log1p reciprocal "
        "arcsin arccos arctan arcsinh arccosh arctanh sinc conj conjugate real imag abs angle "
        "nan_to_num positive"
    ).split()
}
COMPLEX_FUNCTIONS["angle_deg"] = lambda z: tnp.angle(z, deg=True)
COMPLEX_FUNCTIONS["real_if_close"] = tnp.real_if_close


@pytest.mark.parametrize("name", sorted(COMPLEX_FUNCTIONS))
def test_complex_jvp_matches_finite_differences_and_vjp_is_its_bilinear_transpose(
    name: str,
) -> None:
    f = COMPLEX_FUNCTIONS[name]
    z, t = _complex((2, 3)), _complex((2, 3)) - 1.0
    out, t_out = T.jvp(f, (z,), (t,))
    eps = 1e-6
    numeric = (np.asarray(f(z + eps * t)) - np.asarray(f(z - eps * t))) / (2 * eps)
    np.testing.assert_allclose(t_out, numeric, rtol=1e-6, atol=1e-8)
    assert np.asarray(t_out).dtype == np.asarray(out).dtype

    out, pullback = T.vjp(f, z)
    w = _complex((2, 3)) if np.iscomplexobj(out) else RNG.uniform(-1, 1, (2, 3))
    (ct,) = pullback(w)
    assert ct.dtype == z.dtype
    lhs, rhs = np.sum(w * t_out).real, np.sum(ct * t).real
    assert abs(lhs - rhs) <= 1e-12 * max(1.0, abs(lhs)), (lhs, rhs)


def test_abs_has_derivative_zero_at_zero_real_and_complex() -> None:
    x = np.array([0.0, -2.0, 3.0])
    np.testing.assert_array_equal(T.grad(lambda x: tnp.sum(tnp.abs(x)))(x), [0.0, -1.0, 1.0])
    z = np.array([0j, 3 + 4j])
    np.testing.assert_allclose(T.grad(lambda z: tnp.sum(tnp.abs(z)))(z), [0, 0.6 - 0.8j])
    _, t = T.jvp(tnp.abs, (z,), (np.array([1 + 1j, 1j]),))
    np.testing.assert_allclose(t, [0.0, 0.8])  # Re(conj(z) t) / |z|


def test_real_operand_of_a_complex_result_gets_a_real_cotangent() -> None:
    x = np.array([1.0, -2.0])
    g = T.grad(lambda x: tnp.sum(tnp.abs(x * (1 + 1j))))(x)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, np.sqrt(2) * np.sign(x))
    # and the tangent of a complex result is complex
    _, t = T.jvp(lambda x: x + 1j, (x,), (np.ones(2),))
    assert np.asarray(t).dtype == np.complex128


def test_mixed_precision_operands_get_cotangents_of_their_own_dtype() -> None:
    x = np.array([1.0, 2.0], np.float32)
    y = np.array([0.5, 3.0])
    gx, gy = T.grad(lambda x, y: tnp.sum(tnp.hypot(x, y) + x * y), argnums=(0, 1))(x, y)
    assert gx.dtype == np.float32 and gy.dtype == np.float64
    _, t = T.jvp(lambda x: x + y, (x,), (np.ones(2, np.float32),))
    assert np.asarray(t).dtype == np.float64


# ---- sinc at 0 ----------------------------------------------------------------------------------
def test_sinc_is_exact_at_zero_at_every_order() -> None:
    derivatives = [1.0, 0.0, -(np.pi**2) / 3, 0.0, np.pi**4 / 5]
    f: Callable[[Any], Any] = tnp.sinc
    for k, expected in enumerate(derivatives):
        np.testing.assert_allclose(f(0.0), expected, rtol=1e-14, atol=1e-14, err_msg=str(k))
        f = T.grad(f)
    x = np.array([0.0, 1e-9, 0.0795, 0.0797, 0.5, -2.5, 1.0])
    np.testing.assert_allclose(tnp.sinc(x), np.sinc(x), rtol=1e-15)
    d2 = T.vmap(T.grad(T.grad(tnp.sinc)))(x)
    y = np.pi * x[3:]  # away from 0: the closed form
    closed = np.pi**2 * ((2 - y * y) * np.sin(y) - 2 * y * np.cos(y)) / y**3
    np.testing.assert_allclose(d2[3:], closed, rtol=1e-12)
    np.testing.assert_allclose(d2[:2], -(np.pi**2) / 3, rtol=1e-14)


# ---- piecewise constant ------------------------------------------------------------------------
STEPS = ["floor", "ceil", "trunc", "rint", "fix", "round", "around", "sign"]


@pytest.mark.parametrize("name", STEPS)
def test_piecewise_constant_functions_have_derivative_zero(name: str) -> None:
    f = getattr(tnp, name)
    x = np.array([-1.5, -0.5, 0.0, 0.5, 1.0, 2.7])
    np.testing.assert_array_equal(f(x), getattr(np, name)(x))
    out, t = T.jvp(f, (x,), (np.ones(6),))
    np.testing.assert_array_equal(out, getattr(np, name)(x))
    assert not np.any(t)
    np.testing.assert_array_equal(T.grad(lambda x: tnp.sum(x * f(x)))(x), getattr(np, name)(x))


def test_round_decimals() -> None:
    x = np.array([1.2345, -2.5551, 17.0])
    for decimals in (-1, 0, 2):
        np.testing.assert_array_equal(tnp.round(x, decimals), np.round(x, decimals))
        grad = T.grad(lambda x, d=decimals: tnp.sum(tnp.round(x, d)))(x)
        np.testing.assert_array_equal(grad, 0.0)


def test_heaviside_derivative_flows_to_x2_only_where_x1_is_zero() -> None:
    x1, x2 = np.array([-1.0, 0.0, 2.0, 0.0]), np.array([0.3, 0.5, 0.7, 0.9])
    g1, g2 = T.grad(lambda a, b: tnp.sum(tnp.heaviside(a, b)), argnums=(0, 1))(x1, x2)
    np.testing.assert_array_equal(g1, 0.0)
    np.testing.assert_array_equal(g2, [0.0, 1.0, 0.0, 1.0])
    # broadcast: a scalar x2 collects the derivative of every zero of x1
    np.testing.assert_array_equal(T.grad(lambda b: tnp.sum(tnp.heaviside(x1, b)))(0.5), 2.0)


def test_angle_of_real_values_is_numpy_and_constant() -> None:
    x = np.array([-2.0, -0.0, 0.0, 3.0], np.float32)
    for deg in (False, True):
        np.testing.assert_array_equal(tnp.angle(x, deg), np.angle(x, deg))
        out, t = T.jvp(lambda x, d=deg: tnp.angle(x, d), (x,), (np.ones(4, np.float32),))
        assert out.dtype == np.float32 and not np.any(t)


# ---- clip --------------------------------------------------------------------------------------
def test_clip_derivative_inside_to_selected_bound_outside_and_shared_at_a_bound() -> None:
    a = np.array([-2.0, 0.0, 0.5, 1.0, 3.0])
    lo, hi = np.zeros(5), np.ones(5)
    total = T.grad(lambda a, lo, hi: tnp.sum(tnp.clip(a, lo, hi)), argnums=(0, 1, 2))
    ga, glo, ghi = total(a, lo, hi)
    np.testing.assert_array_equal(ga, [0, 0.5, 1, 0.5, 0])  # JAX 0.10 gives the same
    np.testing.assert_array_equal(glo, [1, 0.5, 0, 0, 0])
    np.testing.assert_array_equal(ghi, [0, 0, 0, 0.5, 1])
    _, t = T.jvp(lambda a: tnp.clip(a, lo, hi), (a,), (np.ones(5),))
    np.testing.assert_array_equal(t, [0, 0.5, 1, 0.5, 0])
    # clip is minimum(maximum(a, lo), hi) in its derivatives too, a == lo == hi included
    g = T.grad(lambda a, lo, hi: tnp.clip(a, lo, hi), argnums=(0, 1, 2))(1.0, 1.0, 1.0)
    np.testing.assert_array_equal(g, [0.25, 0.25, 0.5])
    # a scalar bound collects its derivative over the broadcast: 1 (from 3.0) + 1/2 (from 1.0)
    np.testing.assert_array_equal(T.grad(lambda h: tnp.sum(tnp.clip(a, 0.0, h)))(1.0), 1.5)


def test_clip_values_match_numpy() -> None:
    a = np.linspace(-2, 2, 9).astype(np.float32)
    for lo, hi in ((-1.0, 1.0), (None, 0.5), (-0.5, None), (1.0, -1.0), (np.zeros((2, 1)), 1.0)):
        expected = np.clip(a, lo, hi)
        out = T.jvp(lambda a, lo=lo, hi=hi: tnp.clip(a, lo, hi), (a,), (np.ones_like(a),))[0]
        np.testing.assert_array_equal(out, expected)
        assert out.dtype == expected.dtype
    np.testing.assert_array_equal(tnp.clip(a, min=-1.0, max=1.0), np.clip(a, -1.0, 1.0))
    with pytest.raises(TypeError, match="once"):
        tnp.clip(a, -1.0, min=-1.0)


# ---- nan_to_num, fmax/fmin, mod/fmod, copysign, float_power ------------------------------------
def test_nan_to_num_derivative_is_one_where_finite() -> None:
    x = np.array([1.5, np.nan, np.inf, -np.inf, -2.0])
    out, t = T.jvp(tnp.nan_to_num, (x,), (np.ones(5),))
    np.testing.assert_array_equal(out, np.nan_to_num(x))
    np.testing.assert_array_equal(t, [1, 0, 0, 0, 1])
    g = T.grad(lambda x: tnp.sum(tnp.nan_to_num(x, nan=2.0, posinf=5.0)))(x)
    np.testing.assert_array_equal(g, [1, 0, 0, 0, 1])
    z = np.array([complex(1, np.inf), complex(np.nan, 2)])
    out, t = T.jvp(tnp.nan_to_num, (z,), (np.array([1 + 1j, 1 + 1j]),))
    np.testing.assert_array_equal(out, np.nan_to_num(z))
    np.testing.assert_array_equal(t, [1, 1j])


def test_fmax_fmin_give_the_derivative_to_the_number_not_the_nan() -> None:
    x = np.array([1.0, np.nan, 1.0, 3.0, np.nan])
    y = np.array([np.nan, 2.0, 1.0, 2.0, np.nan])
    for f in (tnp.fmax, tnp.fmin):
        gx, gy = T.grad(lambda x, y, f=f: tnp.sum(f(x, y)), argnums=(0, 1))(x, y)
        big = f is tnp.fmax
        np.testing.assert_array_equal(gx, [1, 0, 0.5, 1 if big else 0, 0])
        np.testing.assert_array_equal(gy, [0, 1, 0.5, 0 if big else 1, 0])
        # a tie is shared in forward mode too, like maximum/minimum (JAX: all to y)
        _, t = T.jvp(f, (np.array(1.0), np.array(1.0)), (np.array(1.0), np.array(0.0)))
        np.testing.assert_array_equal(t, 0.5)


def test_mod_and_fmod_derivatives_in_the_divisor() -> None:
    x, y = np.array([5.5, -5.5, 5.5]), np.array([2.0, 2.0, -2.0])
    for f, quotient in ((tnp.mod, np.floor), (tnp.remainder, np.floor), (tnp.fmod, np.trunc)):
        np.testing.assert_array_equal(f(x, y), getattr(np, f.__name__)(x, y))
        gx, gy = T.grad(lambda x, y, f=f: tnp.sum(f(x, y)), argnums=(0, 1))(x, y)
        np.testing.assert_array_equal(gx, 1.0)
        np.testing.assert_array_equal(gy, -quotient(x / y))


def test_copysign_is_sign_aware_in_x1_and_constant_in_x2() -> None:
    x1, x2 = np.array([2.0, -2.0, 2.0, 0.0]), np.array([1.0, 1.0, -0.0, -1.0])
    g1, g2 = T.grad(lambda a, b: tnp.sum(tnp.copysign(a, b)), argnums=(0, 1))(x1, x2)
    np.testing.assert_array_equal(g1, [1, -1, -1, 0])
    np.testing.assert_array_equal(g2, 0.0)


def test_float_power_computes_in_float64() -> None:
    x = np.array([1.5, 2.0], np.float32)
    out = tnp.float_power(x, 2)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, np.float_power(x, 2))
    g = T.grad(lambda x: tnp.sum(tnp.float_power(x, 3)))(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, 3 * x.astype(np.float64) ** 2)
    np.testing.assert_array_equal(tnp.float_power(2, 3), np.float_power(2, 3))


# ---- dtypes and vmap ---------------------------------------------------------------------------
UNARY: dict[str, Callable[[Any], Any]] = {
    name: getattr(tnp, name)
    for name in (
        "sinh cosh arcsin arccos arctan arcsinh arctanh cbrt deg2rad degrees rad2deg radians "
        "exp2 expm1 log2 log10 log1p fabs reciprocal sinc positive real imag conj conjugate "
        "abs absolute angle nan_to_num real_if_close floor ceil round around trunc rint fix"
    ).split()
}
UNARY["arccosh"] = lambda x: tnp.arccosh(x + 2)
UNARY["log2"] = lambda x: tnp.log2(x + 1)
UNARY["log10"] = lambda x: tnp.log10(x + 1)
UNARY["clip"] = lambda x: tnp.clip(x, -0.3, 0.4)
BINARY: dict[str, Callable[[Any, Any], Any]] = {
    name: getattr(tnp, name)
    for name in (
        "float_power arctan2 hypot logaddexp logaddexp2 fmax fmin mod remainder fmod copysign "
        "heaviside"
    ).split()
}
BINARY["float_power"] = lambda x, y: tnp.float_power(tnp.abs(x) + 0.5, y)
BINARY["clip"] = lambda x, y: tnp.clip(x, y - 0.5, y + 0.5)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_keeps_float32(name: str) -> None:
    x = np.array([0.3, -0.6, 0.8], np.float32)
    out, t = T.jvp(UNARY[name], (x,), (np.ones(3, np.float32),))
    assert out.dtype == np.float32 and np.asarray(t).dtype == np.float32
    g = T.grad(lambda x: tnp.sum(UNARY[name](x)))(x)
    assert g.dtype == np.float32


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_vmap_is_a_loop(name: str) -> None:
    f = UNARY[name]
    xs = RNG.uniform(-0.9, 0.9, (4, 3))
    expected = np.stack([f(x) for x in xs])
    np.testing.assert_allclose(T.vmap(f)(xs), expected, rtol=1e-15)
    np.testing.assert_allclose(T.vmap(f, in_axes=1, out_axes=1)(xs.T), expected.T, rtol=1e-15)
    grads = T.vmap(T.grad(lambda x: tnp.sum(f(x) * x)))(xs)
    expected_grads = np.stack([T.grad(lambda x: tnp.sum(f(x) * x))(x) for x in xs])
    np.testing.assert_allclose(grads, expected_grads, rtol=1e-14)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_vmap_is_a_loop(name: str) -> None:
    f = BINARY[name]
    xs, ys, y = RNG.uniform(-1, 1, (4, 3)), RNG.uniform(0.5, 1, (4, 1)), RNG.uniform(0.5, 1, 3)
    expected = np.stack([f(a, b) for a, b in zip(xs, ys, strict=True)])
    np.testing.assert_allclose(T.vmap(f)(xs, ys), expected, rtol=1e-15)
    np.testing.assert_allclose(T.vmap(f, in_axes=(1, 0))(xs.T, ys), expected, rtol=1e-15)
    np.testing.assert_allclose(
        T.vmap(f, in_axes=(0, None))(xs, y), np.stack([f(a, y) for a in xs]), rtol=1e-15
    )
    np.testing.assert_allclose(
        T.vmap(f, in_axes=(None, 0))(y, xs), np.stack([f(y, a) for a in xs]), rtol=1e-15
    )

    def loss(a: Any, b: Any) -> Any:
        return tnp.sum(f(a, b) * a)

    grads = T.vmap(T.grad(loss, argnums=(0, 1)))(xs, ys)
    for i in range(len(xs)):
        for g, e in zip(grads, T.grad(loss, argnums=(0, 1))(xs[i], ys[i]), strict=True):
            np.testing.assert_allclose(g[i], e, rtol=1e-14)


def test_complex_functions_vmap() -> None:
    zs = _complex((4, 3))
    for name in ("abs", "real", "imag", "conj", "angle", "sinc", "nan_to_num"):
        f = getattr(tnp, name)
        np.testing.assert_allclose(T.vmap(f)(zs), np.stack([f(z) for z in zs]), rtol=1e-15)
        loss = T.grad(lambda z, f=f: tnp.sum(tnp.abs(f(z)) ** 2))
        np.testing.assert_allclose(T.vmap(loss)(zs), np.stack([loss(z) for z in zs]), rtol=1e-14)


def test_raw_numpy_dispatches() -> None:
    x, y = np.array([0.5, -1.5]), np.array([2.0, 0.25])
    _, t = T.jvp(lambda x: np.clip(x, -1.0, 1.0) + np.hypot(x, y) + np.sinc(x), (x,), (x,))
    _, expected = T.jvp(
        lambda x: tnp.clip(x, -1.0, 1.0) + tnp.hypot(x, y) + tnp.sinc(x), (x,), (x,)
    )
    np.testing.assert_allclose(t, expected, rtol=1e-15)
