"""Op-spec rows of the NumPy functions researchers reach for (``transforms/numpy/_extras.py``)
and of the ``%``/``divmod`` operators on traced values, joined into ``OP_SPECS``.

Piecewise functions are drawn away from their kinks: ``interp``'s evaluation points come
from ``DISTINCT``'s grid and its knots sit in that grid's gaps (``0.035`` past a grid point);
remainders are taken of ``x * y`` by ``y`` with ``x`` ``OFF_GRID``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import strategies as st
from op_specs import OpSpec
from specs_elementwise import OFF_GRID
from strategies import (
    DISTINCT,
    NONZERO,
    POSITIVE,
    REAL,
    Shape,
    axis_arg,
    broadcast_pairs,
    same_shapes,
    shapes,
    single,
)

import transforms.numpy as tnp

Params = dict[str, Any]


def _fixed(**strategies: st.SearchStrategy[Any]) -> Callable[..., st.SearchStrategy[Params]]:
    return lambda arg_shapes: st.fixed_dictionaries(strategies)


def _vectors(n: int, min_side: int = 1) -> st.SearchStrategy[tuple[Shape, ...]]:
    return st.tuples(*(shapes(1, 1, min_side=min_side) for _ in range(n)))


def _data_matrix(min_obs: int = 3) -> st.SearchStrategy[tuple[Shape, ...]]:
    """``(variables, observations)``: at least ``min_obs`` observations."""
    return st.tuples(st.integers(1, 3), st.integers(min_obs, 5)).map(lambda s: (s,))


# knots in the gaps of DISTINCT's grid (|x| in 0.25 + 0.05 k + [0, 0.02]): never at a point
KNOTS = np.array([-1.635, -0.285, 0.335, 0.785, 1.535])
EVALUATION_POINTS = np.array([-2.3456, -1.2345, 0.1234, 0.9876, 2.3456])


def _meshgrid(x: Any, y: Any, indexing: str) -> Any:
    return tnp.concatenate([tnp.ravel(g) for g in tnp.meshgrid(x, y, indexing=indexing)])


def _block(a: Any, b: Any, c: Any, d: Any) -> Any:
    return tnp.block([[a, b], [c, d]])


_QUANTILE_METHODS = (
    "inverted_cdf",
    "averaged_inverted_cdf",
    "closest_observation",
    "interpolated_inverted_cdf",
    "hazen",
    "weibull",
    "linear",
    "median_unbiased",
    "normal_unbiased",
    "lower",
    "higher",
    "midpoint",
    "nearest",
)
_PUT_INDEX = np.array([[1, 3], [0, 2], [2, 1]])  # no repeated position in a row


def _quantile_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    ndim = len(arg_shapes[0])
    return st.fixed_dictionaries(
        {
            "q": st.sampled_from([0.0, 0.3, 0.5, 1.0, [0.1, 0.65]]),
            "axis": st.one_of(st.none(), axis_arg(ndim)),
            "method": st.sampled_from(_QUANTILE_METHODS),
            "keepdims": st.booleans(),
        }
    )


SPECS: tuple[OpSpec, ...] = (
    # ---- % and divmod on traced values ---------------------------------------------------------
    OpSpec(
        "op:mod",
        lambda x, y: (x * y) % y,
        broadcast_pairs(),
        domain=(OFF_GRID, NONZERO),
        covers=("op:mod",),
    ),
    OpSpec(
        "op:rmod",
        # a plain number on the left; 2.7183 / y is no integer for the drawn y
        lambda y: 2.7183 % y,
        single(),
        domain=POSITIVE,
        covers=("op:mod",),
    ),
    OpSpec(
        "divmod",
        lambda x, y: tnp.divmod(x * y, y)[1],
        broadcast_pairs(),
        domain=(OFF_GRID, NONZERO),
        covers=("divmod",),
    ),
    OpSpec(
        "op:divmod",
        lambda x, y: divmod(x * y, y)[1],
        broadcast_pairs(),
        domain=(OFF_GRID, NONZERO),
        covers=("op:divmod",),
    ),
    # ---- stacking any sequence: a traced array over its first axis, a generator ------------------
    OpSpec("row_stack", lambda *xs: tnp.row_stack(list(xs)), same_shapes(), covers=("row_stack",)),
    OpSpec("vstack:traced_array", tnp.vstack, single(min_dims=1, min_side=1), covers=("vstack",)),
    OpSpec(
        "hstack:generator",
        lambda x: tnp.hstack(r * r for r in x),
        single(min_dims=1, min_side=1),
        covers=("hstack",),
    ),
    OpSpec(
        "column_stack:traced_array",
        tnp.column_stack,
        single(min_dims=1, max_dims=2, min_side=1),
        covers=("column_stack",),
    ),
    OpSpec("dstack:traced_array", tnp.dstack, single(min_dims=1, min_side=1), covers=("dstack",)),
    OpSpec(
        "stack:traced_array",
        lambda x: tnp.stack(x, axis=-1),
        single(min_dims=1, min_side=1),
        covers=("stack",),
    ),
    # ---- grids and sequences -----------------------------------------------------------------
    OpSpec(
        "meshgrid",
        _meshgrid,
        _vectors(2, 0),
        _fixed(indexing=st.sampled_from(["xy", "ij"])),
        covers=("meshgrid",),
    ),
    OpSpec(
        "meshgrid:sparse",
        lambda x, y: tnp.meshgrid(x, y, sparse=True)[0] * 2.0 + tnp.meshgrid(x, y, sparse=True)[1],
        _vectors(2, 0),
        covers=("meshgrid",),
    ),
    OpSpec(
        "logspace",
        lambda s, e, axis: tnp.logspace(s, e, 4, base=2.0, axis=axis),
        broadcast_pairs(),
        _fixed(axis=st.just(0)),
        covers=("logspace",),
    ),
    OpSpec(
        "logspace:base",
        lambda s, e, b: tnp.logspace(s, e, 5, endpoint=False, base=b),
        st.just(((), (), ())),
        domain=(REAL, REAL, POSITIVE),
        covers=("logspace",),
    ),
    OpSpec(
        "geomspace",
        lambda s, e, num: tnp.geomspace(s, e, num),
        broadcast_pairs(),
        _fixed(num=st.integers(1, 4)),
        domain=POSITIVE,
        covers=("geomspace",),
    ),
    OpSpec(
        "geomspace:negative",
        lambda s, e: tnp.geomspace(-s, -e, 4, endpoint=False, axis=-1),
        broadcast_pairs(),
        domain=POSITIVE,
        covers=("geomspace",),
    ),
    OpSpec("block", _block, st.just(((2, 2), (2, 1), (1, 2), (1, 1))), covers=("block",)),
    OpSpec("block:1d", lambda a, b: tnp.block([a, 2.0, b]), _vectors(2, 0), covers=("block",)),
    OpSpec("r_", lambda x, y: tnp.r_[x, 0:2, y], _vectors(2, 0), covers=("r_",)),
    OpSpec(
        "c_",
        lambda x, y: tnp.c_[x, y * 2.0],
        st.integers(0, 3).map(lambda n: ((n,), (n,))),
        covers=("c_",),
    ),
    # ---- interpolation, polynomials, integration -----------------------------------------------
    OpSpec(
        "interp",
        lambda x, fp: tnp.interp(x, KNOTS, fp),
        st.tuples(shapes(), st.just((5,))),
        domain=(DISTINCT, REAL),
        covers=("interp",),
    ),
    OpSpec(
        "interp:knots",
        lambda fp, d: tnp.interp(EVALUATION_POINTS, tnp.cumsum(d) - 2.0, fp),
        st.just(((4,), (4,))),
        domain=(REAL, POSITIVE),
        covers=("interp",),
    ),
    OpSpec(
        "interp:left_right",
        lambda x, lo, hi: tnp.interp(x, KNOTS, np.arange(5.0), lo, hi),
        st.tuples(shapes(), st.just(()), st.just(())),
        domain=(DISTINCT, REAL, REAL),
        covers=("interp",),
    ),
    OpSpec(
        "interp:period",
        lambda x, fp: tnp.interp(x, KNOTS, fp, period=3.5),
        st.tuples(shapes(), st.just((5,))),
        domain=(DISTINCT, REAL),
        covers=("interp",),
    ),
    OpSpec(
        "polyval", tnp.polyval, st.tuples(shapes(1, 1, min_side=1), shapes()), covers=("polyval",)
    ),
    OpSpec("trapezoid", tnp.trapezoid, single(min_dims=1), covers=("trapezoid",)),
    OpSpec(
        "trapezoid:x",
        lambda y, x: tnp.trapezoid(y, x),
        same_shapes(2, 2, min_dims=1),
        covers=("trapezoid",),
    ),
    OpSpec(
        "trapezoid:x_1d",
        lambda y, x: tnp.trapezoid(y, x, axis=0),
        shapes(1, 3).map(lambda s: (s, s[:1])),
        covers=("trapezoid",),
    ),
    # ---- signals -----------------------------------------------------------------------------
    OpSpec(
        "convolve",
        lambda a, v, mode: tnp.convolve(a, v, mode),
        _vectors(2),
        _fixed(mode=st.sampled_from(["full", "same", "valid"])),
        covers=("convolve",),
    ),
    OpSpec(
        "correlate",
        lambda a, v, mode: tnp.correlate(a, v, mode),
        _vectors(2),
        _fixed(mode=st.sampled_from(["full", "same", "valid"])),
        covers=("correlate",),
    ),
    # ---- statistics --------------------------------------------------------------------------
    OpSpec(
        "cov",
        lambda m, rowvar, bias: tnp.cov(m if rowvar else m.T, rowvar=rowvar, bias=bias),
        _data_matrix(),
        _fixed(rowvar=st.booleans(), bias=st.booleans()),
        covers=("cov",),
    ),
    OpSpec(
        "cov:y",
        lambda x, y: tnp.cov(x, y),
        st.integers(3, 5).map(lambda n: ((n,), (n,))),
        covers=("cov",),
    ),
    OpSpec(
        "cov:aweights",
        lambda m, w: tnp.cov(m, aweights=w, fweights=np.arange(1, 4)),
        st.integers(1, 3).map(lambda k: ((k, 3), (3,))),
        domain=(REAL, POSITIVE),
        covers=("cov",),
    ),
    # sin(7 m): rows of the grid far from collinear (|r| near 1 is ill-conditioned, 1 clip's kink)
    OpSpec(
        "corrcoef",
        lambda m: tnp.corrcoef(tnp.sin(7.0 * m)),
        _data_matrix(),
        domain=DISTINCT,
        covers=("corrcoef",),
        rtol=2e-5,  # with check_grads' own step (eps=1e-6): its default is long for 1 - r
        eps=1e-6,
    ),
    # ---- unique: each value gathered from its first occurrence --------------------------------
    OpSpec("unique", tnp.unique, single(), domain=DISTINCT, covers=("unique",)),
    OpSpec(
        "unique:axis",
        lambda x: tnp.unique(x, axis=0),
        single(min_dims=2, min_side=1),
        domain=DISTINCT,
        covers=("unique",),
    ),
    # ---- issue 31's names: quantiles, fits, Bessel i0, applying the user's function -----------
    OpSpec(
        "quantile",
        lambda x, q, axis, method, keepdims: tnp.quantile(
            x, q, axis=axis, method=method, keepdims=keepdims
        ),
        single(min_dims=1, min_side=1),
        _quantile_params,
        domain=DISTINCT,  # no ties: the quantile has a kink where two values cross
        covers=("quantile",),
    ),
    OpSpec(
        "percentile",
        lambda x, q, axis, method, keepdims: tnp.percentile(
            x, 100 * np.asarray(q), axis=axis, method=method, keepdims=keepdims
        ),
        single(min_dims=1, min_side=1),
        _quantile_params,
        domain=DISTINCT,
        covers=("percentile",),
    ),
    OpSpec(
        "put_along_axis",
        lambda a, v: tnp.put_along_axis(a, _PUT_INDEX, v, axis=1),
        st.just(((3, 4), (3, 2))),
        covers=("put_along_axis",),
    ),
    OpSpec(
        "put_along_axis:flat",
        lambda a, v: tnp.put_along_axis(a, np.array([5, 0]), v, axis=None),
        st.just(((3, 4), (2,))),
        covers=("put_along_axis",),
    ),
    OpSpec(
        "polyfit",
        lambda x, y, deg: tnp.polyfit(x, y, deg),
        st.integers(3, 6).map(lambda n: ((n,), (n,))),
        _fixed(deg=st.integers(0, 2)),
        domain=(DISTINCT, REAL),  # distinct abscissae: a well-posed fit
        covers=("polyfit",),
        rtol=1e-4,  # abscissae 0.05 apart make a least-squares fit ill-conditioned
        atol=1e-5,
    ),
    OpSpec(
        "polyfit:weighted_cov",
        lambda x, y, w: tnp.concatenate(
            [tnp.ravel(r) for r in tnp.polyfit(x, y, 1, w=w, cov=True)]
        ),
        st.integers(4, 6).map(lambda n: ((n,), (n, 2), (n,))),
        domain=(DISTINCT, REAL, POSITIVE),
        covers=("polyfit",),
        rtol=1e-4,
        atol=1e-5,
    ),
    OpSpec("i0", tnp.i0, single(), covers=("i0",)),
    OpSpec(
        "piecewise",
        lambda x: tnp.piecewise(
            x, [x < 0.0, x >= 1.035], [lambda v: v * v, tnp.exp, lambda v: tnp.sin(v)]
        ),
        single(),
        domain=DISTINCT,  # never at a piece's boundary (0 and 1.035 are in DISTINCT's gaps)
        covers=("piecewise",),
    ),
    OpSpec(
        "piecewise:closure",
        lambda x, c: tnp.piecewise(x, [x < 0.0], [lambda v: v * c, lambda v: c - v * v]),
        shapes(0, 2).map(lambda s: (s, ())),
        domain=(DISTINCT, REAL),
        covers=("piecewise",),
    ),
    OpSpec(
        "apply_along_axis",
        lambda x, axis: tnp.apply_along_axis(lambda v: tnp.cumsum(v * v)[::2], axis, x),
        single(min_dims=1, max_dims=3, min_side=1),
        lambda arg_shapes: st.fixed_dictionaries({"axis": axis_arg(len(arg_shapes[0]))}),
        covers=("apply_along_axis",),
    ),
    OpSpec(
        "vectorize",
        lambda x, y: tnp.vectorize(lambda a, b: a * tnp.sin(b) + b, otypes=[np.float64])(x, y),
        broadcast_pairs(),
        covers=("vectorize",),
    ),
    OpSpec(
        "vectorize:signature",
        lambda a, b: tnp.vectorize(lambda u, v: tnp.dot(u, v) * u, signature="(n),(n)->(n)")(a, b),
        st.just(((2, 3), (3,))),
        covers=("vectorize",),
    ),
)

# with their arity: tests/test_rule_coverage.py checks that each carries no derivative
NONDIFFERENTIABLE: dict[str, int] = {
    "lexsort": 1,
    "linalg.matrix_rank": 1,
    "tril_indices_from": 1,
    "triu_indices_from": 1,
    "isin": 2,
    "digitize": 2,
    "bincount": 1,
    "histogram": 1,
    "histogram_bin_edges": 1,
    "histogram2d": 2,
    "histogramdd": 1,
}
