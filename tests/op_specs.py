"""THE op-spec table: one row per differentiable function of ``transforms.numpy``.

Every derivative test is driven by ``OP_SPECS`` (``tests/test_op_specs.py``), and
``tests/test_rule_coverage.py`` fails when a differentiable function, tracer operator or
primitive has no row. Adding a primitive = one block in its family module + one row here.

A row is:

- ``fun(*xs, **params)``: the op as a function of its differentiable float arguments ``xs``;
  non-differentiable parameters (axis, shape, index, condition...) come as keywords, drawn
  by ``params`` for the drawn shapes, or baked into the row.
- ``shapes``: a strategy for the argument shapes (broadcasting pairs, size-1 and size-0 axes
  wherever the op allows them).
- ``domain``: where inputs are drawn, one per argument or one for all (see ``strategies``).
- ``covers``: the names this row exercises: ``transforms.numpy`` functions (``"sum"``) and
  tracer operators/methods (``"op:sum"`` for ``x.sum()``, ``"op:matmul"`` for ``x @ y``).
- ``rtol``/``atol``/``eps``: finite-difference tolerances and step (float64 defaults).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import hypothesis.extra.numpy as hnp
import numpy as np
from hypothesis import strategies as st
from strategies import (
    DISTINCT,
    NONZERO,
    POSITIVE,
    REAL,
    SMALL,
    UNIT,
    Domain,
    Shape,
    arrays_in,
    axes_arg,
    axis_arg,
    broadcast_inputs,
    broadcast_pairs,
    broadcast_targets,
    concat_shapes,
    dot_shapes,
    matmul_shapes,
    mutually_broadcastable,
    reshape_targets,
    same_shapes,
    shapes,
    single,
    squeezable_shapes,
    tensordot_axes_choices,
    tensordot_shapes,
    unbroadcast_targets,
)

import transforms.numpy as tnp

__all__ = ["NONDIFFERENTIABLE", "OP_SPECS", "Case", "OpSpec", "cases"]

Params = dict[str, Any]


def _no_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    return st.just({})


@dataclass(frozen=True)
class OpSpec:
    """One row: an op, how to draw its shapes/parameters/inputs, and its FD tolerances."""

    name: str
    fun: Callable[..., Any]
    shapes: st.SearchStrategy[tuple[Shape, ...]]
    params: Callable[[tuple[Shape, ...]], st.SearchStrategy[Params]] = _no_params
    domain: Domain | tuple[Domain, ...] = REAL
    covers: tuple[str, ...] = ()
    rtol: float = 1e-5
    atol: float = 1e-6
    eps: float = 1e-6

    def domains(self, n: int) -> tuple[Domain, ...]:
        return self.domain if isinstance(self.domain, tuple) else (self.domain,) * n

    def __repr__(self) -> str:
        return f"OpSpec({self.name!r})"

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:  # how hypothesis prints a draw
        p.text(repr(self))


@dataclass(frozen=True)
class Case:
    """One drawn instance of a row: its parameters and its float64 arguments."""

    spec: OpSpec
    params: Params
    args: tuple[np.ndarray, ...] = field(repr=False)

    def f(self, *xs: Any) -> Any:
        return self.spec.fun(*xs, **self.params)

    def __repr__(self) -> str:
        args = ", ".join(np.array2string(a, precision=17, separator=",") for a in self.args)
        shapes = [a.shape for a in self.args]
        return f"Case({self.spec.name}, params={self.params!r}, shapes={shapes}, args=[{args}])"

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(repr(self))


@st.composite
def cases(draw: st.DrawFn, spec: OpSpec) -> Case:
    arg_shapes = draw(spec.shapes)
    params = draw(spec.params(arg_shapes))
    args = draw(arrays_in(spec.domains(len(arg_shapes)), arg_shapes))
    return Case(spec, params, args)


# ---- parameter strategies -------------------------------------------------------------------
def _reduction_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    return st.fixed_dictionaries({"axis": axes_arg(len(arg_shapes[0])), "keepdims": st.booleans()})


def _sum_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    return st.fixed_dictionaries(
        {
            "axis": axes_arg(len(arg_shapes[0])),
            "keepdims": st.booleans(),
            "dtype": st.sampled_from([None, np.float64]),
        }
    )


def _reshape_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    return st.fixed_dictionaries({"shape": reshape_targets(arg_shapes[0])})


def _reshape_order_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    return st.fixed_dictionaries(
        {"shape": reshape_targets(arg_shapes[0]), "order": st.sampled_from(["C", "F"])}
    )


def _order_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    return st.fixed_dictionaries({"order": st.sampled_from(["C", "F"])})


@st.composite
def _permutation(draw: st.DrawFn, ndim: int) -> tuple[int, ...]:
    perm = draw(st.permutations(range(ndim)))
    return tuple(a - ndim if draw(st.booleans()) else a for a in perm)


def _transpose_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    ndim = len(arg_shapes[0])
    return st.fixed_dictionaries({"axes": st.none() | _permutation(ndim)})


def _method_transpose_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    return st.fixed_dictionaries({"axes": _permutation(len(arg_shapes[0]))})


@st.composite
def _moveaxis_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    ndim = len(arg_shapes[0])
    n = draw(st.integers(1, ndim))
    src = draw(st.lists(st.integers(0, ndim - 1), min_size=n, max_size=n, unique=True))
    dst = draw(st.lists(st.integers(0, ndim - 1), min_size=n, max_size=n, unique=True))
    src = [a - ndim if draw(st.booleans()) else a for a in src]
    dst = [a - ndim if draw(st.booleans()) else a for a in dst]
    if n == 1 and draw(st.booleans()):
        return {"source": src[0], "destination": dst[0]}
    return {"source": src, "destination": dst}


def _broadcast_to_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    return st.fixed_dictionaries({"shape": broadcast_targets(arg_shapes[0])})


def _unbroadcast_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    return st.fixed_dictionaries({"shape": unbroadcast_targets(arg_shapes[0])})


@st.composite
def _expand_dims_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    ndim = len(arg_shapes[0])
    k = draw(st.integers(1, 2))
    out_ndim = ndim + k
    axes = draw(st.lists(st.integers(0, out_ndim - 1), min_size=k, max_size=k, unique=True))
    axes = [a - out_ndim if draw(st.booleans()) else a for a in axes]
    return {"axis": axes[0] if k == 1 and draw(st.booleans()) else tuple(axes)}


@st.composite
def _squeeze_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    shape = arg_shapes[0]
    ones = [i for i, n in enumerate(shape) if n == 1]
    kind = draw(st.sampled_from(["none", "tuple"] + (["int"] if ones else [])))
    if kind == "none":
        return {"axis": None}
    if kind == "int":
        return {"axis": draw(st.sampled_from(ones)) - (len(shape) if draw(st.booleans()) else 0)}
    return {"axis": tuple(draw(st.lists(st.sampled_from(ones), unique=True))) if ones else ()}


def _stack_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    ndim = len(arg_shapes[0]) + 1
    return st.fixed_dictionaries({"axis": axis_arg(ndim)})


def _concatenate_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    ndim = len(arg_shapes[0])
    joinable = [
        a
        for a in range(ndim)
        if all(s[:a] + s[a + 1 :] == arg_shapes[0][:a] + arg_shapes[0][a + 1 :] for s in arg_shapes)
    ]
    return st.fixed_dictionaries(
        {"axis": st.sampled_from(joinable).flatmap(lambda a: st.sampled_from([a, a - ndim]))}
    )


def _tensordot_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    return st.fixed_dictionaries(
        {"axes": st.sampled_from(tensordot_axes_choices(arg_shapes[0], arg_shapes[1]))}
    )


@st.composite
def _where_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    out = np.broadcast_shapes(*arg_shapes)
    keep = draw(st.integers(0, len(out)))
    cond_shape = tuple(1 if draw(st.booleans()) else n for n in out[len(out) - keep :])
    return {"cond": draw(hnp.arrays(np.bool_, cond_shape))}


def _basic_index_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    index = hnp.basic_indices(arg_shapes[0], allow_newaxis=True, allow_ellipsis=True)
    return st.fixed_dictionaries({"index": index})


def _fancy_index_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    index = hnp.integer_array_indices(
        arg_shapes[0], result_shape=hnp.array_shapes(min_dims=0, max_dims=2, max_side=4)
    )
    return st.fixed_dictionaries({"index": index})


@st.composite
def _repeated_index_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    """A list of (often repeated) ints on one axis, alone or mixed with basic indices."""
    shape = arg_shapes[0]
    axis = draw(st.integers(0, len(shape) - 1))
    n = shape[axis]
    ints = draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=6))
    if draw(st.booleans()):  # force a repeat: the scatter-add must accumulate
        ints.append(ints[0])
    fancy: Any = ints if draw(st.booleans()) else np.array(ints)
    if axis == 0 and draw(st.booleans()):
        return {"index": fancy}
    use_ellipsis = axis == len(shape) - 1 and draw(st.booleans())
    lead: tuple[Any, ...] = (...,) if use_ellipsis else (slice(None),) * axis
    return {"index": (*lead, fancy)}


@st.composite
def _mask_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    """A boolean mask over ``k`` consecutive axes, alone or after a leading ``:``."""
    shape = arg_shapes[0]
    start = draw(st.integers(0, len(shape) - 1)) if draw(st.booleans()) else 0
    k = draw(st.integers(1, len(shape) - start))
    mask = draw(hnp.arrays(np.bool_, shape[start : start + k]))
    return {"mask": (slice(None),) * start + (mask,) if start else mask}


@st.composite
def _mixed_index_params(draw: st.DrawFn, arg_shapes: tuple[Shape, ...]) -> Params:
    """Per axis a slice, an int or an int array (broadcasting together, repeats likely):
    advanced indices next to or separated by slices, NumPy's two placement rules."""
    shape = arg_shapes[0]
    fancy_shape = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=4))
    index: list[Any] = []
    for n in shape:
        kind = draw(st.sampled_from(["slice", "int", "array"]))
        if kind == "slice":
            start = draw(st.none() | st.integers(-n, n))
            step = draw(st.sampled_from([None, 1, 2, -1]))
            index.append(slice(start, None, step))
        elif kind == "int":
            index.append(draw(st.integers(-n, n - 1)))
        else:
            ints = st.integers(-n, n - 1)
            index.append(draw(hnp.arrays(np.intp, fancy_shape, elements=ints)))
    return {"index": tuple(index)}


def _power_exponent_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    return st.fixed_dictionaries(
        {"p": st.sampled_from([0, 1, 2, 3, -1, -2, 0.5, -1.5, 2.5, 0.0, 1.0])}
    )


def _left_operand_params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    return st.fixed_dictionaries(
        {"c": hnp.arrays(np.float64, arg_shapes[0], elements=POSITIVE.elements())}
    )


# ---- the rows ------------------------------------------------------------------------------
def _unary(name: str, fn: Callable[[Any], Any], domain: Domain = REAL, **kw: Any) -> OpSpec:
    kw.setdefault("covers", (name,))
    kw.setdefault("shapes", single())
    return OpSpec(name, fn, domain=domain, **kw)


def _binary(
    name: str, fn: Callable[[Any, Any], Any], domain: Domain | tuple[Domain, ...] = REAL, **kw: Any
) -> OpSpec:
    kw.setdefault("covers", (name,))
    return OpSpec(name, fn, broadcast_pairs(), domain=domain, **kw)


def _stack(*xs: Any, axis: int) -> Any:
    return tnp.stack(xs, axis=axis)


def _concatenate(*xs: Any, axis: int | None) -> Any:
    return tnp.concatenate(list(xs), axis=axis)


def _iterate_rows(x: Any) -> Any:
    return tnp.stack([row * float(i + 1) for i, row in enumerate(x)])


def _array_nested(x: Any) -> Any:
    return tnp.array([[x, 2.0], [x * x, -x]])


def _method_reshape(x: Any, shape: tuple[int, ...]) -> Any:
    return x.reshape(*shape) if len(shape) > 1 else x.reshape(shape)


def _method_transpose(x: Any, axes: tuple[int, ...]) -> Any:
    return x.transpose(*axes) if len(axes) > 1 else x.transpose(axes)


OP_SPECS: tuple[OpSpec, ...] = (
    # ---- elementwise, one argument -----------------------------------------------------
    _unary("sin", tnp.sin),
    _unary("cos", tnp.cos),
    _unary("tan", tnp.tan, SMALL),
    _unary("exp", tnp.exp),
    _unary("log", tnp.log, POSITIVE),
    _unary("tanh", tnp.tanh),
    _unary("sqrt", tnp.sqrt, POSITIVE),
    _unary("abs", tnp.abs, DISTINCT),
    _unary("absolute", tnp.absolute, DISTINCT),
    _unary("square", tnp.square),
    _unary("sign", tnp.sign, DISTINCT),
    _unary("negative", tnp.negative),
    _unary("neg_operator", lambda x: -x, covers=("op:negative",)),
    _unary("abs_builtin", lambda x: abs(x), DISTINCT, covers=("op:abs",)),
    _unary("numpy_ufunc_dispatch", lambda x: np.sin(x) * np.exp(x) - np.square(x), covers=()),
    _unary(
        "reflected_scalar_operators",
        lambda x: (1.5 - x) * (2.0 + x) + 3.0 * x - x / 4.0,
        covers=("op:add", "op:subtract", "op:multiply", "op:divide"),
    ),
    _unary("rtruediv", lambda x: 3.0 / x, NONZERO, covers=("op:divide",)),
    _unary("rpow", lambda x: 1.5**x + tnp.power(2.0, x), covers=("op:power", "power")),
    # ---- elementwise, two or more arguments (broadcasting) -------------------------------
    _binary("add", tnp.add),
    _binary("subtract", tnp.subtract),
    _binary("multiply", tnp.multiply),
    _binary("divide", tnp.divide, (REAL, NONZERO)),
    _binary("true_divide", tnp.true_divide, (REAL, NONZERO)),
    _binary("power", tnp.power, (POSITIVE, REAL)),
    _binary("maximum", tnp.maximum, DISTINCT),
    _binary("minimum", tnp.minimum, DISTINCT),
    _unary("maximum_with_scalar", lambda x: tnp.maximum(x, 0.0), DISTINCT, covers=("maximum",)),
    _unary("minimum_scalar_first", lambda x: tnp.minimum(0.0, x), DISTINCT, covers=("minimum",)),
    _binary("add_operator", lambda x, y: x + y, covers=("op:add",)),
    _binary("subtract_operator", lambda x, y: x - y, covers=("op:subtract",)),
    _binary("multiply_operator", lambda x, y: x * y, covers=("op:multiply",)),
    _binary("divide_operator", lambda x, y: x / y, (REAL, NONZERO), covers=("op:divide",)),
    _binary("power_operator", lambda x, y: x**y, (POSITIVE, REAL), covers=("op:power",)),
    OpSpec(
        "power_constant_exponent",
        lambda x, p: x**p,
        single(),
        _power_exponent_params,
        POSITIVE,
        covers=("op:power",),
    ),
    OpSpec(
        "power_integer_exponent_any_sign",
        lambda x, p: tnp.power(x, p),
        single(),
        lambda s: st.fixed_dictionaries({"p": st.sampled_from([2, 3])}),
        REAL,
        covers=("power",),
    ),
    OpSpec(
        "ndarray_left_operand",
        lambda x, c: c * x - c / (x * x + 1.0),
        single(),
        _left_operand_params,
        covers=("op:multiply", "op:divide", "op:add"),
    ),
    OpSpec(
        "where",
        lambda x, y, cond: tnp.where(cond, x, y),
        mutually_broadcastable(2),
        _where_params,
        covers=("where",),
    ),
    OpSpec(
        "where_constant_branch",
        lambda x, cond: tnp.where(cond, 0.5, x * x),
        single(),
        _where_params,
        covers=("where",),
    ),
    _unary(
        "where_traced_condition",
        lambda x: tnp.where(x > 0, x * x, 0.1 * x),
        DISTINCT,
        covers=("where",),
    ),
    # ---- reductions ---------------------------------------------------------------------
    OpSpec("sum", tnp.sum, single(), _sum_params, covers=("sum",)),
    OpSpec("mean", tnp.mean, single(min_side=1), _reduction_params, covers=("mean",)),
    OpSpec("prod", tnp.prod, single(), _sum_params, UNIT, covers=("prod",)),
    OpSpec("max", tnp.max, single(min_side=1), _reduction_params, DISTINCT, covers=("max",)),
    OpSpec("amax", tnp.amax, single(min_side=1), _reduction_params, DISTINCT, covers=("amax",)),
    OpSpec("min", tnp.min, single(min_side=1), _reduction_params, DISTINCT, covers=("min",)),
    OpSpec("amin", tnp.amin, single(min_side=1), _reduction_params, DISTINCT, covers=("amin",)),
    OpSpec(
        "sum_method",
        lambda x, axis, keepdims: x.sum(axis, keepdims=keepdims),
        single(),
        _reduction_params,
        covers=("op:sum",),
    ),
    OpSpec(
        "mean_method",
        lambda x, axis, keepdims: x.mean(axis=axis, keepdims=keepdims),
        single(min_side=1),
        _reduction_params,
        covers=("op:mean",),
    ),
    OpSpec(
        "prod_method",
        lambda x, axis, keepdims: x.prod(axis=axis, keepdims=keepdims),
        single(),
        _reduction_params,
        UNIT,
        covers=("op:prod",),
    ),
    OpSpec(
        "max_method",
        lambda x, axis, keepdims: x.max(axis=axis, keepdims=keepdims),
        single(min_side=1),
        _reduction_params,
        DISTINCT,
        covers=("op:max",),
    ),
    OpSpec(
        "min_method",
        lambda x, axis, keepdims: x.min(axis=axis, keepdims=keepdims),
        single(min_side=1),
        _reduction_params,
        DISTINCT,
        covers=("op:min",),
    ),
    _unary(
        "numpy_function_dispatch",
        lambda x: np.sum(np.square(np.transpose(x))) + np.sum(np.reshape(x, (-1,))),
        covers=(),
    ),
    # ---- products -----------------------------------------------------------------------
    OpSpec("matmul", tnp.matmul, matmul_shapes(), covers=("matmul",)),
    OpSpec("matmul_operator", lambda x, y: x @ y, matmul_shapes(), covers=("op:matmul",)),
    OpSpec("dot", tnp.dot, dot_shapes(), covers=("dot",)),
    OpSpec("dot_method", lambda x, y: x.dot(y), dot_shapes(), covers=("op:dot",)),
    OpSpec(
        "outer", tnp.outer, st.tuples(shapes(max_dims=2), shapes(max_dims=2)), covers=("outer",)
    ),
    OpSpec(
        "tensordot",
        lambda x, y, axes: tnp.tensordot(x, y, axes),
        tensordot_shapes(),
        _tensordot_params,
        covers=("tensordot",),
    ),
    # ---- shape ----------------------------------------------------------------------------
    OpSpec("reshape", tnp.reshape, single(), _reshape_order_params, covers=("reshape",)),
    OpSpec("reshape_method", _method_reshape, single(), _reshape_params, covers=("op:reshape",)),
    OpSpec("ravel", tnp.ravel, single(), _order_params, covers=("ravel",)),
    _unary("ravel_method", lambda x: x.ravel(), covers=("op:ravel",)),
    _unary("flatten_method", lambda x: x.flatten(), covers=("op:ravel",)),
    OpSpec("transpose", tnp.transpose, single(), _transpose_params, covers=("transpose",)),
    OpSpec(
        "transpose_method",
        _method_transpose,
        single(min_dims=1),
        _method_transpose_params,
        covers=("op:transpose",),
    ),
    _unary("T_property", lambda x: x.T, covers=("op:transpose",)),
    OpSpec("moveaxis", tnp.moveaxis, single(min_dims=1), _moveaxis_params, covers=("moveaxis",)),
    OpSpec(
        "broadcast_to",
        tnp.broadcast_to,
        broadcast_inputs(),
        _broadcast_to_params,
        covers=("broadcast_to",),
    ),
    OpSpec("unbroadcast", tnp.unbroadcast, single(), _unbroadcast_params, covers=("unbroadcast",)),
    OpSpec(
        "expand_dims",
        tnp.expand_dims,
        single(max_dims=2),
        _expand_dims_params,
        covers=("expand_dims",),
    ),
    OpSpec("squeeze", tnp.squeeze, squeezable_shapes(), _squeeze_params, covers=("squeeze",)),
    OpSpec(
        "squeeze_method",
        lambda x, axis: x.squeeze(axis),
        squeezable_shapes(),
        _squeeze_params,
        covers=("op:squeeze",),
    ),
    OpSpec("stack", _stack, same_shapes(), _stack_params, covers=("stack",)),
    OpSpec(
        "concatenate", _concatenate, concat_shapes(), _concatenate_params, covers=("concatenate",)
    ),
    OpSpec(
        "concatenate_axis_none",
        lambda *xs: tnp.concatenate(list(xs), axis=None),
        st.lists(shapes(), min_size=1, max_size=3).map(tuple),
        covers=("concatenate",),
    ),
    OpSpec("array_of_traced", lambda x, y: tnp.array([x, y]), same_shapes(2, 2), covers=("array",)),
    _unary(
        "array_nested_with_constants", _array_nested, covers=("array",), shapes=single(max_dims=0)
    ),
    OpSpec(
        "asarray_of_traced",
        lambda x, y: tnp.asarray([y, x, y]),
        same_shapes(2, 2),
        covers=("asarray",),
    ),
    _unary("asarray_of_array", lambda x: tnp.asarray(x) * 2.0, covers=("asarray",)),
    _unary("astype", lambda x: tnp.astype(x, np.float64), covers=("astype",)),
    _unary("astype_method", lambda x: x.astype(np.float64), covers=("op:astype",)),
    _unary(
        "astype_float32",
        lambda x: x.astype(np.float32),
        covers=("op:astype",),
        rtol=2e-3,
        atol=2e-3,
        eps=1e-2,
    ),
    _unary("iterate_rows", _iterate_rows, shapes=single(min_dims=1, min_side=1), covers=()),
    # ---- indexing -------------------------------------------------------------------------
    OpSpec(
        "getitem_basic",
        lambda x, index: x[index],
        single(),
        _basic_index_params,
        covers=("op:getitem",),
    ),
    OpSpec(
        "getitem_fancy",
        lambda x, index: x[index],
        single(min_dims=1, min_side=1),
        _fancy_index_params,
        covers=("op:getitem",),
    ),
    OpSpec(
        "getitem_repeated_indices",
        lambda x, index: x[index],
        single(min_dims=1, min_side=1),
        _repeated_index_params,
        covers=("op:getitem",),
    ),
    OpSpec(
        "getitem_mixed_advanced",
        lambda x, index: x[index],
        single(min_dims=1, min_side=1),
        _mixed_index_params,
        covers=("op:getitem",),
    ),
    OpSpec(
        "getitem_boolean_mask",
        lambda x, mask: x[mask],
        single(min_dims=1),
        _mask_params,
        covers=("op:getitem",),
    ),
)

# Functions of ``transforms.numpy`` that carry no derivative, with their arity: the coverage
# test checks that each really gives a plain (untraced) value under every transform.
NONDIFFERENTIABLE: dict[str, int] = {
    "equal": 2,
    "not_equal": 2,
    "less": 2,
    "less_equal": 2,
    "greater": 2,
    "greater_equal": 2,
    "zeros_like": 1,
    "ones_like": 1,
}


def _check_table(specs: Sequence[OpSpec]) -> None:
    names = [s.name for s in specs]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise ValueError(f"op_specs: duplicate row names {sorted(duplicates)}")


# ---- family tables ---------------------------------------------------------------------------
# Each family of the wider NumPy surface keeps its rows in tests/specs_<family>.py; they are
# imported here, after OpSpec and the helpers they use are defined, and joined into the table.
def _join_families() -> None:
    global OP_SPECS
    import specs_construct
    import specs_elementwise
    import specs_extras
    import specs_fft
    import specs_linalg
    import specs_nn
    import specs_reductions
    import specs_scipy_integrate
    import specs_scipy_linalg
    import specs_scipy_signal
    import specs_scipy_special
    import specs_scipy_stats

    families = (specs_elementwise, specs_reductions, specs_construct, specs_linalg, specs_fft)
    for family in (
        *families,
        specs_extras,
        specs_scipy_special,
        specs_scipy_stats,
        specs_nn,
        specs_scipy_linalg,
        specs_scipy_signal,
        specs_scipy_integrate,
    ):
        OP_SPECS = OP_SPECS + tuple(family.SPECS)
        NONDIFFERENTIABLE.update(family.NONDIFFERENTIABLE)


_join_families()
_check_table(OP_SPECS)
