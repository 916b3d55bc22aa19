"""``transforms.scipy.signal`` by value: ``convolve``/``correlate`` against ``scipy.signal``
in every mode and method (plain and traced), closed-form derivatives, ``vmap``, errors. The
op-spec rows (``specs_scipy_signal.py``) check the derivatives against finite differences."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.signal as ss

import transforms as T
import transforms.numpy as tnp
import transforms.scipy.signal as tss

RNG = np.random.default_rng(3)
SHAPES = [
    ((5,), (3,)),
    ((3,), (5,)),
    ((4, 3), (2, 2)),
    ((2, 2), (4, 3)),
    ((4, 5), (2, 7)),
    ((3, 4, 2), (2, 2, 2)),
    ((1,), (1,)),
    ((6,), (6,)),
]
PAIRS = [(tss.convolve, ss.convolve), (tss.correlate, ss.correlate)]


@pytest.mark.parametrize(("s1", "s2"), SHAPES)
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("method", ["auto", "direct", "fft"])
@pytest.mark.parametrize(("ours", "theirs"), PAIRS, ids=["convolve", "correlate"])
def test_values_match_scipy(
    s1: Any, s2: Any, mode: Any, method: Any, ours: Any, theirs: Any
) -> None:
    a, b = RNG.standard_normal(s1), RNG.standard_normal(s2)
    try:
        expected = theirs(a, b, mode, method)
    except ValueError:  # 'valid' of shapes that do not nest: refused as SciPy does
        with pytest.raises(ValueError, match="one must be at least as large"):
            ours(a, b, mode, method)
        return
    traced = T.jvp(lambda x, y: ours(x, y, mode, method), (a, b), (a, b))[0]
    for out in (ours(a, b, mode, method), traced):
        assert out.shape == expected.shape
        np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-12)


def test_complex_and_float32_match_scipy() -> None:
    a = RNG.standard_normal(5) + 1j * RNG.standard_normal(5)
    b = RNG.standard_normal(3) - 2j
    for ours, theirs in PAIRS:
        np.testing.assert_allclose(ours(a, b), theirs(a, b), rtol=1e-12)
        x, y = a.real.astype(np.float32), b.real.astype(np.float32)
        assert ours(x, y).dtype == theirs(x, y).dtype == np.float32


def test_derivatives_closed_forms() -> None:
    """convolve is bilinear: d/da <w, a * b> = correlate(w, b, 'valid'); the Jacobian in a of
    a full 1-d convolution is the Toeplitz matrix of b."""
    a, b = RNG.standard_normal(6), RNG.standard_normal(3)
    w = RNG.standard_normal(8)
    g = T.grad(lambda x: tnp.sum(w * tss.convolve(x, b)))(a)
    np.testing.assert_allclose(g, ss.correlate(w, b, "valid"), rtol=1e-12)
    jac = T.jacfwd(lambda x: tss.convolve(x, b))(a)
    toeplitz = np.array([[b[i - j] if 0 <= i - j < 3 else 0.0 for j in range(6)] for i in range(8)])
    np.testing.assert_allclose(jac, toeplitz, atol=1e-14)
    # correlate(a, y, 'valid')[k] = sum_j a[k + j] y[j]: its Jacobian in y has rows a[k:k+3]
    windows = np.stack([a[k : k + 3] for k in range(4)])
    np.testing.assert_allclose(T.jacrev(lambda y: tss.correlate(a, y, "valid"))(b), windows)
    hess = T.hessian(lambda x: tnp.sum(tss.convolve(x, x, "same") ** 2))(a)
    np.testing.assert_allclose(hess, hess.T, atol=1e-10)


def test_vmap_matches_a_loop() -> None:
    xs, b = RNG.standard_normal((4, 5)), RNG.standard_normal(3)
    np.testing.assert_allclose(
        T.vmap(tss.convolve, (0, None))(xs, b),
        np.stack([ss.convolve(x, b) for x in xs]),
        atol=1e-12,
    )
    np.testing.assert_allclose(
        T.vmap(tss.correlate, (None, 0))(b, xs),
        np.stack([ss.correlate(b, x) for x in xs]),
        atol=1e-12,
    )
    ys = xs[:, :3]
    np.testing.assert_allclose(
        T.vmap(lambda x, y: tss.convolve(x, y, "same"))(xs, ys),
        np.stack([ss.convolve(x, y, "same") for x, y in zip(xs, ys, strict=True)]),
        atol=1e-12,
    )
    grads = T.vmap(T.grad(lambda x: tnp.sum(tss.convolve(x, b, "valid") ** 2)))(xs)
    for x, g in zip(xs, grads, strict=True):
        valid = ss.convolve(x, b, "valid")
        np.testing.assert_allclose(g, 2 * ss.correlate(valid, b, "full"), atol=1e-12)


def test_errors_name_the_function() -> None:
    with pytest.raises(ValueError, match="convolve: in1 and in2 should have the same dim"):
        tss.convolve(np.ones(3), np.ones((2, 2)))
    with pytest.raises(ValueError, match="correlate: acceptable mode flags"):
        tss.correlate(np.ones(3), np.ones(2), mode="wrap")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="acceptable method flags"):
        tss.convolve(np.ones(3), np.ones(2), method="slow")  # type: ignore[arg-type]
