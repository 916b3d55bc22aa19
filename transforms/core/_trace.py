"""Traces, tracers and the dispatch rule that picks which trace interprets a primitive.

A ``Trace`` is one live transform (one ``jvp``, one ``vjp``, ...). Its ``level`` is its height
in the context-local trace stack; a ``Tracer`` belongs to exactly one trace, by identity. When
a primitive is bound, the tracer whose trace has the highest level wins and that trace
interprets the primitive; every other argument (a constant or a lower-level tracer) is just
a value to that trace. Interpreters never look at each other's tracers: a rule that needs the
value one level down uses ``tracer.primal``, which may itself be a tracer of a lower level.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, NoReturn, TypeVar

import numpy as np

from .errors import (
    ConcretizationTypeError,
    DerivativeDroppedError,
    EscapedTracerError,
    TraceMixError,
    TracerBoolConversionError,
    UnexpectedTracerError,
)

if TYPE_CHECKING:
    from ._primitive import Primitive
    from ._types import Array, ArrayLike

__all__ = [
    "PrimalTracer",
    "Trace",
    "Tracer",
    "find_top_trace",
    "concrete",
    "refuse_concrete",
    "Transposing",
    "operators",
    "number_primitives",
    "twins",
    "untwinned",
]

TracerT = TypeVar("TracerT", bound="Tracer")


class Transposing:
    """What a transposing trace is transposing: named in the refusal of its control flow."""

    __slots__ = ("fix", "rule", "variable")

    def __init__(self, rule: str, variable: str, fix: str) -> None:
        self.rule = rule  # "forward mode of custom_vjp function f transposes its bwd rule"
        self.variable = variable  # "cotangent"
        self.fix = fix


def refuse_concrete(value: object, what: str) -> None:
    """Refuse ``what`` (``bool()``, ``.item()``, a comparison) on ``value`` if any level of it
    belongs to a trace that is transposing a linear map (``Trace.transposing``)."""
    while isinstance(value, Tracer):
        transposing = value._trace.transposing
        if transposing is not None:
            error = TracerBoolConversionError if what == "bool()" else ConcretizationTypeError
            raise error(
                f"{transposing.rule}, and that rule's control flow depends on the "
                f"{transposing.variable} ({what} of a value computed from it). Transposition "
                "needs a rule that is linear in it, with no branch or loop on its values: it "
                "would follow the branch taken at one point and give a wrong derivative. "
                f"Fix: {transposing.fix}"
            )
        value = value.primal


class Trace(abc.ABC, Generic[TracerT]):
    """One live transform. Subclasses interpret primitives whose top-level tracer is theirs.

    ``transposing`` is set on the trace of a linear map being transposed (a custom rule run
    in the direction it was not written for, see ``compose._custom``): it says which rule,
    and any control flow on a value of this trace is refused (``refuse_concrete``).

    A trace whose class sets ``adopts_finished`` (``checkpoint``'s, while its function runs)
    interprets every primitive that reaches a finished trace's tracer, when it is the
    newest live one that does (``find_top_trace``); else that is an escaped tracer. A trace
    held (``alive`` false) while a custom rule's code runs, whose closure must not read it,
    says whose code in ``held_by``: reading it is an ``UnexpectedTracerError``.

    ``frozen`` is set while the trace is frozen (``core._freeze``): it maps a tracer of this
    trace to the value it stands for, which ``bind`` uses in its place.

    A trace whose class sets ``stages`` records a program to replay (``T.jit``'s): while one
    is live, a structured construct (a ``transforms.lax`` loop) prefers to be one primitive,
    rules included, over running its algorithm eagerly, which is faster when nothing replays.
    """

    adopts_finished: ClassVar[bool] = False
    stages: ClassVar[bool] = False

    __slots__ = ("alive", "frozen", "held_by", "level", "name", "transposing")

    def __init__(self, level: int, name: str) -> None:
        self.level = level
        self.alive = True
        self.name = name
        self.transposing: Transposing | None = None
        self.held_by: str | None = None
        self.frozen: Callable[[Any], Any] | None = None

    @abc.abstractmethod
    def process_primitive(
        self, primitive: Primitive[Any], args: Sequence[object], params: dict[str, Any]
    ) -> object:
        """Apply ``primitive`` to ``args``, at least one of which is a tracer of this trace."""

    def owns(self, value: object) -> bool:
        """Whether ``value`` is a tracer of this very trace (identity, never level alone)."""
        return isinstance(value, Tracer) and value._trace is self

    def first_owned(self, args: Sequence[object]) -> int | None:
        """The position of the first argument that is a tracer of this trace (for errors)."""
        return next((i for i, a in enumerate(args) if self.owns(a)), None)

    def __repr__(self) -> str:
        state = "live" if self.alive else "finished"
        return f"<{self.name} trace, level {self.level}, {state}>"


def _adopter(primitive: Primitive[Any], finished: Trace[Any]) -> Trace[Any]:
    """The trace that interprets a primitive reaching ``finished``'s tracer: the newest live
    trace that adopts them (see ``Trace``), else the tracer escaped its transform."""
    from ._stack import current_traces  # (the stack module imports this one)

    if finished.held_by is not None:
        raise UnexpectedTracerError(finished.held_by, primitive.name)

    candidate: Trace[Any]  # (the function-level import of a cyclic module is untyped)
    for candidate in reversed(current_traces()):
        if candidate.alive and candidate.adopts_finished:
            return candidate
    raise EscapedTracerError(primitive.name, finished.name)


def find_top_trace(primitive: Primitive[Any], args: Sequence[object]) -> Trace[Any] | None:
    """The trace that must interpret ``primitive`` on ``args``; ``None`` if no arg is traced;
    a frozen trace if an arg is a tracer of one (``bind`` then binds their values instead)."""
    top: Trace[Any] | None = None
    for arg in args:
        if isinstance(arg, Tracer):
            trace = arg._trace
            if trace is top:
                continue
            if not trace.alive:
                if trace.frozen is not None:
                    return trace
                trace = _adopter(primitive, trace)
                if trace is top:
                    continue
            if top is None or trace.level > top.level:
                top = trace
            elif trace.level == top.level:
                raise TraceMixError(primitive.name, top.name, trace.name)
    return top


# The operator table: ``transforms.numpy`` fills it at import with its differentiable
# functions, so tracer operators (``x + y``, ``x[i]``, ``x.sum()``) dispatch to primitives
# while ``core`` never imports ``numpy``.
operators: dict[str, Callable[..., Array]] = {}

# The primitives behind the arithmetic operators, also filled by ``transforms.numpy``: when
# the other operand is a Python number this tracer is the only one, so its own trace
# interprets the primitive at once (`x * 1.01`, `x + 0.1`: the hot path of eager code).
number_primitives: dict[str, Primitive] = {}

# Raw functions of NumPy and other array libraries (``np.sin``, ``scipy.special.expit``) mapped
# to their differentiable twins, so that ``np.sin(tracer)`` dispatches instead of dropping a
# derivative; filled by each namespace (``transforms.extend.register_twins``). ``untwinned``
# names, for a raw function with no twin, the library and the namespace to use instead.
twins: dict[object, Callable[..., Any]] = {}
untwinned: dict[object, tuple[str, str]] = {}


def concrete(value: object) -> Any:
    """The plain NumPy value under any number of tracer levels (drops every derivative)."""
    while isinstance(value, Tracer):
        value = value.primal
    return value


def peek(value: object) -> Any:
    """The plain value under any number of tracer levels, looked at for its kind (which
    array library holds it), never its values: a recording (``T.jit``) guards a ``concrete``
    read, whose values decide what its program computes, but not this one, whose kind its
    cache key holds."""
    while isinstance(value, Tracer):
        value = value.primal
    return value


def _no_twin(func: object, name: str) -> NoReturn:
    library, namespace = untwinned.get(func, ("NumPy", "transforms.numpy"))
    raise TypeError(
        f"{library}'s '{name}' was called on a traced value and has no differentiable version "
        f"in {namespace} yet; use {namespace} functions inside transformed code"
    )


class Tracer:
    """A value being transformed. Behaves like an ndarray; every operation binds a primitive.

    Subclasses store ``primal``: the value one level down (an array or a lower-level tracer).
    """

    __slots__ = ("__weakref__", "_trace")  # weak references: as ndarrays (user caches)
    __array_priority__ = 1000
    __hash__ = None  # type: ignore[assignment]  # mutable-array semantics, like ndarray

    _trace: Trace[Any]

    @property
    @abc.abstractmethod
    def primal(self) -> Any:
        """The value one level down: an ndarray or a tracer of a lower level."""

    # ---- array attributes -------------------------------------------------------------
    # Shape and dtype are read one level down (never from the concrete value: a batching
    # tracer below this one stands for a value without its batch axis).
    @property
    def shape(self) -> tuple[int, ...]:
        primal = self.primal
        if isinstance(primal, (Tracer, np.ndarray, np.generic)):
            return primal.shape
        return np.shape(primal)

    @property
    def dtype(self) -> np.dtype[Any]:
        primal = self.primal
        if isinstance(primal, (Tracer, np.ndarray, np.generic)):
            return primal.dtype
        return np.result_type(primal)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def T(self) -> Array:
        return operators["transpose"](self)

    def __len__(self) -> int:
        shape = self.shape
        if not shape:
            raise TypeError("len() of unsized object (a 0-d traced array)")
        return shape[0]

    def __iter__(self) -> Iterator[Array]:
        return (self[i] for i in range(len(self)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}<{self.dtype}{list(self.shape)}, {self._trace!r}>"

    # ---- conversions: control flow on values is allowed, dropping a derivative is not ----
    def __bool__(self) -> bool:
        refuse_concrete(self, "bool()")
        return bool(concrete(self))

    def __float__(self) -> float:
        raise DerivativeDroppedError("float()", self._trace.name)

    def __int__(self) -> int:
        raise DerivativeDroppedError("int()", self._trace.name)

    def __complex__(self) -> complex:
        raise DerivativeDroppedError("complex()", self._trace.name)

    def __array__(self, dtype: object = None, copy: object = None) -> NoReturn:
        raise DerivativeDroppedError(
            "np.asarray()/np.array() (also reached when a plain NumPy array's method, e.g. "
            "ndarray.dot, or NumPy indexing is given a traced argument: use tnp.dot / tnp.take)",
            self._trace.name,
        )

    def item(self) -> Any:
        """The primal value as a Python scalar. Drops the derivative, on purpose."""
        refuse_concrete(self, ".item()")
        return concrete(self).item()

    def tolist(self) -> Any:
        """The primal value as nested lists. Drops the derivative, on purpose."""
        refuse_concrete(self, ".tolist()")
        return concrete(self).tolist()

    # ---- raw NumPy called on a tracer dispatches to the differentiable twin ----------------
    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        fn = twins.get(ufunc)
        if method != "__call__" or fn is None or kwargs.get("out") is not None:
            name = f"{ufunc.__name__}.{method}" if method != "__call__" else ufunc.__name__
            _no_twin(ufunc, name)
        return fn(*inputs, **kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        fn = twins.get(func)
        if fn is None:
            _no_twin(func, func.__name__)
        return fn(*args, **kwargs)

    # ---- in-place assignment is refused: arrays under a transform are values -------------
    def __setitem__(self, index: object, value: object) -> NoReturn:
        raise TypeError(
            "in-place assignment to a traced array is not differentiable; use the functional "
            "update `x = tnp.at(x)[idx].set(v)` (or .add(v) / .multiply(v)), which returns a "
            "new array"
        )

    # ---- operators ------------------------------------------------------------------------
    def __getitem__(self, index: object) -> Array:
        return operators["getitem"](self, index)

    def __neg__(self) -> Array:
        return operators["negative"](self)

    def __pos__(self) -> Array:
        return self

    def __abs__(self) -> Array:
        return operators["abs"](self)

    def _arithmetic(self, name: str, other: object, reflected: bool) -> Array:
        # bind's one-trace cases, inline (see ``Primitive.bind``): with a Python number or an
        # ndarray for the other operand (a rule's ``t * d``: a tangent times a derivative
        # computed one level down), or a tracer of the same trace (``ct * y`` in a pullback
        # under nesting), this tracer's own trace interprets the primitive. Not a 0-d
        # ndarray: ``multiply`` recognises grad's unit seed, a 0-d array, and skips the
        # product; it may be either operand, so 0-d operands take the operator's path.
        trace = self._trace
        if (
            type(other) is float
            or type(other) is int
            or (type(other) is np.ndarray and other.ndim)
            or (isinstance(other, Tracer) and other._trace is trace)
        ):
            if trace.alive:  # (a finished trace's tracer takes the path that says so)
                args = (other, self) if reflected else (self, other)
                return trace.process_primitive(number_primitives[name], args, {})  # type: ignore[return-value]
        return operators[name](other, self) if reflected else operators[name](self, other)

    def __add__(self, other: ArrayLike) -> Array:
        return self._arithmetic("add", other, False)

    def __radd__(self, other: ArrayLike) -> Array:
        return self._arithmetic("add", other, True)

    def __sub__(self, other: ArrayLike) -> Array:
        return self._arithmetic("subtract", other, False)

    def __rsub__(self, other: ArrayLike) -> Array:
        return self._arithmetic("subtract", other, True)

    def __mul__(self, other: ArrayLike) -> Array:
        return self._arithmetic("multiply", other, False)

    def __rmul__(self, other: ArrayLike) -> Array:
        return self._arithmetic("multiply", other, True)

    def __truediv__(self, other: ArrayLike) -> Array:
        return self._arithmetic("divide", other, False)

    def __rtruediv__(self, other: ArrayLike) -> Array:
        return self._arithmetic("divide", other, True)

    def __pow__(self, other: ArrayLike) -> Array:
        return self._arithmetic("power", other, False)

    def __rpow__(self, other: ArrayLike) -> Array:
        return self._arithmetic("power", other, True)

    def __matmul__(self, other: ArrayLike) -> Array:
        return operators["matmul"](self, other)

    def __rmatmul__(self, other: ArrayLike) -> Array:
        return operators["matmul"](other, self)

    # Boolean masks and integer arithmetic (no derivative): `(x > 0) & (x < 1)` under vmap.
    def __and__(self, other: ArrayLike) -> Any:
        return operators["bitwise_and"](self, other)

    def __rand__(self, other: ArrayLike) -> Any:
        return operators["bitwise_and"](other, self)

    def __or__(self, other: ArrayLike) -> Any:
        return operators["bitwise_or"](self, other)

    def __ror__(self, other: ArrayLike) -> Any:
        return operators["bitwise_or"](other, self)

    def __xor__(self, other: ArrayLike) -> Any:
        return operators["bitwise_xor"](self, other)

    def __rxor__(self, other: ArrayLike) -> Any:
        return operators["bitwise_xor"](other, self)

    def __invert__(self) -> Any:
        return operators["invert"](self)

    def __floordiv__(self, other: ArrayLike) -> Any:
        return operators["floor_divide"](self, other)

    def __rfloordiv__(self, other: ArrayLike) -> Any:
        return operators["floor_divide"](other, self)

    def __mod__(self, other: ArrayLike) -> Array:
        return operators["mod"](self, other)

    def __rmod__(self, other: ArrayLike) -> Array:
        return operators["mod"](other, self)

    def __divmod__(self, other: ArrayLike) -> tuple[Any, Array]:
        return operators["divmod"](self, other)  # type: ignore[return-value]

    def __rdivmod__(self, other: ArrayLike) -> tuple[Any, Array]:
        return operators["divmod"](other, self)  # type: ignore[return-value]

    def all(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Any:
        return operators["all"](self, axis=axis, keepdims=keepdims)

    def any(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Any:
        return operators["any"](self, axis=axis, keepdims=keepdims)

    def __lt__(self, other: ArrayLike) -> Any:
        return operators["less"](self, other)

    def __le__(self, other: ArrayLike) -> Any:
        return operators["less_equal"](self, other)

    def __gt__(self, other: ArrayLike) -> Any:
        return operators["greater"](self, other)

    def __ge__(self, other: ArrayLike) -> Any:
        return operators["greater_equal"](self, other)

    def __eq__(self, other: object) -> Any:
        return operators["equal"](self, other)

    def __ne__(self, other: object) -> Any:
        return operators["not_equal"](self, other)

    # ---- ndarray methods ------------------------------------------------------------------
    def reshape(self, *shape: Any, order: str = "C") -> Array:
        newshape = shape[0] if len(shape) == 1 else shape
        return operators["reshape"](self, newshape, order=order)

    def ravel(self, order: str = "C") -> Array:
        return operators["ravel"](self, order=order)

    def flatten(self, order: str = "C") -> Array:
        return operators["ravel"](self, order=order)

    def transpose(self, *axes: Any) -> Array:
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            return operators["transpose"](self, axes[0])
        return operators["transpose"](self, axes or None)

    def squeeze(self, axis: int | tuple[int, ...] | None = None) -> Array:
        return operators["squeeze"](self, axis)

    def astype(self, dtype: Any) -> Array:
        return operators["astype"](self, dtype)

    def dot(self, other: ArrayLike) -> Array:
        return operators["dot"](self, other)

    def sum(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
        return operators["sum"](self, axis=axis, keepdims=keepdims)

    def mean(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
        return operators["mean"](self, axis=axis, keepdims=keepdims)

    def prod(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
        return operators["prod"](self, axis=axis, keepdims=keepdims)

    def max(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
        return operators["max"](self, axis=axis, keepdims=keepdims)

    def min(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
        return operators["min"](self, axis=axis, keepdims=keepdims)

    def var(
        self, axis: int | tuple[int, ...] | None = None, ddof: float = 0, keepdims: bool = False
    ) -> Array:
        return operators["var"](self, axis=axis, ddof=ddof, keepdims=keepdims)

    def std(
        self, axis: int | tuple[int, ...] | None = None, ddof: float = 0, keepdims: bool = False
    ) -> Array:
        return operators["std"](self, axis=axis, ddof=ddof, keepdims=keepdims)

    def cumsum(self, axis: int | None = None) -> Array:
        return operators["cumsum"](self, axis=axis)

    def cumprod(self, axis: int | None = None) -> Array:
        return operators["cumprod"](self, axis=axis)

    def trace(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
        return operators["trace"](self, offset, axis1, axis2)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
        return operators["diagonal"](self, offset, axis1, axis2)

    def swapaxes(self, axis1: int, axis2: int) -> Array:
        return operators["swapaxes"](self, axis1, axis2)

    def repeat(self, repeats: ArrayLike, axis: int | None = None) -> Array:
        return operators["repeat"](self, repeats, axis)

    def take(self, indices: ArrayLike, axis: int | None = None, mode: str = "raise") -> Array:
        return operators["take"](self, indices, axis, mode=mode)

    def clip(self, min: ArrayLike | None = None, max: ArrayLike | None = None) -> Array:
        return operators["clip"](self, min, max)

    def round(self, decimals: int = 0) -> Array:
        return operators["round"](self, decimals)

    def conj(self) -> Array:
        return operators["conjugate"](self)

    def conjugate(self) -> Array:
        return operators["conjugate"](self)

    def argmax(self, axis: int | None = None) -> Any:
        return operators["argmax"](self, axis)

    def argmin(self, axis: int | None = None) -> Any:
        return operators["argmin"](self, axis)

    def argsort(self, axis: int = -1) -> Any:
        return operators["argsort"](self, axis)

    def nonzero(self) -> Any:
        return operators["nonzero"](self)

    @property
    def real(self) -> Array:
        return operators["real"](self)

    @property
    def imag(self) -> Array:
        return operators["imag"](self)


class PrimalTracer(Tracer):
    """A tracer that stores its primal itself (forward, reverse and Taylor mode do).

    Shape and dtype are read off the stored primal directly, not through the ``primal``
    property: rules ask for them on every use, at every nesting level.
    """

    __slots__ = ("_primal",)

    _primal: Any

    @property
    def primal(self) -> Any:
        return self._primal

    @property
    def shape(self) -> tuple[int, ...]:
        try:
            shape: tuple[int, ...] = self._primal.shape
        except AttributeError:  # a Python scalar
            return np.shape(self._primal)
        return shape

    @property
    def dtype(self) -> np.dtype[Any]:
        try:
            dtype: np.dtype[Any] = self._primal.dtype
        except AttributeError:
            return np.result_type(self._primal)
        return dtype
