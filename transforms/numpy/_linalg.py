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

- ``det`` is differentiable everywhere, at every order: its gradient is the cofactor matrix
  (rank one at rank n-1, zero at rank <= n-2), computed without ``inv`` at singular and
  ill-conditioned matrices (``cofactor_p``). ``slogdet`` at a singular matrix gives NumPy's
  ``(0, -inf)``: the derivative of ``sign`` is 0 there, that of ``logabsdet`` NaN (it has
  none); ``sign`` has a zero derivative for real input everywhere. ``inv``/``solve`` (and
  ``matrix_power`` with a negative exponent) need a non-singular ``a``, as their values do.
- ``cholesky``, ``eigh``, ``eigvalsh``: NumPy (LAPACK) reads one triangle of ``a`` (``UPLO``;
  ``cholesky``: the lower one, the upper one with ``upper=True``) and the imaginary part of
  the diagonal not at all. The derivative is that of this function, for any ``a``: the other
  triangle gets a zero cotangent and the read triangle's off-diagonal entries count twice
  (once for their mirror). Along a Hermitian direction at a Hermitian ``a`` this is the
  familiar derivative; JAX and autograd instead symmetrise the tangent (and JAX the input),
  so their gradients are the Hermitian part of ours.
- Eigenvectors and singular vectors are defined up to a sign (real) or a phase (complex) per
  vector, a LAPACK convention: only gauge-invariant functions (``|v_i|^2``, ``V f(w) V^H``,
  ``U diag(f(s)) V^H``, projectors) have a meaningful derivative. The rules fix the gauge by
  ``Im(v^H dv) = 0`` (``eigh``, ``svd``'s ``V``; ``svd``'s ``U`` carries the phase change of
  each triplet; ``eig``: ``Re(v^H dv) = 0`` with unit ``v``). A real ``eigh``'s sign is locally
  constant, so its tangent is exact.
- Repeated eigenvalues (``eigh``, ``eig``) and singular values (``svd``) have no
  differentiable eigen/singular vectors: their derivatives are inf/nan there (the gaps
  ``1 / (w_j - w_i)`` divide by zero); eigenvalues stay differentiable where distinct.
  ``eig`` does not sort its eigenvalues: their order may jump between nearby matrices, so
  only order-invariant functions of them are differentiable across such a jump.
- ``svd``: derivatives need ``full_matrices=False`` (or a square matrix: the extra singular
  vectors are not unique); non-square, and complex, matrices also need non-zero singular
  values (the phase term divides by them). ``hermitian=True`` takes ``a`` to be Hermitian.
  The 2, -2 and nuclear norms go through ``svdvals``.
- ``qr``: derivatives for ``mode='reduced'``/``'r'`` (and ``'complete'`` where it is the
  same: ``m <= n``) of full-rank matrices: full column rank when tall, a non-singular leading
  ``m x m`` block when wide. ``Q``'s column signs (phases) are LAPACK's, with a real diagonal
  of ``R``: locally constant, except where a column is already zero below the diagonal (a
  triangular input), where LAPACK skips the reflection and the signs jump: differentiate
  sign-invariant functions (``Q R``, ``|Q|^2``) there.
- ``pinv``, ``lstsq``: the derivative is that of the pseudo-inverse at constant rank (in
  practice: full rank). ``lstsq`` is ``pinv(a, rcond) @ b``; its ``residuals`` and ``s`` are
  differentiable too (composites), ``rank`` is an integer.
- Every function takes complex input, with the complex convention of the package: a VJP is
  the transpose of the JVP under ``Re(sum(a * b))``, no conjugation.
- Arrays of another library (Dask) run on its own linear algebra, lazily: ``inv``, ``solve``,
  ``cholesky`` (and what is made of them) on each matrix in one chunk; ``qr`` and ``svd``
  by Dask's tall-and-skinny algorithms (the matrix's columns in one chunk; a wide matrix in
  one chunk), whose signs (phases) of ``Q``'s and ``U``'s columns are Dask's (functions
  invariant under them, as above, are the same); ``pinv`` (and ``lstsq``) by NumPy's
  formula on that SVD. A stack of matrices is a Python loop over the stack (Dask's
  functions take one matrix). What Dask lacks (``det``, ``slogdet``, ``eigh``, ``eigvalsh``,
  ``eig``, ``svd(hermitian=True)``) raises ``ArrayLibraryError``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple, overload

import numpy as np

from transforms.batching import BatchRule, defbatch
from transforms.core import Array, ArrayLibraryError, ArrayLike, Primitive, Tracer, concrete, native
from transforms.core.arrays import is_foreign, library_of, reduce, whole_along
from transforms.core.tree_util import register_pytree_node
from transforms.forward import defjvp, defjvp_joint
from transforms.reverse import defvjp, defvjp_argnum
from transforms.sparsity import defsparsity, dense_rule

from . import _arithmetic, _elementwise, _indexing, _products, _reductions, _shape
from ._batching import elementwise_rule, to_front
from ._define import dtype_of, ndim_of, normalize_axes, shape_of
from ._define import is_complex as _is_complex
from ._products import matmul
from ._shape import in_dtype_of
from ._shape import operand as _operand

__all__ = [
    "matrix_rank",
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
    rank: Array  # an integer array (NumPy: an int32 scalar)
    s: Array


def _register(cls: Any) -> None:
    register_pytree_node(cls, lambda r: (tuple(r), None), lambda _, kids: cls(*kids))


for _cls in (SlogdetResult, EighResult, EigResult, QRResult, SVDResult, LstsqResult):
    _register(_cls)


# ---- helpers (differentiable, broadcasting over leading dimensions) --------------------------
def _mT(x: Any) -> Array:
    """Swap the last two axes (a batched matrix transpose)."""
    n = ndim_of(x)
    return _shape.transpose(x, (*range(n - 2), n - 1, n - 2))


def _conj(x: Array) -> Array:
    return _elementwise.conj(x) if _is_complex(x) else x


def _real(x: Any) -> Any:
    return _elementwise.real(x) if _is_complex(x) else x


def _real_dtype(x: Any) -> np.dtype[Any]:
    return np.finfo(dtype_of(x)).dtype


def _mH(x: Any) -> Array:
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


def _front_rule(primitive: Primitive[Any]) -> BatchRule:
    """Batch a one-operand primitive that already broadcasts over leading dimensions."""

    def rule(values: Sequence[Any], dims: Sequence[int | None], **params: Any) -> Any:
        out = primitive.bind(to_front(values[0], dims[0]), **params)
        if primitive.multiple_results:
            return out, (0,) * len(out)
        return out, 0

    return rule


# ---- arrays of another library: its own linear algebra, matrix by matrix ----------------------
def _foreign(*xs: Any) -> bool:
    """Whether an operand is an array of another library (after NumPy's fast test)."""
    return any(type(x) is not np.ndarray and is_foreign(x) for x in xs)


def _each_matrix(fn: Callable[..., Any], *xs: Any) -> Any:
    """``fn`` of the matrices of ``xs`` (arrays of another library, whose linear algebra takes
    2-D arrays only, as Dask's does), over their broadcast stack dimensions: a Python loop
    over the (static, usually small) stack, each matrix a lazy slice, the results stacked
    lazily. ``fn`` returns an array or a tuple of them."""
    lead = np.broadcast_shapes(*(np.shape(x)[:-2] for x in xs))
    if not lead:
        return fn(*xs)
    if math.prod(lead) == 0:
        raise ArrayLibraryError("linear algebra of an empty stack of matrices", library_of(xs[0]))
    xs = tuple(np.broadcast_to(x, lead + np.shape(x)[-2:]) for x in xs)
    outs = [fn(*(x[index] for x in xs)) for index in np.ndindex(*lead)]

    def stacked(parts: list[Any]) -> Any:
        return np.reshape(np.stack(parts), lead + np.shape(parts[0]))

    if isinstance(outs[0], tuple):
        return tuple(stacked([out[k] for out in outs]) for k in range(len(outs[0])))
    return stacked(outs)


def _whole(m: Any) -> Any:
    """A matrix in one chunk: Dask's LU and Cholesky then run LAPACK's on the whole matrix,
    NumPy's factorisation (its blocked LU of a chunked matrix pivots within diagonal blocks
    only)."""
    return whole_along(m, (-2, -1))


def _tall_and_skinny(m: Any) -> Any:
    """A matrix in the layout of Dask's QR and SVD: a tall one's columns in one chunk (its
    rows stay chunked: the tall-and-skinny algorithm), a wide one in one chunk."""
    rows, cols = np.shape(m)[-2:]
    return whole_along(m, (-1,) if rows >= cols else (-2, -1))


# ---- inv -------------------------------------------------------------------------------------
# d(A^-1) = -A^-1 dA A^-1; its transpose is -A^-T ct A^-T. With ``nan_if_singular`` (slogdet's
# rules) a singular matrix of the stack gets NaN instead of NumPy's LinAlgError: the derivative
# of log|det| does not exist there.
def _inv_impl(a: Any, nan_if_singular: bool) -> Any:
    if _foreign(a):  # (nan_if_singular serves slogdet, which Dask lacks)
        return _each_matrix(lambda m: np.linalg.inv(_whole(m)), a)
    if not nan_if_singular:
        return np.linalg.inv(a)
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        n = np.shape(a)[-1]
        out = np.empty(np.shape(a), np.result_type(a, 1.0))
        flat = out.reshape(-1, n, n)
        for i, m in enumerate(np.reshape(a, (-1, n, n))):
            try:
                flat[i] = np.linalg.inv(m)
            except np.linalg.LinAlgError:
                flat[i] = np.nan
        return out


inv_p = Primitive("inv", _inv_impl)
defjvp(inv_p, lambda t, ans, a, nan_if_singular: -matmul(matmul(ans, t), ans))


def _inv_vjp(ans: Any, a: Any, nan_if_singular: bool) -> Callable[[Any], Any]:
    ans_t = _mT(ans)
    return lambda ct: -matmul(matmul(ans_t, ct), ans_t)


defvjp(inv_p, _inv_vjp)
defbatch(inv_p, _front_rule(inv_p))
defsparsity(inv_p, dense_rule)


def inv(a: ArrayLike) -> Array:
    """Differentiable ``numpy.linalg.inv`` (stacks of matrices too)."""
    a = _operand(a)
    _require_square(a, "inv")
    return inv_p.bind(a, nan_if_singular=False)


# ---- cofactor: the gradient of det, and its derivatives of every order ---------------------------
# det is a polynomial, so its derivatives exist everywhere, singular matrices included: the
# gradient is the cofactor matrix cof(A) = det(A) A^-T (rank n-1: rank one; rank <= n-2: zero).
# ``cofactor_p(a, e_1, ..., e_k)`` is the k-th derivative of cof at ``a`` along ``e_1..e_k``,
# i.e. the gradient in X of D^(k+1) det(a)[e_1, ..., e_k, X]: symmetric and multilinear in
# the e_i, so its JVP appends the tangent as one more direction (or puts it in place of the e_i
# it belongs to), and under the pairing sum(a * b) its VJP for every operand is the same
# primitive with the cotangent as the last direction. One primitive closes every order.
#
# Values: the coefficient of t_1...t_k in cof(B + sum t_i E_i) follows from B^-1 and det(B)
# by recurrences over the subsets of {1..k} (``_cofactor_series``), used directly for a
# well-conditioned ``a`` (and for k = 0 at any ``a`` that LU does not find singular:
# det(a) a^-T). Otherwise, with a = U S V^H (SVD), the polynomial identity
# cof(a + X) = det(U V^H) conj(U) cof(S + U^H X V) V^T moves to the diagonal S, where the
# coefficients are affine in each singular value: the small ones (<= _SMALL * s_max) are
# replaced by +-s_max, the series evaluated there, and the exact affine interpolation at the
# true values taken. More than k + 1 singular values at rounding level make the result 0.
_WELL_CONDITIONED = 1e6  # 1-norm condition number up to which B^-1 is used as it is
_SMALL = 1e-4
_NORMAL = float(np.finfo(np.float64).tiny / np.finfo(np.float64).eps)  # |det| with full precision


def _bits(mask: int) -> list[int]:
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


def _subsets(mask: int) -> list[int]:
    out, sub = [], mask
    while True:
        out.append(sub)
        if not sub:
            return out
        sub = (sub - 1) & mask


def _trace_of_product(x: Any, y: Any) -> Any:
    """``tr(x @ y)`` for stacks of matrices (raw NumPy)."""
    return reduce(np.add, x * y.swapaxes(-1, -2), (-2, -1))


def _cofactor_series(inv_b: Any, det_b: Any, es: Sequence[Any]) -> Any:
    """The coefficient of t_1...t_k in cof(B + sum_i t_i E_i) (raw NumPy, stacks), from
    ``inv_b = B^-1`` and ``det_b = det(B)``. With X_K, d_K the coefficients of t_K in
    (B + N)^-1 and det(B + N): X_K = -B^-1 sum_{i in K} E_i X_{K-i}, d_K = sum over
    K' within K - i (i = min K) of d_{K'} tr(X_{K-i-K'} E_i), and cof = det * inv^T."""
    full = (1 << len(es)) - 1
    inverses = {0: inv_b}
    dets = {0: det_b}
    for mask in range(1, full + 1):  # every proper subset of mask comes before it
        acc = sum(es[i] @ inverses[mask & ~(1 << i)] for i in _bits(mask))
        inverses[mask] = -(inv_b @ acc)
        first = _bits(mask)[0]
        rest = mask & ~(1 << first)
        dets[mask] = sum(
            dets[sub] * _trace_of_product(inverses[rest & ~sub], es[first])
            for sub in _subsets(rest)
        )
    return sum(
        dets[sub][..., None, None] * np.swapaxes(inverses[full & ~sub], -1, -2)
        for sub in _subsets(full)
    )


def _cofactor_by_svd(a: Any, es: Sequence[Any]) -> Any:
    """``_cofactor_series`` at any one matrix ``a`` (singular or not), through its SVD, for
    directions ``es`` that may be stacks."""
    n, k = a.shape[-1], len(es)
    shape = np.broadcast_shapes(a.shape, *(e.shape for e in es))
    if not np.all(np.isfinite(a)):
        return np.full(shape, np.nan, a.dtype)
    u, s, vh = np.linalg.svd(a)
    fs = [u.conj().T @ e @ vh.conj().T for e in es]
    s_max = s[0]
    if np.count_nonzero(s <= n * np.finfo(s.dtype).eps * s_max) > k + 1:
        return np.zeros(shape, a.dtype)
    small = np.flatnonzero(s <= _SMALL * s_max)[-(k + 2) :]
    r = s_max if s_max > 0 else 1.0
    total: Any = 0.0
    for signs in itertools.product((1.0, -1.0), repeat=len(small)):
        d = s.copy()
        d[small] = np.array(signs) * r
        weight = np.prod((1.0 + np.array(signs) * s[small] / r) / 2.0)
        diag = np.diag(1.0 / d).astype(a.dtype)
        total = total + weight * _cofactor_series(diag, np.prod(d), fs)
    sigma = np.linalg.det(u) * np.linalg.det(vh)
    return sigma * (u.conj() @ total @ vh.conj())


def _one_norm(x: Any) -> Any:
    return reduce(np.maximum, reduce(np.add, np.abs(x), -2), -1)


def _well_conditioned(a: Any) -> Any:
    """``a^-1`` if every matrix of the stack ``a`` is well-conditioned, else ``None``."""
    try:
        inv_a = np.linalg.inv(a)
    except np.linalg.LinAlgError:  # an exactly singular matrix
        return None
    good = _one_norm(a) * _one_norm(inv_a) <= _WELL_CONDITIONED
    return inv_a if good.all() else None


def _largest(x: Any) -> Any:
    """The largest magnitude in each matrix of the stack ``x`` (1 for a zero matrix)."""
    m = reduce(np.maximum, np.abs(x), (-2, -1), initial=0.0)
    return np.where(m > 0, m, 1.0)


def _cofactor_impl(a: Any, *es: Any, det: Any = None) -> Any:
    """``cofactor_p``'s value (raw NumPy; ``det``: det(a), if the caller has it)."""
    if not es and a.dtype.char in "dD":  # the gradient of det, at once: det(a) a^-T
        # from one LU factorisation (as JAX's, and as accurate near a singular matrix: the
        # small pivot of det cancels that of a^-1); an exactly singular matrix, or det out of
        # the floating-point range, takes the general path
        try:
            inv_a = np.linalg.inv(a)
        except np.linalg.LinAlgError:
            inv_a = None
        if inv_a is not None:
            det_a = np.linalg.det(a) if det is None else det
            size = np.abs(det_a)
            if ((size >= _NORMAL) & (size < np.inf)).all():
                return det_a[..., None, None] * inv_a.swapaxes(-1, -2)
    dtype = np.result_type(a, *es)
    work = np.result_type(dtype, np.float64)
    shape = np.broadcast_shapes(np.shape(a), *(np.shape(e) for e in es))
    n, k = shape[-1], len(es)
    if k >= n:  # D^(k+1) det = 0 beyond the degree n of det
        return np.zeros(shape, dtype)
    # a's own matrices (leading axes padded to the result's), each decided once: under
    # jacfwd one matrix meets a whole stack of directions. cof_k is homogeneous of degree
    # n - 1 - k in a and linear in each e_i: scaling every matrix to entries of size 1 keeps
    # the recurrences clear of overflow and underflow.
    mats = np.asarray(a, work).reshape((1,) * (len(shape) - np.ndim(a)) + np.shape(a))
    scale = _largest(mats)
    mats = mats / scale[..., None, None]
    factor = scale ** (n - 1 - k)
    dirs = []
    for e in es:
        size = _largest(e)
        dirs.append(np.asarray(e, work) / size[..., None, None])
        factor = factor * size
    inv_b = _well_conditioned(mats)
    if inv_b is not None:
        out = _cofactor_series(inv_b, np.linalg.det(mats), dirs)
    else:  # matrix by matrix: the series where it is well-conditioned, the SVD elsewhere
        out = np.empty(shape, work)
        full = [np.broadcast_to(d, shape) for d in dirs]
        lead = mats.shape[:-2]
        for index in np.ndindex(lead):
            at = tuple(slice(None) if m == 1 else i for i, m in zip(index, lead, strict=True))
            m = mats[index]
            inv_m = _well_conditioned(m)
            sub = [d[at] for d in full]
            if inv_m is None:
                out[at] = _cofactor_by_svd(m, sub)
            else:
                out[at] = _cofactor_series(inv_m, np.linalg.det(m), sub)
    out = out * factor[..., None, None]
    return out.astype(dtype, copy=False)


cofactor_p = Primitive("cofactor", _cofactor_impl)


def _cofactor_jvp(ts: Sequence[Any], ans: Any, a: Any, *es: Any) -> Any:
    terms = [] if ts[0] is None else [cofactor_p.bind(a, *es, ts[0])]
    for i, t in enumerate(ts[1:]):
        if t is not None:
            terms.append(cofactor_p.bind(a, *es[:i], t, *es[i + 1 :]))
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    return total


def _cofactor_vjp(argnum: int, ans: Any, a: Any, *es: Any) -> Callable[[Any], Any]:
    operand = a if argnum == 0 else es[argnum - 1]
    others = es if argnum == 0 else es[: argnum - 1] + es[argnum:]
    shape = shape_of(operand)
    return in_dtype_of(
        operand,
        ans,
        lambda ct: _shape.unbroadcast(cofactor_p.bind(a, *others, ct), shape),
    )


defjvp_joint(cofactor_p, _cofactor_jvp)
defvjp_argnum(cofactor_p, _cofactor_vjp)
defbatch(cofactor_p, elementwise_rule(cofactor_p, gufunc=True))
defsparsity(cofactor_p, dense_rule)


def _cofactor(a: Any, det_a: Any) -> Any:
    """cof(a) = d det(a) / da; on a plain array the value of det(a) at hand is reused."""
    if isinstance(a, Tracer):
        return cofactor_p.bind(a)
    return _cofactor_impl(a, det=det_a)


# ---- det ---------------------------------------------------------------------------------------
# d det(A) = sum(cof(A) * dA); the VJP is ct cof(A). Exact at singular matrices too.
det_p = Primitive("det", np.linalg.det)
defjvp(det_p, lambda t, ans, a: _reductions.sum(_cofactor(a, ans) * t, axis=(-2, -1)))


def _det_vjp(ans: Any, a: Any) -> Callable[[Any], Any]:
    cof = _cofactor(a, ans)
    return lambda ct: _cols(_cols(ct)) * cof


defvjp(det_p, _det_vjp)
defbatch(det_p, _front_rule(det_p))
defsparsity(det_p, dense_rule)


def det(a: ArrayLike) -> Array:
    """Differentiable ``numpy.linalg.det``, at every order and at singular matrices too (the
    gradient is the cofactor matrix, see the module notes)."""
    a = _operand(a)
    _require_square(a, "det")
    return det_p.bind(a)


# ---- slogdet (sign, logabsdet) -------------------------------------------------------------------
# With tr = tr(A^-1 dA) = sum(A^-T * dA): d logabsdet = Re(tr); d sign = sign * i Im(tr) (zero for
# real A). At a singular A (sign 0, logabsdet -inf, as in NumPy) logabsdet has no derivative
# (log|t| at t = 0): NaN; sign gets 0, as in JAX; nothing raises.
slogdet_p = Primitive("slogdet", lambda a: tuple(np.linalg.slogdet(a)), multiple_results=True)


def _log_det_gradient(a: Any) -> Any:
    return _mT(inv_p.bind(a, nan_if_singular=True))


def _any_singular(sign: Any) -> bool:
    """Whether a matrix of the stack is singular (decided on the primal values, at forward
    time: a non-singular stack pays nothing for the guards below)."""
    return bool((concrete(sign) == 0).any())


def _slogdet_jvp(t: Any, ans: Any, a: Any) -> tuple[Any, Any]:
    sign = ans[0]
    tr = _reductions.sum(_log_det_gradient(a) * t, axis=(-2, -1))
    if not _is_complex(tr):
        return None, tr
    re = _elementwise.real(tr)
    sign_dot = sign * (tr - re)
    if _any_singular(sign):
        sign_dot = _shape.where(_arithmetic.equal(sign, 0), 0.0, sign_dot)
    return sign_dot, re


def _slogdet_vjp(ans: Any, a: Any) -> Callable[[Any], Any]:
    sign = ans[0]
    singular = _any_singular(sign)
    if singular:
        # A singular matrix's NaN is placed by a where over the inverse of an identity in
        # its place, not taken from inv: reverse mode of this pullback (hessian) then
        # pulls the zero cotangent of the masked entries back through a finite inverse,
        # where 0 * inv's NaN would make every entry of a singular matrix's Hessian NaN.
        bad = _cols(_cols(_arithmetic.equal(sign, 0)))
        eye = np.eye(shape_of(a)[-1], dtype=dtype_of(a))
        inv_t = _shape.where(bad, np.nan, _log_det_gradient(_shape.where(bad, eye, a)))
    else:
        inv_t = _log_det_gradient(a)

    def pullback(cts: Any) -> Any:
        ct_sign, ct_logabsdet = cts
        k = ct_logabsdet
        if _is_complex(sign):
            cs = ct_sign * sign
            k = k + (cs - _elementwise.real(cs))
        k = _cols(_cols(k))
        if singular:  # an unused logabsdet (zero cotangent) contributes 0, not 0 * NaN
            return k * _shape.where(_arithmetic.equal(k, 0), 0.0, inv_t)
        return k * inv_t

    return pullback


defjvp(slogdet_p, _slogdet_jvp)
defvjp(slogdet_p, _slogdet_vjp)
defbatch(slogdet_p, _front_rule(slogdet_p))
defsparsity(slogdet_p, dense_rule)


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
def _solve_impl(a: Any, b: Any) -> Any:
    if _foreign(a, b):
        return _each_matrix(lambda m, rhs: np.linalg.solve(_whole(m), _whole(rhs)), a, b)
    return np.linalg.solve(a, b)


solve_p = Primitive("solve", _solve_impl)
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
defbatch(solve_p, elementwise_rule(solve_p, gufunc=True))
defsparsity(solve_p, dense_rule)


def _solve(a: Any, b: Any) -> Array:
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
    return _solve(a, b)


# ---- pinv ----------------------------------------------------------------------------------------
# At constant rank (Golub & Pereyra), with P = A^+:
#   dP = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P.
# Transposed term by term under Re(sum(a * b)):
#   ct_A = -P^T G P^T + conj((I - A P) G^T P P^H + P^H P G^T (I - P A)).
def _pinv_impl(a: Any, rcond: Any, hermitian: bool, rtol: Any) -> Any:
    if _foreign(a):
        return _foreign_pinv(a, rcond, hermitian, rtol)
    kwargs: dict[str, Any] = {"hermitian": hermitian}
    if rcond is not None:
        kwargs["rcond"] = rcond
    if rtol is not None:
        kwargs["rtol"] = rtol
    return np.linalg.pinv(a, **kwargs)


def _foreign_pinv(a: Any, rcond: Any, hermitian: bool, rtol: Any) -> Any:
    """NumPy's ``pinv`` (its formula: the SVD of ``conj(a)``, singular values at most
    ``rcond * max(s)`` dropped) on the SVD of another library, which lacks ``pinv``; lazy:
    the cut is a ``where``. ``V diag(1/s) U^H`` does not depend on the SVD's gauge."""
    if rcond is None:
        rcond = 1e-15 if rtol is None else rtol  # NumPy's defaults, as the impl passes them
    u, s, vh = _foreign_svd(np.conj(a), hermitian)
    large = s > np.asarray(rcond)[..., None] * np.max(s, axis=-1, keepdims=True)
    inverse = np.where(large, 1 / np.where(large, s, 1), 0)
    return np.matmul(np.swapaxes(vh, -1, -2), inverse[..., None] * np.swapaxes(u, -1, -2))


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
defsparsity(pinv_p, dense_rule)


def pinv(a: ArrayLike, rcond: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Array:
    """Differentiable ``numpy.linalg.pinv``. The derivative is that of the pseudo-inverse at
    constant rank: exact for full-rank ``a``; at a rank-deficient ``a`` it holds only along
    directions that keep the rank (the pseudo-inverse is discontinuous there)."""
    a = _operand(a)
    return pinv_p.bind(a, rcond=rcond, hermitian=hermitian, rtol=rtol)


# ---- lstsq: a composite of pinv, matmul and svd --------------------------------------------------
def lstsq(a: ArrayLike, b: ArrayLike, rcond: float | None = None) -> LstsqResult:
    """Differentiable ``numpy.linalg.lstsq``: ``(x, residuals, rank, s)``.

    A composite: ``x = pinv(a, rcond) @ b`` (NumPy's default ``rcond``, ``eps * max(m, n)``),
    ``s`` the singular values of ``a``, ``residuals = sum(|b - a x|^2)`` over the rows (empty
    unless ``a`` is tall and of full rank, as in NumPy) and ``rank`` an integer. ``x``,
    ``residuals`` and ``s`` are differentiable, at constant (in practice: full) rank; values
    agree with NumPy's to rounding. Under ``vmap`` residuals are computed as if every
    example had full rank, and so they are for an array of another library (Dask: its rank is
    not computed to decide the residuals' shape). Stacks of matrices are accepted too.
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
        rank = _reductions.sum(s > cutoff, axis=-1, dtype=np.int32)  # NumPy's dtype
    else:
        rank = np.zeros(shape[:-2], dtype=np.int32)
    full = rank == n
    full_rank = True if isinstance(full, Tracer) or _foreign(full) else bool(np.all(full))
    if m > n and full_rank:
        r = b - matmul(a, x)
        r2 = _real(r * _conj(r))
        if ndim_of(b) == 1:
            residuals = _reductions.sum(r2, axis=-1, keepdims=True)
        else:
            residuals = _reductions.sum(r2, axis=-2)
    else:
        real_dtype = np.finfo(np.result_type(dtype_of(a), dtype_of(b))).dtype  # as NumPy
        residuals = np.empty((0,), dtype=real_dtype)
    return LstsqResult(x, residuals, rank, s)


# ---- reading one triangle: what LAPACK decomposes in cholesky, eigh, eigvalsh --------------------
# NumPy (LAPACK) reads one triangle of ``a``: the matrix it factors is H = P(a) with
# P(X) = S + S^H + Re(diag X), S the strict lower (UPLO='L') or upper ('U') triangle of X, so the
# derivative is that of P: the other triangle has none, the read one counts twice (once as
# itself, once as its mirror), the imaginary part of the diagonal none. P's transpose under
# Re(sum(a * b)) is K -> S(K) + S(K^H) + Re(diag K).
def _triangle(x: Any, uplo: str) -> Any:
    """The strict lower (``'L'``) or upper (``'U'``) triangle of ``x``."""
    n = shape_of(x)[-1]
    mask = np.tril(np.ones((n, n), _real_dtype(x)), -1)
    return x * (mask if uplo == "L" else mask.T)


def _read_hermitian(x: Any, uplo: str) -> Any:
    """P(x): the Hermitian matrix that LAPACK reads from the ``uplo`` triangle of ``x``."""
    s = _triangle(x, uplo)
    return s + _mH(s) + _real(x) * _eye(shape_of(x)[-1], _real_dtype(x))


def _read_hermitian_transpose(k: Any, uplo: str) -> Any:
    """P^T(k), the transpose of ``_read_hermitian``: the cotangent of the matrix read."""
    return _triangle(k + _mH(k), uplo) + _real(k) * _eye(shape_of(k)[-1], _real_dtype(k))


# ---- cholesky ------------------------------------------------------------------------------------
# A = L L^H of the matrix read from the lower triangle (``upper=True`` reads the upper one, as
# NumPy: cholesky(a, upper=True) = cholesky(a^H)^H). With S = P(dA): dL = L Phi(L^-1 S L^-H),
# Phi = lower triangle, diagonal halved (real: L's diagonal is). Transposed under
# Re(sum(a * b)): ct_A = P^T(L^-T Phi(L^T G) conj(L)^-1) (Murray, arXiv:1602.07527, real case).
def _phi(x: Any) -> Any:
    n = shape_of(x)[-1]
    mask = np.tril(np.ones((n, n), dtype=dtype_of(x))) - 0.5 * _eye(n, dtype_of(x))
    return x * mask


def _cholesky_jvp(t: Any, ans: Any, a: Any) -> Any:
    low = ans
    x = _solve(low, _mH(_solve(low, _read_hermitian(t, "L"))))  # L^-1 S L^-H (S Hermitian)
    return matmul(low, _phi(x))


def _cholesky_vjp(ans: Any, a: Any) -> Callable[[Any], Any]:
    low_t, low_h = _mT(ans), _mH(ans)

    def pullback(ct: Any) -> Any:
        y = _phi(matmul(low_t, ct))
        z = _mT(_solve(low_h, _mT(_solve(low_t, y))))  # L^-T Y conj(L)^-1
        return _read_hermitian_transpose(z, "L")

    return pullback


def _cholesky_impl(a: Any) -> Any:
    if _foreign(a):
        return _each_matrix(_foreign_cholesky, a)
    return np.linalg.cholesky(a)


def _foreign_cholesky(m: Any) -> Any:
    """The lower Cholesky factor of a matrix of another library, read from its lower triangle.
    Dask's ``numpy.linalg.cholesky`` is its ``cholesky(a, lower=False)``: the upper factor
    ``L^H`` (of a matrix in one chunk, NumPy's ``L`` transposed)."""
    factor = np.linalg.cholesky(_whole(m))
    return _mH(factor) if library_of(m) == "dask" else factor


cholesky_p = Primitive("cholesky", _cholesky_impl)
defjvp(cholesky_p, _cholesky_jvp)
defvjp(cholesky_p, _cholesky_vjp)
defbatch(cholesky_p, _front_rule(cholesky_p))
defsparsity(cholesky_p, dense_rule)


def cholesky(a: ArrayLike, /, *, upper: bool = False) -> Array:
    """Differentiable ``numpy.linalg.cholesky`` of the Hermitian positive-definite matrix read
    from the lower triangle of ``a`` (the upper one with ``upper=True``, which returns ``L^H``),
    real or complex; the derivative is of that function (see the module notes)."""
    a = _operand(a)
    _require_square(a, "cholesky")
    if upper:
        return _mH(cholesky_p.bind(_mH(a)))
    return cholesky_p.bind(a)


# ---- qr (mode='reduced') ------------------------------------------------------------------------
# Square or tall (m >= n), full column rank, R with LAPACK's real diagonal. With B = dA R^-1,
# C = Q^H B and Omega = Q^H dQ = L - L^H + i Im(diag C) (L = tril(C, -1); skew-Hermitian):
#   dQ = Q (Omega - C) + B,  dR = (C - Omega) R   (Townsend, "Differentiating the QR
# decomposition", with the complex diagonal term). Transposed under Re(sum(a * b)):
#   M = Q^T GQ - GR R^T, N = tril(M, -1) - tril(M^H, -1) + i Im(diag M) - M,
#   ct_A = (GQ + conj(Q) N) R^-T.
# Wide (m < n): A = [X | Y] with X square, and LAPACK's Q is that of X: (Q, U) = qr(X),
# R = [U | V], V = Q^H Y, so dV = dQ^H Y + Q^H dY; transposed: GQ gains conj(Y GV^T) before
# the square rule, and ct_Y = conj(Q) GV. X must be non-singular.
def _imag_diagonal(x: Any) -> Any:
    """``i Im(diag(x))`` as a diagonal matrix (0 for real ``x``)."""
    return (x - _conj(x)) * (0.5 * _eye(shape_of(x)[-1], _real_dtype(x)))


def _columns(x: Any, start: int | None, stop: int | None) -> Any:
    return _indexing.getitem(x, (Ellipsis, slice(start, stop)))


def _qr_tall_jvp(t: Any, q: Any, r: Any) -> tuple[Any, Any]:
    b = _mT(_solve(_mT(r), _mT(t)))  # dA R^-1
    c = matmul(_mH(q), b)
    low = _triangle(c, "L")
    omega = low - _mH(low)
    if _is_complex(c):
        omega = omega + _imag_diagonal(c)
    return matmul(q, omega - c) + b, matmul(c - omega, r)


def _qr_tall_pullback(q: Any, r: Any, ct_q: Any, ct_r: Any) -> Any:
    m = matmul(_mT(q), ct_q) - matmul(ct_r, _mT(r))
    n = _triangle(m, "L") - _triangle(_mH(m), "L") - m
    if _is_complex(m):
        n = n + _imag_diagonal(m)
    w = ct_q + matmul(_conj(q), n)
    return _mT(_solve(r, _mT(w)))  # W R^-T


def _qr_jvp(t: Any, ans: Any, a: Any) -> tuple[Any, Any]:
    q, r = ans
    m, n = shape_of(a)[-2:]
    if m >= n:
        return _qr_tall_jvp(t, q, r)
    d_q, d_u = _qr_tall_jvp(_columns(t, None, m), q, _columns(r, None, m))
    d_v = matmul(_mH(d_q), _columns(a, m, None)) + matmul(_mH(q), _columns(t, m, None))
    return d_q, _shape.concatenate([d_u, d_v], axis=-1)


def _qr_vjp(ans: Any, a: Any) -> Callable[[Any], Any]:
    q, r = ans
    m, n = shape_of(a)[-2:]
    if m >= n:
        return lambda cts: _qr_tall_pullback(q, r, *cts)
    u, y = _columns(r, None, m), _columns(a, m, None)

    def pullback(cts: Any) -> Any:
        ct_q, ct_r = cts
        ct_u, ct_v = _columns(ct_r, None, m), _columns(ct_r, m, None)
        ct_x = _qr_tall_pullback(q, u, ct_q + _conj(matmul(y, _mT(ct_v))), ct_u)
        return _shape.concatenate([ct_x, matmul(_conj(q), ct_v)], axis=-1)

    return pullback


def _qr_impl(a: Any) -> tuple[Any, ...]:
    if _foreign(a):  # Dask's qr has no mode: it is the reduced one
        return _each_matrix(lambda m: tuple(np.linalg.qr(_tall_and_skinny(m))), a)  # type: ignore[no-any-return]
    return tuple(np.linalg.qr(a, mode="reduced"))


qr_p = Primitive("qr", _qr_impl, multiple_results=True)
defjvp(qr_p, _qr_jvp)
defvjp(qr_p, _qr_vjp)
defbatch(qr_p, _front_rule(qr_p))
defsparsity(qr_p, dense_rule)


@overload
def qr(a: ArrayLike, mode: Literal["reduced", "complete"] = "reduced") -> QRResult: ...
@overload
def qr(a: ArrayLike, mode: Literal["r"]) -> Array: ...
@overload
def qr(a: ArrayLike, mode: Literal["raw"]) -> tuple[Array, Array]: ...
def qr(a: ArrayLike, mode: str = "reduced") -> QRResult | Array | tuple[Array, Array]:
    """Differentiable ``numpy.linalg.qr``: ``QRResult(Q, R)`` for ``mode='reduced'`` (and
    ``'complete'`` where it equals ``'reduced'``: ``m <= n``), or ``R`` alone for ``mode='r'``;
    real or complex. Derivatives need full rank: full column rank for ``m >= n``, a
    non-singular leading ``m x m`` block for a wide ``a``; ``Q``'s column signs (phases) are
    LAPACK's, with a real diagonal of ``R``, locally constant. ``'raw'`` and a tall
    ``'complete'`` are NumPy's, for plain arrays (the extra columns of a complete ``Q`` are not
    unique, hence not differentiable)."""
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


# ---- eigh, eigvalsh (symmetric / Hermitian) -------------------------------------------------
# Of the matrix P(a) read from the ``UPLO`` triangle (see above). With C = V^H P(dA) V and
# F_ij = 1 / (w_j - w_i): dw = Re(diag C), dV = V (F * C) (eigenvectors kept orthogonal to their
# own tangent: V^H dV has a zero diagonal). Transposed:
# ct_A = P^T(conj(V) (diag(Gw) + F * (V^T GV)) V^T).
def _eigh_jvp(t: Any, ans: Any, a: Any, UPLO: str) -> tuple[Any, Any]:
    w, v = ans
    c = matmul(_mH(v), matmul(_read_hermitian(t, UPLO), v))
    return _real(_diagonal(c)), matmul(v, _reciprocal_gaps(w) * c)


def _eigh_vjp(ans: Any, a: Any, UPLO: str) -> Callable[[Any], Any]:
    w, v = ans
    gaps = _reciprocal_gaps(w)
    v_t, v_conj = _mT(v), _conj(v)

    def pullback(cts: Any) -> Any:
        ct_w, ct_v = cts
        k = _diag_embed(ct_w) + gaps * matmul(v_t, ct_v)
        return _read_hermitian_transpose(matmul(v_conj, matmul(k, v_t)), UPLO)

    return pullback


eigh_p = Primitive(
    "eigh", lambda a, UPLO: tuple(np.linalg.eigh(a, UPLO=UPLO)), multiple_results=True
)
defjvp(eigh_p, _eigh_jvp)
defvjp(eigh_p, _eigh_vjp)
defbatch(eigh_p, _front_rule(eigh_p))
defsparsity(eigh_p, dense_rule)


def eigh(a: ArrayLike, UPLO: str = "L") -> EighResult:
    """Differentiable ``numpy.linalg.eigh``: ``EighResult(eigenvalues, eigenvectors)`` of the
    real symmetric or complex Hermitian matrix NumPy reads from the ``UPLO`` triangle of
    ``a`` (the derivative is of that function: the other triangle has none). Eigenvector
    derivatives need distinct eigenvalues, and of complex eigenvectors only gauge-invariant
    functions are meaningful (see the module notes)."""
    a = _operand(a)
    _require_square(a, "eigh")
    if UPLO not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    w, v = eigh_p.bind(a, UPLO=UPLO)
    return EighResult(w, v)


# dw = Re(diag(V^H P(dA) V)) = Re(sum(conj(V) * (P(dA) V), axis=-2)); transposed:
# P^T(conj(V) diag(ct) V^T).
def _eigvalsh_jvp(t: Any, ans: Any, a: Any, UPLO: str) -> Any:
    v = eigh_p.bind(a, UPLO=UPLO)[1]
    return _real(_reductions.sum(_conj(v) * matmul(_read_hermitian(t, UPLO), v), axis=-2))


def _eigvalsh_vjp(ans: Any, a: Any, UPLO: str) -> Callable[[Any], Any]:
    v = eigh_p.bind(a, UPLO=UPLO)[1]
    v_t, v_conj = _mT(v), _conj(v)
    return lambda ct: _read_hermitian_transpose(matmul(v_conj * _rows(ct), v_t), UPLO)


eigvalsh_p = Primitive("eigvalsh", lambda a, UPLO: np.linalg.eigvalsh(a, UPLO=UPLO))
defjvp(eigvalsh_p, _eigvalsh_jvp)
defvjp(eigvalsh_p, _eigvalsh_vjp)
defbatch(eigvalsh_p, _front_rule(eigvalsh_p))
defsparsity(eigvalsh_p, dense_rule)


def eigvalsh(a: ArrayLike, UPLO: str = "L") -> Array:
    """Differentiable ``numpy.linalg.eigvalsh`` of the matrix read from the ``UPLO`` triangle
    (real or complex; derivatives exist where the eigenvalues are distinct: at a repeated
    eigenvalue the formula gives one of the one-sided derivatives)."""
    a = _operand(a)
    _require_square(a, "eigvalsh")
    if UPLO not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return eigvalsh_p.bind(a, UPLO=UPLO)


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
defsparsity(eig_p, dense_rule)


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
# With P = U^H dA V, F_ij = 1 / (s_j^2 - s_i^2) off the diagonal, S = diag(s):
#   ds = Re(diag P)
#   dU = U (F * (P S + S P^H) + i Im(diag P) S^-1) + (I - U U^H) dA V S^-1    (last if m > k)
#   dV = V (F * (S P + P^H S)) + (I - V V^H) dA^H U S^-1                     (last if n > k)
# (JAX's gauge: V^H dV has a zero diagonal, U^H dU the imaginary i Im(P_ii) / s_i; for real
# input that term is 0). Transposed under Re(sum(a * b)), with J = F * (U^T GU),
# K = F * (V^T GV), GV = GVh^H:
#   ct_A = conj(U) (diag(Gs) + (J + J^H) S + S (K + K^H) + i Im(diag(U^T GU)) S^-1) V^T
#          + (GU - conj(U) U^T GU) S^-1 V^T + conj(U) S^-1 (GVh - GVh conj(V) V^T).
def _svd_gaps(s: Any) -> Any:
    eye = _eye(shape_of(s)[-1], dtype_of(s))
    return 1.0 / ((_rows(s) - _cols(s)) * (_rows(s) + _cols(s)) + eye) - eye


def _svd_jvp(t: Any, ans: Any, a: Any, hermitian: bool) -> tuple[Any, Any, Any]:
    u, s, vh = ans
    v = _mH(vh)
    m, n = shape_of(a)[-2:]
    k = shape_of(s)[-1]
    t_v = matmul(t, v)
    p = matmul(_mH(u), t_v)
    f = _svd_gaps(s)
    s_row, s_col = _rows(s), _cols(s)
    d_u = matmul(u, f * (p * s_row + s_col * _mH(p)))
    if _is_complex(p):
        d_u = d_u + matmul(u, _imag_diagonal(p) / s_row)
    d_v = matmul(v, f * (s_col * p + _mH(p) * s_row))
    if m > k:
        d_u = d_u + (t_v - matmul(u, matmul(_mH(u), t_v))) / s_row
    if n > k:
        t_u = matmul(_mH(t), u)
        d_v = d_v + (t_u - matmul(v, matmul(vh, t_u))) / s_row
    return d_u, _real(_diagonal(p)), _mH(d_v)


def _svd_vjp(ans: Any, a: Any, hermitian: bool) -> Callable[[Any], Any]:
    u, s, vh = ans
    u_t, u_conj, vh_conj = _mT(u), _conj(u), _conj(vh)  # V^T = conj(Vh)
    m, n = shape_of(a)[-2:]
    k = shape_of(s)[-1]
    f = _svd_gaps(s)
    s_row, s_col = _rows(s), _cols(s)

    def pullback(cts: Any) -> Any:
        ct_u, ct_s, ct_vh = cts
        u_ct = matmul(u_t, ct_u)
        j = f * u_ct
        kk = f * matmul(vh_conj, _mH(ct_vh))
        d = _diag_embed(ct_s) + (j + _mH(j)) * s_row + s_col * (kk + _mH(kk))
        if _is_complex(u_ct):
            d = d + _imag_diagonal(u_ct) / s_row
        out = matmul(matmul(u_conj, d), vh_conj)
        if m > k:
            out = out + matmul((ct_u - matmul(u_conj, u_ct)) / s_row, vh_conj)
        if n > k:
            out = out + matmul(u_conj, (ct_vh - matmul(matmul(ct_vh, _mT(vh)), vh_conj)) / s_col)
        return out

    return pullback


def _svd_impl(a: Any, hermitian: bool) -> tuple[Any, ...]:
    if _foreign(a):
        return _foreign_svd(a, hermitian)  # type: ignore[no-any-return]
    return tuple(np.linalg.svd(a, full_matrices=False, hermitian=hermitian))


def _foreign_svd(a: Any, hermitian: bool) -> Any:
    """Dask's (reduced) SVD of each matrix; it has no ``hermitian`` (an SVD from ``eigh``)."""
    if hermitian:
        raise ArrayLibraryError("primitive 'svd' (numpy.linalg.svd, hermitian=True)", library_of(a))
    return _each_matrix(lambda m: tuple(np.linalg.svd(_tall_and_skinny(m))), a)


svd_p = Primitive("svd", _svd_impl, multiple_results=True)
defjvp(svd_p, _svd_jvp)
defvjp(svd_p, _svd_vjp)
defbatch(svd_p, _front_rule(svd_p))
defsparsity(svd_p, dense_rule)


# ds = Re(diag(U^H dA V)) = Re(sum(conj(U) * (dA V), axis=-2)); transposed: conj(U) diag(ct) V^T.
def _svdvals_jvp(t: Any, ans: Any, a: Any, hermitian: bool) -> Any:
    u, _, vh = svd_p.bind(a, hermitian=hermitian)
    return _real(_reductions.sum(_conj(u) * matmul(t, _mH(vh)), axis=-2))


def _svdvals_vjp(ans: Any, a: Any, hermitian: bool) -> Callable[[Any], Any]:
    u, _, vh = svd_p.bind(a, hermitian=hermitian)
    u_conj, vh_conj = _conj(u), _conj(vh)
    return lambda ct: matmul(u_conj * _rows(ct), vh_conj)


def _svdvals_impl(a: Any, hermitian: bool) -> Any:
    if _foreign(a):  # Dask's svd has no compute_uv: U and Vh are computed with S, and dropped
        return _foreign_svd(a, hermitian)[1]
    return np.linalg.svd(a, compute_uv=False, hermitian=hermitian)


svdvals_p = Primitive("svdvals", _svdvals_impl)
defjvp(svdvals_p, _svdvals_jvp)
defvjp(svdvals_p, _svdvals_vjp)
defbatch(svdvals_p, _front_rule(svdvals_p))
defsparsity(svdvals_p, dense_rule)


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
    """Differentiable ``numpy.linalg.svd`` of a real or complex ``a``: ``SVDResult(U, S, Vh)``,
    or ``S`` alone with ``compute_uv=False``. Derivatives of ``U``/``Vh`` need
    ``full_matrices=False`` (unless ``a`` is square; a traced non-square ``a`` with
    ``full_matrices=True`` raises) and distinct singular values (non-zero too when ``a`` is
    not square or complex), and only gauge-invariant functions of them (``U diag(f(S)) Vh``,
    ``|U|^2``) are meaningful; ``S`` alone is differentiable wherever its values are
    distinct and non-zero."""
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


def _matrix_rank_impl(a: Any, *, tol: Any, hermitian: bool, rtol: Any) -> Any:
    return np.asarray(np.linalg.matrix_rank(a, tol=tol, hermitian=hermitian, rtol=rtol))


matrix_rank_p = Primitive("matrix_rank", _matrix_rank_impl, differentiable=False)
defbatch(matrix_rank_p, elementwise_rule(matrix_rank_p, gufunc=True))


def matrix_rank(
    A: ArrayLike, tol: Any = None, hermitian: bool = False, *, rtol: Any = None
) -> Array:
    """``numpy.linalg.matrix_rank`` (no derivative: an integer): the number of singular
    values above the tolerance, NumPy's on the values (a stack of matrices too). ``tol``
    and ``rtol`` are concrete numbers or arrays."""
    a = _operand(A)
    if ndim_of(a) < 2:  # NumPy's answer for a vector: a Python int, 1 unless all zero
        return int(not np.all(np.asarray(concrete(a)) == 0))  # type: ignore[return-value]
    return matrix_rank_p.bind(a, tol=concrete(tol), hermitian=hermitian, rtol=concrete(rtol))


def svdvals(x: ArrayLike, /) -> Array:
    """Differentiable ``numpy.linalg.svdvals`` (``svd(x, compute_uv=False)``)."""
    return svd(x, compute_uv=False)


# ---- norm: a composite of abs, sums, max/min and svdvals -----------------------------------------
def _abs2(x: Any) -> Any:
    return _real(x * _conj(x))


def _vector_norm(x: Any, ord: Any, axis: tuple[int, ...], keepdims: bool) -> Array:
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


def _matrix_norm(x: Any, ord: Any, row: int, col: int, keepdims: bool) -> Array:
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
        return _vector_norm(x, ord, axes, keepdims)
    if len(axes) == 2:
        row, col = (normalize_axes(a, nd)[0] for a in axes)
        if row == col:
            raise ValueError("Duplicate axes given.")
        return _matrix_norm(x, ord, row, col, keepdims)
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
    xs = [_operand(x) for x in native(arrays)]  # a DataFrame: its rows, not its labels
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
    """Differentiable ``numpy.linalg.trace`` (NumPy 2): ``numpy.trace`` over the last two
    axes, the sum of the ``offset`` diagonal of each matrix of a stack."""
    return _reductions.trace(x, offset, -2, -1, dtype)


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
        return _vector_norm(x, ord, axes, keepdims)
    # several axes: move them to the end, flatten them, and put singletons back if asked
    rest = [i for i in range(nd) if i not in axes]
    y = _shape.transpose(x, (*rest, *axes))
    y = _shape.reshape(y, tuple(shape_of(x)[i] for i in rest) + (-1,))
    out = _vector_norm(y, ord, (-1,), False)
    if keepdims:
        out = _shape.reshape(out, tuple(1 if i in axes else n for i, n in enumerate(shape_of(x))))
    return out


def matrix_norm(x: ArrayLike, /, *, keepdims: bool = False, ord: Any = "fro") -> Array:
    """Differentiable ``numpy.linalg.matrix_norm``: ``norm`` over the last two axes."""
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def matrix_transpose(x: ArrayLike, /) -> Array:
    """Differentiable ``numpy.linalg.matrix_transpose``: swaps the last two axes."""
    x = _operand(x)
    if ndim_of(x) < 2:
        raise ValueError("Input array must be at least 2-dimensional")
    return _mT(x)


def diagonal(x: ArrayLike, /, *, offset: int = 0) -> Array:
    """Differentiable ``numpy.linalg.diagonal`` (NumPy 2): ``numpy.diagonal`` over the last
    two axes, the ``offset`` diagonal of each matrix of a stack."""
    return _indexing.diagonal(x, offset, -2, -1)


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
