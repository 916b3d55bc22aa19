"""Op-spec rows of the fft family (joined into ``OP_SPECS`` by ``op_specs.py``).

The table draws real float64 arguments and compares real outputs, so a transform with a
complex result is seen through ``_parts`` (its real and imaginary parts, stacked), and a
transform of a complex input takes it built from two real arguments, ``x + 1j * y``.
Transformed axes of size 0 get an explicit ``n``/``s`` (NumPy needs at least one point);
``n``/``s`` crop as well as zero-pad.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from op_specs import OpSpec
from strategies import Shape, same_shapes, shapes, single

import transforms.numpy as tnp

Params = dict[str, Any]
NORMS = st.sampled_from([None, "backward", "ortho", "forward"])
SIZES = st.integers(1, 5)


def _parts(y: Any) -> Any:
    """A complex result as a real array: its real and imaginary parts, stacked."""
    return tnp.stack([tnp.real(y), tnp.imag(y)])


def _complex(x: Any, y: Any) -> Any:
    return x + 1j * y


# ---- parameter strategies ------------------------------------------------------------------
def _size_for(draw: st.DrawFn, side: int, inverse_real: bool = False) -> int | None:
    """``n`` for an axis of ``side`` points: ``None`` (NumPy's default) where that is valid."""
    default_ok = side >= 2 if inverse_real else side >= 1
    return draw(st.none() | SIZES) if default_ok else draw(SIZES)


def _one_axis(inverse_real: bool = False) -> Any:
    @st.composite
    def params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
        shape = arg_shapes[0]
        axis = draw(st.integers(-len(shape), len(shape) - 1))
        n = _size_for(draw, shape[axis], inverse_real)
        out: Params = {"norm": draw(NORMS)}
        if n is not None or draw(st.booleans()):
            out["n"] = n
        if axis != -1 or draw(st.booleans()):
            out["axis"] = axis
        return out

    return params


def _many_axes(min_axes: int, max_axes: int, inverse_real: bool = False) -> Any:
    """``axes`` (distinct, in any order, some negative) and ``s`` (or NumPy's defaults)."""

    @st.composite
    def params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
        shape = arg_shapes[0]
        ndim = len(shape)
        k = draw(st.integers(min_axes, min(max_axes, ndim)))
        axes = draw(st.permutations(range(ndim)))[:k]
        axes = [a - ndim if draw(st.booleans()) else a for a in axes]
        sizes = [_size_for(draw, shape[a], inverse_real and i == k - 1) for i, a in enumerate(axes)]
        out: Params = {"axes": tuple(axes), "norm": draw(NORMS)}
        if any(n is None for n in sizes) and not all(n is None for n in sizes):
            sizes = [shape[a] if n is None else n for n, a in zip(sizes, axes, strict=True)]
            if inverse_real and sizes[-1] == shape[axes[-1]] and draw(st.booleans()):
                sizes[-1] = -1  # NumPy 2: the input's length, also for the real output
        if not all(n is None for n in sizes):
            out["s"] = tuple(sizes)
        return out

    return params


def _all_axes(inverse_real: bool = False) -> Any:
    """No ``axes``: every axis, each at least 1 point (2 for the last of an inverse real)."""

    @st.composite
    def draw_shapes(draw: st.DrawFn) -> tuple[Shape, ...]:
        shape = list(draw(shapes(min_dims=1, min_side=1)))
        if inverse_real:
            shape[-1] = max(shape[-1], 2)
        return (tuple(shape),)

    return draw_shapes()


def _norm_only(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    return st.fixed_dictionaries({"norm": NORMS})


@st.composite
def _shift_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    ndim = len(arg_shapes[0])
    kind = draw(st.sampled_from(["none", "int", "tuple"] if ndim else ["none", "tuple"]))
    if kind == "none":
        return {"axes": None} if draw(st.booleans()) else {}
    if kind == "int":
        return {"axes": draw(st.integers(-ndim, ndim - 1))}
    axes = draw(st.lists(st.integers(-ndim, ndim - 1), max_size=ndim)) if ndim else []
    return {"axes": tuple(axes)}


def _complex_pair(min_dims: int = 1) -> st.SearchStrategy[tuple[Shape, ...]]:
    return same_shapes(2, 2, min_dims=min_dims)


# ---- the rows ------------------------------------------------------------------------------
def _c2c(name: str, fn: Any, params: Any, min_dims: int, complex_input: bool) -> OpSpec:
    covers = (f"fft.{name}", "real", "imag")
    if complex_input:
        return OpSpec(
            f"{name}_of_complex",
            lambda x, y, **kw: _parts(fn(_complex(x, y), **kw)),
            _complex_pair(min_dims),
            params,
            covers=covers,
        )
    return OpSpec(
        name, lambda x, **kw: _parts(fn(x, **kw)), single(min_dims=min_dims), params, covers=covers
    )


def _pair_from(strategy: st.SearchStrategy[tuple[Shape, ...]]) -> Any:
    return strategy.map(lambda s: (s[0], s[0]))


SPECS: tuple[OpSpec, ...] = (
    # complex to complex, of real and of complex inputs
    *(
        _c2c(name, fn, _one_axis(), 1, cplx)
        for name, fn in (("fft", tnp.fft.fft), ("ifft", tnp.fft.ifft))
        for cplx in (False, True)
    ),
    *(
        _c2c(name, fn, _many_axes(2, 2), 2, cplx)
        for name, fn in (("fft2", tnp.fft.fft2), ("ifft2", tnp.fft.ifft2))
        for cplx in (False, True)
    ),
    *(
        _c2c(name, fn, _many_axes(0, 3), 1, cplx)
        for name, fn in (("fftn", tnp.fft.fftn), ("ifftn", tnp.fft.ifftn))
        for cplx in (False, True)
    ),
    OpSpec(
        "fftn_all_axes",
        lambda x, **kw: _parts(tnp.fft.fftn(x, **kw)),
        _all_axes(),
        _norm_only,
        covers=("fft.fftn",),
    ),
    OpSpec(
        "ifftn_all_axes_of_complex",
        lambda x, y, **kw: _parts(tnp.fft.ifftn(_complex(x, y), **kw)),
        _pair_from(_all_axes()),
        _norm_only,
        covers=("fft.ifftn",),
    ),
    OpSpec(
        "fft2_default_axes",
        lambda x, **kw: _parts(tnp.fft.fft2(x, **kw)),
        single(min_dims=2, min_side=1),
        _norm_only,
        covers=("fft.fft2",),
    ),
    OpSpec(
        "fftn_repeated_axis",
        lambda x, y: _parts(tnp.fft.fftn(_complex(x, y), s=(3, 2, 4), axes=(0, -1, 0))),
        _complex_pair(min_dims=2),
        covers=("fft.fftn",),
    ),
    # real to half-complex
    OpSpec(
        "rfft",
        lambda x, **kw: _parts(tnp.fft.rfft(x, **kw)),
        single(min_dims=1),
        _one_axis(),
        covers=("fft.rfft", "real", "imag"),
    ),
    OpSpec(
        "rfft2",
        lambda x, **kw: _parts(tnp.fft.rfft2(x, **kw)),
        single(min_dims=2),
        _many_axes(2, 2),
        covers=("fft.rfft2",),
    ),
    OpSpec(
        "rfft2_default_axes",
        lambda x, **kw: _parts(tnp.fft.rfft2(x, **kw)),
        single(min_dims=2, min_side=1),
        _norm_only,
        covers=("fft.rfft2",),
    ),
    OpSpec(
        "rfftn",
        lambda x, **kw: _parts(tnp.fft.rfftn(x, **kw)),
        single(min_dims=1),
        _many_axes(1, 3),
        covers=("fft.rfftn",),
    ),
    OpSpec(
        "rfftn_all_axes",
        lambda x, **kw: _parts(tnp.fft.rfftn(x, **kw)),
        _all_axes(),
        _norm_only,
        covers=("fft.rfftn",),
    ),
    OpSpec(
        "rfftn_repeated_axis",
        lambda x: _parts(tnp.fft.rfftn(x, s=(4, 3, 5), axes=(-1, 0, -1), norm="ortho")),
        single(min_dims=2),
        covers=("fft.rfftn",),
    ),
    # half-complex to real: of real inputs (cast by NumPy) and of complex ones
    OpSpec(
        "irfft",
        lambda x, **kw: tnp.fft.irfft(x, **kw),
        single(min_dims=1),
        _one_axis(inverse_real=True),
        covers=("fft.irfft",),
    ),
    OpSpec(
        "irfft_of_complex",
        lambda x, y, **kw: tnp.fft.irfft(_complex(x, y), **kw),
        _complex_pair(),
        _one_axis(inverse_real=True),
        covers=("fft.irfft",),
    ),
    OpSpec(
        "irfft2_of_complex",
        lambda x, y, **kw: tnp.fft.irfft2(_complex(x, y), **kw),
        _complex_pair(min_dims=2),
        _many_axes(2, 2, inverse_real=True),
        covers=("fft.irfft2",),
    ),
    OpSpec(
        "irfft2_default_axes",
        lambda x, y, **kw: tnp.fft.irfft2(_complex(x, y), **kw),
        _pair_from(single(min_dims=2, min_side=2)),
        _norm_only,
        covers=("fft.irfft2",),
    ),
    OpSpec(
        "irfftn",
        lambda x, **kw: tnp.fft.irfftn(x, **kw),
        single(min_dims=1),
        _many_axes(1, 3, inverse_real=True),
        covers=("fft.irfftn",),
    ),
    OpSpec(
        "irfftn_of_complex",
        lambda x, y, **kw: tnp.fft.irfftn(_complex(x, y), **kw),
        _complex_pair(),
        _many_axes(1, 3, inverse_real=True),
        covers=("fft.irfftn",),
    ),
    OpSpec(
        "irfftn_all_axes_of_complex",
        lambda x, y, **kw: tnp.fft.irfftn(_complex(x, y), **kw),
        _pair_from(_all_axes(inverse_real=True)),
        _norm_only,
        covers=("fft.irfftn",),
    ),
    OpSpec(
        "irfftn_repeated_axis",
        lambda x, y: tnp.fft.irfftn(_complex(x, y), s=(2, 3, 5), axes=(0, -1, -1)),
        _complex_pair(min_dims=2),
        covers=("fft.irfftn",),
    ),
    # round trips and the shifts
    OpSpec(
        "irfft_of_rfft",
        lambda x: tnp.fft.irfft(tnp.fft.rfft(x * x), n=7, norm="ortho"),
        single(min_dims=1, min_side=1),
        covers=("fft.rfft", "fft.irfft"),
    ),
    OpSpec(
        "fftshift",
        lambda x, **kw: tnp.fft.fftshift(x, **kw),
        single(),
        _shift_params,
        covers=("fft.fftshift",),
    ),
    OpSpec(
        "ifftshift",
        lambda x, **kw: tnp.fft.ifftshift(x, **kw),
        single(),
        _shift_params,
        covers=("fft.ifftshift",),
    ),
    OpSpec(
        "fftshift_of_fft",
        lambda x: _parts(tnp.fft.ifftshift(tnp.fft.fftshift(tnp.fft.fft(x), axes=-1) * x)),
        single(min_dims=1, min_side=1),
        covers=("fft.fftshift", "fft.ifftshift", "fft.fft"),
    ),
)
NONDIFFERENTIABLE: dict[str, int] = {}
