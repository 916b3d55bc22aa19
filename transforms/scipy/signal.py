"""``transforms.scipy.signal``: ``scipy.signal``'s ``convolve`` and ``correlate`` (n-d, modes
``'full'``, ``'valid'``, ``'same'``, SciPy's ``method``), differentiable in every mode and
nesting in both inputs.

One primitive, the full convolution (SciPy's value, by its ``method``); the modes are slices
of it and ``correlate(a, v)`` is ``convolve(a, flip(conj(v)))``, as in SciPy. The
convolution is bilinear: its JVP convolves each tangent with the other operand, and its
transpose correlates the cotangent with it (the ``'valid'`` part of the full convolution
with the flipped operand). Under ``vmap`` an example axis becomes one more axis of the
convolution, of size 1 in the unbatched operand (so nothing mixes across examples); two
batched operands are convolved example by example. A complex VJP is the transpose under
``Re(sum(a * b))`` (no conjugation), the package's convention.

``transforms.numpy.convolve``/``correlate`` are NumPy's 1-d functions (with NumPy's mode
names and argument order conventions); these are SciPy's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import scipy.signal as _ss

import transforms.numpy as tnp
from transforms.extend import (
    Primitive,
    cast_to,
    defbatch,
    defjvp,
    defvjp,
    dtype_of,
    in_dtype_of,
    ndim_of,
    shape_of,
    to_front,
)
from transforms.sparsity import defsparsity, dense_rule
from transforms.taylor import deftaylor, ode_rule
from transforms.typing import Array, ArrayLike

__all__ = ["convolve", "correlate"]

Mode = Literal["full", "valid", "same"]
Method = Literal["auto", "direct", "fft"]


def _full(a: Any, b: Any, method: Any) -> Any:
    return _ss.convolve(a, b, mode="full", method=method)


convolve_p = Primitive("convolve", _full)


def _conv(a: Any, b: Any, method: str) -> Any:
    return convolve_p.bind(a, b, method=method)


def _window(x: Any, starts: Sequence[int], sizes: Sequence[int]) -> Any:
    return x[tuple(slice(s, s + n) for s, n in zip(starts, sizes, strict=True))]


def _transpose(operand: Any, other: Any, method: str) -> Callable[[Any], Any]:
    """The cotangent of ``operand`` in ``convolve(operand, other)`` (or ``(other, operand)``):
    ``ct`` correlated with ``other``, the valid part of ``convolve(ct, flip(other))``."""
    starts = [n - 1 for n in shape_of(other)]
    sizes = shape_of(operand)
    flipped = tnp.flip(other)
    return lambda ct: _window(_conv(ct, flipped, method), starts, sizes)


defjvp(
    convolve_p,
    lambda t, ans, a, b, method: cast_to(_conv(t, b, method), dtype_of(ans)),
    lambda t, ans, a, b, method: cast_to(_conv(a, t, method), dtype_of(ans)),
)
defvjp(
    convolve_p,
    lambda ans, a, b, method: in_dtype_of(a, ans, _transpose(a, b, method)),
    lambda ans, a, b, method: in_dtype_of(b, ans, _transpose(b, a, method)),
)


def _convolve_batch(values: Sequence[Any], dims: Sequence[int | None], method: str) -> Any:
    a, b = (to_front(v, d) for v, d in zip(values, dims, strict=True))
    if dims[0] is not None and dims[1] is not None:
        return tnp.stack([_conv(a[i], b[i], method) for i in range(shape_of(a)[0])]), 0
    if dims[0] is None:
        return _conv(a[None], b, method), 0
    return _conv(a, b[None], method), 0


defbatch(convolve_p, _convolve_batch)


def _operand(x: ArrayLike) -> Any:
    return tnp.asarray(x) if isinstance(x, (list, tuple)) else x


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
    """A mode of the full convolution: SciPy's slices of it."""
    s1, s2 = shape_of(a), shape_of(b)
    if 0 in s1 or 0 in s2:
        return np.asarray(_ss.convolve(np.zeros(s1), np.zeros(s2), mode=mode))
    full = _conv(a, b, method)
    if mode == "full":
        return full
    if mode == "same":  # centred, of in1's shape
        return _window(full, [(n - 1) // 2 for n in s2], s1)
    small = [min(m, n) for m, n in zip(s1, s2, strict=True)]  # valid: where both overlap fully
    return _window(
        full, [n - 1 for n in small], [abs(m - n) + 1 for m, n in zip(s1, s2, strict=True)]
    )


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


# Sparsity patterns: dense (every output entry may depend on every input entry); Taylor
# rules derived from the JVP rules (exact; see docs/taylor.md).
for _primitive in (convolve_p,):
    defsparsity(_primitive, dense_rule)
    deftaylor(_primitive, ode_rule(_primitive))
