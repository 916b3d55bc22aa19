"""``checkpoint`` of a function that closes over traced values (the weights of the ``grad``
being taken, a batched value of an outer ``vmap``, an outer checkpoint's argument).

Every derivative is compared with the same function without ``checkpoint`` (the unrolled
reference, whose derivatives the rest of the suite checks against finite differences),
and the grad of the reported bug also with its closed form. The path table of
tests/test_custom_paths.py checks the same against finite differences in every mode.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from numpy.testing import assert_allclose

import transforms as T
import transforms.numpy as tnp

X = np.array([0.3, -0.4, 0.9])
C = np.array([1.0, -2.0, 0.5])
V = np.array([0.3, -0.7, 1.1])
Wide = np.stack([C, 2 * C, -C])


def _identity(f: Callable[..., Any]) -> Callable[..., Any]:
    return f


Remat = Callable[[Callable[..., Any]], Callable[..., Any]]


@T.custom_jvp
def _softplus(x: Any) -> Any:
    return tnp.log1p(tnp.exp(x))


@_softplus.defjvp
def _softplus_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    return _softplus(x), t / (1 + tnp.exp(-x))


# Each builds a scalar function of x whose checkpointed part reads x through its closure.
FUNCTIONS: dict[str, Callable[[Remat], Callable[[Any], Any]]] = {
    # x closed over and mixed with the argument in every primitive
    "mixed": lambda c: lambda x: tnp.sum(c(lambda y: C * tnp.sin(y * x) + y * x**2)(tnp.cos(x))),
    # x read alone by a primitive (sin(x), x[0]), which would go straight to x's own trace
    "read alone": lambda c: lambda x: tnp.sum(c(lambda y: y * tnp.sin(x) + tnp.exp(x[0]))(x**2)),
    # the closed-over value returned as it is, through no primitive
    "returned": lambda c: lambda x: tnp.sum(c(lambda y: x)(tnp.sin(x)) * x),
    # a checkpoint inside a checkpoint, the inner one closing over the outer's argument and x
    "nested": lambda c: lambda x: tnp.sum(c(lambda y: c(lambda z: z * x * y)(tnp.sin(y)))(x**2)),
    # a custom_jvp function inside, given the closed-over x as (part of) its argument
    "custom rule inside": lambda c: (
        lambda x: tnp.sum(c(lambda y: _softplus(y * x) + _softplus(x))(tnp.cos(x)))
    ),
    # a grad inside the checkpointed function, its function closing over x
    "inner grad": lambda c: (
        lambda x: tnp.sum(c(lambda y: T.grad(lambda z: tnp.sum(tnp.sin(z * x)))(y))(x**2))
    ),
}

MODES: dict[str, Callable[[Callable[[Any], Any], Any], Any]] = {
    "grad": lambda f, x: T.grad(f)(x),
    "jvp": lambda f, x: np.stack([T.jvp(f, (x,), (e,))[1] for e in np.eye(3)]),
    "jacfwd": lambda f, x: T.jacfwd(f)(x),
    "jacrev": lambda f, x: T.jacrev(f)(x),
    "hessian": lambda f, x: T.hessian(f)(x),
    "hvp": lambda f, x: T.hvp(f, (x,), (V,))[1],
    "vmap of grad": lambda f, x: T.vmap(T.grad(f))(np.stack([x, -x])),
    "grad of grad": lambda f, x: T.grad(lambda x: tnp.sum(T.grad(f)(x) * V))(x),
    "linearize": lambda f, x: np.stack([T.linearize(f, x)[1](e) for e in np.eye(3)]),
}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_checkpoint_closing_over_traced_values_matches_the_unrolled_function(
    name: str, mode: str
) -> None:
    build, run = FUNCTIONS[name], MODES[mode]
    expected = run(build(_identity), X)
    assert_allclose(run(build(T.checkpoint), X), expected, rtol=1e-12, atol=1e-14)


def test_the_reported_case_against_its_closed_form() -> None:
    # d/dW sum(tanh(u W)) with u = x0 W: (x0 (s W^T)) outer... written out below
    W = np.ones((3, 3)) * 0.1 + np.diag([0.2, -0.1, 0.3])
    x0 = np.array([1.0, 0.5, -0.5])
    g = T.grad(lambda W: tnp.sum(T.checkpoint(lambda x: tnp.tanh(x @ W))(x0 @ W)))(W)
    u = x0 @ W
    s = 1 - np.tanh(u @ W) ** 2  # d sum(tanh(v)) / dv at v = u W
    expected = np.outer(u, s) + np.outer(x0, W @ s)  # through W directly, and through u
    assert_allclose(g, expected, rtol=1e-12, atol=1e-14)


def test_a_closed_over_value_of_the_same_vmap() -> None:
    def batched(ck: Remat) -> Any:
        return T.vmap(lambda w: tnp.sum(ck(lambda y: tnp.sin(y * w))(w**2)))(Wide)

    def grad_of_batched(ck: Remat) -> Any:
        per_row = lambda c, w: tnp.sum(ck(lambda y: tnp.sin(y * w) * c)(w**2))
        return T.grad(lambda c: tnp.sum(T.vmap(lambda w: per_row(c, w))(Wide)))(C)

    for run in (batched, grad_of_batched):
        assert_allclose(run(T.checkpoint), run(_identity), rtol=1e-12, atol=1e-14)


def test_a_plain_argument_is_checkpointed_too() -> None:
    """Only the closure is traced: the function is still recomputed in the backward pass
    (before the fix it ran as if not checkpointed, keeping its intermediates)."""
    calls = {"n": 0}

    def f(x: Any) -> Any:
        def inner(y: Any) -> Any:
            calls["n"] += 1
            return tnp.tanh(y * x)

        return tnp.sum(T.checkpoint(inner)(C))

    _, pullback = T.vjp(f, X)
    before = calls["n"]
    (g,) = pullback(np.array(1.0))
    assert calls["n"] > before
    assert_allclose(g, C * (1 - np.tanh(C * X) ** 2), rtol=1e-12)


def test_the_function_is_still_recomputed_in_the_backward_pass() -> None:
    calls = {"n": 0}

    def f(x: Any) -> Any:
        def inner(y: Any) -> Any:
            calls["n"] += 1
            return tnp.tanh(y * x)

        return tnp.sum(T.checkpoint(inner)(tnp.sin(x)))

    _, pullback = T.vjp(f, X)
    before = calls["n"]
    (g,) = pullback(np.array(1.0))
    assert calls["n"] > before  # recomputed, not kept
    assert_allclose(g, T.grad(lambda x: tnp.sum(tnp.tanh(tnp.sin(x) * x)))(X), rtol=1e-12)


def test_a_function_that_swallows_exceptions_is_still_exact() -> None:
    """Finding a closed-over value stops a run with an exception; a function that catches
    every exception must not make checkpoint keep the run that was stopped."""

    def careful(x: Any) -> Any:
        def inner(y: Any) -> Any:
            try:
                return y * tnp.sin(x)
            except Exception:
                return y  # a fallback that would be a wrong derivative

        return tnp.sum(T.checkpoint(inner)(x**2))

    expected = T.grad(lambda x: tnp.sum(x**2 * tnp.sin(x)))(X)
    assert_allclose(T.grad(careful)(X), expected, rtol=1e-12)


def test_a_mutated_constant_is_still_detected_beside_a_closed_over_tracer() -> None:
    c = np.ones(3)
    f = lambda x: tnp.sum(T.checkpoint(lambda y: y * x * c)(tnp.sin(x)))
    _, pullback = T.vjp(f, X)
    assert_allclose(pullback(1.0)[0], np.sin(X) + X * np.cos(X), rtol=1e-12)
    c *= 2.0
    with pytest.raises(RuntimeError, match=r"checkpoint: an array .* was modified"):
        pullback(1.0)


def test_an_escaped_tracer_is_still_refused() -> None:
    leaked: list[Any] = []
    T.grad(lambda x: leaked.append(x) or tnp.sum(x))(X)
    f = T.checkpoint(lambda y: y * leaked[0])
    with pytest.raises(T.EscapedTracerError):
        T.grad(lambda x: tnp.sum(f(x)))(X)
    with pytest.raises(T.EscapedTracerError):
        f(X)
