"""``transforms.scipy.linalg`` by value: against ``scipy.linalg`` on plain and traced inputs,
closed-form derivatives, stacks and ``vmap``, and its refusals. The op-spec rows
(``specs_scipy_linalg.py``) check the derivatives against finite differences."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.linalg as sl

import transforms as T
import transforms.numpy as tnp
import transforms.scipy.linalg as tsl

RNG = np.random.default_rng(7)
A = RNG.standard_normal((3, 3)) + 4.0 * np.eye(3)
SPD = A @ A.T
M = RNG.standard_normal((3, 3))  # lu_factor pivots on it
B = RNG.standard_normal((3, 2))
V = RNG.standard_normal(3)


def _traced(f: Any, *args: Any) -> Any:
    """``f``'s value computed under ``jvp`` (traced operands)."""
    return T.jvp(f, args, tuple(np.zeros_like(a) for a in args))[0]


@pytest.mark.parametrize("trans", [0, 1, 2, "N", "T", "C"])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("unit_diagonal", [True, False])
@pytest.mark.parametrize("b", [B, V], ids=["matrix", "vector"])
def test_solve_triangular_matches_scipy(
    trans: Any, lower: bool, unit_diagonal: bool, b: Any
) -> None:
    expected = sl.solve_triangular(A, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal)

    def f(a: Any, b: Any) -> Any:
        return tsl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal)

    np.testing.assert_allclose(f(A, b), expected, rtol=1e-13)
    np.testing.assert_allclose(_traced(f, A, b), expected, rtol=1e-13)


def test_solve_triangular_reads_one_triangle() -> None:
    """The other triangle (and a unit diagonal) has no effect: its cotangent is 0."""
    g = T.grad(lambda a: tnp.sum(tsl.solve_triangular(a, V, lower=True, unit_diagonal=True)))(A)
    assert np.all(np.triu(g) == 0) and np.any(np.tril(g, -1) != 0)


def test_solve_triangular_complex_matches_scipy() -> None:
    a = A + 1j * RNG.standard_normal((3, 3))
    b = B - 2j * B
    for trans in (0, 1, 2):
        np.testing.assert_allclose(
            _traced(lambda x, trans=trans: tsl.solve_triangular(x, b, trans=trans), a),
            sl.solve_triangular(a, b, trans=trans),
            rtol=1e-13,
        )


def test_cholesky_and_cho_factor_match_scipy() -> None:
    for lower in (True, False):
        np.testing.assert_allclose(
            _traced(lambda a, lower=lower: tsl.cholesky(a, lower=lower), SPD),
            sl.cholesky(SPD, lower=lower),
            rtol=1e-12,
        )
        c, low = tsl.cho_factor(SPD, lower=lower)
        c_sp, low_sp = sl.cho_factor(SPD, lower=lower)
        assert low is low_sp
        np.testing.assert_allclose(c, c_sp, rtol=1e-12)  # the other triangle: a's entries
        for b in (B, V):
            np.testing.assert_allclose(
                _traced(lambda c, b, lower=lower: tsl.cho_solve((c, lower), b), c, b),
                sl.cho_solve((c_sp, lower), b),
                rtol=1e-12,
            )


def test_cho_solve_gradient_closed_form() -> None:
    """d/db of v^T A^-1 b is A^-1 v; d/dA is -A^-1 v b^T A^-1 through the factor."""
    g_b = T.grad(lambda b: tnp.dot(V, tsl.cho_solve(tsl.cho_factor(SPD), b)))(V)
    np.testing.assert_allclose(g_b, np.linalg.solve(SPD, V), rtol=1e-12)
    g_a = T.grad(lambda a: tnp.dot(V, tsl.cho_solve(tsl.cho_factor(a, lower=True), V)))(SPD)
    x = np.linalg.solve(SPD, V)
    full = -np.outer(x, x)  # the derivative in a symmetric direction, read from one triangle
    expected = np.tril(full + full.T) - np.diag(np.diag(full))
    np.testing.assert_allclose(g_a, expected, rtol=1e-10, atol=1e-14)


def test_lu_factor_and_lu_solve_match_scipy() -> None:
    lu, piv = _traced(lambda m: tsl.lu_factor(m), M)
    lu_sp, piv_sp = sl.lu_factor(M)
    assert np.any(piv_sp != np.arange(3)), "the test matrix must pivot"
    np.testing.assert_array_equal(piv, piv_sp)
    np.testing.assert_allclose(lu, lu_sp, rtol=1e-13)
    for trans in (0, 1, 2):
        for b in (B, V):
            np.testing.assert_allclose(
                _traced(
                    lambda m, b, trans=trans: tsl.lu_solve(tsl.lu_factor(m), b, trans=trans), M, b
                ),
                sl.lu_solve((lu_sp, piv_sp), b, trans=trans),
                rtol=1e-12,
            )


def test_lu_solve_gradient_is_the_solve_gradient() -> None:
    def f(m: Any, b: Any) -> Any:
        return tnp.dot(V, tsl.lu_solve(tsl.lu_factor(m), b))

    g_m, g_b = T.grad(f, argnums=(0, 1))(M, V)
    x, y = np.linalg.solve(M, V), np.linalg.solve(M.T, V)
    np.testing.assert_allclose(g_b, y, rtol=1e-12)
    np.testing.assert_allclose(g_m, -np.outer(y, x), rtol=1e-11)


def test_matrix_functions_match_scipy() -> None:
    x = RNG.standard_normal((2, 3, 3)) * 0.5
    np.testing.assert_allclose(_traced(tsl.expm, x), sl.expm(x), rtol=1e-13)
    np.testing.assert_allclose(_traced(tsl.logm, SPD), sl.logm(SPD), rtol=1e-12)
    np.testing.assert_allclose(_traced(tsl.sqrtm, SPD), sl.sqrtm(SPD), rtol=1e-12)


def test_expm_derivatives_closed_forms() -> None:
    """expm(t A) along t is A expm(t A); for a diagonal matrix the derivative in its entries
    is elementwise (e^x on the diagonal), and off-diagonal the divided differences."""
    d = np.array([0.5, -1.0, 2.0])
    _, tangent = T.jvp(lambda t: tsl.expm(t * A), (1.0,), (1.0,))
    np.testing.assert_allclose(tangent, A @ sl.expm(A), rtol=1e-12)
    jac = T.jacfwd(tsl.expm)(np.diag(d))  # [i, j, k, l] = d expm_ij / d a_kl
    divided = (np.exp(d)[:, None] - np.exp(d)[None, :]) / (d[:, None] - d[None, :] + np.eye(3))
    divided[np.diag_indices(3)] = np.exp(d)
    expected = np.einsum("ik,jl,ij->ijkl", np.eye(3), np.eye(3), divided)
    np.testing.assert_allclose(jac, expected, rtol=1e-12, atol=1e-14)
    # logm inverts expm: their Jacobians are inverse to each other
    x = SPD / 10
    j_exp = T.jacfwd(tsl.expm)(tsl.logm(x)).reshape(9, 9)
    j_log = T.jacrev(tsl.logm)(x).reshape(9, 9)
    np.testing.assert_allclose(j_log @ j_exp, np.eye(9), atol=1e-9)


def test_sqrtm_derivative_closed_form() -> None:
    """sqrtm(s^2 A) along s is A^(1/2) (the square root is homogeneous of degree 1)."""
    _, tangent = T.jvp(lambda s: tsl.sqrtm(s**2 * SPD), (1.0,), (1.0,))
    np.testing.assert_allclose(tangent, sl.sqrtm(SPD), rtol=1e-11)
    hessian = T.hessian(lambda s: tnp.trace(tsl.sqrtm(s**2 * SPD)))(1.0)
    np.testing.assert_allclose(hessian, 0.0, atol=1e-9)


def test_solve_sylvester_matches_scipy_and_its_gradient() -> None:
    b = RNG.standard_normal((2, 2)) + 3 * np.eye(2)
    q = RNG.standard_normal((3, 2))
    x = sl.solve_sylvester(A, b, q)
    np.testing.assert_allclose(_traced(tsl.solve_sylvester, A, b, q), x, rtol=1e-12)
    w = RNG.standard_normal((3, 2))
    g_q = T.grad(lambda q: tnp.sum(w * tsl.solve_sylvester(A, b, q)))(q)
    np.testing.assert_allclose(g_q, sl.solve_sylvester(A.T, b.T, w), rtol=1e-12)


def test_block_diag_matches_scipy() -> None:
    parts = (A, V, 2.0, np.ones((2, 1)))
    np.testing.assert_array_equal(tsl.block_diag(*parts), sl.block_diag(*parts))
    np.testing.assert_array_equal(
        _traced(lambda a, v: tsl.block_diag(a, v, 2.0), A, V), sl.block_diag(A, V, 2.0)
    )
    assert tsl.block_diag().shape == sl.block_diag().shape
    g = T.grad(lambda v: tnp.sum(tsl.block_diag(A, v) ** 2))(V)
    np.testing.assert_allclose(g, 2 * V)


def test_eigh_matches_scipy() -> None:
    for lower in (True, False):
        w, v = _traced(
            lambda a, lower=lower: tsl.eigh(a, lower=lower), A
        )  # reads one triangle of A
        w_sp, v_sp = sl.eigh(A, lower=lower)
        np.testing.assert_allclose(w, w_sp, rtol=1e-12)
        np.testing.assert_allclose(np.abs(v), np.abs(v_sp), rtol=1e-10)
        np.testing.assert_allclose(
            _traced(lambda a, lower=lower: tsl.eigh(a, lower=lower, eigvals_only=True), A),
            w_sp,
            rtol=1e-12,
        )
    w, v = _traced(lambda a, b: tsl.eigh(a, b), SPD, SPD + 3 * np.eye(3))
    w_sp, v_sp = sl.eigh(SPD, SPD + 3 * np.eye(3))
    np.testing.assert_allclose(w, w_sp, rtol=1e-12)
    np.testing.assert_allclose(np.abs(v), np.abs(v_sp), rtol=1e-10)
    w, v = tsl.eigh(SPD, subset_by_index=(1, 2))
    w_sp, v_sp = sl.eigh(SPD, subset_by_index=(1, 2))
    np.testing.assert_allclose(w, w_sp, rtol=1e-12)
    assert v.shape == v_sp.shape


def test_eigh_eigenvalue_gradient_closed_form() -> None:
    """d w_i / d A = v_i v_i^T (on the triangle read, off-diagonal entries counted twice)."""
    v = sl.eigh(SPD)[1]
    g = T.grad(lambda a: tsl.eigh(a, eigvals_only=True)[2])(SPD)
    outer = np.outer(v[:, 2], v[:, 2])
    np.testing.assert_allclose(g, np.tril(2 * outer) - np.diag(np.diag(outer)), atol=1e-12)


def test_inv_and_det_match_scipy() -> None:
    np.testing.assert_allclose(_traced(tsl.inv, A), sl.inv(A), rtol=1e-13)
    np.testing.assert_allclose(_traced(tsl.det, A), sl.det(A), rtol=1e-13)
    assert tsl.det(A.astype(np.float32)).dtype == sl.det(A.astype(np.float32)).dtype
    np.testing.assert_allclose(T.grad(tsl.det)(A), sl.det(A) * sl.inv(A).T, rtol=1e-12)


def test_stacks_and_vmap_agree_with_scipy() -> None:
    stack = np.stack([A, A.T, 2 * A])
    bs = np.stack([B, -B, 2 * B])
    for f in (tsl.expm, tsl.sqrtm, tsl.logm, tsl.inv):
        x = stack @ np.swapaxes(stack, -1, -2) / 20
        expected = getattr(sl, f.__name__)(x)
        np.testing.assert_allclose(T.vmap(f)(x), expected, rtol=1e-11)
        # the batch axis between the core axes (moved in front of them first)
        np.testing.assert_allclose(T.vmap(f, in_axes=1)(np.moveaxis(x, 0, 1)), expected, rtol=1e-11)
        np.testing.assert_allclose(f(x), expected, rtol=1e-11)
    expected = sl.solve_triangular(stack, bs, lower=True)
    np.testing.assert_allclose(
        T.vmap(lambda a, b: tsl.solve_triangular(a, b, lower=True))(stack, bs), expected
    )
    np.testing.assert_allclose(
        T.vmap(lambda a: tsl.solve_triangular(a, B), out_axes=0)(stack),
        sl.solve_triangular(stack, np.broadcast_to(B, bs.shape)),
    )
    ms = np.stack([M, M.T, M[::-1]])
    x = T.vmap(lambda m: tsl.lu_solve(tsl.lu_factor(m), V))(ms)
    np.testing.assert_allclose(x, np.linalg.solve(ms, V[:, None])[..., 0], rtol=1e-12)
    jac = T.vmap(T.jacrev(lambda m: tsl.lu_factor(m)[0]))(ms)
    for m, j in zip(ms, jac, strict=True):
        np.testing.assert_allclose(
            j, T.jacfwd(lambda m: tsl.lu_factor(m)[0])(m), rtol=1e-10, atol=1e-14
        )


def test_errors_name_the_function() -> None:
    with pytest.raises(ValueError, match="solve_triangular: expected a square matrix"):
        tsl.solve_triangular(np.ones((2, 3)), np.ones(2))
    with pytest.raises(ValueError, match="invalid trans"):
        tsl.solve_triangular(A, V, trans="X")  # type: ignore[arg-type]
    with pytest.raises(NotImplementedError, match="type=2"):
        tsl.eigh(SPD, SPD, type=2)
    with pytest.raises(NotImplementedError, match="subset_by_value"):
        tsl.eigh(SPD, subset_by_value=(0.0, 1.0))
    with pytest.raises(ValueError, match="block_diag: argument 0 has 3 dimensions"):
        tsl.block_diag(np.ones((1, 1, 1)))
