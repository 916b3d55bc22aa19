"""Collapsed Taylor mode: ``n`` second-order jets in one pass, their second terms summed.

The Laplacian ``sum_i d^2/dt^2 f(x + t e_i)`` is a sum of ``n`` order-2 jets. Run one by
one (or batched with ``vmap``), every jet carries its own second coefficient ``x2_i``
through every primitive. But a Taylor rule's second coefficient is affine in the operand's
second coefficient: ``y2_i = J x2_i + Q(x1_i, x1_i)`` (``J`` the Jacobian, ``Q`` half the
second derivative at the primal). Its sum over the directions is then
``c_y = J c_x + sum_i Q(x1_i, x1_i)`` with ``c = sum_i x2_i``: one second coefficient per
value instead of ``n``, *collapsed* (Dangel et al., NeurIPS 2024; the forward Laplacian of
Li et al., 2023), exactly.

A ``CollapsedTracer`` holds its primal and ``terms``: one array ``(n + 1, *shape)``, rows
``0 .. n-1`` the first coefficients ``x1_i`` (one per direction) and row ``n`` the summed
normalised second coefficient ``c`` (``None``: all zero). A primitive maps it by

- its collapsed rule (``defcollapsed``), when the family gave one: a linear primitive maps
  all ``n + 1`` rows in one batched call (``Q = 0``), a bilinear one adds the cross term
  ``sum_i p(a1_i, b1_i)`` (``transforms/numpy/_taylor.py``);
- else the rule derived from its Taylor rule, for every primitive that has one (the
  coverage test demands it): the order-2 rule ``vmap``-ed over the directions with a zero
  second coefficient gives ``x1`` and ``Q`` (summed), and the order-1 rule on ``c`` gives
  ``J c``.

The rules are written with differentiable operations, so ``grad`` and ``vmap`` compose with
the collapsed pass from either side.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from transforms.batching import BatchTrace, BatchTracer
from transforms.core import (
    NoRuleError,
    PrimalTracer,
    Primitive,
    Trace,
    Tracer,
    new_trace,
    no_scalars,
)
from transforms.core.tree_util import tree_flatten, tree_unflatten
from transforms.forward import jvp_rule

from ._rules import RULES, TaylorRule, array_ops
from ._trace import ode_rule

__all__ = [
    "COLLAPSED",
    "CollapsedRule",
    "CollapsedTrace",
    "CollapsedTracer",
    "collapsed_jet",
    "collapsed_linear",
    "defcollapsed",
]

CollapsedRule = Callable[..., Any]
"""``rule(n, primals, terms, ans, /, **params) -> terms_out``: ``terms[i]`` the ``(n + 1,
*shape)`` stack of operand ``i`` (or ``None``), the result's stack (or ``None``, a tuple of
them for a multiple-results primitive)."""

COLLAPSED: dict[Primitive[Any], CollapsedRule] = {}


def defcollapsed(primitive: Primitive[Any], rule: CollapsedRule) -> None:
    """A cheaper collapsed rule for ``primitive`` than the one derived from its Taylor rule."""
    COLLAPSED[primitive] = rule


def collapsed_linear(rule: TaylorRule) -> CollapsedRule:
    """The collapsed rule of a primitive whose Taylor rule maps each coefficient by itself
    (a linear primitive, or a bilinear one with one constant operand): the ``n + 1`` rows are
    ``n + 1`` coefficients to that rule, mapped in one call."""

    def collapsed(
        n: int, primals: Sequence[Any], terms: Sequence[Any], ans: Any, /, **params: Any
    ) -> Any:
        return rule(n + 1, primals, terms, ans, **params)

    return collapsed


def _plain(*xs: Any) -> bool:
    return not any(isinstance(x, Tracer) for x in xs)


def _shape(x: Any) -> tuple[int, ...]:
    return x.shape if isinstance(x, (Tracer, np.ndarray, np.generic)) else np.shape(x)


def _concat(parts: list[Any]) -> Any:
    return np.concatenate(parts) if _plain(*parts) else array_ops["concatenate"](parts, 0)


def _stack(parts: list[Any], axis: int) -> Any:
    return np.stack(parts, axis) if _plain(*parts) else array_ops["stack"](parts, axis)


def _sum0(x: Any) -> Any:
    return np.sum(x, 0) if _plain(x) else array_ops["sum"](x, 0)


def _zeros_like(x: Any) -> Any:
    return np.zeros(_shape(x), dtype=x.dtype)


def _unbatch(out: Any, trace: BatchTrace, size: int) -> Any:
    """A value of the direction ``vmap`` with its direction axis first."""
    if out is None:
        return None
    if isinstance(out, BatchTracer) and out._trace is trace:
        return out.value if out.bdim == 0 else array_ops["moveaxis"](out.value, out.bdim, 0)
    return array_ops["broadcast_to"](out, (size, *_shape(out)))


def _derived(
    rule: TaylorRule,
    multiple: bool,
    n: int,
    primals: Sequence[Any],
    terms: Sequence[Any],
    ans: Any,
    params: dict[str, Any],
) -> Any:
    """The collapsed rule derived from a Taylor rule (see the module docs)."""
    dirs = [None if t is None else _stack([t[:n], _zeros_like(t[:n])], 1) for t in terms]
    with new_trace(lambda level: BatchTrace(level, n)) as trace:
        series = [None if d is None else BatchTracer(trace, d, 0) for d in dirs]
        out = rule(2, primals, series, ans, **params)
        if multiple:
            out = None if out is None else tuple(_unbatch(o, trace, n) for o in out)
        else:
            out = _unbatch(out, trace, n)
    cs = [None if t is None else t[n:] for t in terms]
    jc = None if all(c is None for c in cs) else rule(1, primals, cs, ans, **params)
    if not multiple:
        return _combine(n, out, jc)
    outs = (None,) * len(ans) if out is None else out
    jcs = (None,) * len(ans) if jc is None else jc
    return tuple(_combine(n, o, j) for o, j in zip(outs, jcs, strict=True))


def _combine(n: int, out: Any, jc: Any) -> Any:
    """The ``(n + 1)`` stack from the per-direction order-2 series ``out`` (``(n, 2, ...)``)
    and ``J c`` (``(1, ...)``)."""
    if out is None:
        if jc is None:
            return None
        return _concat([np.zeros((n, *_shape(jc)[1:]), dtype=jc.dtype), jc])
    first = out[:, 0]
    last = _sum0(out[:, 1])
    if jc is not None:
        last = last + jc[0]
    return _concat([first, last[None]])


class CollapsedTracer(PrimalTracer):
    """A primal value (one level down), its ``n`` first coefficients and their summed second."""

    __slots__ = ("terms",)

    def __init__(self, trace: CollapsedTrace, primal: Any, terms: Any) -> None:
        self._trace = trace
        self._primal = primal
        self.terms = terms


class CollapsedTrace(Trace[CollapsedTracer]):
    """One live collapsed pass over ``n`` directions."""

    __slots__ = ("n",)

    def __init__(self, level: int, n: int, name: str = "collapsed jet") -> None:
        super().__init__(level, name)
        self.n = n

    def process_primitive(
        self, primitive: Primitive[Any], args: Sequence[object], params: dict[str, Any]
    ) -> object:
        primals: list[Any] = []
        terms: list[Any] = []
        traced = False
        for a in args:
            if type(a) is CollapsedTracer and a._trace is self:
                primals.append(a._primal)
                terms.append(a.terms)
                traced = traced or a.terms is not None
            else:
                primals.append(a)
                terms.append(None)
        if self.level == 0:
            ans = primitive.impl(*primals, **params)
            if type(ans) is not np.ndarray:
                ans = no_scalars(ans)
        else:
            ans = primitive.bind(*primals, **params)
        if not (primitive.differentiable and traced):
            return ans
        fast = COLLAPSED.get(primitive)
        if fast is not None:
            out = fast(self.n, primals, terms, ans, **params)
        else:
            rule = RULES.get(primitive)
            if rule is None:
                if jvp_rule(primitive) is None:
                    raise NoRuleError(
                        primitive.name, "jet", self.first_owned(args), "transforms.taylor.deftaylor"
                    )
                rule = ode_rule(primitive)
            out = _derived(rule, primitive.multiple_results, self.n, primals, terms, ans, params)
        if primitive.multiple_results:
            outs = (None,) * len(ans) if out is None else out
            return tuple(
                a if t is None else CollapsedTracer(self, a, t)
                for a, t in zip(ans, outs, strict=True)
            )
        return ans if out is None else CollapsedTracer(self, ans, out)


def collapsed_jet(fun: Callable[[Any], Any], x: Any, directions: Any) -> tuple[Any, Any, Any]:
    """``fun(x)``, its derivatives along each of ``directions`` (axis 0: ``(n, *x.shape)``)
    and the sum over the directions of its second derivatives along them,
    ``sum_i d^2/dt^2 fun(x + t v_i)`` at ``t = 0``, in one collapsed pass.

    Returns three trees of ``fun``'s output structure: the value, the first derivatives
    (each leaf with a leading axis of size ``n``) and the summed second derivatives.
    """
    n = _shape(directions)[0]
    row = np.zeros((1, *_shape(x)), dtype=x.dtype)
    terms = _concat([directions, row])
    with new_trace(lambda level: CollapsedTrace(level, n)) as trace:
        flat, tree = tree_flatten(fun(CollapsedTracer(trace, x, terms)))
        values: list[Any] = []
        firsts: list[Any] = []
        seconds: list[Any] = []
        for o in flat:
            if type(o) is CollapsedTracer and o._trace is trace:
                p, t = o._primal, o.terms
            else:
                p, t = o, None
            if not isinstance(p, (Tracer, np.ndarray)):
                p = np.asarray(p)
            values.append(p)
            if t is None:
                firsts.append(np.zeros((n, *_shape(p)), dtype=p.dtype))
                seconds.append(np.zeros(_shape(p), dtype=p.dtype))
            else:
                firsts.append(t[:n])
                seconds.append(2 * t[n])  # the normalised coefficient is half the derivative
    return (
        tree_unflatten(tree, values),
        tree_unflatten(tree, firsts),
        tree_unflatten(tree, seconds),
    )
