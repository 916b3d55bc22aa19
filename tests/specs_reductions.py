"""Op-spec rows of the reductions family: reductions, scans and the non-differentiable
functions (joined into ``OP_SPECS`` by ``op_specs.py``).

Inputs stay away from each function's kinks: distinct values for ``median``/``ptp``/``nanmax``
(no ties), groups of at least two elements with a non-empty ``axis`` for ``var``/``std``
(no zero variance, where ``std`` has a kink; its convention there is tested by value in
``test_reductions_conventions.py``). The nan* rows replace a drawn mask of elements by NaN
while keeping at least two real elements in every group, so each output is finite. Rows of
tracer methods (``x.var()``...) join once the lead has installed those methods.
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
    POSITIVE,
    REAL,
    UNIT,
    Domain,
    Shape,
    axes_arg,
    axis_arg,
    broadcast_pairs,
    shapes,
    single,
)

import transforms.numpy as tnp
from transforms.core import operators

Params = dict[str, Any]
ParamsFor = Callable[[tuple[Shape, ...]], st.SearchStrategy[Params]]


@dataclass(frozen=True)
class _WithZeros(Domain):
    """Like ``UNIT``, with exact zeros often: where ``cumprod``'s rules must not divide."""

    def elements(self) -> st.SearchStrategy[float]:
        return st.one_of(st.just(0.0), super().elements())


WITH_ZEROS = _WithZeros("with_zeros", -1.25, 1.25)


# ---- parameter strategies -------------------------------------------------------------------
def _fixed(**strategies: st.SearchStrategy[Any]) -> ParamsFor:
    return lambda arg_shapes: st.fixed_dictionaries(strategies)


def _reduction(**extra: st.SearchStrategy[Any]) -> ParamsFor:
    def params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
        axis = axes_arg(len(arg_shapes[0]))
        return st.fixed_dictionaries({"axis": axis, "keepdims": st.booleans(), **extra})

    return params


@st.composite
def _nonempty_axes(draw: st.DrawFn, ndim: int) -> int | tuple[int, ...] | None:
    """An ``axis`` argument that reduces at least one axis (``ndim >= 1``)."""
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none":
        return None
    if kind == "int":
        return draw(axis_arg(ndim))
    axes = draw(st.lists(st.integers(0, ndim - 1), unique=True, min_size=1, max_size=ndim))
    return tuple(a - ndim if draw(st.booleans()) else a for a in axes)


def _spread_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    """``var``/``std``: groups of at least two (the shapes have sides >= 2), ``ddof`` 0 or 1."""
    return st.fixed_dictionaries(
        {
            "axis": _nonempty_axes(len(arg_shapes[0])),
            "keepdims": st.booleans(),
            "ddof": st.sampled_from([0, 1]),
        }
    )


def _scan_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    ndim = len(arg_shapes[0])
    return st.fixed_dictionaries({"axis": st.none() | axis_arg(ndim) if ndim else st.none()})


def _group_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    return tuple(sorted(a % ndim for a in ((axis,) if isinstance(axis, int) else axis)))


@st.composite
def _nan_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    """A non-empty ``axis``, ``keepdims``, ``ddof`` and a NaN mask that spares, in every
    group, the elements whose reduced indices are all 0 or 1 (at least two of them)."""
    shape = arg_shapes[0]
    axis = draw(_nonempty_axes(len(shape)))
    mask = draw(hnp.arrays(np.bool_, shape))
    spared = np.ones(shape, dtype=bool)
    for a in _group_axes(axis, len(shape)):
        index = np.arange(shape[a]).reshape((-1,) + (1,) * (len(shape) - a - 1))
        spared &= index <= 1
    return {
        "axis": axis,
        "keepdims": draw(st.booleans()),
        "ddof": draw(st.sampled_from([0, 1])),
        "nan_at": mask & ~spared,
    }


def _trace_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    ndim = len(arg_shapes[0])
    pairs = [(i, j) for i in range(ndim) for j in range(ndim) if i != j]
    return st.fixed_dictionaries(
        {
            "offset": st.integers(-3, 3),
            "axes": st.sampled_from(pairs).flatmap(
                lambda p: st.sampled_from([p, (p[0] - ndim, p[1]), (p[0], p[1] - ndim)])
            ),
        }
    )


def _diff_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    ndim = len(arg_shapes[0])
    return st.fixed_dictionaries(
        {
            "n": st.integers(0, 3),
            "axis": axis_arg(ndim),
            "prepend": st.sampled_from([None, 0.5, np.array(-1.0)]),
            "append": st.sampled_from([None, 2.0]),
        }
    )


@st.composite
def _diff_edge_shapes(draw: st.DrawFn) -> tuple[Shape, ...]:
    """``a``, a traced scalar ``prepend`` and a traced ``append`` of 1 or 2 along the last
    axis."""
    shape = draw(shapes(min_dims=1))
    return shape, (), shape[:-1] + (draw(st.integers(1, 2)),)


def _gradient_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    """Axes of side >= 3 (so ``edge_order`` 2 is valid); spacing none, a scalar, or plain
    coordinates (even or uneven) per axis."""
    shape = arg_shapes[0]
    ndim = len(shape)
    return st.fixed_dictionaries(
        {
            "axis": st.none() | axis_arg(ndim) | st.permutations(range(ndim)).map(tuple),
            "edge_order": st.sampled_from([1, 2]),
            "spacing": st.sampled_from(["none", "scalar", "coordinates", "even"]),
        }
    )


@st.composite
def _gradient_coordinate_shapes(draw: st.DrawFn) -> tuple[Shape, ...]:
    """``f`` and the steps (their magnitudes) between its traced coordinates on axis 0."""
    shape = draw(shapes(min_dims=1, min_side=3, max_side=4))
    return shape, (shape[0],)


# ---- functions of the rows ------------------------------------------------------------------
def _var(x: Any, axis: Any, keepdims: bool, ddof: int) -> Any:
    return tnp.var(x, axis, ddof=ddof, keepdims=keepdims)


def _std(x: Any, axis: Any, keepdims: bool, ddof: int) -> Any:
    return tnp.std(x, axis=axis, keepdims=keepdims, ddof=ddof)


def _nan(name: str) -> Callable[..., Any]:
    fn = getattr(tnp, name)
    takes_ddof = name in ("nanvar", "nanstd")

    def row(x: Any, axis: Any, keepdims: bool, ddof: int, nan_at: np.ndarray) -> Any:
        holed = tnp.where(nan_at, np.nan, x)
        if takes_ddof:
            return fn(holed, axis=axis, keepdims=keepdims, ddof=ddof)
        return fn(holed, axis=axis, keepdims=keepdims)

    return row


def _average_weighted(x: Any, w: Any, axis: Any, keepdims: bool) -> Any:
    avg, total = tnp.average(x, axis=axis, weights=w, returned=True, keepdims=keepdims)
    return avg * total


def _average_axis_weights(x: Any, w: Any) -> Any:
    return tnp.average(x, axis=-1, weights=w)


@st.composite
def _axis_weight_shapes(draw: st.DrawFn) -> tuple[Shape, ...]:
    shape = draw(shapes(min_dims=1, min_side=1))
    return shape, (shape[-1],)


def _trace(x: Any, offset: int, axes: tuple[int, int]) -> Any:
    return tnp.trace(x, offset, axes[0], axes[1])


def _diff(x: Any, n: int, axis: int, prepend: Any, append: Any) -> Any:
    kwargs = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
    return tnp.diff(x, n, axis, **kwargs)


def _gradient(f: Any, axis: Any, edge_order: int, spacing: str) -> Any:
    ndim = np.ndim(f) if isinstance(f, np.ndarray) else len(f.shape)
    axes = tuple(range(ndim)) if axis is None else ((axis,) if isinstance(axis, int) else axis)
    sizes = [f.shape[a] for a in axes]
    if spacing == "none":
        varargs: tuple[Any, ...] = ()
    elif spacing == "scalar":
        varargs = (0.7,)
    elif spacing == "even":
        varargs = tuple(0.5 * np.arange(n) for n in sizes)
    else:
        varargs = tuple(np.cumsum(np.linspace(0.5, 1.5, n)) for n in sizes)
    out = tnp.gradient(f, *varargs, axis=axis, edge_order=edge_order)
    return tnp.stack(out) if isinstance(out, tuple) else out


def _logsumexp(a: Any, axis: Any, keepdims: bool) -> Any:
    return tnp.logsumexp(a, axis=axis, keepdims=keepdims)


def _logsumexp_scaled(a: Any, b: Any, axis: Any, keepdims: bool) -> Any:
    return tnp.logsumexp(a, axis=axis, b=b, keepdims=keepdims)


def _logsumexp_sign(a: Any, b: Any) -> Any:
    log_abs, sign = tnp.logsumexp(a, b=-b, return_sign=True)
    return log_abs * -sign


def _median_of_ties(x: Any) -> Any:
    """``x`` is a pair of distinct values; the middle pair of ``[a, b, b, a]``-like data is
    tied, and the tied elements share the derivative."""
    return tnp.median(tnp.stack([x[0], x[1], x[1], x[0], x[1]]))


def _sum_of_comparisons(x: Any) -> Any:
    """A count (no derivative) scaling a differentiable value."""
    return tnp.sum(x > 0.0) * x + tnp.count_nonzero(x < 0.0) * x


# ---- the rows ----------------------------------------------------------------------------------
_GROUPS = single(min_dims=1, min_side=2)

SPECS: tuple[OpSpec, ...] = (
    # ---- average, var, std ----------------------------------------------------------------------
    OpSpec("average", tnp.average, single(min_side=1), _reduction(), covers=("average",)),
    OpSpec(
        "average_weighted",
        _average_weighted,
        single(min_side=1).map(lambda s: (s[0], s[0])),
        _reduction(),
        (REAL, POSITIVE),
        covers=("average",),
    ),
    OpSpec(
        "average_axis_weights",
        _average_axis_weights,
        _axis_weight_shapes(),
        domain=(REAL, POSITIVE),
        covers=("average",),
    ),
    OpSpec("var", _var, _GROUPS, _spread_params, covers=("var",)),
    OpSpec(
        "var_any_axes",
        lambda x, axis, keepdims: tnp.var(x, axis=axis, keepdims=keepdims),
        single(min_side=1),
        _reduction(),
        covers=("var",),
    ),
    OpSpec(
        "var_correction",
        lambda x: tnp.var(x, axis=0, correction=1),
        _GROUPS,
        covers=("var",),
    ),
    OpSpec("std", _std, _GROUPS, _spread_params, DISTINCT, covers=("std",), rtol=1e-4),
    # ---- order statistics -----------------------------------------------------------------------
    OpSpec("median", tnp.median, single(min_side=1), _reduction(), DISTINCT, covers=("median",)),
    OpSpec(
        "median_tied_middle",
        _median_of_ties,
        st.just(((2,),)),
        domain=DISTINCT,
        covers=("median",),
    ),
    OpSpec("ptp", tnp.ptp, single(min_side=1), _reduction(), DISTINCT, covers=("ptp",)),
    # ---- trace, logsumexp -----------------------------------------------------------------------
    OpSpec("trace", _trace, single(min_dims=2), _trace_params, covers=("trace",)),
    OpSpec("logsumexp", _logsumexp, single(min_side=1), _reduction(), covers=("logsumexp",)),
    OpSpec(
        "logsumexp_scaled",
        _logsumexp_scaled,
        broadcast_pairs(min_side=1),
        lambda s: _reduction()((np.broadcast_shapes(*s),)),
        (REAL, POSITIVE),
        covers=("logsumexp",),
    ),
    OpSpec(
        "logsumexp_return_sign",
        _logsumexp_sign,
        broadcast_pairs(min_side=1),
        domain=(REAL, POSITIVE),
        covers=("logsumexp",),
    ),
    # ---- the nan-ignoring reductions ------------------------------------------------------------
    OpSpec("nansum", _nan("nansum"), _GROUPS, _nan_params, covers=("nansum",)),
    OpSpec("nanprod", _nan("nanprod"), _GROUPS, _nan_params, UNIT, covers=("nanprod",)),
    OpSpec("nanmean", _nan("nanmean"), _GROUPS, _nan_params, covers=("nanmean",)),
    OpSpec("nanmax", _nan("nanmax"), _GROUPS, _nan_params, DISTINCT, covers=("nanmax",)),
    OpSpec("nanmin", _nan("nanmin"), _GROUPS, _nan_params, DISTINCT, covers=("nanmin",)),
    OpSpec("nanvar", _nan("nanvar"), _GROUPS, _nan_params, covers=("nanvar",)),
    OpSpec("nanstd", _nan("nanstd"), _GROUPS, _nan_params, DISTINCT, covers=("nanstd",), rtol=1e-4),
    OpSpec(
        "nansum_no_nans",
        lambda x, axis, keepdims: tnp.nansum(x, axis, keepdims=keepdims),
        single(),
        _reduction(),
        covers=("nansum",),
    ),
    # ---- scans ----------------------------------------------------------------------------------
    OpSpec("cumsum", tnp.cumsum, single(), _scan_params, covers=("cumsum",)),
    OpSpec("cumprod", tnp.cumprod, single(), _scan_params, UNIT, covers=("cumprod",)),
    OpSpec(
        "cumprod_through_zeros",
        lambda x, axis: tnp.cumprod(x, axis=axis),
        single(min_dims=1, max_side=5),
        _scan_params,
        WITH_ZEROS,
        covers=("cumprod",),
    ),
    OpSpec("diff", _diff, single(min_dims=1), _diff_params, covers=("diff",)),
    OpSpec(
        "diff_traced_edges",
        lambda x, p, a: tnp.diff(x, 2, prepend=p, append=a),
        _diff_edge_shapes(),
        covers=("diff",),
    ),
    OpSpec(
        "gradient",
        _gradient,
        single(min_dims=1, min_side=3, max_side=4),
        _gradient_params,
        covers=("gradient",),
    ),
    OpSpec(
        "gradient_traced_step",
        lambda f, h: tnp.gradient(f, h, axis=0),
        shapes(min_dims=1, min_side=2).map(lambda s: (s, ())),
        domain=(REAL, POSITIVE),
        covers=("gradient",),
    ),
    OpSpec(
        "gradient_traced_coordinates",
        lambda f, steps, edge_order: tnp.gradient(
            f, tnp.cumsum(1.0 + tnp.abs(steps)), axis=0, edge_order=edge_order
        ),
        _gradient_coordinate_shapes(),
        _fixed(edge_order=st.sampled_from([1, 2])),
        DISTINCT,  # uneven steps: plain coordinates take the same (uneven) formula as traced
        covers=("gradient", "cumsum", "abs"),
    ),
    # ---- non-differentiable values inside differentiable code -----------------------------------
    OpSpec(
        "counts_scale_values",
        _sum_of_comparisons,
        single(),
        domain=DISTINCT,
        covers=(),
    ),
)

# Rows of tracer methods, once they are installed (the lead adds them to core's Tracer).
_METHOD_ROWS = {
    "var": OpSpec(
        "var_method",
        lambda x, axis, keepdims, ddof: x.var(axis, ddof=ddof, keepdims=keepdims),
        _GROUPS,
        _spread_params,
        covers=("op:var",),
    ),
    "std": OpSpec(
        "std_method",
        lambda x, axis, keepdims, ddof: x.std(axis=axis, ddof=ddof, keepdims=keepdims),
        _GROUPS,
        _spread_params,
        DISTINCT,
        covers=("op:std",),
        rtol=1e-4,
    ),
    "cumsum": OpSpec(
        "cumsum_method",
        lambda x, axis: x.cumsum(axis),
        single(),
        _scan_params,
        covers=("op:cumsum",),
    ),
    "cumprod": OpSpec(
        "cumprod_method",
        lambda x, axis: x.cumprod(axis=axis),
        single(),
        _scan_params,
        UNIT,
        covers=("op:cumprod",),
    ),
    "trace": OpSpec(
        "trace_method",
        lambda x, offset, axes: x.trace(offset, axes[0], axes[1]),
        single(min_dims=2),
        _trace_params,
        covers=("op:trace",),
    ),
}
SPECS += tuple(row for method, row in _METHOD_ROWS.items() if method in operators)

# Functions that carry no derivative, with their arity (checked by test_rule_coverage and,
# for every transform and batching, by test_reductions_conventions).
NONDIFFERENTIABLE: dict[str, int] = {
    "logical_and": 2,
    "logical_or": 2,
    "logical_xor": 2,
    "logical_not": 1,
    "bitwise_and": 2,
    "bitwise_or": 2,
    "bitwise_xor": 2,
    "invert": 1,
    "bitwise_not": 1,
    "isnan": 1,
    "isinf": 1,
    "isfinite": 1,
    "iscomplex": 1,
    "isreal": 1,
    "isclose": 2,
    "floor_divide": 2,
    "argmax": 1,
    "argmin": 1,
    "argsort": 1,
    "argwhere": 1,
    "nonzero": 1,
    "flatnonzero": 1,
    "searchsorted": 2,
    "count_nonzero": 1,
    "all": 1,
    "any": 1,
    "allclose": 2,
    "array_equal": 2,
    "iscomplexobj": 1,
    "isrealobj": 1,
    "shape": 1,
    "ndim": 1,
    "size": 1,
}
