"""Discrete Fourier transforms (``numpy.fft``), differentiable in forward and reverse mode.

Every transform is linear, so its JVP applies the same transform to the tangent, and its VJP
is its transpose under the bilinear pairing ``Re(sum(a * b))`` (JAX's complex convention):

- ``fftn``/``ifftn`` (complex to complex, any ``norm``): the DFT matrix is *symmetric*, so
  the transpose of a transform is the same transform with the same ``norm`` (not the
  inverse, which would be the Hermitian adjoint). A real input takes the real part.
- ``irfftn`` reads only the real parts of the zero (and, ``n`` even, the Nyquist) frequency
  and counts every other one twice (Hermitian symmetry): its transpose is
  ``w * conj(rfftn(ct))`` with those counts ``w`` and the opposite direction's ``norm``;
  ``rfftn`` (the first ``n // 2 + 1`` frequencies of the full transform) has the transpose
  ``irfftn(conj(ct) / w)``, the real part of the full transform of the zero-padded
  cotangent. Both cost a half-size transform, and the zero and Nyquist imaginary parts of
  a cotangent of ``irfftn`` come out exactly zero.
- ``n``/``s`` crop or zero-pad the input before the transform: a composite of ``getitem``
  and its transpose ``untake``, so the cotangent is zero-padded or cropped back.
- ``fftshift``/``ifftshift`` are permutations, each the other's transpose.

The three transform primitives take the already-resized input and the axes as
non-negative ints; their batching rules renumber the axes around the batch axis. An array of
another library is transformed by its own FFT: Dask's needs each transformed axis in one
chunk, which the primitives arrange lazily (``whole_along``; the other axes stay chunked).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np

from transforms.batching import defbatch
from transforms.core import Array, ArrayLike, Primitive
from transforms.core.arrays import whole_along
from transforms.forward import defjvp
from transforms.reverse import defvjp
from transforms.sparsity import axes_rule, defsparsity, index_rule

from . import _elementwise, _indexing, _shape
from ._define import dtype_of, reject_out, shape_of
from ._define import is_complex as _is_complex

__all__ = [
    "fft",
    "ifft",
    "fft2",
    "ifft2",
    "fftn",
    "ifftn",
    "rfft",
    "irfft",
    "rfft2",
    "irfft2",
    "rfftn",
    "irfftn",
    "fftshift",
    "ifftshift",
]

Axes = tuple[int, ...]
NormName = Literal["backward", "ortho", "forward"]
Norm = NormName | None
_NORMS: dict[object, NormName] = {
    None: "backward",
    "backward": "backward",
    "ortho": "ortho",
    "forward": "forward",
}


# ---- shared helpers ------------------------------------------------------------------------
def _real_like(z: Any, dtype: np.dtype[Any]) -> Any:
    """The real part of the cotangent ``z`` of a real input of ``dtype``."""
    r = _elementwise.real(z)
    return r if dtype_of(r) == dtype else _shape.astype(r, dtype)


def _batched_axes(axes: Axes, bdim: int) -> Axes:
    """``axes`` of an unbatched operand, renumbered around a batch axis inserted at ``bdim``."""
    return tuple(a + (a >= bdim) for a in axes)


def _resize(x: Any, axes: Sequence[int], sizes: Sequence[int]) -> Any:
    """``x`` cropped or zero-padded at the end of each of ``axes`` to ``sizes`` (linear:
    ``getitem`` then its transpose ``untake``, so the cotangent is resized back)."""
    shape = shape_of(x)
    if all(shape[a] == n for a, n in zip(axes, sizes, strict=True)):
        return x
    index: list[slice] = [slice(None)] * len(shape)
    new = list(shape)
    for a, n in zip(axes, sizes, strict=True):
        index[a] = slice(0, min(shape[a], n))
        new[a] = n
    if any(shape[a] > n for a, n in zip(axes, sizes, strict=True)):
        x = _indexing.getitem(x, tuple(index))
    if any(shape[a] < n for a, n in zip(axes, sizes, strict=True)):
        x = _indexing.untake(x, tuple(index), tuple(new))
    return x


def _check_norm(norm: object) -> NormName:
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')
    return _NORMS[norm]


def _operand(a: ArrayLike) -> Array:
    operand: Array = _shape.operand(a)
    return operand


def _normalize_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return int(axis) % ndim


def _cook_nd_args(
    a: Any, s: Sequence[int] | None, axes: Sequence[int] | None, invreal: bool = False
) -> tuple[list[int], list[int]]:
    """NumPy's ``s``/``axes`` defaults (``numpy.fft._pocketfft._cook_nd_args``), with the
    axes made non-negative (in their order, repeats kept) and the sizes checked."""
    shape = shape_of(a)
    shapeless = s is None
    if axes is not None:
        axes = [_normalize_axis(ax, len(shape)) for ax in axes]
    if s is None:
        sizes: list[Any] = list(shape) if axes is None else [shape[ax] for ax in axes]
    else:
        sizes = list(s)
    if axes is None:
        if not shapeless:
            warnings.warn(
                "`axes` should not be `None` if `s` is not `None` (Deprecated in NumPy 2.0). "
                "In a future version of NumPy, this will raise an error and `s[i]` will "
                "correspond to the size along the transformed axis specified by `axes[i]`. To "
                "retain current behaviour, pass a sequence [0, ..., k-1] to `axes` for an "
                "array of dimension k.",
                DeprecationWarning,
                stacklevel=4,
            )
        axes = list(range(-len(sizes), 0))
    if len(sizes) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    axes_list = [_normalize_axis(ax, len(shape)) for ax in axes]
    if invreal and not axes_list:
        raise ValueError("a real-input transform needs at least one axis")
    if invreal and shapeless:
        sizes[-1] = (shape[axes_list[-1]] - 1) * 2
    sizes = [shape[ax] if n == -1 else n for n, ax in zip(sizes, axes_list, strict=True)]
    for n in sizes:
        if n is None or int(n) < 1:
            raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    return [int(n) for n in sizes], axes_list


# ---- complex-to-complex: fftn_p ---------------------------------------------------------------
def _fftn_impl(x: Any, *, axes: Axes, norm: NormName, inverse: bool) -> Any:
    transform = np.fft.ifftn if inverse else np.fft.fftn
    return transform(whole_along(x, axes), axes=axes, norm=norm)


fftn_p = Primitive("fftn", _fftn_impl)
defsparsity(fftn_p, axes_rule)
defjvp(
    fftn_p,
    lambda t, ans, x, axes, norm, inverse: fftn_p.bind(t, axes=axes, norm=norm, inverse=inverse),
)


def _fftn_vjp(
    ans: Any, x: Any, *, axes: Axes, norm: NormName, inverse: bool
) -> Callable[[Any], Any]:
    # The DFT matrix (either direction, any norm) is symmetric: the transform is its own
    # transpose. A real input keeps the real part.
    dtype = None if _is_complex(x) else dtype_of(x)

    def pullback(ct: Any) -> Any:
        ct_x = fftn_p.bind(ct, axes=axes, norm=norm, inverse=inverse)
        return ct_x if dtype is None else _real_like(ct_x, dtype)

    return pullback


defvjp(fftn_p, _fftn_vjp)
defbatch(
    fftn_p,
    lambda values, dims, axes, norm, inverse: (
        fftn_p.bind(values[0], axes=_batched_axes(axes, dims[0]), norm=norm, inverse=inverse),
        dims[0],
    ),
)


# ---- real-to-half-complex and back: rfftn_p and irfftn_p, each (nearly) the other's transpose --
# Along the last axis irfft reads a half spectrum z as the Hermitian full one: with the weights
# w (1 at the zero and, n even, Nyquist frequency, whose imaginary parts it drops; 2 at the
# others) irfft(z)_j = a Re(sum_k w_k z_k e^{+2 pi i jk/n}), a the norm's scale. So
#   transpose of irfft: ct -> w * conj(rfft(ct))       (rfft with the other direction's norm)
#   transpose of rfft:  ct -> irfft(conj(ct) / w)      (irfft with the other direction's norm)
# (rfft keeps the first n//2+1 entries of the full transform; its transpose is the real part
# of the full transform of the zero-padded cotangent, which is that irfft.) Along the other
# axes, complex transforms are their own transposes, and conj(fft(v, norm=swapped)) is
# ifft(conj(v), norm), so the formulas hold over all the axes at once.
_SWAPPED: dict[NormName, NormName] = {
    "backward": "forward",
    "forward": "backward",
    "ortho": "ortho",
}


def _hermitian_weights(n: int, axis: int, ndim: int, dtype: np.dtype[Any]) -> np.ndarray:
    """How many times ``irfft`` counts each of the ``n//2+1`` frequencies of a length-``n``
    axis, shaped to broadcast along ``axis`` of an ``ndim``-d array."""
    weights = np.full(n // 2 + 1, 2.0, dtype=dtype)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    return weights.reshape((n // 2 + 1,) + (1,) * (ndim - 1 - axis))


def _irfftn_impl(z: Any, *, axes: Axes, n: int, norm: NormName) -> Any:
    s = [np.shape(z)[a] for a in axes[:-1]] + [n]
    return np.fft.irfftn(whole_along(z, axes), s=s, axes=axes, norm=norm)


rfftn_p = Primitive(
    "rfftn", lambda x, axes, norm: np.fft.rfftn(whole_along(x, axes), axes=axes, norm=norm)
)
irfftn_p = Primitive("irfftn", _irfftn_impl)
defsparsity(rfftn_p, axes_rule)
defsparsity(irfftn_p, axes_rule)
defjvp(rfftn_p, lambda t, ans, x, axes, norm: rfftn_p.bind(t, axes=axes, norm=norm))
defjvp(irfftn_p, lambda t, ans, z, axes, n, norm: irfftn_p.bind(t, axes=axes, n=n, norm=norm))


def _rfftn_vjp(ans: Any, x: Any, *, axes: Axes, norm: NormName) -> Callable[[Any], Any]:
    n, dtype = shape_of(x)[axes[-1]], dtype_of(x)
    inverse_weights = 1 / _hermitian_weights(
        n, axes[-1], len(shape_of(x)), np.finfo(dtype_of(ans)).dtype
    )

    def pullback(ct: Any) -> Any:
        ct_x = irfftn_p.bind(
            _elementwise.conjugate(ct) * inverse_weights, axes=axes, n=n, norm=_SWAPPED[norm]
        )
        return ct_x if dtype_of(ct_x) == dtype else _shape.astype(ct_x, dtype)

    return pullback


def _irfftn_vjp(ans: Any, z: Any, *, axes: Axes, n: int, norm: NormName) -> Callable[[Any], Any]:
    weights = _hermitian_weights(n, axes[-1], len(shape_of(z)), dtype_of(ans))
    dtype = None if _is_complex(z) else dtype_of(z)

    def pullback(ct: Any) -> Any:
        ct_z = _elementwise.conjugate(rfftn_p.bind(ct, axes=axes, norm=_SWAPPED[norm])) * weights
        return ct_z if dtype is None else _real_like(ct_z, dtype)

    return pullback


defvjp(rfftn_p, _rfftn_vjp)
defvjp(irfftn_p, _irfftn_vjp)
defbatch(
    rfftn_p,
    lambda values, dims, axes, norm: (
        rfftn_p.bind(values[0], axes=_batched_axes(axes, dims[0]), norm=norm),
        dims[0],
    ),
)
defbatch(
    irfftn_p,
    lambda values, dims, axes, n, norm: (
        irfftn_p.bind(values[0], axes=_batched_axes(axes, dims[0]), n=n, norm=norm),
        dims[0],
    ),
)


# ---- fftshift_p: a permutation, each direction the other's transpose ------------------------
def _fftshift_impl(x: Any, *, axes: Axes, inverse: bool) -> Any:
    return (np.fft.ifftshift if inverse else np.fft.fftshift)(x, axes=axes)


fftshift_p = Primitive("fftshift", _fftshift_impl)
defsparsity(fftshift_p, index_rule(fftshift_p))
defjvp(
    fftshift_p,
    lambda t, ans, x, axes, inverse: fftshift_p.bind(t, axes=axes, inverse=inverse),
)
defvjp(
    fftshift_p,
    lambda ans, x, axes, inverse: lambda ct: fftshift_p.bind(ct, axes=axes, inverse=not inverse),
)
defbatch(
    fftshift_p,
    lambda values, dims, axes, inverse: (
        fftshift_p.bind(values[0], axes=_batched_axes(axes, dims[0]), inverse=inverse),
        dims[0],
    ),
)


# ---- the public functions --------------------------------------------------------------------
def _c2c(
    a: ArrayLike,
    s: Sequence[int] | None,
    axes: Sequence[int] | None,
    norm: Norm,
    inverse: bool,
) -> Array:
    x = _operand(a)
    norm_ = _check_norm(norm)
    sizes, axes_list = _cook_nd_args(x, s, axes)
    if len(set(axes_list)) < len(axes_list):  # a repeated axis is transformed repeatedly
        for ax, n in reversed(list(zip(axes_list, sizes, strict=True))):
            x = _c2c(x, [n], [ax], norm_, inverse)
        return x
    if not axes_list:
        return x
    x = _resize(x, axes_list, sizes)
    return fftn_p.bind(x, axes=tuple(axes_list), norm=norm_, inverse=inverse)


def _r2c(a: ArrayLike, s: Sequence[int] | None, axes: Sequence[int] | None, norm: Norm) -> Array:
    x = _operand(a)
    norm_ = _check_norm(norm)
    sizes, axes_list = _cook_nd_args(x, s, axes)
    _check_some(axes_list)
    if len(set(axes_list)) < len(axes_list):  # NumPy's order: rfft on the last, then fft
        x = _r2c(x, sizes[-1:], axes_list[-1:], norm_)
        for ax, n in reversed(list(zip(axes_list[:-1], sizes[:-1], strict=True))):
            x = _c2c(x, [n], [ax], norm_, False)
        return x
    x = _resize(x, axes_list, sizes)
    return rfftn_p.bind(x, axes=tuple(axes_list), norm=norm_)


def _c2r(a: ArrayLike, s: Sequence[int] | None, axes: Sequence[int] | None, norm: Norm) -> Array:
    x = _operand(a)
    norm_ = _check_norm(norm)
    sizes, axes_list = _cook_nd_args(x, s, axes, invreal=True)
    if len(set(axes_list)) < len(axes_list):  # NumPy's order: ifft on the others, then irfft
        for ax, n in zip(axes_list[:-1], sizes[:-1], strict=True):
            x = _c2c(x, [n], [ax], norm_, True)
        return _c2r(x, sizes[-1:], axes_list[-1:], norm_)
    n = sizes[-1]
    x = _resize(x, axes_list, sizes[:-1] + [n // 2 + 1])
    return irfftn_p.bind(x, axes=tuple(axes_list), n=n, norm=norm_)


def _check_some(axes: Sequence[int]) -> None:
    if not axes:
        raise ValueError("a real-input transform needs at least one axis")


def _one(n: int | None) -> list[int] | None:
    return None if n is None else [n]


def fft(
    a: ArrayLike, n: int | None = None, axis: int = -1, norm: Norm = None, out: None = None
) -> Array:
    """Differentiable ``numpy.fft.fft``: the transform along ``axis``, cropped or zero-padded
    to ``n`` points; ``norm`` in ``{None, "backward", "ortho", "forward"}``.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> T.grad(lambda x: tnp.real(tnp.fft.fft(x))[1])(np.zeros(4))  # Re exp(-2 pi i k / 4)
        array([ 1.,  0., -1.,  0.])
    """
    reject_out("fft.fft", out)
    return _c2c(a, _one(n), [axis], norm, False)


def ifft(
    a: ArrayLike, n: int | None = None, axis: int = -1, norm: Norm = None, out: None = None
) -> Array:
    """Differentiable ``numpy.fft.ifft`` (its transpose is itself, with the same ``norm``)."""
    reject_out("fft.ifft", out)
    return _c2c(a, _one(n), [axis], norm, True)


def fft2(
    a: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] = (-2, -1),
    norm: Norm = None,
    out: None = None,
) -> Array:
    """Differentiable ``numpy.fft.fft2``."""
    reject_out("fft.fft2", out)
    return _c2c(a, s, axes, norm, False)


def ifft2(
    a: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] = (-2, -1),
    norm: Norm = None,
    out: None = None,
) -> Array:
    """Differentiable ``numpy.fft.ifft2``."""
    reject_out("fft.ifft2", out)
    return _c2c(a, s, axes, norm, True)


def fftn(
    a: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: Norm = None,
    out: None = None,
) -> Array:
    """Differentiable ``numpy.fft.fftn`` (a repeated axis is transformed repeatedly)."""
    reject_out("fft.fftn", out)
    return _c2c(a, s, axes, norm, False)


def ifftn(
    a: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: Norm = None,
    out: None = None,
) -> Array:
    """Differentiable ``numpy.fft.ifftn``."""
    reject_out("fft.ifftn", out)
    return _c2c(a, s, axes, norm, True)


def rfft(
    a: ArrayLike, n: int | None = None, axis: int = -1, norm: Norm = None, out: None = None
) -> Array:
    """Differentiable ``numpy.fft.rfft`` of a real input: the ``n//2+1`` non-negative
    frequencies."""
    reject_out("fft.rfft", out)
    return _r2c(a, _one(n), [axis], norm)


def irfft(
    a: ArrayLike, n: int | None = None, axis: int = -1, norm: Norm = None, out: None = None
) -> Array:
    """Differentiable ``numpy.fft.irfft``: ``n`` (default ``2 * (m - 1)``) real points from
    a half spectrum. The imaginary parts of the zero (and, ``n`` even, Nyquist) frequency
    are ignored, so they get a zero derivative."""
    reject_out("fft.irfft", out)
    return _c2r(a, _one(n), [axis], norm)


def rfft2(
    a: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] = (-2, -1),
    norm: Norm = None,
    out: None = None,
) -> Array:
    """Differentiable ``numpy.fft.rfft2``."""
    reject_out("fft.rfft2", out)
    return _r2c(a, s, axes, norm)


def irfft2(
    a: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] = (-2, -1),
    norm: Norm = None,
    out: None = None,
) -> Array:
    """Differentiable ``numpy.fft.irfft2``."""
    reject_out("fft.irfft2", out)
    return _c2r(a, s, axes, norm)


def rfftn(
    a: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: Norm = None,
    out: None = None,
) -> Array:
    """Differentiable ``numpy.fft.rfftn``: ``rfft`` along the last of ``axes``, ``fft``
    along the others."""
    reject_out("fft.rfftn", out)
    return _r2c(a, s, axes, norm)


def irfftn(
    a: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: Norm = None,
    out: None = None,
) -> Array:
    """Differentiable ``numpy.fft.irfftn``: ``ifft`` along all but the last of ``axes``,
    ``irfft`` along the last."""
    reject_out("fft.irfftn", out)
    return _c2r(a, s, axes, norm)


def _shift(x: ArrayLike, axes: int | Sequence[int] | None, inverse: bool) -> Array:
    operand = _operand(x)
    ndim = len(shape_of(operand))
    if axes is None:
        axes_t: Axes = tuple(range(ndim))
    elif isinstance(axes, (int, np.integer)):
        axes_t = (_normalize_axis(int(axes), ndim),)
    else:
        axes_t = tuple(_normalize_axis(a, ndim) for a in axes)
    if not axes_t:
        return operand
    return fftshift_p.bind(operand, axes=axes_t, inverse=inverse)


def fftshift(x: ArrayLike, axes: int | Sequence[int] | None = None) -> Array:
    """Differentiable ``numpy.fft.fftshift`` (a permutation; its transpose is
    ``ifftshift``)."""
    return _shift(x, axes, False)


def ifftshift(x: ArrayLike, axes: int | Sequence[int] | None = None) -> Array:
    """Differentiable ``numpy.fft.ifftshift`` (a permutation; its transpose is ``fftshift``)."""
    return _shift(x, axes, True)
