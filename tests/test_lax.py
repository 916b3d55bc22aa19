"""transforms.lax: every construct in every interpreter, against unrolled Python.

The table ``CONSTRUCTS`` pairs each construct with the same computation written with Python
control flow (an ``if``, a ``while``, a ``for``), which every interpreter but ``vmap`` follows
eagerly; each cell (jvp, vjp, vmap, jet, grad of grad, jacfwd of jacrev, sparsity, jit) asserts
the construct's result equals the unrolled one, and ``check_grads`` checks both against finite
differences to second order. Under ``vmap`` the unrolled reference is a Python loop over the
examples, whose predicates differ (branches taken, trip counts).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import transforms as T
import transforms.numpy as tnp
from transforms import lax

Fn = Callable[[Any], Any]


@dataclass(frozen=True)
class Construct:
    name: str
    lax_fn: Fn
    unrolled: Fn
    point: np.ndarray  # where derivatives are compared
    batch: np.ndarray  # examples whose predicates differ


def _branches(x: Any) -> list[Fn]:
    return [lambda x: tnp.sin(x) * x[1], lambda x: tnp.exp(x) - x[2], lambda x: x**3]


def _index(x: Any) -> Any:
    return tnp.astype(tnp.floor(x[0]), np.int64)


def _grow(c: Any) -> Any:
    return c * 1.3 + 0.1 * tnp.sin(c)


def _while_unrolled(x: Any) -> Any:
    c = x
    while tnp.sum(c**2) < 20.0:
        c = _grow(c)
    return c


def _fori_body(x: Any) -> Callable[[Any, Any], Any]:
    return lambda i, c: tnp.sin(c) * x[i % 3] + c


def _fori_unrolled(x: Any) -> Any:
    c = x
    for i in range(4):
        c = _fori_body(x)(np.asarray(i), c)
    return c


def _scan_xs(x: Any) -> Any:
    return tnp.stack([x, x**2, tnp.cos(x), -x])


def _scan_step(c: Any, xi: Any) -> tuple[Any, Any]:
    return tnp.tanh(c * xi + 0.1), c * xi


def _scan_lax(reverse: bool, checkpoint: bool | int) -> Fn:
    def f(x: Any) -> Any:
        c, ys = lax.scan(_scan_step, x, _scan_xs(x), reverse=reverse, checkpoint=checkpoint)
        return tnp.concatenate([c, tnp.ravel(ys)])

    return f


def _scan_unrolled(reverse: bool) -> Fn:
    def f(x: Any) -> Any:
        xs, c, ys = _scan_xs(x), x, []
        for i in reversed(range(4)) if reverse else range(4):
            c, y = _scan_step(c, xs[i])
            ys.append(y)
        if reverse:
            ys.reverse()
        return tnp.concatenate([c, tnp.ravel(tnp.stack(ys))])

    return f


def _affine(p: Any, q: Any) -> tuple[Any, Any]:  # composition of x -> a x + b: associative
    return p[0] * q[0], p[1] * q[0] + q[1]


def _assoc_elems(x: Any) -> tuple[Any, Any]:
    return tnp.sin(x), x**2


def _assoc_lax(x: Any) -> Any:
    a, b = lax.associative_scan(_affine, _assoc_elems(x))
    return tnp.concatenate([a, b])


def _assoc_unrolled(x: Any) -> Any:
    a, b = _assoc_elems(x)
    acc = (a[0], b[0])
    out = [acc]
    for i in range(1, 3):
        acc = _affine(acc, (a[i], b[i]))
        out.append(acc)
    return tnp.concatenate([tnp.stack([o[0] for o in out]), tnp.stack([o[1] for o in out])])


def _rows(x: Any) -> Any:
    return tnp.reshape(tnp.outer(x, x + 1.0), (3, 3))


def _row_fn(r: Any) -> Any:
    return tnp.sum(tnp.sin(r) * r)


_BATCH = np.array([[0.5, 0.3, -0.2], [1.5, -0.4, 0.6], [2.7, 0.2, 0.1], [-1.2, 0.9, 0.4]])
_POINT = np.array([1.4, 0.7, -0.3])

CONSTRUCTS = [
    Construct(
        "cond",
        lambda x: lax.cond(x[0] > 1.0, _branches(x)[0], _branches(x)[1], x),
        lambda x: _branches(x)[0](x) if x[0] > 1.0 else _branches(x)[1](x),
        _POINT,
        _BATCH,
    ),
    Construct(
        "switch",
        lambda x: lax.switch(_index(x), _branches(x), x),
        lambda x: _branches(x)[int(np.clip(np.floor(T.core.concrete(x[0])), 0, 2))](x),
        _POINT,
        _BATCH,
    ),
    Construct(
        "while_loop",
        lambda x: lax.while_loop(lambda c: tnp.sum(c**2) < 20.0, _grow, x),
        _while_unrolled,
        _POINT,
        _BATCH,  # trip counts 7, 4, 2, 4
    ),
    Construct(
        "fori_loop",
        lambda x: lax.fori_loop(0, 4, _fori_body(x), x),
        _fori_unrolled,
        _POINT,
        _BATCH,
    ),
    Construct("scan", _scan_lax(False, False), _scan_unrolled(False), _POINT, _BATCH),
    Construct("scan_reverse", _scan_lax(True, False), _scan_unrolled(True), _POINT, _BATCH),
    Construct("scan_checkpoint", _scan_lax(False, 2), _scan_unrolled(False), _POINT, _BATCH),
    Construct(
        "scan_reverse_checkpoint", _scan_lax(True, True), _scan_unrolled(True), _POINT, _BATCH
    ),
    Construct(
        "map",
        lambda x: lax.map(_row_fn, _rows(x)),
        lambda x: tnp.stack([_row_fn(r) for r in _rows(x)]),
        _POINT,
        _BATCH,
    ),
    Construct(
        "map_batch_size",
        lambda x: lax.map(_row_fn, _rows(x), batch_size=2),
        lambda x: tnp.stack([_row_fn(r) for r in _rows(x)]),
        _POINT,
        _BATCH,
    ),
    Construct("associative_scan", _assoc_lax, _assoc_unrolled, _POINT, _BATCH),
    Construct(
        "select_n",
        lambda x: lax.select_n(_index(x) % 3, tnp.sin(x), x**2, tnp.exp(x)),
        lambda x: tnp.where(
            _index(x) % 3 == 0, tnp.sin(x), tnp.where(_index(x) % 3 == 1, x**2, tnp.exp(x))
        ),
        _POINT,
        _BATCH,
    ),
]
IDS = [c.name for c in CONSTRUCTS]


def _close(a: Any, b: Any) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)


def _weights(c: Construct) -> np.ndarray:
    n = np.size(c.unrolled(c.point))
    return np.random.default_rng(1).normal(size=n)


@pytest.mark.parametrize("c", CONSTRUCTS, ids=IDS)
def test_value(c: Construct) -> None:
    _close(c.lax_fn(c.point), c.unrolled(c.point))


@pytest.mark.parametrize("c", CONSTRUCTS, ids=IDS)
def test_jvp(c: Construct) -> None:
    t = np.array([0.3, -1.1, 0.7])
    out, tangent = T.jvp(c.lax_fn, (c.point,), (t,))
    ref_out, ref_tangent = T.jvp(c.unrolled, (c.point,), (t,))
    _close(out, ref_out)
    _close(tangent, ref_tangent)
    T.check_grads(c.lax_fn, (c.point,), order=2, modes="fwd")


@pytest.mark.parametrize("c", CONSTRUCTS, ids=IDS)
def test_vjp(c: Construct) -> None:
    w = _weights(c)
    _close(T.vjp(c.lax_fn, c.point)[1](w)[0], T.vjp(c.unrolled, c.point)[1](w)[0])
    T.check_grads(c.lax_fn, (c.point,), order=2, modes="rev")


@pytest.mark.parametrize("c", CONSTRUCTS, ids=IDS)
def test_vmap_per_example(c: Construct) -> None:
    """Each example takes its own branch / trip count: the batch equals a loop over it."""
    _close(T.vmap(c.lax_fn)(c.batch), np.stack([c.unrolled(x) for x in c.batch]))
    w = _weights(c)
    grads = T.vmap(T.grad(lambda x: tnp.sum(c.lax_fn(x) * w)))(c.batch)
    ref = np.stack([T.grad(lambda x: tnp.sum(c.unrolled(x) * w))(x) for x in c.batch])
    _close(grads, ref)
    jac = T.jacrev(lambda xs: T.vmap(c.lax_fn)(xs))(c.batch)
    ref_jac = [T.jacfwd(c.unrolled)(x) for x in c.batch]
    for i, r in enumerate(ref_jac):
        _close(jac[i, :, i], r)


@pytest.mark.parametrize("c", CONSTRUCTS, ids=IDS)
def test_jet(c: Construct) -> None:
    series = ([np.array([1.0, -0.5, 0.2]), np.array([0.1, 0.3, -0.2]), np.zeros(3)],)
    out, coeffs = T.jet(c.lax_fn, (c.point,), series)
    ref_out, ref_coeffs = T.jet(c.unrolled, (c.point,), series)
    _close(out, ref_out)
    for a, b in zip(coeffs, ref_coeffs, strict=True):
        _close(a, b)


@pytest.mark.parametrize("c", CONSTRUCTS, ids=IDS)
def test_second_order(c: Construct) -> None:
    w = _weights(c)

    def scalar(f: Fn) -> Fn:
        return lambda x: tnp.sum(f(x) * w)

    _close(T.hessian(scalar(c.lax_fn))(c.point), T.hessian(scalar(c.unrolled))(c.point))
    _close(
        T.grad(lambda x: T.grad(scalar(c.lax_fn))(x)[0])(c.point),
        T.grad(lambda x: T.grad(scalar(c.unrolled))(x)[0])(c.point),
    )
    _close(T.jacfwd(T.jacrev(c.lax_fn))(c.point), T.jacfwd(T.jacrev(c.unrolled))(c.point))


@pytest.mark.parametrize("c", CONSTRUCTS, ids=IDS)
def test_sparsity(c: Construct) -> None:
    pattern = T.jacobian_sparsity(c.lax_fn)(c.point).toarray()
    assert (pattern == T.jacobian_sparsity(c.unrolled)(c.point).toarray()).all()
    hessian = T.hessian_sparsity(lambda x: tnp.sum(c.lax_fn(x)))(c.point).toarray()
    ref = T.hessian_sparsity(lambda x: tnp.sum(c.unrolled(x)))(c.point).toarray()
    assert (hessian == ref).all()


@pytest.mark.parametrize("c", CONSTRUCTS, ids=IDS)
def test_jit(c: Construct) -> None:
    """Under ``jit`` (recorded, then replayed, at a point and at one whose branches or trip
    counts differ), ``jit(grad)`` and ``jit(vmap)`` (per-example predicates) equal eager."""
    w = _weights(c)
    scalar = lambda x: tnp.sum(c.lax_fn(x) * w)
    jitted, jitted_grad, jitted_vmap = (
        T.jit(c.lax_fn),
        T.jit(T.grad(scalar)),
        T.jit(T.vmap(c.lax_fn)),
    )
    for x in (c.point, c.point, c.batch[0], c.point):
        _close(jitted(x), c.unrolled(x))
        _close(jitted_grad(x), T.grad(lambda x: tnp.sum(c.unrolled(x) * w))(x))
    for xs in (c.batch, c.batch, c.batch[::-1]):
        _close(jitted_vmap(xs), np.stack([c.unrolled(x) for x in xs]))
    assert jitted.stats.replays > 0 and jitted_grad.stats.replays > 0
    assert jitted_vmap.stats.replays > 0
