"""Op-spec rows of ``transforms.scipy.signal`` (joined into ``OP_SPECS`` by ``op_specs.py``):
``convolve`` and ``correlate`` of n-d arrays of equal dimensionality, every mode and
method, real and complex (built from two real arguments, returned as real and imaginary
parts). ``'valid'`` rows draw shapes of which one is at least the other in every axis."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from op_specs import OpSpec
from specs_linalg import _complex
from strategies import Shape

import transforms.numpy as tnp
import transforms.scipy.signal as tss

Params = dict[str, Any]


@st.composite
def _pair(draw: st.DrawFn, nested: bool = False, copies: int = 1) -> tuple[Shape, ...]:
    """Two shapes of one dimensionality (1 to 3), sides 1 to 4; with ``nested`` the second
    fits in the first, or the first in the second, in every axis."""
    ndim = draw(st.integers(1, 3))
    first = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    if nested:
        second = tuple(draw(st.integers(1, n)) for n in first)
        if draw(st.booleans()):
            first, second = second, first
    else:
        second = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    return (first,) * copies + (second,) * copies


def _params(arg_shapes: tuple[Shape, ...], modes: tuple[str, ...]) -> st.SearchStrategy[Params]:
    return st.fixed_dictionaries(
        {"mode": st.sampled_from(modes), "method": st.sampled_from(["auto", "direct", "fft"])}
    )


def _modes(*modes: str) -> Any:
    return lambda arg_shapes: _params(arg_shapes, modes)


def _complex_op(fn: Any) -> Any:
    def f(x: Any, y: Any, u: Any, v: Any, **params: Any) -> Any:
        out = fn(_complex(x, y), _complex(u, v), **params)
        return tnp.stack([tnp.real(out), tnp.imag(out)])

    return f


SPECS: tuple[OpSpec, ...] = tuple(
    OpSpec(
        f"scipy.signal.{name}{suffix}",
        f,
        shapes_,
        params,
        covers=(f"scipy.signal.{name}",),
    )
    for name, fn in (("convolve", tss.convolve), ("correlate", tss.correlate))
    for suffix, f, shapes_, params in (
        ("", fn, _pair(), _modes("full", "same")),
        (":valid", fn, _pair(nested=True), _modes("valid", "full", "same")),
        (
            ":complex",
            _complex_op(fn),
            _pair(nested=True, copies=2),
            _modes("full", "same", "valid"),
        ),
    )
)

NONDIFFERENTIABLE: dict[str, int] = {}
