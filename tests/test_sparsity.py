"""Sparse Jacobians and Hessians: detection, coloring, compressed products (issue 14).

Patterns are checked against the closed forms of the structures (diagonal, banded, periodic,
2-D stencil, arrowhead, block-diagonal, dense) and, for every row of the op-spec table and
random compositions of rows, against the dense derivative: a pattern must hold every
non-zero of ``jacfwd``/``hessian`` (soundness), and the sparse results must equal them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st
from op_specs import OP_SPECS, OpSpec, cases

import transforms as T
import transforms.numpy as tnp
from transforms.compose._coloring import (
    column_coloring,
    column_positions,
    star_coloring,
    star_positions,
)

RNG = np.random.default_rng(0)


def _dense_jacobian(f: Callable[[Any], Any], x: np.ndarray) -> np.ndarray:
    out = np.asarray(f(x))
    return np.asarray(T.jacfwd(f)(x)).reshape(out.size, x.size)


def _assert_jacobian(f: Callable[[Any], Any], x: np.ndarray, expected_pattern: Any) -> None:
    pattern = T.jacobian_sparsity(f)(x)
    assert isinstance(pattern, scipy.sparse.csr_array) and pattern.dtype == bool
    np.testing.assert_array_equal(pattern.toarray(), np.asarray(expected_pattern))
    dense = _dense_jacobian(f, x)
    for mode in ("auto", "forward", "reverse"):
        jac = T.sparse_jacobian(f, mode=mode)(x)  # type: ignore[arg-type]
        assert isinstance(jac, scipy.sparse.csr_array)
        np.testing.assert_allclose(jac.toarray(), dense, rtol=1e-12, atol=1e-12, err_msg=mode)


def _assert_hessian(f: Callable[[Any], Any], x: np.ndarray, expected_pattern: Any) -> None:
    pattern = T.hessian_sparsity(f)(x)
    np.testing.assert_array_equal(pattern.toarray(), np.asarray(expected_pattern))
    hess = T.sparse_hessian(f)(x)
    np.testing.assert_allclose(hess.toarray(), T.hessian(f)(x), rtol=1e-12, atol=1e-12)


def _band(n: int, offsets: tuple[int, ...], periodic: bool = False) -> np.ndarray:
    out = np.zeros((n, n), dtype=bool)
    for k in offsets:
        for i in range(n):
            j = i + k
            if periodic:
                out[i, j % n] = True
            elif 0 <= j < n:
                out[i, j] = True
    return out


# ---- structures with known patterns --------------------------------------------------------------
def test_diagonal() -> None:
    x = RNG.uniform(0.5, 2.0, 7)
    _assert_jacobian(lambda x: tnp.sin(x) * x + tnp.log(x), x, np.eye(7, dtype=bool))
    _assert_hessian(lambda x: tnp.sum(tnp.exp(x) / x), x, np.eye(7, dtype=bool))


def test_banded_stencil() -> None:
    def residual(u: Any) -> Any:  # -u'' + u^3 with zero boundary values
        padded = tnp.concatenate([tnp.zeros(1), u, tnp.zeros(1)])
        return 2 * u - padded[:-2] - padded[2:] + u**3

    x = RNG.normal(size=9)
    _assert_jacobian(residual, x, _band(9, (-1, 0, 1)))
    _assert_hessian(lambda u: tnp.sum(residual(u) ** 2), x, _band(9, (-2, -1, 0, 1, 2)))


def test_periodic_stencil() -> None:
    def residual(u: Any) -> Any:
        return tnp.roll(u, 1) - 2 * u + tnp.roll(u, -1) + tnp.sin(u)

    x = RNG.normal(size=8)
    _assert_jacobian(residual, x, _band(8, (-1, 0, 1), periodic=True))


def test_two_dimensional_stencil() -> None:
    n = 5

    def laplacian(u: Any) -> Any:
        u = tnp.reshape(u, (n, n))
        padded = tnp.pad(u, 1)
        lap = padded[:-2, 1:-1] + padded[2:, 1:-1] + padded[1:-1, :-2] + padded[1:-1, 2:] - 4 * u
        return tnp.ravel(lap + tnp.exp(u))

    expected = np.zeros((n * n, n * n), dtype=bool)
    for i in range(n):
        for j in range(n):
            for di, dj in ((0, 0), (1, 0), (-1, 0), (0, 1), (0, -1)):
                if 0 <= i + di < n and 0 <= j + dj < n:
                    expected[i * n + j, (i + di) * n + j + dj] = True
    _assert_jacobian(laplacian, RNG.normal(size=n * n), expected)


def test_convolutions_have_their_band() -> None:
    """A direct convolution's pattern is its band: output k of convolve(a, v) depends on a[k - j]
    for each j where v[j] may be non-zero (a constant kernel's zeros drop their diagonal);
    SciPy's direct method gives the same n-d band; its 'auto' (maybe the FFT) is dense."""
    import transforms.scipy.signal as tss

    kernel = np.array([1.0, 0.0, -2.0])
    x = RNG.normal(size=6)
    _assert_jacobian(lambda a: tnp.convolve(a, kernel), x, _band(8, (0, -2))[:, :6])
    _assert_jacobian(lambda a: tnp.convolve(a, kernel, "same"), x, _band(6, (1, -1)))
    _assert_jacobian(lambda a: tnp.correlate(a, kernel, "valid"), x, _band(6, (0, 2))[:4])
    # both traced: convolve(a, a)[k] = sum_{i+j=k} a[i] a[j], its Hessian the pairs i + j = k
    k, i = np.arange(11)[:, None], np.arange(6)[None, :]
    _assert_jacobian(lambda a: tnp.convolve(a, a), x, (0 <= k - i) & (k - i < 6))
    _assert_hessian(lambda a: tnp.convolve(a, a)[4], x, np.add.outer(i[0], i[0]) == 4)
    n = 4
    image, stencil = RNG.normal(size=n * n), np.array([[0.0, 1.0], [1.0, 1.0]])
    expected = np.zeros(((n + 1) ** 2, n * n), dtype=bool)
    for i in range(n + 1):
        for j in range(n + 1):
            for di, dj in ((0, 1), (1, 0), (1, 1)):
                if 0 <= i - di < n and 0 <= j - dj < n:
                    expected[i * (n + 1) + j, (i - di) * n + j - dj] = True

    def direct(u: Any, method: Any = "direct") -> Any:
        return tnp.ravel(tss.convolve(tnp.reshape(u, (n, n)), stencil, method=method))

    _assert_jacobian(direct, image, expected)
    assert T.jacobian_sparsity(lambda u: direct(u, "auto"))(image).toarray().all()


def test_arrowhead() -> None:
    def f(x: Any) -> Any:
        return x * x[0] + tnp.cos(x)

    x = RNG.normal(size=6)
    expected = np.eye(6, dtype=bool)
    expected[:, 0] = True
    _assert_jacobian(f, x, expected)
    arrow = np.eye(6, dtype=bool)
    arrow[0, :] = arrow[:, 0] = True
    arrow[0, 0] = False  # x0 appears linearly
    _assert_hessian(lambda x: tnp.sum(x[1:] ** 2 * x[0]), x, arrow)
    assert _colors(star_coloring(T.hessian_sparsity(lambda x: tnp.sum(x**2 * x[0]))(x))) == 2


def test_block_diagonal() -> None:
    def f(x: Any) -> Any:  # 3 independent 2x2 blocks: x -> A_k x_k (A_k traced too)
        blocks = tnp.reshape(x, (3, 2))
        return tnp.ravel(tnp.tanh(blocks) * tnp.sum(blocks, axis=1, keepdims=True))

    expected = np.kron(np.eye(3, dtype=bool), np.ones((2, 2), dtype=bool))
    x = RNG.normal(size=6)
    _assert_jacobian(f, x, expected)
    _assert_hessian(lambda x: tnp.sum(f(x)), x, expected)


def test_dense() -> None:
    a = RNG.normal(size=(4, 4))
    x = RNG.normal(size=4)
    _assert_jacobian(lambda x: tnp.tanh(a @ x), x, np.ones((4, 4), dtype=bool))
    _assert_jacobian(lambda x: tnp.linalg.solve(a + np.diag(x), x), x, np.ones((4, 4), bool))
    _assert_hessian(lambda x: tnp.sum(x) ** 2, x, np.ones((4, 4), dtype=bool))


def test_constant_factors_give_their_zeros() -> None:
    lap = _band(6, (-1, 0, 1)) * 1.0  # a constant stencil matrix: its zeros are structural
    x = RNG.normal(size=6)
    _assert_jacobian(lambda x: lap @ tnp.sin(x), x, _band(6, (-1, 0, 1)))
    mask = np.array([1.0, 0.0, 2.0, 0.0, 1.0, 1.0])
    _assert_jacobian(lambda x: mask * x, x, np.diag(mask != 0))


def test_linear_terms_add_no_hessian_pairs() -> None:
    x = RNG.normal(size=5)
    f = lambda x: tnp.sum(3 * x + tnp.cumsum(x)) + x[1] * x[3]
    expected = np.zeros((5, 5), dtype=bool)
    expected[1, 3] = expected[3, 1] = True
    _assert_hessian(f, x, expected)


def test_value_dependent_branch_takes_the_path() -> None:
    def f(x: Any) -> Any:
        return x[:2] * 2 if x[0] > 0 else x[1:] ** 2

    assert T.jacobian_sparsity(f)(np.ones(3)).toarray().tolist() == [
        [True, False, False],
        [False, True, False],
    ]
    assert T.jacobian_sparsity(f)(-np.ones(3)).toarray().tolist() == [
        [False, True, False],
        [False, False, True],
    ]
    # where is the union of both sides, valid at every point
    g = lambda x: tnp.where(x > 0, x, 0.0) + tnp.maximum(x[::-1], 0.0)
    np.testing.assert_array_equal(
        T.jacobian_sparsity(g)(np.ones(3)).toarray(),
        np.eye(3, dtype=bool) | np.eye(3, dtype=bool)[::-1],
    )


# ---- colorings -----------------------------------------------------------------------------------
def _colors(colors: np.ndarray) -> int:
    return int(colors.max()) + 1


@pytest.mark.parametrize("width", [1, 2, 3, 5])
def test_banded_jacobian_takes_bandwidth_colors(width: int) -> None:
    pattern = scipy.sparse.csr_array(_band(40, tuple(range(width))))
    assert _colors(column_coloring(pattern)) == width


@pytest.mark.parametrize("n", [3, 10, 101])
def test_tridiagonal_hessian_takes_three_colors(n: int) -> None:
    pattern = scipy.sparse.csr_array(_band(n, (-1, 0, 1)))
    colors = star_coloring(pattern)
    assert _colors(colors) <= 3
    _check_star_recovery(pattern, colors)

    def f(x: Any) -> Any:
        return tnp.sum(x[1:] * x[:-1]) + tnp.sum(tnp.sin(x))

    hess = T.sparse_hessian(f)(np.linspace(0, 1, n))
    np.testing.assert_allclose(hess.toarray(), T.hessian(f)(np.linspace(0, 1, n)), atol=1e-12)


def _check_star_recovery(pattern: Any, colors: np.ndarray) -> None:
    """Direct recovery from H @ S, for a random H of this pattern, gives H exactly."""
    h = pattern.toarray() * RNG.normal(size=pattern.shape)
    h = h + h.T
    sym = scipy.sparse.csr_array(h != 0)
    seeds = np.eye(_colors(colors))[colors]
    products = h @ seeds
    rows, cols = star_positions(sym, colors)
    recovered = scipy.sparse.csr_array((products[rows, cols], sym.indices, sym.indptr), sym.shape)
    np.testing.assert_allclose(recovered.toarray(), h, rtol=0, atol=1e-12)


@settings(max_examples=30)
@given(
    n=st.integers(1, 30),
    density=st.floats(0.02, 0.5),
    seed=st.integers(0, 2**32 - 1),
)
def test_colorings_recover_random_patterns(n: int, density: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    pattern = scipy.sparse.csr_array(rng.uniform(size=(n, n)) < density)
    sym = scipy.sparse.csr_array(pattern + pattern.T)
    _check_star_recovery(sym, star_coloring(sym))
    # columns of one color share no row: J @ S holds every entry alone
    j = pattern.toarray() * rng.normal(size=(n, n))
    colors = column_coloring(pattern)
    products = j @ np.eye(_colors(colors))[colors]
    rows, read = column_positions(pattern, colors)
    np.testing.assert_allclose(products[rows, read], j[rows, pattern.indices], atol=1e-12)


# ---- the op-spec table: every rule, sound against the dense derivatives --------------------------
def _flat_program(spec: OpSpec, data: st.DataObject) -> tuple[Callable[[Any], Any], np.ndarray]:
    """A row as a function of one flat real vector, returning one flat real vector."""
    case = data.draw(cases(spec), label="case")
    shapes = [x.shape for x in case.args]
    complex_in = [np.iscomplexobj(x) for x in case.args]
    parts = [
        np.concatenate([x.real.ravel(), x.imag.ravel()]) if c else x.ravel()
        for x, c in zip(case.args, complex_in, strict=True)
    ]
    flat = np.concatenate(parts) if parts else np.zeros(0)

    def g(v: Any) -> Any:
        xs, start = [], 0
        for shape, c in zip(shapes, complex_in, strict=True):
            size = int(np.prod(shape))
            if c:
                x = v[start : start + size] + 1j * v[start + size : start + 2 * size]
                start += 2 * size
            else:
                x = v[start : start + size]
                start += size
            xs.append(tnp.reshape(x, shape))
        out = case.f(*xs)
        leaves = out if isinstance(out, (tuple, list)) else (out,)
        flat_out = []
        for leaf in leaves:
            leaf = tnp.ravel(leaf)
            if _is_complex(leaf):
                flat_out += [tnp.real(leaf), tnp.imag(leaf)]
            else:
                flat_out.append(leaf)
        return tnp.concatenate(flat_out)

    return g, flat


def _is_complex(x: Any) -> bool:
    return bool(np.issubdtype(x.dtype, np.complexfloating))


@pytest.mark.parametrize("spec", OP_SPECS, ids=lambda s: s.name)
@settings(max_examples=2)  # every row: the dense derivatives of ~450 rows are the cost
@given(data=st.data())
def test_op_spec_patterns_hold_every_nonzero(spec: OpSpec, data: st.DataObject) -> None:
    g, v = _flat_program(spec, data)
    if v.size == 0 or np.asarray(g(v)).size == 0:
        return
    dense = np.asarray(T.jacfwd(g)(v))
    pattern = T.jacobian_sparsity(g)(v).toarray()
    missed = (dense != 0) & ~pattern
    assert not missed.any(), f"{spec.name}: non-zeros outside the pattern at {np.argwhere(missed)}"
    jac = T.sparse_jacobian(g)(v).toarray()
    np.testing.assert_allclose(jac, dense, rtol=1e-10, atol=1e-10 * max(1, np.abs(dense).max()))

    w = np.linspace(0.5, 1.5, dense.shape[0])

    def scalar(v: Any) -> Any:
        y = g(v)
        return tnp.sum(w * y + y * y * w / 2)

    hess = np.asarray(T.hessian(scalar)(v))
    h_pattern = T.hessian_sparsity(scalar)(v).toarray()
    missed = (hess != 0) & ~h_pattern
    assert not missed.any(), f"{spec.name}: Hessian non-zeros outside the pattern"
    sparse = T.sparse_hessian(scalar)(v).toarray()
    scale = max(1.0, float(np.abs(hess).max()))
    np.testing.assert_allclose(sparse, hess, rtol=1e-9, atol=1e-9 * scale)


# ---- random programs: compositions of rows -------------------------------------------------------
_UNARY = [
    tnp.sin,
    tnp.exp,
    tnp.tanh,
    lambda x: x * x,
    lambda x: 3.0 * x,
    tnp.cumsum,
    lambda x: x[::-1],
    lambda x: tnp.roll(x, 2),
    lambda x: x - tnp.mean(x),
]


@settings(max_examples=25)
@given(
    ops=st.lists(
        st.tuples(st.integers(0, len(_UNARY) - 1), st.integers(0, 11), st.booleans()),
        min_size=1,
        max_size=6,
    ),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_sparse_programs(ops: list[tuple[int, int, bool]], seed: int) -> None:
    """Chains of elementwise, shifting and mixing steps, each combined with a shifted copy of
    the input or its own value, against the dense Jacobian and Hessian."""
    x = np.random.default_rng(seed).uniform(-1, 1, 12)

    def f(x: Any) -> Any:
        y = x
        for op, shift, multiply in ops:
            z = _UNARY[op](y)
            other = tnp.roll(x, shift)
            y = z * other if multiply else z + other
        return y

    dense = _dense_jacobian(f, x)
    pattern = T.jacobian_sparsity(f)(x).toarray()
    assert not ((dense != 0) & ~pattern).any()
    np.testing.assert_allclose(T.sparse_jacobian(f)(x).toarray(), dense, atol=1e-10)
    s = lambda x: tnp.sum(tnp.sin(f(x)))
    hess = np.asarray(T.hessian(s)(x))
    assert not ((hess != 0) & ~T.hessian_sparsity(s)(x).toarray()).any()
    np.testing.assert_allclose(T.sparse_hessian(s)(x).toarray(), hess, atol=1e-10)


# ---- reuse, nesting ------------------------------------------------------------------------------
def test_detection_and_coloring_are_reused_per_shape() -> None:
    detections = []

    def f(x: Any) -> Any:
        if isinstance(x, T.core.Tracer) and type(x).__name__ == "SparsityTracer":
            detections.append(x.shape)
        return x[1:] * x[:-1]

    jac = T.sparse_jacobian(f)
    for x in (np.ones(5), np.arange(5.0), np.ones(7), np.arange(5.0) + 2):
        np.testing.assert_allclose(jac(x).toarray(), _dense_jacobian(f, x))
    assert detections == [(5,), (7,)]
    given = T.sparse_jacobian(f, sparsity=T.jacobian_sparsity(f)(np.ones(5)))
    detections.clear()
    np.testing.assert_allclose(given(np.arange(5.0)).toarray(), _dense_jacobian(f, np.arange(5.0)))
    assert detections == []


def test_other_arguments_and_argnums() -> None:
    def f(a: Any, x: Any) -> Any:
        return a * x[1:] ** 2 + x[:-1]

    a, x = np.array([1.0, 2.0, 3.0]), np.arange(4.0)
    jac = T.sparse_jacobian(f, argnums=1)(a, x)
    np.testing.assert_allclose(jac.toarray(), T.jacfwd(f, argnums=1)(a, x))
    jac_a = T.sparse_jacobian(f, argnums=0)(a, x)
    np.testing.assert_allclose(jac_a.toarray(), T.jacfwd(f, argnums=0)(a, x))


def test_vmap_over_sparse_jacobian_and_hessian() -> None:
    f = lambda x: tnp.sin(x[1:]) * x[:-1]
    xs = RNG.normal(size=(3, 6))
    batched = T.vmap(T.sparse_jacobian(f))(xs)
    assert isinstance(batched, T.SparseMatrix) and np.shape(batched.data)[0] == 3
    for k in range(3):
        single = T.SparseMatrix(batched.data[k], batched.indices, batched.indptr, batched.shape)
        np.testing.assert_allclose(single.tocsr().toarray(), T.jacfwd(f)(xs[k]), atol=1e-12)
    s = lambda x: tnp.sum(f(x) ** 2)
    hs = T.vmap(T.sparse_hessian(s))(xs)
    for k in range(3):
        single = T.SparseMatrix(hs.data[k], hs.indices, hs.indptr, hs.shape)
        np.testing.assert_allclose(single.todense(), T.hessian(s)(xs[k]), atol=1e-12)


def test_grad_through_a_sparse_jacobian_product() -> None:
    f = lambda x: tnp.sin(x[1:]) * x[:-1] ** 2
    v = np.linspace(-1.0, 1.0, 6)
    x = RNG.normal(size=6)

    def through_sparse(x: Any) -> Any:
        return tnp.sum((T.sparse_jacobian(f)(x) @ v) ** 2)

    def through_dense(x: Any) -> Any:
        return tnp.sum((T.jacfwd(f)(x) @ v) ** 2)

    np.testing.assert_allclose(through_sparse(x), through_dense(x), rtol=1e-12)
    np.testing.assert_allclose(T.grad(through_sparse)(x), T.grad(through_dense)(x), rtol=1e-10)
    hess_fn = lambda x: T.sparse_hessian(lambda y: tnp.sum(f(y)))(x).todense()
    np.testing.assert_allclose(
        T.jacfwd(hess_fn)(x), T.jacfwd(T.hessian(lambda y: tnp.sum(f(y))))(x), atol=1e-10
    )


# ---- errors --------------------------------------------------------------------------------------
def test_errors() -> None:
    f = lambda x: x[1:] * x[:-1]
    x = np.ones(4)
    with pytest.raises(ValueError, match=r"sparse_jacobian: sparsity has shape \(3, 5\)"):
        T.sparse_jacobian(f, sparsity=np.ones((3, 5), bool))(x)
    with pytest.raises(ValueError, match=r"sparsity has shape \(2, 4\).*\(3, 4\)"):
        T.sparse_jacobian(f, sparsity=np.ones((2, 4), bool))(x)
    with pytest.raises(ValueError, match=r"sparsity has shape \(2, 4\).*\(3, 4\)"):
        T.sparse_jacobian(f, sparsity=np.ones((2, 4), bool), mode="reverse")(x)
    with pytest.raises(ValueError, match=r"sparse_hessian: sparsity has shape \(3, 3\)"):
        T.sparse_hessian(lambda x: tnp.sum(x), sparsity=np.eye(3))(x)
    with pytest.raises(TypeError, match=r"sparse_hessian: the function must return a scalar"):
        T.sparse_hessian(f)(x)
    with pytest.raises(TypeError, match=r"hessian_sparsity: the function must return a scalar"):
        T.hessian_sparsity(f)(x)
    with pytest.raises(TypeError, match=r"sparse_hessian: the function must return a scalar"):
        T.sparse_hessian(f, sparsity=np.eye(4))(x)
    with pytest.raises(TypeError, match=r"argnums must be one int"):
        T.jacobian_sparsity(f, argnums=(0,))(x)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"requires float or complex inputs.*int64"):
        T.jacobian_sparsity(f)(np.arange(4))
    with pytest.raises(TypeError, match=r"must return one array, got tuple"):
        T.jacobian_sparsity(lambda x: (x, x))(x)
    with pytest.raises(TypeError, match=r"argument 0 must be an array, got dict"):
        T.sparse_jacobian(f)({"x": x})
    with pytest.raises(ValueError, match=r"mode must be 'auto', 'forward' or 'reverse'"):
        T.sparse_jacobian(f, mode="both")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"argnums 2 is out of range"):
        T.sparse_jacobian(f, argnums=2)(x)


def test_constant_function_has_an_empty_pattern() -> None:
    f = lambda x: tnp.ones(3) + tnp.floor(x)
    x = np.linspace(0, 2, 3)
    assert T.jacobian_sparsity(f)(x).nnz == 0
    assert T.sparse_jacobian(f)(x).toarray().tolist() == np.zeros((3, 3)).tolist()
    assert T.sparse_hessian(lambda x: tnp.sum(3 * x))(x).nnz == 0


def test_without_scipy_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "scipy.sparse", None)  # as if SciPy were not installed
    with pytest.raises(ImportError, match=r"pip install 'transforms\[scipy\]'"):
        T.jacobian_sparsity(lambda x: x * 2)(np.ones(3))
