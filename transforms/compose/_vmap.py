"""``vmap``: run a per-example function on a whole batch at once.

The function runs once, on ``BatchTracer`` inputs whose shapes omit the batch axis; every
primitive applies its batching rule. ``in_axes``/``out_axes`` follow JAX: an int, ``None``
(not batched), or a tree prefix of the arguments/outputs.

A derivative taken inside a user's ``vmap`` is NaN-safe as without it (``nansafe``): one
whose NaN its structural pass cannot follow, because its values are batched, counts itself
(``nansafe.defer``), and the ``vmap`` then computes each example whose outputs hold a NaN
again alone, unbatched, and merges it in. The common path pays two reads of that count.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec, TypeVar

import numpy as np

from transforms import nansafe
from transforms.batching import BatchTrace, BatchTracer
from transforms.core import Tracer, arrays, current_traces, new_trace
from transforms.core.tree_util import tree_flatten
from transforms.numpy import broadcast_to, moveaxis
from transforms.numpy._define import shape_of

from ._args import check_callable

__all__ = ["vmap", "vmap_call", "vmap_leaves"]

P = ParamSpec("P")
R = TypeVar("R")
Axes = int | None | tuple[Any, ...] | list[Any] | dict[Any, Any]


def _broadcast_prefix(prefix: Any, tree: Any, what: str) -> list[int | None]:
    """One axis per leaf of ``tree``, from ``prefix`` (an int/None, or a tree prefix)."""
    if prefix is None or isinstance(prefix, int):
        return [prefix] * len(tree_flatten(tree)[0])
    if isinstance(prefix, (tuple, list)) and isinstance(tree, (tuple, list)):
        if len(prefix) != len(tree):
            raise ValueError(
                f"vmap: {what} has {len(prefix)} entries but the value has {len(tree)}"
            )
        return [a for p, t in zip(prefix, tree, strict=True) for a in _broadcast_prefix(p, t, what)]
    if isinstance(prefix, dict) and isinstance(tree, dict):
        if sorted(prefix) != sorted(tree):
            raise ValueError(f"vmap: {what} keys {sorted(prefix)} differ from {sorted(tree)}")
        return [a for k in sorted(tree) for a in _broadcast_prefix(prefix[k], tree[k], what)]
    if not isinstance(prefix, (tuple, list, dict)):  # JAX: a TypeError for such an axis
        raise TypeError(
            f"vmap: {what} must be an int, None, or a (nested) tuple/list/dict of them, got "
            f"{prefix!r}"
        )
    raise ValueError(f"vmap: {what} {prefix!r} is not a prefix of the value's structure")


def _mappable(x: Any, position: int) -> Any:
    """A leaf to map over: an array (or tracer) with at least one axis."""
    if not isinstance(x, (np.ndarray, Tracer)):
        if arrays.is_foreign(x):  # a Dask or CuPy array: mapped in its library
            arrays.hold()
        elif not isinstance(x, (int, float, complex, np.generic)):
            raise TypeError(
                f"vmap: argument {position} is a {type(x).__name__}, not an array; pass an "
                "array, or in_axes=None for an argument that is not mapped"
            )
        else:
            x = np.asarray(x)
    if len(shape_of(x)) == 0:
        raise ValueError(
            f"vmap: argument {position} is a scalar (0-d) and has no axis to map over; give "
            "it in_axes=None"
        )
    return x


def _normalize(axis: int, ndim: int, what: str) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"vmap: {what} {axis} is out of range for a value with {ndim} dims")
    return axis % ndim


def _batch_size(leaves: list[Any], axes: list[int | None], axis_size: int | None) -> int:
    sizes = {shape_of(x)[a] for x, a in zip(leaves, axes, strict=True) if a is not None}
    if axis_size is not None:
        sizes.add(axis_size)
    if len(sizes) > 1:
        detail = ", ".join(
            f"argument leaf {i}: axis {a} of shape {shape_of(x)}"
            for i, (x, a) in enumerate(zip(leaves, axes, strict=True))
            if a is not None
        ) + ("" if axis_size is None else f", axis_size={axis_size}")
        raise ValueError(f"vmap got inconsistent sizes for the mapped axis ({detail})")
    if not sizes:
        raise ValueError("vmap needs at least one mapped input (in_axes not all None) or axis_size")
    return sizes.pop()


def _unbatch(out: Any, trace: BatchTrace, axis: int | None, size: int) -> Any:
    if axis is None:
        if trace.owns(out):
            raise ValueError(
                "vmap: out_axes is None for an output that varies along the mapped axis"
            )
        return out
    if trace.owns(out):
        value, bdim = out.value, out.bdim
    else:  # constant along the batch: broadcast it
        value, bdim = broadcast_to(out, (size, *shape_of(out))), 0
    axis = _normalize(axis, len(shape_of(value)), "out_axes")
    return value if bdim == axis else moveaxis(value, bdim, axis)


def vmap(
    fun: Callable[P, R],
    in_axes: Axes = 0,
    out_axes: Axes = 0,
    axis_size: int | None = None,
) -> Callable[P, R]:
    """Vectorise ``fun`` over a batch axis of its inputs.

    Args:
        fun: the per-example function.
        in_axes: the batch axis of each argument (int, ``None`` for unbatched, or a tree
            prefix of the positional arguments).
        out_axes: where the batch axis goes in each output (same forms).
        axis_size: the batch size, needed only when no argument is batched.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> T.vmap(lambda x: tnp.sum(x ** 2))(np.ones((3, 2)))  # one sum per row
        array([2., 2., 2.])
        >>> T.vmap(tnp.dot, in_axes=(0, None))(np.eye(2), np.array([3.0, 4.0]))
        array([3., 4.])
    """

    check_callable(fun, "vmap")

    @functools.wraps(fun)
    def vmapped(*args: P.args, **kwargs: P.kwargs) -> R:
        return vmap_call(fun, in_axes, out_axes, axis_size, args, kwargs, nan_safe=True)

    return vmapped


def vmap_call(
    fun: Callable[..., R],
    in_axes: Axes,
    out_axes: Axes,
    axis_size: int | None,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    nan_safe: bool = False,
) -> R:
    """One call of ``vmap(fun, in_axes, out_axes, axis_size)`` (the Jacobians call it
    directly: no wrapper function to build per call, and their rows' NaNs are theirs to
    follow, ``nansafe.rows_again``; a user's ``vmap`` follows its examples', ``nan_safe``)."""
    prefix = in_axes if not isinstance(in_axes, list) else tuple(in_axes)
    if isinstance(prefix, tuple) and len(prefix) != len(args):
        raise ValueError(
            f"vmap: in_axes has {len(prefix)} entries for {len(args)} positional arguments"
        )
    leaves, tree = tree_flatten(args)
    # the Jacobians' case first: one int axis for arrays, nothing to convert or to name
    if type(prefix) is int and all(type(x) is np.ndarray and x.ndim for x in leaves):
        axes: list[int | None] = [_normalize(prefix, x.ndim, "in_axes") for x in leaves]
    else:
        axes = _broadcast_prefix(prefix, args, "in_axes")
        positions = [pos for pos, arg in enumerate(args) for _ in tree_flatten(arg)[0]]
        leaves = [
            _mappable(x, pos) if a is not None else x
            for x, a, pos in zip(leaves, axes, positions, strict=True)
        ]
        axes = [
            None if a is None else _normalize(a, len(shape_of(x)), "in_axes")
            for x, a in zip(leaves, axes, strict=True)
        ]
    size = _batch_size(leaves, axes, axis_size)
    deferred = nansafe.deferred
    with new_trace(lambda level: BatchTrace(level, size)) as trace:
        tracers = [
            x if a is None else BatchTracer(trace, x, a) for x, a in zip(leaves, axes, strict=True)
        ]
        out = fun(*tree.unflatten(tracers), **kwargs)
        out_leaves, out_tree = tree_flatten(out)
        out_axes_flat = (
            [out_axes] * len(out_leaves)
            if out_axes is None or type(out_axes) is int
            else _broadcast_prefix(out_axes, out, "out_axes")
        )
        results = [
            _unbatch(o, trace, a, size) for o, a in zip(out_leaves, out_axes_flat, strict=True)
        ]
    if nan_safe and nansafe.deferred != deferred and _examples_alone(leaves, axes):
        results = nansafe.examples_again(
            results,
            out_axes_flat,
            lambda i: tree_flatten(fun(*tree.unflatten(_example(leaves, axes, i)), **kwargs))[0],
        )
    return out_tree.unflatten(results)


def _examples_alone(leaves: list[Any], axes: list[int | None]) -> bool:
    """Whether the examples can be run one by one: no argument is traced by an outer
    transform (its examples are its to follow, or to keep IEEE's NaN) or a lazy array (a
    look would compute it), and no ``T.jit`` is recording (a derivative it records keeps
    IEEE's NaN, as without ``vmap``)."""
    for x, a in zip(leaves, axes, strict=True):
        if isinstance(x, Tracer) or (a is not None and type(x) is not np.ndarray):
            return False
    return not any(t.stages for t in current_traces())


def _example(leaves: list[Any], axes: list[int | None], i: int) -> list[Any]:
    """Example ``i`` of the argument leaves: the batched ones' slices, the others whole."""
    return [x if a is None else np.take(x, i, axis=a) for x, a in zip(leaves, axes, strict=True)]


def vmap_leaves(fun: Callable[..., list[Any]], leaves: Sequence[np.ndarray]) -> list[Any]:
    """``vmap_call(fun, 0, 0, None, tuple(leaves), {})`` for a ``fun`` of arrays batched on
    their first axis (all of one size) that returns a flat list of leaves: a Jacobian's
    basis pushed through a pullback, without the trees and checks of user arguments."""
    size = len(leaves[0])
    with new_trace(lambda level: BatchTrace(level, size)) as trace:
        out = fun(*[BatchTracer(trace, x, 0) for x in leaves])
        return [_unbatch(o, trace, 0, size) for o in out]
