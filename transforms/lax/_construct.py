"""The primitive behind every control-flow construct, and the guard of recomputed functions.

Each construct (``cond``, ``while_loop``, ``scan``, ...) is an eager algorithm written with
``transforms.numpy``: a Python loop or branch over the user's functions. Run at the level of
its caller, it is exact under every interpreter and nesting by construction, and it reads the
values the user's functions close over (a parameter being differentiated, a per-example value
of a ``vmap``) as any Python code does.

The algorithm is also a primitive (``construct``), bound whenever its operands are plain
arrays: ``T.jit`` records one operation for the whole loop there, never its unrolled body, and
the algorithm runs as the primitive's ``impl``. Under a transform (an operand is a tracer) the
public function runs the algorithm itself instead of binding: an interpreter applies a rule
to values one level *below* its own, and a function that closes over a tracer of that very
level (``grad(lambda a: fori_loop(0, n, lambda i, x: x * a, a))``) would meet it there. Closure
conversion (making such values explicit operands) needs every operation of the function to be
seen, which eager tracing cannot do (an operation on closed-over values alone never reaches a
trace the construct opened).

The primitive's rules are those of its algorithm, derived by the transforms themselves (the
JVP of ``fun``, its VJP recomputed in the backward pass from the stored operands, ``vmap`` of
``fun``, the Taylor rule of that JVP, sparsity through ``fun``): exact for a ``fun`` that
closes over no traced value, which ``guarded`` enforces where the rules are used on traced
operands (``scan``'s ``checkpoint=`` segments).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from transforms.batching import defbatch
from transforms.compose._core_transforms import jvp_flat, vjp_flat
from transforms.compose._vmap import vmap
from transforms.core import Primitive, Trace, Tracer, new_trace
from transforms.forward import defjvp_joint
from transforms.numpy import zeros_like
from transforms.reverse import defvjp_argnum
from transforms.sparsity import defsparsity_inline
from transforms.taylor import deftaylor, ode_rule

__all__ = ["Construct", "apply", "bind_traced", "construct", "guarded"]

Construct = Primitive[tuple[Any, ...]]
Fun = Callable[..., Sequence[Any]]


def _impl(*leaves: Any, fun: Fun, memo: _Cotangents) -> tuple[Any, ...]:
    return tuple(fun(*leaves))


class _Cotangents:
    """One application's backward pass, shared by its operands' pullbacks: the function is
    recomputed once under ``vjp`` from the stored operands, and only when a cotangent arrives
    (so its intermediates live during the backward pass only). The result serves each
    operand's pullback of one backward pass (the same cotangents: the engine gives each
    pullback its own tuple, fresh zeros for unused outputs), then is released."""

    __slots__ = ("cts", "expected", "result", "served")

    def __init__(self) -> None:
        self.cts: tuple[Any, ...] | None = None
        self.result: tuple[Any, ...] = ()
        self.expected: set[int] = set()
        self.served: set[int] = set()

    def of(self, fun: Fun, args: Sequence[Any], cts: Any, argnum: int) -> Any:
        held = self.cts
        if held is None or argnum in self.served or not all(map(_same, cts, held)):
            _, pullback, _ = vjp_flat(lambda *xs: tuple(fun(*xs)), list(args), False, "lax")
            self.cts, self.served = tuple(cts), set()
            self.result = tuple(pullback(self.cts))
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


def _jvp(tangents: Sequence[Any], ans: Any, *args: Any, fun: Fun, memo: _Cotangents) -> Any:
    filled = [zeros_like(a) if t is None else t for t, a in zip(tangents, args, strict=True)]
    return tuple(jvp_flat(lambda *xs: tuple(fun(*xs)), args, filled, False, "lax")[1])


def _maker(argnum: int, ans: Any, *args: Any, fun: Fun, memo: _Cotangents) -> Any:
    memo.expected.add(argnum)
    return lambda cts: memo.of(fun, args, cts, argnum)


def construct(name: str) -> Construct:
    """A primitive that applies its ``fun`` parameter to its operands (a tuple of leaves),
    with the rules of ``fun`` in every interpreter."""
    primitive: Construct = Primitive(name, _impl, multiple_results=True)

    def batch(values: Sequence[Any], dims: Sequence[int | None], *, fun: Fun, memo: Any) -> Any:
        batched = vmap(lambda *xs: tuple(fun(*xs)), in_axes=tuple(dims))
        out = primitive.bind(*values, fun=batched, memo=_Cotangents())
        return out, (0,) * len(out)

    defjvp_joint(primitive, _jvp)
    defvjp_argnum(primitive, _maker)
    defbatch(primitive, batch)
    derived: Primitive[Any] = primitive  # (the Taylor registry is typed for one result)
    deftaylor(derived, ode_rule(derived))
    defsparsity_inline(primitive)
    return primitive


def apply(primitive: Construct, fun: Fun, leaves: Sequence[Any]) -> tuple[Any, ...]:
    """``fun(*leaves)``: one application of ``primitive`` on plain operands, the algorithm
    itself at the caller's level on traced ones (see the module docs)."""
    if any(isinstance(x, Tracer) for x in leaves):
        return tuple(fun(*leaves))
    return primitive.bind(*leaves, fun=fun, memo=_Cotangents())


def bind_traced(primitive: Construct, fun: Fun, leaves: Sequence[Any]) -> tuple[Any, ...]:
    """One application of ``primitive`` even on traced operands, so that its interpreters use
    its rules (``scan``'s checkpointed segments); ``fun`` must be ``guarded``."""
    return primitive.bind(*leaves, fun=fun, memo=_Cotangents())


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


class _GuardTrace(Trace[_GuardTracer]):
    """Passes every primitive down unchanged, refusing a traced value the function closes
    over (any tracer that is not one of its arguments' own)."""

    __slots__ = ("what",)

    def __init__(self, level: int, what: str) -> None:
        super().__init__(level, "lax guard")
        self.what = what

    def refuse(self) -> TypeError:
        return TypeError(
            f"{self.what}: the function reads a traced value it closes over (a value being "
            "differentiated or batched that is not one of its arguments); its rules recompute "
            "it from its arguments alone, so pass every traced value it uses through its "
            "arguments (the carry or xs)"
        )

    def process_primitive(
        self, primitive: Primitive[Any], args: Sequence[object], params: dict[str, Any]
    ) -> object:
        values = []
        for a in args:
            if isinstance(a, _GuardTracer) and a._trace is self:
                values.append(a._value)
            elif isinstance(a, Tracer):
                raise self.refuse()
            else:
                values.append(a)
        ans = primitive.bind(*values, **params)
        if primitive.multiple_results:
            return tuple(_GuardTracer(self, a) for a in ans)
        return _GuardTracer(self, ans)


def guarded(fun: Fun, what: str) -> Fun:
    """``fun``, refusing (``TypeError`` naming ``what``) to read a traced value it closes
    over, which the rules (run one level down, and recomputing) would treat as a constant.

    Only the first call is watched (the primal run, before any rule): every later one (a
    rule's recomputation) runs the same code on the same values, so it reads the same
    closed-over objects, none of them traced.
    """
    watched = False

    def run(*leaves: Any) -> Sequence[Any]:
        nonlocal watched
        if watched:
            return fun(*leaves)
        watched = True
        with new_trace(lambda level: _GuardTrace(level, what)) as trace:
            out = fun(*[_GuardTracer(trace, x) for x in leaves])
            values = []
            for o in out:
                if isinstance(o, _GuardTracer) and o._trace is trace:
                    values.append(o._value)
                elif isinstance(o, Tracer):
                    raise trace.refuse()
                else:
                    values.append(o)
        return tuple(values)

    return run
