"""``memory_budget=`` on ``jacfwd``, ``jacrev`` and ``hessian`` (issue 35): the same Jacobian
as unchunked, a peak (measured by ``tracemalloc``) within 1.2x the budget, clear errors."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import transforms as T
import transforms.numpy as tnp


def _dense(x: Any) -> Any:
    """A map with a dense Jacobian and no large constant: the Jacobian dominates memory."""
    return tnp.tanh(tnp.cumsum(tnp.sin(x)) * x)


def _peak(run: Callable[[], Any]) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        out = run()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("transform", [T.jacrev, T.jacfwd])
@pytest.mark.parametrize("budget", [3_000_000, 8_000_000])
def test_jacobian_within_budget(transform: Any, budget: int) -> None:
    x = np.random.default_rng(0).normal(size=500)  # a 2 MB Jacobian
    expected = transform(_dense)(x)
    _, unbudgeted = _peak(lambda: transform(_dense)(x))
    assert unbudgeted > 1.2 * budget  # the budget binds
    jac, peak = _peak(lambda: transform(_dense, memory_budget=budget)(x))
    np.testing.assert_array_equal(jac, expected)
    assert peak <= 1.2 * budget, (peak, budget)


def test_hessian_within_budget_and_pytrees() -> None:
    def g(x: Any) -> Any:
        return tnp.sum(tnp.tanh(tnp.cumsum(x)) ** 2)

    x = np.random.default_rng(1).normal(size=400)
    expected = T.hessian(g)(x)
    hess, peak = _peak(lambda: T.hessian(g, memory_budget=3_000_000)(x))
    np.testing.assert_array_equal(hess, expected)
    assert peak <= 1.2 * 3_000_000, peak

    def h(p: Any) -> Any:
        return {"u": tnp.sin(p["a"]) * tnp.sum(p["b"]), "v": p["a"][:2] * p["b"]}

    p = {"a": np.linspace(0.1, 1.0, 6), "b": np.array([0.3, -0.2])}
    for transform in (T.jacfwd, T.jacrev):
        got = transform(h, memory_budget=20_000)(p)
        want = transform(h)(p)
        for k in ("u", "v"):
            for j in ("a", "b"):
                np.testing.assert_array_equal(got[k][j], want[k][j])


def test_budget_under_grad_and_vmap() -> None:
    """Traced rows (a Jacobian inside another transform) are exact too."""
    x = np.linspace(-1.0, 1.0, 5)

    def loss(x: Any) -> Any:
        return tnp.sum(T.jacrev(_dense, memory_budget=10_000)(x) ** 2)

    def reference(x: Any) -> Any:
        return tnp.sum(T.jacrev(_dense)(x) ** 2)

    np.testing.assert_allclose(T.grad(loss)(x), T.grad(reference)(x), rtol=1e-13)
    xs = np.stack([x, 2 * x])
    np.testing.assert_allclose(
        T.vmap(T.jacfwd(_dense, memory_budget=10_000))(xs), T.vmap(T.jacfwd(_dense))(xs)
    )


def test_errors() -> None:
    x = np.ones(50)
    with pytest.raises(ValueError, match="chunk_size or memory_budget, not both"):
        T.jacrev(_dense, chunk_size=2, memory_budget=10**6)
    with pytest.raises(ValueError, match="memory_budget must be a positive int"):
        T.jacfwd(_dense, memory_budget=0)
    with pytest.raises(ValueError, match="cannot hold the Jacobian"):
        T.jacrev(_dense, memory_budget=10_000)(x)  # the 20 kB Jacobian alone exceeds it


def test_an_earlier_peak_of_the_caller_does_not_shrink_the_budget() -> None:
    """A caller tracing with tracemalloc whose earlier peak was large: the probe measures
    from the call, not from that peak (which would refuse the budget)."""
    x = np.random.default_rng(2).normal(size=200)
    tracemalloc.start()
    try:
        big = np.ones(10_000_000)  # an 80 MB peak, freed before the call
        del big
        jac = T.jacrev(_dense, memory_budget=1_000_000)(x)
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(jac, T.jacrev(_dense)(x))


def test_hessian_budget_counts_the_gradient_tape_it_holds() -> None:
    """``hessian``'s outer pass holds the tape of the gradient computation (here n x n
    intermediates, about half the budget) through all its pushes: the chunks are sized to
    what is left, so the peak stays within the budget; a budget that cannot hold the tape,
    the Hessian and one row refuses, saying how much is needed."""
    n = 200
    A = np.random.default_rng(3).normal(size=(n, n)) / n

    def g(x: Any) -> Any:
        return tnp.sum(tnp.tanh(tnp.outer(x, x) @ A))

    x = np.random.default_rng(4).normal(size=n)
    budget = 5_000_000
    hess, peak = _peak(lambda: T.hessian(g, memory_budget=budget)(x))
    np.testing.assert_allclose(hess, T.hessian(g, chunk_size=20)(x), rtol=1e-13)
    assert peak <= 1.2 * budget, (peak, budget)
    with pytest.raises(ValueError, match=r"hessian: .* the forward pass's residuals"):
        T.hessian(g, memory_budget=4_000_000)(x)
