"""Reliability: never a silently wrong derivative, under faults, scale, mutation and bad input.

- **exceptions** raised by the user's function (or a rule, or a custom backward pass) at any
  depth of nested transforms leave ``current_traces() == ()``, leave user arrays writeable, and
  the next transform works and is exact;
- **memory**: no intermediate outlives its transform (weak references to the arrays a tiny
  spying primitive sees are dead after ``gc.collect()``), and 200 repeated ``grad`` calls do
  not grow the traced memory (``tracemalloc``, call 50 against call 200);
- **scale**: a chain of ``CHAIN_PRIMITIVES`` primitives (1,000,000 with ``TRANSFORMS_LONG=1``,
  200,000 otherwise, to keep the default run short) differentiates under the default
  recursion limit, with the analytic value, and its graph is freed without recursion;
- **mutation**: an operand a rule captured (a constant, an input, a residual), mutated in
  place after its use and before the backward pass, never changes the derivative: the
  mutation is either harmless (a copy was taken) or refused (the array is read-only while a
  pullback may read it), for every way of holding a reference to the buffer;
- **bad input**: strings, None, objects, bools and ints to every transform; NaN and inf;
  empty and 0-d arrays; mismatched tangents and cotangents; raw NumPy functions on traced
  values (dispatched with the right derivative, or a clear error: never a dropped one).
"""

from __future__ import annotations

import gc
import math
import os
import platform
import subprocess
import sys
import threading
import tracemalloc
import warnings
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from numpy.testing import assert_allclose

import transforms as T
import transforms.numpy as tnp
from transforms.core import Primitive, current_traces
from transforms.forward import defjvp
from transforms.reverse import defvjp


@pytest.fixture(autouse=True)
def _no_leftover_traces() -> Iterator[None]:
    assert current_traces() == ()
    yield
    assert current_traces() == ()


def close(actual: Any, expected: Any, rtol: float = 1e-12, atol: float = 1e-12) -> None:
    assert np.shape(actual) == np.shape(expected), (np.shape(actual), np.shape(expected))
    assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol)


# =============================================================================================
# Exceptions at any depth
# =============================================================================================
class Boom(Exception):
    pass


class Abort(BaseException):  # like KeyboardInterrupt: not an Exception
    pass


def _wrap(kind: str, f: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """One transform layer, as a function of a vector ``x`` returning a vector or scalar."""
    if kind == "grad":
        return T.grad(lambda x: tnp.sum(f(x)))
    if kind == "jacfwd":
        return T.jacfwd(f)
    if kind == "jacrev":
        return T.jacrev(f)
    if kind == "vmap":  # over a batch of copies of x, then back to x's shape
        return lambda x: tnp.sum(T.vmap(f)(tnp.stack([x, 2.0 * x])), axis=0)
    if kind == "jvp":
        return lambda x: T.jvp(f, (x,), (tnp.ones_like(x),))[1]
    if kind == "vjp":
        return lambda x: T.vjp(f, x)[1](tnp.ones_like(f(x)))[0]
    if kind == "linearize":
        return lambda x: T.linearize(f, x)[1](tnp.ones_like(x))
    if kind == "checkpoint":
        return T.checkpoint(f)
    raise ValueError(kind)


NESTINGS = [
    ("grad",),
    ("grad", "grad"),
    ("jacfwd", "jacrev"),
    ("vmap", "grad"),
    ("grad", "vmap"),
    ("jvp", "vjp", "grad"),
    ("jacrev", "jvp", "vmap", "grad"),
    ("vjp", "linearize", "checkpoint", "jacfwd"),
    ("grad", "jacfwd", "jacrev", "jvp"),
]


def _nest(kinds: tuple[str, ...], f: Callable[[Any], Any]) -> Callable[[Any], Any]:
    for kind in reversed(kinds):
        f = _wrap(kind, f)
    return f


def _reference(x: Any) -> Any:
    return tnp.sin(x) * x + 0.5 * x * x * x


def _raise_at(where: str, exc: BaseException) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        y = tnp.sin(x) * x
        if where == "before":
            raise exc
        z = y + 0.5 * x * x * x
        if where == "after":
            raise exc
        return z

    return f


@pytest.mark.parametrize("kinds", NESTINGS, ids="-".join)
@pytest.mark.parametrize("where", ["before", "after"])
@pytest.mark.parametrize("exc_type", [Boom, Abort])
def test_exception_at_any_depth_unwinds_every_trace(
    kinds: tuple[str, ...], where: str, exc_type: type[BaseException]
) -> None:
    x = np.array([0.3, -0.7])
    before = _nest(kinds, _reference)(x)
    with pytest.raises(exc_type):
        _nest(kinds, _raise_at(where, exc_type("inside")))(x)
    assert current_traces() == ()
    after = _nest(kinds, _reference)(x)  # the next transform works and is exact
    close(after, before, rtol=0, atol=0)
    # and against an independent computation where it is simple: d/dx of the reference
    if kinds == ("grad",):
        close(after, np.sin(x) + x * np.cos(x) + 1.5 * x * x)


def test_exception_deep_inside_user_code_at_every_level() -> None:
    """Each level of grad(grad(grad(f))) raises in turn, caught by the user one level up."""

    def level(depth: int, fail_at: int) -> Callable[[Any], Any]:
        def g(x: Any) -> Any:
            if depth == 3:
                if fail_at == 3:
                    raise Boom("level 3")
                return tnp.sin(x) * x
            inner = level(depth + 1, fail_at)
            try:
                d = T.grad(inner)(x)
            except Boom:
                assert len(current_traces()) == depth  # only the enclosing traces remain
                if fail_at != depth + 1:
                    raise
                d = tnp.cos(x)
            if fail_at == depth:
                raise Boom(f"level {depth}")
            return d + 0.0 * x

        return g

    x = 0.4
    with pytest.raises(Boom, match="level 1"):
        T.grad(level(1, 1))(x)
    assert current_traces() == ()
    # level 2 fails, level 1 substitutes cos: d/dx cos = -sin
    close(T.grad(level(1, 2))(x), -np.sin(x))
    # level 3 fails, level 2 substitutes cos, level 1 differentiates it: -sin, then -cos
    close(T.grad(level(1, 3))(x), -np.cos(x))
    assert current_traces() == ()
    close(T.grad(T.grad(T.grad(tnp.sin)))(x), -np.cos(x))


def _raising_rule_primitive() -> Primitive:
    p = Primitive("raises_in_backward", np.sin)
    defjvp(p, lambda t, ans, x: t * tnp.cos(x))

    def maker(ans: Any, x: Any) -> Any:
        def pullback(ct: Any) -> Any:
            raise Boom("in the backward pass")

        return pullback

    defvjp(p, maker)
    T.defbatch(p, lambda args, dims: (p.bind(args[0]), dims[0]))
    return p


RAISES_IN_BACKWARD = _raising_rule_primitive()


@pytest.mark.parametrize(
    "call",
    [
        lambda x: T.grad(lambda v: tnp.sum(RAISES_IN_BACKWARD.bind(v)))(x),
        lambda x: T.grad(T.grad(lambda v: tnp.sum(RAISES_IN_BACKWARD.bind(v))))(x[0]),
        lambda x: T.jacfwd(T.jacrev(RAISES_IN_BACKWARD.bind))(x),
        lambda x: T.vmap(T.grad(lambda v: tnp.sum(RAISES_IN_BACKWARD.bind(v))))(x[None]),
        lambda x: T.vjp(RAISES_IN_BACKWARD.bind, x)[1](np.ones_like(x)),
    ],
    ids=["grad", "grad_grad", "jacfwd_jacrev", "vmap_grad", "pullback"],
)
def test_exception_in_the_backward_pass(call: Callable[[np.ndarray], Any]) -> None:
    x = np.array([0.2, 0.9])
    big = np.linspace(0.0, 1.0, 20_000)  # large (160 KB): a protection must not outlive it

    def with_big(v: Any) -> Any:
        return tnp.sum(v * big[:2]) + tnp.sum(big * 0.0)

    with pytest.raises(Boom, match="backward"):
        T.grad(lambda v: with_big(v) + tnp.sum(RAISES_IN_BACKWARD.bind(v)))(x)
    with pytest.raises(Boom, match="backward"):
        call(x)
    assert current_traces() == ()
    gc.collect()
    assert big.flags.writeable, "an exception in the backward pass left a user array read-only"
    close(T.grad(lambda v: tnp.sum(tnp.sin(v)))(x), np.cos(x))


def test_exception_in_custom_vjp_backward_and_custom_jvp_rule() -> None:
    @T.custom_vjp
    def f(x: Any) -> Any:
        return tnp.sin(x)

    def f_fwd(x: Any) -> Any:
        return tnp.sin(x), x

    def f_bwd(res: Any, ct: Any) -> Any:
        raise Boom("bwd")

    f.defvjp(f_fwd, f_bwd)

    @T.custom_jvp
    def g(x: Any) -> Any:
        return tnp.sin(x)

    @g.defjvp
    def g_jvp(primals: Any, tangents: Any) -> Any:
        raise Boom("jvp rule")

    for call in (
        lambda: T.grad(f)(0.3),
        lambda: T.grad(T.grad(f))(0.3),
        lambda: T.vmap(T.grad(f))(np.ones(2)),
        lambda: T.jvp(g, (0.3,), (1.0,)),
        lambda: T.grad(g)(0.3),
        lambda: T.hessian(g)(0.3),
    ):
        with pytest.raises(Boom):
            call()
        assert current_traces() == ()
    close(T.grad(T.grad(tnp.sin))(0.3), -np.sin(0.3))


def test_exception_inside_vmap_of_grad_in_a_thread_leaves_other_threads_exact() -> None:
    errors: list[BaseException] = []
    results: list[float] = []
    barrier = threading.Barrier(2, timeout=60)

    def failing() -> None:
        def f(x: Any) -> Any:
            barrier.wait()
            raise Boom("thread")

        try:
            T.vmap(T.grad(f))(np.ones(3))
        except Boom:
            results.append(float(len(current_traces())))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    def healthy() -> None:
        try:

            def f(x: Any) -> Any:
                barrier.wait()
                return tnp.sin(x) * x

            g = T.vmap(T.grad(f))(np.array([0.1, 0.2]))
            results.append(float(np.sum(g)))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=failing), threading.Thread(target=healthy)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    x = np.array([0.1, 0.2])
    assert sorted(results)[0] == 0.0  # the failing thread's stack was empty afterwards
    assert math.isclose(sorted(results)[1], float(np.sum(np.sin(x) + x * np.cos(x))))


def test_escaped_tracer_after_an_exception_is_detected() -> None:
    leaked: list[Any] = []

    def f(x: Any) -> Any:
        leaked.append(x * 2.0)
        raise Boom("escape")

    with pytest.raises(Boom):
        T.grad(f)(1.0)
    with pytest.raises(T.EscapedTracerError):
        tnp.sin(leaked[0])
    with pytest.raises(T.EscapedTracerError):
        T.grad(lambda y: y * leaked[0])(1.0)
    assert current_traces() == ()


# =============================================================================================
# Memory: nothing outlives its transform; repeated calls do not grow memory
# =============================================================================================
class Spy:
    """A tiny primitive (``x -> 2x``) whose NumPy implementation keeps weak references to
    every array it receives and returns: the primal intermediates of any transform."""

    def __init__(self) -> None:
        self.refs: list[weakref.ref[np.ndarray]] = []
        self.primitive = Primitive("spy_double", self._impl)
        p = self.primitive
        defjvp(p, lambda t, ans, x: 2.0 * t)
        defvjp(p, lambda ans, x: lambda ct: 2.0 * ct)
        T.defbatch(p, lambda args, dims: (p.bind(args[0]), dims[0]))

    def _impl(self, x: Any) -> Any:
        out = np.multiply(x, 2.0)
        for a in (x, out):
            if isinstance(a, np.ndarray):
                self.refs.append(weakref.ref(a))
        return out

    def __call__(self, x: Any) -> Any:
        return self.primitive.bind(x)

    def alive(self, *users: np.ndarray) -> int:
        """How many arrays the spy saw are still alive, not counting the user's own."""
        gc.collect()
        return sum(r() is not None and not any(r() is u for u in users) for r in self.refs)


def _spied_function(spy: Spy) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        h = tnp.tanh(spy(tnp.sin(x) * 1.5))
        return tnp.sum(spy(h * h) * tnp.exp(spy(x)))

    return f


SPIED_CALLS: dict[str, Callable[[Callable[[Any], Any], np.ndarray], Any]] = {
    "grad": lambda f, x: T.grad(f)(x),
    "value_and_grad": lambda f, x: T.value_and_grad(f)(x),
    "grad_grad": lambda f, x: T.grad(lambda v: tnp.sum(T.grad(f)(v) ** 2))(x),
    "jacfwd": lambda f, x: T.jacfwd(f)(x),
    "jacrev": lambda f, x: T.jacrev(f)(x),
    "hessian": lambda f, x: T.hessian(f)(x),
    "jacfwd_jacrev": lambda f, x: T.jacfwd(T.jacrev(f))(x),
    "vmap": lambda f, x: T.vmap(f)(np.stack([x, x + 1.0])),
    "vmap_grad": lambda f, x: T.vmap(T.grad(f))(np.stack([x, x + 1.0])),
    "jvp": lambda f, x: T.jvp(f, (x,), (np.ones_like(x),)),
    "vjp_and_pullback": lambda f, x: T.vjp(f, x)[1](1.0),
    "linearize": lambda f, x: T.linearize(f, x)[1](np.ones_like(x)),
    "hvp": lambda f, x: T.hvp(f, (x,), (np.ones_like(x),)),
    "checkpoint": lambda f, x: T.grad(T.checkpoint(f))(x),
}


@pytest.mark.parametrize("name", sorted(SPIED_CALLS))
def test_no_intermediate_outlives_its_transform(name: str) -> None:
    spy = Spy()
    x = np.array([0.3, -0.4, 1.1])
    result = SPIED_CALLS[name](_spied_function(spy), x)
    assert spy.refs, "the spy saw no array"
    del result
    alive = spy.alive(x)
    assert alive == 0, f"{alive} of {len(spy.refs)} intermediates outlived {name}"


def test_pullback_keeps_only_what_it_needs_and_frees_it_when_released() -> None:
    spy = Spy()
    x = np.array([0.3, -0.4, 1.1])
    out, pullback = T.vjp(_spied_function(spy), x)
    del out
    # some residuals may be alive while the pullback is: that is its job
    (g1,) = pullback(1.0)
    (g2,) = pullback(1.0)
    close(g1, g2, rtol=0, atol=0)
    del pullback
    assert spy.alive(x) == 0


@pytest.mark.parametrize("where", ["before", "after"])
def test_no_intermediate_outlives_a_failed_transform(where: str) -> None:
    spy = Spy()

    def f(x: Any) -> Any:
        y = spy(tnp.sin(x)) * spy(x)
        if where == "after":
            y = T.grad(lambda v: tnp.sum(spy(v) * y))(x)
        raise Boom("fail")

    x = np.ones(3)
    for call in (
        lambda: T.grad(f)(x),
        lambda: T.jacfwd(T.jacrev(f))(x),
        lambda: T.vmap(T.grad(f))(np.stack([x, x])),
    ):
        try:
            call()
        except Boom:
            pass
        assert spy.alive(x) == 0


def _mlp_loss(params: dict[str, Any], x: np.ndarray) -> Any:
    h = tnp.tanh(x @ params["w1"] + params["b1"])
    return tnp.mean((h @ params["w2"]) ** 2) + 1e-3 * tnp.sum(params["w1"] ** 2)


def test_repeated_grad_calls_do_not_grow_memory() -> None:
    rng = np.random.default_rng(0)
    big = rng.standard_normal((100, 100))  # 80 KB: large enough to matter if kept per call
    params = {"w1": rng.standard_normal((8, 100)), "b1": np.zeros(100), "w2": big[:, :3].copy()}
    x = rng.standard_normal((16, 8))
    grad = T.grad(_mlp_loss)

    def call() -> None:
        g = grad(params, x)
        T.grad(lambda v: tnp.sum(tnp.sin(v @ big)))(x[0, :1].repeat(100))
        T.vmap(T.grad(lambda v: tnp.sum(tnp.tanh(v) ** 2)))(x)
        assert g["w1"].shape == (8, 100)

    gc.collect()
    tracemalloc.start()
    try:
        for _ in range(50):
            call()
        gc.collect()
        at_50 = tracemalloc.get_traced_memory()[0]
        for _ in range(150):
            call()
        gc.collect()
        at_200 = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    growth = at_200 - at_50
    # Allocator noise is a few KB. A leak is far larger: one intermediate of the MLP per call
    # is 150 * 12.8 KB, one graph node per primitive (~30 per call) is 150 * 30 * ~400 B.
    assert growth < 32 * 1024, f"traced memory grew by {growth} bytes over 150 grad calls"
    assert big.flags.writeable


# =============================================================================================
# Scale: a long chain under the default recursion limit
# =============================================================================================
LONG = os.environ.get("TRANSFORMS_LONG") == "1"
CHAIN_PRIMITIVES = 1_000_000 if LONG else 200_000


@pytest.fixture
def default_recursion_limit() -> Iterator[None]:
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def test_long_chain_differentiates_with_the_analytic_value(default_recursion_limit: None) -> None:
    """``x -> log(exp(x) * c)`` repeated: value ``x + n log c``, derivative exactly 1 in
    exact arithmetic; three primitives per step."""
    steps = CHAIN_PRIMITIVES // 3
    c = 1.0000001

    def chain(x: Any) -> Any:
        for _ in range(steps):
            x = tnp.log(tnp.exp(x) * c)
        return x

    x0 = np.array([0.25])
    out, pullback = T.vjp(chain, x0)
    close(out, x0 + steps * math.log(c), rtol=1e-9, atol=1e-9)
    (g,) = pullback(np.array([1.0]))
    close(g, np.ones(1), rtol=1e-9, atol=1e-9)
    (g3,) = pullback(np.array([3.0]))
    close(g3, np.array([3.0]), rtol=1e-9, atol=1e-9)
    del pullback, out  # the graph is freed without deep recursion (no crash)
    gc.collect()


# =============================================================================================
# Mutation of captured operands
# =============================================================================================
def _mutate(array: np.ndarray, value: float = 5.0) -> bool:
    """``array[...] = value``; False if refused (read-only while a pullback may read it)."""
    try:
        array[...] = value
    except ValueError as e:
        assert "read-only" in str(e), e
        return False
    return True


@pytest.mark.parametrize("size", [3, 20_000], ids=["small", "large"])
def test_constant_mutated_inside_the_function_after_use(size: int) -> None:
    c = np.ones(size)

    def f(x: Any) -> Any:
        y = tnp.sum(x * c[:3]) + tnp.sum(c * 0.0)
        _mutate(c)
        return y

    close(T.grad(f)(np.array([1.0, 2.0, 3.0])), np.ones(3))


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [(1.0, 5.0, 1 / 5.0), (0.0, -0.0, -np.inf)],  # 1/new
    ids=["value", "sign_of_zero"],
)
def test_constant_mutated_between_two_uses_inside_the_function(
    old: float, new: float, expected: float
) -> None:
    """Each use reads the constant as it is then: the copy taken at the first use must not
    stand in for the mutated array at the second (it did, by id: the gradient read the old
    constant twice). Down to the bits: 0.0 -> -0.0 turns 1/c from inf to -inf. (A second
    reference keeps ``c`` from being borrowed, which would refuse the write instead.)"""
    c = np.full(3, old)
    held = [c]

    def f(x: Any) -> Any:
        y = tnp.sum(x * c)
        c[...] = new
        return y + tnp.sum(x / c)

    x = np.array([1.0, 2.0, 3.0])
    with np.errstate(divide="ignore"):  # 1/0 in the derivative of x/c when c is zero
        grad = T.grad(f)(x)
    assert np.array_equal(grad, np.full(3, old + expected)), grad
    assert held[0] is c


@pytest.mark.parametrize("size", [3, 20_000], ids=["small", "large"])
def test_constant_mutated_between_vjp_and_pullback(size: int) -> None:
    c = np.ones(size)
    x = np.array([1.0, 2.0, 3.0])
    _, pullback = T.vjp(lambda v: tnp.sum(v * c[:3]) + 0.0 * tnp.sum(c), x)
    mutated = _mutate(c)
    close(pullback(1.0)[0], np.ones(3))
    del pullback
    gc.collect()
    assert c.flags.writeable, "the constant stayed read-only after the pullback died"
    if not mutated:
        _mutate(c)  # refused while the pullback lived; allowed now


@pytest.mark.parametrize("size", [3, 20_000], ids=["small", "large"])
def test_input_mutated_between_vjp_and_pullback(size: int) -> None:
    x = np.ones(size)
    _, pullback = T.vjp(lambda v: 0.5 * tnp.sum(v * v), x)  # gradient: x itself
    _mutate(x)
    close(pullback(1.0)[0], np.ones(size))
    del pullback
    gc.collect()
    assert x.flags.writeable


def test_nondifferentiated_input_mutated_inside_the_function() -> None:
    def f(x: Any, c: np.ndarray) -> Any:
        y = tnp.sum(x * c)
        c[...] = 5.0
        return y

    close(T.grad(f)(np.array([1.0, 2.0, 3.0]), np.ones(3)), np.ones(3))


def test_constant_mutated_inside_nested_transforms() -> None:
    """(A second reference keeps ``c`` copied: a closed call would otherwise borrow it and
    refuse the write, see ``test_closed_over_constant_is_borrowed``.)"""
    c = np.ones(3)
    held = [c]

    def f(x: Any) -> Any:
        y = tnp.sum(tnp.sin(x) * c)
        c[...] = 5.0
        return y

    x = np.array([0.1, 0.2, 0.3])
    close(T.grad(lambda v: tnp.sum(T.grad(f)(v)))(x), -np.sin(x))
    c[...] = 1.0
    close(T.hessian(f)(x), np.diag(-np.sin(x)))
    c[...] = 1.0
    close(T.vmap(T.grad(f))(np.stack([x, x])), np.stack([np.cos(x)] * 2))
    c[...] = 1.0
    close(T.jacrev(f)(x), np.cos(x))
    assert held[0] is c


def test_constant_mutated_before_a_linearized_function_is_applied() -> None:
    c = np.ones(3)
    _, f_jvp = T.linearize(lambda v: v * c, np.array([1.0, 2.0, 3.0]))
    _mutate(c)
    close(f_jvp(np.ones(3)), np.ones(3))


def test_view_of_a_constant_mutated_through_its_base() -> None:
    base = np.ones((2, 3))
    view = base[0]
    _, pullback = T.vjp(lambda v: tnp.sum(v * view), np.array([1.0, 2.0, 3.0]))
    _mutate(base)
    close(pullback(1.0)[0], np.ones(3))


def test_constant_reshaped_by_numpy_then_mutated() -> None:
    c = np.ones(3)

    def f(x: Any) -> Any:
        d = tnp.reshape(c, (3,))  # plain NumPy in, a view of c out (nothing is traced)
        return tnp.sum(x * d.T)

    _, pullback = T.vjp(f, np.array([1.0, 2.0, 3.0]))
    _mutate(c)
    close(pullback(1.0)[0], np.ones(3))


def test_large_constant_mutated_through_an_alias_view() -> None:
    """A view of the constant's buffer made before the transform stays writeable whatever
    flag the transform sets on the constant: a protection by read-only flags alone fails."""
    base = np.ones(20_000)
    alias = base.reshape(100, 200)  # created before the transform: still writeable after
    _, pullback = T.vjp(lambda v: tnp.dot(v, base), np.ones(20_000))
    _mutate(alias)
    close(pullback(1.0)[0][:3], np.ones(3))


def test_large_input_mutated_through_an_alias_view() -> None:
    base = np.ones(20_000)
    x, alias = base[:], base[:]
    _, pullback = T.vjp(lambda v: 0.5 * tnp.sum(v * v), x)
    _mutate(alias)
    close(pullback(1.0)[0][:3], np.ones(3))


def test_large_constant_over_a_python_buffer_mutated_through_the_buffer() -> None:
    buffer = bytearray(np.ones(20_000).tobytes())
    c = np.frombuffer(buffer)  # its base is a bytearray: no read-only flag can protect it
    _, pullback = T.vjp(lambda v: tnp.dot(v, c), np.ones(20_000))
    buffer[:8] = np.float64(5.0).tobytes()
    close(pullback(1.0)[0][:3], np.ones(3))


def test_array_over_a_python_buffer_is_left_usable_after_the_pullback_dies() -> None:
    buffer = bytearray(np.ones(20_000).tobytes())
    c = np.frombuffer(buffer)
    assert c.flags.writeable
    _, pullback = T.vjp(lambda v: tnp.dot(v, c), np.ones(20_000))
    del pullback
    gc.collect()  # the release must not fail (an exception in a finalizer is lost)
    assert c.flags.writeable


def test_read_only_owning_array_is_trusted_and_a_read_only_view_is_copied() -> None:
    """The documented fast path: an array owning its data and already read-only is read in
    place (no copy); a read-only *view* is copied, as its base may still be written."""
    seen: list[np.ndarray] = []
    spy = T.primitive(lambda v, c: v * c)
    T.defvjp(spy, lambda ans, v, c: seen.append(c) or (lambda ct: ct * c))  # type: ignore[func-returns-value]
    owner = np.full(3, 2.0)
    owner.flags.writeable = False
    base = np.full(6, 2.0)
    view = base[:3]
    view.flags.writeable = False
    x = np.array([1.0, 2.0, 3.0])
    for c in (owner, view):
        base[:3] = 2.0
        _, pullback = T.vjp(lambda v, c=c: tnp.sum(spy(v, c)), x)
        base[:3] = 7.0  # writes under the view; the owner cannot be written
        close(pullback(1.0)[0], np.full(3, 2.0))
    assert seen[0] is owner
    assert seen[1] is not view and seen[1].base is None


def _spy() -> tuple[Any, list[np.ndarray]]:
    """A primitive ``v * c`` whose VJP maker records the ``v`` it captured (in place or a
    copy)."""
    seen: list[np.ndarray] = []
    spy = T.primitive(lambda v, c: v * c)
    T.defvjp(
        spy,
        lambda ans, v, c: seen.append(v) or (lambda ct: ct * c),  # type: ignore[func-returns-value]
        lambda ans, v, c: lambda ct: ct * v,
    )
    return spy, seen


def test_input_in_a_container_is_borrowed_read_only_and_given_back() -> None:
    """``grad`` of a dict of arrays reads an input held only by the dict in place, read-only
    while the call runs: a write into it from inside the function (through the caller's
    dict) is refused, the gradient is the one at the call's value, and the array is
    writeable again afterwards, also after an exception."""
    spy, seen = _spy()
    params = {"w": np.full(3, 2.0)}
    refused = []

    def f(p: Any) -> Any:
        y = tnp.sum(spy(p["w"], p["w"]) ** 2)  # the pullback reads w: 4 w^3 at w = 2
        refused.append(not _mutate(params["w"]))
        return y

    close(T.grad(f)(params)["w"], np.full(3, 32.0))
    assert seen[-1] is params["w"], "the input was copied, not borrowed"
    assert refused == [True] and params["w"].flags.writeable
    with pytest.raises(Boom):
        T.grad(lambda p: tnp.sum(spy(p["w"], 1.0)) + _boom())(params)
    assert params["w"].flags.writeable, "an exception left a borrowed input read-only"
    assert _mutate(params["w"])


def _boom() -> Any:
    raise Boom("forward")


@pytest.mark.parametrize(
    "writer",
    [
        lambda w: w[:],  # a view made before the call
        lambda w: np.frombuffer(memoryview(w)),  # an array over a memoryview of it
        lambda w: memoryview(w).cast("B"),  # a memoryview, written bytewise
    ],
    ids=["view", "frombuffer", "memoryview"],
)
def test_input_with_another_writer_is_copied_not_borrowed(writer: Callable[[Any], Any]) -> None:
    """Another way to write the input's memory exists before the call (it holds a
    reference, which the count sees): the input is copied, and a write through it after the
    use leaves the gradient at the call's value."""
    spy, seen = _spy()
    params = {"w": np.full(3, 2.0)}
    alias = writer(params["w"])

    def f(p: Any) -> Any:
        y = tnp.sum(spy(p["w"], p["w"]) ** 2)
        alias[:8] = np.full(1, 5.0).view(np.uint8) if isinstance(alias, memoryview) else 5.0
        return y

    close(T.grad(f)(params)["w"], np.full(3, 32.0))
    assert seen[-1] is not params["w"]
    assert params["w"][0] == 5.0  # the write happened (nothing refused it)


@pytest.mark.parametrize(
    "call",
    [
        lambda f, w: T.grad(f)(w),  # a bare argument: the caller's names cannot be counted
        lambda f, w: T.grad(lambda p: f(p[0]))((w, w))[0],  # twice in the tree
        lambda f, w: T.vjp(f, w)[1](1.0)[0],  # an open call: the pullback may run much later
    ],
    ids=["bare", "twice", "vjp"],
)
def test_input_not_provably_alone_is_copied(call: Callable[[Any, Any], Any]) -> None:
    spy, seen = _spy()
    w = np.full(3, 2.0)

    def f(v: Any) -> Any:
        y = tnp.sum(spy(v, v) ** 2)
        w[...] = 5.0  # allowed: the input was copied
        return y

    close(call(f, w), np.full(3, 32.0))
    assert seen[-1] is not w


def test_results_never_alias_a_borrowed_input() -> None:
    """A rule may return an operand itself (``multiply(ct, c)`` is ``c`` when ``ct`` is
    grad's unit seed): the gradient with respect to ``a`` of ``sum(a * b)`` is then the
    borrowed input ``b``, which the user's results must not alias."""
    dot = T.primitive(lambda v, c: np.sum(v * c))
    T.defvjp(
        dot,
        lambda ans, v, c: lambda ct: tnp.multiply(ct, c),
        lambda ans, v, c: lambda ct: tnp.multiply(ct, v),
    )
    q = {"a": np.ones(3), "b": np.full(3, 2.0)}
    for g in (
        T.grad(lambda q: dot(q["a"], q["b"]))(q),
        T.value_and_grad(lambda q: dot(q["a"], q["b"]))(q)[1],
    ):
        close(g["a"], np.full(3, 2.0))
        close(g["b"], np.ones(3))
        for leaf in g.values():
            assert not any(np.shares_memory(leaf, x) for x in q.values())
    aux = T.grad(lambda q: (dot(q["a"], q["b"]), q["b"]), has_aux=True)(q)[1]
    assert not np.shares_memory(aux, q["b"])  # an input returned as aux is settled too


def test_borrowed_input_is_copied_by_a_nested_call() -> None:
    """Inside a call that borrowed it, the array is read-only but not the user's read-only
    array: another call (nested here, or in another thread) copies it instead of trusting it,
    as the borrowing call makes it writeable again when it returns."""
    spy, seen = _spy()
    params = {"w": np.full(3, 2.0)}
    inner: list[Any] = []

    def f(p: Any) -> Any:
        inner.append(T.grad(lambda v: tnp.sum(spy(v, v)))(params["w"]))
        inner.append(seen[-1])
        return tnp.sum(spy(p["w"], p["w"]))

    close(T.grad(f)(params)["w"], np.full(3, 4.0))
    close(inner[0], np.full(3, 4.0))
    assert inner[1] is not params["w"] and seen[-1] is params["w"]
    assert params["w"].flags.writeable


# A constant the function reads by name (a closure cell, a module global): closed calls
# borrow it when nothing else holds it, and copy it otherwise. (``hessian``'s inner
# ``jacrev`` runs under the outer one's trace, which copies the constant; see
# ``test_closed_over_constant_under_another_vjp_is_copied``.)
_CLOSED_CALLS: dict[str, Callable[[Callable[[Any], Any], np.ndarray], Any]] = {
    "grad": lambda f, x: T.grad(f)(x),
    "value_and_grad": lambda f, x: T.value_and_grad(f)(x)[1],
    "hvp": lambda f, x: T.hvp(f, (x,), (np.ones_like(x),))[1][0],
    "jacrev": lambda f, x: T.jacrev(f)(x),
    "vmap_of_grad": lambda f, x: T.vmap(T.grad(f))(np.stack([x, x]))[0],
}
# The same derivatives of f(x) = sum(sin(x) * c) at c = 2 (jacrev of a scalar is the
# gradient; hvp's direction is all ones).
_CLOSED_EXPECTED: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "grad": lambda x: 2 * np.cos(x),
    "value_and_grad": lambda x: 2 * np.cos(x),
    "hvp": lambda x: -2 * np.sin(x),
    "jacrev": lambda x: 2 * np.cos(x),
    "hessian": lambda x: np.diag(-2 * np.sin(x)),
    "vmap_of_grad": lambda x: 2 * np.cos(x),
}

_GLOBAL_CONSTANT = np.full(3, 2.0)
_GLOBAL_FLAGS: list[bool] = []


def _reads_the_global(x: Any) -> Any:
    _GLOBAL_FLAGS.append(_GLOBAL_CONSTANT.flags.writeable)
    return tnp.sum(tnp.sin(x) * _GLOBAL_CONSTANT)


@pytest.mark.parametrize("call", sorted(_CLOSED_CALLS))
def test_closed_over_constant_is_borrowed(call: str) -> None:
    """A closed call (its backward pass runs before it returns) reads a constant held only by
    the function's closure in place: read-only while it runs (a write into it from inside
    is refused, never a changed derivative), writeable again afterwards, also after an
    exception; the derivative is exact."""
    seen: list[np.ndarray] = []
    spy = T.primitive(lambda c, v: c * v)  # its VJP maker records the ``c`` it captured
    T.defvjp(spy, None, lambda ans, c, v: seen.append(c) or (lambda ct: ct * c))  # type: ignore[func-returns-value]
    T.defjvp(spy, None, lambda t, ans, c, v: c * t)
    T.defbatch(spy, lambda args, dims: (args[0] * args[1], dims[1]))  # (only v is batched)
    c = np.full(3, 2.0)
    flags: list[bool] = []
    refused: list[bool] = []

    def f(x: Any) -> Any:
        y = tnp.sum(spy(c, tnp.sin(x)))
        flags.append(c.flags.writeable)
        refused.append(not _mutate(c))
        return y

    x = np.array([0.1, 0.2, 0.3])
    close(_CLOSED_CALLS[call](f, x), _CLOSED_EXPECTED[call](x))
    assert flags and not any(flags), "the constant was writeable inside the call"
    assert all(refused) and np.array_equal(c, np.full(3, 2.0))
    assert any(v is c for v in seen), "the constant was copied, not borrowed"
    assert c.flags.writeable, "the constant stayed read-only after the call"
    with pytest.raises(Boom):
        _CLOSED_CALLS[call](lambda x: tnp.sum(spy(c, x)) + _boom(), x)
    assert c.flags.writeable, "an exception left a borrowed constant read-only"


@pytest.mark.parametrize("call", ["grad", "jacrev"])
def test_module_global_constant_is_borrowed(call: str) -> None:
    """A module global the function itself names is borrowed like a closed-over constant;
    one only a callee names is not seen, and copied as before."""
    x = np.array([0.1, 0.2, 0.3])
    _GLOBAL_FLAGS.clear()
    close(_CLOSED_CALLS[call](_reads_the_global, x), _CLOSED_EXPECTED[call](x))
    close(_CLOSED_CALLS[call](lambda x: _reads_the_global(x), x), _CLOSED_EXPECTED[call](x))
    assert _GLOBAL_FLAGS == [False, True]
    assert _GLOBAL_CONSTANT.flags.writeable


@pytest.mark.parametrize(
    "writer",
    [
        lambda c: c[:],  # a view made before the call
        lambda c: np.frombuffer(memoryview(c)),  # an array over a memoryview of it
        lambda c: memoryview(c).cast("B"),  # a memoryview, written bytewise
        lambda c: [c],  # a second reference, written through as c itself
    ],
    ids=["view", "frombuffer", "memoryview", "second_name"],
)
@pytest.mark.parametrize("call", sorted(_CLOSED_CALLS))
def test_closed_over_constant_with_another_writer_is_copied(
    call: str, writer: Callable[[Any], Any]
) -> None:
    """Another way to write the constant's memory exists before the call (it holds a
    reference, which the count sees): the constant is copied, a write through it after the
    use is allowed, and the derivative is the one at the value the use read."""
    c = np.full(3, 2.0)
    alias = writer(c)

    def f(x: Any) -> Any:
        y = tnp.sum(tnp.sin(x) * c)
        if isinstance(alias, memoryview):
            alias[:8] = np.full(1, 5.0).view(np.uint8)
        elif isinstance(alias, list):
            alias[0][0] = 5.0
        else:
            alias[0] = 5.0
        return y

    x = np.array([0.1, 0.2, 0.3])
    expected = _CLOSED_EXPECTED[call](x)
    close(_CLOSED_CALLS[call](f, x), expected)
    assert c[0] == 5.0  # the write happened (nothing refused it)


@pytest.mark.parametrize("order", ["C", "F"])
def test_a_copied_constant_keeps_the_borrowed_ones_layout(order: str) -> None:
    """Borrowed (alone) or copied (another name holds it), a closed-over matrix gives the
    same bits: the copy keeps its layout, since a matrix product rounds differently on an
    F-ordered operand than on a C-ordered one."""
    rng = np.random.default_rng(0)
    A = np.asarray(rng.standard_normal((40, 30)), order=order)
    x = rng.standard_normal(30)

    def f(x: Any) -> Any:
        return tnp.sum(tnp.tanh(A @ x) ** 2)

    borrowed = T.grad(f)(x)
    other_name = [A]  # a second reference: the count no longer proves A alone, so it is copied
    copied = T.grad(f)(x)
    del other_name
    assert borrowed.tobytes() == copied.tobytes()


def test_results_never_alias_a_borrowed_constant() -> None:
    """``grad`` of ``sum(x * c)`` is ``c`` itself when the rule multiplies grad's unit seed
    (see ``test_results_never_alias_a_borrowed_input``); an aux may be ``c`` itself too."""
    c = np.full(3, 2.0)
    x = np.ones(3)
    g = T.grad(lambda x: tnp.sum(x * c))(x)
    _, aux = T.grad(lambda x: (tnp.sum(x * c), c), has_aux=True)(x)
    for result in (g, aux, T.jacrev(lambda x: tnp.sum(x * c))(x)):
        close(result, c)
        assert not np.shares_memory(result, c)


def test_closed_over_constant_under_another_vjp_is_copied() -> None:
    """Under a live ``vjp`` a closed call borrows nothing: the outer backward pass reads the
    constant after the inner call returns, and an inner ``vjp``'s pullback that escapes a
    closed call keeps its copy, whatever is written into the constant afterwards."""
    c = np.full(3, 2.0)
    flags: list[bool] = []

    def f(x: Any) -> Any:
        flags.append(c.flags.writeable)
        return tnp.sum(tnp.sin(x) * c)

    x = np.array([0.1, 0.2, 0.3])
    _, pullback = T.vjp(lambda x: T.grad(f)(x), x)
    c[...] = 5.0
    close(pullback(np.ones(3))[0], -2 * np.sin(x))
    c[...] = 2.0
    close(T.hessian(f)(x), np.diag(-2 * np.sin(x)))
    close(T.grad(lambda x: tnp.sum(T.grad(f)(x)))(x), -2 * np.sin(x))
    assert flags == [True, True, True]
    escaped: list[Any] = []

    def g(x: Any) -> Any:  # borrows c (it names c), and runs a vjp at a constant point
        escaped.append(T.vjp(f, np.ones(3))[1])
        return tnp.sum(tnp.sin(x) * c)

    close(T.grad(g)(x), 2 * np.cos(x))
    assert flags[-1] is False and c.flags.writeable
    c[...] = 7.0
    close(escaped[0](np.array(1.0))[0], 2 * np.cos(np.ones(3)))


_FAULTS_PER_CALL = """
import resource
import numpy as np
import transforms as T, transforms.numpy as tnp
rng = np.random.default_rng(0)
w1, w2 = rng.standard_normal((784, 256)), rng.standard_normal((256, 10))
x = rng.standard_normal((128, 784))
loss = T.grad(lambda w: tnp.sum(tnp.tanh(tnp.tanh(x @ w[0]) @ w[1]) ** 2))
for _ in range(3):
    loss((w1, w2))
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(10):
    loss((w1, w2))
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 10)
"""


@pytest.mark.skipif(
    sys.platform != "linux" or platform.libc_ver()[0] != "glibc", reason="glibc's malloc"
)
def test_protection_copies_do_not_fault_pages_in_on_every_call() -> None:
    """The copies of large arrays (2.4 MB here) must not make glibc hand pages back and fault
    them in again on every call (that cost as much as the forward pass): in a fresh process,
    whose allocator nothing else has warmed, repeated grads fault in (almost) no pages."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "GLIBC_"))}
    out = subprocess.run(
        [sys.executable, "-c", _FAULTS_PER_CALL], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    faults = float(out.stdout)
    assert faults < 50, f"{faults} page faults per call (about 1,300 without the priming)"


def test_read_only_user_array_stays_read_only() -> None:
    c = np.ones(20_000)
    c.flags.writeable = False
    _, pullback = T.vjp(lambda v: tnp.dot(v, c), np.ones(20_000))
    del pullback
    gc.collect()
    assert not c.flags.writeable


def test_ndarray_subclass_constant_mutated_between_vjp_and_pullback() -> None:
    class Weights(np.ndarray):
        pass

    c = np.ones(3).view(Weights)
    _, pullback = T.vjp(lambda v: tnp.sum(v * c), np.array([1.0, 2.0, 3.0]))
    _mutate(c)
    close(np.asarray(pullback(1.0)[0]), np.ones(3))


def test_checkpointed_function_detects_a_mutated_closed_over_constant() -> None:
    """checkpoint recomputes from the function's closure in the backward pass: a closed-over
    array mutated in between cannot be copied away, so it is detected (documented choice)."""
    c = np.ones(3)
    f = T.checkpoint(lambda v: tnp.sum(v * c))
    _, pullback = T.vjp(f, np.array([1.0, 2.0, 3.0]))
    close(pullback(1.0)[0], np.ones(3))  # unchanged: fine, and reusable
    _mutate(c)
    with pytest.raises(RuntimeError, match=r"checkpoint: an array .* was modified"):
        pullback(1.0)


def _exact_or_detected(call: Callable[[], Any], expected: Any) -> None:
    """The derivative after a mutation: exact, or a clear error that says so. Never wrong."""
    try:
        got = call()
    except (T.TransformsError, RuntimeError, ValueError) as e:
        assert any(w in str(e) for w in ("modified", "mutated", "changed")), e
        return
    close(got, expected)


_MODULE_WEIGHTS = np.ones(3)


def _helper_reading(weights: dict[str, np.ndarray]) -> Callable[[Any], Any]:
    return lambda v: tnp.sum(v * weights["w"])


@pytest.mark.parametrize("holder", ["module_global", "dict_in_closure", "helper_function"])
def test_checkpointed_function_never_reads_a_mutated_constant_silently(holder: str) -> None:
    """Wherever the checkpointed function finds its constant (a module global, a dict of
    parameters it closes over, a helper two closures deep), recomputing it in the backward
    pass after an in-place mutation must not give a silently wrong derivative."""
    global _MODULE_WEIGHTS
    _MODULE_WEIGHTS = np.ones(3)
    params = {"w": np.ones(3)}
    helper = _helper_reading(params)
    funs = {
        "module_global": lambda v: tnp.sum(v * _MODULE_WEIGHTS),
        "dict_in_closure": lambda v: tnp.sum(v * params["w"]),
        "helper_function": lambda v: helper(v),
    }
    mutated = {
        "module_global": _MODULE_WEIGHTS,
        "dict_in_closure": params["w"],
        "helper_function": params["w"],
    }[holder]
    _, pullback = T.vjp(T.checkpoint(funs[holder]), np.array([1.0, 2.0, 3.0]))
    _mutate(mutated)
    _exact_or_detected(lambda: pullback(1.0)[0], np.ones(3))


def test_checkpointed_function_rebinding_a_global_or_drawing_random_numbers_raises() -> None:
    """A recomputation that reads other values than the forward run (a rebound global, or
    fresh random numbers) would give a wrong derivative: it raises instead."""
    global _MODULE_WEIGHTS
    _MODULE_WEIGHTS = np.ones(3)
    x = np.array([1.0, 2.0, 3.0])
    _, pullback = T.vjp(T.checkpoint(lambda v: tnp.sum(v * _MODULE_WEIGHTS)), x)
    _MODULE_WEIGHTS = np.full(3, 5.0)  # rebound, not mutated
    with pytest.raises(RuntimeError, match=r"checkpoint: .* modified"):
        pullback(1.0)
    rng = np.random.default_rng(0)
    noisy = T.checkpoint(lambda v: tnp.sum(v * rng.standard_normal(3)))
    with pytest.raises(RuntimeError, match="random numbers"):
        T.grad(noisy)(x)


def test_checkpointed_function_runs_on_plain_values_as_without_checkpoint() -> None:
    """Watching a run is not differentiating it: on plain values ``float()`` still works, and
    unchanged constants give exact derivatives at every order."""
    w = np.array([0.5, 1.5, 2.5])
    f = T.checkpoint(lambda v: tnp.sum(tnp.sin(v) * w) * float(np.sum(w)))
    x = np.array([0.1, 0.2, 0.3])
    close(f(x), np.sum(np.sin(x) * w) * 4.5)
    g = T.checkpoint(lambda v: tnp.sum(tnp.sin(v) * w))
    close(T.hessian(g)(x), np.diag(-np.sin(x) * w))
    close(T.vmap(T.grad(g))(np.stack([x, 2 * x])), np.stack([np.cos(x), np.cos(2 * x)]) * w)


def test_custom_vjp_residual_mutated_between_vjp_and_pullback() -> None:
    c = np.ones(3)

    @T.custom_vjp
    def f(x: Any) -> Any:
        return tnp.sum(x * c)

    f.defvjp(lambda x: (tnp.sum(x * c), c), lambda res, ct: (ct * res,))
    _, pullback = T.vjp(f, np.array([1.0, 2.0, 3.0]))
    _mutate(c)
    close(pullback(1.0)[0], np.ones(3))


def test_mutation_protection_in_threads() -> None:
    """Threads share constants; each pullback still sees the values of its own forward pass."""
    shared = np.ones(20_000)
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for it in range(20):
                own = np.full(3, float(i + it))
                _, pullback = T.vjp(
                    lambda v, own=own: tnp.sum(v * own) + 0.0 * tnp.sum(shared * v[0]), np.ones(3)
                )
                _mutate(own, -1.0)
                close(pullback(1.0)[0], np.full(3, float(i + it)))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    gc.collect()
    assert shared.flags.writeable


# =============================================================================================
# Functional index updates: repeated indices (found by the random programs)
# =============================================================================================
def test_at_set_with_repeated_indices_reverse_mode_matches_forward_mode() -> None:
    """``set`` at ``[0, 0]`` writes twice; NumPy keeps the last write, and so must the
    derivative: out = [x2, x1, x2], d sum(out) / dx = [0, 1, 2] in every mode."""
    x = np.array([0.5, 1.0, 2.0])

    def f(v: Any) -> Any:
        return tnp.sum(tnp.at(v)[np.array([0, 0])].set(v[np.array([1, 2])]))

    close(f(x), 5.0)
    close(T.jacfwd(f)(x), np.array([0.0, 1.0, 2.0]))
    close(T.jacrev(f)(x), np.array([0.0, 1.0, 2.0]))
    close(T.grad(f)(x), np.array([0.0, 1.0, 2.0]))


# =============================================================================================
# Bad input
# =============================================================================================
def _square_sum(x: Any) -> Any:
    return tnp.sum(x * x)


def _square(x: Any) -> Any:
    return x * x


DIFFERENTIATING: dict[str, Callable[[Any, Any], Any]] = {
    # each takes (good_float, bad) and differentiates with respect to `bad`, argument 1
    "grad": lambda a, b: T.grad(lambda u, v: _square_sum(v) * u, argnums=1)(a, b),
    "value_and_grad": lambda a, b: T.value_and_grad(lambda u, v: _square_sum(v), argnums=1)(a, b),
    "jacfwd": lambda a, b: T.jacfwd(lambda u, v: _square(v), argnums=1)(a, b),
    "jacrev": lambda a, b: T.jacrev(lambda u, v: _square(v), argnums=1)(a, b),
    "hessian": lambda a, b: T.hessian(lambda u, v: _square_sum(v), argnums=1)(a, b),
    "jvp": lambda a, b: T.jvp(lambda u, v: u * _square(v), (a, b), (a, b)),
    "vjp": lambda a, b: T.vjp(lambda u, v: u * _square(v), a, b),
    "linearize": lambda a, b: T.linearize(lambda u, v: u * _square(v), a, b),
    "hvp": lambda a, b: T.hvp(lambda u, v: _square_sum(v) * u, (a, b), (a, b)),
}

BAD_VALUES = {
    "str": "abc",
    "object": object(),
    "bool": True,
    "int": 3,
    "int_array": np.array([1, 2]),
    "bool_array": np.array([True, False]),
    "str_array": np.array(["a", "b"]),
    "object_array": np.array([object(), object()]),
}


@pytest.mark.parametrize("transform", sorted(DIFFERENTIATING))
@pytest.mark.parametrize("bad", sorted(BAD_VALUES))
def test_bad_input_to_a_derivative_is_a_type_error_naming_the_argument(
    transform: str, bad: str
) -> None:
    with pytest.raises(TypeError, match=r"argument 1\b") as info:
        DIFFERENTIATING[transform](1.0, BAD_VALUES[bad])
    # an arbitrary object is not a dtype problem: the fix is to register its class
    expected = "Register its class" if bad == "object" else "dtype"
    assert expected in str(info.value), info.value


@pytest.mark.parametrize("bad", ["str", "object"])
def test_non_array_input_to_vmap_is_a_type_error_naming_the_argument(bad: str) -> None:
    with pytest.raises(TypeError, match=r"argument 1\b"):
        T.vmap(lambda u, v: u * 2.0)(np.ones(2), BAD_VALUES[bad])


@pytest.mark.parametrize("bad", ["bool", "int"])
def test_unbatchable_scalar_input_to_vmap_names_the_argument(bad: str) -> None:
    # a 0-d value cannot be mapped over axis 0: the error must say which argument
    with pytest.raises((TypeError, ValueError), match=r"argument 1\b"):
        T.vmap(lambda u, v: u * v)(np.ones(2), BAD_VALUES[bad])


@pytest.mark.parametrize("bad", ["int_array", "bool_array"])
def test_vmap_maps_integer_and_bool_arrays(bad: str) -> None:
    # vmap does not differentiate: integer and boolean arrays are fine, with NumPy's result
    v = BAD_VALUES[bad]
    out = T.vmap(lambda u, w: u * w)(np.array([1.5, 2.5]), v)
    close(out, np.array([1.5, 2.5]) * v)


@pytest.mark.parametrize("transform", sorted(DIFFERENTIATING))
def test_none_is_an_empty_pytree_not_a_value(transform: str) -> None:
    """None is a pytree node (DESIGN.md): differentiating with respect to it is
    differentiating with respect to nothing; using it as a number is the user's TypeError."""
    with pytest.raises(TypeError):
        DIFFERENTIATING[transform](1.0, None)
    assert current_traces() == ()
    assert T.grad(lambda u, v: u * 2.0, argnums=1)(1.0, None) is None


# ---- NaN and inf ---------------------------------------------------------------------------
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -2.5])

ELEMENTWISE: dict[str, tuple[Callable[[Any], Any], Callable[[np.ndarray], np.ndarray]]] = {
    # name: (function, its derivative as NumPy computes it)
    "sin": (tnp.sin, np.cos),
    "exp": (tnp.exp, np.exp),
    "tanh": (tnp.tanh, lambda x: 1.0 - np.tanh(x) ** 2),
    "log": (tnp.log, lambda x: 1.0 / x),
    "sqrt": (tnp.sqrt, lambda x: 0.5 / np.sqrt(x)),
    "square": (tnp.square, lambda x: 2.0 * x),
    "x_sin_x": (lambda x: x * tnp.sin(x), lambda x: np.sin(x) + x * np.cos(x)),
    "reciprocal": (lambda x: 1.0 / x, lambda x: -1.0 / (x * x)),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_nan_and_inf_propagate_as_numpy_would(name: str) -> None:
    f, df = ELEMENTWISE[name]
    x = SPECIAL
    with np.errstate(all="ignore"):
        expected_value, expected = np.asarray(f(x)), df(x)
        value, tangent = T.jvp(f, (x,), (np.ones_like(x),))
        grad = T.grad(lambda v: tnp.sum(f(v)))(x)
        jac_fwd = T.jacfwd(f)(x)
        jac_rev = T.jacrev(f)(x)
        mapped = T.vmap(T.grad(f))(x)
        pulled = T.vjp(f, x)[1](np.ones_like(x))[0]
    assert_allclose(value, expected_value, equal_nan=True, rtol=1e-15)
    for what, got in [
        ("jvp", tangent),
        ("grad", grad),
        ("vjp", pulled),
        ("vmap(grad)", mapped),
        ("diag jacfwd", np.diagonal(jac_fwd)),
        ("diag jacrev", np.diagonal(jac_rev)),
    ]:
        assert_allclose(got, expected, equal_nan=True, rtol=1e-15, err_msg=what)
    # no element is contaminated by another one: off-diagonal entries are 0, except where
    # the chain rule multiplies a non-finite local derivative by a 0 of the basis (IEEE, as
    # in NumPy: nan * 0 is nan): its row under jacfwd (pushed tangents), its column under
    # jacrev (pulled cotangents)
    off = ~np.eye(len(x), dtype=bool)
    finite = np.isfinite(expected)
    assert np.all(jac_fwd[off & finite[:, None]] == 0.0), jac_fwd
    assert np.all(jac_rev[off & finite[None, :]] == 0.0), jac_rev


def test_nan_in_one_input_of_a_reduction() -> None:
    x = np.array([1.0, np.nan, 3.0])
    with np.errstate(all="ignore"):
        close(T.grad(tnp.sum)(x), np.ones(3))
        g = T.grad(lambda v: tnp.sum(v) * tnp.sum(v))(x)  # 2 * sum(x): NaN everywhere
        h = T.grad(tnp.mean)(x)
        m = T.grad(tnp.max)(np.array([1.0, np.inf, 3.0]))
    assert np.all(np.isnan(g))
    close(h, np.full(3, 1 / 3))
    close(m, np.array([0.0, 1.0, 0.0]))


def test_numpy_warnings_are_warnings_not_crashes() -> None:
    # NumPy's forward warns for log(-1); so does the forward under grad, and nothing raises
    with pytest.warns(RuntimeWarning):
        value, g = T.value_and_grad(lambda v: tnp.sum(tnp.log(v)))(np.array([-1.0, 2.0]))
    assert np.isnan(value)
    close(g, np.array([-1.0, 0.5]))
    # the derivative code adds no warning of its own (sqrt'(0) = inf silently, as JAX)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g0 = T.grad(lambda v: tnp.sum(tnp.sqrt(v)))(np.array([0.0, 4.0]))
    assert g0[0] == np.inf and g0[1] == 0.25


# ---- empty and 0-d arrays --------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0), (3, 0, 2)])
def test_empty_arrays_give_correctly_shaped_derivatives(shape: tuple[int, ...]) -> None:
    x = np.zeros(shape)
    g = T.grad(lambda v: tnp.sum(tnp.sin(v)))(x)
    assert isinstance(g, np.ndarray) and g.shape == shape and g.dtype == np.float64
    j = T.jacfwd(tnp.sin)(x)
    assert j.shape == shape + shape
    j = T.jacrev(tnp.sin)(x)
    assert j.shape == shape + shape
    to3 = T.jacfwd(lambda v: tnp.sum(v) + np.arange(3.0))(x)
    assert to3.shape == (3, *shape)
    to3 = T.jacrev(lambda v: tnp.sum(v) + np.arange(3.0))(x)
    assert to3.shape == (3, *shape)
    h = T.hessian(lambda v: tnp.sum(v * v))(x)
    assert h.shape == shape + shape
    out, t = T.jvp(tnp.sin, (x,), (x,))
    assert out.shape == shape and t.shape == shape
    (ct,) = T.vjp(tnp.sin, x)[1](x)
    assert ct.shape == shape


def test_derivative_into_an_empty_output() -> None:
    x = np.array([1.0, 2.0, 3.0])
    assert T.jacfwd(lambda v: v[:0])(x).shape == (0, 3)
    assert T.jacrev(lambda v: v[:0])(x).shape == (0, 3)
    close(T.grad(lambda v: tnp.sum(v[:0]))(x), np.zeros(3))


@pytest.mark.parametrize("shape", [(0, 3), (0,), (2, 0)])
def test_vmap_of_empty_arrays(shape: tuple[int, ...]) -> None:
    x = np.zeros(shape)
    out = T.vmap(tnp.sin)(x)
    assert out.shape == shape
    g = T.vmap(T.grad(lambda v: tnp.sum(tnp.sin(v))))(x)
    assert g.shape == shape
    s = T.vmap(tnp.sum)(x)
    assert s.shape == shape[:1]


def test_zero_dimensional_arrays_through_every_transform() -> None:
    x = np.array(0.7)
    for value in (x, np.float32(0.7), np.array(0.7, dtype=np.float32)):
        dtype = np.asarray(value).dtype
        g = T.grad(tnp.sin)(value)
        assert isinstance(g, np.ndarray) and g.shape == () and g.dtype == dtype, (type(g), g)
        for jac in (T.jacfwd, T.jacrev, T.hessian):
            j = jac(tnp.sin)(value)
            assert isinstance(j, np.ndarray) and j.shape == () and j.dtype == dtype
    close(T.grad(tnp.sin)(x), np.cos(0.7))
    close(T.hessian(tnp.sin)(x), -np.sin(0.7))
    close(T.vmap(T.grad(tnp.sin))(np.array([0.1, 0.2])), np.cos([0.1, 0.2]))
    close(T.jacfwd(lambda v: v * np.arange(3.0))(x), np.arange(3.0))
    close(T.jacrev(lambda v: tnp.sum(v))(np.arange(3.0)), np.ones(3))


# ---- mismatched tangents and cotangents --------------------------------------------------------
def test_mismatched_tangents_are_clear_errors() -> None:
    x = np.ones(2)
    with pytest.raises(ValueError, match=r"tangent 0 has shape \(3,\).*\(2,\)"):
        T.jvp(tnp.sin, (x,), (np.ones(3),))
    with pytest.raises(ValueError, match=r"tangent 1 has shape \(\).*\(2,\)"):
        T.jvp(lambda a, b: a * b, (x, x), (x, 1.0))
    for dtype in (np.float32, np.int64, np.bool_, np.complex128):
        with pytest.raises(TypeError, match=rf"tangent 0 has dtype {np.dtype(dtype)}"):
            T.jvp(tnp.sin, (x,), (np.ones(2, dtype=dtype),))
    with pytest.raises(TypeError, match="structure"):
        T.jvp(tnp.sin, (x,), ([1.0, 1.0],))
    with pytest.raises(TypeError, match="structure"):
        T.jvp(lambda d: d["a"], ({"a": x},), ({"b": x},))


def test_mismatched_cotangent_shapes_and_structures_are_clear_errors() -> None:
    _, pullback = T.vjp(lambda v: (v * 2.0, tnp.sum(v)), np.ones(2))
    with pytest.raises(ValueError, match=r"cotangent 0 has shape \(3,\).*\(2,\)"):
        pullback((np.ones(3), 1.0))
    with pytest.raises(ValueError, match=r"cotangent 1 has shape \(2,\).*\(\)"):
        pullback((np.ones(2), np.ones(2)))
    with pytest.raises(ValueError, match="structure"):  # JAX's types
        pullback(np.ones(2))
    with pytest.raises(ValueError, match="complex"):
        pullback((np.ones(2, dtype=complex), 1.0))


@pytest.mark.parametrize("dtype", ["<U1", "object"])
def test_non_numeric_cotangent_is_a_clear_error(dtype: str) -> None:
    _, pullback = T.vjp(lambda v: v * 2.0, np.ones(2))
    ct = np.array(["a", "b"]) if dtype == "<U1" else np.array([object(), object()])
    with pytest.raises(TypeError, match=r"cotangent 0 .*dtype"):
        pullback(ct)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_])
def test_cotangent_dtype_must_match_the_output(dtype: type) -> None:
    """As ``jvp`` does for tangents (JAX's contract): a float64 output takes a float64
    cotangent; a Python scalar for a 0-d output takes the output's dtype."""
    _, pullback = T.vjp(lambda v: v * 2.0, np.ones(2))
    with pytest.raises(ValueError, match=r"cotangent 0 .*dtype"):  # JAX's type
        pullback(np.ones(2, dtype=dtype))
    _, scalar_pullback = T.vjp(lambda v: tnp.sum(v), np.ones(2))
    close(scalar_pullback(1.0)[0], np.ones(2))


# ---- raw NumPy on traced values -------------------------------------------------------------
W = np.array([[1.0, -2.0, 0.5], [0.3, 0.8, -1.1]])

RAW_NUMPY: dict[str, Callable[[Any], Any]] = {
    "sin": lambda x: np.sin(x),
    "exp_times": lambda x: np.exp(x) * x,
    "sum": lambda x: np.sum(x * x),
    "sum_axis": lambda x: np.sum(np.outer(x, x), axis=0),
    "mean": lambda x: np.mean(x * x),
    "prod": lambda x: np.prod(x),
    "dot": lambda x: np.dot(x, x),
    "dot_matrix": lambda x: np.dot(W, x),
    "matmul": lambda x: np.matmul(W, x),
    "ndarray_matmul": lambda x: W @ x,
    "ndarray_times": lambda x: W * x,
    "concatenate": lambda x: np.concatenate([x, 2.0 * x, np.ones(1)]),
    "stack": lambda x: np.stack([x, x * x]),
    "linalg_norm": lambda x: np.linalg.norm(x),
    "maximum": lambda x: np.maximum(x, 0.6),
    "where": lambda x: np.where(x > 0.6, x * x, -x),
    "square_power": lambda x: np.power(x, 3) + np.square(x),
    "tanh_sqrt": lambda x: np.tanh(np.sqrt(x * x + 1.0)),
    "transpose_reshape": lambda x: np.reshape(np.transpose(np.outer(x, W[0])), (-1,)),
    "einsum": lambda x: np.einsum("i,ji->j", x, W),
    "cumsum": lambda x: np.cumsum(x * x),
    "sort": lambda x: np.sort(x * np.array([1.0, -1.0, 2.0])),
    "clip": lambda x: np.clip(x, 0.6, 1.8),
    "var": lambda x: np.var(x),
    "fft_real": lambda x: np.real(np.fft.fft(x)),
    "linalg_solve": lambda x: np.linalg.solve(np.eye(3) * 2.0 + 0.1, x),
    "add_reduce": lambda x: np.add.reduce(x * x),
    "multiply_outer": lambda x: np.multiply.outer(x, x),
    "add_accumulate": lambda x: np.add.accumulate(x),
    "sin_out": lambda x: np.sin(x, out=np.empty(3)),
    "sum_out": lambda x: np.sum(x, out=np.empty(())),
    "sum_where": lambda x: np.sum(x, where=np.array([True, False, True])),
    "polyval": lambda x: np.polyval([1.0, 2.0, 3.0], x),
    "interp": lambda x: np.interp(x, [0.0, 3.0], [0.0, 6.0]),
    "convolve": lambda x: np.convolve(x, x),
    "asarray": lambda x: np.asarray(x) * 2.0,
    "array": lambda x: np.array(x) * 2.0,
    "float": lambda x: float(x[0]) * x,
    "math_sin": lambda x: math.sin(x[0]) * x,
    "copy": lambda x: np.copy(x),
}


def _raw_fd_gradient(f: Callable[[Any], Any], x: np.ndarray, w: np.ndarray) -> np.ndarray:
    eps = 1e-6
    out = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        out[i] = (np.sum(np.asarray(f(x + e)) * w) - np.sum(np.asarray(f(x - e)) * w)) / (2 * eps)
    return out


def _clear_error(e: BaseException) -> bool:
    return (
        isinstance(e, (TypeError, T.TransformsError))
        and any(
            word in str(e) for word in ("transforms.numpy", "derivative", "not supported", "traced")
        )
    ) or (isinstance(e, TypeError) and "unexpected keyword" in str(e))


@pytest.mark.parametrize("name", sorted(RAW_NUMPY))
@pytest.mark.parametrize("mode", ["grad", "jvp", "jacrev", "hessian", "vmap"])
def test_raw_numpy_on_traced_values_dispatches_or_refuses(name: str, mode: str) -> None:
    """Either the derivative is right (checked by value against finite differences of the
    raw NumPy function on plain arrays), or the error is clear. Never a dropped derivative."""
    f = RAW_NUMPY[name]
    x = np.array([0.5, 1.2, 2.0])
    y = np.asarray(f(x))  # plain NumPy: the reference function
    rng = np.random.default_rng(0)
    w = rng.uniform(-1, 1, y.shape)
    t = rng.uniform(-1, 1, x.shape)

    def scalar(v: Any) -> Any:
        return tnp.sum(f(v) * w)

    try:
        if mode == "grad":
            got = T.grad(scalar)(x)
            expected = _raw_fd_gradient(f, x, w)
        elif mode == "jvp":
            got = T.jvp(f, (x,), (t,))[1]
            eps = 1e-6
            expected = (np.asarray(f(x + eps * t)) - np.asarray(f(x - eps * t))) / (2 * eps)
        elif mode == "jacrev":
            got = T.jacrev(f)(x)
            expected = np.stack(
                [_raw_fd_gradient(f, x, np.eye(y.size)[k].reshape(y.shape)) for k in range(y.size)]
            ).reshape(y.shape + x.shape)
        elif mode == "hessian":
            got = T.hessian(scalar)(x) @ t
            g = T.grad(scalar)
            eps = 1e-5
            expected = (g(x + eps * t) - g(x - eps * t)) / (2 * eps)
        else:
            xs = np.stack([x, x[::-1], 2.0 * x])
            got = T.vmap(f)(xs)
            expected = np.stack([np.asarray(f(v)) for v in xs])
    except Exception as e:  # refusing is fine, if it says so clearly
        assert _clear_error(e), f"{name} under {mode}: unclear {type(e).__name__}: {e}"
        return
    assert np.shape(got) == np.shape(expected), (np.shape(got), np.shape(expected))
    assert_allclose(
        got,
        expected,
        rtol=1e-5,
        atol=1e-6,
        err_msg=f"{name} under {mode}: a wrong (dropped?) derivative",
    )


def _in_threads(check: Callable[[], None], threads: int = 4, calls: int = 30) -> None:
    """``check`` called ``calls`` times in each of ``threads`` threads at once, switching
    often to interleave them; the first exception of any thread is raised here."""
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(calls):
                check()
        except BaseException as exc:  # reported below, in the main thread
            errors.append(exc)

    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often, to interleave the calls
    try:
        started = [threading.Thread(target=work) for _ in range(threads)]
        for t in started:
            t.start()
        for t in started:
            t.join(timeout=300)
    finally:
        sys.setswitchinterval(previous)
    assert not errors, errors[0]


def test_threads_share_an_argument_tree() -> None:
    """Threads differentiating at one dict of arrays at once: one borrows an array, the
    others copy it (its read-only flag is a borrower's, not the user's), every gradient is
    exact, and the arrays are writeable once all calls have returned."""
    params = {"w": np.linspace(0.1, 1.0, 5_000), "b": np.full(5_000, 0.5)}
    expected = {"w": np.cos(params["w"]) * params["b"], "b": np.sin(params["w"])}
    loss = T.grad(lambda p: tnp.sum(tnp.sin(p["w"]) * p["b"]))

    def check() -> None:
        g = loss(params)
        for k in g:
            np.testing.assert_array_equal(g[k], expected[k])

    _in_threads(check)
    assert all(a.flags.writeable for a in params.values())


def test_threads_share_a_closed_over_constant() -> None:
    """Threads differentiating one closure at once: one borrows its constant, the others
    copy it (its read-only flag is a borrower's), every gradient is exact, and the constant
    is writeable once all calls have returned."""
    c = np.linspace(0.1, 1.0, 5_000)
    x = np.full(5_000, 0.5)
    expected = np.cos(x) * c
    loss = T.grad(lambda x: tnp.sum(tnp.sin(x) * c))
    _in_threads(lambda: np.testing.assert_array_equal(loss(x), expected))
    assert c.flags.writeable
