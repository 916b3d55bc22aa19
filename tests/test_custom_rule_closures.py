"""``custom_jvp`` / ``custom_vjp`` functions whose function or rules close over a traced value.

A value traced by the transform that applies the rules (the one differentiating or batching
the call) cannot be read from a closure: the rules would not give its derivative. JAX 0.10
raises ``UnexpectedTracerError`` (a ``TypeError``) for the differentiating transforms; so do
we, in every mode, instead of a raw-NumPy ``TypeError``, an escaped tracer or a leaked
``BatchTracer`` as the result. A value of an outer transform is a constant to the rules and
stays exact (checked against the function without custom rules, whose rules are the true
derivative here).
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
WIDE = np.stack([C, 2 * C, -C])


def _closing_over(w: Any, kind: str) -> Callable[[Any], Any]:
    """``y -> sin(y w)`` with the true derivative as its custom rule, ``w`` from its closure."""
    if kind == "custom_jvp":

        @T.custom_jvp
        def g(y: Any) -> Any:
            return tnp.sin(y * w)

        @g.defjvp
        def g_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
            (y,), (t,) = primals, tangents
            return g(y), tnp.cos(y * w) * w * t

        return g

    @T.custom_vjp
    def h(y: Any) -> Any:
        return tnp.sin(y * w)

    h.defvjp(lambda y: (h(y), y), lambda y, ct: (tnp.cos(y * w) * w * ct,))
    return h


def _plain(w: Any, kind: str) -> Callable[[Any], Any]:
    return lambda y: tnp.sin(y * w)


KINDS = ["custom_jvp", "custom_vjp"]

# The closure reads the very value the transform traces (x is both the argument's source and
# the closed-over value), so the rules cannot be applied.
SAME_LEVEL: dict[str, Callable[[Callable[[Any], Any]], Any]] = {
    "grad": lambda f: T.grad(f)(X),
    "jvp": lambda f: T.jvp(f, (X,), (C,)),
    "jacfwd": lambda f: T.jacfwd(f)(X),
    "jacrev": lambda f: T.jacrev(f)(X),
    "hessian": lambda f: T.hessian(f)(X),
    "vmap of grad": lambda f: T.vmap(T.grad(f))(WIDE),
    "vmap": lambda f: T.vmap(f)(WIDE),  # JAX closure-converts this one; we refuse it
    "linearize": lambda f: T.linearize(f, X)[1](C),
}


@pytest.mark.parametrize("mode", sorted(SAME_LEVEL))
@pytest.mark.parametrize("kind", KINDS)
def test_a_rule_closing_over_the_traced_value_is_refused(kind: str, mode: str) -> None:
    f = lambda x: tnp.sum(_closing_over(x, kind)(x**2))
    with pytest.raises(T.UnexpectedTracerError, match=f"{kind} function g|{kind} function h"):
        SAME_LEVEL[mode](f)
    assert issubclass(T.UnexpectedTracerError, TypeError)  # as JAX's


def test_a_bwd_rule_alone_closing_over_the_traced_value_is_refused() -> None:
    """The function and fwd take x as an argument; only bwd reads it from its closure."""

    def f(x: Any) -> Any:
        @T.custom_vjp
        def g(y: Any) -> Any:
            return tnp.sin(y)

        g.defvjp(lambda y: (g(y), y), lambda y, ct: (tnp.cos(y) * ct * (1.0 + 0.0 * x),))
        return tnp.sum(g(x**2))

    with pytest.raises(T.UnexpectedTracerError, match="the bwd rule of custom_vjp function g"):
        T.grad(f)(X)


# A value of an outer transform is a constant where the rules apply: exact.
OUTER: dict[str, Callable[[Callable[[Any, str], Callable[[Any], Any]], str], Any]] = {
    "grad of grad": lambda mk, kind: T.grad(
        lambda w: tnp.sum(T.grad(lambda x: tnp.sum(mk(w, kind)(x**2)))(X))
    )(C),
    "jacfwd of grad": lambda mk, kind: T.jacfwd(
        lambda w: T.grad(lambda x: tnp.sum(mk(w, kind)(x**2)))(X)
    )(C),
    "vmap of grad": lambda mk, kind: T.vmap(
        lambda w: T.grad(lambda x: tnp.sum(mk(w, kind)(x**2)))(X)
    )(WIDE),
    "grad, plain argument": lambda mk, kind: T.grad(lambda w: tnp.sum(mk(w, kind)(X)))(C),
}


@pytest.mark.parametrize("mode", sorted(OUTER))
@pytest.mark.parametrize("kind", KINDS)
def test_a_closed_over_value_of_an_outer_transform_stays_exact(kind: str, mode: str) -> None:
    assert_allclose(OUTER[mode](_closing_over, kind), OUTER[mode](_plain, kind), rtol=1e-12)
