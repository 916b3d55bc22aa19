"""Random programs over ``transforms.numpy``: a hypothesis strategy, table-driven.

A program is a list of nodes over 1-3 inputs of mutually broadcastable shapes; every node
applies one function of the table to earlier nodes, so inputs are reused and sub-expressions
shared (the node graph is a DAG), and the output gathers every node that nothing else used.
It is an ordinary Python function: ``program(*xs)`` evaluates it (on NumPy arrays, where
``transforms.numpy`` falls through to NumPy, or on tracers), ``program.vectorized(*xs)`` is
the same function with its Python branches replaced by ``tnp.where`` (what ``vmap`` needs),
``program.structured(*xs)`` with them written as ``transforms.lax.cond``.

The table (``ENTRIES``) has three kinds of rows:

- **native** entries (``Native``): a function applied to earlier nodes *as they are*, the
  operands chosen among the nodes whose shapes fit (``accepts``), with parameters drawn for
  those shapes: elementwise functions, broadcasting binary operators between nodes of
  different shapes, reductions with ``axis``/``keepdims``, indexing (basic, fancy with
  repeated indices, boolean masks), products, shape functions, functional index updates;
- **every row of ``tests/op_specs.py``** (``FromRow``), automatically: the row's own shape,
  parameter and domain strategies are drawn, and earlier nodes are brought to the drawn
  shapes by a differentiable adapter (broadcast, reshape, or a fancy-index tiling of the
  flattened node). A function added to ``transforms.numpy`` with its op-spec row is
  therefore in the random programs without touching this file;
- **branches** (``BRANCH``): ``if <reduction of a node> > c: f(u) else: g(v)``, a Python
  branch on a value, with ``c`` chosen at generation time on one side of the value.

Domains. Each operand goes through a map into its function's input domain (the ``Domain``
of the op-spec row, ``tests/strategies.py``): ``lo + (hi - lo) * s(v)`` with ``s`` a squash
into [0, 1] drawn among ``tanh``, logistic (``exp``), algebraic (``sqrt``), ``sin`` and
rational ``v^2 / (1 + v^2)`` forms (a fixed random sign for signed domains such as
denominators), unless the operand already lies inside the box (row entries) or the domain is
the whole line (native entries on ``REAL``). Magnitudes are kept O(1): a node whose values
exceed ``LIMIT`` is rescaled by a constant. So ``log``/``sqrt`` see positive inputs, ``tan``
stays inside (-pi/2, pi/2), and ``exp`` never overflows, by construction.

Kinks (``abs`` at 0, ties of ``max``, ``maximum``, the jumps of ``sign``/``floor`` and of
branches) are kept away from by construction for branches (the threshold is placed away from
the value) and by filtering otherwise: generic inputs never tie by accident, and the tests
compare two finite-difference step sizes and discard the rare point where they disagree
(a kink or jump inside the stencil). Exact zeros are never drawn, only made (``x - x``,
``maximum(x, 0)``, ``tril``...), so an op-spec row, which may rely on generic inputs (a norm
is differentiable away from the zero vector only), never receives an operand containing one.
Generation itself runs under ``np.errstate(all="raise")`` and drops any candidate node that
would produce a non-finite value.

Everything is drawn by hypothesis (structure, choices) or from a NumPy generator seeded by a
drawn integer (input values), so every program replays and shrinks; ``repr(program)`` is a
readable listing of the nodes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import hypothesis.extra.numpy as hnp
import numpy as np
from hypothesis import strategies as st
from op_specs import OP_SPECS, OpSpec
from strategies import REAL, Domain, Shape, axes_arg, seeds

import transforms as T
import transforms.numpy as tnp
from transforms import lax
from transforms.core import Tracer

__all__ = [
    "BRANCH",
    "ENTRIES",
    "LIMIT",
    "NATIVE",
    "ROWS",
    "Entry",
    "FromRow",
    "Native",
    "Program",
    "programs",
]

Params = dict[str, Any]

LIMIT = 3.0  # nodes are rescaled to |v| <= LIMIT
MAX_SIZE = 64  # elements of any node
MAX_NDIM = 4
MAX_INPUT_SIZE = 18  # elements of all inputs together (the Jacobians' width)
BOX_MARGIN = 0.05  # an operand used without a map stays this far inside its domain box


# ---- the table -----------------------------------------------------------------------------
def _no_params(shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    return st.just({})


def _any(shapes: tuple[Shape, ...]) -> bool:
    return True


def _broadcastable(shapes: tuple[Shape, ...]) -> bool:
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        return False
    return True


def _same(shapes: tuple[Shape, ...]) -> bool:
    return all(s == shapes[0] for s in shapes)


def _ndim_at_least(k: int) -> Callable[[tuple[Shape, ...]], bool]:
    return lambda shapes: all(len(s) >= k for s in shapes)


def _first_not_0d(shapes: tuple[Shape, ...]) -> bool:
    return len(shapes[0]) >= 1


def _evaluates(fun: Callable[..., Any]) -> Callable[[tuple[Shape, ...]], bool]:
    def accepts(shapes: tuple[Shape, ...]) -> bool:
        try:
            fun(*(np.ones(s) for s in shapes))
        except (ValueError, IndexError):
            return False
        return True

    return accepts


@dataclass(frozen=True)
class Native:
    """A function applied to earlier nodes as they are (see the module docstring)."""

    name: str
    arity: int
    fun: Callable[..., Any]
    domains: tuple[Domain, ...]
    params: Callable[[tuple[Shape, ...]], st.SearchStrategy[Params]] = _no_params
    accepts: Callable[[tuple[Shape, ...]], bool] = _broadcastable
    covers: tuple[str, ...] = ()
    elementwise: bool = False  # one operand, same shape out: may be an arm of a branch

    def __repr__(self) -> str:
        return f"Native({self.name!r})"


@dataclass(frozen=True)
class FromRow:
    """An op-spec row: its own shapes, parameters and domains; operands adapted to them."""

    spec: OpSpec

    @property
    def name(self) -> str:
        return f"row:{self.spec.name}"

    @property
    def covers(self) -> tuple[str, ...]:
        return self.spec.covers

    def __repr__(self) -> str:
        return f"FromRow({self.spec.name!r})"


@dataclass(frozen=True)
class _Branch:
    name: str = "branch"
    covers: tuple[str, ...] = ()


Entry = Native | FromRow | _Branch
BRANCH = _Branch()

_ROWS_BY_NAME = {s.name: s for s in OP_SPECS}


def _row(name: str) -> OpSpec:
    try:
        return _ROWS_BY_NAME[name]
    except KeyError:
        raise KeyError(f"random_programs: tests/op_specs.py has no row {name!r}") from None


def native(
    row: str,
    arity: int | None = None,
    *,
    accepts: Callable[[tuple[Shape, ...]], bool] | None = None,
    elementwise: bool = False,
    params: Callable[[tuple[Shape, ...]], st.SearchStrategy[Params]] | None = None,
) -> Native:
    """A native entry that reuses an op-spec row's function, parameters, domain and covers."""
    spec = _row(row)
    n = arity if arity is not None else (1 if elementwise else 2)
    return Native(
        name=row,
        arity=n,
        fun=spec.fun,
        domains=spec.domains(n),
        params=params if params is not None else spec.params,
        accepts=accepts if accepts is not None else (_any if n == 1 else _broadcastable),
        covers=spec.covers,
        elementwise=elementwise,
    )


# Functional index updates (tnp.at): the updated values depend on the indexed operand, so
# with repeated indices the winning write of ``set`` matters to the derivative.
def _at_set(x: Any, y: Any, index: Any) -> Any:
    return tnp.at(x)[index].set(tnp.tanh(x[index]) * tnp.mean(y) + x[index] * 0.5)


def _at_add(x: Any, y: Any, index: Any) -> Any:
    return tnp.at(x)[index].add(x[index] * x[index] - tnp.mean(y))


def _at_multiply(x: Any, index: Any) -> Any:
    return tnp.at(x)[index].multiply(tnp.cos(x[index]))


def _at_get(x: Any, index: Any) -> Any:
    return tnp.at(x)[index].get() * 1.5


@st.composite
def _update_index(draw: st.DrawFn, shapes: tuple[Shape, ...]) -> Params:
    """An index for ``tnp.at``: basic, fancy (often repeated) or mixed, for ``shapes[0]``."""
    kind = draw(st.sampled_from(["getitem_basic", "getitem_repeated_indices", "getitem_fancy"]))
    return {"index": draw(_row(kind).params(shapes[:1]))["index"]}


def _reduce_params(shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    return st.fixed_dictionaries({"axis": axes_arg(len(shapes[0])), "keepdims": st.booleans()})


_UNARY_ELEMENTWISE = (
    "sin cos tan exp log tanh sqrt abs square sign negative neg_operator abs_builtin "
    "rtruediv rpow maximum_with_scalar where_traced_condition numpy_ufunc_dispatch"
).split()
_BINARY_BROADCASTING = (
    "add subtract multiply divide power maximum minimum add_operator subtract_operator "
    "multiply_operator divide_operator power_operator where"
).split()

NATIVE: tuple[Native, ...] = (
    *(native(name, elementwise=True) for name in _UNARY_ELEMENTWISE),
    *(native(name, 2) for name in _BINARY_BROADCASTING),
    native("sum", 1, params=_reduce_params),
    native("mean", 1, params=_reduce_params),
    native("prod", 1, params=_reduce_params),
    native("max", 1, params=_reduce_params),
    native("min_method", 1, params=_reduce_params),
    native("sum_method", 1, params=_reduce_params),
    native("getitem_basic", 1),
    native("getitem_fancy", 1, accepts=_ndim_at_least(1)),
    native("getitem_repeated_indices", 1, accepts=_ndim_at_least(1)),
    native("getitem_mixed_advanced", 1, accepts=_ndim_at_least(1)),
    native("getitem_boolean_mask", 1, accepts=_ndim_at_least(1)),
    native("matmul_operator", 2, accepts=_evaluates(np.matmul)),
    native("dot", 2, accepts=_evaluates(np.dot)),
    native("outer", 2, accepts=_any),
    native("tensordot", 2, accepts=_any),
    native("transpose", 1),
    native("reshape", 1),
    native("moveaxis", 1, accepts=_ndim_at_least(1)),
    native("expand_dims", 1, accepts=lambda s: len(s[0]) <= 2),
    native("squeeze", 1),
    native("stack", 2, accepts=_same),
    native("concatenate_axis_none", 2, accepts=_any),
    native("iterate_rows", 1, accepts=_ndim_at_least(1)),
    native("numpy_function_dispatch", 1),
    Native("at_set", 2, _at_set, (REAL, REAL), _update_index, _first_not_0d, ("at",)),
    Native("at_add", 2, _at_add, (REAL, REAL), _update_index, _first_not_0d, ("at",)),
    Native("at_multiply", 1, _at_multiply, (REAL,), _update_index, _first_not_0d, ("at",)),
    Native("at_get", 1, _at_get, (REAL,), _update_index, _first_not_0d, ("at",)),
)

# rows whose result's shape depends on the values: refused under vmap by design, so random
# programs (checked under vmap too) leave them out; their own op-spec rows test them
_VALUE_SHAPED_ROWS = frozenset(("unique", "unique:axis"))
VALUE_SHAPED: tuple[FromRow, ...] = tuple(
    FromRow(spec) for spec in OP_SPECS if spec.name in _VALUE_SHAPED_ROWS
)

ROWS: tuple[FromRow, ...] = tuple(
    FromRow(spec) for spec in OP_SPECS if spec.name not in _VALUE_SHAPED_ROWS
)

ENTRIES: tuple[Entry, ...] = (*NATIVE, *ROWS, BRANCH)


# ---- programs ------------------------------------------------------------------------------
@dataclass
class Node:
    """``values[i] = fn(*(values[a] for a in args))``; a branch also has its ``where`` form."""

    text: str
    fn: Callable[..., Any]
    args: tuple[int, ...]
    vectorized_fn: Callable[..., Any] | None = None
    entry: str = ""
    structured_fn: Callable[..., Any] | None = None  # a branch as transforms.lax.cond


@dataclass
class Program:
    """A random program; see the module docstring. Call it like the function it is."""

    input_shapes: tuple[Shape, ...]
    nodes: list[Node]
    examples: list[tuple[np.ndarray, ...]] = field(repr=False)  # examples[0]: the point
    in_axes: tuple[int | None, ...] = ()
    seed: int = 0
    rtol: float = 1e-5

    @property
    def n_inputs(self) -> int:
        return len(self.input_shapes)

    @property
    def point(self) -> tuple[np.ndarray, ...]:
        return self.examples[0]

    def _run(self, xs: Sequence[Any], form: str = "python") -> Any:
        if len(xs) != self.n_inputs:
            raise TypeError(f"this program takes {self.n_inputs} inputs, got {len(xs)}")
        # on NumPy values, a 0-d result is a NumPy scalar: keep 0-d arrays, as generation did
        values: list[Any] = [np.asarray(x) if isinstance(x, np.generic) else x for x in xs]
        for node in self.nodes[self.n_inputs :]:
            fn = node.fn
            if form == "vectorized" and node.vectorized_fn is not None:
                fn = node.vectorized_fn
            elif form == "structured" and node.structured_fn is not None:
                fn = node.structured_fn
            args = [values[a] for a in node.args]
            try:
                value = fn(*args)
            except (T.DerivativeDroppedError, TypeError) as e:
                if not _refuses_plain_method(e, args):
                    raise
                value = fn(*_lift(args))
            values.append(np.asarray(value) if isinstance(value, np.generic) else value)
        return values[-1]

    def __call__(self, *xs: Any) -> Any:
        return self._run(xs)

    def vectorized(self, *xs: Any) -> Any:
        """The same function, with each Python branch replaced by ``tnp.where``."""
        return self._run(xs, "vectorized")

    def structured(self, *xs: Any) -> Any:
        """The same function, with each Python branch written as ``transforms.lax.cond``."""
        return self._run(xs, "structured")

    def batched_inputs(self) -> tuple[np.ndarray, ...]:
        """The examples stacked along each input's ``in_axes`` (the point for ``None``)."""
        out = []
        for i, axis in enumerate(self.in_axes):
            if axis is None:
                out.append(self.examples[0][i])
            else:
                stacked = np.stack([ex[i] for ex in self.examples])
                out.append(np.moveaxis(stacked, 0, axis))
        return tuple(out)

    @property
    def entries_used(self) -> list[str]:
        return [n.entry for n in self.nodes if n.entry]

    def __repr__(self) -> str:
        lines = [
            f"Program(seed={self.seed}, inputs={list(self.input_shapes)}, "
            f"in_axes={self.in_axes}, batch={len(self.examples)}):"
        ]
        lines += [f"  v{i} = input {s}" for i, s in enumerate(self.input_shapes)]
        lines += [f"  v{i} = {n.text}" for i, n in enumerate(self.nodes) if i >= self.n_inputs]
        lines.append(f"  return v{len(self.nodes) - 1}")
        return "\n".join(lines)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(repr(self))


def _refuses_plain_method(error: BaseException, args: Sequence[Any]) -> bool:
    """Some operands are plain ndarrays while others are traced: under ``vmap``, those that
    depend only on unbatched inputs; under every transform, the results of functions with a
    zero derivative (``tnp.sign`` returns a plain array). A row calling a method of such an
    operand with a traced argument (``c.dot(y)``, ``c.clip(lo, hi)``) is raw NumPy on a traced
    value, which transforms refuses with a clear error (NumPy's methods do not dispatch; JAX
    refuses too). Such a refusal, and only it, is retried with the plain operands lifted."""
    mixed = any(isinstance(a, Tracer) for a in args) and any(
        isinstance(a, np.ndarray) for a in args
    )
    return mixed and "transforms.numpy" in str(error)


def _lift(args: Sequence[Any]) -> list[Any]:
    """Plain ndarrays made traced (batched) without changing their values."""
    zero = 0.0 * tnp.sum(next(a for a in args if isinstance(a, Tracer)))
    return [a + zero if isinstance(a, np.ndarray) else a for a in args]


# ---- building a program ----------------------------------------------------------------------
class _Failed(Exception):
    """A candidate node that does not fit (shapes, domain, size): draw another one."""


def _fmt(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return np.array2string(value, separator=",", threshold=20).replace("\n", "")
    if isinstance(value, tuple):
        return "(" + ", ".join(_fmt(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    if isinstance(value, slice):
        return f"slice({value.start}, {value.stop}, {value.step})"
    return repr(value)


def _fmt_params(params: Params) -> str:
    return "".join(f", {k}={_fmt(v)}" for k, v in params.items())


def _bind(fun: Callable[..., Any], params: Params) -> Callable[..., Any]:
    return lambda *xs: fun(*xs, **params)


# squashes R -> [0, 1], each built from different primitives
_SQUASHES: dict[str, Callable[[Any], Any]] = {
    "tanh": lambda v: (tnp.tanh(v) + 1.0) * 0.5,
    "logistic": lambda v: 1.0 / (1.0 + tnp.exp(-v)),
    "algebraic": lambda v: (v / tnp.sqrt(1.0 + v * v) + 1.0) * 0.5,
    "sin": lambda v: (tnp.sin(v) + 1.0) * 0.5,
    "rational": lambda v: v * v / (1.0 + v * v),
}


def _domain_map(name: str, lo: float, hi: float, sign: float) -> Callable[[Any], Any]:
    squash = _SQUASHES[name]
    return lambda v: sign * (lo + (hi - lo) * squash(v))


class _Builder:
    def __init__(
        self, draw: st.DrawFn, examples: list[tuple[np.ndarray, ...]], rng: np.random.Generator
    ) -> None:
        self.draw = draw
        self.rng = rng
        n = len(examples[0])
        self.values: list[list[np.ndarray]] = [[ex[i] for ex in examples] for i in range(n)]
        self.nodes: list[Node] = [Node(f"input {ex.shape}", lambda: None, ()) for ex in examples[0]]
        self.used: set[int] = set()
        self.rtol = 1e-5

    # -- bookkeeping --
    def shape(self, i: int) -> Shape:
        return self.values[i][0].shape

    def _evaluate(self, fn: Callable[..., Any], args: tuple[int, ...]) -> list[np.ndarray]:
        outs = []
        for b in range(len(self.values[0])):
            with np.errstate(all="raise"):
                try:
                    out = fn(*(self.values[a][b] for a in args))
                except (
                    ValueError,
                    IndexError,
                    TypeError,
                    FloatingPointError,
                    ZeroDivisionError,
                ) as e:
                    raise _Failed(f"{type(e).__name__}: {e}") from None
            if isinstance(out, tuple):
                raise _Failed("a tuple")
            out = np.asarray(out)
            if out.dtype != np.float64 or not np.all(np.isfinite(out)):
                raise _Failed(f"dtype {out.dtype} or not finite")
            if not 1 <= out.size <= MAX_SIZE or out.ndim > MAX_NDIM:
                raise _Failed(f"shape {out.shape}")
            outs.append(out)
        if len({o.shape for o in outs}) != 1:
            raise _Failed  # a shape that depends on the values cannot be batched
        return outs

    def add(
        self,
        text: str,
        fn: Callable[..., Any],
        args: tuple[int, ...],
        vectorized_fn: Callable[..., Any] | None = None,
        entry: str = "",
        structured_fn: Callable[..., Any] | None = None,
    ) -> int:
        """Append a node (evaluated on every example), rescaled if it grew too large."""
        outs = self._evaluate(fn, args)
        if vectorized_fn is not None:
            self._evaluate(vectorized_fn, args)  # both arms must be in-domain for where
        self.nodes.append(Node(text, fn, args, vectorized_fn, entry, structured_fn))
        self.values.append(outs)
        self.used.update(args)
        i = len(self.nodes) - 1
        peak = max(float(np.max(np.abs(o))) for o in outs)
        if peak > LIMIT:
            scale = float(f"{0.9 * LIMIT / peak:.2g}")  # rounded: below LIMIT / peak
            return self.add(f"v{i} * {scale!r}", _bind(lambda v, c: v * c, {"c": scale}), (i,))
        return i

    def savepoint(self) -> int:
        return len(self.nodes)

    def rollback(self, n: int) -> None:
        del self.nodes[n:], self.values[n:]
        self.used = {a for node in self.nodes for a in node.args}

    # -- choices --
    def choose(self, options: Sequence[Any]) -> Any:
        """One of ``options``, uniformly over programs: hypothesis draws an index (and shrinks
        it towards 0) but favours small ones, so it is offset by a seeded random rotation."""
        k = self.draw(st.integers(0, len(options) - 1))
        return options[(k + int(self.rng.integers(len(options)))) % len(options)]

    def pick(self, candidates: Sequence[int] | None = None) -> int:
        pool = list(range(len(self.nodes))) if candidates is None else list(candidates)
        if not pool:
            raise _Failed
        recent = pool[-3:]
        if self.draw(st.booleans()):
            return self.draw(st.sampled_from(recent))
        return self.draw(st.sampled_from(pool))

    def in_domain(self, i: int, domain: Domain, box: bool) -> int:
        """Node ``i`` mapped into ``domain`` (unchanged where it already is inside)."""
        if domain.distinct or (domain.lo <= -LIMIT and domain.hi >= LIMIT and not domain.signed):
            return i  # kinks are the point of a "distinct" domain: no map; generic inputs
        if not box and domain == REAL:
            return i  # native entries: REAL means the whole line
        lo, hi = domain.lo, domain.hi
        vals = np.concatenate([v.ravel() for v in self.values[i]])
        if domain.signed:
            mags = np.abs(vals)
            inside = (np.all(vals > 0) or np.all(vals < 0)) and bool(
                np.all((mags >= lo + BOX_MARGIN) & (mags <= hi - BOX_MARGIN))
            )
        else:
            inside = bool(np.all((vals >= lo + BOX_MARGIN) & (vals <= hi - BOX_MARGIN)))
        if inside and self.draw(st.integers(0, 3)) > 0:
            return i
        squash = self.draw(st.sampled_from(sorted(_SQUASHES)))
        sign = -1.0 if domain.signed and self.draw(st.booleans()) else 1.0
        text = f"{'-' if sign < 0 else ''}({lo!r} + {hi - lo!r} * {squash}01(v{i}))"
        return self.add(text, _domain_map(squash, lo, hi, sign), (i,), entry="")

    def adapt(self, i: int, target: Shape) -> int:
        """Node ``i`` brought to shape ``target`` by differentiable operations."""
        shape = self.shape(i)
        if shape == target:
            return i
        size = math.prod(target)
        if _broadcastable((shape, target)) and np.broadcast_shapes(shape, target) == target:
            p = {"shape": target}
            return self.add(f"tnp.broadcast_to(v{i}, {target})", _bind(tnp.broadcast_to, p), (i,))
        if math.prod(shape) == size and size > 0:
            return self.add(
                f"tnp.reshape(v{i}, {target})", _bind(tnp.reshape, {"shape": target}), (i,)
            )
        n = math.prod(shape)
        index = np.arange(size) % n if n else np.zeros(0, dtype=np.intp)
        if size and self.draw(st.booleans()):
            index = self.rng.permutation(index)  # seeded: a long permutation costs no draws

        def tile(v: Any, index: np.ndarray = index, target: Shape = target) -> Any:
            return tnp.reshape(tnp.ravel(v)[index], target)

        return self.add(f"tnp.ravel(v{i})[{_fmt(index)}].reshape({target})", tile, (i,))

    # -- the three kinds of entries --
    def native(self, e: Native) -> int:
        first = self.pick()
        args = [first]
        for _ in range(e.arity - 1):
            fits = [
                j
                for j in range(len(self.nodes))
                if e.accepts((*map(self.shape, args), self.shape(j)))
            ]
            args.append(self.pick(fits))
        shapes = tuple(self.shape(a) for a in args)
        if not e.accepts(shapes):
            raise _Failed
        params = self.draw(e.params(shapes))
        mapped = tuple(
            self.in_domain(a, d, box=False) for a, d in zip(args, e.domains, strict=True)
        )
        names = ", ".join(f"v{a}" for a in mapped)
        return self.add(
            f"{e.name}({names}{_fmt_params(params)})", _bind(e.fun, params), mapped, entry=e.name
        )

    def row(self, e: FromRow) -> int:
        spec = e.spec
        for _ in range(3):  # rows often draw empty arrays: programs want values
            shapes = self.draw(spec.shapes)
            if all(math.prod(s) > 0 for s in shapes) and sum(map(math.prod, shapes)) <= MAX_SIZE:
                break
        else:
            raise _Failed
        params = self.draw(spec.params(shapes))
        args = []
        for shape, domain in zip(shapes, spec.domains(len(shapes)), strict=True):
            a = self.adapt(self.pick(), shape)
            args.append(self.in_domain(a, domain, box=True))
        for a, domain in zip(args, spec.domains(len(shapes)), strict=True):
            if domain.distinct and any(np.unique(v).size < v.size for v in self.values[a]):
                # a "distinct" operand, made here from shared values (a broadcast), repeats
                # one: a tie at a kink, a rank-deficient fit (polyfit warns as NumPy does)
                raise _Failed("repeated values in a distinct operand of a row")
        if any(np.any(v == 0.0) for a in args for v in self.values[a]):
            # Exact zeros are never drawn, only made (x - x, tril, maximum(x, 0)...), and a row
            # may rely on generic values (a norm is smooth away from the zero vector only)
            raise _Failed("an exact zero in an operand of a row")
        names = ", ".join(f"v{a}" for a in args)
        self.rtol = max(self.rtol, spec.rtol)
        return self.add(
            f"{e.name}({names}{_fmt_params(params)})",
            _bind(spec.fun, params),
            tuple(args),
            entry=e.name,
        )

    def branch(self) -> int:
        """``then(u) if reduce(v) > c else other(u2)``, ``c`` placed away from the value."""
        draw = self.draw
        v = self.pick()
        how = draw(st.sampled_from(["sum", "mean", "max", "element"]))
        if how == "element":
            flat = draw(st.integers(0, max(math.prod(self.shape(v)) - 1, 0)))
            index = tuple(int(k) for k in np.unravel_index(flat, self.shape(v)))
            reduce: Callable[[Any], Any] = lambda a, index=index: a[index]
            what = f"v{v}[{index}]"
        else:
            reduce = {"sum": tnp.sum, "mean": tnp.mean, "max": tnp.max}[how]
            what = f"tnp.{how}(v{v})"
        s0 = float(np.asarray(reduce(self.values[v][0])))
        offset = draw(st.sampled_from([0.1, 0.3, 0.7]))
        c = float(f"{s0 - offset:.3g}") if draw(st.booleans()) else float(f"{s0 + offset:.3g}")
        arms = [e for e in NATIVE if e.elementwise]
        then_e, else_e = self.choose(arms), self.choose(arms)
        u = self.pick()
        u2 = self.pick([j for j in range(len(self.nodes)) if self.shape(j) == self.shape(u)])
        u, u2 = (
            self.in_domain(u, then_e.domains[0], False),
            self.in_domain(u2, else_e.domains[0], False),
        )
        p1 = self.draw(then_e.params((self.shape(u),)))
        p2 = self.draw(else_e.params((self.shape(u2),)))
        f_then, f_else = _bind(then_e.fun, p1), _bind(else_e.fun, p2)

        def fn(a: Any, x: Any, y: Any) -> Any:
            if reduce(a) > c:  # a Python branch on a traced value
                return f_then(x)
            return f_else(y)

        def vectorized_fn(a: Any, x: Any, y: Any) -> Any:
            return tnp.where(reduce(a) > c, f_then(x), f_else(y))

        def structured_fn(a: Any, x: Any, y: Any) -> Any:
            return lax.cond(reduce(a) > c, lambda x, y: f_then(x), lambda x, y: f_else(y), x, y)

        text = (
            f"{then_e.name}(v{u}{_fmt_params(p1)}) if {what} > {c!r} "
            f"else {else_e.name}(v{u2}{_fmt_params(p2)})"
        )
        return self.add(text, fn, (v, u, u2), vectorized_fn, "branch", structured_fn)

    def finish(self) -> None:
        """The output: the last node plus a multiple of every node nothing used."""
        last = len(self.nodes) - 1
        n_inputs = sum(1 for n in self.nodes if n.text.startswith("input"))
        dangling = [i for i in range(n_inputs, last) if i not in self.used]
        if last < n_inputs:  # no node at all: use the inputs
            dangling, last = list(range(1, n_inputs)), 0
        if not dangling and last >= n_inputs:
            return

        def gather(out: Any, *others: Any) -> Any:
            for k, o in enumerate(others):
                out = out + (0.25 + 0.125 * k) * tnp.sum(o)
            return out

        terms = " + ".join(f"{0.25 + 0.125 * k!r} * tnp.sum(v{d})" for k, d in enumerate(dangling))
        self.add(f"v{last} + {terms}" if terms else f"v{last} * 1.0", gather, (last, *dangling))


@st.composite
def programs(
    draw: st.DrawFn,
    max_nodes: int = 8,
    min_nodes: int = 1,
    entries: Sequence[Entry] = ENTRIES,
    weights: tuple[int, int, int] = (5, 4, 1),
    force: Entry | None = None,
) -> Program:
    """A random program (see the module docstring).

    ``weights`` are the odds of a native entry, an op-spec row and a branch at each step;
    ``force`` is an entry to place first (tried a few times; the program may lack it).
    """
    n_inputs = draw(st.integers(1, 3))
    result = draw(
        hnp.mutually_broadcastable_shapes(num_shapes=n_inputs, min_side=1, max_side=3, max_dims=3)
    )
    input_shapes = tuple(result.input_shapes)
    while sum(math.prod(s) for s in input_shapes) > MAX_INPUT_SIZE:  # shrink the largest
        k = max(range(n_inputs), key=lambda i: math.prod(input_shapes[i]))
        input_shapes = (*input_shapes[:k], input_shapes[k][1:], *input_shapes[k + 1 :])
    batch = draw(st.integers(2, 3))
    in_axes = tuple(
        draw(st.sampled_from([0, 0, None, -1] if s else [0, None])) for s in input_shapes
    )
    if all(a is None for a in in_axes):
        in_axes = (0, *in_axes[1:])
    seed = draw(seeds())
    rng = np.random.default_rng(seed)
    point = tuple(rng.uniform(-1.5, 1.5, s) for s in input_shapes)
    examples = [point] + [
        tuple(
            point[i] if in_axes[i] is None else rng.uniform(-1.5, 1.5, s)
            for i, s in enumerate(input_shapes)
        )
        for _ in range(batch - 1)
    ]
    b = _Builder(draw, examples, rng)
    natives = [e for e in entries if isinstance(e, Native)]
    rows = [e for e in entries if isinstance(e, FromRow)]
    kinds = (
        ["native"] * weights[0] * bool(natives)
        + ["row"] * weights[1] * bool(rows)
        + ["branch"] * weights[2] * (BRANCH in entries)
    )
    if force is not None:
        for _attempt in range(8):
            mark = b.savepoint()
            try:
                if isinstance(force, Native):
                    b.native(force)
                elif isinstance(force, FromRow):
                    b.row(force)
                else:
                    b.branch()
                break
            except _Failed:
                b.rollback(mark)
    steps = draw(st.integers(min_nodes, max_nodes))
    for _ in range(steps):
        for _attempt in range(6):
            kind = b.choose(kinds)
            mark = b.savepoint()
            try:
                if kind == "native":
                    b.native(b.choose(natives))
                elif kind == "row":
                    b.row(b.choose(rows))
                else:
                    b.branch()
                break
            except _Failed:
                b.rollback(mark)
    b.finish()
    return Program(input_shapes, b.nodes, examples, in_axes, seed, b.rtol)
