"""What every distribution of ``transforms.scipy.stats`` shares: standardizing by ``loc`` and
``scale``, SciPy's conventions outside the support and for invalid parameters, and
selections whose unselected side can never put a NaN into a derivative.

A value outside the support (``x < 0`` for ``expon``, a non-integer ``k`` for ``poisson``)
gets SciPy's constant (density 0, log-density ``-inf``, distribution function 0 or 1); an
invalid parameter (``scale <= 0``, ``df <= 0``, ``p`` outside ``[0, 1]``...) gets NaN, as
SciPy returns. The formula is evaluated on inputs replaced by a harmless value where it is
not used (``guard``), so that its derivative there is finite and ``where`` gives it exactly
0, never ``0 * inf``. When every element is inside (the common case, decided on the concrete
values, which carry no derivative), no selection is made at all.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

import transforms.numpy as tnp
from transforms.core import Tracer, concrete
from transforms.core.arrays import asarray, is_foreign
from transforms.extend import cast_to, dtype_of, shape_of
from transforms.typing import Array, ArrayLike

__all__ = [
    "LOG_2PI",
    "NAN",
    "all_true",
    "guard",
    "log_probability",
    "promote",
    "select",
    "standardize",
]

LOG_2PI = math.log(2 * math.pi)
NAN = float("nan")


def promote(*args: ArrayLike) -> list[Array]:
    """The arguments as arrays (or tracers) of one inexact dtype, as JAX's distributions
    promote them: Python numbers take the arrays' dtype (float32 data stays float32, also
    through ``gammaln`` of a parameter), integers become floats."""
    values = [a if isinstance(a, (Tracer, int, float)) else asarray(a) for a in args]
    dtypes = (a if isinstance(a, (int, float)) else dtype_of(a) for a in values)
    dtype = np.result_type(*dtypes, 1.0)
    return [
        cast_to(a, dtype) if isinstance(a, Tracer) or is_foreign(a) else np.asarray(a, dtype)
        for a in values
    ]


def all_true(cond: Any) -> bool:
    """Whether a (non-differentiable) condition holds everywhere, on its concrete value; for
    an array of another library, ``False`` without looking (its values would have to be
    computed): the caller's general path, a selection, is exact wherever the condition holds."""
    value = concrete(cond)
    if type(value) is not np.ndarray and is_foreign(value):
        return False
    return bool(np.all(value))


def guard(cond: Any, x: Any, harmless: float) -> Array:
    """``x`` where ``cond``, ``harmless`` elsewhere: the input of a formula whose value is
    used only where ``cond`` holds."""
    return x if all_true(cond) else tnp.where(cond, x, harmless)


def select(cond: Any, value: Any, fill: float) -> Array:
    """``value`` where ``cond``, the constant ``fill`` elsewhere (in their broadcast shape)."""
    if not all_true(cond):
        return tnp.where(cond, value, fill)
    shape = np.broadcast_shapes(shape_of(cond), shape_of(value))
    return tnp.asarray(value) if shape == shape_of(value) else tnp.broadcast_to(value, shape)


def log_probability(p: Any, complement: Callable[[], Any] | None = None) -> Array:
    """``log(p)`` of a probability: ``-inf`` where ``p == 0``, with derivative 0 there (not
    ``0 * inf``), NaN where ``p`` is NaN. Given the complement ``1 - p`` (computed only when
    some ``p > 1/2``), ``log1p(-complement)`` there: accurate as ``p`` nears 1, where
    ``log(p)`` keeps only the rounding of ``p``."""
    if complement is None or all_true(p <= 0.5):
        nonzero = p != 0
        return select(nonzero, tnp.log(guard(nonzero, p, 1.0)), -math.inf)
    high = p > 0.5
    upper = tnp.log1p(-guard(high, complement(), 0.0))
    if all_true(high):
        return upper
    return tnp.where(high, upper, log_probability(p))


def standardize(x: ArrayLike, loc: ArrayLike, scale: ArrayLike) -> tuple[Any, Any, Any]:
    """``(z, log(scale), valid)``: ``z = (x - loc) / scale``, with ``valid = scale > 0`` (where
    it fails, ``scale`` is replaced by 1 and the caller's result by NaN, through ``select``)."""
    valid = tnp.asarray(scale) > 0
    scale = guard(valid, scale, 1.0)
    return (tnp.asarray(x) - loc) / scale, tnp.log(scale), valid
