"""User-defined rules and the special transforms, with rules chosen to be distinguishable.

A custom rule here never agrees with the true derivative (``2 cos x`` for ``sin``, a bwd
that scales by 3), so a number that matches proves the custom rule was used, at that order
and in that mode. Expected values are derived analytically from the custom rule:

- reverse mode of a ``custom_jvp`` function transposes its JVP rule;
- forward mode of a ``custom_vjp`` function transposes its bwd rule;
- a rule is differentiated like ordinary code at higher orders.

Also: ``checkpoint`` (values, recomputation, peak memory), ``stop_gradient``, ``linearize``,
``holomorphic``, symbolic zeros, ``has_aux``, ``tnp.at`` and user primitives.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest
from numpy.testing import assert_allclose

import transforms as T
import transforms.numpy as tnp

RTOL = 1e-10
ATOL = 1e-12

tree_flatten = T.tree_util.tree_flatten


def close(actual: Any, expected: Any, rtol: float = RTOL, atol: float = ATOL) -> None:
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert_allclose(actual, expected, rtol=rtol, atol=atol)


def plain(tree: Any) -> None:
    """Every leaf is a NumPy array or Python scalar, never a tracer."""
    for leaf in tree_flatten(tree)[0]:
        assert not isinstance(leaf, T.core.Tracer), leaf  # type: ignore[attr-defined]
        assert isinstance(leaf, (np.ndarray, np.generic, int, float, complex)), type(leaf)


def d(f: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Scalar derivative by forward mode."""
    return lambda x: T.jvp(f, (x,), (np.ones_like(x),))[1]


X0 = np.array(0.7)
XV = np.array([0.3, -1.1, 2.0])
XB = np.array([[0.3, -1.1, 2.0], [1.5, 0.2, -0.4]])


# ---------------------------------------------------------------------------------------
# custom_jvp: sin with the rule t -> 2 cos(x) t
# ---------------------------------------------------------------------------------------
@T.custom_jvp
def jsin(x: Any) -> Any:
    return tnp.sin(x)


@jsin.defjvp
def _jsin_jvp(primals: list[Any], tangents: list[Any]) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    return jsin(x), 2 * tnp.cos(x) * t


# derivatives implied by the rule: f' = 2 cos, f'' = -2 sin, f''' = -2 cos
def jsin_d1(x: Any) -> Any:
    return 2 * np.cos(x)


def jsin_d2(x: Any) -> Any:
    return -2 * np.sin(x)


def test_custom_jvp_value_is_the_function() -> None:
    close(jsin(XV), np.sin(XV))
    close(T.jvp(jsin, (XV,), (np.ones(3),))[0], np.sin(XV))


def test_custom_jvp_grad() -> None:
    close(T.grad(jsin)(X0), jsin_d1(X0))
    close(T.grad(lambda x: tnp.sum(jsin(x) * x))(XV), jsin_d1(XV) * XV + np.sin(XV))


def test_custom_jvp_grad_grad() -> None:
    close(T.grad(T.grad(jsin))(X0), jsin_d2(X0))
    close(T.grad(T.grad(T.grad(jsin)))(X0), -2 * np.cos(X0))


def test_custom_jvp_jvp() -> None:
    t = np.array([1.0, 2.0, -0.5])
    _, tan = T.jvp(jsin, (XV,), (t,))
    close(tan, jsin_d1(XV) * t)
    close(d(d(jsin))(X0), jsin_d2(X0))


def test_custom_jvp_jvp_of_grad_and_grad_of_jvp() -> None:
    close(T.jvp(T.grad(jsin), (X0,), (np.array(3.0),))[1], 3 * jsin_d2(X0))
    close(T.grad(d(jsin))(X0), jsin_d2(X0))


def test_custom_jvp_jacobians_and_hessian() -> None:
    close(T.jacfwd(jsin)(XV), np.diag(jsin_d1(XV)))
    close(T.jacrev(jsin)(XV), np.diag(jsin_d1(XV)))
    second = np.zeros((3, 3, 3))
    for i in range(3):
        second[i, i, i] = jsin_d2(XV[i])
    close(T.jacrev(T.jacrev(jsin))(XV), second)
    close(T.jacfwd(T.jacrev(jsin))(XV), second)
    close(T.jacrev(T.jacfwd(jsin))(XV), second)
    close(T.hessian(lambda x: tnp.sum(jsin(x)))(XV), np.diag(jsin_d2(XV)))


def test_custom_jvp_vmap_grad_and_grad_vmap() -> None:
    close(T.vmap(T.grad(lambda x: tnp.sum(jsin(x))))(XB), jsin_d1(XB))
    close(T.grad(lambda x: tnp.sum(T.vmap(jsin)(x)))(XB), jsin_d1(XB))
    close(T.vmap(jsin)(XB), np.sin(XB))
    close(
        T.vmap(T.hessian(lambda x: tnp.sum(jsin(x))))(XB),
        np.stack([np.diag(jsin_d2(r)) for r in XB]),
    )
    close(T.jacfwd(T.vmap(jsin))(XV), np.diag(jsin_d1(XV)))
    close(T.jacrev(T.vmap(jsin, in_axes=0))(XV), np.diag(jsin_d1(XV)))


def test_custom_jvp_vmap_of_jvp() -> None:
    t = np.ones_like(XB) * 2
    close(T.vmap(lambda x, t: T.jvp(jsin, (x,), (t,))[1])(XB, t), jsin_d1(XB) * t)


# a two-argument custom_jvp with an asymmetric rule: its "Hessian" is not symmetric
@T.custom_jvp
def jmul(x: Any, y: Any) -> Any:
    return x * y


@jmul.defjvp
def _jmul_jvp(primals: list[Any], tangents: list[Any]) -> tuple[Any, Any]:
    (x, y), (tx, ty) = primals, tangents
    return jmul(x, y), 3 * y * tx + 5 * x * ty


def test_custom_jvp_two_args_every_mode() -> None:
    x, y = np.array(1.5), np.array(-0.5)
    gx, gy = T.grad(jmul, argnums=(0, 1))(x, y)
    close(gx, 3 * y)
    close(gy, 5 * x)
    close(T.jvp(jmul, (x, y), (np.array(1.0), np.array(2.0)))[1], 3 * y + 10 * x)
    # d/dy (df/dx) = 3, d/dx (df/dy) = 5: the rule's asymmetry survives second order
    h = T.hessian(jmul, argnums=(0, 1))(x, y)
    close(np.array([[h[0][0], h[0][1]], [h[1][0], h[1][1]]]), [[0.0, 3.0], [5.0, 0.0]])
    close(T.grad(T.grad(jmul, argnums=0), argnums=1)(x, y), 3.0)
    close(T.grad(T.grad(jmul, argnums=1), argnums=0)(x, y), 5.0)


def test_custom_jvp_grad_of_vmap_with_unbatched_and_axis1_args() -> None:
    w = np.array([0.5, -1.0])
    X = np.arange(1.0, 7.0).reshape(2, 3)  # examples along axis 1
    f = T.vmap(jmul, in_axes=(None, 1))
    close(T.grad(lambda w: tnp.sum(f(w, X)))(w), 3 * X.sum(axis=1))
    close(T.grad(lambda X: tnp.sum(f(w, X)))(X), np.broadcast_to(5 * w[:, None], X.shape))
    close(
        T.jvp(lambda X: f(w, X), (X,), (np.ones_like(X),))[1], (5 * w[:, None] * np.ones((2, 3))).T
    )


def test_custom_jvp_rule_only_called_when_differentiating() -> None:
    calls = {"fun": 0, "rule": 0}

    @T.custom_jvp
    def f(x: Any) -> Any:
        calls["fun"] += 1
        return x * 2

    @f.defjvp
    def _(primals: list[Any], tangents: list[Any]) -> tuple[Any, Any]:
        calls["rule"] += 1
        return f(primals[0]), 7 * tangents[0]

    close(f(XV), 2 * XV)
    assert calls == {"fun": 1, "rule": 0}
    close(T.jvp(f, (XV,), (np.ones(3),))[1], 7 * np.ones(3))
    assert calls["rule"] >= 1


def test_custom_jvp_nondiff_argnums_static_first() -> None:
    seen: list[Any] = []

    def power(n: int, x: Any) -> Any:
        return x**n

    f = T.custom_jvp(power, nondiff_argnums=(0,))

    @f.defjvp
    def _(n: int, primals: list[Any], tangents: list[Any]) -> tuple[Any, Any]:
        seen.append(n)
        (x,), (t,) = primals, tangents
        return f(n, x), 10 * n * x ** (n - 1) * t  # ten times the true derivative

    x = np.array(1.3)
    close(f(3, x), x**3)
    close(T.grad(f, argnums=1)(3, x), 30 * x**2)
    close(T.jvp(lambda x: f(3, x), (x,), (np.array(2.0),))[1], 60 * x**2)
    close(T.grad(T.grad(f, argnums=1), argnums=1)(3, x), 60 * x)
    close(T.vmap(T.grad(f, argnums=1), in_axes=(None, 0))(3, XV), 30 * XV**2)
    assert seen and all(type(n) is int and n == 3 for n in seen)


def test_custom_jvp_nondiff_argnum_callable_and_middle_position() -> None:
    def apply(x: Any, g: Callable[[Any], Any], y: Any) -> Any:
        return g(x) * y

    f = T.custom_jvp(apply, nondiff_argnums=(1,))

    @f.defjvp
    def _(g: Callable[[Any], Any], primals: list[Any], tangents: list[Any]) -> tuple[Any, Any]:
        (x, y), (tx, ty) = primals, tangents
        return f(x, g, y), 4 * tx * y + g(x) * ty

    x, y = np.array(0.2), np.array(3.0)
    gx, gy = T.grad(f, argnums=(0, 2))(x, tnp.exp, y)
    close(gx, 4 * y)
    close(gy, np.exp(x))


# ---------------------------------------------------------------------------------------
# custom_vjp: sin whose bwd is ct -> 2 cos(x) ct; identity whose bwd scales by 3
# ---------------------------------------------------------------------------------------
@T.custom_vjp
def vsin(x: Any) -> Any:
    return tnp.sin(x)


def _vsin_fwd(x: Any) -> tuple[Any, Any]:
    return vsin(x), x


def _vsin_bwd(x: Any, ct: Any) -> tuple[Any]:
    return (2 * tnp.cos(x) * ct,)


vsin.defvjp(_vsin_fwd, _vsin_bwd)


@T.custom_vjp
def triple_grad(x: Any) -> Any:
    return x


triple_grad.defvjp(lambda x: (x, None), lambda _, ct: (3 * ct,))


def test_custom_vjp_value() -> None:
    close(vsin(XV), np.sin(XV))
    close(triple_grad(XV), XV)
    close(T.vmap(vsin)(XB), np.sin(XB))


def test_custom_vjp_grad_and_grad_grad() -> None:
    close(T.grad(vsin)(X0), jsin_d1(X0))
    close(T.grad(T.grad(vsin))(X0), jsin_d2(X0))
    close(T.grad(lambda x: tnp.sum(triple_grad(x) ** 2))(XV), 6 * XV)
    # second order: the inner cotangent 3 * 2 * triple_grad(x) goes through the custom
    # rule again under the outer grad: d/dx = 6 * 3 = 18 (true derivative: 2)
    close(T.grad(T.grad(lambda x: triple_grad(x) ** 2))(X0), 18.0)


def test_custom_vjp_forward_mode_transposes_bwd() -> None:
    t = np.array([1.0, 2.0, -0.5])
    out, tan = T.jvp(vsin, (XV,), (t,))
    close(out, np.sin(XV))
    close(tan, jsin_d1(XV) * t)
    close(T.jvp(triple_grad, (XV,), (t,))[1], 3 * t)
    close(T.jacfwd(vsin)(XV), np.diag(jsin_d1(XV)))
    close(T.jacrev(vsin)(XV), np.diag(jsin_d1(XV)))
    close(T.jacfwd(triple_grad)(XV), 3 * np.eye(3))
    close(T.jacrev(triple_grad)(XV), 3 * np.eye(3))


def test_custom_vjp_jvp_of_grad_and_hessian() -> None:
    close(T.jvp(T.grad(vsin), (X0,), (np.array(3.0),))[1], 3 * jsin_d2(X0))
    close(T.hessian(lambda x: tnp.sum(vsin(x)))(XV), np.diag(jsin_d2(XV)))
    second = np.zeros((3, 3, 3))
    for i in range(3):
        second[i, i, i] = jsin_d2(XV[i])
    close(T.jacrev(T.jacrev(vsin))(XV), second)
    close(T.jacfwd(T.jacfwd(vsin))(XV), second)
    # grad = 3 * 3 tg(x)^2; forward over it: 9 * 2 tg(x) * 3 (transposed bwd) = 54 x
    close(T.hessian(lambda x: tnp.sum(triple_grad(x) ** 3))(XV), np.diag(54 * XV))
    close(T.jvp(T.grad(lambda x: triple_grad(x) ** 2), (X0,), (np.array(1.0),))[1], 18.0)


def test_custom_vjp_vmap_grad_and_grad_vmap() -> None:
    close(T.vmap(T.grad(lambda x: tnp.sum(vsin(x))))(XB), jsin_d1(XB))
    close(T.grad(lambda x: tnp.sum(T.vmap(vsin)(x)))(XB), jsin_d1(XB))
    close(
        T.vmap(T.hessian(lambda x: tnp.sum(vsin(x))))(XB),
        np.stack([np.diag(jsin_d2(r)) for r in XB]),
    )
    close(T.jacrev(T.vmap(vsin))(XV), np.diag(jsin_d1(XV)))
    close(T.jacfwd(T.vmap(vsin))(XV), np.diag(jsin_d1(XV)))
    close(T.vmap(lambda x, t: T.jvp(vsin, (x,), (t,))[1])(XB, np.ones_like(XB)), jsin_d1(XB))


@T.custom_vjp
def vmul(x: Any, y: Any) -> Any:
    return x * y


vmul.defvjp(lambda x, y: (x * y, (x, y)), lambda res, ct: (3 * res[1] * ct, 5 * res[0] * ct))


def test_custom_vjp_two_args_every_mode() -> None:
    x, y = np.array(1.5), np.array(-0.5)
    gx, gy = T.grad(vmul, argnums=(0, 1))(x, y)
    close(gx, 3 * y)
    close(gy, 5 * x)
    close(T.jvp(vmul, (x, y), (np.array(1.0), np.array(2.0)))[1], 3 * y + 10 * x)
    h = T.hessian(vmul, argnums=(0, 1))(x, y)
    close(np.array([[h[0][0], h[0][1]], [h[1][0], h[1][1]]]), [[0.0, 3.0], [5.0, 0.0]])


def test_custom_vjp_grad_of_vmap_with_unbatched_arg() -> None:
    # per-example cotangents of an unbatched argument must be summed over the batch
    w = np.array([0.5, -1.0])
    X = np.arange(1.0, 7.0).reshape(3, 2)  # 3 examples along axis 0
    f = T.vmap(vmul, in_axes=(None, 0))
    close(T.grad(lambda w: tnp.sum(f(w, X)))(w), 3 * X.sum(axis=0))
    close(T.grad(lambda X: tnp.sum(f(w, X)))(X), np.broadcast_to(5 * w, X.shape))


def test_custom_vjp_grad_and_jvp_of_vmap_over_axis1() -> None:
    w = np.array([0.5, -1.0])
    X = np.arange(1.0, 7.0).reshape(2, 3)  # 3 examples along axis 1
    f = T.vmap(vmul, in_axes=(None, 1))
    close(T.grad(lambda X: tnp.sum(f(w, X)))(X), np.broadcast_to(5 * w[:, None], X.shape))
    close(
        T.jvp(lambda X: f(w, X), (X,), (np.ones_like(X),))[1], (5 * w[:, None] * np.ones((2, 3))).T
    )


def test_custom_vjp_clipping_bwd() -> None:
    @T.custom_vjp
    def clip_gradient(x: Any) -> Any:
        return x

    clip_gradient.defvjp(
        lambda x: (x, None), lambda _, ct: (tnp.minimum(tnp.maximum(ct, -1.0), 1.0),)
    )
    w = np.array([5.0, -0.5, -3.0])
    close(clip_gradient(XV), XV)
    close(T.grad(lambda x: tnp.sum(clip_gradient(x) * w))(XV), [1.0, -0.5, -1.0])
    W = np.array([[5.0, -0.5, -3.0], [0.25, 2.0, -2.0]])
    out = T.vmap(T.grad(lambda x, w: tnp.sum(clip_gradient(x) * w)))(XB, W)
    close(out, np.clip(W, -1, 1))


def test_custom_vjp_fwd_runs_once_per_forward_pass() -> None:
    calls = {"fwd": 0, "bwd": 0}

    @T.custom_vjp
    def f(x: Any, y: Any) -> Any:
        return x * y

    def fwd(x: Any, y: Any) -> tuple[Any, Any]:
        calls["fwd"] += 1
        return x * y, (x, y)

    def bwd(res: Any, ct: Any) -> tuple[Any, Any]:
        calls["bwd"] += 1
        return res[1] * ct, res[0] * ct

    f.defvjp(fwd, bwd)
    gx, gy = T.grad(f, argnums=(0, 1))(np.array(2.0), np.array(3.0))
    close(gx, 3.0)
    close(gy, 2.0)
    assert calls["fwd"] == 1


def test_custom_vjp_nondiff_argnums_static_first() -> None:
    seen: list[Any] = []

    def scale(k: float, x: Any) -> Any:
        return x * k

    f = T.custom_vjp(scale, nondiff_argnums=(0,))

    def fwd(k: float, x: Any) -> tuple[Any, Any]:
        seen.append(("fwd", k))
        return x * k, None

    def bwd(k: float, res: Any, ct: Any) -> tuple[Any]:
        seen.append(("bwd", k))
        return (2 * k * ct,)  # twice the true derivative

    f.defvjp(fwd, bwd)
    close(f(1.5, XV), 1.5 * XV)
    close(T.grad(lambda x: tnp.sum(f(1.5, x)))(XV), 3.0 * np.ones(3))
    close(T.jvp(lambda x: f(1.5, x), (XV,), (np.ones(3),))[1], 3.0 * np.ones(3))
    close(T.vmap(T.grad(lambda x: tnp.sum(f(1.5, x))))(XB), 3.0 * np.ones_like(XB))
    assert ("fwd", 1.5) in seen and ("bwd", 1.5) in seen


def test_custom_vjp_raw_numpy_bwd_grad_works_jvp_refuses() -> None:
    @T.custom_vjp
    def f(x: Any) -> Any:
        return x

    f.defvjp(lambda x: (x, None), lambda _, ct: (np.asarray(ct) * 2,))
    close(T.grad(lambda x: tnp.sum(f(x)))(XV), 2 * np.ones(3))
    with pytest.raises(TypeError, match="cannot be transposed"):
        T.jvp(f, (XV,), (np.ones(3),))
    with pytest.raises(TypeError, match="cannot be transposed"):
        T.jacfwd(f)(XV)


def test_custom_vjp_none_cotangent_becomes_zeros() -> None:
    @T.custom_vjp
    def f(x: Any, y: Any) -> Any:
        return x * y

    f.defvjp(lambda x, y: (x * y, y), lambda y, ct: (4 * y * ct, None))
    x = np.array([1.0, 2.0], dtype=np.float32)
    y = np.array([3.0, -1.0], dtype=np.float32)
    gx, gy = T.grad(lambda x, y: tnp.sum(f(x, y)), argnums=(0, 1))(x, y)
    close(gx, 4 * y)
    assert gy is not None
    close(gy, np.zeros(2))
    assert gy.dtype == np.float32
    # forward mode: the None cotangent means y's tangent does not reach the output
    close(T.jvp(f, (x, y), (np.ones(2, np.float32), np.ones(2, np.float32)))[1], 4 * y)


def test_custom_vjp_wrong_number_of_cotangents() -> None:
    @T.custom_vjp
    def f(x: Any, y: Any) -> Any:
        return x * y

    f.defvjp(lambda x, y: (x * y, None), lambda _, ct: (ct,))
    with pytest.raises(TypeError, match="1 cotangent"):  # a structure mismatch, as in JAX
        T.grad(f)(np.array(1.0), np.array(2.0))


def _tangent_only(t: Any) -> Any:
    return 2 * t


def _autograd_style(t: Any, ans: Any, x: Any) -> Any:
    return 2 * tnp.cos(x) * t


@pytest.mark.parametrize(
    ("define", "message"),
    [
        (lambda: T.custom_jvp(tnp.sin).defjvp(_tangent_only), r"\(primals, tangents\)"),
        (lambda: T.custom_jvp(tnp.sin).defjvp(_autograd_style), r"cannot take 2 positional"),
        (
            lambda: T.custom_jvp(lambda k, x: k * x, nondiff_argnums=(0,)).defjvp(
                lambda p, t: (p[0], t[0])
            ),
            r"the 1 static argument\(s\) \(nondiff_argnums\) first",
        ),
        (
            lambda: T.custom_vjp(tnp.sin).defvjp(lambda x: (tnp.sin(x), x), _tangent_only),
            r"\(residuals, ct\)",
        ),
        (
            lambda: T.custom_vjp(lambda k, x: k * x, nondiff_argnums=(0,)).defvjp(
                lambda k, x: (k * x, None), lambda _, ct: (ct,)
            ),
            r"cannot take 3 positional",
        ),
    ],
    ids=["jvp-tangent-only", "jvp-autograd-style", "jvp-no-static", "bwd-one-arg", "bwd-no-static"],
)
def test_rule_of_the_wrong_arity_is_refused_when_defined(
    define: Callable[[], object], message: str
) -> None:
    # Before, each was accepted and failed at its first use, inside a transform.
    with pytest.raises(TypeError, match=message):
        define()


def test_rules_taking_varargs_or_defaults_are_accepted() -> None:
    f = T.custom_jvp(tnp.sin)
    f.defjvp(lambda *pt: (f(pt[0][0]), 2 * tnp.cos(pt[0][0]) * pt[1][0]))  # the 2: rule used
    close(T.grad(f)(0.3), 2 * np.cos(0.3))
    g = T.custom_vjp(lambda k, x: k * x, nondiff_argnums=(0,))
    g.defvjp(lambda k, x: (k * x, None), lambda k, res, ct, extra=3: (extra * k * ct,))
    close(T.grad(lambda x: g(2.0, x))(0.3), 6.0)


# ---------------------------------------------------------------------------------------
# pytree outputs: x -> (sin x, {"c": cos x}) whose rules say d(sin) = 2 cos, d(cos) = -3 sin
# ---------------------------------------------------------------------------------------
@T.custom_jvp
def jpair(x: Any) -> Any:
    return tnp.sin(x), {"c": tnp.cos(x)}


@jpair.defjvp
def _jpair_jvp(primals: list[Any], tangents: list[Any]) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    return jpair(x), (2 * tnp.cos(x) * t, {"c": -3 * tnp.sin(x) * t})


@T.custom_vjp
def vpair(x: Any) -> Any:
    return tnp.sin(x), {"c": tnp.cos(x)}


def _vpair_bwd(x: Any, ct: Any) -> tuple[Any]:
    ct_s, ct_c = ct[0], ct[1]["c"]
    return (2 * tnp.cos(x) * ct_s - 3 * tnp.sin(x) * ct_c,)


vpair.defvjp(lambda x: (vpair(x), x), _vpair_bwd)

PAIRS = {"custom_jvp": jpair, "custom_vjp": vpair}
W1, W2 = np.array([1.0, 2.0, -1.0]), np.array([0.5, -1.5, 3.0])


def pair_d1(x: Any) -> tuple[Any, Any]:  # the rules' first derivatives of both outputs
    return 2 * np.cos(x), -3 * np.sin(x)


def pair_d2(x: Any) -> tuple[Any, Any]:  # ... differentiated: the second derivatives
    return -2 * np.sin(x), -3 * np.cos(x)


def pair_loss(f: Any) -> Callable[[Any], Any]:
    def loss(x: Any) -> Any:
        s, rest = f(x)
        return tnp.sum(W1 * s + W2 * rest["c"]) if np.ndim(x) else s + 2 * rest["c"]

    return loss


@pytest.mark.parametrize("kind", sorted(PAIRS))
def test_pytree_output_values_and_structure(kind: str) -> None:
    f = PAIRS[kind]
    s, rest = f(XV)
    assert set(rest) == {"c"}
    close(s, np.sin(XV))
    close(rest["c"], np.cos(XV))
    bs, brest = T.vmap(f)(XB)
    close(bs, np.sin(XB))
    close(brest["c"], np.cos(XB))
    bs, brest = T.vmap(f, in_axes=1)(XB.T)
    close(brest["c"], np.cos(XB))


@pytest.mark.parametrize("kind", sorted(PAIRS))
def test_pytree_output_jvp_vjp_and_jacobians(kind: str) -> None:
    f = PAIRS[kind]
    d_s, d_c = pair_d1(XV)
    t = np.array([1.0, 2.0, -0.5])
    (s, rest), (t_s, t_rest) = T.jvp(f, (XV,), (t,))
    close(s, np.sin(XV))
    close(rest["c"], np.cos(XV))
    assert set(t_rest) == {"c"}
    close(t_s, d_s * t)
    close(t_rest["c"], d_c * t)
    _, pullback = T.vjp(f, XV)
    (ct_x,) = pullback((W1, {"c": W2}))
    close(ct_x, d_s * W1 + d_c * W2)
    for jac in (T.jacfwd, T.jacrev):
        j_s, j_rest = jac(f)(XV)
        close(j_s, np.diag(d_s))
        close(j_rest["c"], np.diag(d_c))
    l_s, l_rest = T.linearize(f, XV)[1](t)
    close(l_s, d_s * t)
    close(l_rest["c"], d_c * t)
    close(T.grad(T.checkpoint(lambda x: tnp.sum(f(x)[1]["c"] * W2)))(XV), d_c * W2)


@pytest.mark.parametrize("kind", sorted(PAIRS))
def test_pytree_output_one_used_the_other_a_zero(kind: str) -> None:
    f = PAIRS[kind]
    d_s, d_c = pair_d1(XV)
    close(T.grad(lambda x: tnp.sum(f(x)[1]["c"]))(XV), d_c)
    close(T.grad(lambda x: tnp.sum(f(x)[0]))(XV), d_s)
    close(T.jvp(lambda x: f(x)[1]["c"], (XV,), (np.ones(3),))[1], d_c)


@pytest.mark.parametrize("kind", sorted(PAIRS))
def test_pytree_output_every_order_and_nesting(kind: str) -> None:
    loss = pair_loss(PAIRS[kind])
    (d_s, d_c), (dd_s, dd_c) = pair_d1(XV), pair_d2(XV)
    close(T.grad(loss)(XV), d_s * W1 + d_c * W2)
    close(T.hessian(loss)(XV), np.diag(dd_s * W1 + dd_c * W2))
    close(T.jacrev(T.grad(loss))(XV), np.diag(dd_s * W1 + dd_c * W2))
    (d_s0, d_c0), (dd_s0, dd_c0) = pair_d1(X0), pair_d2(X0)
    close(T.grad(loss)(X0), d_s0 + 2 * d_c0)
    close(T.grad(T.grad(loss))(X0), dd_s0 + 2 * dd_c0)
    close(T.jvp(T.grad(loss), (X0,), (np.array(3.0),))[1], 3 * (dd_s0 + 2 * dd_c0))
    close(T.grad(d(loss))(X0), dd_s0 + 2 * dd_c0)
    (b_s, b_c) = pair_d1(XB)
    close(T.vmap(T.grad(loss))(XB), b_s * W1 + b_c * W2)
    close(T.grad(lambda x: tnp.sum(T.vmap(loss)(x)))(XB), b_s * W1 + b_c * W2)


def test_pytree_output_and_pytree_argument_with_a_none_part() -> None:
    # bwd says: d out["z"] / d w = 3 (true: 1), and no cotangent at all for b
    @T.custom_vjp
    def f(p: Any) -> Any:
        return {"y": p["w"] * p["b"], "z": p["w"]}

    f.defvjp(lambda p: (f(p), None), lambda _, ct: ({"w": 3 * ct["z"], "b": None},))
    p = {"w": np.array([1.0, 2.0]), "b": np.array(0.5, dtype=np.float32)}
    g = T.grad(lambda p: tnp.sum(f(p)["y"] + f(p)["z"]))(p)
    close(g["w"], [3.0, 3.0])
    close(g["b"], 0.0)
    assert g["b"].dtype == np.float32
    # forward mode transposes bwd: b's tangent reaches nothing, w's reaches z three times
    tp = {"w": np.array([1.0, -1.0]), "b": np.array(1.0, dtype=np.float32)}
    out, tangent = T.jvp(f, (p,), (tp,))
    close(out["y"], [0.5, 1.0])
    close(tangent["y"], [0.0, 0.0])
    close(tangent["z"], [3.0, -3.0])


def test_pytree_output_with_nondiff_argnums_and_a_namedtuple() -> None:
    class Out(NamedTuple):
        scaled: Any
        shifted: Any

    def scaled_shifted(k: float, x: Any) -> Any:
        return Out(k * x, x + k)

    f = T.custom_vjp(scaled_shifted, nondiff_argnums=(0,))
    f.defvjp(
        lambda k, x: (f(k, x), None),
        lambda k, _, ct: (5 * k * ct.scaled + ct.shifted,),  # 5: the rule is used
    )
    out = f(2.0, XV)
    assert type(out) is Out
    close(T.grad(lambda x: tnp.sum(f(2.0, x).scaled + f(2.0, x).shifted))(XV), 11 * np.ones(3))
    _, tangent = T.jvp(lambda x: f(2.0, x), (XV,), (np.ones(3),))
    assert type(tangent) is Out
    close(tangent.scaled, 10 * np.ones(3))
    close(tangent.shifted, np.ones(3))


def _two_outputs_jvp(tangent_out: Callable[[Any], Any]) -> Any:
    @T.custom_jvp
    def f(x: Any) -> Any:
        return x, 2 * x

    @f.defjvp
    def f_jvp(primals: list[Any], tangents: list[Any]) -> Any:
        (x,), (t,) = primals, tangents
        return tangent_out((f(x), t))

    return f


def _two_outputs_vjp(fwd: Callable[[Any, Any], Any], bwd: Callable[[Any], Any]) -> Any:
    @T.custom_vjp
    def f(x: Any) -> Any:
        return x, 2 * x

    f.defvjp(lambda x: fwd(f(x), x), lambda _, ct: bwd(ct))
    return f


X2 = np.array([1.0, 2.0])
_OUT = r"tuple\(\*, \*\) of \[float64\[2\], float64\[2\]\]"
# each misuse: the function, and what the error must say (a TypeError unless a ValueError)
MISMATCHES: dict[str, tuple[Any, str]] = {
    "JVP rule: tangent structure": (
        _two_outputs_jvp(lambda pt: (pt[0], (pt[1],))),
        rf"custom_jvp function f: the tangent output of its JVP rule must have the structure, "
        rf"shapes and dtypes of its output, {_OUT}; got tuple\(\*\) of \[float64\[2\]\]",
    ),
    "JVP rule: tangent shape": (
        _two_outputs_jvp(lambda pt: (pt[0], (pt[1], np.ones(3)))),
        r"tangent output .* got tuple\(\*, \*\) of \[float64\[2\], float64\[3\]\]",
    ),
    "JVP rule: a scalar tangent for an array": (
        _two_outputs_jvp(lambda pt: (pt[0], (pt[1], 1.0))),
        r"tangent output .* got tuple\(\*, \*\) of \[float64\[2\], float64\[\]\]",
    ),
    "JVP rule: tangent dtype": (
        _two_outputs_jvp(lambda pt: (pt[0], (pt[1], pt[1].astype(np.float32)))),
        r"tangent output .* got tuple\(\*, \*\) of \[float64\[2\], float32\[2\]\]",
    ),
    "JVP rule: primal structure": (
        _two_outputs_jvp(lambda pt: ([pt[0][0], pt[0][1]], (pt[1], pt[1]))),
        r"the primal output of its JVP rule must .* got list\(\*, \*\)",
    ),
    "JVP rule: not a pair": (
        _two_outputs_jvp(lambda pt: (pt[0], pt[1], pt[1])),
        r"custom_jvp function f: its JVP rule must return \(primal_out, tangent_out\)",
    ),
    "fwd: not a pair": (
        _two_outputs_vjp(lambda out, x: (out, x, x), lambda ct: (ct[0],)),
        r"custom_vjp function f: its fwd rule must return \(out, residuals\), got tuple",
    ),
    "fwd: output structure": (
        _two_outputs_vjp(lambda out, x: ({"a": out[0], "b": out[1]}, x), lambda ct: (ct[0],)),
        rf"custom_vjp function f: the output of its fwd rule must .* {_OUT}; got dict",
    ),
    "fwd: output shape": (
        _two_outputs_vjp(lambda out, x: ((out[0], out[1][:1]), x), lambda ct: (ct[0],)),
        r"output of its fwd rule must .* got .* float64\[1\]",
    ),
    "bwd: count": (
        _two_outputs_vjp(lambda out, x: (out, x), lambda ct: (ct[0], ct[1])),
        r"custom_vjp bwd of f returned 2 cotangent\(s\) for 1 differentiable argument",
    ),
    "bwd: not a tuple": (
        _two_outputs_vjp(lambda out, x: (out, x), lambda ct: ct[0]),
        r"custom_vjp bwd of f returned array\(\[.*\]\) for 1 differentiable argument",
    ),
    "bwd: structure": (
        _two_outputs_vjp(lambda out, x: (out, x), lambda ct: ((ct[0],),)),
        r"custom_vjp bwd of f returned a cotangent of structure tuple\(\*\) for argument 0",
    ),
    "bwd: shape": (
        _two_outputs_vjp(lambda out, x: (out, x), lambda ct: (tnp.sum(ct[0]),)),
        r"custom_vjp bwd of f returned a cotangent of shape and dtype float64\[\] for leaf 0 "
        r"of argument 0, of float64\[2\]",
    ),
    "bwd: complex for a real argument": (
        _two_outputs_vjp(lambda out, x: (out, x), lambda ct: (ct[0] * 1j,)),
        r"cotangent of shape and dtype complex128\[2\] for leaf 0 of argument 0, of float64",
    ),
}


@pytest.mark.parametrize("misuse", sorted(MISMATCHES))
def test_rule_output_mismatch_names_the_function_and_the_mismatch(misuse: str) -> None:
    # before pytree outputs, a tangent or cotangent of the wrong shape was broadcast silently
    f, message = MISMATCHES[misuse]
    error = (
        ValueError if misuse in ("bwd: shape", "bwd: complex for a real argument") else TypeError
    )
    modes = [lambda: T.grad(lambda x: tnp.sum(f(x)[0] + f(x)[1]))(X2)]
    if not misuse.startswith("bwd"):  # forward mode never calls bwd on a wrong count
        modes.append(lambda: T.jvp(f, (X2,), (np.ones(2),)))
    for mode in modes:
        with pytest.raises(error, match=message):
            mode()


# ---------------------------------------------------------------------------------------
# checkpoint
# ---------------------------------------------------------------------------------------
def block(x: Any) -> Any:
    return tnp.sin(x) * tnp.exp(0.3 * x) + x**3


def loss(x: Any) -> Any:
    return tnp.sum(block(block(x)) * XV)


ckpt_block = T.checkpoint(block)


def ckpt_loss(x: Any) -> Any:
    return tnp.sum(ckpt_block(ckpt_block(x)) * XV)


X1 = np.array([0.3, -0.4, 0.5])


def test_checkpoint_values_every_order() -> None:
    close(ckpt_loss(X1), loss(X1))
    close(T.grad(ckpt_loss)(X1), T.grad(loss)(X1))
    close(T.jacfwd(ckpt_block)(X1), T.jacfwd(block)(X1))
    close(T.jacrev(ckpt_block)(X1), T.jacrev(block)(X1))
    close(T.hessian(ckpt_loss)(X1), T.hessian(loss)(X1))
    s = lambda x: tnp.sum(x)
    close(T.grad(T.grad(lambda x: s(ckpt_block(x))))(X0), T.grad(T.grad(lambda x: s(block(x))))(X0))
    close(T.vmap(T.grad(ckpt_loss))(XB), T.vmap(T.grad(loss))(XB))
    close(
        T.grad(lambda x: tnp.sum(T.vmap(ckpt_block)(x)))(XB),
        T.grad(lambda x: tnp.sum(T.vmap(block)(x)))(XB),
    )
    t = np.array([1.0, 0.5, -2.0])
    close(T.jvp(ckpt_loss, (X1,), (t,))[1], T.jvp(loss, (X1,), (t,))[1])


def test_checkpoint_values_analytic() -> None:
    # d/dx [sin x e^{0.3x} + x^3] = cos x e^{0.3x} + 0.3 sin x e^{0.3x} + 3x^2
    g = T.grad(lambda x: tnp.sum(ckpt_block(x)))(X1)
    e = np.exp(0.3 * X1)
    close(g, np.cos(X1) * e + 0.3 * np.sin(X1) * e + 3 * X1**2)


def test_checkpoint_two_args_and_kwargs() -> None:
    f = lambda x, y, *, k: tnp.sin(x * y) * k
    cf = T.checkpoint(f)
    x, y = np.array(0.4), np.array(-1.3)
    gx, gy = T.grad(lambda x, y: cf(x, y, k=2.0), argnums=(0, 1))(x, y)
    close(gx, 2 * np.cos(x * y) * y)
    close(gy, 2 * np.cos(x * y) * x)


def test_checkpoint_recomputes_forward_in_backward_pass() -> None:
    calls = {"n": 0}

    def f(x: Any) -> Any:
        calls["n"] += 1
        return tnp.tanh(x) ** 2

    cf = T.checkpoint(f)
    _, pullback = T.vjp(lambda x: tnp.sum(cf(x)), X1)
    assert calls["n"] == 1
    (g,) = pullback(np.array(1.0))
    assert calls["n"] == 2  # the forward ran again to recover the intermediates
    th = np.tanh(X1)
    close(g, 2 * th * (1 - th**2))
    calls["n"] = 0
    T.grad(lambda x: tnp.sum(f(x)))(X1)
    assert calls["n"] == 1  # without checkpoint: no recomputation


def test_checkpoint_reduces_peak_memory() -> None:
    layers_per_block, blocks = 10, 20  # 200 tanh layers on a (1000,) array

    def chunk(x: Any) -> Any:
        for _ in range(layers_per_block):
            x = tnp.tanh(x)
        return x

    saved_chunk = T.checkpoint(chunk)

    def deep(x: Any, remat: bool) -> Any:
        for _ in range(blocks):
            x = saved_chunk(x) if remat else chunk(x)
        return tnp.sum(x)

    x = np.linspace(-1.0, 1.0, 1000)

    def peak(remat: bool) -> tuple[int, Any]:
        tracemalloc.start()
        try:
            tracemalloc.reset_peak()
            g = T.grad(deep)(x, remat)
            return tracemalloc.get_traced_memory()[1], g
        finally:
            tracemalloc.stop()

    plain_peak, g_plain = peak(False)
    remat_peak, g_remat = peak(True)
    close(g_remat, g_plain)
    # 200 saved tanh outputs (8 kB each) against ~20 block inputs plus one live block
    assert plain_peak > 3 * remat_peak, (plain_peak, remat_peak)


# ---------------------------------------------------------------------------------------
# stop_gradient
# ---------------------------------------------------------------------------------------
def test_stop_gradient_identity_value_and_batches() -> None:
    close(T.stop_gradient(XV), XV)
    close(T.vmap(T.stop_gradient)(XB), XB)
    close(T.vmap(lambda x: T.stop_gradient(x) * 2, in_axes=1)(XB), 2 * XB.T)


def test_stop_gradient_zero_derivative_every_mode() -> None:
    sg = T.stop_gradient
    close(T.grad(lambda x: tnp.sum(sg(x)))(XV), np.zeros(3))
    close(T.jvp(sg, (XV,), (np.ones(3),))[1], np.zeros(3))
    close(T.jacfwd(sg)(XV), np.zeros((3, 3)))
    close(T.jacrev(sg)(XV), np.zeros((3, 3)))
    # x^2 * sg(x): derivative 2x * x (not 3x^2), second derivative 2x (not 6x)
    f = lambda x: tnp.sum(x**2 * sg(x))
    close(T.grad(f)(XV), 2 * XV**2)
    close(T.hessian(f)(XV), np.diag(2 * XV))
    g = lambda x: x**2 * sg(x)
    close(T.grad(T.grad(g))(X0), 2 * X0)
    close(d(d(g))(X0), 2 * X0)
    close(T.jvp(T.grad(g), (X0,), (np.array(1.0),))[1], 2 * X0)
    close(T.vmap(T.grad(f))(XB), 2 * XB**2)
    close(T.grad(lambda x: tnp.sum(T.vmap(g)(x)))(XV), 2 * XV**2)


def test_stop_gradient_inside_inner_transform_stops_outer_derivative() -> None:
    # inner: d/dy [sg(x) y^2] = 2 y sg(x); at y = x: 2 x sg(x); outer d/dx = 2 sg(x) = 2x
    def inner_grad(x: Any) -> Any:
        return T.grad(lambda y: T.stop_gradient(x) * y**2)(x)

    close(T.grad(inner_grad)(X0), 2 * X0)
    close(d(inner_grad)(X0), 2 * X0)
    # applied to an inner derivative: the outer derivative sees a constant times x
    h = lambda x: T.stop_gradient(T.grad(lambda y: y**3)(x)) * x
    close(T.grad(h)(X0), 3 * X0**2)
    close(d(h)(X0), 3 * X0**2)


# ---------------------------------------------------------------------------------------
# linearize
# ---------------------------------------------------------------------------------------
def test_linearize_runs_fun_once_and_is_linear_reusable() -> None:
    calls = {"n": 0}

    def f(x: Any) -> Any:
        calls["n"] += 1
        return tnp.stack([tnp.sin(x[0]) * x[1], x[1] * x[2] ** 2])

    x = np.array([0.3, -1.2, 2.0])
    out, f_jvp = T.linearize(f, x)
    close(out, [np.sin(0.3) * -1.2, -1.2 * 4.0])
    J = np.array([[np.cos(0.3) * -1.2, np.sin(0.3), 0.0], [0.0, 4.0, 2 * -1.2 * 2.0]])
    t1, t2 = np.array([1.0, 0.5, -2.0]), np.array([0.0, 3.0, 1.0])
    for _ in range(2):  # reusable
        close(f_jvp(t1), J @ t1)
        close(f_jvp(t2), J @ t2)
    a, b = 2.5, -0.7
    close(f_jvp(a * t1 + b * t2), a * np.asarray(f_jvp(t1)) + b * np.asarray(f_jvp(t2)))
    close(f_jvp(np.zeros(3)), np.zeros(2))
    close(f_jvp(t1), T.jvp(f, (x,), (t1,))[1])
    assert calls["n"] == 1 + 1  # linearize once, plus the reference jvp just above


def test_linearize_counts_exactly_one_call() -> None:
    calls = {"n": 0}

    def f(x: Any) -> Any:
        calls["n"] += 1
        return tnp.exp(x) * x

    _, f_jvp = T.linearize(f, XV)
    for k in range(3):
        f_jvp(np.full(3, float(k)))
    assert calls["n"] == 1


def test_linearize_multiple_args() -> None:
    f = lambda x, y: x * tnp.sin(y)
    x, y = np.array(1.5), np.array(0.4)
    out, f_jvp = T.linearize(f, x, y)
    close(out, 1.5 * np.sin(0.4))
    close(f_jvp(np.array(2.0), np.array(-1.0)), 2 * np.sin(y) - x * np.cos(y))


def test_linearize_differentiable_by_outer_grad() -> None:
    t = np.array([1.0, 0.5, -2.0])

    # w.r.t. the point: d/dx sum(cos(x) t) = -sin(x) t
    def along_t(x: Any) -> Any:
        return tnp.sum(T.linearize(tnp.sin, x)[1](t))

    close(T.grad(along_t)(XV), -np.sin(XV) * t)
    # w.r.t. the tangent: J^T w
    _, f_jvp = T.linearize(lambda x: tnp.sin(x) * x[0], XV)
    w = np.array([2.0, -1.0, 0.5])
    J = np.diag(np.cos(XV) * XV[0])
    J[:, 0] += np.sin(XV)
    close(T.grad(lambda u: tnp.sum(f_jvp(u) * w))(t), J.T @ w)


def test_linearize_of_custom_rules() -> None:
    _, f_jvp = T.linearize(jsin, XV)
    close(f_jvp(np.ones(3)), jsin_d1(XV))
    _, f_jvp = T.linearize(vsin, XV)
    close(f_jvp(np.ones(3)), jsin_d1(XV))


# ---------------------------------------------------------------------------------------
# holomorphic
# ---------------------------------------------------------------------------------------
Z0 = np.array(0.3 + 0.7j)
ZV = np.array([0.3 + 0.7j, -1.0 + 0.2j, 0.5 - 1.5j])


def test_holomorphic_grad() -> None:
    close(T.grad(lambda z: z**3, holomorphic=True)(Z0), 3 * Z0**2)
    close(T.grad(tnp.sin, holomorphic=True)(Z0), np.cos(Z0))
    close(T.grad(T.grad(lambda z: z**3, holomorphic=True), holomorphic=True)(Z0), 6 * Z0)
    close(T.value_and_grad(tnp.sin, holomorphic=True)(Z0)[1], np.cos(Z0))


@pytest.mark.parametrize("jac", [T.jacfwd, T.jacrev], ids=lambda t: t.__name__)
def test_holomorphic_jacobians(jac: Any) -> None:
    close(jac(lambda z: z**3, holomorphic=True)(ZV), np.diag(3 * ZV**2))
    close(jac(tnp.sin, holomorphic=True)(ZV), np.diag(np.cos(ZV)))
    close(
        jac(lambda z: z[0] * z[1] ** 2, holomorphic=True)(ZV),
        [2 * 0 + ZV[1] ** 2, 2 * ZV[0] * ZV[1], 0],
    )


def test_holomorphic_hessian() -> None:
    close(T.hessian(lambda z: tnp.sum(z**3), holomorphic=True)(ZV), np.diag(6 * ZV))


def test_complex_output_without_holomorphic_is_type_error() -> None:
    with pytest.raises(TypeError, match="holomorphic"):
        T.grad(lambda z: z**3)(Z0)


@pytest.mark.parametrize("transform", [T.grad, T.jacfwd, T.jacrev], ids=lambda t: t.__name__)
def test_holomorphic_with_real_input_is_type_error(transform: Any) -> None:
    with pytest.raises(TypeError, match="complex"):
        transform(lambda z: z**3, holomorphic=True)(
            np.array([1.0]) if transform is not T.grad else X0
        )


# ---------------------------------------------------------------------------------------
# symbolic zeros are materialised with the input's shape and dtype
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_constant_output_gives_zeros_of_input_shape_and_dtype(dtype: Any) -> None:
    x = np.arange(6, dtype=dtype).reshape(2, 3)
    c = np.array(2.0, dtype=dtype)
    g = T.grad(lambda x: c)(x)
    assert g is not None and isinstance(g, np.ndarray)
    assert g.dtype == dtype
    close(g, np.zeros((2, 3)))
    jf = T.jacfwd(lambda x: tnp.ones(4, dtype=dtype))(x)
    jr = T.jacrev(lambda x: tnp.ones(4, dtype=dtype))(x)
    for j in (jf, jr):
        assert j is not None and j.dtype == dtype
        close(j, np.zeros((4, 2, 3)))
    _, pullback = T.vjp(lambda x: tnp.ones(4, dtype=dtype), x)
    (ct,) = pullback(np.ones(4, dtype=dtype))
    assert ct is not None and ct.dtype == dtype
    close(ct, np.zeros((2, 3)))
    _, tan = T.jvp(lambda x: tnp.ones(4, dtype=dtype), (x,), (np.ones_like(x),))
    assert tan.dtype == dtype
    close(tan, np.zeros(4))


def test_unused_argument_gives_zeros_not_none() -> None:
    x = np.array([1.0, 2.0])
    y = np.ones((2, 2), dtype=np.float32)
    gx, gy = T.grad(lambda x, y: tnp.sum(x**2), argnums=(0, 1))(x, y)
    close(gx, 2 * x)
    assert gy is not None and gy.dtype == np.float32
    close(gy, np.zeros((2, 2)))
    jx, jy = T.jacrev(lambda x, y: x * 2, argnums=(0, 1))(x, y)
    close(jx, 2 * np.eye(2))
    close(jy, np.zeros((2, 2, 2)))
    _, jy = T.jacfwd(lambda x, y: x * 2, argnums=(0, 1))(x, y)
    close(jy, np.zeros((2, 2, 2)))
    _, pullback = T.vjp(lambda x, y: x * 2, x, y)
    _, cy = pullback(np.ones(2))
    assert cy is not None and cy.dtype == np.float32
    close(cy, np.zeros((2, 2)))
    # zero derivative of a pytree argument: each leaf is zeros
    g = T.grad(lambda p: tnp.sum(p["a"]))({"a": x, "b": (y, x)})
    close(g["a"], np.ones(2))
    close(g["b"][0], np.zeros((2, 2)))
    close(g["b"][1], np.zeros(2))


def test_zero_second_derivative_is_zeros() -> None:
    close(T.grad(T.grad(lambda x: 3 * x))(X0), 0.0)
    close(T.hessian(lambda x: tnp.sum(x * 2.0))(XV), np.zeros((3, 3)))
    close(T.vmap(T.grad(lambda x: tnp.sum(x * 0 + 1.0)))(XB), np.zeros_like(XB))


# ---------------------------------------------------------------------------------------
# has_aux: traced values in aux come back as plain arrays
# ---------------------------------------------------------------------------------------
def with_aux(x: Any) -> tuple[Any, Any]:
    return tnp.sum(x**2), {"sq": x**2, "sin": (tnp.sin(x),), "n": 3}


def vec_with_aux(x: Any) -> tuple[Any, Any]:
    return x**2, {"sq": x**2, "sin": (tnp.sin(x),), "n": 3}


def check_aux(aux: Any, x: np.ndarray) -> None:
    plain(aux)
    close(aux["sq"], x**2)
    close(aux["sin"][0], np.sin(x))
    assert aux["n"] == 3


def test_has_aux_grad_and_value_and_grad() -> None:
    g, aux = T.grad(with_aux, has_aux=True)(XV)
    close(g, 2 * XV)
    check_aux(aux, XV)
    (value, aux), g = T.value_and_grad(with_aux, has_aux=True)(XV)
    close(value, np.sum(XV**2))
    close(g, 2 * XV)
    check_aux(aux, XV)
    plain(value)


def test_has_aux_jvp_and_vjp() -> None:
    out, tan, aux = T.jvp(vec_with_aux, (XV,), (np.ones(3),), has_aux=True)
    close(out, XV**2)
    close(tan, 2 * XV)
    check_aux(aux, XV)
    out, pullback, aux = T.vjp(vec_with_aux, XV, has_aux=True)
    close(pullback(np.ones(3))[0], 2 * XV)
    check_aux(aux, XV)


@pytest.mark.parametrize("jac", [T.jacfwd, T.jacrev], ids=lambda t: t.__name__)
def test_has_aux_jacobians(jac: Any) -> None:
    j, aux = jac(vec_with_aux, has_aux=True)(XV)
    close(j, np.diag(2 * XV))
    check_aux(aux, XV)


def test_has_aux_hessian() -> None:
    h, aux = T.hessian(with_aux, has_aux=True)(XV)
    close(h, 2 * np.eye(3))
    check_aux(aux, XV)


def test_has_aux_nested_and_under_vmap() -> None:
    # aux of an inner grad, seen by an outer grad: still plain at the end
    def outer(x: Any) -> tuple[Any, Any]:
        g, aux = T.grad(with_aux, has_aux=True)(x)
        return tnp.sum(g * x), aux

    g, aux = T.grad(outer, has_aux=True)(XV)
    close(g, 4 * XV)
    check_aux(aux, XV)
    g, aux = T.vmap(T.grad(with_aux, has_aux=True))(XB)
    close(g, 2 * XB)
    plain(aux)
    close(aux["sq"], XB**2)


# ---------------------------------------------------------------------------------------
# tnp.at: values against NumPy, derivatives w.r.t. x and the values
# ---------------------------------------------------------------------------------------
XA = np.arange(1.0, 13.0).reshape(3, 4) / 3
WA = np.random.default_rng(0).standard_normal((3, 4))


def np_set(x: np.ndarray, idx: Any, v: Any) -> np.ndarray:
    out = x.copy()
    out[idx] = v
    return out


def np_add(x: np.ndarray, idx: Any, v: Any) -> np.ndarray:
    out = x.copy()
    np.add.at(out, idx, v)
    return out


INDICES = {
    "int": 1,
    "slice": (slice(0, 2), slice(1, None)),
    "column": (Ellipsis, 2),
    "fancy": ([0, 2], [3, 1]),
    "mask": XA > 2,
}


@pytest.mark.parametrize("name", sorted(INDICES))
def test_at_values_match_numpy(name: str) -> None:
    idx = INDICES[name]
    shape = XA[idx].shape
    v = np.random.default_rng(1).standard_normal(shape)
    close(tnp.at(XA)[idx].set(v), np_set(XA, idx, v))
    close(tnp.at(XA)[idx].add(v), np_add(XA, idx, v))
    close(tnp.at(XA)[idx].multiply(v), np_set(XA, idx, XA[idx] * v))
    close(tnp.at(XA)[idx].get(), XA[idx])
    close(tnp.at(XA)[idx].set(7.0), np_set(XA, idx, 7.0))
    close(XA, np.arange(1.0, 13.0).reshape(3, 4) / 3)  # the input is not modified


def test_at_add_repeated_indices_accumulate() -> None:
    x = np.zeros(4)
    v = np.array([1.0, 2.0, 4.0])
    close(tnp.at(x)[[0, 0, 2]].add(v), [3.0, 0.0, 4.0, 0.0])
    close(tnp.at(x)[[1, 1, 1]].add(1.0), [0.0, 3.0, 0.0, 0.0])


@pytest.mark.parametrize("name", sorted(INDICES))
def test_at_set_derivatives(name: str) -> None:
    idx = INDICES[name]
    v = np.random.default_rng(1).standard_normal(XA[idx].shape)
    f = lambda x, v: tnp.sum(tnp.at(x)[idx].set(v) * WA)
    gx, gv = T.grad(f, argnums=(0, 1))(XA, v)
    close(gx, np_set(WA, idx, 0.0))  # overwritten entries do not reach the output
    close(gv, WA[idx])
    tx = np.random.default_rng(2).standard_normal(XA.shape)
    tv = np.random.default_rng(3).standard_normal(v.shape)
    close(T.jvp(lambda x, v: tnp.at(x)[idx].set(v), (XA, v), (tx, tv))[1], np_set(tx, idx, tv))
    # a scalar value: its gradient sums over the written entries
    close(T.grad(lambda s: f(XA, s))(np.array(2.0)), np.sum(WA[idx]))


@pytest.mark.parametrize("name", sorted(INDICES))
def test_at_add_and_multiply_derivatives(name: str) -> None:
    idx = INDICES[name]
    v = np.random.default_rng(1).standard_normal(XA[idx].shape)
    add = lambda x, v: tnp.sum(tnp.at(x)[idx].add(v) * WA)
    gx, gv = T.grad(add, argnums=(0, 1))(XA, v)
    close(gx, WA)
    close(gv, WA[idx])
    mul = lambda x, v: tnp.sum(tnp.at(x)[idx].multiply(v) * WA)
    gx, gv = T.grad(mul, argnums=(0, 1))(XA, v)
    close(gx, np_set(WA, idx, WA[idx] * v))
    close(gv, WA[idx] * XA[idx])
    tx = np.random.default_rng(2).standard_normal(XA.shape)
    tv = np.random.default_rng(3).standard_normal(v.shape)
    close(T.jvp(lambda x, v: tnp.at(x)[idx].add(v), (XA, v), (tx, tv))[1], np_add(tx, idx, tv))
    expected = np_set(tx, idx, tx[idx] * v + XA[idx] * tv)
    close(T.jvp(lambda x, v: tnp.at(x)[idx].multiply(v), (XA, v), (tx, tv))[1], expected)


def test_at_get_derivatives() -> None:
    idx = ([0, 0, 2], [1, 1, 3])
    w = np.array([1.0, 2.0, 5.0])
    g = T.grad(lambda x: tnp.sum(tnp.at(x)[idx].get() * w))(XA)
    expected = np.zeros_like(XA)
    expected[0, 1] = 3.0  # repeated index: both cotangents arrive
    expected[2, 3] = 5.0
    close(g, expected)


def test_at_add_repeated_index_gradients() -> None:
    idx = [0, 0, 2]
    x = np.array([1.0, 2.0, 3.0, 4.0])
    w = np.array([1.0, 10.0, 100.0, 1000.0])
    f = lambda x, v: tnp.sum(tnp.at(x)[idx].add(v) * w)
    gx, gv = T.grad(f, argnums=(0, 1))(x, np.array([1.0, 2.0, 3.0]))
    close(gx, w)
    close(gv, [1.0, 1.0, 100.0])
    # a broadcast scalar added at a repeated index counts each occurrence
    close(T.grad(lambda s: f(x, s), argnums=0)(np.array(1.0)), 102.0)
    close(
        T.jvp(lambda v: tnp.at(x)[idx].add(v), (np.zeros(3),), (np.array([1.0, 2.0, 3.0]),))[1],
        [3.0, 0, 3.0, 0],
    )
    close(
        T.jacfwd(lambda v: tnp.at(x)[idx].add(v))(np.zeros(3)),
        T.jacrev(lambda v: tnp.at(x)[idx].add(v))(np.zeros(3)),
    )


@pytest.mark.parametrize("name", sorted(INDICES))
def test_at_jacobians_fwd_equal_rev(name: str) -> None:
    idx = INDICES[name]
    v = np.random.default_rng(1).standard_normal(XA[idx].shape)
    for op in ("set", "add", "multiply"):
        f = lambda x, v, op=op: getattr(tnp.at(x)[idx], op)(v)
        jf = T.jacfwd(f, argnums=(0, 1))(XA, v)
        jr = T.jacrev(f, argnums=(0, 1))(XA, v)
        close(jf[0], jr[0])
        close(jf[1], jr[1])


def test_at_second_order() -> None:
    # multiply is bilinear: d^2/dx dv sum(at(x)[1].multiply(v) * W) = W[1] on the written row
    f = lambda x, v: tnp.sum(tnp.at(x)[1].multiply(v) * WA)
    h = T.jacfwd(T.grad(f, argnums=1), argnums=0)(XA, np.ones(4))
    expected = np.zeros((4, 3, 4))
    for j in range(4):
        expected[j, 1, j] = WA[1, j]
    close(h, expected)
    # row 0 is overwritten by x[1]^2: f = sum(x[1]^2) + sum(x[1])
    h = T.hessian(lambda x: tnp.sum(tnp.at(x)[0].set(x[1] ** 2)))(XA[:2, :2])
    close(h, np.diag([0, 0, 2.0, 2.0]).reshape(2, 2, 2, 2))


def test_at_under_vmap_values_and_gradients() -> None:
    Xs = np.stack([XA, 2 * XA, -XA])
    Vs = np.random.default_rng(4).standard_normal((3, 4))
    out = T.vmap(lambda x, v: tnp.at(x)[[0, 0, 2]].add(v[:3, None]))(Xs, Vs)
    expected = [
        np_add(x, [0, 0, 2], np.broadcast_to(v[:3, None], (3, 4)))
        for x, v in zip(Xs, Vs, strict=True)
    ]
    close(out, np.stack(expected))
    f = lambda x, v: tnp.sum(tnp.at(x)[1].set(v) * WA) + tnp.sum(tnp.at(x)[[0, 0]].add(v) * WA)
    gx, gv = T.vmap(T.grad(f, argnums=(0, 1)))(Xs, Vs)
    loop = [T.grad(f, argnums=(0, 1))(x, v) for x, v in zip(Xs, Vs, strict=True)]
    close(gx, np.stack([g[0] for g in loop]))
    close(gv, np.stack([g[1] for g in loop]))
    close(gv, np.broadcast_to(WA[1] + 2 * WA[0], (3, 4)))
    # set zeroes row 1's cotangent, add passes W through: 2W except row 1
    close(gx, np.broadcast_to(np_set(2 * WA, 1, WA[1]), (3, 3, 4)))
    # grad of a vmapped update, unbatched values
    v = np.arange(4.0)
    g = T.grad(
        lambda v: tnp.sum(T.vmap(lambda x, v: tnp.at(x)[2].multiply(v), in_axes=(0, None))(Xs, v))
    )(v)
    close(g, np.sum(Xs[:, 2, :], axis=0))


# ---------------------------------------------------------------------------------------
# User primitives: T.primitive + T.defjvp / T.defvjp / T.defbatch
# ---------------------------------------------------------------------------------------
@T.primitive
def cube(x: Any) -> Any:
    return np.asarray(x) ** 3


T.defjvp(cube, lambda t, ans, x: 3 * x**2 * t)
T.defvjp(cube, lambda ans, x: lambda ct: 3 * x**2 * ct)
T.defbatch(cube, lambda values, dims: (cube(values[0]), dims[0]))


@T.primitive
def rowsum(x: Any) -> Any:
    """Sum over the last axis, a primitive whose batching rule must move the batch axis."""
    return np.sum(np.asarray(x), axis=-1)


T.defjvp(rowsum, lambda t, ans, x: rowsum(t))
T.defvjp(rowsum, lambda ans, x: lambda ct: tnp.broadcast_to(tnp.expand_dims(ct, -1), x.shape))


def _rowsum_batch(values: Any, dims: Any) -> tuple[Any, int]:
    (x,), (bd,) = values, dims
    return rowsum(tnp.moveaxis(x, bd, 0)), 0


T.defbatch(rowsum, _rowsum_batch)


@T.primitive
def scale_by(x: Any, k: Any) -> Any:
    return np.asarray(x) * k


T.defjvp(scale_by, lambda t, ans, x, k: t * k, None)  # k carries no derivative
T.defvjp(scale_by, lambda ans, x, k: lambda ct: ct * k, None)


def _scale_by_batch(values: Any, dims: Any) -> tuple[Any, int]:
    (x, k), (bx, bk) = values, dims
    assert bk is None, "this test only batches x"
    return scale_by(tnp.moveaxis(x, bx, 0), k), 0


T.defbatch(scale_by, _scale_by_batch)


def test_user_primitive_values_and_derivatives() -> None:
    assert isinstance(cube, T.Primitive)
    close(cube(XV), XV**3)
    close(T.grad(lambda x: tnp.sum(cube(x)))(XV), 3 * XV**2)
    close(T.jvp(cube, (XV,), (np.ones(3),))[1], 3 * XV**2)
    close(T.grad(T.grad(cube))(X0), 6 * X0)
    close(d(d(cube))(X0), 6 * X0)
    close(T.hessian(lambda x: tnp.sum(cube(x)))(XV), np.diag(6 * XV))
    close(T.jacfwd(cube)(XV), np.diag(3 * XV**2))
    close(T.jacrev(cube)(XV), np.diag(3 * XV**2))


def test_user_primitive_under_vmap() -> None:
    close(T.vmap(cube)(XB), XB**3)
    close(T.vmap(cube, in_axes=1)(XB), XB.T**3)
    close(T.vmap(T.grad(lambda x: tnp.sum(cube(x))))(XB), 3 * XB**2)
    close(T.grad(lambda x: tnp.sum(T.vmap(cube)(x)))(XB), 3 * XB**2)
    close(T.vmap(rowsum, in_axes=1)(XB[:, :, None] * np.ones(4)), XB.T * 4)
    close(T.vmap(rowsum)(XB), XB.sum(axis=1))
    close(T.vmap(rowsum, in_axes=1)(XB), XB.sum(axis=0))
    close(T.vmap(T.grad(lambda x: rowsum(x * x)))(XB), 2 * XB)
    close(T.jacfwd(rowsum)(XB), T.jacrev(rowsum)(XB))
    close(T.jacrev(rowsum)(XB), np.einsum("ik,j->ikj", np.eye(2), np.ones(3)))


def test_user_primitive_with_nondifferentiable_argument() -> None:
    k = np.array(2.5)
    close(T.grad(lambda x: tnp.sum(scale_by(x, k)))(XV), 2.5 * np.ones(3))
    gx, gk = T.grad(lambda x, k: tnp.sum(scale_by(x, k)), argnums=(0, 1))(XV, k)
    close(gx, 2.5 * np.ones(3))
    close(gk, 0.0)  # declared None: no derivative, and zeros (not None) at the boundary
    close(T.jvp(lambda x: scale_by(x, k), (XV,), (np.ones(3),))[1], 2.5 * np.ones(3))
    close(T.vmap(lambda x: scale_by(x, k), in_axes=1)(XB), 2.5 * XB.T)
