"""The structural interpreter: a derivative's value and which of its elements are live.

A cotangent (or tangent) element is *live* when it depends on the seed: on the cotangent the
user gave, the basis vector of a Jacobian's row, ``grad``'s unit seed. An element that is not
live is a *structural* zero: zero whatever the seed, because ``where`` chose the other
branch for it, an index never reached it, or the seed itself was zero there. A structural
zero times a partial derivative is zero even where the partial is infinite or NaN (the
untaken branch of a ``where`` that overflows; ``sqrt``'s derivative at 0 on the off-diagonal
of a separable Hessian): that product is no term of the derivative at all. A *computed* zero
(``2 * sqrt(x)`` at 0, a live element whose value happens to be 0) keeps IEEE arithmetic:
``0 * inf`` is NaN there, as in every peer, because the exact derivative at that point is
not the zero NaN-safe arithmetic would claim (``d/dx sqrt(x)**2 = 1`` at 0).

Each tracer carries its ``value`` (one level down) and ``live`` (a bool ndarray of its
shape), with the invariant that ``value`` is exactly 0 where ``live`` is false. The rules
are families of primitives, by what a derivative's rule does with a cotangent (it is linear
in it): copies and sums (a primitive applied to the live masks says which elements are
live), sums of two derivatives (either live), products with a partial derivative (live where
the derivative is; where a partial is not finite only live elements take it). A primitive of
no family raises ``Untaggable``: the caller keeps the derivative it had.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import transforms.numpy as tnp
from transforms.core import Primitive, Trace, Tracer, concrete

__all__ = ["BatchedOperand", "StructuralTrace", "StructuralTracer", "Untaggable"]


class Untaggable(Exception):
    """A derivative's rule applied a primitive the structural interpreter has no rule for."""


class BatchedOperand(Untaggable):
    """A derivative's rule met a value batched by an enclosing ``vmap``: its live elements
    differ from example to example, which one mask cannot say (``vmap`` follows them one
    example at a time instead: ``nansafe.defer``)."""


class StructuralTracer(Tracer):
    """A derivative (one level down) and the mask of its live elements."""

    __slots__ = ("live", "value")

    def __init__(self, trace: StructuralTrace, value: Any, live: np.ndarray[Any, Any]) -> None:
        self._trace = trace
        self.value = value
        self.live = live

    @property
    def primal(self) -> Any:
        return self.value


class StructuralTrace(Trace[StructuralTracer]):
    """One rerun of a derivative with structural zeros (see the module's docstring)."""

    __slots__ = ()

    def __init__(self, level: int) -> None:
        super().__init__(level, "nan-safe derivative")

    def tag(self, seed: Any) -> Any:
        """A seed (a plain array: a traced one's zeros are values, not structure) as a tracer:
        live where it is not zero; ``None``, no seed, stays ``None``."""
        if seed is None:
            return None
        return StructuralTracer(self, seed, np.asarray(seed) != 0)

    def untag(self, value: Any) -> Any:
        """A result's value (a derivative that no seed reached is itself, or ``None``)."""
        if isinstance(value, StructuralTracer) and value._trace is self:
            return value.value
        return value

    def process_primitive(
        self, primitive: Primitive[Any], args: Sequence[object], params: dict[str, Any]
    ) -> object:
        rule = _RULES.get(primitive.name) if primitive.module.startswith("transforms.") else None
        if rule is None or primitive.multiple_results:
            raise Untaggable(primitive.name)
        tagged = [type(a) is StructuralTracer and a._trace is self for a in args]
        for a, t in zip(args, tagged, strict=True):
            if not t and isinstance(a, Tracer) and np.shape(concrete(a)) != a.shape:
                raise BatchedOperand(primitive.name)
        values = [a.value if t else a for a, t in zip(args, tagged, strict=True)]  # type: ignore[attr-defined]
        out, live = rule(primitive, args, values, tagged, params)
        return StructuralTracer(self, out, live)  # (all dead, too: products with it are 0)


Rule = Callable[
    [Primitive[Any], Sequence[Any], list[Any], list[bool], dict[str, Any]],
    tuple[Any, np.ndarray[Any, Any]],
]


def _mask(arg: Any, tagged: bool) -> Any:
    """An operand's live elements as 1.0/0.0 (a constant float or complex array: its non-zero
    elements, which no seed reaches but which are no structural zero either); an integer or
    boolean operand (a condition, an index) as it is."""
    if tagged:
        return arg.live.astype(np.float64)
    value = concrete(arg)
    kind = np.result_type(value).kind
    if kind in "fc":
        return (np.asarray(value) != 0).astype(np.float64)
    return value


def _copies(
    primitive: Primitive[Any],
    args: Sequence[Any],
    values: list[Any],
    tagged: list[bool],
    params: dict[str, Any],
) -> tuple[Any, np.ndarray[Any, Any]]:
    """Copies, selections and sums of elements (reshape, getitem, where, concatenate, sum,
    cumsum, the scatters): the primitive applied to the masks (non-negative, so nothing
    cancels) is non-zero exactly where a live element reaches."""
    out = primitive.bind(*values, **params)
    masks = [_mask(a, t) for a, t in zip(args, tagged, strict=True)]
    live = np.asarray(primitive.impl(*masks, **params)) != 0
    return out, live


def _sums(
    primitive: Primitive[Any],
    args: Sequence[Any],
    values: list[Any],
    tagged: list[bool],
    params: dict[str, Any],
) -> tuple[Any, np.ndarray[Any, Any]]:
    """The sum or difference of two derivatives: live where either is."""
    out = primitive.bind(*values, **params)
    live = np.zeros(np.shape(concrete(out)), dtype=bool)
    for a, t in zip(args, tagged, strict=True):
        live = live | (a.live if t else np.asarray(concrete(a)) != 0)
    return out, live


def _unary(
    primitive: Primitive[Any],
    args: Sequence[Any],
    values: list[Any],
    tagged: list[bool],
    params: dict[str, Any],
) -> tuple[Any, np.ndarray[Any, Any]]:
    """An elementwise linear map of one derivative (negation, conjugation, real and imaginary
    parts, a cast): live where it is."""
    out = primitive.bind(*values, **params)
    return out, np.broadcast_to(args[0].live, np.shape(concrete(out)))


def _products(
    primitive: Primitive[Any],
    args: Sequence[Any],
    values: list[Any],
    tagged: list[bool],
    params: dict[str, Any],
) -> tuple[Any, np.ndarray[Any, Any]]:
    """A derivative times (or divided by, or contracted with) a partial derivative: live where
    a live element takes part. Where the partial is not finite, only the live elements take
    it; a structural zero's product with it is no term at all."""
    if sum(tagged) != 1 or (primitive.name == "divide" and not tagged[0]):
        raise Untaggable(primitive.name)  # a product of two derivatives, or by one: not linear
    k = tagged.index(True)
    positions = range(len(values))
    partials = {i: concrete(v) for i, v in enumerate(values) if i != k}
    finite = {i: np.isfinite(p) for i, p in partials.items()}
    seed = args[k].live.astype(np.float64)
    masks = [seed if i == k else np.ones(np.shape(partials[i])) for i in positions]
    live = np.asarray(primitive.impl(*masks, **params)) != 0
    if all(f.all() for f in finite.values()):
        out = primitive.bind(*values, **params)
    else:
        safe = [v if i == k else tnp.where(finite[i], v, 0) for i, v in enumerate(values)]
        out_safe = primitive.bind(*safe, **params)
        out_all = primitive.bind(*values, **params)
        meets = [seed if i == k else (~finite[i]).astype(np.float64) for i in positions]
        bad = np.asarray(primitive.impl(*meets, **params)) != 0  # a live one meets a non-finite
        out = tnp.where(bad, out_all, out_safe)
    return tnp.where(live, out, 0), live


def _zeros(
    primitive: Primitive[Any],
    args: Sequence[Any],
    values: list[Any],
    tagged: list[bool],
    params: dict[str, Any],
) -> tuple[Any, np.ndarray[Any, Any]]:
    """A result that no seed reaches (``zeros_like`` of a derivative)."""
    out = primitive.bind(*values, **params)
    return out, np.zeros(np.shape(concrete(out)), dtype=bool)


_RULES: dict[str, Rule] = {
    **dict.fromkeys(
        (
            "broadcast_to",
            "concatenate",
            "cumsum",
            "gather",
            "getitem",
            "index_set",
            "reshape",
            "scatter_add",
            "stack",
            "sum",
            "transpose",
            "untake",
            "where",
        ),
        _copies,
    ),
    **dict.fromkeys(("add", "subtract"), _sums),
    **dict.fromkeys(("astype", "conjugate", "imag", "negative", "real", "stop_gradient"), _unary),
    **dict.fromkeys(("divide", "matmul", "multiply"), _products),
    "zeros_like": _zeros,
}
