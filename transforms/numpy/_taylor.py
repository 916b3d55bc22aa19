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
from functools import cache
from typing import Any

import numpy as np

from transforms.batching import batch_rule
from transforms.core import Primitive, Tracer
from transforms.taylor import array_ops, by_composition, deftaylor, ode_rule

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
)


def _dtype(x: Any) -> Any:
    return x.dtype if hasattr(x, "dtype") else np.result_type(x)


def _plain(*xs: Any) -> bool:
    """No tracer among ``xs``: the rule may run NumPy itself (the eager hot path)."""
    return not any(isinstance(x, Tracer) for x in xs)


def _with_primal(x: Any, terms: Any) -> Any:
    """The stack ``x0, x1, ..., xK`` of a primal and its terms."""
    if _plain(x, terms):
        return np.concatenate([np.asarray(x)[None], terms])
    return sh.concatenate([sh.reshape(x, (1, *shape_of(x))), terms], 0)


def _stack(terms: list[Any]) -> Any:
    return np.stack(terms) if _plain(*terms) else sh.stack(terms)


def _convolve(w: Any, ys: Any, k: int) -> Any:
    """``sum_{j=1..k} w[j-1] * ys[k-j]``: ``ys`` a list, or an array holding rows 0..k-1."""
    if isinstance(ys, np.ndarray) and isinstance(w, np.ndarray):
        return np.einsum("j...,j...->...", w[:k], ys[k - 1 :: -1])
    acc = w[0] * ys[k - 1]
    for j in range(2, k + 1):
        acc = acc + w[j - 1] * ys[k - j]
    return acc


def _terms_array(order: int, first: Any, plain: bool) -> Any:
    """Room for ``y0 .. yK`` (an array on the plain path, a list otherwise), ``y0`` set."""
    if not plain:
        return [first]
    first = np.asarray(first)
    ys = np.empty((order + 1, *first.shape), dtype=first.dtype)
    ys[0] = first
    return ys


def _store(ys: Any, k: int, value: Any) -> None:
    if isinstance(ys, list):
        ys.append(value)
    else:
        ys[k] = value


def _result(ys: Any) -> Any:
    return ys[1:] if isinstance(ys, np.ndarray) else sh.stack(ys[1:])


@cache
def _orders(order: int, ndim: int, dtype: Any) -> np.ndarray[Any, Any]:
    """``1, 2, ..., order`` along axis 0 of a stack."""
    w = np.arange(1, order + 1, dtype=dtype).reshape((order,) + (1,) * ndim)
    w.setflags(write=False)
    return w


def _batched(primitive: Primitive, values: list[Any], dims: list[int | None], params: Any) -> Any:
    rule = batch_rule(primitive)
    assert rule is not None
    out, dim = rule(values, dims, **params)
    if primitive.multiple_results:
        return tuple(to_front(o, d) for o, d in zip(out, dim, strict=True))
    return to_front(out, dim)


def linear(primitive: Primitive, static: Callable[[int], bool] = lambda i: False) -> Any:
    """The rule of a primitive linear in its operands (those for which ``static(i)`` is
    false; static ones, conditions and index arrays, carry no series)."""

    def rule(
        order: int, primals: Sequence[Any], series: Sequence[Any], ans: Any, /, **params: Any
    ) -> Any:
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
        return _batched(primitive, values, dims, params)

    return rule


@cache
def _pairs(
    order: int, dtype: Any
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Index pairs ``(j, k - j)`` for ``k = 1..order``, and the matrix summing them by ``k``."""
    pairs = [(k, j, k - j) for k in range(1, order + 1) for j in range(k + 1)]
    left = np.array([j for _, j, _ in pairs])
    right = np.array([i for _, _, i in pairs])
    sums = np.zeros((order, len(pairs)), dtype=dtype)
    sums[[k - 1 for k, _, _ in pairs], np.arange(len(pairs))] = 1
    for a in (left, right, sums):
        a.setflags(write=False)
    return left, right, sums


def bilinear(primitive: Primitive) -> Any:
    """The rule of a primitive bilinear in its two operands: the Cauchy product."""

    def rule(
        order: int, primals: Sequence[Any], series: Sequence[Any], ans: Any, /, **params: Any
    ) -> Any:
        (a, b), (sa, sb) = primals, series
        if sb is None:
            return _batched(primitive, [sa, b], [0, None], params)
        if sa is None:
            return _batched(primitive, [a, sb], [None, 0], params)
        full_a, full_b = _with_primal(a, sa), _with_primal(b, sb)
        left, right, sums = _pairs(order, _dtype(ans))
        products = _batched(primitive, [full_a[left], full_b[right]], [0, 0], params)
        if _plain(products):
            return np.tensordot(sums, products, 1)
        return _products.tensordot(sums, products, 1)

    return rule


def _divide(order: int, primals: Sequence[Any], series: Sequence[Any], ans: Any, /) -> Any:
    (_, b), (sa, sb) = primals, series
    if sb is None:
        return _batched(ar.divide_p, [sa, b], [0, None], {})
    q = _terms_array(order, ans, _plain(b, sa, sb, ans) and shape_of(b) == shape_of(ans))
    for k in range(1, order + 1):
        acc = _convolve(sb, q, k)
        _store(q, k, (-acc if sa is None else sa[k - 1] - acc) / b)
    return _result(q)


def _small_integer(y: Any) -> int | None:
    """``y`` as an int if it is a scalar integer in [0, 16] (powers by products)."""
    if isinstance(y, bool) or not isinstance(y, (int, float, np.ndarray, np.generic)):
        return None
    if np.ndim(y) != 0 or not np.isreal(y):
        return None
    v = float(np.real(y))
    return int(v) if v.is_integer() and 0 <= v <= 16 else None


def _integer_power(x: Any, n: int) -> Any:
    result, base = None, x
    while n:
        if n & 1:
            result = base if result is None else result * base
        n >>= 1
        if n:
            base = base * base
    return result


def _power(order: int, primals: Sequence[Any], series: Sequence[Any], ans: Any, /) -> Any:
    (x, y), (sx, sy) = primals, series
    if sy is not None:  # a traced exponent: x**y = exp(y log x)
        return by_composition(
            lambda x, y: _elementwise.exp(y * _elementwise.log(x)), order, primals, series
        )
    n = _small_integer(y)
    if n is not None:
        if n == 0:
            return None
        return by_composition(lambda x: _integer_power(x, n), order, [x], [sx])
    return _power_series(order, x, sx, y, ans)


def _power_series(order: int, x: Any, sx: Any, a: Any, ans: Any) -> Any:
    """``x**a`` for a constant ``a``: ``k x0 y_k = sum_{j=1..k} ((a+1) j - k) x_j y_{k-j}``."""
    ys = _terms_array(order, ans, _plain(x, sx, a, ans) and shape_of(x) == shape_of(ans))
    jx = sx * _orders(order, len(shape_of(sx)) - 1, _dtype(sx))  # j x_j
    for k in range(1, order + 1):
        acc = (a + 1) * _convolve(jx, ys, k) - k * _convolve(sx, ys, k)
        _store(ys, k, acc / (k * x))
    return _result(ys)


def _sqrt(order: int, primals: Sequence[Any], series: Sequence[Any], ans: Any, /) -> Any:
    return _power_series(order, primals[0], series[0], 0.5, ans)


def _exp(order: int, primals: Sequence[Any], series: Sequence[Any], ans: Any, /) -> Any:
    """``y' = y x'``: ``k y_k = sum_{j=1..k} j x_j y_{k-j}``."""
    s = series[0]
    jx = s * _orders(order, len(shape_of(s)) - 1, _dtype(s))
    ys = _terms_array(order, ans, _plain(s, ans))
    for k in range(1, order + 1):
        _store(ys, k, _convolve(jx, ys, k) / k)
    return _result(ys)


def _log(order: int, primals: Sequence[Any], series: Sequence[Any], ans: Any, /) -> Any:
    """``x y' = x'``: ``k x0 y_k = k x_k - sum_{j=1..k-1} j y_j x_{k-j}``."""
    x, s = primals[0], series[0]
    plain = _plain(x, s, ans)
    ys = _terms_array(order, ans, plain)
    jys = _terms_array(order, np.zeros_like(ans), plain)  # j y_j (0 for j = 0)
    for k in range(1, order + 1):
        y = (k * s[k - 1] - _convolve(s, jys, k)) / (k * x)
        _store(ys, k, y)
        _store(jys, k, k * y)
    return _result(ys)


def _sin_cos(order: int, x: Any, s: Any, sin0: Any, cos0: Any) -> tuple[Any, Any]:
    """``sin' = cos x'``, ``cos' = -sin x'``: both series, each from the other's."""
    jx = s * _orders(order, len(shape_of(s)) - 1, _dtype(s))
    plain = _plain(x, s, sin0, cos0)
    ss, cs = _terms_array(order, sin0, plain), _terms_array(order, cos0, plain)
    for k in range(1, order + 1):
        sk = _convolve(jx, cs, k) / k
        ck = -_convolve(jx, ss, k) / k
        _store(ss, k, sk)
        _store(cs, k, ck)
    return _result(ss), _result(cs)


def _sin(order: int, primals: Sequence[Any], series: Sequence[Any], ans: Any, /) -> Any:
    return _sin_cos(order, primals[0], series[0], ans, _elementwise.cos(primals[0]))[0]


def _cos(order: int, primals: Sequence[Any], series: Sequence[Any], ans: Any, /) -> Any:
    return _sin_cos(order, primals[0], series[0], _elementwise.sin(primals[0]), ans)[1]


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

for _p, _static in LINEAR.items():
    deftaylor(_p, linear(_p, _static))
for _p in (ar.multiply_p, _products.matmul_p, _convolution.convolve_p):
    deftaylor(_p, bilinear(_p))
deftaylor(ar.divide_p, _divide)
deftaylor(ar.power_p, _power)
# recurrences cheaper than the kit's derived rule (which these primitives also have)
deftaylor(_elementwise.exp_p, _exp)
deftaylor(_elementwise.log_p, _log)
deftaylor(_elementwise.sin_p, _sin)
deftaylor(_elementwise.cos_p, _cos)
deftaylor(_elementwise.sqrt_p, _sqrt)
for _p in ODE:
    deftaylor(_p, ode_rule(_p))
