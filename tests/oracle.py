"""An independent reference for nested scalar derivatives: the oracle of ``test_oracle.py``.

It shares no code with ``transforms`` (it imports only ``math`` and ``itertools``: no NumPy,
no library module) and is small enough to be checked by reading:

- **forward mode**: dual numbers ``Dual(tag, primal, tangent)``;
- **reverse mode**: a Wengert list: every ``Var(tag, value, parents)`` recorded under a
  tag is appended to that tag's tape, in execution order; the backward pass walks the tape
  once, backwards, accumulating adjoints (creation order is a topological order);
- **identity tags**: each derivative call makes a fresh ``Tag``; a box belongs to a call by
  the identity of its tag (``box.tag is tag``), never by comparing numbers, so a derivative
  taken inside a function that closes over an outer variable cannot confuse the two
  perturbations. Tags are ordered by creation (an inner call's tag is newer): an operation
  is interpreted by the newest tag among its operands, and every other operand is a
  constant for it;
- **every rule is written with the oracle's own operations** on the (possibly boxed)
  primals, so rules differentiate again: any nesting of ``fwd`` and ``rev`` works.

Supported: ``+ - * / **`` (operators, mixing boxes and floats), unary ``-``, ``sin cos exp
log tanh sqrt``, float constants, and comparisons (on the innermost primal, for branches).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

__all__ = [
    "Dual",
    "Tag",
    "Var",
    "add",
    "cos",
    "div",
    "exp",
    "fwd",
    "log",
    "mul",
    "neg",
    "pow",
    "primal_float",
    "rev",
    "sin",
    "sqrt",
    "sub",
    "tanh",
]

Value = Any  # a float, or a Dual / Var box (whose fields are Values of older tags)

_creation = itertools.count(1)


class Tag:
    """The identity of one derivative call; ``order`` only ranks nested calls."""

    __slots__ = ("kind", "order", "tape")

    def __init__(self, kind: str) -> None:
        self.kind = kind  # "fwd" or "rev"
        self.order = next(_creation)
        self.tape: list[Var] = []  # the Wengert list of a reverse-mode call

    def __repr__(self) -> str:
        return f"Tag({self.kind}#{self.order})"


class _Box:
    __slots__ = ()
    tag: Tag

    def __add__(self, other: Value) -> Value:
        return add(self, other)

    def __radd__(self, other: Value) -> Value:
        return add(other, self)

    def __sub__(self, other: Value) -> Value:
        return sub(self, other)

    def __rsub__(self, other: Value) -> Value:
        return sub(other, self)

    def __mul__(self, other: Value) -> Value:
        return mul(self, other)

    def __rmul__(self, other: Value) -> Value:
        return mul(other, self)

    def __truediv__(self, other: Value) -> Value:
        return div(self, other)

    def __rtruediv__(self, other: Value) -> Value:
        return div(other, self)

    def __pow__(self, other: Value) -> Value:
        return pow(self, other)

    def __rpow__(self, other: Value) -> Value:
        return pow(other, self)

    def __neg__(self) -> Value:
        return neg(self)

    def __gt__(self, other: Value) -> bool:
        return primal_float(self) > primal_float(other)

    def __lt__(self, other: Value) -> bool:
        return primal_float(self) < primal_float(other)

    def __ge__(self, other: Value) -> bool:
        return primal_float(self) >= primal_float(other)

    def __le__(self, other: Value) -> bool:
        return primal_float(self) <= primal_float(other)


class Dual(_Box):
    """A forward-mode value: ``primal + tangent * eps_tag``."""

    __slots__ = ("primal", "tag", "tangent")

    def __init__(self, tag: Tag, primal: Value, tangent: Value) -> None:
        self.tag, self.primal, self.tangent = tag, primal, tangent

    def __repr__(self) -> str:
        return f"Dual({self.tag}, {self.primal!r}, {self.tangent!r})"


class Var(_Box):
    """A reverse-mode value: an entry of its tag's Wengert list.

    ``parents`` pairs each operand owned by the same tag with the local partial derivative
    (a Value, so that an outer call can differentiate it).
    """

    __slots__ = ("parents", "primal", "tag")

    def __init__(self, tag: Tag, primal: Value, parents: tuple[tuple[Var, Value], ...]) -> None:
        self.tag, self.primal, self.parents = tag, primal, parents
        tag.tape.append(self)

    def __repr__(self) -> str:
        return f"Var({self.tag}, {self.primal!r})"


def primal_float(v: Value) -> float:
    """The plain number inside any nesting of boxes."""
    while isinstance(v, _Box):
        v = v.primal  # type: ignore[attr-defined]
    return float(v)


def _owned(v: Value, tag: Tag) -> bool:
    return isinstance(v, _Box) and v.tag is tag


def _newest(args: tuple[Value, ...]) -> Tag | None:
    tags = [a.tag for a in args if isinstance(a, _Box)]
    return max(tags, key=lambda t: t.order) if tags else None


# ---- the operations ------------------------------------------------------------------------
# name -> (plain-float implementation, one partial-derivative rule per argument).
# A rule takes (ans, *primals) and is written with the oracle's operations.
Rule = Callable[..., Value]


def _pow_float(a: float, b: float) -> float:
    return math.pow(a, b)  # raises ValueError (never a complex) outside the real domain


_OPS: dict[str, tuple[Callable[..., float], tuple[Rule, ...]]] = {}


def _apply(name: str, *args: Value) -> Value:
    impl, rules = _OPS[name]
    tag = _newest(args)
    if tag is None:
        return impl(*(float(a) for a in args))
    primals = tuple(a.primal if _owned(a, tag) else a for a in args)
    ans = _apply(name, *primals)
    owned = [i for i, a in enumerate(args) if _owned(a, tag)]
    partials = {i: rules[i](ans, *primals) for i in owned}
    if tag.kind == "fwd":
        tangent: Value = 0.0
        for i in owned:
            tangent = add(tangent, mul(partials[i], args[i].tangent))
        return Dual(tag, ans, tangent)
    return Var(tag, ans, tuple((args[i], partials[i]) for i in owned))


def add(a: Value, b: Value) -> Value:
    return _apply("add", a, b)


def sub(a: Value, b: Value) -> Value:
    return _apply("sub", a, b)


def mul(a: Value, b: Value) -> Value:
    return _apply("mul", a, b)


def div(a: Value, b: Value) -> Value:
    return _apply("div", a, b)


def pow(a: Value, b: Value) -> Value:
    return _apply("pow", a, b)


def neg(a: Value) -> Value:
    return _apply("neg", a)


def sin(a: Value) -> Value:
    return _apply("sin", a)


def cos(a: Value) -> Value:
    return _apply("cos", a)


def exp(a: Value) -> Value:
    return _apply("exp", a)


def log(a: Value) -> Value:
    return _apply("log", a)


def tanh(a: Value) -> Value:
    return _apply("tanh", a)


def sqrt(a: Value) -> Value:
    return _apply("sqrt", a)


_OPS.update(
    {
        "add": (lambda a, b: a + b, (lambda z, a, b: 1.0, lambda z, a, b: 1.0)),
        "sub": (lambda a, b: a - b, (lambda z, a, b: 1.0, lambda z, a, b: -1.0)),
        "mul": (lambda a, b: a * b, (lambda z, a, b: b, lambda z, a, b: a)),
        "div": (lambda a, b: a / b, (lambda z, a, b: div(1.0, b), lambda z, a, b: neg(div(z, b)))),
        "pow": (
            _pow_float,
            (
                lambda z, a, b: mul(b, pow(a, sub(b, 1.0))),
                lambda z, a, b: mul(z, log(a)),  # only asked for when the exponent is owned
            ),
        ),
        "neg": (lambda a: -a, (lambda z, a: -1.0,)),
        "sin": (math.sin, (lambda z, a: cos(a),)),
        "cos": (math.cos, (lambda z, a: neg(sin(a)),)),
        "exp": (math.exp, (lambda z, a: z,)),
        "log": (math.log, (lambda z, a: div(1.0, a),)),
        "tanh": (math.tanh, (lambda z, a: sub(1.0, mul(z, z)),)),
        "sqrt": (math.sqrt, (lambda z, a: div(0.5, z),)),
    }
)


# ---- the two derivative operators --------------------------------------------------------
def fwd(f: Callable[[Value], Value], x: Value) -> Value:
    """``f'(x)`` by forward mode: push the tangent 1 of a fresh tag through ``f``."""
    tag = Tag("fwd")
    out = f(Dual(tag, x, 1.0))
    return out.tangent if _owned(out, tag) else 0.0


def rev(f: Callable[[Value], Value], x: Value) -> Value:
    """``f'(x)`` by reverse mode: record ``f`` on a fresh tag's tape, then sweep it backwards."""
    tag = Tag("rev")
    x_var = Var(tag, x, ())
    out = f(x_var)
    tape, tag.tape = tag.tape, []  # the tape belongs to this call only
    if not _owned(out, tag):
        return 0.0
    adjoint: dict[int, Value] = {id(out): 1.0}
    for var in reversed(tape):  # creation order is topological: children before parents
        g = adjoint.get(id(var))
        if g is None:
            continue
        for parent, partial in var.parents:
            contribution = mul(g, partial)
            previous = adjoint.get(id(parent))
            adjoint[id(parent)] = contribution if previous is None else add(previous, contribution)
    return adjoint.get(id(x_var), 0.0)
