"""``jax.nn``'s functions, differentiable in every mode and nesting, with JAX's semantics.

Most are composites of ``transforms.numpy`` and ``transforms.scipy.special`` functions
written as ``jax.nn`` writes them, so their derivatives are JAX's, kinks included:
``leaky_relu``'s ``where(x >= 0, ...)`` has derivative 1 at 0, ``hard_tanh``'s nested
``where`` has derivative 1 at -1 and 1, ``celu``'s ``maximum``/``minimum`` share ties (as
JAX's ``max``), ``soft_sign`` uses ``|x|``'s derivative 0 at 0. Two need a rule of their own,
because JAX gives them one (``custom_jvp``) that differs from their formula at the kinks:

- ``relu``: derivative 0 at 0 (``maximum(x, 0)`` would share the tie: 1/2);
- ``relu6``: derivative 0 at 0 and at 6.

Both are kit primitives with the derivative ``sign(ans)`` (``sign(ans) * sign(6 - ans)``):
1 inside, 0 at and beyond the kinks, piecewise constant, so every higher derivative is 0.

``softmax``, ``log_softmax`` and ``logsumexp`` are ``transforms.numpy``'s one implementation
(shifted by a constant maximum), with ``jax.nn``'s default ``axis=-1`` and its ``where``.
``sigmoid`` is ``transforms.scipy.special.expit``, ``log_sigmoid`` its ``log_expit``,
``softplus`` its ``softplus`` (``logaddexp(x, 0)``) and exact ``gelu`` uses its ``erfc``:
``transforms.nn`` needs the ``scipy`` extra.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import transforms.numpy as tnp
from transforms.extend import unary
from transforms.numpy._reductions import log_softmax as _log_softmax
from transforms.numpy._reductions import logsumexp as logsumexp
from transforms.numpy._reductions import softmax as _softmax
from transforms.scipy.special import erfc, expit, log_expit
from transforms.scipy.special import softplus as softplus
from transforms.typing import Array, ArrayLike

__all__ = [
    "celu",
    "elu",
    "gelu",
    "glu",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "leaky_relu",
    "log_sigmoid",
    "log_softmax",
    "logsumexp",
    "one_hot",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "silu",
    "soft_sign",
    "softmax",
    "softplus",
    "standardize",
    "swish",
]

Axis = int | Sequence[int] | None

# ---- rectifiers with JAX's derivative at the kinks -----------------------------------------
relu_p, relu = unary(
    "relu",
    lambda x: np.maximum(x, 0),
    lambda ans, x: tnp.sign(ans),
    doc="``jax.nn.relu``: ``max(x, 0)``, with derivative 0 at 0 (JAX's choice, not 1/2).",
)
relu6_p, relu6 = unary(
    "relu6",
    lambda x: np.minimum(np.maximum(x, 0), 6),
    lambda ans, x: tnp.sign(ans) * tnp.sign(6 - ans),
    doc="``jax.nn.relu6``: ``min(max(x, 0), 6)``, with derivative 0 at 0 and at 6 (JAX's).",
)


def sigmoid(x: ArrayLike) -> Array:
    """``jax.nn.sigmoid``: ``1 / (1 + exp(-x))`` (``transforms.scipy.special.expit``: its
    derivative ``expit(x) expit(-x)`` stays accurate in both tails)."""
    return expit(x)


def log_sigmoid(x: ArrayLike) -> Array:
    """``jax.nn.log_sigmoid``: ``-softplus(-x)`` (``transforms.scipy.special.log_expit``)."""
    return log_expit(x)


def silu(x: ArrayLike) -> Array:
    """``jax.nn.silu`` (alias ``swish``): ``x * sigmoid(x)``."""
    x = tnp.asarray(x)
    return x * expit(x)


swish = silu


def elu(x: ArrayLike, alpha: ArrayLike = 1.0) -> Array:
    """``jax.nn.elu``: ``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` otherwise (derivative
    ``alpha`` at 0, from the lower branch, as JAX's ``where``). ``expm1`` sees only the
    non-positive inputs, so a large ``x`` neither overflows nor poisons the derivative."""
    x = tnp.asarray(x)
    positive = x > 0
    return tnp.where(positive, x, alpha * tnp.expm1(tnp.where(positive, 0.0, x)))


def selu(x: ArrayLike) -> Array:
    """``jax.nn.selu``: ``scale * elu(x, alpha)`` with the self-normalizing constants."""
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def celu(x: ArrayLike, alpha: ArrayLike = 1.0) -> Array:
    """``jax.nn.celu``: ``max(x, 0) + alpha * expm1(min(x, 0) / alpha)`` (derivative 1 at 0:
    the tie is shared by ``maximum`` and ``minimum``, as in JAX)."""
    return tnp.maximum(x, 0.0) + alpha * tnp.expm1(tnp.minimum(x, 0.0) / alpha)


def leaky_relu(x: ArrayLike, negative_slope: ArrayLike = 1e-2) -> Array:
    """``jax.nn.leaky_relu``: ``x`` for ``x >= 0``, ``negative_slope * x`` otherwise
    (derivative 1 at 0)."""
    x = tnp.asarray(x)
    return tnp.where(x >= 0, x, negative_slope * x)


def hard_tanh(x: ArrayLike) -> Array:
    """``jax.nn.hard_tanh``: ``x`` clipped to ``[-1, 1]`` (derivative 1 on the closed
    interval, 0 outside, as JAX's nested ``where``)."""
    x = tnp.asarray(x)
    return tnp.where(x > 1, 1.0, tnp.where(x < -1, -1.0, x))


def hard_sigmoid(x: ArrayLike) -> Array:
    """``jax.nn.hard_sigmoid``: ``relu6(x + 3) / 6``."""
    return relu6(tnp.asarray(x) + 3.0) / 6.0


def hard_silu(x: ArrayLike) -> Array:
    """``jax.nn.hard_silu`` (alias ``hard_swish``): ``x * hard_sigmoid(x)``."""
    x = tnp.asarray(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def soft_sign(x: ArrayLike) -> Array:
    """``jax.nn.soft_sign``: ``x / (|x| + 1)``. Its derivative is JAX's everywhere; its second
    derivative at 0 is 0, not JAX's -2 (``|x|`` has derivative 0 at 0 here, 1 in JAX)."""
    x = tnp.asarray(x)
    return tnp.divide(x, tnp.abs(x) + 1)


_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_SQRT_HALF = math.sqrt(0.5)


def gelu(x: ArrayLike, approximate: bool = True) -> Array:
    """``jax.nn.gelu``: ``x * Phi(x)``; with ``approximate=True`` (JAX's default) the tanh
    form ``x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``, otherwise the exact
    ``x/2 erfc(-x / sqrt 2)``."""
    x = tnp.asarray(x)
    if approximate:
        return x * (0.5 * (1.0 + tnp.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x**3))))
    return 0.5 * x * erfc(-x * _SQRT_HALF)


def glu(x: ArrayLike, axis: int = -1) -> Array:
    """``jax.nn.glu``: the two halves ``a, b`` of ``x`` along ``axis``, ``a * sigmoid(b)``."""
    x = tnp.asarray(x)
    size = x.shape[axis]
    if size % 2:
        raise ValueError(
            f"transforms.nn.glu: axis {axis} of x has size {size}, which is odd; glu splits "
            "it in two equal halves"
        )
    a, b = tnp.split(x, 2, axis)
    return a * expit(b)


# ---- softmax family: transforms.numpy's, with jax.nn's axis=-1 and where ------------------
def softmax(x: ArrayLike, axis: Axis = -1, where: ArrayLike | None = None) -> Array:
    """``jax.nn.softmax``: ``exp(x) / sum(exp(x))`` over ``axis`` (default the last); the
    entries where ``where`` is False are left out of the sum and give 0."""
    if where is None:
        return _softmax(x, axis)
    return tnp.where(where, _softmax(tnp.where(where, x, -np.inf), axis), 0.0)


def log_softmax(x: ArrayLike, axis: Axis = -1, where: ArrayLike | None = None) -> Array:
    """``jax.nn.log_softmax``: ``x - logsumexp(x)`` over ``axis`` (default the last); the
    entries where ``where`` is False are left out of the sum and give ``-inf``."""
    if where is None:
        return _log_softmax(x, axis)
    return tnp.where(where, _log_softmax(tnp.where(where, x, -np.inf), axis), -np.inf)


def standardize(
    x: ArrayLike,
    axis: Axis = -1,
    mean: ArrayLike | None = None,
    variance: ArrayLike | None = None,
    epsilon: ArrayLike = 1e-5,
    where: ArrayLike | None = None,
    *,
    algorithm: str = "fast",
) -> Array:
    """``jax.nn.standardize``: ``(x - mean) / sqrt(variance + epsilon)`` over ``axis``.

    ``mean`` and ``variance`` default to ``x``'s along ``axis`` (over the entries where
    ``where`` is True, if given), the variance by JAX's ``algorithm``: ``"fast"`` is
    ``mean(x**2) - mean(x)**2`` clipped at 0, ``"stable"`` the two-pass
    ``mean((x - mean)**2)``.
    """
    x = tnp.asarray(x)
    if mean is None:
        mean = _mean(x, axis, where)
    if variance is None:
        if algorithm == "stable":
            variance = _mean(tnp.square(x - mean), axis, where)
        elif algorithm == "fast":
            variance = _mean(tnp.square(x), axis, where) - tnp.square(mean)
            variance = tnp.maximum(variance, 0.0)  # the fast formula can round below 0
        else:
            raise ValueError(
                f"transforms.nn.standardize: unknown algorithm {algorithm!r}; expected 'fast' "
                "or 'stable'"
            )
    return (x - mean) / tnp.sqrt(tnp.add(variance, epsilon))


def _mean(v: Array, axis: Axis, where: ArrayLike | None) -> Array:
    """The mean along ``axis`` (kept), over the entries where ``where`` is True."""
    if where is None:
        return tnp.mean(v, axis, keepdims=True)
    total = tnp.sum(tnp.where(where, v, 0.0), axis, keepdims=True)
    count = tnp.sum(tnp.broadcast_to(where, v.shape), axis, keepdims=True)
    return total / tnp.astype(count, v.dtype)


def one_hot(x: Any, num_classes: int, *, dtype: Any = None, axis: int = -1) -> Array:
    """``jax.nn.one_hot``: 1 where ``x`` equals the class index along a new ``axis`` of size
    ``num_classes``, 0 elsewhere (indices outside ``[0, num_classes)`` give zeros). Not
    differentiable (integer indices); ``dtype`` defaults to float64 (JAX's default float
    without x64 is float32). Works under ``vmap``."""
    x = tnp.asarray(x)
    out_axis = axis % (x.ndim + 1)
    classes = np.arange(num_classes).reshape((num_classes,) + (1,) * (x.ndim - out_axis))
    hot = tnp.expand_dims(x, out_axis) == classes
    return tnp.asarray(hot).astype(np.float64 if dtype is None else dtype)
