"""Scans: ``scan`` (with a memory policy for reverse mode), ``map`` and ``associative_scan``.

``scan`` runs its steps eagerly, so every interpreter follows them exactly; reverse mode
stores what each step's pullback reads. ``checkpoint=`` trades memory for one more forward
pass: the steps are cut into segments (``sqrt(T)`` of ``sqrt(T)`` steps by default), each one
application of a primitive whose reverse rule keeps only its input carry and recomputes the
segment when its cotangent arrives. Reverse mode then holds ``sqrt(T)`` carries and one
segment's intermediates at a time (about ``2 sqrt(T)`` carries' worth) instead of all ``T``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

import transforms.numpy as tnp
from transforms.compose._vmap import vmap
from transforms.core.tree_util import PyTreeDef
from transforms.numpy._define import shape_of

from ._construct import apply, bind_traced, construct
from ._select import leaves_of
from ._signature import carry_like, same_types

__all__ = ["associative_scan", "map", "scan"]

Carry = TypeVar("Carry")
X = TypeVar("X")
Y = TypeVar("Y")

scan_p = construct("scan")
scan_segment_p = construct("scan_segment")


class _Ys:
    """The structure of the per-step outputs, learnt from the first step."""

    __slots__ = ("template", "tree")

    def __init__(self) -> None:
        self.tree: PyTreeDef[Any] | None = None
        self.template: list[Any] = []

    def leaves(self, y: Any) -> list[Any]:
        leaves, tree = leaves_of(y)
        if self.tree is None:
            self.tree, self.template = tree, leaves
        else:
            same_types(
                "scan: f's second output",
                leaves,
                tree,
                "its first step's",
                self.template,
                self.tree,
            )
        return leaves


def _steps(
    f: Callable[[Any, Any], Any],
    carry: list[Any],
    carry_tree: PyTreeDef[Any],
    xs: list[Any],
    x_tree: PyTreeDef[Any],
    length: int,
    reverse: bool,
    ys: _Ys,
) -> list[Any]:
    """``length`` steps of ``f`` from ``carry`` over ``xs`` (leaves with a leading axis of
    ``length``): the final carry's leaves, then the stacked outputs' leaves."""
    slices = [
        list(x)  # plain: views, no operation to record
        if type(x) is np.ndarray
        else [tnp.reshape(p, shape_of(x)[1:]) for p in tnp.split(x, length)]
        for x in xs
    ]
    order = range(length - 1, -1, -1) if reverse else range(length)
    outputs: list[list[Any]] = []
    for i in order:
        out = f(carry_tree.unflatten(carry), x_tree.unflatten([s[i] for s in slices]))
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError(f"scan: f must return a pair (carry, y), got {type(out).__name__}")
        carry = carry_like("scan: f's carry output", out[0], carry, carry_tree)
        outputs.append(ys.leaves(out[1]))
    if reverse:
        outputs.reverse()
    return [*carry, *(tnp.stack(column) for column in zip(*outputs, strict=True))]


def _empty_ys(
    f: Callable[[Any, Any], Any],
    carry: list[Any],
    carry_tree: PyTreeDef[Any],
    xs: list[Any],
    x_tree: PyTreeDef[Any],
    ys: _Ys,
) -> list[Any]:
    """The outputs of zero steps: ``f`` runs once on zeros to learn their shapes."""
    x = [np.zeros(shape_of(v)[1:], dtype=v.dtype) for v in xs]
    with np.errstate(all="ignore"):
        out = f(carry_tree.unflatten(carry), x_tree.unflatten(x))[1]
    return [tnp.zeros((0, *shape_of(y)), dtype=y.dtype) for y in ys.leaves(out)]


def scan(
    f: Callable[[Carry, X], tuple[Carry, Y]],
    init: Carry,
    xs: X | None = None,
    length: int | None = None,
    reverse: bool = False,
    unroll: int | bool = 1,
    _split_transpose: bool = False,
    *,
    checkpoint: bool | int = False,
) -> tuple[Carry, Y]:
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``, stacking the ``y``
    (``jax.lax.scan``): ``(final carry, stacked ys)``.

    Args:
        f: ``(carry, x) -> (carry, y)``; the carry keeps its structure, shapes and dtypes.
        init: the initial carry (a pytree).
        xs: a pytree of arrays scanned along their leading axis, or ``None`` with ``length``.
        length: the number of steps (checked against ``xs``).
        reverse: scan from the last element to the first (the ``ys`` keep ``xs``'s order).
        unroll: accepted for JAX's signature; eager execution has nothing to unroll.
        checkpoint: reverse mode's memory policy. ``True`` cuts the steps into segments of
            ``ceil(sqrt(length))`` steps, an integer gives the segment length: each
            segment's pullback keeps only its input carry and recomputes the segment.
            The traced values ``f`` closes over are operands of each segment; one it reads
            otherwise (a module global, an object's attribute) is refused with a
            ``TypeError``.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> from transforms import lax
        >>> cumsum = lambda xs: lax.scan(lambda c, x: (c + x, c + x), 0.0, xs)[1]
        >>> cumsum(np.array([1.0, 2.0, 3.0]))
        array([1., 3., 6.])
        >>> T.grad(lambda xs: tnp.sum(cumsum(xs)))(np.array([1.0, 2.0, 3.0]))
        array([3., 2., 1.])
    """
    del _split_transpose
    if not isinstance(unroll, bool) and (not isinstance(unroll, int) or unroll < 1):
        raise ValueError(f"scan: unroll must be a positive integer or a bool, got {unroll}")
    carry, carry_tree = leaves_of(init)
    x_leaves, x_tree = leaves_of(xs)
    lengths = set()
    for x in x_leaves:
        if shape_of(x) == ():
            raise ValueError("scan: every leaf of xs needs a leading axis to scan over")
        lengths.add(shape_of(x)[0])
    if length is not None:
        lengths.add(int(length))
    if len(lengths) != 1:
        if not lengths:
            raise ValueError("scan: got no xs to scan over and length=None")
        raise ValueError(f"scan: the leading axes of xs and length differ: {sorted(lengths)}")
    n = lengths.pop()
    segment = 0
    if checkpoint is not False:
        segment = max(1, math.ceil(math.sqrt(n))) if checkpoint is True else int(checkpoint)
        if segment < 1:
            raise ValueError(
                f"scan: checkpoint must be a bool or a positive integer, got {checkpoint}"
            )
    nc = len(carry)
    ys = _Ys()

    def run(*leaves: Any) -> list[Any]:
        c, x = list(leaves[:nc]), list(leaves[nc:])
        if n == 0:
            return [*c, *_empty_ys(f, c, carry_tree, x, x_tree, ys)]
        if segment and segment < n:
            return _segments(c, x)
        return _steps(f, c, carry_tree, x, x_tree, n, reverse, ys)

    def _segments(c: list[Any], x: list[Any]) -> list[Any]:
        bounds = list(range(segment, n, segment))
        pieces = [tnp.split(v, bounds) for v in x]
        parts: list[list[Any]] = [[] for _ in range(len(bounds) + 1)]
        order = range(len(bounds), -1, -1) if reverse else range(len(bounds) + 1)
        for k in order:
            steps = (bounds + [n])[k] - ([0] + bounds)[k]

            def one(*ls: Any, steps: int = steps) -> list[Any]:
                return _steps(
                    f, list(ls[:nc]), carry_tree, list(ls[nc:]), x_tree, steps, reverse, ys
                )

            leaves = [*c, *(p[k] for p in pieces)]
            out = bind_traced(scan_segment_p, one, leaves, "scan(checkpoint=...)")
            c, parts[k] = list(out[:nc]), list(out[nc:])
        return [*c, *(tnp.concatenate(column) for column in zip(*parts, strict=True))]

    out = apply(scan_p, run, [*carry, *x_leaves])
    assert ys.tree is not None, "f ran at least once"
    return carry_tree.unflatten(out[:nc]), ys.tree.unflatten(out[nc:])


def map(f: Callable[[X], Y], xs: X, *, batch_size: int | None = None) -> Y:
    """``f`` applied to each slice of ``xs`` along its leading axis, the results stacked
    (``jax.lax.map``); ``batch_size`` applies ``vmap(f)`` to that many slices at a time.

    Example:
        >>> import numpy as np
        >>> import transforms.numpy as tnp
        >>> from transforms import lax
        >>> lax.map(lambda row: tnp.sum(row**2), np.arange(6.0).reshape(3, 2))
        array([ 1., 13., 41.])
    """
    leaves, tree = leaves_of(xs)
    n = shape_of(leaves[0])[0] if leaves else 0
    if batch_size is None or n == 0:
        return scan(lambda c, x: (c, f(x)), (), xs)[1]
    if batch_size < 1:
        raise ValueError(f"map: batch_size must be a positive integer, got {batch_size}")
    full = n - n % batch_size
    outs = []
    if full:
        chunks = [
            tnp.reshape(x[:full], (full // batch_size, batch_size, *shape_of(x)[1:]))
            for x in leaves
        ]
        ys = scan(lambda c, x: (c, vmap(f)(x)), (), tree.unflatten(chunks))[1]
        y_leaves, y_tree = leaves_of(ys)
        outs.append([tnp.reshape(y, (full, *shape_of(y)[2:])) for y in y_leaves])
    if full < n:
        rest, y_tree = leaves_of(vmap(f)(tree.unflatten([x[full:] for x in leaves])))
        outs.append(rest)
    out: Y = y_tree.unflatten(
        [tnp.concatenate(c) if len(c) > 1 else c[0] for c in zip(*outs, strict=True)]
    )
    return out


def associative_scan(
    fn: Callable[[Any, Any], Any], elems: Any, reverse: bool = False, axis: int = 0
) -> Any:
    """All prefix combinations ``fn(... fn(fn(e0, e1), e2) ..., ei)`` along ``axis`` for an
    associative ``fn`` (``jax.lax.associative_scan``), in ``log2(n)`` calls of ``fn`` on
    whole arrays (Hillis-Steele); ``fn(a, b)`` combines ``a``, which precedes ``b``.

    Example:
        >>> import numpy as np
        >>> from transforms import lax
        >>> lax.associative_scan(lambda a, b: a + b, np.arange(1.0, 6.0))
        array([ 1.,  3.,  6., 10., 15.])
    """
    leaves, tree = leaves_of(elems)
    if not leaves:
        return elems
    leaves = [tnp.moveaxis(x, axis, 0) for x in leaves]
    if reverse:
        leaves = [tnp.flip(x, 0) for x in leaves]
    lengths = {shape_of(x)[0] for x in leaves}
    if len(lengths) != 1:
        raise ValueError(f"associative_scan: the leaves' axes {axis} differ: {sorted(lengths)}")
    n = lengths.pop()
    offset = 1
    while offset < n:
        before = tree.unflatten([x[:-offset] for x in leaves])
        after = tree.unflatten([x[offset:] for x in leaves])
        combined, combined_tree = leaves_of(fn(before, after))
        if combined_tree != tree:
            raise TypeError("associative_scan: fn must return the structure of elems")
        leaves = [tnp.concatenate([x[:offset], c]) for x, c in zip(leaves, combined, strict=True)]
        offset *= 2
    if reverse:
        leaves = [tnp.flip(x, 0) for x in leaves]
    return tree.unflatten([tnp.moveaxis(x, 0, axis) for x in leaves])
