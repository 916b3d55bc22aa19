"""Type aliases shared by every layer: what a value inside differentiable code can be."""

from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

from ._trace import Tracer

__all__ = ["Array", "ArrayLike", "Scalar", "DType"]

#: A value inside differentiable code: a plain ndarray, or a tracer standing for one.
Array: TypeAlias = np.ndarray[Any, np.dtype[Any]] | Tracer
#: Anything a ``transforms.numpy`` function accepts where NumPy accepts an array-like.
ArrayLike: TypeAlias = Array | npt.ArrayLike
Scalar: TypeAlias = float | int | complex | np.number[Any]
DType: TypeAlias = npt.DTypeLike
