"""Shape and construction: reshape, transpose, broadcasting, stacking, ``array`` of tracers.

Every primitive here is linear, so its VJP is its transpose: reshape back, transpose by the
inverse permutation, sum a broadcast back (``unbroadcast``), slice a stack apart. The
variadic ``stack``/``concatenate`` take a joint JVP rule (zero tangents filled in once) and
a per-argnum VJP maker (each argument's slice of the cotangent).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np

from transforms.batching import defbatch
from transforms.core import Array, ArrayLike, Primitive, Tracer, arrays, native, native_types
from transforms.forward import defjvp, defjvp_joint
from transforms.reverse import defvjp, defvjp_argnum
from transforms.sparsity import defsparsity, index_rule
from transforms.sparsity import elementwise_rule as sparsity_elementwise

from . import _batching
from ._define import dtype_of, ndim_of, nondifferentiable, normalize_axes, shape_of

__all__ = [
    "reshape",
    "ravel",
    "transpose",
    "moveaxis",
    "broadcast_to",
    "unbroadcast",
    "expand_dims",
    "squeeze",
    "stack",
    "concatenate",
    "array",
    "asarray",
    "astype",
    "zeros_like",
    "ones_like",
]


# ---- reshape ----------------------------------------------------------------------------
# ndarray methods where the operand is one (NumPy's functions dispatch and then call them)
def _reshape_impl(x: Any, shape: int | Sequence[int], order: Literal["C", "F", "A"]) -> Any:
    if type(x) is np.ndarray:
        return x.reshape(shape, order=order)
    if not arrays.is_foreign(x):
        return np.reshape(x, shape, order=order)
    if order == "F":  # the C-order reshape of the reversed axes, reversed back
        reversed_shape = tuple(np.atleast_1d(shape))[::-1]
        return np.transpose(_foreign_reshape(np.transpose(x), reversed_shape))
    return _foreign_reshape(x, shape)  # ('A' is 'C': a lazy array has no memory layout)


def _foreign_reshape(x: Any, shape: int | Sequence[int]) -> Any:
    """A C-order reshape of another library's array, without NumPy's ``order=`` (Dask's has
    none). Dask reshapes by merging or splitting axes; another reshape goes through the
    flat array (a merge, then a split), and an empty array, which it cannot reshape, has no
    values to keep."""
    size = math.prod(np.shape(x))
    if size == 0:
        return np.zeros_like(x, shape=_resolve_shape(shape, size))
    try:
        return np.reshape(x, shape)
    except NotImplementedError:  # (Dask: "only supports operations that merge or split")
        return np.reshape(np.reshape(x, (-1,)), shape)


reshape_p = Primitive("reshape", _reshape_impl)
defjvp(reshape_p, lambda t, ans, x, shape, order: reshape(t, shape, order))
defvjp(reshape_p, lambda ans, x, shape, order: lambda ct: reshape(ct, shape_of(x), order))


def _resolve_shape(shape: int | Sequence[int], size: int) -> tuple[int, ...]:
    """``shape`` with a ``-1`` entry replaced by what makes ``size`` elements."""
    dims = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(n) for n in shape)
    if -1 in dims:
        known = math.prod(n for n in dims if n != -1)
        dims = tuple(size // known if known and n == -1 else max(n, 0) for n in dims)
    return dims


def _reshape_batch(
    values: Sequence[Any], dims: Sequence[int | None], *, shape: Any, order: str
) -> tuple[Any, int]:
    x, d = values[0], dims[0]
    assert d is not None
    size = shape_of(x)[d]
    new = _resolve_shape(shape, math.prod(shape_of(x)) // max(size, 1))
    if order == "F":  # the batch axis must vary slowest, i.e. come last
        x = moveaxis(x, d, -1)
        return reshape_p.bind(x, shape=(*new, size), order=order), len(new)
    return reshape_p.bind(_batching.to_front(x, d), shape=(size, *new), order=order), 0


defbatch(reshape_p, _reshape_batch)
defsparsity(reshape_p, index_rule(reshape_p))


def reshape(a: ArrayLike, shape: int | Sequence[int], order: str = "C") -> Array:
    """Differentiable ``numpy.reshape``."""
    a = operand(a)
    if shape_of(a) == shape:
        return a  # type: ignore[return-value]
    return reshape_p.bind(a, shape=shape, order=order)


def ravel(a: ArrayLike, order: str = "C") -> Array:
    """Differentiable ``numpy.ravel`` (a reshape)."""
    return reshape(a, (-1,), order)


# ---- transpose --------------------------------------------------------------------------
def _inverse_permutation(axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argsort(axes))


transpose_p = Primitive(
    "transpose",
    lambda x, axes: x.transpose(axes) if type(x) is np.ndarray else np.transpose(x, axes),
)
defsparsity(transpose_p, index_rule(transpose_p))
defjvp(transpose_p, lambda t, ans, x, axes: transpose_p.bind(t, axes=axes))
defvjp(
    transpose_p,
    lambda ans, x, axes: lambda ct: transpose_p.bind(ct, axes=_inverse_permutation(axes)),
)
defbatch(
    transpose_p,
    lambda values, dims, axes: (
        transpose_p.bind(_batching.to_front(values[0], dims[0]), axes=(0, *(a + 1 for a in axes))),
        0,
    ),
)


def transpose(a: ArrayLike, axes: Sequence[int] | None = None) -> Array:
    """Differentiable ``numpy.transpose``."""
    a = operand(a)
    ndim = ndim_of(a)
    perm = tuple(range(ndim))[::-1] if axes is None else tuple(int(i) % max(ndim, 1) for i in axes)
    if sorted(perm) != list(range(ndim)):
        raise ValueError(f"transpose: axes {axes} do not match an array of dimension {ndim}")
    if perm == tuple(range(ndim)):
        return a  # type: ignore[return-value]
    return transpose_p.bind(a, axes=perm)


def moveaxis(a: ArrayLike, source: int | Sequence[int], destination: int | Sequence[int]) -> Array:
    """Differentiable ``numpy.moveaxis`` (a transpose)."""
    a = operand(a)
    ndim = ndim_of(a)
    src = _axes_list(source, ndim)
    dst = _axes_list(destination, ndim)
    order = [n for n in range(ndim) if n not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return transpose(a, order)


def _axes_list(axis: int | Sequence[int], ndim: int) -> list[int]:
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    return [int(a) % ndim for a in axes]


# ---- broadcast_to and its transpose, unbroadcast -----------------------------------------
def _broadcast_impl(x: Any, shape: tuple[int, ...]) -> Any:
    """``np.broadcast_to``; a 0-d float or complex array (a full reduction's cotangent, the
    common case) is viewed with zero strides directly, without NumPy's Python-level checks
    (8x faster), read-only as NumPy's own view."""
    if type(x) is np.ndarray and x.ndim == 0 and x.dtype.kind in "fc":
        out = np.ndarray(shape, x.dtype, x, 0, (0,) * len(shape))
        out.flags.writeable = False
        return out
    return np.broadcast_to(x, shape)


broadcast_to_p = Primitive("broadcast_to", _broadcast_impl)
defjvp(broadcast_to_p, lambda t, ans, x, shape: broadcast_to(t, shape))
defvjp(broadcast_to_p, lambda ans, x, shape: lambda ct: unbroadcast(ct, shape_of(x)))


def _broadcast_to_batch(
    values: Sequence[Any], dims: Sequence[int | None], *, shape: tuple[int, ...]
) -> tuple[Any, int]:
    x = _batching.to_front(values[0], dims[0])
    x_shape = shape_of(x)
    aligned = (x_shape[0],) + (1,) * (len(shape) - len(x_shape) + 1) + x_shape[1:]
    return broadcast_to_p.bind(reshape(x, aligned), shape=(x_shape[0], *shape)), 0


defbatch(broadcast_to_p, _broadcast_to_batch)
defsparsity(broadcast_to_p, index_rule(broadcast_to_p))


def broadcast_to(array: ArrayLike, shape: int | Sequence[int]) -> Array:
    """Differentiable ``numpy.broadcast_to``."""
    array = operand(array)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if shape_of(array) == shape:
        return array  # type: ignore[return-value]
    return broadcast_to_p.bind(array, shape=shape)


def unbroadcast(ct: Any, shape: tuple[int, ...]) -> Any:
    """Sum the cotangent ``ct`` of a broadcast result back to an operand of ``shape``."""
    ct_shape = shape_of(ct)
    if ct_shape == shape:
        return ct
    lead = len(ct_shape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and ct_shape[lead + i] != 1
    )
    if axes:
        ct = ct.sum(axis=axes)  # an array's or a tracer's (a differentiable sum)
    return reshape(ct, shape)


# ---- expand_dims, squeeze: reshapes -------------------------------------------------------
def expand_dims(a: ArrayLike, axis: int | Sequence[int]) -> Array:
    """Differentiable ``numpy.expand_dims`` (a reshape)."""
    a = operand(a)
    shape = shape_of(a)
    axes = normalize_axes(axis, len(shape) + (1 if isinstance(axis, int) else len(axis)))
    new = list(shape)
    for ax in axes:
        new.insert(ax, 1)
    return reshape(a, tuple(new))


def squeeze(a: ArrayLike, axis: int | Sequence[int] | None = None) -> Array:
    """Differentiable ``numpy.squeeze`` (a reshape)."""
    a = operand(a)
    shape = shape_of(a)
    if axis is None:
        axes = tuple(i for i, n in enumerate(shape) if n == 1)
    else:
        axes = normalize_axes(axis, len(shape))
        for ax in axes:
            if shape[ax] != 1:
                raise ValueError(
                    f"squeeze: cannot select axis {ax} of shape {shape}: its size is not 1"
                )
    return reshape(a, tuple(n for i, n in enumerate(shape) if i not in axes))


# ---- stack, concatenate (variadic) --------------------------------------------------------
def _fill_zeros(tangents: Sequence[Any], args: Sequence[Any]) -> list[Any]:
    return [zeros_like(a) if t is None else t for t, a in zip(tangents, args, strict=True)]


stack_p = Primitive("stack", lambda *xs, axis: np.stack(xs, axis))
defsparsity(stack_p, index_rule(stack_p))
defjvp_joint(stack_p, lambda ts, ans, *xs, axis: stack_p.bind(*_fill_zeros(ts, xs), axis=axis))


def _stack_vjp(argnum: int, ans: Any, *xs: Any, axis: int) -> Callable[[Any], Any]:
    index = (slice(None),) * axis + (argnum,)
    dtype = dtype_of(xs[argnum])
    return lambda ct: _cast_back(ct[index], dtype)


def _cast_back(ct: Any, dtype: np.dtype[Any]) -> Any:
    """A cotangent in its operand's dtype (a float32 operand joined with float64 ones; the
    real part for a real operand joined with complex ones)."""
    if dtype_of(ct) == dtype or not np.issubdtype(dtype, np.inexact):
        return ct
    if np.issubdtype(dtype_of(ct), np.complexfloating) and not np.issubdtype(
        dtype, np.complexfloating
    ):
        ct = ct.real
    return ct if dtype_of(ct) == dtype else astype(ct, dtype)


defvjp_argnum(stack_p, _stack_vjp)
defbatch(
    stack_p,
    lambda values, dims, axis: (
        stack_p.bind(*_batching.materialized(values, dims), axis=axis + 1),
        0,
    ),
)


def stack(arrays: Sequence[ArrayLike], axis: int = 0) -> Array:
    """Differentiable ``numpy.stack``."""
    xs = [operand(x) for x in native(arrays)]  # a DataFrame: its rows, not its column labels
    if not xs:
        raise ValueError("need at least one array to stack")
    axis = normalize_axes(axis, ndim_of(xs[0]) + 1)[0]
    return stack_p.bind(*xs, axis=axis)


concatenate_p = Primitive("concatenate", lambda *xs, axis: np.concatenate(xs, axis))
defsparsity(concatenate_p, index_rule(concatenate_p))
defjvp_joint(
    concatenate_p,
    lambda ts, ans, *xs, axis: concatenate_p.bind(*_fill_zeros(ts, xs), axis=axis),
)


def _concatenate_vjp(argnum: int, ans: Any, *xs: Any, axis: int) -> Callable[[Any], Any]:
    start = sum(shape_of(x)[axis] for x in xs[:argnum])
    index = (slice(None),) * axis + (slice(start, start + shape_of(xs[argnum])[axis]),)
    dtype = dtype_of(xs[argnum])
    return lambda ct: _cast_back(ct[index], dtype)


defvjp_argnum(concatenate_p, _concatenate_vjp)
defbatch(
    concatenate_p,
    lambda values, dims, axis: (
        concatenate_p.bind(*_batching.materialized(values, dims), axis=axis + 1),
        0,
    ),
)


def concatenate(arrays: Sequence[ArrayLike], axis: int | None = 0) -> Array:
    """Differentiable ``numpy.concatenate``."""
    xs = [operand(x) for x in native(arrays)]  # a DataFrame: its rows, not its column labels
    if not xs:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        xs = [ravel(x) for x in xs]
        axis = 0
    axis = normalize_axes(axis, ndim_of(xs[0]))[0]
    return concatenate_p.bind(*xs, axis=axis)


# ---- array / asarray of (nested) lists that hold tracers -----------------------------------
def _contains_tracer(x: Any) -> bool:
    """Whether ``x`` holds a tracer, or another library's array (``np.array`` would compute
    it): either is stacked."""
    if isinstance(x, Tracer) or arrays.is_foreign(x):
        return True
    return isinstance(x, (list, tuple)) and any(_contains_tracer(e) for e in x)


def array(object: Any, dtype: Any = None) -> Array:
    """Differentiable ``numpy.array``: nested lists holding tracers become a stack of them."""
    if isinstance(object, Tracer) or arrays.is_foreign(object):  # (Dask's stays Dask's)
        return object if dtype is None else astype(object, dtype)
    if not _contains_tracer(object):
        return np.array(object, dtype=dtype)
    stacked = stack([array(e) for e in object])
    return stacked if dtype is None else astype(stacked, dtype)


def asarray(a: Any, dtype: Any = None) -> Array:
    """Differentiable ``numpy.asarray``."""
    if isinstance(a, np.ndarray) and (dtype is None or a.dtype == dtype):
        return a
    return array(a, dtype)


def operand(x: Any) -> Any:
    """A public function's array argument: a list or tuple (which may hold tracers) becomes an
    array, and so does a foreign array-like (a pandas object, a memoryview: ``native``, so a
    composite never computes with pandas' operators); arrays, tracers and scalars pass
    unchanged (each family's first step)."""
    if type(x) in native_types or isinstance(x, Tracer):
        return x
    return array(x) if isinstance(x, (list, tuple)) else native(x)


def operands(*xs: Any) -> list[Any]:
    """``operand`` of each of ``xs`` (its test written out: the binary functions' hot path)."""
    return [x if type(x) in native_types or isinstance(x, Tracer) else operand(x) for x in xs]


# ---- dtype conversion ---------------------------------------------------------------------
def _astype_impl(x: Any, dtype: Any) -> Any:
    return x.astype(dtype) if type(x) is np.ndarray else arrays.asarray(x).astype(dtype)


astype_p = Primitive("astype", _astype_impl)
defsparsity(astype_p, sparsity_elementwise())
defjvp(astype_p, lambda t, ans, x, dtype: astype_p.bind(t, dtype=dtype))


def _astype_vjp(ans: Any, x: Any, dtype: Any) -> Callable[[Any], Any]:
    """Cast the cotangent back; from a complex result to a real input, its real part (the
    transpose of the real-to-complex embedding under the pairing Re(sum(a * b)))."""
    real_input = not np.issubdtype(dtype_of(x), np.complexfloating)
    if real_input and np.issubdtype(np.dtype(dtype), np.complexfloating):
        return lambda ct: astype_p.bind(ct.real, dtype=dtype_of(x))
    return lambda ct: astype_p.bind(ct, dtype=dtype_of(x))


defvjp(astype_p, _astype_vjp)
_astype_nondiff_p = nondifferentiable("astype_to_integer", _astype_impl)


for _p in (astype_p, _astype_nondiff_p):
    defbatch(_p, _batching.elementwise_rule(_p))


def astype(x: ArrayLike, dtype: Any) -> Array:
    """``x.astype(dtype)``; casting to an integer or bool dtype has no derivative."""
    dtype = np.dtype(dtype)
    if not np.issubdtype(dtype, np.inexact):
        return _astype_nondiff_p.bind(x, dtype=dtype)
    return astype_p.bind(operand(x), dtype=dtype)


# ---- constants shaped like a value ----------------------------------------------------------
zeros_like_p = nondifferentiable("zeros_like", lambda x, dtype: np.zeros_like(x, dtype=dtype))
ones_like_p = nondifferentiable("ones_like", lambda x, dtype: np.ones_like(x, dtype=dtype))
defbatch(zeros_like_p, _batching.elementwise_rule(zeros_like_p))
defbatch(ones_like_p, _batching.elementwise_rule(ones_like_p))


def zeros_like(a: ArrayLike, dtype: Any = None) -> Array:
    """``numpy.zeros_like``: a constant (no derivative flows through it)."""
    return zeros_like_p.bind(operand(a), dtype=dtype)


def ones_like(a: ArrayLike, dtype: Any = None) -> Array:
    """``numpy.ones_like``: a constant (no derivative flows through it)."""
    return ones_like_p.bind(operand(a), dtype=dtype)


# ---- broadcasting and dtypes in rules: every family's tangents and cotangents ---------------
def cast_to(x: Any, dtype: np.dtype[Any]) -> Any:
    """``x`` as ``dtype`` (if inexact), differentiably: complex to real keeps the real part;
    real to complex adds ``0j`` (an ``add``, whose VJP takes the real part back)."""
    have = dtype_of(x)
    if have == dtype or dtype.kind not in "fc":
        return x
    if have.kind == "c" and dtype.kind != "c":
        x = x.real
    elif dtype.kind == "c" and have.kind != "c":
        x = x + 0j
    return x if dtype_of(x) == dtype else astype(x, dtype)


def in_dtype_of(operand: Any, ans: Any, pullback: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``pullback`` returning its cotangent in ``operand``'s dtype (the cotangent contract)
    when the primitive's result has another: the real part for a real operand of a complex
    result, float32 for a float32 operand of a float64 one. Decided once, at forward time."""
    dtype = dtype_of(operand)
    if dtype == dtype_of(ans):
        return pullback
    return lambda ct: cast_to(pullback(ct), dtype)


def to_output(term: Any, ans: Any) -> Any:
    """A one-operand tangent term with the output's shape and dtype."""
    shape = shape_of(ans)
    if shape_of(term) != shape:
        term = broadcast_to(term, shape)
    dtype = dtype_of(ans)
    return term if dtype_of(term) == dtype else cast_to(term, dtype)


def to_operand(ct: Any, operand: Any) -> Any:
    """A cotangent summed back to the operand's shape, with the operand's dtype."""
    return cast_to(unbroadcast(ct, shape_of(operand)), dtype_of(operand))


# ---- where: the condition is a parameter-like operand with no derivative ------------------
where_p = Primitive("where", np.where)
defbatch(where_p, _batching.elementwise_rule(where_p))
defsparsity(where_p, sparsity_elementwise(zero=(0,)))  # both branches: a union
defjvp(
    where_p,
    None,
    lambda t, ans, c, x, y: to_output(where(c, t, 0), ans),
    lambda t, ans, c, x, y: to_output(where(c, 0, t), ans),
)
defvjp(
    where_p,
    None,
    lambda ans, c, x, y: lambda ct: to_operand(where(c, ct, 0), x),
    lambda ans, c, x, y: lambda ct: to_operand(where(c, 0, ct), y),
)


def where(condition: ArrayLike, x: ArrayLike, y: ArrayLike) -> Array:
    """Differentiable three-argument ``numpy.where`` (the condition carries no derivative)."""
    c, a, b = (operand(v) for v in (condition, x, y))
    return where_p.bind(c, a, b)
