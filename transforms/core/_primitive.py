"""``Primitive``: a named operation that every interpreter knows how to transform.

``bind`` is the one dispatch path: with no tracer among the arguments it runs the NumPy
implementation; otherwise the highest-level trace among them interprets it (see ``_trace``).
Interpreters call ``bind`` again on the values one level down (the lowest trace, level 0,
may call ``impl`` directly: ``bind`` would find nothing traced), so every application of a
primitive goes through this one rule. Its fast path, one operand, is specialised here too
(``unary_function``, the public function of every one-operand primitive) and in tracer
arithmetic with a Python number or an ndarray (``Tracer._arithmetic``): each saves ``bind``'s
frame on the hottest path of eager code, and neither decides anything ``bind`` would not. Parameters
(axis, shape, index, ...) travel as keyword arguments and are never traced.

Every primitive is recorded in a registry (``all_primitives``), with the module that defined
it, so that the rule-coverage test can ask every interpreter about every primitive.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, Literal, overload

import numpy as np

from . import arrays as _arrays
from ._freeze import thawed
from ._stack import current_traces
from ._trace import Tracer, find_top_trace

if TYPE_CHECKING:
    from typing_extensions import TypeVar

    from ._types import Array

    #: What ``bind`` returns: an array (or a tracer of one), a tuple of them for a
    #: multiple-results primitive. Checkers default it to ``Array`` (a bare ``Primitive``).
    OutT = TypeVar("OutT", default=Array)
else:
    from typing import TypeVar

    OutT = TypeVar("OutT")  # the default exists for checkers only (typing has it from 3.13)

__all__ = [
    "Primitive",
    "all_primitives",
    "native",
    "native_types",
    "no_scalars",
    "unary_function",
]

_REGISTRY: weakref.WeakSet[Primitive[Any]] = weakref.WeakSet()

_CONTAINERS = frozenset((list, tuple, dict))  # a set: the cheapest test on the hot path

#: Operand types ``impl`` receives as they are, tested by exact type (one set lookup on the
#: hot path). Any other operand is looked at once more: a container may hide a tracer, and a
#: foreign array-like (see ``native``) becomes an ndarray.
native_types = frozenset(
    (np.ndarray, float, int, complex, bool, np.float64, np.float32, np.complex128, np.int64)
)


def native(x: Any) -> Any:
    """An operand as NumPy's own functions take it: a foreign array-like (a pandas Series or
    DataFrame, a memoryview, any ``__array__`` or buffer object that is not an ndarray)
    becomes an ndarray, anything else (arrays, tracers, scalars, lists) is returned as it is.

    Why: NumPy's ufuncs hand pandas objects back to pandas (``np.matmul(df, x)`` is a
    Series), so an ``impl`` called on one would return a foreign type, where NumPy's
    non-ufunc function (``np.dot``) returns an ndarray and every ``transforms.numpy``
    function promises an ``Array``; a rule would meet a value without ``.dtype``
    (a DataFrame). Converting at the operand is what ``np.asarray`` inside NumPy does.
    """
    if (
        type(x) in native_types
        or isinstance(x, (np.ndarray, np.generic, Tracer, str, bytes))
        or type(x) in _CONTAINERS
    ):
        return x
    if hasattr(type(x), "__array_function__"):  # Dask, CuPy: its own library (``_arrays``)
        return x
    if isinstance(x, memoryview) or hasattr(x, "__array__") or hasattr(x, "__array_interface__"):
        return np.asarray(x)
    return x


class Primitive(Generic[OutT]):
    """A differentiable operation: ``impl`` on plain values, rules in each interpreter.

    Args:
        name: shown in every error that concerns this primitive.
        impl: the NumPy implementation, called on plain (untraced) values.
        differentiable: ``False`` for operations whose result carries no derivative
            (comparisons, ``argmax``): interpreters evaluate them on primal values.
        multiple_results: ``impl`` returns a tuple of arrays (``eigh``, ``svd``); its JVP
            rules return a tuple of tangents (``None`` for a zero one), its VJP pullbacks
            receive a tuple of cotangents, its batching rule returns a tuple of batch axes.
        commutative: a binary operation whose two operands may be swapped with the same
            result, to the bit (``add``, ``multiply``): an interpreter may then take
            ``f(y, x)`` for an ``f(x, y)`` it has already computed.
        module: the module that defines it (by default the caller's): primitives of the
            library's own namespaces are the ones the rule-coverage test holds to account.

    Positional arguments are the operands (arrays, scalars or tracers). A tracer hidden in a
    list, tuple or dict argument would reach ``impl`` unseen by the interpreters, its
    derivative silently dropped: ``bind`` refuses it (``transforms.primitive`` flattens such
    arguments instead).

    The type says what ``bind`` returns: ``Primitive[Array]`` (``Primitive`` for short),
    or ``Primitive[tuple[Array, ...]]`` with ``multiple_results=True``.
    """

    __slots__ = (
        "__weakref__",
        "commutative",
        "differentiable",
        "impl",
        "module",
        "multiple_results",
        "name",
    )

    @overload
    def __init__(
        self: Primitive[Array],
        name: str,
        impl: Callable[..., Any],
        *,
        differentiable: bool = True,
        multiple_results: Literal[False] = False,
        commutative: bool = False,
        module: str | None = None,
    ) -> None: ...
    @overload
    def __init__(
        self: Primitive[tuple[Array, ...]],
        name: str,
        impl: Callable[..., Any],
        *,
        differentiable: bool = True,
        multiple_results: Literal[True],
        commutative: bool = False,
        module: str | None = None,
    ) -> None: ...
    def __init__(
        self,
        name: str,
        impl: Callable[..., Any],
        *,
        differentiable: bool = True,
        multiple_results: bool = False,
        commutative: bool = False,
        module: str | None = None,
    ) -> None:
        self.impl: Callable[..., OutT] = impl
        self.name = name
        self.differentiable = differentiable
        self.multiple_results = multiple_results
        self.commutative = commutative
        self.module = sys._getframe(1).f_globals.get("__name__", "") if module is None else module
        _REGISTRY.add(self)

    def bind(self, *args: Any, **params: Any) -> OutT:
        """Apply the primitive, letting the highest-level trace among ``args`` interpret it."""
        top = None
        mixed = foreign = False
        for arg in args:
            if isinstance(arg, Tracer):
                if top is None:
                    top = arg._trace
                elif arg._trace is not top and not mixed:  # several traces: the full
                    top = find_top_trace(self, args)  # check picks one (once)
                    mixed = True
            elif type(arg) not in native_types:
                if type(arg) in _CONTAINERS:
                    _refuse_hidden_tracers(self, args)
                elif _arrays.is_foreign(arg):  # Dask, CuPy: the library's own call
                    foreign = True
                    _arrays.hold()
                elif native(arg) is not arg:  # a pandas object, a memoryview: an ndarray
                    args = tuple(native(a) for a in args)
        try:
            if top is None:  # nothing is traced
                out = self.impl(*args, **params)
                return out if type(out) is np.ndarray else no_scalars(out)
            if not top.alive:
                top = find_top_trace(self, args)  # raises EscapedTracerError, unless frozen
                if top is not None and top.frozen is not None:
                    return self.bind(*map(thawed, args), **params)
            # The interpreters' results are typed ``object``: the primitive's type says what.
            return top.process_primitive(self, args, params)  # type: ignore[union-attr, return-value]
        except (FutureWarning, TypeError) as error:  # another array library's refusal?
            refusal = _arrays.library_error(self.name, error, args)
            if refusal is None:
                raise
            raise refusal from error
        finally:
            if foreign and not current_traces():  # an untraced call: it held them alone
                _arrays.release()

    __call__ = bind

    def __repr__(self) -> str:
        return f"Primitive({self.name!r})"


def unary_function(
    primitive: Primitive[Any], convert: Callable[[Any], Any], name: str, doc: str
) -> Callable[[Any], Any]:
    """The public function of a one-operand primitive: ``bind`` specialised to one operand.

    ``convert`` turns a list or tuple operand into an array (NumPy's ``np.sin([1, x])``);
    the result is bound as usual.
    """
    impl = primitive.impl

    def fn(x: Any) -> Any:
        if isinstance(x, Tracer):
            trace = x._trace
            if trace.alive:  # (a finished trace's tracer takes bind's path, which says so)
                return trace.process_primitive(primitive, (x,), {})
            return primitive.bind(x)
        if type(x) not in native_types:  # a list (``convert``), a foreign array-like (``bind``)
            return primitive.bind(convert(x))
        out = impl(x)
        return out if type(out) is np.ndarray else no_scalars(out)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def no_scalars(out: Any) -> Any:
    """A NumPy scalar result (``np.sum`` of an array, ``np.sin`` of a 0-d array) as a 0-d
    array, alone or in a multiple-results tuple: what a primitive returns is an ``Array``,
    untraced as under a transform (``bind``, and an interpreter calling ``impl`` itself, call
    this only for a result not an ndarray)."""
    if isinstance(out, np.generic):
        return np.asarray(out)
    if type(out) is tuple:
        return tuple(np.asarray(o) if isinstance(o, np.generic) else o for o in out)
    return out


def _contains_tracer(value: object) -> bool:
    if isinstance(value, Tracer):
        return True
    if isinstance(value, (list, tuple)):
        return any(_contains_tracer(v) for v in value)
    if isinstance(value, dict):
        return any(_contains_tracer(v) for v in value.values())
    return False


def _refuse_hidden_tracers(primitive: Primitive[Any], args: tuple[Any, ...]) -> None:
    for i, arg in enumerate(args):
        if type(arg) in _CONTAINERS and _contains_tracer(arg):
            raise TypeError(
                f"primitive '{primitive.name}': argument {i} is a {type(arg).__name__} that "
                "holds a traced value; a primitive's operands must be arrays (its rules would "
                "never see the traced value, and its derivative would be lost). Pass the "
                "arrays as separate arguments, or define the primitive with "
                "transforms.primitive, which flattens container arguments"
            )


def all_primitives() -> list[Primitive[Any]]:
    """Every live primitive, in no particular order."""
    return list(_REGISTRY)
