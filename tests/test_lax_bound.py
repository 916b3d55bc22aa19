"""transforms.lax under transforms and ``jit``: one application of the construct's primitive.

Under a staging trace (``T.jit``'s recording), a construct is bound as its primitive under
every transform (the traced values its functions close over made operands), so its derived
rules run (and ``jit`` records one op); one that reads a traced value conversion cannot
reach (an attribute) runs its algorithm at the caller's level, and so does every construct
when nothing stages (eagerly faster). The two
paths must agree to rounding in every mode: each cell here runs a closure-free construct
both ways (the bound path forced by ``staging`` answering yes, the eager path by replacing
``apply`` with the algorithm) and checks that the bound path was taken.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import transforms as T
import transforms.numpy as tnp
from transforms import lax
from transforms.lax import _branch, _construct, _loops, _scan
from transforms.staging._program import Op

Fn = Callable[[Any], Any]
_STAGING = _construct.staging  # the real question, which the fixture below answers yes


def _grow(c: Any) -> Any:
    return c * 1.3 + 0.1 * tnp.sin(c)


def _step(c: Any, x: Any) -> tuple[Any, Any]:
    return tnp.tanh(c * x + 0.1), c * x


def _xs(x: Any) -> Any:
    return tnp.stack([x, x**2, tnp.cos(x), -x])


# Closure-free constructs (their functions read only their arguments), with the batch of
# examples whose predicates differ.
CLOSED: dict[str, Fn] = {
    "cond": lambda x: lax.cond(x[0] > 1.0, lambda y: tnp.sin(y) * y, lambda y: tnp.exp(y), x),
    "switch": lambda x: lax.switch(
        tnp.astype(tnp.floor(x[0]), np.int64), [tnp.sin, lambda y: y**3, tnp.exp], x
    ),
    "while_loop": lambda x: lax.while_loop(lambda c: tnp.sum(c**2) < 20.0, _grow, x),
    "fori_loop": lambda x: lax.fori_loop(0, 4, lambda i, c: tnp.sin(c) * (i + 1) + c, x),
    "scan": lambda x: tnp.concatenate([tnp.ravel(t) for t in lax.scan(_step, x, _xs(x))]),
    "scan_checkpoint": lambda x: tnp.concatenate(
        [tnp.ravel(t) for t in lax.scan(_step, x, _xs(x), reverse=True, checkpoint=2)]
    ),
    "map": lambda x: lax.map(lambda r: tnp.sum(tnp.sin(r) * r), tnp.outer(x, x + 1.0)),
}
POINT = np.array([1.4, 0.7, -0.3])
BATCH = np.array([[0.5, 0.3, -0.2], [1.5, -0.4, 0.6], [2.7, 0.2, 0.1], [-1.2, 0.9, 0.4]])


def _eager(primitive: Any, fun: Any, leaves: Any) -> tuple[Any, ...]:
    return tuple(fun(*leaves))


@pytest.fixture(autouse=True)
def staged(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test here binds constructs under transforms as a live ``jit`` recording makes
    them (the jit tests have a real one)."""
    monkeypatch.setattr(_construct, "staging", lambda: True)


def _both(monkeypatch: pytest.MonkeyPatch, compute: Callable[[], Any]) -> tuple[Any, Any]:
    """``compute()`` on the bound path, then with every construct run eagerly."""
    bound = compute()
    with monkeypatch.context() as m:
        for module in (_branch, _loops, _scan):
            m.setattr(module, "apply", _eager)
        eager = compute()
    return bound, eager


def _close(a: Any, b: Any) -> None:
    for x, y in zip(T.tree_util.tree_leaves(a), T.tree_util.tree_leaves(b), strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-12, atol=1e-13)


def _weights(f: Fn) -> np.ndarray:
    return np.random.default_rng(2).normal(size=np.size(f(POINT)))


def _modes(f: Fn) -> dict[str, Callable[[], Any]]:
    w = _weights(f)

    def scalar(x: Any) -> Any:
        return tnp.sum(f(x) * w)

    series = ([np.array([1.0, -0.5, 0.2]), np.array([0.1, 0.3, -0.2]), np.zeros(3)],)
    return {
        "jvp": lambda: T.jvp(f, (POINT,), (np.array([0.3, -1.1, 0.7]),)),
        "vjp": lambda: T.vjp(f, POINT)[1](w),
        "vmap": lambda: (T.vmap(f)(BATCH), T.vmap(T.grad(scalar))(BATCH)),
        "jet": lambda: T.jet(f, (POINT,), series),
        "grad_of_grad": lambda: T.grad(lambda x: T.grad(scalar)(x)[0])(POINT),
        "hessian": lambda: T.hessian(scalar)(POINT),
        "jacfwd_jacrev": lambda: T.jacfwd(T.jacrev(f))(POINT),
        "sparsity": lambda: (
            T.jacobian_sparsity(f)(POINT).toarray(),
            T.hessian_sparsity(scalar)(POINT).toarray(),
        ),
    }


MODES = list(_modes(CLOSED["cond"]))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(CLOSED))
def test_bound_path_equals_eager_path(
    name: str, mode: str, monkeypatch: pytest.MonkeyPatch, traced_binds: list[str]
) -> None:
    bound, eager = _both(monkeypatch, _modes(CLOSED[name])[mode])
    _close(bound, eager)
    if mode != "sparsity":  # (sparsity detection inlines the function: no rule to use)
        assert traced_binds, "the construct was bound on traced operands"


def test_a_closure_over_a_traced_value_is_converted_and_bound(traced_binds: list[str]) -> None:
    """``a`` is closed over: conversion makes it an operand, the construct is bound, and the
    derivatives with respect to it are the unrolled ones, ``d/da a**4 = 4 a**3``."""
    power = lambda a: lax.fori_loop(0, 3, lambda i, x: x * a, a)
    np.testing.assert_allclose(T.grad(power)(1.5), 4 * 1.5**3, rtol=1e-14)
    np.testing.assert_allclose(T.grad(T.grad(power))(1.5), 12 * 1.5**2, rtol=1e-14)
    np.testing.assert_allclose(T.vmap(T.grad(power))(np.array([1.0, 2.0])), [4.0, 32.0])
    assert traced_binds


class _Holder:
    a: Any = None


def test_a_traced_value_read_through_an_attribute_runs_the_algorithm(
    traced_binds: list[str],
) -> None:
    """An object's attribute is not converted: the guard meets the value on the first run
    and the construct falls back (no bind on traced operands), exactly."""

    def power(a: Any) -> Any:
        holder = _Holder()
        holder.a = a
        return lax.fori_loop(0, 3, lambda i, x: x * holder.a, a)

    np.testing.assert_allclose(T.grad(power)(1.5), 4 * 1.5**3, rtol=1e-14)
    np.testing.assert_allclose(T.grad(T.grad(power))(1.5), 12 * 1.5**2, rtol=1e-14)
    np.testing.assert_allclose(T.vmap(T.grad(power))(np.array([1.0, 2.0])), [4.0, 32.0])
    assert traced_binds == []


def test_the_refusal_is_not_swallowed_by_the_users_except() -> None:
    """A body that catches ``Exception`` around its use of a traced value read through an
    attribute (not converted) still gets the eager path (the refusal is no ``Exception``):
    the derivative is not dropped."""

    def f(a: Any) -> Any:
        holder = _Holder()
        holder.a = a

        def body(i: Any, x: Any) -> Any:
            try:
                return x * holder.a
            except Exception:  # the user's own handler
                return x

        return lax.fori_loop(0, 2, body, tnp.sin(a))

    np.testing.assert_allclose(T.grad(f)(0.4), T.grad(lambda a: tnp.sin(a) * a * a)(0.4))


def test_the_users_exceptions_propagate_unchanged() -> None:
    class Mine(Exception):
        pass

    def body(c: Any) -> Any:
        if T.core.concrete(c) > 3.0:
            raise Mine("from the body")
        return c * 2.0

    for transform in (T.grad, T.jacfwd, T.jit, lambda f: T.jit(T.grad(f))):
        with pytest.raises(Mine, match="from the body"):
            transform(lambda x: lax.while_loop(lambda c: c < 10.0, body, x))(1.0)


# ---- under jit: one op ---------------------------------------------------------------------
def _ops(jitted: Any, *args: Any) -> list[str]:
    program = jitted.lower(*args).program
    return [i.primitive.name for i in program.instructions if isinstance(i, Op)]


def _loop(n: int) -> Fn:
    return lambda x: lax.fori_loop(0, n, lambda i, c: tnp.sin(c) * 0.5 + c * 0.7 + 0.1, x)


def test_a_jitted_loop_is_one_op() -> None:
    x = np.array([0.3, -0.5])
    for n in (10, 10_000):
        jitted = T.jit(_loop(n))
        assert _ops(jitted, x) == ["fori_loop"]
        for y in (x, x + 1.0):
            np.testing.assert_array_equal(jitted(y), _loop(n)(y))
        assert jitted.stats.records == 1 and jitted.stats.replays == 1


def test_jitted_derivatives_of_a_loop_are_rule_applications() -> None:
    """``jit(grad)`` records the loop's pullback as one op (its forward pass is dead),
    ``jit(hessian)`` the derived loop, whatever the trip count; the values equal eager."""
    x = np.array([0.3, -0.5])

    def scalar(n: int) -> Fn:
        return lambda x: tnp.sum(_loop(n)(x) ** 2)

    for n in (10, 1000):
        for transform in (T.grad, T.hessian, T.jacrev, lambda f: T.vmap(T.grad(f))):
            arg = np.stack([x, x + 1]) if transform not in (T.grad, T.hessian, T.jacrev) else x
            jitted = T.jit(transform(scalar(n)))
            ops = _ops(jitted, arg)
            assert ops.count("fori_loop") >= 1 and len(ops) <= 6, ops
            for _ in range(2):
                np.testing.assert_allclose(
                    jitted(arg), transform(scalar(n))(arg), rtol=1e-13, atol=1e-15
                )


def test_jitted_newton_sqrt_closing_over_its_argument() -> None:
    """The body closes over ``a``, an argument of the jitted function: converted, the loop
    is one op, as when ``a`` travels through the carry."""

    def closing(a: Any) -> Any:
        step = lambda x: (x + a / x) / 2
        return lax.while_loop(lambda x: abs(step(x) - x) > 1e-12, step, a)

    def carried(a: Any) -> Any:
        def step(s: Any) -> Any:
            x, a = s
            return (x + a / x) / 2, a

        return lax.while_loop(lambda s: abs(step(s)[0] - s[0]) > 1e-12, step, (a, a))[0]

    for f in (closing, carried):
        jitted, jitted_grad = T.jit(f), T.jit(T.grad(f))
        for a in (4.0, 4.0, 100.0, 2.0):
            np.testing.assert_array_equal(jitted(np.array(a)), f(np.array(a)))
            np.testing.assert_allclose(jitted(np.array(a)), np.sqrt(a), rtol=1e-14)
            np.testing.assert_allclose(jitted_grad(np.array(a)), T.grad(f)(a), rtol=1e-14)
            np.testing.assert_allclose(jitted_grad(np.array(a)), 0.5 / np.sqrt(a), rtol=1e-9)
        assert jitted.stats.replays == 7 and jitted_grad.stats.replays == 7
        assert _ops(T.jit(f), np.array(100.0)) == ["while_loop"]


def test_a_closure_read_only_by_python_control_flow_is_replayed_under_jit() -> None:
    """The body reads ``a`` only in an ``if``: converted, ``a`` is an operand of the op,
    whose replay decides on the value it is given."""
    f = lambda a: lax.fori_loop(0, 3, lambda i, x: x * 2.0 if a > 0 else x, a)
    jitted = T.jit(f)
    for a in (2.0, 5.0, -1.0, 3.0):
        np.testing.assert_array_equal(jitted(np.array(a)), f(np.array(a)))
    assert jitted.stats.records == 1 and jitted.stats.replays == 3
    assert _ops(jitted, np.array(2.0)) == ["fori_loop"]


def test_an_attribute_read_only_by_python_control_flow_runs_eagerly_under_jit() -> None:
    """Read through an object's attribute (not converted), such a value would be replayed
    as recorded: ``jit`` runs those calls eagerly."""

    def f(a: Any) -> Any:
        holder = _Holder()
        holder.a = a
        return lax.fori_loop(0, 3, lambda i, x: x * 2.0 if holder.a > 0 else x, a)

    jitted = T.jit(f)
    with pytest.warns(T.JitWarning, match="'fori_loop' reads a value of the recording"):
        for a in (2.0, 5.0, -1.0, 3.0):
            np.testing.assert_array_equal(jitted(np.array(a)), f(np.array(a)))
    assert jitted.stats.replays == 0


def test_nested_constructs_whose_inner_functions_close_over_the_outer_arguments() -> None:
    """The outer loop closes over nothing (bound); its body's ``cond`` branches close over
    the body's argument ``c`` (the inner one falls back, inside the outer's rules)."""

    def body(c: Any, x: Any) -> tuple[Any, Any]:
        y = lax.cond(x > 0, lambda: tnp.sin(c) * x, lambda: c**2 + x)
        return y, tnp.sum(y)

    def f(v: Any) -> Any:
        c, ys = lax.scan(body, v, np.array([0.5, -0.3, 0.8, -1.1]))
        return tnp.sum(c) + tnp.sum(ys**2)

    def unrolled(v: Any) -> Any:
        c, total = v, 0.0
        for x in (0.5, -0.3, 0.8, -1.1):
            c = tnp.sin(c) * x if x > 0 else c**2 + x
            total = total + tnp.sum(c) ** 2
        return tnp.sum(c) + total

    v = np.array([0.3, -0.7])
    for transform in (T.grad, T.hessian, lambda f: T.jit(T.grad(f))):
        _close(transform(f)(v), transform(unrolled)(v))
    vs = np.array([[0.3, -0.7], [1.1, 0.2]])
    _close(T.vmap(T.grad(f))(vs), np.stack([T.grad(unrolled)(v) for v in vs]))
    _close(T.jit(f)(v), unrolled(v))


def test_without_a_staging_trace_a_construct_under_a_transform_runs_its_algorithm(
    monkeypatch: pytest.MonkeyPatch, traced_binds: list[str]
) -> None:
    """Eagerly (no ``jit`` recording live) the algorithm runs at the caller's level, which
    costs less than the derived rules; the values are the bound path's."""
    f = CLOSED["scan"]
    w = _weights(f)
    bound = T.grad(lambda x: tnp.sum(f(x) * w))(POINT)
    assert traced_binds
    traced_binds.clear()
    monkeypatch.setattr(_construct, "staging", _STAGING)
    eager = T.grad(lambda x: tnp.sum(f(x) * w))(POINT)
    assert not traced_binds
    _close(bound, eager)
