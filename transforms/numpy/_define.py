"""The bottom of the family kit: operands' shapes and dtypes, axes, non-differentiable
primitives, and ``out=`` refused. Nothing here knows any primitive; the rule contract and
the family constructors are in ``_kit``, the structural operations rules use in ``_shape``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, NoReturn, TypeGuard

import numpy as np

from transforms.core import Primitive, Tracer, arrays, concrete

__all__ = [
    "shape_of",
    "ndim_of",
    "dtype_of",
    "is_complex",
    "normalize_axes",
    "is_traced",
    "checkable",
    "nondifferentiable",
    "reject_out",
    "missing_names",
    "HOW_TO_ADD",
]


def is_traced(x: object) -> TypeGuard[Tracer]:
    return isinstance(x, Tracer)


def checkable(x: Any) -> np.ndarray | None:
    """The value of ``x`` for a check NumPy makes on values (weights that sum to zero or are
    negative, a zero period), or ``None`` where ``x`` is another library's array: checking it
    would compute it, so the check is skipped, as Dask's own ``average`` and ``cov`` skip it
    (the result is then what the arithmetic gives: inf or nan)."""
    value = concrete(x)
    return None if arrays.is_foreign(value) else np.asarray(value)


def shape_of(x: Any) -> tuple[int, ...]:
    """The shape of an array, tracer or scalar."""
    return x.shape if isinstance(x, (np.ndarray, Tracer, np.generic)) else np.shape(x)


def is_complex(x: Any) -> bool:
    """Whether an array, tracer or scalar has a complex dtype."""
    return bool(np.issubdtype(dtype_of(x), np.complexfloating))


def ndim_of(x: Any) -> int:
    return len(shape_of(x))


def dtype_of(x: Any) -> np.dtype[Any]:
    """The dtype of an array, tracer or scalar (rules call this on every use: no isinstance)."""
    dtype: np.dtype[Any] | None = getattr(x, "dtype", None)
    if dtype is not None:
        return dtype
    if hasattr(x, "dtypes") or isinstance(x, memoryview):  # a DataFrame, a buffer
        return np.asarray(x).dtype
    if isinstance(x, (list, tuple)):  # (which may hold tracers: no np.asarray)
        return np.result_type(*(dtype_of(v) for v in x)) if x else np.dtype(np.float64)
    return np.result_type(x)


def normalize_axes(axis: int | Sequence[int] | None, ndim: int) -> tuple[int, ...]:
    """``axis`` as a sorted tuple of non-negative axes (``None`` means all of them)."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        if not -ndim <= a < max(ndim, 1):
            raise np.exceptions.AxisError(
                f"axis {a} is out of bounds for array of dimension {ndim}"
            )
        out.append(int(a) % max(ndim, 1))
    return tuple(sorted(out))


def nondifferentiable(name: str, impl: Callable[..., Any]) -> Primitive:
    """A primitive whose result carries no derivative: interpreters evaluate it on primals."""
    return Primitive(name, impl, differentiable=False)


def reject_out(name: str, out: object) -> None:
    """NumPy's ``out=`` cannot hold a traced result: refuse it, naming the function."""
    if out is not None:
        raise TypeError(
            f"transforms.numpy.{name}: out= is not supported (a transformed result cannot be "
            "written into an array); use the returned array"
        )


HOW_TO_ADD = "file an issue, or define it with transforms.primitive and defjvp/defvjp/defbatch."


def missing_names(ours: str, theirs: ModuleType, how: str) -> Callable[[str], NoReturn]:
    """The module ``__getattr__`` of a differentiable namespace ``ours`` (its name) of the
    library ``theirs``: a name ``theirs`` has says that it is not (yet) differentiable here,
    then ``how`` to get it; any other name is an ordinary missing attribute."""

    def __getattr__(name: str) -> NoReturn:
        if hasattr(theirs, name):
            raise AttributeError(
                f"{ours} has no '{name}': {theirs.__name__}.{name} is not (yet) differentiable "
                f"here. Calling {theirs.__name__}.{name} on traced values would drop their "
                f"derivatives; {how}"
            )
        raise AttributeError(f"module '{ours}' has no attribute '{name}'")

    return __getattr__
