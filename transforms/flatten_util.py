"""``transforms.flatten_util``: ``ravel_pytree``, as ``jax.flatten_util``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

import transforms.numpy as tnp
from transforms.core.tree_util import tree_flatten
from transforms.extend import dtype_of, shape_of
from transforms.typing import Array

__all__ = ["ravel_pytree"]

Tree = TypeVar("Tree")


def ravel_pytree(pytree: Tree) -> tuple[Array, Callable[[Array], Tree]]:
    """The leaves of ``pytree`` raveled and concatenated into one 1-d array, and the function
    that rebuilds a tree of the same structure, shapes and dtypes from such an array.

    The flat array has the leaves' common dtype (NumPy's promotion, float64 for no leaves);
    ``unravel`` casts each piece back to its leaf's dtype. Both are differentiable (the flat
    array of traced leaves is traced), so an optimizer written for flat vectors can take a
    gradient that is a pytree, and back.

    Example:
        >>> import numpy as np
        >>> from transforms.flatten_util import ravel_pytree
        >>> flat, unravel = ravel_pytree({"b": np.zeros(2), "w": np.ones((2, 2))})
        >>> flat
        array([0., 0., 1., 1., 1., 1.])
        >>> unravel(flat + 1)["w"]
        array([[2., 2.],
               [2., 2.]])
    """
    leaves, treedef = tree_flatten(pytree)
    shapes = [shape_of(leaf) for leaf in leaves]
    dtypes = [dtype_of(leaf) for leaf in leaves]
    dtype = np.result_type(*dtypes) if dtypes else np.dtype(np.float64)
    sizes = [int(np.prod(shape)) for shape in shapes]
    if leaves:
        flat = tnp.concatenate([tnp.ravel(tnp.astype(leaf, dtype)) for leaf in leaves])
    else:
        flat = np.zeros(0, dtype)
    bounds = np.cumsum(sizes)[:-1].tolist()

    def unravel(flat_array: Array) -> Tree:
        if shape_of(flat_array) != (sum(sizes),):
            raise ValueError(
                f"ravel_pytree's unravel: expected a 1-d array of {sum(sizes)} elements, got "
                f"shape {shape_of(flat_array)}"
            )
        pieces: list[Any] = tnp.split(flat_array, bounds) if leaves else []
        return treedef.unflatten(
            tnp.astype(tnp.reshape(piece, shape), leaf_dtype)
            for piece, shape, leaf_dtype in zip(pieces, shapes, dtypes, strict=True)
        )

    return flat, unravel
