"""The type checks JAX makes of the user's functions: a loop's carry keeps its structure,
shapes and dtypes, and every branch returns the same."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from transforms.core import Tracer
from transforms.core.tree_util import PyTreeDef, tree_flatten
from transforms.numpy._define import dtype_of, shape_of

__all__ = ["carry_like", "describe", "same_types"]


def describe(leaves: Sequence[Any], tree: PyTreeDef[Any]) -> str:
    types = ", ".join(f"{dtype_of(x)}{list(shape_of(x))}" for x in leaves)
    return f"{tree} of [{types}]"


def same_types(
    what: str,
    leaves: Sequence[Any],
    tree: PyTreeDef[Any],
    expected_what: str,
    expected: Sequence[Any],
    expected_tree: PyTreeDef[Any],
) -> None:
    """Raise ``TypeError`` unless ``leaves`` (of ``tree``) match ``expected`` in structure,
    shape and dtype."""
    if tree != expected_tree or any(
        a is not b and (shape_of(a) != shape_of(b) or dtype_of(a) != dtype_of(b))
        for a, b in zip(leaves, expected, strict=True)
    ):
        raise TypeError(
            f"{what} must have the structure, shapes and dtypes of {expected_what}, "
            f"{describe(expected, expected_tree)}; got {describe(leaves, tree)}"
        )


def carry_like(what: str, out: Any, template: Sequence[Any], tree: PyTreeDef[Any]) -> list[Any]:
    """The leaves of a new carry ``out``, which must match the carry ``template``: Python
    numbers (weakly typed, as in JAX) take the dtype of the leaf they stand for."""
    leaves, out_tree = tree_flatten(out)
    if out_tree == tree:
        leaves = [
            x if isinstance(x, (Tracer, np.ndarray)) else np.asarray(x, dtype=dtype_of(t))
            for x, t in zip(leaves, template, strict=True)
        ]
    same_types(what, leaves, out_tree, "the carry", template, tree)
    return leaves
