"""Jacobians and Hessians, built by pushing the standard basis through ``jvp`` or a pullback.

Layout: ``jac.shape == out.shape + in.shape`` for each (output leaf, input leaf) pair; the
result is the output tree whose leaves are trees shaped like the differentiated arguments.
Assembly uses ``transforms.numpy`` (``stack``, ``reshape``) so that a Jacobian is itself
differentiable: ``hessian`` is ``jacfwd(jacrev(f))``.

Until ``vmap`` exists the basis is pushed one vector at a time (``_push_basis_*``); those two
functions are the only place a batched push will replace.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, Literal, ParamSpec, TypeVar, overload

import numpy as np

import transforms.numpy as tnp
from transforms.core import Array
from transforms.core.tree_util import PyTreeDef, tree_flatten
from transforms.numpy._define import dtype_of, shape_of

from ._args import as_input, normalize_argnums, partial_of
from ._core_transforms import FlatPullback, jvp_flat, vjp_flat

__all__ = ["jacfwd", "jacrev", "hessian"]

P = ParamSpec("P")
Aux = TypeVar("Aux")


def _basis(shapes: Sequence[tuple[int, ...]], dtypes: Sequence[Any]) -> list[list[np.ndarray]]:
    """The standard basis of a list of arrays: one list of one-hot arrays per basis vector."""
    sizes = [math.prod(s) for s in shapes]
    basis = []
    for leaf, size in enumerate(sizes):
        for k in range(size):
            vec = [np.zeros(s, d) for s, d in zip(shapes, dtypes, strict=True)]
            vec[leaf].reshape(-1)[k] = 1
            basis.append(vec)
    return basis


def _push_basis_forward(
    fun: Callable[..., Any], args: list[Any], in_tree: PyTreeDef, has_aux: bool
) -> tuple[Any, list[list[Any]], Any]:
    """``jvp`` of each basis vector: the output and one list of flat tangents per vector."""
    flat_in, _ = tree_flatten(args)
    shapes = [shape_of(x) for x in flat_in]
    dtypes = [dtype_of(x) for x in flat_in]
    columns: list[list[Any]] = []
    out: Any = None
    aux: Any = None
    for vec in _basis(shapes, dtypes):
        out, tangent, aux = jvp_flat(fun, args, in_tree.unflatten(vec), has_aux, "jacfwd")
        columns.append(tree_flatten(tangent)[0])
    if not columns:  # no input elements: evaluate once for the output's structure
        out, _, aux = jvp_flat(fun, args, args, has_aux, "jacfwd")
    return out, columns, aux


def _push_basis_reverse(pullback: FlatPullback, out: Any) -> list[list[Any]]:
    """The pullback of each basis vector of the output: one list of flat cotangents each."""
    flat_out, out_tree = tree_flatten(out)
    shapes = [shape_of(o) for o in flat_out]
    dtypes = [dtype_of(o) for o in flat_out]
    return [tree_flatten(pullback(out_tree.unflatten(vec)))[0] for vec in _basis(shapes, dtypes)]


def _block(pieces: list[Any], shape: tuple[int, ...], dtype: Any, axis: int) -> Any:
    """Stack ``pieces`` (one per basis element) along ``axis`` and reshape to ``shape``."""
    if not pieces:
        return np.zeros(shape, dtype)
    return tnp.reshape(tnp.stack(pieces, axis=axis), shape)


def _diff_args(
    args: tuple[Any, ...], argnums: int | Sequence[int], transform: str
) -> tuple[tuple[int, ...], list[Any]]:
    nums = normalize_argnums(argnums, len(args), transform)
    diff = []
    for n in nums:
        leaves, tree = tree_flatten(args[n])
        checked = [as_input(x, transform, f"argument {n}") for x in leaves]
        diff.append(tree.unflatten(checked))
    return nums, diff


def _assemble(
    out: Any, blocks: Callable[[int, int], Any], diff: list[Any], argnums: int | Sequence[int]
) -> Any:
    """The Jacobian tree: for each output leaf, the tree of blocks over the input leaves."""
    flat_out, out_tree = tree_flatten(out)
    in_leaves, in_tree = tree_flatten(diff[0] if isinstance(argnums, int) else tuple(diff))
    return out_tree.unflatten(
        in_tree.unflatten(blocks(j, i) for i in range(len(in_leaves))) for j in range(len(flat_out))
    )


@overload
def jacfwd(
    fun: Callable[P, object], argnums: int | Sequence[int] = 0, has_aux: Literal[False] = False
) -> Callable[P, Array]: ...
@overload
def jacfwd(
    fun: Callable[P, tuple[object, Aux]],
    argnums: int | Sequence[int] = 0,
    *,
    has_aux: Literal[True],
) -> Callable[P, tuple[Array, Aux]]: ...
def jacfwd(
    fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """The Jacobian of ``fun`` by forward mode: one ``jvp`` per input element.

    For pytree inputs/outputs the result is a tree (output tree outside, input tree inside),
    typed as ``Array``: narrow it with ``typing.cast`` where you use trees.

    Example:
        >>> jacfwd(tnp.sin)(np.zeros(2))  # doctest: +SKIP
        array([[1., 0.], [0., 1.]])
    """

    @functools.wraps(fun)
    def jacfwd_fun(*args: Any, **kwargs: Any) -> Any:
        nums, diff = _diff_args(args, argnums, "jacfwd")
        partial = partial_of(fun, args, kwargs, nums)
        in_tree = tree_flatten(diff)[1]
        out, columns, aux = _push_basis_forward(partial, diff, in_tree, has_aux)
        flat_in = tree_flatten(diff)[0]
        flat_out = tree_flatten(out)[0]
        offsets = np.cumsum([0] + [math.prod(shape_of(x)) for x in flat_in])

        def block(j: int, i: int) -> Any:
            shape = shape_of(flat_out[j]) + shape_of(flat_in[i])
            pieces = [columns[k][j] for k in range(offsets[i], offsets[i + 1])]
            return _block(pieces, shape, dtype_of(flat_out[j]), axis=-1)

        jac = _assemble(out, block, diff, argnums)
        return (jac, aux) if has_aux else jac

    return jacfwd_fun


@overload
def jacrev(
    fun: Callable[P, object], argnums: int | Sequence[int] = 0, has_aux: Literal[False] = False
) -> Callable[P, Array]: ...
@overload
def jacrev(
    fun: Callable[P, tuple[object, Aux]],
    argnums: int | Sequence[int] = 0,
    *,
    has_aux: Literal[True],
) -> Callable[P, tuple[Array, Aux]]: ...
def jacrev(
    fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """The Jacobian of ``fun`` by reverse mode: one pullback per output element.

    Example:
        >>> jacrev(lambda x: x ** 2)(np.array([1.0, 2.0]))  # doctest: +SKIP
        array([[2., 0.], [0., 4.]])
    """

    @functools.wraps(fun)
    def jacrev_fun(*args: Any, **kwargs: Any) -> Any:
        nums, diff = _diff_args(args, argnums, "jacrev")
        partial = partial_of(fun, args, kwargs, nums)
        out, pullback, aux = vjp_flat(partial, diff, has_aux, "jacrev")
        rows = _push_basis_reverse(pullback, out)
        flat_in = tree_flatten(diff)[0]
        flat_out = tree_flatten(out)[0]
        offsets = np.cumsum([0] + [math.prod(shape_of(o)) for o in flat_out])

        def block(j: int, i: int) -> Any:
            shape = shape_of(flat_out[j]) + shape_of(flat_in[i])
            pieces = [rows[k][i] for k in range(offsets[j], offsets[j + 1])]
            return _block(pieces, shape, dtype_of(flat_in[i]), axis=0)

        jac = _assemble(out, block, diff, argnums)
        return (jac, aux) if has_aux else jac

    return jacrev_fun


@overload
def hessian(
    fun: Callable[P, object], argnums: int | Sequence[int] = 0, has_aux: Literal[False] = False
) -> Callable[P, Array]: ...
@overload
def hessian(
    fun: Callable[P, tuple[object, Aux]],
    argnums: int | Sequence[int] = 0,
    *,
    has_aux: Literal[True],
) -> Callable[P, tuple[Array, Aux]]: ...
def hessian(
    fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """The Hessian of a scalar ``fun``: ``jacfwd(jacrev(fun))`` (forward over reverse).

    Example:
        >>> hessian(lambda x: tnp.sum(x ** 3))(np.array([1.0, 2.0]))  # doctest: +SKIP
        array([[ 6.,  0.], [ 0., 12.]])
    """
    inner = jacrev(fun, argnums, has_aux)  # type: ignore[call-overload]
    return jacfwd(inner, argnums, has_aux)  # type: ignore[call-overload,no-any-return]
