"""Closure conversion: constructs whose functions close over a traced value are bound.

Each case closes over ``a`` (the value differentiated, batched, or an argument of the jitted
function) and receives none of it through its operands: a derivative with respect to ``a``
exists only if conversion made it an operand of the construct's primitive. Each is compared
with the same computation unrolled in Python (a ``while``, ``for`` or ``if``), under ``jit``
(where it must record a few ops, not the unrolled body) and, with the bound path forced, under
``grad``, ``jvp``, ``vmap``, ``jet`` and ``hessian``; the closed forms and finite differences
check the references. What conversion cannot reach (a module global, an attribute) and what
it must not convert (a function writing into a converted cell or list) falls back to the
algorithm, exactly.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import transforms as T
import transforms.numpy as tnp
from transforms import lax
from transforms.lax import _construct
from transforms.staging._program import Op

Fn = Callable[[Any], Any]
X0 = np.array([3.0, 1.5])
XS = np.array([[0.5, -0.3], [0.2, 0.8], [-1.1, 0.4], [0.7, 0.1]])


@dataclass(frozen=True)
class Case:
    name: str
    lax_fn: Fn  # a -> array, ``a`` reaching the construct only through a closure
    unrolled: Fn
    op: str  # the construct's primitive


def _newton(a: Any) -> Any:
    step = lambda x: x - (x * x - a) / (2 * x)
    return lax.while_loop(lambda x: tnp.any(tnp.abs(step(x) - x) > 1e-13), step, X0)


def _newton_unrolled(a: Any) -> Any:
    step = lambda x: x - (x * x - a) / (2 * x)
    x = X0
    while bool(tnp.any(tnp.abs(step(x) - x) > 1e-13)):
        x = step(x)
    return x


def _fori(a: Any) -> Any:
    return lax.fori_loop(0, 5, lambda i, c: tnp.sin(c) * a + c * 0.5, X0)


def _fori_unrolled(a: Any) -> Any:
    c = X0
    for _ in range(5):
        c = tnp.sin(c) * a + c * 0.5
    return c


def _rnn_step(w: Any, u: Any) -> Callable[[Any, Any], Any]:
    def step(h: Any, x: Any) -> tuple[Any, Any]:
        h = tnp.tanh(w * h + u * x[::-1] + 0.1)
        return h, tnp.sum(h**2)

    return step


def _rnn(a: Any, checkpoint: bool = False) -> Any:
    h, ys = lax.scan(_rnn_step(a, a**2), X0 / 3, XS, checkpoint=checkpoint)
    return tnp.concatenate([h, ys])


def _rnn_unrolled(a: Any) -> Any:
    step, h, ys = _rnn_step(a, a**2), X0 / 3, []
    for x in XS:
        h, y = step(h, x)
        ys.append(y)
    return tnp.concatenate([h, tnp.stack(ys)])


def _cond(a: Any) -> Any:
    return lax.cond(a[0] > 1.0, lambda x: tnp.sin(x * a), lambda x: x * a**2, X0)


def _cond_unrolled(a: Any) -> Any:
    return tnp.sin(X0 * a) if bool(a[0] > 1.0) else X0 * a**2


def _branches(a: Any) -> list[Fn]:
    return [lambda x: x * a, lambda x: tnp.exp(x * a[1]), lambda x: tnp.cos(a) * x**2]


def _switch(a: Any) -> Any:
    return lax.switch(tnp.astype(tnp.floor(a[0]), np.int64), _branches(a), X0)


def _switch_unrolled(a: Any) -> Any:
    return _branches(a)[min(max(int(np.floor(T.core.concrete(a[0]))), 0), 2)](X0)


def _map(a: Any) -> Any:
    return lax.map(lambda r: tnp.sum(tnp.sin(r * a)), XS)


def _map_unrolled(a: Any) -> Any:
    return tnp.stack([tnp.sum(tnp.sin(r * a)) for r in XS])


def _helper(a: Any) -> Any:
    """The body calls a nested helper that closes over ``a``."""
    scale = lambda c: c * a

    def body(i: Any, c: Any) -> Any:
        return tnp.sin(scale(c)) + c * 0.5

    return lax.fori_loop(0, 4, body, X0)


def _helper_unrolled(a: Any) -> Any:
    c = X0
    for _ in range(4):
        c = tnp.sin(c * a) + c * 0.5
    return c


def _params(a: Any) -> Any:
    """A closure cell holds a list of traced parameters, a dict and a tuple of them."""
    params = [a, a**2]
    extra = {"b": tnp.cos(a)}
    pair = (a, 0.5)

    def step(h: Any, x: Any) -> tuple[Any, Any]:
        h = tnp.tanh(params[0] * h + params[1] * x + extra["b"] * pair[1] * pair[0])
        return h, h[0]

    h, ys = lax.scan(step, X0 / 3, XS)
    return tnp.concatenate([h, ys])


def _params_unrolled(a: Any) -> Any:
    h, ys = X0 / 3, []
    for x in XS:
        h = tnp.tanh(a * h + a**2 * x + tnp.cos(a) * 0.5 * a)
        ys.append(h[0])
    return tnp.concatenate([h, tnp.stack(ys)])


def _scaled(c: Any, x: Any, *, w: Any, u: Any) -> tuple[Any, Any]:
    return tnp.sin(c * w) + u, c


def _partial_and_default(a: Any) -> Any:
    """A ``functools.partial`` holding traced values, and a default argument holding one."""
    f, k = functools.partial(_scaled, w=a, u=a**2), tnp.cos(a)
    g = lambda c, x, k=k: f(c * k, x)
    return tnp.concatenate([tnp.ravel(t) for t in lax.scan(g, X0, XS)])


def _partial_and_default_unrolled(a: Any) -> Any:
    c, ys = X0, []
    for _ in XS:
        c, y = tnp.sin(c * tnp.cos(a) * a) + a**2, c * tnp.cos(a)
        ys.append(y)
    return tnp.concatenate([c, tnp.ravel(tnp.stack(ys))])


CASES = [
    Case("while_loop", _newton, _newton_unrolled, "while_loop"),
    Case("fori_loop", _fori, _fori_unrolled, "fori_loop"),
    Case("scan", _rnn, _rnn_unrolled, "scan"),
    Case("scan_checkpoint", lambda a: _rnn(a, checkpoint=True), _rnn_unrolled, "scan"),
    Case("cond", _cond, _cond_unrolled, "switch"),
    Case("switch", _switch, _switch_unrolled, "switch"),
    Case("map", _map, _map_unrolled, "scan"),
    Case("nested_helper", _helper, _helper_unrolled, "fori_loop"),
    Case("list_of_params", _params, _params_unrolled, "scan"),
    Case("partial_and_default", _partial_and_default, _partial_and_default_unrolled, "scan"),
]
IDS = [c.name for c in CASES]
POINT = np.array([1.7, 0.6])
OTHER = np.array([0.4, 2.3])  # other branches / trip counts than POINT
BATCH = np.array([[1.7, 0.6], [0.4, 2.3], [2.6, 0.9], [1.2, 1.4]])


def _close(a: Any, b: Any) -> None:
    for x, y in zip(T.tree_util.tree_leaves(a), T.tree_util.tree_leaves(b), strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-12, atol=1e-13)


def _weights(c: Case) -> np.ndarray:
    return np.random.default_rng(5).normal(size=np.size(c.unrolled(POINT)))


def _ops(jitted: Any, *args: Any) -> list[str]:
    program = jitted.lower(*args).program
    return [i.primitive.name for i in program.instructions if isinstance(i, Op)]


@pytest.fixture
def staged(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bind constructs under transforms as a live ``jit`` recording makes them."""
    monkeypatch.setattr(_construct, "staging", lambda: True)


def test_the_references_are_right() -> None:
    """The unrolled references against closed forms and finite differences."""
    np.testing.assert_allclose(_newton_unrolled(POINT), np.sqrt(POINT), rtol=1e-15)
    jac = T.jacfwd(_newton_unrolled)(POINT)
    np.testing.assert_allclose(jac, np.diag(0.5 / np.sqrt(POINT)), rtol=1e-9, atol=1e-15)
    for c in CASES:
        T.check_grads(c.unrolled, (POINT,), order=2, modes=("fwd", "rev"))


# ---- under jit: a few ops, never the unrolled body -----------------------------------------
@pytest.mark.parametrize("c", CASES, ids=IDS)
def test_jit(c: Case) -> None:
    """``jit(f)``, ``jit(grad)`` with respect to the closed-over value, ``jit(vmap)`` over it
    and ``jit(vmap(grad))``: each records the construct (a few ops) and equals the unrolled
    reference at the recorded point and at replays whose branches or trip counts differ."""
    w = _weights(c)
    scalar = lambda a: tnp.sum(c.lax_fn(a) * w)
    ref_scalar = lambda a: tnp.sum(c.unrolled(a) * w)
    cases = [
        (T.jit(c.lax_fn), c.unrolled, False),
        (T.jit(T.grad(scalar)), T.grad(ref_scalar), False),
        (T.jit(T.vmap(c.lax_fn)), c.unrolled, True),
        (T.jit(T.vmap(T.grad(scalar))), T.grad(ref_scalar), True),
    ]
    for jitted, reference, batched in cases:
        args = (BATCH, BATCH[::-1], BATCH[1:]) if batched else (POINT, OTHER, POINT)
        for arg in args:
            want = np.stack([reference(a) for a in arg]) if batched else reference(arg)
            _close(jitted(arg), want)
        ops = _ops(jitted, args[0])
        assert c.op in ops and len(ops) <= 12, ops
        assert jitted.stats.replays >= 1


def test_a_10000_step_loop_closing_over_an_argument_records_a_few_ops() -> None:
    def decay(a: Any) -> Any:
        return lax.fori_loop(0, 10_000, lambda i, c: tnp.sin(c) * a + c * 0.3 + 0.1, X0)

    def unrolled(a: Any) -> Any:
        c = X0
        for _ in range(10_000):
            c = tnp.sin(c) * a + c * 0.3 + 0.1
        return c

    a = np.array([0.5, -0.2])
    jitted = T.jit(decay)
    assert _ops(jitted, a) == ["fori_loop"]
    for x in (a, a + 0.1):
        np.testing.assert_array_equal(jitted(x), decay(x))
        _close(jitted(x), unrolled(x))
    loss = lambda a: tnp.sum(decay(a) ** 2)
    jitted_grad = T.jit(T.grad(loss))
    assert len(_ops(jitted_grad, a)) <= 6
    _close(jitted_grad(a), T.grad(lambda a: tnp.sum(unrolled(a) ** 2))(a))
    jitted_vmap = T.jit(T.vmap(decay))
    assert _ops(jitted_vmap, np.stack([a, a + 0.1])) == ["fori_loop"]


def test_jitted_newton_sqrt_closing_over_its_argument() -> None:
    """The issue's example: ``x - (x*x - a) / (2*x)`` closing over ``a``, one op; its
    derivative the closed form ``1 / (2 sqrt(a))``."""

    def sqrt(a: Any) -> Any:
        step = lambda x: x - (x * x - a) / (2 * x)
        return lax.while_loop(lambda x: abs(step(x) - x) > 1e-12, step, a)

    jitted, jitted_grad = T.jit(sqrt), T.jit(T.grad(sqrt))
    assert _ops(jitted, np.array(100.0)) == ["while_loop"]
    assert _ops(jitted_grad, np.array(100.0)).count("while_loop") == 1
    for a in (100.0, 2.0, 1e4):
        np.testing.assert_allclose(jitted(np.array(a)), np.sqrt(a), rtol=1e-14)
        np.testing.assert_allclose(jitted_grad(np.array(a)), 0.5 / np.sqrt(a), rtol=1e-9)
    many = np.array([4.0, 2.0, 1e4, 0.01])
    np.testing.assert_allclose(T.jit(T.vmap(sqrt))(many), np.sqrt(many), rtol=1e-14)
    np.testing.assert_allclose(T.jit(T.vmap(T.grad(sqrt)))(many), 0.5 / np.sqrt(many), rtol=1e-9)


def test_an_integer_closed_over_under_jit_of_vmap() -> None:
    """An integer value closed over is an operand with no derivative."""

    def f(n: Any, x: Any) -> Any:
        return lax.fori_loop(0, 3, lambda i, c: c * x + n, 1.0)

    ns, xs = np.array([1, 2, 5]), np.array([0.5, 1.5, -2.0])
    jitted = T.jit(T.vmap(T.grad(f, argnums=1)))
    for n in (ns, ns[::-1]):
        _close(jitted(n, xs), 3 * xs**2 + 2 * n * xs + n)  # d/dx of x**3 + n x**2 + n x + n
    assert _ops(jitted, ns, xs).count("fori_loop") == 1


def test_a_recursive_helper_and_a_cell_assigned_later() -> None:
    """A helper whose cell holds itself (recursion) and ``a``, and a cell the enclosing
    function assigns after defining the body: rebuilt once each, one op."""

    def f(a: Any) -> Any:
        def power(x: Any, k: int) -> Any:
            return x if k == 0 else power(x, k - 1) * a

        def body(i: Any, x: Any) -> Any:
            return power(x, 2) + offset

        offset = 0.5
        return lax.fori_loop(0, 3, body, a)

    def unrolled(a: Any) -> Any:
        x = a
        for _ in range(3):
            x = x * a * a + 0.5
        return x

    jitted, jitted_grad = T.jit(f), T.jit(T.grad(f))
    assert _ops(jitted, np.array(0.9)) == ["fori_loop"]
    for a in (0.9, -0.6):
        _close(jitted(np.array(a)), unrolled(a))
        _close(jitted_grad(np.array(a)), T.grad(unrolled)(a))
    batch = np.array([0.9, -0.6, 1.1])
    _close(T.jit(T.vmap(T.grad(f)))(batch), np.stack([T.grad(unrolled)(a) for a in batch]))


def test_nested_constructs_closing_over_the_outer_carry_are_one_op_each() -> None:
    """The inner ``cond``'s branches close over the outer ``scan``'s carry and over ``a``:
    under ``jit`` the outer scan is one op (the inner one runs inside it), and its
    gradient and Hessian equal the unrolled ones."""

    def f(a: Any) -> Any:
        def body(c: Any, x: Any) -> tuple[Any, Any]:
            y = lax.cond(x > 0, lambda: tnp.sin(c) * x * a, lambda: c**2 + x)
            return y, tnp.sum(y)

        c, ys = lax.scan(body, a, np.array([0.5, -0.3, 0.8, -1.1]))
        return tnp.sum(c) + tnp.sum(ys**2)

    def unrolled(a: Any) -> Any:
        c, total = a, 0.0
        for x in (0.5, -0.3, 0.8, -1.1):
            c = tnp.sin(c) * x * a if x > 0 else c**2 + x
            total = total + tnp.sum(c) ** 2
        return tnp.sum(c) + total

    a = np.array([0.3, -0.7])
    assert _ops(T.jit(f), a).count("scan") == 1 and "switch" not in _ops(T.jit(f), a)
    assert _ops(T.jit(T.grad(f)), a).count("scan") == 2
    _close(T.jit(T.grad(f))(a), T.grad(unrolled)(a))
    _close(T.jit(T.hessian(f))(a), T.hessian(unrolled)(a))


# ---- without jit, the bound path forced: every mode equals the unrolled one ---------------
def _modes(c: Case) -> dict[str, Callable[[Fn], Any]]:
    w = _weights(c)
    tangent = np.array([0.3, -1.1])
    series = ([np.array([1.0, -0.5]), np.array([0.1, 0.3]), np.zeros(2)],)
    return {
        "grad": lambda f: T.grad(lambda a: tnp.sum(f(a) * w))(POINT),
        "jvp": lambda f: T.jvp(f, (POINT,), (tangent,)),
        "vjp": lambda f: T.vjp(f, OTHER)[1](w),
        "vmap": lambda f: np.stack([f(a) for a in BATCH]) if f in _REFS else T.vmap(f)(BATCH),
        "vmap_grad": lambda f: (
            np.stack([T.grad(lambda a: tnp.sum(f(a) * w))(a) for a in BATCH])
            if f in _REFS
            else T.vmap(T.grad(lambda a: tnp.sum(f(a) * w)))(BATCH)
        ),
        "jet": lambda f: T.jet(f, (POINT,), series),
        "hessian": lambda f: T.hessian(lambda a: tnp.sum(f(a) * w))(OTHER),
        "sparsity": lambda f: (
            T.jacobian_sparsity(f)(POINT).toarray(),
            T.hessian_sparsity(lambda a: tnp.sum(f(a) * w))(OTHER).toarray(),
        ),
    }


_REFS = {c.unrolled for c in CASES}
MODES = list(_modes(CASES[0]))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("c", CASES, ids=IDS)
def test_bound_modes_equal_unrolled(
    c: Case, mode: str, staged: None, traced_binds: list[str]
) -> None:
    run = _modes(c)[mode]
    _close(run(c.lax_fn), run(c.unrolled))
    if mode != "sparsity":  # (sparsity detection inlines the function: no rule to use)
        assert c.op in traced_binds, "the construct was bound on traced operands"


# ---- what is not converted falls back, exactly ------------------------------------------
_GLOBAL: Any = None


def _through_global(a: Any) -> Any:
    global _GLOBAL
    _GLOBAL = a
    return lax.fori_loop(0, 3, lambda i, x: x * _GLOBAL, a)


class _Holder:
    a: Any = None


def _through_attribute(a: Any) -> Any:
    holder = _Holder()
    holder.a = a
    return lax.fori_loop(0, 3, lambda i, x: x * holder.a, a)


def _nonlocal_write(a: Any) -> Any:
    total = a

    def body(i: Any, x: Any) -> Any:
        nonlocal total
        total = total + x
        return x * a

    return lax.fori_loop(0, 3, body, a) + total


def _list_append(a: Any) -> Any:
    seen = [a]

    def body(i: Any, x: Any) -> Any:
        seen.append(x)
        return x * seen[0]

    return lax.fori_loop(0, 3, body, a) + seen[-1]


# Each with its value as a Python function of a (all powers of a).
FALLBACKS: dict[str, tuple[Fn, Callable[[float], float]]] = {
    "global": (_through_global, lambda a: a**4),
    "attribute": (_through_attribute, lambda a: a**4),
    "nonlocal_write": (_nonlocal_write, lambda a: a**4 + a + a + a**2 + a**3),
    "list_append": (_list_append, lambda a: a**4 + a**3),
}


@pytest.mark.parametrize("name", list(FALLBACKS))
def test_what_is_not_converted_falls_back_exactly(
    name: str, staged: None, traced_binds: list[str]
) -> None:
    f, value = FALLBACKS[name]
    h = 1e-6
    for a in (1.5, 0.7):
        np.testing.assert_allclose(f(a), value(a), rtol=1e-14)
        fd = (value(a + h) - value(a - h)) / (2 * h)
        np.testing.assert_allclose(T.grad(f)(a), fd, rtol=1e-8)
        fd2 = (value(a + h) - 2 * value(a) + value(a - h)) / h**2
        np.testing.assert_allclose(T.grad(T.grad(f))(a), fd2, rtol=1e-4)
    batch = np.array([1.5, 0.7, -0.4])
    _close(T.vmap(T.grad(f))(batch), np.stack([T.grad(f)(a) for a in batch]))
    assert traced_binds == [], "no bind on traced operands: the algorithm ran"


@pytest.mark.parametrize("name", list(FALLBACKS))
def test_what_is_not_converted_is_exact_under_jit(name: str) -> None:
    """Recorded unrolled (or, for the global, whose later binding is a stale tracer that
    ``jit`` refuses to guard, run eagerly with a warning), the values are exact."""
    global _GLOBAL
    _GLOBAL = None
    f, value = FALLBACKS[name]
    jitted, jitted_grad = T.jit(f), T.jit(T.grad(f))
    h = 1e-6
    with pytest.warns(T.JitWarning, match="by name") if name == "global" else nullcontext():
        for a in (1.5, 0.7, -0.4):
            np.testing.assert_allclose(jitted(np.array(a)), value(a), rtol=1e-14)
            fd = (value(a + h) - value(a - h)) / (2 * h)
            np.testing.assert_allclose(jitted_grad(np.array(a)), fd, rtol=1e-8)
    if name != "global":
        assert "fori_loop" not in _ops(jitted, np.array(1.5))
