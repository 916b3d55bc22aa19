"""Implicit differentiation: ``custom_root`` and ``custom_linear_solve`` (``jax.lax``'s names,
signatures and semantics).

The user's solvers run on plain arrays only (their convergence loops are never traced), and
the derivatives come from the implicit function theorem, exact in every mode and nesting:

- ``solve`` finds ``x_c`` with ``f(x_c) = r_c`` (``r_c`` its residual, ~0) on the concrete
  values of everything ``f`` closes over: every live transform is frozen while it runs
  (``_solver_view``), so a solver that differentiates ``f`` itself (Newton's method with
  ``grad(f)`` or ``jacfwd(f)``) gets ``f``'s real derivatives; under ``vmap`` over those
  values (or the guess) it runs once per example;
- ``x_{n+1} = x_n - S(f(x_n) - r_c)``, from ``x_0 = x_c``, where ``S`` is the inverse of
  ``f``'s Jacobian at ``x_c`` (``tangent_solve`` on plain arrays), applied by one linear
  primitive whose operator is constant. The values never move (``f(x_c) - r_c`` is zero), and
  each step makes the derivatives exact to one more order (the chord method's error is
  ``O(eps^(n+1))`` in the perturbation ``eps`` of the closed-over values). Each live trace
  is one first-order perturbation (its ``eps`` squares to zero), so one step per live trace
  gives every derivative exactly: ``grad`` takes one step, ``hessian`` a few.

The linear primitive is linear in its operand: its JVP is itself, its VJP the transposed
solve, its batching a loop over the examples (the user's solver need not batch), each with
its own operator when the operator (a matrix operand) is batched.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import transforms.numpy as tnp
from transforms.batching import defbatch, is_batched
from transforms.core import Primitive, Tracer, Transposing, current_traces
from transforms.forward import defjvp
from transforms.numpy._define import dtype_of, shape_of
from transforms.reverse import defvjp
from transforms.sparsity import defsparsity, dense_linear_rule
from transforms.taylor import JetTrace

from ._core_transforms import jvp_flat, vjp_flat
from ._solver_view import SolverView, plain

__all__ = ["custom_root", "custom_linear_solve"]

LinearMap = Callable[[Any], Any]
Solve = Callable[[LinearMap, Any], Any]  # a user's solve(linear_map, y) -> x


def _dense_maps(matrix: Any, shape: tuple[int, ...]) -> tuple[LinearMap, LinearMap]:
    """``v -> M v`` and ``w -> M^T w`` on arrays of ``shape`` (the operator is square)."""

    def forward(v: Any) -> Any:
        return (matrix @ np.ravel(v)).reshape(shape)

    def transposed(w: Any) -> Any:
        return (matrix.T @ np.ravel(w)).reshape(shape)

    return forward, transposed


def _apply(
    y: Any,
    *matrix: Any,
    solve: Solve,
    transpose: Solve | None,
    operator: tuple[LinearMap, LinearMap] | None,
    transposed: bool,
    name: str,
) -> Any:
    maps = operator if operator is not None else _dense_maps(matrix[0], np.shape(y))
    return np.asarray(solve(maps[1] if transposed else maps[0], y), dtype=np.result_type(y))


# The linear solve ``y -> A^{-1} y`` by the user's ``solve`` (``A^{-T}`` by ``transpose`` when
# ``transposed``): ``A`` is ``operator``, a constant pair of maps (A, A^T), or else the dense
# matrix given as the second operand, which is never differentiated (a constant of every
# derivative) but may be batched: one operator per example.
implicit_solve_p = Primitive("implicit_linear_solve", _apply)


def _solve_jvp(t: Any, ans: Any, y: Any, *matrix: Any, **params: Any) -> Any:
    return implicit_solve_p.bind(t, *matrix, **params)


def _solve_vjp(
    ans: Any,
    y: Any,
    *matrix: Any,
    solve: Solve,
    transpose: Solve | None,
    transposed: bool,
    **params: Any,
) -> Any:
    if transpose is None:
        raise TypeError(
            f"{params['name']}: reverse mode (grad, vjp, jacrev, hessian) needs the transposed "
            "solve: pass transpose_solve=, or symmetric=True if the operator is symmetric"
        )
    return lambda ct: implicit_solve_p.bind(
        ct, *matrix, solve=transpose, transpose=solve, transposed=not transposed, **params
    )


def _solve_batch(values: Any, dims: Any, **params: Any) -> tuple[Any, int]:
    # One solve per example: the user's solver runs on unbatched plain arrays only.
    pairs = list(zip(values, dims, strict=True))
    count = next(shape_of(v)[d] for v, d in pairs if d is not None)
    parts = [
        implicit_solve_p.bind(
            *(v if d is None else tnp.take(v, i, axis=d) for v, d in pairs), **params
        )
        for i in range(count)
    ]
    return tnp.stack(parts), 0


defjvp(implicit_solve_p, _solve_jvp, None)
defvjp(implicit_solve_p, _solve_vjp, None)
defbatch(implicit_solve_p, _solve_batch)
defsparsity(implicit_solve_p, dense_linear_rule)  # the operator is known only as a solve


def _refine(residual: LinearMap, x_c: Any, r_c: Any, inverse: LinearMap) -> Any:
    """The chord steps ``x <- x - S(residual(x) - r_c)``, one per live trace (see the module's
    docstring): exact derivatives at every order, the value ``x_c`` unchanged. Each step
    makes one more order exact, so a ``jet`` trace of order ``K`` takes ``K`` steps. (A trace
    frozen by an enclosing solver is not live: its values are constants here.)"""
    x: Any = x_c
    steps = sum(t.order if isinstance(t, JetTrace) else 1 for t in current_traces() if t.alive)
    for _ in range(steps):
        x = x - inverse(residual(x) - r_c)
    return x


def _tangent_map(f: LinearMap, x: Any, name: str) -> LinearMap:
    """``v -> f'(x) v``."""
    return lambda v: jvp_flat(f, [x], [v], False, name)[1]


def _matrix(linear: LinearMap, x: Any) -> Any:
    """The dense matrix of the linear map ``linear`` on arrays like ``x`` (one application
    per column), in the solver's view."""
    basis = np.eye(x.size, dtype=x.dtype)
    return np.stack([np.ravel(plain(linear(e.reshape(x.shape)))) for e in basis], axis=1)


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
            Runs on plain arrays: loops and convergence tests are free, and derivatives of
            ``f`` taken inside (``T.grad(f)``, ``T.jacfwd(f)`` for Newton's method) are the
            real ones. Under ``vmap`` it runs once per example.
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
    view = SolverView(name, [initial_guess, f(initial_guess)])
    roots, residuals, jacobians, auxes = [], [], [], []
    for example in view:
        with example:  # f computes on the values it closes over; derivatives in solve are real
            guess = plain(initial_guess)
            found = solve(f, guess)
            root, aux = found if has_aux else (found, None)
            x_c = np.asarray(plain(root), dtype=np.result_type(guess, plain(root)))
            roots.append(x_c)
            residuals.append(plain(f(x_c)))
            # f's Jacobian at the root, as a matrix: the solves may run in a backward pass,
            # when the traced values f closes over are gone
            jacobians.append(_matrix(_tangent_map(f, x_c, name), x_c))
            auxes.append(aux)
    jacobian = view.stack(jacobians)

    def inverse(y: Any) -> Any:
        return implicit_solve_p.bind(
            y,
            jacobian,
            solve=tangent_solve,
            transpose=tangent_solve,
            operator=None,
            transposed=False,
            name=name,
        )

    x = _refine(f, view.stack(roots), view.stack(residuals), inverse)
    return (x, view.stack_tree(auxes)) if has_aux else x


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
        b: the right-hand side (differentiable).
        solve: ``solve(matvec, b) -> x`` (or ``(x, aux)`` with ``has_aux``), on plain arrays:
            an iterative solver's loop is never traced. Under ``vmap`` (over ``b`` or what
            ``matvec`` closes over) it runs once per example.
        transpose_solve: ``transpose_solve(vecmat, b) -> x`` for the transposed operator,
            needed by reverse mode (grad, vjp, jacrev, hessian).
        symmetric: the operator is symmetric: ``solve`` serves as ``transpose_solve``.
        has_aux: ``solve`` and ``transpose_solve`` return ``(x, aux)``; ``solve``'s ``aux``
            is returned undifferentiated.

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
    at_zero = matvec(zero)
    if not isinstance(at_zero, Tracer):  # only b carries derivatives (and batching)
        return _constant_operator_solve(matvec, b, zero, solve, transpose_solve, has_aux)

    # matvec closes over traced values: per example, the operator is applied by its matrix
    # (the solves may run in a backward pass, when the traced values are gone)
    def without_aux(user_solve: Solve) -> Solve:
        return lambda linear, y: user_solve(linear, y)[0]

    view = SolverView(name, [b, at_zero])
    solutions, residuals, matrices, auxes = [], [], [], []
    for example in view:
        with example:
            matrix = _matrix(matvec, zero)
            apply = _dense_maps(matrix, zero.shape)[0]
            b_c = plain(b)
            found = solve(apply, b_c)
            x_c, aux = found if has_aux else (found, None)
            x_c = np.asarray(plain(x_c), dtype=zero.dtype)
            solutions.append(x_c)
            residuals.append(apply(x_c) - b_c)
            matrices.append(matrix)
            auxes.append(aux)
    operator = view.stack(matrices)

    def inverse(y: Any) -> Any:
        return implicit_solve_p.bind(
            y,
            operator,
            solve=without_aux(solve) if has_aux else solve,
            transpose=without_aux(transpose_solve)
            if has_aux and transpose_solve is not None
            else transpose_solve,
            operator=None,
            transposed=False,
            name=name,
        )

    x = _refine(lambda x: matvec(x) - b, view.stack(solutions), view.stack(residuals), inverse)
    return (x, view.stack_tree(auxes)) if has_aux else x


def _constant_operator_solve(
    matvec: LinearMap,
    b: Any,
    zero: Any,
    solve: Solve,
    transpose_solve: Solve | None,
    has_aux: bool,
) -> Any:
    """``custom_linear_solve`` with a constant ``matvec``: one linear primitive of ``b``,
    whose solves use ``matvec`` itself (its transpose by its pullback)."""
    name = "custom_linear_solve"
    if has_aux and is_batched(b):
        # the solver runs once per example, inside the primitive: its aux cannot be batched
        raise NotImplementedError(
            f"{name}: has_aux=True under vmap over b is not supported when the operator is "
            "constant (the solver runs on one example at a time, and its aux cannot be "
            "batched): return the aux from outside vmap, or loop over the examples"
        )
    aux: list[Any] = []

    def solve_recording(linear: LinearMap, y: Any) -> Any:
        found = solve(linear, y)
        if has_aux:
            aux.append(found[1])
            return found[0]
        return found

    def transposed(linear: LinearMap, ct: Any) -> Any:
        assert transpose_solve is not None
        found = transpose_solve(linear, ct)
        return found[0] if has_aux else found  # JAX: both solves return (x, aux)

    x = implicit_solve_p.bind(
        b,
        solve=solve_recording,
        transpose=None if transpose_solve is None else transposed,
        operator=(matvec, _transposed(matvec, zero, name)),
        transposed=False,
        name=name,
    )
    return (x, aux[0] if aux else None) if has_aux else x


def _transposed(matvec: Callable[[Any], Any], zero: Any, name: str) -> Callable[[Any], Any]:
    """``w -> A^T w`` for a constant linear ``matvec`` (its pullback, made on first use)."""
    pullbacks: list[Any] = []

    transposing = Transposing(
        f"reverse mode of {name} transposes matvec",
        "argument",
        "write matvec as a linear map, with no branch or loop on its argument's values",
    )

    def linear(v: Any) -> Any:  # transposed at zero: exact only if it is linear
        v._trace.transposing = transposing
        return matvec(v)

    def vecmat(w: Any) -> Any:
        if not pullbacks:
            pullbacks.append(vjp_flat(linear, [zero], False, name)[1])
        return pullbacks[0](np.asarray(w, dtype=zero.dtype))[0]

    return vecmat
