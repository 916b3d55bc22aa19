"""The sparsity rule registry, written only through ``defsparsity``, and the rule families.

A sparsity rule is ``rule(ans, values, patterns, **params) -> Pattern | None``: ``values``
are the operands one level down, ``patterns[i]`` is operand ``i``'s ``Pattern`` (``None`` for
an operand that is not traced here: a constant, whose values the rule may read), ``ans`` is
the primitive's output; it returns the output's pattern (a tuple of them for a
multiple-results primitive; ``None`` for a constant). ``defsparsity(p, None)`` declares a
zero derivative (``stop_gradient``); ``defsparsity_inline(p)`` one whose ``fun`` parameter is
the function itself (custom rules and ``checkpoint``: detection runs the function).

The families, one helper each, so that one line registers a primitive:

- ``elementwise_rule``: broadcasting elementwise functions; the output depends on each
  operand with a non-zero derivative, and ``pairs`` says which second derivatives are non-zero
  (the family kit derives them from the partial derivatives, for every kit-made primitive);
- ``index_rule``: operations that copy elements (shapes, indexing, concatenation): the
  primitive itself, applied to the operands' element *numbers*, says where each output element
  comes from; ``scatter_rule``: their transposes, which add copies (``untake``);
- ``reduction_rule`` and ``scan_rule``: each output element depends on its group (or prefix);
- ``matmul_rule``: contractions, and ``convolve_rule``: convolutions, with the structural
  zeros of a constant factor;
- ``axes_rule``: dense along transformed axes (FFTs); ``dense_rule``: dense (linear algebra).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

import numpy as np

from transforms.core import Primitive, Tracer, concrete, register_interpreter

from ._pattern import (
    Pattern,
    broadcast,
    cross,
    dense,
    gather,
    h_apply,
    h_union,
    linear_map,
    nonlinear,
    scipy_sparse,
    union,
)

__all__ = [
    "SparsityRule",
    "defsparsity",
    "defsparsity_inline",
    "has_sparsity_rule",
    "elementwise_rule",
    "elementwise_pattern",
    "index_rule",
    "scatter_rule",
    "reduction_rule",
    "scan_rule",
    "matmul_rule",
    "convolve_rule",
    "multiply_rule",
    "axes_rule",
    "dense_rule",
    "dense_linear_rule",
]

SparsityRule = Callable[..., Any]  # -> Pattern | tuple[Pattern | None, ...] | None

_INLINE = object()
_RULES: dict[Primitive[Any], SparsityRule | object | None] = {}


def defsparsity(primitive: Primitive[Any], rule: SparsityRule | None) -> None:
    """Define how ``primitive`` maps its operands' sparsity patterns to its output's
    (``None``: the output depends on no input, a zero derivative)."""
    _RULES[primitive] = rule


def defsparsity_inline(primitive: Primitive[Any]) -> None:
    """Detect through ``primitive`` by calling its ``fun`` parameter on the traced operands."""
    _RULES[primitive] = _INLINE


def has_sparsity_rule(primitive: Primitive[Any], argnum: int = 0) -> bool:
    """Whether ``primitive`` has a sparsity rule (one rule covers every argument)."""
    return primitive in _RULES


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(np.shape(x))


# ---- elementwise ----------------------------------------------------------------------------
def elementwise_pattern(
    ans: Any,
    values: Sequence[Any],
    patterns: Sequence[Pattern | None],
    pairs: Iterable[tuple[int, int]] = (),
    zero: Collection[int] = (),
) -> Pattern | None:
    """The output pattern of a broadcasting elementwise function: the union of its operands'
    patterns (but those in ``zero``, whose derivative is zero), plus, in a second-order
    detection, the cross terms of the operand pairs whose second derivative is non-zero."""
    out_shape = _shape(ans)
    spread: dict[int, Pattern] = {}
    for i, (v, p) in enumerate(zip(values, patterns, strict=True)):
        if p is not None and i not in zero:
            spread[i] = broadcast(p, _shape(v), out_shape)
    if not spread:
        return None
    out = union(list(spread.values()))
    if out.h is not None:
        h = out.h
        for i, j in pairs:
            if i in spread and j in spread:
                h = h_union(h, cross(spread[i].g, spread[j].g, out.n))
        out = out.with_h(h)
    return out


def elementwise_rule(
    pairs: Iterable[tuple[int, int]] = (), zero: Collection[int] = ()
) -> SparsityRule:
    """The rule of an elementwise function with the non-zero second derivatives ``pairs``
    (``()``: linear or piecewise linear) and the zero-derivative operands ``zero``."""
    pairs = tuple(pairs)

    def rule(ans: Any, values: Any, patterns: Any, **_: Any) -> Pattern | None:
        return elementwise_pattern(ans, values, patterns, pairs, zero)

    return rule


def multiply_rule(ans: Any, values: Any, patterns: Any, **_: Any) -> Pattern | None:
    """``x * y``: bilinear; a constant factor's zeros remove the dependency exactly."""
    out = elementwise_pattern(ans, values, patterns, ((0, 1),))
    if out is None or (patterns[0] is not None and patterns[1] is not None):
        return out
    constant = values[1] if patterns[0] is not None else values[0]
    if isinstance(constant, Tracer):
        return out  # a value of an outer transform: its zeros may vary (per example of a vmap)
    keep = np.broadcast_to(np.asarray(constant) != 0, _shape(ans)).ravel()
    if keep.all():
        return out
    rows = np.flatnonzero(keep)
    return out.apply(linear_map(rows, rows, (keep.size, keep.size)))


# ---- copies and their transposes --------------------------------------------------------------
def _stack(blocks: Sequence[Pattern]) -> Pattern:
    if len(blocks) == 1:
        return blocks[0]
    sparse = scipy_sparse()
    g = sparse.vstack([b.g for b in blocks], format="csr")
    h = None
    if all(b.h is not None for b in blocks):
        h = sparse.vstack([b.h for b in blocks], format="csr")
    return Pattern(g, h, blocks[0].n)


def index_rule(primitive: Primitive[Any], data: Sequence[int] | None = None) -> SparsityRule:
    """The rule of an operation that copies elements of its ``data`` operands (all of them by
    default): ``primitive`` applied to the element numbers of those operands (``-1`` for a
    constant's) gives, for each output element, the number of the element it copies."""
    impl = primitive.impl

    def rule(ans: Any, values: Any, patterns: Any, **params: Any) -> Any:
        positions = range(len(values)) if data is None else data
        numbered = [concrete(v) for v in values]
        blocks, offset = [], 0
        for i in positions:
            shape = _shape(values[i])
            if patterns[i] is None:
                numbered[i] = np.full(shape, -1, dtype=np.int64)
            else:
                size = math.prod(shape)
                numbered[i] = np.arange(offset, offset + size, dtype=np.int64).reshape(shape)
                offset += size
                blocks.append(patterns[i])
        source = impl(*numbered, **params)
        stacked = _stack(blocks)
        if primitive.multiple_results:
            return tuple(gather(stacked, s) for s in source)
        return gather(stacked, source)

    return rule


def scatter_rule(copy: Callable[..., Any]) -> SparsityRule:
    """The rule of the transpose of a copy (``untake``, ``scatter_add``: operand 0 is added
    into an output of zeros): ``copy(numbers, *other operands, **params)``, the copy applied
    to the output's element numbers, says where each element of operand 0 goes."""

    def rule(ans: Any, values: Any, patterns: Any, **params: Any) -> Pattern:
        p = patterns[0]
        size = int(np.size(ans))
        numbers = np.arange(size, dtype=np.int64).reshape(_shape(ans))
        dest = np.asarray(copy(numbers, *(concrete(v) for v in values[1:]), **params))
        src = np.broadcast_to(np.arange(p.size).reshape(_shape(values[0])), dest.shape)
        return p.apply(linear_map(dest, src, (size, p.size)))  # type: ignore[no-any-return]

    return rule


# ---- reductions and scans ---------------------------------------------------------------------
def reduction_rule(nonlinear_: bool) -> SparsityRule:
    """Reductions over ``axes``: each output element depends on its group; ``nonlinear_``
    (``prod``) adds every pair of the group, piecewise linear ones (``max``) nothing."""

    def rule(ans: Any, values: Any, patterns: Any, *, axes: Any, **_: Any) -> Pattern:
        p, shape = patterns[0], _shape(values[0])
        kept = tuple(1 if a in axes else s for a, s in enumerate(shape))
        dest = np.broadcast_to(np.arange(math.prod(kept)).reshape(kept), shape)
        out = p.apply(linear_map(dest, np.arange(p.size), (math.prod(kept), p.size)))
        return nonlinear(out) if nonlinear_ else out

    return rule


def scan_rule(nonlinear_: bool) -> SparsityRule:
    """Cumulative operations along ``axis``: each output element depends on its prefix."""

    def rule(ans: Any, values: Any, patterns: Any, *, axis: int, **_: Any) -> Pattern:
        p, shape = patterns[0], _shape(values[0])
        numbers = np.moveaxis(np.arange(p.size).reshape(shape), axis, -1)
        length = shape[axis]
        numbers = numbers.reshape(-1, length)
        i, j = np.tril_indices(length)
        out = p.apply(linear_map(numbers[:, i], numbers[:, j], (p.size, p.size)))
        return nonlinear(out) if nonlinear_ else out

    return rule


# ---- contractions -----------------------------------------------------------------------------
def _structural_nonzero(value: Any, p: Pattern | None) -> Any:
    """Which elements may be non-zero: any traced one, and a constant's non-zeros."""
    if isinstance(value, Tracer):  # a value of an outer transform: its zeros may vary
        return np.ones(_shape(value), dtype=bool)
    nonzero = np.asarray(value) != 0
    if p is not None:
        nonzero = nonzero | (np.diff(p.g.indptr) > 0).reshape(nonzero.shape)
    return nonzero


def matmul_rule(ans: Any, values: Any, patterns: Any, **_: Any) -> Pattern | None:
    """``a @ b`` (NumPy's broadcasting, 1-D operands included): output ``(i, l)`` depends on
    ``a[i, j]`` where ``b[j, l]`` may be non-zero and on ``b[j, l]`` where ``a[i, j]`` may be;
    the second order has the cross terms of those products."""
    (a, b), (pa, pb) = values, patterns
    sa, sb = _shape(a), _shape(b)
    a2 = sa if len(sa) > 1 else (1, *sa)
    b2 = sb if len(sb) > 1 else (*sb, 1)
    batch = np.broadcast_shapes(a2[:-2], b2[:-2])
    n, p_ = a2[-2], b2[-1]
    numbers_a = np.broadcast_to(np.arange(math.prod(sa)).reshape(a2), (*batch, *a2[-2:]))
    numbers_b = np.broadcast_to(np.arange(math.prod(sb)).reshape(b2), (*batch, *b2[-2:]))
    numbers_out = np.arange(math.prod(batch) * n * p_).reshape((*batch, n, p_))
    nz_a = np.broadcast_to(_structural_nonzero(a, pa).reshape(a2), (*batch, *a2[-2:]))
    nz_b = np.broadcast_to(_structural_nonzero(b, pb).reshape(b2), (*batch, *b2[-2:]))
    *where_batch, i, j, k = np.nonzero(nz_a[..., :, :, None] & nz_b[..., None, :, :])
    out_rows = numbers_out[(*where_batch, i, k)]
    from_a = numbers_a[(*where_batch, i, j)]
    from_b = numbers_b[(*where_batch, j, k)]
    return _bilinear(out_rows, from_a, from_b, numbers_out.size, pa, pb)


def convolve_rule(ans: Any, values: Any, patterns: Any, **_: Any) -> Pattern | None:
    """The full n-d convolution of ``a`` and ``b``: output ``i + j`` (a multi-index) depends
    on ``a[i]`` where ``b[j]`` may be non-zero and on ``b[j]`` where ``a[i]`` may be; the
    second order has the cross terms of those products."""
    (a, b), (pa, pb) = values, patterns
    out_shape = _shape(ans)
    flat_a = np.flatnonzero(_structural_nonzero(a, pa))
    flat_b = np.flatnonzero(_structural_nonzero(b, pb))
    index_a = np.unravel_index(flat_a, _shape(a))
    index_b = np.unravel_index(flat_b, _shape(b))
    out_index = tuple(i[:, None] + j[None, :] for i, j in zip(index_a, index_b, strict=True))
    out_rows = np.ravel_multi_index(out_index, out_shape).ravel()
    from_a = np.repeat(flat_a, flat_b.size)
    from_b = np.tile(flat_b, flat_a.size)
    return _bilinear(out_rows, from_a, from_b, math.prod(out_shape), pa, pb)


def _bilinear(
    out_rows: Any, from_a: Any, from_b: Any, size: int, pa: Pattern | None, pb: Pattern | None
) -> Pattern:
    """The pattern of a bilinear map whose output element ``out_rows[k]`` has the term
    ``a[from_a[k]] * b[from_b[k]]`` (flat indices; ``size`` output elements)."""
    parts = []
    if pa is not None:
        parts.append(pa.apply(linear_map(out_rows, from_a, (size, pa.size))))
    if pb is not None:
        parts.append(pb.apply(linear_map(out_rows, from_b, (size, pb.size))))
    out = union(parts)
    if out.h is not None and pa is not None and pb is not None and out_rows.size:
        terms = cross(pa.g[from_a], pb.g[from_b], out.n)
        to_rows = linear_map(out_rows, np.arange(out_rows.size), (size, out_rows.size))
        out = out.with_h(h_union(out.h, h_apply(to_rows, terms)))
    return out


# ---- dense along axes, dense --------------------------------------------------------------------
def axes_rule(ans: Any, values: Any, patterns: Any, *, axes: Sequence[int], **_: Any) -> Pattern:
    """A linear transform along ``axes`` (an FFT): each output element depends on every
    element of its fibre, the elements that agree with it on every other axis."""
    p: Pattern = patterns[0]
    shape, out_shape = _shape(values[0]), _shape(ans)
    ndim = len(shape)
    along = {a % ndim for a in axes}
    fibres = math.prod(s for d, s in enumerate(shape) if d not in along)

    def fibre_of(shape_: tuple[int, ...]) -> Any:
        kept = tuple(1 if d in along else s for d, s in enumerate(shape_))
        return np.broadcast_to(np.arange(fibres).reshape(kept), shape_).ravel()

    into = linear_map(fibre_of(shape), np.arange(p.size), (fibres, p.size))
    out_size = math.prod(out_shape)
    spread = linear_map(np.arange(out_size), fibre_of(out_shape), (out_size, fibres))
    return p.apply(into).apply(spread)


def dense_rule(ans: Any, values: Any, patterns: Any, **_: Any) -> Any:
    """Every output element depends on every traced operand element, nonlinearly: the rule of
    linear algebra's decompositions, inverses and determinants."""
    traced = [p for p in patterns if p is not None]
    if isinstance(ans, tuple):
        return tuple(dense(traced, int(np.size(a)), True) for a in ans)
    return dense(traced, int(np.size(ans)), True)


def dense_linear_rule(ans: Any, values: Any, patterns: Any, **_: Any) -> Any:
    """Every output element depends on every traced operand element, linearly: an operator
    known only as a function (``custom_linear_solve``'s solve)."""
    traced = [p for p in patterns if p is not None]
    return dense(traced, int(np.size(ans)), False)


register_interpreter("sparsity", has_sparsity_rule, define="transforms.sparsity.defsparsity")
