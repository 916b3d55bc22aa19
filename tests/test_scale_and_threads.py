"""Scale (long chains without recursion) and thread safety (context-local trace stacks)."""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from numpy.testing import assert_allclose

import transforms as T
import transforms.numpy as tnp
from transforms.core import current_traces

# ---------------------------------------------------------------------------------------
# A chain of 200,000 primitives under the default recursion limit.
# ---------------------------------------------------------------------------------------
STEPS = 100_000  # each step is two primitives (multiply, add): 200,000 in all
FACTOR = 1.0000001


@pytest.fixture
def default_recursion_limit() -> Iterator[None]:
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # CPython's default
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def long_chain(x: Any) -> Any:
    for _ in range(STEPS):
        x = x * FACTOR + 0.0
    return x


def test_long_chain_grad_scalar(default_recursion_limit: None) -> None:
    value, g = T.value_and_grad(long_chain)(2.0)
    assert_allclose(value, 2.0 * FACTOR**STEPS, rtol=1e-9)
    assert_allclose(g, FACTOR**STEPS, rtol=1e-9)
    del value, g
    gc.collect()


def test_long_chain_vjp_on_shape_1_array(default_recursion_limit: None) -> None:
    x = np.array([0.5])
    out, pullback = T.vjp(long_chain, x)
    assert_allclose(out, 0.5 * FACTOR**STEPS, rtol=1e-9)
    (ct,) = pullback(np.array([3.0]))
    assert ct.shape == (1,)
    assert_allclose(ct, 3.0 * FACTOR**STEPS, rtol=1e-9)
    # dropping the last reference frees a 200,000-node graph without deep recursion
    del pullback, out
    gc.collect()


def test_long_alternating_sin_cos_chain(default_recursion_limit: None) -> None:
    # x -> sin(x) -> cos(.) -> sin(.) ...: the derivative is the product of the local
    # derivatives, computed here by plain NumPy along the same trajectory
    steps = 200_000

    def chain(x: Any) -> Any:
        for k in range(steps):
            x = tnp.sin(x) if k % 2 == 0 else tnp.cos(x)
        return x

    x0 = 0.7
    v, expected = x0, 1.0
    for k in range(steps):
        if k % 2 == 0:
            expected *= np.cos(v)
            v = np.sin(v)
        else:
            expected *= -np.sin(v)
            v = np.cos(v)
    value, g = T.value_and_grad(chain)(x0)
    assert_allclose(value, v, rtol=1e-12)
    assert_allclose(g, expected, rtol=1e-9)
    assert expected != 0.0  # the product has not underflowed: the check is meaningful


def test_long_chain_forward_mode(default_recursion_limit: None) -> None:
    out, tangent = T.jvp(long_chain, (np.array([0.5]),), (np.array([2.0]),))
    assert_allclose(out, 0.5 * FACTOR**STEPS, rtol=1e-9)
    assert_allclose(tangent, 2.0 * FACTOR**STEPS, rtol=1e-9)


# ---------------------------------------------------------------------------------------
# Threads: each thread has its own trace stack; concurrent nested derivatives are exact.
# ---------------------------------------------------------------------------------------
def scalar_f(
    a: float, barrier: threading.Barrier, depth: int, seen: list[Any]
) -> Callable[[Any], Any]:
    """f(x) = sin(a x) x^2; waits at the barrier while at least ``depth`` traces are live.

    The traces visible to the calling thread are recorded in ``seen`` (kept alive, so their
    identities stay unique) for a later check that no two threads ever saw the same trace.
    """

    def f(x: Any) -> Any:
        traces = current_traces()
        assert len(traces) >= depth, traces
        assert [t.level for t in traces] == list(range(len(traces))), traces
        assert all(t.alive for t in traces), traces
        seen.extend(traces)
        barrier.wait()
        return tnp.sin(a * x) * x**2

    return f


def f_second(a: float, x: float) -> float:
    return float((2 - a**2 * x**2) * np.sin(a * x) + 4 * a * x * np.cos(a * x))


def vector_f(
    a: float, barrier: threading.Barrier, depth: int, seen: list[Any]
) -> Callable[[Any], Any]:
    inner = scalar_f(a, barrier, depth, seen)
    return lambda x: tnp.sum(inner(x))


Work = Callable[[int, threading.Barrier, list[Any]], None]


def run_threads(n: int, work: Work) -> None:
    barrier = threading.Barrier(n, timeout=60)
    seen: list[list[Any]] = [[] for _ in range(n)]
    errors: list[BaseException] = []
    lock = threading.Lock()

    def target(i: int) -> None:
        try:
            work(i, barrier, seen[i])
        except BaseException as exc:
            with lock:
                errors.append(exc)
            barrier.abort()

    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often, to interleave primitives
    try:
        threads = [threading.Thread(target=target, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
            assert not t.is_alive(), "a thread hung"
    finally:
        sys.setswitchinterval(previous)
    real = [e for e in errors if not isinstance(e, threading.BrokenBarrierError)]
    if real:
        raise real[0]
    assert not errors, errors
    assert current_traces() == ()
    # every thread traced, and no trace object was ever visible to two threads
    assert all(seen), [len(s) for s in seen]
    owners: dict[int, int] = {}
    for i, traces in enumerate(seen):
        for trace in traces:
            assert owners.setdefault(id(trace), i) == i, f"trace {trace} seen by two threads"


def _nested_work(iterations: int) -> Work:
    def work(i: int, barrier: threading.Barrier, seen: list[Any]) -> None:
        a = 0.5 + 0.37 * i  # a different function in every thread
        assert current_traces() == ()
        for it in range(iterations):
            x = 0.3 + 0.11 * it - 0.05 * i
            # grad(grad(f)): two live traces while f runs
            d2 = T.grad(T.grad(scalar_f(a, barrier, 2, seen)))(x)
            assert_allclose(d2, f_second(a, x), rtol=1e-12, atol=1e-12)
            # jacfwd(jacrev(f)) of the vector version: a diagonal Hessian
            v = np.array([x, -x, 2 * x])
            h = T.jacfwd(T.jacrev(vector_f(a, barrier, 2, seen)))(v)
            expected = np.diag([f_second(a, float(e)) for e in v])
            assert_allclose(h, expected, rtol=1e-12, atol=1e-12)
            # forward over reverse, third order: jvp(grad(grad))
            d3_dir = T.jvp(T.grad(T.grad(scalar_f(a, barrier, 3, seen))), (x,), (1.0,))[1]
            eps = 1e-5
            fd = (f_second(a, x + eps) - f_second(a, x - eps)) / (2 * eps)
            assert_allclose(d3_dir, fd, rtol=1e-6, atol=1e-8)
            assert current_traces() == ()

    return work


def test_two_threads_nested_derivatives_overlap() -> None:
    run_threads(2, _nested_work(iterations=5))


def test_eight_threads_fifty_iterations() -> None:
    run_threads(8, _nested_work(iterations=50))


def test_threads_with_different_transform_pairings_at_once() -> None:
    # even threads use grad(grad), odd ones jvp(jvp): same number of f calls per iteration
    n, iterations = 6, 30

    def work(i: int, barrier: threading.Barrier, seen: list[Any]) -> None:
        a = 1.0 + 0.25 * i
        for it in range(iterations):
            x = -0.4 + 0.07 * it
            f = scalar_f(a, barrier, 2, seen)
            if i % 2 == 0:
                d2 = T.grad(T.grad(f))(x)
            else:
                d2 = T.jvp(lambda u, f=f: T.jvp(f, (u,), (1.0,))[1], (x,), (1.0,))[1]
            assert_allclose(d2, f_second(a, x), rtol=1e-12, atol=1e-12)

    run_threads(n, work)


def test_thread_does_not_see_main_thread_traces() -> None:
    seen: list[int] = []

    def in_thread() -> None:
        seen.append(len(current_traces()))
        seen.append(float(T.grad(tnp.sin)(0.0)))

    def f(x: Any) -> Any:
        assert len(current_traces()) == 1
        t = threading.Thread(target=in_thread)
        t.start()
        t.join()
        return x * x

    assert_allclose(T.grad(f)(3.0), 6.0)
    assert seen == [0, 1.0]
