"""Collapsed Taylor mode: ``n`` second-order jets in one pass, their second terms summed.

The Laplacian ``sum_i d^2/dt^2 f(x + t e_i)`` is a sum of ``n`` order-2 jets. Run one by
one (or batched with ``vmap``), every jet carries its own second coefficient ``x2_i``
through every primitive. But a Taylor rule's second coefficient is affine in the operand's
second coefficient: ``y2_i = J x2_i + Q(x1_i, x1_i)`` (``J`` the Jacobian, ``Q`` half the
second derivative at the primal). Its sum over the directions is then
``c_y = J c_x + sum_i Q(x1_i, x1_i)`` with ``c = sum_i x2_i``: one second coefficient per
value instead of ``n``, *collapsed* (Dangel et al., NeurIPS 2024; the forward Laplacian of
Li et al., 2023), exactly.

A ``CollapsedTracer`` holds its primal, ``firsts``: one array ``(n, *shape)`` stacking the
first coefficients ``x1_i`` (one per direction), and ``second``: the summed normalised
second coefficient ``c`` (``None``: zero). A primitive maps them by

- its collapsed rule (``defcollapsed``), when the family gave one: a linear primitive maps
  the stack and ``c`` by its Taylor rule (``Q = 0``), a bilinear one adds the cross term
  ``sum_i p(a1_i, b1_i)`` (``transforms/numpy/_taylor.py``), an elementwise one multiplies
  by ``f'`` and adds ``f''/2 sum_i x1_i**2`` (the family kit);
- else the rule derived from its Taylor rule, for every primitive that has one (the
  coverage test demands it): the order-2 rule ``vmap``-ed over the directions with a zero
  second coefficient gives ``x1`` and ``Q`` (summed), and the order-1 rule on ``c`` gives
  ``J c``.

The linear and elementwise rules leave their results' first coefficients ``Deferred``:
computed when a later rule first reads them, exactly as they would have been at once, and
never if nothing does. ``laplacian`` reads only the output's summed second coefficient, so
the first coefficients that feed nothing but the output's (a network's last layers: an
``(n, ...)`` product and its map to the output) are never computed.

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
    "Deferred",
    "add_collapsed",
    "collapsed_elementwise",
    "collapsed_jet",
    "collapsed_linear",
    "defcollapsed",
    "deferred_sum",
    "forced",
]

CollapsedRule = Callable[..., Any]
"""``rule(n, primals, firsts, seconds, ans, /, **params) -> (firsts_out, second_out)``:
``firsts[i]`` the ``(n, *shape)`` stack of operand ``i``'s first coefficients, or a
``Deferred`` one (``forced`` gives the stack), and ``seconds[i]`` its summed second one
(each ``None`` for zero); the result's pair (a tuple of pairs for a multiple-results
primitive, ``None`` for a zero pair), whose stack may be ``Deferred``."""


class Deferred:
    """A stack of first coefficients computed when first read (``forced``), once.

    ``make`` computes it from operands fixed when the rule ran (primals, stacks,
    parameters), so whenever it runs it gives the very values the rule would have given at
    once (``None`` for zero). The tracers among those operands belong to the transforms
    around the pass, alive for all of it: ``collapsed_jet`` forces what it returns inside
    them, and a stack nothing reads is dropped uncomputed."""

    __slots__ = ("_make", "_value")

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make: Callable[[], Any] | None = make
        self._value: Any = None

    def force(self) -> Any:
        make = self._make
        if make is not None:
            self._value = make()
            self._make = None  # (releases the operands it held)
        return self._value


def forced(first: Any) -> Any:
    """A stack of first coefficients, computed now if it was ``Deferred`` (``None``: zero)."""
    return first.force() if type(first) is Deferred else first


def deferred_sum(a: Any, b: Any) -> Any:
    """The sum of two stacks (``None``: zero), deferred if either is."""
    if a is None or b is None:
        return b if a is None else a
    if type(a) is Deferred or type(b) is Deferred:
        return Deferred(lambda: _add(forced(a), forced(b)))
    return a + b


COLLAPSED: dict[Primitive[Any], CollapsedRule] = {}


def defcollapsed(primitive: Primitive[Any], rule: CollapsedRule) -> None:
    """A cheaper collapsed rule for ``primitive`` than the one derived from its Taylor rule."""
    COLLAPSED[primitive] = rule


def _plain(*xs: Any) -> bool:
    return not any(isinstance(x, Tracer) for x in xs)


def _shape(x: Any) -> tuple[int, ...]:
    return x.shape if isinstance(x, (Tracer, np.ndarray, np.generic)) else np.shape(x)


def _stack(parts: list[Any], axis: int) -> Any:
    return np.stack(parts, axis) if _plain(*parts) else array_ops["stack"](parts, axis)


def _sum0(x: Any) -> Any:
    return np.sum(x, 0) if _plain(x) else array_ops["sum"](x, 0)


def _squares(firsts: Any) -> Any:
    """``sum_i x1_i * x1_i`` (no conjugate: the second derivative along a real direction).

    One NumPy pass (``einsum``) on a plain stack, and on a stack batched by a ``vmap`` of
    plain values (``vmap(laplacian(f))``): the ``BatchTracer`` that ``vmap``'s ``multiply``
    and ``sum`` rules would make, without the product's temporary. Other tracers take the
    differentiable operations."""
    if _plain(firsts):
        return np.einsum("i...,i...->...", firsts, firsts)
    if type(firsts) is BatchTracer and type(firsts.value) is np.ndarray:
        value, bdim = firsts.value, firsts.bdim
        axis = 1 if bdim == 0 else 0  # the directions' axis in the batched value
        moved = np.moveaxis(value, axis, 0)  # (a view; the other axes keep their order)
        total = np.einsum("i...,i...->...", moved, moved)
        trace = firsts._trace
        assert isinstance(trace, BatchTrace)
        return BatchTracer(trace, total, bdim - (bdim > axis))
    return _sum0(firsts * firsts)


def _add(a: Any, b: Any) -> Any:
    return b if a is None else a if b is None else a + b


def _pair(firsts: Any, second: Any) -> Any:
    return None if firsts is None and second is None else (firsts, second)


def _multiple(ans: Any) -> bool:
    """Whether ``ans`` is a multiple-results primitive's tuple of values."""
    return isinstance(ans, (tuple, list))


def _row(
    rule: TaylorRule, primals: Sequence[Any], seconds: Sequence[Any], ans: Any, params: Any
) -> Any:
    """``J c``: the order-1 Taylor rule on the summed second coefficients (``None``: zero;
    a tuple, one per result, for a multiple-results primitive)."""
    if all(c is None for c in seconds):
        return None
    out = rule(1, primals, [None if c is None else c[None] for c in seconds], ans, **params)
    if out is None:
        return None
    if _multiple(ans):
        return tuple(None if o is None else o[0] for o in out)
    return out[0]


def _pairs(ans: Any, firsts: Any, second: Any) -> Any:
    """The result's pair, or a multiple-results primitive's tuple of pairs."""
    if not _multiple(ans):
        return _pair(firsts, second)
    fs = (None,) * len(ans) if firsts is None else firsts
    cs = (None,) * len(ans) if second is None else second
    pairs = tuple(_pair(f, c) for f, c in zip(fs, cs, strict=True))
    return None if all(p is None for p in pairs) else pairs


def collapsed_linear(rule: TaylorRule) -> CollapsedRule:
    """The collapsed rule of a primitive whose Taylor rule maps each coefficient by itself
    (a linear primitive, or a bilinear one with one constant operand): the ``n`` first
    coefficients are ``n`` coefficients to that rule, and ``c`` one more."""

    def collapsed(
        n: int,
        primals: Sequence[Any],
        firsts: Sequence[Any],
        seconds: Sequence[Any],
        ans: Any,
        /,
        **params: Any,
    ) -> Any:
        first = None
        if any(f is not None for f in firsts):
            if _multiple(ans):  # (a stack per result: computed now)
                first = _linear_firsts(rule, n, primals, firsts, ans, params)
            else:
                first = Deferred(lambda: _linear_firsts(rule, n, primals, firsts, ans, params))
        return _pairs(ans, first, _row(rule, primals, seconds, ans, params))

    return collapsed


def _linear_firsts(
    rule: TaylorRule,
    n: int,
    primals: Sequence[Any],
    firsts: Sequence[Any],
    ans: Any,
    params: dict[str, Any],
) -> Any:
    """A linear primitive's first coefficients: its Taylor rule on the operands' stacks."""
    stacks = [forced(f) for f in firsts]
    if all(f is None for f in stacks):
        return None
    return rule(n, primals, stacks, ans, **params)


def add_collapsed(rule: CollapsedRule, sign: Callable[[int], int]) -> CollapsedRule:
    """The collapsed rule of ``add`` or ``subtract`` (``sign(i)``: operand ``i``'s sign):
    one traced operand of the result's shape and dtype passes through as it is (negated if
    subtracted), not added to zeros; otherwise ``rule``."""

    def collapsed(
        n: int,
        primals: Sequence[Any],
        firsts: Sequence[Any],
        seconds: Sequence[Any],
        ans: Any,
        /,
        **params: Any,
    ) -> Any:
        traced = [i for i in range(len(primals)) if firsts[i] is not None or seconds[i] is not None]
        if len(traced) == 1:
            (i,) = traced
            x = primals[i]
            if _shape(x) == _shape(ans) and x.dtype == ans.dtype:
                if sign(i) > 0:
                    return (firsts[i], seconds[i])
                return _pair(
                    None if firsts[i] is None else _negated(firsts[i]),
                    None if seconds[i] is None else -seconds[i],
                )
        return rule(n, primals, firsts, seconds, ans, **params)

    return collapsed


def _negated(first: Any) -> Any:
    """``-first``, deferred if ``first`` is."""
    if type(first) is not Deferred:
        return -first

    def make() -> Any:
        stack = first.force()
        return None if stack is None else -stack

    return Deferred(make)


def _taylor_rule(primitive: Primitive[Any]) -> TaylorRule | None:
    """The primitive's Taylor rule, or the one derived from its JVP rule, or ``None``."""
    rule = RULES.get(primitive)
    if rule is None and jvp_rule(primitive) is not None:
        rule = ode_rule(primitive)
    return rule


def collapsed_elementwise(primitive: Primitive[Any]) -> CollapsedRule:
    """The collapsed rule of an elementwise primitive. With one traced operand of the
    result's shape, ``f'`` and ``f''/2`` come from one order-2 jet of the primitive along
    ``x + t`` (on the primal's shape, not per direction), and then ``y1_i = f' x1_i`` and
    ``c_y = f' c_x + f''/2 sum_i x1_i**2`` (``y1`` deferred: the squares need only ``x1``);
    otherwise (operands broadcast, or several traced) the rule derived from the Taylor
    rule."""

    def rule(
        n: int,
        primals: Sequence[Any],
        firsts: Sequence[Any],
        seconds: Sequence[Any],
        ans: Any,
        /,
        **params: Any,
    ) -> Any:
        taylor = _taylor_rule(primitive)
        assert taylor is not None  # (the trace asks only for a differentiable primitive's)
        traced = [i for i in range(len(primals)) if firsts[i] is not None or seconds[i] is not None]
        shape = _shape(ans)
        i = traced[0]
        first = forced(firsts[i]) if len(traced) == 1 else None
        if first is None or _shape(primals[i]) != shape:
            return _derived(taylor, False, n, primals, firsts, seconds, ans, params)
        c = seconds[i]
        unit = np.zeros((2, *shape), dtype=first.dtype)
        unit[0] = 1
        series: list[Any] = [None] * len(primals)
        series[i] = unit
        coeffs = taylor(2, primals, series, ans, **params)
        if coeffs is None:
            return None
        f1, f2 = coeffs[0], coeffs[1]
        second = f2 * _squares(first)
        return (Deferred(lambda: first * f1), second if c is None else c * f1 + second)

    return rule


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
    firsts: Sequence[Any],
    seconds: Sequence[Any],
    ans: Any,
    params: dict[str, Any],
) -> Any:
    """The collapsed rule derived from a Taylor rule (see the module docs)."""
    firsts = [forced(f) for f in firsts]
    dirs = [None if f is None else _stack([f, np.zeros(_shape(f), f.dtype)], 1) for f in firsts]
    out: Any = None
    if any(d is not None for d in dirs):
        with new_trace(lambda level: BatchTrace(level, n)) as trace:
            series = [None if d is None else BatchTracer(trace, d, 0) for d in dirs]
            out = rule(2, primals, series, ans, **params)
            if multiple:
                out = None if out is None else tuple(_unbatch(o, trace, n) for o in out)
            else:
                out = _unbatch(out, trace, n)
    jc = _row(rule, primals, seconds, ans, params)
    if not multiple:
        return _combine(out, jc)
    outs = (None,) * len(ans) if out is None else out
    jcs = (None,) * len(ans) if jc is None else jc
    pairs = tuple(_combine(o, j) for o, j in zip(outs, jcs, strict=True))
    return None if all(p is None for p in pairs) else pairs


def _combine(out: Any, jc: Any) -> Any:
    """The pair from the per-direction order-2 series ``out`` (``(n, 2, ...)``) and ``J c``."""
    if out is None:
        return _pair(None, jc)
    return (out[:, 0], _add(_sum0(out[:, 1]), jc))


class CollapsedTracer(PrimalTracer):
    """A primal value (one level down), its ``n`` first coefficients and their summed second."""

    __slots__ = ("firsts", "second")

    def __init__(self, trace: CollapsedTrace, primal: Any, firsts: Any, second: Any) -> None:
        self._trace = trace
        self._primal = primal
        self.firsts = firsts
        self.second = second


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
        firsts: list[Any] = []
        seconds: list[Any] = []
        for a in args:
            if type(a) is CollapsedTracer and a._trace is self:
                primals.append(a._primal)
                firsts.append(a.firsts)
                seconds.append(a.second)
            else:
                primals.append(a)
                firsts.append(None)
                seconds.append(None)
        if self.level == 0:
            ans = primitive.impl(*primals, **params)
            if type(ans) is not np.ndarray:
                ans = no_scalars(ans)
        else:
            ans = primitive.bind(*primals, **params)
        traced = any(f is not None for f in firsts) or any(c is not None for c in seconds)
        if not (primitive.differentiable and traced):
            return ans
        fast = COLLAPSED.get(primitive)
        if fast is not None:
            out = fast(self.n, primals, firsts, seconds, ans, **params)
        else:
            rule = _taylor_rule(primitive)
            if rule is None:
                raise NoRuleError(
                    primitive.name, "jet", self.first_owned(args), "transforms.taylor.deftaylor"
                )
            multiple = primitive.multiple_results
            out = _derived(rule, multiple, self.n, primals, firsts, seconds, ans, params)
        if primitive.multiple_results:
            outs = (None,) * len(ans) if out is None else out
            return tuple(
                a if o is None else CollapsedTracer(self, a, *o)
                for a, o in zip(ans, outs, strict=True)
            )
        return ans if out is None else CollapsedTracer(self, ans, *out)


def collapsed_jet(
    fun: Callable[[Any], Any], x: Any, directions: Any, *, firsts: bool = True
) -> tuple[Any, Any, Any]:
    """``fun(x)``, its derivatives along each of ``directions`` (axis 0: ``(n, *x.shape)``)
    and the sum over the directions of its second derivatives along them,
    ``sum_i d^2/dt^2 fun(x + t v_i)`` at ``t = 0``, in one collapsed pass.

    Returns three trees of ``fun``'s output structure: the value, the first derivatives
    (each leaf with a leading axis of size ``n``) and the summed second derivatives.
    ``firsts=False`` leaves the first derivatives out (``None`` in their place), and with
    them every first coefficient that only they need: never computed (``Deferred``).
    """
    n = _shape(directions)[0]
    with new_trace(lambda level: CollapsedTrace(level, n)) as trace:
        flat, tree = tree_flatten(fun(CollapsedTracer(trace, x, directions, None)))
        values: list[Any] = []
        stacks: list[Any] = []
        seconds: list[Any] = []
        for o in flat:
            if type(o) is CollapsedTracer and o._trace is trace:
                p, f, c = o._primal, o.firsts, o.second
            else:
                p, f, c = o, None, None
            if not isinstance(p, (Tracer, np.ndarray)):
                p = np.asarray(p)
            values.append(p)
            if firsts:
                f = forced(f)
                stacks.append(np.zeros((n, *_shape(p)), dtype=p.dtype) if f is None else f)
            # the normalised coefficient is half the derivative
            c = np.zeros(_shape(p), dtype=p.dtype) if c is None else 2 * c
            seconds.append(c if isinstance(c, (Tracer, np.ndarray)) else np.asarray(c))
    return (
        tree_unflatten(tree, values),
        tree_unflatten(tree, stacks) if firsts else None,
        tree_unflatten(tree, seconds),
    )
