"""``checkpoint``: reverse mode keeps a function's inputs and recomputes its intermediates in
the backward pass.

Recomputing is only exact if the function reads the same values both times. Besides its
arguments it may read constants from anywhere (a closure, a dict of parameters, a module
global, a helper's closure), and the user may modify one in place between the forward and
the backward pass. So every run is watched by a small recording interpreter that sees each
plain array or number reaching a primitive; the first run keeps their fingerprints and every
recomputation must read the same sequence, or it raises instead of returning a silently
wrong derivative. The cost is one hash of each constant per run.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec, TypeVar

import numpy as np

from transforms.batching import defbatch
from transforms.core import Primitive, Trace, Tracer, new_trace
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


def _fingerprint(value: Any) -> tuple[Any, ...]:
    if isinstance(value, np.ndarray):
        digest = hashlib.blake2b(np.ascontiguousarray(value).data, digest_size=16)
        return (value.shape, value.dtype.str, digest.digest())
    return (type(value).__name__, repr(value))


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


class _WatchTrace(Trace[_WatchTracer]):
    """Passes every primitive down unchanged, fingerprinting the constants it is given."""

    __slots__ = ("reads",)

    def __init__(self, level: int) -> None:
        super().__init__(level, "checkpoint")
        self.reads: list[tuple[Any, ...]] = []

    def process_primitive(
        self, primitive: Primitive[Any], args: Sequence[object], params: dict[str, Any]
    ) -> object:
        values = []
        for a in args:
            if isinstance(a, _WatchTracer) and a._trace is self:
                values.append(a._value)
                continue
            if isinstance(a, (np.ndarray, *_NUMBERS)):
                self.reads.append(_fingerprint(a))
            values.append(a)
        ans = primitive.bind(*values, **params)
        if primitive.multiple_results:
            return tuple(_WatchTracer(self, a) for a in ans)
        return _WatchTracer(self, ans)


class _Watched:
    """The checkpointed function of one call: every run after the first must read the same
    constants as the first (the forward pass), or recomputing it would be wrong."""

    __slots__ = ("fun", "reads")

    def __init__(self, fun: Callable[..., Any]) -> None:
        self.fun = fun
        self.reads: list[tuple[Any, ...]] | None = None

    def __call__(self, *args: Any) -> Any:
        with new_trace(_WatchTrace) as trace:
            watched = [
                _WatchTracer(trace, a) if isinstance(a, (np.ndarray, Tracer, *_NUMBERS)) else a
                for a in args
            ]
            out = tree_map(
                lambda o: o._value if isinstance(o, _WatchTracer) and o._trace is trace else o,
                self.fun(*watched),
            )
        if self.reads is None:
            self.reads = trace.reads
        elif trace.reads != self.reads:
            raise RuntimeError(
                "checkpoint: an array or number the checkpointed function reads was modified "
                "between the forward and the backward pass (or it reads other values when "
                "recomputed: a rebound global, random numbers), so recomputing it would give "
                "a wrong derivative; pass such values as arguments, or do not modify them"
            )
        return out


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
        return checkpoint_call_p.bind(*args, fun=_Watched(call))  # type: ignore[no-any-return]

    return checkpointed
