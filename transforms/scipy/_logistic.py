"""The logistic family and the softmax family, differentiable.

``expit``, ``logit`` and ``log_expit`` are SciPy's ufuncs with derivatives that stay accurate
in both tails: ``expit' = expit(x) expit(-x)`` (not ``ans (1 - ans)``, which is 0 once
``expit(x)`` rounds to 1), ``log_expit' = expit(-x)``. ``softplus`` is SciPy's formula,
``logaddexp(0, x)``.

``logsumexp``, ``softmax`` and ``log_softmax`` are composites of ``transforms.numpy``
functions that compute what SciPy computes, shifted by the maximum ``m`` of their input
along ``axis``. The shift is a constant (``stop_gradient``): the result does not depend on
it, so its derivatives are exactly the unshifted formula's at every order, whatever ``max``
does at ties, and an entry at ``-inf`` has derivative exactly 0 (``exp(-inf - m) == 0``).
In ``logsumexp`` with scale factors ``b``, the maximum is taken over the entries with
``b != 0`` (SciPy's rule: a dominant entry with ``b == 0`` must not underflow the others),
and such an entry still has its derivative ``exp(a - logsumexp(a, b=b))`` in ``b``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, overload

import numpy as np
import scipy.special as sp

import transforms.numpy as tnp
from transforms.compose import stop_gradient
from transforms.extend import dtype_of, normalize_axes, shape_of, unary
from transforms.typing import Array, ArrayLike

from ._doc import special_doc

__all__ = [
    "expit",
    "log_expit",
    "log_softmax",
    "logit",
    "logsumexp",
    "softmax",
    "softplus",
]

Axis = int | Sequence[int] | None

expit: Callable[[ArrayLike], Array]

expit_p, expit = unary(
    "expit",
    sp.expit,
    lambda ans, x: ans * expit(-x),
    doc=special_doc("expit", "``expit(x) * expit(-x)``, accurate in both tails"),
)
logit_p, logit = unary(
    "logit",
    sp.logit,
    lambda ans, x: 1 / (x * (1 - x)),
    doc=special_doc("logit", "``1 / (x (1 - x))``"),
)
log_expit_p, log_expit = unary(
    "log_expit",
    sp.log_expit,
    lambda ans, x: expit(-x),
    doc=special_doc("log_expit", "``expit(-x)``"),
)


def softplus(x: ArrayLike) -> Array:
    """Differentiable ``scipy.special.softplus``, ``log(1 + exp(x))``: SciPy's formula,
    ``logaddexp(0, x)`` (a composite), with derivative ``expit(x)``."""
    return tnp.logaddexp(0, x)


# ---- logsumexp ----------------------------------------------------------------------------------
@overload
def logsumexp(
    a: ArrayLike,
    axis: Axis = None,
    b: ArrayLike | None = None,
    keepdims: bool = False,
    return_sign: Literal[False] = False,
) -> Array: ...
@overload
def logsumexp(
    a: ArrayLike,
    axis: Axis = None,
    b: ArrayLike | None = None,
    keepdims: bool = False,
    *,
    return_sign: Literal[True],
) -> tuple[Array, Array]: ...
@overload
def logsumexp(
    a: ArrayLike,
    axis: Axis = None,
    b: ArrayLike | None = None,
    keepdims: bool = False,
    return_sign: bool = False,
) -> Array | tuple[Array, Array]: ...
def logsumexp(
    a: ArrayLike,
    axis: Axis = None,
    b: ArrayLike | None = None,
    keepdims: bool = False,
    return_sign: bool = False,
) -> Array | tuple[Array, Array]:
    """Differentiable ``scipy.special.logsumexp``: ``log(sum(b * exp(a)))`` over ``axis``,
    numerically stable, with SciPy's arguments and results.

    A composite: ``log(sum(b * exp(a - m))) + m`` with ``m`` the (constant) maximum over the
    entries with ``b != 0``. Differentiable in ``a`` and in ``b``: the derivative in ``a`` is
    ``b * exp(a - logsumexp(...))`` (``softmax`` when ``b`` is absent), exactly 0 at ``-inf``
    entries; in ``b`` it is ``exp(a - logsumexp(...))``, also where ``b == 0``. A negative sum
    gives NaN, or, with ``return_sign=True``, ``(log|s|, sign(s))`` (the sign has derivative
    0). Real inputs.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> from transforms.scipy.special import logsumexp
        >>> a = np.array([0.0, np.log(3.0), -np.inf])
        >>> float(logsumexp(a))  # log(1 + 3 + 0)
        1.3862943611198906
        >>> T.grad(logsumexp)(a)  # softmax: the -inf entry gets exactly 0
        array([0.25, 0.75, 0.  ])
    """
    a = tnp.asarray(a)
    if b is not None:
        b = tnp.asarray(b)
        shape = np.broadcast_shapes(shape_of(a), shape_of(b))
        a, b = tnp.broadcast_to(a, shape), tnp.broadcast_to(b, shape)
    if not shape_of(a):  # SciPy takes a 0-d input as 1-d (keepdims then keeps one axis)
        a = tnp.reshape(a, (1,))
        b = None if b is None else tnp.reshape(b, (1,))
    axes = normalize_axes(axis, len(shape_of(a)))
    if 0 in shape_of(a):
        return _empty_logsumexp(a, axes, keepdims, return_sign)
    if b is None:
        m = tnp.max(stop_gradient(a), axes, keepdims=True)
    else:
        m = tnp.max(tnp.where(b != 0, stop_gradient(a), -np.inf), axes, keepdims=True)
    m = tnp.where(tnp.isfinite(m), m, 0.0)
    z = a - m
    if b is not None:
        # an entry with b == 0 above the others' maximum: 0 * exp(z) must stay 0, not NaN
        limit = float(np.log(np.finfo(dtype_of(z)).max))
        e = b * tnp.exp(tnp.where(b == 0, tnp.minimum(z, limit), z))
    else:
        e = tnp.exp(z)
    s = tnp.sum(e, axes, keepdims=keepdims)
    if not keepdims:
        m = tnp.reshape(m, shape_of(s))
    with np.errstate(divide="ignore"):  # log(0) = -inf: every entry is -inf (or b == 0)
        if b is None and not return_sign:  # s >= 0
            return tnp.add(tnp.log(s), m)  # tnp.add: an array, not NumPy's 0-d scalar
        out = tnp.add(tnp.log(tnp.abs(s)), m)
    sign = tnp.sign(s)
    if return_sign:
        return out, sign
    return tnp.where(sign < 0, np.nan, out)


def _empty_logsumexp(
    a: Any, axes: tuple[int, ...], keepdims: bool, return_sign: bool
) -> Array | tuple[Array, Array]:
    """SciPy's value for no elements: ``-inf`` (with sign ``sign(-inf) == -1``)."""
    dtype = np.result_type(dtype_of(a), 1.0)
    shape = np.sum(np.empty(shape_of(a)), axis=axes, keepdims=keepdims).shape
    out = np.full(shape, -np.inf, dtype)
    return (out, np.sign(out)) if return_sign else out


# ---- softmax, log_softmax -----------------------------------------------------------------------
def softmax(x: ArrayLike, axis: Axis = None) -> Array:
    """Differentiable ``scipy.special.softmax``: ``exp(x) / sum(exp(x))`` over ``axis``.

    A composite of what SciPy computes, ``exp(x - m) / sum(exp(x - m))`` with ``m`` the
    maximum (a constant: the result does not depend on it).

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> from transforms.scipy.special import softmax
        >>> x = np.array([0.0, np.log(3.0)])
        >>> softmax(x)
        array([0.25, 0.75])
        >>> T.jacfwd(softmax)(x)  # diag(s) - s s^T
        array([[ 0.1875, -0.1875],
               [-0.1875,  0.1875]])
    """
    x = tnp.asarray(x)
    e = tnp.exp(x - tnp.max(stop_gradient(x), axis, keepdims=True))
    return tnp.divide(e, tnp.sum(e, axis, keepdims=True))


def log_softmax(x: ArrayLike, axis: Axis = None) -> Array:
    """Differentiable ``scipy.special.log_softmax``: ``x - logsumexp(x)`` over ``axis``.

    A composite of what SciPy computes, ``(x - m) - log(sum(exp(x - m)))`` with ``m`` the
    maximum (a constant, 0 where it is infinite), so that it is accurate where
    ``log(softmax(x))`` would underflow.
    """
    x = tnp.asarray(x)
    m = tnp.max(stop_gradient(x), axis, keepdims=True)
    shifted = x - tnp.where(tnp.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):  # log(0) = -inf: every entry is -inf
        return tnp.subtract(shifted, tnp.log(tnp.sum(tnp.exp(shifted), axis, keepdims=True)))
