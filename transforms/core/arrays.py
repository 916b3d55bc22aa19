"""The array-library seam: values of another array library (Dask, CuPy) pass through.

Impls and rules are written against NumPy's functions, and NumPy's dispatch protocols
(``__array_ufunc__``, NEP 13; ``__array_function__``, NEP 18) hand a call whose operand is a
Dask or CuPy array to that array's own library, which returns its own kind of array: a Dask
array stays lazy, a CuPy array stays on its device. The protocols carry plain calls only, so
what they do not carry goes through this module, which keeps NumPy's own call for ndarrays
(the fast path, one type test):

- ``asarray``: ``np.asarray`` of a Dask array computes the whole array, of a CuPy array
  refuses; a foreign array is returned as it is.
- ``reduce``: a ufunc's ``reduce`` method (``np.add.reduce``) is not a plain call; a foreign
  operand takes the namespace's reduction (``np.sum``), which the protocol carries.
- ``scatter_add``: ``np.add.at`` writes in place; a foreign array gets a functional update.

What a library lacks: Dask answers a NumPy function it does not implement (``eigh``,
``det``, ``sort``) by computing the whole array and warning, CuPy with a ``TypeError``.
While a foreign array is in flight (``hold``, called where one is first seen), Dask's warning
is an error, and ``Primitive.bind`` turns either into an ``ArrayLibraryError`` that names the
primitive and the library: never a silent ``compute()``.
"""

from __future__ import annotations

import re
import threading
import warnings
from contextvars import ContextVar
from typing import Any, cast

import numpy as np

from .errors import ArrayLibraryError

__all__ = [
    "asarray",
    "hold",
    "is_foreign",
    "library_error",
    "library_of",
    "like",
    "reduce",
    "release",
    "scatter_add",
    "whole_along",
]


def is_foreign(x: object) -> bool:
    """Whether ``x`` is an array of another library: a NEP 18 array that is not NumPy's."""
    return not isinstance(x, (np.ndarray, np.generic)) and hasattr(type(x), "__array_function__")


def library_of(x: object) -> str:
    """The name of the library an array belongs to (``'dask'``, ``'cupy'``, ``'numpy'``)."""
    return type(x).__module__.partition(".")[0]


def asarray(x: Any) -> Any:
    """``np.asarray(x)``, except that an array of another library is returned as it is."""
    if type(x) is np.ndarray or not hasattr(type(x), "__array_function__"):
        return np.asarray(x)
    return x if is_foreign(x) else np.asarray(x)


def like(value: Any, reference: Any) -> Any:
    """``value`` (a derivative) in the library of ``reference`` (its primal): a derivative
    that does not depend on a Dask input's values (the gradient of ``sum(x)``) comes out of
    the rules as a NumPy array, and is handed back as the input's kind of array, as JAX hands
    back a derivative on its primal's device. An ndarray ``reference`` takes it as it is."""
    if type(value) is type(reference) or not is_foreign(reference) or is_foreign(value):
        return value
    return np.asarray(value, like=reference)


#: ufunc -> the namespace function that reduces with it (carried by ``__array_function__``).
_REDUCTIONS: dict[np.ufunc, Any] = {
    np.add: np.sum,
    np.multiply: np.prod,
    np.maximum: np.max,
    np.minimum: np.min,
    np.logical_and: np.all,
    np.logical_or: np.any,
}


def reduce(ufunc: np.ufunc, x: Any, axis: Any, keepdims: bool = False, **kw: Any) -> Any:
    """``ufunc.reduce(x, axis, keepdims=keepdims, **kw)`` for any array library."""
    if type(x) is np.ndarray or not is_foreign(x):
        return ufunc.reduce(x, axis, keepdims=keepdims, **kw)
    return _REDUCTIONS[ufunc](x, axis=axis, keepdims=keepdims, **kw)


def scatter_add(out: Any, index: Any, values: Any) -> Any:
    """``out`` with ``values`` added at ``index`` (repeated indices accumulate): ``np.add.at``
    in place for an ndarray ``out``, a functional update for another library's array."""
    if type(out) is np.ndarray:
        np.add.at(out, index, values)
        return out
    raise ArrayLibraryError(
        "scatter-add (the derivative of indexing with integer arrays)", library_of(out)
    )


# ---- what a library lacks: an error, never a silent compute ----------------------------------

#: Dask's warning for a NumPy function it lacks (it then computes the whole array).
_DASK_FALLBACK = re.compile(r"The `(?P<func>[\w.]+)` function is not implemented by Dask array")
#: NumPy's error when no library in a call implements a function (CuPy, for one it lacks).
_NO_IMPLEMENTATION = re.compile(
    r"no implementation found for '(?P<func>[\w.]+)' on types that implement "
    r"__array_function__: \[<class '(?P<library>\w+)"
)

#: A ufunc's method (``reduce``) that a library's ``__array_ufunc__`` does not carry.
_UFUNC_REFUSED = re.compile(
    r"operand type\(s\) all returned NotImplemented from __array_ufunc__\(<ufunc '(?P<func>\w+)'>"
    r", '(?P<method>\w+)'"
)

_FILTER = ("error", _DASK_FALLBACK, FutureWarning, None, 0)
_lock = threading.Lock()
_holders = 0
_HELD: ContextVar[bool] = ContextVar("transforms_foreign_arrays", default=False)


def hold() -> None:
    """A foreign array is in flight in this context: until ``release`` (when the context's
    outermost transform, or the untraced primitive, is done), a library's fallback that would
    compute a whole array is an error. The warnings filter is the process's, shared by a
    count of the contexts that hold it."""
    global _holders
    if _HELD.get():
        return
    _HELD.set(True)
    with _lock:
        if _holders == 0:
            _filters().insert(0, _FILTER)
            warnings._filters_mutated()  # type: ignore[attr-defined]
        _holders += 1


def release() -> None:
    """This context holds no foreign array any more (a no-op if it did not hold one)."""
    global _holders
    if not _HELD.get():
        return
    _HELD.set(False)
    with _lock:
        _holders -= 1
        if _holders == 0:
            try:
                _filters().remove(_FILTER)
            except ValueError:  # the user reset the filters meanwhile
                pass
            warnings._filters_mutated()  # type: ignore[attr-defined]


def _filters() -> list[Any]:
    return cast("list[Any]", warnings.filters)  # (typeshed: a Sequence; it is the list)


def library_error(
    name: str, error: BaseException, args: tuple[Any, ...]
) -> ArrayLibraryError | None:
    """The ``ArrayLibraryError`` that ``error`` (raised while the primitive ``name`` ran on
    ``args``) stands for, or ``None`` if it is not a library's refusal."""
    message = str(error)
    if isinstance(error, FutureWarning):
        match = _DASK_FALLBACK.search(message)
        library = "dask"
        what = match["func"] if match else ""
    else:
        match = _NO_IMPLEMENTATION.search(message)
        if match is not None:
            library, what = match["library"], match["func"]
        else:
            match = _UFUNC_REFUSED.search(message)
            foreign = [a for a in args if is_foreign(a)]
            if match is None or not foreign:
                return None
            library, what = library_of(foreign[0]), f"{match['func']}.{match['method']}"
    if match is None:
        return None
    return ArrayLibraryError(f"primitive '{name}' ({what})", library)


def whole_along(x: Any, axes: Any) -> Any:
    """``x`` with each axis of ``axes`` in one chunk, where its library needs that layout (an
    FFT along an axis, the factorisation of a matrix): a lazy rechunk of a Dask array, ``x``
    itself for an ndarray or an array without chunks (CuPy)."""
    if type(x) is np.ndarray or not hasattr(x, "rechunk"):
        return x
    ndim = len(x.shape)
    return x.rechunk({axis % ndim: -1 for axis in axes})
