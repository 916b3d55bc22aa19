"""Jacobians of complex functions (issue 31): each transform agrees with JAX 0.10, which
refuses, with a ``TypeError``, a forward-basis Jacobian (``jacfwd``, ``hessian``) of complex
inputs and a ``jacrev`` of complex outputs unless ``holomorphic=True`` — where transforms
used to drop the imaginary direction silently (``real(z)**2 + 3*imag(z)``: ``[[2]]`` by
``jacfwd``, ``[[2-3j]]`` by ``jacrev``). Live JAX is the reference, for the refusals and
for the values of the allowed cases.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import transforms as T
import transforms.numpy as tnp

Z = np.array([1.0 + 2.0j, -0.5 + 0.3j])
X = np.array([1.0, -0.5])


def _cases(lib: Any) -> dict[str, tuple[Callable[[Any], Any], np.ndarray]]:
    return {
        "non-holomorphic, complex in, real out": (lambda z: lib.real(z) ** 2 + 3 * lib.imag(z), Z),
        "holomorphic, complex in and out": (lambda z: z**2 * lib.sin(z), Z),
        "real in, complex out": (lambda x: x * (1 + 2j) + lib.exp(1j * x), X),
        "real in, real out": (lambda x: lib.sin(x) * x, X),
        "scalar non-holomorphic": (lambda z: lib.sum(lib.abs(z) ** 2), Z),
        "scalar holomorphic": (lambda z: lib.sum(z**3), Z),
    }


def _jacobian(lib: Any, name: str, f: Any, holomorphic: bool) -> Callable[[Any], Any]:
    transform = {"jacfwd": lib.jacfwd, "jacrev": lib.jacrev, "hessian": lib.hessian}[name]
    return transform(f, holomorphic=holomorphic)  # type: ignore[no-any-return]


@pytest.mark.parametrize("holomorphic", [False, True])
@pytest.mark.parametrize("transform", ["jacfwd", "jacrev", "hessian"])
@pytest.mark.parametrize("case", sorted(_cases(np)))
def test_complex_jacobians_agree_with_jax(case: str, transform: str, holomorphic: bool) -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    f, x = _cases(tnp)[case]
    jf, _ = _cases(jnp)[case]
    if transform == "hessian" and "scalar" not in case:
        f, jf = (lambda z, f=f: tnp.sum(f(z))), (lambda z, jf=jf: jnp.sum(jf(z)))
    try:
        expected = np.asarray(_jacobian(jax, transform, jf, holomorphic)(x))
    except TypeError:
        with pytest.raises(TypeError, match=f"{transform}|jacrev"):
            _jacobian(T, transform, f, holomorphic)(x)
        return
    got = np.asarray(_jacobian(T, transform, f, holomorphic)(x))
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-14)


def test_the_refusal_names_the_transform_argument_and_fix() -> None:
    f = lambda a, z: tnp.real(z) ** 2 * a
    with pytest.raises(TypeError, match=r"jacfwd .* argument 1 .*complex128.*holomorphic=True"):
        T.jacfwd(f, argnums=1)(1.0, Z)
    with pytest.raises(TypeError, match=r"hessian .* argument 0 .*holomorphic=True"):
        T.hessian(lambda z: tnp.sum(tnp.abs(z) ** 2))(Z)
    with pytest.raises(TypeError, match=r"jacrev requires a real floating output.*holomorphic"):
        T.jacrev(lambda x: x * 1j)(X)
    with pytest.raises(TypeError, match=r"sparse_jacobian requires a real input"):
        T.sparse_jacobian(lambda z: tnp.real(z) * 2)(Z)
    # the real and imaginary parts as real inputs: what jacfwd and jacrev both give
    parts = lambda xy: tnp.real(xy[:2] + 1j * xy[2:]) ** 2 + 3 * xy[2:]
    xy = np.concatenate([Z.real, Z.imag])
    np.testing.assert_allclose(T.jacfwd(parts)(xy), T.jacrev(parts)(xy))


@pytest.mark.parametrize("holomorphic", [False, True])
@pytest.mark.parametrize("case", sorted(_cases(np)))
def test_jacfwd_and_jacrev_never_disagree(case: str, holomorphic: bool) -> None:
    """Without JAX: where both modes give a Jacobian it is the same one, and where the
    function has no complex derivative at least one refuses (the silent disagreement this
    issue found: ``[[2]]`` against ``[[2-3j]]``)."""
    f, x = _cases(tnp)[case]
    results: dict[str, np.ndarray] = {}
    for name in ("jacfwd", "jacrev"):
        try:
            results[name] = np.asarray(_jacobian(T, name, f, holomorphic)(x))
        except TypeError:
            continue
    if len(results) == 2:
        np.testing.assert_allclose(results["jacfwd"], results["jacrev"], rtol=1e-13, atol=1e-14)
    if "non-holomorphic" in case:
        assert len(results) < 2, "a non-holomorphic function of complex input must be refused"
