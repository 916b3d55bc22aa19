"""Which elementwise ops of a program may write their result into a dying operand's buffer.

A Hessian's program is a chain of elementwise ops on ``n x n`` arrays, each result read once
by the next op and then dead. Eager code allocates a new array for each; a replay may pass
the dying operand as the ufunc's ``out``, which keeps the working set small (the arrays stay
in cache) and computes the same elements by the same loop: the bits are eager's. The result
must also have eager's memory layout (a later matmul may round differently on another
layout) and no other value may see the write, so an op qualifies when:

- it is a NumPy ufunc (not a generalised one: ``matmul`` reads whole rows) with one result
  and no parameters (by its implementation, or by the
  Python operator ``+``, ``-``, ``*`` or ``/`` on arrays, which calls that ufunc; not ``**``,
  whose operator takes shortcuts such as ``np.square``), of the operand's shape and dtype,
  with at least one axis and none of length one (whose stride NumPy may choose freely);
- the operand is read for the last time here, was made by such an op (a fresh array that
  no other value is a view of: every op that reads it is elementwise, none makes a view) and
  is large enough (``MIN_BYTES``) for the saving to exceed the check;
- NumPy's iterator would give the result the operand's layout: the operand is compact (a
  ufunc made it), so a result alone with it, or with a 0-d, a Python or a one-axis operand
  (whose zero strides take no part in ordering the axes), takes its strides exactly; with
  another operand of the full shape, only when that one has the same strides, which the
  replay checks (``Reuse.check``).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np

from ._program import OPERATOR_UFUNCS, Check, Op, Operand, Program, Var, ufunc_of

__all__ = ["MIN_BYTES", "Reuse", "reusable"]

MIN_BYTES = 1 << 15  # an operand smaller than this is not worth the check
_ELEMENTWISE_READERS = frozenset((*OPERATOR_UFUNCS, operator.pow))


@dataclass(frozen=True)
class Reuse:
    """Op ``position`` computes ``ufunc`` with ``out=`` the buffer of its operand ``into``;
    ``check``: an operand of the full shape whose strides must equal ``into``'s at replay
    (else the op allocates, as in eager code)."""

    ufunc: np.ufunc
    into: Var
    check: Operand | None


def _ufunc(op: Op) -> np.ufunc | None:
    """The ufunc ``op`` calls, if it is one of the elementwise kind this module rewrites."""
    if op.params or op.wrap or op.primitive.multiple_results:
        return None
    ufunc = ufunc_of(op)
    if ufunc is None or ufunc.nout != 1 or ufunc.signature is not None:
        return None  # (not a generalised ufunc either: matmul)
    return ufunc


def _makes_an_array(op: Op) -> bool:
    """Whether ``op``'s one result is a new array (a ufunc's, a generalised one's included)."""
    if op.call is None and isinstance(op.primitive.impl, np.ufunc):
        return not (op.params or op.wrap or op.primitive.multiple_results)
    return _ufunc(op) is not None


def _reads_elementwise(instr: Op | Check) -> bool:
    """Whether ``instr`` reads its operands without making a view of any (a ufunc, a
    generalised one included, or an arithmetic operator on arrays)."""
    if isinstance(instr, Check):
        return True
    if instr.call is None:
        return isinstance(instr.primitive.impl, np.ufunc)
    return instr.call in _ELEMENTWISE_READERS


def _axes_ordered_by(operand: Operand, shape: tuple[int, ...]) -> bool:
    """Whether ``operand`` (broadcast to ``shape``) may take part in ordering the axes of a
    ufunc's result: it has two or more axes longer than one."""
    if isinstance(operand, Var):
        dims = operand.shape
    else:
        dims = np.shape(operand.value)
    return sum(n > 1 for n in dims) > 1


def reusable(program: Program, last: dict[int, int]) -> dict[int, Reuse]:
    """The ops of ``program`` (by position) that may write into a dying operand's buffer;
    ``last``: each value's last read (``last_uses``). Its values must be NumPy's
    (``_codegen.numpy_only``): a Dask array's ufuncs take no NumPy ``out``."""
    made_fresh: set[int] = set()
    viewed: set[int] = set()  # values some op may have made a view of
    for instr in program.instructions:
        if isinstance(instr, Op) and _makes_an_array(instr):
            made_fresh.add(instr.outputs[0].index)
        if isinstance(instr, Op) and not _reads_elementwise(instr):
            viewed.update(a.index for a in instr.inputs if isinstance(a, Var))
    fresh = made_fresh - viewed
    found: dict[int, Reuse] = {}
    for i, instr in enumerate(program.instructions):
        if not isinstance(instr, Op):
            continue
        ufunc = _ufunc(instr)
        out = instr.outputs[0]
        if ufunc is None or ufunc.nin != len(instr.inputs) or 1 in out.shape or not out.shape:
            continue
        for k, a in enumerate(instr.inputs):
            if not (
                isinstance(a, Var)
                and a.index in fresh
                and not a.scalar
                and last.get(a.index) == i
                and a.nbytes >= MIN_BYTES
                and a.shape == out.shape
                and a.dtype == out.dtype
            ):
                continue
            others = [b for j, b in enumerate(instr.inputs) if j != k and b is not a]
            check: Operand | None = None
            if others and _axes_ordered_by(others[0], out.shape):
                other = others[0]
                shape = other.shape if isinstance(other, Var) else np.shape(other.value)
                if shape != out.shape:
                    continue  # (a broadcast that orders axes: not checked at replay)
                check = other
            found[i] = Reuse(ufunc, a, check)
            break
    return found
