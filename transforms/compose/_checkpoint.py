"""``checkpoint``: reverse mode keeps a function's inputs and recomputes its intermediates in
the backward pass.

Recomputing is only exact if the function reads the same values both times. Besides its
arguments it may read constants from anywhere (a closure, a dict of parameters, a module
global, a helper's closure), and the user may modify one in place between the forward and
the backward pass. So every run is watched by a small recording interpreter that sees each
plain array or number reaching a primitive; the first run keeps their fingerprints and every
recomputation must read the same sequence, or it raises instead of returning a silently
wrong derivative. The cost is one hash of each constant per run.

The function may also close over traced values: the layer weights of the ``grad`` being
taken, a batched value of an outer ``vmap``. Every rule must see those as arguments of the
primitive (a JVP rule must push their tangents, a VJP rule give their cotangents, the
batching rule know their axes), so ``checkpoint`` converts the closure: a traced value
reaching one of the function's primitives that is none of its arguments is a *capture*.
To see every one, even one a primitive reads alone (``tnp.sin(W)``, which would go straight
to ``W``'s trace), the watch trace holds the traces below it (``alive`` false) while the
function's own code runs, and adopts the tracers of held or finished traces (``Trace.
adopts_finished``); it releases them only to pass a primitive down.
The first run that meets a new capture stops (``_Captured``), and the primitive is bound
again with the captures appended to its arguments; every run then reads the argument in
place of the closed-over tracer. Functions without captures are bound once, as before.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec, TypeVar

import numpy as np

from transforms.batching import defbatch
from transforms.core import Primitive, Trace, Tracer, arrays, current_traces, new_trace
from transforms.core.tree_util import tree_map
from transforms.forward import defjvp_joint
from transforms.reverse import defvjp_argnum
from transforms.sparsity import defsparsity_inline

from ._core_transforms import jvp_flat, vjp_flat
from ._vmap import vmap

__all__ = ["checkpoint"]

P = ParamSpec("P")
R = TypeVar("R")

_NUMBERS = (int, float, complex, np.generic)
_CONSTANTS = (np.ndarray, *_NUMBERS)


def _fingerprint(value: Any) -> tuple[Any, ...]:
    if isinstance(value, np.ndarray):
        digest = hashlib.blake2b(np.ascontiguousarray(value).data, digest_size=16)
        return (value.shape, value.dtype.str, digest.digest())
    if arrays.is_foreign(value):
        token = getattr(value, "name", None)  # Dask: its graph's key, new on every change
        if not isinstance(token, str):  # (CuPy: its bytes, brought to the host on purpose)
            token = hashlib.blake2b(value.tobytes(), digest_size=16).digest()
        return (arrays.library_of(value), value.shape, value.dtype.str, token)
    return (type(value).__name__, repr(value))


def _watched_constant(value: object) -> bool:
    """A value the function reads that must be the same when it is recomputed."""
    return isinstance(value, _CONSTANTS) or arrays.is_foreign(value)


class _WatchTracer(Tracer):
    __slots__ = ("_value",)

    def __init__(self, trace: _WatchTrace, value: Any) -> None:
        self._trace = trace
        self._value = value

    @property
    def primal(self) -> Any:
        return self._value

    # Watching is not differentiating: a run on plain values may convert them as it would
    # without checkpoint (a traced value one level down still refuses).
    def __float__(self) -> float:
        return float(self._value)

    def __int__(self) -> int:
        return int(self._value)

    def __complex__(self) -> complex:
        return complex(self._value)

    def __array__(self, dtype: object = None, copy: object = None) -> Any:
        return np.asarray(self._value, dtype=dtype)  # type: ignore[call-overload]


class _Captured(Exception):
    """A run of a checkpointed function met a traced value it closes over that is not yet an
    argument of its primitive: the run stops, and ``checkpoint`` binds the primitive again
    with it as one (not an error: never seen by the user)."""


class _WatchTrace(Trace[_WatchTracer]):
    """Passes every primitive down unchanged, fingerprinting the constants it is given and
    reading the arguments bound in place of the traced values the function closes over."""

    __slots__ = ("below", "captures", "reads", "was_alive", "watched")
    adopts_finished = True

    def __init__(self, level: int) -> None:
        super().__init__(level, "checkpoint")
        self.reads: list[tuple[Any, ...]] = []
        self.captures: dict[int, Any] = {}  # id of a closed-over tracer -> its argument
        self.watched: _Watched | None = None
        self.below = current_traces()  # (this trace is pushed after it is made)
        self.was_alive = [t.alive for t in self.below]

    def read(self, value: object) -> Any:
        """What ``value``, reaching a primitive or output by the function, stands for."""
        if isinstance(value, _WatchTracer) and value._trace is self:
            return value._value
        if isinstance(value, Tracer):
            return self.substitute(value)
        return value

    def hold(self) -> None:
        """While the function's own code runs, a tracer of a trace below is a closed-over
        value, which must reach this trace (``find_top_trace`` adopts it), not its own."""
        for t in self.below:
            t.alive = False

    def release(self) -> None:
        for t, alive in zip(self.below, self.was_alive, strict=True):
            t.alive = alive

    def substitute(self, value: Tracer) -> Any:
        """The argument bound in place of ``value``, a traced value the function closes over
        (another trace's tracer: every one of this trace's is a ``_WatchTracer`` of it)."""
        try:
            return self.captures[id(value)]
        except KeyError:
            assert self.watched is not None, "a watch trace is opened by _Watched.__call__"
            raise self.watched.captured(value) from None

    def process_primitive(
        self, primitive: Primitive[Any], args: Sequence[object], params: dict[str, Any]
    ) -> object:
        values = []
        for a in args:  # (``read``, inlined: this runs for every primitive of the function)
            if isinstance(a, _WatchTracer) and a._trace is self:
                values.append(a._value)
            elif isinstance(a, Tracer):
                values.append(self.substitute(a))
            else:
                if _watched_constant(a):
                    self.reads.append(_fingerprint(a))
                values.append(a)
        for t, alive in zip(self.below, self.was_alive, strict=True):  # release
            t.alive = alive
        try:
            ans = primitive.bind(*values, **params)
        finally:
            for t in self.below:  # hold
                t.alive = False
        if primitive.multiple_results:
            return tuple(_WatchTracer(self, a) for a in ans)
        return _WatchTracer(self, ans)


class _Watched:
    """The checkpointed function of one call: every run after the first must read the same
    constants as the first (the forward pass), or recomputing it would be wrong.

    It takes the function's arguments followed by one argument per traced value in
    ``closed`` (the traced values the function closes over), which every run reads in place
    of those. While ``checkpoint`` binds the primitive (``discovering``), a run meeting
    another traced value records it in ``found`` and stops, to be bound again."""

    __slots__ = ("closed", "discovering", "found", "fun", "reads")

    def __init__(self, fun: Callable[..., Any], closed: Sequence[Tracer]) -> None:
        self.fun = fun
        self.closed = tuple(closed)
        self.reads: list[tuple[Any, ...]] | None = None
        self.discovering = True
        self.found: list[Tracer] = []

    def captured(self, value: Tracer) -> Exception:
        """The exception stopping a run that met ``value``, a traced value not in
        ``closed``: a new capture while binding, else an error."""
        if not self.discovering:
            return RuntimeError(_CHANGED)
        if not any(value is f for f in self.found):
            self.found.append(value)
        return _Captured()

    def __call__(self, *args: Any) -> Any:
        n = len(args) - len(self.closed)
        with new_trace(_WatchTrace) as trace:
            trace.watched = self
            trace.captures = {id(c): v for c, v in zip(self.closed, args[n:], strict=True)}
            watched = [
                _WatchTracer(trace, a) if isinstance(a, Tracer) or _watched_constant(a) else a
                for a in args[:n]
            ]
            trace.hold()
            try:
                out = tree_map(trace.read, self.fun(*watched))
            finally:
                trace.release()
        if self.reads is None:
            self.reads = trace.reads
        elif trace.reads != self.reads:
            raise RuntimeError(_CHANGED)
        return out


_CHANGED = (
    "checkpoint: an array or number the checkpointed function reads was modified "
    "between the forward and the backward pass (or it reads other values when "
    "recomputed: a rebound global, random numbers, another traced value), so recomputing "
    "it would give a wrong derivative; pass such values as arguments, or do not modify them"
)


def _checkpoint_impl(*args: Any, fun: Callable[..., Any]) -> Any:
    return fun(*args)


checkpoint_call_p: Primitive[Any] = Primitive("checkpoint_call", _checkpoint_impl)
defsparsity_inline(checkpoint_call_p)


def _of_some(fun: Any, args: Sequence[Any], positions: Sequence[int]) -> Callable[..., Any]:
    """``fun`` as a function of the arguments at ``positions``, the others held fixed."""

    def partial(*xs: Any) -> Any:
        full = list(args)
        for i, x in zip(positions, xs, strict=True):
            full[i] = x
        return fun(*full)

    return partial


def _checkpoint_jvp(tangents: Sequence[Any], ans: Any, *args: Any, fun: Any) -> Any:
    live = [i for i, t in enumerate(tangents) if t is not None]
    primals, live_tangents = [args[i] for i in live], [tangents[i] for i in live]
    return jvp_flat(_of_some(fun, args, live), primals, live_tangents, False, "checkpoint")[1]


def _checkpoint_maker(argnum: int, ans: Any, *args: Any, fun: Any) -> Any:
    # Only the inputs are kept; the intermediates are recomputed when the cotangent arrives
    # (by the same watched function, which refuses constants changed since the forward pass).
    partial = _of_some(fun, args, [argnum])
    return lambda ct: vjp_flat(partial, [args[argnum]], False, "checkpoint")[1](ct)[0]


defjvp_joint(checkpoint_call_p, _checkpoint_jvp)
defvjp_argnum(checkpoint_call_p, _checkpoint_maker)
defbatch(
    checkpoint_call_p,
    lambda values, dims, fun: (
        checkpoint_call_p.bind(*values, fun=vmap(fun, in_axes=tuple(dims))),
        0,
    ),
)


def checkpoint(fun: Callable[P, R]) -> Callable[P, R]:
    """``fun``, but reverse mode keeps only its inputs and recomputes its intermediates in
    the backward pass: less memory for one more forward evaluation. Numerically invisible;
    a constant it reads that is modified before the backward pass raises an error.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> W = np.array([[1.0, 2.0], [0.5, -1.0]])
        >>> layer = T.checkpoint(lambda x: tnp.tanh(x @ W))
        >>> g = T.grad(lambda x: tnp.sum(layer(layer(x))))(np.array([0.1, 0.2]))
        >>> bool(np.allclose(g, T.grad(lambda x: tnp.sum(tnp.tanh(tnp.tanh(x @ W) @ W)))(
        ...     np.array([0.1, 0.2]))))
        True
    """

    @functools.wraps(fun)
    def checkpointed(*args: P.args, **kwargs: P.kwargs) -> R:
        call = functools.partial(fun, **kwargs) if kwargs else fun
        closed: list[Tracer] = []
        while True:  # once per batch of newly found captures (none: once)
            watched = _Watched(call, closed)
            try:
                out = checkpoint_call_p.bind(*args, *closed, fun=watched)
            except Exception:
                if not watched.found:
                    raise
            # A run that met a capture is discarded even if the function caught _Captured.
            if not watched.found:
                watched.discovering = False
                return out  # type: ignore[no-any-return]
            closed += watched.found

    return checkpointed
