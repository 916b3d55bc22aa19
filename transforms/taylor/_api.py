"""``jet`` (JAX's ``jax.experimental.jet`` signature and convention) and its conveniences."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, Protocol, TypeVar, overload

import numpy as np

from transforms.core import Array, ArrayLike, Tracer, arrays, new_trace
from transforms.core.tree_util import tree_flatten, tree_unflatten

from ._rules import array_ops
from ._trace import JetTrace, JetTracer

__all__ = ["jet", "derivative", "derivatives", "directional_derivatives"]


def _as_array(x: Any, what: str, *where: int) -> Any:
    """``x`` as an array or tracer; the error names ``what`` (formatted with ``where``)."""
    if isinstance(x, (Tracer, np.ndarray)):
        return x
    if arrays.is_foreign(x):  # a Dask or CuPy array: its series stay in its library
        arrays.hold()
        return x
    if isinstance(x, (np.generic, int, float, complex)) and not isinstance(x, bool):
        return np.asarray(x)
    name = what.format(*where) if where else what
    raise TypeError(f"jet: {name} is a {type(x).__name__}, not an array")


def _dtype(x: Any) -> np.dtype[Any]:
    return x.dtype  # type: ignore[no-any-return]


R = TypeVar("R")


# An array output gives an array and a list of its K derivatives; any other output (a pytree)
# its own type and a tree of lists.
@overload
def jet(
    fun: Callable[..., Array], primals: Sequence[Any], series: Sequence[Sequence[Any]]
) -> tuple[Array, list[Array]]: ...
@overload
def jet(
    fun: Callable[..., R], primals: Sequence[Any], series: Sequence[Sequence[Any]]
) -> tuple[R, Any]: ...
def jet(
    fun: Callable[..., Any], primals: Sequence[Any], series: Sequence[Sequence[Any]]
) -> tuple[Any, Any]:
    """Taylor mode: ``fun``'s value at ``primals`` and the derivatives of ``fun(x(t))`` at
    ``t = 0`` along the curve whose derivatives ``series`` gives.

    Exactly JAX's ``jax.experimental.jet.jet``: ``primals`` holds one array per positional
    argument; ``series`` one list per primal of ``K`` arrays, the derivatives ``x'(0),
    x''(0), ...`` of the input curve (``x(t) = x0 + x1 t + x2 t**2/2! + ...``: derivatives,
    not Taylor coefficients); ``series_out`` the ``K`` derivatives of ``fun(x(t))`` at 0, a
    list per output leaf (a tree of lists for a pytree output). All ``K`` orders come from
    one pass, at a cost per primitive polynomial in ``K`` (nested ``grad`` is exponential).

    Example:
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> y, ys = T.jet(tnp.exp, (0.0,), ([1.0, 0.0, 0.0],))  # exp(t): every derivative 1
        >>> y, [float(v) for v in ys]
        (array(1.), [1.0, 1.0, 1.0])
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(series, (tuple, list)):
        raise TypeError(
            "jet: primals and series must be tuples (one entry per positional argument), got "
            f"{type(primals).__name__} and {type(series).__name__}; e.g. jet(f, (x,), ([v, 0.0],))"
        )
    if len(primals) != len(series):
        raise TypeError(
            f"jet: got {len(primals)} primal(s) but {len(series)} series; pass one list of "
            "terms per primal"
        )
    order = None
    for i, terms in enumerate(series):
        if not isinstance(terms, (tuple, list)):
            raise TypeError(
                f"jet: series {i} is a {type(terms).__name__}, not a list of terms (one array "
                "per order)"
            )
        if order is None:
            order = len(terms)
        elif len(terms) != order:
            raise ValueError(
                "jet: jet terms have inconsistent lengths for different arguments: "
                f"{[len(t) for t in series]}; give every argument the same number of terms"
            )
    if order is None:
        order = 0
    xs = []
    stacks = []
    for i, x in enumerate(primals):
        if type(x) is not np.ndarray:
            x = _as_array(x, "primal {}", i)
        xs.append(x)
        stacks.append(_stack(x, series[i], i))
    if order == 0:
        out = fun(*xs)
        flat, tree = tree_flatten(out)
        return out, tree_unflatten(tree, [[] for _ in flat])
    with new_trace(lambda level: JetTrace(level, order)) as trace:
        tracers = [JetTracer(trace, x, s) for x, s in zip(xs, stacks, strict=True)]
        flat, tree = tree_flatten(fun(*tracers))
        primals_out: list[Any] = []
        series_out: list[list[Any]] = []
        for o in flat:
            if type(o) is JetTracer and o._trace is trace:
                p, s = o._primal, o.terms
            else:
                p, s = o, None
            if type(p) is not np.ndarray:
                p = _as_array(p, "an output")
            primals_out.append(p)
            series_out.append(_unstack(p, s, order))
    return tree_unflatten(tree, primals_out), tree_unflatten(tree, series_out)


@cache
def _factorials(order: int, ndim: int, dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    """``1!, 2!, ..., order!`` along axis 0 of a stack (read-only: shared by every call)."""
    facts = np.array([math.factorial(k) for k in range(1, order + 1)], dtype=dtype)
    facts = facts.reshape((order,) + (1,) * ndim)
    facts.setflags(write=False)
    return facts


def _stack(x: Any, terms: Sequence[Any], i: int) -> Any:
    """Derivative-convention terms of primal ``i`` as one stack of normalised coefficients."""
    if not terms:
        return None
    shape, dtype = x.shape, _dtype(x)
    checked = []
    plain = True  # no tracer among the terms
    for k, t in enumerate(terms):
        if type(t) is not np.ndarray:
            t = np.asarray(t, dtype=dtype) if isinstance(t, (int, float, complex)) else t
            t = _as_array(t, "term {} of series {}", k, i)
            plain = plain and not isinstance(t, Tracer)
        if t.shape != shape:
            raise ValueError(
                f"jet: term {k} of series {i} has shape {tuple(t.shape)} but its primal has "
                f"shape {shape}; they must match"
            )
        if t.dtype != dtype:
            raise TypeError(
                f"jet: term {k} of series {i} has dtype {_dtype(t)} but its primal has dtype "
                f"{dtype}; they must match (cast the term with .astype)"
            )
        checked.append(t)
    # np.array, not np.stack: the terms are checked alike, and np.stack's Python wrapper
    # costs more than the rest of a small jet's boundary
    stack = np.array(checked, dtype=dtype) if plain else array_ops["stack"](checked)
    return stack / _factorials(len(terms), len(shape), dtype)


def _unstack(p: Any, s: Any, order: int) -> list[Any]:
    if s is None:
        return [np.zeros(p.shape, dtype=_dtype(p)) for _ in range(order)]
    s = s * _factorials(order, len(p.shape), _dtype(s))
    return [s[k, ...] for k in range(order)]  # (0-d arrays, not NumPy scalars, from a 1-d s)


def derivatives(fun: Callable[[Any], Any], order: int) -> Callable[[Any], list[Any]]:
    """A function giving ``[f(x), f'(x), ..., f^(order)(x)]`` in one Taylor pass.

    ``fun`` maps one scalar to an array (or is elementwise on an array: then each element's
    derivatives); the list holds the value and then ``jet``'s ``series_out``, one entry per
    order.

    Example:
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> tuple(float(d) for d in T.derivatives(tnp.sin, 4)(0.0))
        (0.0, 1.0, 0.0, -1.0, 0.0)
    """
    _check_order(order, "derivatives")

    def all_orders(x: Any) -> list[Any]:
        x = _as_array(x, "x")
        seed = [np.ones_like(x)] + [np.zeros_like(x)] * (order - 1)
        y, ys = jet(fun, (x,), (seed,))
        return [y, *ys]

    return all_orders


def directional_derivatives(fun: Callable[..., Any], order: int) -> Callable[[Any, Any], list[Any]]:
    """A function of ``(x, v)`` giving the directional derivatives ``d^k/dt^k f(x + t v)`` at
    ``t = 0`` for ``k = 1 .. order`` (``fun`` of one array argument), in one Taylor pass.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> f = lambda x: tnp.sum(x**3)
        >>> x, v = np.array([1.0, 2.0]), np.array([1.0, 1.0])
        >>> tuple(float(d) for d in T.directional_derivatives(f, 3)(x, v))
        (15.0, 18.0, 12.0)
    """
    _check_order(order, "directional_derivatives")

    def along(x: Any, v: Any) -> list[Any]:
        x = _as_array(x, "x")
        zeros = np.zeros(x.shape, dtype=_dtype(x))
        return jet(fun, (x,), ([v] + [zeros] * (order - 1),))[1]  # type: ignore[no-any-return]

    return along


R_co = TypeVar("R_co", covariant=True)


class KthDerivative(Protocol[R_co]):
    """``derivative``'s result: ``(x)`` for ``f^(k)(x)``, ``(x, v)`` along ``v``."""

    def __call__(self, x: ArrayLike, v: ArrayLike | None = None, /) -> R_co: ...


def derivative(fun: Callable[[Any], R_co], order: int = 1) -> KthDerivative[R_co]:
    """A function giving the ``order``-th derivative of ``fun`` in one Taylor pass: of a
    scalar function (or one elementwise on an array: each element's), ``f^(k)(x)``; given a
    direction ``v`` too, the directional derivative ``d^k/dt^k fun(x + t v)`` at ``t = 0``.

    One ``jet`` of order ``k`` underneath: the cost grows with ``k`` as a Taylor
    recurrence's does (at most quadratically, per primitive), where ``k`` nested ``grad``
    calls grow exponentially. It composes with ``grad`` and ``vmap`` as ``jet`` does.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> float(T.derivative(tnp.sin, order=5)(0.0))  # the fifth derivative of sin is cos
        1.0
        >>> f = lambda x: tnp.sum(x**3)
        >>> float(T.derivative(f, order=3)(np.array([1.0, 2.0]), np.array([1.0, 1.0])))
        12.0
    """
    _check_order(order, "derivative")

    def kth(x: ArrayLike, v: ArrayLike | None = None, /) -> Any:
        point = _as_array(x, "x")
        zeros = np.zeros(point.shape, dtype=_dtype(point))
        first = np.ones_like(point) if v is None else v
        series = jet(fun, (point,), ([first] + [zeros] * (order - 1),))[1]
        flat, tree = tree_flatten(series, is_leaf=lambda s: isinstance(s, list))
        return tree_unflatten(tree, [s[order - 1] for s in flat])

    return kth


def _check_order(order: int, name: str) -> None:
    if not isinstance(order, int) or isinstance(order, bool) or order < 1:
        raise ValueError(f"{name}: order must be a positive integer, got {order!r}")
