"""An implicit layer: a fixed point ``z* = tanh(W z* + U x + b)`` with a ``custom_vjp``.

The forward pass iterates to the fixed point; differentiating those iterations would store
every one of them. The implicit function theorem gives the gradient from the fixed point
alone: with ``w = ct + (df/dz)^T w`` (another fixed point, solved by iterating the
pullback of ``f``), the cotangents of the parameters and input are ``(df/dparams)^T w``
and ``(df/dx)^T w``. That is the ``bwd`` rule. It is checked against differentiating
through the unrolled solver and against finite differences, then used to train the layer.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
from _cli import parse_args

import transforms as T
import transforms.numpy as tnp

Layer = Callable[..., T.Array]
TOL = 1e-12


def layer(W: T.Array, U: T.Array, b: T.Array, x: T.Array, z: T.Array) -> T.Array:
    return tnp.tanh(W @ z + U @ x + b)


def iterate(g: Callable[[T.Array], T.Array], start: T.Array) -> T.Array:
    """Iterate ``z <- g(z)`` until it stops moving (``g`` is a contraction here)."""
    z = start
    for _ in range(1000):
        z_next = g(z)
        if tnp.max(tnp.abs(z_next - z)) < TOL:  # comparisons on traced values are allowed
            return z_next
        z = z_next
    raise RuntimeError("fixed-point iteration did not converge")


@functools.partial(T.custom_vjp, nondiff_argnums=(0,))
def fixed_point(f: Layer, z0: T.Array, *args: T.Array) -> T.Array:
    """The ``z`` with ``z == f(*args, z)``, iterated from ``z0``."""
    return iterate(lambda z: f(*args, z), z0)


Residuals = tuple[tuple[T.Array, ...], T.Array]  # the layer's arguments and the fixed point


def fixed_point_fwd(f: Layer, z0: T.Array, *args: T.Array) -> tuple[T.Array, Residuals]:
    z = fixed_point(f, z0, *args)
    return z, (args, z)


def fixed_point_bwd(f: Layer, residuals: Residuals, ct: T.Array) -> tuple[T.Array | None, ...]:
    args, z = residuals
    primals = (*args, z)
    _, pullback = T.vjp(f, *primals)
    w = iterate(lambda w: ct + pullback(w)[-1], ct)  # w = ct + (df/dz)^T w
    return (None, *pullback(w)[:-1])  # None: z0 does not change the fixed point


fixed_point.defvjp(fixed_point_fwd, fixed_point_bwd)


def unrolled(z0: T.Array, W: T.Array, U: T.Array, b: T.Array, x: T.Array) -> T.Array:
    """The same fixed point by plain iteration: reverse mode records every step."""
    return iterate(lambda z: layer(W, U, b, x, z), z0)


def main() -> None:
    args = parse_args(__doc__)
    rng = np.random.default_rng(0)
    n, d = 8, 3
    W = rng.standard_normal((n, n))
    params: tuple[T.Array, T.Array, T.Array] = (
        0.5 * W / np.linalg.norm(W, 2),  # W, spectral norm 1/2: a contraction
        rng.standard_normal((n, d)),  # U
        0.1 * rng.standard_normal(n),  # b
    )
    x, target, z0 = rng.standard_normal(d), rng.uniform(-0.5, 0.5, n), np.zeros(n)

    def loss(W: T.Array, U: T.Array, b: T.Array, x: T.Array) -> T.Array:
        return tnp.sum((fixed_point(layer, z0, W, U, b, x) - target) ** 2)

    def loss_unrolled(W: T.Array, U: T.Array, b: T.Array, x: T.Array) -> T.Array:
        return tnp.sum((unrolled(z0, W, U, b, x) - target) ** 2)

    z = fixed_point(layer, z0, *params, x)
    assert np.allclose(z, layer(*params, x, z), atol=1e-11), "not a fixed point"
    implicit = T.grad(loss, argnums=(0, 1, 2, 3))(*params, x)
    through_solver = T.grad(loss_unrolled, argnums=(0, 1, 2, 3))(*params, x)
    for a, b in zip(implicit, through_solver, strict=True):
        assert np.allclose(a, b, rtol=1e-8, atol=1e-10), np.max(np.abs(a - b))
    h, direction = 1e-6, rng.standard_normal(d)
    fd = (loss(*params, x + h * direction) - loss(*params, x - h * direction)) / (2 * h)
    assert np.isclose(implicit[3] @ direction, fd, rtol=1e-6), (implicit[3] @ direction, fd)
    print("implicit gradient = gradient through the unrolled solver = finite differences")

    value_and_grad = T.value_and_grad(loss, argnums=(0, 1, 2))
    first = float(loss(*params, x))
    for _ in range(50 if args.quick else 200):
        _, grads = value_and_grad(*params, x)
        W_next, U_next, b_next = (p - 0.05 * g for p, g in zip(params, grads, strict=True))
        spectral = max(0.5, float(np.linalg.norm(W_next, 2)))
        params = (0.5 * W_next / spectral, U_next, b_next)  # W stays a contraction
    last = float(loss(*params, x))
    print(f"training through the implicit layer: loss {first:.4f} -> {last:.2e}")
    assert last < (0.5 if args.quick else 1e-3) * first


if __name__ == "__main__":
    main()
