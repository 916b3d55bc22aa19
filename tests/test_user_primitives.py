"""Primitives made by ``transforms.primitive``, with pytree arguments, in every mode.

A tracer inside a container argument must reach the rules, never the implementation: the
implementation below iterates to a fixed point, and differentiating *it* instead of the rule
gives a slightly different (wrong) number, so each test compares against the closed form of
the rule, which these tolerances tell apart from the implementation's derivative.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import transforms as T
import transforms.numpy as tnp
from transforms.core import Primitive


def _iterate(params: tuple[Any, Any], x0: Any) -> Any:
    """x = a * cos(x) + b, by an iteration that stops early: its own derivative (what
    differentiating the implementation would give) is not the implicit one of the rules."""
    a, b = params
    x = x0
    for _ in range(6):
        x = a * tnp.cos(x) + b
    return x


fixed_point = T.primitive(_iterate)


def _dx(ans: Any, params: tuple[Any, Any]) -> tuple[Any, Any]:
    """d x / d a and d x / d b at the fixed point x = a cos x + b."""
    a, _ = params
    denominator = 1 + a * tnp.sin(ans)
    return tnp.cos(ans) / denominator, 1 / denominator


T.defjvp(
    fixed_point,
    lambda t, ans, params, x0: _dx(ans, params)[0] * t[0] + _dx(ans, params)[1] * t[1],
    None,
)
T.defvjp(
    fixed_point,
    lambda ans, params, x0: lambda ct: tuple(ct * d for d in _dx(ans, params)),
    None,
)
T.defbatch(fixed_point, lambda args, dims: (fixed_point(*args), 0))


def closed_form(a: float, b: float) -> tuple[float, float, float]:
    """The answer and the rules' derivatives in a and b, at that answer."""
    x = float(_iterate((a, b), 0.0))
    s = 1 + a * np.sin(x)
    return x, np.cos(x) / s, 1 / s


def test_container_argument_reaches_the_rules_in_every_first_order_mode() -> None:
    a, b = 0.5, 0.3
    x, da, db = closed_form(a, b)

    def f(a: Any, b: Any) -> Any:
        return fixed_point((a, b), 0.0)

    np.testing.assert_allclose(f(a, b), x, rtol=1e-12)
    np.testing.assert_allclose(T.grad(f, argnums=(0, 1))(a, b), (da, db), rtol=1e-12)
    np.testing.assert_allclose(T.jvp(f, (a, b), (1.0, 0.0))[1], da, rtol=1e-12)
    np.testing.assert_allclose(T.jvp(f, (a, b), (0.0, 1.0))[1], db, rtol=1e-12)
    # the implementation's own (truncated) derivative is measurably different
    _, truncated = T.jvp(lambda a: _iterate((a, b), 0.0), (a,), (1.0,))
    assert abs(truncated - da) > 1e-4, (truncated, da)


def test_container_argument_at_second_order_in_every_pairing() -> None:
    b = 0.3

    def f(a: Any) -> Any:
        return fixed_point((a, b), 0.0)

    # d/da of the rule g(a, x) = cos x / (1 + a sin x) along x(a), whose derivative is g:
    # dg/da + dg/dx * g
    a = 0.5
    x, g, _ = closed_form(a, b)
    s = 1 + a * np.sin(x)
    expected = (-np.cos(x) * np.sin(x) - (np.sin(x) + a) * g) / s**2
    for hess in (
        T.jacfwd(T.jacfwd(f)),
        T.jacfwd(T.jacrev(f)),
        T.jacrev(T.jacfwd(f)),
        T.grad(T.grad(f)),
    ):
        np.testing.assert_allclose(hess(a), expected, rtol=1e-12)


def test_pytree_tangents_and_cotangents_have_the_argument_structure() -> None:
    seen: dict[str, Any] = {}

    @T.primitive
    def weighted(d: dict[str, Any], xs: list[Any]) -> Any:
        return d["w"] * (xs[0] + 2 * xs[1])

    def jvp_d(t: Any, ans: Any, d: Any, xs: Any) -> Any:
        seen["t_d"] = t
        return t["w"] * (xs[0] + 2 * xs[1])

    def jvp_xs(t: Any, ans: Any, d: Any, xs: Any) -> Any:
        seen["t_xs"] = t
        return d["w"] * (t[0] + 2 * t[1])

    T.defjvp(weighted, jvp_d, jvp_xs)
    T.defvjp(
        weighted,
        lambda ans, d, xs: lambda ct: {"w": tnp.sum(ct * (xs[0] + 2 * xs[1]))},
        lambda ans, d, xs: lambda ct: [ct * d["w"], 2 * ct * d["w"]],
    )
    w, x0, x1 = 1.5, np.array([1.0, 2.0]), np.array([0.5, -1.0])

    def f(w: Any, x0: Any, x1: Any) -> Any:
        return tnp.sum(weighted({"w": w}, [x0, x1]))

    g = T.grad(f, argnums=(0, 1, 2))(w, x0, x1)
    np.testing.assert_allclose(g[0], np.sum(x0 + 2 * x1))
    np.testing.assert_allclose(g[1], [w, w])
    np.testing.assert_allclose(g[2], [2 * w, 2 * w])
    _, t = T.jvp(f, (w, x0, x1), (0.0, np.ones(2), np.zeros(2)))
    np.testing.assert_allclose(t, 2 * w)
    assert isinstance(seen["t_xs"], list) and len(seen["t_xs"]) == 2
    np.testing.assert_array_equal(seen["t_xs"][1], np.zeros(2))  # the untraced leaf: zeros


def test_vmap_of_a_pytree_primitive() -> None:
    a = np.array([0.2, 0.5, 0.8])
    out = T.vmap(lambda a: fixed_point((a, 0.3), 0.0))(a)
    np.testing.assert_allclose(out, [closed_form(ai, 0.3)[0] for ai in a], rtol=1e-12)
    grads = T.vmap(T.grad(lambda a: fixed_point((a, 0.3), 0.0)))(a)
    np.testing.assert_allclose(grads, [closed_form(ai, 0.3)[1] for ai in a], rtol=1e-12)


def test_a_missing_rule_for_a_container_argument_is_an_error() -> None:
    only_first = T.primitive(lambda pair, y: pair[0] * y)
    T.defjvp(only_first, lambda t, ans, pair, y: t[0] * y)
    with pytest.raises(T.NoRuleError, match=r"<lambda>.*jvp"):
        T.jvp(lambda y: only_first((1.0, 2.0), y), (3.0,), (1.0,))


def test_a_bare_primitive_refuses_a_container_holding_a_tracer() -> None:
    p = Primitive("pair_sum", lambda pair: pair[0] + pair[1])
    T.defjvp(p, lambda t, ans, pair: t[0] + t[1])
    with pytest.raises(TypeError, match=r"pair_sum.*argument 0 is a tuple that holds a traced"):
        T.grad(lambda x: p.bind((x, 1.0)))(1.0)
    with pytest.raises(TypeError, match=r"transforms\.primitive"):
        T.jvp(lambda x: p.bind([x, x]), (1.0,), (1.0,))
    assert p.bind((1.0, 2.0)) == 3.0  # plain values are fine
