"""The forward-mode rule registry, written only through ``defjvp`` / ``defjvp_joint``.

Every rule is stored in one form, the joint one: ``rule(tangents, ans, *args, **params)``
receives every argument's tangent at once (``None`` for a zero tangent), the primal arguments
(values one level down, possibly tracers of outer transforms) and returns the tangent of
``ans`` with ``ans``'s shape (a tuple of tangents, ``None`` for a zero one, for a
multiple-results primitive), or ``None`` for a zero tangent. The trace, and any interpreter
that derives its own rule from a JVP (Taylor mode, sparsity detection), calls that one form.

``defjvp`` takes the common per-argument form, ``rule(t, ans, *args, **params)`` for the
tangent ``t`` of one argument, with ``None`` declaring the output independent of that
argument, and turns it into a joint rule that sums the terms. Variadic primitives (``stack``)
register a joint rule directly, to avoid building one full-size tangent per argument.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from transforms.core import NoRuleError, Primitive, register_interpreter

__all__ = [
    "JVPRule",
    "JVPRules",
    "JointJVPRule",
    "defjvp",
    "defjvp_joint",
    "has_jvp_rule",
    "jvp_rule",
]

JVPRule = Callable[..., Any]
JointJVPRule = Callable[..., Any]


@dataclass(frozen=True, slots=True)
class JVPRules:
    """A primitive's forward rules: the joint rule, and the per-argument rules it was made
    from (``None`` for a joint registration) — the trace's fast path when one argument is
    traced, which skips the joint rule's loop over every argument."""

    joint: JointJVPRule
    per_argument: tuple[JVPRule | None, ...] | None


_RULES: dict[Primitive[Any], JVPRules] = {}


def defjvp(primitive: Primitive[Any], *rules: JVPRule | None) -> None:
    """Define the JVP of ``primitive`` one argument at a time.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> from transforms.forward import defjvp
        >>> sin_p = T.Primitive("my_sin", np.sin)
        >>> defjvp(sin_p, lambda t, ans, x: t * tnp.cos(x))  # tnp: the rule nests
        >>> T.jvp(sin_p, (0.0,), (2.0,))
        (array(0.), array(2.))
    """
    _RULES[primitive] = JVPRules(_joint(primitive, tuple(rules)), tuple(rules))


def defjvp_joint(primitive: Primitive[Any], rule: JointJVPRule) -> None:
    """Define the JVP of ``primitive`` as ``rule(tangents, ans, *args, **params)``."""
    _RULES[primitive] = JVPRules(rule, None)


def jvp_rule(primitive: Primitive[Any]) -> JointJVPRule | None:
    """The joint JVP rule of ``primitive`` (for interpreters that derive theirs from it)."""
    rules = _RULES.get(primitive)
    return None if rules is None else rules.joint


def has_jvp_rule(primitive: Primitive[Any], argnum: int) -> bool:
    """Whether ``primitive`` has a forward rule (possibly a zero one) for ``argnum``."""
    rules = _RULES.get(primitive)
    if rules is None:
        return False
    return rules.per_argument is None or argnum < len(rules.per_argument)


def _joint(primitive: Primitive[Any], rules: tuple[JVPRule | None, ...]) -> JointJVPRule:
    """The joint form of per-argument rules: the sum of the terms of the non-zero tangents."""
    n = len(rules)
    multiple = primitive.multiple_results

    def joint(tangents: Sequence[Any], ans: Any, *args: Any, **params: Any) -> Any:
        out = None
        for argnum, t in enumerate(tangents):
            if t is None:
                continue
            if argnum >= n:
                raise NoRuleError(primitive.name, "jvp", argnum, "transforms.defjvp")
            rule = rules[argnum]
            if rule is None:
                continue
            term = rule(t, ans, *args, **params)
            if out is None:
                out = term
            elif multiple:
                out = _add(out, term)
            else:
                out = out + term
        return out

    return joint


def _add(acc: Sequence[Any], term: Sequence[Any]) -> tuple[Any, ...]:
    """Sum tuples of tangents of a multiple-results primitive; ``None`` is a zero."""
    return tuple(
        a if t is None else (t if a is None else a + t) for a, t in zip(acc, term, strict=True)
    )


register_interpreter("jvp", has_jvp_rule, define="transforms.defjvp")
