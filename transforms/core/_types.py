"""Type aliases shared by every layer: what a value inside differentiable code can be."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol, TypeAlias, TypeVar

import numpy as np
import numpy.typing as npt

from ._trace import Tracer

__all__ = ["Array", "ArrayLike", "NestedSequence", "Scalar", "DType"]

_T_co = TypeVar("_T_co", covariant=True)

#: A value inside differentiable code: a plain ndarray, or a tracer standing for one.
Array: TypeAlias = np.ndarray[Any, np.dtype[Any]] | Tracer
#: A Python or NumPy number (not a string: ``tnp.sin("x")`` is a type error).
Scalar: TypeAlias = bool | int | float | complex | np.number[Any] | np.bool_


class _SupportsArray(Protocol):
    """Anything NumPy converts with ``__array__`` (a pandas Series, an xarray DataArray)."""

    def __array__(self) -> np.ndarray[Any, Any]: ...


class NestedSequence(Protocol[_T_co]):
    """A list (of lists ...) of ``_T_co``; ``str`` is not one (its items are ``str``).

    The shape of numpy's private ``_NestedSequence``, so that NumPy's functions accept it.
    """

    def __len__(self, /) -> int: ...
    def __getitem__(self, index: int, /) -> _T_co | NestedSequence[_T_co]: ...
    def __contains__(self, x: object, /) -> bool: ...
    def __iter__(self, /) -> Iterator[_T_co | NestedSequence[_T_co]]: ...
    def __reversed__(self, /) -> Iterator[_T_co | NestedSequence[_T_co]]: ...
    def count(self, value: Any, /) -> int: ...
    def index(self, value: Any, /) -> int: ...


#: Anything a ``transforms.numpy`` function accepts where NumPy accepts an array-like:
#: arrays, tracers, numbers, nested lists of them, and ``__array__`` objects; unlike
#: ``numpy.typing.ArrayLike``, never ``str`` or ``bytes``.
ArrayLike: TypeAlias = (
    Array | Scalar | _SupportsArray | NestedSequence[complex] | NestedSequence[_SupportsArray]
)
DType: TypeAlias = npt.DTypeLike
