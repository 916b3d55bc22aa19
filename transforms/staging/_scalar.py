"""Which ops of a program the code generator computes on Python floats instead of NumPy.

A program of 0-d values (a nested ``grad`` at a scalar: hundreds of additions and products)
spends its replay in NumPy's per-call overhead, a fraction of a microsecond each, for one
floating-point operation. Python's ``float`` is an IEEE double, and its ``+``, ``-``, ``*``,
``/`` and unary ``-`` are the C operations on doubles that NumPy's float64 loops and scalar
arithmetic perform: correctly rounded, so the same bits (signed zeros, infinities and NaN
included). The code generator therefore holds such a value as a Python float and writes the
operator, a few tens of nanoseconds, where it is exact to do so:

- the op is ``add``, ``subtract``, ``multiply``, ``negative`` or ``divide``, by its ufunc or
  by the Python operator eager code applied, with no parameters, one result, a 0-d float64;
- every operand is a 0-d float64 value or a constant Python or NumPy float, a 0-d float64
  array, or an integer a double holds exactly (NumPy converts it to that double, as Python
  does): NumPy's type promotion then gives float64 whichever operands are Python floats;
- a division's divisor is a constant other than zero (a rule's ``/ 4``): Python raises
  ``ZeroDivisionError`` where NumPy gives an infinity or a NaN, and checks nothing else (an
  overflow is an infinity, as in NumPy);
- the op runs with NumPy's warnings off (``transforms.core.quiet``, derivative code): NumPy
  reports an overflow or an invalid operation by its error state, Python's float arithmetic
  never does, so an op eager code runs in the caller's error state keeps NumPy (it may
  warn, or raise under ``np.errstate(all="raise")``).

Power stays NumPy's (Python raises ``OverflowError``, or makes a complex number, where NumPy
gives an infinity or a NaN), and so does every transcendental function (``math.sin`` is the
C library's, not NumPy's own, and may differ). Where a Python-float value meets another op
it is passed as it is to a ufunc of float64 operands (``takes_python_floats``: NumPy makes
the same 0-d float64 array of it) and given back eager's type anywhere else (an operator,
another function, a guard, an output: ``_codegen``).
"""

from __future__ import annotations

import numpy as np

from transforms.core._quiet import _QUIET

from ._program import Check, Const, Op, Operand, Program, Var, ufunc_of

__all__ = ["PYTHON_OPERATORS", "float_constant", "python_float_ops", "takes_python_floats"]

# The primitive's name -> the source of the Python operator that computes it on floats.
PYTHON_OPERATORS = {
    "add": "{} + {}",
    "subtract": "{} - {}",
    "multiply": "{} * {}",
    "negative": "-{}",
    "divide": "{} / {}",
}
# The ufuncs computed on Python floats, by the primitive's name.
_UFUNCS = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "negative": np.negative,
    "divide": np.true_divide,
}
_EXACT_INT = 2**53  # an integer of at most this magnitude is a double exactly


def _float64_scalar(var: Var) -> bool:
    return var.shape == () and var.dtype == "float64"


def float_constant(const: Const) -> float | None:
    """The Python float equal to ``const`` to the bit, if it is an operand that NumPy would
    convert to that float64 whatever the other operand (see the module docstring)."""
    if const.kind == "external":  # read by reference at each call: may change
        return None
    v = const.value
    if type(v) is float or type(v) is np.float64:
        return float(v)
    if type(v) is int and -_EXACT_INT <= v <= _EXACT_INT:
        return float(v)
    if type(v) is np.ndarray and v.shape == () and v.dtype == np.float64:
        return float(v)
    return None


def _eligible(op: Op) -> bool:
    ufunc = _UFUNCS.get(op.primitive.name)
    if ufunc is None or op.params or op.primitive.multiple_results or op.errstate is not _QUIET:
        return False
    if ufunc_of(op) is not ufunc:  # (by its ufunc, or the Python operator eager code applied)
        return False
    if len(op.inputs) != ufunc.nin or not _float64_scalar(op.outputs[0]):
        return False
    if op.primitive.name == "divide":  # (by a constant other than zero only)
        divisor = op.inputs[1]
        if not isinstance(divisor, Const) or float_constant(divisor) in (None, 0.0):
            return False
    return all(
        _float64_scalar(a) if isinstance(a, Var) else float_constant(a) is not None
        for a in op.inputs
    )


def python_float_ops(program: Program) -> set[int]:
    """The positions in ``program.instructions`` of the ops computed on Python floats."""
    return {
        i
        for i, instr in enumerate(program.instructions)
        if isinstance(instr, Op) and _eligible(instr)
    }


def takes_python_floats(op: Op | Check) -> bool:
    """Whether ``op`` may read a Python float where eager code gave it a 0-d float64 array
    or NumPy scalar: a ufunc called with no parameters on float64 operands, which NumPy
    converts to the same 0-d float64 array and computes with the same loop."""
    if not isinstance(op, Op) or op.call is not None or op.params:
        return False
    if not isinstance(op.primitive.impl, np.ufunc):
        return False
    return all(_float64_operand(a) for a in op.inputs)


def _float64_operand(a: Operand) -> bool:
    if isinstance(a, Var):
        return a.dtype == "float64"
    return float_constant(a) is not None
