"""Taylor-mode rules of this package's primitives (the kit gives its own their rule).

Three kinds, cheapest first:

- *linear* primitives (shape and indexing operations, sums, scans, FFTs, ``add``): each
  Taylor coefficient is mapped by the primitive itself, all ``K`` of them in one call of the
  primitive's batching rule on the stacked coefficients;
- *bilinear* ones (``multiply``, ``matmul``; ``dot``, ``tensordot``, ``einsum``, ``outer``
  are built of these): the Cauchy product ``y_k = sum_j p(a_j, b_{k-j})``, every pair in one
  batched call;
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
from transforms.core import Primitive
from transforms.taylor import array_ops, compose, deftaylor, ode_rule

from . import _arithmetic as ar
from . import _construct, _elementwise, _fft, _indexing, _linalg, _products, _reductions, _scans
from . import _shape as sh
from ._batching import to_front
from ._define import shape_of

__all__ = ["LINEAR", "ODE"]

array_ops.update(
    concatenate=sh.concatenate,
    stack=sh.stack,
    broadcast_to=sh.broadcast_to,
    tensordot=_products.tensordot,
)


def _dtype(x: Any) -> Any:
    return x.dtype if hasattr(x, "dtype") else np.result_type(x)


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
        for i, (p, s) in enumerate(zip(primals, series, strict=True)):
            if s is not None:
                values.append(s)
                dims.append(0)
            elif static(i):
                values.append(p)
                dims.append(None)
            else:  # a constant operand of a linear map contributes nothing to the terms
                values.append(np.zeros(shape_of(p), dtype=_dtype(p)))
                dims.append(None)
        return _batched(primitive, values, dims, params)

    return rule


@cache
def _pairs(order: int, dtype: Any) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
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
        full_a = sh.concatenate([sh.reshape(a, (1, *shape_of(a))), sa], 0)
        full_b = sh.concatenate([sh.reshape(b, (1, *shape_of(b))), sb], 0)
        left, right, sums = _pairs(order, _dtype(ans))
        products = _batched(primitive, [full_a[left], full_b[right]], [0, 0], params)
        return _products.tensordot(sums, products, 1)

    return rule


def _divide(order: int, primals: Sequence[Any], series: Sequence[Any], ans: Any, /) -> Any:
    (_, b), (sa, sb) = primals, series
    if sb is None:
        return _batched(ar.divide_p, [sa, b], [0, None], {})
    q = [ans]
    for k in range(1, order + 1):
        acc = sb[0] * q[k - 1]
        for j in range(2, k + 1):
            acc = acc + sb[j - 1] * q[k - j]
        q.append((-acc if sa is None else sa[k - 1] - acc) / b)
    return sh.stack(q[1:])


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
        return compose(
            lambda x, y: _elementwise.exp(y * _elementwise.log(x)), order, primals, series
        )
    n = _small_integer(y)
    if n is not None:
        if n == 0:
            return None
        return compose(lambda x: _integer_power(x, n), order, [x], [sx])
    terms = [ans]  # k x0 y_k = sum_{j=1..k} ((a+1) j - k) x_j y_{k-j}
    for k in range(1, order + 1):
        acc = sx[0] * terms[k - 1] * ((y + 1) - k)
        for j in range(2, k + 1):
            acc = acc + sx[j - 1] * terms[k - j] * ((y + 1) * j - k)
        terms.append(acc / (k * x))
    return sh.stack(terms[1:])


def _static_after_first(i: int) -> bool:
    return i > 0


LINEAR: dict[Primitive, Callable[[int], bool]] = {
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

ODE: tuple[Primitive, ...] = (
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
for _p in (ar.multiply_p, _products.matmul_p):
    deftaylor(_p, bilinear(_p))
deftaylor(ar.divide_p, _divide)
deftaylor(ar.power_p, _power)
for _p in ODE:
    deftaylor(_p, ode_rule(_p))
