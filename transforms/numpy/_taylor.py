"""Taylor-mode rules of this package's primitives (the kit gives its own their rule).

Three kinds, cheapest first:

- *linear* primitives (shape and indexing operations, sums, scans, FFTs, ``add``): each
  Taylor coefficient is mapped by the primitive itself, all ``K`` of them in one call of the
  primitive's batching rule on the stacked coefficients;
- *bilinear* ones (``multiply``, ``matmul``, ``convolve``; ``dot``, ``tensordot``, ``einsum``,
  ``outer`` are built of these): the Cauchy product ``y_k = sum_j p(a_j, b_{k-j})``, every
  pair in one batched call;
- recurrences: ``divide`` (``q_k = (a_k - sum_{j>=1} b_j q_{k-j}) / b_0``) and ``power`` with
  a constant exponent (``k x_0 y_k = sum_j ((a+1) j - k) x_j y_{k-j}``; a small integer
  exponent by products, exact at 0);

and every other differentiable primitive takes ``ode_rule``, derived from its JVP rule
(exact; the list is ``ODE``, shown in docs/taylor.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache, reduce
from operator import add, mul
from typing import Any

import numpy as np

from transforms.batching import batch_rule
from transforms.core import Primitive, Tracer, arrays, native_types
from transforms.taylor import (
    COLLAPSED,
    add_collapsed,
    array_ops,
    by_composition,
    collapsed_elementwise,
    collapsed_linear,
    defcollapsed,
    deferred_sum,
    deftaylor,
    forced,
    ode_rule,
)

from . import _arithmetic as ar
from . import (
    _construct,
    _convolution,
    _elementwise,
    _fft,
    _indexing,
    _linalg,
    _products,
    _reductions,
    _scans,
)
from . import _shape as sh
from ._batching import to_front
from ._define import shape_of

__all__ = ["LINEAR", "ODE", "bilinear", "linear"]

array_ops.update(
    concatenate=sh.concatenate,
    stack=sh.stack,
    broadcast_to=sh.broadcast_to,
    tensordot=_products.tensordot,
    moveaxis=sh.moveaxis,
    sum=_reductions.sum,
)


def _dtype(x: Any) -> Any:
    return x.dtype if hasattr(x, "dtype") else np.result_type(x)


def _plain(*xs: Any) -> bool:
    """No tracer among ``xs``, and no array of another library (a Dask array: the rule's
    stacks are written in place): the rule may run NumPy itself (the eager hot path)."""
    for x in xs:  # (a loop, not any() of a generator: this runs in most rule applications)
        if type(x) in native_types or x is None:  # (a set: arrays and numbers at once)
            continue
        if isinstance(x, Tracer) or arrays.is_foreign(x):
            return False
    return True


def _with_primal(x: Any, terms: Any) -> Any:
    """The stack ``x0, x1, ..., xK`` of a primal and its terms."""
    if _plain(x, terms):
        return np.concatenate([np.asarray(x)[None], terms])
    return sh.concatenate([sh.reshape(x, (1, *shape_of(x))), terms], 0)


# ---- how a recurrence holds its terms ---------------------------------------------------------
#
# A recurrence computes its result's terms one order at a time, each from the earlier ones
# (``_convolve``). ``_layout`` picks, once per application, how the terms are held:
#
# - ``_ARRAY``: plain arrays, stacked ``(K + 1, *shape)``: one NumPy call per order covers
#   every element;
# - ``_NUMBERS``: a plain stack of 0-d terms (a scalar function's derivatives) as a list of
#   Python numbers: a NumPy call on a 0-d array costs as much as tens of float operations,
#   and a recurrence is O(K^2) operations on single numbers. float32 and complex64 terms are
#   computed in double precision and rounded once, at the end;
# - ``_TERMS``: traced values (a jet under ``grad`` or ``vmap``) as a list of terms, the same
#   code as ``_NUMBERS``: its operations are the differentiable ones of the tracers.

_ARRAY, _NUMBERS, _TERMS = "array", "numbers", "terms"

_NUMBER_DTYPES = frozenset(np.dtype(c) for c in "fdFD")  # what Python numbers hold exactly


def _is_number(v: Any) -> bool:
    """A Python number, or a plain 0-d array or NumPy scalar of a numeric dtype."""
    if type(v) is float or type(v) is int or type(v) is complex:
        return True
    return isinstance(v, (np.ndarray, np.generic)) and not v.ndim and v.dtype.kind in "iufc"


def _layout(
    ans: Any, stacks: Sequence[Any], values: Sequence[Any] = (), divisor: Any = None
) -> str:
    """How a recurrence on these operands holds its terms (see above).

    ``ans`` is the primal of the result, ``stacks`` the series the recurrence reads
    (``None``: a zero one), ``values`` the primals it reads and ``divisor`` one it divides
    by. ``_NUMBERS`` needs ``ans`` 0-d of a dtype Python numbers hold, the stacks of that
    dtype, the values numbers and the divisor a non-zero one (Python raises on a division
    by zero where NumPy gives ``inf``); ``_ARRAY`` needs no tracer, and a divisor of the
    result's shape.
    """
    if type(ans) is np.ndarray and not ans.ndim and ans.dtype in _NUMBER_DTYPES:
        dtype = ans.dtype
        numbers = divisor is None or (_is_number(divisor) and divisor != 0)
        for s in stacks:
            if s is not None and not (type(s) is np.ndarray and s.ndim == 1 and s.dtype == dtype):
                numbers = False
        for v in values:
            if not _is_number(v):
                numbers = False
        if numbers:
            return _NUMBERS
    if _plain(ans, divisor, *stacks, *values) and (
        divisor is None or shape_of(divisor) == shape_of(ans)
    ):
        return _ARRAY
    return _TERMS


def _rows(stack: Any, layout: str) -> Any:
    """A stack's terms as the layout holds them: the stack itself, or a list of its rows."""
    if layout is _ARRAY:
        return stack
    if layout is _NUMBERS:
        return stack.tolist()
    return [stack[k] for k in range(shape_of(stack)[0])]


def _value(v: Any, layout: str) -> Any:
    """A primal as the layout reads it: a Python number for ``_NUMBERS``."""
    return v.item() if layout is _NUMBERS and not isinstance(v, (int, float, complex)) else v


def _start(order: int, first: Any, layout: str) -> Any:
    """Room for the terms ``y0 .. yK`` with ``y0`` set: a stack for ``_ARRAY``, a list else."""
    if layout is not _ARRAY:
        return [_value(first, layout)]
    first = np.asarray(first)
    ys = np.empty((order + 1, *first.shape), dtype=first.dtype)
    ys[0] = first
    return ys


def _store(ys: Any, k: int, value: Any) -> None:
    if type(ys) is list:
        ys.append(value)
    else:
        ys[k] = value


def _result(ys: Any, layout: str, ans: Any) -> Any:
    """The stack ``y1 .. yK`` (of ``ans``'s dtype for ``_NUMBERS``)."""
    if layout is _ARRAY:
        return ys[1:]
    if layout is _NUMBERS:
        return np.array(ys[1:], dtype=ans.dtype)
    return sh.stack(ys[1:])


def _convolve(w: Any, ys: Any, k: int) -> Any:
    """``sum_{j=1..k} w[j-1] * ys[k-j]``: ``w`` and ``ys`` lists (numbers or traced terms),
    or plain stacks (``ys`` holding rows 0..k-1)."""
    if type(ys) is list:  # the sum in order
        products = map(mul, w, ys[k - 1 :: -1])
        if type(ys[0]) is float or type(ys[0]) is complex:  # numbers: from +0.0, as NumPy's
            return reduce(add, products, 0.0)  # vecdot sums (-0.0 terms sum to +0.0 there)
        return reduce(add, products)  # traced terms: no leading 0, no extra traced add
    if w.dtype.kind != "c":  # vecdot conjugates its first operand: a real one is itself
        # (NumPy's stubs do not know a gufunc's ``axis`` keyword)
        return np.vecdot(w[:k], ys[k - 1 :: -1], axis=0)  # type: ignore[call-overload]
    return np.einsum("j...,j...->...", w[:k], ys[k - 1 :: -1])


@cache
def _orders(order: int, ndim: int, dtype: Any) -> np.ndarray[Any, Any]:
    """``1, 2, ..., order`` along axis 0 of a stack."""
    w = np.arange(1, order + 1, dtype=dtype).reshape((order,) + (1,) * ndim)
    w.setflags(write=False)
    return w


def _times_orders(stack: Any, order: int, layout: str) -> Any:
    """The weights ``j x_j`` (``j = 1..order``) of a convolution, as the layout holds them.

    Numbers stop at the last non-zero one (at least one is kept): a product by an exact
    zero adds nothing to a term, and the input of a scalar function's first operations is
    a polynomial in ``t`` (``derivatives``' seed ``[1, 0, ..., 0]``, ``x**2``), whose
    convolutions are then shorter. (A later term that overflowed to ``inf`` times such a
    zero would have made a ``nan``; it stays ``inf``.)
    """
    if layout is _NUMBERS:
        xs = stack.tolist()
        while len(xs) > 1 and not xs[-1]:
            xs.pop()
        return list(map(mul, xs, range(1, order + 1)))
    return _rows(stack * _orders(order, len(shape_of(stack)) - 1, _dtype(stack)), layout)


def _batched(primitive: Primitive, values: list[Any], dims: list[int | None], params: Any) -> Any:
    rule = batch_rule(primitive)
    assert rule is not None
    out, dim = rule(values, dims, **params)
    if primitive.multiple_results:
        return tuple(to_front(o, d) for o, d in zip(out, dim, strict=True))
    return to_front(out, dim)


def _broadcast(
    primitive: Primitive, values: list[Any], dims: list[int | None], ans: Any, params: Any
) -> Any:
    """``_batched`` for an elementwise primitive: on plain values, NumPy itself broadcasts
    the stacks (given their primal's rank) against the unstacked values."""
    if not _plain(*values):
        return _batched(primitive, values, dims, params)
    if len(values) == 1:
        return primitive.impl(values[0], **params)
    rank = len(shape_of(ans))
    operands = [v if d is None else _ranked(v, rank) for v, d in zip(values, dims, strict=True)]
    return primitive.impl(*operands, **params)


def linear(
    primitive: Primitive, static: Callable[[int], bool] = lambda i: False, elementwise: bool = False
) -> Any:
    """The rule of a primitive linear in its operands (those for which ``static(i)`` is
    false; static ones, conditions and index arrays, carry no series); ``elementwise``
    for one that broadcasts its operands (see ``_broadcast``)."""

    def rule(
        order: int, primals: Sequence[Any], series: Sequence[Any], ans: Any, /, **params: Any
    ) -> Any:
        if elementwise and len(series) == 1:  # (negative, conjugate, real, imag)
            return _broadcast(primitive, [series[0]], [0], ans, params)
        values: list[Any] = []
        dims: list[int | None] = []
        # the zeros of a constant have the result's dtype (a 0-d int64 array would promote)
        dtype = next(_dtype(s) for s in series if s is not None)
        if not primitive.multiple_results:
            dtype = _dtype(ans)
        for i, (p, s) in enumerate(zip(primals, series, strict=True)):
            if s is not None:
                values.append(s)
                dims.append(0)
            elif static(i):
                values.append(p)
                dims.append(None)
            else:  # a constant operand of a linear map contributes nothing to the terms
                values.append(np.zeros(shape_of(p), dtype=dtype))
                dims.append(None)
        if elementwise:
            return _broadcast(primitive, values, dims, ans, params)
        return _batched(primitive, values, dims, params)

    return rule


@cache
def _pairs(
    order: int, dtype: Any
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Index pairs ``(j, k - j)`` for ``k = 1..order`` (grouped by ``k``), the matrix summing
    them by ``k``, and where each group starts (for ``np.add.reduceat``)."""
    pairs = [(k, j, k - j) for k in range(1, order + 1) for j in range(k + 1)]
    left = np.array([j for _, j, _ in pairs])
    right = np.array([i for _, _, i in pairs])
    sums = np.zeros((order, len(pairs)), dtype=dtype)
    sums[[k - 1 for k, _, _ in pairs], np.arange(len(pairs))] = 1
    starts = np.array([k * (k + 1) // 2 - 1 for k in range(1, order + 1)])  # (k-1) groups before
    for a in (left, right, sums, starts):
        a.setflags(write=False)
    return left, right, sums, starts


def _ranked(stack: Any, rank: int) -> Any:
    """A plain stack ``(K, *shape)`` with singleton axes after axis 0 up to ``rank`` axes per
    order, so that it broadcasts like its primal against operands of rank ``rank``."""
    missing = rank + 1 - stack.ndim
    return (
        stack
        if missing <= 0
        else stack.reshape((stack.shape[0],) + (1,) * missing + stack.shape[1:])
    )


def _elementwise_product(order: int, a: Any, sa: Any, b: Any, sb: Any, ans: Any) -> Any:
    """``multiply``'s Cauchy product on plain arrays: every pair ``a_j b_{k-j}`` in one
    broadcasting multiply, summed by ``k`` in one ``np.add.reduceat``."""
    rank = len(shape_of(ans))
    if sb is None:
        return _ranked(sa, rank) * b
    if sa is None:
        return a * _ranked(sb, rank)
    left, right, _, starts = _pairs(order, _dtype(ans))
    full_a = _ranked(_with_primal(a, sa), rank)
    full_b = full_a if a is b and sa is sb else _ranked(_with_primal(b, sb), rank)  # (x * x)
    return np.add.reduceat(full_a[left] * full_b[right], starts, axis=0)


def bilinear(primitive: Primitive) -> Any:
    """The rule of a primitive bilinear in its two operands: the Cauchy product."""
    elementwise = primitive is ar.multiply_p

    def rule(
        order: int, primals: Sequence[Any], series: Sequence[Any], ans: Any, /, **params: Any
    ) -> Any:
        (a, b), (sa, sb) = primals, series
        if elementwise and _plain(a, b, sa, sb):
            return _elementwise_product(order, a, sa, b, sb, ans)
        if sb is None:
            return _batched(primitive, [sa, b], [0, None], params)
        if sa is None:
            return _batched(primitive, [a, sb], [None, 0], params)
        full_a, full_b = _with_primal(a, sa), _with_primal(b, sb)
        left, right, sums, _ = _pairs(order, _dtype(ans))
        products = _batched(primitive, [full_a[left], full_b[right]], [0, 0], params)
        if _plain(products):
            return np.tensordot(sums, products, 1)
        return _products.tensordot(sums, products, 1)

    return rule


def collapsed_bilinear(primitive: Primitive) -> Any:
    """The collapsed rule (``transforms/taylor/_collapsed.py``) of a bilinear primitive:
    ``p(a0, B) + p(A, b0)`` on the first coefficients and on the summed second ones, plus
    the cross term ``sum_i p(a1_i, b1_i)`` in the second."""
    taylor = bilinear(primitive)
    linear_in_each = collapsed_linear(taylor)

    def rule(
        n: int,
        primals: Sequence[Any],
        firsts: Sequence[Any],
        seconds: Sequence[Any],
        ans: Any,
        /,
        **params: Any,
    ) -> Any:
        (fa, fb), (ca, cb) = firsts, seconds
        if (fa is None and ca is None) or (fb is None and cb is None):
            return linear_in_each(n, primals, firsts, seconds, ans, **params)
        left = linear_in_each(n, primals, [fa, None], [ca, None], ans, **params)
        right = linear_in_each(n, primals, [None, fb], [None, cb], ans, **params)
        first = deferred_sum(left[0], right[0])
        second = _sum_or_none(left[1], right[1])
        if fa is not None and fb is not None:
            fa, fb = forced(fa), forced(fb)  # (a deferred stack may prove zero)
            if fa is not None and fb is not None:
                cross = _batched(primitive, [fa, fb], [0, 0], params)
                cross = cross.sum(0) if _plain(cross) else _reductions.sum(cross, 0)
                second = _sum_or_none(second, cross)
        return (first, second)

    return rule


def _sum_or_none(a: Any, b: Any) -> Any:
    return b if a is None else a if b is None else a + b


_multiply = bilinear(ar.multiply_p)


def _divide(order: int, primals: Sequence[Any], series: Sequence[Any], ans: Any, /) -> Any:
    """``q = a / b``: ``q_k = (a_k - sum_{j=1..k} b_j q_{k-j}) / b0``."""
    (_, b), (sa, sb) = primals, series
    if sb is None:
        return _broadcast(ar.divide_p, [sa, b], [0, None], ans, {})
    layout = _layout(ans, (sa, sb), divisor=b)
    b, bs = _value(b, layout), _rows(sb, layout)
    xs = None if sa is None else _rows(sa, layout)
    q = _start(order, ans, layout)
    for k in range(1, order + 1):
        acc = _convolve(bs, q, k)
        _store(q, k, (-acc if xs is None else xs[k - 1] - acc) / b)
    return _result(q, layout, ans)


def _small_integer(y: Any) -> int | None:
    """``y`` as an int if it is a scalar integer in [0, 16] (powers by products)."""
    if type(y) is int:  # (``x**2``: the commonest exponent, tested without NumPy)
        return y if 0 <= y <= 16 else None
    if isinstance(y, bool) or not isinstance(y, (int, float, np.ndarray, np.generic)):
        return None
    if np.ndim(y) != 0 or not np.isreal(y):
        return None
    v = float(np.real(y))
    return int(v) if v.is_integer() and 0 <= v <= 16 else None


def _integer_power(order: int, x: Any, sx: Any, n: int) -> Any:
    """The series of ``x**n`` (``n >= 1``) by square-and-multiply from the leading bit,
    through ``multiply``'s Cauchy product: exact (``0**n`` has exact zero terms). A
    product's series needs its factors' values, not its own: the last product's value is
    not computed (``x`` stands in for its shape and dtype)."""
    steps = []  # per bit after the leading one: square, then times x if the bit is set
    for bit in bin(n)[3:]:
        steps.append(True)
        if bit == "1":
            steps.append(False)
    value, terms = x, sx
    for i, square in enumerate(steps, 1):
        other, other_terms = (value, terms) if square else (x, sx)
        product = x if i == len(steps) else ar.multiply(value, other)
        terms = _multiply(order, [value, other], [terms, other_terms], product)
        value = product
    return terms


def _power(order: int, primals: Sequence[Any], series: Sequence[Any], ans: Any, /) -> Any:
    (x, y), (sx, sy) = primals, series
    if sy is not None:  # a traced exponent: x**y = exp(y log x)
        return by_composition(
            lambda x, y: _elementwise.exp(y * _elementwise.log(x)), order, primals, series
        )
    n = _small_integer(y)
    if n is not None:
        return None if n == 0 else _integer_power(order, x, sx, n)
    return _power_series(order, x, sx, y, ans)


def _power_series(order: int, x: Any, sx: Any, a: Any, ans: Any) -> Any:
    """``x**a`` for a constant ``a``: ``k x0 y_k = sum_{j=1..k} ((a+1) j - k) x_j y_{k-j}``."""
    layout = _layout(ans, (sx,), (a,), divisor=x)
    jx = _times_orders(sx, order, layout)  # j x_j
    xs, x, a = _rows(sx, layout), _value(x, layout), _value(a, layout)
    ys = _start(order, ans, layout)
    for k in range(1, order + 1):
        acc = (a + 1) * _convolve(jx, ys, k) - k * _convolve(xs, ys, k)
        _store(ys, k, acc / (k * x))
    return _result(ys, layout, ans)


def _sqrt(order: int, primals: Sequence[Any], series: Sequence[Any], ans: Any, /) -> Any:
    return _power_series(order, primals[0], series[0], 0.5, ans)


def _exp(order: int, primals: Sequence[Any], series: Sequence[Any], ans: Any, /) -> Any:
    """``y' = y x'``: ``k y_k = sum_{j=1..k} j x_j y_{k-j}``."""
    s = series[0]
    layout = _layout(ans, (s,))
    jx = _times_orders(s, order, layout)
    ys = _start(order, ans, layout)
    for k in range(1, order + 1):
        _store(ys, k, _convolve(jx, ys, k) / k)
    return _result(ys, layout, ans)


def _tanh(order: int, primals: Sequence[Any], series: Sequence[Any], ans: Any, /) -> Any:
    """``y' = (1 - y**2) x'``: ``k y_k = sum_{j=1..k} j x_j z_{k-j}`` with ``z = 1 - y**2``,
    ``z_k = -sum_{j=0..k} y_j y_{k-j}`` (the rule derived from the JVP recomputes ``y``'s
    series once per order: its cost grew by an order per order)."""
    s = series[0]
    layout = _layout(ans, (s,))
    jx = _times_orders(s, order, layout)
    ys = _start(order, ans, layout)
    zs = _start(order, 1 - ans * ans, layout)
    y0 = _value(ans, layout)
    for k in range(1, order + 1):
        _store(ys, k, _convolve(jx, zs, k) / k)
        # sum_{j=1..k} y_j y_{k-j} counts y_k y_0 once; the sum over j = 0..k twice
        _store(zs, k, -(_convolve(ys[1:], ys, k) + y0 * ys[k]))
    return _result(ys, layout, ans)


def _log(order: int, primals: Sequence[Any], series: Sequence[Any], ans: Any, /) -> Any:
    """``x y' = x'``: ``k x0 y_k = k x_k - sum_{j=1..k-1} j y_j x_{k-j}``."""
    x, s = primals[0], series[0]
    layout = _layout(ans, (s,), divisor=x)
    xs, x = _rows(s, layout), _value(x, layout)
    ys = _start(order, ans, layout)
    jys = _start(order, np.zeros_like(ans), layout)  # j y_j (0 for j = 0)
    for k in range(1, order + 1):
        y = (k * xs[k - 1] - _convolve(xs, jys, k)) / (k * x)
        _store(ys, k, y)
        _store(jys, k, k * y)
    return _result(ys, layout, ans)


def _sin_cos(order: int, s: Any, sin0: Any, cos0: Any) -> tuple[Any, Any, str]:
    """``sin' = cos x'``, ``cos' = -sin x'``: ``k s_k = sum_{j=1..k} j x_j c_{k-j}`` and
    ``k c_k = -sum_{j=1..k} j x_j s_{k-j}``, both series as ``_start`` holds them, and
    their layout."""
    layout = _layout(sin0, (s,), (cos0,))
    jx = _times_orders(s, order, layout)
    sins, coss = _start(order, sin0, layout), _start(order, cos0, layout)
    for k in range(1, order + 1):
        _store(sins, k, _convolve(jx, coss, k) / k)
        _store(coss, k, _convolve(jx, sins, k) / -k)
    return sins, coss, layout


def _sin(order: int, primals: Sequence[Any], series: Sequence[Any], ans: Any, /) -> Any:
    sins, _, layout = _sin_cos(order, series[0], ans, _elementwise.cos(primals[0]))
    return _result(sins, layout, ans)


def _cos(order: int, primals: Sequence[Any], series: Sequence[Any], ans: Any, /) -> Any:
    _, coss, layout = _sin_cos(order, series[0], _elementwise.sin(primals[0]), ans)
    return _result(coss, layout, ans)


def _static_after_first(i: int) -> bool:
    return i > 0


LINEAR: dict[Primitive[Any], Callable[[int], bool]] = {
    ar.add_p: lambda i: False,
    ar.subtract_p: lambda i: False,
    ar.negative_p: lambda i: False,
    _elementwise.conjugate_p: lambda i: False,
    _elementwise.real_p: lambda i: False,
    _elementwise.imag_p: lambda i: False,
    sh.reshape_p: lambda i: False,
    sh.transpose_p: lambda i: False,
    sh.broadcast_to_p: lambda i: False,
    sh.concatenate_p: lambda i: False,
    sh.stack_p: lambda i: False,
    sh.astype_p: lambda i: False,
    sh.where_p: lambda i: i == 0,  # the condition
    _indexing.getitem_p: lambda i: False,
    _indexing.untake_p: lambda i: False,
    _indexing.gather_p: _static_after_first,  # index arrays
    _indexing.scatter_add_p: _static_after_first,
    _indexing.index_set_p: lambda i: False,
    _construct.split_p: lambda i: False,
    _reductions.sum_p: lambda i: False,
    _scans.cumsum_p: lambda i: False,
    _fft.fftn_p: lambda i: False,
    _fft.rfftn_p: lambda i: False,
    _fft.irfftn_p: lambda i: False,
    _fft.fftshift_p: lambda i: False,
}

ODE: tuple[Primitive[Any], ...] = (
    _elementwise.abs_p,
    _elementwise.nan_to_num_p,
    ar.maximum_p,
    ar.minimum_p,
    ar.fmax_p,
    ar.fmin_p,
    _reductions.prod_p,
    _reductions.max_p,
    _reductions.min_p,
    _reductions.median_p,
    _scans.cumprod_p,
    _linalg.inv_p,
    _linalg.cofactor_p,
    _linalg.det_p,
    _linalg.slogdet_p,
    _linalg.solve_p,
    _linalg.pinv_p,
    _linalg.cholesky_p,
    _linalg.qr_p,
    _linalg.eigh_p,
    _linalg.eigvalsh_p,
    _linalg.eig_p,
    _linalg.svd_p,
    _linalg.svdvals_p,
)

_ELEMENTWISE_LINEAR = frozenset(
    (
        ar.add_p,
        ar.subtract_p,
        ar.negative_p,
        _elementwise.conjugate_p,
        _elementwise.real_p,
        _elementwise.imag_p,
        sh.where_p,
    )
)

for _p, _static in LINEAR.items():
    deftaylor(_p, linear(_p, _static, _p in _ELEMENTWISE_LINEAR))
    defcollapsed(_p, collapsed_linear(linear(_p, _static, _p in _ELEMENTWISE_LINEAR)))
defcollapsed(ar.add_p, add_collapsed(COLLAPSED[ar.add_p], lambda i: 1))
defcollapsed(ar.subtract_p, add_collapsed(COLLAPSED[ar.subtract_p], lambda i: 1 - 2 * i))
deftaylor(ar.multiply_p, _multiply)
for _p in (_products.matmul_p, _convolution.convolve_p):
    deftaylor(_p, bilinear(_p))
for _p in (ar.multiply_p, _products.matmul_p, _convolution.convolve_p):
    defcollapsed(_p, collapsed_bilinear(_p))
deftaylor(ar.divide_p, _divide)
deftaylor(ar.power_p, _power)
for _p in (ar.divide_p, ar.power_p):
    defcollapsed(_p, collapsed_elementwise(_p))
# recurrences cheaper than the kit's derived rule (which these primitives also have)
deftaylor(_elementwise.exp_p, _exp)
deftaylor(_elementwise.log_p, _log)
deftaylor(_elementwise.tanh_p, _tanh)
deftaylor(_elementwise.sin_p, _sin)
deftaylor(_elementwise.cos_p, _cos)
deftaylor(_elementwise.sqrt_p, _sqrt)
for _p in ODE:
    deftaylor(_p, ode_rule(_p))
