"""Op-spec rows of ``transforms.scipy.special`` and ``transforms.scipy.misc`` (joined into
``OP_SPECS`` by ``op_specs.py``); ``covers`` names them ``scipy.special.<name>``.

Inputs stay inside each function's smooth domain, away from poles and branch cuts: positive
arguments for the gamma family, ``Y``, ``K`` and the logarithms; open intervals for the
inverses (``erfinv``, ``ndtri``, ``logit``); ``gamma`` and its relatives also between the
poles at -2 and -1; ``i0e``/``i1e`` away from their kink at 0. Orders (``n``, ``v``) and
shape parameters (``a`` of ``gammainc``, ``df`` of ``stdtr``) are parameters, drawn as
scalars or as arrays that broadcast against ``x``: they are not differentiated (their
derivatives are 0 or refused, which ``test_scipy_special.py`` checks by value).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import hypothesis.extra.numpy as hnp
import numpy as np
from hypothesis import strategies as st
from op_specs import OpSpec
from specs_elementwise import ABOVE_MINUS_ONE, OFF_GRID, OPEN_UNIT
from strategies import (
    NONZERO,
    POSITIVE,
    REAL,
    Domain,
    Shape,
    axes_arg,
    broadcast_pairs,
    mutually_broadcastable,
    shapes,
    single,
)

import transforms.numpy as tnp
import transforms.scipy.misc as tsm
import transforms.scipy.special as tsp

Params = dict[str, Any]
ParamsFor = Callable[[tuple[Shape, ...]], st.SearchStrategy[Params]]

PROBABILITY = Domain("probability", 0.15, 0.85)  # ndtri, logit, betainc's x
ERFC_RANGE = Domain("erfc_range", 0.1, 1.9)  # erfcinv
BETWEEN_POLES = Domain("between_poles", -1.75, -1.25)  # gamma between its poles at -2 and -1
SHAPES = Domain("shapes", 2.0, 4.0)  # multigammaln's a (> (d-1)/2 for d <= 4)
LOWER_TAIL = Domain("lower_tail", -20.0, -5.0)  # log_ndtr far below ndtr's precision
DEGREES = Domain("degrees", -200.0, 200.0)  # sindg, cosdg
TANDG_RANGE = Domain("tandg_range", -60.0, 60.0)
COTDG_RANGE = Domain("cotdg_range", 20.0, 160.0)
NEAR_ZERO = Domain("near_zero", -0.3, 0.3)  # exprel's Taylor branch and its boundary


@dataclass(frozen=True)
class _WithZeros(Domain):
    """``[lo, hi]``, with exact zeros often: ``logsumexp``'s scale factors ``b``."""

    def elements(self) -> st.SearchStrategy[float]:
        return st.one_of(st.just(0.0), super().elements())


SCALES_WITH_ZEROS = _WithZeros("scales_with_zeros", 0.5, 2.0)


def _special(
    name: str,
    fn: Callable[..., Any],
    domain: Domain | tuple[Domain, ...] = REAL,
    shapes_: st.SearchStrategy[tuple[Shape, ...]] | None = None,
    **kw: Any,
) -> OpSpec:
    """A row named ``scipy.special.<name>`` (a suffix after ``:`` names a variant)."""
    kw.setdefault("covers", (f"scipy.special.{name.partition(':')[0]}",))
    if shapes_ is None:
        n = len(domain) if isinstance(domain, tuple) else 1
        shapes_ = single() if n == 1 else mutually_broadcastable(n)
    return OpSpec(f"scipy.special.{name}", fn, shapes_, domain=domain, **kw)


# ---- parameters: orders and shapes that broadcast against x --------------------------------
def _broadcasting(values: st.SearchStrategy[Any], dtype: Any) -> ParamsFor:
    """A parameter ``p`` drawn from ``values``: a scalar, or an array of a shape that
    broadcasts against the (last) argument's."""

    def params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
        shape = arg_shapes[-1]
        kept = st.integers(0, len(shape)).map(lambda k: shape[len(shape) - k :])
        arrays = kept.flatmap(lambda s: hnp.arrays(dtype, s, elements=values))
        return st.fixed_dictionaries({"p": st.one_of(values, arrays)})

    return params


_INTEGER_ORDERS = _broadcasting(st.integers(0, 3), np.int64)
_REAL_ORDERS = _broadcasting(st.sampled_from([-1.5, 0.0, 0.5, 1.0, 2.5]), np.float64)
_K_ORDERS = _broadcasting(st.sampled_from([0.0, 0.5, 1.3, 2.0]), np.float64)
_GAMMA_SHAPES = _broadcasting(st.floats(0.5, 3.0), np.float64)
_DEGREES_OF_FREEDOM = _broadcasting(st.floats(0.5, 30.0), np.float64)


def _fixed(**strategies: st.SearchStrategy[Any]) -> ParamsFor:
    return lambda arg_shapes: st.fixed_dictionaries(strategies)


def _axis_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    return st.fixed_dictionaries({"axis": axes_arg(len(arg_shapes[0]))})


def _logsumexp_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    ndim = max(len(s) for s in arg_shapes)
    return st.fixed_dictionaries({"axis": axes_arg(ndim), "keepdims": st.booleans()})


def _signed_logsumexp_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    """``logsumexp``'s parameters and the sign of ``b`` (every sum negative, or positive)."""
    return _logsumexp_params(arg_shapes).flatmap(
        lambda p: st.sampled_from([-1.0, 1.0]).map(lambda sign: p | {"sign": sign})
    )


@st.composite
def _masked_last_axis(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    """A mask of entries to set to ``-inf`` (never the first along the last axis, so every
    group keeps a finite entry), and ``keepdims``."""
    shape = arg_shapes[0]
    mask = draw(hnp.arrays(np.bool_, shape))
    mask[..., 0] = False
    return {"mask": mask, "keepdims": draw(st.booleans())}


def _nonzero_first(shape: Sequence[int]) -> np.ndarray:
    """1 at the first entry along the last axis, 0 elsewhere: a scale that keeps every group
    of ``b`` non-zero."""
    first = np.zeros(shape)
    first[..., :1] = 1.0
    return first


def _last_axis_pairs() -> st.SearchStrategy[tuple[Shape, ...]]:
    return shapes(min_dims=1, min_side=1).map(lambda s: (s, s))


def _nonempty() -> st.SearchStrategy[tuple[Shape, ...]]:
    """Shapes without a size-0 axis (SciPy's softmax cannot reduce one; logsumexp gives a
    constant -inf, which finite differences cannot check: tested by value)."""
    return single(min_side=1)


def _last_axis_single() -> st.SearchStrategy[tuple[Shape, ...]]:
    return single(min_dims=1, min_side=1)


def _times(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``x * f(x)`` for a piecewise-constant ``f``: the derivative is ``f(x)``, not a trivial 0."""
    return lambda x: x * fn(x)


SPECS: tuple[OpSpec, ...] = (
    # ---- error functions and the normal distribution -----------------------------------------
    _special("erf", tsp.erf),
    _special("erfc", tsp.erfc),
    _special("erfinv", tsp.erfinv, OPEN_UNIT),
    _special("erfcinv", tsp.erfcinv, ERFC_RANGE),
    _special("erfcx", tsp.erfcx),
    _special("erfi", tsp.erfi),
    _special("dawsn", tsp.dawsn),
    _special("ndtr", tsp.ndtr),
    _special("ndtri", tsp.ndtri, PROBABILITY),
    _special("log_ndtr", tsp.log_ndtr),
    # the steps of finite differences must be long there: log_ndtr is large, and its
    # derivative exp(-x**2/2 - log_ndtr(x)) is relatively accurate only to ~1e-14
    _special("log_ndtr:lower_tail", tsp.log_ndtr, LOWER_TAIL, eps=1e-4),
    # ---- logistic and softmax families -------------------------------------------------------
    _special("expit", tsp.expit),
    _special("logit", tsp.logit, PROBABILITY),
    _special("log_expit", tsp.log_expit),
    _special("softplus", tsp.softplus),
    _special("softmax", tsp.softmax, shapes_=_nonempty(), params=_axis_params),
    _special("log_softmax", tsp.log_softmax, shapes_=_nonempty(), params=_axis_params),
    _special(
        "logsumexp",
        lambda a, axis, keepdims: tsp.logsumexp(a, axis, keepdims=keepdims),
        shapes_=_nonempty(),
        params=_logsumexp_params,
    ),
    _special(
        "logsumexp:b",
        lambda a, b, axis, keepdims: tsp.logsumexp(a, axis, b=b, keepdims=keepdims),
        (REAL, POSITIVE),
        broadcast_pairs(min_side=1),
        params=_logsumexp_params,
    ),
    _special(
        "logsumexp:b_with_zeros",
        lambda a, b, keepdims: tsp.logsumexp(
            a, -1, b=b + _nonzero_first(np.shape(b)), keepdims=keepdims
        ),
        (REAL, SCALES_WITH_ZEROS),
        _last_axis_pairs(),
        params=_fixed(keepdims=st.booleans()),
    ),
    _special(
        "logsumexp:return_sign",
        # a negative sum (sign -1) too: log|s| * sign(s) carries both results
        lambda a, b, sign, axis, keepdims: _signed_log(
            *tsp.logsumexp(a, axis, b=sign * b, keepdims=keepdims, return_sign=True)
        ),
        (REAL, POSITIVE),
        broadcast_pairs(min_side=1),
        params=_signed_logsumexp_params,
    ),
    _special(
        "logsumexp:neg_inf_entries",
        lambda a, mask, keepdims: tsp.logsumexp(tnp.where(mask, -np.inf, a), -1, keepdims=keepdims),
        shapes_=_last_axis_single(),
        params=_masked_last_axis,
    ),
    _special(
        "logsumexp:misc",
        lambda a, axis: tsm.logsumexp(a, axis),
        shapes_=_nonempty(),
        params=lambda s: st.fixed_dictionaries({"axis": axes_arg(len(s[0]))}),
        covers=("scipy.misc.logsumexp",),
    ),
    # ---- gamma and beta families -------------------------------------------------------------
    _special("gamma", tsp.gamma, POSITIVE),
    _special("gamma:between_poles", tsp.gamma, BETWEEN_POLES),
    _special("gammaln", tsp.gammaln, POSITIVE),
    _special("gammaln:between_poles", tsp.gammaln, BETWEEN_POLES),
    _special("digamma", tsp.digamma, POSITIVE),
    _special("digamma:between_poles", tsp.digamma, BETWEEN_POLES),
    _special("psi", tsp.psi, POSITIVE),
    _special("rgamma", tsp.rgamma, POSITIVE),
    _special("rgamma:between_poles", tsp.rgamma, BETWEEN_POLES),
    _special("gammasgn", _times(tsp.gammasgn), BETWEEN_POLES),
    _special(
        "polygamma",
        lambda x, p: tsp.polygamma(p, x),
        POSITIVE,
        params=_INTEGER_ORDERS,
    ),
    _special(
        "multigammaln",
        lambda a, d: tsp.multigammaln(a, d),
        SHAPES,
        params=_fixed(d=st.integers(1, 4)),
    ),
    _special("beta", tsp.beta, (POSITIVE, POSITIVE)),
    _special("betaln", tsp.betaln, (POSITIVE, POSITIVE)),
    _special("gammainc", lambda x, p: tsp.gammainc(p, x), POSITIVE, params=_GAMMA_SHAPES),
    _special("gammaincc", lambda x, p: tsp.gammaincc(p, x), POSITIVE, params=_GAMMA_SHAPES),
    _special(
        "betainc",
        lambda x, a, b: tsp.betainc(a, b, x),
        PROBABILITY,
        params=_fixed(a=st.floats(0.5, 3.0), b=st.floats(0.5, 3.0)),
    ),
    _special(
        "betaincc",
        lambda x, a, b: tsp.betaincc(a, b, x),
        PROBABILITY,
        params=_fixed(a=st.floats(0.5, 3.0), b=st.floats(0.5, 3.0)),
    ),
    # SciPy's stdtr is accurate to ~1e-11 only (near t = 0): longer finite-difference steps
    _special("stdtr", lambda t, p: tsp.stdtr(p, t), params=_DEGREES_OF_FREEDOM, eps=1e-4),
    # ---- Bessel functions --------------------------------------------------------------------
    _special("i0", tsp.i0),
    _special("i1", tsp.i1),
    _special("i0e", tsp.i0e, NONZERO),
    _special("i1e", tsp.i1e, NONZERO),
    _special("iv", lambda x, p: tsp.iv(p, x), POSITIVE, params=_REAL_ORDERS),
    # (SciPy's iv(n, x) for n >= 1 is NaN, not 0, at the smallest normal |x|)
    _special("iv:integer_order", lambda x, p: tsp.iv(p, x), NONZERO, params=_INTEGER_ORDERS),
    _special("ive", lambda x, p: tsp.ive(p, x), POSITIVE, params=_REAL_ORDERS),
    _special("ive:integer_order", lambda x, p: tsp.ive(p, x), NONZERO, params=_INTEGER_ORDERS),
    _special("k0", tsp.k0, POSITIVE),
    _special("k1", tsp.k1, POSITIVE),
    _special("k0e", tsp.k0e, POSITIVE),
    _special("k1e", tsp.k1e, POSITIVE),
    _special("kv", lambda x, p: tsp.kv(p, x), POSITIVE, params=_K_ORDERS),
    _special("kve", lambda x, p: tsp.kve(p, x), POSITIVE, params=_K_ORDERS),
    _special("j0", tsp.j0),
    _special("j1", tsp.j1),
    _special("jv", lambda x, p: tsp.jv(p, x), POSITIVE, params=_REAL_ORDERS),
    _special("jn", lambda x, p: tsp.jn(p, x), params=_INTEGER_ORDERS),
    _special("y0", tsp.y0, POSITIVE),
    _special("y1", tsp.y1, POSITIVE),
    _special("yv", lambda x, p: tsp.yv(p, x), POSITIVE, params=_REAL_ORDERS),
    _special("yn", lambda x, p: tsp.yn(p, x), POSITIVE, params=_INTEGER_ORDERS),
    # ---- convenience functions ---------------------------------------------------------------
    _special(
        "numpy_twins",  # transforms.numpy's own functions, under SciPy's names
        lambda x: tsp.exp2(x) + tsp.expm1(x) + tsp.log1p(x) + tsp.cbrt(x) + tsp.sinc(x),
        POSITIVE,
        covers=tuple(f"scipy.special.{n}" for n in ("exp2", "expm1", "log1p", "cbrt", "sinc")),
    ),
    _special("exp10", tsp.exp10),
    _special("cosm1", tsp.cosm1),
    _special("sindg", tsp.sindg, DEGREES),
    _special("cosdg", tsp.cosdg, DEGREES),
    _special("tandg", tsp.tandg, TANDG_RANGE),
    _special("cotdg", tsp.cotdg, COTDG_RANGE),
    _special("round", _times(tsp.round), OFF_GRID),
    _special("radian", tsp.radian, (REAL, REAL, REAL)),
    _special("powm1", tsp.powm1, (POSITIVE, REAL)),
    _special("exprel", tsp.exprel),
    _special("exprel:near_zero", tsp.exprel, NEAR_ZERO),
    _special("xlogy", tsp.xlogy, (REAL, POSITIVE)),
    _special("xlog1py", tsp.xlog1py, (REAL, ABOVE_MINUS_ONE)),
    _special("entr", tsp.entr, POSITIVE),
    _special("rel_entr", tsp.rel_entr, (POSITIVE, POSITIVE)),
    _special("kl_div", tsp.kl_div, (POSITIVE, POSITIVE)),
)


def _signed_log(out: Any, sign: Any) -> Any:
    """``log|s| * sign(s)``: both results of ``logsumexp(..., return_sign=True)`` in one."""
    return out * sign


NONDIFFERENTIABLE: dict[str, int] = {}
