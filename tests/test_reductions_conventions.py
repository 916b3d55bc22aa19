"""Reductions, scans and non-differentiable functions: conventions by value, batching, dtypes.

- documented conventions at kinks: ``std`` at zero variance (derivative 0, no NaN, at every
  order), ``median``'s shared derivative at ties and even counts, NaNs' zero derivative in the
  nan* functions, ``cumprod`` exact through zeros (against its exact Jacobian);
- ``vmap`` of every function equals stacking it over examples (several ``in_axes``), and
  ``vmap`` of its gradient too;
- NumPy's values on plain arrays (``gradient`` and ``diff`` bit for bit), dtypes kept;
- every non-differentiable function gives plain NumPy values under ``jvp``, ``vjp`` and
  ``vmap`` (nested too), and ``vmap`` refuses those whose result cannot be batched.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import transforms as T
import transforms.numpy as tnp
from transforms.core import Tracer

RNG = np.random.default_rng(1234)


def _stacked(f: Callable[..., Any], xs: np.ndarray, axis: int = 0) -> np.ndarray:
    return np.stack([np.asarray(f(x)) for x in np.moveaxis(xs, axis, 0)])


# ---- conventions at kinks -----------------------------------------------------------------------
def test_std_at_zero_variance_has_zero_derivative_in_every_mode() -> None:
    x = np.full((2, 4), 0.75)
    x[1] = [1.0, 2.0, 3.0, 4.0]  # one group constant, one not

    def f(a: Any) -> Any:
        return tnp.std(a, axis=1)

    t = RNG.normal(size=x.shape)
    out, t_out = T.jvp(f, (x,), (t,))
    np.testing.assert_array_equal(out, np.std(x, axis=1))
    assert t_out[0] == 0.0 and np.isfinite(t_out[1])
    (g,) = T.vjp(f, x)[1](np.array([1.0, 1.0]))
    np.testing.assert_array_equal(g[0], np.zeros(4))
    np.testing.assert_allclose(g[1], (x[1] - 2.5) / (4 * np.std(x[1])))
    for hess in (T.hessian, lambda g: T.jacfwd(T.jacrev(g))):  # both orders
        h = hess(lambda a: tnp.sum(f(a)))(x)
        assert np.all(np.isfinite(h))
        np.testing.assert_array_equal(h[0, :, 0, :], np.zeros((4, 4)))
    np.testing.assert_array_equal(T.grad(lambda a: tnp.std(a))(np.ones(3)), np.zeros(3))
    np.testing.assert_array_equal(T.grad(lambda a: tnp.nanstd(a))(np.ones(3)), np.zeros(3))


def test_median_shares_the_derivative_at_ties_and_even_counts() -> None:
    grad = T.grad(lambda a: tnp.median(a))
    np.testing.assert_array_equal(grad(np.array([5.0, 1.0, 3.0])), [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(grad(np.array([4.0, 1.0, 3.0, 2.0])), [0.0, 0.0, 0.5, 0.5])
    # odd count, the median tied twice: half each
    np.testing.assert_array_equal(grad(np.array([2.0, 1.0, 2.0, 5.0, 0.0])), [0.5, 0, 0.5, 0, 0])
    # even count, both middle values tied with a third element: a third each
    np.testing.assert_allclose(grad(np.array([2.0, 2.0, 1.0, 2.0])), [1 / 3, 1 / 3, 0, 1 / 3])
    # forward mode agrees, and per group along an axis
    x = np.array([[3.0, 1.0, 2.0, 2.0], [0.0, 4.0, 1.0, 9.0]])
    t = RNG.normal(size=x.shape)
    _, t_out = T.jvp(lambda a: tnp.median(a, axis=1), (x,), (t,))
    np.testing.assert_allclose(t_out, [0.5 * (t[0, 2] + t[0, 3]), 0.5 * (t[1, 1] + t[1, 2])])


def test_nan_elements_have_zero_derivative() -> None:
    x = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]])
    for name in ("nansum", "nanmean", "nanprod", "nanmax", "nanmin", "nanvar", "nanstd"):
        fn = getattr(tnp, name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # NumPy warns of all-NaN groups
            expected = getattr(np, name)(x, axis=1)
        np.testing.assert_allclose(fn(x, axis=1), expected, err_msg=name)
        (g,) = T.vjp(lambda a, fn=fn: fn(a, axis=1), x)[1](np.ones(2))
        assert np.all(np.isfinite(g)), (name, g)
        assert np.all(g[np.isnan(x)] == 0), (name, g)
        _, t_out = T.jvp(lambda a, fn=fn: fn(a, axis=1), (x,), (np.ones_like(x),))
        assert t_out[1] == 0.0 and np.isfinite(t_out[0]), (name, t_out)


def _cumprod_jacobian(x: np.ndarray) -> np.ndarray:
    """``d cumprod(x)_i / d x_j = prod_{k <= i, k != j} x_k`` for ``j <= i``, by loops."""
    n = len(x)
    jac = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1):
            jac[i, j] = np.prod([x[k] for k in range(i + 1) if k != j])
    return jac


@pytest.mark.parametrize(
    "x",
    [
        np.array([2.0, 0.0, 3.0, -1.5, 0.5]),
        np.array([0.0, 0.0, 1.5, 2.0, -1.0, 0.75, 0.0]),
        np.array([1.5, -2.0, 0.5, 0.0]),
        np.array([0.0]),
    ],
)
def test_cumprod_is_exact_through_zeros(x: np.ndarray) -> None:
    exact = _cumprod_jacobian(x)
    np.testing.assert_allclose(T.jacfwd(tnp.cumprod)(x), exact, rtol=1e-14, atol=0)
    np.testing.assert_allclose(T.jacrev(tnp.cumprod)(x), exact, rtol=1e-14, atol=0)
    # second order: d2/dx_j dx_l of sum(cumprod) against finite differences of the exact one
    eps = 1e-6
    for hess in (T.hessian, lambda f: T.jacfwd(T.jacrev(f))):  # both orders
        h = hess(lambda a: tnp.sum(tnp.cumprod(a)))(x)
        for j in range(len(x)):
            e = np.zeros_like(x)
            e[j] = eps
            fd = (_cumprod_jacobian(x + e).sum(0) - _cumprod_jacobian(x - e).sum(0)) / (2 * eps)
            np.testing.assert_allclose(h[j], fd, rtol=1e-6, atol=1e-8)


def test_logsumexp_is_stable_and_exact() -> None:
    x = np.array([1000.0, 1000.0, -3.0])
    np.testing.assert_allclose(tnp.logsumexp(x), 1000.0 + np.log(2.0 + np.exp(-1003.0)))
    g = T.grad(lambda a: tnp.logsumexp(a))(x)
    np.testing.assert_allclose(g, [0.5, 0.5, 0.0], atol=1e-300)
    out, sign = tnp.logsumexp(np.array([0.0, 0.0]), b=np.array([1.0, -3.0]), return_sign=True)
    np.testing.assert_allclose((out, sign), (np.log(2.0), -1.0))


# ---- NumPy's values on plain arrays, dtypes kept ------------------------------------------------
def test_gradient_and_diff_match_numpy_bit_for_bit() -> None:
    f = RNG.normal(size=(5, 4))
    coords = np.array([0.0, 0.5, 1.5, 1.75, 3.0])
    for args, kw in [
        ((), {}),
        ((0.3,), {}),
        ((coords, 2.0), {"edge_order": 2}),
        ((coords,), {"axis": 0}),
        ((np.arange(4),), {"axis": -1, "edge_order": 2}),
        ((2, 3), {"axis": (1, 0)}),
    ]:
        ours, theirs = tnp.gradient(f, *args, **kw), np.gradient(f, *args, **kw)
        assert type(ours) is type(theirs)
        pairs = zip(ours, theirs, strict=True) if isinstance(ours, tuple) else [(ours, theirs)]
        for a, b in pairs:
            np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(tnp.diff(f, 2, axis=0, prepend=1.0), np.diff(f, 2, 0, 1.0))
    np.testing.assert_array_equal(tnp.diff(f, append=f[:, :2]), np.diff(f, append=f[:, :2]))


@pytest.mark.parametrize(
    "fn",
    [
        lambda a: tnp.var(a, axis=0),
        lambda a: tnp.std(a, ddof=1),
        lambda a: tnp.average(a, axis=1, weights=np.array([1.0, 2.0, 3.0], np.float32)),
        lambda a: tnp.median(a, axis=0),
        lambda a: tnp.ptp(a),
        lambda a: tnp.trace(a),
        lambda a: tnp.logsumexp(a, axis=1),
        lambda a: tnp.nanmean(a),
        lambda a: tnp.nanstd(a, axis=0),
        lambda a: tnp.nanmax(a, axis=1),
        lambda a: tnp.cumsum(a, axis=1),
        lambda a: tnp.cumprod(a),
        lambda a: tnp.diff(a, prepend=np.float32(0.0)),  # a float64 prepend promotes, as in NumPy
        lambda a: tnp.gradient(a, 0.5, axis=1),
        lambda a: tnp.gradient(a, np.array([0.0, 1.0, 3.0]), axis=1),
    ],
)
def test_float32_in_float32_out(fn: Callable[[Any], Any]) -> None:
    x = RNG.normal(size=(2, 3)).astype(np.float32)
    out = fn(x)
    assert out.dtype == np.float32, out.dtype
    (g,) = T.vjp(fn, x)[1](np.ones(np.shape(out), np.float32))
    assert g.dtype == np.float32, g.dtype
    _, t_out = T.jvp(fn, (x,), (np.ones_like(x),))
    assert t_out.dtype == np.float32, t_out.dtype


# ---- vmap equals stacking over examples ---------------------------------------------------------
BATCHED: dict[str, Callable[[Any], Any]] = {
    "average": lambda a: tnp.average(a, axis=-1, weights=np.arange(1.0, 6.0)),
    "average_traced_weights": lambda a: tnp.average(a[0], axis=0, weights=tnp.exp(a[1])),
    "var": lambda a: tnp.var(a, axis=(0, 1), ddof=1, keepdims=True),
    "std": lambda a: tnp.std(a, axis=1),
    "median": lambda a: tnp.median(a, axis=-1),
    "median_all": lambda a: tnp.median(a),
    "ptp": lambda a: tnp.ptp(a, axis=0),
    "trace": lambda a: tnp.trace(a, 1, 1, 0),
    "logsumexp": lambda a: tnp.logsumexp(a, axis=(0, 2), b=a[0] * a[0]),
    "nansum": lambda a: tnp.nansum(tnp.where(a > 1.0, np.nan, a), axis=1),
    "nanmean": lambda a: tnp.nanmean(tnp.where(a > 1.0, np.nan, a), axis=0),
    "nanvar": lambda a: tnp.nanvar(tnp.where(a > 1.0, np.nan, a), axis=-1),
    "nanmax": lambda a: tnp.nanmax(tnp.where(a > 1.0, np.nan, a), axis=-1),
    "nanprod": lambda a: tnp.nanprod(tnp.where(a > 1.0, np.nan, a)),
    "cumsum": lambda a: tnp.cumsum(a, axis=1),
    "cumsum_flat": lambda a: tnp.cumsum(a),
    "cumprod": lambda a: tnp.cumprod(a, axis=-1),
    "diff": lambda a: tnp.diff(a, 2, axis=0, append=a[:1]),
    "gradient": lambda a: tnp.stack(tnp.gradient(a, 2.0)),
    "gradient_coordinates": lambda a: tnp.gradient(a, np.array([0.0, 0.5, 2.0]), axis=0),
}


@pytest.mark.parametrize("name", sorted(BATCHED))
@pytest.mark.parametrize("in_axis", [0, 1, -1])
def test_vmap_equals_stacking(name: str, in_axis: int) -> None:
    fn = BATCHED[name]
    xs = np.moveaxis(RNG.normal(size=(2, 3, 4, 5)), 0, in_axis)  # two examples of (3, 4, 5)
    with np.errstate(all="ignore"):
        batched = T.vmap(fn, in_axes=in_axis)(xs)
        expected = _stacked(fn, xs, in_axis)
    np.testing.assert_allclose(batched, expected, rtol=1e-12, atol=1e-12)

    def loss(a: Any) -> Any:
        return tnp.sum(fn(a) * fn(a))

    with np.errstate(all="ignore"):
        grads = T.vmap(T.grad(loss), in_axes=in_axis)(xs)
        expected_grads = _stacked(T.grad(loss), xs, in_axis)
    np.testing.assert_allclose(grads, expected_grads, rtol=1e-10, atol=1e-12)
    # forward over vmap: a batched tangent
    ts = np.ones_like(xs)
    with np.errstate(all="ignore"):
        _, t_out = T.jvp(T.vmap(fn, in_axes=in_axis), (xs,), (ts,))
        examples = zip(np.moveaxis(xs, in_axis, 0), np.moveaxis(ts, in_axis, 0), strict=True)
        expected_t = np.stack([T.jvp(fn, (x,), (t,))[1] for x, t in examples])
    np.testing.assert_allclose(t_out, expected_t, rtol=1e-10, atol=1e-12)


def test_raw_numpy_calls_dispatch() -> None:
    x = RNG.normal(size=(3, 4))
    grad = T.grad(lambda a: np.var(a) + np.std(a, axis=0).sum() + np.median(a) + np.ptp(a))(x)
    expected = T.grad(
        lambda a: tnp.var(a) + tnp.sum(tnp.std(a, axis=0)) + tnp.median(a) + tnp.ptp(a)
    )(x)
    np.testing.assert_allclose(grad, expected)
    out = T.vmap(lambda a: np.cumsum(a) * np.argmax(a) + np.isnan(a) + np.count_nonzero(a > 0))(x)
    np.testing.assert_allclose(
        out,
        _stacked(lambda a: np.cumsum(a) * np.argmax(a) + np.isnan(a) + np.count_nonzero(a > 0), x),
    )


# ---- the non-differentiable functions -----------------------------------------------------------
A = np.array([[-1.5, 0.5, 2.0, np.nan], [0.25, -0.75, 1.0, np.inf]])
B = np.array([0.5, 0.5, -1.0, 3.0])
SORTED = np.array([-1.0, 0.0, 0.5, 2.0])

# name -> (function of one traced float array, plain NumPy twin)
NONDIFF_CASES: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "logical_and": (lambda a: tnp.logical_and(a > 0, B), lambda a: np.logical_and(a > 0, B)),
    "logical_or": (lambda a: tnp.logical_or(a, a < 0), lambda a: np.logical_or(a, a < 0)),
    "logical_xor": (
        lambda a: tnp.logical_xor(a > 0, B > 0),
        lambda a: np.logical_xor(a > 0, B > 0),
    ),
    "logical_not": (lambda a: tnp.logical_not(a > 0), lambda a: np.logical_not(a > 0)),
    "bitwise_and": (lambda a: tnp.bitwise_and(a > 0, a < 1), lambda a: (a > 0) & (a < 1)),
    "bitwise_or": (lambda a: tnp.bitwise_or(a > 0, a < -1), lambda a: (a > 0) | (a < -1)),
    "bitwise_xor": (lambda a: tnp.bitwise_xor(a > 0, B > 0), lambda a: (a > 0) ^ (B > 0)),
    "invert": (lambda a: tnp.invert(a > 0), lambda a: ~(a > 0)),
    "bitwise_not": (lambda a: tnp.bitwise_not(a > 0), lambda a: ~(a > 0)),
    "isnan": (tnp.isnan, np.isnan),
    "isinf": (tnp.isinf, np.isinf),
    "isfinite": (tnp.isfinite, np.isfinite),
    "iscomplex": (tnp.iscomplex, np.iscomplex),
    "isreal": (tnp.isreal, np.isreal),
    "isclose": (lambda a: tnp.isclose(a, B, atol=0.6), lambda a: np.isclose(a, B, atol=0.6)),
    "floor_divide": (lambda a: tnp.floor_divide(a, 0.75), lambda a: np.floor_divide(a, 0.75)),
    "argmax": (lambda a: tnp.argmax(a, axis=-1), lambda a: np.argmax(a, axis=-1)),
    "argmin": (
        lambda a: tnp.argmin(a, axis=0, keepdims=True),
        lambda a: np.argmin(a, 0, keepdims=True),
    ),
    "argsort": (tnp.argsort, np.argsort),
    "argwhere": (lambda a: tnp.argwhere(a > 0), lambda a: np.argwhere(a > 0)),
    "nonzero": (lambda a: tnp.nonzero(a > 0), lambda a: np.nonzero(a > 0)),
    "flatnonzero": (lambda a: tnp.flatnonzero(a > 0), lambda a: np.flatnonzero(a > 0)),
    "searchsorted": (
        lambda a: tnp.searchsorted(SORTED, a, side="right"),
        lambda a: np.searchsorted(SORTED, a, side="right"),
    ),
    "count_nonzero": (
        lambda a: tnp.count_nonzero(a > 0, axis=-1),
        lambda a: np.count_nonzero(a > 0, axis=-1),
    ),
    "all": (lambda a: tnp.all(a > -2, axis=0), lambda a: np.all(a > -2, axis=0)),
    "any": (lambda a: tnp.any(a > 1.5, keepdims=True), lambda a: np.any(a > 1.5, keepdims=True)),
    "allclose": (
        lambda a: tnp.allclose(a, a, equal_nan=True),
        lambda a: np.allclose(a, a, equal_nan=True),
    ),
    "array_equal": (lambda a: tnp.array_equal(a, a), lambda a: np.array_equal(a, a)),
    "iscomplexobj": (tnp.iscomplexobj, np.iscomplexobj),
    "isrealobj": (tnp.isrealobj, np.isrealobj),
    "shape": (tnp.shape, np.shape),
    "ndim": (tnp.ndim, np.ndim),
    "size": (lambda a: tnp.size(a, -1), lambda a: np.size(a, -1)),
}
UNBATCHABLE = {"argwhere", "nonzero", "flatnonzero", "allclose", "array_equal"}


def _assert_same(actual: Any, expected: Any) -> None:
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected)
        for a, e in zip(actual, expected, strict=True):
            _assert_same(a, e)
        return
    assert not isinstance(actual, Tracer), actual
    assert type(actual) is type(expected) or isinstance(expected, (np.ndarray, np.generic))
    np.testing.assert_array_equal(actual, expected)
    assert np.asarray(actual).dtype == np.asarray(expected).dtype


def test_every_registered_nondifferentiable_function_is_checked() -> None:
    import op_specs  # noqa: F401  (joins the family tables, then the family is importable)
    from specs_reductions import NONDIFFERENTIABLE

    assert set(NONDIFFERENTIABLE) == set(NONDIFF_CASES)


@pytest.mark.parametrize("name", sorted(NONDIFF_CASES))
def test_nondifferentiable_gives_plain_values_under_jvp_and_vjp(name: str) -> None:
    fn, twin = NONDIFF_CASES[name]
    with np.errstate(invalid="ignore"):
        expected = twin(A)
        _assert_same(fn(A), expected)
        seen: list[Any] = []

        def probe(a: Any) -> Any:
            seen.append(fn(a))
            return tnp.sum(a)

        T.jvp(probe, (A,), (np.ones_like(A),))
        T.vjp(probe, A)[1](np.ones(()))
        T.grad(lambda a: tnp.sum(T.grad(probe)(a) * a))(A)  # inside a nested transform
    assert len(seen) == 3
    for value in seen:
        _assert_same(value, expected)


@pytest.mark.parametrize("name", sorted(set(NONDIFF_CASES) - UNBATCHABLE))
def test_nondifferentiable_batches(name: str) -> None:
    fn, twin = NONDIFF_CASES[name]
    xs = np.stack([A, A[::-1], -A])
    with np.errstate(invalid="ignore"):
        out = T.vmap(fn)(xs)
        expected = [twin(x) for x in xs]
    if name in ("shape", "ndim", "size", "iscomplexobj", "isrealobj"):
        _assert_same(fn(xs[0]), expected[0])  # per-example values, the same for every example
        return
    np.testing.assert_array_equal(out, np.stack(expected))
    # on the other axis, and nested
    with np.errstate(invalid="ignore"):
        out_1 = T.vmap(fn, in_axes=1)(np.moveaxis(xs, 0, 1))
        nested = T.vmap(T.vmap(fn))(np.stack([xs, xs[::-1]]))
    np.testing.assert_array_equal(out_1, np.stack(expected))
    np.testing.assert_array_equal(nested, np.stack([np.stack(expected), np.stack(expected[::-1])]))


@pytest.mark.parametrize("name", sorted(UNBATCHABLE))
def test_vmap_refuses_what_cannot_be_batched(name: str) -> None:
    fn, _ = NONDIFF_CASES[name]
    with pytest.raises(TypeError, match="vmap"):
        T.vmap(fn)(np.stack([A, -A]))


def test_argmax_argsort_batch_along_every_axis() -> None:
    xs = RNG.normal(size=(3, 4, 5))
    for axis in (None, 0, 1, -1):
        for keepdims in (False, True):
            f = lambda a, axis=axis, keepdims=keepdims: tnp.argmax(a, axis, keepdims=keepdims)
            np.testing.assert_array_equal(T.vmap(f, in_axes=2)(xs), _stacked(f, xs, 2))
        g = lambda a, axis=axis: tnp.argsort(a, axis)
        np.testing.assert_array_equal(T.vmap(g, in_axes=1)(xs), _stacked(g, xs, 1))


def test_searchsorted_batched_sorted_arrays() -> None:
    a = np.sort(RNG.normal(size=(6, 7)), axis=1)
    a[0, 2:4] = a[0, 1]  # repeated values: side matters
    v = np.concatenate([RNG.normal(size=(6, 4)), a[:, 1:2]], axis=1)
    for side in ("left", "right"):
        f = lambda s, q, side=side: tnp.searchsorted(s, q, side=side)
        expected = np.stack([np.searchsorted(s, q, side=side) for s, q in zip(a, v, strict=True)])
        np.testing.assert_array_equal(T.vmap(f)(a, v), expected)
        one_v = np.stack([np.searchsorted(s, v[0], side=side) for s in a])
        np.testing.assert_array_equal(T.vmap(f, in_axes=(0, None))(a, v[0]), one_v)
        sorter = np.argsort(-a, axis=1)[:, ::-1]  # a valid sorter of each row
        g = lambda s, q, o, side=side: tnp.searchsorted(s, q, side=side, sorter=o)
        np.testing.assert_array_equal(T.vmap(g)(a, v, sorter), expected)


def test_sum_of_booleans_is_a_plain_count() -> None:
    x = RNG.normal(size=(3, 4))
    _, t = T.jvp(lambda a: tnp.sum(a > 0) * a, (x,), (np.ones_like(x),))
    np.testing.assert_array_equal(t, np.full_like(x, np.sum(x > 0)))
    counts = T.vmap(lambda a: tnp.sum(a > 0))(x)
    np.testing.assert_array_equal(counts, np.sum(x > 0, axis=1))
