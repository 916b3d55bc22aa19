"""Sparse Jacobians and Hessians: sparsity detection, coloring, compressed products.

Detection runs the function once under the sparsity interpreter (``transforms.sparsity``),
which follows, for every element, the set of inputs it depends on (and, for Hessians, the
pairs of inputs that interact in it). A coloring groups the columns (or rows) that share no
row (column), so that one JVP (VJP, Hessian-vector product) per color computes them all at
once: ``vmap`` of ``jvp``/``vjp``/``hvp`` over the colors' 0/1 seed vectors; decompression
reads each non-zero where its color put it. The function returned detects and colors once
per argument shapes, and reuses both.

Results are ``scipy.sparse.csr_array`` (SciPy: the ``scipy`` extra). Under an outer
transform (``vmap``, ``grad``) the non-zero values are traced, and the result is a
``SparseMatrix``: a pytree whose one leaf is the values, with a differentiable ``@``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, ParamSpec

import numpy as np

import transforms.numpy as tnp
from transforms.core import ArrayLibraryError, Tracer, arrays, concrete, new_trace
from transforms.core.tree_util import register_pytree_node, tree_flatten
from transforms.numpy._define import dtype_of
from transforms.sparsity import Pattern, SparsityTrace, SparsityTracer, input_tracer, scipy_sparse

from ._api import hvp, jvp, vjp
from ._args import check_differentiable, normalize_argnums
from ._coloring import column_coloring, column_positions, star_coloring, star_positions
from ._vmap import vmap

if TYPE_CHECKING:
    from scipy.sparse import csr_array

__all__ = [
    "SparseMatrix",
    "hessian_sparsity",
    "jacobian_sparsity",
    "sparse_hessian",
    "sparse_jacobian",
]

Mode = Literal["auto", "forward", "reverse"]
P = ParamSpec("P")


# ---- detection ------------------------------------------------------------------------------
def _input(args: tuple[Any, ...], argnums: int, name: str) -> tuple[int, Any]:
    if not isinstance(argnums, int):
        raise TypeError(
            f"{name}: argnums must be one int (the position of one array argument), got "
            f"{argnums!r}; concatenate several inputs into one array"
        )
    (position,) = normalize_argnums(argnums, len(args), name)
    x = args[position]
    if arrays.is_foreign(x):  # its result is a scipy.sparse matrix, in this process's memory
        what = f"{name} (its result is a scipy.sparse matrix)"
        raise ArrayLibraryError(what, arrays.library_of(x))
    if not isinstance(x, (np.ndarray, Tracer, float, int, complex, np.generic)):
        raise TypeError(
            f"{name}: argument {position} must be an array, got {type(x).__name__}; "
            "flatten a pytree argument into one array (e.g. with tnp.concatenate)"
        )
    check_differentiable(x, name, f"argument {position}")
    value = np.asarray(concrete(x))
    if value.shape != np.shape(x):
        # a value batched by an outer vmap: detection follows it one example at a time
        return position, x
    return position, value


def _refuse_complex(x: Any, position: int, name: str) -> None:
    """A colored Jacobian pushes real seeds (jacfwd's columns, or jacrev's rows): for a
    complex input the imaginary directions would be dropped, silently (TypeError, as
    ``jacfwd`` without ``holomorphic=True``)."""
    dtype = dtype_of(x)
    if dtype.kind == "c":
        raise TypeError(
            f"{name} requires a real input, but argument {position} has dtype {dtype}: the "
            "imaginary directions would be dropped. Fix: pass the real and imaginary parts as "
            f"one real array (tnp.concatenate([z.real, z.imag])), or use jacfwd(..., "
            "holomorphic=True) for a holomorphic function"
        )


def _detect(
    fun: Callable[..., Any], argnums: int, args: tuple[Any, ...], second_order: bool, name: str
) -> tuple[Pattern, tuple[int, ...], int]:
    """The output's pattern and shape, and the number of inputs, for ``fun(*args)``."""
    position, x = _input(args, argnums, name)
    n = int(np.prod(np.shape(x)))
    with new_trace(lambda level: SparsityTrace(level, n, second_order, name)) as trace:
        full = list(args)
        full[position] = input_tracer(trace, x, 0)
        out = fun(*full)
    if not isinstance(out, (np.ndarray, Tracer, float, int, complex, np.generic)):
        raise TypeError(
            f"{name}: the function must return one array, got {type(out).__name__}; "
            "concatenate several outputs into one array"
        )
    shape = tuple(np.shape(out))
    if isinstance(out, SparsityTracer) and out._trace is trace:
        return out.pattern, shape, n
    empty = scipy_sparse().csr_array((int(np.prod(shape)), n), dtype=bool)
    h = scipy_sparse().csr_array((empty.shape[0], n * n), dtype=bool) if second_order else None
    return Pattern(empty, h, n), shape, n


def jacobian_sparsity(fun: Callable[P, Any], argnums: int = 0) -> Callable[P, csr_array]:
    """The structural non-zeros of ``fun``'s Jacobian in argument ``argnums``, by tracing.

    Returns a function that, called with ``fun``'s arguments, gives a boolean
    ``scipy.sparse.csr_array`` of shape ``(out.size, in.size)`` (row-major flattening of the
    output and the input). It is exact for programs whose operations do not depend on the
    values (a Python ``if`` on a value gives the pattern of the branch taken at these
    arguments; ``tnp.where``, ``maximum`` and the like give the union of both sides).

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> f = lambda x: x[1:] - x[:-1] ** 2
        >>> T.jacobian_sparsity(f)(np.ones(4)).toarray()
        array([[ True,  True, False, False],
               [False,  True,  True, False],
               [False, False,  True,  True]])
    """

    def sparsity(*args: P.args, **kwargs: P.kwargs) -> csr_array:
        pattern, _, _ = _detect(_with(fun, kwargs), argnums, args, False, "jacobian_sparsity")
        return _canonical(pattern.g)

    return sparsity


def hessian_sparsity(fun: Callable[P, Any], argnums: int = 0) -> Callable[P, csr_array]:
    """The structural non-zeros of the Hessian of a scalar ``fun`` in argument ``argnums``.

    Returns a function that gives a symmetric boolean ``scipy.sparse.csr_array`` of shape
    ``(in.size, in.size)``: second-order detection, where linear operations contribute no
    pair, products contribute the pairs of their factors' inputs, and nonlinear functions
    the pairs of their argument's.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> f = lambda x: tnp.sum(x[1:] * x[:-1]) + tnp.sum(x)
        >>> T.hessian_sparsity(f)(np.ones(3)).toarray()
        array([[False,  True, False],
               [ True, False,  True],
               [False,  True, False]])
    """

    def sparsity(*args: P.args, **kwargs: P.kwargs) -> csr_array:
        return _hessian_pattern(_with(fun, kwargs), argnums, args, "hessian_sparsity")

    return sparsity


def _with(fun: Callable[..., Any], kwargs: dict[str, Any]) -> Callable[..., Any]:
    """``fun`` with its keyword arguments bound (detection and products pass positions)."""
    return functools.partial(fun, **kwargs) if kwargs else fun


def _hessian_pattern(
    fun: Callable[..., Any], argnums: int, args: tuple[Any, ...], name: str
) -> csr_array:
    pattern, shape, n = _detect(fun, argnums, args, True, name)
    _check_scalar(name, shape)
    return _square(pattern, n)


def _check_scalar(name: str, shape: tuple[int, ...]) -> None:
    if int(np.prod(shape)) != 1:
        raise TypeError(
            f"{name}: the function must return a scalar (a Hessian is of a scalar "
            f"function), got an output of shape {shape}; for a vector function use "
            "sparse_jacobian, or sum its outputs"
        )


def _square(pattern: Pattern, n: int) -> csr_array:
    """The (n, n) pattern of a one-element value's second-order row."""
    cols = pattern.h[[0]].indices.astype(np.int64)
    rows, cols = np.divmod(cols, n)
    data = np.ones(rows.size, dtype=bool)
    return _canonical(scipy_sparse().csr_array((data, (rows, cols)), shape=(n, n)))


def _canonical(pattern: Any) -> csr_array:
    out = scipy_sparse().csr_array(pattern, dtype=bool)
    out.sum_duplicates()
    out.sort_indices()
    return out  # type: ignore[no-any-return]


def _given(sparsity: Any, shape: tuple[int, int] | None, n: int, name: str) -> csr_array:
    """A user's ``sparsity=`` as a canonical boolean csr_array, its shape checked."""
    sparse = scipy_sparse()
    if not sparse.issparse(sparsity):
        sparsity = np.asarray(sparsity)
        if sparsity.ndim != 2:
            raise ValueError(
                f"{name}: sparsity must be a 2-D (sparse) boolean array, got shape {sparsity.shape}"
            )
    rows, cols = sparsity.shape
    if cols != n or (shape is not None and (rows, cols) != shape):
        expected = f"({shape[0]}, {shape[1]})" if shape is not None else f"(out.size, {n})"
        raise ValueError(
            f"{name}: sparsity has shape {(rows, cols)}, but the derivative has shape "
            f"{expected} (out.size, in.size, row-major flattening); pass the pattern of "
            "this function's derivative, e.g. from jacobian_sparsity/hessian_sparsity"
        )
    return _canonical(sparse.csr_array(sparsity) != 0)


# ---- the result ------------------------------------------------------------------------------
@dataclass(frozen=True)
class SparseMatrix:
    """A sparse matrix in CSR form whose values may be traced (the result of
    ``sparse_jacobian`` / ``sparse_hessian`` under an outer transform).

    A pytree with one leaf, ``data`` (the non-zeros in CSR order; ``vmap`` adds a leading
    batch axis to it); ``indices``, ``indptr`` and ``shape`` are its fixed structure.
    ``A @ v`` and ``A.todense()`` are differentiable; ``A.tocsr()`` gives SciPy's
    ``csr_array`` of concrete values.
    """

    data: Any
    indices: np.ndarray[Any, np.dtype[np.int64]]
    indptr: np.ndarray[Any, np.dtype[np.int64]]
    shape: tuple[int, int]

    def _rows(self) -> np.ndarray[Any, np.dtype[np.int64]]:
        return np.repeat(np.arange(self.shape[0]), np.diff(self.indptr))

    def __matmul__(self, v: Any) -> Any:
        """``A @ v`` for a vector (or a matrix) ``v``: a segment sum of ``data * v[indices]``."""
        terms = (
            self.data * v[self.indices]
            if np.ndim(v) == 1
            else (self.data[:, None] * v[self.indices])
        )
        out = tnp.zeros((self.shape[0], *np.shape(v)[1:]), dtype=_dtype(terms))
        return tnp.at(out)[self._rows()].add(terms)

    def todense(self) -> Any:
        """The dense ``(m, n)`` matrix."""
        out = tnp.zeros(self.shape, dtype=_dtype(self.data))
        return tnp.at(out)[self._rows(), self.indices].add(self.data)

    def toarray(self) -> Any:
        """The dense ``(m, n)`` matrix (SciPy's name for ``todense``)."""
        return self.todense()

    def tocsr(self) -> csr_array:
        """SciPy's ``csr_array`` (of concrete values)."""
        data = np.asarray(concrete(self.data))
        return scipy_sparse().csr_array(  # type: ignore[no-any-return]
            (data, self.indices, self.indptr), shape=self.shape
        )


def _dtype(x: Any) -> Any:
    return x.dtype if isinstance(x, (np.ndarray, Tracer)) else np.result_type(x)


class _Structure:
    """A SparseMatrix's fixed structure, as a pytree's static data (hashed by identity)."""

    __slots__ = ("indices", "indptr", "shape")

    def __init__(self, a: SparseMatrix) -> None:
        self.indices, self.indptr, self.shape = a.indices, a.indptr, a.shape


def _flatten_sparse(a: SparseMatrix) -> tuple[tuple[Any], _Structure]:
    return (a.data,), _Structure(a)


def _unflatten_sparse(aux: Hashable, children: list[Any]) -> SparseMatrix:
    assert isinstance(aux, _Structure)
    return SparseMatrix(children[0], aux.indices, aux.indptr, aux.shape)


register_pytree_node(SparseMatrix, _flatten_sparse, _unflatten_sparse)


def _result(data: Any, pattern: Any) -> csr_array | SparseMatrix:
    """SciPy's csr_array of the non-zeros, or a SparseMatrix if they are traced."""
    if isinstance(data, Tracer):
        return SparseMatrix(
            data, pattern.indices.astype(np.int64), pattern.indptr.astype(np.int64), pattern.shape
        )
    out: csr_array = scipy_sparse().csr_array(
        (np.asarray(data), pattern.indices, pattern.indptr), shape=pattern.shape
    )
    return out


def _signature(args: Any) -> Any:
    leaves, tree = tree_flatten(args)
    return str(tree), tuple((np.shape(a), str(np.result_type(concrete(a)))) for a in leaves)


def _seeds(
    colors: np.ndarray[Any, Any], shape: tuple[int, ...], dtype: Any, cache: dict[Any, Any]
) -> Any:
    """One 0/1 seed per color (``(colors, *shape)``): the elements of that color (made once
    per plan, read-only)."""
    key = (shape, str(dtype))
    if key in cache:
        return cache[key]
    ncolors = int(colors.max()) + 1 if colors.size else 0
    seeds = np.zeros((ncolors, colors.size), dtype=dtype)
    seeds[colors, np.arange(colors.size)] = 1
    seeds = seeds.reshape((ncolors, *shape))
    seeds.flags.writeable = False
    cache[key] = seeds
    return seeds


# ---- sparse Jacobians --------------------------------------------------------------------------
@dataclass(frozen=True)
class _Plan:
    """What a sparse derivative reuses per argument shapes: the pattern, its coloring, where
    each non-zero is read in the compressed products, and the seeds."""

    pattern: Any
    forward: bool
    colors: np.ndarray[Any, np.dtype[np.int64]]
    read: tuple[Any, Any]  # (color index, element index) of each non-zero in the products
    seeds: dict[Any, Any] = field(default_factory=dict)


def sparse_jacobian(
    fun: Callable[P, Any],
    argnums: int = 0,
    sparsity: Any = None,
    mode: Mode = "auto",
) -> Callable[P, csr_array | SparseMatrix]:
    """The Jacobian of ``fun`` in argument ``argnums``, as a sparse matrix, by coloring.

    Columns that share no row are pushed together: one JVP per color of a column coloring
    (``mode="forward"``), or one VJP per color of a row coloring (``mode="reverse"``);
    ``"auto"`` takes the mode with fewer colors. The function returned detects the sparsity
    (unless ``sparsity=`` gives it: a boolean ``(out.size, in.size)`` array or sparse array)
    and colors on its first call with arguments of given shapes, and reuses both afterwards.

    Returns:
        A function of ``fun``'s arguments giving a float ``scipy.sparse.csr_array`` of shape
        ``(out.size, in.size)`` equal to ``jacfwd(fun)(x).reshape(out.size, in.size)`` (a
        ``SparseMatrix`` when the arguments are traced by an outer transform).

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> f = lambda x: x[1:] ** 2 - x[:-1]
        >>> J = T.sparse_jacobian(f)(np.arange(4.0))
        >>> J.toarray()
        array([[-1.,  2.,  0.,  0.],
               [ 0., -1.,  4.,  0.],
               [ 0.,  0., -1.,  6.]])
    """
    if mode not in ("auto", "forward", "reverse"):
        raise ValueError(
            f"sparse_jacobian: mode must be 'auto', 'forward' or 'reverse', got {mode!r}"
        )
    plans: dict[Any, _Plan] = {}

    def plan_for(fun: Callable[..., Any], args: tuple[Any, ...], key: Any, n: int) -> _Plan:
        plan = plans.get(key)
        if plan is None:
            if sparsity is None:
                pattern = jacobian_sparsity(fun, argnums)(*args)
            else:
                pattern = _given(sparsity, None, n, "sparse_jacobian")
            plan = _plan_jacobian(pattern, mode)
            plans[key] = plan
        return plan

    def jacobian(*args: P.args, **kwargs: P.kwargs) -> csr_array | SparseMatrix:
        position, x0 = _input(args, argnums, "sparse_jacobian")
        _refuse_complex(x0, position, "sparse_jacobian")
        bound = _with(fun, kwargs)
        plan = plan_for(bound, args, _signature((args, kwargs)), x0.size)
        x = args[position]

        def f(x: Any) -> Any:
            full = list(args)
            full[position] = x
            return bound(*full)

        pattern = plan.pattern
        m = pattern.shape[0]
        if plan.forward:
            seeds = _seeds(plan.colors, x0.shape, x0.dtype, plan.seeds)
            products = vmap(lambda t: jvp(f, (x,), (t,))[1])(seeds)
        else:
            out, pullback = vjp(f, x)
            if int(np.size(out)) != m:
                _mismatch(pattern.shape, int(np.size(out)), x0.size)
            seeds = _seeds(plan.colors, tuple(np.shape(out)), _dtype(out), plan.seeds)
            products = vmap(lambda w: pullback(w)[0])(seeds)
        products = tnp.reshape(products, (len(seeds), -1))
        if plan.forward and np.shape(products)[1] != m:
            _mismatch(pattern.shape, int(np.shape(products)[1]), x0.size)
        if pattern.nnz == 0:
            return _result(np.zeros(0, dtype=np.result_type(products)), pattern)
        return _result(products[plan.read], pattern)

    return jacobian


def _mismatch(shape: tuple[int, int], m: int, n: int) -> None:
    raise ValueError(
        f"sparse_jacobian: sparsity has shape {shape}, but the Jacobian has shape ({m}, {n}) "
        "(out.size, in.size); pass the pattern of this function's Jacobian"
    )


def _plan_jacobian(pattern: Any, mode: Mode) -> _Plan:
    forward = mode == "forward"
    if mode in ("auto", "forward"):
        colors = column_coloring(pattern)
        forward = True
    if mode in ("auto", "reverse"):
        row_colors = column_coloring(pattern.T)
        if mode == "reverse" or _count(row_colors) < _count(colors):
            colors, forward = row_colors, False
    if forward:
        rows, color_of_column = column_positions(pattern, colors)
        read = (color_of_column, rows)  # (J S)[i, color[j]], the products stacked as (color, i)
    else:
        rows = np.repeat(np.arange(pattern.shape[0]), np.diff(pattern.indptr))
        read = (colors[rows], pattern.indices.astype(np.int64))  # (W J)[color[i], j]
    return _Plan(pattern, forward, colors, read)


def _count(colors: np.ndarray[Any, Any]) -> int:
    return int(colors.max()) + 1 if colors.size else 0


# ---- sparse Hessians ---------------------------------------------------------------------------
def sparse_hessian(
    fun: Callable[P, Any], argnums: int = 0, sparsity: Any = None
) -> Callable[P, csr_array | SparseMatrix]:
    """The Hessian of a scalar ``fun`` in argument ``argnums``, as a sparse matrix.

    A star coloring of the (detected, or given by ``sparsity=``) symmetric pattern lets one
    Hessian-vector product per color recover every entry (a tridiagonal Hessian takes 3);
    detection and coloring happen once per argument shapes.

    Returns:
        A function of ``fun``'s arguments giving a float ``scipy.sparse.csr_array`` of shape
        ``(in.size, in.size)`` equal to the dense Hessian (a ``SparseMatrix`` under an outer
        transform).

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> f = lambda x: tnp.sum(x[1:] * x[:-1] ** 2)
        >>> T.sparse_hessian(f)(np.array([1.0, 2.0, 3.0])).toarray()
        array([[4., 2., 0.],
               [2., 6., 4.],
               [0., 4., 0.]])
    """
    plans: dict[Any, _Plan] = {}

    def hessian(*args: P.args, **kwargs: P.kwargs) -> csr_array | SparseMatrix:
        position, x0 = _input(args, argnums, "sparse_hessian")
        _refuse_complex(x0, position, "sparse_hessian")
        bound = _with(fun, kwargs)
        key = _signature((args, kwargs))
        plan = plans.get(key)
        if plan is None:
            if sparsity is None:
                pattern = _hessian_pattern(bound, argnums, args, "sparse_hessian")
            else:
                pattern = _given(sparsity, (x0.size, x0.size), x0.size, "sparse_hessian")
            colors = star_coloring(pattern)
            rows, cols = star_positions(pattern, colors)
            plan = plans[key] = _Plan(pattern, False, colors, (cols, rows))
        pattern = plan.pattern
        x = args[position]

        def f(x: Any) -> Any:
            full = list(args)
            full[position] = x
            out = bound(*full)
            _check_scalar("sparse_hessian", tuple(np.shape(out)))
            return out

        if pattern.nnz == 0:
            f(x)
            return _result(np.zeros(0, dtype=x0.dtype), pattern)
        seeds = _seeds(plan.colors, x0.shape, x0.dtype, plan.seeds)
        products = vmap(lambda v: hvp(f, (x,), (v,))[1][0])(seeds)
        products = tnp.reshape(products, (len(seeds), -1))
        return _result(products[plan.read], pattern)

    return hessian
