"""Implicit differentiation: ``custom_root`` and ``custom_linear_solve`` (``jax.lax``'s names,
signatures and semantics).

The user's solvers run on plain arrays only (their convergence loops are never traced), and
the derivatives come from the implicit function theorem, exact in every mode and nesting:

- ``solve`` finds ``x_c`` with ``f(x_c) = r_c`` (``r_c`` its residual, ~0) on the concrete
  values of everything ``f`` closes over;
- ``x_{n+1} = x_n - S(f(x_n) - r_c)``, from ``x_0 = x_c``, where ``S`` is the inverse of
  ``f``'s Jacobian at ``x_c`` (``tangent_solve`` on plain arrays), applied by one linear
  primitive whose operator is constant. The values never move (``f(x_c) - r_c`` is zero), and
  each step makes the derivatives exact to one more order (the chord method's error is
  ``O(eps^(n+1))`` in the perturbation ``eps`` of the closed-over values). Each live trace
  is one first-order perturbation (its ``eps`` squares to zero), so one step per live trace
  gives every derivative exactly: ``grad`` takes one step, ``hessian`` a few.

The linear primitive is linear in its operand: its JVP is itself, its VJP the transposed
solve, its batching a loop over the examples (the user's solver need not batch).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import transforms.numpy as tnp
from transforms.batching import BatchTracer, defbatch
from transforms.core import Primitive, Tracer, concrete, current_traces
from transforms.forward import defjvp
from transforms.numpy._define import dtype_of, shape_of
from transforms.reverse import defvjp
from transforms.sparsity import defsparsity, dense_linear_rule

from ._core_transforms import jvp_flat, vjp_flat

__all__ = ["custom_root", "custom_linear_solve"]

Solve = Callable[[Any], Any]


def _apply(y: Any, *, solve: Solve, transpose: Solve | None, name: str) -> Any:
    return np.asarray(solve(y), dtype=np.result_type(y))


implicit_solve_p = Primitive("implicit_linear_solve", _apply)


def _solve_jvp(
    t: Any, ans: Any, y: Any, *, solve: Solve, transpose: Solve | None, name: str
) -> Any:
    return implicit_solve_p.bind(t, solve=solve, transpose=transpose, name=name)


def _solve_vjp(ans: Any, y: Any, *, solve: Solve, transpose: Solve | None, name: str) -> Any:
    if transpose is None:
        raise TypeError(
            f"{name}: reverse mode (grad, vjp, jacrev, hessian) needs the transposed solve: "
            "pass transpose_solve=, or symmetric=True if the operator is symmetric"
        )
    return lambda ct: implicit_solve_p.bind(ct, solve=transpose, transpose=solve, name=name)


def _solve_batch(
    values: Any, dims: Any, *, solve: Solve, transpose: Solve | None, name: str
) -> tuple[Any, int]:
    # One solve per example: the user's solver runs on unbatched plain arrays only.
    (y,), (d,) = values, dims
    count = tnp.shape(y)[d]
    parts = [
        implicit_solve_p.bind(tnp.take(y, i, axis=d), solve=solve, transpose=transpose, name=name)
        for i in range(count)
    ]
    return tnp.stack(parts), 0


defjvp(implicit_solve_p, _solve_jvp)
defvjp(implicit_solve_p, _solve_vjp)
defbatch(implicit_solve_p, _solve_batch)
defsparsity(implicit_solve_p, dense_linear_rule)  # the operator is known only as a solve


def _plain(value: Any, name: str, what: str) -> Any:
    """The concrete value of ``value``, refusing a batched one (the solver runs unbatched)."""
    level = value
    while isinstance(level, Tracer):
        if isinstance(level, BatchTracer):
            raise NotImplementedError(
                f"{name}: {what} depends on a value batched by vmap, and the solver runs on "
                "one example at a time: vmap over the values the function closes over is not "
                "supported yet (vmap of its derivatives, jacfwd, jacrev and hessian are); "
                "loop over the examples instead"
            )
        level = level.primal
    return np.asarray(concrete(value))


def _refine(
    residual: Callable[[Any], Any], x_c: Any, r_c: Any, inverse: Callable[[Any], Any]
) -> Any:
    """The chord steps ``x <- x - S(residual(x) - r_c)``, one per live trace (see the module's
    docstring): exact derivatives at every order, the value ``x_c`` unchanged."""
    x: Any = x_c
    for _ in range(len(current_traces())):
        x = x - inverse(residual(x) - r_c)
    return x


def _operators(
    linear: Callable[[Any], Any], x: Any, y: Any
) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    """``v -> M v`` and ``w -> M^T w`` for the linear map ``linear`` from ``x``'s shape to
    ``y``'s, by its dense matrix ``M`` (one application per column)."""
    basis = np.eye(x.size, dtype=x.dtype)
    matrix = np.stack([np.ravel(linear(e.reshape(x.shape))) for e in basis], axis=1)

    def forward(v: Any) -> Any:
        return (matrix @ np.ravel(v)).reshape(y.shape)

    def transposed(w: Any) -> Any:
        return (matrix.T @ np.ravel(w)).reshape(x.shape)

    return forward, transposed


def custom_root(
    f: Callable[[Any], Any],
    initial_guess: Any,
    solve: Callable[[Callable[[Any], Any], Any], Any],
    tangent_solve: Callable[[Callable[[Any], Any], Any], Any],
    has_aux: bool = False,
) -> Any:
    """The root of ``f`` found by ``solve(f, initial_guess)``, differentiated implicitly
    (JAX's ``jax.lax.custom_root``).

    Args:
        f: ``x -> residual`` (same shape as ``x``); it may close over values being
            differentiated: the root's derivatives with respect to them are exact.
        initial_guess: where ``solve`` starts (not differentiated).
        solve: ``solve(f, initial_guess) -> root`` (or ``(root, aux)`` with ``has_aux``).
            Runs on plain arrays: loops and convergence tests are free.
        tangent_solve: ``tangent_solve(g, y) -> x`` solving the linear ``g(x) = y``, where
            ``g`` is ``f``'s Jacobian at the root (``lambda g, y: y / g(1.0)`` for scalars,
            ``tnp.linalg.solve(T.jacfwd(g)(y), y)`` for a small system).
        has_aux: ``solve`` returns ``(root, aux)``; ``aux`` is returned undifferentiated.

    Returns:
        The root (and ``aux``), exact in every mode (grad, jvp, jacfwd, jacrev, hessian).

    Example:
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> def sqrt(a):  # the root of x**2 - a by Newton's method
        ...     def newton(f, x):
        ...         for _ in range(50):
        ...             x = x - f(x) / (2 * x)
        ...         return x
        ...     return T.custom_root(lambda x: x**2 - a, 1.0, newton, lambda g, y: y / g(1.0))
        >>> T.grad(sqrt)(4.0)  # 1 / (2 sqrt(4))
        array(0.25)
    """
    name = "custom_root"
    guess = _plain(initial_guess, name, "initial_guess")
    _plain(f(guess), name, "f")  # refuse batched closures before solving

    def f_plain(x: Any) -> Any:
        return _plain(f(x), name, "f")

    found = solve(f_plain, guess)
    root, aux = found if has_aux else (found, None)
    x_c = np.asarray(root, dtype=np.result_type(guess, root))
    r_c = f_plain(x_c)

    # f's Jacobian at the root on the concrete closed-over values, as a matrix: the solves
    # may run in a backward pass, when the traced values f closes over are gone.
    jacobian, jacobian_t = _operators(
        lambda v: _plain(jvp_flat(f, [x_c], [v], False, name)[1], name, "f"), x_c, r_c
    )

    def inverse(y: Any) -> Any:
        return implicit_solve_p.bind(
            y,
            solve=lambda y: tangent_solve(jacobian, y),
            transpose=lambda ct: tangent_solve(jacobian_t, ct),
            name=name,
        )

    x = _refine(f, x_c, r_c, inverse)
    return (x, aux) if has_aux else x


def custom_linear_solve(
    matvec: Callable[[Any], Any],
    b: Any,
    solve: Callable[[Callable[[Any], Any], Any], Any],
    transpose_solve: Callable[[Callable[[Any], Any], Any], Any] | None = None,
    symmetric: bool = False,
    has_aux: bool = False,
) -> Any:
    """``x`` with ``matvec(x) = b``, found by ``solve(matvec, b)`` and differentiated
    implicitly (JAX's ``jax.lax.custom_linear_solve``).

    Args:
        matvec: the linear operator ``x -> A x``; it may close over values being
            differentiated (derivatives with respect to ``A`` are exact, as with respect to
            ``b``).
        b: the right-hand side (differentiable; batched under ``vmap`` when ``matvec`` is
            constant).
        solve: ``solve(matvec, b) -> x`` (or ``(x, aux)`` with ``has_aux``), on plain arrays:
            an iterative solver's loop is never traced.
        transpose_solve: ``transpose_solve(vecmat, b) -> x`` for the transposed operator,
            needed by reverse mode (grad, vjp, jacrev, hessian).
        symmetric: the operator is symmetric: ``solve`` serves as ``transpose_solve``.
        has_aux: ``solve`` returns ``(x, aux)``; ``aux`` is returned undifferentiated.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> def jacobi(matvec, b):  # the solver's loop runs on plain arrays
        ...     x = np.zeros_like(b)
        ...     for _ in range(200):
        ...         x = x + (b - matvec(x)) / 4.0
        ...     return x
        >>> A = np.array([[4.0, 1.0], [1.0, 4.0]])
        >>> f = lambda b: tnp.sum(T.custom_linear_solve(lambda x: A @ x, b, jacobi, symmetric=True))
        >>> np.allclose(T.grad(f)(np.ones(2)), np.linalg.solve(A.T, np.ones(2)))
        True
    """
    name = "custom_linear_solve"
    if symmetric and transpose_solve is None:
        transpose_solve = solve
    zero = np.zeros(shape_of(b), dtype=dtype_of(b))
    operator_traced = isinstance(matvec(zero), Tracer)
    if operator_traced:
        # matvec closes over traced values: the solves may run in a backward pass, when they
        # are gone, so the operator is applied by its concrete matrix
        apply, apply_t = _operators(lambda v: _plain(matvec(v), name, "matvec"), zero, zero)
    else:
        apply, apply_t = matvec, _transposed(matvec, zero, name)
    aux: list[Any] = []

    def solve_plain(y: Any) -> Any:
        found = solve(apply, y)
        if has_aux:
            aux.append(found[1])
            return found[0]
        return found

    def transposed(ct: Any) -> Any:
        assert transpose_solve is not None
        return transpose_solve(apply_t, ct)

    def inverse(y: Any) -> Any:
        return implicit_solve_p.bind(
            y,
            solve=solve_plain,
            transpose=None if transpose_solve is None else transposed,
            name=name,
        )

    if not operator_traced:  # only b carries derivatives (and batching): one linear solve
        x = inverse(b)
    else:
        b_c = _plain(b, name, "b")
        x_c = np.asarray(solve_plain(b_c), dtype=zero.dtype)
        x = _refine(lambda x: matvec(x) - b, x_c, apply(x_c) - b_c, inverse)
    return (x, aux[0] if aux else None) if has_aux else x


def _transposed(matvec: Callable[[Any], Any], zero: Any, name: str) -> Callable[[Any], Any]:
    """``w -> A^T w`` for a constant linear ``matvec`` (its pullback, made on first use)."""
    pullbacks: list[Any] = []

    def vecmat(w: Any) -> Any:
        if not pullbacks:
            pullbacks.append(vjp_flat(matvec, [zero], False, name)[1])
        return pullbacks[0](np.asarray(w, dtype=zero.dtype))[0]

    return vecmat
