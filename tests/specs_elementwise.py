"""Op-spec rows of the elementwise family (joined into ``OP_SPECS`` by ``op_specs.py``).

Inputs are real float64; complex functions are exercised on ``z = x + 1j * y`` built from
two real inputs and mapped back to a real output (``real``, ``imag``, ``abs``, ``angle``),
so the finite-difference and duality checks of the real map ``(x, y) -> output`` test the
complex rules under JAX's bilinear convention. Piecewise-constant functions are drawn away
from their jumps (``OFF_GRID``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import hypothesis.extra.numpy as hnp
import numpy as np
from hypothesis import strategies as st
from op_specs import OpSpec
from strategies import (
    DISTINCT,
    NONZERO,
    POSITIVE,
    REAL,
    Domain,
    Shape,
    broadcast_pairs,
    mutually_broadcastable,
    single,
)

import transforms.numpy as tnp
from transforms.core import operators


@dataclass(frozen=True)
class _OffGrid(Domain):
    """``n + [0.1, 0.4]`` for integers ``n``: away from the jumps of floor, ceil, round,
    trunc, rint and fix (integers and half-integers)."""

    def elements(self) -> st.SearchStrategy[float]:
        return st.integers(-3, 3).flatmap(lambda n: st.floats(n + 0.1, n + 0.4))


OFF_GRID = _OffGrid("off_grid", -2.9, 3.4)
OPEN_UNIT = Domain("open_unit", -0.9, 0.9)  # arcsin, arccos, arctanh
ABOVE_ONE = Domain("above_one", 1.1, 3.0)  # arccosh
ABOVE_MINUS_ONE = Domain("above_minus_one", -0.5, 2.0)  # log1p

Params = dict[str, Any]


def _no_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    return st.just({})


def _unary(name: str, fn: Callable[..., Any], domain: Domain = REAL, **kw: Any) -> OpSpec:
    kw.setdefault("covers", (name,))
    return OpSpec(name, fn, kw.pop("shapes", single()), domain=domain, **kw)


def _binary(
    name: str, fn: Callable[..., Any], domain: Domain | tuple[Domain, ...] = REAL, **kw: Any
) -> OpSpec:
    kw.setdefault("covers", (name,))
    return OpSpec(name, fn, broadcast_pairs(), domain=domain, **kw)


def _params(**strategies: st.SearchStrategy[Any]) -> Callable[..., st.SearchStrategy[Params]]:
    return lambda arg_shapes: st.fixed_dictionaries(strategies)


# ---- complex functions on z = x + 1j y -----------------------------------------------------
# x in [0.5, 2] and |y| in [0.5, 2]: away from every branch cut (log, sqrt, arcsin, arccos,
# arccosh, arctanh on the real axis; arctan, arcsinh on the imaginary one) and every pole.
COMPLEX = (POSITIVE, NONZERO)


def _parts(w: Any) -> Any:
    return tnp.real(w) - 0.5 * tnp.imag(w)


def _holomorphic(name: str, fn: Callable[[Any], Any]) -> OpSpec:
    return _binary(
        f"{name}_complex",
        lambda x, y: _parts(fn(x + 1j * y)),
        COMPLEX,
        covers=(name, "real", "imag"),
    )


_HOLOMORPHIC = (
    "sin cos tan exp log tanh sqrt square sinh cosh exp2 expm1 log2 log10 log1p reciprocal "
    "arcsin arccos arctan arcsinh arccosh arctanh sinc"
).split()


# ---- parameters ------------------------------------------------------------------------------
@st.composite
def _nan_to_num_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    """Where ``special`` is not finite, the input is replaced by it (0.0 keeps the input)."""
    values = st.sampled_from([0.0, 0.0, np.inf, -np.inf, np.nan])
    return {
        "special": draw(hnp.arrays(np.float64, arg_shapes[0], elements=values)),
        "nan": draw(st.sampled_from([0.0, 1.5])),
        "posinf": draw(st.sampled_from([9.0, 1e3])),
        "neginf": draw(st.sampled_from([-9.0, -1e3])),
    }


def _nan_to_num_special(x: Any, special: np.ndarray, **kw: Any) -> Any:
    return tnp.nan_to_num(tnp.where(np.isfinite(special), x, special), **kw)


def _clip_bounds(name: str, lo: bool, hi: bool, keywords: bool = False) -> OpSpec:
    """``clip`` with traced bounds (``None`` where absent); all three broadcast together."""

    def fun(a: Any, *bounds: Any) -> Any:
        it = iter(bounds)
        a_min = next(it) if lo else None
        a_max = next(it) if hi else None
        if keywords:
            return tnp.clip(a, min=a_min, max=a_max)
        return tnp.clip(a, a_min, a_max)

    n = 1 + lo + hi
    return OpSpec(name, fun, mutually_broadcastable(n), domain=DISTINCT, covers=("clip",))


def _times(name: str) -> OpSpec:
    """``x * f(x)``: the derivative is ``f(x)`` (f piecewise constant), not a trivial zero."""
    f = getattr(tnp, name)
    return _unary(name, lambda x: x * f(x), OFF_GRID)


def _round_decimals(x: Any, decimals: int) -> Any:
    # x * 10**-decimals lies off the rounding grid of `decimals` decimals when x is OFF_GRID
    return x * tnp.round(x * 10.0**-decimals, decimals)


def _if_operator(name: str, *rows: OpSpec) -> tuple[OpSpec, ...]:
    """Rows of a tracer method, once the lead has wired its operator (``_install.py``)."""
    return rows if name in operators else ()


SPECS: tuple[OpSpec, ...] = (
    # ---- one argument, real -----------------------------------------------------------------
    _unary("sinh", tnp.sinh),
    _unary("cosh", tnp.cosh),
    _unary("arcsin", tnp.arcsin, OPEN_UNIT),
    _unary("arccos", tnp.arccos, OPEN_UNIT),
    _unary("arctan", tnp.arctan),
    _unary("arcsinh", tnp.arcsinh),
    _unary("arccosh", tnp.arccosh, ABOVE_ONE),
    _unary("arctanh", tnp.arctanh, OPEN_UNIT),
    _unary("cbrt", tnp.cbrt, NONZERO),
    _unary("deg2rad", tnp.deg2rad),
    _unary("radians", tnp.radians),
    _unary("rad2deg", tnp.rad2deg),
    _unary("degrees", tnp.degrees),
    _unary("exp2", tnp.exp2),
    _unary("expm1", tnp.expm1),
    _unary("log2", tnp.log2, POSITIVE),
    _unary("log10", tnp.log10, POSITIVE),
    _unary("log1p", tnp.log1p, ABOVE_MINUS_ONE),
    _unary("fabs", tnp.fabs, DISTINCT),
    _unary("reciprocal", tnp.reciprocal, NONZERO),
    _unary("sinc", tnp.sinc),
    _unary("positive", tnp.positive),
    _unary("real_of_real", tnp.real, covers=("real",)),
    _unary("imag_of_real", lambda x: 2.0 * x + tnp.imag(x), covers=("imag",)),
    _unary("conj_of_real", tnp.conj, covers=("conj",)),
    _unary("conjugate_of_real", tnp.conjugate, covers=("conjugate",)),
    _unary(
        "angle_of_real",
        lambda x, deg: x * tnp.angle(x, deg=deg),
        DISTINCT,
        params=_params(deg=st.booleans()),
        covers=("angle",),
    ),
    _unary(
        "nan_to_num",
        tnp.nan_to_num,
        params=_params(nan=st.just(0.0), posinf=st.none(), neginf=st.none()),
    ),
    _unary(
        "nan_to_num_replaced",
        _nan_to_num_special,
        params=_nan_to_num_params,
        covers=("nan_to_num",),
    ),
    # ---- piecewise constant: derivative 0, used as a factor ---------------------------------
    *(_times(name) for name in ("floor", "ceil", "trunc", "rint", "fix", "around")),
    _unary(
        "round",
        _round_decimals,
        OFF_GRID,
        params=_params(decimals=st.sampled_from([-1, 0, 1, 2])),
    ),
    # ---- clip: bounds traced, absent, scalar, or given as min/max ---------------------------
    _clip_bounds("clip", lo=True, hi=True),
    _clip_bounds("clip_min_only", lo=True, hi=False),
    _clip_bounds("clip_max_only", lo=False, hi=True),
    _clip_bounds("clip_keywords", lo=True, hi=True, keywords=True),
    # scalar bounds sit in the gaps of DISTINCT's grid (0.25 + 0.05 k + [0, 0.02])
    _unary("clip_scalar_bounds", lambda x: tnp.clip(x, -1.035, 1.535), DISTINCT, covers=("clip",)),
    # ---- two arguments, broadcasting ----------------------------------------------------------
    _binary("float_power", tnp.float_power, (POSITIVE, REAL)),
    _binary("arctan2", tnp.arctan2, (NONZERO, REAL)),
    _binary("hypot", tnp.hypot, (NONZERO, REAL)),
    _binary("logaddexp", tnp.logaddexp),
    _binary("logaddexp2", tnp.logaddexp2),
    _binary("fmax", tnp.fmax, DISTINCT),
    _binary("fmin", tnp.fmin, DISTINCT),
    # x * y / y == x (to rounding), which is OFF_GRID: the quotient stays away from its jumps
    _binary("mod", lambda x, y: tnp.mod(x * y, y), (OFF_GRID, NONZERO)),
    _binary("remainder", lambda x, y: tnp.remainder(x * y, y), (OFF_GRID, NONZERO)),
    _binary("fmod", lambda x, y: tnp.fmod(x * y, y), (OFF_GRID, NONZERO)),
    _binary("copysign", tnp.copysign, (NONZERO, NONZERO)),
    _binary("heaviside", tnp.heaviside, (NONZERO, REAL)),
    _binary("heaviside_at_zero", lambda x, y: tnp.heaviside(0.0 * x, y), covers=("heaviside",)),
    # ---- complex ----------------------------------------------------------------------------
    *(_holomorphic(name, getattr(tnp, name)) for name in _HOLOMORPHIC),
    _binary("abs_complex", lambda x, y: tnp.abs(x + 1j * y), (POSITIVE, REAL), covers=("abs",)),
    _binary(
        "absolute_complex",
        lambda x, y: tnp.absolute(x + 1j * y),
        (NONZERO, NONZERO),
        covers=("absolute",),
    ),
    OpSpec(
        "angle_complex",
        lambda x, y, deg: tnp.angle(x + 1j * y, deg=deg),
        broadcast_pairs(),
        _params(deg=st.booleans()),
        (POSITIVE, REAL),
        covers=("angle",),
    ),
    _binary(
        "conj_complex",
        lambda x, y: _parts(tnp.conj(x + 1j * y) * tnp.exp(x - 2j * y)),
        covers=("conj", "real", "imag"),
    ),
    _binary(
        "conjugate_complex",
        lambda x, y: _parts(tnp.conjugate(x + 1j * y) ** 2),
        covers=("conjugate", "real", "imag"),
    ),
    _binary(
        "nan_to_num_complex",
        lambda x, y: _parts(tnp.nan_to_num(x * (1 - 2j) + y)),
        covers=("nan_to_num", "real", "imag"),
    ),
    _binary(
        "real_if_close_complex",
        lambda x, y: tnp.abs(tnp.real_if_close(x + 1j * y)),
        COMPLEX,
        covers=("real_if_close",),
    ),
    _binary(
        "real_if_close_to_real",
        lambda x, y: tnp.real_if_close(tnp.exp(x) + 0j * y),
        covers=("real_if_close",),
    ),
    _unary("real_if_close_of_real", lambda x: tnp.real_if_close(x) * x, covers=("real_if_close",)),
    # ---- tracer methods and attributes --------------------------------------------------------
    *_if_operator(
        "real",
        _binary("real_attribute", lambda x, y: (x * (1 + 2j) - y).real, covers=("op:real",)),
    ),
    *_if_operator(
        "imag",
        _binary("imag_attribute", lambda x, y: (x * (1 + 2j) - y).imag, covers=("op:imag",)),
    ),
    *_if_operator(
        "conjugate",
        _binary(
            "conj_method",
            lambda x, y: _parts((x + 1j * y).conj() * (y + 1j)),
            covers=("op:conjugate",),
        ),
        _binary(
            "conjugate_method",
            lambda x, y: _parts((x + 1j * y).conjugate() * (x - 1j)),
            covers=("op:conjugate",),
        ),
    ),
    *_if_operator(
        "clip",
        OpSpec(
            "clip_method",
            lambda a, lo, hi: a.clip(lo, hi),
            mutually_broadcastable(3),
            domain=DISTINCT,
            covers=("op:clip",),
        ),
        _unary("clip_method_max", lambda a: a.clip(max=0.535), DISTINCT, covers=("op:clip",)),
    ),
    *_if_operator(
        "round",
        _unary("round_method", lambda x: x * x.round(), OFF_GRID, covers=("op:round",)),
        _unary(
            "round_method_decimals",
            lambda x: x * (x * 0.1).round(1),
            OFF_GRID,
            covers=("op:round",),
        ),
    ),
)
NONDIFFERENTIABLE: dict[str, int] = {}
