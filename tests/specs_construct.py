"""Op-spec rows of the construct family: shape, indexing and construction (joined into
``OP_SPECS`` by ``op_specs.py``).

Functions that return several arrays (``split``, ``atleast_1d(x, y)``) are rows of a
function that joins the pieces, each scaled differently so that a piece sent to the wrong
place shows. ``sort``/``partition`` draw distinct values (a tie is a kink). Rows with
``vmap`` inside (``take`` over batched indices, ``sort`` of a batch) reach the gather
primitive that batched index arrays use, under every derivative of the table. Rows of
tracer methods (``x.diagonal()``...) join once the lead has installed those methods.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import hypothesis.extra.numpy as hnp
import numpy as np
from hypothesis import strategies as st
from op_specs import OpSpec
from strategies import (
    DISTINCT,
    Shape,
    axes_arg,
    axis_arg,
    broadcast_inputs,
    broadcast_pairs,
    broadcast_targets,
    mutually_broadcastable,
    same_shapes,
    shapes,
    single,
)

import transforms as T
import transforms.numpy as tnp
from transforms.core import operators

Params = dict[str, Any]
ParamsFor = Callable[[tuple[Shape, ...]], st.SearchStrategy[Params]]


def _fixed(**strategies: st.SearchStrategy[Any]) -> ParamsFor:
    return lambda arg_shapes: st.fixed_dictionaries(strategies)


def _joined(pieces: Any) -> Any:
    """The pieces of a split (or a tuple of arrays) as one vector, piece ``i`` scaled by
    ``i + 1``."""
    flat = [tnp.ravel(p) * float(i + 1) for i, p in enumerate(pieces)]
    return tnp.concatenate(flat) if flat else np.zeros(0)


# ---- parameter strategies -------------------------------------------------------------------
@st.composite
def _two_axes(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    ndim = len(arg_shapes[0])
    return {"axis1": draw(axis_arg(ndim)), "axis2": draw(axis_arg(ndim))}


@st.composite
def _distinct_axes(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    ndim = len(arg_shapes[0])
    first, second = draw(st.permutations(range(ndim)))[:2]
    return {
        "axis1": first - ndim if draw(st.booleans()) else first,
        "axis2": second - ndim if draw(st.booleans()) else second,
    }


@st.composite
def _rollaxis_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    ndim = len(arg_shapes[0])
    return {"axis": draw(axis_arg(ndim)), "start": draw(st.integers(-ndim, ndim))}


@st.composite
def _joinable_axis(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    """An axis along which all the shapes can be concatenated (some negative)."""
    first = arg_shapes[0]
    ndim = len(first)
    joinable = [
        a
        for a in range(ndim)
        if all(s[:a] + s[a + 1 :] == first[:a] + first[a + 1 :] for s in arg_shapes)
    ]
    axis = draw(st.sampled_from(joinable))
    return {"axis": axis - ndim if draw(st.booleans()) else axis}


@st.composite
def _two_along_an_axis(draw: st.DrawFn) -> tuple[Shape, ...]:
    """Two shapes (ndim >= 1) that agree except along one axis."""
    base = draw(shapes(min_dims=1))
    axis = draw(st.integers(0, len(base) - 1))
    other = base[:axis] + (draw(st.integers(0, 3)),) + base[axis + 1 :]
    return base, other


@st.composite
def _hstack_shapes(draw: st.DrawFn) -> tuple[Shape, ...]:
    """1-d shapes of any lengths, or shapes of 2+ dims that differ along axis 1."""
    n = draw(st.integers(1, 3))
    if draw(st.booleans()):
        return tuple((draw(st.integers(0, 3)),) for _ in range(n))
    base = draw(shapes(min_dims=2))
    return tuple(base[:1] + (draw(st.integers(0, 3)),) + base[2:] for _ in range(n))


@st.composite
def _sections(draw: st.DrawFn, arg_shapes: tuple[Shape, ...], equal: bool) -> Params:
    """An axis and either a number of sections (dividing the axis when ``equal``) or a list
    of split points (unsorted, negative or out of range ones included)."""
    shape = arg_shapes[0]
    axis = draw(st.integers(0, len(shape) - 1))
    n = shape[axis]
    if draw(st.booleans()):
        if equal:
            divisors = [d for d in range(1, max(n, 1) + 1) if n % d == 0] if n else [1, 2, 3]
            sections: Any = draw(st.sampled_from(divisors))
        else:
            sections = draw(st.integers(1, 4))
    else:
        sections = draw(st.lists(st.integers(-n - 1, n + 1), max_size=3))
        if draw(st.booleans()):
            sections = sorted(s % (n + 1) for s in sections)  # the usual, increasing kind
    return {
        "indices_or_sections": sections,
        "axis": axis - len(shape) if draw(st.booleans()) else axis,
    }


def _split_params(equal: bool) -> ParamsFor:
    return lambda arg_shapes: _sections(arg_shapes, equal)


@st.composite
def _named_split_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...], axis: int) -> Params:
    n = arg_shapes[0][axis]
    if draw(st.booleans()):
        divisors = [d for d in range(1, n + 1) if n % d == 0] if n else [1, 2]
        return {"indices_or_sections": draw(st.sampled_from(divisors))}
    return {"indices_or_sections": sorted(draw(st.lists(st.integers(0, n), max_size=3)))}


@st.composite
def _tile_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    reps = tuple(draw(st.lists(st.integers(0, 2), max_size=3)))
    return {"reps": reps[0] if len(reps) == 1 and draw(st.booleans()) else reps}


@st.composite
def _repeat_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    shape = arg_shapes[0]
    axis = draw(st.none() | axis_arg(len(shape))) if shape else None
    n = int(np.prod(shape)) if axis is None else shape[axis]
    if draw(st.booleans()):
        repeats: Any = draw(st.integers(0, 3))
    else:
        repeats = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), np.intp)
    return {"repeats": repeats, "axis": axis}


def _pad_widths(draw: st.DrawFn, ndim: int, limit: int) -> Any:
    kind = draw(st.sampled_from(["int", "pair", "per_axis", "dict"] if ndim else ["int", "pair"]))
    width = st.integers(0, limit)
    if kind == "int":
        return draw(width)
    if kind == "pair":
        return (draw(width), draw(width))
    pairs = [(draw(width), draw(width)) for _ in range(ndim)]
    if kind == "dict" and ndim:
        return {
            a - ndim if draw(st.booleans()) else a: p
            for a, p in enumerate(pairs)
            if draw(st.booleans())
        }
    return tuple(pairs)


@st.composite
def _pad_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    shape = arg_shapes[0]
    mode = draw(st.sampled_from(["constant", "edge", "reflect", "symmetric", "wrap"]))
    params: Params = {"pad_width": _pad_widths(draw, len(shape), 4), "mode": mode}
    if mode == "constant" and draw(st.booleans()):
        params["constant_values"] = draw(
            st.sampled_from([0.5, (1.5, -2.0), ((1.0, 2.0),) * len(shape) or 0.25])
        )
    if mode in ("reflect", "symmetric") and draw(st.booleans()):
        params["reflect_type"] = draw(st.sampled_from(["even", "odd"]))
    return params


@st.composite
def _pad_traced_constant_shapes(draw: st.DrawFn) -> tuple[Shape, ...]:
    shape = draw(shapes())
    ndim = len(shape)
    constant = draw(
        st.sampled_from([(), (1,), (2,), (1, 2)] + ([(ndim, 2), (ndim, 1)] if ndim else []))
    )
    return shape, constant


@st.composite
def _pad_width_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    return {"pad_width": _pad_widths(draw, len(arg_shapes[0]), 3)}


@st.composite
def _roll_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    ndim = len(arg_shapes[0])
    shift = st.integers(-7, 7)
    kind = draw(st.sampled_from(["none", "int", "tuple"] if ndim else ["none"]))
    if kind == "none":
        return {"shift": draw(shift), "axis": None}
    if kind == "int":
        return {"shift": draw(shift), "axis": draw(axis_arg(ndim))}
    axes = draw(st.lists(axis_arg(ndim), min_size=1, max_size=3))
    shifts = draw(st.lists(shift, min_size=len(axes), max_size=len(axes)))
    return {
        "shift": tuple(shifts) if len(shifts) > 1 or draw(st.booleans()) else shifts[0],
        "axis": tuple(axes),
    }


@st.composite
def _rot90_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    ndim = len(arg_shapes[0])
    first, second = draw(st.permutations(range(ndim)))[:2]
    axes = (
        first - ndim if draw(st.booleans()) else first,
        second - ndim if draw(st.booleans()) else second,
    )
    return {"k": draw(st.integers(-3, 5)), "axes": axes}


@st.composite
def _diagonal_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    params = draw(_distinct_axes(arg_shapes))
    return {"offset": draw(st.integers(-4, 4)), **params}


@st.composite
def _sort_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    ndim = len(arg_shapes[0])
    axis = draw(st.none() | axis_arg(ndim)) if ndim else None
    return {"axis": axis, "kind": draw(st.sampled_from([None, "stable", "quicksort"]))}


@st.composite
def _partition_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    shape = arg_shapes[0]
    axis = draw(st.none() | axis_arg(len(shape)))
    n = int(np.prod(shape)) if axis is None else shape[axis]
    kth = st.integers(-n, n - 1)
    return {"kth": draw(kth | st.lists(kth, min_size=1, max_size=3).map(tuple)), "axis": axis}


@st.composite
def _take_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    shape = arg_shapes[0]
    axis = draw(st.none() | axis_arg(len(shape))) if shape else None
    n = int(np.prod(shape)) if axis is None else shape[axis]
    if n == 0:  # nothing to take from: only an empty index
        return {"indices": np.zeros((0,), np.intp), "axis": axis, "mode": "raise"}
    mode = draw(st.sampled_from(["raise", "wrap", "clip"]))
    low, high = (-n, n - 1) if mode == "raise" else (-2 * n - 2, 2 * n + 2)
    index_shape = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4))
    indices = draw(hnp.arrays(np.intp, index_shape, elements=st.integers(low, high)))
    return {"indices": indices, "axis": axis, "mode": mode}


@st.composite
def _take_along_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    shape = arg_shapes[0]
    axis = draw(axis_arg(len(shape)))
    n = shape[axis]
    index_shape = tuple(
        draw(st.integers(0, 4) if n else st.just(0))
        if i == axis % len(shape)
        else draw(st.sampled_from([1, s]))
        for i, s in enumerate(shape)
    )
    elements = st.integers(-n, n - 1) if n else st.just(0)  # (no elements when n == 0)
    indices = draw(hnp.arrays(np.intp, index_shape, elements=elements))
    return {"indices": indices, "axis": axis}


@st.composite
def _batched_indices(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    """A batch of index vectors (one per example), valid for every axis of the input."""
    n = min(arg_shapes[0])
    shape = (draw(st.integers(1, 3)), draw(st.integers(0, 3)))
    return {"indices": draw(hnp.arrays(np.intp, shape, elements=st.integers(-n, n - 1)))}


def _mixed_gathers(x: Any, indices: Any) -> Any:
    """Per example, index arrays mixed with basic indices (both of NumPy's placements)."""

    def one(i: Any) -> Any:
        ref = tnp.at(x)
        return _joined([ref[i, ..., 0].get(), ref[..., i[::-1]].get(), ref[:, None, i].get()])

    return T.vmap(one)(indices)


@st.composite
def _select_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    out = np.broadcast_shapes(*arg_shapes)
    conds = [
        draw(hnp.arrays(np.bool_, out[len(out) - draw(st.integers(0, len(out))) :]))
        for _ in arg_shapes[:-1]
    ]
    return {"conds": conds}


@st.composite
def _full_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    target = draw(broadcast_targets(arg_shapes[0]))
    return {"shape": target[0] if len(target) == 1 and draw(st.booleans()) else target}


@st.composite
def _full_like_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    target = draw(broadcast_targets(arg_shapes[0]))
    return {"a": np.zeros(target), "dtype": draw(st.sampled_from([None, np.float64]))}


@st.composite
def _linspace_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    ndim = len(np.broadcast_shapes(*arg_shapes)) + 1
    return {
        "num": draw(st.integers(0, 5)),
        "endpoint": draw(st.booleans()),
        "axis": draw(axis_arg(ndim)),
    }


@st.composite
def _unique_index(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    """Distinct ints on one axis (a write per element), or a boolean mask, or a slice."""
    shape = arg_shapes[0]
    axis = draw(st.integers(0, len(shape) - 1))
    n = shape[axis]
    kind = draw(st.sampled_from(["ints", "mask", "slice"]))
    if kind == "ints":
        entry: Any = np.array(
            draw(st.lists(st.integers(-n, n - 1), unique_by=lambda i: i % n)), np.intp
        )
    elif kind == "mask":
        entry = draw(hnp.arrays(np.bool_, (n,)))
    else:
        entry = slice(draw(st.integers(-n, n)), None, draw(st.sampled_from([1, 2, -1])))
    return {"index": (slice(None),) * axis + (entry,)}


def _functional_updates(x: Any, index: Any) -> Any:
    ref = tnp.at(x)[index]
    return ref.set(tnp.sin(ref.get())) + ref.multiply(x[index]) - ref.add(2.0 * x[index])


# ---- rows -----------------------------------------------------------------------------------
def _unary(name: str, fn: Callable[..., Any], **kw: Any) -> OpSpec:
    kw.setdefault("covers", (name,))
    kw.setdefault("shapes", single())
    return OpSpec(name, fn, **kw)


SPECS: tuple[OpSpec, ...] = (
    # ---- axes ----
    OpSpec("swapaxes", tnp.swapaxes, single(min_dims=1), _two_axes, covers=("swapaxes",)),
    OpSpec("rollaxis", tnp.rollaxis, single(min_dims=1), _rollaxis_params, covers=("rollaxis",)),
    _unary("atleast_1d", tnp.atleast_1d),
    _unary("atleast_2d", tnp.atleast_2d),
    _unary("atleast_3d", tnp.atleast_3d),
    OpSpec(
        "atleast_nd_several",
        lambda x, y: (
            _joined(tnp.atleast_1d(x, y))
            - _joined(tnp.atleast_2d(y, x))
            + _joined(tnp.atleast_3d(x, y))
        ),
        st.tuples(shapes(), shapes()),
        covers=("atleast_1d", "atleast_2d", "atleast_3d"),
    ),
    # ---- stacking ----
    OpSpec("hstack", lambda *xs: tnp.hstack(xs), _hstack_shapes(), covers=("hstack",)),
    OpSpec("hstack_same", lambda *xs: tnp.hstack(list(xs)), same_shapes(), covers=("hstack",)),
    OpSpec("vstack", lambda *xs: tnp.vstack(list(xs)), same_shapes(), covers=("vstack",)),
    OpSpec("dstack", lambda *xs: tnp.dstack(list(xs)), same_shapes(), covers=("dstack",)),
    OpSpec(
        "column_stack",
        lambda *xs: tnp.column_stack(list(xs)),
        same_shapes(max_n=3),
        covers=("column_stack",),
    ),
    OpSpec(
        "column_stack_vectors_and_matrix",
        lambda x, m: tnp.column_stack([x, m, x * x]),
        st.integers(0, 3).flatmap(lambda n: st.tuples(st.just((n,)), st.just((n, 2)))),
        covers=("column_stack",),
    ),
    OpSpec("append", tnp.append, st.tuples(shapes(), shapes()), covers=("append",)),
    OpSpec("append_axis", tnp.append, _two_along_an_axis(), _joinable_axis, covers=("append",)),
    # ---- splitting ----
    OpSpec(
        "split",
        lambda x, **kw: _joined(tnp.split(x, **kw)),
        single(min_dims=1),
        _split_params(equal=True),
        covers=("split",),
    ),
    OpSpec(
        "split_one_piece_used",
        lambda x, **kw: tnp.split(x, **kw)[-1] * 2.0,
        single(min_dims=1),
        _split_params(equal=True),
        covers=("split",),
    ),
    OpSpec(
        "array_split",
        lambda x, **kw: _joined(tnp.array_split(x, **kw)),
        single(min_dims=1),
        _split_params(equal=False),
        covers=("array_split",),
    ),
    OpSpec(
        "hsplit",
        lambda x, **kw: _joined(tnp.hsplit(x, **kw)),
        single(min_dims=2),
        lambda s: _named_split_params(s, 1),
        covers=("hsplit",),
    ),
    OpSpec(
        "hsplit_1d",
        lambda x, **kw: _joined(tnp.hsplit(x, **kw)),
        single(min_dims=1, max_dims=1),
        lambda s: _named_split_params(s, 0),
        covers=("hsplit",),
    ),
    OpSpec(
        "vsplit",
        lambda x, **kw: _joined(tnp.vsplit(x, **kw)),
        single(min_dims=2),
        lambda s: _named_split_params(s, 0),
        covers=("vsplit",),
    ),
    OpSpec(
        "dsplit",
        lambda x, **kw: _joined(tnp.dsplit(x, **kw)),
        single(min_dims=3),
        lambda s: _named_split_params(s, 2),
        covers=("dsplit",),
    ),
    # ---- tiling ----
    OpSpec("tile", tnp.tile, single(max_dims=2), _tile_params, covers=("tile",)),
    OpSpec("repeat", tnp.repeat, single(), _repeat_params, covers=("repeat",)),
    # ---- padding ----
    OpSpec("pad", tnp.pad, single(min_side=1), _pad_params, covers=("pad",)),
    OpSpec(
        "pad_constant_empty_axes",
        lambda x, pad_width: tnp.pad(x, pad_width, constant_values=-1.5),
        single(),
        _pad_width_params,
        covers=("pad",),
    ),
    OpSpec(
        "pad_traced_constant",
        lambda x, c, pad_width: tnp.pad(x, pad_width, constant_values=c),
        _pad_traced_constant_shapes(),
        _pad_width_params,
        covers=("pad",),
    ),
    # ---- rolling, flipping, rotating ----
    OpSpec("roll", tnp.roll, single(), _roll_params, covers=("roll",)),
    OpSpec("rot90", tnp.rot90, single(min_dims=2), _rot90_params, covers=("rot90",)),
    OpSpec(
        "flip", tnp.flip, single(), lambda s: _fixed(axis=axes_arg(len(s[0])))(s), covers=("flip",)
    ),
    _unary("fliplr", tnp.fliplr, shapes=single(min_dims=2)),
    _unary("flipud", tnp.flipud, shapes=single(min_dims=1)),
    # ---- diagonals and triangles ----
    OpSpec(
        "diag_of_vector", tnp.diag, single(1, 1), _fixed(k=st.integers(-3, 3)), covers=("diag",)
    ),
    OpSpec(
        "diag_of_matrix", tnp.diag, single(2, 2), _fixed(k=st.integers(-4, 4)), covers=("diag",)
    ),
    OpSpec("diagonal", tnp.diagonal, single(min_dims=2), _diagonal_params, covers=("diagonal",)),
    OpSpec("diagflat", tnp.diagflat, single(), _fixed(k=st.integers(-2, 2)), covers=("diagflat",)),
    OpSpec("tril", tnp.tril, single(min_dims=1), _fixed(k=st.integers(-3, 3)), covers=("tril",)),
    OpSpec("triu", tnp.triu, single(min_dims=1), _fixed(k=st.integers(-3, 3)), covers=("triu",)),
    # ---- sorting ----
    OpSpec("sort", tnp.sort, single(), _sort_params, DISTINCT, covers=("sort",)),
    OpSpec(
        "partition",
        tnp.partition,
        single(min_dims=1, min_side=1),
        _partition_params,
        DISTINCT,
        covers=("partition",),
    ),
    _unary(
        "sort_under_vmap",
        lambda x: T.vmap(tnp.sort, in_axes=-1)(x),
        shapes=single(min_dims=2),
        domain=DISTINCT,
        covers=("sort",),
    ),
    # ---- gathering ----
    OpSpec("take", tnp.take, single(), _take_params, covers=("take",)),
    OpSpec(
        "take_along_axis",
        tnp.take_along_axis,
        single(min_dims=1),
        _take_along_params,
        covers=("take_along_axis",),
    ),
    OpSpec(
        "take_batched_indices",
        lambda x, indices: T.vmap(lambda i: tnp.take(x, i, axis=0))(indices),
        single(min_dims=1, min_side=1),
        _batched_indices,
        covers=("take",),
    ),
    OpSpec(
        "take_along_axis_batched_indices",
        lambda x, indices: T.vmap(
            lambda row, i: tnp.take_along_axis(row, i, axis=0), in_axes=(None, 0)
        )(x, indices),
        single(min_dims=1, max_dims=1, min_side=1),
        _batched_indices,
        covers=("take_along_axis",),
    ),
    OpSpec(
        "getitem_batched_mixed_index",
        _mixed_gathers,
        single(min_dims=2, min_side=1),
        _batched_indices,
        covers=("at",),
    ),
    OpSpec(
        "at_functional_updates",
        _functional_updates,
        single(min_dims=1, min_side=1),
        _unique_index,
        covers=("at", "op:getitem"),
    ),
    # ---- choosing ----
    OpSpec(
        "select",
        lambda *xs, conds: tnp.select(conds, list(xs[:-1]), xs[-1]),
        mutually_broadcastable(3),
        _select_params,
        covers=("select",),
    ),
    _unary(
        "select_traced_conditions",
        lambda x: tnp.select([x > 0, x < 0], [x * x, -2.0 * x], 0.25),
        domain=DISTINCT,
        covers=("select",),
    ),
    # ---- constructing ----
    OpSpec(
        "full",
        lambda x, shape: tnp.full(shape, x),
        broadcast_inputs(),
        _full_params,
        covers=("full",),
    ),
    OpSpec(
        "full_like",
        lambda x, a, dtype: tnp.full_like(a, x, dtype=dtype),
        broadcast_inputs(),
        _full_like_params,
        covers=("full_like",),
    ),
    _unary(
        "full_like_of_traced",
        lambda x: tnp.full_like(x, 2.0) * x + tnp.full_like(x, x),
        covers=("full_like",),
    ),
    OpSpec("linspace", tnp.linspace, broadcast_pairs(), _linspace_params, covers=("linspace",)),
    OpSpec(
        "linspace_retstep",
        lambda start, stop, num: tnp.linspace(start, stop, num, retstep=True)[1] * 1.0,
        broadcast_pairs(),
        _fixed(num=st.integers(2, 5)),
        covers=("linspace",),
    ),
)

# ---- tracer methods (join once the lead has installed them) ---------------------------------
_METHOD_SPECS: tuple[tuple[str, OpSpec], ...] = (
    (
        "diagonal",
        OpSpec(
            "diagonal_method",
            lambda x, offset, axis1, axis2: x.diagonal(offset, axis1, axis2),
            single(min_dims=2),
            _diagonal_params,
            covers=("op:diagonal",),
        ),
    ),
    (
        "swapaxes",
        OpSpec(
            "swapaxes_method",
            lambda x, axis1, axis2: x.swapaxes(axis1, axis2),
            single(min_dims=1),
            _two_axes,
            covers=("op:swapaxes",),
        ),
    ),
    (
        "repeat",
        OpSpec(
            "repeat_method",
            lambda x, repeats, axis: x.repeat(repeats, axis),
            single(),
            _repeat_params,
            covers=("op:repeat",),
        ),
    ),
    (
        "take",
        OpSpec(
            "take_method",
            lambda x, indices, axis, mode: x.take(indices, axis, mode=mode),
            single(),
            _take_params,
            covers=("op:take",),
        ),
    ),
)
SPECS += tuple(spec for method, spec in _METHOD_SPECS if method in operators)

NONDIFFERENTIABLE: dict[str, int] = {}
