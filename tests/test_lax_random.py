"""Random loops (hypothesis): per-example trip counts under ``vmap`` and random scans, each
against the same computation written with Python loops, values and gradients."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import transforms as T
import transforms.numpy as tnp
from transforms import lax

BODIES: list[Callable[[Any, Any], Any]] = [
    lambda c, a: 0.5 * tnp.sin(c) + a,
    lambda c, a: 0.9 * c + a * tnp.cos(c),
    lambda c, a: tnp.tanh(c + a) + 0.3 * a,
    lambda c, a: c * tnp.exp(-c * c) + a,
]


def _close(a: Any, b: Any) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-12)


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    examples=st.integers(1, 5),
    size=st.integers(1, 3),
    body=st.sampled_from(range(len(BODIES))),
    limit=st.floats(0.5, 6.0),
)
def test_random_while_loops_per_example(
    seed: int, examples: int, size: int, body: int, limit: float
) -> None:
    rng = np.random.default_rng(seed)
    xs, a_s = rng.uniform(-1, 1, (examples, size)), rng.uniform(0.1, 1.0, (examples, size))
    step = BODIES[body]

    def running(c: Any, k: Any) -> Any:
        return tnp.logical_and(k < 12, tnp.sum(abs(c)) < limit)

    def structured(x: Any, a: Any) -> Any:
        c, k = lax.while_loop(lambda s: running(*s), lambda s: (step(s[0], a), s[1] + 1), (x, 0))
        return tnp.sum(c**2) + k

    def unrolled(x: Any, a: Any) -> Any:
        c, k = x, 0
        while running(c, k):
            c, k = step(c, a), k + 1
        return tnp.sum(c**2) + k

    _close(T.vmap(structured)(xs, a_s), [unrolled(x, a) for x, a in zip(xs, a_s, strict=True)])
    grads = T.vmap(T.grad(structured, argnums=(0, 1)))(xs, a_s)
    for i, (x, a) in enumerate(zip(xs, a_s, strict=True)):
        for got, want in zip(grads, T.grad(unrolled, argnums=(0, 1))(x, a), strict=True):
            _close(got[i], want)


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    length=st.integers(0, 9),
    body=st.sampled_from(range(len(BODIES))),
    reverse=st.booleans(),
    checkpoint=st.sampled_from([False, True, 1, 2, 4]),
)
def test_random_scans(seed: int, length: int, body: int, reverse: bool, checkpoint: Any) -> None:
    rng = np.random.default_rng(seed)
    x0, xs = rng.uniform(-1, 1, 2), rng.uniform(-1, 1, (length, 2))
    step = BODIES[body]

    def structured(x0: Any, xs: Any) -> Any:
        c, ys = lax.scan(
            lambda c, x: (step(c, x), c * x), x0, xs, reverse=reverse, checkpoint=checkpoint
        )
        return tnp.sum(c) + tnp.sum(tnp.sin(ys))

    def unrolled(x0: Any, xs: Any) -> Any:
        c, total = x0, 0.0
        for i in reversed(range(length)) if reverse else range(length):
            c, y = step(c, xs[i]), c * xs[i]
            total = total + tnp.sum(tnp.sin(y))
        return tnp.sum(c) + total

    _close(structured(x0, xs), unrolled(x0, xs))
    for got, want in zip(
        T.grad(structured, argnums=(0, 1))(x0, xs),
        T.grad(unrolled, argnums=(0, 1))(x0, xs),
        strict=True,
    ):
        _close(got, want)
    _close(T.hessian(lambda x0: structured(x0, xs))(x0), T.hessian(lambda x0: unrolled(x0, xs))(x0))
