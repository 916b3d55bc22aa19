"""The recorded program: what one call of a jitted function executed, as data.

A program is a straight list of instructions over numbered values. An ``Op`` applies one
primitive's NumPy implementation (with the parameters it was bound with) to values and
constants; a ``Check`` is a guard: a fact about a value that Python code consumed while
the program was recorded (``bool(x)`` was True, ``int(n)`` was 3, ``x.shape`` was (2,)). A
replay must re-establish every check before it may trust what follows it, since the Python
code that ran after the leak depended on it. ``EnvCheck`` guards are facts about the world
the function reads by name (a global still bound to the same object, a closed-over array
still holding the same bits), checked before anything runs.

Operands are ``Var`` (a value computed at replay: an input or an op's result) or ``Const``.
A constant is one of three kinds, which is what keeps a replay from being stale:

- ``literal``: an immutable Python or NumPy scalar, or a private read-only snapshot of an
  array the function made itself (``np.ones(3)``, a rule's seed): baked in;
- ``external``: an array the function reads by name (a global, a closure cell, an attribute
  of a bound method's object), used *by reference*, so the replay reads it as it is now;
  its binding and its bits are guarded (``EnvCheck``), since anything derived from it by
  plain NumPy while recording was baked in; reverse mode's copies of it (and their views)
  are read from it too (``RecordTrace.twin``);
- ``folded``: a value computed at recording from no input value (see ``_passes``).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from transforms.core import Primitive

__all__ = [
    "Var",
    "Const",
    "Op",
    "Check",
    "EnvCheck",
    "Program",
    "Operand",
    "OPERATOR_UFUNCS",
    "ufunc_of",
]


@dataclass(eq=False)
class Var:
    """A value the replay computes: an input of the program or an output of an op."""

    index: int
    shape: tuple[int, ...]
    dtype: str
    nbytes: int
    scalar: bool = False  # a NumPy scalar (a raw op's result): an output gets a 0-d array

    def __str__(self) -> str:
        return f"%{self.index}:{self.dtype}[{','.join(str(n) for n in self.shape)}]"


ConstKind = Literal["literal", "external", "folded"]


@dataclass(eq=False)
class Const:
    """A value the replay does not compute (see the module docstring for the kinds)."""

    value: Any
    kind: ConstKind

    def __str__(self) -> str:
        v = self.value
        if isinstance(v, (np.ndarray, np.generic)) and np.ndim(v):
            shape = ",".join(str(n) for n in np.shape(v))
            return f"{self.kind}:{np.asarray(v).dtype}[{shape}]"
        return repr(v.item()) if isinstance(v, (np.ndarray, np.generic)) else repr(v)


Operand = Var | Const


@dataclass(eq=False)
class Op:
    """``outputs = primitive.impl(*inputs, **params)``, in the floating-point error state
    ``errstate`` (NumPy's context value; ``None``: the caller's, as the op ran in it).

    ``wrap``: the implementation returned a NumPy scalar, which ``bind`` turns into a 0-d
    array (``no_scalars``); the replay does the same. ``call``: what computes the op when
    it is not the implementation (a Python operator applied to values, as eager code did:
    NumPy's scalar arithmetic rounds some operations differently from its ufunc loops).
    """

    primitive: Primitive[Any]
    inputs: tuple[Operand, ...]
    params: dict[str, Any]
    outputs: tuple[Var, ...]
    errstate: object | None
    wrap: bool
    call: Callable[..., Any] | None = None

    def __str__(self) -> str:
        params = "".join(f" {k}={v!r}" for k, v in self.params.items() if _short(v))
        args = " ".join(str(a) for a in self.inputs)
        outs = ", ".join(str(o) for o in self.outputs)
        return f"{outs} = {self.primitive.name}{params} {args}"


def _short(value: object) -> bool:
    return len(repr(value)) <= 40


CheckKind = Literal["bool", "int", "index", "float", "complex", "value", "shape"]


@dataclass(eq=False)
class Check:
    """A guard on a value Python consumed while recording: ``kind`` of ``var`` was
    ``expected`` (for ``value``: a read-only copy of the whole array, compared bit for bit).
    ``where`` is the user's source line that consumed it, named when the guard keeps
    missing."""

    var: Var
    kind: CheckKind
    expected: Any
    where: str

    def __str__(self) -> str:
        shown = "<array bits>" if self.kind == "value" else repr(self.expected)
        return f"guard {self.kind}({self.var}) == {shown}    # {self.where}"


EnvKind = Literal["binding", "length", "bits", "name"]


@dataclass(eq=False)
class EnvCheck:
    """A guard on what the function reads by name, checked before a replay runs.

    ``binding``: ``holder[key]`` (a dict: module globals, an object's ``__dict__``; or a
    closure cell, ``key`` ``None``) is still the object ``expected``; ``length``: a list or
    dict ``holder`` still has ``expected`` entries; ``bits``: the array ``holder`` still holds
    the bits of the snapshot ``expected``; ``name``: the Dask array ``holder``'s graph is
    still the one named ``expected`` (no item assignment since).
    """

    kind: EnvKind
    holder: Any
    key: Any
    expected: Any
    name: str

    def __str__(self) -> str:
        return f"guard {self.kind} {self.name}"


@dataclass(eq=False)
class Program:
    """One recorded specialisation: inputs, instructions, outputs, environment guards.

    ``outputs`` holds, per leaf of the result, a ``Var``, a ``Const``, or (``Const`` of kind
    ``literal``) any Python object the function returned as it was.
    """

    inputs: tuple[Var, ...]
    instructions: list[Op | Check]
    outputs: tuple[Operand, ...]
    env: list[EnvCheck] = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"{{ lambda {' '.join(str(v) for v in self.inputs)} ."]
        lines += [f"    {e}" for e in self.env]
        lines += [f"    {i}" for i in self.instructions]
        lines.append(f"  in ({', '.join(str(o) for o in self.outputs)}) }}")
        return "\n".join(lines)


# The arithmetic ufuncs by the Python operator eager code applied for them (``x * y`` of
# arrays: an op's ``call``), which runs the same ufunc loop.
OPERATOR_UFUNCS: dict[Callable[..., Any], np.ufunc] = {
    operator.add: np.add,
    operator.sub: np.subtract,
    operator.mul: np.multiply,
    operator.truediv: np.true_divide,
    operator.neg: np.negative,
}


def ufunc_of(op: Op) -> np.ufunc | None:
    """The ufunc ``op`` computes: its primitive's implementation, or the one of the Python
    operator eager code applied (``OPERATOR_UFUNCS``); ``None`` for any other op."""
    if op.call is None:
        impl = op.primitive.impl
        return impl if isinstance(impl, np.ufunc) else None
    return OPERATOR_UFUNCS.get(op.call)
