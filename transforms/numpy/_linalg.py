"""``tnp.linalg``: NumPy's linear algebra, differentiable in forward AND reverse mode.

Every factorisation is a primitive whose JVP rule is the primary definition, written with
this package's differentiable functions (``matmul``, ``solve``, ``inv``...) so that rules
nest to any order; each VJP maker is the exact transpose of its JVP under the pairing
``Re(sum(a * b))`` (checked by the op-spec duality test). Everything broadcasts over
leading (stack) dimensions as NumPy does, and every primitive's batching rule moves the
batch axis to the front and calls the primitive again (``solve`` aligns its two operands
like a broadcasting gufunc). ``lstsq``, ``norm``, ``matrix_power``, ``multi_dot``, ``trace``
and NumPy 2's array-API functions (``vector_norm``, ``matrix_norm``, ``diagonal``, ``vecdot``,
``outer``, ``cross``, ``matmul``, ``tensordot``, ``matrix_transpose``) are composites.

Conventions and documented limits:

- ``det``/``slogdet``/``inv``/``solve``: derivatives use ``inv(a)``/``solve(a, .)``, so they
  are defined for non-singular ``a`` only (differentiating ``det`` at a singular matrix
  raises NumPy's LinAlgError; the adjugate is not computed).
  ``slogdet``'s ``sign`` has a zero derivative for real input.
- ``cholesky``, ``eigh``, ``eigvalsh``: ``a`` is taken to be symmetric; the tangent is
  symmetrised (``(da + da^T) / 2``) and so is the cotangent, as in JAX and autograd. NumPy
  reads only one triangle (``UPLO``), so along a non-symmetric direction these are the
  derivatives of the symmetric part, whichever triangle is read.
- ``eigh``, ``eig``: eigenvector derivatives need distinct eigenvalues (a repeated eigenvalue
  gives inf/nan: the eigenvectors are not differentiable there); ``eigh``'s eigenvalues
  (``eigvalsh``) are differentiable wherever they are distinct. Eigenvectors are unit-norm;
  their sign (``eigh``) or phase (``eig``, complex) is a LAPACK convention: ``eigh``'s real
  sign is locally constant, so its tangent is exact; ``eig``'s complex eigenvectors get the
  tangent orthogonal (``Re(v^H dv) = 0``) to ``v``, i.e. only gauge-invariant functions
  (``|v_i|^2``, ``v_i conj(v_j)``, ``V f(w) V^-1``) have a meaningful derivative. ``eig``
  does not sort its eigenvalues: their order may jump between nearby matrices, so only
  order-invariant functions of them are differentiable across such a jump.
- ``svd``: derivatives need ``full_matrices=False`` (or a square matrix) and distinct
  singular values; non-square matrices also need non-zero singular values. ``U`` and ``Vh``
  share a sign per singular triplet: test ``U diag(f(s)) Vh`` or ``U * U``.
- ``qr``: derivatives for ``mode='reduced'``/``'r'`` (and ``'complete'`` where it is the
  same) of square or tall (``m >= n``) full-column-rank matrices; ``Q``'s column signs are
  LAPACK's, locally constant.
- ``pinv``, ``lstsq``: the derivative is that of the pseudo-inverse at constant rank (in
  practice: full rank). ``lstsq`` is ``pinv(a, rcond) @ b``; its ``residuals`` and ``s`` are
  differentiable too (composites), ``rank`` is an integer.
- ``cholesky``, ``qr``, ``eigh``, ``eigvalsh``, ``svd`` are differentiated for real input
  only (complex input raises ``NotImplementedError`` when differentiated); ``det``, ``inv``,
  ``solve``, ``slogdet``, ``pinv``, ``eig``, ``norm``, ``matrix_power``, ``multi_dot`` and
  ``trace`` take complex input too.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple, overload

import numpy as np

from transforms.batching import BatchRule, defbatch
from transforms.core import Array, ArrayLike, Primitive, Tracer
from transforms.core.tree_util import register_pytree_node
from transforms.forward import defjvp
from transforms.reverse import defvjp

from . import _elementwise, _indexing, _products, _reductions, _shape
from ._arithmetic import in_dtype_of
from ._batching import elementwise_rule, to_front
from ._define import dtype_of, ndim_of, normalize_axes, shape_of
from ._products import matmul

__all__ = [
    "det",
    "slogdet",
    "inv",
    "pinv",
    "solve",
    "lstsq",
    "cholesky",
    "qr",
    "eigh",
    "eigvalsh",
    "eig",
    "eigvals",
    "svd",
    "svdvals",
    "norm",
    "matrix_power",
    "multi_dot",
    "trace",
    # NumPy 2's array-API additions: composites
    "vector_norm",
    "matrix_norm",
    "matrix_transpose",
    "diagonal",
    "vecdot",
    "outer",
    "cross",
    "matmul",
    "tensordot",
]


# ---- results with NumPy 2's field names (pytree nodes, so transforms can return them) ------
class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class EigResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


class LstsqResult(NamedTuple):
    x: Array
    residuals: Array
    rank: Any
    s: Array


def _register(cls: Any) -> None:
    register_pytree_node(cls, lambda r: (tuple(r), None), lambda _, kids: cls(*kids))


for _cls in (SlogdetResult, EighResult, EigResult, QRResult, SVDResult, LstsqResult):
    _register(_cls)


# ---- helpers (differentiable, broadcasting over leading dimensions) --------------------------
def _operand(a: ArrayLike) -> Any:
    return _shape.asarray(a) if isinstance(a, (list, tuple)) else a


def _is_complex(x: Any) -> bool:
    return bool(np.issubdtype(dtype_of(x), np.complexfloating))


def _mT(x: Any) -> Any:
    """Swap the last two axes (a batched matrix transpose)."""
    n = ndim_of(x)
    return _shape.transpose(x, (*range(n - 2), n - 1, n - 2))


def _conj(x: Any) -> Any:
    return _elementwise.conj(x) if _is_complex(x) else x


def _real(x: Any) -> Any:
    return _elementwise.real(x) if _is_complex(x) else x


def _mH(x: Any) -> Any:
    return _conj(_mT(x))


def _eye(n: int, dtype: Any) -> np.ndarray[Any, Any]:
    return np.eye(n, dtype=dtype)


def _diagonal(x: Any) -> Any:
    """The main diagonal of each matrix of a stack: ``(..., n, n) -> (..., n)``."""
    r = np.arange(shape_of(x)[-1])
    return _indexing.getitem(x, (Ellipsis, r, r))


def _diag_embed(v: Any) -> Any:
    """Diagonal matrices from a stack of vectors: ``(..., n) -> (..., n, n)``."""
    return _shape.expand_dims(v, -2) * _eye(shape_of(v)[-1], dtype_of(v))


def _sym(x: Any) -> Any:
    return (x + _mT(x)) * 0.5


def _rows(v: Any) -> Any:
    """``v[..., None, :]``: a vector indexed by column, broadcasting over rows."""
    return _shape.expand_dims(v, -2)


def _cols(v: Any) -> Any:
    """``v[..., :, None]``: a vector indexed by row, broadcasting over columns."""
    return _shape.expand_dims(v, -1)


def _reciprocal_gaps(w: Any) -> Any:
    """``F[..., i, j] = 1 / (w_j - w_i)`` off the diagonal and 0 on it."""
    eye = _eye(shape_of(w)[-1], dtype_of(w))
    return 1.0 / (_rows(w) - _cols(w) + eye) - eye


def _require_square(a: Any, name: str) -> None:
    shape = shape_of(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise np.linalg.LinAlgError(
            f"{name}: last 2 dimensions of the array must be square (got shape {shape})"
        )


def _require_real(x: Any, name: str) -> None:
    if _is_complex(x):
        raise NotImplementedError(
            f"tnp.linalg.{name}: derivatives are implemented for real input only (got "
            f"{dtype_of(x)})"
        )


def _front_rule(primitive: Primitive) -> BatchRule:
    """Batch a one-operand primitive that already broadcasts over leading dimensions."""

    def rule(values: Sequence[Any], dims: Sequence[int | None], **params: Any) -> Any:
        out = primitive.bind(to_front(values[0], dims[0]), **params)
        if primitive.multiple_results:
            return out, (0,) * len(out)
        return out, 0

    return rule


# ---- inv -------------------------------------------------------------------------------------
# d(A^-1) = -A^-1 dA A^-1; its transpose is -A^-T ct A^-T.
inv_p = Primitive("inv", np.linalg.inv)
defjvp(inv_p, lambda t, ans, a: -matmul(matmul(ans, t), ans))


def _inv_vjp(ans: Any, a: Any) -> Callable[[Any], Any]:
    ans_t = _mT(ans)
    return lambda ct: -matmul(matmul(ans_t, ct), ans_t)


defvjp(inv_p, _inv_vjp)
defbatch(inv_p, _front_rule(inv_p))


def inv(a: ArrayLike) -> Array:
    """Differentiable ``numpy.linalg.inv`` (stacks of matrices too)."""
    a = _operand(a)
    _require_square(a, "inv")
    return inv_p.bind(a)  # type: ignore[no-any-return]


# ---- det ---------------------------------------------------------------------------------------
# d det(A) = det(A) tr(A^-1 dA) = det(A) sum(A^-T * dA); the VJP is ct det(A) A^-T.
def _trace_against(a: Any, t: Any) -> Any:
    """``tr(A^-1 T)`` for each matrix of the stacks, as ``sum(A^-T * T)``."""
    return _reductions.sum(_mT(inv(a)) * t, axis=(-2, -1))


det_p = Primitive("det", np.linalg.det)
defjvp(det_p, lambda t, ans, a: ans * _trace_against(a, t))


def _det_vjp(ans: Any, a: Any) -> Callable[[Any], Any]:
    inv_t = _mT(inv(a))
    return lambda ct: _cols(_cols(ct * ans)) * inv_t


defvjp(det_p, _det_vjp)
defbatch(det_p, _front_rule(det_p))


def det(a: ArrayLike) -> Array:
    """Differentiable ``numpy.linalg.det``; derivatives need a non-singular ``a``."""
    a = _operand(a)
    _require_square(a, "det")
    return det_p.bind(a)  # type: ignore[no-any-return]


# ---- slogdet (sign, logabsdet) -------------------------------------------------------------------
# With tr = tr(A^-1 dA): d logabsdet = Re(tr); d sign = sign * i Im(tr) (zero for real A).
slogdet_p = Primitive("slogdet", lambda a: tuple(np.linalg.slogdet(a)), multiple_results=True)


def _slogdet_jvp(t: Any, ans: Any, a: Any) -> tuple[Any, Any]:
    sign = ans[0]
    tr = _trace_against(a, t)
    if not _is_complex(tr):
        return None, tr
    re = _elementwise.real(tr)
    return sign * (tr - re), re


def _slogdet_vjp(ans: Any, a: Any) -> Callable[[Any], Any]:
    sign = ans[0]
    inv_t = _mT(inv(a))

    def pullback(cts: Any) -> Any:
        ct_sign, ct_logabsdet = cts
        k = ct_logabsdet
        if _is_complex(sign):
            cs = ct_sign * sign
            k = k + (cs - _elementwise.real(cs))
        return _cols(_cols(k)) * inv_t

    return pullback


defjvp(slogdet_p, _slogdet_jvp)
defvjp(slogdet_p, _slogdet_vjp)
defbatch(slogdet_p, _front_rule(slogdet_p))


def slogdet(a: ArrayLike) -> SlogdetResult:
    """Differentiable ``numpy.linalg.slogdet``: ``(sign, logabsdet)``; only ``logabsdet`` (and
    for complex ``a`` the phase ``sign``) carries a derivative."""
    a = _operand(a)
    _require_square(a, "slogdet")
    sign, logabsdet = slogdet_p.bind(a)
    return SlogdetResult(sign, logabsdet)


# ---- solve ---------------------------------------------------------------------------------------
# The primitive takes b as a stack of matrices (..., n, k) (1-d b is made a column by ``solve``).
# X = A^-1 B: dX = A^-1 (dB - dA X); the VJP: ct_B = A^-T ct, ct_A = -ct_B X^T (un-broadcast).
solve_p = Primitive("solve", np.linalg.solve)
defjvp(
    solve_p,
    lambda t, ans, a, b: -_solve(a, matmul(t, ans)),
    lambda t, ans, a, b: _solve(a, t),
)


def _solve_vjp_a(ans: Any, a: Any, b: Any) -> Callable[[Any], Any]:
    a_t, x_t = _mT(a), _mT(ans)
    return in_dtype_of(
        a, ans, lambda ct: _shape.unbroadcast(-matmul(_solve(a_t, ct), x_t), shape_of(a))
    )


def _solve_vjp_b(ans: Any, a: Any, b: Any) -> Callable[[Any], Any]:
    a_t = _mT(a)
    return in_dtype_of(b, ans, lambda ct: _shape.unbroadcast(_solve(a_t, ct), shape_of(b)))


defvjp(solve_p, _solve_vjp_a, _solve_vjp_b)
defbatch(solve_p, elementwise_rule(solve_p))  # batch axes in front, ranks aligned: a gufunc


def _solve(a: Any, b: Any) -> Any:
    return solve_p.bind(a, b)


def solve(a: ArrayLike, b: ArrayLike) -> Array:
    """Differentiable ``numpy.linalg.solve`` with NumPy 2's semantics: ``b`` of shape ``(n,)``
    is one vector (broadcast against a stack ``a``); otherwise ``b`` is a stack ``(..., n, k)``
    of matrices, its leading dimensions broadcasting with ``a``'s."""
    a, b = _operand(a), _operand(b)
    _require_square(a, "solve")
    if ndim_of(b) == 1:
        x = solve_p.bind(a, _shape.reshape(b, (shape_of(b)[0], 1)))
        return _shape.reshape(x, shape_of(x)[:-1])
    return _solve(a, b)  # type: ignore[no-any-return]


# ---- pinv ----------------------------------------------------------------------------------------
# At constant rank (Golub & Pereyra), with P = A^+:
#   dP = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P.
# Transposed term by term under Re(sum(a * b)):
#   ct_A = -P^T G P^T + conj((I - A P) G^T P P^H + P^H P G^T (I - P A)).
def _pinv_impl(a: Any, rcond: Any, hermitian: bool, rtol: Any) -> Any:
    kwargs: dict[str, Any] = {"hermitian": hermitian}
    if rcond is not None:
        kwargs["rcond"] = rcond
    if rtol is not None:
        kwargs["rtol"] = rtol
    return np.linalg.pinv(a, **kwargs)


def _projectors(a: Any, p: Any) -> tuple[Any, Any]:
    """``I - A P`` (m x m) and ``I - P A`` (n x n)."""
    m, n = shape_of(a)[-2:]
    dtype = np.result_type(dtype_of(a), dtype_of(p))
    return _eye(m, dtype) - matmul(a, p), _eye(n, dtype) - matmul(p, a)


def _pinv_jvp(t: Any, ans: Any, a: Any, **params: Any) -> Any:
    p, p_h, t_h = ans, _mH(ans), _mH(t)
    left, right = _projectors(a, p)
    term1 = -matmul(matmul(p, t), p)
    term2 = matmul(p, matmul(p_h, matmul(t_h, left)))
    term3 = matmul(right, matmul(t_h, matmul(p_h, p)))
    return term1 + term2 + term3


def _pinv_vjp(ans: Any, a: Any, **params: Any) -> Callable[[Any], Any]:
    p, p_t, p_h = ans, _mT(ans), _mH(ans)
    left, right = _projectors(a, p)
    pph, php = matmul(p, p_h), matmul(p_h, p)

    def pullback(ct: Any) -> Any:
        ct_t = _mT(ct)
        term1 = -matmul(matmul(p_t, ct), p_t)
        rest = matmul(matmul(left, ct_t), pph) + matmul(matmul(php, ct_t), right)
        return term1 + _conj(rest)

    return pullback


pinv_p = Primitive("pinv", _pinv_impl)
defjvp(pinv_p, _pinv_jvp)
defvjp(pinv_p, _pinv_vjp)
defbatch(pinv_p, _front_rule(pinv_p))


def pinv(a: ArrayLike, rcond: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Array:
    """Differentiable ``numpy.linalg.pinv``. The derivative is that of the pseudo-inverse at
    constant rank: exact for full-rank ``a``; at a rank-deficient ``a`` it holds only along
    directions that keep the rank (the pseudo-inverse is discontinuous there)."""
    a = _operand(a)
    return pinv_p.bind(  # type: ignore[no-any-return]
        a, rcond=rcond, hermitian=hermitian, rtol=rtol
    )


# ---- lstsq: a composite of pinv, matmul and svd --------------------------------------------------
def lstsq(a: ArrayLike, b: ArrayLike, rcond: float | None = None) -> LstsqResult:
    """Differentiable ``numpy.linalg.lstsq``: ``(x, residuals, rank, s)``.

    A composite: ``x = pinv(a, rcond) @ b`` (NumPy's default ``rcond``, ``eps * max(m, n)``),
    ``s`` the singular values of ``a``, ``residuals = sum(|b - a x|^2)`` over the rows (empty
    unless ``a`` is tall and of full rank, as in NumPy) and ``rank`` an integer. ``x``,
    ``residuals`` and ``s`` are differentiable, at constant (in practice: full) rank; values
    agree with NumPy's to rounding. Under ``vmap`` residuals are computed as if every
    example had full rank. Stacks of matrices are accepted too.
    """
    a, b = _operand(a), _operand(b)
    shape = shape_of(a)
    if len(shape) < 2:
        raise np.linalg.LinAlgError(f"lstsq: a must be at least two-dimensional (got {shape})")
    m, n = shape[-2:]
    if rcond is None:
        rcond = float(np.finfo(np.float64).eps) * max(m, n)  # NumPy computes in double
    x = matmul(pinv(a, rcond=rcond), b)
    s = svdvals(a)
    if min(m, n) > 0:
        cutoff = _reductions.max(s, axis=-1, keepdims=True) * rcond
        rank = _reductions.sum(_shape.astype(s > cutoff, np.int32), axis=-1)
    else:
        rank = np.zeros(shape[:-2], dtype=np.int32)
    full = rank == n
    full_rank = True if isinstance(full, Tracer) else bool(np.all(full))
    if m > n and full_rank:
        r = b - matmul(a, x)
        r2 = _real(r * _conj(r))
        if ndim_of(b) == 1:
            residuals = _reductions.sum(r2, axis=-1, keepdims=True)
        else:
            residuals = _reductions.sum(r2, axis=-2)
    else:
        residuals = np.empty((0,), dtype=np.result_type(dtype_of(a), dtype_of(b)))
    return LstsqResult(x, residuals, rank, s)


# ---- cholesky ------------------------------------------------------------------------------------
# A = L L^T, dA symmetrised to S: dL = L Phi(L^-1 S L^-T), Phi = lower triangle, diagonal
# halved. Its transpose: ct_A = sym(L^-T Phi(L^T G) L^-1) (Murray, arXiv:1602.07527).
def _phi(x: Any) -> Any:
    n = shape_of(x)[-1]
    mask = np.tril(np.ones((n, n), dtype=dtype_of(x))) - 0.5 * _eye(n, dtype_of(x))
    return x * mask


def _cholesky_jvp(t: Any, ans: Any, a: Any) -> Any:
    _require_real(a, "cholesky")
    low = ans
    x = _solve(low, _mT(_solve(low, _sym(t))))  # L^-1 S L^-T (S symmetric)
    return matmul(low, _phi(x))


def _cholesky_vjp(ans: Any, a: Any) -> Callable[[Any], Any]:
    _require_real(a, "cholesky")
    low_t = _mT(ans)

    def pullback(ct: Any) -> Any:
        y = _phi(matmul(low_t, ct))
        z = _mT(_solve(low_t, _mT(_solve(low_t, y))))  # L^-T Y L^-1
        return _sym(z)

    return pullback


cholesky_p = Primitive("cholesky", np.linalg.cholesky)
defjvp(cholesky_p, _cholesky_jvp)
defvjp(cholesky_p, _cholesky_vjp)
defbatch(cholesky_p, _front_rule(cholesky_p))


def cholesky(a: ArrayLike, /, *, upper: bool = False) -> Array:
    """Differentiable ``numpy.linalg.cholesky`` of a symmetric positive-definite ``a``
    (derivatives symmetrised, see the module notes); ``upper=True`` gives ``L^H``."""
    a = _operand(a)
    _require_square(a, "cholesky")
    low = cholesky_p.bind(a)
    return _mH(low) if upper else low  # type: ignore[no-any-return]


# ---- qr (mode='reduced', m >= n) -----------------------------------------------------------------
# With B = dA R^-1, C = Q^T B, O = tril(C, -1) - tril(C, -1)^T (skew):
#   dQ = Q (O - C) + B,  dR = (C - O) R   (Townsend, "Differentiating the QR decomposition").
# Transposed: M = Q^T GQ - GR R^T, N = tril(M - M^T, -1) - M, ct_A = (GQ + Q N) R^-T.
def _strict_lower(x: Any) -> Any:
    n = shape_of(x)[-1]
    return x * np.tril(np.ones((n, n), dtype=dtype_of(x)), -1)


def _require_tall(a: Any) -> None:
    m, n = shape_of(a)[-2:]
    if m < n:
        raise NotImplementedError(
            f"tnp.linalg.qr: derivatives need a square or tall matrix (m >= n), got {m} x {n}"
        )


def _qr_jvp(t: Any, ans: Any, a: Any) -> tuple[Any, Any]:
    _require_real(a, "qr")
    _require_tall(a)
    q, r = ans
    b = _mT(_solve(_mT(r), _mT(t)))  # dA R^-1
    c = matmul(_mT(q), b)
    low = _strict_lower(c)
    omega = low - _mT(low)
    return matmul(q, omega - c) + b, matmul(c - omega, r)


def _qr_vjp(ans: Any, a: Any) -> Callable[[Any], Any]:
    _require_real(a, "qr")
    _require_tall(a)
    q, r = ans

    def pullback(cts: Any) -> Any:
        ct_q, ct_r = cts
        m = matmul(_mT(q), ct_q) - matmul(ct_r, _mT(r))
        n = _strict_lower(m - _mT(m)) - m
        w = ct_q + matmul(q, n)
        return _mT(_solve(r, _mT(w)))  # W R^-T

    return pullback


qr_p = Primitive("qr", lambda a: tuple(np.linalg.qr(a, mode="reduced")), multiple_results=True)
defjvp(qr_p, _qr_jvp)
defvjp(qr_p, _qr_vjp)
defbatch(qr_p, _front_rule(qr_p))


@overload
def qr(a: ArrayLike, mode: Literal["reduced", "complete"] = "reduced") -> QRResult: ...
@overload
def qr(a: ArrayLike, mode: Literal["r"]) -> Array: ...
@overload
def qr(a: ArrayLike, mode: Literal["raw"]) -> tuple[Array, Array]: ...
def qr(a: ArrayLike, mode: str = "reduced") -> QRResult | Array | tuple[Array, Array]:
    """Differentiable ``numpy.linalg.qr``: ``QRResult(Q, R)`` for ``mode='reduced'`` (and
    ``'complete'`` where it equals ``'reduced'``: ``m <= n``), or ``R`` alone for ``mode='r'``.
    Derivatives need ``m >= n`` and full column rank; ``Q``'s column signs are LAPACK's
    (locally constant). ``'raw'`` and a tall ``'complete'`` are NumPy's, for plain arrays."""
    a = _operand(a)
    shape = shape_of(a)
    if len(shape) < 2:
        raise np.linalg.LinAlgError(f"qr: a must be at least two-dimensional (got {shape})")
    m, n = shape[-2:]
    if mode in ("reduced", "r") or (mode == "complete" and m <= n):
        q, r = qr_p.bind(a)
        return r if mode == "r" else QRResult(q, r)
    if mode not in ("complete", "raw"):
        raise ValueError(f"Unrecognized mode '{mode}'")
    if isinstance(a, Tracer):
        raise NotImplementedError(
            f"tnp.linalg.qr: mode={mode!r} is not differentiable here (for a {m} x {n} matrix); "
            "use mode='reduced'"
        )
    plain: Any = a
    if mode == "complete":
        return QRResult(*np.linalg.qr(plain, mode="complete"))
    return np.linalg.qr(plain, mode=_plain_mode(mode))


def _plain_mode(mode: str) -> Any:
    return mode


# ---- eigh, eigvalsh (symmetric) ------------------------------------------------------------------
# With S = sym(dA), C = V^T S V, F_ij = 1 / (w_j - w_i): dw = diag(C), dV = V (F * C).
# Transposed: ct_A = sym(V (diag(Gw) + F * (V^T GV)) V^T).
def _eigh_jvp(t: Any, ans: Any, a: Any, UPLO: str) -> tuple[Any, Any]:
    _require_real(a, "eigh")
    w, v = ans
    c = matmul(_mT(v), matmul(_sym(t), v))
    return _diagonal(c), matmul(v, _reciprocal_gaps(w) * c)


def _eigh_vjp(ans: Any, a: Any, UPLO: str) -> Callable[[Any], Any]:
    _require_real(a, "eigh")
    w, v = ans
    gaps = _reciprocal_gaps(w)

    def pullback(cts: Any) -> Any:
        ct_w, ct_v = cts
        k = _diag_embed(ct_w) + gaps * matmul(_mT(v), ct_v)
        return _sym(matmul(v, matmul(k, _mT(v))))

    return pullback


eigh_p = Primitive(
    "eigh", lambda a, UPLO: tuple(np.linalg.eigh(a, UPLO=UPLO)), multiple_results=True
)
defjvp(eigh_p, _eigh_jvp)
defvjp(eigh_p, _eigh_vjp)
defbatch(eigh_p, _front_rule(eigh_p))


def eigh(a: ArrayLike, UPLO: str = "L") -> EighResult:
    """Differentiable ``numpy.linalg.eigh``: ``EighResult(eigenvalues, eigenvectors)`` of a
    real symmetric ``a``. Eigenvector derivatives need distinct eigenvalues (see the module
    notes); the derivatives are symmetrised whichever triangle ``UPLO`` names."""
    a = _operand(a)
    _require_square(a, "eigh")
    if UPLO not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    w, v = eigh_p.bind(a, UPLO=UPLO)
    return EighResult(w, v)


# dw = diag(V^T dA V) = sum(V * (dA V), axis=-2); transposed: V diag(ct) V^T.
def _eigvalsh_jvp(t: Any, ans: Any, a: Any, UPLO: str) -> Any:
    _require_real(a, "eigvalsh")
    v = eigh_p.bind(a, UPLO=UPLO)[1]
    return _reductions.sum(v * matmul(_sym(t), v), axis=-2)


def _eigvalsh_vjp(ans: Any, a: Any, UPLO: str) -> Callable[[Any], Any]:
    _require_real(a, "eigvalsh")
    v = eigh_p.bind(a, UPLO=UPLO)[1]
    return lambda ct: matmul(v * _rows(ct), _mT(v))


eigvalsh_p = Primitive("eigvalsh", lambda a, UPLO: np.linalg.eigvalsh(a, UPLO=UPLO))
defjvp(eigvalsh_p, _eigvalsh_jvp)
defvjp(eigvalsh_p, _eigvalsh_vjp)
defbatch(eigvalsh_p, _front_rule(eigvalsh_p))


def eigvalsh(a: ArrayLike, UPLO: str = "L") -> Array:
    """Differentiable ``numpy.linalg.eigvalsh`` (derivatives exist where the eigenvalues are
    distinct; at a repeated eigenvalue any symmetric-part formula is one of many)."""
    a = _operand(a)
    _require_square(a, "eigvalsh")
    if UPLO not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return eigvalsh_p.bind(a, UPLO=UPLO)  # type: ignore[no-any-return]


# ---- eig (general square; complex outputs in general) --------------------------------------------
# With C = V^-1 dA V, F_ij = 1 / (w_j - w_i): dw = diag(C); E = V (F * C) has no component
# along each v_k; keeping |v_k| = 1 gives dV = E - V diag(Re(diag(V^H E))).
# Transposed: g = sum(GV * V, axis=-2), GE = GV - conj(V) Re(g), K = diag(Gw) + F * (V^T GE),
# ct_A = V^-T K V^T (its real part for real A).
def _eig_jvp(t: Any, ans: Any, a: Any) -> tuple[Any, Any]:
    w, v = ans
    c = _solve(v, matmul(t, v))
    e = matmul(v, _reciprocal_gaps(w) * c)
    norm_t = _real(_reductions.sum(_conj(v) * e, axis=-2))
    return _diagonal(c), e - v * _rows(norm_t)


def _eig_vjp(ans: Any, a: Any) -> Callable[[Any], Any]:
    w, v = ans
    gaps = _reciprocal_gaps(w)
    v_t = _mT(v)
    real_input = not _is_complex(a)

    def pullback(cts: Any) -> Any:
        ct_w, ct_v = cts
        g = _real(_reductions.sum(ct_v * v, axis=-2))
        ct_e = ct_v - _conj(v) * _rows(g)
        k = _diag_embed(ct_w) + gaps * matmul(v_t, ct_e)
        ct_a = _solve(v_t, matmul(k, v_t))
        return _real(ct_a) if real_input else ct_a

    return pullback


eig_p = Primitive("eig", lambda a: tuple(np.linalg.eig(a)), multiple_results=True)
defjvp(eig_p, _eig_jvp)
defvjp(eig_p, _eig_vjp)
defbatch(eig_p, _front_rule(eig_p))


def eig(a: ArrayLike) -> EigResult:
    """Differentiable ``numpy.linalg.eig``: ``EigResult(eigenvalues, eigenvectors)``, complex
    unless every eigenvalue is real (NumPy's rule). Derivatives need distinct eigenvalues;
    only gauge-invariant functions of complex eigenvectors are meaningful to differentiate
    (see the module notes)."""
    a = _operand(a)
    _require_square(a, "eig")
    w, v = eig_p.bind(a)
    return EigResult(w, v)


def eigvals(a: ArrayLike) -> Array:
    """Differentiable ``numpy.linalg.eigvals``: a composite, ``eig(a).eigenvalues``."""
    return eig(a)[0]


# ---- svd (reduced), svdvals ----------------------------------------------------------------------
# With dS = U^T dA V, F_ij = 1 / (s_j^2 - s_i^2) off the diagonal (real input):
#   ds = diag(dS)
#   dU = U (F * (dS S + S dS^T)) + (I - U U^T) dA V S^-1          (second term if m > k)
#   dV = V (F * (S dS + dS^T S)) + (I - V V^T) dA^T U S^-1        (second term if n > k)
# Transposed, with J = F * (U^T GU), K = F * (V^T GV):
#   ct_A = U (diag(Gs) + (J + J^T) S + S (K + K^T)) V^T
#          + (I - U U^T) GU S^-1 V^T + U S^-1 GV^T (I - V V^T).
def _svd_gaps(s: Any) -> Any:
    eye = _eye(shape_of(s)[-1], dtype_of(s))
    return 1.0 / ((_rows(s) - _cols(s)) * (_rows(s) + _cols(s)) + eye) - eye


def _svd_jvp(t: Any, ans: Any, a: Any, hermitian: bool) -> tuple[Any, Any, Any]:
    _require_real(a, "svd")
    u, s, vh = ans
    v = _mT(vh)
    m, n = shape_of(a)[-2:]
    k = shape_of(s)[-1]
    t_v = matmul(t, v)
    ds_mat = matmul(_mT(u), t_v)
    f = _svd_gaps(s)
    s_row, s_col = _rows(s), _cols(s)
    d_u = matmul(u, f * (ds_mat * s_row + s_col * _mT(ds_mat)))
    d_v = matmul(v, f * (s_col * ds_mat + _mT(ds_mat) * s_row))
    if m > k:
        d_u = d_u + (t_v - matmul(u, matmul(_mT(u), t_v))) / s_row
    if n > k:
        t_u = matmul(_mT(t), u)
        d_v = d_v + (t_u - matmul(v, matmul(vh, t_u))) / s_row
    return d_u, _diagonal(ds_mat), _mT(d_v)


def _svd_vjp(ans: Any, a: Any, hermitian: bool) -> Callable[[Any], Any]:
    _require_real(a, "svd")
    u, s, vh = ans
    v = _mT(vh)
    m, n = shape_of(a)[-2:]
    k = shape_of(s)[-1]
    f = _svd_gaps(s)
    s_row, s_col = _rows(s), _cols(s)

    def pullback(cts: Any) -> Any:
        ct_u, ct_s, ct_vh = cts
        ct_v = _mT(ct_vh)
        j = f * matmul(_mT(u), ct_u)
        kk = f * matmul(vh, ct_v)
        d = _diag_embed(ct_s) + (j + _mT(j)) * s_row + s_col * (kk + _mT(kk))
        out = matmul(matmul(u, d), vh)
        if m > k:
            out = out + matmul((ct_u - matmul(u, matmul(_mT(u), ct_u))) / s_row, vh)
        if n > k:
            out = out + matmul(u, (ct_vh - matmul(matmul(ct_vh, v), vh)) / s_col)
        return out

    return pullback


svd_p = Primitive(
    "svd",
    lambda a, hermitian: tuple(np.linalg.svd(a, full_matrices=False, hermitian=hermitian)),
    multiple_results=True,
)
defjvp(svd_p, _svd_jvp)
defvjp(svd_p, _svd_vjp)
defbatch(svd_p, _front_rule(svd_p))


# ds = diag(U^T dA V) = sum(U * (dA V), axis=-2); transposed: U diag(ct) V^T.
def _svdvals_jvp(t: Any, ans: Any, a: Any, hermitian: bool) -> Any:
    _require_real(a, "svd")
    u, _, vh = svd_p.bind(a, hermitian=hermitian)
    return _reductions.sum(u * matmul(t, _mT(vh)), axis=-2)


def _svdvals_vjp(ans: Any, a: Any, hermitian: bool) -> Callable[[Any], Any]:
    _require_real(a, "svd")
    u, _, vh = svd_p.bind(a, hermitian=hermitian)
    return lambda ct: matmul(u * _rows(ct), vh)


svdvals_p = Primitive(
    "svdvals", lambda a, hermitian: np.linalg.svd(a, compute_uv=False, hermitian=hermitian)
)
defjvp(svdvals_p, _svdvals_jvp)
defvjp(svdvals_p, _svdvals_vjp)
defbatch(svdvals_p, _front_rule(svdvals_p))


@overload
def svd(
    a: ArrayLike,
    full_matrices: bool = True,
    compute_uv: Literal[True] = True,
    hermitian: bool = False,
) -> SVDResult: ...
@overload
def svd(
    a: ArrayLike, full_matrices: bool = True, *, compute_uv: Literal[False], hermitian: bool = False
) -> Array: ...
@overload
def svd(
    a: ArrayLike, full_matrices: bool, compute_uv: Literal[False], hermitian: bool = False
) -> Array: ...
def svd(
    a: ArrayLike, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False
) -> SVDResult | Array:
    """Differentiable ``numpy.linalg.svd``: ``SVDResult(U, S, Vh)``, or ``S`` alone with
    ``compute_uv=False``. Derivatives of ``U``/``Vh`` need ``full_matrices=False`` (unless
    ``a`` is square; a traced non-square ``a`` with ``full_matrices=True`` raises) and
    distinct singular values (non-zero too when ``a`` is not square); ``S`` alone is
    differentiable wherever its values are distinct and non-zero."""
    a = _operand(a)
    shape = shape_of(a)
    if len(shape) < 2:
        raise np.linalg.LinAlgError(f"svd: a must be at least two-dimensional (got {shape})")
    if not compute_uv:
        values: Array = svdvals_p.bind(a, hermitian=hermitian)
        return values
    m, n = shape[-2:]
    if full_matrices and m != n:
        if isinstance(a, Tracer):
            raise ValueError(
                f"tnp.linalg.svd: derivatives need full_matrices=False for a non-square "
                f"({m} x {n}) matrix: the extra singular vectors of full_matrices=True are not "
                "unique, hence not differentiable"
            )
        plain: Any = a
        return SVDResult(*np.linalg.svd(plain, full_matrices=True, hermitian=hermitian))
    u, s, vh = svd_p.bind(a, hermitian=hermitian)
    return SVDResult(u, s, vh)


def svdvals(x: ArrayLike, /) -> Array:
    """Differentiable ``numpy.linalg.svdvals`` (``svd(x, compute_uv=False)``)."""
    return svd(x, compute_uv=False)


# ---- norm: a composite of abs, sums, max/min and svdvals -----------------------------------------
def _abs2(x: Any) -> Any:
    return _real(x * _conj(x))


def _vector_norm(x: Any, ord: Any, axis: tuple[int, ...], keepdims: bool) -> Any:
    if ord is None or ord == 2:
        return _elementwise.sqrt(_reductions.sum(_abs2(x), axis=axis, keepdims=keepdims))
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    if ord == np.inf:
        return _reductions.max(_elementwise.abs(x), axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return _reductions.min(_elementwise.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        real_dtype = np.real(np.zeros((), dtype_of(x))).dtype
        nonzero = _shape.astype(_elementwise.abs(x) != 0, real_dtype)
        return _reductions.sum(nonzero, axis=axis, keepdims=keepdims)
    if ord == 1:
        return _reductions.sum(_elementwise.abs(x), axis=axis, keepdims=keepdims)
    p = float(ord)
    total = _reductions.sum(_elementwise.abs(x) ** p, axis=axis, keepdims=keepdims)
    return total ** (1.0 / p)


def _matrix_norm(x: Any, ord: Any, row: int, col: int, keepdims: bool) -> Any:
    if ord in (2, -2, "nuc"):
        y = _shape.moveaxis(x, (row, col), (-2, -1))
        s = svdvals(y)
        if ord == 2:
            out = _reductions.max(s, axis=-1)
        elif ord == -2:
            out = _reductions.min(s, axis=-1)
        else:
            out = _reductions.sum(s, axis=-1)
    elif ord in (1, -1, np.inf, -np.inf):
        summed, other = (row, col) if ord in (1, -1) else (col, row)
        if other > summed:
            other -= 1
        sums = _reductions.sum(_elementwise.abs(x), axis=summed)
        pick = _reductions.max if ord in (1, np.inf) else _reductions.min
        out = pick(sums, axis=other)
    elif ord in (None, "fro", "f"):
        out = _elementwise.sqrt(_reductions.sum(_abs2(x), axis=(row, col)))
    else:
        raise ValueError("Invalid norm order for matrices.")
    if keepdims:
        shape = list(shape_of(x))
        shape[row] = shape[col] = 1
        out = _shape.reshape(out, tuple(shape))
    return out


def norm(
    x: ArrayLike,
    ord: Any = None,
    axis: int | tuple[int, ...] | None = None,
    keepdims: bool = False,
) -> Array:
    """Differentiable ``numpy.linalg.norm``: vector orders ``None``/2, 1, ``inf``, ``-inf``, 0
    (a count: no derivative) and any other ``p``; matrix orders ``'fro'``, ``'nuc'``, 2, -2,
    1, -1, ``inf``, ``-inf``; ``axis`` (an int or a pair) and ``keepdims``. A composite of
    ``abs``, sums, ``max``/``min`` and ``svdvals``: norms built on ``abs`` have no derivative
    at 0 entries (``sqrt`` at 0 gives inf, ``abs`` at 0 gives 0), ties in ``max``/``min``
    share it, and the 2/-2/nuclear norms need distinct singular values."""
    x = _operand(x)
    if not np.issubdtype(dtype_of(x), np.inexact):
        x = _shape.astype(x, np.float64)
    nd = ndim_of(x)
    if axis is None:
        if ord is None or (ord in ("f", "fro") and nd == 2) or (ord == 2 and nd == 1):
            out = _elementwise.sqrt(_reductions.sum(_abs2(_shape.ravel(x))))
            return _shape.reshape(out, (1,) * nd) if keepdims else out
        axes: tuple[int, ...] = tuple(range(nd))
    elif isinstance(axis, (int, np.integer)):
        axes = (int(axis),)
    else:
        axes = tuple(int(a) for a in axis)
    if len(axes) == 1:
        normalize_axes(axes, nd)
        return _vector_norm(x, ord, axes, keepdims)  # type: ignore[no-any-return]
    if len(axes) == 2:
        row, col = (normalize_axes(a, nd)[0] for a in axes)
        if row == col:
            raise ValueError("Duplicate axes given.")
        return _matrix_norm(x, ord, row, col, keepdims)  # type: ignore[no-any-return]
    raise ValueError("Improper number of dimensions to norm.")


# ---- matrix_power, multi_dot, trace: composites -------------------------------------------------
def matrix_power(a: ArrayLike, n: int) -> Array:
    """Differentiable ``numpy.linalg.matrix_power``: a composite of ``matmul`` by repeated
    squaring (``inv`` first for negative ``n``; ``n = 0`` gives the identity, a constant)."""
    a = _operand(a)
    _require_square(a, "matrix_power")
    if not isinstance(n, (int, np.integer)):
        raise TypeError("exponent must be an integer")
    n = int(n)
    if n == 0:
        eye = _eye(shape_of(a)[-1], dtype_of(a))
        return np.broadcast_to(eye, shape_of(a)).copy()
    if n < 0:
        a = inv(a)
        n = -n
    result: Any = None
    square: Any = a
    while True:
        if n & 1:
            result = square if result is None else matmul(result, square)
        n >>= 1
        if not n:
            return result  # type: ignore[no-any-return]
        square = matmul(square, square)


def _chain_order(dims: Sequence[int]) -> list[list[int]]:
    """The optimal parenthesisation of a matrix chain (``s[i][j]``: where to split i..j)."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf  # type: ignore[call-overload]
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j] = c
                    split[i][j] = k
    return split


def multi_dot(arrays: Sequence[ArrayLike], *, out: None = None) -> Array:
    """Differentiable ``numpy.linalg.multi_dot``: ``matmul`` in the cheapest order (a
    composite). The first/last array may be 1-d (a row/column vector), the others 2-d."""
    if out is not None:
        raise TypeError("tnp.linalg.multi_dot: out= is not supported (arrays are values)")
    xs = [_operand(x) for x in arrays]
    if len(xs) < 2:
        raise ValueError("Expecting at least two arrays.")
    first_1d, last_1d = ndim_of(xs[0]) == 1, ndim_of(xs[-1]) == 1
    if first_1d:
        xs[0] = _shape.reshape(xs[0], (1, shape_of(xs[0])[0]))
    if last_1d:
        xs[-1] = _shape.reshape(xs[-1], (shape_of(xs[-1])[0], 1))
    for x in xs:
        if ndim_of(x) != 2:
            raise np.linalg.LinAlgError(
                f"{ndim_of(x)}-dimensional array given. Array must be two-dimensional"
            )
    dims = [shape_of(xs[0])[0]] + [shape_of(x)[1] for x in xs]
    split = _chain_order(dims)

    def chain(i: int, j: int) -> Any:
        if i == j:
            return xs[i]
        k = split[i][j]
        return matmul(chain(i, k), chain(k + 1, j))

    result = chain(0, len(xs) - 1)
    shape = shape_of(result)
    if first_1d and last_1d:
        return _shape.reshape(result, ())
    if first_1d:
        return _shape.reshape(result, shape[1:])
    if last_1d:
        return _shape.reshape(result, shape[:1])
    return result  # type: ignore[no-any-return]


def trace(x: ArrayLike, /, *, offset: int = 0, dtype: Any = None) -> Array:
    """Differentiable ``numpy.linalg.trace`` (NumPy 2): the sum of the ``offset`` diagonal of
    each matrix of a stack (last two axes). A composite of indexing and ``sum``."""
    x = _operand(x)
    shape = shape_of(x)
    if len(shape) < 2:
        raise ValueError(f"trace: x must be at least two-dimensional (got {shape})")
    m, n = shape[-2:]
    rows = np.arange(max(0, -offset), max(0, min(m, n - offset)))
    cols = rows + offset
    diagonal = _indexing.getitem(x, (Ellipsis, rows, cols))
    if dtype is not None:
        diagonal = _shape.astype(diagonal, dtype)
    return _reductions.sum(diagonal, axis=-1)


# ---- NumPy 2's array-API functions: composites of the above and of the products ----------------
def vector_norm(
    x: ArrayLike,
    /,
    *,
    axis: int | tuple[int, ...] | None = None,
    keepdims: bool = False,
    ord: Any = 2,
) -> Array:
    """Differentiable ``numpy.linalg.vector_norm``: ``axis=None`` flattens every axis."""
    x = _operand(x)
    if not np.issubdtype(dtype_of(x), np.inexact):
        x = _shape.astype(x, np.float64)
    nd = ndim_of(x)
    if axis is None:
        out = _vector_norm(_shape.ravel(x), ord, (0,), False)
        return _shape.reshape(out, (1,) * nd) if keepdims else out
    axes = normalize_axes(axis, nd)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes, keepdims)  # type: ignore[no-any-return]
    # several axes: move them to the end, flatten them, and put singletons back if asked
    rest = [i for i in range(nd) if i not in axes]
    y = _shape.transpose(x, (*rest, *axes))
    y = _shape.reshape(y, tuple(shape_of(x)[i] for i in rest) + (-1,))
    out = _vector_norm(y, ord, (-1,), False)
    if keepdims:
        out = _shape.reshape(out, tuple(1 if i in axes else n for i, n in enumerate(shape_of(x))))
    return out  # type: ignore[no-any-return]


def matrix_norm(x: ArrayLike, /, *, keepdims: bool = False, ord: Any = "fro") -> Array:
    """Differentiable ``numpy.linalg.matrix_norm``: ``norm`` over the last two axes."""
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def matrix_transpose(x: ArrayLike, /) -> Array:
    """Differentiable ``numpy.linalg.matrix_transpose``: swaps the last two axes."""
    x = _operand(x)
    if ndim_of(x) < 2:
        raise ValueError("Input array must be at least 2-dimensional")
    return _mT(x)  # type: ignore[no-any-return]


def diagonal(x: ArrayLike, /, *, offset: int = 0) -> Array:
    """Differentiable ``numpy.linalg.diagonal``: the ``offset`` diagonal of each matrix of a
    stack (last two axes), by indexing."""
    x = _operand(x)
    shape = shape_of(x)
    if len(shape) < 2:
        raise ValueError(f"diagonal: x must be at least two-dimensional (got {shape})")
    m, n = shape[-2:]
    rows = np.arange(max(0, -offset), max(0, min(m, n - offset)))
    return _indexing.getitem(x, (Ellipsis, rows, rows + offset))


def vecdot(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1) -> Array:
    """Differentiable ``numpy.linalg.vecdot``: ``sum(conj(x1) * x2, axis)``, broadcasting."""
    a, b = _operand(x1), _operand(x2)
    return _reductions.sum(_conj(a) * b, axis=axis)


def outer(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Differentiable ``numpy.linalg.outer`` of two 1-d arrays."""
    a, b = _operand(x1), _operand(x2)
    if ndim_of(a) != 1 or ndim_of(b) != 1:
        raise ValueError(
            f"Input arrays must be one-dimensional, but they are {ndim_of(a)=} and {ndim_of(b)=}"
        )
    return _products.outer(a, b)


def cross(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1) -> Array:
    """Differentiable ``numpy.linalg.cross`` of 3-vectors (``tnp.cross`` along ``axis``)."""
    a, b = _operand(x1), _operand(x2)
    if shape_of(a)[axis] != 3 or shape_of(b)[axis] != 3:
        raise ValueError(
            "Both input arrays must be (arrays of) 3-dimensional vectors, but they are "
            f"{shape_of(a)[axis]} and {shape_of(b)[axis]} dimensional instead."
        )
    return _products.cross(a, b, axis=axis)


def tensordot(x1: ArrayLike, x2: ArrayLike, /, *, axes: Any = 2) -> Array:
    """Differentiable ``numpy.linalg.tensordot`` (``tnp.tensordot``)."""
    return _products.tensordot(x1, x2, axes)
