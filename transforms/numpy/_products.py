"""Products: ``matmul`` (``@``) is the primitive; ``dot``, ``outer`` and ``tensordot`` are
composites of it and of reshapes/transposes, so their derivatives come from those rules.

``matmul``'s VJP treats 1-d operands as NumPy does (a row vector on the left, a column
vector on the right), contracts the cotangent with the other operand, and un-broadcasts the
batch dimensions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from transforms.batch import defbatch
from transforms.core import Array, ArrayLike, Primitive
from transforms.jvp import defjvp
from transforms.vjp import defvjp

from ._arithmetic import multiply
from ._batching import axis_size, materialized, to_front
from ._define import ndim_of, shape_of
from ._shape import array, broadcast_to, reshape, transpose, unbroadcast

__all__ = ["matmul", "dot", "outer", "tensordot"]


def _swap_last(a: Any) -> Any:
    n = ndim_of(a)
    return transpose(a, tuple(range(n - 2)) + (n - 1, n - 2))


def _matmul_vjp(argnum: int) -> Callable[..., Callable[[Any], Any]]:
    def maker(ans: Any, x: Any, y: Any) -> Callable[[Any], Any]:
        x_shape, y_shape = shape_of(x), shape_of(y)
        x2 = x_shape if len(x_shape) > 1 else (1,) + x_shape
        y2 = y_shape if len(y_shape) > 1 else y_shape + (1,)
        out2 = np.broadcast_shapes(x2[:-2], y2[:-2]) + (x2[-2], y2[-1])

        def pullback(ct: Any) -> Any:
            ct2 = reshape(ct, out2)
            if argnum == 0:
                grad = matmul(ct2, _swap_last(reshape(y, y2)))
                return reshape(unbroadcast(grad, x2), x_shape)
            grad = matmul(_swap_last(reshape(x, x2)), ct2)
            return reshape(unbroadcast(grad, y2), y_shape)

        return pullback

    return maker


matmul_p = Primitive("matmul", np.matmul)
defjvp(matmul_p, lambda t, ans, x, y: matmul(t, y), lambda t, ans, x, y: matmul(x, t))
defvjp(matmul_p, _matmul_vjp(0), _matmul_vjp(1))


def _matmul_batch(values: Any, dims: Any) -> tuple[Any, int]:
    """Batch ``matmul`` as one large product where the other operand is an unbatched matrix
    (the shape of Jacobian work), and as a broadcast batched ``matmul`` otherwise."""
    (x, y), (dx, dy) = values, dims
    if dy is None and ndim_of(y) == 2 and ndim_of(x) - 1 <= 2:  # (B, [m,] n) @ (n, p)
        x = to_front(x, dx)
        return matmul(x, y), 0
    if dx is None and ndim_of(x) == 2 and ndim_of(y) in (2, 3):  # (m, n) @ (B, n [, p])
        y = to_front(y, dy)
        if ndim_of(y) == 2:  # per-example vectors become the columns of one matrix
            return matmul(x, transpose(y)), 1
        size, n, p = shape_of(y)
        columns = reshape(transpose(y, (1, 0, 2)), (n, size * p))
        return reshape(matmul(x, columns), (shape_of(x)[0], size, p)), 1
    # general case: batch axes in front, 1-d operands promoted, ranks aligned
    size = axis_size(values, dims)
    x_rank, y_rank = ndim_of(x) - (dx is not None), ndim_of(y) - (dy is not None)
    xs = materialized([x], [dx])[0] if dx is not None else broadcast_to(x, (size, *shape_of(x)))
    ys = materialized([y], [dy])[0] if dy is not None else broadcast_to(y, (size, *shape_of(y)))
    if x_rank == 1:
        xs = reshape(xs, (size, 1, shape_of(xs)[1]))
    if y_rank == 1:
        ys = reshape(ys, (size, shape_of(ys)[1], 1))
    rank = max(ndim_of(xs), ndim_of(ys))
    xs = reshape(xs, (size,) + (1,) * (rank - ndim_of(xs)) + shape_of(xs)[1:])
    ys = reshape(ys, (size,) + (1,) * (rank - ndim_of(ys)) + shape_of(ys)[1:])
    out = matmul(xs, ys)
    out_shape = shape_of(out)
    if y_rank == 1:
        out_shape = out_shape[:-1]
    if x_rank == 1:
        out_shape = out_shape[:-2] + out_shape[-1:] if y_rank != 1 else out_shape[:-1]
    return reshape(out, out_shape), 0


defbatch(matmul_p, _matmul_batch)


def matmul(x1: ArrayLike, x2: ArrayLike) -> Array:
    """Differentiable ``numpy.matmul`` (the ``@`` operator)."""
    a = array(x1) if isinstance(x1, (list, tuple)) else x1
    b = array(x2) if isinstance(x2, (list, tuple)) else x2
    if ndim_of(a) == 0 or ndim_of(b) == 0:
        raise ValueError("matmul: input operand does not have enough dimensions (0-d); use *")
    return matmul_p.bind(a, b)  # type: ignore[no-any-return]


def tensordot(a: ArrayLike, b: ArrayLike, axes: int | Sequence[Any] = 2) -> Array:
    """Differentiable ``numpy.tensordot``: transpose, reshape to matrices, ``matmul``."""
    a = array(a) if isinstance(a, (list, tuple)) else a
    b = array(b) if isinstance(b, (list, tuple)) else b
    a_shape, b_shape = shape_of(a), shape_of(b)
    if isinstance(axes, (int, np.integer)):
        a_axes = list(range(len(a_shape) - int(axes), len(a_shape)))
        b_axes = list(range(int(axes)))
    else:
        a_axes = [int(axes[0])] if isinstance(axes[0], (int, np.integer)) else list(axes[0])
        b_axes = [int(axes[1])] if isinstance(axes[1], (int, np.integer)) else list(axes[1])
    a_axes = [int(i) % max(len(a_shape), 1) for i in a_axes]
    b_axes = [int(i) % max(len(b_shape), 1) for i in b_axes]
    if [a_shape[i] for i in a_axes] != [b_shape[i] for i in b_axes]:
        raise ValueError(
            f"tensordot: shape mismatch for sum over {a_axes} of {a_shape} "
            f"and {b_axes} of {b_shape}"
        )
    a_free = [i for i in range(len(a_shape)) if i not in a_axes]
    b_free = [i for i in range(len(b_shape)) if i not in b_axes]
    k = math.prod(a_shape[i] for i in a_axes)
    a2 = reshape(transpose(a, a_free + a_axes), (math.prod(a_shape[i] for i in a_free), k))
    b2 = reshape(transpose(b, b_axes + b_free), (k, math.prod(b_shape[i] for i in b_free)))
    out_shape = tuple(a_shape[i] for i in a_free) + tuple(b_shape[i] for i in b_free)
    return reshape(matmul(a2, b2), out_shape)


def dot(a: ArrayLike, b: ArrayLike) -> Array:
    """Differentiable ``numpy.dot``: ``*`` for scalars, ``@`` up to 2-d, else ``tensordot``."""
    a = array(a) if isinstance(a, (list, tuple)) else a
    b = array(b) if isinstance(b, (list, tuple)) else b
    if ndim_of(a) == 0 or ndim_of(b) == 0:
        return multiply(a, b)
    if ndim_of(b) <= 2:
        return matmul(a, b)
    return tensordot(a, b, axes=([-1], [-2]))


def outer(a: ArrayLike, b: ArrayLike) -> Array:
    """Differentiable ``numpy.outer``: the flattened operands multiplied by broadcasting."""
    a = array(a) if isinstance(a, (list, tuple)) else a
    b = array(b) if isinstance(b, (list, tuple)) else b
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)))
