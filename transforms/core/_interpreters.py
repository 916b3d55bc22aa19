"""The registry of interpreters, so that rule coverage is checked for every one of them.

Each interpreter package registers itself at import with a question the coverage test can
ask of any primitive: does it have a rule for argument ``argnum``? Adding an interpreter
(one more ``register_interpreter`` call) makes the coverage test demand its rule from every
primitive of every namespace, with no test to edit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._primitive import Primitive

__all__ = ["Interpreter", "register_interpreter", "interpreters"]


@dataclass(frozen=True)
class Interpreter:
    """An interpreter as the coverage test sees it.

    Attributes:
        name: the transform's name (``"jvp"``, ``"vmap"``).
        has_rule: ``has_rule(primitive, argnum)``: whether ``primitive`` has a rule (possibly
            a zero one) for its argument ``argnum``.
        define: the function that adds a rule, named in errors and test failures.
        nondifferentiable: whether non-differentiable primitives need a rule too (``vmap``
            evaluates them on batched values; derivative interpreters only pass them down).
    """

    name: str
    has_rule: Callable[[Primitive, int], bool]
    define: str
    nondifferentiable: bool = False


_INTERPRETERS: dict[str, Interpreter] = {}


def register_interpreter(
    name: str,
    has_rule: Callable[[Primitive, int], bool],
    *,
    define: str,
    nondifferentiable: bool = False,
) -> None:
    """Make an interpreter known to the rule-coverage test."""
    _INTERPRETERS[name] = Interpreter(name, has_rule, define, nondifferentiable)


def interpreters() -> tuple[Interpreter, ...]:
    """Every registered interpreter, in registration order."""
    return tuple(_INTERPRETERS.values())
