"""The reverse-mode rule registry, written only through ``defvjp`` / ``defvjp_argnum``.

A VJP maker runs at forward time as ``maker(ans, *args, **params)`` and returns the closure
``ct -> cotangent of that argument``; it captures only the forward state the rule uses. The
cotangent it returns has the argument's shape: broadcasting is undone inside the rule
(``unbroadcast``), the engine knows no shapes. ``None`` declares a zero cotangent. A closure
is written with differentiable operations, so the backward pass can itself be transformed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from transforms.core import Primitive

__all__ = ["VJPMaker", "ArgnumVJPMaker", "Pullback", "defvjp", "defvjp_argnum", "has_vjp_rule"]

Pullback = Callable[[Any], Any]
VJPMaker = Callable[..., Pullback]
ArgnumVJPMaker = Callable[..., Pullback]


@dataclass(frozen=True, slots=True)
class _Argnum:
    maker: ArgnumVJPMaker


_RULES: dict[Primitive, tuple[VJPMaker | None, ...] | _Argnum] = {}


def defvjp(primitive: Primitive, *makers: VJPMaker | None) -> None:
    """Define the VJP of ``primitive``, one maker per positional argument.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> exp_p = T.Primitive("my_exp", np.exp)
        >>> T.defvjp(exp_p, lambda ans, x: lambda ct: ct * ans)  # the closure keeps ans
        >>> T.grad(exp_p)(0.0)
        array(1.)
    """
    _RULES[primitive] = tuple(makers)


def defvjp_argnum(primitive: Primitive, maker: ArgnumVJPMaker) -> None:
    """Define the VJP of a variadic ``primitive`` as ``maker(argnum, ans, *args, **params)``."""
    _RULES[primitive] = _Argnum(maker)


def has_vjp_rule(primitive: Primitive, argnum: int) -> bool:
    """Whether ``primitive`` has a reverse rule (possibly a zero one) for ``argnum``."""
    rules = _RULES.get(primitive)
    if rules is None:
        return False
    return isinstance(rules, _Argnum) or argnum < len(rules)
