"""Under ``T.jit``, a construct is one op of the user's program, and that op is replayed by a
jit of its own (``lax._construct._staged``): the loop, and each function a rule derives from
it (its pullback, tangent, batched form), runs as recorded NumPy code at each replay instead
of being traced again. These tests pin that it happens, that every replay equals eager
execution bit for bit (guards included: a body that branches in Python on a value), and that
a loop past the op budget falls back to running eagerly, exactly and without a warning.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import transforms as T
import transforms.numpy as tnp
from transforms import lax
from transforms.lax import _construct
from transforms.staging import Jitted, replayed
from transforms.staging._program import Op

RNG = np.random.default_rng(3)
H, STEPS = 4, 30
W = RNG.normal(size=(H, H)) / 2
U = RNG.normal(size=H) / 2
XS = RNG.normal(size=STEPS)


def rnn_loss(w: Any) -> Any:
    """A scan closing over the weights being differentiated."""

    def step(h: Any, x: Any) -> tuple[Any, Any]:
        h = tnp.tanh(w @ h + U * x)
        return h, tnp.sum(h)

    _, ys = lax.scan(step, tnp.zeros(H), XS)
    return tnp.sum(ys)


def newton_sqrt(a: Any) -> Any:
    """A while_loop whose trip count depends on ``a``, closing over it."""

    def body(x: Any) -> Any:
        return x - (x * x - a) / (2.0 * x)

    return lax.while_loop(lambda x: tnp.abs(x * x - a) > 1e-12, body, a + 1.0)


def branchy(a: Any) -> Any:
    """A fori_loop whose body branches in Python on a value (a guard of the inner replay)."""

    def body(i: Any, x: Any) -> Any:
        if x > 1.0:
            return 0.5 * x * a
        return x * x + a

    return lax.fori_loop(0, 6, body, a)


def _leaves(out: Any) -> list[Any]:
    return [np.asarray(o) for o in (out if isinstance(out, tuple) else (out,))]


def _inner(jitted: Jitted[..., Any]) -> list[Jitted[..., Any]]:
    """The construct functions replayed by jits of their own in ``jitted``'s programs."""
    found = []
    for entry in jitted._cache.entries.values():
        for spec in entry.programs:
            for instr in spec.program.instructions:
                if isinstance(instr, Op) and isinstance(instr.params.get("fun"), Jitted):
                    found.append(instr.params["fun"])
    return found


CASES: list[tuple[str, Callable[[Any], Any], list[Any]]] = [
    ("scan grad", T.grad(rnn_loss), [W, W * 0.5, -W]),
    ("scan value", rnn_loss, [W, W * 0.5]),
    ("while grad", T.grad(newton_sqrt), [np.float64(2.0), np.float64(9.0), np.float64(0.3)]),
    ("while vmap", T.vmap(newton_sqrt), [np.array([2.0, 9.0]), np.array([0.3, 5.0])]),
    ("while jvp", lambda a: T.jvp(newton_sqrt, (a,), (np.float64(1.0),)), [np.float64(2.0)]),
    ("branchy grad", T.grad(branchy), [np.float64(0.2), np.float64(0.9), np.float64(0.2)]),
    ("branchy value", branchy, [np.float64(0.2), np.float64(0.9)]),
]


@pytest.mark.parametrize(("name", "fun", "inputs"), CASES, ids=[c[0] for c in CASES])
def test_a_construct_op_is_replayed_by_its_own_jit_and_equals_eager(
    name: str, fun: Callable[[Any], Any], inputs: list[Any]
) -> None:
    """Each replay equals the recording call bit for bit (the inner jit's replay is exact),
    and eager execution to rounding: a construct's derivative, one primitive, adds a value's
    cotangents from its operands and its closure in another order than eager tracing adds
    them (docs/jit.md)."""
    jitted = T.jit(fun)
    for x in inputs:
        recorded = _leaves(jitted(x))
        for _ in range(2):
            assert all(map(np.array_equal, _leaves(jitted(x)), recorded)), name
        for got, want in zip(recorded, _leaves(fun(x)), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-300)
    inner = _inner(jitted)
    assert inner, "the construct's op holds a replayed function"
    assert sum(j.stats.replays for j in inner) > 0


def test_the_rnn_gradient_replays_its_pullback_recorded() -> None:
    g = T.jit(T.grad(rnn_loss))
    recorded = g(W)
    np.testing.assert_allclose(recorded, T.grad(rnn_loss)(W), rtol=1e-14)
    for _ in range(2):
        assert np.array_equal(g(W), recorded)
    ops = [
        i.primitive.name
        for e in g._cache.entries.values()
        for s in e.programs
        for i in s.program.instructions
        if isinstance(i, Op)
    ]
    assert ops == ["scan"]  # one op: the pullback (the forward pass folded into it)
    (pullback,) = _inner(g)
    assert pullback.stats.records == 1 and pullback.stats.replays == 2


def test_a_loop_past_the_op_budget_runs_eagerly_exactly_and_quietly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_construct, "_REPLAY_OPS", 20)
    g = T.jit(T.grad(rnn_loss))
    recorded = g(W)  # (the suite turns warnings into errors: none is given)
    np.testing.assert_allclose(recorded, T.grad(rnn_loss)(W), rtol=1e-14)
    assert np.array_equal(g(W), recorded)
    (pullback,) = _inner(g)
    assert pullback.stats.records == 0 and pullback.stats.eager == 2


def test_replayed_stops_recording_past_max_ops_without_a_warning() -> None:
    def chain(x: Any) -> Any:
        for _ in range(50):
            x = tnp.sin(x)
        return x

    x = np.linspace(0.0, 1.0, 3)
    short, long = replayed(chain, 100), replayed(chain, 10)
    for _ in range(2):
        assert np.array_equal(short(x), chain(x)) and np.array_equal(long(x), chain(x))
    assert (short.stats.records, short.stats.replays) == (1, 1)
    assert (long.stats.records, long.stats.eager) == (0, 2)


def test_eagerly_a_construct_binds_no_jit() -> None:
    """Without a recording live, nothing is wrapped: a construct's function runs once."""
    seen: list[object] = []
    original = _construct._impl

    def spy(*leaves: Any, fun: Any, memo: Any) -> Any:
        seen.append(fun)
        return original(*leaves, fun=fun, memo=memo)

    primitive = lax._loops.fori_loop_p
    impl = primitive.impl
    primitive.impl = spy
    try:
        lax.fori_loop(0, 3, lambda i, x: x * 2.0, np.ones(2))
    finally:
        primitive.impl = impl
    assert seen and not any(isinstance(f, Jitted) for f in seen)
