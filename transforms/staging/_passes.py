"""Optimisation passes over a recorded program: common subexpressions, dead code, uniform
constants, liveness.

Constant folding happens while recording (``_record``: an op whose operands depend on no
input and no external array, or whose result depends on shapes only, is computed there
and becomes a constant). Here:

- ``eliminate_common``: an op applying the same primitive in the same way (the same
  ``Op.call``, an operator or the implementation, and the same 0-d wrap: NumPy's scalar
  arithmetic is not its ufunc loop) with the same parameters to the same operands (a scalar
  constant identified by its type and bits, another by its identity; either
  order for a ``commutative`` one on real numbers, exact to the bit) as an earlier op reuses
  that op's results, if it ran in the same floating-point error state or
  with warnings off (derivative code: it could not warn, so nothing observable is lost).
  Nested transforms recompute a lot (a ``hessian`` evaluates the forward pass in several
  rules);
- ``eliminate_ones``: a product of a real floating array with a constant one or array of
  ones (a gradient's unit seed and its broadcasts, which eager code multiplies by) is that
  array, to the bit (signed zeros, infinities and NaN included: ``transforms.numpy.multiply``
  skips it so), when the product has the array's shape and dtype, is an array (not a NumPy
  scalar), and, if it is a result, the array is a ufunc's or operator's own and no other
  result (a result is a fresh array of its own, as eager's);
- ``uniform_constants``: an elementwise ``add``, ``subtract``, ``multiply`` or ``divide`` of
  an array and a constant array holding one value throughout (a seed's broadcast ``2``),
  with at most one axis longer than one, whose result has the array's shape, reads the
  constant as a 0-d array of its dtype instead: each element meets the same number in the
  same IEEE operation (the same bits), NumPy 2 promotes a 0-d array as it does an array
  (NEP 50), and the result's memory order is the array's either way (NumPy's iterator
  orders axes by operands' strides, and a broadcast operand's zero strides take no part);
  the op runs as one loop over the array rather than a loop per row of a broadcast;
- ``eliminate_dead``: ops none of whose results reaches an output or a guard are dropped
  (as JAX does: an op whose result is unused and that would raise is not run);
- ``last_uses``: where each value is read for the last time, so the code generator releases
  its buffer there.
"""

from __future__ import annotations

import dataclasses
import struct
from typing import Any

import numpy as np

from transforms.core._quiet import _QUIET

from ._program import Check, Const, Op, Operand, Program, Var, ufunc_of

__all__ = [
    "eliminate_common",
    "eliminate_dead",
    "eliminate_ones",
    "last_uses",
    "optimize",
    "uniform_constants",
]


def _param_key(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return (type(value), tuple(_param_key(v) for v in value))
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    if isinstance(value, float) and value != value:
        return ("nan",)  # NaN != NaN: keyed by kind
    return (type(value), value)


def _operand_key(operand: Operand) -> tuple[Any, ...]:
    """What identifies an operand: a value by its number, an immutable scalar constant by
    its type and bits (two ``np.float64(-0.5)`` seeds made by two rules are one operand;
    ``0.0`` and ``-0.0`` are two), any other constant by its identity."""
    if isinstance(operand, Var):
        return ("v", operand.index)
    v = operand.value
    if type(v) is float:
        return ("f", struct.pack("<d", v))
    if type(v) in (int, bool):
        return ("i", type(v).__name__, v)
    if isinstance(v, np.generic) and v.dtype.kind in "biufc":
        return ("g", v.dtype.str, v.tobytes())
    return ("c", id(v))


def _complex(operands: tuple[Operand, ...]) -> bool:
    """Whether a complex number is among ``operands``: NumPy's complex product with fused
    multiply-adds rounds ``a * b`` and ``b * a`` differently, so their order is kept."""
    for a in operands:
        try:
            kind = a.dtype if isinstance(a, Var) else str(np.result_type(a.value))
        except (TypeError, ValueError):  # not a number: kept in order
            return True
        if "complex" in kind:
            return True
    return False


def eliminate_common(program: Program) -> Program:
    """``program`` with each repeated op replaced by the results of its first occurrence."""
    seen: dict[Any, tuple[tuple[Var, ...], object]] = {}
    renamed: dict[int, Var] = {}

    def rename(operand: Operand) -> Operand:
        return renamed.get(operand.index, operand) if isinstance(operand, Var) else operand

    def rename_var(var: Var) -> Var:
        return renamed.get(var.index, var)

    kept: list[Op | Check] = []
    for instr in program.instructions:
        if isinstance(instr, Check):
            kept.append(Check(rename_var(instr.var), instr.kind, instr.expected, instr.where))
            continue
        inputs = tuple(rename(a) for a in instr.inputs)
        keys = tuple(_operand_key(a) for a in inputs)
        if instr.primitive.commutative and len(keys) == 2 and not _complex(inputs):
            keys = tuple(sorted(keys))
        try:
            key = (
                instr.primitive,
                instr.call,  # (an operator and the ufunc round scalars differently)
                instr.wrap,  # (a NumPy scalar and a 0-d array are different operands)
                keys,
                tuple(sorted((k, _param_key(v)) for k, v in instr.params.items())),
            )
            hash(key)
        except TypeError:  # an unhashable parameter that escaped _param_key: kept as it is
            key = None
        first = seen.get(key) if key is not None else None
        if first is not None and (instr.errstate is _QUIET or instr.errstate is first[1]):
            for out, earlier in zip(instr.outputs, first[0], strict=True):
                renamed[out.index] = earlier
            continue
        if key is not None and first is None:
            seen[key] = (instr.outputs, instr.errstate)
        kept.append(dataclasses.replace(instr, inputs=inputs))
    outputs = tuple(rename(o) for o in program.outputs)
    return Program(program.inputs, kept, outputs, program.env)


def _one(operand: Operand) -> bool:
    """A constant one, or an array of ones (a broadcast seed), fixed at recording."""
    if not isinstance(operand, Const) or operand.kind == "external":  # (external: may change)
        return False
    v = operand.value
    if type(v) in (int, float):
        return bool(v == 1)
    return type(v) is np.ndarray and v.dtype.kind == "f" and bool(np.all(v == 1))


def eliminate_ones(program: Program) -> Program:
    """``program`` with each product of an array and the constant one replaced by the array
    (see the module docstring for when that is exact)."""
    results = {o.index for o in program.outputs if isinstance(o, Var)}
    # values that are arrays of their own at replay (a ufunc's or an operator's result, not
    # a view of an argument as a reshape's may be): the only ones that may become a result
    fresh = {
        o.index
        for i in program.instructions
        if isinstance(i, Op) and (i.call is not None or isinstance(i.primitive.impl, np.ufunc))
        for o in i.outputs
    }
    renamed: dict[int, Var] = {}
    kept: list[Op | Check] = []
    for instr in program.instructions:
        if isinstance(instr, Check):
            var = renamed.get(instr.var.index, instr.var)
            kept.append(Check(var, instr.kind, instr.expected, instr.where))
            continue
        inputs = tuple(renamed.get(a.index, a) if isinstance(a, Var) else a for a in instr.inputs)
        if instr.primitive.name == "multiply" and len(inputs) == 2 and not instr.wrap:
            (out,) = instr.outputs
            a, b = inputs
            other = b if _one(a) else a if _one(b) else None
            if (
                isinstance(other, Var)
                and other.shape
                and other.shape == out.shape
                and not other.scalar
                and not out.scalar
                and other.dtype == out.dtype
                and np.dtype(out.dtype).kind == "f"
                and (out.index not in results or (other.index in fresh - results))
            ):
                renamed[out.index] = other
                if out.index in results:  # (a fresh array an op made: now the result)
                    results.add(other.index)
                continue
        kept.append(dataclasses.replace(instr, inputs=inputs))
    outputs = tuple(renamed.get(o.index, o) if isinstance(o, Var) else o for o in program.outputs)
    return Program(program.inputs, kept, outputs, program.env)


_ARITHMETIC = frozenset((np.add, np.subtract, np.multiply, np.true_divide))
_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _uniform(operand: Operand) -> np.ndarray[Any, Any] | None:
    """The one value of a constant array that holds it throughout (to the bit), as a
    read-only 0-d array, if the array has at most one axis longer than one."""
    if not isinstance(operand, Const) or operand.kind == "external":
        return None
    v = operand.value
    if type(v) is not np.ndarray or v.ndim == 0 or v.size == 0 or v.dtype.kind not in "fiu":
        return None
    bits = _UNSIGNED.get(v.dtype.itemsize)
    if bits is None or sum(n > 1 for n in v.shape) > 1:
        return None
    flat = np.ascontiguousarray(v).reshape(-1).view(bits)
    if not bool(np.all(flat == flat[0])):
        return None
    value = flat[:1].view(v.dtype).reshape(()).copy()
    value.flags.writeable = False
    return value


def uniform_constants(program: Program) -> Program:
    """``program`` with each uniform constant operand of an elementwise arithmetic op read
    as a 0-d array (see the module docstring for when that is exact)."""
    kept: list[Op | Check] = []
    for instr in program.instructions:
        if (
            isinstance(instr, Op)
            and ufunc_of(instr) in _ARITHMETIC
            and len(instr.inputs) == 2
            and not instr.params
            and not instr.wrap
        ):
            out = instr.outputs[0].shape
            inputs = list(instr.inputs)
            for k, (a, other) in enumerate(((inputs[0], inputs[1]), (inputs[1], inputs[0]))):
                value = _uniform(a)
                if value is not None and isinstance(other, Var) and other.shape == out:
                    inputs[k] = Const(value, "literal")
            instr = dataclasses.replace(instr, inputs=tuple(inputs))
        kept.append(instr)
    return Program(program.inputs, kept, program.outputs, program.env)


def eliminate_dead(program: Program) -> Program:
    """``program`` without the ops whose results reach no output and no guard."""
    live = {o.index for o in program.outputs if isinstance(o, Var)}
    kept: list[Op | Check] = []
    for instr in reversed(program.instructions):
        if isinstance(instr, Check):
            live.add(instr.var.index)
            kept.append(instr)
        elif any(o.index in live for o in instr.outputs):
            live.update(a.index for a in instr.inputs if isinstance(a, Var))
            kept.append(instr)
    kept.reverse()
    return Program(program.inputs, kept, program.outputs, program.env)


def last_uses(program: Program) -> dict[int, int]:
    """For each value computed by an op, the position of the last instruction that reads it
    (its defining op if nothing does); outputs and inputs are never released."""
    last: dict[int, int] = {}
    for i, instr in enumerate(program.instructions):
        if isinstance(instr, Check):
            last[instr.var.index] = i
            continue
        for a in instr.inputs:
            if isinstance(a, Var):
                last[a.index] = i
        for o in instr.outputs:
            last.setdefault(o.index, i)
    for v in program.inputs:
        last.pop(v.index, None)
    for out in program.outputs:
        if isinstance(out, Var):
            last.pop(out.index, None)
    return last


def optimize(program: Program) -> Program:
    """The passes in order: uniform constants (which may make a product one by a 0-d one),
    products by one, then common subexpressions (both make more code dead)."""
    return eliminate_dead(eliminate_common(eliminate_ones(uniform_constants(program))))


def count_ops(program: Program) -> int:
    """The number of primitive applications in ``program``."""
    return sum(isinstance(i, Op) for i in program.instructions)
