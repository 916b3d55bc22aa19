"""The batching rule registry, written only through ``defbatch``.

A batching rule is ``rule(args, dims, **params) -> (out, out_dim)``: ``args`` are the
operands with their batch axes still in them, ``dims[i]`` is operand ``i``'s batch axis
(``None`` for an operand that is not batched), and the rule returns the batched result and
the axis of its batch dimension (``None`` when the result does not vary along the batch).
Rules use differentiable operations, so ``jvp(vmap(f))`` and ``vmap(grad(f))`` both work.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from transforms.core import Primitive, register_interpreter

__all__ = ["BatchRule", "defbatch", "has_batch_rule"]

BatchRule = Callable[..., tuple[Any, Any]]  # (out, out_dim); tuples for multiple results

_RULES: dict[Primitive[Any], BatchRule] = {}


def defbatch(primitive: Primitive[Any], rule: BatchRule) -> None:
    """Define how ``primitive`` acts on operands that carry a batch axis.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> sin_p = T.Primitive("my_sin", np.sin)
        >>> T.defbatch(sin_p, lambda args, dims: (sin_p.bind(args[0]), dims[0]))  # elementwise
        >>> T.vmap(sin_p, in_axes=1)(np.zeros((2, 3)))
        array([[0., 0.],
               [0., 0.],
               [0., 0.]])
    """
    _RULES[primitive] = rule


def has_batch_rule(primitive: Primitive[Any], argnum: int = 0) -> bool:
    """Whether ``primitive`` has a batching rule (one rule covers every argument)."""
    return primitive in _RULES


register_interpreter("vmap", has_batch_rule, define="transforms.defbatch", nondifferentiable=True)
