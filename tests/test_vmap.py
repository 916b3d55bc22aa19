"""``vmap`` against a Python loop over the examples, and ``vmap`` nested with derivatives.

Every expected value is computed independently: a loop over the examples calling the
per-example function on plain NumPy arrays, or an analytic derivative written in NumPy.
Also covers in_axes/out_axes in every accepted form, axis_size, pytrees, vmap's errors,
nesting in every order, chunked Jacobians/Hessians, ``hvp``, and zero-size Jacobians.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from numpy.testing import assert_allclose

import transforms as T
import transforms.numpy as tnp

RTOL = 1e-10
ATOL = 1e-12

tree_flatten = T.tree_util.tree_flatten
tree_unflatten = T.tree_util.tree_unflatten


def close(actual: Any, expected: Any, rtol: float = RTOL, atol: float = ATOL) -> None:
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert_allclose(actual, expected, rtol=rtol, atol=atol)


def tree_close(actual: Any, expected: Any, rtol: float = RTOL, atol: float = ATOL) -> None:
    a_leaves, a_tree = tree_flatten(actual)
    e_leaves, e_tree = tree_flatten(expected)
    assert a_tree == e_tree, (a_tree, e_tree)
    for a, e in zip(a_leaves, e_leaves, strict=True):
        close(a, e, rtol, atol)


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def batch_of(examples: Sequence[np.ndarray], axis: int | None) -> np.ndarray:
    """The examples stacked along ``axis`` (``None``: one unbatched example)."""
    return examples[0] if axis is None else np.stack(examples, axis=axis)


def loop(
    f: Callable[..., Any],
    per_example: Sequence[Sequence[Any]],
    out_axes: Any = 0,
) -> Any:
    """``f`` applied example by example (plain NumPy values), results stacked on ``out_axes``.

    ``per_example[k]`` is the argument list of example ``k``; ``out_axes`` is an int or a
    flat tuple with one axis per output leaf (``None``: take example 0's value).
    """
    outs = [f(*args) for args in per_example]
    leaves = [tree_flatten(o)[0] for o in outs]
    tree = tree_flatten(outs[0])[1]
    axes = [out_axes] * len(leaves[0]) if not isinstance(out_axes, tuple) else list(out_axes)
    stacked = []
    for j, ax in enumerate(axes):
        if ax is None:
            stacked.append(np.asarray(leaves[0][j]))
        else:
            stacked.append(np.stack([np.asarray(lv[j]) for lv in leaves], axis=ax))
    return tree_unflatten(tree, stacked)


def check_vmap(
    f: Callable[..., Any],
    examples: Sequence[Sequence[np.ndarray]],
    in_axes: Sequence[int | None],
    out_axes: Any = 0,
) -> None:
    """vmap(f) on the stacked examples equals the loop. ``examples[i]`` lists argument
    ``i``'s per-example values (one value for an unbatched argument)."""
    batched = [batch_of(ex, ax) for ex, ax in zip(examples, in_axes, strict=True)]
    size = max(len(ex) for ex, ax in zip(examples, in_axes, strict=True) if ax is not None)
    per_example = [
        [ex[0] if ax is None else ex[k] for ex, ax in zip(examples, in_axes, strict=True)]
        for k in range(size)
    ]
    expected = loop(f, per_example, out_axes)
    actual = T.vmap(f, in_axes=tuple(in_axes), out_axes=out_axes)(*batched)
    tree_close(actual, expected)


B = 4  # batch size used throughout


def ex(shape: tuple[int, ...], seed: int, n: int = B) -> list[np.ndarray]:
    r = rng(seed)
    return [r.standard_normal(shape) for _ in range(n)]


# ---------------------------------------------------------------------------------------
# Representative functions, vmap vs loop
# ---------------------------------------------------------------------------------------
C34 = rng(99).standard_normal((3, 4))  # an unbatched constant closed over or passed in

FUNCTIONS: dict[str, tuple[Callable[..., Any], list[tuple[int, ...]], tuple[int | None, ...]]] = {
    # name: (f, per-example shapes of the arguments, in_axes)
    "elementwise": (lambda x: tnp.sin(x) * tnp.exp(x) + x**2 - 1.0 / (1.0 + x * x), [(3, 4)], (0,)),
    "elementwise_axis1": (lambda x: tnp.tanh(x) * tnp.cos(x), [(3, 4)], (1,)),
    "binary_both_batched_diff_axes": (
        lambda x, y: x * y - y / (2 + x**2),
        [(3, 4), (3, 4)],
        (0, 2),
    ),
    "broadcast_unbatched_matrix": (lambda x, c: x * c + c, [(4,), (3, 4)], (0, None)),
    "broadcast_unbatched_row": (lambda x, c: x - c, [(3, 4), (4,)], (-1, None)),
    "broadcast_batched_lower_rank": (lambda x, y: x * y, [(3,), (2, 3)], (0, None)),
    "broadcast_batched_scalar_per_example": (lambda s, c: s * c + s, [(), (3, 4)], (0, None)),
    "broadcast_closure_constant": (lambda x: x * C34 + tnp.sum(C34), [(3, 4)], (1,)),
    "sum_all": (lambda x: tnp.sum(x), [(3, 4)], (0,)),
    "sum_axis0": (lambda x: tnp.sum(x, axis=0), [(3, 4)], (1,)),
    "sum_axis_neg_keepdims": (lambda x: tnp.sum(x, axis=-1, keepdims=True), [(3, 4)], (0,)),
    "sum_axis_tuple": (lambda x: tnp.sum(x, axis=(0, 2)), [(2, 3, 4)], (2,)),
    "mean_keepdims": (lambda x: tnp.mean(x, axis=1, keepdims=True), [(3, 4)], (-1,)),
    "max_axis": (lambda x: tnp.max(x, axis=0), [(3, 4)], (1,)),
    "max_all_keepdims": (lambda x: tnp.max(x, keepdims=True), [(3, 4)], (0,)),
    "min_axis": (lambda x: tnp.min(x, axis=-1), [(3, 4)], (0,)),
    "prod_axis": (lambda x: tnp.prod(x, axis=1), [(3, 4)], (0,)),
    "reshape_minus1": (lambda x: tnp.reshape(x, (4, -1)), [(2, 3, 4)], (0,)),
    "reshape_flat": (lambda x: tnp.reshape(x, (-1,)), [(3, 4)], (1,)),
    "reshape_F": (lambda x: tnp.reshape(x, (4, 3), order="F"), [(3, 4)], (0,)),
    "reshape_F_minus1": (lambda x: tnp.reshape(x, (2, -1), order="F"), [(2, 3, 2)], (2,)),
    "ravel": (lambda x: tnp.ravel(x), [(3, 4)], (1,)),
    "dot_T": (lambda x: x.T, [(3, 4)], (0,)),
    "transpose_axes": (lambda x: tnp.transpose(x, (1, 2, 0)), [(2, 3, 4)], (1,)),
    "transpose_default_3d": (lambda x: tnp.transpose(x), [(2, 3, 4)], (-1,)),
    "moveaxis": (lambda x: tnp.moveaxis(x, 0, -1), [(2, 3, 4)], (0,)),
    "expand_squeeze": (lambda x: tnp.squeeze(tnp.expand_dims(x, 1), axis=1) * 2, [(3, 4)], (1,)),
    "getitem_int": (lambda x: x[1], [(3, 4)], (0,)),
    "getitem_neg_int": (lambda x: x[-1, 2], [(3, 4)], (1,)),
    "getitem_slice": (lambda x: x[1:3, ::2], [(3, 4)], (0,)),
    "getitem_ellipsis": (lambda x: x[..., 1], [(2, 3, 4)], (1,)),
    "getitem_ellipsis_middle": (lambda x: x[0, ..., 1:], [(2, 3, 4)], (2,)),
    "getitem_none": (lambda x: x[None, :, 1], [(3, 4)], (0,)),
    "getitem_none_ellipsis": (lambda x: x[..., None, 2], [(3, 4)], (-1,)),
    "getitem_fancy_repeated": (lambda x: x[[0, 2, 2]], [(3, 4)], (0,)),
    "getitem_fancy_pair": (lambda x: x[[0, 1, 2], [3, 0, 0]], [(3, 4)], (1,)),
    "getitem_fancy_second_axis": (lambda x: x[:, [3, 1]], [(3, 4)], (0,)),
    "getitem_fancy_2d_index": (lambda x: x[np.array([[0, 1], [2, 0]])], [(3, 4)], (1,)),
    "getitem_fancy_separated": (lambda x: x[[0, 1], :, [2, 3]], [(2, 3, 4)], (0,)),
    "getitem_fancy_ellipsis": (lambda x: x[..., [0, 0, 3]], [(2, 3, 4)], (1,)),
    "getitem_bool_full": (
        lambda x: x[np.array([[True, False, True, False]] * 3)],
        [(3, 4)],
        (0,),
    ),
    "getitem_bool_rows": (lambda x: x[np.array([True, False, True])], [(3, 4)], (1,)),
    "getitem_bool_cols_ellipsis": (
        lambda x: x[..., np.array([False, True, True, False])],
        [(2, 3, 4)],
        (-1,),
    ),
    "stack_unbatched": (lambda x, c: tnp.stack([x, c, x * c]), [(3, 4), (3, 4)], (0, None)),
    "stack_axis_last": (lambda x, y: tnp.stack([y, x], axis=-1), [(3,), (3,)], (0, 1)),
    "stack_closure_constant": (lambda x: tnp.stack([C34, x], axis=1), [(3, 4)], (1,)),
    "concat_unbatched": (
        lambda x, c: tnp.concatenate([x, c, x], axis=-1),
        [(3, 4), (3, 2)],
        (1, None),
    ),
    "concat_axis0": (lambda x, y: tnp.concatenate([y, x]), [(2, 4), (3, 4)], (0, 0)),
    "where_unbatched_branch": (lambda x, c: tnp.where(x > 0, x, c), [(3, 4), (3, 4)], (0, None)),
    "where_unbatched_cond": (
        lambda x, y: tnp.where(C34 > 0, x, y * 2),
        [(3, 4), (3, 4)],
        (1, 0),
    ),
    "where_scalar_branch": (lambda x: tnp.where(x > 0.5, x, 0.0), [(3, 4)], (0,)),
    "at_set": (lambda x, v: tnp.at(x)[1].set(v), [(3, 4), (4,)], (0, 0)),
    "at_set_unbatched_x": (lambda x, v: tnp.at(x)[:, 2].set(v), [(3, 4), (3,)], (None, 0)),
    "at_set_unbatched_v": (lambda x, v: tnp.at(x)[[0, 2]].set(v), [(3, 4), (4,)], (1, None)),
    "at_set_scalar": (lambda x: tnp.at(x)[..., 0].set(5.0), [(3, 4)], (0,)),
    "at_add_repeated": (lambda x, v: tnp.at(x)[[0, 0, 2]].add(v), [(3, 4), (3, 4)], (0, 1)),
    "at_add_unbatched_x": (lambda x, v: tnp.at(x)[[1, 1]].add(v), [(3,), ()], (None, 0)),
    "at_multiply": (lambda x, v: tnp.at(x)[1:].multiply(v), [(3, 4), (4,)], (0, 0)),
    "at_get": (lambda x: tnp.at(x)[[2, 0]].get(), [(3, 4)], (-1,)),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_vmap_matches_loop(name: str) -> None:
    f, shapes, in_axes = FUNCTIONS[name]
    examples = [ex(s, seed) for seed, s in enumerate(shapes)]
    check_vmap(f, examples, in_axes)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_vmap_of_grad_matches_loop(name: str) -> None:
    # per-example gradients of <f(*args), W> with respect to every argument
    f, shapes, in_axes = FUNCTIONS[name]
    examples = [ex(s, seed) for seed, s in enumerate(shapes)]
    out_shape = np.shape(f(*[e[0] for e in examples]))
    W = rng(42).standard_normal(out_shape)
    g = T.grad(lambda *a: tnp.sum(f(*a) * W), argnums=tuple(range(len(shapes))))
    check_vmap(g, examples, in_axes)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_vmap_of_jvp_matches_loop(name: str) -> None:
    f, shapes, in_axes = FUNCTIONS[name]
    n = len(shapes)
    examples = [ex(s, seed) for seed, s in enumerate(shapes)]
    tangents = [ex(s, 50 + seed) for seed, s in enumerate(shapes)]

    def push(*a: Any) -> Any:
        return T.jvp(f, a[:n], a[n:])

    check_vmap(push, examples + tangents, in_axes + in_axes)


def test_vmap_max_with_ties_value_and_grad() -> None:
    xs = [np.array([1.0, 3.0, 3.0, 0.0]), np.array([2.0, 2.0, 2.0, 2.0]), np.array([5.0, 1, 2, 4])]
    check_vmap(lambda x: tnp.max(x), [xs], (0,))
    g = T.vmap(T.grad(lambda x: tnp.max(x)))(np.stack(xs))
    expected = np.stack([T.grad(lambda x: tnp.max(x))(x) for x in xs])
    close(g, expected)
    # whatever the tie convention, a max's gradient sums to 1 and lives on the maxima only
    close(np.sum(g, axis=1), np.ones(3))
    for row, x in zip(g, xs, strict=True):
        assert np.all(row[x < x.max()] == 0)


def test_vmap_prod_with_zeros_value_and_grad() -> None:
    xs = [np.array([2.0, 0.0, 3.0]), np.array([0.0, 0.0, 5.0]), np.array([1.5, 2.0, -1.0])]
    check_vmap(lambda x: tnp.prod(x), [xs], (0,))
    g = T.vmap(T.grad(lambda x: tnp.prod(x)))(np.stack(xs))
    # d/dx_i prod(x) = prod_{j != i} x_j, computed by a loop
    expected = np.array([[np.prod(np.delete(x, i)) for i in range(3)] for x in xs])
    close(g, expected)
    close(g, [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0], [-2.0, -1.5, 3.0]])


# ---------------------------------------------------------------------------------------
# matmul in every 1-d / 2-d / batched combination, batched on either or both sides
# ---------------------------------------------------------------------------------------
MATMUL_SHAPES = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)),
    ((2, 3), (5, 3, 4)),
    ((5, 2, 3), (5, 3, 4)),
    ((5, 2, 3), (3,)),
    ((3,), (5, 3, 4)),
    ((5, 2, 3), (1, 3, 4)),
]
MATMUL_AXES = [(0, 0), (0, None), (None, 0), (-1, 1), (1, -1)]


@pytest.mark.parametrize("axes", MATMUL_AXES, ids=str)
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_vmap_matmul(
    shapes: tuple[tuple[int, ...], tuple[int, ...]], axes: tuple[Any, Any]
) -> None:
    (sa, sb) = shapes
    a, b = ex(sa, 1), ex(sb, 2)
    check_vmap(lambda x, y: x @ y, [a, b], axes)
    check_vmap(tnp.matmul, [a, b], axes)


def test_vmap_dot_and_tensordot_vs_loop() -> None:
    check_vmap(tnp.dot, [ex((2, 3), 0), ex((3, 4), 1)], (0, None))
    check_vmap(lambda x, y: tnp.tensordot(x, y, axes=1), [ex((2, 3), 0), ex((3, 4), 1)], (1, 0))
    check_vmap(lambda x, y: tnp.outer(x, y), [ex((3,), 0), ex((2,), 1)], (0, None))


BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b,
    "subtract": lambda a, b: a - b,
    "multiply": lambda a, b: a * b,
    "divide": lambda a, b: a / b,
    "power": lambda a, b: (abs(a) + 0.5) ** (abs(b) + 0.5),
    "maximum": tnp.maximum,
    "arctan2": tnp.arctan2,
}
UNBATCHED: dict[str, Any] = {
    "int": 2,
    "float": 2.5,
    "0-d float64": np.array(1.5),
    "0-d float32": np.array(1.5, dtype=np.float32),
    "vector": np.linspace(-1.0, 1.0, 4),
    "matrix": rng(7).standard_normal((3, 4)),
    "higher rank": rng(8).standard_normal((2, 3, 4)),
}


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("unbatched", list(UNBATCHED))
@pytest.mark.parametrize("op", list(BINARY))
def test_vmap_binary_with_one_unbatched_operand(op: str, unbatched: str, axis: int) -> None:
    """One batched operand and a number or array, on either side, with the batch axis
    anywhere: equal to the loop in value and dtype (the short path for this case keeps the
    batch axis where it is)."""
    f, c = BINARY[op], UNBATCHED[unbatched]
    x = [e.astype(np.float32) for e in ex((3, 4), 3)]
    check_vmap(lambda a, b: f(a, b), [x, [c]], (axis, None))
    check_vmap(lambda b, a: f(b, a), [[c], x], (None, axis))
    mapped = T.vmap(f, in_axes=(axis, None))(batch_of(x, axis), c)
    assert mapped.dtype == f(x[0], c).dtype


@pytest.mark.parametrize(
    ("shapes", "axes"),
    [
        (((3, 4), (3, 4)), (1, 1)),  # same axis, same rank: the short path
        (((3, 4), (3, 4)), (2, 2)),
        (((3, 4), (1, 4)), (0, 0)),  # same axis, same rank, a per-example broadcast
        (((3, 4), (4,)), (0, 0)),  # same axis, lower rank: singleton axes inserted
        (((3, 4), (3, 4)), (0, 2)),  # different axes: moved to the front
        (((4,), (3, 4)), (1, 2)),
    ],
)
@pytest.mark.parametrize("op", list(BINARY))
def test_vmap_binary_with_both_operands_batched(
    op: str, shapes: tuple[tuple[int, ...], ...], axes: tuple[int, int]
) -> None:
    """Two batched operands, batch axes at the same or different positions and per-example
    ranks equal or not: equal to the loop in value and dtype."""
    f = BINARY[op]
    xs = [ex(shape, 5 + i) for i, shape in enumerate(shapes)]
    check_vmap(f, xs, axes)
    mapped = T.vmap(f, in_axes=axes)(*(batch_of(x, a) for x, a in zip(xs, axes, strict=True)))
    assert mapped.dtype == f(xs[0][0], xs[1][0]).dtype


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("f", [tnp.negative, tnp.tanh, lambda a: tnp.astype(a, np.float32)])
def test_vmap_unary_keeps_the_batch_axis_where_it_is(f: Any, axis: int) -> None:
    """A one-operand elementwise primitive acts on the batch as it lies (no axis moved):
    equal to the loop, with the batch axis of the output where out_axes puts it."""
    x = ex((3, 4), 4)
    check_vmap(f, [x], (axis,))
    check_vmap(lambda a: f(a) * np.arange(4.0), [x], (axis,))  # then meets a row


# ---------------------------------------------------------------------------------------
# in_axes / out_axes forms, axis_size, pytrees
# ---------------------------------------------------------------------------------------
def test_in_axes_int_applies_to_every_leaf() -> None:
    x, y = ex((3,), 0), ex((2, 3), 1)
    X, Y = np.stack(x, axis=1), np.stack(y, axis=1)
    f = lambda a, b: b @ a
    out = T.vmap(f, in_axes=1)(X, Y)
    close(out, np.stack([f(a, b) for a, b in zip(x, y, strict=True)]))


def test_in_axes_negative() -> None:
    x = ex((2, 3), 0)
    out = T.vmap(lambda a: tnp.sum(a, axis=0), in_axes=-1)(np.stack(x, axis=-1))
    close(out, np.stack([a.sum(axis=0) for a in x]))
    out = T.vmap(lambda a: a[0], in_axes=-2)(np.stack(x, axis=1))
    close(out, np.stack([a[0] for a in x]))


def test_in_axes_list_is_accepted_like_tuple() -> None:
    x, c = ex((3,), 0), rng(5).standard_normal(3)
    out = T.vmap(lambda a, b: a * b, in_axes=[0, None])(np.stack(x), c)
    close(out, np.stack([a * c for a in x]))


def test_in_axes_nested_tuple_prefix_for_tuple_argument() -> None:
    x, y = ex((3,), 0), ex((3,), 1)
    c = rng(5).standard_normal(3)

    def f(pair: Any, scale: Any) -> Any:
        a, b = pair
        return a * scale + b

    out = T.vmap(f, in_axes=((0, 1), None))((np.stack(x), np.stack(y, axis=1)), c)
    close(out, np.stack([a * c + b for a, b in zip(x, y, strict=True)]))


def test_in_axes_dict_prefix() -> None:
    w = rng(3).standard_normal((2, 3))
    xs = ex((3,), 4)

    def f(params: dict[str, Any], x: Any) -> Any:
        return tnp.tanh(params["w"] @ x + params["b"])

    b = rng(6).standard_normal(2)
    out = T.vmap(f, in_axes=({"w": None, "b": None}, 0))({"w": w, "b": b}, np.stack(xs))
    close(out, np.stack([np.tanh(w @ x + b) for x in xs]))
    bs = ex((2,), 7)
    out = T.vmap(f, in_axes=({"w": None, "b": 1}, 0))({"w": w, "b": np.stack(bs, 1)}, np.stack(xs))
    close(out, np.stack([np.tanh(w @ x + bb) for x, bb in zip(xs, bs, strict=True)]))


def test_in_axes_none_prefix_over_pytree() -> None:
    w = {"a": rng(1).standard_normal(3), "b": [rng(2).standard_normal(3)]}
    xs = ex((3,), 3)
    out = T.vmap(lambda p, x: p["a"] * x + p["b"][0], in_axes=(None, 0))(w, np.stack(xs))
    close(out, np.stack([w["a"] * x + w["b"][0] for x in xs]))


def test_pytree_in_and_out() -> None:
    xs, ys = ex((3,), 0), ex((2,), 1)

    def f(d: dict[str, Any]) -> Any:
        return {"s": tnp.sum(d["x"]) * d["y"], "pair": (d["x"] ** 2, tnp.max(d["y"]))}

    out = T.vmap(f)({"x": np.stack(xs), "y": np.stack(ys)})
    expected = loop(
        lambda d: {"s": np.sum(d["x"]) * d["y"], "pair": (d["x"] ** 2, np.max(d["y"]))},
        [[{"x": x, "y": y}] for x, y in zip(xs, ys, strict=True)],
    )
    tree_close(out, expected)


def test_out_axes_int_and_negative() -> None:
    xs = ex((2, 3), 0)
    f = lambda a: tnp.exp(a)
    for axis in (0, 1, 2, -1, -2, -3):
        out = T.vmap(f, out_axes=axis)(np.stack(xs))
        close(out, np.stack([np.exp(a) for a in xs], axis=axis))


def test_out_axes_none_for_unbatched_output() -> None:
    xs = ex((3,), 0)
    c = rng(9).standard_normal(2)
    out = T.vmap(lambda a: (a * 2, c + 1.0), out_axes=(0, None))(np.stack(xs))
    tree_close(out, (np.stack(xs) * 2, c + 1.0))


def test_out_axes_tuple_per_output() -> None:
    xs = ex((2, 3), 0)
    out = T.vmap(lambda a: (a, tnp.sum(a, axis=0), a.T), out_axes=(1, 0, -1))(np.stack(xs))
    tree_close(out, loop(lambda a: (a, a.sum(axis=0), a.T), [[a] for a in xs], (1, 0, -1)))


def test_out_axes_prefix_of_nested_output() -> None:
    xs = ex((3,), 0)
    out = T.vmap(lambda a: {"u": (a, a * 2), "v": a[0]}, out_axes={"u": 1, "v": 0})(np.stack(xs))
    expected = {
        "u": (np.stack(xs, axis=1), np.stack([a * 2 for a in xs], axis=1)),
        "v": np.stack([a[0] for a in xs]),
    }
    tree_close(out, expected)


def test_unbatched_output_is_broadcast_along_out_axis() -> None:
    c = rng(0).standard_normal((2, 3))
    out = T.vmap(lambda a: c, out_axes=1)(np.ones((4, 5)))
    close(out, np.broadcast_to(c[:, None, :], (2, 4, 3)))


def test_axis_size_when_no_input_is_mapped() -> None:
    c = rng(0).standard_normal(3)
    out = T.vmap(lambda a: tnp.sin(a), in_axes=None, axis_size=5)(c)
    close(out, np.broadcast_to(np.sin(c), (5, 3)))
    out = T.vmap(lambda: tnp.ones(2), axis_size=3)()
    close(out, np.ones((3, 2)))
    out = T.vmap(lambda a: a * 2, in_axes=None, axis_size=2, out_axes=1)(c)
    close(out, np.broadcast_to((c * 2)[:, None], (3, 2)))


def test_axis_size_consistent_with_mapped_input() -> None:
    xs = ex((3,), 0)
    out = T.vmap(lambda a: a + 1, axis_size=B)(np.stack(xs))
    close(out, np.stack(xs) + 1)


def test_vmap_python_scalar_and_kwargs_pass_through() -> None:
    xs = ex((3,), 0)

    def f(a: Any, *, scale: float) -> Any:
        return a * scale

    close(T.vmap(f)(np.stack(xs), scale=3.0), np.stack(xs) * 3.0)
    close(T.vmap(lambda a, s: a * s, in_axes=(0, None))(np.stack(xs), 2.0), np.stack(xs) * 2.0)


def test_vmap_python_control_flow_on_unbatched_values() -> None:
    xs = ex((3,), 0)

    def f(a: Any, n: Any) -> Any:
        out = a
        for _ in range(int(n)):
            out = out * 2
        return out if n > 1 else -out

    close(T.vmap(f, in_axes=(0, None))(np.stack(xs), 3), np.stack(xs) * 8)


def test_vmap_preserves_float32() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = T.vmap(lambda a: tnp.sum(a * a))(x)
    assert out.dtype == np.float32
    close(out, np.sum(x * x, axis=1))


# ---------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------
def test_error_inconsistent_sizes_names_the_sizes() -> None:
    with pytest.raises(ValueError, match="inconsistent") as info:
        T.vmap(lambda a, b: a + b)(np.ones((3, 2)), np.ones((4, 2)))
    assert "3" in str(info.value) and "4" in str(info.value)


def test_error_inconsistent_sizes_across_axes() -> None:
    with pytest.raises(ValueError, match="inconsistent") as info:
        T.vmap(lambda a, b: a + b, in_axes=(0, 1))(np.ones((3, 2)), np.ones((3, 2)))
    assert "(3, 2)" in str(info.value)


def test_error_axis_size_disagrees_with_input_names_both_sizes() -> None:
    with pytest.raises(ValueError, match="inconsistent") as info:
        T.vmap(lambda a: a, axis_size=5)(np.ones(3))
    message = str(info.value)
    assert "3" in message and "5" in message, message


def test_error_no_mapped_input_and_no_axis_size() -> None:
    with pytest.raises(ValueError, match="axis_size"):
        T.vmap(lambda a: a, in_axes=None)(np.ones(3))


def test_error_out_axes_none_for_batched_output() -> None:
    with pytest.raises(ValueError, match="out_axes"):
        T.vmap(lambda a: a * 2, out_axes=None)(np.ones((3, 2)))


def test_error_out_axes_none_in_tuple_for_batched_leaf() -> None:
    with pytest.raises(ValueError, match="out_axes"):
        T.vmap(lambda a: (a[0] * 0 + 1.0, a), out_axes=(0, None))(np.ones((3, 2)))


@pytest.mark.parametrize(
    "in_axes, args",
    [
        ((0, 0), (np.ones((3, 2)),)),
        ((0,), (np.ones((3, 2)), np.ones((3, 2)))),
        (((0, 0, 0),), ((np.ones(3), np.ones(3)),)),
        (({"a": 0},), ((np.ones(3),),)),
        (({"a": 0},), ({"b": np.ones(3)},)),
        (((0, 0),), (np.ones((3, 2)),)),
    ],
    ids=["too_many", "too_few", "tuple_len", "dict_for_tuple", "dict_keys", "tuple_for_leaf"],
)
def test_error_in_axes_not_matching_structure(in_axes: Any, args: tuple[Any, ...]) -> None:
    with pytest.raises(ValueError, match="in_axes"):
        T.vmap(lambda *a: a[0], in_axes=in_axes)(*args)


def test_error_in_axes_out_of_range() -> None:
    with pytest.raises(ValueError, match="in_axes"):
        T.vmap(lambda a: a, in_axes=2)(np.ones((3, 2)))


def test_error_out_axes_out_of_range() -> None:
    with pytest.raises(ValueError, match="out_axes"):
        T.vmap(lambda a: a, out_axes=3)(np.ones((3, 2)))


def test_error_bool_of_batched_value_suggests_where() -> None:
    def f(a: Any) -> Any:
        return a if a > 0 else -a

    with pytest.raises(TypeError, match=r"tnp\.where"):
        T.vmap(f)(np.array([1.0, -2.0, 3.0]))


def test_error_bool_of_batched_value_under_grad() -> None:
    def f(a: Any) -> Any:
        return a * 2 if tnp.sum(a) > 0 else a * 3

    with pytest.raises(TypeError, match=r"tnp\.where"):
        T.vmap(T.grad(lambda a: tnp.sum(f(a))))(np.ones((3, 2)))


def test_bool_of_unbatched_value_inside_vmap_is_fine() -> None:
    c = np.array(2.0)
    out = T.vmap(lambda a: a * 2 if c > 0 else a, in_axes=0)(np.ones(3))
    close(out, 2 * np.ones(3))


# ---------------------------------------------------------------------------------------
# Nesting in every order
# ---------------------------------------------------------------------------------------
def f_vec(x: Any) -> Any:
    """R^3 -> R^2, with analytic Jacobian ``jac_vec``."""
    return tnp.stack([tnp.sin(x[0]) * x[1], x[1] * x[2] ** 2 + tnp.exp(x[0])])


def jac_vec(x: np.ndarray) -> np.ndarray:
    return np.array(
        [
            [np.cos(x[0]) * x[1], np.sin(x[0]), 0.0],
            [np.exp(x[0]), x[2] ** 2, 2 * x[1] * x[2]],
        ]
    )


def f_scalar(x: Any) -> Any:
    """R^3 -> R: sum(x^3) + x0 x1 + sin(x2); gradient and Hessian below."""
    return tnp.sum(x**3) + x[0] * x[1] + tnp.sin(x[2])


def grad_scalar(x: np.ndarray) -> np.ndarray:
    return 3 * x**2 + np.array([x[1], x[0], np.cos(x[2])])


def hess_scalar(x: np.ndarray) -> np.ndarray:
    h = np.diag(6 * x)
    h[0, 1] = h[1, 0] = 1.0
    h[2, 2] -= np.sin(x[2])
    return h


XS = ex((3,), 11)
XB = np.stack(XS)


def test_vmap_of_vmap_vs_double_loop() -> None:
    A = rng(1).standard_normal((4, 3, 5))  # mapped over axis 0 outside, axis 1 inside
    c = rng(2).standard_normal(5)

    def f(row: Any, v: Any) -> Any:
        return tnp.sum(row * v) + tnp.max(row)

    out = T.vmap(T.vmap(f, in_axes=(0, None)), in_axes=(0, None))(A, c)
    expected = np.array([[f(A[i, j], c) for j in range(3)] for i in range(4)])
    close(out, expected)
    out = T.vmap(T.vmap(f, in_axes=(1, None), out_axes=0), in_axes=(2, None), out_axes=1)(
        np.transpose(A, (2, 1, 0)), c
    )
    close(out, expected.T)


def test_vmap_of_vmap_both_inputs_mapped_different_axes() -> None:
    X = rng(0).standard_normal((2, 3, 4))  # [i, j, :]
    Y = rng(1).standard_normal((4, 3))  # [:, j]

    def f(x: Any, y: Any) -> Any:
        return x @ y

    inner = T.vmap(f, in_axes=(0, 1))  # over j
    out = T.vmap(inner, in_axes=(0, None))(X, Y)  # over i
    close(out, np.array([[X[i, j] @ Y[:, j] for j in range(3)] for i in range(2)]))


def test_vmap_of_grad_per_example_gradients() -> None:
    w = rng(3).standard_normal(3)
    ys = rng(4).standard_normal(B)

    def loss(w: Any, x: Any, y: Any) -> Any:
        return (tnp.tanh(x @ w) - y) ** 2

    per_example = T.vmap(T.grad(loss), in_axes=(None, 0, 0))(w, XB, ys)
    expected = np.stack([T.grad(loss)(w, x, y) for x, y in zip(XS, ys, strict=True)])
    close(per_example, expected)
    analytic = np.stack(
        [
            2 * (np.tanh(x @ w) - y) * (1 - np.tanh(x @ w) ** 2) * x
            for x, y in zip(XS, ys, strict=True)
        ]
    )
    close(per_example, analytic)


def test_grad_of_vmap_summed_equals_sum_of_per_example_grads() -> None:
    w = rng(3).standard_normal(3)

    def loss(w: Any, x: Any) -> Any:
        return tnp.sin(x @ w) + tnp.sum(w * w * x)

    total = T.grad(lambda w: tnp.sum(T.vmap(loss, in_axes=(None, 0))(w, XB)))(w)
    expected = sum(np.cos(x @ w) * x + 2 * w * x for x in XS)
    close(total, expected)
    close(total, np.sum(T.vmap(T.grad(loss), in_axes=(None, 0))(w, XB), axis=0))


def block_diag_jac(xs: Sequence[np.ndarray]) -> np.ndarray:
    """The Jacobian of x -> vmap(f_vec)(x): shape (B, 2, B, 3), block diagonal."""
    out = np.zeros((len(xs), 2, len(xs), 3))
    for b, x in enumerate(xs):
        out[b, :, b, :] = jac_vec(x)
    return out


def test_jacfwd_of_vmap() -> None:
    close(T.jacfwd(T.vmap(f_vec))(XB), block_diag_jac(XS))


def test_jacrev_of_vmap() -> None:
    close(T.jacrev(T.vmap(f_vec))(XB), block_diag_jac(XS))


def test_vmap_of_jacrev_and_jacfwd() -> None:
    expected = np.stack([jac_vec(x) for x in XS])
    close(T.vmap(T.jacrev(f_vec))(XB), expected)
    close(T.vmap(T.jacfwd(f_vec))(XB), expected)
    # batch axis elsewhere in and out
    close(T.vmap(T.jacrev(f_vec), in_axes=1, out_axes=2)(XB.T), np.moveaxis(expected, 0, 2))


def test_jvp_of_vmap() -> None:
    ts = ex((3,), 12)
    out, tan = T.jvp(T.vmap(f_vec), (XB,), (np.stack(ts),))
    close(out, np.stack([np.asarray(f_vec(x)) for x in XS]))
    close(tan, np.stack([jac_vec(x) @ t for x, t in zip(XS, ts, strict=True)]))


def test_vmap_of_jvp() -> None:
    ts = ex((3,), 12)
    out, tan = T.vmap(lambda x, t: T.jvp(f_vec, (x,), (t,)))(XB, np.stack(ts))
    close(out, np.stack([np.asarray(f_vec(x)) for x in XS]))
    close(tan, np.stack([jac_vec(x) @ t for x, t in zip(XS, ts, strict=True)]))
    # unbatched tangent: the same direction for every example
    t0 = ts[0]
    _, tan = T.vmap(lambda x, t: T.jvp(f_vec, (x,), (t,)), in_axes=(0, None))(XB, t0)
    close(tan, np.stack([jac_vec(x) @ t0 for x in XS]))


def test_vmap_of_vjp_pullback() -> None:
    cts = ex((2,), 13)

    def pull(x: Any, ct: Any) -> Any:
        return T.vjp(f_vec, x)[1](ct)[0]

    out = T.vmap(pull)(XB, np.stack(cts))
    close(out, np.stack([c @ jac_vec(x) for x, c in zip(XS, cts, strict=True)]))


def test_vmap_of_hessian() -> None:
    close(T.vmap(T.hessian(f_scalar))(XB), np.stack([hess_scalar(x) for x in XS]))


def test_vmap_of_grad_of_grad_scalar() -> None:
    xs = np.array([0.3, -1.2, 2.0])
    f = lambda x: tnp.sin(x) * x**2
    d2 = T.vmap(T.grad(T.grad(f)))(xs)
    close(d2, (2 - xs**2) * np.sin(xs) + 4 * xs * np.cos(xs))


def test_grad_of_vmap_of_grad() -> None:
    # d/dw sum_b d/dx f(w, x_b), f = sum(w * x^2 * tanh(w)) elementwise: df/dx = 2 w x tanh(w)
    w = rng(3).standard_normal(3)
    f = lambda w, x: tnp.sum(w * x**2 * tnp.tanh(w))
    inner = T.vmap(T.grad(f, argnums=1), in_axes=(None, 0))
    out = T.grad(lambda w: tnp.sum(inner(w, XB)))(w)
    th = np.tanh(w)
    expected = sum(2 * x * (th + w * (1 - th**2)) for x in XS)
    close(out, expected)


def test_hessian_of_vmap_sum() -> None:
    # hessian of sum_b f_scalar(x_b) w.r.t. the (B, 3) batch is block diagonal
    h = T.hessian(lambda X: tnp.sum(T.vmap(f_scalar)(X)))(XB)
    expected = np.zeros((B, 3, B, 3))
    for b, x in enumerate(XS):
        expected[b, :, b, :] = hess_scalar(x)
    close(h, expected)


# ---------------------------------------------------------------------------------------
# chunk_size: same Jacobians and Hessians however the basis is split
# ---------------------------------------------------------------------------------------
def f_tree(p: dict[str, Any], z: Any) -> Any:
    """Pytree in, pytree out: {'a': (3,), 'b': ()} and z (2,) -> (out (2,), {'s': ()})."""
    a, b = p["a"], p["b"]
    out = tnp.stack([tnp.sum(a * a) * z[0], tnp.sin(b) * z[1] + a[2]])
    return out, {"s": tnp.sum(a) * b * tnp.sum(z**3)}


def f_tree_scalar(p: dict[str, Any], z: Any) -> Any:
    a, b = p["a"], p["b"]
    return tnp.sum(a**2 * b) + tnp.sin(b) * tnp.sum(z) + tnp.sum(a[:2] * z) * b


P0 = {"a": np.array([0.5, -1.0, 2.0]), "b": np.array(0.7)}
Z0 = np.array([1.5, -0.3])


@pytest.mark.parametrize("transform", [T.jacfwd, T.jacrev, T.hessian], ids=lambda t: t.__name__)
@pytest.mark.parametrize("chunk_size", [1, 2, 3])
def test_chunk_size_matches_unchunked_array(transform: Any, chunk_size: int) -> None:
    f = f_scalar if transform is T.hessian else f_vec
    x = XS[0]
    expected = hess_scalar(x) if transform is T.hessian else jac_vec(x)
    close(transform(f)(x), expected)
    close(transform(f, chunk_size=chunk_size)(x), expected)


@pytest.mark.parametrize("transform", [T.jacfwd, T.jacrev], ids=lambda t: t.__name__)
@pytest.mark.parametrize("chunk_size", [1, 2, 3])
def test_chunk_size_matches_unchunked_pytrees(transform: Any, chunk_size: int) -> None:
    full = transform(f_tree, argnums=(0, 1))(P0, Z0)
    chunked = transform(f_tree, argnums=(0, 1), chunk_size=chunk_size)(P0, Z0)
    tree_close(chunked, full)
    # and the values themselves, analytically (output tree outside, argument tree inside)
    a, b, z = P0["a"], P0["b"], Z0
    d_out_a = np.array([2 * a * z[0], [0.0, 0.0, 1.0]])
    d_out_b = np.array([0.0, np.cos(b) * z[1]])
    d_out_z = np.array([[np.sum(a * a), 0.0], [0.0, np.sin(b)]])
    d_s_a = np.ones(3) * b * np.sum(z**3)
    d_s_b = np.sum(a) * np.sum(z**3)
    d_s_z = np.sum(a) * b * 3 * z**2
    expected = (
        ({"a": d_out_a, "b": d_out_b}, d_out_z),
        {"s": ({"a": d_s_a, "b": d_s_b}, d_s_z)},
    )
    tree_close(chunked, expected)


@pytest.mark.parametrize("chunk_size", [1, 2, 3])
def test_hessian_chunk_size_pytree_inputs(chunk_size: int) -> None:
    full = T.hessian(f_tree_scalar, argnums=(0, 1))(P0, Z0)
    chunked = T.hessian(f_tree_scalar, argnums=(0, 1), chunk_size=chunk_size)(P0, Z0)
    tree_close(chunked, full)
    a, b, z = P0["a"], P0["b"], Z0
    # blocks H[i][j] = d^2 f / d arg_i d arg_j, arg order: a, b, z
    haa = np.diag(2 * b * np.ones(3))
    hab = 2 * a + np.array([z[0], z[1], 0.0])
    haz = np.array([[b, 0.0], [0.0, b], [0.0, 0.0]])
    hbb = -np.sin(b) * np.sum(z)
    hbz = np.cos(b) * np.ones(2) + a[:2]
    hzz = np.zeros((2, 2))
    expected = (
        {"a": ({"a": haa, "b": hab}, haz), "b": ({"a": hab, "b": hbb}, hbz)},
        ({"a": haz.T, "b": hbz}, hzz),
    )
    tree_close(chunked, expected)


def test_chunk_size_larger_than_total_and_invalid() -> None:
    x = XS[0]
    close(T.jacfwd(f_vec, chunk_size=100)(x), jac_vec(x))
    close(T.jacrev(f_vec, chunk_size=100)(x), jac_vec(x))
    with pytest.raises(ValueError, match="chunk_size"):
        T.jacfwd(f_vec, chunk_size=0)(x)


def test_chunked_jacobian_under_vmap() -> None:
    out = T.vmap(T.jacfwd(f_vec, chunk_size=2))(XB)
    close(out, np.stack([jac_vec(x) for x in XS]))
    out = T.vmap(T.jacrev(f_vec, chunk_size=1))(XB)
    close(out, np.stack([jac_vec(x) for x in XS]))


# ---------------------------------------------------------------------------------------
# the identity basis: a matrix times the whole basis of a vector is the matrix itself
# ---------------------------------------------------------------------------------------
LINEAR_A = np.arange(12.0).reshape(3, 4) / 7 - 0.5  # rectangular: rows and columns differ
LINEAR_X = np.array([0.5, -1.0, 2.0, 0.25])


@pytest.mark.parametrize("transform", [T.jacfwd, T.jacrev], ids=lambda t: t.__name__)
@pytest.mark.parametrize(
    "a",
    [
        LINEAR_A,
        LINEAR_A.astype(np.float32),
        np.arange(12).reshape(3, 4),
        LINEAR_A + 1j * LINEAR_A[::-1],
    ],
    ids=["float64", "float32", "int", "complex"],
)
def test_jacobian_of_a_matrix_product_is_the_matrix(transform: Any, a: Any) -> None:
    """``A @ x`` and ``x @ A.T``: the Jacobian is ``A`` exactly, in matmul's result dtype,
    and shares no memory with ``A`` (the identity basis takes no product: checked against
    the chunked basis, which does, and against ``A`` written into afterwards)."""
    dtype = np.promote_types(a.dtype, np.float64)
    x = LINEAR_X.astype(dtype) if dtype.kind == "c" else LINEAR_X
    holomorphic = dtype.kind == "c"
    for f, at in ((lambda x: a @ x, a), (lambda x: x @ a.T, a)):
        jac = transform(f, holomorphic=holomorphic)(x)
        assert jac.dtype == dtype
        assert np.array_equal(jac, at.astype(dtype))
        assert np.array_equal(jac, transform(f, holomorphic=holomorphic, chunk_size=3)(x))
        assert not np.shares_memory(jac, a)
    a_copy = a.copy()
    jac = transform(lambda x: a_copy @ x, holomorphic=holomorphic)(x)
    a_copy *= 2
    assert np.array_equal(jac, a.astype(dtype))


def test_identity_basis_fast_path_in_composition() -> None:
    """The matrix product with the basis inside nestings: the Hessian of W3's function, a
    derivative with respect to the matrix itself (a traced ``A``), a batch of matrices."""
    a, x = LINEAR_A[:, :3], LINEAR_X[:3]  # square: A is (3, 3)

    def f(x: Any) -> Any:
        return tnp.sum(tnp.tanh(a @ x) ** 2) + 0.5 * tnp.sum(x**2)

    t = np.tanh(a @ x)
    close(T.hessian(f)(x), a.T @ np.diag(2 * (1 - t**2) * (1 - 3 * t**2)) @ a + np.eye(3))
    # d/dA of the Jacobian A -> A: the identity of shape (3, 4, 3, 4), exactly
    big = T.jacfwd(lambda m: T.jacfwd(lambda x: m @ x)(LINEAR_X))(LINEAR_A)
    assert np.array_equal(big, np.eye(12).reshape(3, 4, 3, 4))
    stack = np.stack([LINEAR_A, 2 * LINEAR_A, -LINEAR_A])
    assert np.array_equal(T.vmap(lambda m: T.jacfwd(lambda x: m @ x)(LINEAR_X))(stack), stack)
    assert np.array_equal(T.vmap(lambda m: T.jacrev(lambda x: x @ m.T)(LINEAR_X))(stack), stack)


def test_identity_basis_registry_forgets_dead_bases(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a live basis, that very array, is recognised; dead ones leave the registry
    (bases made per call: none is shared)."""
    from transforms.numpy import _batching

    monkeypatch.setattr(_batching, "_SHARED_BYTES", 0)
    basis = _batching.identity_basis(3, np.float64)
    assert _batching.is_identity_basis(basis)
    assert not _batching.is_identity_basis(basis.copy())
    assert not _batching.is_identity_basis(basis[:])
    alive = [_batching.identity_basis(3, np.float64) for _ in range(100)]
    assert all(_batching.is_identity_basis(b) for b in alive)
    del alive
    newest = _batching.identity_basis(3, np.float64)  # the 100 dead ones are dropped
    assert all(ref() is not None for ref in _batching._IDENTITIES.values())
    assert _batching.is_identity_basis(basis) and _batching.is_identity_basis(newest)
    del basis
    assert not any(_batching.is_identity_basis(np.eye(3)) for _ in range(100))


def test_shared_identity_basis_is_read_only_and_never_handed_out() -> None:
    """A small basis is made once and shared by every Jacobian: it is read-only, and a
    Jacobian that is the basis itself (or a view of it) reaches the user as a copy of its
    own, which the user may write into without changing the next Jacobian."""
    from transforms.numpy import _batching

    basis = _batching.identity_basis(4, np.float64)
    assert _batching.identity_basis(4, np.float64) is basis
    assert not basis.flags.writeable
    for transform in (T.jacfwd, T.jacrev, T.hessian):
        fun = (lambda x: 0.5 * tnp.sum(x * x)) if transform is T.hessian else (lambda x: x)
        jac = transform(fun)(np.ones(4))
        assert jac.flags.writeable and not np.shares_memory(jac, basis)
        jac[0, 0] = 7.0
        assert np.array_equal(transform(fun)(np.ones(4)), np.eye(4))
        assert np.array_equal(basis, np.eye(4))
    for transform in (T.jacfwd, T.jacrev):  # the basis reshaped to the input's shape
        jac = transform(lambda x: x)(np.ones((2, 2)))
        assert jac.flags.writeable and not np.shares_memory(jac, basis)
        jac[...] = 0.0
        again = transform(lambda x: x)(np.ones((2, 2)))
        assert np.array_equal(again, np.eye(4).reshape(2, 2, 2, 2))


def test_identity_basis_keeps_matmul_shape_errors() -> None:
    with pytest.raises(ValueError, match="matmul"):
        T.jacfwd(lambda x: LINEAR_A @ x)(np.ones(3))
    with pytest.raises(ValueError, match="matmul"):
        T.jacfwd(lambda x: x @ LINEAR_A)(np.ones(4))


# ---------------------------------------------------------------------------------------
# hvp
# ---------------------------------------------------------------------------------------
def test_hvp_equals_hessian_times_vector_and_returns_value() -> None:
    x, v = XS[0], XS[1]
    value, (product,) = T.hvp(f_scalar, (x,), (v,))
    close(value, float(np.sum(x**3) + x[0] * x[1] + np.sin(x[2])))
    close(product, hess_scalar(x) @ v)
    close(product, np.asarray(T.hessian(f_scalar)(x)) @ v)


def test_hvp_two_arguments() -> None:
    x, y = XS[0], XS[1]
    u, w = XS[2], XS[3]
    f = lambda x, y: tnp.sum(x**2 * y) + tnp.sum(tnp.sin(y))
    value, (px, py) = T.hvp(f, (x, y), (u, w))
    close(value, np.sum(x**2 * y) + np.sum(np.sin(y)))
    # H = [[diag(2y), diag(2x)], [diag(2x), diag(-sin y)]]
    close(px, 2 * y * u + 2 * x * w)
    close(py, 2 * x * u - np.sin(y) * w)


def test_hvp_under_vmap() -> None:
    v = XS[0]
    products = T.vmap(lambda x: T.hvp(f_scalar, (x,), (v,))[1][0])(XB)
    close(products, np.stack([hess_scalar(x) @ v for x in XS]))


# ---------------------------------------------------------------------------------------
# Jacobians with zero-size inputs or outputs
# ---------------------------------------------------------------------------------------
def f_zero_in(x: Any) -> Any:
    return tnp.stack([tnp.sum(x) + 1.0, tnp.sum(x**2) * 2.0])


@pytest.mark.parametrize("transform", [T.jacfwd, T.jacrev], ids=lambda t: t.__name__)
def test_jacobian_of_zero_size_input(transform: Any) -> None:
    jac = transform(f_zero_in)(np.zeros((0,)))
    close(jac, np.zeros((2, 0)))
    jac = transform(lambda x: tnp.sum(x, axis=0))(np.zeros((0, 3)))
    close(jac, np.zeros((3, 0, 3)))


@pytest.mark.parametrize("transform", [T.jacfwd, T.jacrev], ids=lambda t: t.__name__)
def test_jacobian_with_zero_size_leaf_among_inputs(transform: Any) -> None:
    f = lambda a, e: a * 2.0 + tnp.sum(e)
    ja, je = transform(f, argnums=(0, 1))(np.ones(2), np.zeros((0,)))
    close(ja, 2 * np.eye(2))
    close(je, np.zeros((2, 0)))


@pytest.mark.parametrize("transform", [T.jacfwd, T.jacrev], ids=lambda t: t.__name__)
def test_jacobian_of_zero_size_output(transform: Any) -> None:
    jac = transform(lambda x: x[:0] * 2)(np.ones(3))
    close(jac, np.zeros((0, 3)))


@pytest.mark.parametrize(
    ("in_axes", "b_shape"),
    [((None, 1), (3,)), ((None, 2), (3, 2)), ((2, 2), (3, 3)), ((1, 1), (3, 3))],
)
def test_vmap_gufunc_batch_axis_last_or_inner(
    in_axes: tuple[int | None, int], b_shape: tuple[int, ...]
) -> None:
    """A primitive with core axes at the end (``solve``) gets its batch axis in front of
    them wherever it was given: the elementwise short paths that keep a batch axis last or
    at the same inner axis of both operands do not apply to it."""
    a = [np.eye(3) * 4 + e for e in ex((3, 3), 11)]
    b = ex(b_shape, 12)
    check_vmap(tnp.linalg.solve, [a[:1] if in_axes[0] is None else a, b], in_axes)
