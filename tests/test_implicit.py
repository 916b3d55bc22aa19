"""``custom_root`` and ``custom_linear_solve`` (issues 31 and 33): a solver that differentiates
the function it solves gets its real derivatives, at every nesting; ``vmap`` over the values
the function closes over (or the guess, or the operator) runs the solver per example.

References: closed forms, a Python loop over the examples of the unbatched call, and live
JAX's ``lax.custom_root`` / ``lax.custom_linear_solve`` with the same solvers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from numpy.testing import assert_allclose

import transforms as T
import transforms.numpy as tnp

M = np.array([[4.0, 1.0, 0.5], [0.2, 5.0, 1.0], [0.3, 0.1, 6.0]])


# ---- solvers that differentiate f ----------------------------------------------------------------
def _newton_grad(f: Any, x: Any) -> Any:
    """Scalar Newton, f' by ``grad``."""
    for _ in range(60):
        x = x - f(x) / T.grad(f)(x)
    return x


def _halley(f: Any, x: Any) -> Any:
    """Scalar Halley: f' and f'' by nested ``grad`` (second order inside the solver)."""
    d1, d2 = T.grad(f), T.grad(T.grad(f))
    for _ in range(40):
        fx, g, h = f(x), d1(x), d2(x)
        x = x - 2 * fx * g / (2 * g * g - fx * h)
    return x


def _newton_jacfwd(f: Any, x: Any) -> Any:
    for _ in range(60):
        x = x - tnp.linalg.solve(T.jacfwd(f)(x), f(x))
    return x


def _newton_jacrev(f: Any, x: Any) -> Any:
    for _ in range(60):
        x = x - tnp.linalg.solve(T.jacrev(f)(x), f(x))
    return x


def _scalar_solve(g: Any, y: Any) -> Any:
    return y / g(1.0)


def _dense_solve(g: Any, y: Any) -> Any:
    return tnp.linalg.solve(T.jacfwd(g)(y), y)


SCALAR_SOLVERS = {"newton by grad": _newton_grad, "halley by grad of grad": _halley}


def _cbrt(solver: Any) -> Callable[[Any], Any]:
    def cbrt(a: Any) -> Any:  # the root of x**3 - a
        return T.custom_root(lambda x: x**3 - a, 1.0, solver, _scalar_solve)

    return cbrt


@pytest.mark.parametrize("solver", sorted(SCALAR_SOLVERS))
def test_scalar_solver_with_derivatives_inside(solver: str) -> None:
    cbrt = _cbrt(SCALAR_SOLVERS[solver])
    a = 8.0
    assert_allclose(cbrt(a), 2.0, rtol=1e-15)
    d1, d2 = 1 / (3 * a ** (2 / 3)), -2 / 9 * a ** (-5 / 3)
    assert_allclose(T.grad(cbrt)(a), d1, rtol=1e-13)
    assert_allclose(T.jvp(cbrt, (a,), (1.0,))[1], d1, rtol=1e-13)
    assert_allclose(T.hessian(cbrt)(a), d2, rtol=1e-12)
    assert_allclose(T.jacfwd(T.grad(cbrt))(a), d2, rtol=1e-12)
    assert_allclose(T.linearize(cbrt, a)[1](1.0), d1, rtol=1e-13)
    a_s = np.array([8.0, 27.0, 0.125])
    assert_allclose(T.vmap(cbrt)(a_s), np.cbrt(a_s), rtol=1e-14)
    assert_allclose(T.vmap(T.grad(cbrt))(a_s), 1 / (3 * np.cbrt(a_s) ** 2), rtol=1e-13)
    assert_allclose(
        T.grad(lambda a: tnp.sum(T.vmap(cbrt)(a)))(a_s), 1 / (3 * np.cbrt(a_s) ** 2), rtol=1e-13
    )


def _system(newton: Any) -> Callable[[Any], Any]:
    """The root r of r + 0.2 tanh(M r) = a sin(a) (coupled through M)."""

    def root(a: Any) -> Any:
        return T.custom_root(
            lambda r: r + 0.2 * tnp.tanh(M @ r) - a * tnp.sin(a),
            tnp.zeros_like(a),
            newton,
            _dense_solve,
        )

    return root


def _jax_system(a: Any) -> Any:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def newton(f: Any, x: Any) -> Any:
        for _ in range(60):
            x = x - jnp.linalg.solve(jax.jacfwd(f)(x), f(x))
        return x

    def dense_solve(g: Any, y: Any) -> Any:
        return jnp.linalg.solve(jax.jacfwd(g)(y), y)

    return jax.lax.custom_root(
        lambda r: r + 0.2 * jnp.tanh(jnp.asarray(M) @ r) - a * jnp.sin(a),
        jnp.zeros_like(a),
        newton,
        dense_solve,
    )


@pytest.mark.parametrize("newton", [_newton_jacfwd, _newton_jacrev], ids=["jacfwd", "jacrev"])
def test_newton_system_matches_jax(newton: Any) -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    a = np.array([0.3, -0.8, 1.1])
    root = _system(newton)
    loss = lambda a: tnp.sum(root(a) ** 2 * np.array([1.0, 2.0, 3.0]))
    jloss = lambda a: (_jax_system(a) ** 2 * np.array([1.0, 2.0, 3.0])).sum()
    assert_allclose(root(a), np.asarray(_jax_system(a)), rtol=1e-13, atol=1e-15)
    assert_allclose(T.jacfwd(root)(a), np.asarray(jax.jacfwd(_jax_system)(a)), rtol=1e-11)
    assert_allclose(T.jacrev(root)(a), np.asarray(jax.jacrev(_jax_system)(a)), rtol=1e-11)
    assert_allclose(T.hessian(loss)(a), np.asarray(jax.hessian(jloss)(a)), rtol=1e-9, atol=1e-12)
    batch = np.stack([a, 0.5 * a, -a])
    assert_allclose(T.vmap(root)(batch), np.asarray(jax.vmap(_jax_system)(batch)), rtol=1e-13)
    assert_allclose(
        T.vmap(T.grad(loss))(batch), np.asarray(jax.vmap(jax.grad(jloss))(batch)), rtol=1e-11
    )


def test_nested_custom_root_inside_a_solver() -> None:
    """The function solved calls a custom_root whose solver differentiates too: the outer
    solver's grad opens a trace, which the inner call freezes for its own solve."""
    inner = _cbrt(_newton_grad)

    def root(a: Any) -> Any:  # x = a cos(cbrt(x + 8))
        return T.custom_root(
            lambda x: x - a * tnp.cos(inner(x + 8.0)), 0.0, _newton_grad, _scalar_solve
        )

    def exact(a: float) -> float:
        x = 0.0
        for _ in range(200):
            x = x - (x - a * np.cos(np.cbrt(x + 8))) / (
                1 + a * np.sin(np.cbrt(x + 8)) / (3 * np.cbrt(x + 8) ** 2)
            )
        return x

    a, h = 0.7, 1e-6
    assert_allclose(root(a), exact(a), rtol=1e-14)
    assert_allclose(T.grad(root)(a), (exact(a + h) - exact(a - h)) / (2 * h), rtol=1e-8)
    assert_allclose(T.vmap(root)(np.array([0.7, 0.2])), [exact(0.7), exact(0.2)], rtol=1e-14)


# ---- vmap over what the problem closes over: against a loop over the examples -------------------
def _fixed_point(a: Any, c: Any) -> Any:
    """x = a cos(x) + c (the solver is chord iteration on plain arrays)."""

    def chord(f: Any, x: Any) -> Any:
        for _ in range(500):
            fx = f(x)
            if np.max(np.abs(fx)) < 1e-15:
                break
            x = x - fx / 1.5
        return x

    return T.custom_root(lambda x: x - a * tnp.cos(x) - c, tnp.zeros_like(c), chord, _scalar_solve)


class Fixed:
    """An argument that ``vmap`` does not batch (``in_axes=None``)."""

    def __init__(self, value: Any) -> None:
        self.value = value


def _assert_vmap_is_a_loop(f: Callable[..., Any], *args: Any, rtol: float = 1e-13) -> None:
    """``vmap(f)`` over the leading axis of each of ``args`` (but the ``Fixed`` ones) equals
    ``f`` called per example, leaf by leaf of its (pytree) output."""
    axes = tuple(None if isinstance(a, Fixed) else 0 for a in args)
    plain = [a.value if isinstance(a, Fixed) else a for a in args]
    got = T.tree_util.tree_leaves(T.vmap(f, in_axes=axes)(*plain))
    n = next(len(a) for a in args if not isinstance(a, Fixed))
    examples = [
        T.tree_util.tree_leaves(
            f(*(a if d is None else a[i] for a, d in zip(plain, axes, strict=True)))
        )
        for i in range(n)
    ]
    assert len(got) == len(examples[0])
    for k, leaf in enumerate(got):
        expected = np.stack([np.asarray(e[k]) for e in examples])
        assert_allclose(leaf, expected, rtol=rtol, atol=1e-15, err_msg=f"leaf {k}")


BATCHINGS: dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]] = {
    "values": lambda f: f,
    "grad in a": lambda f: T.grad(f, argnums=0),
    "hessian in (a, c)": lambda f: T.hessian(lambda a, c: f(a, c), argnums=(0, 1)),
}


@pytest.mark.parametrize("how", sorted(BATCHINGS))
def test_custom_root_vmap_over_closed_over_values(how: str) -> None:
    f = BATCHINGS[how](_fixed_point)
    a = np.array([0.3, 0.6, 0.9, 0.45])
    c = np.array([0.1, -0.2, 0.4, 0.0])
    _assert_vmap_is_a_loop(f, a, c)
    _assert_vmap_is_a_loop(f, a, Fixed(0.25))  # one of them unbatched
    _assert_vmap_is_a_loop(f, Fixed(0.5), c)


def test_custom_root_nested_vmaps_and_derivatives_of_vmap() -> None:
    a = np.array([[0.3, 0.6, 0.9], [0.2, 0.5, 0.7]])
    c = np.array([0.1, -0.2, 0.4])
    got = T.vmap(T.vmap(_fixed_point, in_axes=(0, 0)), in_axes=(0, None))(a, c)
    expected = np.array(
        [[np.asarray(_fixed_point(ai, ci)) for ai, ci in zip(row, c, strict=True)] for row in a]
    )
    assert_allclose(got, expected, rtol=1e-14)
    # grad of a vmapped solve: the sum's gradient is the per-example derivatives
    g = T.grad(lambda a: tnp.sum(T.vmap(_fixed_point)(a, c)))(a[0])
    assert_allclose(
        g, [T.grad(_fixed_point)(ai, ci) for ai, ci in zip(a[0], c, strict=True)], rtol=1e-13
    )
    # jacfwd batches tangents, not values: one solve, exact
    jac = T.jacfwd(lambda a: T.vmap(_fixed_point)(a, c))(a[0])
    assert_allclose(jac, np.diag(g), rtol=1e-13, atol=1e-15)


def test_custom_root_vmap_over_the_guess_and_aux() -> None:
    def solve(f: Any, x: Any) -> Any:  # Newton; aux: the number of steps taken
        steps = 0
        while np.abs(f(x)) > 1e-14:
            x, steps = x - f(x) / T.grad(f)(x), steps + 1
        return x, steps

    def root(guess: Any, a: Any) -> Any:  # x**2 = a: the root the guess leads to
        return T.custom_root(lambda x: x**2 - a, guess, solve, _scalar_solve, has_aux=True)

    guesses = np.array([3.0, -3.0, 0.5])
    x, steps = T.vmap(root, in_axes=(0, None))(guesses, 4.0)
    assert_allclose(x, [2.0, -2.0, 2.0], rtol=1e-15)
    assert_allclose(steps, [root(g, 4.0)[1] for g in guesses])
    g = T.vmap(T.grad(lambda g, a: root(g, a)[0], argnums=1), in_axes=(0, None))(guesses, 4.0)
    assert_allclose(g, [0.25, -0.25, 0.25], rtol=1e-13)


def _linear(scale: Any, b: Any) -> Any:
    """(M + diag(scale)) x = b by Jacobi on plain arrays."""

    def jacobi(matvec: Any, b: Any) -> Any:
        x = np.zeros_like(b)
        for _ in range(2000):
            r = b - matvec(x)
            if np.max(np.abs(r)) < 1e-15:
                break
            x = x + r / 7.0
        return x

    return T.custom_linear_solve(lambda x: M @ x + scale * x, b, jacobi, jacobi)


def _by_matrix(scale: Any, b: Any) -> Any:
    """The same solve by a solver that differentiates matvec for its matrix."""

    def solve(matvec: Any, b: Any) -> Any:
        return tnp.linalg.solve(T.jacfwd(matvec)(b), b)

    return T.custom_linear_solve(lambda x: M @ x + scale * x, b, solve, solve)


@pytest.mark.parametrize("how", sorted(BATCHINGS))
@pytest.mark.parametrize("solve", [_linear, _by_matrix], ids=["jacobi", "jacfwd inside"])
def test_custom_linear_solve_vmap_over_the_operator(how: str, solve: Any) -> None:
    f = BATCHINGS[how](lambda s, b: tnp.sum(solve(s, b) * np.array([1.0, -2.0, 0.5])))
    s = np.array([0.3, 1.2, -0.5])
    b = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0], [0.0, 1.0, -1.0]])
    exact = [
        np.linalg.solve(M + si * np.eye(3), bi) @ [1.0, -2.0, 0.5]
        for si, bi in zip(s, b, strict=True)
    ]
    if how == "values":
        assert_allclose(T.vmap(f)(s, b), exact, rtol=1e-13)
    _assert_vmap_is_a_loop(f, s, b, rtol=1e-12)
    _assert_vmap_is_a_loop(f, s, Fixed(b[0]), rtol=1e-12)  # only the operator batched
    _assert_vmap_is_a_loop(f, Fixed(0.7), b, rtol=1e-12)  # only b (a traced operator in grad)


def test_custom_linear_solve_vmap_over_the_operator_with_aux() -> None:
    def solve(matvec: Any, b: Any) -> Any:
        x = np.linalg.solve(np.stack([matvec(e) for e in np.eye(3)], axis=1), b)
        return x, np.max(np.abs(matvec(x) - b))

    def f(s: Any) -> Any:
        return T.custom_linear_solve(
            lambda x: M @ x + s * x, np.ones(3), solve, solve, has_aux=True
        )

    x, residual = T.vmap(f)(np.array([0.5, 2.0]))
    assert_allclose(x, [f(0.5)[0], f(2.0)[0]], rtol=1e-14)
    assert np.shape(residual) == (2,) and np.all(np.asarray(residual) < 1e-14)


def test_reverse_mode_refuses_a_matvec_that_branches_on_its_argument() -> None:
    """Reverse mode transposes a constant matvec at zero: a branch on its argument would be
    transposed at zero's side (here 2A, where the solve used A): refused, as JAX refuses to
    transpose a non-linear function."""

    def solve(matvec: Any, b: Any) -> Any:
        return np.linalg.solve(np.stack([matvec(e) for e in np.eye(3)], axis=1), b)

    def branching(v: Any) -> Any:
        return M @ v if tnp.sum(v) > 0 else 2 * (M @ v)

    def f(b: Any) -> Any:
        return tnp.sum(T.custom_linear_solve(branching, b, solve, solve) * np.arange(3.0))

    assert_allclose(f(np.ones(3)), np.linalg.solve(M, np.ones(3)) @ np.arange(3.0), rtol=1e-14)
    with pytest.raises(T.ConcretizationTypeError, match="custom_linear_solve transposes matvec"):
        T.grad(f)(np.ones(3))
