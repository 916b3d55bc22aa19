"""The primitive behind every control-flow construct, and the guard of its functions.

Each construct (``cond``, ``while_loop``, ``scan``, ...) is an eager algorithm written with
``transforms.numpy``: a Python loop or branch over the user's functions. Run at the level of
its caller, it is exact under every interpreter and nesting by construction, and it reads the
values the user's functions close over (a parameter being differentiated, a per-example value
of a ``vmap``) as any Python code does.

The algorithm is also a primitive (``construct``), whose rules are those of the algorithm,
derived by the transforms themselves (the JVP of ``fun``, its VJP recomputed in the backward
pass from the stored operands, ``vmap`` of ``fun``, the Taylor rule of that JVP, sparsity
through ``fun``), each rule one application of the primitive again on the derived function.
``apply`` binds it on plain operands, and under transforms whenever a staging trace
(``T.jit``'s recording, ``Trace.stages``) is live: ``T.jit`` then records one op for the
whole loop and one per rule application, never an unrolled body. With no staging trace
live, the algorithm runs at the caller's level: the derived rules recompute the loop inside
vjp and jvp, which costs several times what the algorithm's own primitives cost eagerly (a
200-step RNN's gradient: 5.5x against 1.3x the Python loop).

An interpreter applies a rule to values one level *below* its own, so a function that
closes over a tracer of that very level (``grad(lambda a: fori_loop(0, n, lambda i, x: x *
a, a))``) cannot be bound as it is: it would meet the tracer there, and a recorded op would
replay the recording's value. ``apply`` first converts it (``_closure``): the live traced
values it reaches through its closure cells become operands after its own, and each run
rebuilds the user's functions with the values it is given. A traced value it reads any
other way (a module global, an object's attribute) is not converted; so ``apply`` watches
the first run of the function (``_Guarded``) and, on the first operation that meets such a
value (or on a write into a converted cell, list or dict), falls back to the algorithm at the
caller's level.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from transforms.batching import defbatch
from transforms.compose._core_transforms import jvp_flat, vjp_flat
from transforms.compose._vmap import vmap
from transforms.core import Primitive, Trace, Tracer, current_traces, new_trace
from transforms.forward import defjvp_joint
from transforms.numpy import zeros_like
from transforms.numpy._define import dtype_of
from transforms.reverse import defvjp_argnum
from transforms.sparsity import defsparsity_inline
from transforms.staging import replayed
from transforms.taylor import deftaylor, ode_rule

from ._closure import Closure, Converted

__all__ = ["ClosureRefused", "Construct", "apply", "bind_traced", "construct"]

Construct = Primitive[tuple[Any, ...]]
Fun = Callable[..., Sequence[Any]]


def _impl(*leaves: Any, fun: Fun, memo: _Cotangents) -> tuple[Any, ...]:
    return tuple(fun(*leaves))


class _Cotangents:
    """One application's backward pass, shared by its operands' pullbacks: the function's
    pullback is applied once (recomputing the function from the stored operands, so its
    intermediates live during the backward pass only), and only when a cotangent arrives.
    The result serves each operand's pullback of one backward pass (the same cotangents: the
    engine gives each pullback its own tuple, fresh zeros for unused outputs), then is
    released."""

    __slots__ = ("cts", "expected", "result", "served")

    def __init__(self) -> None:
        self.cts: tuple[Any, ...] | None = None
        self.result: tuple[Any, ...] = ()
        self.expected: set[int] = set()
        self.served: set[int] = set()

    def of(
        self,
        primitive: Construct,
        fun: Fun,
        args: Sequence[Any],
        ans: Sequence[Any],
        cts: Any,
        argnum: int,
    ) -> Any:
        held = self.cts
        if held is None or argnum in self.served or not all(map(_same, cts, held)):
            self.cts, self.served = tuple(cts), set()
            positions, outputs = _inexact(args), _inexact(ans)
            derived = _staged(_pullback(fun, len(args), positions, outputs))
            used = [self.cts[o] for o in outputs]
            cotangents = primitive.bind(*args, *used, fun=derived, memo=_Cotangents())
            self.result = tuple(
                cotangents[positions.index(i)] if i in positions else zeros_like(x)
                for i, x in enumerate(args)
            )
        result = self.result[argnum]
        self.served.add(argnum)
        if self.served >= self.expected:
            self.cts, self.result = None, ()
        return result


def _same(a: Any, b: Any) -> bool:
    """Whether two cotangents are the same: one object, or equal plain arrays (the zeros the
    engine makes afresh for each pullback)."""
    return a is b or (
        type(a) is np.ndarray
        and type(b) is np.ndarray
        and a.shape == b.shape
        and a.dtype == b.dtype
        and bool(np.array_equal(a, b))
    )


def _inexact(args: Sequence[Any]) -> tuple[int, ...]:
    """The positions of the operands that carry derivatives (float or complex)."""
    return tuple(i for i, x in enumerate(args) if dtype_of(x).kind in "fc")


def _at(fun: Fun, fixed: Sequence[Any], positions: tuple[int, ...]) -> Fun:
    """``fun`` as a function of the operands at ``positions``, the others ``fixed``."""

    def part(*ys: Any) -> tuple[Any, ...]:
        full = list(fixed)
        for p, y in zip(positions, ys, strict=True):
            full[p] = y
        return tuple(fun(*full))

    return part


def _tangent(fun: Fun, n: int, positions: tuple[int, ...]) -> Fun:
    """The function ``(*primals, *tangents) -> tangents out`` of ``fun`` of ``n`` operands,
    with a tangent for each operand at ``positions``."""

    def tangent_of(*xs: Any) -> tuple[Any, ...]:
        primals = xs[:n]
        inputs = [primals[p] for p in positions]
        return tuple(jvp_flat(_at(fun, primals, positions), inputs, xs[n:], False, "lax")[1])

    return tangent_of


def _pullback(fun: Fun, n: int, positions: tuple[int, ...], outputs: tuple[int, ...]) -> Fun:
    """The function ``(*primals, *cotangents) -> cotangents of the operands at positions``
    of ``fun`` of ``n`` operands (``fun`` recomputed under ``vjp``), with a cotangent for
    each of its results at ``outputs``."""

    def pullback_of(*xs: Any) -> tuple[Any, ...]:
        primals = xs[:n]
        inputs = [primals[p] for p in positions]
        part = _at(fun, primals, positions)
        _, pullback, _ = vjp_flat(
            lambda *ys: tuple(part(*ys)[o] for o in outputs), inputs, False, "lax"
        )
        return tuple(pullback(tuple(xs[n:])))

    return pullback_of


def construct(name: str) -> Construct:
    """A primitive that applies its ``fun`` parameter to its operands (a tuple of leaves),
    with the rules of ``fun`` in every interpreter.

    Each rule is one application of the primitive again, on the derived function (the JVP
    of a loop is a loop, and so are its pullback and its batched form): under ``jit`` a rule
    records one op, never the unrolled body, and the next order of differentiation applies
    the same rules to it.
    """
    primitive: Construct = Primitive(name, _impl, multiple_results=True)

    def jvp(tangents: Sequence[Any], ans: Any, *args: Any, fun: Fun, memo: _Cotangents) -> Any:
        positions = _inexact(args)
        filled = [zeros_like(args[p]) if tangents[p] is None else tangents[p] for p in positions]
        derived = _staged(_tangent(fun, len(args), positions))
        return primitive.bind(*args, *filled, fun=derived, memo=_Cotangents())

    def maker(argnum: int, ans: Any, *args: Any, fun: Fun, memo: _Cotangents) -> Any:
        memo.expected.add(argnum)
        return lambda cts: memo.of(primitive, fun, args, ans, cts, argnum)

    def batch(values: Sequence[Any], dims: Sequence[int | None], *, fun: Fun, memo: Any) -> Any:
        batched = _staged(vmap(lambda *xs: tuple(fun(*xs)), in_axes=tuple(dims)))
        out = primitive.bind(*values, fun=batched, memo=_Cotangents())
        return out, (0,) * len(out)

    defjvp_joint(primitive, jvp)
    defvjp_argnum(primitive, maker)
    defbatch(primitive, batch)
    derived: Primitive[Any] = primitive  # (the Taylor registry is typed for one result)
    deftaylor(derived, ode_rule(derived))
    defsparsity_inline(primitive)
    return primitive


# A construct's function recorded by a jit of its own, up to this many operations (a loop of
# a few hundred steps of a small body); a longer one runs eagerly at each replay (``_staged``).
_REPLAY_OPS = 10_000


def _staged(derived: Fun) -> Fun:
    """A function a rule derives (a loop's tangent, pullback or batched form), as the op a
    ``jit`` recording keeps: replayed by a jit of its own (``staging.replayed``), so that
    each replay of the user's program runs it as recorded NumPy code rather than tracing it
    again (a 200-step RNN's gradient: 20 ms a replay, against 118 ms traced again). It
    records once per argument signature, and its guards keep Python control flow as
    ``jit``'s do; a function past ``_REPLAY_OPS`` operations (whose program would cost more
    to record and hold than tracing costs to run) and anything a replay cannot repeat run
    eagerly, as before. Only while a recording is live: eagerly, each derived function runs
    once."""
    return replayed(derived, _REPLAY_OPS) if staging() else derived


def staging() -> bool:
    """Whether a staging trace (``T.jit``'s recording) is live, under which a construct is
    worth binding under transforms (see the module docs)."""
    return any(trace.stages for trace in current_traces())


def apply(primitive: Construct, fun: Fun, leaves: Sequence[Any]) -> tuple[Any, ...]:
    """``fun(*leaves)`` as one application of ``primitive`` on plain operands, and under a
    staging trace (closure-converted); else the algorithm itself at the caller's level (see
    the module docs).

    Under a transform, the application is bound with ``fun`` converted and guarded: its first
    run (the primal run, before any rule) refuses a traced value that conversion did not
    make an operand, and the refusal falls back to the algorithm. The interrupted run
    computed nothing any result depends on; the user's own exceptions pass through
    unchanged.
    """
    if not current_traces():  # nothing is traced, so nothing traced is closed over
        return primitive.bind(*leaves, fun=fun, memo=_Cotangents())
    if not staging():
        return tuple(fun(*leaves))
    watched, operands = _converted(fun, leaves, primitive.name)
    try:
        return primitive.bind(*operands, fun=replayed(watched, _REPLAY_OPS), memo=_Cotangents())
    except ClosureRefused as refusal:
        if refusal.guard is not watched:
            raise  # a construct around this one refuses
    return tuple(fun(*leaves))


def bind_traced(
    primitive: Construct, fun: Fun, leaves: Sequence[Any], what: str
) -> tuple[Any, ...]:
    """One application of ``primitive`` on traced operands that must use its rules
    (``scan``'s checkpointed segments), closure-converted: ``TypeError`` naming ``what`` if
    ``fun`` reads a traced value conversion cannot make an operand."""
    watched, operands = _converted(fun, leaves, what)
    try:
        return primitive.bind(*operands, fun=watched, memo=_Cotangents())
    except ClosureRefused as refusal:
        if refusal.guard is not watched:
            raise
        raise TypeError(refusal.message) from None


def _converted(fun: Fun, leaves: Sequence[Any], what: str) -> tuple[_Guarded, list[Any]]:
    """``fun`` guarded, taking after ``leaves`` the live traced values it reads by name
    (``_closure``), and the operands to bind it on."""
    closure = Closure(fun)
    if not closure.values:
        return _Guarded(fun, what), list(leaves)
    return _Guarded(Converted(closure, len(leaves)), what), [*leaves, *closure.values]


# ---- the guard of functions run by the rules ----------------------------------------------
class _GuardTracer(Tracer):
    __slots__ = ("_value",)

    def __init__(self, trace: _GuardTrace, value: Any) -> None:
        self._trace = trace
        self._value = value

    @property
    def primal(self) -> Any:
        return self._value

    # Guarding is not transforming: Python control flow on the values works as without it
    # (a traced value one level down still decides for itself).
    def __bool__(self) -> bool:
        return bool(self._value)

    def __index__(self) -> int:
        return self._value.__index__()  # type: ignore[no-any-return]

    def __int__(self) -> int:
        return int(self._value)

    def __float__(self) -> float:
        return float(self._value)

    def __array__(self, dtype: object = None, copy: object = None) -> Any:
        return np.asarray(self._value, dtype=dtype)  # type: ignore[call-overload]


class ClosureRefused(BaseException):
    """A guarded function read a traced value it closes over.

    A ``BaseException``: the user's ``except Exception`` must not swallow it and go on with
    the rest of the run as if the refused operation had happened."""

    def __init__(self, guard: _Guarded, message: str) -> None:
        super().__init__(message)
        self.guard = guard
        self.message = message


class _GuardTrace(Trace[_GuardTracer]):
    """Passes every primitive down unchanged, refusing a traced value the function closes
    over (any tracer that is not one of its arguments' own)."""

    __slots__ = ("guard",)

    def __init__(self, level: int, guard: _Guarded) -> None:
        super().__init__(level, "lax guard")
        self.guard = guard

    def refuse(self) -> ClosureRefused:
        return ClosureRefused(
            self.guard,
            f"{self.guard.what}: the function reads a traced value (a value being "
            "differentiated or batched) that is neither one of its arguments nor reached "
            "through its closure (a module global, an object's attribute); its rules "
            "recompute it from its arguments alone, so pass that value through its "
            "arguments (the carry or xs) or close over it",
        )

    def values(self, xs: Sequence[object]) -> list[Any]:
        """What ``xs`` stand for one level down: this trace's tracers unwrapped, any other
        tracer (a closed-over traced value) refused."""
        values = []
        for x in xs:
            if isinstance(x, _GuardTracer) and x._trace is self:
                values.append(x._value)
            elif isinstance(x, Tracer):
                raise self.refuse()
            else:
                values.append(x)
        return values

    def process_primitive(
        self, primitive: Primitive[Any], args: Sequence[object], params: dict[str, Any]
    ) -> object:
        ans = primitive.bind(*self.values(args), **params)
        if primitive.multiple_results:
            return tuple(_GuardTracer(self, a) for a in ans)
        return _GuardTracer(self, ans)


class _Guarded:
    """``fun``, refusing (``ClosureRefused``) to read a traced value that is not one of its
    operands (one conversion did not reach), which the rules (run one level down, and
    recomputing) would treat as a constant; converted (``Converted``), also refusing to
    write into the copies of the user's cells, lists and dicts it runs on.

    Only the first call is watched (the primal run, before any rule): every later one (a
    rule's recomputation) runs the same code on the same values, so it reads the same
    closed-over objects, none of them traced.
    """

    __slots__ = ("fun", "watched", "what")

    def __init__(self, fun: Fun, what: str) -> None:
        self.fun = fun
        self.what = what
        self.watched = False

    def __call__(self, *leaves: Any) -> Sequence[Any]:
        if self.watched:
            return self.fun(*leaves)
        self.watched = True
        with new_trace(lambda level: _GuardTrace(level, self)) as trace:
            args = [_GuardTracer(trace, x) for x in leaves]
            if not isinstance(self.fun, Converted):
                return tuple(trace.values(self.fun(*args)))
            out, intact = self.fun.checked(*args)
            if not intact:
                raise ClosureRefused(
                    self,
                    f"{self.what}: the function assigns to a variable (nonlocal) or writes "
                    "into a list or dict it closes over that holds a traced value; the "
                    "rules run it on copies, so the write would be lost: keep such state "
                    "in the carry",
                )
            return tuple(trace.values(out))
