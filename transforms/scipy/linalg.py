"""``transforms.scipy.linalg``: ``scipy.linalg``'s names, differentiable in every mode and nesting.

``import transforms.scipy.linalg as tsl`` in place of ``scipy.linalg``. The factorisations
NumPy has are ``transforms.numpy.linalg``'s primitives (``cholesky``, ``eigh``, ``inv``,
``det``, with their rules and conventions); the new primitives are ``solve_triangular``,
``lu_factor``, ``expm``, ``logm``, ``sqrtm`` and ``solve_sylvester``, each with JVP, VJP and
batching rules written with differentiable operations (the rules call the primitives
themselves, so they nest to any order). ``cho_factor``, ``cho_solve``, ``lu_solve``,
``cholesky``, ``eigh``, ``inv``, ``det`` and ``block_diag`` are composites.

Conventions:

- Every function broadcasts over leading (stack) dimensions, as SciPy's do since 1.15.
- ``solve_triangular`` reads one triangle of ``a`` (and not its diagonal with
  ``unit_diagonal=True``): the other entries get a zero cotangent, as they have no effect.
- ``expm`` and ``logm`` are differentiated by their Fréchet derivatives, computed exactly by
  the block-triangular identity ``f([[A, E], [0, A]]) = [[f(A), L_f(A, E)], [0, f(A)]]``; the
  transpose of ``L_f(A, .)`` is ``L_f(A^T, .)``. ``sqrtm``'s tangent solves the Sylvester
  equation ``X dX + dX X = dA``. ``logm`` and ``sqrtm`` need ``A`` without eigenvalues on
  the closed negative real axis (their principal branch), ``sqrtm``'s derivative also
  ``X`` without opposite eigenvalues (it is singular at a singular ``A``).
- ``lu_factor``'s pivots are piecewise constant (no derivative); ``lu`` is differentiable
  where the pivoting does not change, for square non-singular matrices.
- A complex VJP is the transpose of the JVP under ``Re(sum(a * b))``, no conjugation (the
  package's convention).
- Arrays of another library (Dask): the composites of ``transforms.numpy.linalg``'s
  primitives run on its linear algebra (``cholesky``, ``cho_factor``, ``inv``), and so does
  ``solve_triangular`` (a ``solve`` of the triangle read, the same solution to rounding);
  SciPy's own functions take NumPy arrays only (they ``np.asarray`` their operands, which
  would compute a Dask array whole), so the other new primitives raise ``ArrayLibraryError``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any, Literal, overload

import numpy as np
import scipy.linalg as _sl

import transforms.numpy as tnp
from transforms.core import ArrayLibraryError
from transforms.core.arrays import is_foreign, library_of
from transforms.extend import (
    Primitive,
    cast_to,
    defbatch,
    defjvp,
    defvjp,
    dtype_of,
    elementwise_rule,
    in_dtype_of,
    ndim_of,
    nondifferentiable,
    shape_of,
    to_front,
    unbroadcast,
)
from transforms.numpy._define import is_complex as _is_complex
from transforms.numpy._linalg import solve_p
from transforms.numpy._shape import operand as _operand
from transforms.sparsity import defsparsity, dense_rule
from transforms.taylor import deftaylor, ode_rule
from transforms.typing import Array, ArrayLike

__all__ = [
    "block_diag",
    "cho_factor",
    "cho_solve",
    "cholesky",
    "det",
    "eigh",
    "expm",
    "inv",
    "logm",
    "lu_factor",
    "lu_solve",
    "solve_sylvester",
    "solve_triangular",
    "sqrtm",
]

Trans = Literal[0, 1, 2, "N", "T", "C"]


# ---- helpers ------------------------------------------------------------------------------
def _mT(x: Any) -> Any:
    return tnp.swapaxes(x, -1, -2)


def _conj(x: Any) -> Any:
    return tnp.conj(x) if _is_complex(x) else x


def _require_square(a: Any, name: str) -> None:
    shape = shape_of(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(
            f"transforms.scipy.linalg.{name}: expected a square matrix (or a stack of them) "
            f"in the last two dimensions, got shape {shape}"
        )


def _stacked(fn: Callable[..., Any], *arrays: Any, core: Sequence[int], **kwargs: Any) -> Any:
    """``fn`` applied matrix by matrix over the broadcast leading dimensions of ``arrays``
    (raw NumPy; ``core[i]`` is the number of core dimensions of ``arrays[i]``): SciPy's own
    batching, for any SciPy version. SciPy's functions take NumPy arrays only: an array of
    another library is refused, never computed."""
    for a in arrays:
        if is_foreign(a):
            name = getattr(fn, "__name__", "function")
            raise ArrayLibraryError(
                f"scipy.linalg.{name} (SciPy's, on NumPy arrays)", library_of(a)
            )
    arrays = tuple(np.asarray(a) for a in arrays)
    leads = [a.shape[: a.ndim - c] for a, c in zip(arrays, core, strict=True)]
    lead = np.broadcast_shapes(*leads)
    if not lead:
        return fn(*arrays, **kwargs)
    if 0 in lead:  # no matrix: the result's core shape and dtype from identity matrices
        probe = fn(*(np.eye(*a.shape[a.ndim - 2 :], dtype=a.dtype) for a in arrays), **kwargs)
        parts = probe if isinstance(probe, tuple) else (probe,)
        empty = tuple(np.empty(lead + np.shape(p), np.asarray(p).dtype) for p in parts)
        return empty if isinstance(probe, tuple) else empty[0]
    full = [
        np.broadcast_to(a, lead + a.shape[a.ndim - c :]) for a, c in zip(arrays, core, strict=True)
    ]
    results = [fn(*(a[i] for a in full), **kwargs) for i in np.ndindex(lead)]
    if isinstance(results[0], tuple):
        return tuple(
            np.stack(parts).reshape(lead + parts[0].shape) for parts in zip(*results, strict=True)
        )
    return np.stack(results).reshape(lead + np.shape(results[0]))


def _front_rule(primitive: Primitive[Any]) -> Any:
    """Batch a one-operand primitive of several results that broadcasts over stacks."""

    def rule(values: Sequence[Any], dims: Sequence[int | None], **params: Any) -> Any:
        out = primitive.bind(to_front(values[0], dims[0]), **params)
        return out, (0,) * len(out)

    return rule


def _mask(x: Any, lower: bool, strict: bool) -> np.ndarray[Any, Any]:
    """The 0/1 mask of a triangle of the matrices of ``x``, in ``x``'s real dtype."""
    n = shape_of(x)[-1]
    ones = np.ones((n, n), np.finfo(dtype_of(x)).dtype)
    k = -1 if strict else 0
    return np.tril(ones, k) if lower else np.triu(ones, -k)


# ---- solve_triangular ------------------------------------------------------------------------
# X = M^-1 B with M = op(T(A)), T(A) the triangle read (its diagonal replaced by ones with
# unit_diagonal) and op the identity, transpose or conjugate transpose. dX = M^-1 (dB - dM X)
# with dM = op(T(dA)) (T without the diagonal when it is unit); transposed under
# Re(sum(a * b)): ct_B = M^-T ct, ct_A = T(op^T(-ct_B X^T)).
def _op(x: Any, trans: str) -> Any:
    if trans == "N":
        return x
    return _mT(x) if trans == "T" else _conj(_mT(x))


def _solve_triangular_impl(a: Any, b: Any, trans: str, lower: bool, unit_diagonal: bool) -> Any:
    if is_foreign(a) or is_foreign(b):
        return _foreign_solve_triangular(a, b, trans, lower, unit_diagonal)
    return _stacked(
        _sl.solve_triangular,
        a,
        b,
        core=(2, 2),
        trans=trans,
        lower=lower,
        unit_diagonal=unit_diagonal,
    )


def _foreign_solve_triangular(a: Any, b: Any, trans: str, lower: bool, unit_diagonal: bool) -> Any:
    """``solve_triangular`` of arrays of another library, whose own (Dask's) NumPy's dispatch
    does not reach: the triangle read (its unit diagonal put in), transposed per ``trans``,
    solved by ``numpy.linalg.solve``'s primitive, which the dispatch carries to the library
    (Dask: LAPACK's LU of the whole matrix). The same solution, to rounding."""
    n = np.shape(a)[-1]
    triangle = np.tri(n, dtype=bool) if lower else np.tri(n, dtype=bool).T
    t = np.where(triangle, a, 0)
    if unit_diagonal:
        t = np.where(np.eye(n, dtype=bool), 1, t)
    if trans != "N":
        t = np.swapaxes(t, -1, -2)
        t = np.conj(t) if trans == "C" else t
    return solve_p.impl(t, b)


solve_triangular_p = Primitive("solve_triangular", _solve_triangular_impl)


def _st(a: Any, b: Any, trans: str, lower: bool, unit_diagonal: bool) -> Any:
    return solve_triangular_p.bind(a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal)


def _st_transposed(a: Any, ct: Any, trans: str, lower: bool, unit_diagonal: bool) -> Any:
    """``M^-T ct`` for ``M = op(T(a))``: the solve of the transposed system."""
    if trans == "N":
        return _st(a, ct, "T", lower, unit_diagonal)
    if trans == "T":
        return _st(a, ct, "N", lower, unit_diagonal)
    return _st(_conj(a), ct, "N", lower, unit_diagonal)  # M^T = conj(T(a))


def _solve_triangular_jvp_a(
    t: Any, ans: Any, a: Any, b: Any, trans: str, lower: bool, unit_diagonal: bool
) -> Any:
    d_m = _op(t * _mask(t, lower, unit_diagonal), trans)
    return -_st(a, tnp.matmul(d_m, ans), trans, lower, unit_diagonal)


def _solve_triangular_jvp_b(
    t: Any, ans: Any, a: Any, b: Any, trans: str, lower: bool, unit_diagonal: bool
) -> Any:
    return tnp.broadcast_to(_st(a, t, trans, lower, unit_diagonal), shape_of(ans))


def _solve_triangular_vjp_a(
    ans: Any, a: Any, b: Any, trans: str, lower: bool, unit_diagonal: bool
) -> Callable[[Any], Any]:
    x_t, mask, shape = _mT(ans), _mask(a, lower, unit_diagonal), shape_of(a)

    def pullback(ct: Any) -> Any:
        g = -tnp.matmul(_st_transposed(a, ct, trans, lower, unit_diagonal), x_t)
        return unbroadcast(_op(g, trans) * mask, shape)

    return in_dtype_of(a, ans, pullback)


def _solve_triangular_vjp_b(
    ans: Any, a: Any, b: Any, trans: str, lower: bool, unit_diagonal: bool
) -> Callable[[Any], Any]:
    shape = shape_of(b)
    return in_dtype_of(
        b,
        ans,
        lambda ct: unbroadcast(_st_transposed(a, ct, trans, lower, unit_diagonal), shape),
    )


defjvp(solve_triangular_p, _solve_triangular_jvp_a, _solve_triangular_jvp_b)
defvjp(solve_triangular_p, _solve_triangular_vjp_a, _solve_triangular_vjp_b)
defbatch(solve_triangular_p, elementwise_rule(solve_triangular_p, gufunc=True))  # stacks broadcast


_TRANS = {0: "N", 1: "T", 2: "C", "N": "N", "T": "T", "C": "C"}


def solve_triangular(
    a: ArrayLike,
    b: ArrayLike,
    trans: Trans = 0,
    lower: bool = False,
    unit_diagonal: bool = False,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> Array:
    """Differentiable ``scipy.linalg.solve_triangular``: ``x`` with ``op(a) x = b`` for the
    triangular matrix read from the ``lower`` (or upper) triangle of ``a`` (unit diagonal
    with ``unit_diagonal``), ``op`` per ``trans`` (0/'N', 1/'T' transpose, 2/'C' conjugate
    transpose). ``b`` is a vector ``(n,)`` or a stack of ``(n, k)`` matrices. Differentiable in
    ``a`` (the triangle read) and ``b``. ``overwrite_b``/``check_finite`` are accepted and
    ignored (values are never overwritten)."""
    a, b = _operand(a), _operand(b)
    _require_square(a, "solve_triangular")
    if trans not in _TRANS:
        raise ValueError(f"transforms.scipy.linalg.solve_triangular: invalid trans {trans!r}")
    mode = _TRANS[trans]
    if ndim_of(b) == 1:
        x = _st(a, tnp.reshape(b, (shape_of(b)[0], 1)), mode, lower, unit_diagonal)
        return tnp.reshape(x, shape_of(x)[:-1])
    return _st(a, b, mode, lower, unit_diagonal)  # type: ignore[no-any-return]


# ---- cholesky, cho_factor, cho_solve: composites -------------------------------------------
def cholesky(
    a: ArrayLike, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> Array:
    """Differentiable ``scipy.linalg.cholesky``: the upper factor ``U`` (``a = U^H U``) read from
    the upper triangle of ``a``, or with ``lower=True`` the lower factor read from the lower
    one (``tnp.linalg.cholesky``'s primitive and conventions)."""
    a = _operand(a)
    _require_square(a, "cholesky")
    return tnp.linalg.cholesky(a, upper=not lower)


def cho_factor(
    a: ArrayLike, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> tuple[Array, bool]:
    """Differentiable ``scipy.linalg.cho_factor``: ``(c, lower)`` with the Cholesky factor in
    the ``lower`` (or upper) triangle of ``c`` and, as in SciPy (LAPACK works in place), the
    other strict triangle holding ``a``'s entries, which ``cho_solve`` does not read."""
    a = _operand(a)
    _require_square(a, "cho_factor")
    factor = tnp.linalg.cholesky(a, upper=not lower)
    other = a * _mask(a, not lower, True)
    return factor + other, lower


def cho_solve(
    c_and_lower: tuple[ArrayLike, bool],
    b: ArrayLike,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> Array:
    """Differentiable ``scipy.linalg.cho_solve``: ``x`` with ``A x = b`` from ``cho_factor``'s
    ``(c, lower)``, by two triangular solves (differentiable in ``c``'s factor and ``b``)."""
    c, lower = c_and_lower
    c = _operand(c)
    if lower:  # A = L L^H
        return solve_triangular(c, solve_triangular(c, b, lower=True), trans="C", lower=True)
    return solve_triangular(c, solve_triangular(c, b, trans="C"))  # A = U^H U


# ---- lu_factor, lu_solve ----------------------------------------------------------------------
# P^T A = L U (rows permuted by ``perm``: A[perm] = L U). With F = L^-1 dA[perm] U^-1:
# d(lu) = L stril(F) + triu(F) U. Transposed: F_bar = stril(L^T G) + triu(G U^T),
# ct_A[perm] = L^-T F_bar U^-T. The pivots are piecewise constant.
def _permutation(piv: Any) -> Any:
    """LAPACK's row interchanges (row i swapped with row piv[i], in turn) as a permutation
    ``perm`` with ``A[perm] = L U`` (raw NumPy, stacks)."""
    piv = np.asarray(piv)
    perm = np.broadcast_to(np.arange(piv.shape[-1]), piv.shape).copy()
    flat, pivots = perm.reshape(-1, piv.shape[-1]), piv.reshape(-1, piv.shape[-1])
    for row, p in zip(flat, pivots, strict=True):
        for i, j in enumerate(p):
            row[i], row[j] = row[j], row[i]
    return perm


permutation_p = nondifferentiable("lu_permutation", _permutation)
defbatch(permutation_p, elementwise_rule(permutation_p, gufunc=True))


def _rows(x: Any, perm: Any) -> Any:
    """``x[..., perm, :]`` per matrix of the stack (``perm`` may be a stack too)."""
    lead = np.broadcast_shapes(shape_of(x)[:-2], shape_of(perm)[:-1])
    full = lead + shape_of(x)[-2:]
    index = tnp.broadcast_to(perm[..., :, None], full)
    return tnp.take_along_axis(tnp.broadcast_to(x, full), index, axis=-2)


def _right_solve_upper(lu: Any, y: Any, trans: str) -> Any:
    """``y op(U)^-1`` for the upper triangle ``U`` of ``lu`` (``op`` the identity or ``T``)."""
    flipped = "T" if trans == "N" else "N"
    return _mT(_st(lu, _mT(y), flipped, False, False))


def _lu_jvp(t: Any, ans: Any, a: Any) -> tuple[Any, None]:
    lu, piv = ans
    perm = permutation_p.bind(piv)
    f = _right_solve_upper(lu, _st(lu, _rows(t, perm), "N", True, True), "N")
    low = tnp.matmul(lu * _mask(lu, True, True), f * _mask(f, True, True)) + f * _mask(
        f, True, True
    )
    up = tnp.matmul(f * _mask(f, False, False), lu * _mask(lu, False, False))
    return low + up, None


def _lu_vjp(ans: Any, a: Any) -> Callable[[Any], Any]:
    lu, piv = ans
    perm = permutation_p.bind(piv)
    inverse = tnp.argsort(perm, axis=-1)
    strict_lower, upper = _mask(lu, True, True), _mask(lu, False, False)
    low = lu * strict_lower + np.eye(shape_of(lu)[-1], dtype=dtype_of(lu))
    up = lu * upper

    def pullback(cts: Any) -> Any:
        g = cts[0]
        f_bar = tnp.matmul(_mT(low), g) * strict_lower + tnp.matmul(g, _mT(up)) * upper
        rows = _right_solve_upper(lu, _st(lu, f_bar, "T", True, True), "T")
        return _rows(rows, inverse)

    return pullback


lu_factor_p: Primitive[Any] = Primitive(
    "lu_factor",
    lambda a: _stacked(_sl.lu_factor, a, core=(2,)),
    multiple_results=True,
)
defjvp(lu_factor_p, _lu_jvp)
defvjp(lu_factor_p, _lu_vjp)
defbatch(lu_factor_p, _front_rule(lu_factor_p))


def lu_factor(
    a: ArrayLike, overwrite_a: bool = False, check_finite: bool = True
) -> tuple[Array, Array]:
    """Differentiable ``scipy.linalg.lu_factor`` of a square matrix: ``(lu, piv)``, ``L``'s
    strict lower triangle and ``U`` in ``lu``, LAPACK's row interchanges in ``piv`` (integers,
    no derivative). ``lu`` is differentiable where the pivoting is locally constant."""
    a = _operand(a)
    _require_square(a, "lu_factor")
    lu, piv = lu_factor_p.bind(a)
    return lu, piv


def lu_solve(
    lu_and_piv: tuple[ArrayLike, ArrayLike],
    b: ArrayLike,
    trans: Trans = 0,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> Array:
    """Differentiable ``scipy.linalg.lu_solve``: ``x`` with ``op(A) x = b`` from
    ``lu_factor``'s ``(lu, piv)`` (``trans`` as in ``solve_triangular``), by triangular
    solves and the row permutation: differentiable in ``lu`` and ``b``."""
    lu, piv = lu_and_piv
    lu, b = _operand(lu), _operand(b)
    mode = _TRANS[trans]
    vector = ndim_of(b) == 1
    if vector:
        b = tnp.reshape(b, (shape_of(b)[0], 1))
    perm = permutation_p.bind(piv)
    if mode == "N":  # L U x = b[perm]
        x = _st(lu, _st(lu, _rows(b, perm), "N", True, True), "N", False, False)
    else:  # op(U) op(L) x[perm] = b
        w = _st(lu, _st(lu, b, mode, False, False), mode, True, True)
        x = _rows(w, tnp.argsort(perm, axis=-1))
    return tnp.reshape(x, shape_of(x)[:-1]) if vector else x


# ---- expm, logm: the Fréchet derivative by the block-triangular identity -------------------
def _frechet(primitive: Primitive, a: Any, e: Any) -> Any:
    """``L_f(a, e)``: the upper right block of ``f([[a, e], [0, a]])``."""
    n = shape_of(a)[-1]
    lead = np.broadcast_shapes(shape_of(a)[:-2], shape_of(e)[:-2])
    a, e = tnp.broadcast_to(a, lead + (n, n)), tnp.broadcast_to(e, lead + (n, n))
    zeros = np.zeros(lead + (n, n), np.result_type(dtype_of(a), dtype_of(e)))
    top = tnp.concatenate([a, e], axis=-1)
    bottom = tnp.concatenate([zeros, a], axis=-1)
    block = primitive.bind(tnp.concatenate([top, bottom], axis=-2), frechet=True)
    return block[..., :n, n:]


def _matrix_function(name: str, impl: Callable[..., Any]) -> Primitive:
    """A primary matrix function with its Fréchet derivative (JVP) and its transpose (VJP).

    The primitive's ``frechet`` flag marks the block matrices of the rules: SciPy's accuracy
    warning (``logm``'s estimate of its error) is about the value asked for, not about
    these, whose upper right block is accurate (and checked against finite differences)."""

    def value(a: Any, frechet: bool) -> Any:
        if not frechet:
            return _stacked(impl, a, core=(2,))
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "logm result may be inaccurate", RuntimeWarning)
            return _stacked(impl, a, core=(2,))

    primitive = Primitive(name, value)
    defjvp(
        primitive,
        lambda t, ans, a, frechet: cast_to(_frechet(primitive, a, t), dtype_of(ans)),
    )

    def vjp(ans: Any, a: Any, frechet: bool) -> Callable[[Any], Any]:
        a_t = _mT(a)
        return in_dtype_of(a, ans, lambda ct: _frechet(primitive, a_t, ct))

    defvjp(primitive, vjp)
    defbatch(primitive, elementwise_rule(primitive, gufunc=True))
    return primitive


expm_p = _matrix_function("expm", _sl.expm)
logm_p = _matrix_function("logm", _sl.logm)


def expm(A: ArrayLike) -> Array:
    """Differentiable ``scipy.linalg.expm`` (stacks too): the derivative is the Fréchet
    derivative, exact at every order (see the module notes)."""
    A = _operand(A)
    _require_square(A, "expm")
    return expm_p.bind(A, frechet=False)


def logm(A: ArrayLike, disp: bool = True) -> Array:
    """Differentiable ``scipy.linalg.logm``, the principal logarithm (complex when ``A`` has
    negative eigenvalues, as SciPy's); its derivative is the Fréchet derivative. ``disp`` is
    SciPy's deprecated flag: only ``True`` (return the logarithm alone) is supported."""
    A = _operand(A)
    _require_square(A, "logm")
    if not disp:
        raise NotImplementedError(
            "transforms.scipy.linalg.logm: disp=False (returning SciPy's error estimate) is "
            "not supported; call logm(A)"
        )
    return logm_p.bind(A, frechet=False)


# ---- solve_sylvester, sqrtm ---------------------------------------------------------------------
# A X + X B = Q: dX = S^-1(dQ - dA X - X dB) with S(Y) = A Y + Y B, whose transpose is
# S^T(G) = A^T G + G B^T: ct_Q = Z = S^-T(ct), ct_A = -Z X^T, ct_B = -X^T Z.
solve_sylvester_p = Primitive(
    "solve_sylvester", lambda a, b, q: _stacked(_sl.solve_sylvester, a, b, q, core=(2, 2, 2))
)


def _sylvester(a: Any, b: Any, q: Any) -> Any:
    return solve_sylvester_p.bind(a, b, q)


def _to(ans: Any, x: Any) -> Any:
    return cast_to(tnp.broadcast_to(x, shape_of(ans)), dtype_of(ans))


defjvp(
    solve_sylvester_p,
    lambda t, ans, a, b, q: _to(ans, -_sylvester(a, b, tnp.matmul(t, ans))),
    lambda t, ans, a, b, q: _to(ans, -_sylvester(a, b, tnp.matmul(ans, t))),
    lambda t, ans, a, b, q: _to(ans, _sylvester(a, b, t)),
)


def _sylvester_vjp(argnum: int) -> Any:
    def maker(ans: Any, a: Any, b: Any, q: Any) -> Callable[[Any], Any]:
        operand = (a, b, q)[argnum]
        a_t, b_t, x_t = _mT(a), _mT(b), _mT(ans)

        def pullback(ct: Any) -> Any:
            z = _sylvester(a_t, b_t, ct)
            out = (-tnp.matmul(z, x_t), -tnp.matmul(x_t, z), z)[argnum]
            return unbroadcast(out, shape_of(operand))

        return in_dtype_of(operand, ans, pullback)

    return maker


defvjp(solve_sylvester_p, _sylvester_vjp(0), _sylvester_vjp(1), _sylvester_vjp(2))
defbatch(solve_sylvester_p, elementwise_rule(solve_sylvester_p, gufunc=True))


def solve_sylvester(a: ArrayLike, b: ArrayLike, q: ArrayLike) -> Array:
    """Differentiable ``scipy.linalg.solve_sylvester``: ``X`` with ``a X + X b = q``, ``a``
    ``(m, m)``, ``b`` ``(n, n)``, ``q`` ``(m, n)`` (stacks broadcast); differentiable in all
    three where ``a`` and ``-b`` have no common eigenvalue."""
    a, b, q = _operand(a), _operand(b), _operand(q)
    _require_square(a, "solve_sylvester")
    _require_square(b, "solve_sylvester")
    return _sylvester(a, b, q)  # type: ignore[no-any-return]


# X = sqrtm(A), X^2 = A: X dX + dX X = dA, a Sylvester equation; transposed: S^T = S(X^T).
sqrtm_p = Primitive("sqrtm", lambda a: _stacked(_sl.sqrtm, a, core=(2,)))
defjvp(sqrtm_p, lambda t, ans, a: _to(ans, _sylvester(ans, ans, t)))


def _sqrtm_vjp(ans: Any, a: Any) -> Callable[[Any], Any]:
    x_t = _mT(ans)
    return in_dtype_of(a, ans, lambda ct: _sylvester(x_t, x_t, ct))


defvjp(sqrtm_p, _sqrtm_vjp)
defbatch(sqrtm_p, elementwise_rule(sqrtm_p, gufunc=True))  # core axes last


def sqrtm(A: ArrayLike) -> Array:
    """Differentiable ``scipy.linalg.sqrtm``, the principal square root (complex when SciPy's
    is); its tangent solves ``X dX + dX X = dA`` (``solve_sylvester``)."""
    A = _operand(A)
    _require_square(A, "sqrtm")
    return sqrtm_p.bind(A)


# ---- eigh, inv, det, block_diag: composites ----------------------------------------------------
def _hermitian(a: Any, lower: bool) -> Any:
    """The Hermitian matrix LAPACK reads from the ``lower`` (or upper) triangle of ``a``."""
    strict = a * _mask(a, lower, True)
    diagonal = tnp.real(a) * np.eye(shape_of(a)[-1], dtype=np.finfo(dtype_of(a)).dtype)
    return strict + _conj(_mT(strict)) + diagonal


@overload
def eigh(
    a: ArrayLike,
    b: ArrayLike | None = None,
    *,
    lower: bool = True,
    eigvals_only: Literal[False] = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    type: int = 1,
    check_finite: bool = True,
    subset_by_index: Sequence[int] | None = None,
    subset_by_value: Sequence[float] | None = None,
    driver: str | None = None,
) -> tuple[Array, Array]: ...
@overload
def eigh(
    a: ArrayLike,
    b: ArrayLike | None = None,
    *,
    lower: bool = True,
    eigvals_only: Literal[True],
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    type: int = 1,
    check_finite: bool = True,
    subset_by_index: Sequence[int] | None = None,
    subset_by_value: Sequence[float] | None = None,
    driver: str | None = None,
) -> Array: ...
def eigh(
    a: ArrayLike,
    b: ArrayLike | None = None,
    *,
    lower: bool = True,
    eigvals_only: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    type: int = 1,
    check_finite: bool = True,
    subset_by_index: Sequence[int] | None = None,
    subset_by_value: Sequence[float] | None = None,
    driver: str | None = None,
) -> tuple[Array, Array] | Array:
    """Differentiable ``scipy.linalg.eigh``: ``(w, v)``, or ``w`` with ``eigvals_only``, of the
    Hermitian matrix read from the ``lower`` (or upper) triangle of ``a`` (``tnp.linalg.eigh``'s
    primitive and conventions: eigenvector derivatives need distinct eigenvalues). With ``b``
    (read from the same triangle), the generalized problem ``a v = w b v`` (``type=1``), as
    ``eigh`` of ``L^-1 a L^-H`` with ``b = L L^H``: ``v`` is ``b``-orthonormal, as SciPy's.
    ``subset_by_index=(lo, hi)`` keeps eigenpairs ``lo..hi``; ``driver``, ``overwrite_*`` and
    ``check_finite`` are accepted and ignored (the value is LAPACK's ``syevd``/``heevd``);
    ``type`` 2/3 and ``subset_by_value`` are not supported."""
    a = _operand(a)
    _require_square(a, "eigh")
    if type != 1:
        raise NotImplementedError(
            f"transforms.scipy.linalg.eigh: type={type} is not supported; only type=1 (a v = w b v)"
        )
    if subset_by_value is not None:
        raise NotImplementedError(
            "transforms.scipy.linalg.eigh: subset_by_value is not supported (the subset would "
            "depend on the values); select with subset_by_index or index the result"
        )
    uplo = "L" if lower else "U"
    factor = None
    if b is not None:
        b = _operand(b)
        _require_square(b, "eigh")
        factor = tnp.linalg.cholesky(_hermitian(b, lower))
        c = _st(factor, _hermitian(a, lower), "N", True, False)
        a = _st(factor, _conj(_mT(c)), "N", True, False)
    if eigvals_only:
        w = tnp.linalg.eigvalsh(a, UPLO=uplo)
        return w if subset_by_index is None else w[..., subset_by_index[0] : subset_by_index[1] + 1]
    w, v = tnp.linalg.eigh(a, UPLO=uplo)
    if factor is not None:
        v = _st(factor, v, "C", True, False)
    if subset_by_index is not None:
        keep = slice(subset_by_index[0], subset_by_index[1] + 1)
        w, v = w[..., keep], v[..., keep]
    return w, v


def inv(a: ArrayLike, overwrite_a: bool = False, check_finite: bool = True) -> Array:
    """Differentiable ``scipy.linalg.inv`` (``tnp.linalg.inv``'s primitive)."""
    a = _operand(a)
    _require_square(a, "inv")
    return tnp.linalg.inv(a)


def det(a: ArrayLike, overwrite_a: bool = False, check_finite: bool = True) -> Array:
    """Differentiable ``scipy.linalg.det`` (``tnp.linalg.det``'s primitive: differentiable at
    singular matrices too), in double precision as SciPy's (float32 input gives float64)."""
    a = _operand(a)
    _require_square(a, "det")
    wide = np.result_type(dtype_of(a), np.float64)
    return tnp.linalg.det(a if dtype_of(a) == wide else tnp.astype(a, wide))


def block_diag(*arrs: ArrayLike) -> Array:
    """Differentiable ``scipy.linalg.block_diag``: the arrays (0-d as ``(1, 1)``, 1-d as rows
    ``(1, n)``, 2-d) on the diagonal of a zero matrix, by padding and concatenation."""
    if not arrs:
        return np.empty((1, 0))
    blocks = []
    for i, x in enumerate(arrs):
        x = _operand(x)
        if ndim_of(x) > 2:
            raise ValueError(
                f"transforms.scipy.linalg.block_diag: argument {i} has {ndim_of(x)} dimensions; "
                "arguments must be at most 2-dimensional"
            )
        blocks.append(tnp.reshape(x, (1, -1)) if ndim_of(x) < 2 else x)
    widths = [shape_of(x)[1] for x in blocks]
    dtype = np.result_type(*(dtype_of(x) for x in blocks))
    rows, left = [], 0
    for x, width in zip(blocks, widths, strict=True):
        right = sum(widths) - left - width
        rows.append(tnp.astype(tnp.pad(x, ((0, 0), (left, right))), dtype))
        left += width
    return tnp.concatenate(rows, axis=0)


# Sparsity patterns: dense (every output entry may depend on every input entry); Taylor
# rules derived from the JVP rules (exact; see docs/taylor.md).
for _primitive in (solve_triangular_p, lu_factor_p, expm_p, logm_p, solve_sylvester_p, sqrtm_p):
    defsparsity(_primitive, dense_rule)
    deftaylor(_primitive, ode_rule(_primitive))
