"""Laplacians, Hessian traces and diagonals, order-k derivatives (issue 35): every op-spec
row's scalar reduction against ``trace(hessian)``, ``diag(hessian)`` and nested ``grad``;
closed forms; the Hutchinson estimator; compositions with ``grad`` and ``vmap``; errors."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from op_specs import OP_SPECS, Case, OpSpec, cases
from strategies import seeds

import transforms as T
import transforms.numpy as tnp
from transforms.core.tree_util import tree_flatten
from transforms.taylor import collapsed_jet

specs = pytest.mark.parametrize("spec", OP_SPECS, ids=lambda s: s.name)
_ONE = settings(max_examples=1, suppress_health_check=list(HealthCheck), deadline=None)


def _scalar(case: Case, rng: np.random.Generator) -> tuple[Callable[[Any], Any], np.ndarray]:
    """The row as a scalar function of all its arguments raveled into one vector (a random
    weighted sum of the real parts of its outputs), and that vector."""
    sizes = [a.size for a in case.args]
    shapes = [a.shape for a in case.args]
    outs = [np.asarray(o) for o in tree_flatten(case.f(*case.args))[0]]
    weights = [rng.uniform(-1, 1, o.shape) for o in outs]

    def g(z: Any) -> Any:
        xs, start = [], 0
        for size, shape in zip(sizes, shapes, strict=True):
            xs.append(tnp.reshape(z[start : start + size], shape))
            start += size
        total: Any = 0.0
        for o, w in zip(tree_flatten(case.f(*xs))[0], weights, strict=True):
            total = total + tnp.sum(w * tnp.real(o))
        return total

    return g, np.concatenate([a.ravel() for a in case.args])


def _close(actual: Any, expected: Any, what: str) -> None:
    expected = np.asarray(expected)
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    np.testing.assert_allclose(actual, expected, rtol=1e-7, atol=1e-9 * scale, err_msg=what)


@specs
@_ONE
@given(data=st.data())
def test_laplacian_and_hessian_diag_match_the_hessian(spec: OpSpec, data: st.DataObject) -> None:
    case = data.draw(cases(spec), label="case")
    rng = np.random.default_rng(data.draw(seeds(), label="seed"))
    g, z = _scalar(case, rng)
    if z.size == 0:
        return
    h = np.asarray(T.hessian(g)(z))
    _close(T.laplacian(g)(z), np.trace(h), f"{case}: laplacian")
    _close(T.hessian_diag(g)(z), np.diag(h), f"{case}: hessian_diag")


@specs
@_ONE
@given(data=st.data())
def test_directional_derivatives_of_order_3_match_nested_grad(
    spec: OpSpec, data: st.DataObject
) -> None:
    case = data.draw(cases(spec), label="case")
    rng = np.random.default_rng(data.draw(seeds(), label="seed"))
    g, z = _scalar(case, rng)
    v = rng.uniform(-1, 1, z.shape)

    def along(t: Any) -> Any:
        return g(z + t * v)

    t0 = np.zeros(())
    _close(T.derivative(g, order=2)(z, v), T.grad(T.grad(along))(t0), f"{case}: order 2")
    _close(T.derivative(g, order=3)(z, v), T.grad(T.grad(T.grad(along)))(t0), f"{case}: order 3")


# ---- closed forms ------------------------------------------------------------------------------
def test_closed_forms() -> None:
    x = np.array([0.3, -1.2, 2.0])
    # sum(exp(a . x)): Laplacian |a|^2 exp(a . x)
    a = np.array([1.0, 2.0, -0.5])
    lap = T.laplacian(lambda x: tnp.exp(tnp.dot(a, x)))(x)
    np.testing.assert_allclose(lap, (a @ a) * np.exp(a @ x), rtol=1e-14)
    # |x|^2 in R^n: Laplacian 2n, Hessian diagonal 2
    lap_sq = T.laplacian(lambda x: tnp.sum(x**2))(x)
    assert type(lap_sq) is np.ndarray  # a 0-d array, as every transform returns, not a scalar
    np.testing.assert_array_equal(lap_sq, 6.0)
    np.testing.assert_array_equal(T.hessian_diag(lambda x: tnp.sum(x**2))(x), [2.0, 2.0, 2.0])
    # 1/|x| is harmonic in R^3 away from 0
    np.testing.assert_allclose(T.laplacian(lambda x: 1 / tnp.sqrt(tnp.sum(x**2)))(x), 0, atol=1e-14)
    # k-th derivative of exp(2t) is 2^k exp(2t)
    for k in range(1, 9):
        np.testing.assert_allclose(
            T.derivative(lambda t: tnp.exp(2 * t), order=k)(0.5), 2.0**k * math.e, rtol=1e-13
        )


def test_matrix_argument_and_array_output() -> None:
    """A matrix argument (the basis over all its entries) and a vector-valued function (one
    Laplacian per output element, as trace over each output's Hessian block)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2, 3))

    def f(X: Any) -> Any:
        return tnp.tanh(X @ X.T).ravel() * tnp.sum(tnp.sin(X))

    h = np.asarray(T.hessian(f)(X)).reshape(4, 6, 6)
    np.testing.assert_allclose(T.laplacian(f)(X), np.trace(h, axis1=1, axis2=2), rtol=1e-12)
    diag = T.hessian_diag(f)(X)
    assert diag.shape == (4, 2, 3)
    np.testing.assert_allclose(diag.reshape(4, 6), np.diagonal(h, axis1=1, axis2=2), rtol=1e-12)


def test_collapsed_jet_first_order_rows_are_the_jacobian() -> None:
    rng = np.random.default_rng(2)
    W = rng.normal(size=(4, 5))
    x = rng.normal(size=4)

    def f(x: Any) -> Any:
        return tnp.tanh(x @ W) * x[0]

    dirs = rng.normal(size=(3, 4))
    y, first, second = collapsed_jet(f, x, dirs)
    np.testing.assert_allclose(y, f(x))
    J = np.asarray(T.jacfwd(f)(x))
    np.testing.assert_allclose(first, dirs @ J.T, rtol=1e-13)
    H = np.asarray(T.hessian(f)(x))  # (5, 4, 4)
    np.testing.assert_allclose(second, np.einsum("ia,oab,ib->o", dirs, H, dirs), rtol=1e-12)


def test_product_of_two_traced_matrices() -> None:
    """matmul and multiply with both operands traced: the cross term sum_i A1_i B1_i."""
    x = np.array([0.4, -0.7, 1.1, 0.2])

    def f(x: Any) -> Any:
        A = tnp.reshape(x, (2, 2))
        return tnp.sum(tnp.sin(A @ A) * (A * tnp.cos(A)))

    np.testing.assert_allclose(T.laplacian(f)(x), np.trace(T.hessian(f)(x)), rtol=1e-12)


# ---- Hutchinson ---------------------------------------------------------------------------------
def test_hutchinson_is_the_mean_of_v_h_v_over_its_signs() -> None:
    rng = np.random.default_rng(3)
    W = rng.normal(size=(6, 6))
    x = rng.normal(size=6)

    def f(x: Any) -> Any:
        return tnp.sum(tnp.tanh(W @ x) ** 2)

    est = T.hessian_trace(f, method="hutchinson", key=7, num_samples=5)(x)
    signs = np.random.default_rng(7).integers(0, 2, size=(5, 6)) * 2 - 1.0
    H = np.asarray(T.hessian(f)(x))
    np.testing.assert_allclose(est, np.mean(np.einsum("si,ij,sj->s", signs, H, signs)), rtol=1e-12)
    # the same key, the same estimate; a Generator is accepted too
    again = T.hessian_trace(f, method="hutchinson", key=np.random.default_rng(7), num_samples=5)
    np.testing.assert_array_equal(again(x), est)
    # exact for a diagonal Hessian, whatever the signs
    sep = T.hessian_trace(lambda x: tnp.sum(tnp.sin(x)), method="hutchinson", key=0, num_samples=1)
    np.testing.assert_allclose(sep(x), -np.sin(x).sum(), rtol=1e-14)
    np.testing.assert_allclose(T.hessian_trace(f)(x), np.trace(H), rtol=1e-12)


def test_hutchinson_variance_is_as_documented() -> None:
    """Many independent estimates: their variance is 2 (|H|_F^2 - sum H_ii^2) / m."""
    rng = np.random.default_rng(4)
    A = rng.normal(size=(5, 5))
    A = A + A.T

    def f(x: Any) -> Any:
        return 0.5 * x @ (A @ x)  # Hessian A

    m, trials = 4, 4000
    est = [
        T.hessian_trace(f, method="hutchinson", key=seed, num_samples=m)(np.zeros(5))
        for seed in range(trials)
    ]
    expected = 2 * (np.sum(A**2) - np.sum(np.diag(A) ** 2)) / m
    assert abs(np.mean(est) - np.trace(A)) < 4 * math.sqrt(expected / trials)
    assert abs(np.var(est) / expected - 1) < 0.15  # 4000 trials: the ratio's sd is about 0.03


# ---- compositions -------------------------------------------------------------------------------
def _mlp(x: Any, W1: Any, W2: Any) -> Any:
    return tnp.sum(tnp.tanh(tnp.tanh(x @ W1) @ W2))


def test_grad_and_vmap_of_laplacian_and_the_reverse_nesting() -> None:
    rng = np.random.default_rng(5)
    W1, W2 = rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    xs = rng.normal(size=(5, 3))

    def ref(x: Any, W1: Any, W2: Any) -> Any:
        return tnp.trace(T.hessian(_mlp)(x, W1, W2))

    lap = T.laplacian(_mlp)
    np.testing.assert_allclose(
        T.vmap(lap, (0, None, None))(xs, W1, W2), [ref(x, W1, W2) for x in xs]
    )
    # grad with respect to the weights (a PINN's loss) and to x
    for argnums in (0, 1, 2):
        np.testing.assert_allclose(
            T.grad(lap, argnums)(xs[0], W1, W2), T.grad(ref, argnums)(xs[0], W1, W2), rtol=1e-11
        )
    # the Laplacian of a gradient (transforms nested the other way round)
    g = T.grad(_mlp)
    H3 = np.asarray(T.jacfwd(T.hessian(_mlp))(xs[0], W1, W2))
    np.testing.assert_allclose(T.laplacian(g)(xs[0], W1, W2), np.einsum("ijj->i", H3), rtol=1e-11)
    # the diagonal under vmap and grad
    diag = T.hessian_diag(_mlp)
    np.testing.assert_allclose(
        T.vmap(diag, (0, None, None))(xs, W1, W2),
        [np.diag(T.hessian(_mlp)(x, W1, W2)) for x in xs],
        rtol=1e-12,
    )
    np.testing.assert_allclose(
        T.grad(lambda W1: tnp.sum(diag(xs[0], W1, W2)))(W1),
        T.grad(lambda W1: tnp.sum(tnp.diagonal(T.hessian(_mlp)(xs[0], W1, W2))))(W1),
        rtol=1e-11,
    )


def test_derivative_composes_and_refuses_bad_orders() -> None:
    np.testing.assert_allclose(T.grad(T.derivative(tnp.sin, order=3))(0.3), np.sin(0.3))
    np.testing.assert_allclose(
        T.vmap(T.derivative(tnp.tanh, order=2))(np.array([0.1, 0.5])),
        [T.grad(T.grad(tnp.tanh))(t) for t in (0.1, 0.5)],
    )
    with pytest.raises(ValueError, match="order must be a positive integer"):
        T.derivative(tnp.sin, order=0)


def test_errors() -> None:
    f = lambda x: tnp.sum(x**2)
    with pytest.raises(TypeError, match="float or complex"):
        T.laplacian(f)(np.array([1, 2]))
    for transform in (T.laplacian, T.hessian_diag, T.hessian_trace):
        with pytest.raises(TypeError, match="requires real-valued inputs"):
            transform(f)(np.array([1.0 + 1j, 2.0]))
    with pytest.raises(ValueError, match="needs key="):
        T.hessian_trace(f, method="hutchinson", num_samples=3)
    with pytest.raises(ValueError, match="num_samples must be a positive int"):
        T.hessian_trace(f, method="hutchinson", key=0)
    with pytest.raises(ValueError, match="method must be"):
        T.hessian_trace(f, method="hutch")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="exact trace takes neither"):
        T.hessian_trace(f, key=0)
    with pytest.raises(TypeError, match="argnums must be one int"):
        T.laplacian(f, argnums=(0,))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="expected a callable"):
        T.laplacian(3)  # type: ignore[arg-type]


def test_multiple_results_primitives() -> None:
    """split (linear) and eigh (derived from its Taylor rule): every result keeps its own
    first and second coefficients."""
    x = np.array([0.3, -0.8, 1.4, 0.5])

    def f(x: Any) -> Any:
        a, b = tnp.split(x, 2)
        return tnp.sum(a * tnp.sin(b)) + tnp.sum(b**3)

    np.testing.assert_allclose(T.laplacian(f)(x), np.trace(T.hessian(f)(x)), rtol=1e-13)

    def g(x: Any) -> Any:
        A = tnp.reshape(x, (2, 2))
        w, v = tnp.linalg.eigh(A + A.T)
        return tnp.sum(w**2) + tnp.sum(v[:, 0] ** 2 * w)

    np.testing.assert_allclose(T.laplacian(g)(x), np.trace(T.hessian(g)(x)), rtol=1e-10)
    np.testing.assert_allclose(T.hessian_diag(g)(x), np.diag(T.hessian(g)(x)), rtol=1e-10)


def test_vmap_batch_axes_and_nested_vmap() -> None:
    """``vmap(laplacian)`` sums the squares of the batched first coefficients in one NumPy
    pass: whatever axis the batch sits on, and under two ``vmap`` levels (traced values)."""
    rng = np.random.default_rng(6)
    W1, W2 = rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    xs = rng.normal(size=(3, 5, 2))  # the point's axis first, then two batch axes

    def ref(x: Any) -> Any:
        return np.trace(T.hessian(_mlp)(x, W1, W2))

    want = np.array([[ref(xs[:, i, j]) for j in range(2)] for i in range(5)])
    lap = T.laplacian(_mlp)
    got = T.vmap(lap, (1, None, None))(xs[:, :, 0], W1, W2)
    np.testing.assert_allclose(got, want[:, 0], rtol=1e-12)
    inner = T.vmap(lap, (1, None, None))  # over the last axis
    got2 = T.vmap(inner, (1, None, None))(xs, W1, W2)  # over the middle one
    np.testing.assert_allclose(got2, want, rtol=1e-12)

    def matrix_input(X: Any) -> Any:  # a (2, 3) point: tanh's input carries two axes
        return tnp.sum(tnp.tanh(X @ W1) ** 2)

    Xs = rng.normal(size=(4, 2, 3))
    np.testing.assert_allclose(
        T.vmap(T.laplacian(matrix_input), out_axes=0)(Xs),
        [np.trace(np.asarray(T.hessian(matrix_input)(X)).reshape(6, 6)) for X in Xs],
        rtol=1e-12,
    )


def test_jit_of_each_operator_replays_the_eager_values() -> None:
    """laplacian, hessian_diag, hessian_trace and derivative under ``T.jit``: recorded once,
    replayed at new points, equal to eager (and to the Hessian's trace and diagonal)."""

    def f(x: Any) -> Any:
        return tnp.sum(tnp.tanh(x) ** 3) + tnp.prod(x)

    points = [np.array([0.3, -0.5, 0.7]), np.array([1.1, 0.2, -0.4]), np.array([-2.0, 0.5, 1.5])]
    operators: list[Callable[[Any], Any]] = [
        T.laplacian(f),
        T.hessian_diag(f),
        T.hessian_trace(f),
        T.derivative(tnp.sin, order=3),
    ]
    for op in operators:
        jitted = T.jit(op)
        for x in points:
            np.testing.assert_array_equal(jitted(x), op(x))
        assert jitted.stats.records == 1 and jitted.stats.replays == len(points) - 1
    for x in points:
        H = T.hessian(f)(x)
        np.testing.assert_allclose(T.jit(T.laplacian(f))(x), np.trace(H), rtol=1e-12)
        np.testing.assert_allclose(T.jit(T.hessian_diag(f))(x), np.diag(H), rtol=1e-12)


# ---- deferred first coefficients, and the products they skip ------------------------------------
def _recorded_matmuls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[tuple[int, ...], ...]]:
    """The operand shapes of every NumPy-level ``matmul`` from now on (the impl's calls)."""
    from transforms.numpy._products import matmul_p

    shapes: list[tuple[tuple[int, ...], ...]] = []
    impl = matmul_p.impl

    def recording(a: Any, b: Any) -> Any:
        shapes.append((np.shape(a), np.shape(b)))
        return impl(a, b)

    monkeypatch.setattr(matmul_p, "impl", recording)
    return shapes


def test_the_laplacian_computes_no_first_coefficient_only_the_output_needs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``x @ W`` on the identity basis takes no product, and the last layer's first
    coefficients (``(n, 4) @ (4,)``: the output's gradient, which ``laplacian`` does not
    return) are never computed; ``collapsed_jet`` computes them when asked, and every
    value is the Hessian's."""
    rng = np.random.default_rng(7)
    W, w = rng.normal(size=(3, 4)), rng.normal(size=4)
    x = rng.normal(size=3)

    def f(x: Any) -> Any:
        return tnp.tanh(x @ W) @ w

    want = np.trace(T.hessian(f)(x))
    shapes = _recorded_matmuls(monkeypatch)
    np.testing.assert_allclose(T.laplacian(f)(x), want, rtol=1e-13)
    # the two primal products and the summed second coefficient's: none per direction
    assert shapes == [((3,), (3, 4)), ((4,), (4,)), ((1, 4), (4,))]
    shapes.clear()
    _, first, second = collapsed_jet(f, x, np.eye(3))
    assert ((3, 4), (4,)) in shapes
    np.testing.assert_allclose(first, T.jacfwd(f)(x), rtol=1e-13)
    np.testing.assert_allclose(second, want, rtol=1e-13)


def test_deferred_first_coefficients_read_by_every_kind_of_rule() -> None:
    """Elementwise results' first coefficients (deferred) read by a negation, a product of
    two traced values (the cross term and the deferred sum), a multiple-results primitive,
    a derived rule (``sort``) and the output, some read twice: the Laplacian and the first
    derivatives are the Hessian's trace and the Jacobian."""
    rng = np.random.default_rng(8)
    W = rng.normal(size=(3, 4))
    x = rng.normal(size=3)

    def f(x: Any) -> Any:
        a = tnp.tanh(x @ W)
        b = 1.0 - tnp.sin(a)  # deferred, negated, read twice below
        c, d = tnp.split(a * b, 2)
        e = tnp.sort(b * b)
        return tnp.stack([tnp.sum(c * tnp.exp(d)), tnp.sum(e[:2] - c), tnp.sum(a)])

    H = np.asarray(T.hessian(f)(x))
    np.testing.assert_allclose(
        T.laplacian(f)(x), np.trace(H, axis1=1, axis2=2), rtol=1e-12, atol=1e-14
    )
    dirs = rng.normal(size=(2, 3))
    _, first, second = collapsed_jet(f, x, dirs)
    np.testing.assert_allclose(first, dirs @ np.asarray(T.jacfwd(f)(x)).T, rtol=1e-12)
    np.testing.assert_allclose(second, np.einsum("ia,oab,ib->o", dirs, H, dirs), rtol=1e-12)


@pytest.mark.parametrize("axis", [0, 1])
def test_vmap_of_laplacian_with_vector_operands_of_matmul(axis: int) -> None:
    """``stack @ w`` and ``v @ stack`` with a constant vector on one side: batched by
    ``vmap`` over the points (on either axis) as one NumPy product, the values the
    Hessian's."""
    rng = np.random.default_rng(9)
    W, w, v = rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=2)

    def f(X: Any) -> Any:  # a (2, 3) point
        Y = tnp.tanh(X @ W)
        return tnp.tanh(Y @ w) @ tnp.cos(v) + tnp.sum(tnp.sin(v @ Y) ** 2)

    Xs = rng.normal(size=(5, 2, 3))
    want = [np.trace(np.asarray(T.hessian(f)(X)).reshape(6, 6)) for X in Xs]
    got = T.vmap(T.laplacian(f), in_axes=axis)(np.moveaxis(Xs, 0, axis))
    np.testing.assert_allclose(got, want, rtol=1e-12)
