"""Dask's linear algebra, FFTs and SciPy functions where the op-spec rows of ``test_dask`` do
not reach: the layouts Dask needs (a matrix or a transformed axis in one chunk, tall and
skinny for QR and SVD, many chunks), stacks of matrices (Dask's functions take one), Dask's
traps (its ``numpy.linalg.cholesky`` is the *upper* factor), and SciPy's functions that
take NumPy arrays only. Every result is built with computing forbidden, must be a Dask
array, and equals NumPy's (or, for a gauge, a function invariant under it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from test_dask import _lazily

import transforms as T
import transforms.numpy as tnp
import transforms.scipy.linalg as tsl
import transforms.scipy.special as tss
from transforms.core import ArrayLibraryError

da = pytest.importorskip("dask.array")

L = tnp.linalg
RNG = np.random.default_rng(34)


def _dask(a: np.ndarray, chunks: Any) -> Any:
    return da.from_array(a, chunks=chunks)


def _check(fun: Callable[..., Any], numpy_args: tuple[Any, ...], chunks: Any) -> None:
    """``fun`` of Dask arrays of ``numpy_args`` (in ``chunks``) is lazy and equals NumPy's."""
    expected = fun(*numpy_args)
    got = _lazily(fun, tuple(_dask(a, chunks) for a in numpy_args))
    for g, e in zip(
        got if isinstance(got, tuple) else (got,),
        expected if isinstance(expected, tuple) else (expected,),
        strict=True,
    ):
        assert isinstance(g, da.Array)
        np.testing.assert_allclose(g.compute(scheduler="sync"), e, rtol=1e-10, atol=1e-12)


def _stack(*shape: int) -> np.ndarray:
    n = shape[-1]
    return RNG.normal(size=shape) + 2 * n * np.eye(n)


@pytest.mark.parametrize("chunks", [-1, 2, 1])
def test_cholesky_on_dask_is_numpys_lower_factor_of_the_lower_triangle(chunks: Any) -> None:
    a = _stack(2, 3, 5, 5) @ np.swapaxes(_stack(2, 3, 5, 5), -1, -2)
    skew = a + 5.0 * np.triu(np.ones((5, 5)), 1)  # NumPy reads the lower triangle only
    _check(L.cholesky, (skew,), chunks)
    _check(lambda x: L.cholesky(x, upper=True), (np.swapaxes(skew, -1, -2),), chunks)
    _check(lambda x: tsl.cho_factor(x, lower=True)[0], (skew,), chunks)


@pytest.mark.parametrize("chunks", [-1, 2, (3, 1, 2, 3)])
def test_inverse_and_solve_of_stacks_on_dask(chunks: Any) -> None:
    a, b = _stack(2, 3, 4, 4), RNG.normal(size=(3, 4, 2))
    _check(L.inv, (a,), chunks)
    _check(L.solve, (a, np.broadcast_to(b, (2, 3, 4, 2)).copy()), chunks)
    _check(lambda x: L.solve(x, b), (a,), chunks)  # a NumPy right-hand side, broadcast
    _check(lambda x: L.matrix_power(x, -2), (a,), chunks)


@pytest.mark.parametrize("shape", [(2, 9, 3), (3, 3), (2, 3, 7)])
@pytest.mark.parametrize("chunks", [-1, 2])
def test_qr_and_svd_on_dask_up_to_their_gauge(shape: tuple[int, ...], chunks: Any) -> None:
    a = RNG.normal(size=shape)

    def qr_parts(x: Any) -> Any:
        q, r = L.qr(x)
        return q @ r, q * q, r * r, L.qr(x, mode="r") ** 2

    def svd_parts(x: Any) -> Any:
        u, s, vh = L.svd(x, full_matrices=False)
        return s, (u * tnp.sin(s)[..., None, :]) @ vh, u * u, vh * vh, L.svdvals(x)

    _check(qr_parts, (a,), chunks)
    _check(svd_parts, (a,), chunks)


@pytest.mark.parametrize("shape", [(6, 3), (3, 5), (2, 4, 4)])
def test_pinv_on_dask_by_its_svd(shape: tuple[int, ...]) -> None:
    a = RNG.normal(size=shape)
    for kwargs in ({}, {"rcond": 1e-3}, {"rtol": 0.5}):  # rtol=0.5: the cut drops some
        _check(lambda x, kw=kwargs: L.pinv(x, **kw), (a,), 2)


_SQUARE, _RHS, _TALL = _stack(2, 4, 4), RNG.normal(size=(2, 4, 2)), RNG.normal(size=(2, 6, 3))


@pytest.mark.parametrize(
    ("fun", "args"),
    [
        (lambda x: tnp.sum(L.inv(x) ** 2), (_SQUARE,)),
        (lambda x, y: tnp.sum(L.solve(x, y) ** 2), (_SQUARE, _RHS)),
        (lambda x: tnp.sum(L.cholesky(x @ tnp.swapaxes(x, -1, -2)) ** 2), (_SQUARE,)),
        (lambda x: tnp.sum(L.qr(x)[1] ** 2), (_TALL,)),
        (lambda x: tnp.sum(L.pinv(x) ** 2), (_TALL,)),
    ],
    ids=["inv", "solve", "cholesky", "qr", "pinv"],
)
def test_derivatives_of_stacks_on_dask(fun: Callable[..., Any], args: tuple[Any, ...]) -> None:
    """Reverse and forward mode through Dask's factorisations of a stack, against NumPy."""
    _check(T.grad(fun, argnums=tuple(range(len(args)))), args, 2)
    tangents = tuple(RNG.normal(size=np.shape(a)) for a in args)
    _check(lambda *xs: T.jvp(fun, xs, tangents)[1], args, 2)


def test_svd_hermitian_is_refused_on_dask() -> None:
    with pytest.raises(ArrayLibraryError, match="dask"):
        _lazily(lambda x: L.svd(x, hermitian=True), (_dask(_stack(3, 3), 2),))


@pytest.mark.parametrize("chunks", [1, 2, (1, 3, 2)])
def test_ffts_along_chunked_axes(chunks: Any) -> None:
    x = RNG.normal(size=(4, 6, 5))
    for fun in (
        lambda v: tnp.fft.fft(v, axis=1),
        lambda v: tnp.fft.fftn(v, axes=(0, 2)),
        lambda v: tnp.fft.rfftn(v, axes=(1, 2)),
        lambda v: tnp.fft.irfft(tnp.fft.rfft(v, axis=0), 4, axis=0),
        lambda v: tnp.fft.ifft2(v),
    ):
        _check(fun, (x,), chunks)
        _check(T.grad(lambda v, f=fun: tnp.sum(tnp.abs(f(v)) ** 2)), (x,), chunks)


def test_polygamma_on_dask_in_scipys_formula() -> None:
    x = RNG.uniform(0.5, 4.0, size=(5, 4))
    for n in (0, 1, 3):
        _check(lambda v, n=n: tss.polygamma(n, v), (x,), 2)
    _check(T.grad(lambda v: tnp.sum(tss.digamma(v))), (x,), 2)


@pytest.mark.parametrize("chunks", [-1, 2])
def test_solve_triangular_on_dask_reads_its_triangle(chunks: Any) -> None:
    a, b = _stack(2, 4, 4) + 3.0 * np.triu(np.ones((4, 4)), 1), RNG.normal(size=(2, 4, 3))
    for trans in ("N", "T", "C"):
        for lower in (False, True):
            for unit in (False, True):
                _check(
                    lambda x, y, t=trans, lo=lower, u=unit: tsl.solve_triangular(
                        x, y, trans=t, lower=lo, unit_diagonal=u
                    ),
                    (a, b),
                    chunks,
                )
    _check(lambda x, y: tsl.cho_solve(tsl.cho_factor(x, lower=True), y), (a @ a.mT, b), chunks)


@pytest.mark.parametrize(
    "fun",
    [
        lambda a, b: tsl.expm(a),
        lambda a, b: tsl.lu_factor(a)[0],
    ],
)
def test_scipys_numpy_only_functions_refuse_dask(fun: Callable[..., Any]) -> None:
    a, b = _stack(4, 4), RNG.normal(size=(4, 2))
    with pytest.raises(ArrayLibraryError, match="dask"):
        _lazily(fun, (_dask(a, 2), _dask(b, 2)))
