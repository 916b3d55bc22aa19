"""Op-spec rows of the products and linalg family (joined into ``OP_SPECS`` by ``op_specs.py``).

Rows draw independent unconstrained arrays, so each linalg row builds the matrix its function
needs *inside* the row (which also differentiates through that construction):

- ``_conditioned(x) = x + (2n + 1) I``: strictly diagonally dominant, so non-singular and
  well conditioned (``det``, ``inv``, ``solve``, ``matrix_power``...);
- ``_spd(x) = x x^T + n I``: symmetric positive definite (``cholesky``), and
  ``_spd_complex(x, y)``, Hermitian;
- ``_separated(x) = sym(x) / 4 + diag(0, 4, 8, ...)``: symmetric with eigenvalues at least 1
  apart (``eigh``, ``eigvalsh``);
- ``_real_spectrum(x) = P diag(0, 3, 6, ...) P^-1 + x / 10``: distinct real eigenvalues
  (``eig``; a fixed non-orthogonal ``P`` keeps LAPACK away from the nearly triangular matrices
  whose eigenvectors it returns inaccurately); ``_rotation(x)``: distinct complex pairs;
- ``_full_rank(x) = x / 4 + E`` with ``E`` = 2, 6, 10 on its (rectangular) diagonal: singular
  values distinct, at least 0.5 (``svd``, ``qr``, ``pinv``, ``lstsq``);
  ``_full_rank_complex(x, y)`` likewise for ``x + iy``;
- ``x @ y`` of factors ``(n, r)``, ``(r, n)`` with ``r < n``: singular (``det``).

Complex inputs are built inside the row from two (or more) real arguments (``_complex(x, y) =
x + iy``) and complex outputs returned as their real and imaginary parts, so the checks run
along real and imaginary directions. Rows named ``*_non_symmetric`` (and the complex ``eigh``
ones) feed ``cholesky``/``eigh``/``eigvalsh`` a matrix that is not Hermitian, of which NumPy
reads one triangle.

Outputs whose sign or phase is a convention (eigenvectors, singular vectors, ``Q``) are seen
through gauge-invariant functions of them: ``V f(w) V^-1``, ``U diag(f(s)) Vh``, ``Q R``,
elementwise squares ``V * V`` (and ``|v|^2`` for complex vectors).
"""

from __future__ import annotations

from typing import Any

import hypothesis.extra.numpy as hnp
import numpy as np
from hypothesis import strategies as st
from op_specs import OpSpec
from strategies import DISTINCT, Shape, shapes

import transforms.numpy as tnp

L = tnp.linalg
Params = dict[str, Any]


# ---- matrices with the structure each function needs ------------------------------------------
def _transpose_last(x: Any) -> Any:
    n = np.ndim(x) if isinstance(x, np.ndarray) else len(x.shape)
    return tnp.transpose(x, (*range(n - 2), n - 1, n - 2))


def _conditioned(x: Any) -> Any:
    n = x.shape[-1]
    return x + (2 * n + 1) * np.eye(n)


def _spd(x: Any) -> Any:
    n = x.shape[-1]
    return x @ _transpose_last(x) + n * np.eye(n)


def _separated(x: Any) -> Any:
    n = x.shape[-1]
    return (x + _transpose_last(x)) * 0.125 + np.diag(4.0 * np.arange(n))


_MIX = np.array([[1.0, 0.5, 0.2], [-0.3, 1.0, 0.4], [0.1, -0.2, 1.0]])  # condition <= 1.34


def _real_spectrum(x: Any) -> Any:
    """``P diag(0, 3, 6) P^-1 + x / 10``: by Bauer-Fike the eigenvalues stay within
    ``cond(P) |x| / 10 < 1.5`` of 0, 3, 6, so they are distinct and real."""
    n = x.shape[-1]
    mix = _MIX[:n, :n]
    return mix @ np.diag(3.0 * np.arange(n)) @ np.linalg.inv(mix) + x * 0.1


def _rotation(x: Any) -> Any:
    """Distinct eigenvalues, complex pairs ``1 +- 2i`` (and ``5`` for a 3rd, real, one)."""
    n = x.shape[-1]
    base = np.zeros((n, n))
    base[:2, :2] = [[1.0, -2.0], [2.0, 1.0]]
    if n == 3:
        base[2, 2] = 5.0
    mix = _MIX[:n, :n]
    return mix @ base @ np.linalg.inv(mix) + x * 0.1


def _rect_diag(m: int, n: int) -> np.ndarray:
    e = np.zeros((m, n))
    k = min(m, n)
    e[np.arange(k), np.arange(k)] = 2.0 + 4.0 * np.arange(k)
    return e


def _full_rank(x: Any) -> Any:
    m, n = x.shape[-2:]
    return x * 0.25 + _rect_diag(m, n)


def _full_rank_complex(x: Any, y: Any) -> Any:
    """``_full_rank`` of ``x + iy`` (scaled by 1/8: singular values distinct, at least 0.8)."""
    m, n = x.shape[-2:]
    return _complex(x, y) * 0.125 + _rect_diag(m, n)


def _spd_complex(x: Any, y: Any) -> Any:
    """``z z^H + n I``, ``z = x + iy``: Hermitian positive definite."""
    z = _complex(x, y)
    n = x.shape[-1]
    return z @ tnp.conj(_transpose_last(z)) + n * np.eye(n)


def _diag_matrix(v: Any) -> Any:
    return v[..., None, :] * np.eye(v.shape[-1])


def _flat(*parts: Any) -> Any:
    return tnp.concatenate([tnp.reshape(p, (-1,)) for p in parts])


def _complex(x: Any, y: Any) -> Any:
    """``x + iy``: a complex input built from two real arguments, so that every check of the
    table (finite differences, duality, second order) runs along real and imaginary
    directions alike."""
    return x + 1j * y


def _real_imag(*parts: Any) -> Any:
    return _flat(*(f(p) for p in parts for f in (tnp.real, tnp.imag)))


# ---- shapes ------------------------------------------------------------------------------------
@st.composite
def _square(draw: st.DrawFn, max_batch: int = 2, min_n: int = 1, max_n: int = 3) -> tuple[Shape]:
    batch = draw(shapes(max_dims=max_batch, max_side=2))
    n = draw(st.integers(min_n, max_n))
    return (batch + (n, n),)


@st.composite
def _tall(draw: st.DrawFn, wide: bool = False) -> tuple[Shape]:
    """Stacks of m x n matrices with m >= n (or any m, n with ``wide``)."""
    batch = draw(shapes(max_dims=2, max_side=2))
    n = draw(st.integers(1, 3))
    m = draw(st.integers(1, 4)) if wide else draw(st.integers(n, 4))
    return (batch + (m, n),)


@st.composite
def _low_rank(draw: st.DrawFn, copies: int = 1) -> tuple[Shape, ...]:
    """Factors ``(..., n, r)``, ``(..., r, n)`` of a rank-deficient n x n product (r = n - 1
    or n - 2, r >= 1), ``copies`` times over (real and imaginary parts)."""
    batch = draw(shapes(max_dims=1, max_side=2))
    n = draw(st.integers(2, 4))
    r = draw(st.integers(max(1, n - 2), n - 1))
    return (batch + (n, r),) * copies + (batch + (r, n),) * copies


def _copies(strategy: st.SearchStrategy[tuple[Shape]], k: int = 2) -> Any:
    """``k`` arguments of one drawn shape: e.g. the real and imaginary parts of a matrix."""
    return strategy.map(lambda s: s * k)


def _square_pair() -> st.SearchStrategy[tuple[Shape, ...]]:
    return _copies(_square())


def _solve_shapes(vector: bool) -> st.SearchStrategy[tuple[Shape, ...]]:
    """``a`` a stack, ``b`` one vector ``(n,)`` (NumPy 2: only 1-d ``b`` is a vector) or a
    stack of ``(n, k)`` matrices whose leading dimensions broadcast with ``a``'s."""
    if vector:
        return _square().map(lambda s: (s[0], s[0][-1:]))
    return hnp.mutually_broadcastable_shapes(
        signature="(m,m),(m,k)->(m,k)", max_dims=2, min_side=1, max_side=3
    ).map(lambda r: tuple(r.input_shapes))


@st.composite
def _lstsq_shapes(draw: st.DrawFn) -> tuple[Shape, Shape]:
    n = draw(st.integers(1, 3))
    m = draw(st.integers(n, 4))
    b = (m,) if draw(st.booleans()) else (m, draw(st.integers(1, 3)))
    return (m, n), b


# ---- parameters ------------------------------------------------------------------------------
def _uplo(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    return st.fixed_dictionaries({"UPLO": st.sampled_from(["L", "U"])})


def _power(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    return st.fixed_dictionaries({"n": st.sampled_from([-3, -2, -1, 0, 1, 2, 3, 5])})


@st.composite
def _trace_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    m, n = arg_shapes[0][-2:]
    return {"offset": draw(st.integers(-m - 1, n + 1))}


VECTOR_ORDS = [None, 2, 1, np.inf, -np.inf, 0, 3, 0.5, -1.5]
MATRIX_ORDS = ["fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf, None]


@st.composite
def _vector_norm_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    nd = len(arg_shapes[0])
    ord = draw(st.sampled_from(VECTOR_ORDS))
    if nd == 1 and draw(st.booleans()):
        axis = None
    else:
        axis = draw(st.integers(-nd, nd - 1))
        axis = (axis,) if draw(st.booleans()) else axis
    return {"ord": ord, "axis": axis, "keepdims": draw(st.booleans())}


@st.composite
def _matrix_norm_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    nd = len(arg_shapes[0])
    ord = draw(st.sampled_from(MATRIX_ORDS))
    if nd == 2 and draw(st.booleans()):
        axis = None
    else:
        pair = draw(st.lists(st.integers(0, nd - 1), min_size=2, max_size=2, unique=True))
        axis = tuple(a - nd if draw(st.booleans()) else a for a in pair)
    return {"ord": ord, "axis": axis, "keepdims": draw(st.booleans())}


@st.composite
def _matrix_norm_shapes(draw: st.DrawFn) -> tuple[Shape]:
    batch = draw(shapes(max_dims=1, max_side=2))
    return (batch + (draw(st.integers(1, 3)), draw(st.integers(1, 3))),)


def _matrix_norm(x: Any, ord: Any, axis: Any, keepdims: bool) -> Any:
    """The norm of ``_full_rank(x)`` (distinct singular values) over the drawn ``axis``:
    the matrix axes are moved where ``axis`` says first."""
    y = _full_rank(x)
    if axis is not None:
        y = tnp.moveaxis(y, (-2, -1), axis)
    return L.norm(y, ord, axis, keepdims)


@st.composite
def _chain_shapes(draw: st.DrawFn) -> tuple[Shape, ...]:
    k = draw(st.integers(2, 4))
    dims = draw(st.lists(st.integers(1, 4), min_size=k + 1, max_size=k + 1))
    out = [(dims[i], dims[i + 1]) for i in range(k)]
    first: Shape = out[0][1:] if draw(st.booleans()) else out[0]
    last: Shape = out[-1][:1] if draw(st.booleans()) else out[-1]
    return (first, *out[1:-1], last)


# ---- products: einsum subscripts with their operand label sizes ----------------------------------
EINSUMS = [
    "ij,jk->ik",
    "ij,jk",
    "i,i",
    "i,i->",
    "i,j->ij",
    "ii->i",
    "ii",
    "ij->ji",
    "ij->",
    "ijk->kji",
    "bij,bjk->bik",
    "ij,ij->ij",
    "ijk,jil->kl",
    "ij,jk,kl->il",
    "ii,i->i",
    "iij->ji",
    "...ij,...jk->...ik",
    "...i,...i",
    "i...->...",
    "...ij,jk",
    "a...b,b->a...",
    "ba,Ab",
]


@st.composite
def _einsum_case(draw: st.DrawFn) -> tuple[Shape, ...]:
    subscripts = draw(st.sampled_from(EINSUMS))
    terms = subscripts.split("->")[0].split(",")
    sizes = {c: draw(st.integers(0 if c in "ij" else 1, 3)) for c in set("".join(terms)) - {"."}}
    ell = draw(hnp.mutually_broadcastable_shapes(num_shapes=len(terms), max_dims=2, max_side=3))
    out: list[Shape] = []
    for term, ell_shape in zip(terms, ell.input_shapes, strict=True):
        left, _, right = term.partition("...")
        middle = ell_shape if "..." in term else ()
        out.append(tuple(sizes[c] for c in left) + middle + tuple(sizes[c] for c in right))
    return (subscripts, *out)  # type: ignore[return-value]


def _fits(subscripts: str, arg_shapes: tuple[Shape, ...]) -> bool:
    if len(subscripts.split("->")[0].split(",")) != len(arg_shapes):
        return False
    zeros = [np.zeros(s) for s in arg_shapes]
    try:  # NumPy accepts a few mismatched size-0 cases (``'ii->i'`` of (0, 2)); we do not
        np.einsum(subscripts, *zeros)
        tnp.einsum(subscripts, *zeros)
    except ValueError:
        return False
    return True


def _einsum_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    """Any subscripts of the list that fit the drawn shapes (the one they were drawn for does)."""
    fitting = [s for s in EINSUMS if _fits(s, arg_shapes)]
    return st.fixed_dictionaries({"subscripts": st.sampled_from(fitting)})


@st.composite
def _cross_shapes(draw: st.DrawFn) -> tuple[Shape, Shape]:
    r = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3))
    a, b = r.input_shapes
    ia = draw(st.integers(0, len(a)))
    ib = draw(st.integers(0, len(b)))
    return a[:ia] + (3,) + a[ia:], b[:ib] + (3,) + b[ib:]


def _broadcastable(*shapes_: Shape) -> bool:
    try:
        np.broadcast_shapes(*shapes_)
    except ValueError:
        return False
    return True


@st.composite
def _cross_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    a, b = arg_shapes
    pairs = [
        (i, j)
        for i, n in enumerate(a)
        for j, k in enumerate(b)
        if n == k == 3 and _broadcastable(a[:i] + a[i + 1 :], b[:j] + b[j + 1 :])
    ]
    axisa, axisb = draw(st.sampled_from(pairs))
    batch = np.broadcast_shapes(a[:axisa] + a[axisa + 1 :], b[:axisb] + b[axisb + 1 :])
    axisc = draw(st.integers(-len(batch) - 1, len(batch)))
    if axisa == axisb == axisc and draw(st.booleans()):
        return {"axis": axisa}
    return {"axisa": axisa - (len(a) if draw(st.booleans()) else 0), "axisb": axisb, "axisc": axisc}


# ---- the rows ------------------------------------------------------------------------------------
def _eigh_parts(a: Any, UPLO: str) -> Any:
    """Gauge-invariant functions of ``eigh(a)``: ``w``, ``|v|^2`` and ``sin`` of the matrix."""
    w, v = L.eigh(a, UPLO=UPLO)
    function = v @ _diag_matrix(tnp.sin(w)) @ tnp.conj(_transpose_last(v))
    if tnp.iscomplexobj(a):
        return _flat(w, tnp.real(v * tnp.conj(v)), _real_imag(function))
    return _flat(w, v * v, function)


def _eigh_complex(x: Any, y: Any, z: Any, UPLO: str) -> Any:
    """A complex input that is not Hermitian: NumPy reads the ``UPLO`` triangle."""
    return _eigh_parts(_separated(x) + 0.1 * _complex(y, z), UPLO)


def _power_sums(w: Any) -> Any:
    """``sum(w^k)``, k = 1, 2, 3: symmetric in the eigenvalues, whose order ``eig`` does not fix."""
    return tnp.stack([tnp.sum(w, axis=-1), tnp.sum(w * w, axis=-1), tnp.sum(w * w * w, axis=-1)])


def _eig_real_parts(x: Any) -> Any:
    w, v = L.eig(_real_spectrum(x))
    function = v @ _diag_matrix(tnp.sin(w)) @ L.inv(v)
    weighted = (v * v) @ tnp.sin(w)[..., :, None]  # invariant under a reordering of the pairs
    return _flat(_power_sums(w), weighted, function)


def _eig_complex_parts(x: Any) -> Any:
    w, v = L.eig(_rotation(x))
    function = v @ _diag_matrix(tnp.sin(w)) @ L.inv(v)  # real, up to rounding
    weighted = tnp.real(v * tnp.conj(v)) @ tnp.sin(w)[..., :, None]
    sums = _power_sums(w)
    return _flat(
        tnp.real(sums), tnp.imag(sums), tnp.real(weighted), tnp.imag(weighted), tnp.real(function)
    )


def _svd_parts(x: Any) -> Any:
    u, s, vh = L.svd(_full_rank(x), full_matrices=False)
    function = (u * tnp.sin(s)[..., None, :]) @ vh
    return _flat(s, u * u, vh * vh, function)


def _svd_complex_parts(x: Any, y: Any) -> Any:
    """``s``, ``|U|^2``, ``|Vh|^2`` and ``U diag(sin s) Vh``: invariant under the phases."""
    u, s, vh = L.svd(_full_rank_complex(x, y), full_matrices=False)
    function = (u * tnp.sin(s)[..., None, :]) @ vh
    return _flat(s, tnp.real(u * tnp.conj(u)), tnp.real(vh * tnp.conj(vh)), _real_imag(function))


def _qr_invariants(q: Any, r: Any) -> Any:
    """Sign-invariant functions of Q and R (LAPACK skips the reflection of a column already
    zero below the diagonal, so the signs jump there: at the drawn x = 0, say)."""
    return _flat(q * q, r * r, q @ r, q[..., :, :1] * r[..., :1, :])  # q_0 r_0: signs cancel


def _qr_parts(x: Any) -> Any:
    return _qr_invariants(*L.qr(_full_rank(x)))


def _qr_complex_parts(x: Any, y: Any) -> Any:
    """Phase-invariant functions of Q and R (see ``_qr_invariants``)."""
    q, r = L.qr(_full_rank_complex(x, y))
    first = q[..., :, :1] * r[..., :1, :]  # q_0 r_0: the phase of column 0 cancels
    return _flat(tnp.real(q * tnp.conj(q)), tnp.real(r * tnp.conj(r)), _real_imag(q @ r, first))


def _lstsq_complex_parts(a: Any, a_im: Any, b: Any, b_im: Any) -> Any:
    x, residuals, _rank, s = L.lstsq(_full_rank_complex(a, a_im), _complex(b, b_im))
    return _flat(_real_imag(x), residuals, s)


def _eig_complex_input_parts(x: Any, y: Any) -> Any:
    w, v = L.eig(_real_spectrum(x) + 0.1j * y)
    function = v @ _diag_matrix(tnp.sin(w)) @ L.inv(v)
    weighted = tnp.real(v * tnp.conj(v)) @ tnp.sin(w)[..., :, None]
    return _real_imag(_power_sums(w), weighted, function)


def _matrix_norm_complex(x: Any, y: Any, ord: Any, axis: Any, keepdims: bool) -> Any:
    z = _full_rank_complex(x, y)
    if axis is not None:
        z = tnp.moveaxis(z, (-2, -1), axis)
    return L.norm(z, ord, axis, keepdims)


def _lstsq_parts(a: Any, b: Any) -> Any:
    x, residuals, _rank, s = L.lstsq(_full_rank(a), b)
    return _flat(x, residuals, s)


def _slogdet(x: Any) -> Any:
    n = x.shape[-1]
    flip = np.diag([-1.0] + [1.0] * (n - 1))  # negative determinants too
    sign, logabsdet = L.slogdet(_conditioned(x) @ flip)
    return sign * logabsdet


def _slogdet_complex(x: Any, y: Any) -> Any:
    sign, logabsdet = L.slogdet(_conditioned(_complex(x, y)))
    return _real_imag(sign * logabsdet, sign)


def _det_rank_deficient_complex(x1: Any, x2: Any, y1: Any, y2: Any) -> Any:
    return _real_imag(L.det(_complex(x1, x2) @ _complex(y1, y2)))


def _einsum(*xs: Any, subscripts: str) -> Any:
    return tnp.einsum(subscripts, *xs)


SPECS: tuple[OpSpec, ...] = (
    # ---- products -------------------------------------------------------------------------
    OpSpec(
        "vdot",
        tnp.vdot,
        st.tuples(shapes(max_dims=2)).map(lambda s: (s[0], s[0])),
        covers=("vdot",),
    ),
    OpSpec(
        "vdot_different_shapes",
        lambda x, y: tnp.vdot(x, y),
        st.just(((2, 3), (3, 2))),
        covers=("vdot",),
    ),
    OpSpec(
        "inner",
        tnp.inner,
        st.tuples(shapes(max_dims=2), shapes(max_dims=2), st.integers(0, 3)).map(
            lambda t: (t[0] + (t[2],), t[1] + (t[2],)) if t[0] or t[1] else ((), t[1])
        ),
        covers=("inner",),
    ),
    OpSpec(
        "einsum",
        _einsum,
        _einsum_case().map(lambda c: c[1:]),
        _einsum_params,
        covers=("einsum",),
    ),
    OpSpec(
        "einsum_interleaved",
        lambda x, y: tnp.einsum(x, [0, 1], y, [1, Ellipsis], [Ellipsis, 0]),
        st.just(((2, 3), (3, 4, 2))),
        covers=("einsum",),
    ),
    OpSpec(
        "kron",
        tnp.kron,
        st.tuples(shapes(max_dims=3), shapes(max_dims=2)),
        covers=("kron",),
    ),
    OpSpec("cross", tnp.cross, _cross_shapes(), _cross_params, covers=("cross",)),
    # ---- determinants and inverses ---------------------------------------------------------
    OpSpec("linalg_det", lambda x: L.det(_conditioned(x)), _square(), covers=("linalg.det",)),
    OpSpec("linalg_slogdet", _slogdet, _square(), covers=("linalg.slogdet",)),
    # det at singular matrices: x @ y of rank n - 1 or n - 2 (the cofactor matrix and its
    # derivatives, det being a polynomial); complex too
    OpSpec(
        "linalg_det_rank_deficient",
        lambda x, y: L.det(x @ y),
        _low_rank(),
        covers=("linalg.det",),
    ),
    OpSpec(
        "linalg_det_rank_deficient_complex",
        _det_rank_deficient_complex,
        _low_rank(copies=2),
        covers=("linalg.det",),
    ),
    OpSpec(
        "linalg_det_complex",
        lambda x, y: _real_imag(L.det(_conditioned(_complex(x, y)))),
        _square_pair(),
        covers=("linalg.det",),
    ),
    OpSpec("linalg_slogdet_complex", _slogdet_complex, _square_pair(), covers=("linalg.slogdet",)),
    OpSpec("linalg_inv", lambda x: L.inv(_conditioned(x)), _square(), covers=("linalg.inv",)),
    OpSpec(
        "linalg_solve",
        lambda a, b: L.solve(_conditioned(a), b),
        _solve_shapes(vector=False),
        covers=("linalg.solve",),
    ),
    OpSpec(
        "linalg_solve_vector",
        lambda a, b: L.solve(_conditioned(a), b),
        _solve_shapes(vector=True),
        covers=("linalg.solve",),
    ),
    OpSpec(
        "linalg_pinv",
        lambda x: L.pinv(_full_rank(x)),
        _tall(wide=True),
        covers=("linalg.pinv",),
    ),
    OpSpec(
        "linalg_pinv_wide",
        lambda x: L.pinv(_transpose_last(_full_rank(x))),
        _tall(),
        covers=("linalg.pinv",),
    ),
    OpSpec("linalg_lstsq", _lstsq_parts, _lstsq_shapes(), covers=("linalg.lstsq",)),
    OpSpec(
        "linalg_lstsq_complex",
        _lstsq_complex_parts,
        _lstsq_shapes().map(lambda s: (s[0], s[0], s[1], s[1])),
        covers=("linalg.lstsq",),
    ),
    OpSpec(
        "linalg_matrix_power",
        lambda x, n: L.matrix_power(_conditioned(x) / (2 * x.shape[-1] + 1), n),
        _square(),
        _power,
        covers=("linalg.matrix_power",),
    ),
    OpSpec(
        "linalg_multi_dot",
        lambda *xs: L.multi_dot(list(xs)),
        _chain_shapes(),
        covers=("linalg.multi_dot",),
    ),
    OpSpec(
        "linalg_trace",
        lambda x, offset: L.trace(x, offset=offset),
        st.tuples(shapes(max_dims=1, max_side=2), st.integers(0, 3), st.integers(0, 3)).map(
            lambda t: (t[0] + (t[1], t[2]),)
        ),
        _trace_params,
        covers=("linalg.trace",),
    ),
    # ---- factorisations ----------------------------------------------------------------------
    OpSpec(
        "linalg_cholesky", lambda x: L.cholesky(_spd(x)), _square(), covers=("linalg.cholesky",)
    ),
    OpSpec(
        "linalg_cholesky_upper",
        lambda x: L.cholesky(_spd(x), upper=True),
        _square(),
        covers=("linalg.cholesky",),
    ),
    OpSpec(
        "linalg_cholesky_non_symmetric",
        lambda x, y, upper: L.cholesky(_spd(x) + 0.3 * y, upper=upper),
        _square_pair(),
        lambda s: st.fixed_dictionaries({"upper": st.booleans()}),
        covers=("linalg.cholesky",),
    ),
    OpSpec(
        "linalg_cholesky_complex",
        lambda x, y: _real_imag(L.cholesky(_spd_complex(x, y))),
        _square_pair(),
        covers=("linalg.cholesky",),
    ),
    OpSpec(
        "linalg_cholesky_upper_complex",
        lambda x, y: _real_imag(L.cholesky(_spd_complex(x, y), upper=True)),
        _square_pair(),
        covers=("linalg.cholesky",),
    ),
    # qr: tall, square and wide (m < n)
    OpSpec("linalg_qr", _qr_parts, _tall(wide=True), covers=("linalg.qr",)),
    OpSpec(
        "linalg_qr_r",
        lambda x: L.qr(_full_rank(x), mode="r") ** 2,
        _tall(wide=True),
        covers=("linalg.qr",),
    ),
    OpSpec(
        "linalg_qr_wide_complete",
        lambda x: _qr_invariants(*L.qr(_transpose_last(_full_rank(x)), mode="complete")),
        _tall(),
        covers=("linalg.qr",),
    ),
    OpSpec(
        "linalg_qr_complex", _qr_complex_parts, _copies(_tall(wide=True)), covers=("linalg.qr",)
    ),
    # eigh/eigvalsh: symmetric inputs, and inputs of which NumPy reads one triangle only
    OpSpec(
        "linalg_eigh",
        lambda x, UPLO: _eigh_parts(_separated(x), UPLO),
        _square(),
        _uplo,
        covers=("linalg.eigh",),
    ),
    OpSpec(
        "linalg_eigh_non_symmetric",
        lambda x, y, UPLO: _eigh_parts(_separated(x) + 0.1 * y, UPLO),
        _square_pair(),
        _uplo,
        covers=("linalg.eigh",),
    ),
    OpSpec(
        "linalg_eigh_complex", _eigh_complex, _copies(_square(), 3), _uplo, covers=("linalg.eigh",)
    ),
    OpSpec(
        "linalg_eigvalsh",
        lambda x, UPLO: L.eigvalsh(_separated(x), UPLO=UPLO),
        _square(),
        _uplo,
        covers=("linalg.eigvalsh",),
    ),
    OpSpec(
        "linalg_eigvalsh_non_symmetric",
        lambda x, y, UPLO: L.eigvalsh(_separated(x) + 0.1 * y, UPLO=UPLO),
        _square_pair(),
        _uplo,
        covers=("linalg.eigvalsh",),
    ),
    OpSpec(
        "linalg_eigvalsh_complex",
        lambda x, y, z, UPLO: L.eigvalsh(_separated(x) + 0.1 * _complex(y, z), UPLO=UPLO),
        _copies(_square(), 3),
        _uplo,
        covers=("linalg.eigvalsh",),
    ),
    OpSpec("linalg_eig_real", _eig_real_parts, _square(), covers=("linalg.eig",)),
    OpSpec(
        "linalg_eig_complex",
        _eig_complex_parts,
        _square(min_n=2),
        covers=("linalg.eig", "real", "imag", "conj"),
    ),
    OpSpec(
        "linalg_eigvals",
        lambda x: _power_sums(L.eigvals(_real_spectrum(x))),
        _square(),
        covers=("linalg.eigvals",),
    ),
    OpSpec(
        "linalg_eig_complex_input",
        _eig_complex_input_parts,
        _square_pair(),
        covers=("linalg.eig",),
    ),
    OpSpec("linalg_svd", _svd_parts, _tall(wide=True), covers=("linalg.svd",)),
    OpSpec(
        "linalg_svd_complex",
        _svd_complex_parts,
        _copies(_tall(wide=True)),
        covers=("linalg.svd",),
    ),
    OpSpec(
        "linalg_svdvals_complex",
        lambda x, y: L.svdvals(_full_rank_complex(x, y)),
        _copies(_tall(wide=True)),
        covers=("linalg.svdvals",),
    ),
    OpSpec(
        "linalg_svd_compute_uv_false",
        lambda x: L.svd(_full_rank(x), compute_uv=False),
        _tall(wide=True),
        covers=("linalg.svd",),
    ),
    OpSpec(
        "linalg_svdvals",
        lambda x: L.svdvals(_full_rank(x)),
        _tall(wide=True),
        covers=("linalg.svdvals",),
    ),
    # ---- norms ---------------------------------------------------------------------------------
    OpSpec(
        "linalg_norm_vector",
        lambda x, ord, axis, keepdims: L.norm(x, ord, axis, keepdims),
        st.tuples(shapes(min_dims=1, max_dims=3, min_side=1)),
        _vector_norm_params,
        DISTINCT,
        covers=("linalg.norm",),
    ),
    OpSpec(
        "linalg_norm_default",
        lambda x, keepdims: L.norm(x, keepdims=keepdims),
        st.tuples(shapes(max_dims=3, min_side=1)),
        lambda s: st.fixed_dictionaries({"keepdims": st.booleans()}),
        DISTINCT,
        covers=("linalg.norm",),
    ),
    OpSpec(
        "linalg_norm_matrix",
        _matrix_norm,
        _matrix_norm_shapes(),
        _matrix_norm_params,
        DISTINCT,
        covers=("linalg.norm",),
    ),
    OpSpec(
        "linalg_norm_matrix_complex",
        _matrix_norm_complex,
        _copies(_matrix_norm_shapes()),
        _matrix_norm_params,
        DISTINCT,
        covers=("linalg.norm",),
    ),
)

NONDIFFERENTIABLE: dict[str, int] = {}


@st.composite
def _vector_norm_api_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    nd = len(arg_shapes[0])
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    axis: Any = None
    if kind == "int":
        axis = draw(st.integers(-nd, nd - 1))
    elif kind == "tuple":
        axis = tuple(draw(st.lists(st.integers(0, nd - 1), min_size=1, unique=True)))
    return {
        "axis": axis,
        "keepdims": draw(st.booleans()),
        "ord": draw(st.sampled_from(VECTOR_ORDS)),
    }


def _matrix_norm_api(x: Any, ord: Any, keepdims: bool) -> Any:
    return L.matrix_norm(_full_rank(x), ord=ord, keepdims=keepdims)


def _diagonal_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    m, n = arg_shapes[0][-2:]
    return st.fixed_dictionaries({"offset": st.integers(-m - 1, n + 1)})


ARRAY_API_SPECS: tuple[OpSpec, ...] = (
    OpSpec(
        "linalg_vector_norm",
        lambda x, **kw: L.vector_norm(x, **kw),
        st.tuples(shapes(min_dims=1, max_dims=3, min_side=1)),
        _vector_norm_api_params,
        DISTINCT,
        covers=("linalg.vector_norm",),
    ),
    OpSpec(
        "linalg_matrix_norm",
        _matrix_norm_api,
        _matrix_norm_shapes(),
        lambda s: st.fixed_dictionaries(
            {"ord": st.sampled_from(MATRIX_ORDS[1:]), "keepdims": st.booleans()}
        ),
        DISTINCT,
        covers=("linalg.matrix_norm",),
    ),
    OpSpec(
        "linalg_matrix_transpose",
        L.matrix_transpose,
        st.tuples(shapes(min_dims=2)),
        covers=("linalg.matrix_transpose",),
    ),
    OpSpec(
        "linalg_diagonal",
        lambda x, offset: L.diagonal(x, offset=offset),
        st.tuples(shapes(min_dims=2)),
        _diagonal_params,
        covers=("linalg.diagonal",),
    ),
    OpSpec(
        "linalg_vecdot",
        lambda x, y: L.vecdot(x, y),
        hnp.mutually_broadcastable_shapes(signature="(n),(n)->()", max_dims=2, max_side=3).map(
            lambda r: tuple(r.input_shapes)
        ),
        covers=("linalg.vecdot",),
    ),
    OpSpec(
        "linalg_outer",
        L.outer,
        st.tuples(shapes(min_dims=1, max_dims=1), shapes(min_dims=1, max_dims=1)),
        covers=("linalg.outer",),
    ),
    OpSpec(
        "linalg_cross",
        lambda x, y: L.cross(x, y),
        hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3).map(
            lambda r: tuple(s + (3,) for s in r.input_shapes)
        ),
        covers=("linalg.cross",),
    ),
    OpSpec(
        "linalg_matmul",
        L.matmul,
        hnp.mutually_broadcastable_shapes(
            signature=str(np.matmul.signature), max_dims=2, max_side=3
        ).map(lambda r: tuple(r.input_shapes)),
        covers=("linalg.matmul",),
    ),
    OpSpec(
        "linalg_tensordot",
        lambda x, y: L.tensordot(x, y, axes=1),
        st.tuples(shapes(min_dims=1, max_dims=2), shapes(max_dims=1)).map(
            lambda t: (t[0], t[0][-1:] + t[1])
        ),
        covers=("linalg.tensordot",),
    ),
)
SPECS = SPECS + ARRAY_API_SPECS
