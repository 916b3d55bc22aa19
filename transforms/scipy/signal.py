"""``transforms.scipy.signal``: ``scipy.signal``'s ``convolve`` and ``correlate`` (n-d, modes
``'full'``, ``'valid'``, ``'same'``, SciPy's ``method``), differentiable in every mode and
nesting in both inputs.

Both are slices of the library's one convolution primitive (``transforms.numpy.
_convolution``: the full convolution, here SciPy's value by its ``method``, with its JVP,
VJP, batching, Taylor and sparsity rules), which ``transforms.numpy.convolve``/``correlate``
(NumPy's 1-d functions, with NumPy's argument order) share; ``correlate(a, v)`` is
``convolve(a, flip(conj(v)))``, as in SciPy.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import scipy.signal as _ss

import transforms.numpy as tnp
from transforms.extend import dtype_of, ndim_of, shape_of
from transforms.numpy._convolution import Method, mode_of
from transforms.numpy._shape import operand as _operand
from transforms.typing import Array, ArrayLike

__all__ = ["convolve", "correlate"]

Mode = Literal["full", "valid", "same"]


def _check(name: str, a: Any, b: Any, mode: str, method: str) -> None:
    if ndim_of(a) != ndim_of(b):
        raise ValueError(
            f"transforms.scipy.signal.{name}: in1 and in2 should have the same dimensionality "
            f"(got {ndim_of(a)} and {ndim_of(b)})"
        )
    if mode not in ("full", "valid", "same"):
        raise ValueError(
            f"transforms.scipy.signal.{name}: acceptable mode flags are 'valid', 'same', or "
            f"'full' (got {mode!r})"
        )
    if method not in ("auto", "direct", "fft"):
        raise ValueError(
            f"transforms.scipy.signal.{name}: acceptable method flags are 'auto', 'direct', "
            f"or 'fft' (got {method!r})"
        )
    s1, s2 = shape_of(a), shape_of(b)
    if mode == "valid" and not (
        all(m >= n for m, n in zip(s1, s2, strict=True))
        or all(m <= n for m, n in zip(s1, s2, strict=True))
    ):
        raise ValueError(
            f"transforms.scipy.signal.{name}: for 'valid' mode, one must be at least as large "
            f"as the other in every dimension (got shapes {s1} and {s2})"
        )


def _moded(a: Any, b: Any, mode: Mode, method: Method) -> Any:
    """A mode of the full convolution (SciPy's slices of it); of empty operands, SciPy's
    zeros."""
    s1, s2 = shape_of(a), shape_of(b)
    if 0 in s1 or 0 in s2:
        return np.asarray(_ss.convolve(np.zeros(s1), np.zeros(s2), mode=mode))
    return mode_of(a, b, mode, method)


def convolve(in1: ArrayLike, in2: ArrayLike, mode: Mode = "full", method: Method = "auto") -> Array:
    """Differentiable ``scipy.signal.convolve`` of two n-d arrays of equal dimensionality,
    ``mode`` ``'full'``, ``'valid'`` or ``'same'`` (centred, of ``in1``'s shape), computed by
    SciPy's ``method``; differentiable in both inputs."""
    a, b = _operand(in1), _operand(in2)
    _check("convolve", a, b, mode, method)
    if ndim_of(a) == 0:
        return a * b  # type: ignore[no-any-return]
    return _moded(a, b, mode, method)  # type: ignore[no-any-return]


def correlate(
    in1: ArrayLike, in2: ArrayLike, mode: Mode = "full", method: Method = "auto"
) -> Array:
    """Differentiable ``scipy.signal.correlate``: ``convolve(in1, flip(conj(in2)), mode)``, as
    SciPy computes it (``'same'`` is centred on ``in1``); differentiable in both inputs."""
    a, b = _operand(in1), _operand(in2)
    _check("correlate", a, b, mode, method)
    if np.issubdtype(dtype_of(b), np.complexfloating):
        b = tnp.conj(b)
    if ndim_of(a) == 0:
        return a * b  # type: ignore[no-any-return]
    return _moded(a, tnp.flip(b), mode, method)  # type: ignore[no-any-return]
