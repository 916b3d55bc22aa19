"""The library's one convolution: ``convolve_p``, the full n-d convolution of two arrays of
one dimensionality, with every rule beside it. ``transforms.numpy``'s ``convolve`` and
``correlate`` (NumPy's 1-d functions, in ``_extras``) and ``transforms.scipy.signal``'s (n-d)
are slices of it (``mode_of``), with the operands swapped, flipped or conjugated as each
library computes them.

The value: with ``method=None`` NumPy's own (``np.convolve`` for 1-d operands; otherwise one
shifted copy of the larger operand per element of the smaller, summed), so that
``transforms.numpy`` needs no SciPy; with one of SciPy's methods (``'auto'``, ``'direct'``,
``'fft'``; only ``transforms.scipy.signal`` passes one, and it has imported SciPy),
``scipy.signal.convolve``'s.

The convolution is bilinear: its JVP convolves each tangent with the other operand, and its
transpose correlates the cotangent with it (the part of the full convolution with the
flipped operand where they overlap fully; no conjugation: a complex VJP is the transpose
under ``Re(sum(a * b))``, the package's convention). Under ``vmap`` an example axis becomes
one more axis of the convolution, of size 1 in the unbatched operand (so nothing mixes
across examples); two batched operands are convolved example by example. Its Taylor rule is
the Cauchy product of bilinear maps (``_taylor``), its sparsity rule the exact band
structure (``convolve_rule``: output ``i + j`` depends on ``a[i]`` and ``b[j]``) of a direct
convolution, and dense where SciPy may take the FFT.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np

from transforms.batching import defbatch
from transforms.core import Array, Primitive, arrays
from transforms.forward import defjvp
from transforms.reverse import defvjp
from transforms.sparsity import convolve_rule, defsparsity, dense_rule

from ._batching import to_front
from ._construct import flip
from ._define import dtype_of, shape_of
from ._indexing import getitem
from ._shape import cast_to, in_dtype_of, stack

__all__ = ["Method", "convolve_p", "full_convolution", "mode_of"]

Method = Literal["auto", "direct", "fft"]  # SciPy's


def _full(a: Any, b: Any, method: Method | None) -> Any:
    if arrays.is_foreign(a) or arrays.is_foreign(b):  # (SciPy's methods take NumPy arrays:
        return _shifted_sum(arrays.like(a, b), arrays.like(b, a))  # the direct sum, lazily)
    if method is not None:
        import scipy.signal  # only transforms.scipy.signal passes a method: SciPy is there

        return scipy.signal.convolve(a, b, mode="full", method=method)
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim == 1:
        return np.convolve(a, b)
    if a.size < b.size:
        a, b = b, a
    out = np.zeros([n + m - 1 for n, m in zip(a.shape, b.shape, strict=True)], np.result_type(a, b))
    for j in np.ndindex(b.shape):
        out[tuple(slice(k, k + n) for k, n in zip(j, a.shape, strict=True))] += b[j] * a
    return out


def _shifted_sum(a: Any, b: Any) -> Any:
    """The full convolution of another library's arrays (Dask has no ``convolve``): the sum,
    over the elements of the smaller operand, of the larger one scaled by each and padded
    into its place (functional: no in-place ``+=``; lazy)."""
    if a.size < b.size:
        a, b = b, a
    shape = [n + m - 1 for n, m in zip(a.shape, b.shape, strict=True)]
    out: Any = None
    for j in np.ndindex(b.shape):
        pads = [(k, s - k - n) for k, n, s in zip(j, a.shape, shape, strict=True)]
        term = np.pad(b[j] * a, pads)
        out = term if out is None else out + term
    return out


convolve_p = Primitive("convolve", _full)


def full_convolution(a: Any, b: Any, method: Method | None) -> Array:
    """The full convolution of ``a`` and ``b`` (one dimensionality, no empty axis), of shape
    ``a.shape + b.shape - 1``, by SciPy's ``method`` (``None``: NumPy's)."""
    return convolve_p.bind(a, b, method=method)


def _window(x: Any, starts: Sequence[int], sizes: Sequence[int]) -> Any:
    return getitem(x, tuple(slice(s, s + n) for s, n in zip(starts, sizes, strict=True)))


def _transpose(operand: Any, other: Any, method: Method | None) -> Callable[[Any], Any]:
    """The cotangent of ``operand`` in ``convolve(operand, other)`` (or ``(other, operand)``):
    ``ct`` correlated with ``other``, the fully overlapping part of ``convolve(ct,
    flip(other))``."""
    starts = [n - 1 for n in shape_of(other)]
    sizes = shape_of(operand)
    flipped = flip(other)
    return lambda ct: _window(full_convolution(ct, flipped, method), starts, sizes)


defjvp(
    convolve_p,
    lambda t, ans, a, b, method: cast_to(full_convolution(t, b, method), dtype_of(ans)),
    lambda t, ans, a, b, method: cast_to(full_convolution(a, t, method), dtype_of(ans)),
)
defvjp(
    convolve_p,
    lambda ans, a, b, method: in_dtype_of(a, ans, _transpose(a, b, method)),
    lambda ans, a, b, method: in_dtype_of(b, ans, _transpose(b, a, method)),
)


def _convolve_batch(
    values: Sequence[Any], dims: Sequence[int | None], method: Method | None
) -> tuple[Any, int]:
    a, b = (to_front(v, d) for v, d in zip(values, dims, strict=True))
    if dims[0] is not None and dims[1] is not None:
        examples = [full_convolution(a[i], b[i], method) for i in range(shape_of(a)[0])]
        return stack(examples), 0
    if dims[0] is None:
        return full_convolution(a[None], b, method), 0
    return full_convolution(a, b[None], method), 0


defbatch(convolve_p, _convolve_batch)


def _sparsity(ans: Any, values: Any, patterns: Any, *, method: Method | None) -> Any:
    """The band structure of a direct convolution; dense where SciPy may take the FFT, whose
    rounding reaches every output element (a pattern must hold every computed non-zero)."""
    if method in ("auto", "fft"):
        return dense_rule(ans, values, patterns)
    return convolve_rule(ans, values, patterns)


defsparsity(convolve_p, _sparsity)


def mode_of(a: Any, b: Any, mode: str, method: Method | None) -> Array:
    """SciPy's ``mode`` of the convolution of ``a`` and ``b`` (non-empty, one dimensionality):
    ``'full'``; ``'same'``, centred, of ``a``'s shape; ``'valid'``, where one overlaps the
    other fully (the caller has checked that one is at least the other in every axis).
    NumPy's 1-d modes are these with the longer signal first."""
    s1, s2 = shape_of(a), shape_of(b)
    full = full_convolution(a, b, method)
    if mode == "full":
        return full
    if mode == "same":
        return _window(full, [(n - 1) // 2 for n in s2], s1)  # type: ignore[no-any-return]
    small = [min(m, n) for m, n in zip(s1, s2, strict=True)]
    sizes = [abs(m - n) + 1 for m, n in zip(s1, s2, strict=True)]
    return _window(full, [n - 1 for n in small], sizes)  # type: ignore[no-any-return]
