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
- ``scatter_add``, ``index_set``, ``getitem``: ``np.add.at`` and ``x[index] = v`` write in
  place, and Dask indexes otherwise than NumPy (one fancy index at a time): a foreign array
  gets a functional update, exact in NumPy's order, and NumPy's indexing by a gather.
- ``like``: a NumPy constant in another library (``np.asarray(x, like=...)``, NEP 35).
- ``whole_along``, ``blockwise``: the layout a library's function needs (an FFT's axis in
  one chunk), and a NumPy-only elementwise function applied chunk by chunk.

What a library lacks: Dask answers a NumPy function it does not implement (``eigh``,
``det``, ``sort``) by computing the whole array and warning, CuPy with a ``TypeError``.
While a foreign array is in flight (``hold``, called where one is first seen), Dask's warning
is an error, and ``Primitive.bind`` turns either into an ``ArrayLibraryError`` that names the
primitive and the library: never a silent ``compute()``.
"""

from __future__ import annotations

import math
import re
import threading
import warnings
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, cast

import numpy as np

from ._trace import Tracer
from .errors import ArrayLibraryError

__all__ = [
    "asarray",
    "blockwise",
    "getitem",
    "hold",
    "index_set",
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
    """Whether ``x`` is an array of another library: a NEP 18 array that is neither NumPy's
    nor a tracer (whose ``__array_function__`` is the differentiable twins')."""
    return not isinstance(x, (np.ndarray, np.generic, Tracer)) and hasattr(
        type(x), "__array_function__"
    )


def library_of(x: object) -> str:
    """The name of the library an array belongs to (``'dask'``, ``'cupy'``, ``'numpy'``)."""
    return type(x).__module__.partition(".")[0]


def asarray(x: Any) -> Any:
    """``np.asarray(x)``, except that an array of another library is returned as it is."""
    if type(x) is np.ndarray or not hasattr(type(x), "__array_function__"):
        return np.asarray(x)
    return x if is_foreign(x) else np.asarray(x)


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
    in place for an ndarray ``out``, a functional update for another library's array.

    The functional update is exact: each element receives its values in ``np.add.at``'s order
    (the order of ``out[index]``'s elements), one round per occurrence of a repeated index,
    each round a gather of the values and a ``where`` (never a cumulative-sum difference,
    which rounds). The index is concrete (a parameter); a foreign index array would make the
    rounds depend on its values: ``_scatter_add_at_foreign`` sums those in the library's
    reduction order instead.
    """
    if _foreign_part(index) is not None:
        return _scatter_add_at_foreign(out, index, values)
    if type(out) is np.ndarray and not is_foreign(values):
        np.add.at(out, index, values)
        return out
    targets = _targets(np.shape(out), index, "scatter-add", out)
    flat = targets.ravel()
    if flat.size == 0:
        return out
    values = np.reshape(np.broadcast_to(values, targets.shape), (-1,))
    order = np.argsort(flat, kind="stable")  # each target's occurrences, in add.at's order
    ordered = flat[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    rank = np.arange(flat.size) - np.repeat(starts, np.diff(np.r_[starts, flat.size]))
    shape, size = np.shape(out), math.prod(np.shape(out))
    for r in range(int(rank.max()) + 1):
        hit = rank == r
        source = np.zeros(size, dtype=np.intp)
        source[ordered[hit]] = order[hit]
        mask = np.zeros(size, dtype=bool)
        mask[ordered[hit]] = True
        gathered = np.reshape(values[source], shape)
        out = np.where(mask.reshape(shape), out + gathered, out)
    return out


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


# ---- indexing another library's array ----------------------------------------------------------
def _targets(shape: tuple[int, ...], index: Any, what: str, x: Any) -> np.ndarray:
    """The flat position in an array of ``shape`` of each element of ``array[index]`` (NumPy
    applies the index to the positions, so every index NumPy takes is placed as NumPy places
    it). A foreign index array is refused: its values would decide the result's layout."""
    parts = index if isinstance(index, tuple) else (index,)
    if any(is_foreign(p) for p in parts):
        raise ArrayLibraryError(f"{what} with an index array of {library_of(x)}", library_of(x))
    positions: np.ndarray = np.arange(math.prod(shape)).reshape(shape)[index]
    return positions


def _foreign_part(index: Any) -> Any:
    """The index array of another library in ``index``, if any (else ``None``)."""
    if type(index) is tuple:
        return next((p for p in index if is_foreign(p)), None)
    return index if is_foreign(index) else None


def _lazy_positions(shape: tuple[int, ...], index: Any, what: str) -> tuple[int, int, Any]:
    """For an index with an index array of another library (indices computed lazily, as by
    ``searchsorted``): ``(k, m, positions)``, where the index is ``k`` full slices, ``m``
    consecutive integer index arrays and full slices after them, and ``positions`` (lazy, in
    the arrays' broadcast shape) are the flat positions the arrays select in axes
    ``k .. k+m-1`` taken together. Another index (a lazy mask, arrays apart) would be placed
    by its values: refused."""
    parts = list(index) if type(index) is tuple else [index]
    while parts and parts[-1] is Ellipsis:
        parts.pop()
    full = slice(None)

    def is_full(p: Any) -> bool:
        return isinstance(p, slice) and p == full

    k = next(i for i, p in enumerate(parts) if not is_full(p))
    m = next((i for i, p in enumerate(parts[k:]) if is_full(p)), len(parts) - k)
    arrays = parts[k : k + m]
    library = library_of(next(p for p in parts if is_foreign(p)))
    if (
        not all(is_full(p) for p in parts[k + m :])
        or k + m > len(shape)
        or not all(
            isinstance(p, (int, np.integer))
            or (hasattr(p, "dtype") and np.issubdtype(p.dtype, np.integer))
            for p in arrays
        )
    ):
        raise ArrayLibraryError(
            f"{what} with a {library} index array other than integer arrays side by side "
            "among full slices",
            library,
        )
    positions: Any = 0
    for p, n in zip(arrays, shape[k : k + m], strict=True):
        positions = positions * n + np.where(p < 0, p + n, p)
    return k, m, positions


def _scatter_add_at_foreign(out: Any, index: Any, values: Any) -> Any:
    """``scatter_add`` at an index array of another library: a ``bincount`` of the values
    weighted at their flat target positions (lazy: the positions are computed with the
    index), added to ``out``; the sums go in the library's reduction order."""
    shape = np.shape(out)
    k, m, at = _lazy_positions(shape, index, "scatter-add")
    lead, n, inner = math.prod(shape[:k]), math.prod(shape[k : k + m]), math.prod(shape[k + m :])
    ndim, rest = np.ndim(at), len(shape) - k - m
    rows = np.arange(lead).reshape(shape[:k] + (1,) * (ndim + rest))
    cols = np.arange(inner).reshape((1,) * (k + ndim) + shape[k + m :])
    at = np.reshape(at, (1,) * k + np.shape(at) + (1,) * rest)
    positions = (rows * n + at) * inner + cols
    full = np.shape(positions)
    flat: Any = np.reshape(np.broadcast_to(positions, full), (-1,))  # (lazy, as the index)
    weights = like(np.reshape(np.broadcast_to(values, full), (-1,)), flat)
    if hasattr(weights, "rechunk"):  # (Dask's bincount: the weights chunked as the positions)
        weights = weights.rechunk(flat.chunks)
    size = math.prod(shape)

    def count(w: Any) -> Any:
        return np.bincount(flat, weights=w, minlength=size)

    sums = (
        count(weights.real) + 1j * count(weights.imag)
        if np.iscomplexobj(weights)
        else count(weights)
    )
    return out + np.reshape(sums, shape).astype(np.result_type(out))


def _native_index(index: Any) -> bool:
    """Whether Dask indexes as NumPy does with ``index``: basic entries (slices, ``None``,
    ``Ellipsis``, integers) and at most one 1-d index array among slices only."""
    parts = index if isinstance(index, tuple) else (index,)
    arrays = [p for p in parts if not (p is None or p is Ellipsis or isinstance(p, slice))]
    if all(isinstance(p, (int, np.integer)) and not isinstance(p, bool) for p in arrays):
        return True
    if len(arrays) != 1 or isinstance(arrays[0], (int, np.integer, bool, np.bool_)):
        return False
    a = np.asarray(arrays[0])
    return a.ndim == 1 and (a.dtype == np.bool_ or np.issubdtype(a.dtype, np.integer))


def getitem(x: Any, index: Any) -> Any:
    """``x[index]`` for any array library, for every index NumPy takes: an ndarray is indexed
    by NumPy; a foreign array by its library where that indexes as NumPy does, else (several
    index arrays, a multi-dimensional one or mask) by gathering its flattened elements at the
    positions NumPy's own indexing selects (exact: a selection). Index arrays of another
    library (indices computed lazily, as by ``searchsorted``) select flat positions of their
    axes merged into one (``_lazy_positions``)."""
    array = _foreign_part(index)
    if array is not None:
        shape = np.shape(x)
        k, m, positions = _lazy_positions(shape, index, "indexing")
        merged = np.reshape(
            like(x, array), (*shape[:k], math.prod(shape[k : k + m]), *shape[k + m :])
        )
        taken = merged[(slice(None),) * k + (np.reshape(positions, (-1,)),)]
        return np.reshape(taken, (*shape[:k], *np.shape(positions), *shape[k + m :]))
    if type(x) is np.ndarray or not is_foreign(x):
        return np.asarray(x)[index]
    if _native_index(index):
        return x[index]
    targets = _targets(np.shape(x), index, "indexing", x)
    if targets.size == 0:  # (Dask cannot flatten an empty array)
        return np.zeros_like(x, shape=targets.shape)
    return np.reshape(np.reshape(x, (-1,))[targets.ravel()], targets.shape)


def blockwise(f: Callable[[np.ndarray], np.ndarray], x: Any) -> Any:
    """``f(x)`` for an elementwise NumPy function ``f`` that another library's array cannot
    take whole (a loop until convergence tests values; a keyword the library's own function
    lacks): a Dask array is mapped block by block (lazy, and elementwise, so equal to
    ``f`` of the whole array); a library without blocks refuses."""
    if type(x) is np.ndarray or not is_foreign(x):
        return f(x)
    if not hasattr(x, "map_blocks"):
        raise ArrayLibraryError(
            f"'{getattr(f, '__name__', 'an elementwise function')}'", library_of(x)
        )
    dtype = f(np.zeros(1, dtype=x.dtype)).dtype
    return x.map_blocks(f, dtype=dtype)


def index_set(x: Any, index: Any, values: Any) -> Any:
    """A copy of ``x`` with ``values`` written at ``index`` (NumPy's ``x[index] = values`` on
    a copy: at a repeated index the last write wins); a functional update (a gather of the
    winning values and a ``where``) where ``x`` or ``values`` is another library's array."""
    if (type(x) is np.ndarray or not is_foreign(x)) and not is_foreign(values):
        out = np.array(x, copy=True)
        out[index] = values
        return out
    shape = np.shape(x)
    targets = _targets(shape, index, "an indexed update", x if is_foreign(x) else values)
    flat = targets.ravel()
    if flat.size == 0:
        return x
    size = math.prod(shape)
    source = np.zeros(size, dtype=np.intp)
    source[flat] = np.arange(flat.size)  # NumPy's fancy assignment: the last write wins
    mask = np.zeros(size, dtype=bool)
    mask[flat] = True
    values = np.reshape(np.broadcast_to(values, targets.shape), (-1,))
    gathered = np.reshape(values[source], shape).astype(x.dtype)
    return np.where(mask.reshape(shape), gathered, x)


def like(x: Any, *others: Any) -> Any:
    """``x`` in the library of the first of ``others`` that is another library's array (NEP 35
    ``like=``), else ``x`` itself. A constant NumPy operand joins a Dask one, for a function
    of that library that takes its own arrays only; and a derivative that does not depend on
    a Dask input's values (the gradient of ``sum(x)``), which comes out of the rules as a
    NumPy array, is handed back as its input's kind of array, as JAX hands back a derivative
    on its primal's device."""
    for other in others:
        if type(other) is not np.ndarray and is_foreign(other):
            return x if is_foreign(x) else np.asarray(x, like=other)
    return x
