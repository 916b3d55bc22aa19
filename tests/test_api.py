"""The public API: argnums, has_aux, pytrees, dtypes, NumPy interop, tree_util, check_grads."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from numpy.testing import assert_allclose

import transforms as T
import transforms.numpy as tnp
from transforms.core import Primitive, Tracer, concrete
from transforms.forward import defjvp
from transforms.reverse import defvjp

register_pytree_node = T.tree_util.register_pytree_node
tree_flatten = T.tree_util.tree_flatten
tree_leaves = T.tree_util.tree_leaves
tree_map = T.tree_util.tree_map
tree_structure = T.tree_util.tree_structure
tree_unflatten = T.tree_util.tree_unflatten


def close(actual: Any, expected: Any, rtol: float = 1e-10, atol: float = 1e-12) -> None:
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert_allclose(actual, expected, rtol=rtol, atol=atol)


def is_plain_array(x: Any) -> bool:
    return isinstance(x, (np.ndarray, np.generic)) and not isinstance(x, Tracer)


X = np.array([0.5, -1.0, 2.0])
Y = np.array([1.5, 0.25])
M = np.array([[1.0, -2.0, 0.5], [3.0, 0.0, -1.0]])


# ---------------------------------------------------------------------------------------
# argnums
# ---------------------------------------------------------------------------------------
def three(x: Any, y: Any, z: Any) -> Any:
    return x * y**2 + tnp.sin(z)


def test_argnums_default_is_zero() -> None:
    close(T.grad(three)(2.0, 3.0, 0.5), 9.0)


@pytest.mark.parametrize(
    ("argnums", "expected"),
    [(0, 9.0), (1, 12.0), (2, np.cos(0.5)), (-1, np.cos(0.5)), (-2, 12.0), (-3, 9.0)],
)
def test_argnums_int(argnums: int, expected: float) -> None:
    g = T.grad(three, argnums=argnums)(2.0, 3.0, 0.5)
    assert not isinstance(g, tuple)
    close(g, expected)


@pytest.mark.parametrize(
    ("argnums", "expected"),
    [
        ((0,), (9.0,)),
        ((0, 2), (9.0, np.cos(0.5))),
        ((2, 0), (np.cos(0.5), 9.0)),
        ((-1, 1), (np.cos(0.5), 12.0)),
        ([0, 1, 2], (9.0, 12.0, np.cos(0.5))),
    ],
)
def test_argnums_tuple(argnums: Any, expected: tuple[float, ...]) -> None:
    grads = T.grad(three, argnums=argnums)(2.0, 3.0, 0.5)
    assert isinstance(grads, tuple)
    assert len(grads) == len(expected)
    for g, e in zip(grads, expected, strict=True):
        close(g, e)


def test_argnums_value_and_grad() -> None:
    value, grads = T.value_and_grad(three, argnums=(0, 1))(2.0, 3.0, 0.5)
    close(value, 18.0 + np.sin(0.5))
    close(grads[0], 9.0)
    close(grads[1], 12.0)


def test_argnums_jacobians() -> None:
    def f(a: Any, b: Any) -> Any:
        return M @ a * tnp.sum(b)

    for jac in (T.jacfwd, T.jacrev):
        close(jac(f, argnums=0)(X, Y), M * np.sum(Y))
        close(jac(f, argnums=-1)(X, Y), np.outer(M @ X, np.ones(2)))
        ja, jb = jac(f, argnums=(0, 1))(X, Y)
        close(ja, M * np.sum(Y))
        close(jb, np.outer(M @ X, np.ones(2)))


def test_keyword_arguments_are_held_fixed() -> None:
    def f(x: Any, *, scale: float) -> Any:
        return scale * tnp.sum(x**2)

    close(T.grad(f)(X, scale=3.0), 6 * X)


# ---------------------------------------------------------------------------------------
# has_aux: the aux is returned with this transform's tracers stripped
# ---------------------------------------------------------------------------------------
def with_aux(x: Any) -> tuple[Any, Any]:
    return tnp.sum(x**2), {"double": 2 * x, "label": "hi", "count": 3}


def check_aux(aux: Any, x: np.ndarray) -> None:
    assert set(aux) == {"double", "label", "count"}
    assert is_plain_array(aux["double"]), type(aux["double"])
    close(aux["double"], 2 * x)
    assert aux["label"] == "hi"
    assert aux["count"] == 3


def test_has_aux_grad() -> None:
    g, aux = T.grad(with_aux, has_aux=True)(X)
    close(g, 2 * X)
    check_aux(aux, X)


def test_has_aux_value_and_grad() -> None:
    (value, aux), g = T.value_and_grad(with_aux, has_aux=True)(X)
    close(value, np.sum(X**2))
    assert is_plain_array(value)
    close(g, 2 * X)
    check_aux(aux, X)


def test_has_aux_jvp() -> None:
    t = np.array([1.0, 0.0, 2.0])
    out, tangent, aux = T.jvp(with_aux, (X,), (t,), has_aux=True)
    close(out, np.sum(X**2))
    close(tangent, 2 * X @ t)
    check_aux(aux, X)


def test_has_aux_vjp() -> None:
    out, pullback, aux = T.vjp(with_aux, X, has_aux=True)
    close(out, np.sum(X**2))
    (g,) = pullback(np.float64(2.0))
    close(g, 4 * X)
    check_aux(aux, X)


@pytest.mark.parametrize("jac", [T.jacfwd, T.jacrev])
def test_has_aux_jacobians(jac: Any) -> None:
    def f(x: Any) -> tuple[Any, Any]:
        return tnp.sin(x), {"double": 2 * x, "label": "hi", "count": 3}

    j, aux = jac(f, has_aux=True)(X)
    close(j, np.diag(np.cos(X)))
    check_aux(aux, X)


def test_has_aux_hessian() -> None:
    h, aux = T.hessian(with_aux, has_aux=True)(X)
    close(h, 2 * np.eye(3))
    check_aux(aux, X)


def test_has_aux_under_outer_transform_keeps_outer_derivative() -> None:
    # aux computed from an outer tracer stays differentiable by the outer transform
    def f(x: Any) -> Any:
        _, aux = T.grad(lambda y: (tnp.sum(y * x), x * y), has_aux=True)(2 * x)
        return tnp.sum(aux)  # sum(x * 2x) = 2 sum(x^2)

    close(T.grad(f)(X), 4 * X)


def test_aux_of_non_array_types_untouched() -> None:
    g, aux = T.grad(lambda x: (x * x, None), has_aux=True)(3.0)
    close(g, 6.0)
    assert aux is None


# ---------------------------------------------------------------------------------------
# pytrees
# ---------------------------------------------------------------------------------------
def test_grad_of_dict_tuple_list_none_tree() -> None:
    params = {"a": X, "b": (Y, [2.0, np.array(-1.0)]), "c": None}

    def f(p: Any) -> Any:
        return tnp.sum(p["a"] ** 2) + tnp.sum(tnp.sin(p["b"][0])) + p["b"][1][0] * p["b"][1][1]

    g = T.grad(f)(params)
    assert isinstance(g, dict)
    assert set(g) == {"a", "b", "c"}
    assert g["c"] is None
    assert isinstance(g["b"], tuple)
    assert isinstance(g["b"][1], list)
    close(g["a"], 2 * X)
    close(g["b"][0], np.cos(Y))
    close(g["b"][1][0], -1.0)
    close(g["b"][1][1], 2.0)


def test_grad_of_list_argument_returns_list() -> None:
    g = T.grad(lambda xs: xs[0] * xs[1] ** 2)([3.0, 2.0])
    assert isinstance(g, list)
    close(g[0], 4.0)
    close(g[1], 12.0)


def test_value_and_grad_pytree_with_argnums() -> None:
    def loss(params: Any, data: Any) -> Any:
        w, b = params
        return tnp.sum((M @ w + b - data) ** 2)

    w0, b0, data = X, np.array([0.5, -0.5]), np.array([1.0, 2.0])
    value, (gw, gb) = T.value_and_grad(loss)((w0, b0), data)
    r = M @ w0 + b0 - data
    close(value, np.sum(r**2))
    close(gw, 2 * M.T @ r)
    close(gb, 2 * r)


def pair_fn(x: Any, y: Any) -> dict[str, Any]:
    """x: (3,), y: (2,) -> {'u': (3, 2) outer product, 'v': scalar, 'w': [ (2,) ]}."""
    return {
        "u": tnp.reshape(x, (3, 1)) * tnp.reshape(y, (1, 2)),
        "v": tnp.sum(x) * tnp.sum(y),
        "w": [y**2],
    }


def pair_expected() -> dict[str, Any]:
    ju_x = np.zeros((3, 2, 3))
    ju_y = np.zeros((3, 2, 2))
    for i in range(3):
        for j in range(2):
            ju_x[i, j, i] = Y[j]
            ju_y[i, j, j] = X[i]
    return {
        "u": (ju_x, ju_y),
        "v": (np.full(3, np.sum(Y)), np.full(2, np.sum(X))),
        "w": [(np.zeros((2, 3)), np.diag(2 * Y))],
    }


@pytest.mark.parametrize("jac", [T.jacfwd, T.jacrev])
def test_jacobian_tree_product_layout(jac: Any) -> None:
    # output tree outer, input tree inner; each block has out.shape + in.shape
    j = jac(pair_fn, argnums=(0, 1))(X, Y)
    expected = pair_expected()
    assert isinstance(j, dict)
    assert set(j) == {"u", "v", "w"}
    assert isinstance(j["u"], tuple)
    assert isinstance(j["w"], list)
    assert isinstance(j["w"][0], tuple)
    assert np.shape(j["u"][0]) == (3, 2, 3)
    assert np.shape(j["u"][1]) == (3, 2, 2)
    assert np.shape(j["v"][0]) == (3,)
    assert np.shape(j["w"][0][1]) == (2, 2)
    for a, e in zip(tree_leaves(j), tree_leaves(expected), strict=True):
        close(a, e)


@pytest.mark.parametrize("jac", [T.jacfwd, T.jacrev])
def test_jacobian_of_dict_input_single_argnum(jac: Any) -> None:
    def f(p: Any) -> Any:
        return tnp.tanh(p["w"] @ X + p["b"])

    params = {"w": M, "b": np.array([0.1, -0.2])}
    j = jac(f)(params)
    t = np.tanh(M @ X + params["b"])
    d = 1 - t**2
    expected_w = np.zeros((2, 2, 3))
    for i in range(2):
        expected_w[i, i, :] = d[i] * X
    assert set(j) == {"b", "w"}
    close(j["w"], expected_w)
    close(j["b"], np.diag(d))


@pytest.mark.parametrize("jac", [T.jacfwd, T.jacrev])
def test_jacobian_matrix_in_matrix_out_layout(jac: Any) -> None:
    # f(W) = W @ B for W (2, 3), B (3, 4): d out[i, k] / d W[j, l] = delta_ij B[l, k]
    b = np.arange(12.0).reshape(3, 4)
    j = jac(lambda w: w @ b)(M)
    assert np.shape(j) == (2, 4, 2, 3)
    expected = np.einsum("ij,lk->ikjl", np.eye(2), b)
    close(j, expected)


@pytest.mark.parametrize("jac", [T.jacfwd, T.jacrev])
def test_jacobian_output_tuple_with_none(jac: Any) -> None:
    j = jac(lambda x: (x * 2.0, None, tnp.sum(x)))(X)
    assert isinstance(j, tuple)
    assert len(j) == 3
    assert j[1] is None
    close(j[0], 2 * np.eye(3))
    close(j[2], np.ones(3))


@pytest.mark.parametrize("jac", [T.jacfwd, T.jacrev])
def test_jacobian_of_scalar_in_scalar_out(jac: Any) -> None:
    close(jac(tnp.sin)(0.3), np.cos(0.3))
    close(jac(lambda x: x * X)(2.0), X)  # vector output of a scalar: shape (3,)


def test_vjp_pytree_inputs_and_outputs() -> None:
    def f(p: Any, y: Any) -> Any:
        return {"s": tnp.sum(p["a"] * y[0]), "t": (p["a"] * 2.0, y[1] ** 2)}

    p = {"a": X}
    yt = (np.array([1.0, 2.0, 3.0]), 4.0)
    out, pullback = T.vjp(f, p, yt)
    close(out["s"], np.sum(X * yt[0]))
    close(out["t"][0], 2 * X)
    close(out["t"][1], 16.0)
    ct = {"s": np.float64(2.0), "t": (np.array([1.0, 0.0, -1.0]), np.float64(0.5))}
    gp, gy = pullback(ct)
    assert isinstance(gp, dict)
    assert isinstance(gy, tuple)
    close(gp["a"], 2.0 * yt[0] + 2.0 * ct["t"][0])
    close(gy[0], 2.0 * X)
    close(gy[1], 0.5 * 2 * 4.0)


def test_jvp_pytree_primals() -> None:
    def f(p: Any) -> Any:
        return p["a"] * p["b"]

    out, tangent = T.jvp(f, ({"a": 2.0, "b": 3.0},), ({"a": 1.0, "b": 10.0},))
    close(out, 6.0)
    close(tangent, 3.0 + 20.0)


# ---------------------------------------------------------------------------------------
# dtypes and scalars
# ---------------------------------------------------------------------------------------
def f32_fun(x: Any) -> Any:
    return tnp.sin(x) * 2.0 + x**2


def test_float32_gradient_is_float32() -> None:
    x32 = X.astype(np.float32)
    g = T.grad(lambda x: tnp.sum(f32_fun(x)))(x32)
    assert g.dtype == np.float32
    close(g, (2 * np.cos(X) + 2 * X).astype(np.float32), rtol=1e-6, atol=1e-6)


def test_float32_jacobians_jvp_vjp_are_float32() -> None:
    x32 = X.astype(np.float32)
    expected = np.diag(2 * np.cos(X) + 2 * X)
    for jac in (T.jacfwd, T.jacrev):
        j = jac(f32_fun)(x32)
        assert j.dtype == np.float32
        close(j, expected, rtol=1e-6, atol=1e-6)
    out, tangent = T.jvp(f32_fun, (x32,), (np.ones(3, np.float32),))
    assert out.dtype == np.float32
    assert tangent.dtype == np.float32
    _, pullback = T.vjp(f32_fun, x32)
    (ct,) = pullback(np.ones(3, np.float32))
    assert ct.dtype == np.float32
    h = T.hessian(lambda x: tnp.sum(f32_fun(x)))(x32)
    assert h.dtype == np.float32
    close(h, np.diag(-2 * np.sin(X) + 2), rtol=1e-5, atol=1e-5)


def test_float32_scalar_gradient() -> None:
    g = T.grad(lambda x: x * x)(np.float32(2.0))
    assert np.asarray(g).dtype == np.float32
    close(g, np.float32(4.0))


def test_python_float_input() -> None:
    close(T.grad(tnp.sin)(1.5), np.cos(1.5))
    close(T.grad(lambda x: x**3)(2.0), 12.0)
    out, tangent = T.jvp(lambda x: x**3, (2.0,), (1.0,))
    close(out, 8.0)
    close(tangent, 12.0)
    _, pullback = T.vjp(lambda x: x**3, 2.0)
    close(pullback(1.0)[0], 12.0)
    close(T.jacfwd(lambda x: x**3)(2.0), 12.0)
    close(T.jacrev(lambda x: x**3)(2.0), 12.0)
    close(T.hessian(lambda x: x**3)(2.0), 12.0)


def test_complex_jvp() -> None:
    z = np.array([1.0 + 2.0j, -0.5j])
    out, tangent = T.jvp(lambda x: x * x, (z,), (np.ones(2, complex),))
    close(out, z * z)
    close(tangent, 2 * z)


# ---------------------------------------------------------------------------------------
# zeros where the output does not depend on an input
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "fun",
    [lambda x: 3.0, lambda x: np.float64(-1.0), lambda x: tnp.sum(np.ones(4))],
    ids=["python_float", "numpy_scalar", "constant_array_sum"],
)
def test_constant_output_gives_zero_gradient(fun: Any) -> None:
    x = np.ones((2, 3))
    g = T.grad(fun)(x)
    assert np.shape(g) == (2, 3)
    close(g, np.zeros((2, 3)))


def test_constant_output_zero_jacobians_and_tangents() -> None:
    for jac in (T.jacfwd, T.jacrev):
        close(jac(lambda x: np.ones(2))(X), np.zeros((2, 3)))
    out, tangent = T.jvp(lambda x: np.ones(2), (X,), (np.ones(3),))
    close(out, np.ones(2))
    close(tangent, np.zeros(2))
    _, pullback = T.vjp(lambda x: np.ones(2), X)
    close(pullback(np.ones(2))[0], np.zeros(3))


def test_output_through_nondifferentiable_ops_only_gives_zero_gradient() -> None:
    g = T.grad(lambda x: tnp.sum(tnp.sign(x) * 0.0 + tnp.zeros_like(x)))(X)
    close(g, np.zeros(3))


def test_unused_argument_gets_zeros() -> None:
    gx, gy = T.grad(lambda x, y: tnp.sum(x**2), argnums=(0, 1))(X, np.ones((2, 2)))
    close(gx, 2 * X)
    assert np.shape(gy) == (2, 2)
    close(gy, np.zeros((2, 2)))
    gp = T.grad(lambda p: tnp.sum(p["used"] ** 2))({"used": X, "unused": Y})
    close(gp["unused"], np.zeros(2))


def test_unused_argument_zero_jacobian_blocks() -> None:
    for jac in (T.jacfwd, T.jacrev):
        jx, jy = jac(lambda x, y: x * 2.0, argnums=(0, 1))(X, Y)
        close(jx, 2 * np.eye(3))
        close(jy, np.zeros((3, 2)))


# ---------------------------------------------------------------------------------------
# indexing
# ---------------------------------------------------------------------------------------
W3 = np.array([1.0, 2.0, 3.0])


def test_repeated_fancy_index_accumulates_in_grad() -> None:
    g = T.grad(lambda x: tnp.sum(x[[0, 0, 1]] * W3))(X)
    close(g, [W3[0] + W3[1], W3[2], 0.0])
    g = T.grad(lambda x: tnp.sum(x[np.array([2, 2, 2])]))(X)
    close(g, [0.0, 0.0, 3.0])


def test_repeated_fancy_index_jacobians_and_hessian() -> None:
    expected = np.array([[1.0, 0, 0], [1.0, 0, 0], [0, 1.0, 0]])
    close(T.jacfwd(lambda x: x[[0, 0, 1]])(X), expected)
    close(T.jacrev(lambda x: x[[0, 0, 1]])(X), expected)
    # f = 2 x0^2 + x1^2
    close(T.hessian(lambda x: tnp.sum(x[[0, 0, 1]] ** 2))(X), np.diag([4.0, 2.0, 0.0]))


def test_basic_and_boolean_indexing_grad() -> None:
    mat = np.arange(6.0).reshape(2, 3)
    g = T.grad(lambda a: tnp.sum(a[1, 1:] ** 2) + a[0, 0])(mat)
    close(g, [[1.0, 0.0, 0.0], [0.0, 8.0, 10.0]])
    mask = np.array([True, False, True])
    close(T.grad(lambda x: tnp.sum(x[mask] * 3.0))(X), [3.0, 0.0, 3.0])


# ---------------------------------------------------------------------------------------
# NumPy interop: ndarray on the left, raw NumPy functions on tracers
# ---------------------------------------------------------------------------------------
C = np.array([2.0, -3.0, 0.5])


@pytest.mark.parametrize(
    ("fun", "expected"),
    [
        (lambda x: C * x, np.diag(C)),
        (lambda x: C + x, np.eye(3)),
        (lambda x: C - x, -np.eye(3)),
        (lambda x: C / x, np.diag(-C / X**2)),
        (lambda x: np.abs(C) ** x, np.diag(np.log(np.abs(C)) * np.abs(C) ** X)),
        (lambda x: M @ x, M),
        (lambda x: 2.0 * x, 2 * np.eye(3)),
        (lambda x: 1.0 - x, -np.eye(3)),
    ],
    ids=["mul", "add", "sub", "div", "pow", "matmul", "float_mul", "float_sub"],
)
def test_ndarray_on_the_left(fun: Any, expected: np.ndarray) -> None:
    close(T.jacfwd(fun)(X), expected)
    close(T.jacrev(fun)(X), expected)


def test_ndarray_on_the_left_matrix_times_matrix() -> None:
    b = np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.0]])
    close(T.grad(lambda w: tnp.sum(M @ w))(b), M.T @ np.ones((2, 2)))
    close(T.grad(lambda w: tnp.sum(w @ M))(b), np.ones((3, 3)) @ M.T)


@pytest.mark.parametrize(
    ("fun", "expected_grad"),
    [
        (lambda x: np.sum(np.sin(x)), np.cos(X)),
        (lambda x: np.sum(np.exp(x) * x), np.exp(X) * (1 + X)),
        (lambda x: np.mean(np.tanh(x)), (1 - np.tanh(X) ** 2) / 3),
        (lambda x: np.sum(np.dot(M, x)), M.sum(axis=0)),
        (lambda x: np.sum(np.square(x)), 2 * X),
        (lambda x: np.prod(x), np.array([X[1] * X[2], X[0] * X[2], X[0] * X[1]])),
        (lambda x: np.max(x * x), np.array([0.0, 0.0, 4.0])),
        (lambda x: np.sum(np.reshape(x, (3, 1)) * C), np.full(3, C.sum())),
        (lambda x: np.sum(np.concatenate([x, x * 2.0])), 3 * np.ones(3)),
        (lambda x: x.sum() + x.mean(), (1 + 1 / 3) * np.ones(3)),
    ],
    ids=[
        "sin_sum",
        "exp",
        "mean_tanh",
        "dot",
        "square",
        "prod",
        "max",
        "reshape",
        "concatenate",
        "methods",
    ],
)
def test_raw_numpy_on_tracer_dispatches(fun: Any, expected_grad: np.ndarray) -> None:
    close(T.grad(fun)(X), expected_grad)
    # forward mode agrees, and so does a second-order composition
    close(T.jacfwd(fun)(X), expected_grad)


def test_raw_numpy_inside_nested_transforms() -> None:
    close(T.grad(T.grad(lambda x: np.sin(x)))(0.7), -np.sin(0.7))
    close(T.hessian(lambda x: np.sum(np.sin(x)))(X), np.diag(-np.sin(X)))


# ---------------------------------------------------------------------------------------
# building arrays from tracers
# ---------------------------------------------------------------------------------------
def test_array_of_tracers() -> None:
    def f(x: Any, y: Any) -> Any:
        return tnp.array([x * y, tnp.sin(x), y])

    for jac in (T.jacfwd, T.jacrev):
        jx, jy = jac(f, argnums=(0, 1))(0.5, 2.0)
        close(jx, [2.0, np.cos(0.5), 0.0])
        close(jy, [0.5, 0.0, 1.0])
    weighted = lambda x, y: tnp.sum(tnp.array([x, y]) * np.array([3.0, 4.0]))
    gx, gy = T.grad(weighted, argnums=(0, 1))(1.0, 2.0)
    close(gx, 3.0)
    close(gy, 4.0)


def test_array_of_tracers_mixed_with_constants_nested_lists() -> None:
    def f(x: Any) -> Any:
        a = tnp.array([[x, 1.0], [2.0, x * x]])
        return tnp.sum(a * np.array([[1.0, 10.0], [100.0, 3.0]]))

    close(T.grad(f)(1.5), 1.0 + 3.0 * 2 * 1.5)


def test_concatenate_with_constant() -> None:
    const = np.array([7.0, 8.0])
    w = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    g = T.grad(lambda x: tnp.sum(tnp.concatenate([x, const]) * w))(X)
    close(g, w[:3])
    g = T.grad(lambda x: tnp.sum(tnp.concatenate([const, x**2]) * w))(X)
    close(g, 2 * X * w[2:])
    j = T.jacfwd(lambda x: tnp.concatenate([x, const]))(X)
    close(j, np.vstack([np.eye(3), np.zeros((2, 3))]))


def test_stack_of_tracers_and_constants() -> None:
    j = T.jacrev(lambda x: tnp.stack([x, C, x * C], axis=1))(X)
    assert j.shape == (3, 3, 3)
    expected = np.zeros((3, 3, 3))
    for i in range(3):
        expected[i, 0, i] = 1.0
        expected[i, 2, i] = C[i]
    close(j, expected)


# ---------------------------------------------------------------------------------------
# tree_util
# ---------------------------------------------------------------------------------------
class Point:
    def __init__(self, x: Any, y: Any) -> None:
        self.x = x
        self.y = y


register_pytree_node(Point, lambda p: ((p.x, p.y), None), lambda _, xy: Point(*xy))


def test_tree_flatten_unflatten_roundtrip() -> None:
    tree = {"b": [1, (2, None)], "a": (3.0, {"z": 4, "y": np.ones(2)}), "c": None}
    leaves, treedef = tree_flatten(tree)
    # dict children in sorted key order, None has no leaves
    assert len(leaves) == 5
    assert leaves[0] == 3.0
    assert leaves[1] is tree["a"][1]["y"]  # 'y' < 'z'
    assert leaves[2] == 4
    assert leaves[3:] == [1, 2]
    rebuilt = tree_unflatten(treedef, leaves)
    assert rebuilt["c"] is None
    assert rebuilt["b"] == [1, (2, None)]
    assert isinstance(rebuilt["a"], tuple)
    assert rebuilt["a"][1]["z"] == 4
    assert tree_structure(rebuilt) == treedef
    assert tree_leaves(tree) == leaves


def test_tree_unflatten_wrong_leaf_count() -> None:
    _, treedef = tree_flatten((1, 2))
    with pytest.raises(ValueError, match="expected 2 leaves"):
        tree_unflatten(treedef, [1])


def test_tree_map_single_and_multiple_trees() -> None:
    a = {"p": (1.0, 2.0), "q": [3.0]}
    b = {"p": (10.0, 20.0), "q": [30.0]}
    assert tree_map(lambda u: u * 2, a) == {"p": (2.0, 4.0), "q": [6.0]}
    assert tree_map(lambda u, v: u + v, a, b) == {"p": (11.0, 22.0), "q": [33.0]}
    with pytest.raises(ValueError, match="structures differ"):
        tree_map(lambda u, v: u + v, a, {"p": (1.0, 2.0), "q": (3.0,)})


def test_registered_custom_class_roundtrip() -> None:
    tree = [Point(1.0, (2.0, 3.0)), {"k": Point(4.0, None)}]
    leaves, treedef = tree_flatten(tree)
    assert leaves == [1.0, 2.0, 3.0, 4.0]
    rebuilt = tree_unflatten(treedef, [10 * v for v in leaves])
    assert isinstance(rebuilt[0], Point)
    assert rebuilt[0].x == 10.0
    assert rebuilt[0].y == (20.0, 30.0)
    assert isinstance(rebuilt[1]["k"], Point)
    assert rebuilt[1]["k"].y is None
    mapped = tree_map(lambda v: -v, tree)
    assert isinstance(mapped[0], Point)
    assert mapped[0].y == (-2.0, -3.0)


def test_register_twice_raises() -> None:
    with pytest.raises(ValueError, match="already registered"):
        register_pytree_node(Point, lambda p: ((p.x, p.y), None), lambda _, xy: Point(*xy))


def test_grad_and_jacobian_of_registered_class() -> None:
    def f(p: Point) -> Any:
        return tnp.sum(p.x * tnp.sin(p.y))

    p = Point(X, np.array([0.1, 0.2, 0.3]))
    g = T.grad(f)(p)
    assert isinstance(g, Point)
    close(g.x, np.sin(p.y))
    close(g.y, X * np.cos(p.y))
    j = T.jacrev(lambda q: q.x * q.y)(p)
    assert isinstance(j, Point)
    close(j.x, np.diag(p.y))
    close(j.y, np.diag(X))
    out, pullback = T.vjp(lambda q: Point(q.x * 2.0, tnp.sum(q.y)), p)
    assert isinstance(out, Point)
    (ct,) = pullback(Point(np.ones(3), np.float64(1.0)))
    close(ct.x, 2 * np.ones(3))
    close(ct.y, np.ones(3))


# ---------------------------------------------------------------------------------------
# check_grads
# ---------------------------------------------------------------------------------------
def test_check_grads_passes_on_correct_functions() -> None:
    T.check_grads(lambda x: tnp.sum(tnp.tanh(M @ x) ** 2), (X,), order=2)
    T.check_grads(lambda x, y: x * tnp.sin(y), (X, X + 1.0), order=3)
    T.check_grads(lambda p: p["a"] * tnp.exp(p["b"]), ({"a": X, "b": -X},), order=2)


def _make_sin_like(name: str, jvp_factor: float, vjp_factor: float) -> Primitive:
    prim = Primitive(name, np.sin)
    defjvp(prim, lambda t, ans, x: t * tnp.cos(x) * jvp_factor)
    defvjp(prim, lambda ans, x: lambda ct: ct * tnp.cos(x) * vjp_factor)
    return prim


def test_check_grads_passes_on_correct_custom_rule() -> None:
    good = _make_sin_like("good_sin", 1.0, 1.0)
    T.check_grads(good, (X,), order=1)
    close(T.grad(lambda x: tnp.sum(good(x)))(X), np.cos(X))


def test_check_grads_catches_wrong_jvp_rule() -> None:
    bad = _make_sin_like("bad_jvp_sin", 2.0, 1.0)
    with pytest.raises(AssertionError, match="jvp vs finite differences"):
        T.check_grads(bad, (X,), order=1, modes=("fwd",))
    with pytest.raises(AssertionError):
        T.check_grads(bad, (X,), order=1)


def test_check_grads_catches_wrong_vjp_rule() -> None:
    bad = _make_sin_like("bad_vjp_sin", 1.0, -1.0)
    T.check_grads(bad, (X,), order=1, modes=("fwd",))  # the forward rule is right
    with pytest.raises(AssertionError, match="vjp"):
        T.check_grads(bad, (X,), order=1, modes=("rev",))
    with pytest.raises(AssertionError, match="vjp vs jvp"):
        T.check_grads(bad, (X,), order=1)


def test_check_grads_catches_wrong_second_order_rule() -> None:
    # the first derivative is right, but its rules use the primal value as a constant
    # (dropping the derivative): the second derivative comes out 0 instead of -sin x
    prim = Primitive("sin_frozen_derivative", np.sin)
    defjvp(prim, lambda t, ans, x: t * np.cos(np.asarray(concrete(x))))
    defvjp(prim, lambda ans, x: lambda ct: ct * np.cos(np.asarray(concrete(x))))
    T.check_grads(prim, (X,), order=1)
    close(T.grad(lambda x: tnp.sum(prim(x)))(X), np.cos(X))
    with pytest.raises(AssertionError):
        T.check_grads(prim, (X,), order=2)


def test_check_grads_rejects_unknown_mode() -> None:
    with pytest.raises(ValueError, match="unknown mode"):
        T.check_grads(tnp.sin, (X,), modes=("sideways",))


# ---- the unit seed of grad: no operations, never handed out -------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_grad_seed_is_never_returned_and_stays_one(dtype: Any) -> None:
    """grad's seed is a shared read-only one that multiply recognizes; a derivative that is
    exactly the seed (or a view of it) is returned as a fresh, writeable array."""
    x = np.asarray(0.5, dtype=dtype)
    for f in (lambda v: v, lambda v: v + 0.0, lambda v: tnp.reshape(tnp.reshape(v, (1,)), ())):
        g = T.grad(f)(x)
        assert g.dtype == dtype and g.shape == ()
        assert g.flags.writeable and g.base is None
        g[...] = 7.0  # the caller's own array
    close(T.grad(lambda v: v * 3.0)(x), 3.0)
    close(T.grad(lambda v: v)(x), 1.0)  # the seed is still one after the writes above


def test_grad_seed_skips_products_under_nesting() -> None:
    """The products of the seed are not recorded: the second derivative of sin(x) * x runs
    fewer primitives than with a plain ones seed, and is exact."""
    f = lambda v: tnp.sin(v) * v
    x = 0.3
    close(T.grad(T.grad(f))(x), 2 * np.cos(x) - x * np.sin(x))
    with_seed = T.make_trace(T.grad(T.grad(f)))(x).equations
    plain_one = T.make_trace(T.grad(lambda v: T.vjp(f, v)[1](np.ones(()))[0]))(x).equations
    assert not any(eq.primitive == "ones_like" for eq in with_seed)
    assert len(with_seed) < len(plain_one)


def test_multiply_by_a_plain_one_is_still_a_product() -> None:
    """Only the seed object is recognized: a user's one multiplies, as NumPy does."""
    one = np.ones(())
    y = np.array([1.0, -0.0, np.inf])
    product = tnp.multiply(one, y)
    assert product is not y
    close(product, y)


# ---- a single output (or input) element: one pullback (or jvp), no vmap -------------------
def test_jacobians_with_one_output_or_input_element() -> None:
    x = np.array([0.3, -0.7])
    f = lambda v: tnp.reshape(tnp.sum(tnp.sin(v)), (1, 1))
    close(T.jacrev(f)(x), np.cos(x).reshape(1, 1, 2))
    close(T.jacfwd(f)(x), np.cos(x).reshape(1, 1, 2))
    tree = lambda v: {"one": tnp.sum(v * v), "none": tnp.zeros((0,)) * tnp.sum(v)}
    jac = T.jacrev(tree)(x)
    close(jac["one"], 2 * x)
    assert jac["none"].shape == (0, 2)
    s = np.asarray(0.4)
    g = lambda u: (tnp.stack([tnp.sin(u), u * u]), u)
    jac_s, aux = T.jacfwd(g, has_aux=True)(s)
    close(jac_s, np.array([np.cos(0.4), 0.8]))
    close(aux, 0.4)
    hess = T.hessian(lambda u: tnp.sin(u) * u)(s)
    close(hess, 2 * np.cos(0.4) - 0.4 * np.sin(0.4))
    seedless = T.jacrev(lambda v: tnp.sum(v))(x)
    assert seedless.flags.writeable and seedless.shape == (2,)


def test_matmul_of_two_matrices_in_reverse_mode_and_nested() -> None:
    """The two-matrix pullbacks (``ct @ y.T``, ``x.T @ ct``): the gradient of
    ``sum(sin(X @ W))`` with respect to both, and its Hessian-vector product (the pullbacks
    differentiated again), against the closed forms."""
    rng = np.random.default_rng(3)
    X, W, V = rng.standard_normal((4, 3)), rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    g_X, g_W = T.grad(lambda X, W: tnp.sum(tnp.sin(X @ W)), argnums=(0, 1))(X, W)
    assert_allclose(g_X, np.cos(X @ W) @ W.T, rtol=1e-13)
    assert_allclose(g_W, X.T @ np.cos(X @ W), rtol=1e-13)
    _, (Hv,) = T.hvp(lambda W: tnp.sum(tnp.sin(X @ W)), (W,), (V,))
    assert_allclose(Hv, X.T @ (-np.sin(X @ W) * (X @ V)), rtol=1e-12)
    g2 = T.grad(lambda W: tnp.sum(T.grad(lambda W: tnp.sum(tnp.sin(X @ W)))(W) * V))(W)
    assert_allclose(g2, Hv, rtol=1e-12)
