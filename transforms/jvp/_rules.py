"""The forward-mode rule registry, written only through ``defjvp`` / ``defjvp_joint``.

A per-argument JVP rule is ``rule(t, ans, *args, **params) -> tangent of ans``: ``t`` is the
tangent of one argument, ``args`` are the primal arguments (values one level down, possibly
tracers of outer transforms), and the result must have ``ans``'s shape (rules broadcast).
``None`` declares the output independent of that argument. A joint rule receives every
argument's tangent at once (``None`` for a zero tangent): variadic primitives like ``stack``
need it to avoid building one full-size tangent per argument.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from transforms.core import Primitive

__all__ = ["JVPRule", "JointJVPRule", "defjvp", "defjvp_joint", "has_jvp_rule"]

JVPRule = Callable[..., Any]
JointJVPRule = Callable[..., Any]


@dataclass(frozen=True, slots=True)
class _Joint:
    rule: JointJVPRule


_RULES: dict[Primitive, tuple[JVPRule | None, ...] | _Joint] = {}


def defjvp(primitive: Primitive, *rules: JVPRule | None) -> None:
    """Define the JVP of ``primitive`` one argument at a time.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> sin_p = T.Primitive("my_sin", np.sin)
        >>> T.defjvp(sin_p, lambda t, ans, x: t * tnp.cos(x))  # tnp: the rule nests
        >>> T.jvp(sin_p, (0.0,), (2.0,))
        (array(0.), array(2.))
    """
    _RULES[primitive] = tuple(rules)


def defjvp_joint(primitive: Primitive, rule: JointJVPRule) -> None:
    """Define the JVP of ``primitive`` as ``rule(tangents, ans, *args, **params)``."""
    _RULES[primitive] = _Joint(rule)


def has_jvp_rule(primitive: Primitive, argnum: int) -> bool:
    """Whether ``primitive`` has a forward rule (possibly a zero one) for ``argnum``."""
    rules = _RULES.get(primitive)
    if rules is None:
        return False
    return isinstance(rules, _Joint) or argnum < len(rules)
