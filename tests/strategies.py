"""Hypothesis strategies shared by the tests: shapes, axes, indices and float64 inputs.

Inputs are drawn by hypothesis (so failures shrink to small shapes and simple values) from
an input *domain*: a box where every op of a row is smooth, with room to spare for the
finite-difference steps the tests take. Random directions and cotangents are not drawn
element by element: they come from a NumPy generator seeded by a drawn integer, so they
are dense and never accidentally zero.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import hypothesis.extra.numpy as hnp
import numpy as np
from hypothesis import strategies as st

__all__ = [
    "DISTINCT",
    "NONZERO",
    "POSITIVE",
    "REAL",
    "SMALL",
    "UNIT",
    "Domain",
    "Shape",
    "arrays_in",
    "axes_arg",
    "axis_arg",
    "broadcast_inputs",
    "broadcast_pairs",
    "broadcast_targets",
    "concat_shapes",
    "dot_shapes",
    "matmul_shapes",
    "mutually_broadcastable",
    "reshape_targets",
    "seeds",
    "same_shapes",
    "shapes",
    "single",
    "squeezable_shapes",
    "tensordot_axes_choices",
    "tensordot_shapes",
    "unbroadcast_targets",
    "uniform_like",
]

Shape = tuple[int, ...]

MAX_DIMS = 3
MAX_SIDE = 3


# ---- shapes -------------------------------------------------------------------------------
def shapes(
    min_dims: int = 0, max_dims: int = MAX_DIMS, min_side: int = 0, max_side: int = MAX_SIDE
) -> st.SearchStrategy[Shape]:
    """Array shapes, size-0 and size-1 axes included unless ``min_side`` says otherwise."""
    return hnp.array_shapes(
        min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side
    )


def single(
    min_dims: int = 0, max_dims: int = MAX_DIMS, min_side: int = 0, max_side: int = MAX_SIDE
) -> st.SearchStrategy[tuple[Shape]]:
    """The shapes of a one-argument op: a 1-tuple."""
    return shapes(min_dims, max_dims, min_side, max_side).map(lambda s: (s,))


def mutually_broadcastable(
    n: int, min_dims: int = 0, max_dims: int = MAX_DIMS, min_side: int = 0
) -> st.SearchStrategy[tuple[Shape, ...]]:
    """``n`` shapes that broadcast together (different ranks, size-1 and size-0 axes)."""
    return hnp.mutually_broadcastable_shapes(
        num_shapes=n, min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=MAX_SIDE
    ).map(lambda r: tuple(r.input_shapes))


def broadcast_pairs(min_side: int = 0) -> st.SearchStrategy[tuple[Shape, ...]]:
    return mutually_broadcastable(2, min_side=min_side)


@st.composite
def same_shapes(
    draw: st.DrawFn, min_n: int = 1, max_n: int = 3, min_dims: int = 0, min_side: int = 0
) -> tuple[Shape, ...]:
    """Between ``min_n`` and ``max_n`` copies of one shape (for ``stack``)."""
    shape = draw(shapes(min_dims=min_dims, min_side=min_side))
    return (shape,) * draw(st.integers(min_n, max_n))


@st.composite
def concat_shapes(draw: st.DrawFn, max_n: int = 3) -> tuple[Shape, ...]:
    """1..``max_n`` shapes (ndim >= 1) that agree except along one axis.

    The axis is not returned: the op's parameter strategy finds the axes along which the
    shapes can be joined.
    """
    base = draw(shapes(min_dims=1))
    axis = draw(st.integers(0, len(base) - 1))
    sides = draw(st.lists(st.integers(0, MAX_SIDE), min_size=1, max_size=max_n))
    return tuple(base[:axis] + (n,) + base[axis + 1 :] for n in sides)


@st.composite
def broadcast_inputs(draw: st.DrawFn) -> tuple[Shape]:
    """The 1-tuple shape of an input to ``broadcast_to``: few axes, many of size 1.

    The target is a parameter, drawn for this shape by ``broadcast_targets``.
    """
    shape = draw(shapes())
    return (tuple(1 if draw(st.booleans()) else n for n in shape),)


@st.composite
def broadcast_targets(draw: st.DrawFn, shape: Shape) -> Shape:
    """A shape that ``shape`` broadcasts to: new leading axes, size-1 axes stretched."""
    lead = tuple(draw(st.lists(st.integers(0, MAX_SIDE), max_size=MAX_DIMS - len(shape))))
    body = tuple(draw(st.integers(0, MAX_SIDE)) if n == 1 else n for n in shape)
    return lead + body


@st.composite
def unbroadcast_targets(draw: st.DrawFn, shape: Shape) -> Shape:
    """A shape that broadcasts to ``shape``: trailing axes kept, some of them made size 1."""
    keep = draw(st.integers(0, len(shape)))
    return tuple(1 if draw(st.booleans()) else n for n in shape[len(shape) - keep :])


def matmul_shapes(min_side: int = 0) -> st.SearchStrategy[tuple[Shape, ...]]:
    """Operands of ``matmul``: 1-d on either side, batch dimensions that broadcast."""
    return hnp.mutually_broadcastable_shapes(
        signature=str(np.matmul.signature),
        max_dims=2,
        min_side=min_side,
        max_side=MAX_SIDE,
    ).map(lambda r: tuple(r.input_shapes))


@st.composite
def dot_shapes(draw: st.DrawFn) -> tuple[Shape, ...]:
    """Operands of ``numpy.dot``: 0-d (a product), up to 2-d (matmul), or b of 3-d."""
    a = draw(shapes(max_dims=3))
    b_ndim = draw(st.integers(0, 3))
    if not a or b_ndim == 0:
        return a, draw(shapes(max_dims=b_ndim, min_dims=b_ndim))
    k = a[-1]
    if b_ndim == 1:
        return a, (k,)
    b = draw(shapes(min_dims=b_ndim, max_dims=b_ndim))
    return a, b[:-2] + (k, b[-1])


@st.composite
def squeezable_shapes(draw: st.DrawFn) -> tuple[Shape]:
    """A shape with some size-1 axes to squeeze."""
    shape = draw(shapes())
    ones = draw(st.lists(st.integers(0, len(shape)), max_size=2))
    out = list(shape)
    for i in sorted(ones, reverse=True):
        out.insert(i, 1)
    return (tuple(out),)


@st.composite
def tensordot_shapes(draw: st.DrawFn) -> tuple[Shape, ...]:
    """Two shapes that share some axis sizes, so that ``tensordot`` has axes to contract."""
    contracted = draw(shapes(max_dims=2))
    a_free = draw(shapes(max_dims=3 - len(contracted)))
    b_free = draw(shapes(max_dims=3 - len(contracted)))
    a = list(a_free + contracted)
    b = list(contracted + b_free)
    return tuple(draw(st.permutations(a))), tuple(draw(st.permutations(b)))


# ---- parameters that depend on a shape ------------------------------------------------------
def axis_arg(ndim: int) -> st.SearchStrategy[int]:
    """One valid axis, negative ones included (``ndim >= 1``)."""
    return st.integers(-ndim, ndim - 1)


@st.composite
def axes_arg(draw: st.DrawFn, ndim: int, allow_none: bool = True) -> int | tuple[int, ...] | None:
    """A NumPy ``axis`` argument: None, an int, or a tuple of distinct axes (some negative)."""
    choices = ["tuple"] + (["none"] if allow_none else []) + (["int"] if ndim else [])
    kind = draw(st.sampled_from(choices))
    if kind == "none":
        return None
    if kind == "int":
        return draw(axis_arg(ndim))
    axes = draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim)) if ndim else []
    return tuple(a - ndim if draw(st.booleans()) else a for a in axes)


def _factorizations(size: int, ndim: int) -> list[Shape]:
    if ndim == 0:
        return [()] if size == 1 else []
    sides = range(MAX_SIDE + 1) if size == 0 else [d for d in range(1, size + 1) if size % d == 0]
    return [s for s in itertools.product(sides, repeat=ndim) if math.prod(s) == size]


@st.composite
def reshape_targets(draw: st.DrawFn, shape: Shape) -> tuple[int, ...]:
    """A new shape of the same size, sometimes with one ``-1`` to infer."""
    size = math.prod(shape)
    candidates = [s for n in range(MAX_DIMS + 1) for s in _factorizations(size, n)]
    target = draw(st.sampled_from(candidates))
    if size > 0 and target and draw(st.booleans()):
        i = draw(st.integers(0, len(target) - 1))
        target = target[:i] + (-1,) + target[i + 1 :]
    return target


def tensordot_axes_choices(a: Shape, b: Shape) -> list[int | tuple[tuple[int, ...], ...]]:
    """Every valid ``axes`` argument of ``tensordot(a, b, axes)`` for these shapes."""
    choices: list[int | tuple[tuple[int, ...], ...]] = [
        k for k in range(min(len(a), len(b)) + 1) if a[len(a) - k :] == b[:k]
    ]
    for n in range(1, min(len(a), len(b)) + 1):
        for a_axes in itertools.permutations(range(len(a)), n):
            for b_axes in itertools.permutations(range(len(b)), n):
                if all(a[i] == b[j] for i, j in zip(a_axes, b_axes, strict=True)):
                    choices.append((a_axes, tuple(j - len(b) for j in b_axes)))
    return choices


# ---- input domains --------------------------------------------------------------------------
@dataclass(frozen=True)
class Domain:
    """Where an op's inputs are drawn.

    Attributes:
        name: shown in test ids and failures.
        lo, hi: the bounds of ``|x|`` when ``signed``, else of ``x``.
        signed: ``|x|`` in ``[lo, hi]`` with either sign (away from 0).
        distinct: every element of every argument is distinct from every other by at least
            ``GAP`` and at least ``0.25`` away from 0: inputs away from the kinks of ``abs``,
            ``sign``, ``max``, ``maximum``... for every broadcast pairing of the arguments.
    """

    name: str
    lo: float
    hi: float
    signed: bool = False
    distinct: bool = False

    def elements(self) -> st.SearchStrategy[float]:
        floats = st.floats(
            self.lo, self.hi, allow_nan=False, allow_infinity=False, allow_subnormal=False
        )
        if not self.signed:
            return floats
        return st.tuples(st.booleans(), floats).map(lambda p: -p[1] if p[0] else p[1])


REAL = Domain("real", -2.0, 2.0)
SMALL = Domain("small", -1.2, 1.2)  # tan: well inside (-pi/2, pi/2)
UNIT = Domain("unit", -1.25, 1.25)  # prod: long products stay O(1)
POSITIVE = Domain("positive", 0.5, 2.0)  # log, sqrt, the base of a traced power
NONZERO = Domain("nonzero", 0.5, 2.0, signed=True)  # denominators
DISTINCT = Domain("distinct", 0.25, 3.0, distinct=True)  # kinks: abs, sign, max, maximum

GAP = 0.03
_STEP = 0.05


@st.composite
def _distinct_values(draw: st.DrawFn, n: int) -> np.ndarray:
    """``n`` values, pairwise ``GAP`` apart and ``>= 0.25`` away from 0, in random order."""
    if n == 0:
        return np.zeros(0)
    ranks = np.array(draw(st.permutations(range(n))), dtype=float)
    jitter = np.array(draw(st.lists(st.floats(0.0, _STEP - GAP), min_size=n, max_size=n)))
    signs = np.where(draw(st.lists(st.booleans(), min_size=n, max_size=n)), -1.0, 1.0)
    return signs * (0.25 + _STEP * ranks + jitter)


@st.composite
def arrays_in(
    draw: st.DrawFn, domains: Sequence[Domain], arg_shapes: Sequence[Shape]
) -> tuple[np.ndarray, ...]:
    """float64 arrays of ``arg_shapes``, one per argument, each from its domain.

    If any domain is ``distinct``, all arguments are drawn jointly distinct.
    """
    if any(d.distinct for d in domains):
        sizes = [math.prod(s) for s in arg_shapes]
        flat = draw(_distinct_values(sum(sizes)))
        bounds = np.cumsum([0, *sizes])
        return tuple(flat[bounds[i] : bounds[i + 1]].reshape(s) for i, s in enumerate(arg_shapes))
    return tuple(
        draw(hnp.arrays(np.float64, s, elements=d.elements()))
        for d, s in zip(domains, arg_shapes, strict=True)
    )


# ---- random directions and cotangents --------------------------------------------------------
def seeds() -> st.SearchStrategy[int]:
    """The seed of a NumPy generator for dense random directions (drawn, so replayable)."""
    return st.integers(0, 2**32 - 1)


def uniform_like(rng: np.random.Generator, x: Any) -> np.ndarray:
    """Uniform in [-1, 1] with ``x``'s shape: bounded, so finite-difference steps stay small."""
    return rng.uniform(-1.0, 1.0, np.shape(x))
