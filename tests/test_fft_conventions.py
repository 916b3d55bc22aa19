"""``tnp.fft`` by value: NumPy's results, JAX's complex convention, permutations, batching.

The op-spec table sees the transforms only through real-valued rows; here complex inputs
and outputs are checked directly:

- values (every ``norm``, ``n``/``s`` cropping and padding, axes) against ``numpy.fft``;
- the JVP is the transform of the tangent (every transform is linear);
- JVP/VJP duality under the *bilinear* pairing ``Re(sum(a * b))``, with complex tangents
  and cotangents, and the VJP of ``fft`` being ``fft`` (the DFT matrix is symmetric), not
  ``n * ifft`` (the Hermitian adjoint);
- a real input gets a real cotangent; float32 stays float32 (complex64);
- ``fftshift``/``ifftshift`` derivatives are the permutation matrices;
- ``vmap`` of each transform equals the stack of the transforms of the rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import transforms as T
import transforms.numpy as tnp

NORMS = [None, "backward", "ortho", "forward"]
RTOL = 1e-10


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _complex(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _pairing(a: Any, b: Any) -> float:
    """JAX's bilinear pairing ``Re(sum(a * b))`` (no conjugation)."""
    return float(np.real(np.sum(np.asarray(a) * np.asarray(b))))


# name, function, kind of input ("complex" or "real"), input shape, keyword arguments
Case = tuple[str, Callable[..., Any], str, tuple[int, ...], dict[str, Any]]


def _cases() -> list[Case]:
    cases: list[Case] = []
    for norm in NORMS:
        cases += [
            ("fft", tnp.fft.fft, "complex", (5,), {"norm": norm}),
            ("fft", tnp.fft.fft, "complex", (3, 4), {"n": 6, "axis": 0, "norm": norm}),
            ("fft", tnp.fft.fft, "complex", (3, 6), {"n": 4, "norm": norm}),
            ("ifft", tnp.fft.ifft, "complex", (4,), {"norm": norm}),
            ("ifft", tnp.fft.ifft, "complex", (2, 5), {"n": 7, "axis": -1, "norm": norm}),
            ("fft2", tnp.fft.fft2, "complex", (2, 3, 4), {"norm": norm}),
            ("fft2", tnp.fft.fft2, "complex", (3, 4), {"s": (2, 6), "norm": norm}),
            ("ifft2", tnp.fft.ifft2, "complex", (3, 4), {"s": (5, 3), "norm": norm}),
            ("fftn", tnp.fft.fftn, "complex", (2, 3, 4), {"norm": norm}),
            ("fftn", tnp.fft.fftn, "complex", (2, 3, 4), {"s": (4, 2), "axes": (2, 0)}),
            ("fftn", tnp.fft.fftn, "complex", (3, 4), {"axes": (1, 1), "norm": norm}),
            ("ifftn", tnp.fft.ifftn, "complex", (2, 3, 4), {"axes": (-1, 0), "norm": norm}),
            ("fft_of_real", tnp.fft.fft, "real", (6,), {"norm": norm}),
            ("fftn_of_real", tnp.fft.fftn, "real", (3, 4), {"s": (4, 3), "axes": (0, 1)}),
            ("rfft", tnp.fft.rfft, "real", (6,), {"norm": norm}),
            ("rfft", tnp.fft.rfft, "real", (5,), {"norm": norm}),
            ("rfft", tnp.fft.rfft, "real", (4, 3), {"n": 7, "axis": 0, "norm": norm}),
            ("rfft", tnp.fft.rfft, "real", (2, 7), {"n": 4, "norm": norm}),
            ("rfft2", tnp.fft.rfft2, "real", (3, 4), {"norm": norm}),
            ("rfftn", tnp.fft.rfftn, "real", (2, 3, 5), {"norm": norm}),
            ("rfftn", tnp.fft.rfftn, "real", (2, 3, 5), {"s": (4, 4), "axes": (2, 0)}),
            ("rfftn", tnp.fft.rfftn, "real", (3, 4), {"axes": (1, 0, 1), "norm": norm}),
            ("irfft", tnp.fft.irfft, "complex", (4,), {"norm": norm}),
            ("irfft", tnp.fft.irfft, "complex", (4,), {"n": 7, "norm": norm}),
            ("irfft", tnp.fft.irfft, "complex", (5, 2), {"n": 4, "axis": 0, "norm": norm}),
            ("irfft", tnp.fft.irfft, "complex", (3,), {"n": 9, "norm": norm}),
            ("irfft", tnp.fft.irfft, "complex", (3,), {"n": 1, "norm": norm}),
            ("irfft_of_real", tnp.fft.irfft, "real", (4,), {"n": 5, "norm": norm}),
            ("irfft2", tnp.fft.irfft2, "complex", (3, 4), {"norm": norm}),
            ("irfftn", tnp.fft.irfftn, "complex", (2, 3, 4), {"norm": norm}),
            ("irfftn", tnp.fft.irfftn, "complex", (2, 3, 4), {"s": (3, 5), "axes": (0, 2)}),
            ("irfftn", tnp.fft.irfftn, "complex", (3, 4), {"axes": (0, 1, 0), "norm": norm}),
        ]
    cases += [
        ("fftshift", tnp.fft.fftshift, "complex", (5, 4), {}),
        ("fftshift", tnp.fft.fftshift, "real", (5, 4), {"axes": 0}),
        ("ifftshift", tnp.fft.ifftshift, "complex", (3, 5), {"axes": (-1,)}),
        ("ifftshift", tnp.fft.ifftshift, "real", (7,), {}),
    ]
    return cases


CASES = _cases()
ids = [f"{c[0]}-{c[3]}-{c[4]}" for c in CASES]


def _numpy_twin(fn: Callable[..., Any]) -> Callable[..., Any]:
    twin: Callable[..., Any] = getattr(np.fft, fn.__name__)
    return twin


def _input(rng: np.random.Generator, kind: str, shape: tuple[int, ...]) -> np.ndarray:
    return _complex(rng, shape) if kind == "complex" else rng.standard_normal(shape)


@pytest.mark.parametrize(("name", "fn", "kind", "shape", "kw"), CASES, ids=ids)
def test_value_and_jvp_are_numpys_transform(
    name: str, fn: Callable[..., Any], kind: str, shape: tuple[int, ...], kw: dict[str, Any]
) -> None:
    rng = _rng(1)
    x, t = _input(rng, kind, shape), _input(rng, kind, shape)
    twin = _numpy_twin(fn)

    np.testing.assert_allclose(fn(x, **kw), twin(x, **kw), rtol=RTOL, atol=1e-12)
    out, t_out = T.jvp(lambda a: fn(a, **kw), (x,), (t,))
    np.testing.assert_allclose(out, twin(x, **kw), rtol=RTOL, atol=1e-12)
    np.testing.assert_allclose(t_out, twin(t, **kw), rtol=RTOL, atol=1e-12)  # linear


@pytest.mark.parametrize(("name", "fn", "kind", "shape", "kw"), CASES, ids=ids)
def test_vjp_is_the_bilinear_transpose(
    name: str, fn: Callable[..., Any], kind: str, shape: tuple[int, ...], kw: dict[str, Any]
) -> None:
    rng = _rng(2)
    x, t = _input(rng, kind, shape), _input(rng, kind, shape)
    out, pullback = T.vjp(lambda a: fn(a, **kw), x)
    out = np.asarray(out)
    ct = _complex(rng, out.shape) if np.iscomplexobj(out) else rng.standard_normal(out.shape)
    (ct_x,) = pullback(ct)
    _, t_out = T.jvp(lambda a: fn(a, **kw), (x,), (t,))

    assert np.asarray(ct_x).dtype == x.dtype, "a real input gets a real cotangent"
    lhs, rhs = _pairing(ct, t_out), _pairing(ct_x, t)
    assert abs(lhs - rhs) <= RTOL * max(1.0, abs(lhs)), (lhs, rhs)
    # and against the Jacobian assembled by forward mode (columns from real and imaginary
    # unit tangents), the pairing written out
    basis = np.eye(x.size).reshape((x.size, *shape))
    cols = [T.jvp(lambda a: fn(a, **kw), (x,), (e.astype(x.dtype),))[1] for e in basis]
    expected = np.array([_pairing(ct, c) for c in cols])
    np.testing.assert_allclose(np.real(ct_x).ravel(), expected, rtol=1e-9, atol=1e-9)
    if kind == "complex":
        cols_i = [T.jvp(lambda a: fn(a, **kw), (x,), (1j * e,))[1] for e in basis]
        expected_i = np.array([_pairing(ct, c) for c in cols_i])
        # Re(ct_x * 1j e) = -Im(ct_x)
        np.testing.assert_allclose(-np.imag(ct_x).ravel(), expected_i, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("norm", NORMS)
def test_vjp_of_fft_is_fft_not_the_adjoint(norm: str | None) -> None:
    rng = _rng(3)
    z, ct = _complex(rng, (6,)), _complex(rng, (6,))
    (ct_z,) = T.vjp(lambda a: tnp.fft.fft(a, norm=norm), z)[1](ct)
    np.testing.assert_allclose(ct_z, np.fft.fft(ct, norm=norm), rtol=RTOL)
    (ct_z,) = T.vjp(lambda a: tnp.fft.ifft(a, norm=norm), z)[1](ct)
    np.testing.assert_allclose(ct_z, np.fft.ifft(ct, norm=norm), rtol=RTOL)
    # n > len: padding transposes to cropping; n < len: cropping transposes to zero-padding
    (ct_z,) = T.vjp(lambda a: tnp.fft.fft(a, n=9, norm=norm), z)[1](_complex(rng, (9,)))
    assert ct_z.shape == (6,)
    ct9 = _complex(rng, (9,))
    (ct_z,) = T.vjp(lambda a: tnp.fft.fft(a, n=9, norm=norm), z)[1](ct9)
    np.testing.assert_allclose(ct_z, np.fft.fft(ct9, norm=norm)[:6], rtol=RTOL)
    ct4 = _complex(rng, (4,))
    (ct_z,) = T.vjp(lambda a: tnp.fft.fft(a, n=4, norm=norm), z)[1](ct4)
    np.testing.assert_allclose(ct_z, np.r_[np.fft.fft(ct4, norm=norm), 0, 0], rtol=RTOL)


@pytest.mark.parametrize("norm", NORMS)
def test_real_input_gets_the_real_part(norm: str | None) -> None:
    rng = _rng(4)
    x, ct = rng.standard_normal(5), _complex(rng, (5,))
    (ct_x,) = T.vjp(lambda a: tnp.fft.fft(a, norm=norm), x)[1](ct)
    assert ct_x.dtype == np.float64
    np.testing.assert_allclose(ct_x, np.real(np.fft.fft(ct, norm=norm)), rtol=RTOL)
    # rfft: zero-pad the half spectrum, full transform, real part
    ct3 = _complex(rng, (3,))
    (ct_x,) = T.vjp(lambda a: tnp.fft.rfft(a, norm=norm), x)[1](ct3)
    np.testing.assert_allclose(ct_x, np.real(np.fft.fft(np.r_[ct3, 0, 0], norm=norm)), rtol=RTOL)


def test_irfft_ignores_imaginary_parts_of_zero_and_nyquist() -> None:
    """``irfft`` drops Im of the zero (and, n even, Nyquist) frequency: zero derivative."""
    rng = _rng(5)
    z = _complex(rng, (4,))
    for n, dropped in ((6, [0, 3]), (7, [0])):

        def f(a: Any, n: int = n) -> Any:
            return tnp.fft.irfft(a, n=n)

        jac_imag = np.stack([T.jvp(f, (z,), (1j * e,))[1] for e in np.eye(4)])
        for k in range(4):
            assert np.all(jac_imag[k] == 0) == (k in dropped), (n, k)
        (ct_z,) = T.vjp(f, z)[1](rng.standard_normal(n))
        assert np.all(np.imag(ct_z)[dropped] == 0)  # exactly: conj(rfft(ct)) there is real


@pytest.mark.parametrize("norm", NORMS)
def test_parseval_hessian(norm: str | None) -> None:
    """``sum |fft(x)|^2 = n sum x^2`` (backward norm): its Hessian is ``2 n I``, in every
    pairing of modes."""
    scale = {None: 6.0, "backward": 6.0, "ortho": 1.0, "forward": 1.0 / 6.0}[norm]

    def energy(x: Any) -> Any:
        y = tnp.fft.fft(x, norm=norm)
        return tnp.sum(tnp.real(y) ** 2 + tnp.imag(y) ** 2)

    def energy_r(x: Any) -> Any:  # the same through the half spectrum of rfft
        y = tnp.fft.rfft(x, norm=norm)
        w = np.array([1.0, 2.0, 2.0, 1.0])
        return tnp.sum(w * (tnp.real(y) ** 2 + tnp.imag(y) ** 2))

    x = _rng(6).standard_normal(6)
    for f in (energy, energy_r):
        np.testing.assert_allclose(T.hessian(f)(x), 2 * scale * np.eye(6), atol=1e-12)
        np.testing.assert_allclose(T.jacrev(T.jacrev(f))(x), 2 * scale * np.eye(6), atol=1e-12)
        np.testing.assert_allclose(T.jacfwd(T.jacfwd(f))(x), 2 * scale * np.eye(6), atol=1e-12)
        np.testing.assert_allclose(T.grad(f)(x), 2 * scale * x, rtol=1e-12)


@pytest.mark.parametrize("shift", [tnp.fft.fftshift, tnp.fft.ifftshift])
@pytest.mark.parametrize("axes", [None, 0, (1,), (0, 1), (-1, 0)])
def test_shift_derivatives_are_permutations(shift: Callable[..., Any], axes: Any) -> None:
    shape = (5, 4)
    x = np.arange(20.0).reshape(shape)
    twin = _numpy_twin(shift)
    inverse = np.fft.ifftshift if twin is np.fft.fftshift else np.fft.fftshift
    perm = twin(np.arange(20).reshape(shape), axes=axes).ravel()  # out[i] = x[perm[i]]
    expected = np.eye(20)[perm].reshape(shape + shape)
    np.testing.assert_array_equal(T.jacfwd(lambda a: shift(a, axes=axes))(x), expected)
    np.testing.assert_array_equal(T.jacrev(lambda a: shift(a, axes=axes))(x), expected)
    ct = _rng(7).standard_normal(shape)
    (ct_x,) = T.vjp(lambda a: shift(a, axes=axes), x)[1](ct)
    np.testing.assert_array_equal(ct_x, inverse(ct, axes=axes))


def test_float32_stays_single_precision() -> None:
    x = _rng(8).standard_normal(8).astype(np.float32)
    for fn in (tnp.fft.fft, tnp.fft.rfft, tnp.fft.fftshift):
        out, pullback = T.vjp(fn, x)
        assert out.dtype == (np.float32 if fn is tnp.fft.fftshift else np.complex64)
        (ct,) = pullback(np.ones(out.shape, out.dtype))
        assert ct.dtype == np.float32
    z = np.fft.rfft(x)
    out, pullback = T.vjp(tnp.fft.irfft, z)
    assert out.dtype == np.float32
    assert pullback(np.ones(out.shape, np.float32))[0].dtype == np.complex64
    g = T.grad(lambda a: tnp.sum(tnp.real(tnp.fft.fft(a)) ** 2))(x)
    assert g.dtype == np.float32


# name, function, kind, per-example shape, keyword arguments (a selection of CASES)
VMAP_CASES = [c for c in CASES if c[4].get("norm") in (None, "ortho")]


@pytest.mark.parametrize(("name", "fn", "kind", "shape", "kw"), VMAP_CASES)
@pytest.mark.parametrize("in_axis", [0, -1, 1])
def test_vmap_stacks_the_rows(
    name: str,
    fn: Callable[..., Any],
    kind: str,
    shape: tuple[int, ...],
    kw: dict[str, Any],
    in_axis: int,
) -> None:
    rng = _rng(9)
    examples = np.stack([_input(rng, kind, shape) for _ in range(3)])
    batched = np.moveaxis(examples, 0, in_axis)
    out = T.vmap(lambda a: fn(a, **kw), in_axes=in_axis)(batched)
    expected = np.stack([np.asarray(fn(e, **kw)) for e in examples])
    np.testing.assert_allclose(out, expected, rtol=RTOL, atol=1e-12)
    # and vmap of the pullback (what jacrev does), against the pullbacks one by one
    out0, pullback = T.vjp(lambda a: fn(a, **kw), examples[0])
    ct_kind = "complex" if np.iscomplexobj(out0) else "real"
    cts = np.stack([_input(rng, ct_kind, out0.shape) for _ in range(3)])
    batched_ct = T.vmap(lambda c: pullback(c)[0])(cts)
    expected_ct = np.stack([pullback(c)[0] for c in cts])
    np.testing.assert_allclose(batched_ct, expected_ct, rtol=RTOL, atol=1e-12)


def test_numpy_dispatches_to_the_differentiable_fft() -> None:
    x = _rng(10).standard_normal(5)
    g = T.grad(lambda a: tnp.sum(tnp.real(np.fft.fft(a)) * np.arange(5.0)))(x)
    np.testing.assert_allclose(g, np.real(np.fft.fft(np.arange(5.0))), rtol=RTOL)


def test_errors_are_numpys() -> None:
    x = np.ones(4)
    with pytest.raises(ValueError, match="Invalid norm value"):
        tnp.fft.fft(x, norm="bad")
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        tnp.fft.fft(x, n=0)
    with pytest.raises(ValueError, match="Shape and axes have different lengths"):
        tnp.fft.fftn(x, s=(2, 2), axes=(0,))
    with pytest.raises(TypeError, match="out="):
        tnp.fft.fft(x, out=np.empty(4, complex))  # type: ignore[arg-type]
