"""The code generator: a recorded program as straight-line Python source over NumPy calls.

Each op becomes one line, ``v3 = f7(v1, c2, axis=0)``, calling the primitive's own
implementation (the function eager mode calls, so a replay computes the same bits), with
parameters written as literals where ``repr`` round-trips them and bound by name otherwise.
Guards become ``if`` lines that raise ``GuardMiss`` at the point where the recording's
Python consumed the value, before anything that depended on it runs. The source is
compiled once with ``compile``/``exec``; a replay is one call of a Python function, no
interpreter loop.

Buffers: a value's local name is reused by a later op once the value is dead (rebinding the
name releases the array, as ``x = f(x)`` does in eager code), and a large dead value not
immediately replaced is deleted at once, so a replay holds no more memory than needed. An
elementwise op whose large operand dies there writes into that operand's buffer where the
result's bits and layout are eager's (``_inplace``).

Floating-point error state: an op recorded inside derivative code (which runs with NumPy's
warnings off, ``transforms.core.quiet``) or under the user's ``np.errstate`` runs in that
same state, so a replay warns exactly where eager code warns.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from transforms.core import no_scalars
from transforms.core._quiet import _STATE
from transforms.reverse._protect import _same_bytes

from ._inplace import reusable
from ._passes import last_uses
from ._program import Check, Const, EnvCheck, Op, Operand, Program, Var
from ._scalar import PYTHON_OPERATORS, float_constant, python_float_ops, takes_python_floats

__all__ = ["GuardMiss", "generate"]

_BIG = 1 << 16  # bytes: a dead value this large is deleted at once, not left to be rebound
_SMALL = 1 << 14  # bytes: an array this small is compared with a snapshot's bytes at once
_MISSING = object()
_counter = itertools.count()


class GuardMiss(Exception):
    """A guard failed during a replay: this specialisation does not apply to these inputs.

    ``stale``: an array the function reads by name was written into since the recording, so
    the specialisation will never apply again (its replacement is recorded in its place).
    """

    def __init__(self, index: int, stale: bool = False) -> None:
        super().__init__(index)
        self.index = index
        self.stale = stale


def _cell(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:
        return _MISSING


def _literal(value: Any) -> str | None:
    """Source text that evaluates to ``value`` exactly, if there is a simple one."""
    if value is None or type(value) in (bool, int, str):
        return repr(value)
    if type(value) is float and math.isfinite(value):
        return repr(value)
    if type(value) is tuple and all(_literal(v) is not None for v in value):
        inner = ", ".join(_literal(v) for v in value)  # type: ignore[misc]
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return None


class _Writer:
    def __init__(self) -> None:
        self.ns: dict[str, Any] = {
            "GuardMiss": GuardMiss,
            "_no_scalars": no_scalars,
            "_same": _same_bytes,
            "_cell": _cell,
            "_MISSING": _MISSING,
            "_state": _STATE,
            "_f64": np.float64,
            "_array": np.array,
        }
        self.ids: dict[int, str] = {}
        self.lines: list[str] = []

    def bind(self, value: Any, prefix: str) -> str:
        name = self.ids.get(id(value))
        if name is None:
            name = f"{prefix}{len(self.ids)}"
            self.ids[id(value)] = name
            self.ns[name] = value
        return name

    def param(self, value: Any) -> str:
        text = _literal(value)
        return text if text is not None else self.bind(value, "p")


def numpy_only(program: Program) -> bool:
    """Whether no constant of ``program`` is an array of another library (a Dask array the
    function made), whose results would be that library's too."""
    return all(
        isinstance(a.value, _PLAIN)
        for instr in program.instructions
        if isinstance(instr, Op)
        for a in instr.inputs
        if isinstance(a, Const)
    )


_PLAIN = (np.ndarray, np.generic, int, float, complex, bool, str, type(None), tuple)


def generate(
    program: Program, name: str = "replay", lazy: bool = False
) -> tuple[str, Callable[..., tuple[Any, ...]], list[Check | EnvCheck]]:
    """The source of ``program`` as a Python function of its inputs, that function, and
    its guards in the order of the indices its ``GuardMiss`` carry. ``lazy``: a Dask array
    is among its inputs or the arrays it reads by name; then, as when ``program`` makes one
    (``numpy_only``), its values are not all NumPy's, and neither Python floats
    (``_scalar``: ``float`` of a Dask array computes it) nor writes into a dying operand
    (``_inplace``) replace NumPy's calls."""
    w = _Writer()
    slot: dict[int, str] = {v.index: f"a{i}" for i, v in enumerate(program.inputs)}
    guards: list[Check | EnvCheck] = []
    body: list[str] = []
    for check in program.env:
        k = len(guards)
        guards.append(check)
        h = w.bind(check.holder, "h")
        if check.kind == "binding":
            e = w.bind(check.expected, "e")
            if check.key is None:
                body.append(f"if _cell({h}) is not {e}: raise GuardMiss({k})")
            elif type(check.holder) is list:  # (its length is checked before its entries)
                body.append(f"if {h}[{check.key}] is not {e}: raise GuardMiss({k})")
            else:
                key = w.param(check.key)
                body.append(f"if {h}.get({key}, _MISSING) is not {e}: raise GuardMiss({k})")
        elif check.kind == "length":
            body.append(f"if len({h}) != {check.expected}: raise GuardMiss({k})")
        elif check.kind == "name":
            body.append(f"if {h}.name != {w.param(check.expected)}: raise GuardMiss({k}, True)")
        else:
            body.append(f"if not {_same_bits(w, h, check.expected)}: raise GuardMiss({k}, True)")

    last = last_uses(program)
    plain = not lazy and numpy_only(program)
    on_floats = python_float_ops(program) if plain else set()
    # values held as Python floats (``_scalar``): an op on them reads them as they are; any
    # other reader, a guard or an output gets ``boxed``, the value in eager's type
    floats = {
        instr.outputs[0].index
        for i, instr in enumerate(program.instructions)
        if i in on_floats and isinstance(instr, Op)
    }
    shadows: dict[int, str] = {}  # another value read by a Python-float op: as a float
    boxed: dict[int, str] = {}
    scalar_ok = _ufunc_fed(program, on_floats)
    reuses = reusable(program, last) if plain else {}
    free: list[str] = []
    fresh = itertools.count()
    prefix = ""

    def box(a: Var) -> str:
        """``a`` (a Python float) as eager's NumPy scalar or 0-d array, made once."""
        name = boxed.get(a.index)
        if name is None:
            name = boxed[a.index] = f"bx{len(boxed)}"
            body.append(f"{prefix}{name} = {'_f64' if a.scalar else '_array'}({slot[a.index]})")
        return name

    def operand(a: Operand, reader: Op | Check | None = None) -> str:
        if isinstance(a, Var):
            if a.index in floats and not (reader is not None and takes_python_floats(reader)):
                return box(a)
            return slot[a.index]
        text = _literal(a.value)
        return text if text is not None else w.bind(a.value, "c")

    def float_operand(a: Operand) -> str:
        """``a`` as a Python float, for an op computed on Python floats."""
        if isinstance(a, Var):
            if a.index in floats:
                return slot[a.index]
            name = shadows.get(a.index)
            if name is None:
                name = shadows[a.index] = f"sh{len(shadows)}"
                body.append(f"{prefix}{name} = float({slot[a.index]})")
            return name
        assert isinstance(a, Const)
        value = float_constant(a)
        text = _literal(value)
        return f"({text})" if text is not None else w.bind(value, "c")

    indent = "    "
    state: object | None = None
    for i, instr in enumerate(program.instructions):
        errstate = instr.errstate if isinstance(instr, Op) else state
        if errstate is not state:
            if state is not None:
                body += ["    pass", "finally:", "    _state.reset(_token)"]
                indent = "    "
            if errstate is not None:
                body += [f"_token = _state.set({w.bind(errstate, 's')})", "try:"]
                indent = "        "
            state = errstate
        prefix = indent[4:]
        if isinstance(instr, Check):
            body.append(prefix + _check_line(w, instr, operand(instr.var), len(guards)))
            guards.append(instr)
            if last.get(instr.var.index) == i:
                body += _release(instr.var, slot, free, prefix)
            continue
        if i in on_floats:
            call = PYTHON_OPERATORS[instr.primitive.name].format(
                *(float_operand(a) for a in instr.inputs)
            )
        else:
            args = [operand(a, instr) for a in instr.inputs]
            args += [f"{k}={w.param(v)}" for k, v in instr.params.items()]
            compute = instr.primitive.impl if instr.call is None else instr.call
            call = f"{w.bind(compute, 'f')}({', '.join(args)})"
            if instr.wrap and not all(o.index in scalar_ok for o in instr.outputs):
                call = f"_no_scalars({call})"
            reuse = reuses.get(i)
            if reuse is not None:  # into a dying operand's buffer (``_inplace``)
                into = slot[reuse.into.index]
                inplace = f"{w.bind(reuse.ufunc, 'f')}({', '.join(args)}, out={into})"
                if reuse.check is None:
                    call = inplace
                else:
                    same = f"{into}.strides == {operand(reuse.check, instr)}.strides"
                    call = f"{inplace} if {same} else {call}"
        read = {a.index: a for a in instr.inputs if isinstance(a, Var)}
        dying = [a for a in read.values() if last.get(a.index) == i]
        free.extend(slot[a.index] for a in dying)  # their names take this op's results
        outs = []
        for o in instr.outputs:
            name = free.pop() if free else f"v{next(fresh)}"
            slot[o.index] = name
            outs.append(name)
        target = ", ".join(outs)
        if instr.primitive.multiple_results:
            target += ","
        body.append(f"{prefix}{target} = {call}")
        for a in dying:
            if slot[a.index] not in outs and a.nbytes >= _BIG:
                free.remove(slot[a.index])
                body += _release(a, slot, free, prefix)
        for o in instr.outputs:
            if last.get(o.index) == i:  # a result nothing reads (of a multiple-results op)
                body += _release(o, slot, free, prefix)
    if state is not None:
        body += ["    pass", "finally:", "    _state.reset(_token)"]
    prefix = ""  # (a box made for the results: after the last error-state block)
    results = [
        _output(w, o, slot)
        if not isinstance(o, Var) or o.index not in floats
        else f"_array({slot[o.index]})"  # (a NumPy scalar: a 0-d array per result, as above)
        if o.scalar
        else box(o)  # (eager's 0-d array: one object, however many times it is returned)
        for o in program.outputs
    ]
    body.append(f"return ({', '.join(results)}{',' if len(results) == 1 else ''})")
    params = ", ".join(f"a{i}" for i in range(len(program.inputs)))
    fname = f"{_identifier(name)}_{next(_counter)}"
    source = f"def {fname}({params}):\n" + "\n".join("    " + line for line in body) + "\n"
    code = compile(source, f"<jit {name}>", "exec")
    exec(code, w.ns)
    fn: Callable[..., tuple[Any, ...]] = w.ns[fname]
    return source, fn, guards


def _same_bits(w: _Writer, name: str, snapshot: np.ndarray[Any, Any]) -> str:
    """An expression: the array ``name`` still holds ``snapshot``'s shape, dtype and bits.
    A small array's (or NumPy scalar's) bytes are compared at once (``tobytes``: a fraction
    of a microsecond); a large one's in place, as unsigned integers (no copy of its size)."""
    if snapshot.nbytes > _SMALL or snapshot.dtype.hasobject:
        return f"_same({name}, {w.bind(snapshot, 'e')})"
    shape = repr(snapshot.shape)
    dtype = w.bind(snapshot.dtype, "d")
    data = w.bind(snapshot.tobytes(), "b")
    return f"({name}.shape == {shape} and {name}.dtype == {dtype} and {name}.tobytes() == {data})"


def _ufunc_fed(program: Program, on_floats: set[int]) -> set[int]:
    """The values read only by NumPy ufuncs: a ufunc treats a NumPy scalar exactly as the
    0-d array ``bind`` would make of it (the same loop, and under NEP 50 the same strong
    dtype), so such a value may stay the scalar its ufunc returned, which saves a call per
    op on 0-d programs. So may one read by ops computed on Python floats (``on_floats``,
    positions), which take its ``float``. Outputs, guards and operators (``Op.call``:
    NumPy's scalar arithmetic is not its ufunc loop) get the value eager code gets."""
    fed: set[int] = set()
    other: set[int] = {o.index for o in program.outputs if isinstance(o, Var)}
    for i, instr in enumerate(program.instructions):
        if isinstance(instr, Check):
            other.add(instr.var.index)
            continue
        ufunc = i in on_floats or (
            instr.call is None and isinstance(instr.primitive.impl, np.ufunc)
        )
        for a in instr.inputs:
            if isinstance(a, Var):
                (fed if ufunc else other).add(a.index)
    return fed - other


def _release(var: Var, slot: dict[int, str], free: list[str], prefix: str) -> list[str]:
    """Free ``var``'s name for a later result; delete a large array at once."""
    free.append(slot[var.index])
    return [f"{prefix}del {slot[var.index]}"] if var.nbytes >= _BIG else []


def _identifier(name: str) -> str:
    text = "".join(c if c.isalnum() else "_" for c in name)
    return text if text[:1].isalpha() else f"f_{text}"


def _check_line(w: _Writer, check: Check, v: str, k: int) -> str:
    if check.kind == "bool":
        return f"if {'not ' if check.expected else ''}{v}: raise GuardMiss({k})"
    if check.kind in ("int", "index"):
        fn = "int" if check.kind == "int" else w.bind(operator.index, "g")
        return f"if {fn}({v}) != {check.expected!r}: raise GuardMiss({k})"
    if check.kind == "float":
        return f"if float({v}).hex() != {check.expected!r}: raise GuardMiss({k})"
    if check.kind == "complex":
        return f"if {w.bind(_complex_bits, 'g')}({v}) != {check.expected!r}: raise GuardMiss({k})"
    if check.kind == "shape":
        return f"if {v}.shape != {check.expected!r}: raise GuardMiss({k})"
    return f"if not {_same_bits(w, v, check.expected)}: raise GuardMiss({k})"


def _complex_bits(value: Any) -> tuple[str, str]:
    z = complex(value)
    return (z.real.hex(), z.imag.hex())


def _output(w: _Writer, o: Operand, slot: dict[int, str]) -> str:
    """A result: a NumPy scalar as a 0-d array (docs/jit.md, "Results")."""
    if isinstance(o, Var):
        return f"_no_scalars({slot[o.index]})" if o.scalar else slot[o.index]
    if o.kind == "folded" and isinstance(o.value, np.generic):
        return f"_no_scalars({w.bind(o.value, 'c')})"
    if o.kind != "external" and type(o.value) is np.ndarray:
        return f"{w.bind(o.value, 'c')}.copy()"  # a fresh array per call, as eager makes
    text = _literal(o.value)
    return text if text is not None else w.bind(o.value, "c")
