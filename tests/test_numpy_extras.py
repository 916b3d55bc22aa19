"""The NumPy functions researchers reach for, against NumPy's own values (every mode and
parameter the functions take), their derivatives at the conventions chosen, and the
non-differentiable ones: plain results, refusals under ``vmap`` where shapes depend on values."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import pytest

import transforms as T
import transforms.numpy as tnp

A = np.array([1.0, 2.0, 3.0, 4.0])
V = np.array([0.5, -1.0, 2.0])
M = np.array([[1.0, 2.0, 4.0, 0.5], [0.0, 1.0, -1.0, 3.0], [2.0, 2.0, 1.0, 0.0]])
X = np.array([0.0, 1.0, 1.5, 2.5, -1.0, 5.0])
XP = np.array([0.0, 1.0, 2.0, 3.0])
FP = np.array([1.0, 3.0, 2.0, 0.0])


def _same(ours: Any, theirs: Any) -> None:
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs, strict=True):
            _same(o, t)
        return
    ours = np.asarray(ours)
    assert ours.shape == np.shape(theirs), (ours.shape, np.shape(theirs))
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-15, equal_nan=True)


VALUE_CASES: dict[str, tuple[Any, Any]] = {
    "interp": (lambda: tnp.interp(X, XP, FP), lambda: np.interp(X, XP, FP)),
    "interp_lr": (
        lambda: tnp.interp(X, XP, FP, left=-9.0, right=9.0),
        lambda: np.interp(X, XP, FP, left=-9.0, right=9.0),
    ),
    "interp_period": (
        lambda: tnp.interp(X, XP, FP, period=2.5),
        lambda: np.interp(X, XP, FP, period=2.5),
    ),
    "interp_scalar": (lambda: tnp.interp(1.25, XP, FP), lambda: np.interp(1.25, XP, FP)),
    "interp_one_knot": (
        lambda: tnp.interp(X, XP[:1], FP[:1]),
        lambda: np.interp(X, XP[:1], FP[:1]),
    ),
    "cov": (lambda: tnp.cov(M), lambda: np.cov(M)),
    "cov_rowvar": (lambda: tnp.cov(M, rowvar=False), lambda: np.cov(M, rowvar=False)),
    "cov_y": (lambda: tnp.cov(M[0], M[1]), lambda: np.cov(M[0], M[1])),
    "cov_bias": (lambda: tnp.cov(M, bias=True), lambda: np.cov(M, bias=True)),
    "cov_ddof": (lambda: tnp.cov(M, ddof=2), lambda: np.cov(M, ddof=2)),
    "cov_weights": (
        lambda: tnp.cov(M, fweights=[1, 2, 1, 3], aweights=[0.5, 1.0, 2.0, 1.0]),
        lambda: np.cov(M, fweights=[1, 2, 1, 3], aweights=[0.5, 1.0, 2.0, 1.0]),
    ),
    "cov_1d": (lambda: tnp.cov(M[0]), lambda: np.cov(M[0])),
    "corrcoef": (lambda: tnp.corrcoef(M), lambda: np.corrcoef(M)),
    "corrcoef_xy": (lambda: tnp.corrcoef(M[0], M[2]), lambda: np.corrcoef(M[0], M[2])),
    "polyval": (lambda: tnp.polyval([1.0, -2.0, 3.0], X), lambda: np.polyval([1.0, -2.0, 3.0], X)),
    "polyval_one": (lambda: tnp.polyval([2.0], X), lambda: np.polyval([2.0], X)),
    "trapezoid": (lambda: tnp.trapezoid(M), lambda: np.trapezoid(M)),
    "trapezoid_x": (lambda: tnp.trapezoid(M, x=XP + XP**2), lambda: np.trapezoid(M, x=XP + XP**2)),
    "trapezoid_axis": (
        lambda: tnp.trapezoid(M, dx=0.5, axis=0),
        lambda: np.trapezoid(M, dx=0.5, axis=0),
    ),
    "trapezoid_x2d": (
        lambda: tnp.trapezoid(M, x=M * M, axis=0),
        lambda: np.trapezoid(M, x=M * M, axis=0),
    ),
    "meshgrid": (lambda: tnp.meshgrid(A, V), lambda: np.meshgrid(A, V)),
    "meshgrid_ij": (
        lambda: tnp.meshgrid(A, V, XP, indexing="ij"),
        lambda: np.meshgrid(A, V, XP, indexing="ij"),
    ),
    "meshgrid_sparse": (
        lambda: tnp.meshgrid(A, V, XP, sparse=True),
        lambda: np.meshgrid(A, V, XP, sparse=True),
    ),
    "logspace": (lambda: tnp.logspace(0.0, 2.0, 5), lambda: np.logspace(0.0, 2.0, 5)),
    "logspace_base": (
        lambda: tnp.logspace(0.0, 2.0, 5, endpoint=False, base=2.0),
        lambda: np.logspace(0.0, 2.0, 5, endpoint=False, base=2.0),
    ),
    "logspace_arrays": (
        lambda: tnp.logspace([0.0, 1.0], 2.0, 4, base=np.array([2.0, 3.0]), axis=1),
        lambda: np.logspace([0.0, 1.0], 2.0, 4, base=np.array([2.0, 3.0]), axis=1),
    ),
    "geomspace": (lambda: tnp.geomspace(1.0, 1000.0, 4), lambda: np.geomspace(1.0, 1000.0, 4)),
    "geomspace_negative": (
        lambda: tnp.geomspace(-1.0, -1000.0, 4, endpoint=False),
        lambda: np.geomspace(-1.0, -1000.0, 4, endpoint=False),
    ),
    "geomspace_axis": (
        lambda: tnp.geomspace([1.0, 2.0], [8.0, 32.0], 3, axis=1),
        lambda: np.geomspace([1.0, 2.0], [8.0, 32.0], 3, axis=1),
    ),
    "block": (
        lambda: tnp.block([[np.eye(2), np.zeros((2, 1))], [np.ones((1, 2)), np.array([[5.0]])]]),
        lambda: np.block([[np.eye(2), np.zeros((2, 1))], [np.ones((1, 2)), np.array([[5.0]])]]),
    ),
    "block_1d": (lambda: tnp.block([A, 1.0, V]), lambda: np.block([A, 1.0, V])),
    "block_deeper": (lambda: tnp.block([[A], [A]]), lambda: np.block([[A], [A]])),
    "block_scalar": (lambda: tnp.block(2.0), lambda: np.block(2.0)),
    "r_": (lambda: tnp.r_[A, 0:3, 7.0, V], lambda: np.r_[A, 0:3, 7.0, V]),
    "r_linspace": (lambda: tnp.r_[0:1:5j], lambda: np.r_[0:1:5j]),
    "r_ndmin": (lambda: tnp.r_["0,2", A, A], lambda: np.r_["0,2", A, A]),
    "r_trans1d": (lambda: tnp.r_["0,2,0", A, A], lambda: np.r_["0,2,0", A, A]),
    "r_axis": (lambda: tnp.r_["-1", M, M], lambda: np.r_["-1", M, M]),
    "c_": (lambda: tnp.c_[A, 2 * A], lambda: np.c_[A, 2 * A]),
    "c_mixed": (lambda: tnp.c_[M.T, A], lambda: np.c_[M.T, A]),
    "c_scalars": (
        lambda: tnp.c_[np.array([[1, 2, 3]]), 0, 0, np.array([[4, 5, 6]])],
        lambda: np.c_[np.array([[1, 2, 3]]), 0, 0, np.array([[4, 5, 6]])],
    ),
    "divmod": (lambda: tnp.divmod(X, 1.5), lambda: np.divmod(X, 1.5)),
    "row_stack": (lambda: tnp.row_stack([A, A]), lambda: np.vstack([A, A])),
    "vstack_array": (lambda: tnp.vstack(M), lambda: np.vstack(M)),
    "column_stack_array": (lambda: tnp.column_stack(M), lambda: np.column_stack(M)),
    "where_one_argument": (lambda: tnp.where(M > 1), lambda: np.where(M > 1)),
    "tril_indices_from": (lambda: tnp.tril_indices_from(M, 1), lambda: np.tril_indices_from(M, 1)),
    "triu_indices_from": (
        lambda: tnp.triu_indices_from(M, -1),
        lambda: np.triu_indices_from(M, -1),
    ),
    "tril_indices": (lambda: tnp.tril_indices(3, 0, 4), lambda: np.tril_indices(3, 0, 4)),
    "triu_indices": (lambda: tnp.triu_indices(4, 1), lambda: np.triu_indices(4, 1)),
    "isin": (lambda: tnp.isin(M, [1.0, 2.0]), lambda: np.isin(M, [1.0, 2.0])),
    "isin_invert": (
        lambda: tnp.isin(M, np.array([[1.0, 2.0]]), invert=True),
        lambda: np.isin(M, np.array([[1.0, 2.0]]), invert=True),
    ),
    "digitize": (lambda: tnp.digitize(X, XP), lambda: np.digitize(X, XP)),
    "digitize_decreasing": (
        lambda: tnp.digitize(X, XP[::-1], right=True),
        lambda: np.digitize(X, XP[::-1], right=True),
    ),
    "bincount": (
        lambda: tnp.bincount(np.array([0, 1, 1, 3]), weights=[0.5, 1.0, 2.0, 1.0], minlength=6),
        lambda: np.bincount(np.array([0, 1, 1, 3]), weights=[0.5, 1.0, 2.0, 1.0], minlength=6),
    ),
    "histogram": (lambda: tnp.histogram(X, bins=3), lambda: np.histogram(X, bins=3)),
    "histogram_auto": (lambda: tnp.histogram(X, bins="auto"), lambda: np.histogram(X, bins="auto")),
    "histogram_bin_edges": (
        lambda: tnp.histogram_bin_edges(X, bins=4, range=(0, 2)),
        lambda: np.histogram_bin_edges(X, bins=4, range=(0, 2)),
    ),
    "histogram2d": (
        lambda: tnp.histogram2d(X, 2 * X, bins=3),
        lambda: np.histogram2d(X, 2 * X, bins=3),
    ),
    "histogramdd": (
        lambda: tnp.histogramdd(M.T, bins=2)[0],
        lambda: np.histogramdd(M.T, bins=2)[0],
    ),
    "unique": (
        lambda: tnp.unique(np.array([3.0, 1.0, 2.0, 3.0, 1.0, np.nan, np.nan])),
        lambda: np.unique(np.array([3.0, 1.0, 2.0, 3.0, 1.0, np.nan, np.nan])),
    ),
    "unique_returns": (
        lambda: tnp.unique(np.array([3.0, 1.0, 2.0, 3.0]), True, True, True),
        lambda: np.unique(np.array([3.0, 1.0, 2.0, 3.0]), True, True, True),
    ),
    "unique_axis": (
        lambda: tnp.unique(
            np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 1.0]]), axis=0, return_counts=True
        ),
        lambda: np.unique(
            np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 1.0]]), axis=0, return_counts=True
        ),
    ),
    "nan_to_num_keywords": (
        lambda: tnp.nan_to_num(
            np.array([np.nan, np.inf, -np.inf, 1.0]), nan=1.0, posinf=2.0, neginf=-3.0
        ),
        lambda: np.nan_to_num(
            np.array([np.nan, np.inf, -np.inf, 1.0]), nan=1.0, posinf=2.0, neginf=-3.0
        ),
    ),
    "einsum_optimize": (
        lambda: tnp.einsum("ij,jk,kl->il", M, M.T, M, optimize="greedy"),
        lambda: np.einsum("ij,jk,kl->il", M, M.T, M, optimize="greedy"),
    ),
}


@pytest.mark.parametrize("name", sorted(VALUE_CASES))
def test_values_are_numpys(name: str) -> None:
    ours, theirs = VALUE_CASES[name]
    _same(ours(), theirs())


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("lengths", [(4, 3), (3, 4), (4, 2), (2, 4), (1, 1), (5, 5)])
def test_convolve_and_correlate_are_numpys(mode: str, lengths: tuple[int, int]) -> None:
    rng = np.random.default_rng(sum(lengths))
    a = rng.normal(size=lengths[0]) + 1j * rng.normal(size=lengths[0])
    v = rng.normal(size=lengths[1]) - 1j * rng.normal(size=lengths[1])
    for x, y in ((a.real, v.real), (a, v)):
        _same(tnp.convolve(x, y, mode), np.convolve(x, y, mode))
        _same(tnp.correlate(x, y, mode), np.correlate(x, y, mode))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_and_correlate_under_vmap_are_numpys_per_example(mode: str) -> None:
    """Batched, the convolution is n-d (a batch axis of size 1 in the unbatched operand: NumPy's
    path sums shifted copies) or per example (both batched); either way NumPy's numbers."""
    rng = np.random.default_rng(7)
    xs = rng.normal(size=(4, 5)) + 1j * rng.normal(size=(4, 5))
    vs = rng.normal(size=(4, 3)) - 0.5j
    for ours, theirs in ((tnp.convolve, np.convolve), (tnp.correlate, np.correlate)):
        for a, v in ((xs, vs), (vs, xs), (xs.real, vs.real)):
            f = partial(ours, mode=mode)
            pairs = zip(a, v, strict=True)
            _same(T.vmap(f)(a, v), np.stack([theirs(x, y, mode) for x, y in pairs]))
            _same(T.vmap(f, (0, None))(a, v[0]), np.stack([theirs(x, v[0], mode) for x in a]))
            _same(T.vmap(f, (None, 0))(a[0], v), np.stack([theirs(a[0], y, mode) for y in v]))


def test_convolve_derivatives_are_the_other_signal() -> None:
    # d/da sum(w * convolve(a, v)) = correlate(w, v, "valid") (the adjoint of convolution)
    w = np.array([1.0, -2.0, 0.5, 3.0, 1.0, -1.0])
    g = T.grad(lambda a: tnp.sum(w * tnp.convolve(a, V)))(A)
    np.testing.assert_allclose(g, np.correlate(w, V, "valid"), rtol=1e-14)
    jac = T.jacfwd(lambda v: tnp.convolve(A, v))(V)
    np.testing.assert_allclose(jac, np.stack([np.convolve(A, e) for e in np.eye(3)], 1))


def test_operators_percent_and_divmod_on_traced_values() -> None:
    x = np.array([2.5, -1.25, 7.0])
    g = T.grad(lambda x: tnp.sum(x % 1.5))(x)
    np.testing.assert_array_equal(g, [1.0, 1.0, 1.0])
    g = T.grad(lambda y: tnp.sum(7.0 % y))(x)  # d/dy (7 - floor(7/y) y) = -floor(7 / y)
    np.testing.assert_array_equal(g, -np.floor(7.0 / x))
    q, r = T.vmap(lambda x: divmod(x, 1.5))(x)
    np.testing.assert_array_equal(q, x // 1.5)
    np.testing.assert_array_equal(r, x % 1.5)
    g = T.grad(lambda x: tnp.sum(divmod(2.0, x)[1]))(x)
    np.testing.assert_array_equal(g, -np.floor(2.0 / x))


def test_stacking_accepts_any_sequence() -> None:
    def rows(x: Any) -> Any:
        return (
            tnp.sum(tnp.vstack(x) * 2)
            + tnp.sum(tnp.hstack(r for r in x))
            + tnp.sum(tnp.column_stack(tuple(x)) ** 2)
        )

    np.testing.assert_allclose(T.grad(rows)(M), 3 + 2 * M)
    with pytest.raises(TypeError, match="vstack: arrays to stack must be passed as a sequence"):
        tnp.vstack(1.0)


def test_interp_derivatives_are_jaxs_convention() -> None:
    # at a knot, the slope of the segment to its right; flat outside the knots
    slopes = T.vmap(T.grad(lambda x: tnp.interp(x, XP, FP)))(np.array([-1.0, 0.5, 1.0, 2.0, 4.0]))
    np.testing.assert_array_equal(slopes, [0.0, 2.0, -1.0, -2.0, 0.0])
    g = T.grad(lambda fp: tnp.interp(1.25, XP, fp))(FP)
    np.testing.assert_allclose(g, [0.0, 0.75, 0.25, 0.0])
    # moving the knots: f0 + (x - x0) / (x1 - x0) (f1 - f0) with f1 - f0 = -1 on [1, 2]
    g = T.grad(lambda xp: tnp.interp(1.25, xp, FP))(XP)
    np.testing.assert_allclose(g, [0.0, 0.75, 0.25, 0.0])


def test_value_dependent_parameters_are_per_example_under_vmap() -> None:
    # geomspace's sign and cov's fweights come from each example, not from the whole batch
    starts, stops = np.array([-1.0, 2.0]), np.array([-3.0, 5.0])
    out = T.vmap(lambda s, e: tnp.geomspace(s, e, 3))(starts, stops)
    expected = [np.geomspace(s, e, 3) for s, e in zip(starts, stops, strict=True)]
    np.testing.assert_allclose(out, expected)
    out = T.vmap(lambda s: tnp.geomspace(s, 4.0, 3))(np.array([1.0, 2.0]))
    np.testing.assert_allclose(out, [np.geomspace(1.0, 4.0, 3), np.geomspace(2.0, 4.0, 3)])
    xs = np.random.default_rng(0).normal(size=(2, 3, 4))
    fws = np.array([[1, 2, 1, 3], [2, 1, 1, 4]])
    out = T.vmap(lambda x, f: tnp.cov(x, fweights=f))(xs, fws)
    np.testing.assert_allclose(out, [np.cov(x, fweights=f) for x, f in zip(xs, fws, strict=True)])


def test_unique_values_carry_their_first_occurrences_derivative() -> None:
    x = np.array([3.0, 1.0, 2.0, 3.0, 1.0])
    jac = T.jacrev(tnp.unique)(x)
    np.testing.assert_array_equal(jac, np.eye(5)[[1, 2, 0]])


def test_shape_dependent_functions_refuse_under_vmap() -> None:
    for fn in (tnp.unique, tnp.histogram, tnp.bincount):
        with pytest.raises(TypeError, match="not supported under vmap"):
            T.vmap(fn)(np.array([[1, 2], [2, 2]]))
    out = T.vmap(lambda x: tnp.isin(x, [1.0, 2.0]))(M)
    np.testing.assert_array_equal(out, np.isin(M, [1.0, 2.0]))
    out = T.vmap(lambda x: tnp.digitize(x, XP))(M)
    np.testing.assert_array_equal(out, np.digitize(M, XP))


def test_geomspace_and_interp_errors_are_numpys() -> None:
    with pytest.raises(ValueError, match="Geometric sequence cannot include zero"):
        tnp.geomspace(0.0, 1.0)
    with pytest.raises(ValueError, match="fp and xp are not of the same length"):
        tnp.interp(X, XP, FP[:2])
    with pytest.raises(ValueError, match="period must be a non-zero value"):
        tnp.interp(X, XP, FP, period=0.0)
    with pytest.raises(ValueError, match="List depths are mismatched"):
        tnp.block([[A], A])
    with pytest.raises(TypeError, match="is a tuple"):
        tnp.block((A, A))
    with pytest.raises(ValueError, match="either both or neither of x and y"):
        tnp.where(M > 0, M)
    with pytest.raises(ValueError, match="mode must be one of"):
        tnp.convolve(A, V, "wide")
    with pytest.raises(ValueError, match="bins must be monotonically"):
        tnp.digitize(X, np.array([1.0, 0.0, 2.0]))


def test_raw_numpy_on_traced_values_dispatches_to_the_extras() -> None:
    assert float(T.grad(lambda x: np.interp(x, XP, FP))(1.5)) == -1.0
    g = T.grad(lambda a: np.sum(np.convolve(a, np.array([1.0, 2.0]))))(np.ones(3))
    np.testing.assert_array_equal(g, [3.0, 3.0, 3.0])
    g = T.grad(lambda a: np.sum(np.array([5.0, 6.0, 7.0]) % a))(np.array([1.0, 2.0, 4.0]))
    np.testing.assert_array_equal(g, [-5.0, -3.0, -1.0])  # -floor(c / a)
    g = T.grad(lambda m: np.sum(np.cov(m)))(M)
    np.testing.assert_allclose(g, T.grad(lambda m: tnp.sum(tnp.cov(m)))(M))


def test_einsum_optimize_and_nan_to_num_keywords_differentiate() -> None:
    def f(m: Any) -> Any:
        return tnp.einsum("ij,jk,kl->", m, m, m, optimize="optimal")

    # d/dm sum(m m m) = sum over the three positions of the other two factors' products
    ones = np.ones((3, 3))
    m = M[:, :3].T @ M[:, :3] / 10
    expected = ones @ (m @ m).T + m.T @ ones @ m.T + (m @ m).T @ ones
    np.testing.assert_allclose(T.grad(f)(m), expected, rtol=1e-13)
    x = np.array([np.nan, np.inf, -np.inf, 1.5])
    g = T.grad(lambda x: tnp.sum(tnp.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-3.0) ** 2))(x)
    np.testing.assert_array_equal(g, [0.0, 0.0, 0.0, 3.0])


def test_polyfit_under_vmap_fits_each_example_and_warns_for_a_rank_deficient_one() -> None:
    """polyfit's rank check reads the rank per example under vmap (it once asked bool() of
    the batched rank), and warns as NumPy does when any example's fit is rank-deficient."""
    x = np.stack([np.linspace(0.0, 1.0, 5) + i for i in range(3)])
    y = np.sin(3.0 * x)
    fits = T.vmap(lambda a, b: tnp.polyfit(a, b, 2))(x, y)
    np.testing.assert_allclose(fits, [np.polyfit(a, b, 2) for a, b in zip(x, y, strict=True)])
    x[1] = 0.5  # one example's abscissae all equal: rank 1 < 3
    with pytest.warns(np.exceptions.RankWarning):
        T.vmap(lambda a, b: tnp.polyfit(a, b, 2))(x, y)


def test_piecewise_under_vmap_with_per_example_conditions() -> None:
    """Conditions that differ per example select per example (every function runs on every
    element, as jax.numpy.piecewise), values and derivatives equal to a loop."""
    f = lambda x: tnp.piecewise(x, [x < 0, x >= 1], [lambda v: -v, tnp.exp, lambda v: v**2])
    xs = np.array([-2.0, 0.5, 1.5, 0.9])
    np.testing.assert_allclose(T.vmap(f)(xs), [f(x) for x in xs])
    np.testing.assert_allclose(T.vmap(T.grad(f))(xs), [T.grad(f)(x) for x in xs])
    np.testing.assert_allclose(T.vmap(T.grad(f))(xs), [-1.0, 1.0, np.exp(1.5), 1.8])
