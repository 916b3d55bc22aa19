"""The Taylor-mode interpreter: each tracer carries a primal and its truncated Taylor series.

A ``JetTracer`` of a trace of order ``K`` holds the primal ``x0`` (the value one level down)
and ``terms``: one array of shape ``(K, *x0.shape)`` stacking the *normalised* Taylor
coefficients ``x1 .. xK`` of the curve ``x(t) = x0 + x1 t + x2 t**2 + ...`` (``x_k`` is
the k-th derivative divided by ``k!``: products of series are then plain Cauchy products,
with no binomial weights). ``None`` is a zero series, kept symbolic as in forward mode:
a constant contributes no term, and a primitive all of whose operands have zero series
returns its plain primal. ``T.jet`` converts from and to JAX's derivative convention at
the boundary.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, Final

import numpy as np

from transforms.core import (
    NoRuleError,
    PrimalTracer,
    Primitive,
    Trace,
    Tracer,
    new_trace,
    no_scalars,
)
from transforms.forward import jvp_rule

from ._rules import RULES, TaylorRule, array_ops

__all__ = ["JetTrace", "JetTracer", "UNKNOWN", "by_composition", "ode_rule"]


class _Unknown:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Final = _Unknown()
"""The terms of a series not computed yet: a rule that reads them marks its trace
``touched`` (the ODE rule then computes the series one order at a time, see ``_rules``)."""


class JetTracer(PrimalTracer):
    """A primal value (one level down) and its normalised Taylor coefficients."""

    __slots__ = ("terms",)

    def __init__(self, trace: JetTrace, primal: Any, terms: Any) -> None:
        self._trace = trace
        self._primal = primal
        self.terms = terms


class JetTrace(Trace[JetTracer]):
    """One live ``jet`` of order ``order``: pushes series through primitives by their rules."""

    __slots__ = ("order", "touched")

    def __init__(self, level: int, order: int, name: str = "jet") -> None:
        super().__init__(level, name)
        self.order = order
        self.touched = False

    def process_primitive(
        self, primitive: Primitive, args: Sequence[object], params: dict[str, Any]
    ) -> object:
        primals: list[Any] = []
        series: list[Any] = []
        traced = False
        for a in args:
            if type(a) is JetTracer and a._trace is self:
                primals.append(a._primal)
                terms = a.terms
                if terms is UNKNOWN:
                    self.touched = True
                    terms = None
                series.append(terms)
                traced = traced or terms is not None
            else:
                primals.append(a)
                series.append(None)
        if self.level == 0:
            # nothing below can be traced (bind has refused any other trace's tracer):
            # NumPy directly, its scalars made 0-d arrays as bind makes them
            ans = primitive.impl(*primals, **params)
            if type(ans) is not np.ndarray:
                ans = no_scalars(ans)
        else:
            ans = primitive.bind(*primals, **params)
        if not (primitive.differentiable and traced):
            return ans
        rule = RULES.get(primitive)
        if rule is None:  # a user's primitive: the rule derived from its JVP, if it has one
            if jvp_rule(primitive) is None:
                raise NoRuleError(
                    primitive.name, "jet", self.first_owned(args), "transforms.taylor.deftaylor"
                )
            rule = ode_rule(primitive)
        out = rule(self.order, primals, series, ans, **params)
        if primitive.multiple_results:
            outs = (None,) * len(ans) if out is None else out
            return tuple(
                a if s is None else JetTracer(self, a, s) for a, s in zip(ans, outs, strict=True)
            )
        return ans if out is None else JetTracer(self, ans, out)


# ---- the rule derived from a JVP rule: the ODE recurrence ------------------------------------
#
# For y(t) = p(x(t)), y'(t) = J(x'(t), y(t), x(t)) where J is p's JVP rule (linear in the
# tangent). Evaluating J on jets one order lower, of x (coefficients x0..x_{K-1}) and of
# x' (coefficients k x_k, k = 1..K), gives the series of y' to order K-1, that is
# y1..yK: exact, by the primitive's own derivative. When J reads y (exp: J = t * ans),
# y's series is needed to order K-1 first: it is then computed one order at a time
# (K evaluations of J). Whether J reads y is found by giving it y's series as UNKNOWN:
# a primitive that reads it marks the trace touched (and the primitive is remembered).

_TOUCHED: Final = object()
_READS_ANS: weakref.WeakSet[Primitive] = weakref.WeakSet()


@cache
def _weights(start: int, n: int, ndim: int, dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    """``start, start+1, ..., start+n-1`` along axis 0, broadcastable against a stack."""
    w = np.arange(start, start + n, dtype=dtype).reshape((n,) + (1,) * (ndim - 1))
    w.setflags(write=False)  # shared by every call
    return w


def _dtype(x: Any) -> np.dtype[Any]:
    return x.dtype if isinstance(x, (Tracer, np.ndarray, np.generic)) else np.result_type(x)


def _shape(x: Any) -> tuple[int, ...]:
    return x.shape if isinstance(x, (Tracer, np.ndarray, np.generic)) else np.shape(x)


def _leading(x: Any, like: Any) -> Any:
    """``x`` (a term of ``like``'s shape, or one that broadcasts to it) with a leading axis."""
    shape = _shape(like)
    if not isinstance(x, (Tracer, np.ndarray, np.generic)):
        x = np.asarray(x, dtype=_dtype(like))
    if _shape(x) != shape:
        x = array_ops["broadcast_to"](x, shape)
    return x.reshape((1, *shape))


def _unwind(r: Any, inner: JetTrace | None, n: int, like: Any) -> Any:
    """y1..y_{n+1} from the series ``r`` of y' of order ``n``: y_{k+1} = r_k / (k + 1)."""
    if r is None:
        return None
    terms = None
    if inner is not None and isinstance(r, JetTracer) and r._trace is inner:
        r, terms = r._primal, r.terms
        if terms is UNKNOWN:  # J returned y itself
            return _TOUCHED
    first = _leading(r, like)
    if n == 0:
        return first
    if terms is None:
        terms = np.zeros((n, *_shape(like)), dtype=_dtype(first))
    stack = array_ops["concatenate"]([first, terms], 0)
    return stack / _weights(1, n + 1, len(_shape(stack)), _dtype(stack))


def _derivative_series(
    primitive: Primitive,
    n: int,
    primals: Sequence[Any],
    series: Sequence[Any],
    ans: Any,
    known: Any,
    params: dict[str, Any],
) -> Any:
    """The coefficients y1..y_{n+1}, by J on jets of order ``n`` (``known``: y1..yn, or
    ``None`` when not known yet; ``_TOUCHED`` if J needed them)."""
    J = jvp_rule(primitive)
    assert J is not None
    multiple = primitive.multiple_results
    if n == 0:
        r = J([None if s is None else s[0] for s in series], ans, *primals, **params)
        if multiple:
            return (
                None
                if r is None
                else tuple(_unwind(ri, None, 0, a) for ri, a in zip(r, ans, strict=True))
            )
        return _unwind(r, None, 0, ans)
    with new_trace(lambda level: JetTrace(level, n)) as inner:
        xs: list[Any] = []
        ts: list[Any] = []
        for p, s in zip(primals, series, strict=True):
            if s is None:
                xs.append(p)
                ts.append(None)
            else:
                xs.append(JetTracer(inner, p, s[:n]))
                rest = s[1 : n + 1] * _weights(2, n, len(_shape(s)), _dtype(s))
                ts.append(JetTracer(inner, s[0], rest))

        def jet_of(a: Any, k: Any) -> JetTracer:
            return JetTracer(inner, a, UNKNOWN if known is None else (None if k is None else k[:n]))

        if multiple:
            ks = (None,) * len(ans) if known is None else known
            y: Any = tuple(jet_of(a, k) for a, k in zip(ans, ks, strict=True))
        else:
            y = jet_of(ans, known)
        r = J(ts, y, *xs, **params)
        if inner.touched:
            return _TOUCHED
        if multiple:
            if r is None:
                return None
            outs = tuple(_unwind(ri, inner, n, a) for ri, a in zip(r, ans, strict=True))
            return _TOUCHED if any(o is _TOUCHED for o in outs) else outs
        return _unwind(r, inner, n, ans)


def _ode(
    primitive: Primitive,
    order: int,
    primals: Sequence[Any],
    series: Sequence[Any],
    ans: Any,
    /,
    **params: Any,
) -> Any:
    if primitive not in _READS_ANS:
        out = _derivative_series(primitive, order - 1, primals, series, ans, None, params)
        if out is not _TOUCHED:
            return out
        _READS_ANS.add(primitive)
    known = None
    for n in range(order):  # y_{n+1} from y1..yn, one order at a time
        known = _derivative_series(primitive, n, primals, series, ans, known, params)
        if known is None:
            return None
    return known


_ODE_RULES: weakref.WeakKeyDictionary[Primitive, TaylorRule] = weakref.WeakKeyDictionary()


def ode_rule(primitive: Primitive) -> TaylorRule:
    """The Taylor rule derived from ``primitive``'s JVP rule by the ODE recurrence (exact).

    Its cost grows with the order as the JVP rule's own operations do: linear in ``K``
    for a derivative built of cheaper primitives (``sin``, ``log``, ``tanh``), exponential
    for one that calls the primitive itself (``solve``'s JVP solves again).
    """

    rule = _ODE_RULES.get(primitive)
    if rule is None:

        def rule(
            order: int, primals: Sequence[Any], series: Sequence[Any], ans: Any, /, **params: Any
        ) -> Any:
            return _ode(primitive, order, primals, series, ans, **params)

        _ODE_RULES[primitive] = rule
    return rule


def by_composition(
    fn: Callable[..., Any], order: int, primals: Sequence[Any], series: Sequence[Any]
) -> Any:
    """The series of ``fn(*operands)`` (a composition of primitives with Taylor rules) at
    operands with the given primals and series: a rule written as a composition."""
    with new_trace(lambda level: JetTrace(level, order)) as inner:
        xs = [
            p if s is None else JetTracer(inner, p, s) for p, s in zip(primals, series, strict=True)
        ]
        r = fn(*xs)
        return r.terms if isinstance(r, JetTracer) and r._trace is inner else None
