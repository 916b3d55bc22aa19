"""The recording interpreter: a trace below every transform the jitted function opens.

Like ``make_trace``'s logging interpreter, it is pushed before the function runs, so every
primitive that reaches plain values passes through it, whichever transforms the function
nests (the forward pass, each backward pass, every rule's own primitives): it runs the
primitive's implementation and appends one ``Op``. A primitive whose parameters hold
Python callables (a structured loop) is one op like any other: its implementation runs the
loop at replay.

Its tracers behave as the ndarrays they hold, so the function's Python runs as in eager
mode; every place a concrete value leaks into Python (``bool``, ``int``, ``float``,
``complex``, ``operator.index``, ``.item()``, ``.tolist()``, ``np.asarray``, a raw NumPy
function with no differentiable twin, or a rule that reads the value under a higher
transform's tracer, which goes through ``.primal``) becomes a ``Check`` placed right after
the value is computed. ``nonzero``/``argwhere`` results, whose shape depends on values, get
a shape check.

Values keep the types eager code gives them, since NumPy computes some operations on NumPy
scalars with other code than on arrays (a complex ``*`` or a ``**`` by its scalar arithmetic,
which rounds differently from the ufunc loop): ``bind`` makes a scalar result a 0-d array,
but a Python operator on plain values (``ct * d`` in a pullback, ``-sin(x)`` in a rule, ``x
* 2`` in user code) and raw NumPy ufuncs keep NumPy's scalar, and so does the lowest reverse
trace, which calls the implementations directly (``VJPTrace`` at level 0, which under a
recording is one level up). Such an application is recorded ``raw`` (``Op.call``: the
operator itself, or the implementation without the 0-d wrap), so a replay computes what
eager computes, bit for bit.

A recording is abandoned (``Unrecordable``: the call runs eagerly) when the function does
something a replay cannot repeat: it reaches a tracer of an outer transform (a closure over
a value being differentiated), writes into a traced array, or binds a primitive whose
implementation reaches a value of the recording (a function among its parameters, such as a
``transforms.lax`` loop's body, that closes over a traced value: the op would replay it with
the recording's values).
"""

from __future__ import annotations

import copy
import ctypes
import dis
import operator
import os
import sys
from collections.abc import Callable, Sequence
from types import FrameType
from typing import Any, NoReturn

import numpy as np
from numpy.lib.array_utils import byte_bounds

from transforms.core import Primitive, Trace, Tracer, arrays, no_scalars, number_primitives, twins
from transforms.core._quiet import _STATE
from transforms.core._trace import peek, refuse_concrete
from transforms.reverse._protect import _same_bytes
from transforms.reverse._trace import _VALUE_FREE, VJPTrace

from ._program import Check, CheckKind, Const, Op, Var

__all__ = ["RecordTrace", "RecordTracer", "Unrecordable"]

# Primitives whose result's shape depends on its operand's values, not only on its shape.
_DATA_DEPENDENT_SHAPE = frozenset(("nonzero", "argwhere"))
# Primitives whose result depends on their operands' shape and dtype only (reverse mode's
# list of them): folded.
VALUE_FREE = _VALUE_FREE

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # transforms/

# The code that calls implementations directly when its trace is the lowest (no 0-d wrap of
# a scalar result): under a recording, a bind from it at the level just above is raw.
_RAW_CALLERS = frozenset((VJPTrace.process_primitive.__code__,))

# The Python operators whose application to plain values NumPy computes itself (a scalar
# result stays a scalar; NumPy scalars get NumPy's scalar arithmetic): the primitive each
# binds and the operator that computes it in eager code (arguments in the primitive's order).
_BINARY = {
    "add": operator.add,
    "subtract": operator.sub,
    "multiply": operator.mul,
    "divide": operator.truediv,
    "power": operator.pow,
}
_OPERATOR_UFUNCS = {
    np.add: ("add", operator.add),
    np.subtract: ("subtract", operator.sub),
    np.multiply: ("multiply", operator.mul),
    np.true_divide: ("divide", operator.truediv),
    np.power: ("power", operator.pow),
}
_BINARY_OP = dis.opmap["BINARY_OP"]


def _operator_applied(frame: FrameType) -> bool:
    """Whether ``frame`` is applying a binary operator (not calling a function): how a ufunc
    reached from C tells ``a * x`` (a plain ``a``'s operator) from ``np.multiply(a, x)``."""
    return frame.f_code.co_code[frame.f_lasti] == _BINARY_OP


def is_lazy(x: object) -> bool:
    """Whether ``x`` is a Dask array: a jitted function traces it as an input (keyed by shape,
    dtype and chunks, never by its values) and replays build its graph again, computing
    nothing; one read by name is guarded by its identity and its graph's ``name``, which an
    item assignment changes (``_environment``)."""
    return arrays.is_foreign(x) and arrays.library_of(x) == "dask" and hasattr(x, "chunks")


_WALKS_PAST = frozenset((refuse_concrete.__code__, peek.__code__))


class Unrecordable(BaseException):
    """The function did something a replay cannot repeat; the call runs eagerly.

    A ``BaseException``: the function's own ``except Exception`` must not swallow it and go
    on recording as if the refused operation had happened."""


def _user_line() -> str:
    """The innermost source line outside this library: where a value leaked into Python."""
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not os.path.abspath(filename).startswith(_PACKAGE):
            return f"{filename}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>"


def _results(ans: Any, primitive: Primitive[Any]) -> tuple[Any, ...]:
    return tuple(ans) if primitive.multiple_results else (ans,)


def _layout(value: np.ndarray[Any, Any]) -> tuple[Any, ...]:
    return (value.shape, value.dtype, value.strides)


def _snapshot(value: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """A private, read-only copy of ``value`` with its memory layout (its strides: a
    broadcast view's zero strides, a transposed matrix's order), since NumPy's and LAPACK's
    kernels may round differently on another layout, and a replay must give eager's bits."""
    if value.dtype.hasobject or value.size == 0 or value.flags.c_contiguous:
        snap = value.copy(order="K")
    else:
        low, high = byte_bounds(value)
        memory = np.empty(high - low, np.uint8)
        ctypes.memmove(memory.ctypes.data, low, high - low)
        start = value.__array_interface__["data"][0]
        snap = np.ndarray(
            value.shape, value.dtype, buffer=memory, offset=start - low, strides=value.strides
        )
    snap.flags.writeable = False
    return snap


class RecordTracer(Tracer):
    """A value of the recording: behaves as the ndarray it holds; leaks become guards."""

    __slots__ = ("node", "value")

    _trace: RecordTrace

    def __init__(self, trace: RecordTrace, value: Any, var: Var | Const) -> None:
        self._trace = trace
        self.value = value
        self.node = var

    @property
    def primal(self) -> Any:
        # Only code that reads the concrete value goes down to this level (``concrete``:
        # a rule deciding on values, or a higher tracer's bool()); ``refuse_concrete`` and
        # ``peek`` (the value's kind, which the cache key holds) only walk past it.
        if sys._getframe(1).f_code not in _WALKS_PAST:
            if arrays.is_foreign(self.value):  # a guard on a Dask array's values would
                raise Unrecordable("a rule read the values of a Dask array")  # compute it
            self._trace.check(self, "value", _snapshot(np.asarray(self.value)))
        return self.value

    @property
    def shape(self) -> tuple[int, ...]:
        return np.shape(self.value)

    @property
    def dtype(self) -> np.dtype[Any]:
        value = self.value
        return value.dtype if hasattr(value, "dtype") else np.asarray(value).dtype

    # ---- leaks of concrete values into Python: each is a guard ----------------------------
    def __bool__(self) -> bool:
        result = bool(self.value)
        self._trace.check(self, "bool", result)
        return result

    def __int__(self) -> int:
        result = int(self.value)
        self._trace.check(self, "int", result)
        return result

    def __index__(self) -> int:
        result = operator.index(self.value)
        self._trace.check(self, "index", result)
        return result

    def __float__(self) -> float:
        result = float(self.value)
        self._trace.check(self, "float", result.hex())
        return result

    def __complex__(self) -> complex:
        result = complex(self.value)
        self._trace.check(self, "complex", (result.real.hex(), result.imag.hex()))
        return result

    def _leak(self) -> Any:
        self._trace.check(self, "value", _snapshot(np.asarray(self.value)))
        return self.value

    def item(self, *args: Any) -> Any:
        return self._leak().item(*args)

    def tolist(self) -> Any:
        return self._leak().tolist()

    def __array__(self, dtype: object = None, copy: object = None) -> Any:
        value = np.asarray(self._leak())
        if dtype is not None and dtype != value.dtype:
            return value.astype(dtype)  # type: ignore[call-overload]
        return value.copy() if copy else value

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        fn = twins.get(ufunc)
        if method == "__call__" and fn is not None and kwargs.get("out") is None:
            trace = self._trace
            if not trace.alive or not trace.owns_all(inputs):
                return fn(*inputs, **kwargs)
            binary = _OPERATOR_UFUNCS.get(ufunc)
            if binary is not None and not kwargs and _operator_applied(sys._getframe(1)):
                # ``plain * x``: the plain operand's operator handed over to the ufunc; eager
                # code ran the operator on two values (NumPy scalars: scalar arithmetic)
                name, op = binary
                return trace.apply(number_primitives[name], inputs, {}, op, True)
            trace.raw = ufunc  # eager's ufunc on plain values: its result unwrapped
            try:
                return fn(*inputs, **kwargs)
            finally:
                trace.raw = None
        inputs = tuple(self._trace.leak(x) for x in inputs)
        return getattr(ufunc, method)(*inputs, **kwargs)

    # ---- operators: as NumPy applies them to the values (see the module docstring) ---------
    def _arithmetic(self, name: str, other: object, reflected: bool) -> Any:
        trace = self._trace
        if not trace.alive or (isinstance(other, Tracer) and other._trace is not trace):
            return super()._arithmetic(name, other, reflected)
        args = (other, self) if reflected else (self, other)
        return trace.apply(number_primitives[name], args, {}, _BINARY[name], True)

    def _as_numpy(self, marker: object, method: Any, *args: Any) -> Any:
        """``method(self, *args)`` (the tracer's operator), its bind marked raw: NumPy's own
        operator on the value keeps a scalar result a scalar (``-x``, ``x[0]``)."""
        trace = self._trace
        if not trace.alive or not trace.owns_all(args):
            return method(self, *args)
        trace.raw = marker
        try:
            return method(self, *args)
        finally:
            trace.raw = None

    def __neg__(self) -> Any:
        return self._as_numpy(np.negative, Tracer.__neg__)

    def __abs__(self) -> Any:
        return self._as_numpy(np.absolute, Tracer.__abs__)

    def __getitem__(self, index: object) -> Any:
        return self._as_numpy("getitem", Tracer.__getitem__, index)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        fn = twins.get(func)
        if fn is not None:
            return fn(*args, **kwargs)
        leak = self._trace.leak
        args = [leak(a) for a in args]
        kwargs = {k: leak(v) for k, v in kwargs.items()}
        return func(*args, **kwargs)

    def __setitem__(self, index: object, value: object) -> NoReturn:
        raise Unrecordable("the function writes into an array it computes or receives")

    # ``x += 1`` writes into an ndarray argument in eager code (the caller sees it); a
    # replay could not: such a function runs eagerly.
    def _in_place(self, other: object) -> NoReturn:
        raise Unrecordable("the function updates an array in place (x += ...)")

    __iadd__ = __isub__ = __imul__ = __itruediv__ = __ifloordiv__ = _in_place
    __imod__ = __ipow__ = __imatmul__ = __iand__ = __ior__ = __ixor__ = _in_place

    # Text of a value is taken once, at recording, as a print's side effect is (docs/jit.md).
    def __repr__(self) -> str:
        return repr(self.value)

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


class RecordTrace(Trace[RecordTracer]):
    """The recording interpreter of one jitted call (see the module docstring)."""

    stages = True  # a lax loop under it (and under the transforms above it) is one op

    __slots__ = (
        "ambient",
        "count",
        "externals",
        "instructions",
        "layouts",
        "max_ops",
        "raw",
        "reached",
        "snapshots",
    )

    def __init__(self, level: int, externals: dict[int, Any], max_ops: int | None = None) -> None:
        super().__init__(level, "jit")
        self.instructions: list[Op | Check] = []
        self.max_ops = max_ops  # a recording that grows past it is abandoned (Unrecordable)
        self.count = 0
        self.externals = externals
        # The ndarrays read by name, by layout: where ``twin`` looks for a copy's original.
        self.layouts: dict[tuple[Any, ...], list[np.ndarray[Any, Any]]] = {}
        for value in externals.values():
            if type(value) is np.ndarray:
                self.layouts.setdefault(_layout(value), []).append(value)
        # Arrays the function made and passed to primitives, by id: (array, snapshot).
        self.snapshots: dict[int, tuple[Any, np.ndarray[Any, Any]]] = {}
        self.ambient = _STATE.get() if _STATE is not None else None
        # How many times the function reached this trace (a primitive or a guard): an
        # implementation that does is not replayable (the module docs).
        self.reached = 0
        # The ufunc (or primitive name) an operator or raw NumPy call on this trace's values
        # is about to bind (``RecordTracer``): that bind keeps a scalar result a scalar.
        self.raw: object = None

    def new_var(self, value: Any) -> Var:
        """A number for a value an op computes (or an input)."""
        self.count += 1
        shape = np.shape(value)
        dtype = str(value.dtype) if hasattr(value, "dtype") else str(np.result_type(value))
        nbytes = getattr(value, "nbytes", 0)
        nbytes = int(nbytes) if nbytes == nbytes else 0  # (a Dask array of unknown size: NaN)
        return Var(self.count, shape, dtype, nbytes, isinstance(value, np.generic))

    def new(self, value: Any) -> tuple[RecordTracer, Var]:
        var = self.new_var(value)
        return RecordTracer(self, value, var), var

    def folded(self, value: Any) -> RecordTracer:
        kept = _snapshot(value) if type(value) is np.ndarray else value
        return RecordTracer(self, value, Const(kept, "folded"))

    def check(self, tracer: RecordTracer, kind: CheckKind, expected: Any) -> None:
        self.reached += 1
        var = tracer.node
        if tracer._trace is not self or not self.alive or isinstance(var, Const):
            return  # a finished recording's value, or one that depends on no input: fixed
        self.instructions.append(Check(var, kind, expected, _user_line()))

    def leak(self, value: Any) -> Any:
        """``value``'s concrete value if it is one of this trace's tracers (a guard)."""
        if isinstance(value, RecordTracer) and value._trace is self:
            return value._leak()
        if isinstance(value, (list, tuple)):
            return type(value)(self.leak(v) for v in value)
        return value

    def constant(self, value: Any, operand: bool = False) -> Const:
        """``value`` as a constant: by reference if the function reads it by name, else as
        it is now (a snapshot: the function may write into it later). An ``operand`` of an
        op may also be read from the array it copies (``twin``); a result may not, as a
        replay would return the user's array where eager code returns a copy."""
        if isinstance(value, Tracer):
            raise Unrecordable(
                f"the function reaches a value of an outer transform ({value._trace.name}): "
                "a closure over a traced value"
            )
        if type(value) is np.ndarray:
            if self.externals.get(id(value)) is value:
                return Const(value, "external")
            twin = self.twin(value) if operand else None
            if twin is not None:
                return Const(twin, "external")
            kept = self.snapshots.get(id(value))
            if kept is not None and kept[0] is value and _same_bytes(value, kept[1]):
                return Const(kept[1], "literal")
            snap = _snapshot(value)
            self.snapshots[id(value)] = (value, snap)  # holding it keeps its id unique
            return Const(snap, "literal")
        if self.externals.get(id(value)) is value:  # a Dask array read by name
            return Const(value, "external")
        if isinstance(value, (list, dict, np.ndarray)):
            return Const(copy.deepcopy(value), "literal")
        return Const(value, "literal")

    def twin(self, value: np.ndarray[Any, Any]) -> np.ndarray[Any, Any] | None:
        """``value`` read from an array the function reads by name, when ``value`` is (a view
        of) an array holding that one's bits in its layout (shape, dtype, strides); else
        ``None``.

        Reverse mode reads a closed-over array through a read-only copy it takes once per
        call (``transforms.reverse._protect``: the user could write into the array between
        the forward and the backward pass). Recorded as they are, that copy and the views
        rules take of it (the transpose in ``matmul``'s VJP) would each be one more snapshot:
        memory the program holds and each replay reads, which for a data matrix costs as
        much as the matrix products' own reads of it. The original serves instead, by
        reference: its bits are guarded (``_environment``) and no op of a replay writes into
        it, so a replay reads the copy's bits; the same layout keeps the kernels' rounding.
        A view of it is read-only, as the view of the copy was."""
        owner = value if value.base is None else value.base
        if type(owner) is not np.ndarray:
            return None
        original = next(
            (
                candidate
                for candidate in self.layouts.get(_layout(owner), ())
                if candidate is not owner and _same_bytes(candidate, owner)
            ),
            None,
        )
        if original is None or owner is value:
            return original
        if not original.flags.c_contiguous:
            return None
        offset = value.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
        view: np.ndarray[Any, Any] = np.ndarray(
            value.shape, value.dtype, buffer=original, offset=offset, strides=value.strides
        )
        view.flags.writeable = False
        return view

    def owns_all(self, args: Sequence[object]) -> bool:
        """Whether no operand is a tracer of another trace (then NumPy's own application to
        the values is what eager code runs)."""
        return not any(isinstance(a, Tracer) and a._trace is not self for a in args)

    def process_primitive(
        self, primitive: Primitive[Any], args: Sequence[object], params: dict[str, Any]
    ) -> object:
        marker = self.raw
        if marker is not None:  # an operator or ufunc of a value: the first bind is its own
            self.raw = None
            raw = marker is primitive.impl or marker == primitive.name
            return self.apply(primitive, args, params, None, raw)
        caller = sys._getframe(2)  # (bind's caller)
        raw = caller.f_code in _RAW_CALLERS and caller.f_locals["self"].level == self.level + 1
        return self.apply(primitive, args, params, None, raw)

    def apply(
        self,
        primitive: Primitive[Any],
        args: Sequence[object],
        params: dict[str, Any],
        call: Callable[..., Any] | None,
        raw: bool,
    ) -> object:
        """Record ``call`` (default: the primitive's implementation) applied to ``args``;
        ``raw``: a scalar result stays a NumPy scalar, as in eager code (module docs)."""
        self.reached += 1
        values: list[Any] = []
        operands: list[Var | Const] = []
        for a in args:
            if isinstance(a, RecordTracer) and a._trace is self:
                values.append(a.value)
                operands.append(a.node)  # (a Const when its value was folded)
            else:
                const = self.constant(a, operand=True)
                values.append(a)
                operands.append(const)
        for value in params.values():
            if isinstance(value, Tracer) or (
                isinstance(value, (tuple, list)) and any(isinstance(v, Tracer) for v in value)
            ):
                raise Unrecordable(f"a parameter of '{primitive.name}' is a traced value")
        kept_params = {k: _snapshot(v) if type(v) is np.ndarray else v for k, v in params.items()}
        state = _STATE.get() if _STATE is not None else None
        reached = self.reached
        ans = (primitive.impl if call is None else call)(*values, **params)
        if self.reached != reached:
            raise Unrecordable(
                f"the implementation of '{primitive.name}' reads a value of the recording (a "
                "function among its parameters closes over a traced value)"
            )
        twins = {  # the copies (or their views) read from the arrays they copy (``twin``)
            i
            for i, (a, node) in enumerate(zip(args, operands, strict=True))
            if isinstance(node, Const) and node.kind == "external" and node.value is not a
        }
        for i in twins:
            if any(np.may_share_memory(r, args[i]) for r in _results(ans, primitive)):
                # the result is a view of the copy: from the twin, a replay's would be a view
                # of the user's array, where eager's is read-only (a snapshot keeps it so)
                operands[i] = self.constant(args[i])
        if primitive.name in VALUE_FREE or all(
            isinstance(o, Const) and (o.kind != "external" or i in twins)
            for i, o in enumerate(operands)
        ):  # a value that depends on no input and no external array (but through a copy, as
            # before ``twin``): folded into a constant
            if primitive.multiple_results:
                ans = tuple(ans) if raw else no_scalars(tuple(ans))
                return tuple(self.folded(a) for a in ans)
            return self.folded(ans if raw else no_scalars(ans))
        wrap = False
        if primitive.multiple_results:
            if not raw and any(type(a) is not np.ndarray for a in ans):
                wrap = True
                ans = no_scalars(tuple(ans))
            made = [self.new(a) for a in ans]
        else:
            if not raw and type(ans) is not np.ndarray:
                wrap = True
                ans = no_scalars(ans)
            made = [self.new(ans)]
        outs = tuple(tracer for tracer, _ in made)
        out_vars = tuple(var for _, var in made)
        errstate = None if state is self.ambient else state
        self.instructions.append(
            Op(primitive, tuple(operands), kept_params, out_vars, errstate, wrap, call)
        )
        if self.max_ops is not None and len(self.instructions) > self.max_ops:
            raise Unrecordable(f"the program grew past {self.max_ops} operations")
        if primitive.name in _DATA_DEPENDENT_SHAPE:
            for var in out_vars:
                self.instructions.append(Check(var, "shape", var.shape, _user_line()))
        return tuple(outs) if primitive.multiple_results else outs[0]
