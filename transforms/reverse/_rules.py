"""The reverse-mode rule registry, written only through ``defvjp`` / ``defvjp_argnum``.

A VJP maker runs at forward time as ``maker(ans, *args, **params)`` and returns the closure
``ct -> cotangent of that argument``; it captures only the forward state the rule uses. The
cotangent it returns has the argument's shape: broadcasting is undone inside the rule
(``unbroadcast``), the engine knows no shapes. ``None`` declares a zero cotangent. A closure
is written with differentiable operations, so the backward pass can itself be transformed.

Every primitive's rules are stored in one form, a sequence of makers indexed by argument
position (``rules[argnum]``, ``len(rules)`` the number of positions that have one): a tuple
for ``defvjp``, and for a variadic primitive (``defvjp_argnum``) a sequence of any length
whose maker for position ``i`` is ``maker(i, ...)``.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Sequence
from typing import Any, overload

from transforms.core import Primitive, register_interpreter

__all__ = [
    "VJPMaker",
    "ArgnumVJPMaker",
    "Pullback",
    "defvjp",
    "defvjp_argnum",
    "has_vjp_rule",
    "vjp_makers",
]

Pullback = Callable[[Any], Any]
VJPMaker = Callable[..., Pullback]
ArgnumVJPMaker = Callable[..., Pullback]


class _ArgnumMakers(Sequence[VJPMaker]):
    """The makers of a variadic primitive: position ``i``'s is ``maker(i, ...)`` (made once)."""

    __slots__ = ("_made", "maker")

    def __init__(self, maker: ArgnumVJPMaker) -> None:
        self.maker = maker
        self._made: dict[int, VJPMaker] = {}

    @overload
    def __getitem__(self, argnum: int) -> VJPMaker: ...
    @overload
    def __getitem__(self, argnum: slice) -> Sequence[VJPMaker]: ...
    def __getitem__(self, argnum: int | slice) -> VJPMaker | Sequence[VJPMaker]:
        if isinstance(argnum, slice):
            raise TypeError("the makers of a variadic primitive cannot be sliced")
        made = self._made.get(argnum)
        if made is None:
            made = self._made[argnum] = functools.partial(self.maker, argnum)
        return made

    def __len__(self) -> int:
        return sys.maxsize  # every position has a maker


_RULES: dict[Primitive[Any], Sequence[VJPMaker | None]] = {}


def defvjp(primitive: Primitive[Any], *makers: VJPMaker | None) -> None:
    """Define the VJP of ``primitive``, one maker per positional argument.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> from transforms.reverse import defvjp
        >>> exp_p = T.Primitive("my_exp", np.exp)
        >>> defvjp(exp_p, lambda ans, x: lambda ct: ct * ans)  # the closure keeps ans
        >>> T.grad(exp_p)(0.0)
        array(1.)
    """
    _RULES[primitive] = tuple(makers)


def defvjp_argnum(primitive: Primitive[Any], maker: ArgnumVJPMaker) -> None:
    """Define the VJP of a variadic ``primitive`` as ``maker(argnum, ans, *args, **params)``."""
    _RULES[primitive] = _ArgnumMakers(maker)


def vjp_makers(primitive: Primitive[Any]) -> Sequence[VJPMaker | None] | None:
    """The makers of ``primitive``, indexed by argument position (``None``: no rule at all)."""
    return _RULES.get(primitive)


def has_vjp_rule(primitive: Primitive[Any], argnum: int) -> bool:
    """Whether ``primitive`` has a reverse rule (possibly a zero one) for ``argnum``."""
    makers = _RULES.get(primitive)
    return makers is not None and argnum < len(makers)


register_interpreter("vjp", has_vjp_rule, define="transforms.defvjp")
