"""Products and ``tnp.linalg`` beyond the op-spec table: values against NumPy, ``vmap``
against a loop over the examples (every batching rule of the family, several ``in_axes``),
derivatives nested with ``vmap``, complex inputs, float32, the documented conventions
(symmetrised tangents, gauges) and the errors of the documented limits.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from numpy.testing import assert_allclose

import transforms as T
import transforms.numpy as tnp

L = tnp.linalg
RNG = np.random.default_rng(1234)


def _normal(*shape: int) -> np.ndarray:
    return RNG.normal(size=shape)


def _conditioned(*shape: int) -> np.ndarray:
    n = shape[-1]
    return _normal(*shape) + (2 * n + 1) * np.eye(n)


def _spd(*shape: int) -> np.ndarray:
    x = _normal(*shape)
    return x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])


def _separated(*shape: int) -> np.ndarray:
    x = _normal(*shape)
    return (x + np.swapaxes(x, -1, -2)) * 0.1 + np.diag(3.0 * np.arange(shape[-1]))


def _low_rank(n: int, rank: int, rng: np.random.Generator = RNG) -> np.ndarray:
    return rng.normal(size=(n, rank)) @ rng.normal(size=(rank, n))


def _spd_complex(n: int) -> np.ndarray:
    z = _normal(n, n) + 1j * _normal(n, n)
    return z @ z.conj().T + n * np.eye(n)


def _full_rank(*shape: int) -> np.ndarray:
    m, n = shape[-2:]
    e = np.zeros((m, n))
    k = min(m, n)
    e[np.arange(k), np.arange(k)] = 2.0 + 4.0 * np.arange(k)
    return _normal(*shape) * 0.25 + e


def _leaves(tree: Any) -> list[np.ndarray]:
    return [np.asarray(x) for x in T.tree_util.tree_leaves(tree)]


def _close(actual: Any, expected: Any, rtol: float = 1e-9, atol: float = 1e-10) -> None:
    a_leaves, e_leaves = _leaves(actual), _leaves(expected)
    assert len(a_leaves) == len(e_leaves)
    for a, e in zip(a_leaves, e_leaves, strict=True):
        assert a.shape == e.shape, (a.shape, e.shape)
        assert_allclose(a, e, rtol=rtol, atol=atol)


# ---- values against NumPy ---------------------------------------------------------------------
EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("i,i", [(3,), (3,)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iij->ji", [(2, 2, 3)]),
    ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (1, 3, 4)]),
    ("...i,...i", [(2, 1, 3), (4, 3)]),
    ("i...->...", [(3, 2, 2)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("ij,jk", [(2, 1), (3, 2)]),  # a size-1 contracted label broadcasts
    ("Ba,aB", [(2, 3), (3, 2)]),  # capitals sort before lower case in the implicit output
    ("aB", [(2, 3)]),
    ("ij,ij->", [(0, 3), (0, 3)]),
    ("bi,bj->bij", [(4, 2), (4, 3)]),
    ("a...b,b->a...", [(2, 3, 4, 5), (5,)]),
]


@pytest.mark.parametrize(("subscripts", "arg_shapes"), EINSUM_CASES)
def test_einsum_values_match_numpy(subscripts: str, arg_shapes: list[tuple[int, ...]]) -> None:
    xs = [_normal(*s) for s in arg_shapes]
    _close(tnp.einsum(subscripts, *xs), np.einsum(subscripts, *xs))
    # and through a transform (the composite's traced path)
    out, _ = T.jvp(lambda *a: tnp.einsum(subscripts, *a), tuple(xs), tuple(xs))
    _close(out, np.einsum(subscripts, *xs))


def test_einsum_interleaved_form_and_errors() -> None:
    a, b = _normal(2, 3), _normal(3, 4)
    _close(tnp.einsum(a, [0, 1], b, [1, 2], [0, 2]), np.einsum(a, [0, 1], b, [1, 2], [0, 2]))
    _close(tnp.einsum(a, [0, 1], b, [1, 2]), np.einsum(a, [0, 1], b, [1, 2]))
    with pytest.raises(ValueError, match="ellipsis"):
        tnp.einsum("...i->i", _normal(2, 3))
    with pytest.raises(ValueError):
        tnp.einsum("ij,jk->ik", a, _normal(4, 4))


def test_products_values_match_numpy() -> None:
    a, b = _normal(2, 3), _normal(3, 2)
    _close(tnp.vdot(a, b), np.vdot(a, b))
    z = a + 1j * _normal(2, 3)
    _close(tnp.vdot(z, z), np.vdot(z, z))
    c = _normal(4, 3)
    _close(tnp.inner(a, c), np.inner(a, c))
    x, y = _normal(3), _normal(4, 3)
    _close(tnp.inner(x, y), np.inner(x, y))
    _close(tnp.inner(2.0, y), np.inner(2.0, y))
    for sa, sb in [((2, 3), (4, 1)), ((3,), (2, 2)), ((2, 1, 2), (3, 2)), ((), (2,))]:
        p, q = _normal(*sa), _normal(*sb)
        _close(tnp.kron(p, q), np.kron(p, q))
    u, v = _normal(4, 3), _normal(3)
    _close(tnp.cross(u, v), np.cross(u, v))
    u2, v2 = _normal(3, 2), _normal(2, 3)
    _close(
        tnp.cross(u2, v2, axisa=0, axisb=1, axisc=0), np.cross(u2, v2, axisa=0, axisb=1, axisc=0)
    )


def test_cross_of_2_vectors_matches_numpy() -> None:
    for na, nb in [(2, 2), (2, 3), (3, 2)]:
        a, b = _normal(4, na), _normal(4, nb)
        with pytest.warns(DeprecationWarning):
            expected = np.cross(a, b)
        with pytest.warns(DeprecationWarning):
            _close(tnp.cross(a, b), expected)


NORM_VECTOR_ORDS = [None, 2, 1, np.inf, -np.inf, 0, 3, 0.5, -1.5]
NORM_MATRIX_ORDS = [None, "fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf]


def test_norm_values_match_numpy() -> None:
    x = _normal(2, 3, 4)
    for ord, axis, keepdims in itertools.product(NORM_VECTOR_ORDS, [0, 1, -1, (2,)], [False, True]):
        _close(L.norm(x, ord, axis, keepdims), np.linalg.norm(x, ord, axis, keepdims))
    for ord, axis, keepdims in itertools.product(
        NORM_MATRIX_ORDS, [(0, 1), (2, 0), (-1, -2)], [False, True]
    ):
        _close(L.norm(x, ord, axis, keepdims), np.linalg.norm(x, ord, axis, keepdims))
    m = _normal(3, 4)
    for ord in NORM_MATRIX_ORDS:
        _close(L.norm(m, ord), np.linalg.norm(m, ord))
    _close(L.norm(x), np.linalg.norm(x))
    _close(L.norm(x, keepdims=True), np.linalg.norm(x, keepdims=True))
    with pytest.raises(ValueError):
        L.norm(m, "nuc", axis=0)
    with pytest.raises(ValueError):
        L.norm(x, 2)


def test_decompositions_match_numpy_on_plain_arrays() -> None:
    a = _conditioned(2, 3, 3)
    _close(L.det(a), np.linalg.det(a))
    _close(tuple(L.slogdet(a)), tuple(np.linalg.slogdet(a)))
    _close(L.inv(a), np.linalg.inv(a))
    b = _normal(3)
    _close(L.solve(a, b), np.linalg.solve(a, b))
    b2 = _normal(1, 3, 2)
    _close(L.solve(a, b2), np.linalg.solve(a, b2))
    s = _spd(2, 3, 3)
    _close(L.cholesky(s), np.linalg.cholesky(s))
    _close(L.cholesky(s, upper=True), np.linalg.cholesky(s, upper=True))
    _close(tuple(L.eigh(s)), tuple(np.linalg.eigh(s)))
    _close(tuple(L.eigh(s, UPLO="U")), tuple(np.linalg.eigh(s, UPLO="U")))
    _close(L.eigvalsh(s), np.linalg.eigvalsh(s))
    _close(tuple(L.eig(a)), tuple(np.linalg.eig(a)))
    t = _full_rank(2, 4, 3)
    _close(tuple(L.qr(t)), tuple(np.linalg.qr(t)))
    _close(L.qr(t, mode="r"), np.linalg.qr(t, mode="r"))
    _close(tuple(L.qr(t[0], mode="complete")), tuple(np.linalg.qr(t[0], mode="complete")))
    _close(tuple(L.svd(t, full_matrices=False)), tuple(np.linalg.svd(t, full_matrices=False)))
    _close(tuple(L.svd(t)), tuple(np.linalg.svd(t)))
    _close(L.svd(t, compute_uv=False), np.linalg.svd(t, compute_uv=False))
    _close(L.svdvals(t), np.linalg.svdvals(t))
    _close(L.pinv(t), np.linalg.pinv(t))
    _close(L.pinv(s, hermitian=True), np.linalg.pinv(s, hermitian=True))
    for n in (-3, -1, 0, 1, 2, 5):
        _close(L.matrix_power(a, n), np.linalg.matrix_power(a, n))
    chain = [_normal(4), _normal(4, 2), _normal(2, 5), _normal(5)]
    _close(L.multi_dot(chain), np.linalg.multi_dot(chain))
    _close(L.multi_dot(chain[1:3]), np.linalg.multi_dot(chain[1:3]))
    for offset in (-3, -1, 0, 1, 2, 4):
        _close(L.trace(t, offset=offset), np.linalg.trace(t, offset=offset))


def test_array_api_functions_match_numpy() -> None:
    x = _normal(2, 3, 4)
    for kw in [{}, {"axis": 1}, {"axis": (0, 2), "keepdims": True}, {"ord": 1, "axis": (1, 2)}]:
        _close(L.vector_norm(x, **kw), np.linalg.vector_norm(x, **kw))
    for ord in ["fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf]:
        _close(L.matrix_norm(x, ord=ord), np.linalg.matrix_norm(x, ord=ord))
    for offset in (-2, 0, 1, 5):
        _close(L.diagonal(x, offset=offset), np.linalg.diagonal(x, offset=offset))
    _close(L.matrix_transpose(x), np.linalg.matrix_transpose(x))
    _close(L.vecdot(x, x[0]), np.linalg.vecdot(x, x[0]))
    _close(L.outer(x[0, 0], x[1, 1]), np.linalg.outer(x[0, 0], x[1, 1]))
    u, v = _normal(4, 3), _normal(3)
    _close(L.cross(u, v), np.linalg.cross(u, v))
    _close(L.tensordot(x, x[0], axes=2), np.linalg.tensordot(x, x[0], axes=2))
    with pytest.raises(ValueError):
        L.cross(_normal(2), _normal(2))


def test_results_have_numpy_2_field_names() -> None:
    s = _spd(3, 3)
    assert L.eigh(s).eigenvalues.shape == (3,)
    assert L.eig(s).eigenvectors.shape == (3, 3)
    assert L.qr(s).R.shape == (3, 3)
    assert L.svd(s).Vh.shape == (3, 3)
    assert L.slogdet(s).logabsdet.shape == ()


@pytest.mark.parametrize(
    ("m", "n", "vector"), [(5, 3, True), (5, 3, False), (3, 3, True), (2, 3, False)]
)
def test_lstsq_matches_numpy(m: int, n: int, vector: bool) -> None:
    a = _full_rank(m, n)
    b = _normal(m) if vector else _normal(m, 2)
    x, residuals, rank, s = L.lstsq(a, b)
    ex, eres, erank, es = np.linalg.lstsq(a, b)
    _close(x, ex)
    _close(residuals, eres)
    assert int(rank) == int(erank)
    _close(s, es)
    # a rank-deficient tall matrix: empty residuals, as in NumPy
    d = np.zeros((4, 2))
    d[:, 0] = 1.0
    got, want = L.lstsq(d, np.ones(4)), np.linalg.lstsq(d, np.ones(4))
    _close(got.x, want[0])
    assert got.residuals.shape == want[1].shape == (0,)
    assert int(got.rank) == int(want[2]) == 1


# ---- vmap against a loop over the examples -----------------------------------------------------
def _cases() -> list[tuple[str, Callable[..., Any], list[np.ndarray], Any]]:
    """(name, f, batched arguments with the batch on axis 0, in_axes)."""
    a3 = np.stack([_conditioned(3, 3) for _ in range(4)])
    s3 = np.stack([_separated(3, 3) for _ in range(4)])
    spd = np.stack([_spd(3, 3) for _ in range(4)])
    tall = np.stack([_full_rank(4, 2) for _ in range(4)])
    wide = np.stack([_full_rank(2, 4) for _ in range(4)])
    tall_c = tall + 0.1j * _normal(4, 4, 2)
    spd_c = np.stack([_spd_complex(3) for _ in range(4)])
    singular = np.stack([a3[0], np.outer([1.0, 2.0, 3.0], [1.0, 0.0, -1.0]), _low_rank(3, 2)])
    return [
        ("det", L.det, [a3], 0),
        ("det_singular", L.det, [singular], 0),
        ("det_complex", L.det, [a3 + 0.5j * _normal(4, 3, 3)], 0),
        ("slogdet", lambda x: tuple(L.slogdet(x)), [a3], 0),
        ("inv", L.inv, [a3], 0),
        ("solve_matrix", L.solve, [a3, _normal(4, 3, 2)], 0),
        ("solve_vector", L.solve, [a3, _normal(4, 3)], 0),
        ("solve_unbatched_a", L.solve, [a3[0], _normal(4, 3, 2)], (None, 0)),
        ("solve_unbatched_b", L.solve, [a3, _normal(3)], (0, None)),
        ("solve_stack_b", L.solve, [a3[:, None], _normal(4, 2, 3, 1)], 0),
        ("pinv_tall", L.pinv, [tall], 0),
        ("pinv_wide", L.pinv, [wide], 0),
        ("lstsq", lambda a, b: L.lstsq(a, b)[0], [tall, _normal(4, 4)], 0),
        ("cholesky", L.cholesky, [spd], 0),
        ("qr", lambda x: tuple(L.qr(x)), [tall], 0),
        ("qr_wide", lambda x: tuple(L.qr(x)), [wide], 0),
        ("qr_complex", lambda x: tuple(L.qr(x)), [tall_c], 0),
        ("qr_complex_wide", lambda x: tuple(L.qr(x)), [np.swapaxes(tall_c, -1, -2)], 0),
        ("cholesky_complex", L.cholesky, [spd_c], 0),
        ("eigh_complex_upper", lambda x: tuple(L.eigh(x, "U")), [spd_c + 0.3 * a3], 0),
        ("eigvalsh_non_symmetric", lambda x: L.eigvalsh(x, "U"), [s3 + 0.1 * a3], 0),
        ("svd_complex", lambda x: tuple(L.svd(x, full_matrices=False)), [tall_c], 0),
        ("norm_nuc_complex", lambda x: L.norm(x, "nuc"), [tall_c], 0),
        ("lstsq_complex", lambda a, b: L.lstsq(a, b)[0], [tall_c, _normal(4, 4) + 1j], 0),
        ("eigh", lambda x: tuple(L.eigh(x)), [s3], 0),
        ("eigvalsh", L.eigvalsh, [s3], 0),
        ("eig", lambda x: tuple(L.eig(x)), [s3], 0),
        ("svd", lambda x: tuple(L.svd(x, full_matrices=False)), [tall], 0),
        ("svdvals", L.svdvals, [wide], 0),
        ("norm_fro", L.norm, [tall], 0),
        ("norm_nuc", lambda x: L.norm(x, "nuc"), [tall], 0),
        ("norm_2_axis", lambda x: L.norm(x, 2, axis=0), [tall], 0),
        ("matrix_power", lambda x: L.matrix_power(x, -3), [a3], 0),
        ("multi_dot", lambda x, y: L.multi_dot([x, y, x]), [a3, a3], 0),
        ("trace", lambda x: L.trace(x, offset=1), [tall], 0),
        ("vdot", tnp.vdot, [_normal(4, 2, 3), _normal(4, 3, 2)], 0),
        ("inner", tnp.inner, [_normal(4, 2, 3), _normal(3)], (0, None)),
        ("einsum", lambda x, y: tnp.einsum("ij,jk->ki", x, y), [tall, _normal(4, 2, 3)], 0),
        ("einsum_diag", lambda x: tnp.einsum("ii->i", x), [a3], 0),
        ("kron", tnp.kron, [_normal(4, 2, 2), _normal(3, 1)], (0, None)),
        ("cross", tnp.cross, [_normal(4, 3), _normal(4, 2, 3)], 0),
    ]


CASES = _cases()


def _loop(f: Callable[..., Any], args: list[np.ndarray], in_axes: Any) -> Any:
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    size = next(np.shape(a)[ax] for a, ax in zip(args, axes, strict=True) if ax is not None)
    outs = [
        f(*(a if ax is None else np.take(a, k, axis=ax) for a, ax in zip(args, axes, strict=True)))
        for k in range(size)
    ]
    leaves = [_leaves(o) for o in outs]
    return [np.stack([lv[i] for lv in leaves]) for i in range(len(leaves[0]))]


@pytest.mark.parametrize(("name", "f", "args", "in_axes"), CASES, ids=[c[0] for c in CASES])
def test_vmap_matches_loop(
    name: str, f: Callable[..., Any], args: list[np.ndarray], in_axes: Any
) -> None:
    expected = _loop(f, args, in_axes)
    _close(T.vmap(f, in_axes=in_axes)(*args), expected, rtol=1e-8, atol=1e-9)
    # the batch axis elsewhere: axis 1 for every batched argument of rank >= 2
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    moved = [
        a if ax is None or np.ndim(a) < 2 else np.moveaxis(a, 0, 1)
        for a, ax in zip(args, axes, strict=True)
    ]
    new_axes = tuple(
        None if ax is None else (1 if np.ndim(a) >= 2 else 0)
        for a, ax in zip(args, axes, strict=True)
    )
    _close(T.vmap(f, in_axes=new_axes)(*moved), expected, rtol=1e-8, atol=1e-9)


def _scalar(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(*xs: Any) -> Any:
        return sum(
            tnp.sum(tnp.real(leaf) * 0.5 + tnp.sin(tnp.real(leaf))) for leaf in _out_leaves(f(*xs))
        )

    return g


def _out_leaves(out: Any) -> list[Any]:
    return list(out) if isinstance(out, tuple) else [out]


GRAD_CASES = [c for c in CASES if c[0] not in ("eig",)]


@pytest.mark.parametrize(
    ("name", "f", "args", "in_axes"), GRAD_CASES, ids=[c[0] for c in GRAD_CASES]
)
def test_vmap_of_grad_and_jvp_of_vmap(
    name: str, f: Callable[..., Any], args: list[np.ndarray], in_axes: Any
) -> None:
    g = _scalar(f)
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    argnums = tuple(i for i, ax in enumerate(axes) if ax is not None)
    grad = T.grad(g, argnums=argnums)
    expected = _loop(grad, args, in_axes)
    _close(T.vmap(grad, in_axes=in_axes)(*args), expected, rtol=1e-7, atol=1e-8)
    # forward mode through the batching rules: jvp(vmap(f)) equals the loop of jvps
    tangents = tuple(
        _normal(*np.shape(a)) + (1j * _normal(*np.shape(a)) if np.iscomplexobj(a) else 0)
        for a in args
    )
    _, t_out = T.jvp(T.vmap(f, in_axes=in_axes), tuple(args), tangents)
    per = _loop(
        lambda *xs: T.jvp(f, xs[: len(args)], xs[len(args) :])[1],
        [*args, *tangents],
        (*axes, *axes),
    )
    _close(t_out, per, rtol=1e-7, atol=1e-8)


# ---- nesting, dtypes, complex --------------------------------------------------------------
def test_hessian_of_logdet_is_minus_kron_of_inverses() -> None:
    a = _spd(3, 3)

    def logdet(x: Any) -> Any:
        return L.slogdet(x)[1]

    h = T.hessian(logdet)(a)
    ainv = np.linalg.inv(a)
    # d^2 log det / dA_ij dA_kl = -(A^-1)_jk (A^-1)_li
    expected = -np.einsum("jk,li->ijkl", ainv, ainv)
    _close(h, expected, rtol=1e-8, atol=1e-10)
    _close(T.jacrev(T.jacfwd(logdet))(a), expected, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize(
    "f",
    [
        L.det,
        L.inv,
        lambda x: L.solve(x, np.ones(3, np.float32)),
        lambda x: L.cholesky(x @ x.T + 3 * np.eye(3, dtype=np.float32)),
        lambda x: L.eigh(x + x.T)[1] * L.eigh(x + x.T)[1],
        lambda x: L.svd(x, full_matrices=False)[1],
        lambda x: L.qr(x)[1] ** 2,
        lambda x: L.pinv(x),
        lambda x: L.norm(x, "nuc"),
        lambda x: tnp.einsum("ij,jk->ik", x, x),
        lambda x: tnp.kron(x, x),
    ],
)
def test_float32_in_float32_derivatives_out(f: Callable[..., Any]) -> None:
    x = (_conditioned(3, 3) + np.diag([0.0, 2.0, 4.0])).astype(np.float32)
    out, t_out = T.jvp(f, (x,), (np.ones_like(x),))
    assert np.asarray(out).dtype == np.float32
    assert np.asarray(t_out).dtype == np.float32
    _, pullback = T.vjp(f, x)
    (ct,) = pullback(np.ones_like(np.asarray(out)))
    assert np.asarray(ct).dtype == np.float32


def _complex_fd_check(f: Callable[[Any], Any], z: np.ndarray) -> None:
    """JVP along a complex direction against central differences; VJP by duality under
    ``Re(sum(a * b))`` (JAX's convention)."""
    dz = _normal(*z.shape) + 1j * _normal(*z.shape)
    _, t_out = T.jvp(f, (z,), (dz,))
    eps = 1e-6
    fd = (np.asarray(f(z + eps * dz)) - np.asarray(f(z - eps * dz))) / (2 * eps)
    _close(t_out, fd, rtol=1e-5, atol=1e-6)
    out, pullback = T.vjp(f, z)
    w = _normal(*np.shape(out)) + 0j
    if np.iscomplexobj(out):
        w = w + 1j * _normal(*np.shape(out))
    else:
        w = w.real
    (ct,) = pullback(w)
    lhs = np.real(np.sum(w * np.asarray(t_out)))
    rhs = np.real(np.sum(np.asarray(ct) * dz))
    assert abs(lhs - rhs) <= 1e-8 * max(1.0, abs(lhs)), (lhs, rhs)


@pytest.mark.parametrize(
    "f",
    [
        L.det,
        L.inv,
        lambda z: L.solve(z, np.arange(3.0) + 1j),
        lambda z: L.slogdet(z)[0],
        lambda z: L.slogdet(z)[1],
        L.pinv,
        lambda z: L.matrix_power(z, -2),
        lambda z: L.multi_dot([z, z, z]),
        L.trace,
        lambda z: L.norm(z),
        lambda z: L.norm(z, 1),
        lambda z: tnp.vdot(z, z * 2.0),
        lambda z: tnp.einsum("ij,jk->ik", z, z),
        lambda z: L.eig(z)[0],
        lambda z: L.cholesky(z @ z.conj().T),
        lambda z: _joined(*L.qr(z)),
        lambda z: _joined(*L.qr(z[:2])),
        lambda z: L.eigvalsh(z),
        lambda z: _joined(*_gauge_free_eigh(z, "U")),
        L.svdvals,
        lambda z: _joined(*_gauge_free_svd(z[:2])),
        lambda z: L.norm(z, "nuc"),
        lambda z: L.norm(z, 2),
        lambda z: L.lstsq(z[:, :2], np.arange(3.0) + 1j)[0],
    ],
)
def test_complex_inputs_follow_the_bilinear_convention(f: Callable[[Any], Any]) -> None:
    z = _conditioned(3, 3) + 1j * _normal(3, 3)
    _complex_fd_check(f, z)


def _joined(*parts: Any) -> Any:
    return tnp.concatenate([tnp.ravel(p) for p in parts])


def _gauge_free_eigh(z: Any, uplo: str = "L") -> Any:
    """``V diag(sin w) V^H`` and ``|V|^2``: unchanged by the eigenvectors' phases."""
    w, v = L.eigh(z, UPLO=uplo)
    return (v * tnp.sin(w)) @ tnp.conj(v.T), tnp.real(v * tnp.conj(v))


def _gauge_free_svd(z: Any) -> Any:
    u, s, vh = L.svd(z, full_matrices=False)
    return (u * tnp.sin(s)) @ vh, tnp.real(u * tnp.conj(u)), s


THIRD_ORDER = {
    "qr_wide": (lambda x: L.qr(x)[1], _full_rank(2, 4)),
    "qr_wide_complex": (lambda x: L.qr(x)[0], _full_rank(2, 3) + 0.2j * _normal(2, 3)),
    "cholesky_complex": (L.cholesky, _spd_complex(3)),
    "eigh_complex": (lambda z: _gauge_free_eigh(z)[0], _spd_complex(3) + 0.3j * _normal(3, 3)),
    "svd_complex": (lambda z: _gauge_free_svd(z)[0], _full_rank(3, 2) + 0.2j * _normal(3, 2)),
    "det_singular": (L.det, np.outer([1.0, 2.0, 3.0, 0.5], [1.0, -1.0, 0.5, 2.0])),
    "slogdet_complex": (lambda z: L.slogdet(z)[0], _conditioned(3, 3) + 1j * _normal(3, 3)),
}


@pytest.mark.parametrize("name", sorted(THIRD_ORDER))
def test_third_derivatives_match_finite_differences(name: str) -> None:
    """d^3 f along one direction by forward mode (and its duality with reverse over forward
    over forward) against a finite difference of the second derivative."""
    f, x = THIRD_ORDER[name]
    dx = _normal(*x.shape) + (1j * _normal(*x.shape) if np.iscomplexobj(x) else 0)

    def d1(y: Any) -> Any:
        return T.jvp(f, (y,), (dx,))[1]

    def d2(y: Any) -> Any:
        return T.jvp(d1, (y,), (dx,))[1]

    d3 = T.jvp(d2, (x,), (dx,))[1]
    eps = 1e-4
    fd = (np.asarray(d2(x + eps * dx)) - np.asarray(d2(x - eps * dx))) / (2 * eps)
    _close(d3, fd, rtol=1e-5, atol=1e-5 * max(1.0, float(np.max(np.abs(fd)))))
    w = _normal(*np.shape(d3)).astype(np.asarray(d3).dtype)
    (ct,) = T.vjp(d2, x)[1](w)
    assert abs(np.real(np.sum(w * d3)) - np.real(np.sum(ct * dx))) <= 1e-8 * max(
        1.0, float(np.sum(np.abs(w * d3)))
    )


def test_eig_of_real_matrix_with_complex_eigenvalues() -> None:
    a = np.array([[1.0, -2.0, 0.3], [2.0, 1.0, -0.2], [0.1, 0.4, 5.0]])
    da = _normal(3, 3)
    w, t_w = T.jvp(lambda x: L.eig(x)[0], (a,), (da,))
    assert np.iscomplexobj(w)
    eps = 1e-6
    plus, minus = np.linalg.eigvals(a + eps * da), np.linalg.eigvals(a - eps * da)
    order = [int(np.argmin(np.abs(plus - wi))) for wi in w]
    order_m = [int(np.argmin(np.abs(minus - wi))) for wi in w]
    _close(t_w, (plus[order] - minus[order_m]) / (2 * eps), rtol=1e-5, atol=1e-6)
    # the cotangent of a real input is real
    (ct,) = T.vjp(lambda x: L.eig(x)[0], a)[1](np.ones(3) + 0.5j)
    assert not np.iscomplexobj(ct)


# ---- det and slogdet at singular matrices ----------------------------------------------------
def _det_derivative(a: np.ndarray, k: int) -> np.ndarray:
    """The k-th derivative of det at ``a``, shape ``(n, n) * k``, from the closed form (det is
    a polynomial): d^k det / da[i1, j1] ... da[ik, jk] is the determinant of ``a`` without
    rows i and columns j, signed by the permutation that sends i_l to j_l and the remaining
    rows in order to the remaining columns; 0 if two i's or two j's coincide."""
    n = a.shape[0]
    out = np.zeros((n, n) * k, dtype=a.dtype)
    for rows in itertools.permutations(range(n), k):
        for cols in itertools.permutations(range(n), k):
            r_rest = [r for r in range(n) if r not in rows]
            c_rest = [c for c in range(n) if c not in cols]
            minor = np.linalg.det(a[np.ix_(r_rest, c_rest)]) if r_rest else 1.0
            perm = np.zeros(n, int)
            perm[list(rows) + r_rest] = list(cols) + c_rest
            sign = np.linalg.det(np.eye(n)[perm])
            out[tuple(x for pair in zip(rows, cols, strict=True) for x in pair)] = sign * minor
    return out


def _nested(f: Callable[..., Any], modes: str) -> Callable[..., Any]:
    for mode in modes:
        f = T.jacfwd(f) if mode == "f" else T.jacrev(f)
    return f


SINGULAR = {
    "rows_proportional": np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]),
    "zero_first_column": np.array([[0.0, 1.0, 2.0], [0.0, 1.0, 5.0], [0.0, 3.0, -1.0]]),
    "rank_1_exact": np.outer([1.0, 2.0, -1.0], [3.0, 0.5, 1.0]),
    "zero": np.zeros((3, 3)),
    "rank_3_of_4": _low_rank(4, 3),
    "rank_2_of_4": _low_rank(4, 2),
    "rank_1_of_4": _low_rank(4, 1),
    "rank_1_of_2": _low_rank(2, 1),
    "tiny_rank_2_of_3": 1e-150 * _low_rank(3, 2),
    "huge_rank_2_of_3": 1e100 * _low_rank(3, 2),
}
MODES = ["f", "r", "ff", "fr", "rf", "rr", "fff", "rrr", "frf", "rfr"]


@pytest.mark.parametrize("name", sorted(SINGULAR))
def test_det_derivatives_at_singular_matrices_are_the_closed_form(name: str) -> None:
    """The gradient is the cofactor matrix (zero at rank <= n - 2), the Hessian and the third
    derivative the signed minors of size n - 2 and n - 3, in every nesting of modes."""
    a = SINGULAR[name]
    scale = float(np.max(np.abs(a))) or 1.0
    for modes in MODES:
        expected = _det_derivative(a, len(modes))
        got = _nested(L.det, modes)(a)
        size = scale ** (a.shape[0] - len(modes))  # the k-th derivative scales like a^(n-k)
        _close(got, expected, rtol=1e-9, atol=1e-9 * size)


def test_det_gradient_at_an_exactly_singular_matrix_is_the_cofactor_matrix() -> None:
    a = SINGULAR["rows_proportional"]
    cofactors = np.array([[4.0, 4.0, -4.0], [-2.0, -2.0, 2.0], [0.0, 0.0, 0.0]])
    _close(T.grad(L.det)(a), cofactors, atol=1e-13)
    t = _normal(3, 3)
    _close(T.jvp(L.det, (a,), (t,))[1], np.sum(cofactors * t), atol=1e-13)
    _close(T.vjp(L.det, a)[1](2.0)[0], 2.0 * cofactors, atol=1e-13)


def test_det_of_complex_singular_matrices_along_real_and_imaginary_directions() -> None:
    for rank in (2, 1):
        z = _low_rank(3, rank) + 1j * _low_rank(3, rank)
        for dz in (_normal(3, 3) + 0j, 1j * _normal(3, 3)):
            first = np.einsum("ij,ij->", _det_derivative(z, 1), dz)
            second = np.einsum("ijkl,ij,kl->", _det_derivative(z, 2), dz, dz)

            def tangent(x: Any, dz: np.ndarray = dz) -> Any:
                return T.jvp(L.det, (x,), (dz,))[1]

            _close(tangent(z), first, atol=1e-10)
            _close(T.jvp(tangent, (z,), (dz,))[1], second, atol=1e-10)
            # reverse mode: the transpose under Re(sum(a * b)) (det is holomorphic)
            (ct,) = T.vjp(L.det, z)[1](np.complex128(1.0))
            _close(ct, _det_derivative(z, 1), atol=1e-10)
            (ct2,) = T.vjp(tangent, z)[1](np.complex128(1.0))
            _close(ct2, np.einsum("ijkl,kl->ij", _det_derivative(z, 2), dz), atol=1e-10)


def test_det_of_a_rank_deficient_product_is_differentiable() -> None:
    """det(x @ y) is identically 0 for a 3 x 2 x and a 2 x 3 y: every derivative is 0, and
    nothing raises although every product is singular."""
    x, y = _normal(3, 2), _normal(2, 3)

    def f(x: Any, y: Any) -> Any:
        return L.det(x @ y)

    for g in T.grad(f, argnums=(0, 1))(x, y):
        _close(g, np.zeros_like(g), atol=1e-12)
    for h in T.hessian(f, argnums=(0, 1))(x, y):
        for block in h:
            _close(block, np.zeros_like(block), atol=1e-12)
    # and a product that is not identically singular: d det(x y) / dx = cof(x y) y^T
    x, y = _normal(3, 3), _normal(3, 3)
    y[2] = y[0] + y[1]  # y singular, x y singular
    _close(T.grad(f)(x, y), _det_derivative(x @ y, 1) @ y.T, atol=1e-10)


def test_vmap_of_det_derivatives_over_singular_and_regular_matrices() -> None:
    stack = np.stack([SINGULAR["rows_proportional"], _conditioned(3, 3), SINGULAR["zero"]])
    for f in (T.grad(L.det), T.hessian(L.det), T.jacfwd(T.jacrev(T.jacfwd(L.det)))):
        _close(T.vmap(f)(stack), np.stack([f(a) for a in stack]), atol=1e-12)
    # a stack through the primitive itself, not only vmap
    _close(T.grad(lambda x: tnp.sum(L.det(x)))(stack), np.stack([T.grad(L.det)(a) for a in stack]))


def test_slogdet_at_a_singular_matrix_gives_sign_zero_and_no_logabsdet_derivative() -> None:
    """As in NumPy and JAX: (sign, logabsdet) = (0, -inf); sign's derivative is 0 (also for
    complex input), logabsdet's is NaN (log|t| has none at 0), and nothing raises or warns."""
    for a in (SINGULAR["rows_proportional"], SINGULAR["rank_1_exact"], SINGULAR["zero"]):
        for z in (a, a + 0j):
            n = z.shape[0]
            (sign, logabsdet), (t_sign, t_logabsdet) = T.jvp(
                lambda x: tuple(L.slogdet(x)), (z,), (_normal(n, n).astype(z.dtype),)
            )
            assert sign == 0 and logabsdet == -np.inf
            assert t_sign == 0 and np.isnan(t_logabsdet)
            _close(T.vjp(lambda x: L.slogdet(x)[0], z)[1](np.ones((), z.dtype))[0], 0 * z)
            assert np.all(np.isnan(T.grad(lambda x: L.slogdet(x)[1])(a)))
            for hess in (T.hessian, lambda f: T.jacfwd(T.jacrev(f))):  # both orders
                _close(hess(lambda x: L.slogdet(x)[0])(a), np.zeros((n, n, n, n)))
    # in a stack, the non-singular matrices keep their derivatives
    stack = np.stack([SINGULAR["rows_proportional"], _conditioned(3, 3)])
    g = T.grad(lambda x: tnp.sum(L.slogdet(x)[1]))(stack)
    assert np.all(np.isnan(g[0]))
    _close(g[1], np.linalg.inv(stack[1]).T)


# ---- conventions at the documented limits ---------------------------------------------------
def test_cholesky_upper_reads_the_upper_triangle_as_numpy() -> None:
    a = np.array([[4.0, 1.0], [100.0, 3.0]])  # not positive definite if read from below
    _close(L.cholesky(a, upper=True), np.linalg.cholesky(a, upper=True))
    with pytest.raises(np.linalg.LinAlgError):
        L.cholesky(a)


@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("complex_input", [False, True])
def test_cholesky_differentiates_the_triangle_numpy_reads(uplo: str, complex_input: bool) -> None:
    """Like eigh (below): the other triangle has no derivative; along any direction the
    tangent is the finite difference of NumPy's own cholesky."""
    a = _spd(3, 3) + np.triu(_normal(3, 3), 1) * (1 if uplo == "L" else 0)
    a = a + np.tril(_normal(3, 3), -1) * (1 if uplo == "U" else 0)
    if complex_input:
        a = a + 1j * _normal(3, 3) * 0.3
    upper = uplo == "U"

    def f(x: Any) -> Any:
        return L.cholesky(x, upper=upper)

    eps = 1e-6
    for da in (_normal(3, 3), 1j * _normal(3, 3)) if complex_input else (_normal(3, 3),):
        da = da.astype(a.dtype)
        fd = (
            np.linalg.cholesky(a + eps * da, upper=upper)
            - np.linalg.cholesky(a - eps * da, upper=upper)
        ) / (2 * eps)
        _close(T.jvp(f, (a,), (da,))[1], fd, rtol=1e-6, atol=1e-7)
    ct = _normal(3, 3).astype(a.dtype)
    (g,) = T.vjp(f, a)[1](ct)
    other = np.triu(np.ones((3, 3)), 1) if uplo == "L" else np.tril(np.ones((3, 3)), -1)
    _close(g * other, np.zeros((3, 3)))


@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("complex_input", [False, True])
def test_eigh_differentiates_the_triangle_numpy_reads(uplo: str, complex_input: bool) -> None:
    """NumPy decomposes P(a) = S + S^H + Re(diag a), S the strict ``uplo`` triangle: the other
    triangle (and the imaginary part of the diagonal) has no derivative, and the read
    triangle's off-diagonal entries count twice. With f = sum(w^2) = |P(a)|_F^2 the gradient
    (JAX's convention, df/dx - i df/dy) is 4 conj(a) on the read triangle, 2 Re(a) on the
    diagonal and 0 on the other."""
    a = _normal(3, 3) + np.diag([0.0, 3.0, 6.0])
    if complex_input:
        a = a + 1j * _normal(3, 3)
    read = np.tril(np.ones((3, 3)), -1)
    read = read if uplo == "L" else read.T
    expected = 4 * read * a.conj() + 2 * np.diag(np.real(np.diag(a)))
    for f in (lambda x: L.eigvalsh(x, UPLO=uplo), lambda x: L.eigh(x, UPLO=uplo)[0]):
        _close(T.grad(lambda x, f=f: tnp.sum(f(x) ** 2))(a), expected, atol=1e-9)
        # forward: the other triangle moves nothing, the read one as finite differences of NumPy
        other = (read.T * _normal(3, 3)).astype(a.dtype)
        _close(T.jvp(f, (a,), (other,))[1], np.zeros(3))
        directions = [read * _normal(3, 3), np.diag(_normal(3))]
        if complex_input:  # imaginary parts: of the read triangle, and of the diagonal (ignored)
            directions += [1j * read * _normal(3, 3), 1j * np.diag(_normal(3))]
        for da in directions:
            da = da.astype(a.dtype)
            eps = 1e-6
            fd = (
                np.linalg.eigvalsh(a + eps * da, UPLO=uplo)
                - np.linalg.eigvalsh(a - eps * da, UPLO=uplo)
            ) / (2 * eps)
            _close(T.jvp(f, (a,), (da,))[1], fd, rtol=1e-6, atol=1e-7)


def test_svd_full_matrices_and_qr_complete_limits_raise_clear_errors() -> None:
    t = _full_rank(4, 2)
    with pytest.raises(ValueError, match="full_matrices=False"):
        T.jvp(lambda x: L.svd(x)[0], (t,), (t,))
    # square matrices: full_matrices=True is the same decomposition, and differentiable
    sq = _full_rank(3, 3)
    T.jvp(lambda x: L.svd(x)[1], (sq,), (sq,))
    with pytest.raises(NotImplementedError, match="mode"):
        T.jvp(lambda x: L.qr(x, mode="complete")[0], (t,), (t,))
    # a wide 'complete' is the reduced decomposition, and differentiable
    q, r = T.jvp(lambda x: tuple(L.qr(x, mode="complete")), (t.T,), (t.T,))[0]
    _close(q @ r, t.T)


def test_eigh_at_a_repeated_eigenvalue_gives_non_finite_eigenvector_derivatives() -> None:
    a = np.diag([1.0, 1.0, 2.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        _, (t_w, t_v) = T.jvp(lambda x: tuple(L.eigh(x)), (a,), (_normal(3, 3),))
    assert np.all(np.isfinite(t_w))  # eigenvalues: still one valid choice
    assert not np.all(np.isfinite(t_v))


def test_matrix_power_zero_is_a_constant_identity() -> None:
    a = _conditioned(2, 3, 3)
    out, t_out = T.jvp(lambda x: L.matrix_power(x, 0), (a,), (a,))
    _close(out, np.broadcast_to(np.eye(3), (2, 3, 3)))
    assert not np.any(np.asarray(t_out))


def test_grad_through_jacrev_of_eigh_returns_the_named_result() -> None:
    s = _separated(3, 3)
    jac = T.jacfwd(L.eigh)(s)
    assert type(jac).__name__ == "EighResult"
    assert jac.eigenvalues.shape == (3, 3, 3)
